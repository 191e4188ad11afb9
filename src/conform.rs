//! `rsmc conform`: run scenarios on a real cluster and judge what it did with the oracle.

use crate::ci_report::{self, Case, Outcome, Suite};
use crate::exit;
use clap::ValueEnum;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;
use rsmc_conformance::control_plane::{self, LocalCluster};
use rsmc_conformance::controller::{Controllers, Implementation};
use rsmc_conformance::event_gate::GateClient;
use rsmc_conformance::kubectl::Kubectl;
use rsmc_conformance::kubelet;
use rsmc_conformance::run::{delete_namespaces, ScenarioRun, Target, NAMESPACE_DELETION_TIMEOUT};
use rsmc_conformance::settle::SettlePolicy;
use rsmc_conformance::suite;
use rsmc_conformance::workqueues;
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::contract::Contract;
use rsmc_spec::gates::{semantics_for, FeatureGates};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Mutex as AsyncMutex;

/// The suite shipped with rsmc, used when no scenario is named.
const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance/scenarios");

/// Arguments of `rsmc conform`.
#[derive(clap::Args, Debug)]
pub struct ConformArgs {
    /// Scenario files, or directories searched for `*.yaml` scenarios (their `manifests/`
    /// subdirectories excepted). Default: the suite in conformance/scenarios.
    pub scenarios: Vec<PathBuf>,
    /// The cluster to test: this kubeconfig's current context (kind, any cluster).
    #[arg(long, conflicts_with = "local")]
    pub kubeconfig: Option<PathBuf>,
    /// The cluster to test: the local control plane started by `rsmc cluster up`.
    #[arg(long)]
    pub local: bool,
    /// The local cluster's state directory (default: as `rsmc cluster up`).
    #[arg(long, requires = "local")]
    pub state_dir: Option<PathBuf>,
    /// The implementation under test.
    #[arg(long, value_enum, default_value = "builtin")]
    pub controller: ControllerArg,
    /// With `--controller external`: the command that runs it (with `sh -c`, `KUBECONFIG`
    /// set); the runner starts, restarts and stops it.
    #[arg(long, required_if_eq("controller", "external"))]
    pub controller_cmd: Option<String>,
    /// With `--controller external`: the controller's timers read a clock offset from the
    /// file named in `$RSMC_CLOCK_OFFSET_FILE` (the reference controller's do), so an
    /// `expireExpectations` step moves its clock 5 minutes on at once. Without it the runner
    /// waits the 5 minutes out, which works for any implementation (the built-in one's clock
    /// is the machine's).
    #[arg(long, requires = "controller_cmd")]
    pub moved_clock: bool,
    /// Who plays the kubelet: `fake` (the runner patches pod status as kwok does) or `real`
    /// (the cluster's kubelets; the runner waits for them).
    #[arg(long, value_enum, default_value = "fake")]
    pub kubelet: KubeletArg,
    /// Behaviour profile to judge by; `auto`: the server's release (`k8s-1.20` for v1.20,
    /// `upstream` after, with the release's feature-gate defaults), whatever profile a
    /// scenario was written for.
    #[arg(long, default_value = "auto")]
    pub profile: String,
    /// Leave the settle points after a scenario's first divergence unjudged, instead of
    /// judging each from the cluster's objects at the settle point before it.
    #[arg(long)]
    pub stop_at_first_divergence: bool,
    /// The release (`v1.34`) or profile whose behaviour the implementation under test means
    /// to follow, where it differs from the cluster's (a controller written for v1.20, run
    /// on a v1.37 server): judged by it, recorded as `cluster.contract`, named in the
    /// reports.
    #[arg(long, value_parser = Contract::parse, conflicts_with = "profile")]
    pub contract: Option<Contract>,
    /// Feature gates the cluster runs with where they differ from its release's defaults
    /// (`GATE=BOOL,…`, as upstream's flag); the model is switched to match. A local
    /// cluster's own (`rsmc cluster up --feature-gates`) are known without this.
    #[arg(long, value_name = "GATE=BOOL,…", default_value = "")]
    pub feature_gates: FeatureGates,
    /// Scenarios run side by side (each in its own namespace).
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Seconds without a watch event before a namespace may count as settled.
    #[arg(long, default_value_t = 2.0)]
    pub quiet_window: f64,
    /// Read the work queues of the local cluster's controllers at settle points, and where
    /// every controller at work can be read (the built-in controller and the garbage
    /// collector, nothing held at the gates), settle once they are idle and no watch event
    /// has come for this many seconds, instead of the quiet window. `off`: wait out the
    /// quiet window at every settle point.
    #[arg(long, value_name = "SECONDS|off", default_value = "0.5")]
    pub idle_window: IdleWindow,
    /// Seconds a settle point may take before the scenario fails.
    #[arg(long, default_value_t = 60)]
    pub settle_timeout: u64,
    /// Seconds the runner waits before each of its own writes, so that informers have
    /// delivered earlier events (the model's environment writes only then).
    #[arg(long, default_value_t = 0.25)]
    pub write_pause: f64,
    /// Judge by the model with these catalogue switches: `--fix NAME` for an implementation
    /// that has an open issue's proposed fix (the reference controller has them all), `--bug
    /// NAME` to check that an implementation behaves as the catalogued bug does.
    #[command(flatten)]
    pub switches: crate::Switches,
    /// Write each scenario's observed trace, verdict and kubectl views here.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Leave out the kubectl views of each settle point (`kubectl get`, `describe`): the
    /// verdicts are the same, the report has no views files, and the run takes less CPU
    /// (the whole suite on a local cluster: 35 s instead of 61 s, the book's
    /// measurements/ci.md). For runs whose verdicts are all that is read.
    #[arg(long)]
    pub no_views: bool,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the verdicts as JUnit XML to FILE (a test case per scenario); with
    /// `$GITHUB_STEP_SUMMARY` set, a Markdown summary is appended to that file too.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum ControllerArg {
    Builtin,
    External,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum KubeletArg {
    Fake,
    Real,
}

pub fn run(args: &ConformArgs) -> i32 {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(conform(args))
}

/// Every scenario file under the named paths.
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let roots = if paths.is_empty() {
        vec![PathBuf::from(SUITE)]
    } else {
        paths.to_vec()
    };
    let mut out = Vec::new();
    for root in roots {
        if root.is_dir() {
            walk(&root, &mut out).map_err(|e| format!("{}: cannot read: {e}", root.display()))?;
        } else if root.is_file() {
            out.push(root);
        } else {
            return Err(format!("{}: no such file or directory", root.display()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "manifests") {
                walk(&p, out)?;
            }
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
    Ok(())
}

async fn client_for(kubeconfig: &Path) -> Result<Client, String> {
    let kc = Kubeconfig::read_from(kubeconfig)
        .map_err(|e| format!("{}: not a kubeconfig: {e}", kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    Client::try_from(config).map_err(|e| format!("{}: {e}", kubeconfig.display()))
}

/// `--idle-window`: seconds, or `off` (`None`).
#[derive(Clone, Copy, Debug)]
pub struct IdleWindow(pub Option<Duration>);

impl std::str::FromStr for IdleWindow {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "off" {
            return Ok(IdleWindow(None));
        }
        match text.parse::<f64>() {
            Ok(seconds) if seconds >= 0.0 && seconds.is_finite() => {
                Ok(IdleWindow(Some(Duration::from_secs_f64(seconds))))
            }
            _ => Err(format!(
                "expected a number of seconds, 0 or more, or `off`; got {text:?}"
            )),
        }
    }
}

async fn conform(args: &ConformArgs) -> i32 {
    let started = Instant::now();
    let bad = |message: String| {
        eprintln!("error: {message}");
        exit::BAD_INPUT
    };
    for (flag, seconds) in [
        ("--quiet-window", args.quiet_window),
        ("--write-pause", args.write_pause),
    ] {
        if !(seconds >= 0.0 && seconds.is_finite()) {
            return bad(format!(
                "{flag}: expected a number of seconds, 0 or more, got {seconds}"
            ));
        }
    }
    // The cluster.
    let (kubeconfig, local) = if args.local {
        let dir = args
            .state_dir
            .clone()
            .unwrap_or_else(control_plane::default_state_dir);
        match LocalCluster::attach(&dir) {
            Ok(c) => (c.kubeconfig().to_path_buf(), Some(c)),
            Err(e) => return bad(e.to_string()),
        }
    } else if let Some(k) = &args.kubeconfig {
        (k.clone(), None)
    } else {
        match std::env::var_os("KUBECONFIG") {
            Some(k) => (PathBuf::from(k), None),
            None => {
                return bad(
                    "name the cluster: --local (after `rsmc cluster up`) or --kubeconfig FILE"
                        .into(),
                )
            }
        }
    };
    let client = match client_for(&kubeconfig).await {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let version =
        match tokio::time::timeout(Duration::from_secs(15), client.apiserver_version()).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                return bad(format!(
                    "the cluster of {} is unreachable: {e}",
                    kubeconfig.display()
                ))
            }
            Err(_) => {
                return bad(format!(
                    "the cluster of {} did not answer within 15s",
                    kubeconfig.display()
                ))
            }
        };
    let gates = match &local {
        Some(l) => l.feature_gates().merged(&args.feature_gates),
        None => args.feature_gates.clone(),
    };
    let sem = match semantics_for(&args.profile, &version.git_version, &gates) {
        Ok(s) => s,
        Err(e) => return bad(e),
    };
    // An implementation written for another release is judged by what it means to follow.
    let sem = args.contract.map_or(sem, |c| c.sem);
    let profile = sem.profile;

    // The scenarios.
    let files = match scenario_files(&args.scenarios) {
        Ok(f) => f,
        Err(e) => return bad(e),
    };
    // Watch events can be held (`hold` steps) only through a local cluster's event gates;
    // elsewhere such a scenario is judged without those steps, and the run says so. A
    // cluster started before the garbage collector had a gate of its own has only the
    // controller's.
    let gate = local
        .as_ref()
        .and_then(|l| l.event_gate())
        .map(GateClient::new);
    let gc_gate = local
        .as_ref()
        .and_then(|l| l.gc_gate())
        .map(GateClient::new);
    // With real kubelets the model binds pods onto the cluster's own nodes.
    let real_nodes = match args.kubelet {
        KubeletArg::Fake => None,
        KubeletArg::Real => match kubelet::real_nodes(&client).await {
            Ok(n) if n.is_empty() => {
                return bad(format!(
                "--kubelet real: the cluster of {} has no node to schedule the scenarios' pods on",
                kubeconfig.display()
            ))
            }
            Ok(n) => Some(n),
            Err(e) => return bad(format!("--kubelet real: cannot list the nodes: {e}")),
        },
    };
    let mut prepared = Vec::new();
    let mut not_run = Vec::new();
    let mut played_only = Vec::new();
    for f in &files {
        match Prepared::load(f, profile) {
            Ok(p) => {
                // A scenario about a gate switched otherwise than on this cluster: its
                // behaviour is not what this cluster has, so it cannot be run here.
                let unlike = p.gates_unlike(&sem);
                if !unlike.is_empty() {
                    not_run.push((
                        p.scenario.name.clone(),
                        p.scenario.feature_gates.clone(),
                        unlike,
                    ));
                    continue;
                }
                let p = match &args.contract {
                    Some(c) => p.under_contract(c),
                    None => p.judged_as(sem),
                };
                let mut p = p.stopping_at_first_divergence(args.stop_at_first_divergence);
                p.model = args.switches.apply(p.model);
                let unheld = gate.is_none() || (gc_gate.is_none() && p.compiled.holds_from_gc());
                if unheld && p.compiled.holds() {
                    p = p.without_holds();
                }
                if let Some(nodes) = &real_nodes {
                    match p.on_real_kubelets(nodes) {
                        Ok(real) => p = real,
                        Err(why) => {
                            played_only.push((p.scenario.name.clone(), why));
                            continue;
                        }
                    }
                }
                prepared.push(Arc::new(p))
            }
            Err(e) => return bad(e.to_string()),
        }
    }
    if !played_only.is_empty() {
        eprintln!(
            "not run on real kubelets (`--kubelet fake` plays the kubelet for them):\n  {}",
            played_only
                .iter()
                .map(|(name, why)| format!("{name}: {why}"))
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
    if !not_run.is_empty() {
        eprintln!(
            "{}",
            not_run_here(&not_run, &version.git_version, local.is_some())
        );
    }
    if prepared.is_empty() && (!not_run.is_empty() || !played_only.is_empty()) {
        return bad("no scenario given can run on this cluster".into());
    }
    // Nothing held from an earlier, interrupted run.
    for gate in gate.iter().chain(&gc_gate) {
        if let Err(e) = gate.release_all().await {
            return bad(e);
        }
    }
    let mut names = std::collections::BTreeMap::new();
    for p in &prepared {
        if let Some(other) = names.insert(p.scenario.name.clone(), p.scenario.path.clone()) {
            return bad(format!(
                "{}: scenario name {:?} is also the name of {}",
                p.scenario.path.display(),
                p.scenario.name,
                other.display()
            ));
        }
    }

    // The implementation under test.
    let implementation = match (args.controller, &args.controller_cmd) {
        (ControllerArg::Builtin, None) => Implementation::Builtin,
        (ControllerArg::Builtin, Some(_)) => {
            return bad("--controller-cmd needs --controller external".into())
        }
        (ControllerArg::External, Some(c)) => Implementation::External {
            command: c.clone(),
            moved_clock: args.moved_clock,
        },
        (ControllerArg::External, None) => {
            return bad("--controller external needs --controller-cmd".into())
        }
    };
    let log_dir = match &args.report {
        Some(d) => d.join("controller-logs"),
        None => std::env::temp_dir().join(format!("rsmc-conform-{}", std::process::id())),
    };
    let views = (!args.no_views).then(|| match &local {
        Some(l) => Kubectl {
            program: l.kubectl(),
            cache_dir: Some(l.kubectl_cache_dir()),
        },
        None => Kubectl {
            program: PathBuf::from("kubectl"),
            cache_dir: None,
        },
    });
    // The controller managers whose work queues a settle point can read.
    let probes = match local.as_ref().map(workqueues::Probe::of_cluster) {
        Some(Err(e)) => return bad(e),
        Some(Ok(p)) => p,
        None => Vec::new(),
    };
    let controllers = match Controllers::start(implementation.clone(), local, &kubeconfig, &log_dir)
    {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let nodes: Vec<String> = {
        let mut n: Vec<String> = prepared
            .iter()
            .flat_map(|p| p.scenario.nodes.clone())
            .collect();
        n.sort();
        n.dedup();
        n
    };
    let created_nodes = if args.kubelet == KubeletArg::Fake {
        match kubelet::ensure_nodes(&client, &nodes).await {
            Ok(c) => c,
            Err(e) => return bad(format!("cannot create the fake nodes: {e}")),
        }
    } else {
        Vec::new()
    };
    let mut cluster = serde_json::json!({
        "server": version.git_version,
        "controller": match &implementation {
            Implementation::Builtin => "builtin".to_string(),
            Implementation::External { command, .. } => format!("external: {command}"),
        },
        "kubelet": format!("{:?}", args.kubelet).to_lowercase(),
        "featureGates": gates,
    });
    if let Some(contract) = &args.contract {
        // Judged again (`rsmc oracle`) by the same contract.
        cluster["contract"] = contract.name().into();
    }
    if let Some(nodes) = &real_nodes {
        // What the model binds pods to when the recording is judged again (`rsmc oracle`).
        cluster["nodes"] = serde_json::json!(nodes);
    }
    let target = Arc::new(Target {
        client: client.clone(),
        kubeconfig: kubeconfig.clone(),
        views,
        controllers: AsyncMutex::new(controllers),
        policy: SettlePolicy {
            quiet_window: Duration::from_secs_f64(args.quiet_window),
            idle_window: args.idle_window.0,
            timeout: Duration::from_secs(args.settle_timeout),
        },
        write_pause: Duration::from_secs_f64(args.write_pause),
        namespaces: Arc::new(Mutex::new(Vec::new())),
        deletions: Mutex::new(Vec::new()),
        probes,
        gate: gate.clone(),
        gc_gate: gc_gate.clone(),
        cluster,
    });
    let switches: String = args
        .switches
        .on(sem)
        .switches()
        .iter()
        .map(|s| format!(", {s}"))
        .collect();
    let contract = args
        .contract
        .map(|c| format!(", contract {}", c.label()))
        .unwrap_or_default();
    eprintln!(
        "rsmc conform: {} scenarios on {} (server {}{contract}, profile {}{switches}, controller {}, kubelet {:?})",
        prepared.len(),
        kubeconfig.display(),
        version.git_version,
        profile.name(),
        target.cluster["controller"].as_str().unwrap_or(""),
        args.kubelet
    );
    let elsewhere: Vec<String> = prepared
        .iter()
        .filter_map(|p| {
            p.written_for_another_profile()
                .map(|w| format!("{} ({w})", p.scenario.name))
        })
        .collect();
    if !elsewhere.is_empty() {
        eprintln!(
            "judged as this release's controller although written for another profile: {}",
            elsewhere.join(", ")
        );
    }
    let total = prepared.len();
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let ran_count = std::sync::atomic::AtomicUsize::new(0);
    let ran = |r: &ScenarioRun| {
        let n = ran_count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let how = match &r.error {
            Some(e) => format!("stopped: {}", e.message),
            None => format!("{} settle points recorded", r.settle_points),
        };
        eprintln!(
            "[ran {n}/{total}] {} in {:.1}s: {how}",
            r.scenario, r.wall_seconds
        );
    };
    let progress = |r: &ScenarioRun| {
        let n = finished.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!("[judged {n}/{total}] {}", suite::summary_line(r));
    };
    let results = tokio::select! {
        r = suite::run_all(target.clone(), prepared, args.jobs, &ran, &progress) => Some(r),
        _ = tokio::signal::ctrl_c() => None,
    };
    // Clean up whatever is left: events held by an interrupted run, its namespaces, the fake
    // nodes, the controller processes the run started.
    for gate in gate.iter().chain(&gc_gate) {
        if let Err(e) = gate.release_all().await {
            eprintln!("warning: {e}");
        }
    }
    // The namespaces of finished scenarios are being deleted in the background; wait for
    // that, then delete what an interrupted scenario left.
    let deletions: Vec<_> = std::mem::take(&mut *target.deletions.lock().unwrap());
    let pending = deletions.iter().filter(|d| !d.is_finished()).count();
    if pending > 0 {
        eprintln!("waiting until the run's last {pending} namespaces are gone");
    }
    for deletion in deletions {
        let _ = deletion.await;
    }
    let left: Vec<String> = target.namespaces.lock().unwrap().clone();
    if !left.is_empty() {
        eprintln!("deleting namespaces {}", left.join(", "));
        let remaining = delete_namespaces(&client, &left, NAMESPACE_DELETION_TIMEOUT).await;
        if !remaining.is_empty() {
            eprintln!(
                "warning: namespaces still there after {} s: {}",
                NAMESPACE_DELETION_TIMEOUT.as_secs(),
                remaining.join(", ")
            );
        }
    }
    kubelet::remove_nodes(&client, &created_nodes).await;
    drop(target);
    if args.report.is_none() {
        let _ = std::fs::remove_dir_all(&log_dir);
    }
    let Some(results) = results else {
        eprintln!("interrupted");
        return 130;
    };
    let mut skipped: Vec<Case> = not_run
        .iter()
        .map(|(name, _, unlike)| {
            Case::new(
                name.clone(),
                Outcome::Skipped {
                    message: format!("not run: needs {}", unlike.join(", ")),
                },
            )
        })
        .collect();
    skipped.extend(played_only.iter().map(|(name, why)| {
        Case::new(
            name.clone(),
            Outcome::Skipped {
                message: format!("not run on real kubelets: {why}"),
            },
        )
    }));
    let code = finish(args, &results);
    let suite = suite(&results, skipped, &version.git_version, started);
    ci_report::written(args.junit.as_deref(), &suite, code)
}

/// The runs as CI systems read them: a test case per scenario, failing where it does not
/// conform (its first divergence as the message, the whole verdict as the text), an error
/// where the cluster or the controller broke, skipped where this cluster cannot run it.
fn suite(results: &[ScenarioRun], skipped: Vec<Case>, server: &str, started: Instant) -> Suite {
    let mut cases: Vec<Case> = results
        .iter()
        .map(|r| {
            let text = suite::render(r);
            let outcome = match (&r.error, &r.verdict) {
                _ if r.conforms() => Outcome::Passed,
                (Some(e), _) if e.broken => Outcome::Error {
                    message: e.message.clone(),
                    detail: text,
                },
                (Some(e), _) => Outcome::Failed {
                    message: e.message.clone(),
                    detail: text,
                },
                (None, verdict) => Outcome::Failed {
                    message: verdict
                        .as_ref()
                        .and_then(|v| v.headline())
                        .unwrap_or_else(|| "not judged".into()),
                    detail: text,
                },
            };
            Case::new(r.scenario.clone(), outcome)
                .with_time(Duration::from_secs_f64(r.wall_seconds + r.judge_seconds))
                .with_output(suite::summary_line(r).trim().to_string())
        })
        .collect();
    cases.extend(skipped);
    let conforming = results.iter().filter(|r| r.conforms()).count();
    Suite {
        name: format!("rsmc conform {server}"),
        headline: format!("{conforming} of {} scenarios conform", results.len()),
        properties: vec![("server".to_string(), server.to_string())],
        time: started.elapsed(),
        cases,
    }
}

/// Which scenarios were not run because they are about gates this cluster has switched the
/// other way, and how to run them.
fn not_run_here(
    not_run: &[(String, FeatureGates, Vec<String>)],
    server: &str,
    local: bool,
) -> String {
    let mut out = format!(
        "not run: {} scenario(s) about feature gates this cluster ({server}) has switched the other way:",
        not_run.len()
    );
    for (name, wants, unlike) in not_run {
        let minor = rsmc_spec::gates::release_minor(server);
        let how = match (local, minor.map(|m| (m, wants.check_release(m)))) {
            (_, Some((_, Err(e)))) => format!("a newer release: {e}"),
            (true, Some((minor, Ok(())))) => format!(
                "`rsmc cluster up --kubernetes 1.{minor} --feature-gates {}`",
                wants.flag()
            ),
            _ => format!(
                "a cluster started with --feature-gates {} (tell rsmc conform with --feature-gates)",
                wants.flag()
            ),
        };
        out.push_str(&format!(
            "\n  {name}: needs {}; run it on {how}",
            unlike.join(", ")
        ));
    }
    out
}

/// Report the results and choose the exit code.
fn finish(args: &ConformArgs, results: &[ScenarioRun]) -> i32 {
    if let Some(dir) = &args.report {
        if let Err(e) = suite::write_report(dir, results) {
            eprintln!("error: cannot write the report to {}: {e}", dir.display());
        } else {
            eprintln!("report written to {}", dir.display());
        }
    }
    crate::output::print(args.json, results, || {
        for r in results {
            if !r.conforms() || !r.not_forced.is_empty() || r.on_cluster.is_some() {
                println!("{}", suite::render(r));
            }
        }
        for r in results {
            println!("{}", suite::summary_line(r));
        }
        let found = rsmc_oracle::judge::findings::across(
            results
                .iter()
                .filter_map(|r| Some((r.scenario.as_str(), &r.verdict.as_ref()?.findings[..]))),
        );
        let stopped: Vec<String> = results
            .iter()
            .filter_map(|r| Some(format!("  {}: {}", r.scenario, r.stopped_because()?)))
            .collect();
        if !found.is_empty() {
            println!("\nfound, by what (scenario and settle points):");
            for (what, scenarios) in found {
                println!("  {what}: {}", scenarios.join(", "));
            }
        }
        if !stopped.is_empty() {
            println!("\nstopped short:\n{}", stopped.join("\n"));
        }
    });
    let conforming = results.iter().filter(|r| r.conforms()).count();
    let broken = results
        .iter()
        .filter(|r| r.error.as_ref().is_some_and(|e| e.broken))
        .count();
    let judging: f64 = results.iter().map(|r| r.judge_seconds).sum();
    eprintln!(
        "{conforming} of {} scenarios conform (judging took {judging:.1}s){}",
        results.len(),
        if broken > 0 {
            format!("; {broken} could not run (the cluster or the controller broke)")
        } else {
            String::new()
        }
    );
    if broken > 0 {
        exit::BAD_INPUT
    } else if conforming < results.len() {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
