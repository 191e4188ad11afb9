//! The requests clients send to the API server, and their successful responses.

use crate::object::{
    Finalizer, Labels, OtherKind, OwnerReference, Pod, PodPhase, ReplicaSet, ReplicaSetStatus, Rv,
    Uid, POD_DELETION_COST,
};
use serde::{Deserialize, Serialize};

/// `metav1.DeletionPropagation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Propagation {
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    pub const ALL: [Propagation; 3] = [
        Propagation::Background,
        Propagation::Foreground,
        Propagation::Orphan,
    ];

    /// The `kubectl delete --cascade=` value.
    pub fn cascade_flag(self) -> &'static str {
        match self {
            Propagation::Background => "background",
            Propagation::Foreground => "foreground",
            Propagation::Orphan => "orphan",
        }
    }

    /// The scenario's `cascade:` word for what a delete asks: a policy, or `unset` when it
    /// sends none (what client-go's `Delete` with empty `DeleteOptions` sends; kubectl always
    /// sends one, `background` by default).
    pub fn asked_word(asked: Option<Propagation>) -> &'static str {
        asked.map_or("unset", Propagation::cascade_flag)
    }

    /// A user's delete of ReplicaSet `name` asking for `asked`, as the command it is: kubectl's,
    /// or a bare DELETE when it sends no policy (kubectl always sends one).
    pub fn delete_command(name: &str, asked: Option<Propagation>) -> String {
        match asked {
            Some(p) => format!("kubectl delete rs/{name} --cascade={}", p.cascade_flag()),
            None => {
                format!("DELETE rs/{name} without a propagationPolicy (the API server chooses)")
            }
        }
    }

    /// The policy a ReplicaSet delete takes effect with: the one it asks for, else the
    /// `orphan` or `foregroundDeletion` finalizer the object already carries (a delete
    /// repeated while one is under way keeps it), else apps/v1's default, Background.
    /// [upstream] apiserver `registry/generic/registry/store.go` `shouldOrphanDependents`
    /// and `shouldDeleteDependentsInForeground`; `pkg/registry/apps/replicaset/strategy.go`
    /// `DefaultGarbageCollectionPolicy` (DeleteDependents for apps/v1).
    pub fn chosen(asked: Option<Propagation>, finalizers: &[Finalizer]) -> Propagation {
        asked.unwrap_or(if finalizers.contains(&Finalizer::Orphan) {
            Propagation::Orphan
        } else if finalizers.contains(&Finalizer::ForegroundDeletion) {
            Propagation::Foreground
        } else {
            Propagation::Background
        })
    }
}

/// `metav1.DeleteOptions`, reduced to the propagation policy and the preconditions.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeleteOptions {
    pub propagation: Option<Propagation>,
    pub uid_precondition: Option<Uid>,
    /// `preconditions.resourceVersion`: the delete fails with a Conflict when the object has
    /// been written since. Only the proposed fix of PR #138818 sends it
    /// ([`crate::profile::Semantics::delete_precondition`]). Left out of JSON when absent, so
    /// traces written before the field existed read the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version_precondition: Option<Rv>,
}

/// A strategic-merge patch of `metadata.ownerReferences` (merge key `uid`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum OwnerRefPatch {
    /// Add (or merge into) the reference with this UID — `AdoptPod`.
    Add(OwnerReference),
    /// `{"$patch":"delete","uid":…}` for each UID — `ReleasePod` and the GC's orphaning and
    /// dangling-reference removal.
    Remove(Vec<Uid>),
    /// `[{"$patch":"delete","uid":from}, to]`: replace another controller's reference with
    /// one's own in one patch. Only the catalogue's `steal-controlled-pods` sends it.
    Take { from: Uid, to: OwnerReference },
}

/// One API request.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Request {
    CreateReplicaSet(ReplicaSet),
    /// PUT of the whole object; `meta.resource_version` is the optimistic-concurrency
    /// precondition (0: none).
    ReplaceReplicaSet(ReplicaSet),
    /// The `scale` subresource, as `kubectl scale` uses it (no precondition).
    ScaleReplicaSet {
        name: String,
        replicas: i32,
    },
    /// The `status` subresource. `resource_version` is the precondition the controller sends
    /// (the version it read).
    UpdateReplicaSetStatus {
        name: String,
        resource_version: Rv,
        status: ReplicaSetStatus,
    },
    DeleteReplicaSet {
        name: String,
        options: DeleteOptions,
    },
    /// The GC's removal of one of its finalizers (a patch with no precondition).
    RemoveFinalizer {
        name: String,
        finalizer: Finalizer,
    },
    CreatePod(Pod),
    /// A patch of `metadata.ownerReferences` carrying `metadata.uid` as a precondition.
    PatchPodOwnerReferences {
        name: String,
        uid: Uid,
        patch: OwnerRefPatch,
    },
    /// `kubectl label pod … --overwrite` (a patch replacing the label map).
    SetPodLabels {
        name: String,
        labels: Labels,
    },
    /// A client's merge patch replacing `metadata.ownerReferences` with this list.
    SetPodOwnerReferences {
        name: String,
        references: Vec<OwnerReference>,
    },
    /// `kubectl annotate pod … controller.kubernetes.io/pod-deletion-cost=N --overwrite` (or
    /// `…-`): a patch of the one annotation the model holds.
    SetPodDeletionCost {
        name: String,
        cost: Option<i32>,
    },
    /// The scheduler's binding.
    BindPod {
        name: String,
        node: String,
    },
    /// The kubelet's status update.
    SetPodStatus {
        name: String,
        phase: PodPhase,
        ready: bool,
    },
    /// The kubelet's status update after a container restarted: the containers'
    /// `restartCount` (the highest of them is what the model holds), phase and readiness
    /// as they were.
    SetPodRestarts {
        name: String,
        restarts: u32,
    },
    DeletePod {
        name: String,
        options: DeleteOptions,
    },
    /// The kubelet's final delete (grace period 0) of a pod being deleted gracefully.
    FinishPodDeletion {
        name: String,
    },
    /// A client's create of an owner of another kind ([`crate::object::OtherOwner`]).
    CreateOther {
        kind: OtherKind,
        name: String,
    },
    /// A client's delete of an owner of another kind, with propagation Background: the
    /// owner is gone at once, and the garbage collector deals with its dependents.
    DeleteOther {
        kind: OtherKind,
        name: String,
    },
}

/// A successful response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// The write produced this revision; for creates, the new object's name and UID.
    Written { rv: Rv, name: String, uid: Uid },
    /// A delete that removed the object at once.
    Deleted { rv: Rv },
    /// A delete that only started deletion (deletionTimestamp and/or finalizers set).
    DeletionStarted { rv: Rv },
}

impl std::fmt::Display for Request {
    /// The request as an HTTP verb and resource, with what matters about its body.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let precondition =
            |o: &DeleteOptions| match (o.uid_precondition, o.resource_version_precondition) {
                (Some(uid), Some(rv)) => format!(" (precondition uid={uid} resourceVersion={rv})"),
                (Some(uid), None) => format!(" (precondition uid={uid})"),
                (None, Some(rv)) => format!(" (precondition resourceVersion={rv})"),
                (None, None) => String::new(),
            };
        match self {
            Request::CreateReplicaSet(rs) => write!(f, "POST replicasets {}", rs.meta.name),
            Request::ReplaceReplicaSet(rs) => write!(f, "PUT replicasets/{}", rs.meta.name),
            Request::ScaleReplicaSet { name, replicas } => {
                write!(f, "PUT replicasets/{name}/scale replicas={replicas}")
            }
            Request::UpdateReplicaSetStatus {
                name,
                resource_version,
                status,
            } => write!(
                f,
                "PUT replicasets/{name}/status replicas={}{} ready={} available={} observedGeneration={} (resourceVersion {resource_version})",
                status.replicas,
                status
                    .terminating_replicas
                    .map(|t| format!(" terminating={t}"))
                    .unwrap_or_default(),
                status.ready_replicas,
                status.available_replicas,
                status.observed_generation
            ),
            Request::DeleteReplicaSet { name, options } => write!(
                f,
                "DELETE replicasets/{name} propagationPolicy={}{}",
                options
                    .propagation
                    .map(|p| format!("{p:?}"))
                    .unwrap_or_else(|| "default".into()),
                precondition(options)
            ),
            Request::RemoveFinalizer { name, finalizer } => {
                write!(f, "PATCH replicasets/{name} remove finalizer {}", finalizer.as_str())
            }
            Request::CreatePod(pod) => match (&pod.meta.generate_name, pod.meta.controller_ref()) {
                (Some(prefix), Some(r)) => {
                    write!(f, "POST pods generateName={prefix} controller=ReplicaSet/{}", r.name)
                }
                _ => write!(f, "POST pods {}", pod.meta.name),
            },
            Request::PatchPodOwnerReferences { name, uid, patch } => match patch {
                OwnerRefPatch::Add(r) => write!(
                    f,
                    "PATCH pods/{name} adopt: controller=ReplicaSet/{} uid={} (precondition uid={uid})",
                    r.name, r.uid
                ),
                OwnerRefPatch::Remove(uids) => write!(
                    f,
                    "PATCH pods/{name} remove ownerReferences uid={uids:?} (precondition uid={uid})"
                ),
                OwnerRefPatch::Take { from, to } => write!(
                    f,
                    "PATCH pods/{name} take: remove ownerReference uid={from}, controller=ReplicaSet/{} uid={} (precondition uid={uid})",
                    to.name, to.uid
                ),
            },
            Request::SetPodLabels { name, labels } => {
                write!(f, "PATCH pods/{name} labels={}", crate::object::render_labels(labels))
            }
            Request::SetPodOwnerReferences { name, references } => {
                write!(f, "PATCH pods/{name} ownerReferences=[")?;
                for (i, r) in references.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(
                        f,
                        "{sep}{}/{} uid={} controller={} blockOwnerDeletion={}",
                        r.kind.kind(),
                        r.name,
                        r.uid,
                        r.controller,
                        r.block_owner_deletion
                    )?;
                }
                f.write_str("]")
            }
            Request::SetPodDeletionCost { name, cost } => match cost {
                Some(cost) => write!(f, "PATCH pods/{name} annotations={POD_DELETION_COST}={cost}"),
                None => write!(f, "PATCH pods/{name} annotations={POD_DELETION_COST}-"),
            },
            Request::BindPod { name, node } => write!(f, "POST pods/{name}/binding node={node}"),
            Request::SetPodStatus { name, phase, ready } => write!(
                f,
                "PUT pods/{name}/status phase={} ready={ready}",
                phase.as_str()
            ),
            Request::SetPodRestarts { name, restarts } => {
                write!(f, "PUT pods/{name}/status restartCount={restarts}")
            }
            Request::DeletePod { name, options } => {
                write!(f, "DELETE pods/{name}{}", precondition(options))
            }
            Request::FinishPodDeletion { name } => write!(f, "DELETE pods/{name} gracePeriodSeconds=0"),
            Request::CreateOther { kind, name } => {
                write!(f, "POST {} {} {name}", kind.api_version, kind.kind)
            }
            Request::DeleteOther { kind, name } => {
                write!(f, "DELETE {} {}/{name}", kind.api_version, kind.kind)
            }
        }
    }
}
