//! `rsmc import`: a recording of any cluster as a scenario and an observed trace for `rsmc
//! oracle` (see `rsmc_oracle::import`), and with `--judge` the oracle's verdict on each.
//! Exit codes: 0 every namespace written (and, with `--judge`, conforming), 1 one judged not
//! to conform, 2 bad input or a namespace left out (each named with its reason), 3 one that
//! could not be judged within the budget; where several apply, the lowest-numbered of 2, 1
//! and 3, in that order.

use crate::{exit, BudgetArgs, Switches};
use rsmc_oracle::import::judged::NotJudged;
use rsmc_oracle::import::{self, writer::Attribution, Imported, Options, Recording};
use rsmc_oracle::judge::{self, Verdict};
use rsmc_oracle::{observed, scenario};
use std::path::{Path, PathBuf};

/// Arguments of `rsmc import`.
#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// A kube-apiserver audit log (JSON lines) written with the policy
    /// conformance/audit-policy.yaml (`rsmc cluster up --audit-log` writes one).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "watch",
        conflicts_with = "watch"
    )]
    pub audit_log: Option<PathBuf>,
    /// The output of `kubectl get pods|replicasets [-A] --watch --output-watch-events -o json`
    /// (repeatable: one file per resource type, or several in one; namespaces, ConfigMaps and
    /// the controllers' SuccessfulDelete events may be watched too, for the recording's end,
    /// the marks and who deleted).
    #[arg(long, value_name = "FILE")]
    pub watch: Vec<PathBuf>,
    /// The namespace to import (needed when the recording writes to more than one).
    #[arg(long, conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Import every namespace the recording writes to, one scenario each (named by namespace).
    #[arg(long)]
    pub all_namespaces: bool,
    /// Seconds without a write that end a segment (a settle point), unless the recording has
    /// marks (ConfigMaps created named rsmc-settle…), which then end segments instead. A
    /// ConfigMap named rsmc-fault… marks a fault forced there (its data.step, e.g. `hold:
    /// pods`; `rsmc conform` leaves them), which the scenario then takes.
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub quiet_window: f64,
    /// The user name, or user-agent prefix, of the ReplicaSet controller under test when it
    /// is not the built-in one; with --watch, its field manager (repeatable; `rsmc
    /// controller` is known).
    #[arg(long = "controller", value_name = "USER_OR_AGENT")]
    pub controllers: Vec<String>,
    /// The scenario's name (default: the namespace's).
    #[arg(long, conflicts_with = "all_namespaces")]
    pub name: Option<String>,
    /// The Kubernetes release recorded, e.g. v1.37.2 (default: read from
    /// kube-controller-manager's user agent in an audit log; a watch does not show it).
    #[arg(long, value_name = "VERSION")]
    pub server: Option<String>,
    /// Feature gates the recorded cluster ran with where they differ from its release's
    /// defaults (`GATE=BOOL,…`): a recording does not show them, and the model follows them.
    #[arg(long, value_name = "GATE=BOOL,…", default_value = "")]
    pub feature_gates: String,
    /// The directory to write NAME.yaml and NAME.observed.json to (made if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Replace files of the same names in the directory.
    #[arg(long)]
    pub force: bool,
    /// Also judge each namespace written, as `rsmc oracle --scenario NAME.yaml --observed
    /// NAME.observed.json` judges the two files, and write the verdict to NAME.verdict.txt
    /// beside them.
    #[arg(long)]
    pub judge: bool,
    /// With --judge: judge by the model with these switches.
    #[command(flatten)]
    pub switches: Switches,
    /// With --judge: the budget of each of the oracle's searches.
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// What became of one namespace.
enum Outcome {
    /// Not written: the reason has been printed.
    LeftOut,
    /// Written and not judged (no `--judge`).
    Written,
    Conforms,
    DoesNotConform,
    /// Written, and the judgement ran out of its budget.
    TooLarge,
}

pub fn run(args: &ImportArgs) -> i32 {
    if !(args.quiet_window > 0.0 && args.quiet_window.is_finite()) {
        eprintln!(
            "error: --quiet-window: expected a positive number of seconds, got {}",
            args.quiet_window
        );
        return exit::BAD_INPUT;
    }
    if let Err(e) = args.feature_gates.parse::<rsmc_spec::gates::FeatureGates>() {
        eprintln!("error: --feature-gates: {e}");
        return exit::BAD_INPUT;
    }
    if !args.judge && (args.switches.bug.is_some() || !args.switches.fixes.is_empty()) {
        eprintln!(
            "error: --bug and --fix choose the model a verdict is judged by: pass --judge too"
        );
        return exit::BAD_INPUT;
    }
    let mut attribution = Attribution::default();
    attribution
        .controllers
        .extend(args.controllers.iter().cloned());
    let options = Options {
        namespace: args.namespace.clone(),
        quiet: import::SignedDuration::from_secs_f64(args.quiet_window),
        attribution,
        name: args.name.clone(),
        server: args.server.clone(),
        feature_gates: args.feature_gates.clone(),
    };
    let read = match &args.audit_log {
        Some(log) => Recording::read(log, &options.attribution, args.namespace.as_deref()),
        None => Recording::read_watches(
            &args.watch,
            &options.attribution,
            args.namespace.as_deref(),
            options.quiet,
        ),
    };
    let log = match read {
        Ok(log) => log,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let namespaces = if args.all_namespaces {
        log.namespaces().into_iter().map(Some).collect()
    } else {
        vec![args.namespace.clone()]
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: --out {}: {e}", args.out.display());
        return exit::BAD_INPUT;
    }
    let mut outcomes = Vec::new();
    for namespace in namespaces {
        let options = Options {
            namespace: namespace.clone(),
            ..options.clone()
        };
        let outcome = match log.import(&options) {
            Ok(imported) => import_one(&imported, args),
            Err(e) => {
                eprintln!("error: {e}");
                Outcome::LeftOut
            }
        };
        outcomes.push((namespace, outcome));
    }
    let named = |wanted: fn(&Outcome) -> bool| -> Vec<String> {
        outcomes
            .iter()
            .filter(|(_, o)| wanted(o))
            .map(|(n, _)| n.clone().unwrap_or_else(|| "the recording's".to_string()))
            .collect()
    };
    let left_out = named(|o| matches!(o, Outcome::LeftOut));
    let not_conforming = named(|o| matches!(o, Outcome::DoesNotConform));
    let too_large = named(|o| matches!(o, Outcome::TooLarge));
    let conforming = named(|o| matches!(o, Outcome::Conforms));
    // A whole cluster's import closes with the count, so that it says how much of the
    // cluster was imported and judged; each namespace left out has been named with its reason.
    if args.all_namespaces {
        let total = outcomes.len();
        let mut summary = format!(
            "rsmc import: {} of {total} namespaces written",
            total - left_out.len()
        );
        if args.judge {
            summary += &format!("; {} conform", conforming.len());
            if !not_conforming.is_empty() {
                summary += &format!(
                    ", {} do not ({})",
                    not_conforming.len(),
                    not_conforming.join(", ")
                );
            }
            if !too_large.is_empty() {
                summary += &format!(
                    ", {} not judged within the budget ({})",
                    too_large.len(),
                    too_large.join(", ")
                );
            }
        }
        if !left_out.is_empty() {
            summary += &format!(
                "; left out, each for the reason above: {}",
                left_out.join(", ")
            );
        }
        eprintln!("{summary}");
    }
    if !left_out.is_empty() {
        exit::BAD_INPUT
    } else if !not_conforming.is_empty() {
        exit::VIOLATION
    } else if !too_large.is_empty() {
        exit::TOO_LARGE
    } else {
        exit::OK
    }
}

/// Write one namespace's import and, with `--judge`, its verdict; print what was done.
fn import_one(imported: &Imported, args: &ImportArgs) -> Outcome {
    let name = &imported.scenario.name;
    let verdict_path = args.out.join(format!("{name}.verdict.txt"));
    let also = if args.judge {
        vec![verdict_path.clone()]
    } else {
        Vec::new()
    };
    match write(imported, &args.out, args.force, &also) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("error: {e}");
            return Outcome::LeftOut;
        }
    }
    if !args.judge {
        return Outcome::Written;
    }
    let judged = imported.judge_switched(
        &args.budget.budget(),
        args.switches.bug,
        &args.switches.fixes,
    );
    let (outcome, text, line) = judged_text(judged);
    if let Err(e) = std::fs::write(&verdict_path, text) {
        eprintln!("error: {}: {e}", verdict_path.display());
        return Outcome::LeftOut;
    }
    println!("  {line}: {}", verdict_path.display());
    outcome
}

/// A judgement's outcome, the verdict file's text and the line that says it.
fn judged_text(judged: Result<Verdict, NotJudged>) -> (Outcome, String, String) {
    match judged {
        Ok(verdict) => {
            let text = judge::render(&verdict);
            match verdict.headline() {
                None => (Outcome::Conforms, text, "conforms".to_string()),
                Some(headline) => (
                    Outcome::DoesNotConform,
                    text,
                    format!("does not conform ({headline})"),
                ),
            }
        }
        Err(e) => {
            let (outcome, text) = match e.exhausted() {
                Some(exhausted) => (Outcome::TooLarge, format!("{e}; {}\n", exhausted.remedy())),
                // What was written does not read back: the import's own fault, and the
                // namespace is as good as not written.
                None => (Outcome::LeftOut, format!("{e}\n")),
            };
            eprint!("error: {text}");
            (outcome, text, "not judged".to_string())
        }
    }
}

/// Write an import's two files (after reading them back as `rsmc oracle` will) and say what
/// was written.
/// `also` are further files the caller will write: none of them may exist either, unless
/// `force`.
fn write(imported: &Imported, dir: &Path, force: bool, also: &[PathBuf]) -> Result<String, String> {
    let name = &imported.scenario.name;
    let scenario_path = dir.join(format!("{name}.yaml"));
    let observed_path = dir.join(format!("{name}.observed.json"));
    for path in [&scenario_path, &observed_path].into_iter().chain(also) {
        if !force && path.exists() {
            return Err(format!(
                "{}: exists; remove it or pass --force to replace it",
                path.display()
            ));
        }
    }
    let yaml = imported.scenario.to_yaml();
    let json = serde_json::to_string_pretty(&imported.observed).expect("JSON of an observed trace");
    // What is written must read back: a failure here is the import's fault.
    scenario::load_str(&scenario_path, &yaml)
        .map_err(|e| format!("the imported scenario does not read back (an import bug): {e}"))?;
    observed::parse(&observed_path, &json)
        .map_err(|e| format!("the imported trace does not read back (an import bug): {e}"))?;
    std::fs::write(&scenario_path, yaml)
        .map_err(|e| format!("{}: {e}", scenario_path.display()))?;
    std::fs::write(&observed_path, json)
        .map_err(|e| format!("{}: {e}", observed_path.display()))?;
    let s = &imported.summary;
    Ok(format!(
        "{name}: namespace {}, lines {}–{}: {} writes ({} refused, {} of them kept as steps expected to be refused, {} answered with a server error ({} of them unconfirmed: judged both ways), {} invisible to the model), {} steps, {} settle points, {} events{}\n  rsmc oracle --scenario {} --observed {}",
        s.namespace,
        s.first_line,
        s.last_line,
        s.writes,
        s.refused,
        s.refused_steps,
        s.lost,
        s.unconfirmed,
        s.invisible,
        s.steps,
        s.segments,
        s.events,
        s.namespace_deleted_at
            .map(|at| format!("; the namespace's teardown (from {at}) left out"))
            .unwrap_or_default(),
        scenario_path.display(),
        observed_path.display()
    ))
}
