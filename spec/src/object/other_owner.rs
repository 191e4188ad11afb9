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

use super::meta::{OtherKind, Uid};
use serde::{Deserialize, Serialize};

/// An object of another kind that pods may name as their owner.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct OtherOwner {
    pub kind: OtherKind,
    pub name: String,
    pub uid: Uid,
}
