//! What "the cluster has converged" means: the state every execution must reach, and then
//! never leave, once the environment has made its last move.
//!
//! The conditions speak only of the API server's objects — what a user sees with `kubectl` —
//! never of caches, queues or expectations, which are the means and not the goal. Each is a
//! named [`Condition`], so that a convergence counterexample of `rsmc check` and a settle
//! point the oracle rejects (`rsmc_oracle::judge`) say which one the cluster broke, in the
//! same words:
//!
//! - [`Condition::DeletionsFinished`]: no ReplicaSet is still being deleted, and no active pod
//!   is controlled by an owner that is gone, a ReplicaSet or one of another kind (by UID: an
//!   owner recreated under the same name is another owner). Background and Foreground
//!   deletions have collected their pods, Orphan deletions have removed the reference.
//! - [`Condition::OrphansAdopted`]: no active pod without a controller matches a live
//!   ReplicaSet's selector: matching orphans have been adopted (by exactly one owner, since a
//!   pod has at most one controller).
//! - [`Condition::ReplicasReached`]: each live ReplicaSet controls exactly `spec.replicas`
//!   active pods, and every pod it controls matches its selector (a pod that stopped matching
//!   has been released).
//! - [`Condition::StatusCountsPods`]: `status.replicas` and `status.readyReplicas` count those
//!   pods.
//! - [`Condition::GenerationObserved`]: `status.observedGeneration` is the current generation
//!   (the last spec change was acted on).
//!
//! Pods being deleted are left out throughout: whether the kubelet finishes a graceful
//! deletion is the environment's move, not the controllers'. The order above is the order a
//! state is judged in: a cause before its consequences (an orphan left unadopted also leaves
//! its ReplicaSet short of replicas, and a short ReplicaSet's status may count right).
//!
//! That Orphan kept its dependents and Foreground removed them before the owner went away are
//! facts about the way there, checked as safety properties (`model::properties`).

use crate::api::log::View;
use crate::model::State;
use crate::object::{OtherOwner, OwnerKind, Pod, ReplicaSet, Uid};
use std::collections::BTreeSet;

/// One condition of convergence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Condition {
    DeletionsFinished,
    OrphansAdopted,
    ReplicasReached,
    StatusCountsPods,
    GenerationObserved,
}

/// A condition a state breaks, and how, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unconverged {
    pub condition: Condition,
    pub reason: String,
}

impl std::fmt::Display for Unconverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.reason, self.condition.name())
    }
}

impl Condition {
    /// Every condition, in the order a state is judged.
    pub const ALL: [Condition; 5] = [
        Condition::DeletionsFinished,
        Condition::OrphansAdopted,
        Condition::ReplicasReached,
        Condition::StatusCountsPods,
        Condition::GenerationObserved,
    ];

    /// Whether it speaks of a ReplicaSet's status: a status write alone can break or mend
    /// it (the other conditions speak of the pods and owners, which a status write leaves).
    pub fn of_status(self) -> bool {
        matches!(
            self,
            Condition::StatusCountsPods | Condition::GenerationObserved
        )
    }

    /// The name a report gives it.
    pub fn name(self) -> &'static str {
        match self {
            Condition::DeletionsFinished => {
                "settled: deletions have finished and no pod references a gone owner"
            }
            Condition::OrphansAdopted => "settled: no orphan matches a live ReplicaSet",
            Condition::ReplicasReached => {
                "settled: each ReplicaSet controls spec.replicas matching pods"
            }
            Condition::StatusCountsPods => "settled: status counts the pods",
            Condition::GenerationObserved => "settled: status observes the latest generation",
        }
    }

    /// How the cluster of `replicasets`, `pods` and the owners of other kinds `others` breaks
    /// this condition, if it does.
    pub fn broken(
        self,
        replicasets: &View<ReplicaSet>,
        pods: &View<Pod>,
        others: &[OtherOwner],
    ) -> Option<String> {
        let active = || pods.values().filter(|p| p.is_active()).map(|p| &**p);
        match self {
            Condition::DeletionsFinished => {
                if let Some(rs) = replicasets.values().find(|r| r.meta.is_deleting()) {
                    return Some(format!("rs/{} is still being deleted", rs.meta.name));
                }
                let live: BTreeSet<Uid> = replicasets
                    .values()
                    .map(|r| r.meta.uid)
                    .chain(others.iter().map(|o| o.uid))
                    .collect();
                active().find_map(|pod| {
                    let owner = pod.meta.controller_ref()?;
                    let kind = match &owner.kind {
                        OwnerKind::ReplicaSet => "rs".to_string(),
                        other => other.kind().to_lowercase(),
                    };
                    (!live.contains(&owner.uid)).then(|| {
                        format!(
                            "pod/{} still references {kind}/{} (uid {}), which is gone",
                            pod.meta.name, owner.name, owner.uid
                        )
                    })
                })
            }
            Condition::OrphansAdopted => active()
                .filter(|pod| pod.meta.controller_ref().is_none())
                .find_map(|pod| {
                    let adopter = replicasets.values().find(|r| {
                        !r.meta.is_deleting() && r.spec.selector.matches(&pod.meta.labels)
                    })?;
                    Some(format!(
                        "pod/{} has no controller but matches rs/{}",
                        pod.meta.name, adopter.meta.name
                    ))
                }),
            Condition::ReplicasReached => live(replicasets).find_map(|rs| {
                let controlled = controlled(rs, active());
                let name = &rs.meta.name;
                if let Some(stray) = controlled
                    .iter()
                    .find(|p| !rs.spec.selector.matches(&p.meta.labels))
                {
                    return Some(format!(
                        "rs/{name} still controls pod/{}, which no longer matches its selector",
                        stray.meta.name
                    ));
                }
                let n = controlled.len() as i32;
                (n != rs.spec.replicas).then(|| {
                    format!(
                        "rs/{name} controls {n} active pods, wants {}",
                        rs.spec.replicas
                    )
                })
            }),
            Condition::StatusCountsPods => live(replicasets).find_map(|rs| {
                let controlled = controlled(rs, active());
                let n = controlled.len() as i32;
                let ready = controlled.iter().filter(|p| p.is_ready()).count() as i32;
                let status = &rs.status;
                (status.replicas != n || status.ready_replicas != ready).then(|| {
                    format!(
                        "rs/{} status says replicas {}, ready {}; it controls {n} active pods, {ready} ready",
                        rs.meta.name, status.replicas, status.ready_replicas
                    )
                })
            }),
            Condition::GenerationObserved => live(replicasets).find_map(|rs| {
                (rs.status.observed_generation != rs.meta.generation).then(|| {
                    format!(
                        "rs/{} status has observedGeneration {}, the generation is {}",
                        rs.meta.name, rs.status.observed_generation, rs.meta.generation
                    )
                })
            }),
        }
    }
}

/// The ReplicaSets not being deleted.
fn live(replicasets: &View<ReplicaSet>) -> impl Iterator<Item = &ReplicaSet> {
    replicasets
        .values()
        .filter(|r| !r.meta.is_deleting())
        .map(|r| &**r)
}

/// The pods of `active` that `rs` controls (by UID).
fn controlled<'a>(rs: &ReplicaSet, active: impl Iterator<Item = &'a Pod>) -> Vec<&'a Pod> {
    active
        .filter(|p| {
            p.meta
                .controller_ref()
                .is_some_and(|r| r.uid == rs.meta.uid)
        })
        .collect()
}

/// Every condition the cluster of `replicasets`, `pods` and `others` breaks, in judging
/// order.
pub fn broken_conditions(
    replicasets: &View<ReplicaSet>,
    pods: &View<Pod>,
    others: &[OtherOwner],
) -> Vec<Unconverged> {
    Condition::ALL
        .into_iter()
        .filter_map(|condition| {
            let reason = condition.broken(replicasets, pods, others)?;
            Some(Unconverged { condition, reason })
        })
        .collect()
}

/// The first condition `state` breaks, or `None` when it has converged.
pub fn unconverged(state: &State) -> Option<Unconverged> {
    Condition::ALL.into_iter().find_map(|condition| {
        let reason =
            condition.broken(&state.api.replicasets, &state.api.pods, &state.api.others)?;
        Some(Unconverged { condition, reason })
    })
}

/// Whether `state` has converged.
pub fn converged(state: &State) -> bool {
    unconverged(state).is_none()
}
