//! The controller's memory between syncs: expectations, per namespace, and the clocks the
//! spec leaves to its executor.
//!
//! The spec's [`Expectations`] are keyed by ReplicaSet name, as its ReplicaSets live in one
//! namespace; upstream keys them `namespace/name`. Here each namespace has its own record
//! set, which is the same thing. Handlers and syncs share it behind one lock, taken only
//! between requests (never across an API call).
//!
//! Two clocks of upstream have no place in the model, where time is an event:
//! - `ExpectationsTimeout` (pkg/controller/controller_utils.go, 5 minutes): a record set by
//!   `ExpectCreations` or `ExpectDeletions` that is still unfulfilled 5 minutes later counts
//!   as satisfied. The model's `ExpireExpectations` move is this timer firing; here it fires
//!   when a sync finds the record older than that.
//! - [upstream profile] the consistency gate (KEP-5647): a key may sync only once the
//!   caches have caught up with the resourceVersions of this controller's own last writes
//!   for it. The model keeps informer positions; here they are the highest resourceVersion
//!   each informer has applied.

pub use rsmc_spec::controller::expectations::EXPECTATIONS_TIMEOUT;
use rsmc_spec::controller::Expectations;
use std::collections::HashMap;
use std::time::Instant;

/// One namespace's memory.
#[derive(Default)]
pub struct Namespace {
    pub expectations: Expectations,
    /// When each record was last set (by a sync about to create or delete).
    set_at: HashMap<String, Instant>,
    /// [upstream] per key, the resourceVersions of this controller's last ReplicaSet and
    /// pod writes.
    written: HashMap<String, (u64, u64)>,
}

impl Namespace {
    /// A sync has just set the record of `key` (`ExpectCreations` or `ExpectDeletions`).
    pub fn record_set(&mut self, key: &str, now: Instant) {
        self.set_at.insert(key.to_string(), now);
    }

    /// Mark the record of `key` expired when it has waited longer than the timeout.
    pub fn expire_if_due(&mut self, key: &str, now: Instant) {
        let due = self
            .set_at
            .get(key)
            .is_some_and(|at| now.duration_since(*at) >= EXPECTATIONS_TIMEOUT);
        if due && self.expectations.can_expire(key) {
            self.expectations.expire(key);
        }
    }

    /// [upstream] A write of this controller for `key` produced this resourceVersion.
    pub fn wrote(&mut self, key: &str, replicaset: bool, rv: u64) {
        let w = self.written.entry(key.to_string()).or_default();
        if replicaset {
            w.0 = w.0.max(rv);
        } else {
            w.1 = w.1.max(rv);
        }
    }

    /// [upstream] Whether the informers (at these positions) have caught up with this
    /// controller's own writes for `key`.
    pub fn caught_up(&self, key: &str, replicasets: u64, pods: u64) -> bool {
        self.written
            .get(key)
            .is_none_or(|(rs, p)| replicasets >= *rs && pods >= *p)
    }

    /// The ReplicaSet `key` is gone: forget what was kept for it besides expectations.
    pub fn forget(&mut self, key: &str) {
        self.set_at.remove(key);
        self.written.remove(key);
    }
}

/// Every namespace's memory.
#[derive(Default)]
pub struct Memory {
    namespaces: HashMap<String, Namespace>,
}

impl Memory {
    pub fn namespace(&mut self, ns: &str) -> &mut Namespace {
        self.namespaces.entry(ns.to_string()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_record_expires_only_after_the_timeout() {
        let mut ns = Namespace::default();
        let t0 = Instant::now();
        ns.expectations.expect_creations("rs", 2);
        ns.record_set("rs", t0);
        ns.expire_if_due("rs", t0 + Duration::from_secs(299));
        assert!(!ns.expectations.satisfied("rs"));
        ns.expire_if_due("rs", t0 + EXPECTATIONS_TIMEOUT);
        assert!(ns.expectations.satisfied("rs"));
    }

    #[test]
    fn the_gate_waits_for_both_informers() {
        let mut ns = Namespace::default();
        assert!(ns.caught_up("rs", 0, 0));
        ns.wrote("rs", false, 10);
        ns.wrote("rs", true, 12);
        assert!(!ns.caught_up("rs", 12, 9));
        assert!(!ns.caught_up("rs", 11, 10));
        assert!(ns.caught_up("rs", 12, 10));
    }
}
