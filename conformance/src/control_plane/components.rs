//! The components of a local cluster and their command lines (Kubernetes v1.20.2).
//!
//! Five to seven processes, each with its own log:
//! - `etcd` on two free loopback ports (client, peer), data in the state directory;
//! - `kube-apiserver`, HTTPS on 127.0.0.1 only (v1.20 rejects an insecure port), token
//!   authentication, RBAC, no ServiceAccount admission (there are no service accounts to
//!   mount: no kubelet runs), no endpoint reconciler (it would try to publish a loopback
//!   address as the `kubernetes` service's endpoint, which validation rejects);
//! - `kcm-system`: kube-controller-manager with the housekeeping controllers a run relies
//!   on: namespace (test namespaces are deleted) and serviceaccount-token;
//! - `kcm-gc`: kube-controller-manager with only the garbage collector (owner references,
//!   cascading deletion), in a process of its own so that it can watch through a gate of its
//!   own: the garbage collector's races (#26120: an orphaning from a graph that has not seen
//!   a dependent) need its watch held while the ReplicaSet controller's flows;
//! - `event-gate` and `gc-gate` (when the caller can run them, as `rsmc cluster up` can):
//!   the proxies through which the replicaset controller and the garbage collector talk to
//!   kube-apiserver, so that a conformance run can hold back their watch events and the
//!   controller's requests (`crate::event_gate`);
//! - `kcm-replicaset`: a second kube-controller-manager with only the replicaset controller.
//!   It is separate so that the conformance runner can restart it, run a second instance of
//!   it, or stop it (scenario steps about controller restarts and overlapping leaders)
//!   without touching the garbage collector; and so that `--without-replicaset` just leaves
//!   it out when another implementation is under test.
//!
//! No scheduler and no kubelet: pods stay Pending and unbound, which is all a ReplicaSet
//! needs; the runner plays the kubelet's part where a scenario needs it.
//! Leader election is off everywhere (`--leader-elect=false`): one cluster per state
//! directory, and a second replicaset controller must really run alongside the first.

use super::binaries::Binaries;
use super::certs::Certs;
use super::process::{self, CommandLine};
use super::readiness::Readiness;
use super::state::{Component, Layout, Metrics, Ports};
use rsmc_spec::gates::FeatureGates;
use std::time::Duration;

pub const ETCD: &str = "etcd";
pub const KUBE_APISERVER: &str = "kube-apiserver";
pub const KCM_SYSTEM: &str = "kcm-system";
pub const KCM_REPLICASET: &str = "kcm-replicaset";
pub const KCM_GC: &str = "kcm-gc";
pub const EVENT_GATE: &str = "event-gate";
pub const GC_GATE: &str = "gc-gate";

/// The event gates of a cluster: the program that serves them (`rsmc`, run as `rsmc
/// event-gate`) and their ports, the ReplicaSet controller's and the garbage collector's.
#[derive(Debug, Clone)]
pub struct GatePlan {
    pub program: std::path::PathBuf,
    pub port: u16,
    pub gc_port: u16,
}

impl GatePlan {
    /// The ReplicaSet controller's gate.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The garbage collector's gate.
    pub fn gc_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.gc_port)
    }
}

/// The service-account issuer (any URL works; this is the conventional one).
const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
/// Service ClusterIPs (none are used; kube-apiserver requires a range).
const SERVICE_RANGE: &str = "10.96.0.0/16";
/// kube-controller-manager's verbosity: `-v=2` logs each controller's start, cache sync
/// (the readiness signal) and every action (e.g. `"Too few replicas" ... creating=2` and the
/// `SuccessfulCreate` events), without the request-level noise of higher levels.
const KCM_VERBOSITY: &str = "-v=2";

/// What a cluster is asked to run besides its fixed parts.
pub struct Choices<'a> {
    /// kube-controller-manager's own replicaset controller (`kcm-replicaset`).
    pub with_replicaset: bool,
    pub gate: Option<&'a GatePlan>,
    /// The same gates in every component, as a cluster's operator sets them.
    pub feature_gates: &'a FeatureGates,
    /// kube-apiserver's audit flags (`super::audit::flags`), none without an audit log.
    pub apiserver_audit: Vec<String>,
    /// The ports on which `kcm-replicaset` and `kcm-gc` serve their metrics
    /// ([`Metrics`]).
    pub metrics_ports: [u16; 2],
}

/// Where `name` serves its metrics on `port`, and the kube-controller-manager flags that
/// serve them there.
fn serving(layout: &Layout, name: &str, port: u16) -> (Metrics, Vec<String>) {
    let cert_dir = cert_dir(layout, name);
    let metrics = Metrics {
        url: format!("https://127.0.0.1:{port}/metrics"),
        cert: cert_dir.join("kube-controller-manager.crt"),
    };
    let flags = vec![
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".to_string(),
        format!("--cert-dir={}", cert_dir.display()),
        "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics".to_string(),
    ];
    (metrics, flags)
}

fn cert_dir(layout: &Layout, name: &str) -> std::path::PathBuf {
    layout.certs().join(format!("{name}-serving"))
}

/// The command line of a second instance of a kube-controller-manager: the same, but
/// serving nothing (the first one holds the port), so its queues are not seen.
pub fn copy_command(command: &CommandLine) -> CommandLine {
    let mut copy = command.clone();
    for arg in &mut copy.args {
        if arg.starts_with("--secure-port=") {
            *arg = "--secure-port=0".to_string();
        }
    }
    copy
}

/// The components of a cluster, in start order: etcd, kube-apiserver, then the
/// controller managers (which may start together).
pub fn plan(
    layout: &Layout,
    bins: &Binaries,
    certs: &Certs,
    ports: Ports,
    mut choices: Choices,
) -> Vec<Component> {
    let apiserver_audit = std::mem::take(&mut choices.apiserver_audit);
    let feature_gates = choices.feature_gates;
    let gates_flag = gates_flag(feature_gates);
    let p = |path: std::path::PathBuf| path.display().to_string();
    let etcd_client = format!("http://127.0.0.1:{}", ports.etcd_client);
    let etcd_peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
    let kubeconfig = layout.kubeconfig();

    let etcd = CommandLine {
        program: bins.etcd(),
        args: vec![
            format!("--data-dir={}", p(layout.etcd_data())),
            format!("--listen-client-urls={etcd_client}"),
            format!("--advertise-client-urls={etcd_client}"),
            format!("--listen-peer-urls={etcd_peer}"),
            format!("--initial-advertise-peer-urls={etcd_peer}"),
            format!("--initial-cluster=default={etcd_peer}"),
        ],
        env: vec![],
    };
    let apiserver = CommandLine {
        program: bins.kube_apiserver(),
        args: vec![
            format!("--etcd-servers={etcd_client}"),
            "--bind-address=127.0.0.1".to_string(),
            "--advertise-address=127.0.0.1".to_string(),
            format!("--secure-port={}", ports.apiserver),
            format!("--cert-dir={}", p(layout.certs())),
            format!("--tls-cert-file={}", p(certs.serving_cert.clone())),
            format!("--tls-private-key-file={}", p(certs.serving_key.clone())),
            format!("--token-auth-file={}", p(layout.token_file())),
            "--authorization-mode=RBAC".to_string(),
            format!("--service-account-key-file={}", p(certs.sa_pub.clone())),
            format!(
                "--service-account-signing-key-file={}",
                p(certs.sa_key.clone())
            ),
            format!("--service-account-issuer={ISSUER}"),
            format!("--service-cluster-ip-range={SERVICE_RANGE}"),
            "--disable-admission-plugins=ServiceAccount".to_string(),
            "--endpoint-reconciler-type=none".to_string(),
        ]
        .into_iter()
        .chain(gates_flag.clone())
        .chain(apiserver_audit)
        .collect(),
        env: vec![],
    };
    let kcm_system = kcm(
        bins,
        "namespace,serviceaccount-token",
        kubeconfig.clone(),
        feature_gates,
        vec![
            format!(
                "--service-account-private-key-file={}",
                p(certs.sa_key.clone())
            ),
            format!("--root-ca-file={}", p(certs.ca_cert.clone())),
        ],
    );
    let mut components = vec![
        component(
            layout,
            ETCD,
            etcd,
            Readiness::EtcdHealth {
                port: ports.etcd_client,
            },
        ),
        component(
            layout,
            KUBE_APISERVER,
            apiserver,
            Readiness::ApiserverReadyz {
                kubeconfig: kubeconfig.clone(),
            },
        ),
        component(
            layout,
            KCM_SYSTEM,
            kcm_system,
            synced(bins, &["tokens", "namespace"], &[]),
        ),
    ];
    components.extend(controllers(
        layout,
        bins,
        &format!("https://127.0.0.1:{}", ports.apiserver),
        &certs.ca_cert,
        choices,
    ));
    components
}

/// The components that run beside an API server, local or a kind node's: the event gates
/// (to `apiserver`, whose CA certificate is `ca`), then the garbage collector's and the
/// replicaset controller's kube-controller-managers.
pub fn controllers(
    layout: &Layout,
    bins: &Binaries,
    apiserver: &str,
    ca: &std::path::Path,
    choices: Choices,
) -> Vec<Component> {
    let Choices {
        with_replicaset,
        gate,
        feature_gates,
        metrics_ports: [replicaset_port, gc_port],
        ..
    } = choices;
    let (replicaset_metrics, replicaset_flags) = serving(layout, KCM_REPLICASET, replicaset_port);
    let (gc_metrics, gc_flags) = serving(layout, KCM_GC, gc_port);
    let p = |path: &std::path::Path| path.display().to_string();
    let kubeconfig = layout.kubeconfig();
    // The replicaset controller and the garbage collector watch through their event gates
    // when there are gates.
    let through_gate = |gated: std::path::PathBuf| match gate {
        Some(_) => gated,
        None => kubeconfig.clone(),
    };
    let kcm_replicaset = kcm(
        bins,
        "replicaset",
        through_gate(layout.controller_kubeconfig()),
        feature_gates,
        replicaset_flags,
    );
    let kcm_gc = kcm(
        bins,
        "garbagecollector",
        through_gate(layout.gc_kubeconfig()),
        feature_gates,
        gc_flags,
    );
    let mut components = vec![];
    if let Some(gate) = gate {
        for (name, port) in [(EVENT_GATE, gate.port), (GC_GATE, gate.gc_port)] {
            let url = format!("http://127.0.0.1:{port}");
            components.push(component(
                layout,
                name,
                CommandLine {
                    program: gate.program.clone(),
                    args: vec![
                        "event-gate".to_string(),
                        format!("--listen=127.0.0.1:{port}"),
                        format!("--upstream={apiserver}"),
                        format!("--ca={}", p(ca)),
                        format!("--token-file={}", p(&layout.token_file())),
                        // Names the state directory on the command line, as every
                        // component's does: how a later `up` or `down` knows the process is
                        // this cluster's.
                        format!("--state-dir={}", p(layout.dir())),
                    ],
                    env: vec![],
                },
                Readiness::GateStatus { url },
            ));
        }
    }
    components.push(Component {
        metrics: Some(gc_metrics),
        ..component(
            layout,
            KCM_GC,
            kcm_gc,
            synced(
                bins,
                &["garbage collector"],
                &["\"synced garbage collector\""],
            ),
        )
    });
    if with_replicaset {
        components.push(Component {
            metrics: Some(replicaset_metrics),
            ..component(
                layout,
                KCM_REPLICASET,
                kcm_replicaset,
                synced(
                    bins,
                    &["ReplicaSet"],
                    &["\"Starting controller\" name=\"replicaset\""],
                ),
            )
        });
    }
    components
}

fn gates_flag(feature_gates: &FeatureGates) -> Option<String> {
    (!feature_gates.is_empty()).then(|| format!("--feature-gates={}", feature_gates.flag()))
}

/// A kube-controller-manager running only `controllers`.
fn kcm(
    bins: &Binaries,
    controllers: &str,
    kubeconfig: std::path::PathBuf,
    feature_gates: &FeatureGates,
    extra: Vec<String>,
) -> CommandLine {
    CommandLine {
        program: bins.kube_controller_manager(),
        args: [
            format!("--kubeconfig={}", kubeconfig.display()),
            format!("--controllers={controllers}"),
            "--leader-elect=false".to_string(),
            KCM_VERBOSITY.to_string(),
        ]
        .into_iter()
        // No HTTPS unless `extra` serves metrics.
        .chain(
            (!extra.iter().any(|a| a.starts_with("--secure-port=")))
                .then(|| "--secure-port=0".to_string()),
        )
        // The insecure port was removed in v1.24 (its flag with it); before, it is closed.
        .chain((bins.minor() < 24).then(|| "--port=0".to_string()))
        .chain(gates_flag(feature_gates))
        .chain(extra)
        .collect(),
        env: vec![],
    }
}

/// When a kube-controller-manager counts as started: its informers' caches synced. v1.20
/// names each informer wait in its log; later releases do not (see `readiness`).
fn synced(bins: &Binaries, names: &[&str], lines: &[&str]) -> Readiness {
    if bins.minor() < 21 {
        Readiness::CachesSynced {
            names: names.iter().map(|n| n.to_string()).collect(),
        }
    } else {
        Readiness::WaitsEnded {
            waits: names.len(),
            lines: lines.iter().map(|n| n.to_string()).collect(),
        }
    }
}

fn component(layout: &Layout, name: &str, command: CommandLine, readiness: Readiness) -> Component {
    Component {
        name: name.to_string(),
        command,
        readiness,
        log: layout.log(name),
        pid: None,
        copy_of: None,
        metrics: None,
    }
}

/// How long a component gets after SIGTERM before SIGKILL. kube-apiserver v1.20 waits up
/// to a fixed 60 s for open watch connections (the controller managers' informers) to end,
/// and has no flag to shorten that; its state is all in etcd, so it gets 2 s. The others
/// exit within a second.
pub fn stop_grace(component: &str) -> Duration {
    if component == KUBE_APISERVER {
        Duration::from_secs(2)
    } else {
        process::STOP_TIMEOUT
    }
}

/// Whether a component may run twice at once: only controller managers (etcd,
/// kube-apiserver and the event gate own their ports and data).
pub fn copyable(component: &Component) -> bool {
    is_controller_manager(&component.name)
}

/// Whether the component is a kube-controller-manager (they start together, after the
/// servers they talk to).
pub fn is_controller_manager(name: &str) -> bool {
    name.starts_with("kcm-")
}
