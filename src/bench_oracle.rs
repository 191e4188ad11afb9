//! `rsmc bench --oracle`: how the oracle's cost grows with what it judges.
//!
//! Two kinds of case: the recordings of real runs in `oracle/tests/recorded/` judged by
//! `rsmc oracle` (the witness search), and `rsmc replay` of one ReplicaSet scaled 3 → N → 1
//! (no recording: the outcome searches). Each case is a child process of this executable, so
//! its peak memory (`ru_maxrss` from `wait4`, the kernel's high-water mark of that child's
//! resident set) is its own. A case that stops at a budget (exit 3) is a row that says so,
//! not a failure of the bench: the table is where a reader sees which sizes are out of reach.

use crate::exit;
use crate::BenchArgs;
use serde::Serialize;
use serde_json::Value;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

const ORACLE_TESTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/oracle/tests");

/// The replay sizes measured: the scale-down's N.
const REPLAY_SIZES: [u32; 5] = [3, 5, 8, 12, 25];

/// One case to measure.
struct Case {
    name: String,
    /// What grows: the recording's events, or the replicas scaled down from.
    size: String,
    /// The `rsmc` arguments (`--json` added).
    args: Vec<String>,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    Recorded,
    Replay,
}

/// One measured case.
#[derive(Serialize)]
struct Row {
    case: String,
    size: String,
    /// Search nodes (the witness search) or states (the replay's searches, all settle
    /// points), when the case finished.
    states: Option<u64>,
    seconds: f64,
    peak_memory_bytes: Option<u64>,
    /// `conforms`, `does not conform`, `replayed`, or how it stopped.
    result: String,
}

/// The recorded cases: every `recorded/<name>.<version>.observed.json` with its
/// `scenarios/<name>.yaml`.
fn recorded() -> Result<Vec<Case>, String> {
    let root = Path::new(ORACLE_TESTS);
    let dir = root.join("recorded");
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".observed.json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let stem = file.file_name().unwrap_or_default().to_string_lossy();
        let name = stem.split('.').next().unwrap_or_default().to_string();
        let scenario = root.join("scenarios").join(format!("{name}.yaml"));
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let doc: Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let events: usize = doc["segments"]
            .as_array()
            .map(|s| {
                s.iter()
                    .map(|g| g["events"].as_array().map_or(0, Vec::len))
                    .sum()
            })
            .unwrap_or(0);
        cases.push(Case {
            name: format!("recorded {name}"),
            size: format!("{events} events"),
            args: vec![
                "oracle".into(),
                "--scenario".into(),
                scenario.to_string_lossy().into(),
                "--observed".into(),
                file.to_string_lossy().into(),
            ],
            kind: Kind::Recorded,
        });
    }
    Ok(cases)
}

/// The replay cases, written into `dir` from `scenarios/scale-down-12.yaml`.
fn replays(dir: &Path) -> Result<Vec<Case>, String> {
    let template = Path::new(ORACLE_TESTS).join("scenarios/scale-down-12.yaml");
    let text =
        std::fs::read_to_string(&template).map_err(|e| format!("{}: {e}", template.display()))?;
    let mut cases = Vec::new();
    for n in REPLAY_SIZES {
        let path = dir.join(format!("scale-down-{n}.yaml"));
        let scenario = text
            .replace("replicas: 12", &format!("replicas: {n}"))
            .replace("name: scale-down-12", &format!("name: scale-down-{n}"));
        std::fs::write(&path, scenario).map_err(|e| format!("{}: {e}", path.display()))?;
        cases.push(Case {
            name: format!("replay 3 -> {n} -> 1"),
            size: format!("{n} replicas"),
            args: vec!["replay".into(), path.to_string_lossy().into()],
            kind: Kind::Replay,
        });
    }
    Ok(cases)
}

/// Run `exe args --json`, wait for it with `wait4`: its stdout, stderr, exit status and
/// peak resident memory.
fn run_child(exe: &Path, args: &[String]) -> std::io::Result<(Vec<u8>, String, ExitStatus, u64)> {
    let mut child = Command::new(exe)
        .args(args)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut out = Vec::new();
    child.stdout.take().expect("piped").read_to_end(&mut out)?;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of that plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `child.id()` is our own child, not yet reaped (`Child::wait` is never called);
    // `status` and `usage` are valid for writes.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let errors = errors.join().unwrap_or_default();
    // Linux reports `ru_maxrss` in kilobytes.
    let peak = usage.ru_maxrss.max(0) as u64 * 1024;
    Ok((out, errors, ExitStatus::from_raw(status), peak))
}

/// Measure one case.
fn measure(exe: &Path, case: &Case, args: &BenchArgs) -> Result<Row, String> {
    let mut argv = case.args.clone();
    if let Some(limit) = &args.memory_limit {
        argv.extend(["--memory-limit".into(), limit.clone()]);
    }
    if let Some(limit) = args.state_limit {
        argv.extend(["--state-limit".into(), limit.to_string()]);
    }
    let started = Instant::now();
    let (out, errors, status, peak) =
        run_child(exe, &argv).map_err(|e| format!("running rsmc {}: {e}", argv[0]))?;
    let seconds = started.elapsed().as_secs_f64();
    let report: Option<Value> = serde_json::from_slice(&out).ok();
    let (states, result) = match (status.code(), &report, case.kind) {
        (Some(0 | 1), Some(v), Kind::Recorded) => (
            v["witness_nodes"].as_u64(),
            if v["conforms"].as_bool() == Some(true) {
                "conforms".to_string()
            } else {
                "DOES NOT CONFORM".to_string()
            },
        ),
        (Some(0), Some(v), Kind::Replay) => (
            v["points"]
                .as_array()
                .map(|p| p.iter().filter_map(|p| p["explored"].as_u64()).sum()),
            "replayed".to_string(),
        ),
        (Some(exit::TOO_LARGE), _, _) => {
            let first = errors.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let why = first.rsplit(": ").next().unwrap_or(first);
            let why = why.split(';').next().unwrap_or(why);
            (None, format!("stopped: {why}"))
        }
        _ => {
            return Err(format!(
                "rsmc {} failed ({status}):\n{errors}",
                argv.join(" ")
            ))
        }
    };
    Ok(Row {
        case: case.name.clone(),
        size: case.size.clone(),
        states,
        seconds,
        peak_memory_bytes: Some(peak),
        result,
    })
}

pub fn run(args: &BenchArgs) -> i32 {
    let exe = match crate::output::own_executable() {
        Ok(e) => e,
        Err(code) => return code,
    };
    let dir = std::env::temp_dir().join(format!("rsmc-bench-oracle-{}", std::process::id()));
    let code = std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))
        .and_then(|()| measure_all(&exe, &dir, args));
    let _ = std::fs::remove_dir_all(&dir);
    match code {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

fn measure_all(exe: &Path, dir: &Path, args: &BenchArgs) -> Result<i32, String> {
    let mut cases = recorded()?;
    cases.extend(replays(dir)?);
    if let Some(wanted) = &args.cases {
        cases.retain(|c| wanted.iter().any(|w| c.name.contains(w.as_str())));
        if cases.is_empty() {
            return Err(format!(
                "--cases {}: no case matches (cases are named `recorded <scenario>` and `replay 3 -> N -> 1`)",
                wanted.join(",")
            ));
        }
    }
    let mut rows = Vec::new();
    let mut failed = false;
    for (i, case) in cases.iter().enumerate() {
        eprintln!(
            "rsmc bench --oracle [{}/{}] {} …",
            i + 1,
            cases.len(),
            case.name
        );
        match measure(exe, case, args) {
            Ok(row) => rows.push(row),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    crate::output::print(args.json, &rows, || print_table(&rows));
    Ok(if failed { exit::VIOLATION } else { exit::OK })
}

fn print_table(rows: &[Row]) {
    println!("rsmc bench --oracle: {}", crate::bench::machine());
    println!(
        "{:<28} {:>12} {:>10} {:>8} {:>8}  result",
        "case", "size", "states", "seconds", "peak MB"
    );
    for r in rows {
        let states = r.states.map_or("-".to_string(), |s| s.to_string());
        let peak = r
            .peak_memory_bytes
            .map_or("-".to_string(), |b| (b / 1_000_000).to_string());
        println!(
            "{:<28} {:>12} {:>10} {:>8.2} {:>8}  {}",
            r.case, r.size, states, r.seconds, peak, r.result
        );
    }
}
