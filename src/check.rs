//! `rsmc check`: run the model checker with live progress, report every property, and write
//! each violation as a trace.

use crate::exit;
use crate::CheckArgs;
use indicatif::{ProgressBar, ProgressStyle};
use rsmc_oracle::trace::Trace;
use rsmc_spec::config::Config;
use rsmc_spec::liveness;
use rsmc_spec::model::{set_reduction, Action, RsModel, State};
use serde::Serialize;
use stateright::{Checker, Expectation, Model};
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
        }
    }

    /// Whether this verdict fails the check.
    fn fails(&self, strict: bool) -> bool {
        self.result == "violated" && (self.known.is_none() || strict)
    }
}

/// The whole report.
#[derive(Serialize)]
struct Report {
    profile: String,
    config: String,
    /// The catalogued bug switched on, if any.
    bug: Option<String>,
    /// The proposed fixes switched on.
    fixes: Vec<String>,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    seconds: f64,
    unique_per_second: f64,
    /// States the liveness search explored (its own search, reduced up to revisions only).
    liveness_states: Option<usize>,
    /// The process's peak resident memory (Linux `VmHWM`), when known.
    peak_memory_bytes: Option<u64>,
    properties: Vec<Verdict>,
}

/// A preset or configuration file; an error is printed and the `Err` is the exit code.
pub fn load_config(spec: &str) -> Result<Config, i32> {
    Config::load(spec).map_err(|e| {
        eprintln!("error: {e}");
        exit::BAD_INPUT
    })
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
    let checker = model.clone().checker().threads(threads).spawn_bfs();
    let mut progress = Progress::new("safety");
    let budget = args.memory.budget();
    while !checker.is_done() {
        // stateright's checker cannot be stopped from outside; a search past its budget ends
        // the process, which holds nothing else to clean up.
        if let Err(e) = budget.meter().check_memory(checker.unique_state_count()) {
            progress.finish();
            eprintln!(
                "error: the safety search of {config_name} stopped at depth {}: {e}; {}",
                checker.max_depth(),
                e.remedy()
            );
            return exit::TOO_LARGE;
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
    let checker = checker.join();
    progress.finish();
    let safety_seconds = started.elapsed().as_secs_f64();

    let mut failed = false;
    let mut verdicts = Vec::new();
    for property in model.properties() {
        let discovery = checker.discovery(property.name);
        let (kind, result) = match (&property.expectation, &discovery) {
            (Expectation::Always, None) => ("safety", "holds"),
            (Expectation::Always, Some(_)) => ("safety", "violated"),
            (Expectation::Sometimes, Some(_)) => ("coverage", "reached"),
            (Expectation::Sometimes, None) => ("coverage", "not reached"),
            (Expectation::Eventually, None) => ("liveness", "holds"),
            (Expectation::Eventually, Some(_)) => ("liveness", "violated"),
        };
        let mut verdict = Verdict::new(property.name, kind, result);
        if result == "violated" {
            let path = discovery.expect("violated has a path");
            let mut states = path.clone().into_states();
            let mut actions = path.into_actions();
            // End the counterexample at its first violating state: the multi-threaded search
            // may discover a violating state some steps after the one that broke the property.
            if let Some(first) = states.iter().position(|s| !(property.condition)(&model, s)) {
                states.truncate(first + 1);
                actions.truncate(first);
            }
            let trace = Trace::from_path(&model, Some(property.name), &states, &actions);
            record(&mut verdict, args, &model, &trace, &states, &actions);
        }
        failed |= verdict.fails(args.strict);
        verdicts.push(verdict);
    }
    let mut liveness_states = None;
    if !args.skip_liveness && !args.runs_liveness() {
        eprintln!(
            "rsmc check: convergence search skipped: {} breaks a safety property, and past its violations the convergence search would explore the broken cluster's whole state space (--liveness runs it anyway)",
            args.switches.bug.map(|b| b.to_string()).unwrap_or_default()
        );
    }
    if args.runs_liveness() {
        match check_liveness(args, &model) {
            Ok((verdict, states)) => {
                failed |= verdict.fails(args.strict);
                liveness_states = Some(states);
                verdicts.push(verdict);
            }
            Err(e) => {
                eprintln!(
                    "error: the convergence search of {config_name} stopped: {e}; {} (or check safety alone with --skip-liveness)",
                    e.remedy()
                );
                return exit::TOO_LARGE;
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let report = Report {
        profile: model.profile.name().to_string(),
        config: config_name.clone(),
        bug: args.switches.bug.map(|b| b.to_string()),
        fixes: args.switches.fixes.iter().map(|f| f.to_string()).collect(),
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        seconds,
        unique_per_second: checker.unique_state_count() as f64 / safety_seconds.max(1e-3),
        liveness_states,
        peak_memory_bytes: peak_memory(),
        properties: verdicts,
    };
    crate::output::print(args.json, &report, || print_report(&report));
    if failed {
        exit::VIOLATION
    } else {
        exit::OK
    }
}

fn print_report(r: &Report) {
    println!(
        "rsmc check: profile {}, configuration {}",
        r.profile, r.config
    );
    println!(
        "  states generated {}, unique {}, max depth {}, {:.1} s, {:.0} unique states/s",
        r.states, r.unique_states, r.max_depth, r.seconds, r.unique_per_second
    );
    if let Some(bytes) = r.peak_memory_bytes {
        println!("  peak memory {} MB", bytes / 1_048_576);
    }
    if let Some(n) = r.liveness_states {
        println!("  liveness: {n} states with their system moves, searched for stuck states and fair cycles");
    }
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
        if let Some(reason) = &p.reason {
            println!("  not converged: {reason}");
        }
        if let Some(condition) = p.breaks {
            println!("  breaks: {condition}");
        }
        for line in p.summary.iter().flat_map(|s| s.lines()) {
            println!("  {line}");
        }
        if let (Some(json), Some(text)) = (&p.trace, &p.text) {
            println!("  trace: {}", json.display());
            println!("  every step with tables: {}", text.display());
        }
        if let Some(yaml) = &p.scenario {
            println!(
                "  as a scenario (rsmc replay, conformance): {}",
                yaml.display()
            );
        }
        if let Some(json) = &p.trace {
            let bug: String = r
                .bug
                .iter()
                .map(|b| format!(" --bug {b}"))
                .chain(r.fixes.iter().map(|f| format!(" --fix {f}")))
                .collect();
            println!(
                "  open in the Explorer: rsmc explore --profile {} --config {}{bug} --trace {}",
                r.profile,
                r.config,
                json.display()
            );
        }
    }
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

fn write_trace(
    dir: &PathBuf,
    base: &str,
    trace: &Trace,
    scenario: &str,
) -> std::io::Result<(PathBuf, PathBuf, PathBuf)> {
    std::fs::create_dir_all(dir)?;
    let json = dir.join(format!("{base}.trace.json"));
    let text = dir.join(format!("{base}.txt"));
    let yaml = dir.join(format!("{base}.scenario.yaml"));
    std::fs::write(
        &json,
        serde_json::to_string_pretty(trace).expect("trace serialises"),
    )?;
    std::fs::write(&text, rsmc_oracle::trace_text::render(trace))?;
    std::fs::write(&yaml, scenario)?;
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
    verdict.summary = Some(rsmc_oracle::trace_text::summary(trace));
    verdict.known =
        rsmc_spec::bugs::known_open(&verdict.name, actions, model.sem.bug).map(|e| e.known_label());
    let name = format!("{}-{}", trace.profile, slug(&verdict.name));
    let description = format!(
        "The counterexample of \"{}\" that `rsmc check --config {}` found, as a scenario: its environment moves, with a settle wherever the cluster was quiet.",
        verdict.name,
        args.config_name()
    );
    let mut scenario =
        rsmc_oracle::run_scenario::from_run(model, states, actions, &name, &description);
    scenario.profile = Some(model.profile);
    match write_trace(&args.out, &name, trace, &scenario.to_yaml()) {
        Ok((json, text, yaml)) => {
            verdict.trace = Some(json);
            verdict.text = Some(text);
            verdict.scenario = Some(yaml);
        }
        Err(e) => eprintln!("error: writing the trace of {:?}: {e}", verdict.name),
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
