//! The requests clients send to the API server, and their successful responses.

use crate::object::{
    Finalizer, Labels, OwnerReference, Pod, PodPhase, ReplicaSet, ReplicaSetStatus, Rv, Uid,
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
}

/// `metav1.DeleteOptions`, reduced to the propagation policy and the UID precondition.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeleteOptions {
    pub propagation: Option<Propagation>,
    pub uid_precondition: Option<Uid>,
}

/// A strategic-merge patch of `metadata.ownerReferences` (merge key `uid`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum OwnerRefPatch {
    /// Add (or merge into) the reference with this UID — `AdoptPod`.
    Add(OwnerReference),
    /// `{"$patch":"delete","uid":…}` for each UID — `ReleasePod` and the GC's orphaning and
    /// dangling-reference removal.
    Remove(Vec<Uid>),
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
    DeletePod {
        name: String,
        options: DeleteOptions,
    },
    /// The kubelet's final delete (grace period 0) of a pod being deleted gracefully.
    FinishPodDeletion {
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
