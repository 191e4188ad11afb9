//! The garbage collector's decisions.
//!
//! pkg/controller/garbagecollector/garbagecollector.go: the graph builder turns its own
//! (stale) informer view into work items; `attemptToDeleteItem`, `processDeletingDependentsItem`
//! and `attemptToOrphanWorker` then decide with live GETs (`isDangling`, `getObject`). The model
//! derives the work items from the GC's view and performs each item's live check and writes as
//! one atomic step: the owner of a dependent cannot come back under the same UID, so nothing
//! the check relies on can change in between.
//!
//! Not quite: the dependent's own references can. `attemptToDeleteItem` GETs the pod,
//! classifies its references, and only then sends the DELETE; a client that gives the pod a
//! live owner in between (kubernetes/kubernetes#114603: patch the reference to a new owner,
//! then delete the old one) has it deleted all the same, since v1.20.2's `deleteObject`
//! preconditions the UID only. PR #132632 (v1.34) added the GET's resourceVersion as a
//! precondition, retried without it when only other fields changed, which leaves a narrower
//! window after the retry's GET. The atomic step hides both windows: the model cannot take
//! them until it splits the decision from the delete (and a scenario cannot force them until
//! the runner holds requests at `gc-gate`, which today holds only the collector's watch
//! events). [`crate::model::properties::GC_SPARES_PODS_OTHER_OWNERS_HOLD`] is the property
//! such a run breaks, and what the oracle names when a recording shows one.
//!
//! The exception is orphaning. `orphanDependents` patches every dependent from a goroutine of
//! its own and `attemptToOrphanWorker` removes the `orphan` finalizer after all of them
//! returned; other actors' writes land between those patches (a v1.20 cluster shows the
//! controller's status write for the deleting ReplicaSet between two of them). So each patch
//! is a step ([`GcWork::OrphanDependent`]), in any order, and the finalizer removal
//! ([`GcWork::Orphan`]) is enabled once the GC's view shows no dependent left.

use crate::api::{ApiServer, DeleteOptions, OwnerRefPatch, Propagation, Request, View};
use crate::object::{Finalizer, Pod, ReplicaSet, Uid};
use serde::{Deserialize, Serialize};

/// A work item of the garbage collector.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum GcWork {
    /// `attemptToDeleteItem` on a pod whose owner looks absent, or is deleting its dependents.
    AttemptToDelete { pod: String, uid: Uid },
    /// `processDeletingDependentsItem` on a ReplicaSet with the `foregroundDeletion` finalizer.
    DeletingDependents { rs: String, uid: Uid },
    /// One goroutine of `orphanDependents`: remove the owner's reference from one dependent.
    OrphanDependent {
        rs: String,
        rs_uid: Uid,
        pod: String,
        uid: Uid,
    },
    /// The end of `attemptToOrphanWorker` on a ReplicaSet with the `orphan` finalizer: every
    /// dependent in the GC's view has been orphaned, remove the finalizer.
    Orphan { rs: String, uid: Uid },
}

/// A work item in words, as the Explorer and the trace text show a step.
impl std::fmt::Display for GcWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GcWork::AttemptToDelete { pod, .. } => {
                write!(f, "deletes pod/{pod}, whose owner is gone or deleting its dependents")
            }
            GcWork::DeletingDependents { rs, .. } => write!(
                f,
                "finishes the foreground deletion of replicaset/{rs} (removes its foregroundDeletion finalizer)"
            ),
            GcWork::OrphanDependent { rs, pod, .. } => {
                write!(f, "orphans pod/{pod}: removes its reference to replicaset/{rs}")
            }
            GcWork::Orphan { rs, .. } => write!(
                f,
                "finishes orphaning the dependents of replicaset/{rs} (removes its orphan finalizer)"
            ),
        }
    }
}

fn owner_in_view<'a>(rs: &'a View<ReplicaSet>, name: &str, uid: Uid) -> Option<&'a ReplicaSet> {
    rs.get(name).map(|o| &**o).filter(|o| o.meta.uid == uid)
}

fn deleting_dependents(rs: &ReplicaSet) -> bool {
    rs.meta.is_deleting() && rs.meta.has_finalizer(Finalizer::ForegroundDeletion)
}

/// The work items the GC's view gives rise to.
pub fn work_items(rs: &View<ReplicaSet>, pods: &View<Pod>) -> Vec<GcWork> {
    let mut items = Vec::new();
    for pod in pods.values() {
        // attemptToDeleteItem skips an object already being deleted (it waits for it to go).
        if pod.meta.is_deleting() {
            continue;
        }
        let interesting = pod
            .meta
            .owner_references
            .iter()
            .any(|r| owner_in_view(rs, &r.name, r.uid).is_none_or(deleting_dependents));
        if interesting {
            items.push(GcWork::AttemptToDelete {
                pod: pod.meta.name.clone(),
                uid: pod.meta.uid,
            });
        }
    }
    for owner in rs.values().filter(|o| o.meta.is_deleting()) {
        let (name, uid) = (owner.meta.name.clone(), owner.meta.uid);
        if owner.meta.has_finalizer(Finalizer::ForegroundDeletion) {
            items.push(GcWork::DeletingDependents {
                rs: name.clone(),
                uid,
            });
        }
        if owner.meta.has_finalizer(Finalizer::Orphan) {
            let dependents: Vec<&Pod> = pods
                .values()
                .map(|p| &**p)
                .filter(|p| p.meta.owner_references.iter().any(|r| r.uid == uid))
                .collect();
            if dependents.is_empty() {
                items.push(GcWork::Orphan { rs: name, uid });
            } else {
                items.extend(dependents.into_iter().map(|p| GcWork::OrphanDependent {
                    rs: name.clone(),
                    rs_uid: uid,
                    pod: p.meta.name.clone(),
                    uid: p.meta.uid,
                }));
            }
        }
    }
    items
}

/// How a dependent's owner reference classifies live (`classifyReferences`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnerState {
    Solid,
    Dangling,
    Waiting,
}

fn classify(api: &ApiServer, name: &str, uid: Uid) -> OwnerState {
    match api.replicasets.get(name) {
        Some(o) if o.meta.uid == uid && deleting_dependents(o) => OwnerState::Waiting,
        Some(o) if o.meta.uid == uid => OwnerState::Solid,
        _ => OwnerState::Dangling,
    }
}

/// The request a work item leads to, given the live state and the GC's view; `None` when the
/// item turns out to need nothing. Every work item is one request (orphaning included, see
/// the module's notes), so a GC step is one write.
pub fn request(item: &GcWork, api: &ApiServer, view_pods: &View<Pod>) -> Option<Request> {
    match item {
        GcWork::AttemptToDelete { pod, uid } => {
            let latest = api.pods.get(pod).filter(|p| p.meta.uid == *uid)?;
            let classes: Vec<(Uid, OwnerState)> = latest
                .meta
                .owner_references
                .iter()
                .map(|r| (r.uid, classify(api, &r.name, r.uid)))
                .collect();
            if classes.is_empty() {
                return None;
            }
            let not_solid: Vec<Uid> = classes
                .iter()
                .filter(|(_, c)| *c != OwnerState::Solid)
                .map(|(u, _)| *u)
                .collect();
            if classes.iter().any(|(_, c)| *c == OwnerState::Solid) {
                if not_solid.is_empty() {
                    return None;
                }
                return Some(Request::PatchPodOwnerReferences {
                    name: pod.clone(),
                    uid: *uid,
                    patch: OwnerRefPatch::Remove(not_solid),
                });
            }
            // Every owner is dangling or waiting; a pod has no dependents of its own, so the
            // policy is Background (no GC finalizer on pods in this model).
            Some(Request::DeletePod {
                name: pod.clone(),
                options: DeleteOptions {
                    propagation: Some(Propagation::Background),
                    uid_precondition: Some(*uid),
                    resource_version_precondition: None,
                },
            })
        }
        GcWork::DeletingDependents { rs, uid } => {
            let live = api.replicasets.get(rs).filter(|o| o.meta.uid == *uid);
            if !live.is_some_and(|o| deleting_dependents(o)) {
                return None;
            }
            let blocking = view_pods.values().any(|p| {
                p.meta
                    .owner_references
                    .iter()
                    .any(|r| r.uid == *uid && r.block_owner_deletion)
            });
            if blocking {
                return None;
            }
            Some(Request::RemoveFinalizer {
                name: rs.clone(),
                finalizer: Finalizer::ForegroundDeletion,
            })
        }
        GcWork::OrphanDependent {
            rs,
            rs_uid,
            pod,
            uid,
        } => {
            if !orphaning(api, rs, *rs_uid) {
                return None;
            }
            // A patch that removes nothing is no write at all (the API server skips an
            // unchanged object); the pod was orphaned already or is gone.
            let referenced = api.pods.get(pod).is_some_and(|p| {
                p.meta.uid == *uid && p.meta.owner_references.iter().any(|r| r.uid == *rs_uid)
            });
            if !referenced {
                return None;
            }
            Some(Request::PatchPodOwnerReferences {
                name: pod.clone(),
                uid: *uid,
                patch: OwnerRefPatch::Remove(vec![*rs_uid]),
            })
        }
        GcWork::Orphan { rs, uid } => {
            if !orphaning(api, rs, *uid) {
                return None;
            }
            Some(Request::RemoveFinalizer {
                name: rs.clone(),
                finalizer: Finalizer::Orphan,
            })
        }
    }
}

/// Whether the ReplicaSet `name` with this UID still waits for its dependents to be orphaned.
fn orphaning(api: &ApiServer, name: &str, uid: Uid) -> bool {
    api.replicasets
        .get(name)
        .is_some_and(|o| o.meta.uid == uid && o.meta.has_finalizer(Finalizer::Orphan))
}
