//! The de-duplicating work queue.
//!
//! staging/src/k8s.io/client-go/util/workqueue/queue.go `Type`: a key is queued at most once
//! (`dirty`), and never handed to two workers at once (`processing`): adding a key that is
//! being processed marks it to be queued again when the worker calls `Done`. The model does
//! not keep the FIFO order nor the rate limiter's delays: a worker may take any queued key,
//! which covers every order back-off could produce.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct WorkQueue {
    /// Keys waiting for a worker.
    pub queued: BTreeSet<String>,
    /// Keys a worker holds.
    pub processing: BTreeSet<String>,
    /// Keys added while processing: queued again on `done`.
    pub again: BTreeSet<String>,
}

impl WorkQueue {
    /// `Add`.
    pub fn add(&mut self, key: &str) {
        if self.processing.contains(key) {
            self.again.insert(key.to_string());
        } else {
            self.queued.insert(key.to_string());
        }
    }

    /// `Get`: hand `key` to a worker.
    pub fn take(&mut self, key: &str) -> bool {
        if !self.queued.remove(key) {
            return false;
        }
        self.processing.insert(key.to_string());
        true
    }

    /// `Done` (and `AddRateLimited` when the sync failed).
    pub fn done(&mut self, key: &str, requeue: bool) {
        self.processing.remove(key);
        if self.again.remove(key) || requeue {
            self.queued.insert(key.to_string());
        }
    }
}
