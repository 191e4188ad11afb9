//! # rsmc-spec
//!
//! The executable semantics of the Kubernetes ReplicaSet controller and the machinery around
//! it, and a stateright model that interleaves them.
//!
//! - [`object`]: ReplicaSets, pods, labels and selectors, owner references.
//! - [`api`]: the API server's rules (validation, preconditions, deletion with propagation
//!   policies and finalizers) and its ordered event log.
//! - [`controller`]: the controller's queue, expectations, event handlers and sync.
//! - [`gc`]: the garbage collector's decisions.
//! - [`bugs`]: the catalogue of upstream bugs, as switches, and of open upstream races.
//! - [`profile`]: the `k8s-1.20` and `upstream` behaviour switches.
//! - [`config`]: bounds and enabled environment actions, with presets.
//! - [`render`]: kubectl-style tables of the API server's objects.
//! - [`model`]: the stateright model and its safety properties.
//! - [`liveness`]: convergence under weak fairness, checked on the whole state graph.
//! - [`budget`]: the state and memory limits every search stops at instead of running out.

pub mod api;
pub mod budget;
pub mod bugs;
pub mod config;
pub mod contract;
pub mod controller;
pub mod gates;
pub mod gc;
pub mod input;
pub mod liveness;
pub mod model;
pub mod object;
pub mod profile;
pub mod render;
