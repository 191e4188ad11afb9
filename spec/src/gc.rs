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
//! such a run breaks, and what the oracle names when a recording shows one. A v1.20.2 cluster
//! took the first window unforced: upstream's TestGeneralPodAdoption with its StatefulSet,
//! the collector's events not held, deleted the pod the ReplicaSet had just adopted beside
//! the dangling StatefulSet reference it had classified alone (the book's findings); the
//! suite's scenario now holds the collector until the adoption has settled, as upstream's
//! test runs none.
//!
//! The exception is orphaning. `orphanDependents` patches every dependent from a goroutine of
//! its own and `attemptToOrphanWorker` removes the `orphan` finalizer after all of them
//! returned; other actors' writes land between those patches (a v1.20 cluster shows the
//! controller's status write for the deleting ReplicaSet between two of them). So each patch
//! is a step ([`GcWork::OrphanDependent`]), in any order, and the finalizer removal
//! ([`GcWork::Orphan`]) is enabled once the GC's view shows no dependent left.

use crate::api::{ApiServer, DeleteOptions, OwnerRefPatch, Propagation, Request, View};
use crate::object::{
    other_owner, Finalizer, OtherOwner, OwnerKind, OwnerReference, Pod, ReplicaSet, Uid,
};
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

/// The work items the GC's view gives rise to. An owner of another kind is looked up in
/// `others` (live; see [`crate::object::other_owner`]): a dependent whose owner of another
/// kind is gone is an item at once, as after the graph builder's virtual node for it turned
/// out absent.
pub fn work_items(rs: &View<ReplicaSet>, pods: &View<Pod>, others: &[OtherOwner]) -> Vec<GcWork> {
    let mut items = Vec::new();
    for pod in pods.values() {
        // attemptToDeleteItem skips an object already being deleted (it waits for it to go).
        if pod.meta.is_deleting() {
            continue;
        }
        let interesting = pod.meta.owner_references.iter().any(|r| match r.kind {
            OwnerKind::ReplicaSet => {
                owner_in_view(rs, &r.name, r.uid).is_none_or(deleting_dependents)
            }
            OwnerKind::Other(_) => !other_owner::exists(others, r),
        });
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

/// `isDangling` and the classification of what it found: the owner looked up live by kind
/// and name, dangling if absent or of another UID, waiting if it is deleting its dependents
/// in the foreground (an owner of another kind is deleted at once, so never waits), solid
/// otherwise.
fn classify(api: &ApiServer, r: &OwnerReference) -> OwnerState {
    if let OwnerKind::Other(_) = r.kind {
        return if other_owner::exists(&api.others, r) {
            OwnerState::Solid
        } else {
            OwnerState::Dangling
        };
    }
    match api.replicasets.get(&r.name) {
        Some(o) if o.meta.uid == r.uid && deleting_dependents(o) => OwnerState::Waiting,
        Some(o) if o.meta.uid == r.uid => OwnerState::Solid,
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
                .map(|r| (r.uid, classify(api, r)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{labels, LabelSelector, OtherKind, OwnerReference};

    fn configmap() -> OtherKind {
        OtherKind::new("v1", "ConfigMap")
    }

    /// An API server with `frontend`, the ConfigMap `keeper` and a pod `p` whose references
    /// `refs` makes from their UIDs: the ReplicaSet's, the ConfigMap's.
    fn cluster(refs: impl Fn(Uid, Uid) -> Vec<OwnerReference>) -> ApiServer {
        let mut api = ApiServer::default();
        let tier = labels(&[("tier", "frontend")]);
        let rs = ReplicaSet::new(
            "frontend",
            1,
            LabelSelector::match_labels(&[("tier", "frontend")]),
            tier.clone(),
        );
        api.apply(&Request::CreateReplicaSet(rs)).unwrap();
        api.apply(&Request::CreateOther {
            kind: configmap(),
            name: "keeper".into(),
        })
        .unwrap();
        let (rs_uid, cm_uid) = (api.replicasets["frontend"].meta.uid, api.others[0].uid);
        let mut pod = Pod::new("p", tier);
        pod.meta.owner_references = refs(rs_uid, cm_uid);
        api.apply(&Request::CreatePod(pod)).unwrap();
        api
    }

    fn keeper(uid: Uid, controller: bool) -> OwnerReference {
        OwnerReference {
            kind: OwnerKind::Other(configmap()),
            name: "keeper".into(),
            uid,
            controller,
            block_owner_deletion: false,
        }
    }

    fn delete_keeper(api: &mut ApiServer) {
        api.apply(&Request::DeleteOther {
            kind: configmap(),
            name: "keeper".into(),
        })
        .unwrap();
    }

    /// What the collector does with `p`: its work items and their requests.
    fn decided(api: &ApiServer) -> Vec<Option<Request>> {
        work_items(&api.replicasets, &api.pods, &api.others)
            .iter()
            .map(|w| request(w, api, &api.pods))
            .collect()
    }

    /// A pod whose only owner is a ConfigMap is left while the ConfigMap lives, and deleted
    /// once it is gone, or there again under another UID (`isDangling` compares the UID).
    #[test]
    fn a_pod_of_a_gone_owner_of_another_kind_is_deleted() {
        let mut api = cluster(|_, cm| vec![keeper(cm, true)]);
        assert_eq!(decided(&api), vec![]);
        delete_keeper(&mut api);
        api.apply(&Request::CreateOther {
            kind: configmap(),
            name: "keeper".into(),
        })
        .unwrap();
        assert!(matches!(
            decided(&api).as_slice(),
            [Some(Request::DeletePod { name, .. })] if name == "p"
        ));
    }

    /// A pod the ReplicaSet controls that also names the ConfigMap: the ConfigMap's deletion
    /// leaves the pod, and the collector patches the dangling reference away
    /// (`attemptToDeleteItem` with a solid owner left).
    #[test]
    fn a_dangling_reference_to_another_kind_is_patched_away_while_a_replicaset_holds_the_pod() {
        let mut api = cluster(|rs, cm| {
            vec![
                OwnerReference::controller_of("frontend", rs),
                keeper(cm, false),
            ]
        });
        let cm = api.others[0].uid;
        delete_keeper(&mut api);
        assert!(matches!(
            decided(&api).as_slice(),
            [Some(Request::PatchPodOwnerReferences { patch: OwnerRefPatch::Remove(uids), .. })] if *uids == vec![cm]
        ));
    }

    /// A live ConfigMap keeps a pod whose ReplicaSet is gone: its reference is patched away
    /// and the pod lives on, held by the ConfigMap.
    #[test]
    fn a_live_owner_of_another_kind_keeps_a_pod_whose_replicaset_is_gone() {
        let mut api = cluster(|rs, cm| {
            vec![
                OwnerReference::controller_of("frontend", rs),
                keeper(cm, false),
            ]
        });
        let rs = api.replicasets["frontend"].meta.uid;
        api.apply(&Request::DeleteReplicaSet {
            name: "frontend".into(),
            options: DeleteOptions::default(),
        })
        .unwrap();
        assert!(api.replicasets.is_empty());
        assert!(matches!(
            decided(&api).as_slice(),
            [Some(Request::PatchPodOwnerReferences { patch: OwnerRefPatch::Remove(uids), .. })] if *uids == vec![rs]
        ));
    }
}
