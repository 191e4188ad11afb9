//! Watch deliveries the witness search holds back, so that a sync can read a stale cache.
//!
//! The search delivers watch events first ([`super::validate::Likely::CatchUp`]): a real
//! informer is most often caught up, and taking deliveries lazily leaves the search every
//! place for each of them. But a real informer also falls behind a burst of another
//! component's writes, by as many events as the burst has, and a sync that starts then reads
//! the cache from the middle of the burst. The `overlap-20` recording shows it: the garbage
//! collector orphaned web-a's 20 pods, and the controller wrote web-a's status counting 13 of
//! them, from a pod cache that had 7 of the orphan patches while 15 were committed. Eager
//! deliveries make that read last among every interleaving the search tries, so it never
//! gets there within a budget.
//!
//! The recording says what the next sync read, in the status it writes: its `replicas` is the
//! number of pods the sync counted as its ReplicaSet's. So a delivery to a controller is held
//! back (ranked with the steps the recording does not point to) when it takes the cache's
//! count of a ReplicaSet's active pods further from the `replicas` of the next status write
//! of that ReplicaSet a sync has yet to read for: the write of a sync under way is taken to
//! be its own, the next one the target. The count is of the pods whose controller the
//! ReplicaSet already is; a sync that adopts or releases pods counts others, so the rule only
//! orders the search, it rules nothing out: every run is still tried, the held deliveries
//! after the others.
//!
//! Measured (2026-12-02, 2 cores): `overlap-20` with informers up to 32 behind is found in
//! 570 nodes; `stale-delete-50` (a released backlog of 50 deletions, the controller writing
//! status from the middle of it) in 604 instead of 85,503.

use crate::observed::{Event, EventType, Object};
use rsmc_spec::api::{Change, Kind};
use rsmc_spec::model::{Action, State, Watcher};
use rsmc_spec::object::{OwnerReference, Pod, ReplicaSetStatus};
use std::sync::Arc;

/// Whether `action`, a step from the search's `state` after `matched` recorded writes, is a
/// pod delivery to a controller that takes the count of some ReplicaSet further from the next
/// status the recording shows a sync of it reading for (`visible[matched..]`: the writes still
/// to produce).
pub(crate) fn holds_back(
    visible: &[(usize, &Event)],
    state: &State,
    matched: usize,
    action: &Action,
) -> bool {
    let Action::Deliver {
        watcher: Watcher::Controller(c),
        kind: Kind::Pod,
    } = action
    else {
        return false;
    };
    let s = state;
    let controller = &s.controllers[*c as usize];
    let Some(event) = s.api.next_event(Kind::Pod, controller.seen.pods) else {
        return false;
    };
    let Change::Pod { before, after } = &event.change else {
        return false;
    };
    let rest = &visible[matched.min(visible.len())..];
    // The ReplicaSets whose count the event changes, and by how much.
    let owner = |p: &Option<Arc<Pod>>| {
        p.as_ref()
            .filter(|p| p.is_active())
            .and_then(|p| p.meta.controller_ref().cloned())
    };
    let (from, to) = (owner(before), owner(after));
    if from.as_ref().map(|r| r.uid) == to.as_ref().map(|r| r.uid) {
        return false;
    }
    let changed = from.map(|r| (r, -1)).into_iter().chain(to.map(|r| (r, 1)));
    changed
        .into_iter()
        .any(|(rs, delta): (OwnerReference, i64)| {
            let in_sync = controller
                .workers
                .iter()
                .flatten()
                .any(|t| t.key == rs.name);
            let live = s.api.replicasets.get(&rs.name).map(|l| &l.status);
            let Some(target) = next_read_status(rest, &rs.name, live, in_sync as usize) else {
                return false;
            };
            let was = s
                .api
                .pods_at(controller.seen.pods)
                .values()
                .filter(|p| {
                    p.is_active() && p.meta.controller_ref().is_some_and(|r| r.uid == rs.uid)
                })
                .count() as i64;
            (was + delta - target).abs() > (was - target).abs()
        })
}

/// The `replicas` of the status write of ReplicaSet `name` among `rest` after the first
/// `skip` of them: the status a sync yet to read writes. A status write is a system write of
/// the ReplicaSet whose status differs from the one before it (`live`: the model's now).
fn next_read_status<'a>(
    rest: &[(usize, &'a Event)],
    name: &str,
    mut last: Option<&'a ReplicaSetStatus>,
    skip: usize,
) -> Option<i64> {
    let mut seen = 0;
    for (_, e) in rest {
        let Object::ReplicaSet(rs) = &e.object else {
            continue;
        };
        if rs.meta.name != name || e.event_type != EventType::Modified {
            continue;
        }
        let changed = last != Some(&rs.status);
        last = Some(&rs.status);
        if e.step.is_some() || !changed {
            continue;
        }
        if seen == skip {
            return Some(rs.status.replicas as i64);
        }
        seen += 1;
    }
    None
}
