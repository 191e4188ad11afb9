//! The order of a run that a cluster would not take by itself, and the steps that force it.
//!
//! On a cluster every actor acts as soon as it can: a watch event reaches the controller
//! milliseconds after its write, and a sync sends each request as soon as the previous one is
//! answered. A model run need do neither, and its race usually needs exactly that: a sync that
//! decides from a cache that has not yet delivered an event, or a request that lands only
//! after another actor's write. The runner's event gate holds both for the ReplicaSet
//! controller under test, from outside it (`hold: pods`, `hold: {requests: …}`), and the
//! runner waits for what other actors do (`await`, `settle`). This module reads a run for the
//! places that need them:
//!
//! - **A late request.** A sync's request lands after somebody else's write that came after
//!   the sync had decided it (its previous step). The request is held from before the sync
//!   starts; the runner awaits it at the gate before the first user step it must follow,
//!   waits for the other actors' writes it must follow, and releases it where the run lands it.
//! - **A late event.** A watch event reaches the controller only after one of its syncs has
//!   started from a cache without it. The events of its type are held from before the write
//!   that makes it until the run delivers it, and the stale sync must have started before the
//!   release: the runner awaits that sync's held request, or settles.
//! - **A late sync.** A key is queued and a worker is idle, yet the run starts the sync only
//!   after a user's write (the counterexample's sync then reads that write). On a cluster the
//!   worker takes the key at once, before the write. The events whose delivery queued the key
//!   are held from before their write until after the last such step, so the key is queued
//!   only then.
//! - **A late event to the garbage collector.** The collector acts from a graph that lacks
//!   an event (an orphaning that misses a just-created dependent, #26120): its events of that
//!   type are held (`hold: {garbage-collector: pods}`; the local control plane runs it in a
//!   kube-controller-manager of its own, behind a gate of its own) from the write until the
//!   run delivers the event, and released once what it did meanwhile has happened.
//! - **A hold after the system's writes.** The runner sets a hold as soon as the step before
//!   it is done; where the run wrote objects of the held type since that step and delivered
//!   them before its hold, the cluster settles first, or the hold would catch them (a
//!   controller's own status update caught this way stops all its later syncs on a release
//!   with the consistency gate).
//! - **Other actors' removals before a step.** The run's garbage collector or API server
//!   removed an object before the next step: the runner waits until it is gone
//!   (`await: {gone: …}`).
//!
//! The expectations' 5-minute expiry is forced by time (a wait, or a moved clock). What no
//! step can force is reported instead, so that the scenario says which order a cluster
//! takes:
//! - a delivery the run places between two steps of a sync that the controller takes in
//!   one pass of its code, such as the list of its pods and the expectations it records (the
//!   gate can place an event only before a sync starts or while one of its requests is
//!   held);
//! - a held request the run lands before a write of the API server's own that was due
//!   already (the removal of a pod a grace-0 delete marked), where the run needs that order
//!   to break its property: the runner releases a held request once the namespace is quiet,
//!   and no gate holds those writes, so they land first. Where such writes are all the
//!   garbage collector's, its requests are held at its gate instead (`requests: {from:
//!   garbage-collector, …}`), from before the step that made each due until the run takes
//!   it (create-while-deleting: the controller's status updates land before the collector
//!   orphans the pod and removes the orphan finalizer).

use super::step::StepKind;
use rsmc_spec::api::{Kind, RequestPattern};
use rsmc_spec::model::{Action, Awaited, Recipient, RequestHold, RsModel, State, Watcher};
use stateright::Model;
use std::collections::BTreeMap;

/// Where an inserted step goes among those at one position; lower first. Waits for other
/// actors come before the awaits of held requests, which come before releases (a stale sync
/// must have started before its events flow), and new holds come last, after every wait, so
/// that a settle never parks a request meant to go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Rank {
    AwaitGone,
    Settle,
    AwaitHeld,
    Release,
    Hold,
}

/// One step to insert: before the run's action `at` (`at == 0`: before everything, holds
/// even before the objects the run starts with).
#[derive(Clone, Debug)]
pub(super) struct Insert {
    pub at: usize,
    pub rank: Rank,
    pub kind: StepKind,
}

/// What forcing a run takes.
#[derive(Debug, Default)]
pub(super) struct Forcing {
    pub inserts: Vec<Insert>,
    /// Per hold, the run's steps (numbered from 1, as its trace prints them) it stands for.
    pub reasons: Vec<String>,
    /// Orders the runner forces by waiting (or by moving the controller's clock).
    pub timed: Vec<String>,
    /// Orders of the run no step can force, and why: the scenario says the cluster takes
    /// another.
    pub unforceable: Vec<String>,
}

/// A run: `states[i + 1]` is `actions[i]` taken in `states[i]`.
struct Run<'a> {
    model: &'a RsModel,
    states: &'a [State],
    actions: &'a [Action],
}

/// A sync in flight: its controller and key (one key is synced by one worker at a time).
type SyncId = (u8, String);

impl Run<'_> {
    fn writes(&self, i: usize) -> bool {
        self.states[i + 1].api.rv > self.states[i].api.rv
    }

    /// The type of object that action `i`, a write, wrote (one request writes one object).
    fn written_kind(&self, i: usize) -> Kind {
        if self.states[i].api.replicasets != self.states[i + 1].api.replicasets {
            Kind::ReplicaSet
        } else {
            Kind::Pod
        }
    }

    fn is_step(&self, i: usize) -> bool {
        let a = &self.actions[i];
        a.is_environment() && !a.is_script_bookkeeping()
    }

    /// The sync a system move belongs to.
    fn sync_of(&self, i: usize) -> Option<SyncId> {
        let slot = |controller: u8, worker: u8| {
            let c = self.states[i].controllers.get(controller as usize)?;
            let task = c.workers.get(worker as usize)?.as_ref()?;
            Some((controller, task.key.clone()))
        };
        match &self.actions[i] {
            Action::StartSync {
                controller, key, ..
            } => Some((*controller, key.clone())),
            Action::SyncStep { controller, worker }
            | Action::Choose {
                controller, worker, ..
            }
            | Action::CreateRejected { controller, worker }
            | Action::LandsInRemoval { controller, worker } => slot(*controller, *worker),
            _ => None,
        }
    }

    /// Whether action `i` starts the sync `sync`.
    fn starts(&self, i: usize, sync: &SyncId) -> bool {
        matches!(self.actions[i], Action::StartSync { .. })
            && self.sync_of(i).as_ref() == Some(sync)
    }

    /// The previous step of the sync that sends a request at action `j`: the request is sent
    /// right after it.
    fn sent_before(&self, j: usize) -> usize {
        let sync = self.sync_of(j);
        (0..j)
            .rev()
            .find(|&i| self.sync_of(i) == sync)
            .unwrap_or(j.saturating_sub(1))
    }

    /// The last environment step before `i`.
    fn step_before(&self, i: usize) -> Option<usize> {
        (0..i).rev().find(|&k| self.is_step(k))
    }

    /// A pod's name a user chose (a generated one does not exist on another cluster).
    fn named_by_user(&self, pod: &str) -> bool {
        self.states
            .iter()
            .find_map(|s| s.api.pods.get(pod))
            .is_some_and(|p| p.meta.generate_name.is_none())
    }

    /// The pattern a scenario can name: a generated pod's name dropped.
    fn nameable(&self, mut pattern: RequestPattern) -> RequestPattern {
        if pattern.resource == rsmc_spec::api::pattern::Resource::Pods
            && pattern
                .name
                .as_deref()
                .is_some_and(|n| !self.named_by_user(n))
        {
            pattern.name = None;
        }
        pattern
    }

    /// The requests `pattern` matches that the run sends in `range`.
    fn matching(
        &self,
        pattern: &RequestPattern,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = usize> + '_ {
        let pattern = pattern.clone();
        range.filter(move |&i| {
            let sent = match &self.actions[i] {
                Action::SyncStep { controller, worker } => {
                    self.model
                        .next_request(&self.states[i], *controller, *worker)
                }
                Action::Gc { work } => self.model.gc_request(&self.states[i], work),
                _ => None,
            };
            sent.is_some_and(|p| {
                p.from == pattern.from && pattern.matches(p.verb, p.resource, p.name.as_deref())
            })
        })
    }

    /// Where a hold of `pattern` that must catch a request sent right after action `sent`
    /// begins: from the start if the run sends none it would catch before; else before the
    /// user's step that preceded the last of those (from the start if none did), letting
    /// those the run sends from there on through ([`Self::hold_after`]). On a cluster the
    /// requests a step causes follow it within milliseconds, so a hold set between them would
    /// catch them or not by chance; counted from before the step, it catches the run's.
    fn hold_from(&self, pattern: &RequestPattern, sent: usize) -> usize {
        self.matching(pattern, 0..sent + 1)
            .last()
            .map_or(0, |last| self.step_before(last).unwrap_or(0))
    }

    /// How many requests a hold of `pattern` set before action `from` lets through so that
    /// it catches the one sent right after action `sent`.
    fn hold_after(&self, pattern: &RequestPattern, from: usize, sent: usize) -> u8 {
        let n = self.matching(pattern, from..sent + 1).count();
        u8::try_from(n).unwrap_or(u8::MAX)
    }

    /// The first request of the sync that starts at `started`: its action and pattern.
    fn first_request(&self, started: usize) -> Option<(usize, RequestPattern)> {
        let sync = self.sync_of(started)?;
        (started + 1..self.actions.len()).find_map(|j| match self.actions[j] {
            Action::SyncStep { controller, worker } if self.sync_of(j).as_ref() == Some(&sync) => {
                let p = self
                    .model
                    .next_request(&self.states[j], controller, worker)?;
                Some((j, self.nameable(p)))
            }
            _ => None,
        })
    }

    /// Where a hold of `watcher`'s `kind` events for the event action `written` wrote
    /// begins: at that step, or, for a system's write, after the last event of its type the
    /// watcher had on time (the gate holds events once the cluster is quiet, so those have
    /// been delivered).
    fn events_held_from(&self, written: usize, watcher: Watcher, kind: Kind) -> usize {
        if self.is_step(written) {
            return written;
        }
        let on_time = (0..written).rev().find(|&i| {
            matches!(self.actions[i], Action::Deliver { watcher: w, kind: k } if w == watcher && k == kind)
        });
        self.step_before(written)
            .unwrap_or(0)
            .max(on_time.map_or(0, |i| i + 1))
    }

    /// Objects with a name a scenario knows that action `i` removed.
    fn removed(&self, i: usize) -> Vec<(Kind, String)> {
        let (before, after) = (&self.states[i].api, &self.states[i + 1].api);
        let rs = before
            .replicasets
            .keys()
            .filter(|n| !after.replicasets.contains_key(*n))
            .map(|n| (Kind::ReplicaSet, n.clone()));
        let pods = before
            .pods
            .keys()
            .filter(|n| !after.pods.contains_key(*n) && self.named_by_user(n))
            .map(|n| (Kind::Pod, n.clone()));
        rs.chain(pods).collect()
    }
}

/// A held interval of one thing the gate holds, before actions `from` and `to`; a hold of
/// requests must catch the one sent right after action `sent` (and lets through the
/// matching ones the run sends before it).
struct Interval {
    from: usize,
    to: usize,
    sent: Option<usize>,
}

/// What the gate holds: a resource type's watch events, or requests.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Events(Recipient, Kind),
    Requests(RequestPattern),
}

/// A late request found in the run.
struct LateRequest {
    sync: SyncId,
    started: usize,
    pattern: RequestPattern,
    await_at: usize,
}

/// How a stale sync is shown to have started before its events are released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Started {
    /// By its first request, held and awaited, where the run lands it after the delivery.
    ByRequest,
    /// By a settle: the sync has run to its end.
    BySettle,
}

/// How to force the run's order; see the module's documentation.
pub(super) fn forcing(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    started: Started,
) -> Forcing {
    let run = Run {
        model,
        states,
        actions,
    };
    let mut out = Forcing::default();
    let mut held: BTreeMap<Target, Vec<Interval>> = BTreeMap::new();
    let mut late = late_requests(&run, &mut out, &mut held);
    late_events(&run, &mut out, &mut held, &mut late, started);
    late_syncs(&run, &mut out, &mut held);
    for r in &late {
        out.inserts.push(Insert {
            at: r.await_at,
            rank: Rank::AwaitHeld,
            kind: StepKind::Await(Awaited::Held(r.pattern.clone())),
        });
    }
    for i in (0..actions.len()).filter(|&i| run.is_step(i) && run.writes(i)) {
        let after = run.step_before(i).map_or(0, |k| k + 1);
        await_removals(&run, &mut out, after..i, None, i);
    }
    for (target, intervals) in held {
        let merged = merge(intervals);
        let after = |m: &Merged| match &target {
            Target::Requests(p) => m
                .interval
                .sent
                .map_or(0, |sent| run.hold_after(p, m.counted_from, sent)),
            Target::Events(..) => 0,
        };
        for (k, m) in merged.iter().enumerate() {
            let rearms = merged.get(k + 1).filter(|next| next.rearms).map(&after);
            let (hold, release) = match &target {
                Target::Events(to, kind) => (
                    StepKind::Hold {
                        kind: *kind,
                        to: *to,
                    },
                    StepKind::Release {
                        kind: *kind,
                        to: *to,
                    },
                ),
                Target::Requests(p) => (
                    StepKind::HoldRequests(RequestHold {
                        pattern: p.clone(),
                        after: after(m),
                    }),
                    StepKind::ReleaseRequests {
                        pattern: p.clone(),
                        then_hold_after: rearms,
                    },
                ),
            };
            if !m.rearms {
                if let Target::Events(to, kind) = &target {
                    await_delivered(&run, &mut out, *to, *kind, m.interval.from);
                }
                out.inserts.push(Insert {
                    at: m.interval.from,
                    rank: Rank::Hold,
                    kind: hold,
                });
            }
            out.inserts.push(Insert {
                at: m.interval.to,
                rank: Rank::Release,
                kind: release,
            });
        }
    }
    out
}

/// A hold of one target after merging, see [`merge`].
struct Merged {
    interval: Interval,
    /// Where the hold starts counting the requests it lets through.
    counted_from: usize,
    /// Whether the hold begins where the previous one is released: that release re-arms it
    /// (`thenHoldAfter`), because on a cluster the sync's next request (a conflict's retry)
    /// follows the released one within milliseconds, before any step after the release
    /// could hold it.
    rearms: bool,
}

/// One target's holds, sorted, as the gate can place them. Overlapping holds of events
/// become one. A hold of requests that must catch a request landing after the previous
/// hold's lands begins again where that one is released (a release comes before a hold at
/// one position), so that it lets through what the run sends between the two.
fn merge(mut intervals: Vec<Interval>) -> Vec<Merged> {
    intervals.sort_by_key(|v| (v.from, v.to));
    let mut merged: Vec<Merged> = Vec::new();
    for v in intervals {
        match merged.last_mut() {
            Some(last)
                if v.from <= last.interval.to && (v.sent.is_none() || v.to <= last.interval.to) =>
            {
                last.interval.to = last.interval.to.max(v.to)
            }
            Some(last) if v.from <= last.interval.to => {
                let from = last.interval.to;
                merged.push(Merged {
                    interval: Interval { from, ..v },
                    counted_from: from + 1,
                    rearms: true,
                });
            }
            _ => merged.push(Merged {
                counted_from: v.from,
                interval: v,
                rearms: false,
            }),
        }
    }
    merged
}

/// Requests that land after another actor's write the sync did not wait for.
fn late_requests(
    run: &Run,
    out: &mut Forcing,
    held: &mut BTreeMap<Target, Vec<Interval>>,
) -> Vec<LateRequest> {
    let mut late = Vec::new();
    for (j, action) in run.actions.iter().enumerate() {
        let Action::SyncStep { controller, worker } = action else {
            continue;
        };
        let Some(exact) = run.model.next_request(&run.states[j], *controller, *worker) else {
            continue;
        };
        let Some(sync) = run.sync_of(j) else { continue };
        let same = |i: usize| run.sync_of(i).as_ref() == Some(&sync);
        let Some(decided) = (0..j).rev().find(|&i| same(i)) else {
            continue;
        };
        let Some(started) = (0..=decided).rev().find(|&i| run.starts(i, &sync)) else {
            continue;
        };
        let foreign: Vec<usize> = (decided + 1..j)
            .filter(|&i| run.writes(i) && !same(i))
            .collect();
        let Some(first) = foreign.first() else {
            continue;
        };
        let pattern = run.nameable(exact);
        let from = run.hold_from(&pattern, decided);
        let await_at = (decided + 1..j).find(|&i| run.is_step(i)).unwrap_or(j);
        out.reasons.push(format!(
            "{pattern} held: step {}'s request of the sync of {} that started at step {} lands after step {}'s write",
            j + 1,
            sync.1,
            started + 1,
            first + 1
        ));
        if let Some(due) = due_first(run, j) {
            if due.collector_only {
                hold_collector(run, out, held, j, &due.moved);
            } else {
                out.unforceable.push(due.reason);
            }
        }
        let after = decided.max(run.step_before(j).map_or(0, |k| k + 1));
        wait_for_writes(run, out, after..j, Some(&sync), j);
        held.entry(Target::Requests(pattern.clone()))
            .or_default()
            .push(Interval {
                from,
                to: j,
                sent: Some(decided),
            });
        late.push(LateRequest {
            sync,
            started,
            pattern,
            await_at,
        });
    }
    late
}

/// Watch events a controller's sync started without, and the garbage collector's.
fn late_events(
    run: &Run,
    out: &mut Forcing,
    held: &mut BTreeMap<Target, Vec<Interval>>,
    late: &mut [LateRequest],
    started: Started,
) {
    // Per stale sync (by the step that started it), the deliveries the run places within
    // one pass of its code.
    let mut within: BTreeMap<usize, (SyncId, Vec<usize>)> = BTreeMap::new();
    for (d, action) in run.actions.iter().enumerate() {
        let Action::Deliver { watcher, kind } = action else {
            continue;
        };
        let after = &run.states[d + 1];
        let rv = match watcher {
            Watcher::Controller(c) => after.controllers[*c as usize].seen.get(*kind),
            Watcher::GarbageCollector => after.gc.get(*kind),
        };
        let Some(written) = (0..d).find(|&i| run.states[i + 1].api.rv >= rv) else {
            continue;
        };
        // The watcher's first move without the event: a sync it started, or the
        // collector's work on its graph.
        let (acted, what) = match watcher {
            Watcher::Controller(c) => (
                (written + 1..d).find(|&t| {
                    matches!(run.actions[t], Action::StartSync { controller, .. } if controller == *c)
                }),
                "its sync started",
            ),
            Watcher::GarbageCollector => (
                (written + 1..d).find(|&t| matches!(run.actions[t], Action::Gc { .. })),
                "it acted",
            ),
        };
        let to = Recipient::of(*watcher);
        let Some(acted) = acted else { continue };
        let from = run.events_held_from(written, *watcher, *kind);
        out.reasons.push(format!(
            "{} events held from the {to}: step {}'s delivery of the event step {} wrote comes after {what} at step {}",
            kind.resource_name(),
            d + 1,
            written + 1,
            acted + 1
        ));
        held.entry(Target::Events(to, *kind))
            .or_default()
            .push(Interval {
                from,
                to: d,
                sent: None,
            });
        if to == Recipient::GarbageCollector {
            // What the collector did from its stale graph has happened before the events
            // flow: what it removed is gone, or the cluster has settled.
            wait_for_writes(run, out, acted..d, None, d);
            continue;
        }
        // The stale sync must have started before the events flow: its held request shows
        // it has. A sync whose requests the run does not hold otherwise, and whose first
        // request lands after the delivery, gets that one held for the purpose, awaited
        // before the release and let go where the run lands it; for any other, the cluster
        // settles before the release (holding a request the run lands earlier would change
        // the order it needs).
        let stale = acted;
        // `acted` is a StartSync here, which always names its sync.
        let Some(sync) = run.sync_of(stale) else {
            continue;
        };
        if let Some(r) = late
            .iter_mut()
            .find(|r| r.sync == sync && r.started == stale)
        {
            r.await_at = r.await_at.min(d);
            continue;
        }
        let first = run
            .first_request(stale)
            .filter(|(first, _)| started == Started::ByRequest && *first > d);
        let upto = match first {
            Some((first, pattern)) => {
                out.reasons.push(format!(
                    "{pattern} held: step {}'s request shows the sync of step {} has started",
                    first + 1,
                    stale + 1
                ));
                out.inserts.push(Insert {
                    at: d,
                    rank: Rank::AwaitHeld,
                    kind: StepKind::Await(Awaited::Held(pattern.clone())),
                });
                let sent = run.sent_before(first);
                held.entry(Target::Requests(pattern.clone()))
                    .or_default()
                    .push(Interval {
                        from: run.hold_from(&pattern, sent),
                        to: first,
                        sent: Some(sent),
                    });
                Some(first)
            }
            None => {
                out.inserts.push(Insert {
                    at: d,
                    rank: Rank::Settle,
                    kind: StepKind::Settle,
                });
                None
            }
        };
        if !commutes_with_sync(run, &sync, d, upto) {
            within
                .entry(stale)
                .or_insert_with(|| (sync, Vec::new()))
                .1
                .push(d);
        }
    }
    for (stale, (sync, deliveries)) in within {
        let steps = steps_named(&deliveries);
        let next = (deliveries[0] + 1..run.actions.len())
            .find(|&i| run.sync_of(i).as_ref() == Some(&sync))
            .unwrap_or(stale);
        out.unforceable.push(format!(
            "the run delivers the events of {} after the sync of {} started at step {} and before its step {}, and the outcome depends on it; the controller takes those steps in one pass of its code, with no request between them for the gate to hold, so on a cluster the events come later",
            steps,
            sync.1,
            stale + 1,
            next + 1,
        ));
    }
    for (i, a) in run.actions.iter().enumerate() {
        if let Action::ExpireExpectations { key, .. } = a {
            out.timed.push(format!(
                "step {} expires the expectations of {key}: the runner waits the 5 minutes out (a controller run with `rsmc conform --moved-clock` has its clock moved on instead)",
                i + 1
            ));
        }
    }
}

/// Syncs the run starts later than a cluster would: after a user's write that its cache has
/// delivered, with the key queued and a worker idle since a delivery before it (see the
/// module docs). Forced only
/// where the controller starts no other sync meanwhile (holding the events would delay it
/// too).
fn late_syncs(run: &Run, out: &mut Forcing, held: &mut BTreeMap<Target, Vec<Interval>>) {
    for (s, action) in run.actions.iter().enumerate() {
        let Action::StartSync {
            controller, key, ..
        } = action
        else {
            continue;
        };
        let startable = |i: usize| {
            let mut enabled = Vec::new();
            run.model.actions(&run.states[i], &mut enabled);
            enabled.iter().any(|a| {
                matches!(a, Action::StartSync { controller: c, key: k, .. } if c == controller && k == key)
            })
        };
        // The action after which the sync could start, and stayed startable until it did.
        let Some(queued) = (0..s).rev().find(|&i| !startable(i)) else {
            continue;
        };
        let Action::Deliver { watcher, kind } = run.actions[queued] else {
            continue;
        };
        if watcher != Watcher::Controller(*controller) {
            continue;
        }
        // The user's writes the sync reads from its cache: a sync that starts after a write
        // it has not seen reads what it would have read before it.
        let cache = &run.states[s].controllers[*controller as usize].seen;
        let late: Vec<usize> = (queued + 1..s)
            .filter(|&i| run.is_step(i) && run.writes(i))
            .filter(|&i| cache.get(run.written_kind(i)) >= run.states[i + 1].api.rv)
            .collect();
        let Some(&last) = late.last() else { continue };
        let rv = run.states[queued + 1].controllers[*controller as usize]
            .seen
            .get(kind);
        // Written by an action of the run, or one of the objects it starts with: held from
        // before those.
        let from = (0..queued)
            .find(|&i| run.states[i + 1].api.rv >= rv)
            .map_or(0, |written| run.events_held_from(written, watcher, kind));
        let other_sync = (from..=last).any(|i| {
            matches!(&run.actions[i], Action::StartSync { controller: c, .. } if c == controller)
        });
        if other_sync {
            continue;
        }
        let to = Recipient::of(watcher);
        out.reasons.push(format!(
            "{} events held from the {to}: the sync of {key} the run starts at step {} could start after step {}'s delivery, before {}; on a cluster an idle worker takes the key at once",
            kind.resource_name(),
            s + 1,
            queued + 1,
            writes_of(&late)
        ));
        held.entry(Target::Events(to, kind))
            .or_default()
            .push(Interval {
                from,
                to: last + 1,
                sent: None,
            });
        // The sync starts at the release; what it writes before the run's next step has
        // happened before that step (and before any hold set there).
        if let Some(next) = (s + 1..run.actions.len()).find(|&i| run.is_step(i)) {
            wait_for_writes(run, out, s..next, None, next);
        }
    }
}

/// Before a hold of `to`'s `kind` events set at action `from`: where the system wrote
/// objects of that type since the last step and the run delivered those events to the
/// watcher before `from`, the cluster settles first, so that the hold does not catch them.
/// On a cluster the runner sets the hold as soon as the step before it is done, when those
/// writes may not even have landed; a caught write of the controller's own then also stops
/// every later sync of its ReplicaSet on a release with the consistency gate (KEP-5647:
/// ignore-ranking on v1.37.2, whose hold caught the status update of trace step 13 that the
/// run delivers at step 14, before the hold).
fn await_delivered(run: &Run, out: &mut Forcing, to: Recipient, kind: Kind, from: usize) {
    let seen = |s: &State| match to {
        Recipient::ReplicaSetController => (s.controllers.iter())
            .filter(|c| c.running)
            .map(|c| c.seen.get(kind))
            .min()
            .unwrap_or(0),
        Recipient::GarbageCollector => s.gc.get(kind),
    };
    let since = run.step_before(from).map_or(0, |k| k + 1);
    let delivered = (since..from).any(|i| {
        run.writes(i)
            && !run.is_step(i)
            && run.written_kind(i) == kind
            && seen(&run.states[from]) >= run.states[i + 1].api.rv
    });
    if delivered {
        out.inserts.push(Insert {
            at: from,
            rank: Rank::Settle,
            kind: StepKind::Settle,
        });
    }
}

/// Writes of other actors that were due when the held request landing at `j` landed, and
/// that the run needs after it: see [`due_first`].
struct DueFirst {
    /// The run's actions that take them.
    moved: Vec<usize>,
    /// Whether all of them are the garbage collector's, whose requests its gate can hold
    /// (the API server's own, the removal of a pod marked by a grace-0 delete, it cannot).
    collector_only: bool,
    /// What a cluster does when nothing holds them.
    reason: String,
}

/// Whether writes of the garbage collector or the API server's own, which the run takes
/// after the held request landing at `j` although they could be taken before, must come
/// after it for the run to reach its safety violation; if so, which, and what a cluster does
/// when nothing holds them. The runner releases a held request once the namespace is quiet,
/// so the writes that are due then have landed first. The run is replayed in the model in
/// that order, those writes first and its other actions as it took them (those the new
/// order leaves without a move to make, such as the delivery of an event delivered already,
/// skipped); where the replay breaks none of the properties the run broke, the order
/// matters. (A run without a safety violation, a convergence counterexample, is not judged
/// this way.)
fn due_first(run: &Run, j: usize) -> Option<DueFirst> {
    let broken = run.model.broken(run.states.last()?);
    if broken.is_empty() {
        return None;
    }
    let end = (j + 1..run.actions.len())
        .find(|&i| run.is_step(i))
        .unwrap_or(run.actions.len());
    let mut state = run.states[j].clone();
    let mut moved = Vec::new();
    for g in j + 1..end {
        let unheld = matches!(
            run.actions[g],
            Action::Gc { .. } | Action::RemoveMarkedPod { .. }
        );
        if !unheld || !run.writes(g) {
            continue;
        }
        if let Some(next) = run.model.next_state(&state, run.actions[g].clone()) {
            state = next;
            moved.push(g);
        }
    }
    if moved.is_empty() {
        return None;
    }
    let landed = run.writes(j);
    let before = state.api.rv;
    let answer = match run.model.next_state(&state, run.actions[j].clone()) {
        None => ", the request is not sent",
        Some(next) => {
            let answer = match (landed, next.api.rv > before) {
                (true, false) => ", the request is refused",
                (false, true) => ", the request is accepted",
                _ => "",
            };
            state = next;
            answer
        }
    };
    let breaks = |s: &State| run.model.broken(s).iter().any(|p| broken.contains(p));
    for i in (j + 1..run.actions.len()).filter(|i| !moved.contains(i)) {
        if breaks(&state) {
            return None;
        }
        if let Some(next) = run.model.next_state(&state, run.actions[i].clone()) {
            state = next;
        }
    }
    if breaks(&state) {
        return None;
    }
    let collector_only = moved
        .iter()
        .all(|&g| matches!(run.actions[g], Action::Gc { .. }));
    let reason = format!(
        "the run lands step {}'s request before {} of the garbage collector{}, due already; the runner releases a held request once the namespace is quiet and no gate holds those writes, so on a cluster they come first{answer}, and the run's later steps do not break \"{}\"",
        j + 1,
        steps_named(&moved),
        if collector_only { "" } else { " and the API server" },
        broken.join("\", \""),
    );
    Some(DueFirst {
        moved,
        collector_only,
        reason,
    })
}

/// Hold the garbage collector's requests of the run's actions `moved` at its gate, so that
/// they land after the held request landing at `j` ([`due_first`]): each from before the
/// step that made it due (on a cluster the collector acts within milliseconds of it) until
/// the run takes it. The model, like the gate, holds the collector's work item and decides
/// it on release; what it reads (the owner's and the dependent's identities) cannot change
/// in between.
fn hold_collector(
    run: &Run,
    out: &mut Forcing,
    held: &mut BTreeMap<Target, Vec<Interval>>,
    j: usize,
    moved: &[usize],
) {
    for &g in moved {
        let Action::Gc { work } = &run.actions[g] else {
            continue;
        };
        let Some(exact) = run.model.gc_request(&run.states[g], work) else {
            continue;
        };
        let pattern = run.nameable(exact);
        let due = (0..=g)
            .rev()
            .take_while(|&k| run.model.gc_due(&run.states[k], &pattern))
            .last()
            .unwrap_or(g);
        let from = (0..due).rev().find(|&k| run.is_step(k)).unwrap_or(0);
        out.reasons.push(format!(
            "the garbage-collector's {pattern} held: step {}'s write lands after step {}'s request",
            g + 1,
            j + 1
        ));
        held.entry(Target::Requests(pattern))
            .or_default()
            .push(Interval {
                from,
                to: g,
                sent: g.checked_sub(1),
            });
    }
}

/// The run's actions `actions` as its trace numbers them: "step 20", "steps 20, 21".
fn steps_named(actions: &[usize]) -> String {
    let numbers: Vec<String> = actions.iter().map(|i| (i + 1).to_string()).collect();
    match numbers.as_slice() {
        [one] => format!("step {one}"),
        more => format!("steps {}", more.join(", ")),
    }
}

/// "the write of step 20", "the writes of steps 20, 21".
fn writes_of(actions: &[usize]) -> String {
    let plural = if actions.len() > 1 { "s" } else { "" };
    format!("the write{plural} of {}", steps_named(actions))
}

/// Whether the delivery at `d` may come after the steps that the sync `sync`, in flight at
/// `d`, takes up to its held request `upto` (the first that lands after the delivery), or
/// without one, up to its end (the runner settles before the release): that is the order a
/// cluster takes, the gate can place an event only before a sync starts or while one of its
/// requests is held. The run is replayed in the model in that order, the sync's steps first,
/// its held request held there too (the sync records its expectations and parks; it lands
/// where the run lands it); the order does not matter when the replay leaves the cluster and
/// its actors where the run does at the sync's last step replayed ([`same_outcome`]).
fn commutes_with_sync(run: &Run, sync: &SyncId, d: usize, upto: Option<usize>) -> bool {
    let next_start = (d + 1..run.actions.len())
        .find(|&i| run.starts(i, sync))
        .unwrap_or(run.actions.len());
    let ours: Vec<usize> = (d + 1..next_start)
        .filter(|&i| run.sync_of(i).as_ref() == Some(sync))
        .filter(|&i| upto.is_none_or(|u| i <= u))
        .collect();
    let Some(&end) = ours.last() else {
        return true;
    };
    let action = |i: usize| run.actions[i].clone();
    let rest = (d..=end).filter(|i| !ours.contains(i)).map(action);
    let held = upto.and_then(|first| {
        let Action::SyncStep { controller, worker } = run.actions[first] else {
            return None;
        };
        run.model
            .next_request(&run.states[first], controller, worker)
    });
    let order: Vec<Action> = match held {
        Some(pattern) => std::iter::once(Action::HoldRequests {
            pattern: pattern.clone(),
            after: 0,
        })
        .chain(ours.iter().copied().map(action))
        .chain(rest)
        .chain([
            Action::ReleaseRequests {
                pattern,
                then_hold_after: None,
            },
            action(end),
        ])
        .collect(),
        None => ours.iter().copied().map(action).chain(rest).collect(),
    };
    let mut state = run.states[d].clone();
    for a in order {
        match run.model.next_state(&state, a) {
            Some(next) => state = next,
            None => return false,
        }
    }
    same_outcome(&state, &run.states[end + 1])
}

/// Whether a replay in another order left the cluster and its actors where the run did. The
/// environment's budget and the script differ by the holds a replay adds; a controller's
/// expectations of a ReplicaSet that is gone differ by when its delete handler dropped them.
fn same_outcome(replayed: &State, ran: &State) -> bool {
    let controllers = |s: &State| {
        let mut controllers = s.controllers.clone();
        for c in &mut controllers {
            c.expectations
                .0
                .retain(|key, _| s.api.replicasets.contains_key(key));
        }
        controllers
    };
    (&replayed.api, &replayed.gc, &replayed.ghost) == (&ran.api, &ran.gc, &ran.ghost)
        && controllers(replayed) == controllers(ran)
}

/// Before action `before`, wait until every object that other actors' writes in `range`
/// removed is gone (the writes of `own`, a sync whose request is held, excepted). Whether any
/// of those writes removed nothing a scenario can name: only a settle waits for such a one.
fn await_removals(
    run: &Run,
    out: &mut Forcing,
    range: std::ops::Range<usize>,
    own: Option<&SyncId>,
    before: usize,
) -> bool {
    let mut unnamed = false;
    for i in range {
        let theirs =
            run.writes(i) && !run.is_step(i) && (own.is_none() || run.sync_of(i).as_ref() != own);
        if !theirs {
            continue;
        }
        let removed = run.removed(i);
        unnamed |= removed.is_empty();
        for (kind, name) in removed {
            out.inserts.push(Insert {
                at: before,
                rank: Rank::AwaitGone,
                kind: StepKind::Await(Awaited::Gone { kind, name }),
            });
        }
    }
    unnamed
}

/// Before a held request's release at `before`: wait for the writes other actors made in
/// `range`, which the request must land after — until what they removed is gone, and for
/// the cluster to settle if one of them removed nothing (the held sync is parked, so a
/// settle waits for everyone else). A user's next step does not settle this way: the run
/// may need it before the system's next move, and on a cluster the system's writes land
/// within milliseconds of the step that caused them anyway.
fn wait_for_writes(
    run: &Run,
    out: &mut Forcing,
    range: std::ops::Range<usize>,
    own: Option<&SyncId>,
    before: usize,
) {
    if await_removals(run, out, range, own, before) {
        out.inserts.push(Insert {
            at: before,
            rank: Rank::Settle,
            kind: StepKind::Settle,
        });
    }
}
