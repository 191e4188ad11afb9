//! rsmc-conformance: replaying rsmc scenarios against real Kubernetes clusters (a local
//! etcd + kube-apiserver + kube-controller-manager, kind, or any kubeconfig) and judging what
//! they did with the oracle.
//!
//! - [`control_plane`]: the local control plane (`rsmc cluster up|down|status`).
//! - [`run`]: one scenario in a fresh namespace: [`steps`] taken with kube-rs (the
//!   scheduler's and the kubelet's part by [`kubelet`]), watch events recorded by
//!   [`recorder`], settle points found by [`settle`], what a user sees taken by [`kubectl`],
//!   and the oracle's verdict.
//! - [`controller`]: the implementation under test and the steps that act on its processes.
//! - [`event_gate`]: the proxy in front of the API server that holds a type's watch events
//!   from the controller under test (`hold` / `release` steps).
//! - [`suite`]: many scenarios side by side, and the report.
//! - [`api_error`]: kube-rs errors in a user's words.

pub mod api_error;
pub mod await_step;
pub mod control_plane;
pub mod controller;
pub mod event_gate;
pub mod kubectl;
pub mod kubelet;
pub mod mark;
pub mod monitor;
pub mod precondition;
pub mod recorder;
pub mod run;
pub mod service_account;
pub mod settle;
pub mod steps;
pub mod suite;
pub mod tls;
pub mod workqueues;
