//! `rsmc`: model checking and conformance testing of the Kubernetes ReplicaSet controller.

mod bench;
mod bench_monitor;
mod bench_oracle;
mod bugs;
mod check;
mod ci_report;
mod cluster;
mod conform;
mod controller_cmd;
mod exit;
mod explore;
mod import_cmd;
mod monitor_cmd;
mod oracle;
mod output;
mod reference;
mod replay;
mod scenario_cmd;
mod trace_file;
mod traces;

use clap::{Parser, Subcommand};
use rsmc_spec::contract::Contract;
use rsmc_spec::profile::Profile;
use std::path::PathBuf;

/// The model checker clones and drops millions of small maps and strings; mimalloc roughly
/// halves the time the system allocator takes for that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "rsmc",
    version,
    about = "A model-checked specification and test oracle for the Kubernetes ReplicaSet controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every interleaving within the configuration's bounds and check the properties.
    Check(CheckArgs),
    /// List the catalogue of upstream bugs (switches for `check --bug`) and open races.
    Bugs(BugsArgs),
    /// Measure model checks per configuration and profile (states, rate, peak memory), or
    /// with `--catalogue`, `--oracle` or `--monitor` those instead.
    Bench(BenchArgs),
    /// Judge an observed run of a scenario: exit 0 conforms, 1 does not, 2 bad input, 3 the
    /// search passed its budget.
    Oracle(OracleArgs),
    /// Print the model's kubectl views of a scenario at each settle point.
    Replay(ReplayArgs),
    /// Emit model runs as scenarios for conformance (`--cover`).
    Traces(TracesArgs),
    /// Convert a model trace (a counterexample, a cover run) to a scenario.
    Scenario(ScenarioArgs),
    /// A cluster for conformance runs (`up`, `down`, `status`): a local control plane of
    /// v1.20.2 or a release named with `--kubernetes`, or with `--kind` a kind cluster with
    /// real kubelets, both built on this machine.
    Cluster(cluster::ClusterArgs),
    /// Run scenarios on a real cluster and judge it with the oracle: exit 0 conforms, 1 does
    /// not, 2 bad input or a cluster that is unreachable or broke.
    Conform(conform::ConformArgs),
    /// Serve stateright's Explorer over the model (states drawn as the cluster with kubectl
    /// tables); `--trace` opens it on a trace's last state.
    Explore(explore::ExploreArgs),
    /// Turn a recording of any cluster (an audit log, or kubectl watch streams) into a
    /// scenario and an observed trace that `rsmc oracle` judges.
    Import(import_cmd::ImportArgs),
    /// Run the reference ReplicaSet controller: the spec's decisions against a real cluster.
    Controller(controller_cmd::ControllerArgs),
    /// Watch a running cluster and report every write that breaks a safety property: exit 0
    /// no alarm, 1 alarms, 2 bad input or an unreachable cluster.
    Monitor(monitor_cmd::MonitorArgs),
    /// Print a shell completion script (e.g. `rsmc completions bash >
    /// ~/.local/share/bash-completion/completions/rsmc`).
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The local cluster's event gate (started by `rsmc cluster up`, not by hand).
    #[command(hide = true)]
    EventGate(EventGateArgs),
    /// Print the book's command reference (docs/src/reference/cli.md) as Markdown.
    #[command(hide = true)]
    HelpMarkdown,
}

/// Arguments of `rsmc event-gate`.
#[derive(clap::Args, Debug)]
pub struct EventGateArgs {
    /// Where to listen (loopback).
    #[arg(long)]
    pub listen: std::net::SocketAddr,
    /// The kube-apiserver's HTTPS URL.
    #[arg(long)]
    pub upstream: String,
    /// The CA certificate that signs the kube-apiserver's certificate.
    #[arg(long)]
    pub ca: PathBuf,
    /// kube-apiserver's token file (`token,user,uid,"groups"`): its first token is sent with
    /// requests that carry no credentials.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// The cluster's state directory (identifies the process as the cluster's).
    #[arg(long)]
    pub state_dir: PathBuf,
}

fn event_gate(args: &EventGateArgs) -> i32 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let token = match &args.token_file {
        Some(file) => match std::fs::read_to_string(file) {
            Ok(text) => text.split(',').next().map(|t| t.trim().to_string()),
            Err(e) => {
                eprintln!("error: {}: {e}", file.display());
                return exit::BAD_INPUT;
            }
        },
        None => None,
    };
    match runtime.block_on(rsmc_conformance::event_gate::serve(
        args.listen,
        &args.upstream,
        &args.ca,
        token.as_deref(),
    )) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

/// Arguments of `rsmc traces`.
#[derive(clap::Args, Debug)]
pub struct TracesArgs {
    /// A small set of runs that use every enabled environment move kind and reach every
    /// situation the properties are about (adoption, release, ranking ties, each deletion
    /// policy, …).
    #[arg(long)]
    pub cover: bool,
    /// Behaviour profile.
    #[arg(long, default_value = "k8s-1.20")]
    pub profile: Profile,
    /// A preset (small, default, deep), catalogue/NAME, properties/NAME or a JSON file
    /// overriding a preset.
    #[arg(long, default_value = "default")]
    pub config: String,
    /// Where the scenarios and traces go.
    #[arg(long, default_value = "target/rsmc/cover")]
    pub out: PathBuf,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

/// Arguments of `rsmc scenario`.
#[derive(clap::Args, Debug)]
pub struct ScenarioArgs {
    /// The `rsmc-trace/v1` file to convert.
    #[arg(long)]
    pub from_trace: PathBuf,
    /// The scenario's name (default: from the file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Where to write the scenario (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep only the trace's environment moves, with its timing left open (no holds of the
    /// controller's events or requests, no awaits): the scenario a cluster without the
    /// runner's event gate can replay.
    #[arg(long)]
    pub open: bool,
}

/// Arguments of `rsmc oracle`.
#[derive(clap::Args, Debug)]
pub struct OracleArgs {
    /// The scenario that was run (YAML).
    #[arg(long)]
    pub scenario: PathBuf,
    /// What the cluster did (an `rsmc-observed/v1` JSON file).
    #[arg(long)]
    pub observed: PathBuf,
    /// Behaviour profile [default: the recorded release's (`cluster.server`, with
    /// `cluster.featureGates`), else the scenario's, else k8s-1.20].
    #[arg(long)]
    pub profile: Option<Profile>,
    /// The release (`v1.34`) or profile whose behaviour the implementation means to follow,
    /// where it differs from the recorded cluster's: judged by it, and named in the report
    /// [default: the recording's `cluster.contract`, if it has one].
    #[arg(long, value_parser = Contract::parse, conflicts_with = "profile")]
    pub contract: Option<Contract>,
    /// Judge by the model with these switches (the implementation under test has the bug,
    /// or the fix).
    #[command(flatten)]
    pub switches: Switches,
    /// Print the verdict as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the verdicts as JUnit XML to FILE (one test case: the scenario); with
    /// `$GITHUB_STEP_SUMMARY` set, a Markdown summary is appended to that file too.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Leave the settle points after the first divergence unjudged, instead of judging each
    /// from the cluster's objects at the settle point before it.
    #[arg(long)]
    pub stop_at_first_divergence: bool,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// Arguments of `rsmc replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The scenario (YAML).
    pub scenario: PathBuf,
    /// Behaviour profile, unless the scenario names one.
    #[arg(long, default_value = "k8s-1.20")]
    pub profile: Profile,
    #[command(flatten)]
    pub switches: Switches,
    /// Include the runs that go on past a safety violation (an upstream race a scenario
    /// forces); by default a violation ends a run, as in `rsmc check`.
    #[arg(long)]
    pub past_violations: bool,
    /// Print the replay as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// The memory a command's searches stop at (exit 3) instead of running out of it.
#[derive(clap::Args, Debug, Clone)]
pub struct MemoryArgs {
    /// Stop a search when this process's resident memory passes SIZE (e.g. 8G, 512M).
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = rsmc_spec::budget::parse_size)]
    pub memory_limit: u64,
}

impl MemoryArgs {
    /// A budget of this much memory and no bound on states.
    pub fn budget(&self) -> rsmc_spec::budget::Budget {
        rsmc_spec::budget::Budget::default().with_memory(self.memory_limit)
    }
}

/// The limits the oracle's searches stop at (exit 3).
#[derive(clap::Args, Debug, Clone)]
pub struct BudgetArgs {
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// Stop one of the oracle's searches after N visited states.
    #[arg(long, value_name = "N", default_value_t = rsmc_oracle::explore::STATE_LIMIT)]
    pub state_limit: usize,
}

impl BudgetArgs {
    /// The budget of one search.
    pub fn budget(&self) -> rsmc_spec::budget::Budget {
        self.memory.budget().with_states(self.state_limit)
    }
}

/// The catalogue's switches a command's model runs with (`rsmc bugs` lists them).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Switches {
    /// Re-introduce a catalogued upstream bug (see `rsmc bugs`).
    #[arg(long)]
    pub bug: Option<rsmc_spec::bugs::Bug>,
    /// Switch on the proposed fix of an open upstream issue (see `rsmc bugs`); repeatable.
    #[arg(long = "fix")]
    pub fixes: Vec<rsmc_spec::bugs::Fix>,
}

impl Switches {
    /// `sem` with these switches on.
    pub fn on(&self, sem: rsmc_spec::profile::Semantics) -> rsmc_spec::profile::Semantics {
        sem.switched(self.bug, &self.fixes)
    }

    /// `model` with these switches on.
    pub fn apply(&self, mut model: rsmc_spec::model::RsModel) -> rsmc_spec::model::RsModel {
        model.sem = self.on(model.sem);
        model
    }
}

/// Arguments of `rsmc check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Behaviour profile: which Kubernetes version the spec follows.
    #[arg(long, default_value = "k8s-1.20")]
    pub profile: Profile,
    /// A preset (small, default, deep), a catalogue configuration (catalogue/NAME), a
    /// property configuration (properties/owners, properties/other-owners) or a JSON file overriding a preset
    /// (default: `default`, or with `--bug` the configuration the catalogue names for it).
    #[arg(long)]
    pub config: Option<String>,
    #[command(flatten)]
    pub switches: Switches,
    /// Fail (exit 1) on violations that match a known open upstream issue, too.
    #[arg(long)]
    pub strict: bool,
    /// Checker threads, at least one (default: all cores).
    #[arg(long, value_parser = at_least_one)]
    pub threads: Option<usize>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the verdicts as JUnit XML to FILE (a test case per property); with
    /// `$GITHUB_STEP_SUMMARY` set, a Markdown summary is appended to that file too.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Where counterexample traces go.
    #[arg(long, default_value = "target/rsmc")]
    pub out: PathBuf,
    /// Check the safety properties only, without the convergence search (which explores the
    /// state space a second time, keeping its graph).
    #[arg(long)]
    pub skip_liveness: bool,
    /// With `--bug` of an entry whose property is a safety one, run the convergence search
    /// too (by default it is skipped there: past the switch's safety violations it explores
    /// the broken cluster's whole state space, which can take minutes and gigabytes).
    #[arg(long, conflicts_with = "skip_liveness")]
    pub liveness: bool,
    /// Identify states literally, not up to their resource versions' values nor up to which
    /// generated pod is which (explores many more states; for measuring the reduction, see
    /// `rsmc bench --compare-reduction`).
    #[arg(long)]
    pub no_reduction: bool,
    /// Identify states up to their resource versions' values but not up to which generated
    /// pod is which (the pod symmetry off; for measuring it).
    #[arg(long, conflicts_with = "no_reduction")]
    pub no_symmetry: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
}

impl CheckArgs {
    /// Whether the convergence search runs: unless `--skip-liveness`, and with `--bug` only
    /// for a convergence entry or with `--liveness`.
    pub fn runs_liveness(&self) -> bool {
        let safety_bug = self
            .switches
            .bug
            .is_some_and(|b| b.entry().property != rsmc_spec::liveness::CONVERGENCE);
        !self.skip_liveness && (self.liveness || !safety_bug)
    }

    /// How states are identified, from `--no-reduction` and `--no-symmetry`.
    pub fn reduction(&self) -> rsmc_spec::model::Reduction {
        use rsmc_spec::model::Reduction;
        if self.no_reduction {
            Reduction::None
        } else if self.no_symmetry {
            Reduction::Revisions
        } else {
            Reduction::RevisionsAndPods
        }
    }

    /// The configuration to check: `--config`, else the bug's preset, else `default`.
    pub fn config_name(&self) -> String {
        config_name(self.config.as_deref(), self.switches.bug)
    }
}

/// A count that must be at least one (`--threads`): zero threads would search nothing and
/// wait for ever.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("expected at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("expected a whole number of at least 1: {e}")),
    }
}

/// The configuration a command works on: the one given, else the catalogue's for the bug
/// switched on, else `default`.
pub fn config_name(given: Option<&str>, bug: Option<rsmc_spec::bugs::Bug>) -> String {
    match (given, bug) {
        (Some(c), _) => c.to_string(),
        (None, Some(bug)) => bug.entry().config.to_string(),
        (None, None) => "default".to_string(),
    }
}

/// Arguments of `rsmc bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Configurations to measure (presets, catalogue/NAME, properties/NAME or files),
    /// comma-separated.
    #[arg(
        long = "config",
        value_delimiter = ',',
        default_value = "small,default"
    )]
    pub configs: Vec<String>,
    /// Profiles to measure, comma-separated.
    #[arg(
        long = "profile",
        value_delimiter = ',',
        default_value = "k8s-1.20,upstream"
    )]
    pub profiles: Vec<String>,
    /// Include the convergence search in each measurement.
    #[arg(long)]
    pub liveness: bool,
    /// Measure the bug catalogue instead: each entry's check (`rsmc bugs`), convergence
    /// included, and the total.
    #[arg(long, conflicts_with_all = ["configs", "profiles"])]
    pub catalogue: bool,
    /// Checker threads, at least one (default: all cores).
    #[arg(long, value_parser = at_least_one)]
    pub threads: Option<usize>,
    /// Measure each configuration twice more, with `rsmc check --no-symmetry` and with
    /// `--no-reduction`, and print each reduction's factor (unique states without / with).
    #[arg(long)]
    pub compare_reduction: bool,
    /// Measure the oracle instead: the recordings in oracle/tests/recorded judged by
    /// `rsmc oracle`, and `rsmc replay` of one ReplicaSet scaled 3 -> N -> 1 for
    /// N = 3, 5, 8, 12, 25; states, seconds and peak memory per case.
    #[arg(long, conflicts_with_all = ["configs", "profiles", "catalogue", "liveness", "compare_reduction"])]
    pub oracle: bool,
    /// With `--oracle`: only the cases whose name contains one of these, comma-separated
    /// (e.g. `scale-100,-> 25`).
    #[arg(long, value_delimiter = ',', requires = "oracle")]
    pub cases: Option<Vec<String>>,
    /// With `--oracle`: each case's memory budget (`rsmc oracle --memory-limit`).
    #[arg(long, value_name = "SIZE", requires = "oracle")]
    pub memory_limit: Option<String>,
    /// With `--oracle`: each case's state limit (`rsmc oracle --state-limit`).
    #[arg(long, value_name = "N", requires = "oracle")]
    pub state_limit: Option<u64>,
    /// Measure `rsmc monitor` instead: a namespace of `--pods` pods churned at `--rate`
    /// user writes per second for `--seconds`, on the local cluster (`rsmc cluster up`) or
    /// `--kubeconfig`; events judged per second, lag, peak memory, alarms (must be 0).
    #[arg(long, conflicts_with_all = ["configs", "profiles", "catalogue", "liveness", "compare_reduction", "oracle"])]
    pub monitor: bool,
    /// With `--monitor`: the cluster (default: the local cluster of `rsmc cluster up`).
    #[arg(long, requires = "monitor")]
    pub kubeconfig: Option<PathBuf>,
    /// With `--monitor`: pods kept by the load's ReplicaSets (50 each).
    #[arg(long, default_value_t = 500, requires = "monitor", value_parser = clap::value_parser!(u64).range(1..=5000))]
    pub pods: u64,
    /// With `--monitor`: the load's writes per second.
    #[arg(long, default_value_t = 25.0, requires = "monitor")]
    pub rate: f64,
    /// With `--monitor`: seconds of churn.
    #[arg(long, default_value_t = 60, requires = "monitor")]
    pub seconds: u64,
    /// Print the measurements as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `rsmc bugs`.
#[derive(clap::Args, Debug)]
pub struct BugsArgs {
    /// Print the catalogue as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `rsmc … | head`: a reader that closes stdout early. Rust ignores SIGPIPE (so that a
/// closed socket is an error, not death), which makes `println!` panic on the broken pipe.
/// End as a Unix tool killed by SIGPIPE does, quietly with 141, and leave every other
/// panic to the default hook. Commands that hold a cluster print their report after their
/// cleanup, so nothing is left behind.
fn quiet_on_broken_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if text.starts_with("failed printing to stdout") && text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() {
    quiet_on_broken_stdout();
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Bugs(args) => bugs::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Oracle(args) => oracle::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Traces(args) => traces::run(&args),
        Command::Scenario(args) => scenario_cmd::run(&args),
        Command::Cluster(args) => cluster::run(&args),
        Command::Conform(args) => conform::run(&args),
        Command::Explore(args) => explore::run(&args),
        Command::EventGate(args) => event_gate(&args),
        Command::Controller(args) => controller_cmd::run(&args),
        Command::Import(args) => import_cmd::run(&args),
        Command::Monitor(args) => monitor_cmd::run(&args),
        Command::Completions { shell } => reference::completions(shell),
        Command::HelpMarkdown => {
            print!("{}", reference::markdown());
            exit::OK
        }
    };
    std::process::exit(code);
}
