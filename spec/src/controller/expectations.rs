//! Controller expectations: the controller's memory of writes it has made but not yet seen.
//!
//! pkg/controller/controller_utils.go `ControllerExpectations` and
//! `UIDTrackingControllerExpectations`: a record per ReplicaSet key with the number of pod
//! creations and deletions still expected. A sync manages replicas only when the record is
//! satisfied (`SatisfiedExpectations`): absent, fulfilled, or older than `ExpectationsTimeout`
//! (5 minutes). Deletions are tracked per pod key so a pod observed twice (graceful deletion:
//! once with a deletionTimestamp, once gone) is counted once — the fix for #22143.
//!
//! The model has no clock: a record's expiry is an event that may happen while it waits.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// `ExpectationsTimeout`: how long a record may stay unfulfilled before it counts as
/// satisfied. The model's expiry move stands for it; the reference controller's timer and
/// the conformance runner's `expireExpectations` (a wait of this long, or a clock moved by
/// it) use the figure.
pub const EXPECTATIONS_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// One ReplicaSet's record.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Expectation {
    pub add: i32,
    pub del: i32,
    /// Pod keys whose deletion is still expected (`UIDTrackingControllerExpectations`).
    pub deleting: BTreeSet<String>,
    /// The 5-minute timer has run out.
    pub expired: bool,
}

impl Expectation {
    /// `ControlleeExpectations.Fulfilled`.
    pub fn fulfilled(&self) -> bool {
        self.add <= 0 && self.del <= 0
    }
}

/// All records of one controller, by ReplicaSet key.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Expectations(pub BTreeMap<String, Expectation>);

impl Expectations {
    /// `SatisfiedExpectations`.
    pub fn satisfied(&self, key: &str) -> bool {
        self.0.get(key).is_none_or(|e| e.fulfilled() || e.expired)
    }

    /// `ExpectCreations` → `SetExpectations(key, n, 0)`: replaces the record, restarting its
    /// timer.
    pub fn expect_creations(&mut self, key: &str, n: i32) {
        self.0.insert(
            key.to_string(),
            Expectation {
                add: n,
                ..Default::default()
            },
        );
    }

    /// `UIDTrackingControllerExpectations.ExpectDeletions`: remembers the pod keys and sets the
    /// record to that many deletions.
    pub fn expect_deletions(&mut self, key: &str, pod_keys: &[String]) {
        self.0.insert(
            key.to_string(),
            Expectation {
                del: pod_keys.len() as i32,
                deleting: pod_keys.iter().cloned().collect(),
                ..Default::default()
            },
        );
    }

    /// `CreationObserved` → `LowerExpectations(key, 1, 0)`.
    pub fn creation_observed(&mut self, key: &str) {
        if let Some(e) = self.0.get_mut(key) {
            e.add -= 1;
        }
    }

    /// `UIDTrackingControllerExpectations.DeletionObserved`: counts only a tracked pod key, and
    /// only once.
    pub fn deletion_observed(&mut self, key: &str, pod_key: &str) {
        if let Some(e) = self.0.get_mut(key) {
            if e.deleting.remove(pod_key) {
                e.del -= 1;
            }
        }
    }

    /// `DeleteExpectations`.
    pub fn delete(&mut self, key: &str) {
        self.0.remove(key);
    }

    /// The record is waiting on something and its timer is running: expiry may happen.
    pub fn can_expire(&self, key: &str) -> bool {
        self.0
            .get(key)
            .is_some_and(|e| !e.fulfilled() && !e.expired)
    }

    /// The 5-minute timeout passes.
    pub fn expire(&mut self, key: &str) {
        if let Some(e) = self.0.get_mut(key) {
            e.expired = true;
        }
    }
}
