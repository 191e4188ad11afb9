//! Exploring a scripted model one segment at a time.
//!
//! A segment is the part of a script up to one of its `settle` steps. From a set of start
//! states, every interleaving is explored until the script has passed that settle: the
//! states reached right after it are the segment's outcomes, the quiescent states a cluster
//! may settle in. stateright checks properties over a whole state space but does not hand
//! back the reachable states themselves, which is what the oracle needs, so this is a plain
//! breadth-first search over the same [`stateright::Model`].

use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::model::{RsModel, State, UpToPods};
use stateright::Model;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::hash::{BuildHasher, Hash};

/// A 64-bit fingerprint of a search node. Searches remember fingerprints, not states, as
/// stateright does: a collision among a few million 64-bit hashes is vanishingly unlikely,
/// and a state costs kilobytes.
pub fn fingerprint(node: &impl Hash) -> u64 {
    // Fixed keys: the same state has the same fingerprint in every run.
    std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(node)
}

/// How many states one of the oracle's searches may visit before giving up, by default.
pub const STATE_LIMIT: usize = 2_000_000;

/// The oracle's default budget: [`STATE_LIMIT`] states and the default memory budget.
pub fn default_budget() -> Budget {
    Budget::default().with_states(STATE_LIMIT)
}

/// The successors of `s`, with the actions leading to them (none past a safety violation,
/// unless the model goes on [`RsModel::past_violations`]).
pub fn successors(model: &RsModel, s: &State) -> Vec<(rsmc_spec::model::Action, State)> {
    let mut actions = Vec::new();
    model.actions(s, &mut actions);
    actions
        .into_iter()
        .filter_map(|a| model.next_state(s, a.clone()).map(|n| (a, n)))
        .collect()
}

/// The outcomes of the segment ending at script step `settle` (an index of a `Settle` step),
/// from `starts`: every state reachable just after that settle up to renaming the generated
/// pods other than `pinned`, and how many states the search visited.
///
/// States are identified up to the pod symmetry of the safety search
/// ([`rsmc_spec::model::UpToPods`]): which of two interchangeable pods the controller deleted
/// first, or which of two fresh pods the kubelet marked ready, makes one state, not two; a
/// scale-down of k pods explores the k+1 counts of pods deleted instead of their 2^k subsets
/// and their orders. The outcomes are then one state per class: a user sees them up to
/// renaming, and the oracle binds a class's new pods to the cluster's names by matching, so
/// any member serves. The pods a caller has already bound to a cluster's names are `pinned`:
/// they keep their names, as merging two of them would lose which one the cluster's pod is.
pub fn outcomes(
    model: &RsModel,
    starts: &[State],
    settle: usize,
    pinned: &BTreeSet<String>,
    budget: &Budget,
) -> Result<(Vec<State>, usize), Exhausted> {
    let mut meter = budget.meter();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut queue: VecDeque<State> = starts.iter().cloned().collect();
    let mut found = Vec::new();
    while let Some(s) = queue.pop_front() {
        if !seen.insert(fingerprint(&UpToPods { state: &s, pinned })) {
            continue;
        }
        meter.check(seen.len())?;
        model.check_victim_sets(&s, seen.len())?;
        if s.script.step as usize > settle {
            found.push(s);
            continue;
        }
        queue.extend(successors(model, &s).into_iter().map(|(_, n)| n));
    }
    Ok((found, seen.len()))
}
