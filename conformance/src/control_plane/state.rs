//! The state directory of a local cluster and its `cluster.json`.
//!
//! Layout:
//! - `cluster.json`: ports, binary directory, the kubeconfig path, whether the replicaset
//!   controller is built in, and every component's command line, readiness probe, log and
//!   pid, so that another `rsmc` process (status, down, a conformance run) can find,
//!   restart or stop the components;
//! - `kubeconfig`: the admin kubeconfig;
//! - `certs/`: CA, serving certificate, service-account key pair, token file (with `--kind`:
//!   the node's CA certificate and the token file, which the node's API server reads too);
//! - `etcd-data/`: etcd's data;
//! - `audit-policy.yaml`: with `--audit-log`, the policy kube-apiserver logs by;
//! - `kind.yaml`, `kind-admin.kubeconfig`: with `--kind`, the kind configuration and kind's
//!   own admin kubeconfig (client certificates; the clients use `kubeconfig`);
//! - `logs/<component>.log`, `pids/<component>.pid`;
//! - `.lock`: held while a command changes the cluster, so two of them do not interleave.
//!
//! The pid files are what stale processes are found by (they are written before anything
//! waits, so even an `up` killed halfway leaves them); `cluster.json` is rewritten whenever
//! a component starts or stops, atomically (write, then rename).

use super::error::ClusterError;
use super::process::CommandLine;
use super::readiness::Readiness;
use rsmc_spec::gates::FeatureGates;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The format tag of `cluster.json`.
pub const FORMAT: &str = "rsmc-cluster/v1";

/// The paths of a state directory.
#[derive(Debug, Clone)]
pub struct Layout {
    dir: PathBuf,
}

/// The cluster's files, which `up` and `down` remove (and nothing else, so a state
/// directory pointed at a directory holding other files never loses them). The logs and
/// the lock are handled separately.
const ENTRIES: [&str; 12] = [
    "cluster.json",
    "cluster.json.tmp",
    "kubeconfig",
    "controller.kubeconfig",
    "gc.kubeconfig",
    "certs",
    "etcd-data",
    "pids",
    "audit-policy.yaml",
    "kind.yaml",
    "kind-admin.kubeconfig",
    "kubectl-cache",
];

impl Layout {
    /// The layout of `dir`, which must be absolute (see [`Layout::open`]).
    pub fn new(dir: PathBuf) -> Layout {
        Layout { dir }
    }

    /// The layout of an existing `dir`, made absolute, or `None` when `dir` does not exist.
    pub fn open(dir: &Path) -> Result<Option<Layout>, ClusterError> {
        match dir.canonicalize() {
            Ok(dir) => Ok(Some(Layout { dir })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ClusterError::io("cannot open", dir, e)),
        }
    }

    /// Creates `dir` if needed; its layout, absolute.
    pub fn create(dir: &Path) -> Result<Layout, ClusterError> {
        std::fs::create_dir_all(dir).map_err(|e| ClusterError::io("cannot create", dir, e))?;
        let layout = Layout::open(dir)?.ok_or_else(|| ClusterError::NoCluster {
            dir: dir.to_path_buf(),
        })?;
        if layout.dir.to_str().is_none() {
            return Err(ClusterError::setup(
                format!("state directory {}", dir.display()),
                "its path is not UTF-8 (it is passed to the components in flags)",
            ));
        }
        Ok(layout)
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What every component's command line contains, and nothing outside this cluster's
    /// does: the state directory with a trailing slash (so `/x/cluster` does not match
    /// `/x/cluster2`).
    pub fn marker(&self) -> String {
        format!("{}/", self.dir.display())
    }

    pub fn cluster_json(&self) -> PathBuf {
        self.dir.join("cluster.json")
    }
    /// The kubeconfig of the controller under test: through the event gate.
    pub fn controller_kubeconfig(&self) -> PathBuf {
        self.dir.join("controller.kubeconfig")
    }
    /// The garbage collector's kubeconfig: through its own gate.
    pub fn gc_kubeconfig(&self) -> PathBuf {
        self.dir.join("gc.kubeconfig")
    }

    /// kubectl's discovery cache for this cluster (`--cache-dir`; see
    /// `LocalCluster::kubectl_cache_dir`).
    pub fn kubectl_cache(&self) -> PathBuf {
        self.dir.join("kubectl-cache")
    }
    /// kind's own admin kubeconfig (with `--kind`): `kind create cluster` writes it, `kind
    /// delete cluster` takes its entry out of it (and not out of ~/.kube/config).
    pub fn kind_kubeconfig(&self) -> PathBuf {
        self.dir.join("kind-admin.kubeconfig")
    }

    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }
    pub fn certs(&self) -> PathBuf {
        self.dir.join("certs")
    }
    pub fn token_file(&self) -> PathBuf {
        self.certs().join("tokens.csv")
    }
    /// The audit policy kube-apiserver reads (`super::audit`), when it logs.
    pub fn audit_policy(&self) -> PathBuf {
        self.dir.join("audit-policy.yaml")
    }
    pub fn etcd_data(&self) -> PathBuf {
        self.dir.join("etcd-data")
    }
    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }
    pub fn pids(&self) -> PathBuf {
        self.dir.join("pids")
    }
    pub fn log(&self, component: &str) -> PathBuf {
        self.logs().join(format!("{component}.log"))
    }
    pub fn pid_file(&self, component: &str) -> PathBuf {
        self.pids().join(format!("{component}.pid"))
    }

    /// Takes the directory's lock, waiting for another command to finish with it.
    pub fn lock(&self) -> Result<File, ClusterError> {
        let file = self.lock_file()?;
        file.lock()
            .map_err(|e| ClusterError::io("cannot lock", &self.dir.join(".lock"), e))?;
        Ok(file)
    }

    /// Takes the directory's lock, or `None` when another command holds it.
    pub fn try_lock(&self) -> Result<Option<File>, ClusterError> {
        let file = self.lock_file()?;
        match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(ClusterError::io("cannot lock", &self.dir.join(".lock"), e))
            }
        }
    }

    fn lock_file(&self) -> Result<File, ClusterError> {
        let path = self.dir.join(".lock");
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| ClusterError::io("cannot open", &path, e))
    }

    /// What is in the directory that a cluster did not put there.
    pub fn foreign_entries(&self) -> Result<Vec<String>, ClusterError> {
        let entries = std::fs::read_dir(&self.dir)
            .map_err(|e| ClusterError::io("cannot read", &self.dir, e))?;
        let mut foreign: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| !ENTRIES.contains(&name.as_str()) && name != "logs" && name != ".lock")
            .collect();
        foreign.sort();
        Ok(foreign)
    }

    /// Removes the cluster's files, and the logs too unless `keep_logs`; the directory and
    /// its lock stay.
    pub fn clear(&self, keep_logs: bool) -> Result<(), ClusterError> {
        let logs = (!keep_logs).then_some("logs");
        for entry in ENTRIES.iter().copied().chain(logs) {
            remove(&self.dir.join(entry))?;
        }
        Ok(())
    }

    /// Removes everything [`Layout::clear`] does, the logs and the lock, then the directory
    /// unless something else is left in it. Returns whether the directory is gone.
    pub fn remove(&self) -> Result<bool, ClusterError> {
        self.clear(false)?;
        remove(&self.dir.join(".lock"))?;
        Ok(std::fs::remove_dir(&self.dir).is_ok())
    }
}

/// Removes a file or a directory tree, if it exists.
fn remove(path: &Path) -> Result<(), ClusterError> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => return Ok(()),
    };
    removed.map_err(|e| ClusterError::io("cannot remove", path, e))
}

/// The ports of a cluster.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ports {
    pub etcd_client: u16,
    pub etcd_peer: u16,
    pub apiserver: u16,
}

/// One component as recorded in `cluster.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Component {
    pub name: String,
    pub command: CommandLine,
    pub readiness: Readiness,
    pub log: PathBuf,
    /// While it should be running; `None` once stopped on purpose.
    pub pid: Option<u32>,
    /// The component this one is a second instance of (`kcm-replicaset-2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<String>,
    /// Where it serves its metrics, if it does (the replicaset controller's and the garbage
    /// collector's kube-controller-managers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
}

/// `cluster.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterState {
    pub format: String,
    pub kubernetes_version: String,
    /// The gates given to every component's `--feature-gates` (`A=true,B=false`); the
    /// others are at the release's defaults.
    #[serde(default, skip_serializing_if = "FeatureGates::is_empty")]
    pub feature_gates: FeatureGates,
    pub state_dir: PathBuf,
    pub bin_dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub apiserver_url: String,
    pub ports: Ports,
    /// Whether kube-controller-manager's own replicaset controller runs (`kcm-replicaset`);
    /// false with `--without-replicaset`, where another implementation is tested.
    pub builtin_replicaset: bool,
    /// The file kube-apiserver appends its audit log to (`rsmc cluster up --audit-log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_log: Option<PathBuf>,
    /// The event gate's URL (`http://127.0.0.1:PORT`), when the cluster has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_gate: Option<String>,
    /// The garbage collector's gate, when the cluster has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_gate: Option<String>,
    /// The kind cluster whose node runs the API server (`rsmc cluster up --kind`); `None`
    /// for the local processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<KindNode>,
    /// False while `up` is still starting the components.
    pub complete: bool,
    pub components: Vec<Component>,
}

impl ClusterState {
    /// Reads `cluster.json`; `None` when there is none.
    pub fn load(layout: &Layout) -> Result<Option<ClusterState>, ClusterError> {
        let path = layout.cluster_json();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(ClusterError::io("cannot read", &path, e)),
        };
        let state: ClusterState = serde_json::from_str(&text)
            .map_err(|e| ClusterError::setup(format!("{} is damaged", path.display()), e))?;
        if state.format != FORMAT {
            return Err(ClusterError::setup(
                format!("{}", path.display()),
                format!("format {:?} is not {FORMAT:?}", state.format),
            ));
        }
        Ok(Some(state))
    }

    /// Writes `cluster.json` atomically.
    pub fn save(&self, layout: &Layout) -> Result<(), ClusterError> {
        let path = layout.cluster_json();
        let tmp = layout.dir().join("cluster.json.tmp");
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| ClusterError::setup("cannot encode cluster.json", e))?;
        std::fs::write(&tmp, text + "\n").map_err(|e| ClusterError::io("cannot write", &tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| ClusterError::io("cannot write", &path, e))
    }

    pub fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    pub fn component_mut(&mut self, name: &str) -> Option<&mut Component> {
        self.components.iter_mut().find(|c| c.name == name)
    }
}

/// Where a kube-controller-manager serves its metrics: HTTPS on loopback with a certificate
/// it signs itself into `cert_dir`, `/metrics` open to anyone who can reach it
/// (`--authorization-always-allow-paths`; there is no authenticating proxy to ask). A
/// settle point reads its work queues there (`crate::workqueues`): the controller's hidden
/// state that no watch shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub url: String,
    /// The certificate it serves, followed by the CA that signed it
    /// (`GenerateSelfSignedCertKeyWithFixtures` in k8s.io/client-go/util/cert writes both).
    pub cert: PathBuf,
}

/// The kind cluster of a state directory, as recorded in `cluster.json` (what starts and
/// stops it is in [`super::kind`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KindNode {
    /// kind's name for the cluster (`rsmc-<hash of the state directory>`).
    pub cluster: String,
    /// The node image (`rsmc.local/kind-node:v1.37.2`).
    pub image: String,
}
