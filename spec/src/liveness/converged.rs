//! What "the cluster has converged" means: the state every execution must reach, and then
//! never leave, once the environment has made its last move.
//!
//! The conditions speak only of the API server's objects — what a user sees with `kubectl` —
//! never of caches, queues or expectations, which are the means and not the goal.
//!
//! - Each live ReplicaSet (no deletionTimestamp) controls exactly `spec.replicas` active pods,
//!   every pod it controls matches its selector (a pod that stopped matching has been
//!   released), and its status says so: `status.replicas` and `status.readyReplicas` count
//!   those pods and `status.observedGeneration` is the current generation.
//! - No ReplicaSet is still being deleted, and no active pod references a ReplicaSet that is
//!   gone (by UID: a ReplicaSet recreated under the same name is another owner). Background
//!   and Foreground deletions have collected their pods, Orphan deletions have removed the
//!   reference. Pods being deleted are left out: whether the kubelet finishes a graceful
//!   deletion is the environment's move, not the controllers'.
//! - No active pod without a controller matches a live ReplicaSet's selector: matching orphans
//!   have been adopted (by exactly one owner, since a pod has at most one controller).
//!
//! That Orphan kept its dependents and Foreground removed them before the owner went away are
//! facts about the way there, checked as safety properties (`model::properties`).

use crate::model::State;
use crate::object::{Pod, ReplicaSet, Uid};
use std::collections::BTreeSet;

/// The first reason `state` has not converged, in words, or `None` when it has.
pub fn unconverged(state: &State) -> Option<String> {
    let api = &state.api;
    let live: BTreeSet<Uid> = api.replicasets.values().map(|r| r.meta.uid).collect();
    for rs in api.replicasets.values() {
        if let Some(reason) = replicaset_unconverged(rs, api.pods.values().map(|p| &**p)) {
            return Some(reason);
        }
    }
    for pod in api.pods.values().filter(|p| p.is_active()) {
        match pod.meta.controller_ref() {
            Some(owner) if !live.contains(&owner.uid) => {
                return Some(format!(
                    "pod/{} still references rs/{} (uid {}), which is gone",
                    pod.meta.name, owner.name, owner.uid
                ));
            }
            Some(_) => {}
            None => {
                let adopter = api
                    .replicasets
                    .values()
                    .find(|r| !r.meta.is_deleting() && r.spec.selector.matches(&pod.meta.labels));
                if let Some(rs) = adopter {
                    return Some(format!(
                        "pod/{} has no controller but matches rs/{}",
                        pod.meta.name, rs.meta.name
                    ));
                }
            }
        }
    }
    None
}

/// Whether `state` has converged.
pub fn converged(state: &State) -> bool {
    unconverged(state).is_none()
}

/// Why one ReplicaSet has not converged, if it has not.
fn replicaset_unconverged<'a>(
    rs: &ReplicaSet,
    pods: impl Iterator<Item = &'a Pod>,
) -> Option<String> {
    let name = &rs.meta.name;
    if rs.meta.is_deleting() {
        return Some(format!("rs/{name} is still being deleted"));
    }
    let controlled: Vec<&Pod> = pods
        .filter(|p| p.is_active())
        .filter(|p| {
            p.meta
                .controller_ref()
                .is_some_and(|r| r.uid == rs.meta.uid)
        })
        .collect();
    if let Some(stray) = controlled
        .iter()
        .find(|p| !rs.spec.selector.matches(&p.meta.labels))
    {
        return Some(format!(
            "rs/{name} still controls pod/{}, which no longer matches its selector",
            stray.meta.name
        ));
    }
    let active = controlled.len() as i32;
    let ready = controlled.iter().filter(|p| p.is_ready()).count() as i32;
    if active != rs.spec.replicas {
        return Some(format!(
            "rs/{name} controls {active} active pods, wants {}",
            rs.spec.replicas
        ));
    }
    let status = &rs.status;
    if status.replicas != active
        || status.ready_replicas != ready
        || status.observed_generation != rs.meta.generation
    {
        return Some(format!(
            "rs/{name} status says replicas {}, ready {}, observedGeneration {}; the cluster has {active}, {ready}, generation {}",
            status.replicas, status.ready_replicas, status.observed_generation, rs.meta.generation
        ));
    }
    None
}
