//! Every catalogue counterexample, converted to a forced scenario: the runner accepts it (it
//! parses back and compiles), it still reaches the entry's violation in the model, and it says
//! which of the run's orders the runner cannot force.
//!
//! Not every conversion reaches its violation yet: [`NOT_YET_FORCED`] pins the entries whose
//! forced scenario the model does not (or not within the limit) take to the violation, so
//! that each one the converter learns to force shows as a change here.

use rsmc_oracle::run_scenario::{self, Reached};
use rsmc_oracle::scenario;
use rsmc_spec::bugs::{Entry, Status, CATALOGUE};
use rsmc_spec::config::Config;
use rsmc_spec::liveness::{self, CONVERGENCE};
use rsmc_spec::model::{Action, RsModel, State};
use stateright::{Checker, Model};
use std::path::Path;

/// The model an entry is exhibited in: its configuration and profile, with its switch for a
/// fixed bug.
fn model(entry: &Entry) -> RsModel {
    let config = Config::load(entry.config).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
    let model = RsModel::new(config, entry.profile);
    match entry.switch {
        Some(bug) => model.with_bug(bug),
        None => model,
    }
}

/// The counterexample of the entry's property and its states.
fn counterexample(model: &RsModel, property: &'static str) -> (Vec<State>, Vec<Action>) {
    let actions = if property == CONVERGENCE {
        liveness::check(
            model,
            &rsmc_spec::budget::Budget::default().with_states(5_000_000),
            &mut |_| {},
        )
        .expect("within the limit")
        .violation
        .expect("a convergence counterexample")
        .actions
    } else {
        model
            .clone()
            .checker()
            .threads(2)
            .spawn_bfs()
            .join()
            .discovery(property)
            .expect("a safety counterexample")
            .into_actions()
    };
    let mut states = model.init_states();
    for a in &actions {
        let next = model
            .next_state(states.last().expect("non-empty"), a.clone())
            .expect("the counterexample is a run");
        states.push(next);
    }
    (states, actions)
}

/// The entries whose forced scenario does not reach the violation: a hold of a pattern also
/// catches requests the run lets through (a status update held for one sync holds the next
/// sync's too), or the run needs a user step between two of the system's moves.
const NOT_YET_FORCED: [&str; 5] = [
    "no-adoption-recheck",
    "create-while-deleting",
    "ignore-ranking",
    "never-release",
    "status-onto-recreated",
];

#[test]
fn every_catalogue_counterexample_becomes_a_forced_scenario_that_reaches_it() {
    let mut failures = Vec::new();
    for entry in &CATALOGUE {
        let model = model(entry);
        let (states, actions) = counterexample(&model, entry.property);
        let forced =
            run_scenario::forced(&model, &states, &actions, entry.name, "A catalogue entry.");
        // The runner reads what `rsmc check` writes.
        let yaml = forced.to_yaml();
        let read = scenario::load_str(Path::new("forced.yaml"), &yaml).unwrap_or_else(|e| {
            panic!(
                "{}: the forced scenario does not load: {e}\n{yaml}",
                entry.name
            )
        });
        scenario::compile(&read, entry.profile)
            .unwrap_or_else(|e| panic!("{}: does not compile: {e}\n{yaml}", entry.name));
        let reached = run_scenario::reaches(&read, &model, entry.property, 300_000);
        let pinned = NOT_YET_FORCED.contains(&entry.name);
        if (reached == Ok(Reached::Yes)) == pinned {
            failures.push(format!(
                "{}: {reached:?}, {} in NOT_YET_FORCED\n{yaml}",
                entry.name,
                if pinned { "but" } else { "and not" }
            ));
        }
        let on_cluster = read.on_cluster.clone().unwrap_or_default();
        let unforced = match entry.name {
            "orphan-before-dependent-seen" => Some("cannot hold the garbage collector's watch"),
            "expectations-expiry" => Some("5 minutes on a cluster"),
            _ => None,
        };
        if let Some(text) = unforced {
            assert!(entry.status == Status::Open, "{}", entry.name);
            assert!(on_cluster.contains(text), "{}: {on_cluster}", entry.name);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
