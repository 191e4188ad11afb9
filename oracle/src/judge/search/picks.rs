//! A sync's pick of its next claim patch or scale-down delete that the rest of a recording
//! rules out, so that the witness search need not follow it.
//!
//! Upstream sends a sync's adopt and release patches one after another in lister order (a
//! map's: any order, replica_set.go `claimPods` through controller_ref_manager.go
//! `ClaimPods`), and its scale-down deletes in parallel (they land in any order,
//! `manageReplicas`); the model picks the next one as they go out
//! ([`rsmc_spec::model::Action::Choose`] of one pod). Two syncs racing to adopt the same
//! orphans — web-b and web-c over web-a's 20 in `overlap-20` — leave the search every order
//! of each tried under every interleaving of the other's, although the recording shows in
//! which order each sync's patches landed, and which of them failed (a patch of a pod the
//! other had adopted first writes nothing).
//!
//! A pick is ruled out when its request, sent now, would write the pod it names, and the
//! rest of the segment shows no write to that pod before a write only a sync of the same
//! ReplicaSet makes: the ReplicaSet's status (a live one's, not a client's), or its adoption
//! of a pod that has no controller now (only that ReplicaSet's syncs add its controller
//! reference). The sync sends the picked request before anything else; it lands before the
//! sync ends, so before any later sync of that ReplicaSet starts; and the pod, with no
//! write until then, is as it is now, so the request writes it as it would now — a write
//! the recording does not show there. Where no such write of the ReplicaSet is to come, the
//! pick is ruled out when the pod has no write at all in the rest of the segment and the
//! sync sends every request before the settle point (the conditions of [`super::doomed`]).
//!
//! The argument needs this sync to be the only one of its ReplicaSet until its request
//! lands and the request to land when the sync sends it, so the rule stands down where
//! either may not hold: more than one controller instance running, a crash or handover
//! still to come, requests a gate holds or may hold. A write the recording marks as
//! perhaps never committed, or as its step's or the system's, is no proof of who wrote it
//! and is not used as the ReplicaSet's.

use super::validate::{model_writes, Node, Segment};
use crate::compare::binding::Binding;
use crate::observed::{Event, EventType, Object};
use rsmc_spec::controller::sync::Phase;
use rsmc_spec::controller::SyncTask;
use rsmc_spec::model::{Action, State};
use stateright::Model;

/// Why `child`, a step from `parent`, is a sync's pick of its next request that the rest of
/// the segment rules out (`rest`: the visible writes still to be produced), if it is.
pub(crate) fn ruled_out(
    segment: &Segment,
    open_end: bool,
    rest: &[&Event],
    parent: &Node,
    child: &Node,
) -> Option<String> {
    let (controller, worker, task) = picked(&parent.state, &child.state)?;
    let s = &child.state;
    if s.controllers.iter().filter(|c| c.running).count() != 1
        || !super::doomed::no_interruptions(segment, s)
    {
        return None;
    }
    let pod = written_now(segment, s, controller, worker)?;
    let name = child.binding.observed_name(&pod)?;
    let first_write = rest.iter().position(|e| writes_pod(e, name));
    let by_the_key = rest
        .iter()
        .enumerate()
        .position(|(k, e)| only_by_a_sync_of(&task.key, e, &rest[..k], s, &child.binding));
    let why = match (by_the_key, first_write) {
        (Some(f), None) => format!("before {}", what(rest[f])),
        (Some(f), Some(w)) if w > f => format!("before {}", what(rest[f])),
        (None, None) if !open_end && super::doomed::runs_to_its_end(segment, s) => {
            "before the settle point".to_string()
        }
        _ => return None,
    };
    Some(format!(
        "the sync of {} sends its request for pod/{name} next, which would write it, and the recording shows no write of it {why}",
        task.key
    ))
}

/// The controller, worker and task of a sync that fixed the place of its next claim patch
/// or delete in the step from `parent` to `child`.
fn picked<'a>(parent: &State, child: &'a State) -> Option<(u8, u8, &'a SyncTask)> {
    child
        .controllers
        .iter()
        .zip(&parent.controllers)
        .enumerate()
        .find_map(|(c, (now, before))| {
            now.workers.iter().enumerate().find_map(|(w, task)| {
                let task = task.as_ref()?;
                let was = before
                    .workers
                    .iter()
                    .flatten()
                    .find(|t| t.key == task.key)?;
                let same_phase =
                    std::mem::discriminant(&was.phase) == std::mem::discriminant(&task.phase);
                (same_phase && fixed(task)? == fixed(was)? + 1).then_some((c as u8, w as u8, task))
            })
        })
}

/// How many of a claiming or deleting sync's requests have their place in the order fixed.
fn fixed(task: &SyncTask) -> Option<usize> {
    match &task.phase {
        Phase::Claim { fixed, .. } | Phase::Delete { fixed, .. } => Some(*fixed),
        _ => None,
    }
}

/// The pod that the sync on `worker` of `controller` would write with its next request if
/// it were sent in `s`: its next step's one visible write, when that is a pod's.
fn written_now(segment: &Segment, s: &State, controller: u8, worker: u8) -> Option<String> {
    let step = Action::SyncStep { controller, worker };
    let mut enabled = Vec::new();
    segment.model.actions(s, &mut enabled);
    if !enabled.contains(&step) {
        return None;
    }
    let n = segment.model.next_state(s, step)?;
    match model_writes(s, &n).as_slice() {
        [(_, Object::Pod(p)), ..] => Some(p.meta.name.clone()),
        _ => None,
    }
}

/// Whether the recorded event `e` writes the cluster's pod `name`.
fn writes_pod(e: &Event, name: &str) -> bool {
    matches!(&e.object, Object::Pod(p) if p.meta.name == name)
}

/// Whether the recorded event `e` (after `before` in the rest of the segment) is a write
/// only a sync of the ReplicaSet `key` makes: its status while live, or its adoption of a
/// pod that has no controller in `s` and no earlier write in the rest.
fn only_by_a_sync_of(key: &str, e: &Event, before: &[&Event], s: &State, b: &Binding) -> bool {
    if e.step.is_some() || e.or_system || e.unconfirmed || e.event_type != EventType::Modified {
        return false;
    }
    match &e.object {
        Object::ReplicaSet(rs) => rs.meta.name == key && !rs.meta.is_deleting(),
        Object::Pod(p) => {
            let adopted =
                !p.meta.is_deleting() && p.meta.controller_ref().is_some_and(|r| r.name == key);
            let orphan_now = || {
                b.model_name(&p.meta.name)
                    .and_then(|model| s.api.pods.get(model))
                    .is_some_and(|pod| pod.meta.controller_ref().is_none())
            };
            adopted && orphan_now() && !before.iter().any(|o| writes_pod(o, &p.meta.name))
        }
    }
}

/// A recorded write in a few words, for the reason a pick is ruled out.
fn what(e: &Event) -> String {
    match &e.object {
        Object::ReplicaSet(rs) => format!("replicaset/{}'s status", rs.meta.name),
        Object::Pod(p) => format!("the adoption of pod/{}", p.meta.name),
    }
}
