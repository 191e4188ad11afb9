//! The informer event handlers: how watch events reach the work queue and the expectations.
//!
//! pkg/controller/replicaset/replica_set.go `addRS`, `updateRS`, `deleteRS`, `addPod`,
//! `updatePod`, `deletePod`, `resolveControllerRef`, `getPodReplicaSets`. A relist's
//! tombstones (`DeletedFinalStateUnknown`, possibly stale) take the same path as a delete.

use super::expectations::Expectations;
use super::queue::WorkQueue;
use crate::api::View;
use crate::bugs::Bug;
use crate::object::{OwnerKind, Pod, ReplicaSet};
use crate::profile::Semantics;

/// The controller memory the handlers touch.
pub struct Handlers<'a> {
    pub queue: &'a mut WorkQueue,
    pub expectations: &'a mut Expectations,
    /// The controller's ReplicaSet cache, after this event's own update.
    pub replicasets: &'a View<ReplicaSet>,
    pub sem: &'a Semantics,
}

impl Handlers<'_> {
    /// A ReplicaSet event (`before`/`after` absent for add/delete).
    pub fn replicaset(&mut self, before: Option<&ReplicaSet>, after: Option<&ReplicaSet>) {
        // [bug stale-expectations-on-recreate] a deleted ReplicaSet's expectations stay.
        let forget = !self.sem.has(Bug::StaleExpectationsOnRecreate);
        match (before, after) {
            (_, None) => {
                if let Some(old) = before {
                    if forget {
                        self.expectations.delete(&old.meta.name);
                    }
                    self.queue.add(&old.meta.name);
                }
            }
            (Some(old), Some(cur)) if old.meta.uid != cur.meta.uid => {
                // Recreated under the same name: handle the old one as deleted first (#69376).
                if forget {
                    self.expectations.delete(&old.meta.name);
                }
                self.queue.add(&old.meta.name);
                self.queue.add(&cur.meta.name);
            }
            (_, Some(cur)) => self.queue.add(&cur.meta.name),
        }
    }

    /// `resolveControllerRef`: the cached ReplicaSet the pod's controller reference names, if
    /// it names a ReplicaSet and its UID matches (a pod another kind controls wakes no
    /// ReplicaSet).
    fn resolve(&self, pod: &Pod) -> Option<String> {
        let r = pod.meta.controller_ref()?;
        if r.kind != OwnerKind::ReplicaSet {
            return None;
        }
        let rs = self.replicasets.get(&r.name)?;
        (rs.meta.uid == r.uid).then(|| rs.meta.name.clone())
    }

    /// `getPodReplicaSets`: every cached ReplicaSet whose non-empty selector matches.
    fn matching(&self, pod: &Pod) -> Vec<String> {
        // The lister refuses a pod without labels ("no ReplicaSets found").
        if pod.meta.labels.is_empty() {
            return Vec::new();
        }
        self.replicasets
            .values()
            .filter(|rs| !rs.spec.selector.is_empty() && rs.spec.selector.matches(&pod.meta.labels))
            .map(|rs| rs.meta.name.clone())
            .collect()
    }

    /// A pod event.
    pub fn pod(&mut self, before: Option<&Pod>, after: Option<&Pod>) {
        match (before, after) {
            (None, Some(cur)) => self.add_pod(cur),
            (Some(old), Some(cur)) => self.update_pod(old, cur),
            (Some(old), None) => self.delete_pod(old),
            (None, None) => {}
        }
    }

    fn add_pod(&mut self, pod: &Pod) {
        if pod.meta.is_deleting() {
            self.delete_pod(pod);
            return;
        }
        if pod.meta.controller_ref().is_some() {
            if let Some(key) = self.resolve(pod) {
                self.expectations.creation_observed(&key);
                self.queue.add(&key);
            }
            return;
        }
        for key in self.matching(pod) {
            self.queue.add(&key);
        }
    }

    fn update_pod(&mut self, old: &Pod, cur: &Pod) {
        if old.meta.resource_version == cur.meta.resource_version {
            return;
        }
        let label_changed = old.meta.labels != cur.meta.labels;
        if cur.meta.is_deleting() {
            self.delete_pod(cur);
            if label_changed {
                self.delete_pod(old);
            }
            return;
        }
        let ref_changed = old.meta.controller_ref() != cur.meta.controller_ref();
        if ref_changed && old.meta.controller_ref().is_some() {
            if let Some(key) = self.resolve(old) {
                self.queue.add(&key);
            }
        }
        if cur.meta.controller_ref().is_some() {
            if let Some(key) = self.resolve(cur) {
                self.queue.add(&key);
            }
            return;
        }
        // [bug ignore-controller-ref-removal] only a label change requeues the matches.
        let requeue_on_ref = !self.sem.has(Bug::IgnoreControllerRefRemoval);
        if label_changed || (ref_changed && requeue_on_ref) {
            for key in self.matching(cur) {
                self.queue.add(&key);
            }
        }
    }

    fn delete_pod(&mut self, pod: &Pod) {
        if pod.meta.controller_ref().is_none() {
            return;
        }
        if let Some(key) = self.resolve(pod) {
            self.expectations.deletion_observed(&key, &pod.meta.name);
            self.queue.add(&key);
        }
    }
}
