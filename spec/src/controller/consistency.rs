//! [upstream] What the consistency store (KEP-5647, the `StaleControllerConsistencyReplicaSet`
//! gate) records of the controller's own writes: a key syncs again only once the caches have
//! reached the resourceVersions recorded for it.
//!
//! `syncReplicaSet` records its status update (`WroteAt` with the updated object's
//! resourceVersion). Pod writes are recorded by `RealPodControl`'s `OnWrite` callback
//! (pkg/controller/controller_utils.go), which `createPods` and `PatchPod` call and
//! `DeletePod` does not, under the pod's controller reference as the write left it
//! (`NewReplicaSetController`'s `podWriteCallback` ignores a pod without one). So creations,
//! adoptions and a take are recorded, and a release or a delete is not: a sync may start from
//! a cache that has not seen the previous sync's deletes (a v1.37.2 controller did, writing
//! `status.replicas` that still counted a pod it had deleted).

use crate::api::{Kind, OwnerRefPatch, Request};

/// The resource whose cache must reach a successful `req` of the controller before the
/// ReplicaSet it synced may sync again; `None`: the store records nothing of it.
pub fn recorded(req: &Request) -> Option<Kind> {
    match req {
        Request::UpdateReplicaSetStatus { .. } => Some(Kind::ReplicaSet),
        Request::CreatePod(_)
        | Request::PatchPodOwnerReferences {
            patch: OwnerRefPatch::Add(_) | OwnerRefPatch::Take { .. },
            ..
        } => Some(Kind::Pod),
        _ => None,
    }
}
