//! rsmc-oracle: judging observed ReplicaSet behaviour against the spec.
//!
//! - [`render`]: kubectl-style tables of model states (`kubectl get rs`, `get pods
//!   --show-labels`, and wide views with owners and finalizers), the spec's own re-exported,
//!   and of a trace's objects.
//! - [`trace`]: the trace file format (`rsmc-trace/v1`) that `rsmc check` writes for every
//!   violation.
//! - [`trace_text`]: a trace as text, the tables after every step.

pub mod compare;
pub mod cover;
pub mod delete_claims;
pub mod error;
pub mod explore;
pub mod import;
pub mod judge;
pub mod manifest;
pub mod observed;
pub mod prepared;
pub mod replay;
pub mod scenario;
pub mod trace;
pub mod views;
pub mod yaml;
