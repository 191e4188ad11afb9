//! kubectl-style rendering: the spec's tables (`rsmc_spec::render`, re-exported here so the
//! oracle's callers keep one path), and the tables of a trace's objects.

pub use rsmc_spec::render::*;

use rsmc_spec::api::ApiServer;

/// The wide tables of a trace's objects: `kubectl get rs -o wide` and `kubectl get pods -o
/// wide --show-labels` style, with owners and finalizers, as a counterexample needs them.
pub fn tables(objects: &crate::trace::Objects) -> String {
    wide_tables(&ApiServer {
        replicasets: objects.replicasets.clone(),
        pods: objects.pods.clone(),
        others: objects.others.clone(),
        ..ApiServer::default()
    })
}
