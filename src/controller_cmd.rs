//! `rsmc controller`: the reference ReplicaSet controller (`rsmc_controller`), run against a
//! cluster.

use crate::exit;
use clap::ValueEnum;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;
use rsmc_controller::faults::{self, Fault};
use rsmc_spec::gates::FeatureGates;
use std::path::PathBuf;

/// Arguments of `rsmc controller`.
#[derive(clap::Args, Debug)]
pub struct ControllerArgs {
    /// The cluster: this kubeconfig's current context (default: `$KUBECONFIG`, then
    /// `~/.kube/config`, then the in-cluster service account).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Syncs at once (kube-controller-manager's `--concurrent-replicaset-syncs`).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..))]
    pub workers: u16,
    /// Behaviour profile; `auto` picks from the server's version (k8s-1.20 for a 1.20 server,
    /// upstream otherwise).
    #[arg(long, default_value = "auto")]
    pub profile: String,
    /// Feature gates switched from the release's defaults (`GATE=BOOL,…`, as
    /// kube-controller-manager's flag), e.g. `StaleControllerConsistencyReplicaSet=false`.
    #[arg(long, value_name = "GATE=BOOL,…", default_value = "")]
    pub feature_gates: FeatureGates,
    /// Inject a catalogued fault (see `rsmc bugs`): a fixed bug's switch on, or an open
    /// issue's proposed fix off. Without it the controller runs with every proposed fix.
    #[arg(long)]
    pub fault: Option<Fault>,
    /// A file holding how many seconds the controller's timers (the 5-minute expectations
    /// timeout) run ahead of the machine's clock, read at every sync. `rsmc conform
    /// --moved-clock` names one here and moves it on to force an `expireExpectations` step at
    /// once instead of waiting 5 minutes.
    #[arg(long, env = rsmc_conformance::controller::OFFSET_FILE_ENV, value_name = "FILE")]
    pub clock_offset_file: Option<PathBuf>,
    /// Log lines as text or as JSON objects (one per line); `RUST_LOG` sets the level.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

pub fn run(args: &ControllerArgs) -> i32 {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    use std::io::IsTerminal;
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(controller(args))
}

async fn client(kubeconfig: &Option<PathBuf>) -> Result<Client, String> {
    let config = match kubeconfig {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|e| format!("{}: not a kubeconfig: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => kube::Config::infer()
            .await
            .map_err(|e| format!("no cluster to talk to (give --kubeconfig): {e}"))?,
    };
    // Named in the API server's audit log, so `rsmc import` tells its writes from the user's
    // (rsmc_oracle::import::writer::REFERENCE_USER_AGENT).
    let mut config = config;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(concat!("rsmc-controller/", env!("CARGO_PKG_VERSION"))),
    ));
    Client::try_from(config).map_err(|e| e.to_string())
}

async fn controller(args: &ControllerArgs) -> i32 {
    let bad = |message: String| {
        tracing::error!("{message}");
        exit::BAD_INPUT
    };
    let client = match client(&args.kubeconfig).await {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    // `auto`: what the cluster's own release does with these gates.
    let server = match client.apiserver_version().await {
        Ok(v) => v.git_version,
        Err(e) => return bad(format!("the cluster is unreachable: {e}")),
    };
    let base = match rsmc_spec::gates::semantics_for(&args.profile, &server, &args.feature_gates) {
        Ok(sem) => sem,
        Err(e) => return bad(e),
    };
    let profile = base.profile;
    let sem = faults::semantics(base, args.fault);
    tracing::info!(
        profile = profile.name(),
        switches = %sem.switches().join(", "),
        workers = args.workers,
        "rsmc controller: the spec's ReplicaSet controller"
    );
    let clock = rsmc_controller::clock::Clock::new(args.clock_offset_file.clone());
    rsmc_controller::run(client, sem, clock, args.workers, stop_signal()).await;
    exit::OK
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("a SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {},
        _ = term.recv() => {},
    }
}
