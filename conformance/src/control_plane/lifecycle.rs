//! Bringing a local cluster up, taking it down, and reporting on it.
//!
//! `up` owns the state directory while it works (its lock), so two `up`s never interleave.
//! What it found there decides what it does first:
//! - a complete cluster whose recorded components all run: refused ([`ClusterError::AlreadyRunning`]);
//! - anything else (a cluster with a dead component, a crashed or killed `up`, a failed one's
//!   logs): the processes still running from it are stopped (only those whose command line
//!   names this state directory) and its files are removed; then a fresh cluster starts.
//!
//! A directory holding anything else than a cluster's files is refused, since `up` and
//! `down` remove what they find there.
//!
//! When starting fails, everything started so far is stopped and the cluster's files are
//! removed, except `logs/`: the error names the failing component's log, which must still
//! be there to be read (the next `up` or `down` removes it). When interrupted (SIGINT or
//! SIGTERM), everything started is stopped and the whole state is removed, logs included:
//! the user asked for nothing to remain.

use super::audit;
use super::binaries;
use super::certs;
use super::components;
use super::error::ClusterError;
use super::interrupt;
use super::kind;
use super::kubeconfig;
use super::local::LocalCluster;
use super::ports;
use super::process;
use super::start::{spawn, wait};
use super::state::{ClusterState, Component, KindNode, Layout, Ports, FORMAT};
use rsmc_spec::gates::FeatureGates;
use std::fmt;
use std::path::{Path, PathBuf};

/// What `up` is asked for.
#[derive(Debug, Clone)]
pub struct UpOptions {
    pub state_dir: PathBuf,
    /// Leave out kube-controller-manager's replicaset controller (another implementation of
    /// it is under test).
    pub without_replicaset: bool,
    /// The program that serves the event gate (`rsmc`, which runs it as `rsmc event-gate`);
    /// `None`: no gate, and the replicaset controller talks to kube-apiserver directly.
    pub event_gate: Option<PathBuf>,
    /// The Kubernetes release to run (`v1.20.2`, `v1.37.2`, or a minor: `1.37`), provisioned
    /// by `scripts/provision-control-plane` when not cached yet.
    pub kubernetes: String,
    /// Feature gates turned on or off in every component (`--feature-gates`); the others
    /// keep the release's defaults.
    pub feature_gates: FeatureGates,
    /// The file kube-apiserver appends its audit log to, by the shipped policy
    /// (`super::audit`); `None`: no audit log.
    pub audit_log: Option<PathBuf>,
    /// A kind cluster (`super::kind`) in place of the local etcd, kube-apiserver and
    /// `kcm-system`: a real node, kubelet and scheduler.
    pub kind: bool,
}

/// The default state directory: `$RSMC_CLUSTER_DIR`, else
/// `${XDG_STATE_HOME:-~/.local/state}/rsmc/cluster`.
pub fn default_state_dir() -> PathBuf {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = env("RSMC_CLUSTER_DIR") {
        return PathBuf::from(dir);
    }
    env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| binaries::home().join(".local").join("state"))
        .join("rsmc")
        .join("cluster")
}

/// Starts a local cluster in `opts.state_dir` and waits until every component is ready.
/// `progress` is told what is being done or waited for; nothing is printed.
pub fn up(opts: &UpOptions, progress: &dyn Fn(&str)) -> Result<LocalCluster, ClusterError> {
    let _signals = interrupt::Guard::install();
    // A flag that cannot be used is refused before anything is touched.
    let audit_log = opts.audit_log.as_deref().map(audit::resolve).transpose()?;
    let layout = Layout::create(&opts.state_dir)?;
    let foreign = layout.foreign_entries()?;
    if !foreign.is_empty() {
        return Err(ClusterError::NotAStateDir {
            dir: layout.dir().to_path_buf(),
            entries: foreign,
        });
    }
    let Some(_lock) = layout.try_lock()? else {
        return Err(ClusterError::AlreadyRunning {
            dir: layout.dir().to_path_buf(),
            detail: "another rsmc command is starting or stopping it".to_string(),
        });
    };
    let marker = layout.marker();
    let old = ClusterState::load(&layout).ok().flatten();
    if let Some(old) = &old {
        if old.complete && all_running(old, &marker) {
            return Err(ClusterError::AlreadyRunning {
                dir: layout.dir().to_path_buf(),
                detail: format!("kube-apiserver at {}", old.apiserver_url),
            });
        }
    }
    let reaped = process::reap_pid_files(&layout.pids(), &marker, components::stop_grace);
    if let Some(node) = old.and_then(|o| o.kind) {
        progress(&format!(
            "deleting kind cluster {} of a previous cluster",
            node.cluster
        ));
        kind::delete(&node.cluster, &layout)?;
    }
    if !reaped.is_empty() {
        let names: Vec<String> = reaped.iter().map(|(n, p)| format!("{n} ({p})")).collect();
        progress(&format!(
            "stopped what was left of a previous cluster: {}",
            names.join(", ")
        ));
    }
    layout.clear(false)?;

    let started = if opts.kind {
        start_kind(&layout, opts, progress)
    } else {
        start(&layout, opts, audit_log, progress)
    };
    match started {
        Ok(cluster) => Ok(cluster),
        Err(e) => {
            progress("stopping what was started");
            process::reap_pid_files(&layout.pids(), &marker, components::stop_grace);
            if opts.kind {
                let _ = kind::delete(&kind::cluster_name(layout.dir()), &layout);
            }
            if matches!(e, ClusterError::Interrupted) {
                let _ = layout.remove();
            } else {
                let _ = layout.clear(true);
            }
            Err(e)
        }
    }
}

/// Whether every component that should run does (a kind node included).
fn all_running(state: &ClusterState, marker: &str) -> bool {
    state
        .components
        .iter()
        .filter_map(|c| c.pid)
        .all(|pid| process::alive(pid, marker))
        && state.kind.as_ref().is_none_or(KindNode::running)
}

/// The steps of `up` after the state directory is clean.
fn start(
    layout: &Layout,
    opts: &UpOptions,
    audit_log: Option<PathBuf>,
    progress: &dyn Fn(&str),
) -> Result<LocalCluster, ClusterError> {
    let bins = binaries::locate(&opts.kubernetes, progress)?;
    progress("generating certificates and credentials");
    let certs = certs::generate(&layout.certs())?;
    let token = kubeconfig::random_hex(16)?;
    kubeconfig::write_token_file(&layout.token_file(), &token)?;
    // Held until every component listens (the end of this function): see `ports`.
    let reservation = ports::Reservation::take(progress)?;
    let [etcd_client, etcd_peer, apiserver, gate_port, gc_gate_port, rs_metrics, gc_metrics] =
        reservation.free_ports(7)?[..]
    else {
        unreachable!("seven ports were asked for");
    };
    let ports = Ports {
        etcd_client,
        etcd_peer,
        apiserver,
    };
    let apiserver_url = format!("https://127.0.0.1:{apiserver}");
    kubeconfig::write_kubeconfig(
        &layout.kubeconfig(),
        &apiserver_url,
        Some(&certs.ca_cert),
        Some(&token),
    )?;
    let gate = plan_gates(layout, opts, gate_port, gc_gate_port)?;
    let gate_url = gate.as_ref().map(components::GatePlan::url);
    let gc_gate_url = gate.as_ref().map(components::GatePlan::gc_url);
    for dir in [layout.logs(), layout.pids(), layout.etcd_data()] {
        std::fs::create_dir_all(&dir).map_err(|e| ClusterError::io("cannot create", &dir, e))?;
    }

    let audit_flags = match &audit_log {
        Some(log) => audit::flags(layout, log)?,
        None => Vec::new(),
    };
    let components = components::plan(
        layout,
        &bins,
        &certs,
        ports,
        components::Choices {
            with_replicaset: !opts.without_replicaset,
            gate: gate.as_ref(),
            feature_gates: &opts.feature_gates,
            apiserver_audit: audit_flags,
            metrics_ports: [rs_metrics, gc_metrics],
        },
    );
    let mut state = ClusterState {
        apiserver_url,
        ports,
        audit_log,
        event_gate: gate_url,
        gc_gate: gc_gate_url,
        components,
        ..new_state(layout, &bins, opts)
    };
    state.save(layout)?;

    // etcd, then kube-apiserver, then the event gate, then the controller managers at once.
    let (controllers, servers): (Vec<String>, Vec<String>) = state
        .components
        .iter()
        .map(|c| c.name.clone())
        .partition(|name| components::is_controller_manager(name));
    for name in &servers {
        let started = spawn(layout, &mut state, name, progress)?;
        wait(&state, name, started, progress)?;
    }
    let started = controllers
        .iter()
        .map(|name| spawn(layout, &mut state, name, progress))
        .collect::<Result<Vec<_>, _>>()?;
    for (name, started) in controllers.iter().zip(started) {
        wait(&state, name, started, progress)?;
    }

    drop(reservation);
    state.complete = true;
    state.save(layout)?;
    progress("ready");
    Ok(LocalCluster::from_state(layout.clone(), &state))
}

/// The state of a cluster about to start, from what `up` was asked: no components, ports
/// or API server yet.
fn new_state(layout: &Layout, bins: &binaries::Binaries, opts: &UpOptions) -> ClusterState {
    ClusterState {
        format: FORMAT.to_string(),
        kubernetes_version: bins.version.clone(),
        feature_gates: opts.feature_gates.clone(),
        state_dir: layout.dir().to_path_buf(),
        bin_dir: bins.dir.clone(),
        kubeconfig: layout.kubeconfig(),
        apiserver_url: String::new(),
        ports: Ports {
            etcd_client: 0,
            etcd_peer: 0,
            apiserver: 0,
        },
        builtin_replicaset: !opts.without_replicaset,
        audit_log: None,
        event_gate: None,
        gc_gate: None,
        kind: None,
        complete: false,
        components: vec![],
    }
}

/// The event gates on these ports when the caller can run them (`opts.event_gate`), with
/// the kubeconfigs of the clients behind them written; and their URLs.
fn plan_gates(
    layout: &Layout,
    opts: &UpOptions,
    port: u16,
    gc_port: u16,
) -> Result<Option<components::GatePlan>, ClusterError> {
    let Some(program) = &opts.event_gate else {
        return Ok(None);
    };
    let plan = components::GatePlan {
        program: program.clone(),
        port,
        gc_port,
    };
    kubeconfig::write_kubeconfig(&layout.controller_kubeconfig(), &plan.url(), None, None)?;
    kubeconfig::write_kubeconfig(&layout.gc_kubeconfig(), &plan.gc_url(), None, None)?;
    Ok(Some(plan))
}

/// The steps of `up --kind` after the state directory is clean: the node image, the kind
/// cluster (whose API server reads the state directory's admin token), then the event gates
/// and the host's controller managers against the node's API server.
fn start_kind(
    layout: &Layout,
    opts: &UpOptions,
    progress: &dyn Fn(&str),
) -> Result<LocalCluster, ClusterError> {
    // The node image first: its provisioning builds the host's binaries too, in one build
    // with the node's (`provision-control-plane --node`), which `locate` then finds.
    let image = kind::provision(&opts.kubernetes, progress)?;
    let bins = binaries::locate(&opts.kubernetes, progress)?;
    let node = KindNode::new(layout.dir(), image);
    let token = kubeconfig::random_hex(16)?;
    for dir in [layout.certs(), layout.logs(), layout.pids()] {
        std::fs::create_dir_all(&dir).map_err(|e| ClusterError::io("cannot create", &dir, e))?;
    }
    kubeconfig::write_token_file(&layout.token_file(), &token)?;
    // The node's API server, etcd and their ports are kind's: none of ours.
    let mut state = ClusterState {
        kind: Some(node.clone()),
        ..new_state(layout, &bins, opts)
    };
    // Recorded before the node exists, so that an interrupted `up` is cleaned up by the next.
    state.save(layout)?;
    let created = kind::create(
        layout,
        &node,
        &opts.feature_gates,
        &layout.certs().join("ca.crt"),
        progress,
    )?;
    kubeconfig::write_kubeconfig(
        &layout.kubeconfig(),
        &created.apiserver_url,
        Some(&created.ca_cert),
        Some(&token),
    )?;
    // Held until the gates listen (the end of this function): see `ports`.
    let reservation = ports::Reservation::take(progress)?;
    let [gate_port, gc_gate_port, rs_metrics, gc_metrics] = reservation.free_ports(4)?[..] else {
        unreachable!("four ports were asked for");
    };
    let gate = plan_gates(layout, opts, gate_port, gc_gate_port)?;
    state.event_gate = gate.as_ref().map(components::GatePlan::url);
    state.gc_gate = gate.as_ref().map(components::GatePlan::gc_url);
    state.components = components::controllers(
        layout,
        &bins,
        &created.apiserver_url,
        &created.ca_cert,
        components::Choices {
            with_replicaset: !opts.without_replicaset,
            gate: gate.as_ref(),
            feature_gates: &opts.feature_gates,
            apiserver_audit: vec![],
            metrics_ports: [rs_metrics, gc_metrics],
        },
    );
    state.apiserver_url = created.apiserver_url;
    state.save(layout)?;
    let names: Vec<String> = state.components.iter().map(|c| c.name.clone()).collect();
    for name in &names {
        let started = spawn(layout, &mut state, name, progress)?;
        wait(&state, name, started, progress)?;
    }
    state.complete = true;
    state.save(layout)?;
    progress("ready");
    Ok(LocalCluster::from_state(layout.clone(), &state))
}

/// What `down` did.
#[derive(Debug, Clone)]
pub struct DownReport {
    pub state_dir: PathBuf,
    /// Whether there was a cluster (or what was left of one) at all.
    pub found: bool,
    /// The processes that were stopped: component name and pid.
    pub stopped: Vec<(String, u32)>,
    /// The kind cluster deleted (its node container gone), for a cluster of `up --kind`.
    pub deleted_kind: Option<String>,
    /// Whether the state directory is gone (it stays when it holds files that are not the
    /// cluster's).
    pub removed_dir: bool,
}

impl fmt::Display for DownReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dir = self.state_dir.display();
        if !self.found {
            return write!(f, "no local cluster in {dir}; nothing to do");
        }
        if self.stopped.is_empty() {
            write!(f, "no component was running")?;
        } else {
            let names: Vec<String> = self
                .stopped
                .iter()
                .map(|(n, p)| format!("{n} ({p})"))
                .collect();
            write!(f, "stopped {}", names.join(", "))?;
        }
        if let Some(cluster) = &self.deleted_kind {
            write!(f, "; deleted kind cluster {cluster}")?;
        }
        if self.removed_dir {
            write!(f, "; removed {dir}")
        } else {
            write!(
                f,
                "; removed the cluster's files from {dir} (it holds other files, so it stays)"
            )
        }
    }
}

/// Stops every component of the cluster in `state_dir` (second instances included) and
/// removes the state directory. Without a cluster there, does nothing and says so.
pub fn down(state_dir: &Path) -> Result<DownReport, ClusterError> {
    let Some(layout) = Layout::open(state_dir)? else {
        return Ok(DownReport {
            state_dir: state_dir.to_path_buf(),
            found: false,
            stopped: vec![],
            deleted_kind: None,
            removed_dir: false,
        });
    };
    // A cluster, or what is left of one (the logs of a failed `up`).
    let found = layout.cluster_json().exists() || layout.pids().exists() || layout.logs().exists();
    if !found {
        // Not a cluster's directory (or already emptied): touch nothing.
        return Ok(DownReport {
            state_dir: layout.dir().to_path_buf(),
            found: false,
            stopped: vec![],
            deleted_kind: None,
            removed_dir: false,
        });
    }
    let _lock = layout.lock()?;
    let node = ClusterState::load(&layout)
        .ok()
        .flatten()
        .and_then(|s| s.kind);
    let stopped = process::reap_pid_files(&layout.pids(), &layout.marker(), components::stop_grace);
    let deleted_kind = match node {
        Some(node) => {
            kind::delete(&node.cluster, &layout)?;
            Some(node.cluster)
        }
        None => None,
    };
    let removed_dir = layout.remove()?;
    Ok(DownReport {
        state_dir: layout.dir().to_path_buf(),
        found: found || !stopped.is_empty(),
        stopped,
        deleted_kind,
        removed_dir,
    })
}

/// One component in a [`Status`].
#[derive(Debug, Clone)]
pub struct ComponentStatus {
    pub name: String,
    /// `None` when it was stopped on purpose (`LocalCluster::stop`).
    pub pid: Option<u32>,
    pub alive: bool,
    pub log: PathBuf,
    /// For a running component that serves probes (etcd's `/health`, kube-apiserver's
    /// `/readyz`, the event gate's status): whether it answered. `None` when not asked.
    pub answering: Option<bool>,
}

impl ComponentStatus {
    /// Should run but does not.
    pub fn dead(&self) -> bool {
        self.pid.is_some() && !self.alive
    }

    /// Runs but does not answer its probe.
    pub fn silent(&self) -> bool {
        self.alive && self.answering == Some(false)
    }
}

/// The state of a local cluster.
#[derive(Debug, Clone)]
pub struct Status {
    pub state_dir: PathBuf,
    /// The release running, as kube-apiserver reported it at `up`.
    pub kubernetes_version: String,
    /// The gates set at `up`; the others are at the release's defaults.
    pub feature_gates: FeatureGates,
    pub apiserver_url: String,
    pub kubeconfig: PathBuf,
    pub builtin_replicaset: bool,
    /// Where kube-apiserver appends its audit log, when it logs.
    pub audit_log: Option<PathBuf>,
    /// False while `up` is still starting it.
    pub complete: bool,
    /// The kind node of a cluster of `up --kind`, and whether its container runs.
    pub kind: Option<(KindNode, bool)>,
    pub components: Vec<ComponentStatus>,
}

impl Status {
    /// Complete, and every component that should run does.
    pub fn healthy(&self) -> bool {
        self.complete
            && !self.components.iter().any(|c| c.dead() || c.silent())
            && self.kind.as_ref().is_none_or(|(_, running)| *running)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "state directory: {}", self.state_dir.display())?;
        writeln!(f, "Kubernetes:      {}", self.kubernetes_version)?;
        if !self.feature_gates.is_empty() {
            writeln!(f, "feature gates:   {}", self.feature_gates.flag())?;
        }
        writeln!(f, "kube-apiserver:  {}", self.apiserver_url)?;
        writeln!(f, "kubeconfig:      {}", self.kubeconfig.display())?;
        writeln!(
            f,
            "replicaset controller: {}",
            if self.builtin_replicaset {
                "kube-controller-manager's (kcm-replicaset)"
            } else {
                "not built in (--without-replicaset)"
            }
        )?;
        if let Some(log) = &self.audit_log {
            writeln!(f, "audit log:       {}", log.display())?;
        }
        if let Some((node, running)) = &self.kind {
            writeln!(
                f,
                "kind node:       {} ({}): {}",
                node.container(),
                node.image,
                if *running { "running" } else { "NOT RUNNING" }
            )?;
        }
        if !self.complete {
            writeln!(f, "(still starting)")?;
        }
        let width = self
            .components
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(0);
        for c in &self.components {
            let (pid, state) = match (c.pid, c.alive) {
                (None, _) => ("-".to_string(), "stopped"),
                (Some(pid), true) if c.silent() => (pid.to_string(), "NOT ANSWERING"),
                (Some(pid), true) => (pid.to_string(), "running"),
                (Some(pid), false) => (pid.to_string(), "DEAD"),
            };
            writeln!(
                f,
                "  {:width$}  {state:13}  pid {pid:>7}  log {}",
                c.name,
                c.log.display()
            )?;
        }
        Ok(())
    }
}

/// Each component's pid, liveness and log, and where the cluster is.
pub fn status(state_dir: &Path) -> Result<Status, ClusterError> {
    let no_cluster = || ClusterError::NoCluster {
        dir: state_dir.to_path_buf(),
    };
    let layout = Layout::open(state_dir)?.ok_or_else(no_cluster)?;
    let state = ClusterState::load(&layout)?.ok_or_else(no_cluster)?;
    let marker = layout.marker();
    let components = state
        .components
        .iter()
        .map(|c: &Component| {
            let alive = c.pid.is_some_and(|pid| process::alive(pid, &marker));
            // A process that runs is not one that serves: a kube-apiserver sent SIGTERM runs
            // on for its shutdown delay while refusing connections. Ask each that can be asked.
            let answering = (alive && state.complete && c.readiness.answers_probes())
                .then(|| c.readiness.probe(&c.log, 0));
            ComponentStatus {
                name: c.name.clone(),
                pid: c.pid,
                alive,
                log: c.log.clone(),
                answering,
            }
        })
        .collect();
    Ok(Status {
        state_dir: layout.dir().to_path_buf(),
        kubernetes_version: state.kubernetes_version,
        feature_gates: state.feature_gates,
        apiserver_url: state.apiserver_url,
        kubeconfig: state.kubeconfig,
        builtin_replicaset: state.builtin_replicaset,
        audit_log: state.audit_log,
        complete: state.complete,
        kind: state.kind.map(|node| {
            let running = node.running();
            (node, running)
        }),
        components,
    })
}
