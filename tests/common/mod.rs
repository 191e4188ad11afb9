//! What the end-to-end tests on a local control plane share: the `rsmc` binary, a cluster per
//! test that is taken down (and checked gone) at the end, and reading a conformance run.

#![allow(dead_code)] // each test file uses its own part

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

pub const RSMC: &str = env!("CARGO_BIN_EXE_rsmc");

pub fn rsmc(args: &[&str], state: &Path) -> Output {
    Command::new(RSMC)
        .args(args)
        .env("RSMC_CLUSTER_DIR", state)
        .output()
        .expect("rsmc runs")
}

pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A local cluster for one test, taken down (and checked gone) when dropped.
pub struct Cluster {
    pub state: PathBuf,
    pids: Vec<u32>,
}

impl Cluster {
    /// `rsmc cluster up` with `args` in a fresh state directory. Clusters of this and other
    /// tests may come up at the same time: `up` chooses their ports under a machine-wide
    /// lock (conformance/src/control_plane/ports.rs).
    pub fn up(name: &str, args: &[&str]) -> Cluster {
        let state = std::env::temp_dir().join(format!("rsmc-e2e-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        take_down_on_signal();
        up().push(state.clone());
        let o = rsmc(&[&["cluster", "up"], args].concat(), &state);
        assert!(o.status.success(), "cluster up failed:\n{}", text(&o));
        let pids = pids(&state);
        // A local plane runs etcd, kube-apiserver, the gates and the controllers here; a kind
        // cluster runs the first two on its node, the gates and the garbage collector here
        // (and the replicaset controller, unless left out).
        let fewest = if args.contains(&"--kind") { 3 } else { 4 };
        if pids.len() < fewest {
            // No `Cluster` owns it yet to take it down on drop.
            let _ = rsmc(&["cluster", "down"], &state);
            up().retain(|s| s != &state);
            panic!("expected at least {fewest} components: {pids:?}");
        }
        Cluster { state, pids }
    }

    /// The cluster another test process brought up in `state`, taken on as this one's: taken
    /// down on a signal (and on drop) as if this process had brought it up.
    pub fn adopt(state: PathBuf) -> Cluster {
        take_down_on_signal();
        up().push(state.clone());
        let pids = pids(&state);
        assert!(!pids.is_empty(), "no cluster in {}", state.display());
        Cluster { state, pids }
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.state.join("kubeconfig")
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        // The discovery cache in the state directory, as `rsmc conform` keeps it
        // (`LocalCluster::kubectl_cache_dir`), not one more directory in ~/.kube/cache.
        let cache =
            rsmc_conformance::control_plane::state::Layout::new(self.state.clone()).kubectl_cache();
        let o = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(cache)
            .args(args)
            .output()
            .expect("kubectl runs");
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `rsmc cluster down`, then: no process of the cluster and no state directory.
    /// Taken down with a $HOME of its own, which it must leave empty (before, `kind delete
    /// cluster` made ~/.kube to lock the default kubeconfig it edits).
    pub fn down_and_check(&mut self) {
        let mut down = Command::new(RSMC);
        down.args(["cluster", "down"])
            .env("RSMC_CLUSTER_DIR", &self.state);
        let o = in_a_home_of_its_own(down, &self.state.with_extension("down-home"));
        assert!(o.status.success(), "cluster down failed:\n{}", text(&o));
        self.check_taken_down("after `rsmc cluster down`");
    }

    /// No process of the cluster and no state directory: it was taken down (by this process
    /// or another that took it on, [`Cluster::adopt`]). `context` is shown if not.
    /// Until both hold, the cluster stays this process's to take down (on drop or a signal).
    pub fn check_taken_down(&mut self, context: &str) {
        for &pid in &self.pids {
            assert!(gone(pid), "process {pid} outlived its cluster: {context}");
        }
        assert!(
            !self.state.exists(),
            "{} is left behind: {context}",
            self.state.display()
        );
        self.pids.clear();
        up().retain(|s| s != &self.state);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.pids.is_empty() {
            let _ = rsmc(&["cluster", "down"], &self.state);
        }
        up().retain(|s| s != &self.state);
    }
}

/// The test's own files beside a cluster's state (`STATE.report`, `STATE.scenarios`, …).
fn remove_siblings(state: &Path) {
    let (Some(dir), Some(name)) = (state.parent(), state.file_name()) else {
        return;
    };
    let prefix = format!("{}.", name.to_string_lossy());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let path = entry.path();
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
}

/// The state directories of the clusters this test process has up.
fn up() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    static UP: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    UP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Once per test process: on SIGINT or SIGTERM (an interrupted or killed test run) take
/// down every cluster still up, then exit as the signal would have. A signal skips every
/// `Drop`, which would otherwise leave the control planes running.
fn take_down_on_signal() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use tokio::signal::unix::{signal, SignalKind};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the signal handler");
        // Registered now, before any cluster comes up; heard on a thread of its own.
        let (mut int, mut term) = {
            let _in = runtime.enter();
            (
                signal(SignalKind::interrupt()).expect("a SIGINT handler"),
                signal(SignalKind::terminate()).expect("a SIGTERM handler"),
            )
        };
        std::thread::spawn(move || {
            let code = runtime.block_on(async {
                tokio::select! {
                    _ = int.recv() => 130,
                    _ = term.recv() => 143,
                }
            });
            let states = std::mem::take(&mut *up());
            for state in states {
                eprintln!("signalled: taking down the cluster in {}", state.display());
                let _ = rsmc(&["cluster", "down"], &state);
                remove_siblings(&state);
            }
            std::process::exit(code);
        });
    });
}

/// Whether process `pid` has ended: no such process, or a zombie not yet reaped (components
/// of a cluster are reparented when `rsmc cluster up` exits, and may stay zombies).
pub fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| s.contains(") Z "))
        .unwrap_or(true)
}

/// The pids in the state directory's pid files.
pub fn pids(state: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir(state.join("pids")) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

pub fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/scenarios")
}

/// The release whose snapshots carry no release in their name; a newer release has a
/// snapshot of its own only where its kubectl shows a scenario differently from the release
/// before it ([`RELEASES`]).
pub const BASE_RELEASE: &str = "1.20";

/// The releases the suite runs on, oldest first.
pub const RELEASES: &[&str] = &[BASE_RELEASE, "1.35", "1.37"];

/// What kubectl showed of the built-in controller's run of `scenario` on the base release:
/// its committed insta snapshot, if there is one.
pub fn base_views(scenario: &str) -> Option<String> {
    snapshot(&format!("conform-{scenario}"))
}

/// What kubectl showed of the built-in controller's run of `scenario` on `release`: the
/// release's own snapshot where there is one, else the previous release's views.
pub fn builtin_views(release: &str, scenario: &str) -> Option<String> {
    match previous_release(release) {
        None => base_views(scenario),
        Some(before) => snapshot(&format!("conform-v{release}-{scenario}"))
            .or_else(|| builtin_views(before, scenario)),
    }
}

/// The release before `release` in [`RELEASES`]; `None` for the base release.
pub fn previous_release(release: &str) -> Option<&'static str> {
    let i = RELEASES
        .iter()
        .position(|r| *r == release)
        .unwrap_or_else(|| panic!("{release} is not one of {RELEASES:?}"));
    i.checked_sub(1).map(|i| RELEASES[i])
}

/// The body of the committed snapshot `name` of tests/conformance.rs.
fn snapshot(name: &str) -> Option<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/snapshots/conformance__{name}.snap"));
    let text = std::fs::read_to_string(file).ok()?;
    // An insta snapshot: a front matter between `---` lines, then the snapshot.
    let body = text.splitn(3, "---\n").nth(2)?;
    Some(body.to_string())
}

/// The cluster's part of a views file (what kubectl showed), without the model's.
pub fn cluster_views(run: &Value) -> String {
    let mut out = String::new();
    for (i, v) in run["views"].as_array().unwrap().iter().enumerate() {
        out.push_str(&format!(
            "### settle point {}\n{}",
            i + 1,
            v["kubectl"].as_str().unwrap()
        ));
        if let Some(d) = v["describe"].as_str() {
            out.push_str(&format!("\n$ kubectl describe rs\n{d}"));
        }
        out.push('\n');
    }
    out
}

/// Scenarios whose settled state differs from run to run by design: a ranking tie among
/// named pods, and the counterexamples, whose steps race the controller and the garbage
/// collector with no settle between them (the model allows every outcome of the race; a
/// re-created frontend, for one, exists or not depending on whether the apply found the old
/// one still being deleted).
pub fn open_choice(run: &Value) -> bool {
    let path = Path::new(run["path"].as_str().unwrap());
    run["scenario"] == "test-extra-pods-adoption-and-deletion"
        || path.parent().and_then(|d| d.file_name()) == Some("counterexamples".as_ref())
}

/// Runs `command` with `home` (made afresh, removed after) as its $HOME and checks it left
/// nothing there: what rsmc keeps between runs goes to its state directory or its cache, not
/// to a user's home. rsmc's cache (the binaries, kind's engine) stays where it is, as a
/// user's does.
fn in_a_home_of_its_own(mut command: Command, home: &Path) -> Output {
    let _ = std::fs::remove_dir_all(home);
    std::fs::create_dir_all(home).unwrap();
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache"));
    let o = command
        .env("HOME", home)
        .env("XDG_CACHE_HOME", &cache)
        .output()
        .expect("rsmc runs");
    let left: Vec<PathBuf> = std::fs::read_dir(home)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let _ = std::fs::remove_dir_all(home);
    assert!(
        left.is_empty(),
        "the run left {left:?} in its $HOME:\n{}",
        text(&o)
    );
    o
}

/// `rsmc conform --local --json --report REPORT ARGS` on `cluster`: the runs, the exit code
/// and the whole output.
pub fn conform(
    cluster: &Cluster,
    args: &[&str],
    report: &Path,
) -> (Vec<Value>, Option<i32>, String) {
    let _ = std::fs::remove_dir_all(report);
    // A home of its own, which the run must leave as it found it: kubectl's discovery cache
    // goes to the cluster's state directory (`LocalCluster::kubectl_cache_dir`), not to one
    // more directory of ~/.kube/cache per cluster.
    let mut command = Command::new(RSMC);
    command
        .args(
            [
                &[
                    "conform",
                    "--local",
                    "--json",
                    "--report",
                    report.to_str().unwrap(),
                    "--junit",
                    report.join("junit.xml").to_str().unwrap(),
                ],
                args,
            ]
            .concat(),
        )
        .env("RSMC_CLUSTER_DIR", &cluster.state);
    let o = in_a_home_of_its_own(command, &report.with_extension("home"));
    let runs: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("conform --json printed no JSON ({e}):\n{}", text(&o)));
    let runs = runs.as_array().unwrap().clone();
    junit_agrees(&report.join("junit.xml"), &runs);
    (runs, o.status.code(), text(&o))
}

/// The JUnit report of a conform run (`--junit`) says what its JSON says: well-formed, a
/// case per scenario run, passed exactly where the run conforms, and a failure or error with
/// a message otherwise.
fn junit_agrees(file: &Path, runs: &[Value]) {
    use quick_junit::TestCaseStatus;
    let xml = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("conform --junit wrote no {}: {e}", file.display()));
    let report = quick_junit::Report::deserialize_from_str(&xml)
        .unwrap_or_else(|e| panic!("{} is not JUnit XML: {e}", file.display()));
    let cases = &report.test_suites[0].test_cases;
    for run in runs {
        let name = run["scenario"].as_str().unwrap();
        let case = cases
            .iter()
            .find(|c| c.name.as_str() == name)
            .unwrap_or_else(|| panic!("{}: no case for {name}", file.display()));
        match &case.status {
            TestCaseStatus::Success { .. } => {
                assert!(conforms(run), "{name}: passed in JUnit, not in the JSON")
            }
            TestCaseStatus::NonSuccess { message, .. } => {
                assert!(
                    !conforms(run),
                    "{name}: failed in JUnit, conforms in the JSON"
                );
                assert!(
                    message.as_ref().is_some_and(|m| !m.as_str().is_empty()),
                    "{name}: a failure without a message"
                );
            }
            TestCaseStatus::Skipped { .. } => panic!("{name} ran, yet is skipped in JUnit"),
        }
    }
}

/// `rsmc conform` against the reference controller (`rsmc controller CONTROLLER_ARGS`),
/// both with `gates` switched, judged with its proposed fix; `rest` are conform's further
/// arguments (`--jobs`, the scenarios).
pub fn conform_reference(
    cluster: &Cluster,
    controller_args: &str,
    gates: &str,
    rest: &[&str],
    report: &Path,
) -> (Vec<Value>, Option<i32>, String) {
    let command = format!("{RSMC} controller {controller_args} --feature-gates '{gates}'");
    let args = [
        "--feature-gates",
        gates,
        "--controller",
        "external",
        "--controller-cmd",
        &command,
        "--fix",
        "delete-precondition",
    ];
    conform(cluster, &[&args[..], rest].concat(), report)
}

/// Whether a run conforms (and ran to its end).
pub fn conforms(run: &Value) -> bool {
    run["verdict"]["conforms"] == Value::Bool(true) && run["error"].is_null()
}

/// The verdicts of the runs that do not conform, as the report wrote them.
pub fn nonconforming(runs: &[Value], report: &Path) -> Vec<String> {
    runs.iter()
        .filter(|r| !conforms(r))
        .map(|r| {
            let name = r["scenario"].as_str().unwrap();
            std::fs::read_to_string(report.join(format!("{name}.verdict.txt")))
                .unwrap_or_else(|_| r.to_string())
        })
        .collect()
}

/// How many scenario files `rsmc conform DIR` finds: `*.yaml` under `dir`, outside
/// `manifests` directories.
pub fn scenario_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "manifests") {
                    scenario_files(&p)
                } else {
                    0
                }
            } else {
                usize::from(p.extension().is_some_and(|e| e == "yaml"))
            }
        })
        .sum()
}
