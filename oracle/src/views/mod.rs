//! What a reader sees of objects, as kubectl shows them.
//!
//! - [`render`]: the `kubectl get` tables (the spec's, re-exported so that the oracle's
//!   callers keep one path) and the tables of a trace's objects.
//! - [`side_by_side`]: two such views beside each other with the differing lines marked, up
//!   to generated names (what a divergence shows of the model and the cluster).
//! - [`trace_text`]: a trace step by step, each step with the cluster after it.

pub mod render;
pub mod side_by_side;
pub mod trace_text;
