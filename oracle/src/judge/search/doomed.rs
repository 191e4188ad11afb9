//! Scale-down victim sets the rest of a recording rules out, so that the witness search
//! need not follow them.
//!
//! When the ranking leaves ties, a sync picks its victims among them, and the model offers
//! every set ([`rsmc_spec::model::Action::Choose`]): C(20, 17) = 1,140 of them for 20
//! unbound pods scaled to 3. A recording that shows the whole scale-down pins the set down
//! by its deletions, but the search learns that only delete by delete, and a recording no
//! run produces (a client deleting one surplus pod while the controller does nothing) has
//! it follow every set through every interleaving before it can say so.
//!
//! A set is ruled out when one of its victims is a live pod, not being deleted, whose
//! deletion the rest of the segment never shows: the sync sends a delete for every victim
//! (a failed delete does not stop the others), the delete of a live pod is a write, and the
//! sync is done before the segment's settle point (a busy worker is a system move, and a
//! settle waits for none). Nor could anyone delete the pod first without a recorded write.
//! That argument needs the sync to run to its end within the segment, so the rule stands
//! down where it might not: a run stopped short (its last segment ends with its writes), a
//! controller that may crash or hand over, requests a gate may hold past the settle point,
//! and deletes with preconditions (the proposed fix of #138818: a delete of a pod written
//! since fails and writes nothing).

use super::validate::{Node, Segment};
use crate::observed::{Event, EventType, Object};
use rsmc_spec::controller::ranking::VictimSets;
use rsmc_spec::controller::sync::Phase;
use rsmc_spec::model::{Action, State};

/// Why `child`, a step from `parent`, is a sync's pick of a victim set the rest of the
/// segment rules out (`rest`: the visible writes still to be produced), if it is: a victim
/// whose deletion is never recorded, named as the cluster names it.
pub(crate) fn ruled_out(
    segment: &Segment,
    open_end: bool,
    rest: &[&Event],
    parent: &Node,
    child: &Node,
) -> Option<String> {
    let (key, victims) = picked(&parent.state, &child.state)?;
    if open_end || !runs_to_its_end(segment, &child.state) {
        return None;
    }
    let spared = victims.iter().find_map(|v| spared(child, rest, v))?;
    Some(format!(
        "the sync of {key} picks {} victims, among them pod/{spared}, whose deletion the recording does not show before the settle point",
        victims.len()
    ))
}

/// The victim sets of `sets` (a sync's in `node`, too many to list) that the rest of the
/// segment leaves, by the rule [`ruled_out`] applies to each: none with a victim that is
/// live, not being deleted, and never deleted in `rest`. `None` where the rule stands down.
/// The witness search offers these in place of the sets the model does not list: a
/// scale-down of web-c's 33 pods to 20 after the race for web-a's orphans (`overlap-20`)
/// would list C(33, 13) sets, over half a billion, where the recording leaves one.
pub(crate) fn narrowed(
    segment: &Segment,
    open_end: bool,
    rest: &[&Event],
    node: &Node,
    sets: &VictimSets,
) -> Option<VictimSets> {
    if open_end || !runs_to_its_end(segment, &node.state) {
        return None;
    }
    Some(sets.narrowed(|v| spared(node, rest, v).is_none()))
}

/// The cluster's name for the model's pod `v` in `node` when a victim set holding it is
/// ruled out: the pod is live, not being deleted, and `rest` never deletes it.
fn spared<'a>(node: &'a Node, rest: &[&Event], v: &str) -> Option<&'a str> {
    let live = node
        .state
        .api
        .pods
        .get(v)
        .is_some_and(|p| !p.meta.is_deleting());
    let name = node.binding.observed_name(v)?;
    (live && !rest.iter().any(|e| deletes(e, name))).then_some(name)
}

/// The key and the victims of a sync that picked a set in the step from `parent` to `child`.
fn picked<'a>(parent: &State, child: &'a State) -> Option<(&'a str, &'a [String])> {
    child
        .controllers
        .iter()
        .zip(&parent.controllers)
        .find_map(|(c, p)| {
            c.workers.iter().flatten().find_map(|task| {
                let Phase::Delete {
                    victims, next: 0, ..
                } = &task.phase
                else {
                    return None;
                };
                let was_choosing =
                    p.workers.iter().flatten().any(|t| {
                        t.key == task.key && matches!(t.phase, Phase::ChooseVictims { .. })
                    });
                was_choosing.then_some((task.key.as_str(), victims.as_slice()))
            })
        })
}

/// Whether every sync in `s` will send all its requests before the segment settles (see the
/// module's notes).
pub(crate) fn runs_to_its_end(segment: &Segment, s: &State) -> bool {
    no_interruptions(segment, s) && !segment.model.sem.delete_precondition
}

/// Whether every request a sync in `s` sends lands when it is sent, from a controller that
/// goes on running: no crash, handover or hold of requests is still to come, and no request
/// is held now.
pub(crate) fn no_interruptions(segment: &Segment, s: &State) -> bool {
    let Some(script) = &segment.model.script else {
        return false;
    };
    let interrupts = script.moves_to_come(&s.script).any(|a| {
        matches!(
            a,
            Action::CrashController { .. }
                | Action::StartSecondLeader
                | Action::StopFirstLeader
                | Action::HoldRequests { .. }
        )
    });
    !interrupts && s.script.requests.is_empty()
}

/// Whether the recorded event `e` deletes (marks or removes) the cluster's pod `name`.
fn deletes(e: &Event, name: &str) -> bool {
    match &e.object {
        Object::Pod(p) if p.meta.name == name => {
            e.event_type == EventType::Deleted || p.meta.is_deleting()
        }
        _ => false,
    }
}
