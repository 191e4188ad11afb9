//! `rsmc cluster up|down|status`: a Kubernetes cluster for conformance runs — a local control
//! plane (etcd, kube-apiserver, kube-controller-manager as processes; v1.20.2 unless
//! `--kubernetes` names another release), or with `--kind` a kind cluster built on this
//! machine. The work is done by `rsmc_conformance::control_plane`; this module shows progress
//! and maps errors to exit codes.

use crate::exit;
use indicatif::{ProgressBar, ProgressStyle};
use rsmc_conformance::control_plane::{
    self, audit, binaries, ClusterError, ComponentStatus, UpOptions,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The release `up --kind` runs unless told otherwise: the newest the project supports.
const KIND_DEFAULT_VERSION: &str = "v1.37.2";

/// Arguments of `rsmc cluster`.
#[derive(clap::Args, Debug)]
pub struct ClusterArgs {
    #[command(subcommand)]
    pub command: ClusterCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum ClusterCommand {
    /// Start a local cluster and wait until it is ready; prints its kubeconfig.
    Up(UpArgs),
    /// Stop the local cluster and remove its state directory (nothing to do: exit 0).
    Down(DirArgs),
    /// Show each component's pid, state and log: exit 0 when all run, 2 when there is no
    /// cluster, 4 when a component died.
    Status(DirArgs),
}

/// Arguments of `rsmc cluster up`.
#[derive(clap::Args, Debug)]
pub struct UpArgs {
    /// Leave out kube-controller-manager's replicaset controller, to test another
    /// implementation of it against this cluster.
    #[arg(long)]
    pub without_replicaset: bool,
    /// The Kubernetes release: v1.20.2, or v1.34 and later built from the Go module
    /// k8s.io/kubernetes (a minor, e.g. 1.37, means its newest patch the provisioning script
    /// knows). Built once by scripts/provision-control-plane and cached. [default: v1.20.2;
    /// with --kind, v1.37.2]
    #[arg(long, value_name = "VERSION")]
    pub kubernetes: Option<String>,
    /// Feature gates to turn on or off in every component, as upstream's flag
    /// (`StaleControllerConsistencyReplicaSet=false,…`); the others keep the release's
    /// defaults. `rsmc conform --local` judges by the model switched to match.
    #[arg(long, value_name = "GATE=BOOL,…", default_value = "")]
    pub feature_gates: rsmc_spec::gates::FeatureGates,
    /// Have kube-apiserver append an audit log of every write to pods and ReplicaSets to
    /// FILE (JSON lines, by the shipped policy conformance/audit-policy.yaml), for `rsmc
    /// import`. The file is yours: `rsmc cluster down` leaves it.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,
    /// A kind cluster instead of local processes: a real node with a real kubelet, scheduler
    /// and kube-proxy (v1.34 and later). Its node image is built on this machine by
    /// scripts/provision-kind (minutes the first time, then cached); the replicaset
    /// controller and the garbage collector run on the host behind the event gates, as on the
    /// local control plane.
    #[arg(long, conflicts_with = "audit_log")]
    pub kind: bool,
    #[command(flatten)]
    pub dir: DirArgs,
}

/// Where the cluster's state lives.
#[derive(clap::Args, Debug)]
pub struct DirArgs {
    /// The cluster's state directory [default: $RSMC_CLUSTER_DIR, else
    /// ${XDG_STATE_HOME:-~/.local/state}/rsmc/cluster].
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

impl DirArgs {
    fn resolve(&self) -> PathBuf {
        self.state_dir
            .clone()
            .unwrap_or_else(control_plane::default_state_dir)
    }
}

pub fn run(args: &ClusterArgs) -> i32 {
    match &args.command {
        ClusterCommand::Up(up) => run_up(up),
        ClusterCommand::Down(dir) => run_down(dir),
        ClusterCommand::Status(dir) => run_status(dir),
    }
}

/// The exit code for an error.
fn code(e: &ClusterError) -> i32 {
    if e.is_bad_input() {
        exit::BAD_INPUT
    } else if matches!(e, ClusterError::Interrupted) {
        exit::INTERRUPTED
    } else {
        exit::CLUSTER_FAILED
    }
}

fn fail(e: &ClusterError) -> i32 {
    eprintln!("error: {e}");
    code(e)
}

fn run_up(args: &UpArgs) -> i32 {
    let state_dir = args.dir.resolve();
    // Refused before the binaries are looked for (or built).
    if let Some(e) = args
        .audit_log
        .as_deref()
        .and_then(|l| audit::resolve(l).err())
    {
        return fail(&e);
    }
    let start = Instant::now();
    let plain = |msg: &str| eprintln!("[{:>3}s] {msg}", start.elapsed().as_secs());
    // Found (or provisioned, with the script's own output) before the spinner starts, so the
    // two do not draw over each other; `up` then finds them at once.
    let kubernetes = match (&args.kubernetes, args.kind) {
        (Some(v), _) => v.clone(),
        (None, false) => binaries::DEFAULT_VERSION.to_string(),
        (None, true) => KIND_DEFAULT_VERSION.to_string(),
    };
    if args.kind {
        if rsmc_spec::gates::release_minor(&kubernetes).is_none_or(|m| m < 34) {
            eprintln!(
                "error: --kubernetes {kubernetes}: kind nodes are built for v1.34 and later (the local control plane runs v1.20.2)"
            );
            return exit::BAD_INPUT;
        }
        // Built before the binaries are looked for: the node's build makes them too.
        if let Err(e) = control_plane::kind::provision(&kubernetes, &plain) {
            return fail(&e);
        }
    }
    match binaries::locate(&kubernetes, &plain) {
        Err(e) => return fail(&e),
        Ok(bins) => {
            if let Err(e) = args.feature_gates.check_release(bins.minor()) {
                eprintln!("error: --feature-gates: {e}");
                return exit::BAD_INPUT;
            }
        }
    }
    let live = std::io::stderr().is_terminal();
    let bar = if live {
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("template"));
        bar.enable_steady_tick(Duration::from_millis(100));
        Some(bar)
    } else {
        None
    };
    let progress = |msg: &str| match &bar {
        Some(bar) => bar.set_message(msg.to_string()),
        None => plain(msg),
    };
    let opts = UpOptions {
        state_dir,
        without_replicaset: args.without_replicaset,
        // The event gate is this program itself (`rsmc event-gate`).
        event_gate: std::env::current_exe().ok(),
        kubernetes,
        feature_gates: args.feature_gates.clone(),
        audit_log: args.audit_log.clone(),
        kind: args.kind,
    };
    let result = control_plane::up(&opts, &progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(cluster) => {
            let kubeconfig = cluster.kubeconfig().display();
            eprintln!(
                "{} Kubernetes {} cluster ready in {:.1}s: kube-apiserver at {}, state in {}{}",
                if args.kind { "kind" } else { "local" },
                cluster.kubernetes_version(),
                start.elapsed().as_secs_f64(),
                cluster.apiserver_url(),
                cluster.state_dir().display(),
                if cluster.builtin_replicaset() {
                    ""
                } else {
                    " (no built-in replicaset controller)"
                }
            );
            println!("kubeconfig: {kubeconfig}");
            if let Some(log) = cluster.audit_log() {
                println!("audit log: {}", log.display());
            }
            if cluster.event_gate().is_some() {
                println!(
                    "controller kubeconfig (through the event gate): {}",
                    cluster.controller_kubeconfig().display()
                );
            }
            println!("export KUBECONFIG={kubeconfig}");
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

fn run_down(args: &DirArgs) -> i32 {
    match control_plane::down(&args.resolve()) {
        Ok(report) => {
            println!("{report}");
            exit::OK
        }
        Err(e) => fail(&e),
    }
}

fn run_status(args: &DirArgs) -> i32 {
    match control_plane::status(&args.resolve()) {
        Ok(status) => {
            print!("{status}");
            if status.healthy() {
                exit::OK
            } else {
                let names = |pick: fn(&ComponentStatus) -> bool| -> Vec<&str> {
                    status
                        .components
                        .iter()
                        .filter(|c| pick(c))
                        .map(|c| c.name.as_str())
                        .collect()
                };
                let (dead, silent) = (names(ComponentStatus::dead), names(ComponentStatus::silent));
                if !silent.is_empty() && dead.is_empty() {
                    eprintln!(
                        "error: {} runs but does not answer its health check (stopping, or hung); `rsmc cluster up` replaces the cluster",
                        silent.join(", ")
                    );
                } else if dead.is_empty() {
                    eprintln!("error: the cluster is still starting");
                } else {
                    eprintln!(
                        "error: {} died; `rsmc cluster up` replaces the cluster",
                        dead.join(", ")
                    );
                }
                exit::CLUSTER_FAILED
            }
        }
        Err(e) => fail(&e),
    }
}
