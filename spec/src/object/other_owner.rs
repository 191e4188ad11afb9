//! Owners of other kinds: the objects a pod's owner references may name besides
//! ReplicaSets (a StatefulSet, a Job, a custom resource; on the project's local control
//! planes, where no other workload controller runs, a ConfigMap serves as any of them).
//!
//! The model keeps of such an owner what the two controllers it concerns read: its kind, name
//! and UID. The ReplicaSet controller never reads it (it does not watch other kinds). The
//! garbage collector reads it live: `isDangling`
//! (pkg/controller/garbagecollector/garbagecollector.go) GETs the owner by kind and name in
//! the dependent's namespace and compares the UID, so the model's collector consults the API
//! server's objects directly rather than a cache of them. That makes the collector act on an
//! owner's absence as early as a real one could and never on its presence, which is the
//! whole of what a cache of these objects would change. An owner of another kind is deleted
//! at once (propagation Background, no finalizer): its dependents then hold a dangling
//! reference, which the collector classifies as upstream does.

use super::meta::{OtherKind, OwnerKind, OwnerReference, Uid};
use serde::{Deserialize, Serialize};

/// An object of another kind that pods may name as their owner.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OtherOwner {
    pub kind: OtherKind,
    pub name: String,
    pub uid: Uid,
}

impl OtherOwner {
    /// Whether this is the object of this kind and name.
    pub fn is(&self, kind: &OtherKind, name: &str) -> bool {
        self.kind == *kind && self.name == name
    }

    /// Whether `r` names this very object: its kind, its name and its UID (an owner
    /// recreated under the same name is another object).
    pub fn named_by(&self, r: &OwnerReference) -> bool {
        matches!(&r.kind, OwnerKind::Other(kind) if self.is(kind, &r.name)) && self.uid == r.uid
    }
}

/// Whether one of `others` is the owner `r` names: the garbage collector's live GET of the
/// owner and its comparison of the UID (`isDangling`).
pub fn exists(others: &[OtherOwner], r: &OwnerReference) -> bool {
    others.iter().any(|o| o.named_by(r))
}
