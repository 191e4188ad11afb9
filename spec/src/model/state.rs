//! The model's state: the API server, the controller instances, the garbage collector, what
//! the environment may still do, and ghost records for the action properties.

use super::action::Watcher;
use super::script::ScriptPos;
use crate::api::{ApiServer, Kind, View};
use crate::config::InformerConfig;
use crate::controller::{Expectations, SyncTask, WorkQueue};
use crate::object::{Pod, ReplicaSet, Rv, Uid};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// An informer's position per resource type: the last revision it has delivered.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Positions {
    pub rs: Rv,
    pub pods: Rv,
}

impl Positions {
    pub fn at(rv: Rv) -> Self {
        Positions { rs: rv, pods: rv }
    }

    pub fn get(&self, kind: Kind) -> Rv {
        match kind {
            Kind::ReplicaSet => self.rs,
            Kind::Pod => self.pods,
        }
    }

    pub fn set(&mut self, kind: Kind, rv: Rv) {
        match kind {
            Kind::ReplicaSet => self.rs = rv,
            Kind::Pod => self.pods = rv,
        }
    }

    /// Whether these positions have caught up with `other` for both types.
    pub fn covers(&self, other: &Positions) -> bool {
        self.rs >= other.rs && self.pods >= other.pods
    }
}

/// One ReplicaSet controller instance (kube-controller-manager's replicaset controller).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ControllerState {
    /// Whether this instance is running (the second one only during a handover).
    pub running: bool,
    pub seen: Positions,
    pub queue: WorkQueue,
    /// One slot per worker, kept sorted (busy first, by key) since workers are alike.
    pub workers: Vec<Option<SyncTask>>,
    pub expectations: Expectations,
    /// [upstream] the consistency store: per key, the revisions of this controller's own last
    /// writes that the caches must reach before the key may sync again.
    pub written: BTreeMap<String, Positions>,
}

impl ControllerState {
    pub fn new(workers: usize, running: bool) -> Self {
        ControllerState {
            running,
            seen: Positions::default(),
            queue: WorkQueue::default(),
            workers: vec![None; workers],
            expectations: Expectations::default(),
            written: BTreeMap::new(),
        }
    }

    /// Sort the worker slots so that equal sets of in-flight syncs are equal states, and
    /// forget the consistency store's records that the caches have reached.
    pub fn canonicalize(&mut self) {
        // Busy slots first (`false < true`), then by task.
        self.workers
            .sort_by(|a, b| (a.is_none(), a).cmp(&(b.is_none(), b)));
        // A record is only ever compared with `seen`, which never goes back (a restarted
        // instance starts with an empty store): a part the caches have reached gates nothing
        // again and is as good as none. Keeping its value would keep the revision of an old
        // pod write in the state, telling apart pods the symmetry could merge.
        let seen = self.seen;
        self.written.retain(|_, w| {
            if seen.rs >= w.rs {
                w.rs = 0;
            }
            if seen.pods >= w.pods {
                w.pods = 0;
            }
            w.rs > 0 || w.pods > 0
        });
    }
}

/// What the environment may still do.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Budget {
    pub steps: u8,
    pub crashes: u8,
    pub expiries: u8,
    pub relists: u8,
    pub create_failures: u8,
    pub handovers: u8,
    pub ticks: u8,
}

/// Ghost records: facts about the past that the action properties need. They change only when
/// the facts they record happen, so runs without violations are not split by them.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ghost {
    /// Names of the action properties violated on the way to this state.
    #[serde(skip_deserializing)]
    pub violated: BTreeSet<&'static str>,
    /// `(owner UID, pod UID)` for every pod that referenced a ReplicaSet when the user deleted
    /// that ReplicaSet with propagation Orphan: the dependents Orphan promises to keep.
    pub orphan_promises: BTreeSet<(Uid, Uid)>,
    /// Per live ReplicaSet UID, the pods its last status write counted.
    pub counted: BTreeMap<Uid, BTreeSet<String>>,
}

/// The whole model state. Its `Hash` identifies states equal up to their revisions' values
/// (see [`super::canonical`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct State {
    pub api: ApiServer,
    pub controllers: Vec<ControllerState>,
    /// The garbage collector's informer positions.
    pub gc: Positions,
    pub budget: Budget,
    pub ghost: Ghost,
    /// Where a scripted environment is (always the default in a free model check).
    pub script: ScriptPos,
}

impl State {
    /// The ReplicaSet and pod caches as of `at`.
    pub fn views(&self, at: Positions) -> (View<ReplicaSet>, View<Pod>) {
        (self.api.replicasets_at(at.rs), self.api.pods_at(at.pods))
    }

    /// Every informer position still in use: running watchers and in-flight syncs.
    pub(super) fn positions_in_use(&self) -> impl Iterator<Item = Positions> + '_ {
        let controllers = self.controllers.iter().filter(|c| c.running).flat_map(|c| {
            std::iter::once(c.seen).chain(c.workers.iter().flatten().map(|t| Positions {
                rs: t.read_at.0,
                pods: t.read_at.1,
            }))
        });
        controllers.chain(std::iter::once(self.gc))
    }

    /// Whether every watcher is within its lag bound on both types: each running
    /// controller fewer than `maxLag` events behind, the garbage collector fewer than
    /// `gcMaxLag`. A type whose events a script holds from a recipient is not bounded for
    /// it: holding them is how a scenario makes the controller (or the garbage collector)
    /// fall behind. Nor, when
    /// the oracle's witness search asks for it (`drain_unbounded`), is the backlog a release
    /// let through ([`ScriptPos::draining`]) until the controller has delivered it: a real
    /// controller keeps syncing while its informer works through a burst of events — a
    /// recording of 50 pods deleted under a held cache shows it creating and writing status
    /// with dozens of events still undelivered — and the lag bound is the check's bound on
    /// exploration, not a rule of the cluster.
    pub fn writes_allowed(&self, bound: &InformerConfig) -> bool {
        self.watchers().all(|(p, w)| {
            let lag = match w {
                Watcher::Controller(_) => bound.max_lag,
                Watcher::GarbageCollector => bound.gc_lag(),
            };
            self.bounded_lags(p, w).all(|n| n < lag as usize)
        })
    }

    /// How many events the furthest-behind watcher is behind, on a type the lag bound holds
    /// it to (see [`State::writes_allowed`]): what a run shows of how far behind a write was
    /// made, measured rather than bounded (the oracle's verdicts report it).
    pub fn lag(&self) -> usize {
        self.watchers()
            .flat_map(|(p, w)| self.bounded_lags(p, w))
            .max()
            .unwrap_or(0)
    }

    /// Every watcher the lag bound holds, with how far it has delivered: each running
    /// controller and the garbage collector.
    fn watchers(&self) -> impl Iterator<Item = (Positions, Watcher)> + '_ {
        self.controllers
            .iter()
            .enumerate()
            .filter(|(_, c)| c.running)
            .map(|(i, c)| (c.seen, Watcher::Controller(i as u8)))
            .chain(std::iter::once((self.gc, Watcher::GarbageCollector)))
    }

    /// How far `watcher`, at `p`, is behind on each type the lag bound holds it to: not a
    /// type whose events a script holds from it, nor a released backlog it has yet to
    /// deliver while the witness search drains it unbounded.
    fn bounded_lags(&self, p: Positions, watcher: Watcher) -> impl Iterator<Item = usize> + '_ {
        let (held, draining) = (self.script.held, self.script.draining);
        let free = move |k: Kind| {
            let held = match watcher {
                Watcher::Controller(_) => held.get(k),
                Watcher::GarbageCollector => self.script.held_from_gc.get(k),
            };
            held || p.get(k) < draining.get(k)
        };
        [Kind::ReplicaSet, Kind::Pod]
            .into_iter()
            .filter(move |k| !free(*k))
            .map(move |k| self.api.lag(k, p.get(k)))
    }

    /// Bring the state to its canonical form after a step: drop log entries no one needs (per
    /// resource type),
    /// sort worker slots, forget ghost counts of ReplicaSets that are gone and selected pods
    /// that are gone.
    pub fn canonicalize(&mut self) {
        let in_use: Vec<Positions> = self.positions_in_use().collect();
        let rv = self.api.rv;
        self.api
            .prune(|kind| in_use.iter().map(|p| p.get(kind)).min().unwrap_or(rv));
        for c in &mut self.controllers {
            c.canonicalize();
        }
        let live: BTreeSet<Uid> = self.api.replicasets.values().map(|r| r.meta.uid).collect();
        self.ghost.counted.retain(|uid, _| live.contains(uid));
        let pods = &self.api.pods;
        self.script.normalise(|p| pods.contains_key(p));
        // A backlog every running controller and the garbage collector have delivered
        // bounds nothing any more.
        for kind in [Kind::ReplicaSet, Kind::Pod] {
            let to = self.script.draining.get(kind);
            if self
                .controllers
                .iter()
                .filter(|c| c.running)
                .all(|c| c.seen.get(kind) >= to)
                && self.gc.get(kind) >= to
            {
                self.script.draining.set(kind, 0);
            }
        }
    }

    /// Active pods controlled by the ReplicaSet with `uid`, live.
    pub fn active_controlled(&self, uid: Uid) -> usize {
        self.api
            .pods
            .values()
            .filter(|p| p.is_active() && p.meta.controller_ref().is_some_and(|r| r.uid == uid))
            .count()
    }
}
