//! `rsmc monitor --judge` on the local control plane of the newest release: it names each
//! injected fault of the reference controller within seconds of the faulty write, and the
//! oracle finds the faulty namespace's run nonconforming; it stays silent while the built-in
//! controller runs scenarios of every kind of user action, and judges each of them
//! conforming; and when the API server restarts it reports the gap and raises nothing from
//! it.

mod common;

use common::{conform, conform_reference, rsmc, suite_dir, Cluster, RSMC};
use rsmc_spec::model::properties::{
    ADOPTION_RULES, DELETE_ONLY_CONTROLLED, NO_OVER_CREATION, SCALE_DOWN_RANKED,
};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RELEASE: &str = "1.37";

/// A running `rsmc monitor --all-namespaces --judge --output json`, its stdout lines
/// collected, and its stderr lines (status lines as JSON, and its own messages) passed on
/// and collected.
struct Monitor {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Monitor {
    fn start(cluster: &Cluster, more: &[&str]) -> Monitor {
        Monitor::start_every(cluster, more, 5)
    }

    /// With a status line every `status` seconds.
    fn start_every(cluster: &Cluster, more: &[&str], status: u32) -> Monitor {
        let mut child = Command::new(RSMC)
            .args(["monitor", "--all-namespaces", "--judge", "--output", "json"])
            .args(more)
            .args([
                "--quiet-window",
                "5",
                "--status-interval",
                &status.to_string(),
            ])
            .arg("--kubeconfig")
            .arg(cluster.kubeconfig())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rsmc monitor starts");
        let lines: Arc<Mutex<Vec<Value>>> = Arc::default();
        let out = child.stdout.take().unwrap();
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                sink.lock().unwrap().push(v);
            }
        });
        let stderr: Arc<Mutex<Vec<String>>> = Arc::default();
        let err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                eprintln!("{line}");
                sink.lock().unwrap().push(line);
            }
        });
        // Its first list takes a moment.
        std::thread::sleep(Duration::from_secs(3));
        Monitor {
            child,
            lines,
            stderr,
        }
    }

    /// How many judgements its last status line says are under way.
    fn judging(&self) -> u64 {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l).ok()?["status"]["judging"].as_u64())
            .unwrap_or(0)
    }

    fn signal(&self, signal: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
    }

    /// Whether it exits within `timeout`.
    fn exits_within(&mut self, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    fn reports(&self) -> Vec<Value> {
        self.lines.lock().unwrap().clone()
    }

    fn alarms(&self) -> Vec<Value> {
        self.of_kind("alarm")
    }

    fn of_kind(&self, kind: &str) -> Vec<Value> {
        self.reports()
            .into_iter()
            .filter_map(|r| r.get(kind).cloned())
            .collect()
    }

    /// The last judgement of each namespace of `scenario` (`rsmc-{scenario}-xxxxx`, the
    /// name cut short when long): (namespace, conforms).
    fn last_judgements(&self, scenario: &str) -> Vec<(String, Value)> {
        let whole = format!("rsmc-{scenario}");
        self.of_kind("judgement")
            .into_iter()
            .filter(|j| j["last"] == true)
            .filter_map(|j| {
                let ns = j["namespace"].as_str()?.to_string();
                let (base, _) = ns.rsplit_once('-')?;
                (base.len() > "rsmc-".len() && whole.starts_with(base))
                    .then(|| (ns.clone(), j["conforms"].clone()))
            })
            .collect()
    }

    /// [`Monitor::last_judgements`] of `scenario` once there is one, or none after `timeout`.
    /// A namespace is judged when it goes away, and a nonconforming recording is searched
    /// further behind before it is called so: on a loaded machine that took over 20 s.
    fn last_judgements_within(&self, scenario: &str, timeout: Duration) -> Vec<(String, Value)> {
        let start = Instant::now();
        loop {
            let judged = self.last_judgements(scenario);
            if !judged.is_empty() || start.elapsed() >= timeout {
                return judged;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// Ctrl-C: it stops, with exit 1 after alarms and 0 without.
    fn stop(mut self) -> Option<i32> {
        self.signal(nix::sys::signal::Signal::SIGINT);
        self.child.wait().unwrap().code()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Seconds from the write the API server stamped to the alarm (whole-second stamps: up to a
/// second more than the truth).
fn latency(alarm: &Value) -> Option<f64> {
    let raised: k8s_openapi::jiff::Timestamp = alarm["raised_at"].as_str()?.parse().ok()?;
    let written: k8s_openapi::jiff::Timestamp = alarm["written_at"].as_str()?.parse().ok()?;
    Some(raised.duration_since(written).as_secs_f64())
}

/// An injected fault of the reference controller.
struct Fault {
    name: &'static str,
    gates: &'static str,
    /// The scenario that provokes it.
    scenario: &'static str,
    /// The property the monitor must name (the catalogue entry's, as
    /// `tests/reference_controller.rs` finds it).
    property: &'static str,
}

const FAULTS: [Fault; 5] = [
    Fault {
        name: "no-expectations",
        gates: "StaleControllerConsistencyReplicaSet=false",
        scenario: "forced/unseen-creations.yaml",
        property: NO_OVER_CREATION,
    },
    Fault {
        name: "no-adoption-recheck",
        gates: "",
        scenario: "forced/adoption-under-a-stale-cache.yaml",
        property: ADOPTION_RULES,
    },
    Fault {
        name: "delete-without-precondition",
        gates: "",
        scenario: "forced/pod-replaced-under-a-stale-cache.yaml",
        property: DELETE_ONLY_CONTROLLED,
    },
    Fault {
        name: "ignore-ranking",
        gates: "",
        scenario: "scale.yaml",
        property: SCALE_DOWN_RANKED,
    },
    Fault {
        name: "never-release",
        gates: "",
        scenario: "isolate-by-relabelling.yaml",
        property: NO_OVER_CREATION,
    },
];

#[test]
fn every_injected_fault_is_named_within_seconds() {
    let mut cluster = Cluster::up(
        "monitor-faults",
        &["--kubernetes", RELEASE, "--without-replicaset"],
    );
    // The oracle judges as `tests/reference_controller.rs` does: with upstream's race of
    // PR #138818 fixed, so that deleting a pod without a precondition is a fault.
    let monitor = Monitor::start(&cluster, &["--fix", "delete-precondition"]);
    let report = cluster.state.with_extension("report");
    let mut rows = Vec::new();
    let mut missed = Vec::new();
    for Fault {
        name: fault,
        gates,
        scenario,
        property,
    } in FAULTS
    {
        let before = monitor.alarms().len();
        let file = suite_dir().join(scenario);
        let (_, _, output) = conform_reference(
            &cluster,
            &format!("--fault {fault}"),
            gates,
            &[file.to_str().unwrap()],
            &report,
        );
        let stem = Path::new(scenario).file_stem().unwrap().to_str().unwrap();
        let judged = monitor.last_judgements_within(stem, Duration::from_secs(120));
        if judged.len() != 1 || judged[0].1 != false {
            missed.push(format!(
                "{fault}: the oracle's last judgement of {stem} is not one nonconformance: {judged:?}"
            ));
        }
        let alarms = monitor.alarms();
        let named: Vec<&Value> = alarms[before..]
            .iter()
            .filter(|a| a["property"] == property)
            .collect();
        match named.first() {
            Some(a) => {
                let late = latency(a);
                rows.push(format!(
                    "{fault}: {} {} in {:.1} s",
                    a["object"],
                    property,
                    late.unwrap_or(f64::NAN)
                ));
                if !late.is_some_and(|s| s <= 5.0) {
                    missed.push(format!("{fault}: named {late:?} s after the write: {a}"));
                }
            }
            None => missed.push(format!(
                "{fault}: no alarm names {property:?}; alarms: {:?}\n{output}",
                &alarms[before..]
            )),
        }
    }
    println!("{}", rows.join("\n"));
    assert_eq!(monitor.stop(), Some(1), "alarms were raised: exit 1");
    assert!(missed.is_empty(), "{}", missed.join("\n"));
    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
}

/// Scenarios of every kind of user action: deletes of each propagation, adoption of bare
/// pods before and after, relabelling, scaling, overlapping ReplicaSets, failed pods.
const QUIET: [&str; 10] = [
    "delete-background.yaml",
    "delete-foreground.yaml",
    "delete-orphan.yaml",
    "bare-pods-before.yaml",
    "bare-pods-after.yaml",
    "isolate-by-relabelling.yaml",
    "scale.yaml",
    "upstream/test-overlapping-rss.yaml",
    "upstream/test-pod-orphaning-and-adoption-when-labels-change.yaml",
    "upstream/test-deleting-and-failed-pods.yaml",
];

#[test]
fn silent_on_the_builtin_controller_and_a_restart_is_a_gap_not_an_alarm() {
    let mut cluster = Cluster::up("monitor-quiet", &["--kubernetes", RELEASE]);
    let monitor = Monitor::start(&cluster, &[]);
    let report = cluster.state.with_extension("report");
    let files: Vec<String> = QUIET
        .iter()
        .map(|s| suite_dir().join(s).to_str().unwrap().to_string())
        .collect();
    let args: Vec<&str> = ["--jobs", "4"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let (runs, code, output) = conform(&cluster, &args, &report);
    assert_eq!(code, Some(0), "{output}");
    assert_eq!(runs.len(), QUIET.len());
    // The last namespace's teardown, and a quiet window after it.
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(monitor.alarms(), Vec::<Value>::new(), "false alarms");
    for scenario in QUIET {
        let stem = Path::new(scenario).file_stem().unwrap().to_str().unwrap();
        let judged = monitor.last_judgements(stem);
        assert!(
            judged.len() == 1 && judged[0].1 == true,
            "{stem}: the oracle's last judgement is not one that conforms: {judged:?}\n{:?}",
            monitor.of_kind("judgement")
        );
    }

    // A ReplicaSet to change while the API server is away.
    let manifest = web_replicaset(3);
    cluster.kubectl(&["apply", "-n", "default", "-f", path(&manifest)]);
    std::thread::sleep(Duration::from_secs(3));
    let local = rsmc_conformance::control_plane::LocalCluster::attach(&cluster.state).unwrap();
    let restarted = Instant::now();
    local
        .restart("kube-apiserver")
        .expect("kube-apiserver restarts");
    // Changes right after the restart, while the monitor's watches are still backing off.
    cluster.kubectl(&["scale", "rs/web", "--replicas=1"]);
    cluster.kubectl(&["label", "pods", "-l", "app=web", "touched=yes"]);
    let gap = loop {
        let gaps: Vec<Value> = monitor
            .reports()
            .into_iter()
            .filter_map(|r| r.get("gap").cloned())
            .collect();
        if gaps.iter().any(|g| g["watch"] == "pods")
            && gaps.iter().any(|g| g["watch"] == "replicasets")
        {
            break gaps;
        }
        assert!(
            restarted.elapsed() < Duration::from_secs(90),
            "no gap reported for both watches: {:?}",
            monitor.reports()
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    println!("gaps: {gap:?}");
    // The controller's scale-down after the restart, and a quiet window.
    std::thread::sleep(Duration::from_secs(10));
    assert_eq!(
        cluster
            .kubectl(&["get", "pods", "-l", "app=web", "-o", "name"])
            .lines()
            .count(),
        1
    );
    assert_eq!(
        monitor.alarms(),
        Vec::<Value>::new(),
        "alarms after the restart"
    );
    assert_eq!(monitor.stop(), Some(0), "no alarm: exit 0");
    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
}

/// A judgement under way when the monitor is stopped is abandoned, at once on a second
/// signal, else after `JUDGE_GRACE` (5 s): a monitor runs as a pod, which Kubernetes kills
/// 30 s after SIGTERM. Before, it waited for the judgement, and signals after the first went
/// unheard: sent SIGINT while it judged, it never exited. The test fails when no judgement
/// is under way.
///
/// The judgement is slow by construction: a ReplicaSet of 20 is scaled to 3 while the
/// controller's pod watch is held at the cluster's event gate, with no fault mark to tell the
/// monitor. The controller deletes 17 pods and never sees them go, so it never writes the
/// status of 3 pods that every run of the model writes before it settles: no run produces
/// the recording. Its event recorder spent 20 of its 25 events on the creations, so 12 of
/// the deletions carry no claim and are left to the model both ways (issue 32); to reject
/// the recording the oracle goes through their mixes, for minutes.
#[test]
fn a_judgement_under_way_is_abandoned_on_a_second_signal_or_after_a_grace_period() {
    use nix::sys::signal::Signal;
    use rsmc_conformance::event_gate::GateClient;
    use rsmc_spec::api::Kind;
    let mut cluster = Cluster::up("monitor-stop", &["--kubernetes", RELEASE]);
    let local = rsmc_conformance::control_plane::LocalCluster::attach(&cluster.state).unwrap();
    let gate = GateClient::new(local.event_gate().expect("the cluster's event gate"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let manifest = web_replicaset(20);
    let pods = |ns: &str| {
        cluster
            .kubectl(&["get", "pods", "-n", ns, "-o", "name"])
            .lines()
            .count()
    };
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let start = Instant::now();
        while !done() {
            assert!(start.elapsed() < Duration::from_secs(60), "{what}");
            std::thread::sleep(Duration::from_millis(500));
        }
    };
    for (ns, signals) in [
        ("stop-twice", &[Signal::SIGINT, Signal::SIGTERM][..]),
        ("stop-once", &[Signal::SIGTERM][..]),
    ] {
        let mut monitor = Monitor::start_every(&cluster, &[], 1);
        cluster.kubectl(&["create", "namespace", ns]);
        cluster.kubectl(&["apply", "-n", ns, "-f", path(&manifest)]);
        wait_for("20 pods", &|| pods(ns) == 20);
        runtime.block_on(gate.hold(Kind::Pod)).unwrap();
        cluster.kubectl(&["scale", "-n", ns, "rs/web", "--replicas=3"]);
        wait_for("3 pods", &|| pods(ns) == 3);
        wait_for("a judgement of the scale-down under way", &|| {
            monitor.judging() > 0
        });
        // Past the judgement of the creations (fast): the scale-down's runs for minutes.
        std::thread::sleep(Duration::from_secs(8));
        assert!(monitor.judging() > 0, "no judgement under way to abandon");
        monitor.signal(signals[0]);
        if let [_, second] = signals {
            // It gives the judgement its grace period...
            std::thread::sleep(Duration::from_secs(1));
            assert!(monitor.child.try_wait().unwrap().is_none());
            // ...and abandons it at once when told again.
            monitor.signal(*second);
            assert!(
                monitor.exits_within(Duration::from_secs(3)),
                "it ignored the second signal"
            );
        } else {
            assert!(
                monitor.exits_within(Duration::from_secs(5 + 3)),
                "it did not abandon the judgement after its grace period"
            );
        }
        let said = monitor.stderr.lock().unwrap().join("\n");
        assert!(said.contains("1 judgements abandoned"), "{said}");
        runtime.block_on(gate.release_all()).unwrap();
    }
    cluster.down_and_check();
}

/// A ReplicaSet `web` of `replicas` pause pods, in a file removed when it is dropped (also
/// when a test fails).
fn web_replicaset(replicas: u32) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    let manifest = format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: c, image: registry.k8s.io/pause:3.9}}]}}\n"
    );
    std::io::Write::write_all(&mut file, manifest.as_bytes()).unwrap();
    file
}

fn path(file: &tempfile::NamedTempFile) -> &str {
    file.path().to_str().unwrap()
}

#[test]
fn bad_input_is_exit_2() {
    let nowhere = Path::new("/nonexistent");
    let o = rsmc(
        &["monitor", "--kubeconfig", "/nonexistent/kubeconfig"],
        nowhere,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/kubeconfig"));
    let o = rsmc(
        &["monitor", "--namespace", "a", "--all-namespaces"],
        nowhere,
    );
    assert_eq!(o.status.code(), Some(2));
}
