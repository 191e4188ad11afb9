//! The local control plane with the real v1.20.2 binaries (found, or provisioned on first
//! use, exactly as `rsmc cluster up` does): it starts, serves kubectl and kube-rs, runs
//! ReplicaSets, restarts and duplicates its replicaset controller, reports a dead component
//! with its log, reaps what a crashed owner left behind, and leaves nothing behind on `down`.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::Api;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use rsmc_conformance::control_plane::{self, binaries, ClusterError, LocalCluster, UpOptions};
use rsmc_conformance::workqueues::{Probe, Reading};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Takes the cluster down however the test ends.
struct DownOnDrop(PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        if let Err(e) = control_plane::down(&self.0) {
            eprintln!("cleanup: {e}");
        }
    }
}

fn up(dir: &Path) -> LocalCluster {
    up_with(dir, None)
}

/// [`up`] with kube-apiserver appending its audit log to `audit_log`.
fn up_with(dir: &Path, audit_log: Option<PathBuf>) -> LocalCluster {
    let start = Instant::now();
    let progress = |msg: &str| {
        eprintln!(
            "[{:5.1}s] {}: {msg}",
            start.elapsed().as_secs_f64(),
            dir.display()
        )
    };
    let opts = UpOptions {
        state_dir: dir.to_path_buf(),
        without_replicaset: false,
        event_gate: None,
        kubernetes: binaries::DEFAULT_VERSION.into(),
        feature_gates: Default::default(),
        audit_log,
        kind: false,
    };
    let cluster = control_plane::up(&opts, &progress).unwrap_or_else(|e| panic!("up: {e}"));
    eprintln!("up took {:.1}s", start.elapsed().as_secs_f64());
    cluster
}

/// The audit log (`conformance/audit-policy.yaml`) of the run so far: the ReplicaSet's
/// create with the object sent and answered, the refused create with its 422, the pods the
/// replicaset controller created (told apart by its user agent, as every component here is
/// the one admin user), and no reads. The API server writes its log asynchronously, so the
/// records are waited for.
fn audit_records_every_write_with_its_writer(log: &Path) {
    let start = Instant::now();
    let records = loop {
        let records: Vec<serde_json::Value> = std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let of = |resource: &str, code: u64| {
            records.iter().any(|r| {
                r["objectRef"]["resource"] == resource && r["responseStatus"]["code"] == code
            })
        };
        if (of("replicasets", 201) && of("replicasets", 422) && of("pods", 201))
            || start.elapsed() > Duration::from_secs(30)
        {
            break records;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let find = |pick: &dyn Fn(&serde_json::Value) -> bool| {
        records
            .iter()
            .find(|r| pick(r))
            .unwrap_or_else(|| panic!("no such record in {}:\n{records:#?}", log.display()))
    };
    let created = find(&|r| r["verb"] == "create" && r["objectRef"]["name"] == "web");
    assert_eq!(created["level"], "RequestResponse");
    assert_eq!(created["stage"], "ResponseComplete");
    assert_eq!(created["requestObject"]["spec"]["replicas"], 2);
    assert!(created["responseObject"]["metadata"]["uid"].is_string());
    let refused = find(&|r| {
        r["objectRef"]["resource"] == "replicasets" && r["responseStatus"]["code"] == 422
    });
    assert_eq!(refused["responseStatus"]["reason"], "Invalid");
    let pod = find(&|r| r["verb"] == "create" && r["objectRef"]["resource"] == "pods");
    assert!(
        pod["userAgent"]
            .as_str()
            .is_some_and(|a| a.ends_with("/replicaset-controller")),
        "{pod:#}"
    );
    assert_eq!(
        pod["responseObject"]["metadata"]["ownerReferences"][0]["name"],
        "web"
    );
    assert!(
        !records
            .iter()
            .any(|r| ["get", "list", "watch"].contains(&r["verb"].as_str().unwrap_or(""))),
        "reads are not logged"
    );
}

/// Every component's pid.
fn pids(dir: &Path) -> Vec<(String, u32)> {
    control_plane::status(dir)
        .expect("status")
        .components
        .into_iter()
        .filter_map(|c| c.pid.map(|p| (c.name, p)))
        .collect()
}

/// Whether `pid` still runs a process of the cluster in `dir`.
fn runs_in(pid: u32, dir: &Path) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    !is_zombie(pid) && String::from_utf8_lossy(&cmdline).contains(&dir.display().to_string())
}

/// Whether `pid` is a zombie (dead, not yet reaped).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Whether `pid` is gone within a few seconds. A zombie counts as gone: it is dead, and
/// reaping it is its parent's job (the components are detached, so their parent is the
/// machine's init, which may reap late on a loaded machine).
fn gone_or_zombie(pid: u32) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if !Path::new(&format!("/proc/{pid}")).exists() || is_zombie(pid) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The pods owned by the ReplicaSet `name`, polled until there are `n` (or 30 s pass).
async fn wait_for_pods(pods: &Api<Pod>, name: &str, n: usize) -> usize {
    let start = Instant::now();
    loop {
        let owned = pods
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .expect("list pods")
            .items
            .iter()
            .filter(|p| {
                p.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|o| o.kind == "ReplicaSet" && o.name == name)
            })
            .count();
        if owned == n || start.elapsed() > Duration::from_secs(30) {
            return owned;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[test]
fn a_cluster_serves_runs_replicasets_restarts_reports_deaths_and_goes_away() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("cluster");
    let _down = DownOnDrop(dir.clone());
    let audit_log = tmp.path().join("audit.log");
    let cluster = up_with(&dir, Some(audit_log.clone()));
    assert_eq!(cluster.audit_log(), Some(audit_log.as_path()));
    assert!(cluster.builtin_replicaset());
    assert!(cluster.kubeconfig().starts_with(cluster.state_dir()));
    cluster.check_alive().expect("all alive after up");

    // kubectl (the release's own, else the one on PATH) with the kubeconfig, its discovery
    // cache in the state directory: a $HOME of its own stays empty (before, this test left
    // one more ~/.kube/cache/discovery/127.0.0.1_PORT behind on every run).
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(cluster.kubectl())
        .arg("--kubeconfig")
        .arg(cluster.kubeconfig())
        .arg("--cache-dir")
        .arg(cluster.kubectl_cache_dir())
        .args(["get", "ns", "-o", "name"])
        .env("HOME", &home)
        .output()
        .expect("run kubectl");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("namespace/default"),
        "kubectl get ns: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "kubectl left {left:?} in its $HOME");
    assert!(cluster.kubectl_cache_dir().join("discovery").is_dir());

    // kube-rs (rustls, verifying the CA): the replicaset controller creates pods.
    let rt = runtime();
    let client = rt.block_on(cluster.client()).expect("client");
    let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let rs: ReplicaSet = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))
    .expect("replicaset");
    rt.block_on(rs_api.create(&PostParams::default(), &rs))
        .expect("create rs");
    assert_eq!(rt.block_on(wait_for_pods(&pods, "web", 2)), 2);
    // Refused: a selector that does not select the template's labels.
    let mut refused = rs.clone();
    refused.metadata.name = Some("refused".into());
    refused.spec.as_mut().unwrap().selector.match_labels =
        Some([("app".to_string(), "other".to_string())].into());
    let e = rt
        .block_on(rs_api.create(&PostParams::default(), &refused))
        .expect_err("a selector that misses the template is invalid");
    assert!(matches!(e, kube::Error::Api(ref s) if s.code == 422), "{e}");
    audit_records_every_write_with_its_writer(&audit_log);

    // The replicaset controller and the garbage collector serve their work queues' counts,
    // which read idle once the pods are made; kcm-system serves none.
    let running = cluster.running_controllers().expect("controllers");
    let probes = Probe::of_cluster(&cluster).expect("probes");
    let names: Vec<&str> = probes.iter().map(Probe::component).collect();
    assert_eq!(names, ["kcm-gc", "kcm-replicaset"], "{running:?}");
    let idle = |p: &Probe| {
        let start = Instant::now();
        loop {
            match rt.block_on(p.read()) {
                Reading::Idle => return,
                other if start.elapsed() > Duration::from_secs(30) => {
                    panic!("{} not idle within 30 s: {other:?}", p.component())
                }
                _ => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    };
    for p in &probes {
        idle(p);
    }

    // Restarting the replicaset controller: a new process that works.
    let before = cluster.log("kcm-replicaset");
    let old_pid = pids(&dir)
        .into_iter()
        .find(|(n, _)| n == "kcm-replicaset")
        .expect("kcm-replicaset pid")
        .1;
    let t = Instant::now();
    cluster.restart("kcm-replicaset").expect("restart");
    eprintln!("restart took {:.1}s", t.elapsed().as_secs_f64());
    let new_pid = pids(&dir)
        .into_iter()
        .find(|(n, _)| n == "kcm-replicaset")
        .expect("kcm-replicaset pid")
        .1;
    assert_ne!(old_pid, new_pid);
    assert!(!runs_in(old_pid, &dir));
    let scale = serde_json::json!({"spec": {"replicas": 3}});
    rt.block_on(rs_api.patch("web", &PatchParams::default(), &Patch::Merge(&scale)))
        .expect("scale");
    assert_eq!(rt.block_on(wait_for_pods(&pods, "web", 3)), 3);
    let log = std::fs::read_to_string(&before).expect("log");
    assert_eq!(
        log.matches("==== rsmc: starting").count(),
        2,
        "one header per start"
    );

    // A second instance, then the first stops: only the second is expected to run.
    cluster
        .start_copy("kcm-replicaset", "kcm-replicaset-2")
        .expect("start copy");
    assert!(cluster.component_running("kcm-replicaset-2"));
    cluster.stop("kcm-replicaset").expect("stop first");
    assert!(!cluster.component_running("kcm-replicaset"));
    cluster
        .check_alive()
        .expect("a stopped component is not a dead one");
    let status = control_plane::status(&dir).expect("status");
    assert!(status.healthy(), "{status}");
    assert!(matches!(
        cluster.restart("no-such-component"),
        Err(e @ ClusterError::UnknownComponent(_)) if e.is_bad_input()
    ));

    // kube-apiserver restarts on the same port; clients carry on.
    let t = Instant::now();
    cluster
        .restart("kube-apiserver")
        .expect("restart kube-apiserver");
    eprintln!(
        "kube-apiserver restart took {:.1}s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(rt.block_on(wait_for_pods(&pods, "web", 3)), 3);

    // A component that dies is named, with its log.
    let apiserver = pids(&dir)
        .into_iter()
        .find(|(n, _)| n == "kube-apiserver")
        .expect("kube-apiserver pid")
        .1;
    kill(Pid::from_raw(apiserver as i32), Signal::SIGKILL).expect("kill kube-apiserver");
    std::thread::sleep(Duration::from_millis(200));
    match cluster.check_alive() {
        Err(e @ ClusterError::ComponentDied { .. }) => {
            assert_eq!(e.component(), Some("kube-apiserver"));
            assert_eq!(e.log(), Some(dir.join("logs/kube-apiserver.log").as_path()));
            let text = e.to_string();
            assert!(text.contains("kube-apiserver.log"), "{text}");
            assert!(
                text.contains("  | "),
                "the message shows the log's tail: {text}"
            );
            assert!(!e.is_bad_input());
        }
        other => panic!("expected kube-apiserver to be reported dead, got {other:?}"),
    }
    assert!(!control_plane::status(&dir).expect("status").healthy());

    // down: no process, no state directory; a second down has nothing to do.
    let all = pids(&dir);
    let report = control_plane::down(&dir).expect("down");
    assert!(report.found && report.removed_dir, "{report}");
    for (name, pid) in all {
        assert!(!runs_in(pid, &dir), "{name} ({pid}) still runs after down");
        assert!(gone_or_zombie(pid), "{name} ({pid}) still exists");
    }
    assert!(!dir.exists());
    assert!(
        audit_log.exists(),
        "the audit log is the user's: down leaves it"
    );
    let again = control_plane::down(&dir).expect("down again");
    assert!(!again.found);
    assert!(matches!(
        LocalCluster::attach(&dir),
        Err(e @ ClusterError::NoCluster { .. }) if e.is_bad_input()
    ));
}

#[test]
fn up_reaps_what_a_crashed_owner_left_and_refuses_a_live_cluster() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("cluster");
    let _down = DownOnDrop(dir.clone());

    // The owner "crashes": its handle is dropped without down, and a component dies.
    drop(up(&dir));
    let attached = LocalCluster::attach(&dir).expect("attach to the running cluster");
    assert_eq!(attached.state_dir(), dir.canonicalize().expect("dir"));
    match control_plane::up(
        &UpOptions {
            state_dir: dir.clone(),
            without_replicaset: false,
            event_gate: None,
            kubernetes: binaries::DEFAULT_VERSION.into(),
            feature_gates: Default::default(),
            audit_log: None,
            kind: false,
        },
        &|_| {},
    ) {
        Err(e @ ClusterError::AlreadyRunning { .. }) => assert!(e.is_bad_input()),
        other => panic!("a second up on a live cluster must be refused, got {other:?}"),
    }
    let old = pids(&dir);
    let kcm_system = old.iter().find(|(n, _)| n == "kcm-system").expect("pid").1;
    kill(Pid::from_raw(kcm_system as i32), Signal::SIGKILL).expect("kill kcm-system");
    std::thread::sleep(Duration::from_millis(200));
    assert!(matches!(
        LocalCluster::attach(&dir),
        Err(ClusterError::ComponentDied { ref component, .. }) if component == "kcm-system"
    ));

    // up again in the same directory: the rest of the old cluster is stopped.
    let cluster = up(&dir);
    for (name, pid) in &old {
        assert!(!runs_in(*pid, &dir), "old {name} ({pid}) was not reaped");
    }
    cluster.check_alive().expect("the new cluster runs");
    let mut running = pids(&dir);
    let report = control_plane::down(&dir).expect("down");
    // down stops exactly the new cluster's processes, every component of it.
    let mut stopped = report.stopped.clone();
    running.sort();
    stopped.sort();
    assert_eq!(stopped, running, "{report}");
    assert!(!dir.exists());
}

#[test]
fn a_directory_that_is_not_a_clusters_is_refused() {
    // A state directory that is not a cluster's is refused before anything starts.
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("notes.txt"), "mine").expect("write");
    let refused = control_plane::up(
        &UpOptions {
            state_dir: tmp.path().to_path_buf(),
            without_replicaset: false,
            event_gate: None,
            kubernetes: binaries::DEFAULT_VERSION.into(),
            feature_gates: Default::default(),
            audit_log: None,
            kind: false,
        },
        &|_| {},
    );
    assert!(matches!(refused, Err(ClusterError::NotAStateDir { .. })));
    assert!(tmp.path().join("notes.txt").exists());
    assert!(matches!(
        control_plane::status(tmp.path()),
        Err(ClusterError::NoCluster { .. })
    ));
}

#[test]
fn supervised_processes_stop_with_their_group() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("logs/controller.log");
    let env = [("GREETING".to_string(), "hello".to_string())];
    let p = control_plane::spawn_shell_logged(
        "controller",
        "echo $GREETING; sleep 300 & sleep 300",
        &env,
        &log,
    )
    .expect("spawn");
    let pid = p.pid();
    std::thread::sleep(Duration::from_millis(300));
    assert!(p.is_alive());
    assert!(p.tail().contains("hello"), "{}", p.tail());
    // The background sleep is in the same process group.
    let group: Vec<u32> = std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(2)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(pid)
        })
        .collect();
    assert!(group.len() >= 2, "{group:?}");
    let t = Instant::now();
    drop(p);
    assert!(t.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(100));
    for member in group {
        let stat = std::fs::read_to_string(format!("/proc/{member}/stat")).unwrap_or_default();
        let gone = stat.is_empty()
            || stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        assert!(gone, "{member} survived: {stat}");
    }
    let killed = control_plane::spawn_logged(
        "crasher",
        &["sleep".to_string(), "300".to_string()],
        &[],
        &log,
    )
    .expect("spawn");
    killed.kill();
    assert!(!killed.is_alive());
    assert!(killed.check_alive().is_err());
}
