//! Claiming pods: which active pods a ReplicaSet keeps, releases, adopts or ignores.
//!
//! pkg/controller/controller_ref_manager.go `BaseControllerRefManager.ClaimObject` and
//! `PodControllerRefManager.ClaimPods`, with the ReplicaSet's selector as the match function.
//! Ownership is decided by UID only.

use crate::object::{Pod, ReplicaSet};
use serde::{Deserialize, Serialize};

/// What `ClaimObject` does with one pod, decided from the controller's cached view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Claim {
    /// Controlled by another UID: not ours, leave it.
    Ignore,
    /// Ours and the selector matches (kept even while the ReplicaSet is being deleted).
    Keep,
    /// Ours but the selector no longer matches: release it (patch removing our reference).
    Release,
    /// An orphan that matches, while neither it nor we are being deleted: adopt it (after the
    /// live recheck of the ReplicaSet).
    Adopt,
}

/// `ClaimObject`'s decision for `pod`, as seen in the cache.
pub fn decide(rs: &ReplicaSet, pod: &Pod) -> Claim {
    let matches = rs.spec.selector.matches(&pod.meta.labels);
    let rs_deleting = rs.meta.is_deleting();
    match pod.meta.controller_ref() {
        Some(r) if r.uid != rs.meta.uid => Claim::Ignore,
        Some(_) if matches => Claim::Keep,
        Some(_) if rs_deleting => Claim::Ignore,
        Some(_) => Claim::Release,
        None if rs_deleting || !matches || pod.meta.is_deleting() => Claim::Ignore,
        None => Claim::Adopt,
    }
}

/// [bug steal-controlled-pods] Whether a ReplicaSet that decides ownership by its selector
/// alone would take `pod` from the ReplicaSet that controls it: it matches and neither is
/// being deleted. Upstream ignores such a pod (`ClaimObject`'s first case).
pub fn takeable(rs: &ReplicaSet, pod: &Pod) -> bool {
    pod.meta
        .controller_ref()
        .is_some_and(|r| r.uid != rs.meta.uid)
        && rs.spec.selector.matches(&pod.meta.labels)
        && !rs.meta.is_deleting()
        && !pod.meta.is_deleting()
}

/// The outcome of the live recheck before the first adoption of a sync
/// (`RecheckDeletionTimestamp` with a quorum GET of the ReplicaSet).
pub fn recheck(cached: &ReplicaSet, live: Option<&ReplicaSet>) -> Result<(), String> {
    let key = &cached.meta.name;
    match live {
        None => Err(format!(
            "can't recheck DeletionTimestamp: replicasets.apps \"{key}\" not found"
        )),
        Some(fresh) if fresh.meta.uid != cached.meta.uid => Err(format!(
            "original ReplicaSet default/{key} is gone: got uid {}, wanted {}",
            fresh.meta.uid, cached.meta.uid
        )),
        Some(fresh) if fresh.meta.is_deleting() => Err(format!(
            "default/{key} has just been deleted at revision {}",
            fresh.meta.deletion_timestamp.unwrap_or_default()
        )),
        Some(_) => Ok(()),
    }
}
