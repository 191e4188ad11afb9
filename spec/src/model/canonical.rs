//! States equal up to their resource versions' values are one state.
//!
//! Every write takes the next revision, so a run that keeps writing never repeats a state
//! literally: two ReplicaSets passing a pod back and forth forever would look like a state
//! space without end, and a livelock could not be shown as a cycle. The model never does
//! arithmetic with a revision beyond "the next one" and never compares one except for order
//! and equality (informer positions against events, preconditions, the consistency store's
//! recorded writes), so renaming every revision in a state by a bijection that keeps their
//! order changes nothing about the state's future: the two states have the same runs, one
//! revision for another. The checkers identify states by their hash (stateright's
//! fingerprints, the liveness graph, trace validation), so they hash the state with its
//! revisions renamed to `0, 1, 2, …` in order — a quotient by that renaming. The safety
//! search goes further and also identifies states up to which generated pod is which
//! ([`super::symmetry`]); the searches that keep pod names in their own bookkeeping hash
//! [`UpToRevisions`]. The states themselves keep their real revisions and names, so traces
//! read as the cluster's would.
//!
//! Zero stays zero: it means "none" (a precondition not sent, an informer that has delivered
//! nothing) and is below every real revision.

use super::state::{Positions, State};
use super::symmetry;
use crate::api::Change;
use crate::object::{Meta, Rv};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// How far the checkers' state identity is reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reduction {
    /// States are identified literally.
    None = 0,
    /// Up to the values of their revisions.
    Revisions = 1,
    /// Up to revisions and up to which generated pod is which ([`super::symmetry`]).
    RevisionsAndPods = 2,
}

/// The reduction in force (full unless a measurement turns it down). Process-wide because
/// `Hash` has no other way to learn it; `rsmc bench` measures each setting in its own
/// process.
static REDUCTION: AtomicU8 = AtomicU8::new(Reduction::RevisionsAndPods as u8);

/// Set how states are identified: a measurement's switch, set once before a search.
pub fn set_reduction(r: Reduction) {
    REDUCTION.store(r as u8, Ordering::Relaxed);
}

fn reduction() -> Reduction {
    match REDUCTION.load(Ordering::Relaxed) {
        0 => Reduction::None,
        1 => Reduction::Revisions,
        _ => Reduction::RevisionsAndPods,
    }
}

/// A state's `Hash` is the full reduction in force: that is what the safety search (stateright)
/// identifies states by.
impl Hash for State {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_reduced(self, reduction(), h);
    }
}

/// A state hashed up to its revisions only, never up to pod renaming: for the searches whose
/// bookkeeping names pods — the liveness search (its fairness classes name the pod a garbage
/// collector item works on) and the oracle (its bindings of a cluster's pod names to the
/// model's). Merging two states with pods swapped would mix up what those names refer to.
pub struct UpToRevisions<'a>(pub &'a State);

impl Hash for UpToRevisions<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_reduced(self.0, reduction().min(Reduction::Revisions), h);
    }
}

/// A state hashed up to its revisions and up to which generated pod is which, except the
/// `pinned` pods, whose names someone outside the state holds: the oracle's searches for the
/// outcomes of a segment, where the pods already bound to a cluster's names are pinned and
/// those created since are free. (With the reduction turned down, as [`UpToRevisions`].)
pub struct UpToPods<'a> {
    pub state: &'a State,
    pub pinned: &'a BTreeSet<String>,
}

impl Hash for UpToPods<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_pinned(self.state, reduction(), self.pinned, h);
    }
}

fn hash_reduced<H: Hasher>(state: &State, level: Reduction, h: &mut H) {
    hash_pinned(state, level, &BTreeSet::new(), h)
}

fn hash_pinned<H: Hasher>(state: &State, level: Reduction, pinned: &BTreeSet<String>, h: &mut H) {
    if level == Reduction::None {
        return state.hash_fields(h);
    }
    // The pod renaming first: it orders the settled revisions among themselves, which the
    // renumbering then keeps.
    let pods = if level == Reduction::RevisionsAndPods {
        symmetry::renamed(state, pinned)
    } else {
        None
    };
    let base = pods.as_ref().unwrap_or(state);
    let revisions = renamed(base);
    revisions.as_ref().unwrap_or(base).hash_fields(h)
}

impl State {
    /// The derived hash of every field, revisions as they are.
    fn hash_fields<H: Hasher>(&self, h: &mut H) {
        self.api.hash(h);
        self.controllers.hash(h);
        self.gc.hash(h);
        self.budget.hash(h);
        self.ghost.hash(h);
        self.script.hash(h);
    }
}

/// `state` with its revisions renamed to consecutive numbers in order, or `None` when they
/// already are.
pub fn renamed(state: &State) -> Option<State> {
    let mut used: Vec<Rv> = vec![0];
    let mut copy = state.clone();
    each_revision(&mut copy, &mut |rv| used.push(*rv));
    used.sort_unstable();
    used.dedup();
    if used.last().copied() == Some(used.len() as Rv - 1) {
        return None;
    }
    each_revision(&mut copy, &mut |rv| {
        *rv = used
            .binary_search(rv)
            .expect("every revision was collected") as Rv;
    });
    Some(copy)
}

/// Visit every revision a state holds, in place. Objects are shared (`Arc`) with other states
/// and log entries; one is copied only when `f` changes one of its revisions.
///
/// The list is complete by construction of the types that hold an `Rv`: the API server's
/// counter, each object's `resourceVersion` and `deletionTimestamp` (live and in the log), the
/// log's revisions, every informer position (controllers, in-flight syncs, the consistency
/// store, the garbage collector), the revision a status retry read and the end of a
/// released backlog.
fn each_revision(s: &mut State, f: &mut dyn FnMut(&mut Rv)) {
    let api = &mut s.api;
    f(&mut api.rv);
    for rs in api.replicasets.values_mut() {
        object(rs, |r| &r.meta, |r| &mut r.meta, f);
    }
    for pod in api.pods.values_mut() {
        object(pod, |p| &p.meta, |p| &mut p.meta, f);
    }
    for event in &mut api.log {
        f(&mut event.rv);
        match &mut event.change {
            Change::ReplicaSet { before, after } => {
                for rs in [before, after].into_iter().flatten() {
                    object(rs, |r| &r.meta, |r| &mut r.meta, f);
                }
            }
            Change::Pod { before, after } => {
                for pod in [before, after].into_iter().flatten() {
                    object(pod, |p| &p.meta, |p| &mut p.meta, f);
                }
            }
        }
    }
    for c in &mut s.controllers {
        positions(&mut c.seen, f);
        for p in c.written.values_mut() {
            positions(p, f);
        }
        for task in c.workers.iter_mut().flatten() {
            f(&mut task.read_at.0);
            f(&mut task.read_at.1);
            if let crate::controller::sync::Phase::Status {
                fresh_rv: Some(rv), ..
            } = &mut task.phase
            {
                f(rv);
            }
        }
    }
    positions(&mut s.gc, f);
    positions(&mut s.script.draining, f);
}

/// Visit the revisions of every pod object a state holds (live, then in the log's order), in
/// place: the only places a pod write's revision can be held once the controllers' records
/// of their own writes are covered by what they have seen ([`State::canonicalize`]).
pub(super) fn each_pod_revision(s: &mut State, f: &mut dyn FnMut(&mut Rv)) {
    for pod in s.api.pods.values_mut() {
        object(pod, |p| &p.meta, |p| &mut p.meta, f);
    }
    for event in &mut s.api.log {
        if let Change::Pod { before, after } = &mut event.change {
            for pod in [before, after].into_iter().flatten() {
                object(pod, |p| &p.meta, |p| &mut p.meta, f);
            }
        }
    }
}

fn positions(p: &mut Positions, f: &mut dyn FnMut(&mut Rv)) {
    f(&mut p.rs);
    f(&mut p.pods);
}

/// An object's two revisions; the object is copied only if one changes.
fn object<T: Clone>(
    obj: &mut Arc<T>,
    meta: impl Fn(&T) -> &Meta,
    meta_mut: impl Fn(&mut T) -> &mut Meta,
    f: &mut dyn FnMut(&mut Rv),
) {
    let m = meta(obj);
    let (mut rv, mut deleting) = (m.resource_version, m.deletion_timestamp);
    f(&mut rv);
    if let Some(d) = &mut deleting {
        f(d);
    }
    if (rv, deleting) != (m.resource_version, m.deletion_timestamp) {
        let m = meta_mut(Arc::make_mut(obj));
        m.resource_version = rv;
        m.deletion_timestamp = deleting;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::model::RsModel;
    use stateright::Model;

    fn fingerprint(s: &State) -> u64 {
        crate::liveness::graph::fingerprint(s)
    }

    /// A state after some writes, and the same state with every revision moved up by a gap
    /// that keeps their order: one state to the checkers.
    #[test]
    fn states_differing_only_in_revision_values_are_one() {
        let model = RsModel::new(
            Config::load("small").unwrap(),
            crate::profile::Profile::K8s120,
        );
        let mut s = model.init_states().remove(0);
        for _ in 0..6 {
            let mut actions = Vec::new();
            model.actions(&s, &mut actions);
            s = model.next_state(&s, actions.remove(0)).unwrap();
        }
        assert!(s.api.rv > 0, "some writes were made");
        let mut shifted = s.clone();
        each_revision(&mut shifted, &mut |rv| {
            if *rv > 0 {
                *rv = *rv * 3 + 7;
            }
        });
        assert_ne!(shifted, s);
        assert_eq!(fingerprint(&shifted), fingerprint(&s));
    }
}
