//! A kind cluster in place of the local processes (`rsmc cluster up --kind`): a real node
//! with a real kubelet, scheduler and kube-proxy, built on this machine by
//! `scripts/provision-kind` and run on the project's own engine (`scripts/kind-engine`).
//!
//! The node's API server, etcd, scheduler and kube-controller-manager run inside the node;
//! the node's controller manager runs every controller but the replicaset controller and the
//! garbage collector. Those two run on the host as on the local control plane
//! ([`super::components::controllers`]): in kube-controller-managers of the same release's
//! build, behind the event gates, so that scenarios can hold their watches, restart the
//! controller or leave it out (`--without-replicaset`). Every client authenticates with the
//! state directory's static admin token, which the node's API server reads from the same
//! file (mounted into the node), exactly as the local API server does.

use super::error::ClusterError;
use super::interrupt;
use super::state::{KindNode, Layout};
use rsmc_spec::gates::FeatureGates;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PROVISION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/provision-kind");
const ENGINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/kind-engine");

/// Where the node finds the admin token file (mounted from the state directory).
const NODE_TOKEN_FILE: &str = "/etc/kubernetes/rsmc/token.csv";

impl KindNode {
    /// The cluster of the state directory `dir`, on `image`: one name per directory, so that
    /// clusters of different directories never meet.
    pub fn new(dir: &Path, image: String) -> KindNode {
        KindNode {
            cluster: cluster_name(dir),
            image,
        }
    }

    /// The node's container.
    pub fn container(&self) -> String {
        format!("{}-control-plane", self.cluster)
    }

    /// Whether the node's container runs.
    pub fn running(&self) -> bool {
        engine_env().is_ok_and(|env| {
            Command::new("docker")
                .args(["inspect", "-f", "{{.State.Running}}", &self.container()])
                .envs(env)
                .stderr(Stdio::null())
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
        })
    }
}

/// kind's name for the cluster of the state directory `dir`.
pub fn cluster_name(dir: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut h);
    format!("rsmc-{:08x}", h.finish() as u32)
}

/// Builds (or finds cached) the node image of Kubernetes `version`; the script's progress
/// goes to our stderr.
pub fn provision(version: &str, progress: &dyn Fn(&str)) -> Result<String, ClusterError> {
    progress(&format!(
        "provisioning the kind node image of Kubernetes {version} (scripts/provision-kind; minutes the first time)"
    ));
    super::binaries::run_provisioning(Path::new(PROVISION), version)
}

/// The environment docker and kind need (`DOCKER_HOST`, `PATH`); the engine is not
/// started by this.
fn engine_env() -> Result<Vec<(String, String)>, ClusterError> {
    engine("env")
}

/// Runs `scripts/kind-engine VERB`; its `KEY=VALUE` lines, or an error when it fails
/// (`status` fails when the engine does not run).
fn engine(verb: &str) -> Result<Vec<(String, String)>, ClusterError> {
    let out = Command::new("bash")
        .args([ENGINE, verb])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClusterError::setup(format!("cannot run {ENGINE} {verb}"), e))?;
    if !out.status.success() {
        return Err(ClusterError::setup(
            format!("{ENGINE} {verb} failed ({})", out.status),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

/// The kind configuration: one node; the node's controller manager without the two
/// controllers the host runs; the admin token file mounted and read by the API server; the
/// feature gates in every component; and a kubelet that starts on a cgroup-v1 host (v1.35
/// and later refuse it unless told, and these machines have cgroup v1).
///
/// kind writes kubeadm's v1beta4 configuration, whose `extraArgs` are lists: a patch
/// replaces a list whole, so each list here carries everything it needs (kind's own entries
/// for these components are the feature gates, which are given here, and the host-path
/// provisioner, which is re-added).
pub fn config(token_file: &Path, feature_gates: &FeatureGates) -> String {
    let gates = (!feature_gates.is_empty()).then(|| {
        format!(
            "\n      - {{name: feature-gates, value: \"{}\"}}",
            feature_gates.flag()
        )
    });
    let gates = gates.as_deref().unwrap_or("");
    let kubelet_gates: String = feature_gates
        .flag()
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| format!("\n      {k}: {v}"))
        .collect();
    let kubelet_gates = if kubelet_gates.is_empty() {
        String::new()
    } else {
        format!("\n    featureGates:{kubelet_gates}")
    };
    format!(
        r#"# Written by `rsmc cluster up --kind`.
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
  extraMounts:
  - hostPath: {token}
    containerPath: {NODE_TOKEN_FILE}
    readOnly: true
  kubeadmConfigPatches:
  - |
    kind: ClusterConfiguration
    apiServer:
      extraArgs:
      - {{name: token-auth-file, value: {NODE_TOKEN_FILE}}}{gates}
      extraVolumes:
      - {{name: rsmc-token, hostPath: {NODE_TOKEN_FILE}, mountPath: {NODE_TOKEN_FILE}, readOnly: true, pathType: File}}
    controllerManager:
      extraArgs:
      - {{name: controllers, value: "*,-replicaset,-garbagecollector"}}
      - {{name: enable-hostpath-provisioner, value: "true"}}{gates}
    scheduler:
      extraArgs: [{scheduler_gates}]
  - |
    kind: KubeletConfiguration
    failCgroupV1: false{kubelet_gates}
"#,
        token = token_file.display(),
        scheduler_gates = gates.trim_start_matches("\n      - "),
    )
}

/// What `create` made: the API server's URL, and its CA certificate (copied from the node
/// into the state directory).
pub struct Created {
    pub apiserver_url: String,
    pub ca_cert: PathBuf,
}

/// Creates the kind cluster `node` for `layout` (its token file written already), waits
/// until the node is Ready, and copies its CA certificate to `ca_cert`. kind's output goes to
/// the log `kind`.
pub fn create(
    layout: &Layout,
    node: &KindNode,
    feature_gates: &FeatureGates,
    ca_cert: &Path,
    progress: &dyn Fn(&str),
) -> Result<Created, ClusterError> {
    progress("starting the container engine (scripts/kind-engine)");
    let env = engine("start")?;
    let config_file = layout.dir().join("kind.yaml");
    std::fs::write(&config_file, config(&layout.token_file(), feature_gates))
        .map_err(|e| ClusterError::io("cannot write", &config_file, e))?;
    let admin = layout.kind_kubeconfig();
    let log = layout.log("kind");
    let log_file =
        std::fs::File::create(&log).map_err(|e| ClusterError::io("cannot create", &log, e))?;
    progress(&format!(
        "creating kind cluster {} (kind create cluster)",
        node.cluster
    ));
    let status = Command::new("kind")
        .args([
            "create",
            "cluster",
            "--name",
            &node.cluster,
            "--image",
            &node.image,
        ])
        .arg("--config")
        .arg(&config_file)
        .arg("--kubeconfig")
        .arg(&admin)
        .args(["--wait", "3m"])
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(
            log_file
                .try_clone()
                .map_err(|e| ClusterError::io("cannot open", &log, e))?,
        )
        .stderr(log_file)
        .status()
        .map_err(|e| ClusterError::setup("cannot run kind", e))?;
    if interrupt::interrupted() {
        return Err(ClusterError::Interrupted);
    }
    if !status.success() {
        return Err(ClusterError::setup(
            format!("kind create cluster {} failed ({status})", node.cluster),
            format!("its output is in {}", log.display()),
        ));
    }
    let from = format!("{}:/etc/kubernetes/pki/ca.crt", node.container());
    let into = ca_cert.to_string_lossy();
    tool(
        "docker",
        &["cp", &from, &into],
        &env,
        "cannot copy the node's CA certificate",
    )?;
    progress("tagging the scenarios' images in the node (stand-ins)");
    stand_in_images(node, &env)?;
    let kubeconfig = kube::config::Kubeconfig::read_from(&admin)
        .map_err(|e| ClusterError::setup(format!("cannot read {}", admin.display()), e))?;
    let apiserver_url = kubeconfig
        .clusters
        .iter()
        .find_map(|c| c.cluster.as_ref()?.server.clone())
        .ok_or_else(|| ClusterError::setup(format!("{}", admin.display()), "names no server"))?;
    Ok(Created {
        apiserver_url,
        ca_cert: ca_cert.to_path_buf(),
    })
}

/// The images the project's scenarios name (`conformance/scenarios`, `conformance/timed`,
/// upstream's tests), as containerd names them. No registry is reachable here, and the
/// scenarios do not care what their containers run, only that they start and stop on
/// SIGTERM: each is the node's pause image under that name. `rsmc conform --kubelet real`
/// asks for them `IfNotPresent` where a manifest does not say (untagged names are pulled
/// `Always` by default).
pub const STAND_IN_IMAGES: &[&str] = &[
    "registry.k8s.io/pause:3.9",
    "docker.io/library/nginx:latest",
    "docker.io/library/fakeimage:latest",
    "docker.io/library/httpd:2.4.38-alpine",
    "registry.k8s.io/e2e-test-images/agnhost:2.53",
    "gcr.io/google-samples/hello-app:1.0",
    "gcr.io/google-samples/hello-app:2.0",
    "gcr.io/google_samples/gb-frontend:v3",
];

/// Tags the node's pause image as each of [`STAND_IN_IMAGES`] in its containerd.
fn stand_in_images(node: &KindNode, env: &[(String, String)]) -> Result<(), ClusterError> {
    let script = format!(
        "set -e; src=$(ctr -n k8s.io images ls -q | grep '^registry.k8s.io/pause:' | head -1); \
         test -n \"$src\"; for i in {}; do ctr -n k8s.io images tag --force \"$src\" \"$i\" >/dev/null; done",
        STAND_IN_IMAGES.join(" ")
    );
    tool(
        "docker",
        &["exec", &node.container(), "sh", "-c", &script],
        env,
        "cannot tag the stand-in images in the node",
    )?;
    Ok(())
}

/// Runs `program` with `args` in the engine's environment; `failure` says what could not
/// be done when it exits non-zero (its stderr is the detail).
fn tool(
    program: &str,
    args: &[&str],
    env: &[(String, String)],
    failure: &str,
) -> Result<std::process::Output, ClusterError> {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| ClusterError::setup(format!("cannot run {program}"), e))?;
    if !out.status.success() {
        return Err(ClusterError::setup(
            failure,
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(out)
}

/// Deletes the kind cluster named `cluster` of the state directory `layout` (nothing to do
/// when it is gone, or when the engine does not run: then no node can), and stops the engine
/// when no kind cluster is left on it.
///
/// kind takes the cluster's entry out of a kubeconfig as it deletes it: out of
/// ~/.kube/config unless told another, making ~/.kube to lock it
/// (pkg/cluster/internal/kubeconfig/internal/kubeconfig: `RemoveKIND`, `lockFile`). It is told
/// the state directory's, which `create` had it write, so a user's home is left as it was.
pub fn delete(cluster: &str, layout: &Layout) -> Result<(), ClusterError> {
    if engine("status").is_err() {
        return Ok(());
    }
    let env = engine_env()?;
    let kubeconfig = layout.kind_kubeconfig();
    tool(
        "kind",
        &[
            "delete",
            "cluster",
            "--name",
            cluster,
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
        ],
        &env,
        &format!("kind delete cluster {cluster} failed"),
    )?;
    let left = tool(
        "kind",
        &["get", "clusters"],
        &env,
        "kind get clusters failed",
    )?;
    if String::from_utf8_lossy(&left.stdout).trim().is_empty() {
        engine("stop")?;
    }
    Ok(())
}
