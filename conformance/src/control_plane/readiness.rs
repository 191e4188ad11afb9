//! When a component counts as ready.
//!
//! A process that merely runs is not ready: the conformance runner's first step would race
//! a controller that has not listed its objects yet. So each component has a probe that
//! matches what it is for:
//! - etcd: `GET /health` on its client port answers `{"health":"true"}`;
//! - kube-apiserver: `GET /readyz` with the admin token, over HTTPS verified with the
//!   cluster's CA (so this also proves the kubeconfig works for rustls-based clients);
//!   `/readyz` waits for the post-start hooks such as the bootstrap RBAC roles;
//! - kube-controller-manager: its log (of this start) shows every controller's informers
//!   synced. The lines of v1.20.2 at `-v=2` are `shared_informer.go:247] Caches are synced
//!   for <name>` with the names `ReplicaSet` (replicaset controller), `tokens`
//!   (serviceaccount-token), `namespace` and `garbage collector`; kube-controller-manager
//!   serves no health endpoint here (`--secure-port=0 --port=0`). Later releases log
//!   structured lines without the names (`"Waiting for caches to sync"`, `"Caches are
//!   synced"`, v1.37.2), so there every wait begun must have ended, at least as many as the
//!   controllers that wait, and the garbage collector must say `"synced garbage collector"`;
//! - the event gate: it answers its own status endpoint.

use super::error::ClusterError;
use super::process;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How a component shows that it is ready.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Readiness {
    /// etcd's `/health` on this client port.
    EtcdHealth { port: u16 },
    /// kube-apiserver's `/readyz` through this kubeconfig.
    ApiserverReadyz { kubeconfig: PathBuf },
    /// `Caches are synced for <name>` for each name, in the log since the start.
    CachesSynced { names: Vec<String> },
    /// Releases whose log names no informer (v1.2x and later): as many `Caches are synced`
    /// lines as `Waiting for caches to sync` lines, at least `waits` of them, and each of
    /// `lines` in the log since the start.
    WaitsEnded { waits: usize, lines: Vec<String> },
    /// The event gate answers `GET /rsmc-gate/status` at this URL.
    GateStatus { url: String },
}

impl Readiness {
    /// What is being waited for, for progress messages.
    pub fn describe(&self) -> String {
        match self {
            Readiness::EtcdHealth { port } => format!("etcd /health on port {port}"),
            Readiness::ApiserverReadyz { .. } => "kube-apiserver /readyz".to_string(),
            Readiness::CachesSynced { names } => {
                format!("informers synced ({})", names.join(", "))
            }
            Readiness::WaitsEnded { waits, lines } => {
                let mut what = format!("every informer wait ended ({waits} at least)");
                for l in lines {
                    what.push_str(&format!(", {l:?}"));
                }
                what
            }
            Readiness::GateStatus { url } => format!("the event gate at {url}"),
        }
    }

    /// How long a healthy component takes at most (generous: two slow cores, a busy CI).
    pub fn timeout(&self) -> Duration {
        match self {
            Readiness::EtcdHealth { .. } => Duration::from_secs(30),
            Readiness::ApiserverReadyz { .. } => Duration::from_secs(90),
            Readiness::CachesSynced { .. } | Readiness::WaitsEnded { .. } => {
                Duration::from_secs(60)
            }
            Readiness::GateStatus { .. } => Duration::from_secs(30),
        }
    }

    /// Whether the component can be asked over the network whether it answers (etcd, the
    /// API server, the event gate), as opposed to readiness read from its log once.
    pub fn answers_probes(&self) -> bool {
        matches!(
            self,
            Readiness::EtcdHealth { .. }
                | Readiness::ApiserverReadyz { .. }
                | Readiness::GateStatus { .. }
        )
    }

    /// One probe: ready now?
    pub fn probe(&self, log: &Path, log_offset: u64) -> bool {
        match self {
            Readiness::EtcdHealth { port } => etcd_healthy(*port),
            Readiness::ApiserverReadyz { kubeconfig } => apiserver_ready(kubeconfig),
            Readiness::CachesSynced { names } => {
                let text = process::log_since(log, log_offset);
                names
                    .iter()
                    .all(|name| text.contains(&format!("Caches are synced for {name} ")))
            }
            Readiness::WaitsEnded { waits, lines } => {
                let text = process::log_since(log, log_offset);
                let begun = text.matches("\"Waiting for caches to sync\"").count();
                let ended = text.matches("\"Caches are synced\"").count();
                ended >= *waits && ended >= begun && lines.iter().all(|l| text.contains(l.as_str()))
            }
            Readiness::GateStatus { url } => {
                let gate = crate::event_gate::GateClient::new(url);
                block_on(async { gate.status().await.is_ok() })
            }
        }
    }
}

/// Waits until the component `name`, just started by us, is ready,
/// failing as soon as it exits, on a timeout, or when interrupted.
pub fn wait_ready(
    name: &str,
    started: process::Started,
    readiness: &Readiness,
    log: &Path,
    progress: &dyn Fn(&str),
) -> Result<(), ClusterError> {
    progress(&format!("waiting for {name}: {}", readiness.describe()));
    let start = Instant::now();
    let failed = |reason: String| ClusterError::ComponentFailed {
        component: name.to_string(),
        reason,
        log: log.to_path_buf(),
        tail: process::tail(log),
    };
    loop {
        if super::interrupt::interrupted() {
            return Err(ClusterError::Interrupted);
        }
        // Not `process::alive`: just after the start, /proc/PID/cmdline can still be empty
        // (the exec is under way), and this pid is our own child, so it cannot be reused.
        if !process::running(started.pid) {
            return Err(failed(format!("it exited (pid {})", started.pid)));
        }
        if readiness.probe(log, started.log_offset) {
            return Ok(());
        }
        if start.elapsed() > readiness.timeout() {
            return Err(failed(format!(
                "not ready after {}s (waited for {})",
                readiness.timeout().as_secs(),
                readiness.describe()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// etcd answers `{"health":"true"}` on `/health` (plain HTTP on loopback).
fn etcd_healthy(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let attempt = || -> std::io::Result<String> {
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        stream.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        Ok(response)
    };
    attempt().is_ok_and(|r| r.contains(r#""health":"true""#))
}

/// kube-apiserver answers `ok` on `/readyz` to a client made from `kubeconfig`.
fn apiserver_ready(kubeconfig: &Path) -> bool {
    block_on(async {
        let Ok(client) = client(kubeconfig).await else {
            return false;
        };
        let Ok(request) = http::Request::get("/readyz").body(Vec::new()) else {
            return false;
        };
        let answer = tokio::time::timeout(Duration::from_secs(3), client.request_text(request));
        matches!(answer.await, Ok(Ok(body)) if body.trim() == "ok")
    })
}

/// A kube-rs client for a local cluster's kubeconfig; never through a proxy (the server is
/// on loopback, and kube-rs would otherwise honour `HTTPS_PROXY`).
pub async fn client(kubeconfig: &Path) -> Result<kube::Client, ClusterError> {
    let fail = |e: &dyn std::fmt::Display| {
        ClusterError::setup(format!("cannot use kubeconfig {}", kubeconfig.display()), e)
    };
    let file = kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| fail(&e))?;
    let mut config =
        kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| fail(&e))?;
    config.proxy_url = None;
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(5));
    kube::Client::try_from(config).map_err(|e| fail(&e))
}

/// Runs `future` to completion on a runtime of its own in a thread of its own, so the sync
/// API works whether or not the caller is inside a tokio runtime.
pub(crate) fn block_on<T: Send>(future: impl std::future::Future<Output = T> + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime for a readiness probe")
                    .block_on(future)
            })
            .join()
            .expect("the readiness probe thread")
    })
}
