//! The status a sync computes and whether it needs writing.
//!
//! pkg/controller/replicaset/replica_set_utils.go `calculateStatus` and the skip test at the
//! top of `updateReplicaSetStatus`.

use crate::object::{Pod, ReplicaFailure, ReplicaSet, ReplicaSetStatus};
use crate::profile::Semantics;

/// `calculateStatus`: counts over the claimed active pods; `terminating` are the claimed pods
/// being deleted ([upstream] only). A manage error sets `ReplicaFailure` when none is set (the
/// reason from the sign of the diff); an error-free sync removes it; a standing condition is
/// left as it is. `observedGeneration` is set by [`to_write`].
pub fn calculate(
    rs: &ReplicaSet,
    claimed: &[&Pod],
    terminating: usize,
    manage_error: bool,
    sem: &Semantics,
) -> ReplicaSetStatus {
    let mut status = rs.status.clone();
    let template = &rs.spec.template_labels;
    let fully_labeled = claimed
        .iter()
        .filter(|p| {
            template
                .iter()
                .all(|(k, v)| p.meta.labels.get(k) == Some(v))
        })
        .count();
    let ready = claimed.iter().filter(|p| p.is_ready()).count();
    let available = claimed
        .iter()
        .filter(|p| p.is_ready() && (rs.spec.min_ready_seconds == 0 || p.available))
        .count();
    if manage_error && status.replica_failure.is_none() {
        let diff = claimed.len() as i32 - rs.spec.replicas;
        // Upstream sets the condition with an empty reason when the diff is 0; a manage error
        // always comes with a non-zero diff, so the model folds that case into FailedDelete.
        status.replica_failure = Some(if diff < 0 {
            ReplicaFailure::FailedCreate
        } else {
            ReplicaFailure::FailedDelete
        });
    } else if !manage_error {
        status.replica_failure = None;
    }
    status.replicas = claimed.len() as i32;
    status.fully_labeled_replicas = fully_labeled as i32;
    status.ready_replicas = ready as i32;
    status.available_replicas = available as i32;
    status.terminating_replicas = sem.terminating_replicas.then_some(terminating as i32);
    status
}

/// `updateReplicaSetStatus`: `None` when the write is skipped (nothing changed and the
/// generation was already observed), else the status to write with `observedGeneration` set
/// to the generation of the cached object the sync acted on.
pub fn to_write(rs: &ReplicaSet, mut new: ReplicaSetStatus) -> Option<ReplicaSetStatus> {
    let old = &rs.status;
    let unchanged = old.replicas == new.replicas
        && old.fully_labeled_replicas == new.fully_labeled_replicas
        && old.ready_replicas == new.ready_replicas
        && old.available_replicas == new.available_replicas
        && old.terminating_replicas == new.terminating_replicas
        && rs.meta.generation == old.observed_generation
        && old.replica_failure == new.replica_failure;
    if unchanged {
        return None;
    }
    new.observed_generation = rs.meta.generation;
    Some(new)
}
