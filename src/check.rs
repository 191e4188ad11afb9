//! `rsmc check`: run the model checker with live progress, report every property, and write
//! each violation as a trace.

use crate::exit;
use crate::CheckArgs;
use indicatif::{ProgressBar, ProgressStyle};
use rsmc_oracle::trace::Trace;
use rsmc_spec::config::Config;
use rsmc_spec::model::RsModel;
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
}

/// The whole report.
#[derive(Serialize)]
struct Report {
    profile: String,
    config: String,
    states: usize,
    unique_states: usize,
    max_depth: usize,
    seconds: f64,
    unique_per_second: f64,
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
    let config = match load_config(&args.config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let model = RsModel::new(config, args.profile);
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let started = Instant::now();
    let checker = model.clone().checker().threads(threads).spawn_bfs();
    // On a terminal a live spinner; elsewhere (CI logs) a plain line every five seconds.
    let live = std::io::stderr().is_terminal();
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
    let mut last_line = Instant::now();
    while !checker.is_done() {
        let secs = started.elapsed().as_secs_f64().max(1e-3);
        let message = format!(
            "states {} · unique {} · depth {} · {:.0} unique/s",
            checker.state_count(),
            checker.unique_state_count(),
            checker.max_depth(),
            checker.unique_state_count() as f64 / secs
        );
        if live {
            bar.set_message(message);
            bar.tick();
        } else if last_line.elapsed() >= Duration::from_secs(5) {
            eprintln!("rsmc check: {secs:.0} s, {message}");
            last_line = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let checker = checker.join();
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();

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
        let mut verdict = Verdict {
            name: property.name.to_string(),
            kind,
            result,
            trace: None,
            text: None,
            scenario: None,
            summary: None,
        };
        if result == "violated" {
            failed = true;
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
            verdict.summary = Some(rsmc_oracle::trace_text::summary(&trace));
            let name = format!("{}-{}", trace.profile, slug(property.name));
            let description = format!(
                "The counterexample of \"{}\" that `rsmc check --config {}` found, as a scenario: its environment moves, with a settle wherever the cluster was quiet.",
                property.name, args.config
            );
            let mut scenario =
                rsmc_oracle::run_scenario::from_run(&model, &states, &actions, &name, &description);
            scenario.profile = Some(model.profile);
            match write_trace(&args.out, &name, &trace, &scenario.to_yaml()) {
                Ok((json, text, yaml)) => {
                    verdict.trace = Some(json);
                    verdict.text = Some(text);
                    verdict.scenario = Some(yaml);
                }
                Err(e) => eprintln!("error: writing the trace of {:?}: {e}", property.name),
            }
        }
        verdicts.push(verdict);
    }
    let report = Report {
        profile: model.profile.name().to_string(),
        config: args.config.clone(),
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
        max_depth: checker.max_depth(),
        seconds,
        unique_per_second: checker.unique_state_count() as f64 / seconds.max(1e-3),
        properties: verdicts,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serialises")
        );
    } else {
        print_report(&report);
    }
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
    let width = r.properties.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &r.properties {
        println!("  {:<8} {:<width$}  {}", p.kind, p.name, p.result);
    }
    for p in r.properties.iter().filter(|p| p.summary.is_some()) {
        println!("\nviolation: {}", p.name);
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
