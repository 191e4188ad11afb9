//! Whether a scenario written for a counterexample still reaches its violation in the model.
//!
//! A forced scenario holds and awaits where the run needed it, but the run's other moves
//! become the model's free choice again, and a hold catches every request of its pattern, not
//! only the run's one. So the conversion is checked, not trusted: the scenario's own model
//! (its script, the counterexample's semantics) is searched for a run that breaks the
//! property — for convergence, a run that ends settled and not converged.

use super::compile::compile;
use super::definition::Scenario;
use rsmc_spec::liveness::{converged::converged, CONVERGENCE};
use rsmc_spec::model::{RsModel, State, UpToRevisions};
use stateright::{Expectation, Model};
use std::collections::{HashSet, VecDeque};
use std::hash::{BuildHasher, RandomState};

/// What the search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reached {
    /// A run of the scenario breaks the property.
    Yes,
    /// No run does: the scenario does not reproduce the counterexample.
    No,
    /// The search stopped at its limit of states.
    Unknown { explored: usize },
}

/// Search the runs of `scenario` under `model`'s semantics (its profile, bug and fixes) for one
/// that breaks `property`, exploring at most `limit` states.
pub fn reaches(
    scenario: &Scenario,
    model: &RsModel,
    property: &str,
    limit: usize,
) -> Result<Reached, String> {
    let compiled = compile(scenario, model.profile).map_err(|e| e.to_string())?;
    let steps = compiled.script.steps.len();
    // Runs go on past other violations: the run the scenario stands for may break another
    // property on its way (a convergence counterexample often passes an upstream race).
    let mut scripted =
        RsModel::scripted(compiled.config, compiled.profile, compiled.script)?.past_violations();
    scripted.sem = model.sem;
    let safety = scripted
        .properties()
        .into_iter()
        .find(|p| p.name == property && matches!(p.expectation, Expectation::Always));
    if safety.is_none() && property != CONVERGENCE {
        return Err(format!("{property:?} is not a property the model checks"));
    }
    let broken = |s: &State| match &safety {
        Some(p) => !(p.condition)(&scripted, s),
        None => s.script.step as usize >= steps && scripted.is_quiescent(s) && !converged(s),
    };
    Ok(search(&scripted, limit, broken))
}

/// Whether some run of a scenario's `model` (its own semantics, going on past safety
/// violations as a cluster does) gets past the scenario's step `step` (0-based; an `await`),
/// exploring at most `limit` states; `origin` maps the model's script steps to the
/// scenario's ([`crate::scenario::Compiled::origin`]). A cluster run that stopped there, the
/// await never met, did what the model does when no run gets past it: the fixed controller
/// never sends the request a faulty one would, and neither does the model of it.
pub fn passes(model: &RsModel, origin: &[usize], step: usize, limit: usize) -> Reached {
    let Some(at) = origin.iter().rposition(|&o| o == step) else {
        return Reached::Yes;
    };
    let model = model.clone().past_violations();
    search(&model, limit, |s| s.script.step as usize > at)
}

/// Breadth-first over `model`'s runs (states alike up to revisions visited once) for a
/// state where `found` holds.
fn search(model: &RsModel, limit: usize, found: impl Fn(&State) -> bool) -> Reached {
    let hasher = RandomState::new();
    let mut seen = HashSet::new();
    let mut queue: VecDeque<State> = model.init_states().into();
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        if !seen.insert(hasher.hash_one(UpToRevisions(&s))) {
            continue;
        }
        if found(&s) {
            return Reached::Yes;
        }
        if seen.len() >= limit {
            return Reached::Unknown {
                explored: seen.len(),
            };
        }
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            queue.extend(model.next_state(&s, a));
        }
    }
    Reached::No
}

/// The most states [`note_reach`] explores: a forced scenario's model is small, and a
/// counterexample's report should not wait long for the note.
const NOTE_LIMIT: usize = 300_000;

/// Say in the scenario's `onCluster` whether its model still reaches the violation of
/// `property` it was written for (under `model`'s semantics): a user replaying it on a cluster
/// knows whether the model itself has the run under these holds.
pub fn note_reach(
    scenario: &mut Scenario,
    model: &RsModel,
    property: &str,
) -> Result<Reached, String> {
    let reached = reaches(scenario, model, property, NOTE_LIMIT);
    let note = match &reached {
        Ok(Reached::Yes) => format!("In the model, a run of this scenario breaks \"{property}\"."),
        Ok(Reached::No) => format!(
            "In the model, no run of this scenario breaks \"{property}\": the holds do not force this counterexample, and the scenario replays its environment only."
        ),
        Ok(Reached::Unknown { explored }) => format!(
            "Whether a run of this scenario breaks \"{property}\" in the model is not known: the search stopped after {explored} states."
        ),
        Err(e) => format!("The scenario could not be checked in the model: {e}."),
    };
    scenario.on_cluster = Some(match scenario.on_cluster.take() {
        Some(text) => format!("{text} {note}"),
        None => note,
    });
    reached
}
