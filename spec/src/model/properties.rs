//! The properties the model checks, and the ghost bookkeeping behind the ones that speak of
//! actions (an adoption, a create, a delete) rather than of a state.
//!
//! Each property's doc comment says which real failure it guards against. Safety properties
//! are stateright `always` properties; coverage properties are `sometimes` properties that
//! show the configuration really reaches the situations the safety properties are about.

use super::state::State;
use super::RsModel;
use crate::api::{ApiServer, DeleteOptions, OwnerRefPatch, Request, View};
use crate::controller::sync::Phase;
use crate::object::{
    other_owner, Finalizer, OtherOwner, OwnerKind, OwnerReference, Pod, ReplicaSet, Uid,
};
use stateright::Property;

/// No pod ever has two controller references. Two controllers would both count, scale and
/// delete the same pod. The API server's owner-reference validation is what enforces this;
/// the property checks the model's API server keeps it under every interleaving.
pub const SINGLE_CONTROLLER: &str = "at most one controller reference per pod";

/// No two live ReplicaSets count the same pod in their status at the same time (per their
/// last status writes). Double counting means one of them believes it has replicas it does
/// not control, and under-creates. A ReplicaSet being deleted is not live here: it never
/// creates, so its count cannot lead to under-creation, and its status goes stale by design
/// — with Orphan the GC, not a sync, removes its pods' references, and a matching ReplicaSet
/// may adopt and count them before the deleting one syncs again (upstream behaves the same;
/// found by the model on the `catalogue/ignore-controller-ref-removal` configuration).
pub const NO_DOUBLE_COUNT: &str = "no pod counted by two live ReplicaSets";

/// An adoption only lands for a ReplicaSet that exists with the UID that adopts, is not being
/// deleted, and whose selector matches the pod's labels at that moment. Otherwise the pod is
/// owned by a ghost (and collected by the GC: #42639), or by an owner it does not belong to.
pub const ADOPTION_RULES: &str = "adoption only by a live, matching owner not being deleted";

/// A pod that a live ReplicaSet controls is never taken by another: a sync claims orphans and
/// its own pods only (upstream `ClaimObject`: a pod whose controller is another UID is left
/// alone). The API server cannot refuse a patch that replaces a controller reference, so the
/// controller alone keeps this; before controller references existed (#2210, #24946)
/// overlapping ReplicaSets passed pods back and forth.
pub const NO_STEALING: &str = "a pod a live ReplicaSet controls is never taken by another";

/// No over-creation. When a create for ReplicaSet R commits, R controls at most `r` active
/// pods including the new one, where `r` is the spec.replicas of the cached R the issuing sync
/// acted on. This is the exact bound: a sync only creates up to `r` minus the pods it counted,
/// and its expectations keep later syncs from acting before those creates are observed, so
/// an extra pod means the controller acted on a cache that missed pods it already controlled
/// (#41675, #88851, #129795). Adoption is the other way R gains pods and is bounded by
/// [`ADOPTION_RULES`]; a user scale-down racing with a create is not over-creation, which is
/// why the bound is the replica count acted on, not the current one.
pub const NO_OVER_CREATION: &str = "creations never exceed the replicas acted on";

/// The controller deletes only pods it controls at the moment of the delete. Scale-down
/// deletes carry no precondition (PR #138818, open), so a pod released, orphaned or replaced
/// under the same name between the ranking and the delete is killed anyway.
pub const DELETE_ONLY_CONTROLLED: &str = "controller deletes only pods it controls";

/// A scale-down deletes the pods the ranking puts first (#3948: running pods were killed while
/// pending ones were kept): the victims a sync picks are one of the sets
/// `getPodsToDelete` may return for the pods it counted. Killing a ready, running replica
/// while an unscheduled one survives loses capacity the ranking exists to keep.
pub const SCALE_DOWN_RANKED: &str = "scale-down deletes the pods the ranking puts first";

/// The GC deletes a pod only when its controller is gone (not found, or another UID) or is
/// deleting its dependents in the foreground. Deleting a pod whose owner exists kills live
/// replicas.
pub const GC_DELETES_ONLY_DEPENDENTS_OF_GONE: &str =
    "GC deletes only pods whose controller is gone or in foreground deletion";

/// The GC never deletes a pod that another owner still holds: an owner reference that is not
/// the controller's, to a ReplicaSet that exists with that UID and is not deleting its
/// dependents in the foreground, keeps the pod, whatever became of its controller. Upstream
/// `attemptToDeleteItem` (pkg/controller/garbagecollector/garbagecollector.go) classifies every
/// reference (`classifyReferences`) and, with one solid owner left, only patches the dangling
/// and waiting references away. Deleting such a pod kills a replica someone else owns — the
/// shared ownership Deployments, StatefulSets and operators build with non-controller
/// references.
pub const GC_SPARES_PODS_OTHER_OWNERS_HOLD: &str =
    "GC never deletes a pod another live owner holds";

/// Deleting a ReplicaSet with propagation Orphan never deletes its dependents: no pod that
/// referenced the ReplicaSet when the user deleted it with Orphan is ever collected by the GC
/// on account of that ReplicaSet (#42639: orphaning racing with re-adoption from a stale
/// cache; #26120, open: the GC orphaning before its informer has delivered a dependent). Pods created for the ReplicaSet afterwards are not its dependents at the time of
/// the delete; creating them at all is [`NO_CREATE_WHILE_DELETING`]'s concern.
pub const ORPHAN_KEEPS_DEPENDENTS: &str = "orphan deletion never deletes dependents";

/// The controller never creates a pod for a ReplicaSet that the sync's own cache shows as
/// being deleted (#24934 / PR #27438: the controller kept creating while its ReplicaSet was
/// deleted, racing the GC). A create that a sync decided before the deletion reached its cache
/// is not a violation: a decided slow-start batch cannot know, and the GC collects such pods
/// — no API lets a create carry its owner's UID as a precondition.
pub const NO_CREATE_WHILE_DELETING: &str =
    "no creation for a ReplicaSet the sync saw being deleted";

/// Every ReplicaSet's status is consistent: ready ≤ replicas, available ≤ ready,
/// observedGeneration ≤ generation.
pub const STATUS_CONSISTENT: &str = "status consistent";

/// Coverage: a bare pod is controlled by a ReplicaSet (adopted).
pub const REACH_ADOPTION: &str = "reached: a bare pod is adopted";
/// Coverage: a pod the controller created has no owner (released or orphaned).
pub const REACH_RELEASE: &str = "reached: a created pod is released or orphaned";
/// Coverage: a scale-down is deleting victims.
pub const REACH_SCALE_DOWN: &str = "reached: a scale-down deletes ranked victims";
/// Coverage: a ReplicaSet waits for foreground deletion of its pods.
pub const REACH_FOREGROUND: &str = "reached: foreground deletion in progress";
/// Coverage: a ReplicaSet waits for its pods to be orphaned.
pub const REACH_ORPHAN: &str = "reached: orphan deletion in progress";
/// Coverage: two ReplicaSets exist at once (overlapping selectors in the presets).
pub const REACH_TWO_RS: &str = "reached: two ReplicaSets at once";
/// Coverage: a pod a controller created has lost its controller reference and is still held
/// by another live owner's (the GC removed the dangling reference rather than deleting it):
/// the situation [`GC_SPARES_PODS_OTHER_OWNERS_HOLD`] is about.
pub const REACH_HELD_BY_ANOTHER: &str =
    "reached: a created pod outlives its controller, held by another owner";

/// Coverage: a pod another kind controls matches a live ReplicaSet's selector, which must
/// leave it alone (upstream `resolveControllerRef` compares the kind, `ClaimObject` leaves a
/// pod controlled by another UID alone).
pub const REACH_ANOTHER_KINDS_POD_MATCHES: &str =
    "reached: a pod another kind controls matches a ReplicaSet";
/// Coverage: a ReplicaSet controls a pod that also names an owner of another kind (adopted
/// with the other reference kept, as upstream's `TestGeneralPodAdoption` checks).
pub const REACH_SHARED_WITH_ANOTHER_KIND: &str =
    "reached: a ReplicaSet's pod also names an owner of another kind";

/// The owners that exist at one moment, as the garbage collector's live lookups find them:
/// the ReplicaSets of that moment and the owners of other kinds.
#[derive(Clone, Copy)]
pub struct Owners<'a> {
    pub replicasets: &'a View<ReplicaSet>,
    pub others: &'a [OtherOwner],
}

impl<'a> Owners<'a> {
    /// The API server's owners now.
    pub fn of(api: &'a ApiServer) -> Self {
        Owners {
            replicasets: &api.replicasets,
            others: &api.others,
        }
    }

    /// Whether the owner `r` names is solid: there with that UID and not deleting its
    /// dependents in the foreground (an owner of another kind is deleted at once, so never
    /// is).
    fn hold(&self, r: &OwnerReference) -> bool {
        match &r.kind {
            OwnerKind::ReplicaSet => self.replicasets.get(&r.name).is_some_and(|o| {
                o.meta.uid == r.uid
                    && !(o.meta.is_deleting()
                        && o.meta.has_finalizer(Finalizer::ForegroundDeletion))
            }),
            OwnerKind::Other(_) => other_owner::exists(self.others, r),
        }
    }
}

/// [`STATUS_CONSISTENT`] for one ReplicaSet: ready ≤ replicas, available ≤ ready,
/// observedGeneration ≤ generation. The model's check and the oracle's judgement of a
/// recorded status write both judge by it.
pub fn status_consistent(rs: &ReplicaSet) -> bool {
    let st = &rs.status;
    st.ready_replicas <= st.replicas
        && st.available_replicas <= st.ready_replicas
        && st.observed_generation <= rs.meta.generation
}

/// [`GC_DELETES_ONLY_DEPENDENTS_OF_GONE`]: whether `pod`'s controller is there, with the UID
/// the reference names, and not deleting its dependents in the foreground, so the garbage
/// collector may not delete the pod. The model's check and the oracle's naming of a
/// cluster's divergent delete both judge by it.
pub fn controller_keeps(owners: Owners, pod: &Pod) -> bool {
    pod.meta.controller_ref().is_some_and(|r| owners.hold(r))
}

/// [`GC_SPARES_PODS_OTHER_OWNERS_HOLD`]: whether one of `pod`'s references that is not its
/// controller's names an owner that is there, with that UID, and not deleting its dependents
/// in the foreground (a solid owner, in `classifyReferences`' terms). The model's check and
/// the oracle's naming of a cluster's divergent delete both judge by it.
pub fn another_owner_keeps(owners: Owners, pod: &Pod) -> bool {
    pod.meta
        .owner_references
        .iter()
        .filter(|r| !r.controller)
        .any(|r| owners.hold(r))
}

/// Whether `pod`'s controller reference names an owner of another kind.
pub fn controlled_by_another_kind(pod: &Pod) -> bool {
    pod.meta
        .controller_ref()
        .is_some_and(|r| r.kind != OwnerKind::ReplicaSet)
}

/// [`ADOPTION_RULES`] for one adoption of `pod` by the ReplicaSet with UID `adopter`, whose
/// name is bound to `live` (if anything) at that moment: it exists with that UID, is not
/// being deleted, and its selector matches the pod's labels. The model's check and the
/// oracle's naming of a cluster's divergent write both judge by it.
pub fn adoption_allowed(live: Option<&ReplicaSet>, adopter: Uid, pod: &Pod) -> bool {
    live.is_some_and(|owner| {
        owner.meta.uid == adopter
            && !owner.meta.is_deleting()
            && owner.spec.selector.matches(&pod.meta.labels)
    })
}

/// [`NO_OVER_CREATION`] for one create: the ReplicaSet now controls more active pods than
/// `replicas`.
pub fn over_created(controlled_active: usize, replicas: i32) -> bool {
    controlled_active > replicas.max(0) as usize
}

fn violated(s: &State, name: &'static str) -> bool {
    s.ghost.violated.contains(name)
}

/// All properties, safety first.
pub fn all() -> Vec<Property<RsModel>> {
    vec![
        Property::always(SINGLE_CONTROLLER, |_, s: &State| {
            s.api.pods.values().all(|p| {
                p.meta
                    .owner_references
                    .iter()
                    .filter(|r| r.controller)
                    .count()
                    <= 1
            })
        }),
        Property::always(NO_DOUBLE_COUNT, |_, s: &State| {
            !violated(s, NO_DOUBLE_COUNT)
        }),
        Property::always(ADOPTION_RULES, |_, s: &State| !violated(s, ADOPTION_RULES)),
        Property::always(NO_STEALING, |_, s: &State| !violated(s, NO_STEALING)),
        Property::always(NO_OVER_CREATION, |_, s: &State| {
            !violated(s, NO_OVER_CREATION)
        }),
        Property::always(NO_CREATE_WHILE_DELETING, |_, s: &State| {
            !violated(s, NO_CREATE_WHILE_DELETING)
        }),
        Property::always(DELETE_ONLY_CONTROLLED, |_, s: &State| {
            !violated(s, DELETE_ONLY_CONTROLLED)
        }),
        Property::always(SCALE_DOWN_RANKED, |_, s: &State| {
            !violated(s, SCALE_DOWN_RANKED)
        }),
        Property::always(GC_DELETES_ONLY_DEPENDENTS_OF_GONE, |_, s: &State| {
            !violated(s, GC_DELETES_ONLY_DEPENDENTS_OF_GONE)
        }),
        Property::always(GC_SPARES_PODS_OTHER_OWNERS_HOLD, |_, s: &State| {
            !violated(s, GC_SPARES_PODS_OTHER_OWNERS_HOLD)
        }),
        Property::always(ORPHAN_KEEPS_DEPENDENTS, |_, s: &State| {
            !violated(s, ORPHAN_KEEPS_DEPENDENTS)
        }),
        Property::always(STATUS_CONSISTENT, |_, s: &State| {
            s.api.replicasets.values().all(|rs| status_consistent(rs))
        }),
        Property::sometimes(REACH_ADOPTION, |_, s: &State| {
            s.api
                .pods
                .values()
                .any(|p| p.meta.generate_name.is_none() && p.meta.controller_ref().is_some())
        }),
        Property::sometimes(REACH_RELEASE, |_, s: &State| {
            s.api
                .pods
                .values()
                .any(|p| p.meta.generate_name.is_some() && p.meta.owner_references.is_empty())
        }),
        Property::sometimes(REACH_SCALE_DOWN, |_, s: &State| {
            s.controllers.iter().any(|c| {
                c.workers
                    .iter()
                    .flatten()
                    .any(|t| matches!(t.phase, Phase::Delete { .. }))
            })
        }),
        Property::sometimes(REACH_FOREGROUND, |_, s: &State| {
            s.api
                .replicasets
                .values()
                .any(|r| r.meta.has_finalizer(Finalizer::ForegroundDeletion))
        }),
        Property::sometimes(REACH_ORPHAN, |_, s: &State| {
            s.api
                .replicasets
                .values()
                .any(|r| r.meta.has_finalizer(Finalizer::Orphan))
        }),
        Property::sometimes(REACH_TWO_RS, |_, s: &State| s.api.replicasets.len() >= 2),
        Property::sometimes(REACH_HELD_BY_ANOTHER, |_, s: &State| {
            s.api.pods.values().any(|p| {
                p.meta.generate_name.is_some()
                    && p.meta.controller_ref().is_none()
                    && another_owner_keeps(Owners::of(&s.api), p)
            })
        }),
        Property::sometimes(REACH_ANOTHER_KINDS_POD_MATCHES, |_, s: &State| {
            s.api.pods.values().any(|p| {
                controlled_by_another_kind(p)
                    && s.api.replicasets.values().any(|rs| {
                        !rs.meta.is_deleting() && rs.spec.selector.matches(&p.meta.labels)
                    })
            })
        }),
        Property::sometimes(REACH_SHARED_WITH_ANOTHER_KIND, |_, s: &State| {
            s.api.pods.values().any(|p| {
                p.meta
                    .controller_ref()
                    .is_some_and(|r| r.kind == OwnerKind::ReplicaSet)
                    && p.meta
                        .owner_references
                        .iter()
                        .any(|r| r.kind != OwnerKind::ReplicaSet)
            })
        }),
    ]
}

fn flag(s: &mut State, name: &'static str) {
    s.ghost.violated.insert(name);
}

/// Checks made just before a controller request is applied: the properties it breaks if
/// the API server accepts it (a delete refused by its preconditions deletes nothing).
/// `target` is the pod a pod request lands on, as stored when it lands.
pub(super) fn before_controller_request(
    s: &State,
    rs: &ReplicaSet,
    req: &Request,
    target: Option<&Pod>,
) -> Vec<&'static str> {
    let mut broken = Vec::new();
    match req {
        Request::DeletePod { .. } => {
            if let Some(pod) = target {
                let ours = pod
                    .meta
                    .controller_ref()
                    .is_some_and(|r| r.uid == rs.meta.uid);
                if !ours {
                    broken.push(DELETE_ONLY_CONTROLLED);
                }
            }
        }
        // Judged on the pod the patch lands on: a successful adoption of a pod marked for
        // removal removes it instead of storing it (`ApiServer::update_pod`), and is an
        // adoption all the same, answered as one.
        Request::PatchPodOwnerReferences {
            patch: OwnerRefPatch::Add(_),
            ..
        } => {
            let live = s.api.replicasets.get(&rs.meta.name);
            let ok =
                target.is_some_and(|pod| adoption_allowed(live.map(|o| &**o), rs.meta.uid, pod));
            if !ok {
                broken.push(ADOPTION_RULES);
            }
        }
        _ => {}
    }
    broken
}

/// Checks made when a sync picks its scale-down victims: `ranked`, whether the set is one
/// the ranking allows.
pub(super) fn on_victims_chosen(s: &mut State, ranked: bool) {
    if !ranked {
        flag(s, SCALE_DOWN_RANKED);
    }
}

/// Checks made just after a controller request succeeded; `doomed` are the properties
/// [`before_controller_request`] found it breaks.
pub(super) fn after_controller_request(
    s: &mut State,
    rs: &ReplicaSet,
    task: &crate::controller::SyncTask,
    req: &Request,
    doomed: Vec<&'static str>,
) {
    for property in doomed {
        flag(s, property);
    }
    match req {
        Request::CreatePod(_) => {
            if over_created(s.active_controlled(rs.meta.uid), rs.spec.replicas) {
                flag(s, NO_OVER_CREATION);
            }
            if rs.meta.is_deleting() {
                flag(s, NO_CREATE_WHILE_DELETING);
            }
        }
        Request::PatchPodOwnerReferences {
            patch: OwnerRefPatch::Take { from, .. },
            ..
        } if s.api.replicasets.values().any(|r| r.meta.uid == *from) => {
            flag(s, NO_STEALING);
        }
        Request::UpdateReplicaSetStatus { .. } => {
            let counted: std::collections::BTreeSet<String> =
                task.claimed.iter().cloned().collect();
            let deleting = |uid: Uid| {
                s.api
                    .replicasets
                    .values()
                    .any(|r| r.meta.uid == uid && r.meta.is_deleting())
            };
            let clash = !deleting(rs.meta.uid)
                && s.ghost.counted.iter().any(|(uid, other)| {
                    *uid != rs.meta.uid && !deleting(*uid) && !other.is_disjoint(&counted)
                });
            if clash {
                flag(s, NO_DOUBLE_COUNT);
            }
            s.ghost.counted.insert(rs.meta.uid, counted);
        }
        _ => {}
    }
}

/// Checks made just before a garbage-collector request is applied.
pub(super) fn before_gc_request(s: &mut State, req: &Request) {
    let Request::DeletePod {
        name,
        options: DeleteOptions {
            uid_precondition, ..
        },
    } = req
    else {
        return;
    };
    let Some(pod) = s.api.pods.get(name) else {
        return;
    };
    if uid_precondition.is_some_and(|u| u != pod.meta.uid) {
        return;
    }
    let owner_alive = controller_keeps(Owners::of(&s.api), pod);
    let other_owner_alive = another_owner_keeps(Owners::of(&s.api), pod);
    let pod_uid = pod.meta.uid;
    let orphaned = pod
        .meta
        .owner_references
        .iter()
        .any(|r| s.ghost.orphan_promises.contains(&(r.uid, pod_uid)));
    if owner_alive {
        flag(s, GC_DELETES_ONLY_DEPENDENTS_OF_GONE);
    }
    if other_owner_alive {
        flag(s, GC_SPARES_PODS_OTHER_OWNERS_HOLD);
    }
    if orphaned {
        flag(s, ORPHAN_KEEPS_DEPENDENTS);
    }
}
