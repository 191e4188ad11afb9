//! `rsmc check`: run the model checker with live progress, report every property, and write
//! each violation as a trace.

use crate::ci_report::{self, Case, Outcome, Suite};
use crate::exit;
use crate::CheckArgs;
use indicatif::{ProgressBar, ProgressStyle};
use rsmc_oracle::trace::Trace;
use rsmc_spec::config::{Config, ConfigError};
use rsmc_spec::liveness;
use rsmc_spec::model::{set_reduction, Action, RsModel, State};
use serde::Serialize;
use stateright::{Checker, Expectation, HasDiscoveries, Model};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One property's verdict.
#[derive(Serialize)]
struct Verdict {
    name: String,
    kind: &'static str,
    result: &'static str,
    trace: Option<PathBuf>,
    text: Option<PathBuf>,
    /// The counterexample as a scenario for `rsmc replay` and conformance runs.
    scenario: Option<PathBuf>,
    /// The readable counterexample printed under the table (not part of the JSON report,
    /// which points at the trace file instead).
    #[serde(skip)]
    summary: Option<String>,
    /// For a liveness violation, why the cluster has not converged.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// For a liveness violation, the convergence condition it breaks
    /// (`rsmc_spec::liveness::converged`).
    #[serde(skip_serializing_if = "Option::is_none")]
    breaks: Option<&'static str>,
    /// For a violation that matches an open entry of the bug catalogue: `known upstream
    /// issue #N (name)`. It fails the check only with `--strict`.
    #[serde(skip_serializing_if = "Option::is_none")]
    known: Option<String>,
    /// The counterexample's files could not be written (`--out` unusable): the check fails,
    /// since a violation nobody can read is no result.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unwritten: bool,
}

impl Verdict {
    /// A verdict with nothing recorded yet.
    fn new(name: &str, kind: &'static str, result: &'static str) -> Self {
        Verdict {
            name: name.to_string(),
            kind,
            result,
            trace: None,
            text: None,
            scenario: None,
            summary: None,
            reason: None,
            breaks: None,
            known: None,
            unwritten: false,
        }
    }

    /// Whether this verdict fails the check.
    fn fails(&self, strict: bool) -> bool {
        self.result == "violated" && (self.known.is_none() || strict)
    }
}

/// The whole report. The search figures at the top level (`states` … `unique_per_second`)
/// are the safety search's; the convergence search's are `liveness_*`; `seconds` is the
/// whole run.
#[derive(Serialize)]
struct Report {
    /// `holds`, `violated`, or `known violations only` (every violation matches an open
    /// entry of the bug catalogue and `--strict` is off).
    verdict: &'static str,
    /// The process's exit code and what it means.
    exit_code: i32,
    exit_meaning: &'static str,
    profile: String,
    config: String,
    /// The catalogued bug switched on, if any.
    bug: Option<String>,
    /// The proposed fixes switched on.
    fixes: Vec<String>,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    safety_seconds: f64,
    unique_per_second: f64,
    /// States the liveness search explored (its own search, reduced up to revisions only).
    liveness_states: Option<usize>,
    liveness_seconds: Option<f64>,
    liveness_states_per_second: Option<f64>,
    /// Both searches and writing the counterexamples.
    seconds: f64,
    /// The process's peak resident memory (Linux `VmHWM`), when known.
    peak_memory_bytes: Option<u64>,
    properties: Vec<Verdict>,
}

/// The overall verdict, the exit code and its meaning.
fn outcome(verdicts: &[Verdict], strict: bool) -> (&'static str, i32, &'static str) {
    let violated = verdicts.iter().any(|v| v.result == "violated");
    if verdicts.iter().any(|v| v.unwritten) {
        let verdict = if violated { "violated" } else { "holds" };
        return (
            verdict,
            exit::BAD_INPUT,
            "a counterexample could not be written where --out says",
        );
    }
    if verdicts.iter().any(|v| v.fails(strict)) {
        ("violated", exit::VIOLATION, "a property is violated")
    } else if violated {
        (
            "known violations only",
            exit::OK,
            "every violation is a known open upstream issue (--strict fails on them)",
        )
    } else {
        ("holds", exit::OK, "every property holds")
    }
}

/// A preset or configuration file; an error is printed and the `Err` is the exit code.
pub fn load_config(spec: &str) -> Result<Config, i32> {
    Config::load(spec).map_err(|e| {
        eprintln!("error: {}", located(&e));
        exit::BAD_INPUT
    })
}

/// A configuration error about a field of a file, with the line and column where the file
/// writes that field (or the nearest enclosing one it writes); other errors as they are.
/// The file is JSON, which the scenario loader's YAML reader reads with positions.
fn located(e: &ConfigError) -> String {
    let ConfigError::Invalid {
        path,
        field,
        message,
    } = e
    else {
        return e.to_string();
    };
    let file = std::path::Path::new(path);
    let position = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| rsmc_oracle::yaml::load_str(file, &text).ok())
        .and_then(|docs| docs.into_iter().next())
        .and_then(|doc| doc.position(&rsmc_oracle::yaml::FieldPath::parse(field)));
    match position {
        Some(p) => format!("{path}:{}:{}: field `{field}`: {message}", p.line, p.column),
        None => e.to_string(),
    }
}

pub fn run(args: &CheckArgs) -> i32 {
    let config_name = args.config_name();
    let config = match load_config(&config_name) {
        Ok(c) => c,
        Err(code) => return code,
    };
    set_reduction(args.reduction());
    let model = args.switches.apply(RsModel::new(config, args.profile));
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let started = Instant::now();
    let budget = args.memory.budget();
    let checker = model.clone().checker().threads(threads).spawn_bfs();
    let checker = match search(checker, "safety", &budget) {
        Ok(c) => c,
        Err(e) => {
            let message = format!(
                "the safety search of {config_name} stopped at depth {}: {e}; {}",
                e.depth,
                e.budget.remedy()
            );
            return stopped(args, &model, &config_name, started, &message);
        }
    };
    let safety_seconds = started.elapsed().as_secs_f64();
    let (states, unique_states, max_depth) = (
        checker.state_count(),
        checker.unique_state_count(),
        checker.max_depth(),
    );
    // Which properties have a discovery, and how deep: the paths themselves depend on
    // which thread got there first, so each violation is searched for again below.
    let found: Vec<(&'static str, usize)> = model
        .properties()
        .iter()
        .filter_map(|p| {
            checker
                .discovery(p.name)
                .map(|d| (p.name, d.into_actions().len()))
        })
        .collect();
    drop(checker);

    let mut verdicts = Vec::new();
    for property in model.properties() {
        let discovered = found.iter().find(|(name, _)| *name == property.name);
        let (kind, result) = match (&property.expectation, discovered) {
            (Expectation::Always, None) => ("safety", "holds"),
            (Expectation::Always, Some(_)) => ("safety", "violated"),
            (Expectation::Sometimes, Some(_)) => ("coverage", "reached"),
            (Expectation::Sometimes, None) => ("coverage", "not reached"),
            (Expectation::Eventually, None) => ("liveness", "holds"),
            (Expectation::Eventually, Some(_)) => ("liveness", "violated"),
        };
        let mut verdict = Verdict::new(property.name, kind, result);
        if let (true, Some((name, depth))) = (result == "violated", discovered) {
            let path = match shortest(&model, name, *depth, &budget) {
                Ok(path) => path,
                Err(e) => {
                    let message = format!(
                        "the search for the shortest counterexample of {name:?} stopped at depth {}: {e}; {}",
                        e.depth,
                        e.budget.remedy()
                    );
                    return stopped(args, &model, &config_name, started, &message);
                }
            };
            let mut states = path.clone().into_states();
            let mut actions = path.into_actions();
            // End the counterexample at its first violating state (a breadth-first search
            // checks a state when it takes it from the queue, so this is the last one).
            if let Some(first) = states.iter().position(|s| !(property.condition)(&model, s)) {
                states.truncate(first + 1);
                actions.truncate(first);
            }
            let trace = Trace::from_path(&model, Some(property.name), &states, &actions);
            record(&mut verdict, args, &model, &trace, &states, &actions);
        }
        verdicts.push(verdict);
    }
    let mut liveness = None;
    if !args.skip_liveness && !args.runs_liveness() {
        eprintln!(
            "rsmc check: convergence search skipped: {} breaks a safety property, and past its violations the convergence search would explore the broken cluster's whole state space (--liveness runs it anyway)",
            args.switches.bug.map(|b| b.to_string()).unwrap_or_default()
        );
    }
    if args.runs_liveness() {
        let liveness_started = Instant::now();
        match check_liveness(args, &model) {
            Ok((verdict, states)) => {
                liveness = Some((states, liveness_started.elapsed().as_secs_f64()));
                verdicts.push(verdict);
            }
            Err(e) => {
                let message = format!(
                    "the convergence search of {config_name} stopped: {e}; {} (or check safety alone with --skip-liveness)",
                    e.remedy()
                );
                return stopped(args, &model, &config_name, started, &message);
            }
        }
    }
    let (verdict, exit_code, exit_meaning) = outcome(&verdicts, args.strict);
    let report = Report {
        verdict,
        exit_code,
        exit_meaning,
        profile: model.profile.name().to_string(),
        config: config_name.clone(),
        bug: args.switches.bug.map(|b| b.to_string()),
        fixes: args.switches.fixes.iter().map(|f| f.to_string()).collect(),
        states,
        unique_states,
        max_depth,
        safety_seconds,
        unique_per_second: unique_states as f64 / safety_seconds.max(1e-3),
        liveness_states: liveness.map(|(n, _)| n),
        liveness_seconds: liveness.map(|(_, t)| t),
        liveness_states_per_second: liveness.map(|(n, t)| n as f64 / t.max(1e-3)),
        seconds: started.elapsed().as_secs_f64(),
        peak_memory_bytes: peak_memory(),
        properties: verdicts,
    };
    crate::output::print(args.json, &report, || print_report(&report));
    let suite = suite(&report, args);
    ci_report::written(args.junit.as_deref(), &suite, exit_code)
}

/// The name of a check's suite in CI reports.
fn suite_name(profile: &str, config: &str) -> String {
    format!("rsmc check {profile}/{config}")
}

/// A check whose search stopped at its budget (exit 3): the error printed, and in the CI
/// reports every property an error, since none was decided.
fn stopped(
    args: &CheckArgs,
    model: &RsModel,
    config: &str,
    started: Instant,
    message: &str,
) -> i32 {
    eprintln!("error: {message}");
    let undecided = || Outcome::Error {
        message: format!("not decided: {message}"),
        detail: String::new(),
    };
    let mut cases: Vec<Case> = model
        .properties()
        .iter()
        .map(|p| Case::new(p.name, undecided()))
        .collect();
    if args.runs_liveness() {
        cases.push(Case::new(liveness::CONVERGENCE, undecided()));
    }
    let suite = Suite {
        name: suite_name(model.profile.name(), config),
        headline: format!("stopped (exit {}): {message}", exit::TOO_LARGE),
        properties: vec![],
        time: started.elapsed(),
        cases,
    };
    ci_report::written(args.junit.as_deref(), &suite, exit::TOO_LARGE)
}

/// The report as CI systems read it: a test case per property, failing exactly where the
/// property fails the check (a known upstream issue fails only with `--strict`; without it,
/// it is shown as skipped with its label, as pytest shows an expected failure).
fn suite(r: &Report, args: &CheckArgs) -> Suite {
    let mut cases: Vec<Case> = r
        .properties
        .iter()
        .map(|p| {
            let outcome = if p.unwritten {
                Outcome::Error {
                    message: format!(
                        "{}: violated, and its counterexample could not be written under {}",
                        p.name,
                        args.out.display()
                    ),
                    detail: String::new(),
                }
            } else if p.fails(args.strict) {
                let why = p
                    .breaks
                    .map(|b| format!(" (breaks: {b})"))
                    .or(p.known.as_ref().map(|k| format!(" ({k})")))
                    .unwrap_or_default();
                Outcome::Failed {
                    message: format!("{}: violated{why}", p.name),
                    detail: violation_text(r, p),
                }
            } else {
                match (p.result, &p.known) {
                    ("violated", Some(known)) => Outcome::Skipped {
                        message: format!(
                            "violated, a {known}: upstream's controller breaks it too (--strict fails on it)"
                        ),
                    },
                    ("not reached", _) => Outcome::Skipped {
                        message: "not reached: no run of this configuration gets there".into(),
                    },
                    _ => Outcome::Passed,
                }
            };
            let case = Case::new(p.name.clone(), outcome);
            match (p.result, p.trace.is_some()) {
                ("violated", true) => case.with_output(violation_text(r, p)),
                _ => case,
            }
        })
        .collect();
    if !r.properties.iter().any(|p| p.kind == "liveness") {
        let why = if args.skip_liveness {
            "not searched: --skip-liveness"
        } else {
            "not searched: the bug switched on breaks a safety property (--liveness searches it)"
        };
        cases.push(Case::new(
            liveness::CONVERGENCE,
            Outcome::Skipped {
                message: why.into(),
            },
        ));
    }
    if let (Some(seconds), Some(case)) = (
        r.liveness_seconds,
        cases.iter_mut().find(|c| c.name == liveness::CONVERGENCE),
    ) {
        case.time = Some(Duration::from_secs_f64(seconds));
    }
    let mut properties = vec![
        ("profile".to_string(), r.profile.clone()),
        ("config".to_string(), r.config.clone()),
        ("unique_states".to_string(), r.unique_states.to_string()),
        ("max_depth".to_string(), r.max_depth.to_string()),
    ];
    if let Some(n) = r.liveness_states {
        properties.push(("liveness_states".to_string(), n.to_string()));
    }
    properties.extend(r.bug.iter().map(|b| ("bug".to_string(), b.clone())));
    properties.extend(r.fixes.iter().map(|f| ("fix".to_string(), f.clone())));
    Suite {
        name: suite_name(&r.profile, &r.config),
        headline: format!(
            "verdict: {} (exit {}: {})",
            r.verdict, r.exit_code, r.exit_meaning
        ),
        properties,
        time: Duration::from_secs_f64(r.seconds),
        cases,
    }
}

/// A search stopped by its memory budget: how deep it got, and the budget's error.
struct Stopped {
    depth: usize,
    budget: rsmc_spec::budget::Exhausted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.budget.fmt(f)
    }
}

/// Wait for a running search, showing its progress, and stop the process's part in it when
/// it passes the memory budget.
fn search<C: Checker<RsModel>>(
    checker: C,
    phase: &'static str,
    budget: &rsmc_spec::budget::Budget,
) -> Result<C, Stopped> {
    let started = Instant::now();
    let mut progress = Progress::new(phase);
    while !checker.is_done() {
        // stateright's checker cannot be stopped from outside; a search past its budget ends
        // the process, which holds nothing else to clean up.
        if let Err(e) = budget.meter().check_memory(checker.unique_state_count()) {
            progress.finish();
            return Err(Stopped {
                depth: checker.max_depth(),
                budget: e,
            });
        }
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        progress.show(format!(
            "states {} · unique {} · depth {} · {:.0} unique/s",
            checker.state_count(),
            checker.unique_state_count(),
            checker.max_depth(),
            checker.unique_state_count() as f64 / secs
        ));
        std::thread::sleep(Duration::from_millis(200));
    }
    progress.finish();
    Ok(checker)
}

/// The counterexample of `property` every run gives, whatever the thread count or timing:
/// the first a breadth-first search on one thread finds, taking each state's moves in the
/// model's order (`RsModel::actions`). That is a shortest one (no longer than the `depth`
/// steps the parallel search found), and among the shortest the least in that order. The
/// search goes no deeper than `depth` and stops at the first violation, so it costs at most
/// the parallel search's states up to that depth, on one core.
fn shortest(
    model: &RsModel,
    property: &'static str,
    depth: usize,
    budget: &rsmc_spec::budget::Budget,
) -> Result<stateright::Path<State, Action>, Stopped> {
    let checker = model
        .clone()
        .checker()
        .threads(1)
        .target_max_depth(depth + 2)
        .finish_when(HasDiscoveries::AnyOf([property].into()))
        .spawn_bfs();
    let checker = search(checker, "shortest counterexample", budget)?;
    Ok(checker
        .discovery(property)
        .expect("a violation found within this depth is found again"))
}

fn print_report(r: &Report) {
    println!(
        "rsmc check: profile {}, configuration {}",
        r.profile, r.config
    );
    println!(
        "  safety: {} states generated, {} unique, max depth {}, {:.1} s, {:.0} unique states/s",
        r.states, r.unique_states, r.max_depth, r.safety_seconds, r.unique_per_second
    );
    if let (Some(n), Some(t), Some(rate)) = (
        r.liveness_states,
        r.liveness_seconds,
        r.liveness_states_per_second,
    ) {
        println!(
            "  liveness: {n} states with their system moves, searched for stuck states and fair cycles, {t:.1} s, {rate:.0} states/s"
        );
    }
    let memory = r
        .peak_memory_bytes
        .map(|b| format!(", peak memory {} MB", b / 1_048_576))
        .unwrap_or_default();
    println!("  total: {:.1} s{memory}", r.seconds);
    println!(
        "  verdict: {} (exit {}: {})",
        r.verdict, r.exit_code, r.exit_meaning
    );
    let width = r.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for fix in &r.fixes {
        println!("  with the proposed fix {fix} (rsmc bugs)");
    }
    if let Some(bug) = &r.bug {
        println!("  with the upstream bug {bug} re-introduced (rsmc bugs)");
    }
    for p in &r.properties {
        let known = p
            .known
            .as_ref()
            .map(|k| format!(" — {k}"))
            .unwrap_or_default();
        println!("  {:<8} {:<width$}  {}{known}", p.kind, p.name, p.result);
    }
    for p in r.properties.iter().filter(|p| p.summary.is_some()) {
        match &p.known {
            Some(k) => println!("\nviolation: {} ({k})", p.name),
            None => println!("\nviolation: {}", p.name),
        }
        for line in violation_text(r, p).lines() {
            println!("  {line}");
        }
    }
}

/// A violation's explanation: why it has not converged (liveness), the condition it breaks,
/// the counterexample, and where its files are and how to open them.
fn violation_text(r: &Report, p: &Verdict) -> String {
    let mut out = String::new();
    if let Some(reason) = &p.reason {
        out.push_str(&format!("not converged: {reason}\n"));
    }
    if let Some(condition) = p.breaks {
        out.push_str(&format!("breaks: {condition}\n"));
    }
    for line in p.summary.iter().flat_map(|s| s.lines()) {
        out.push_str(&format!("{line}\n"));
    }
    if let (Some(json), Some(text)) = (&p.trace, &p.text) {
        out.push_str(&format!("trace: {}\n", json.display()));
        out.push_str(&format!("every step with tables: {}\n", text.display()));
    }
    if let Some(yaml) = &p.scenario {
        out.push_str(&format!(
            "as a scenario (rsmc replay, conformance): {}\n",
            yaml.display()
        ));
    }
    if let Some(json) = &p.trace {
        let bug: String = r
            .bug
            .iter()
            .map(|b| format!(" --bug {b}"))
            .chain(r.fixes.iter().map(|f| format!(" --fix {f}")))
            .collect();
        out.push_str(&format!(
            "open in the Explorer: rsmc explore --profile {} --config {}{bug} --trace {}\n",
            r.profile,
            r.config,
            json.display()
        ));
    }
    out
}

/// A file name for a property: lower-case words joined by dashes.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Write a counterexample's trace, its text and, if the run can be one, its scenario.
fn write_trace(
    dir: &std::path::Path,
    base: &str,
    trace: &Trace,
    scenario: Option<&str>,
) -> std::io::Result<(PathBuf, PathBuf, Option<PathBuf>)> {
    std::fs::create_dir_all(dir)?;
    let json = dir.join(format!("{base}.trace.json"));
    let text = dir.join(format!("{base}.txt"));
    std::fs::write(
        &json,
        serde_json::to_string_pretty(trace).expect("trace serialises"),
    )?;
    std::fs::write(&text, rsmc_oracle::views::trace_text::render(trace))?;
    let yaml = match scenario {
        Some(scenario) => {
            let yaml = dir.join(format!("{base}.scenario.yaml"));
            std::fs::write(&yaml, scenario)?;
            Some(yaml)
        }
        None => None,
    };
    Ok((json, text, yaml))
}

/// Write a counterexample's files (trace, text, scenario) and point the verdict at them.
fn record(
    verdict: &mut Verdict,
    args: &CheckArgs,
    model: &RsModel,
    trace: &Trace,
    states: &[State],
    actions: &[Action],
) {
    verdict.summary = Some(rsmc_oracle::views::trace_text::summary(trace));
    let known = rsmc_spec::bugs::known_open(&verdict.name, actions, model.sem.bug);
    verdict.known = known.map(|e| e.known_label());
    let name = format!("{}-{}", trace.profile, slug(&verdict.name));
    let description = format!(
        "The counterexample of \"{}\" that `rsmc check --config {}` found, as a scenario: its environment moves, a settle wherever the cluster was quiet, and the holds and awaits that make a cluster take the run's order.",
        verdict.name,
        args.config_name()
    );
    let scenario = match rsmc_oracle::scenario::unexpressible(states, actions) {
        Some(why) => {
            eprintln!(
                "rsmc check: the counterexample of {:?} is written as a trace only: {why}",
                verdict.name
            );
            None
        }
        None => {
            let mut scenario = rsmc_oracle::scenario::forced_counterexample(
                model,
                states,
                actions,
                &name,
                &description,
                &verdict.name,
            );
            scenario.profile = Some(model.profile);
            // A cluster run of it says whether it reproduced the known race, or the bug
            // switched on.
            scenario.reproduces =
                rsmc_spec::bugs::reproduced_by(&verdict.name, actions, model.sem.bug);
            Some(scenario.to_yaml())
        }
    };
    match write_trace(&args.out, &name, trace, scenario.as_deref()) {
        Ok((json, text, yaml)) => {
            verdict.trace = Some(json);
            verdict.text = Some(text);
            verdict.scenario = yaml;
        }
        Err(e) => {
            eprintln!(
                "error: cannot write the counterexample of {:?} under {}: {e}",
                verdict.name,
                args.out.display()
            );
            verdict.unwritten = true;
        }
    }
}

/// The most states the liveness search keeps (about 40 bytes each plus its moves).
const LIVENESS_LIMIT: usize = 200_000_000;

/// Convergence under weak fairness (`rsmc_spec::liveness`): the verdict and the number of
/// states searched.
fn check_liveness(
    args: &CheckArgs,
    model: &RsModel,
) -> Result<(Verdict, usize), rsmc_spec::budget::Exhausted> {
    let started = Instant::now();
    let mut progress = Progress::new("liveness");
    let budget = args.memory.budget().with_states(LIVENESS_LIMIT);
    let outcome = liveness::check(model, &budget, &mut |p| {
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        progress.show(format!(
            "states {} · expanded {} · depth {} · {:.0} states/s",
            p.states,
            p.expanded,
            p.depth,
            p.expanded as f64 / secs
        ));
    });
    progress.finish();
    let outcome = outcome?;
    let result = if outcome.violation.is_some() {
        "violated"
    } else {
        "holds"
    };
    let mut verdict = Verdict::new(liveness::CONVERGENCE, "liveness", result);
    if let Some(cx) = outcome.violation {
        let mut trace =
            Trace::from_path(model, Some(liveness::CONVERGENCE), &cx.states, &cx.actions);
        trace.cycle_start = cx.cycle_start.map(|i| i + 1);
        verdict.reason = Some(match cx.cycle_start {
            Some(_) => format!("a fair cycle never converges ({})", cx.why.reason),
            None => format!("stuck: no system move is enabled ({})", cx.why.reason),
        });
        verdict.breaks = Some(cx.why.condition.name());
        record(&mut verdict, args, model, &trace, &cx.states, &cx.actions);
    }
    Ok((verdict, outcome.states))
}

/// Live progress of one search: a spinner on a terminal, a plain line every five seconds
/// elsewhere (CI logs).
struct Progress {
    phase: &'static str,
    bar: ProgressBar,
    live: bool,
    started: Instant,
    last_line: Instant,
}

impl Progress {
    fn new(phase: &'static str) -> Self {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
        Progress {
            phase,
            bar,
            live: std::io::stderr().is_terminal(),
            started: Instant::now(),
            last_line: Instant::now(),
        }
    }

    fn show(&mut self, message: String) {
        if self.live {
            self.bar.set_message(format!("{}: {message}", self.phase));
            self.bar.tick();
        } else if self.last_line.elapsed() >= Duration::from_secs(5) {
            eprintln!(
                "rsmc check: {} {:.0} s, {message}",
                self.phase,
                self.started.elapsed().as_secs_f64()
            );
            self.last_line = Instant::now();
        }
    }

    fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// This process's peak resident set size, from `/proc/self/status` (Linux only).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
