//! Object metadata shared by ReplicaSets and pods.
//!
//! Identity in the model is small integers: a UID is the order in which the API server
//! created the object and a resourceVersion is a position in the API server's single event
//! log (staging/src/k8s.io/apiserver/pkg/storage/etcd3: every write bumps one global
//! revision). Real UIDs and generated name suffixes are a rendering concern.

use super::labels::Labels;
use serde::{Deserialize, Serialize};

/// An object UID: the index of the object's creation in the API server.
pub type Uid = u32;
/// A resourceVersion: the global revision of the write that produced this version.
pub type Rv = u32;
/// A time: whole seconds of the API server's clock. `metav1.Time` keeps seconds only (its JSON
/// form is RFC 3339 without fractions and its protobuf form drops the nanoseconds:
/// staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time_proto.go `ProtoTime`), so two events
/// in the same second carry equal timestamps and every comparison of them is a tie.
pub type Seconds = u32;

/// The finalizers the garbage collector understands
/// (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go `FinalizerOrphanDependents`,
/// `FinalizerDeleteDependents`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Finalizer {
    /// `orphan`: the GC removes the owner's reference from every dependent first.
    Orphan,
    /// `foregroundDeletion`: the GC deletes blocking dependents first.
    ForegroundDeletion,
}

impl Finalizer {
    /// The finalizer's name as the API shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Finalizer::Orphan => "orphan",
            Finalizer::ForegroundDeletion => "foregroundDeletion",
        }
    }

    /// The garbage collector's finalizer of this name; `None` for any other (a finalizer
    /// of another controller, outside the model).
    pub fn named(name: &str) -> Option<Finalizer> {
        [Finalizer::Orphan, Finalizer::ForegroundDeletion]
            .into_iter()
            .find(|f| f.as_str() == name)
    }
}

/// The kind of owner a reference names.
///
/// The ReplicaSet controller acts for its own kind only: a pod whose controller reference
/// names another kind is neither counted, adopted, released nor deleted by it
/// (pkg/controller/replicaset/replica_set.go `resolveControllerRef` compares the kind;
/// pkg/controller/controller_ref_manager.go `ClaimObject` leaves a pod controlled by another
/// UID alone), and a reference to another kind that is not the controller's does not stop an
/// adoption, whose patch keeps it. The garbage collector treats every kind alike: it looks the
/// owner up live by kind and name (`isDangling`), so an owner of another kind keeps its
/// dependents as a ReplicaSet does ([`super::OtherOwner`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum OwnerKind {
    /// `apps/v1 ReplicaSet`.
    ReplicaSet,
    /// Any other kind: a StatefulSet, a Job, a ConfigMap, a custom resource.
    Other(OtherKind),
}

/// A kind other than ReplicaSet, as an owner reference names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OtherKind {
    /// `apiVersion`, e.g. `v1` or `apps/v1`.
    pub api_version: String,
    /// `kind`, e.g. `ConfigMap`.
    pub kind: String,
}

impl OtherKind {
    pub fn new(api_version: &str, kind: &str) -> Self {
        OtherKind {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// Whether this is the kind `kind` of `apiVersion` `api_version`.
    pub fn is(&self, api_version: &str, kind: &str) -> bool {
        self.api_version == api_version && self.kind == kind
    }

    /// `v1 ConfigMap`: what stands for an owner of any kind on a local control plane, where
    /// no other workload controller runs (and the kind of the runner's own marks).
    pub fn configmap() -> Self {
        OtherKind::new("v1", "ConfigMap")
    }

    /// Whether this is [`OtherKind::configmap`].
    pub fn is_configmap(&self) -> bool {
        self.is("v1", "ConfigMap")
    }
}

impl OwnerKind {
    /// The kind of an owner reference with this `apiVersion` and `kind`: a ReplicaSet only
    /// where both are a ReplicaSet's (`apps/v1`; `resolveControllerRef` compares the kind
    /// alone, and no other group serves a kind of that name on a cluster the model speaks of).
    pub fn of(api_version: &str, kind: &str) -> Self {
        if kind == "ReplicaSet" && api_version == "apps/v1" {
            OwnerKind::ReplicaSet
        } else {
            OwnerKind::Other(OtherKind::new(api_version, kind))
        }
    }

    /// The reference's `apiVersion`.
    pub fn api_version(&self) -> &str {
        match self {
            OwnerKind::ReplicaSet => "apps/v1",
            OwnerKind::Other(k) => &k.api_version,
        }
    }

    /// The reference's `kind`.
    pub fn kind(&self) -> &str {
        match self {
            OwnerKind::ReplicaSet => "ReplicaSet",
            OwnerKind::Other(k) => &k.kind,
        }
    }
}

/// `metav1.OwnerReference` (apiVersion and kind folded into [`OwnerKind`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OwnerReference {
    pub kind: OwnerKind,
    pub name: String,
    pub uid: Uid,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

impl OwnerReference {
    /// The reference a ReplicaSet sets when it creates or adopts a pod
    /// (pkg/controller/replicaset/replica_set.go `manageReplicas`;
    /// pkg/controller/controller_ref_manager.go `AdoptPod`).
    pub fn controller_of(name: &str, uid: Uid) -> Self {
        OwnerReference {
            kind: OwnerKind::ReplicaSet,
            name: name.to_string(),
            uid,
            controller: true,
            block_owner_deletion: true,
        }
    }
}

/// `metav1.ObjectMeta`, reduced to what the ReplicaSet controller, the API server rules and
/// the garbage collector read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Meta {
    pub name: String,
    /// Set when the object was created with `generateName` (the prefix, e.g. `frontend-`).
    pub generate_name: Option<String>,
    pub uid: Uid,
    pub resource_version: Rv,
    /// Bumped on every spec change (ReplicaSets only; pods keep 0 here).
    pub generation: u32,
    /// `creationTimestamp`: the second the API server created the object.
    pub created: Seconds,
    pub labels: Labels,
    pub owner_references: Vec<OwnerReference>,
    /// The revision at which deletion began: the model's `deletionTimestamp`.
    pub deletion_timestamp: Option<Rv>,
    pub finalizers: Vec<Finalizer>,
}

impl Meta {
    /// A fresh object's metadata before the API server assigns identity.
    pub fn named(name: &str, labels: Labels) -> Self {
        Meta {
            name: name.to_string(),
            generate_name: None,
            uid: 0,
            resource_version: 0,
            generation: 0,
            created: 0,
            labels,
            owner_references: Vec::new(),
            deletion_timestamp: None,
            finalizers: Vec::new(),
        }
    }

    /// `metav1.GetControllerOf`: the reference with `controller: true`, if any.
    pub fn controller_ref(&self) -> Option<&OwnerReference> {
        self.owner_references.iter().find(|r| r.controller)
    }

    /// Whether a deletion has begun (`deletionTimestamp != nil`).
    pub fn is_deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    pub fn has_finalizer(&self, f: Finalizer) -> bool {
        self.finalizers.contains(&f)
    }
}
