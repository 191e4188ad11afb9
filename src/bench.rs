//! `rsmc bench`: how fast and how large the model checks are, per preset and profile.
//!
//! Each measurement is a separate `rsmc check --json` process, so its peak memory (the
//! kernel's high-water mark of its resident set, which `check` reports) is its own and not
//! the largest so far. Numbers are printed with the machine they were measured on; nothing
//! here is a pass/fail test.

use crate::exit;
use crate::BenchArgs;
use rsmc_spec::bugs::CATALOGUE;
use serde::Serialize;
use serde_json::Value;
use std::process::Command;

/// One check to measure.
struct Job {
    config: String,
    profile: String,
    bug: Option<String>,
    /// Whether the convergence search runs too: with `--liveness`, and for a catalogue entry
    /// whose counterexample is a convergence one (the others are found by the safety search;
    /// the convergence search goes on past safety violations and would measure the size of
    /// a broken cluster's state space, not the time to the counterexample).
    liveness: bool,
}

/// What to measure: every configuration in every profile, or with `--catalogue` each
/// catalogue entry as `rsmc bugs` shows it (its switch, configuration and profile).
fn jobs(args: &BenchArgs) -> Vec<Job> {
    if args.catalogue {
        return CATALOGUE
            .iter()
            .map(|e| Job {
                config: e.config.to_string(),
                profile: e.profile.name().to_string(),
                bug: e.switch.map(|_| e.name.to_string()),
                liveness: args.liveness || e.property == rsmc_spec::liveness::CONVERGENCE,
            })
            .collect();
    }
    let mut jobs = Vec::new();
    for config in &args.configs {
        for profile in &args.profiles {
            jobs.push(Job {
                config: config.clone(),
                profile: profile.clone(),
                bug: None,
                liveness: args.liveness,
            });
        }
    }
    jobs
}

/// One measured check.
#[derive(Serialize)]
struct Row {
    config: String,
    profile: String,
    bug: Option<String>,
    unique_states: u64,
    states: u64,
    seconds: f64,
    unique_per_second: f64,
    peak_memory_bytes: Option<u64>,
    /// States the convergence search kept (when it ran).
    liveness_states: Option<u64>,
    /// With `--compare-reduction`: unique states when states are identified literally (not
    /// up to revision values nor pod renaming), and how many times more that is.
    unique_states_without_reduction: Option<u64>,
    reduction_factor: Option<f64>,
    /// With `--compare-reduction`: unique states up to revision values only (the pod symmetry
    /// off), and how many times more that is: the symmetry's own share.
    unique_states_without_symmetry: Option<u64>,
    symmetry_factor: Option<f64>,
}

/// The reduction a measurement runs with (`rsmc check` flags).
#[derive(Clone, Copy)]
enum Measured {
    Full,
    WithoutSymmetry,
    WithoutReduction,
}

/// Run one `rsmc check --json` and read its report.
fn measure(
    exe: &std::path::Path,
    job: &Job,
    args: &BenchArgs,
    out_dir: &std::path::Path,
    reduction: Measured,
) -> Result<Value, i32> {
    let Job {
        config,
        profile,
        bug,
        liveness,
    } = job;
    let mut cmd = Command::new(exe);
    cmd.args(["check", "--json", "--config", config, "--profile", profile])
        .arg("--out")
        .arg(out_dir);
    if let Some(bug) = bug {
        cmd.args(["--bug", bug]);
    }
    cmd.arg(if *liveness {
        "--liveness"
    } else {
        "--skip-liveness"
    });
    match reduction {
        Measured::Full => {}
        Measured::WithoutSymmetry => {
            cmd.arg("--no-symmetry");
        }
        Measured::WithoutReduction => {
            cmd.arg("--no-reduction");
        }
    }
    if let Some(t) = args.threads {
        cmd.args(["--threads", &t.to_string()]);
    }
    let output = cmd.output().map_err(|e| {
        eprintln!("error: running rsmc check: {e}");
        exit::BAD_INPUT
    })?;
    serde_json::from_slice(&output.stdout).map_err(|_| {
        eprintln!(
            "error: rsmc check --config {config} --profile {profile} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.status.code().unwrap_or(exit::BAD_INPUT)
    })
}

pub fn run(args: &BenchArgs) -> i32 {
    if args.oracle {
        return crate::bench_oracle::run(args);
    }
    if args.monitor {
        return crate::bench_monitor::run(args);
    }
    let exe = match crate::output::own_executable() {
        Ok(e) => e,
        Err(code) => return code,
    };
    let out_dir = std::env::temp_dir().join(format!("rsmc-bench-{}", std::process::id()));
    let mut rows = Vec::new();
    for job in jobs(args) {
        eprintln!("rsmc bench: {} ({}) …", job.config, job.profile);
        let compare = |reduction: Measured, what: &str| -> Result<Option<u64>, i32> {
            if !args.compare_reduction {
                return Ok(None);
            }
            eprintln!("rsmc bench: {} ({}) {what} …", job.config, job.profile);
            let report = measure(&exe, &job, args, &out_dir, reduction)?;
            Ok(report["unique_states"].as_u64())
        };
        let measured = measure(&exe, &job, args, &out_dir, Measured::Full).and_then(|report| {
            let without_symmetry = compare(Measured::WithoutSymmetry, "without the pod symmetry")?;
            let without = compare(Measured::WithoutReduction, "without any reduction")?;
            Ok((report, without_symmetry, without))
        });
        let (report, without_symmetry, without) = match measured {
            Ok(m) => m,
            Err(code) => {
                let _ = std::fs::remove_dir_all(&out_dir);
                return code;
            }
        };
        let unique = report["unique_states"].as_u64().unwrap_or(0);
        rows.push(Row {
            config: job.config,
            profile: job.profile,
            bug: job.bug,
            unique_states: unique,
            states: report["states"].as_u64().unwrap_or(0),
            seconds: report["seconds"].as_f64().unwrap_or(0.0),
            unique_per_second: report["unique_per_second"].as_f64().unwrap_or(0.0),
            peak_memory_bytes: report["peak_memory_bytes"].as_u64(),
            liveness_states: report["liveness_states"].as_u64(),
            unique_states_without_reduction: without,
            reduction_factor: without.map(|w| w as f64 / unique.max(1) as f64),
            unique_states_without_symmetry: without_symmetry,
            symmetry_factor: without_symmetry.map(|w| w as f64 / unique.max(1) as f64),
        });
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    crate::output::print(args.json, &rows, || print_table(&rows, args));
    exit::OK
}

fn print_table(rows: &[Row], args: &BenchArgs) {
    let cores = cores();
    let threads = args.threads.unwrap_or(cores);
    println!(
        "rsmc bench: {threads} checker threads on {cores} cores, {}; {}",
        machine_memory(),
        if args.liveness {
            "safety and convergence searches"
        } else if args.catalogue {
            "safety search, and the convergence search for convergence entries"
        } else {
            "safety search only (--liveness adds the convergence search)"
        }
    );
    let label = |r: &Row| match &r.bug {
        Some(bug) => format!("--bug {bug}"),
        None => r.config.clone(),
    };
    let width = rows
        .iter()
        .map(|r| label(r).len())
        .max()
        .unwrap_or(0)
        .max(13);
    println!(
        "{:<width$} {:<9} {:>11} {:>11} {:>8} {:>9} {:>8}  reduction (pod symmetry alone)",
        "configuration", "profile", "unique", "generated", "seconds", "unique/s", "peak MB",
    );
    for r in rows {
        let peak = r
            .peak_memory_bytes
            .map_or("-".to_string(), |b| (b / 1_048_576).to_string());
        let factor = |f: Option<f64>, w: Option<u64>| match (f, w) {
            (Some(f), Some(w)) => format!("{f:.2}x of {w}"),
            _ => "-".to_string(),
        };
        let reduction = match r.reduction_factor {
            Some(_) => format!(
                "{} ({})",
                factor(r.reduction_factor, r.unique_states_without_reduction),
                factor(r.symmetry_factor, r.unique_states_without_symmetry)
            ),
            None => "-".to_string(),
        };
        println!(
            "{:<width$} {:<9} {:>11} {:>11} {:>8.1} {:>9.0} {:>8}  {}",
            label(r),
            r.profile,
            r.unique_states,
            r.states,
            r.seconds,
            r.unique_per_second,
            peak,
            reduction
        );
    }
    let total: f64 = rows.iter().map(|r| r.seconds).sum();
    println!("total {total:.1} s");
}

/// The machine's memory, from /proc/meminfo (Linux), for the report's header.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The machine a measurement ran on: cores and memory.
pub fn machine() -> String {
    format!("{} cores, {}", cores(), machine_memory())
}

fn machine_memory() -> String {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    });
    match total {
        Some(kb) => format!("{:.1} GiB memory", kb as f64 / 1_048_576.0),
        None => "memory unknown".to_string(),
    }
}
