//! A local Kubernetes control plane (v1.20.2, v1.35.4 or v1.37.2): etcd, kube-apiserver and
//! three kube-controller-managers as plain processes (`rsmc cluster up|down|status`).
//!
//! The server binaries run fine as processes, which is cheaper than a kind node (a cluster is
//! ready in about 15 s) and needs no container engine; [`kind`] puts a real node (kubelet,
//! scheduler) in place of them when a scenario needs one. The
//! replicaset controller runs in a kube-controller-manager of its own (`kcm-replicaset`) so
//! that a conformance run can restart it, run a second one, or leave it out entirely to test
//! another implementation, while the namespace controller keeps running in `kcm-system`;
//! the garbage collector has one of its own too (`kcm-gc`), so that a run can hold its
//! watch. See [`components`] for the command lines, [`readiness`] for when
//! a component counts as started, and [`state`] for the state directory.
//!
//! Everything is synchronous (and works whether or not the caller runs a tokio runtime):
//! starting and stopping processes is, and the few HTTPS probes run on a runtime of their own.

pub mod audit;
pub mod binaries;
pub mod certs;
pub mod components;
mod error;
mod interrupt;
pub mod kind;
pub mod kubeconfig;
mod lifecycle;
mod local;
pub mod ports;
pub mod process;
pub mod readiness;
mod start;
pub mod state;

pub use error::{ClusterError, TAIL_LINES};
pub use lifecycle::{
    default_state_dir, down, status, up, ComponentStatus, DownReport, Status, UpOptions,
};
pub use local::LocalCluster;
pub use process::{spawn_logged, spawn_shell_logged, Supervised};
