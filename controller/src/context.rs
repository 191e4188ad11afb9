//! What every sync and every event handler shares.

use crate::clock::Clock;
use crate::memory::Memory;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::Client;
use rsmc_spec::profile::Semantics;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The controller's shared state.
pub struct Context {
    pub client: Client,
    /// The decisions' switches: profile, fixes, an injected fault.
    pub sem: Semantics,
    /// What the expectations timeout is measured on.
    pub clock: Clock,
    /// `BurstReplicas` (pkg/controller/replicaset/replica_set.go): at most this many creates
    /// or deletes per sync.
    pub burst_replicas: u32,
    /// The informers' caches.
    pub replicasets: Store<apps::ReplicaSet>,
    pub pods: Store<core::Pod>,
    pub memory: Mutex<Memory>,
    /// The highest resourceVersion each informer has applied (ReplicaSets, pods): the
    /// positions the consistency gate compares.
    pub positions: [AtomicU64; 2],
    /// Consecutive failed syncs per ReplicaSet, for the back-off.
    failures: Mutex<HashMap<ObjectRef<apps::ReplicaSet>, u32>>,
}

/// client-go's `DefaultControllerRateLimiter` per item: 5 ms doubling per failure, at most
/// 1000 s.
const BACKOFF_BASE: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_secs(1000);

impl Context {
    pub fn new(
        client: Client,
        sem: Semantics,
        clock: Clock,
        replicasets: Store<apps::ReplicaSet>,
        pods: Store<core::Pod>,
    ) -> Context {
        Context {
            client,
            sem,
            clock,
            burst_replicas: 500,
            replicasets,
            pods,
            memory: Mutex::default(),
            positions: [AtomicU64::new(0), AtomicU64::new(0)],
            failures: Mutex::default(),
        }
    }

    /// The memory, whoever panicked while holding it (nothing is left half-changed: every
    /// change under the lock is one call into the spec).
    pub fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `AddRateLimited`: how long a failed key waits before its next sync.
    pub fn back_off(&self, key: &ObjectRef<apps::ReplicaSet>) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let n = failures.entry(key.clone()).or_default();
        let delay = BACKOFF_BASE
            .checked_mul(2u32.saturating_pow(*n))
            .unwrap_or(BACKOFF_MAX)
            .min(BACKOFF_MAX);
        *n = n.saturating_add(1);
        delay
    }

    /// `Forget`: a successful sync resets the key's back-off.
    pub fn forget(&self, key: &ObjectRef<apps::ReplicaSet>) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    /// An informer applied an object of this resourceVersion.
    pub fn advance(&self, replicaset: bool, resource_version: Option<&str>) {
        if let Some(rv) = resource_version.and_then(|v| v.parse::<u64>().ok()) {
            self.positions[usize::from(!replicaset)].fetch_max(rv, Ordering::SeqCst);
        }
    }

    /// The informers' positions (ReplicaSets, pods).
    pub fn positions(&self) -> (u64, u64) {
        (
            self.positions[0].load(Ordering::SeqCst),
            self.positions[1].load(Ordering::SeqCst),
        )
    }
}
