//! `rsmc cluster up --kind` end to end: a kind cluster built on this machine
//! (`scripts/provision-kind`, run by `up` when the node image is not cached), with a real
//! node whose kubelet starts the pods that the host's replicaset controller creates, and a
//! `down` that leaves no container, engine, firewall table or network link behind.

mod common;

use common::{text, Cluster};
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// The release the kind test runs: the newest the project supports.
const RELEASE: &str = "v1.37.2";

fn json(cluster: &Cluster, args: &[&str]) -> Value {
    let out = cluster.kubectl(&[args, &["-o", "json"]].concat());
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("kubectl {args:?}: {e}: {out}"))
}

/// Polls `check` every half second until it returns `Some`, or panics after `limit`.
fn until<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// What the host shows of the engine: its processes, its runtime directory, the nftables
/// tables and the network links.
fn host() -> (Vec<String>, bool, String, Vec<String>) {
    let procs = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains("/run/rsmc-docker"))
        .collect();
    let output = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let links = output("ip", &["-o", "link", "show"])
        .lines()
        .filter_map(|l| Some(l.split(": ").nth(1)?.split('@').next()?.to_string()))
        .collect();
    (
        procs,
        std::path::Path::new("/run/rsmc-docker").exists(),
        output("nft", &["list", "tables"]),
        links,
    )
}

#[test]
fn a_kind_cluster_runs_pods_on_a_real_kubelet_and_leaves_nothing() {
    let before = host();
    assert!(
        before.0.is_empty(),
        "the engine runs before the test: {:?}",
        before.0
    );
    let mut cluster = Cluster::up("kind", &["--kind", "--kubernetes", RELEASE]);
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(cluster.state.join("cluster.json")).expect("cluster.json"),
    )
    .expect("cluster.json is JSON");
    let node_name = format!(
        "{}-control-plane",
        state["kind"]["cluster"].as_str().expect("a kind cluster")
    );

    // A real node, with the release's kubelet.
    let node = json(&cluster, &["get", "node", &node_name]);
    assert_eq!(node["status"]["nodeInfo"]["kubeletVersion"], RELEASE);
    assert!(node["status"]["nodeInfo"]["containerRuntimeVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("containerd://")));
    let status = common::rsmc(&["cluster", "status"], &cluster.state);
    assert!(status.status.success(), "{}", text(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains(&format!("kind node:       {node_name}")),
        "{}",
        text(&status)
    );

    // The host's replicaset controller creates the pods; the node's scheduler binds them and
    // its kubelet runs them until they are Ready.
    let manifest = cluster.state.with_extension("rs.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, namespace: default}\n\
         spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    \
         metadata: {labels: {app: web}}\n    spec:\n      terminationGracePeriodSeconds: 3\n      \
         containers: [{name: idle, image: registry.k8s.io/pause:3.10.2}]\n",
    )
    .expect("write the manifest");
    cluster.kubectl(&["apply", "-f", manifest.to_str().expect("utf-8")]);
    std::fs::remove_file(&manifest).expect("remove the manifest");
    let pods = until(
        Duration::from_secs(90),
        "three pods Running and Ready",
        || {
            let pods = json(&cluster, &["get", "pods", "-l", "app=web"]);
            let items = pods["items"].as_array()?.clone();
            let ready = |p: &Value| {
                p["status"]["phase"] == "Running"
                    && p["status"]["containerStatuses"][0]["ready"] == true
                    && p["status"]["conditions"].as_array().is_some_and(|c| {
                        c.iter()
                            .any(|c| c["type"] == "Ready" && c["status"] == "True")
                    })
            };
            (items.len() == 3 && items.iter().all(ready)).then_some(items)
        },
    );
    for p in &pods {
        assert_eq!(p["spec"]["nodeName"], node_name.as_str());
        assert_eq!(p["metadata"]["ownerReferences"][0]["name"], "web");
        // A container the node's containerd really started (a played kubelet has none).
        assert!(p["status"]["containerStatuses"][0]["containerID"]
            .as_str()
            .is_some_and(|id| id.starts_with("containerd://")));
    }

    // A scale-down: the kubelet ends each deleted pod within its grace period, and the pod
    // is gone only then.
    cluster.kubectl(&["scale", "rs", "web", "--replicas=1"]);
    until(Duration::from_secs(60), "two pods gone", || {
        let pods = json(&cluster, &["get", "pods", "-l", "app=web"]);
        (pods["items"].as_array()?.len() == 1).then_some(())
    });

    cluster.down_and_check();
    let after = host();
    assert!(after.0.is_empty(), "engine processes left: {:?}", after.0);
    assert!(!after.1, "/run/rsmc-docker is left behind");
    assert_eq!(
        after.2, before.2,
        "nftables tables differ from before the test"
    );
    assert_eq!(
        after.3, before.3,
        "network links differ from before the test"
    );
}
