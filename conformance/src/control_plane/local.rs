//! A handle on a running local cluster, for the conformance runner.
//!
//! The handle holds no processes: everything is read from and written to the state
//! directory (under its lock), so a handle from `up` and one from `attach` in another
//! process see the same cluster, and dropping a handle leaves the cluster running (it is
//! meant to outlive a run; `down` stops it). The scenario steps about the replicaset
//! controller's process map to [`LocalCluster::restart`] (`restartController`),
//! [`LocalCluster::start_copy`] (`startSecondLeader`) and [`LocalCluster::stop`]
//! (`stopFirstLeader`).

use super::components;
use super::error::ClusterError;
use super::process;
use super::start;
use super::state::{ClusterState, Layout, Metrics};
use rsmc_spec::gates::FeatureGates;
use std::path::{Path, PathBuf};

/// A running local cluster.
#[derive(Debug, Clone)]
pub struct LocalCluster {
    layout: Layout,
    kubeconfig: PathBuf,
    apiserver_url: String,
    builtin_replicaset: bool,
    event_gate: Option<String>,
    gc_gate: Option<String>,
    audit_log: Option<PathBuf>,
    kubernetes_version: String,
    feature_gates: FeatureGates,
    bin_dir: PathBuf,
}

impl LocalCluster {
    pub(crate) fn from_state(layout: Layout, state: &ClusterState) -> LocalCluster {
        LocalCluster {
            layout,
            kubeconfig: state.kubeconfig.clone(),
            apiserver_url: state.apiserver_url.clone(),
            builtin_replicaset: state.builtin_replicaset,
            event_gate: state.event_gate.clone(),
            gc_gate: state.gc_gate.clone(),
            audit_log: state.audit_log.clone(),
            kubernetes_version: state.kubernetes_version.clone(),
            feature_gates: state.feature_gates.clone(),
            bin_dir: state.bin_dir.clone(),
        }
    }

    /// The cluster running in `state_dir`: [`ClusterError::NoCluster`] when there is none
    /// (or nothing of it runs), [`ClusterError::ComponentDied`] when part of it died.
    pub fn attach(state_dir: &Path) -> Result<LocalCluster, ClusterError> {
        let no_cluster = || ClusterError::NoCluster {
            dir: state_dir.to_path_buf(),
        };
        let layout = Layout::open(state_dir)?.ok_or_else(no_cluster)?;
        let state = ClusterState::load(&layout)?
            .filter(|s| s.complete)
            .ok_or_else(no_cluster)?;
        let marker = layout.marker();
        let running =
            |c: &&super::state::Component| c.pid.is_some_and(|pid| process::alive(pid, &marker));
        if !state.components.iter().any(|c| running(&c)) {
            return Err(no_cluster());
        }
        let cluster = LocalCluster::from_state(layout, &state);
        cluster.check_alive()?;
        Ok(cluster)
    }

    pub fn state_dir(&self) -> &Path {
        self.layout.dir()
    }

    /// The admin kubeconfig (token user in `system:masters`, CA embedded).
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The kubeconfig for the ReplicaSet controller under test: through the event gate
    /// when the cluster has one, else the admin kubeconfig.
    pub fn controller_kubeconfig(&self) -> PathBuf {
        match self.event_gate {
            Some(_) => self.layout.controller_kubeconfig(),
            None => self.kubeconfig.clone(),
        }
    }

    /// The event gate's URL (`http://127.0.0.1:PORT`), when the cluster has one.
    pub fn event_gate(&self) -> Option<&str> {
        self.event_gate.as_deref()
    }

    /// The garbage collector's gate's URL, when the cluster has one.
    pub fn gc_gate(&self) -> Option<&str> {
        self.gc_gate.as_deref()
    }

    /// The file kube-apiserver appends its audit log to, when it logs
    /// (`rsmc cluster up --audit-log`).
    pub fn audit_log(&self) -> Option<&Path> {
        self.audit_log.as_deref()
    }

    /// `https://127.0.0.1:PORT`.
    pub fn apiserver_url(&self) -> &str {
        &self.apiserver_url
    }

    /// The release running, as kube-apiserver reports it (`v1.37.2`).
    pub fn kubernetes_version(&self) -> &str {
        &self.kubernetes_version
    }

    /// The feature gates the components were started with (the others are at the
    /// release's defaults).
    pub fn feature_gates(&self) -> &FeatureGates {
        &self.feature_gates
    }

    /// kubectl of the cluster's release where provisioning built one (v1.34 and later), else
    /// the one on PATH.
    pub fn kubectl(&self) -> PathBuf {
        super::binaries::kubectl_in(&self.bin_dir)
    }

    /// Where kubectl keeps its discovery cache for this cluster (`--cache-dir`): in the
    /// state directory, which goes with the cluster. kubectl's default, `~/.kube/cache`,
    /// keeps a directory per server address for good (about 450 kB each), and every local
    /// cluster listens on ports of its own: a day of suite runs left 493 of them, 224 MB, in
    /// the user's home.
    pub fn kubectl_cache_dir(&self) -> PathBuf {
        self.layout.kubectl_cache()
    }

    /// Whether kube-controller-manager's replicaset controller runs (`kcm-replicaset`).
    pub fn builtin_replicaset(&self) -> bool {
        self.builtin_replicaset
    }

    /// The log file of `component` (whether or not it exists).
    pub fn log(&self, component: &str) -> PathBuf {
        self.layout.log(component)
    }

    /// A kube-rs client for the cluster (never through a proxy).
    pub async fn client(&self) -> Result<kube::Client, ClusterError> {
        super::readiness::client(&self.kubeconfig).await
    }

    /// `Ok` when every component that should run does; otherwise
    /// [`ClusterError::ComponentDied`] for the first that does not (in start order, so a
    /// dead etcd is named before the kube-apiserver that fails because of it).
    pub fn check_alive(&self) -> Result<(), ClusterError> {
        let state = self.load()?;
        let marker = self.layout.marker();
        for c in &state.components {
            if let Some(pid) = c.pid {
                if !process::alive(pid, &marker) {
                    return Err(ClusterError::ComponentDied {
                        component: c.name.clone(),
                        log: c.log.clone(),
                        tail: process::tail(&c.log),
                    });
                }
            }
        }
        Ok(())
    }

    /// The kube-controller-managers that should run now, each with where it serves its
    /// metrics (`None` for one that serves none: a second instance).
    pub fn running_controllers(&self) -> Result<Vec<(String, Option<Metrics>)>, ClusterError> {
        let state = self.load()?;
        Ok(state
            .components
            .iter()
            .filter(|c| components::is_controller_manager(&c.name) && c.pid.is_some())
            .map(|c| (c.name.clone(), c.metrics.clone()))
            .collect())
    }

    /// Whether `component` exists, should run (was not stopped) and does.
    pub fn component_running(&self, component: &str) -> bool {
        let marker = self.layout.marker();
        self.load().ok().is_some_and(|state| {
            state
                .component(component)
                .and_then(|c| c.pid)
                .is_some_and(|pid| process::alive(pid, &marker))
        })
    }

    /// Stops `component` (if it runs) and starts it again with the same command line; waits
    /// until it is ready.
    pub fn restart(&self, component: &str) -> Result<(), ClusterError> {
        let _lock = self.layout.lock()?;
        let mut state = self.load()?;
        self.find(&state, component)?;
        self.stop_locked(&mut state, component)?;
        self.start_locked(&mut state, component)
    }

    /// Starts a second instance of `component` named `copy` (e.g. `kcm-replicaset-2`), with
    /// the same command line and its own log and pid file; waits until it is ready. Only
    /// controller managers can be copied.
    pub fn start_copy(&self, component: &str, copy: &str) -> Result<(), ClusterError> {
        let _lock = self.layout.lock()?;
        let mut state = self.load()?;
        let source = self.find(&state, component)?.clone();
        if !components::copyable(&source) {
            return Err(ClusterError::UnknownComponent(format!(
                "{component} cannot run twice (it owns its ports and data); only the \
                 kube-controller-managers can"
            )));
        }
        let valid = !copy.is_empty()
            && copy
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(ClusterError::UnknownComponent(format!(
                "{copy:?} is not a valid component name (letters, digits, '-', '_')"
            )));
        }
        match state.component(copy) {
            Some(existing) if existing.copy_of.is_none() => {
                return Err(ClusterError::UnknownComponent(format!(
                    "{copy} is already a component of the cluster"
                )));
            }
            Some(_) => {
                // An earlier copy: replaced (stopped first if it still runs).
                self.stop_locked(&mut state, copy)?;
                state.components.retain(|c| c.name != copy);
            }
            None => {}
        }
        let mut component_copy = source;
        component_copy.name = copy.to_string();
        component_copy.log = self.layout.log(copy);
        component_copy.pid = None;
        component_copy.copy_of = Some(component.to_string());
        component_copy.command = components::copy_command(&component_copy.command);
        component_copy.metrics = None;
        state.components.push(component_copy);
        state.save(&self.layout)?;
        self.start_locked(&mut state, copy)
    }

    /// Stops `component` (SIGTERM, then SIGKILL after a timeout); it stays stopped, and
    /// `check_alive` no longer expects it, until `restart`.
    pub fn stop(&self, component: &str) -> Result<(), ClusterError> {
        let _lock = self.layout.lock()?;
        let mut state = self.load()?;
        self.find(&state, component)?;
        self.stop_locked(&mut state, component)
    }

    fn stop_locked(&self, state: &mut ClusterState, name: &str) -> Result<(), ClusterError> {
        let marker = self.layout.marker();
        if let Some(c) = state.component_mut(name) {
            if let Some(pid) = c.pid.take() {
                process::stop(pid, &marker, components::stop_grace(name));
            }
        }
        let _ = std::fs::remove_file(self.layout.pid_file(name));
        state.save(&self.layout)
    }

    fn start_locked(&self, state: &mut ClusterState, name: &str) -> Result<(), ClusterError> {
        let quiet = |_: &str| {};
        let started = start::spawn(&self.layout, state, name, &quiet)?;
        start::wait(state, name, started, &quiet)
    }

    fn find<'s>(
        &self,
        state: &'s ClusterState,
        name: &str,
    ) -> Result<&'s super::state::Component, ClusterError> {
        state.component(name).ok_or_else(|| {
            let names: Vec<&str> = state.components.iter().map(|c| c.name.as_str()).collect();
            ClusterError::UnknownComponent(format!(
                "the cluster in {} has no component {name:?} (it has {})",
                self.layout.dir().display(),
                names.join(", ")
            ))
        })
    }

    fn load(&self) -> Result<ClusterState, ClusterError> {
        ClusterState::load(&self.layout)?.ok_or_else(|| ClusterError::NoCluster {
            dir: self.layout.dir().to_path_buf(),
        })
    }
}
