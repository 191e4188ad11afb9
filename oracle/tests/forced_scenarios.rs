//! Every catalogue counterexample, converted to a forced scenario: the runner accepts it (it
//! parses back and compiles), it still reaches the entry's violation in the model, and it says
//! which of the run's orders the runner cannot force.

use rsmc_oracle::scenario::{self, Reached};
use rsmc_spec::bugs::{Entry, CATALOGUE};
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
            // One thread: the same counterexample on every run.
            .threads(1)
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

#[test]
fn every_catalogue_counterexample_becomes_a_forced_scenario_that_reaches_it() {
    let mut failures = Vec::new();
    let mut unforceable = Vec::new();
    for entry in &CATALOGUE {
        let model = model(entry);
        let (states, actions) = counterexample(&model, entry.property);
        let forced = scenario::forced_counterexample(
            &model,
            &states,
            &actions,
            entry.name,
            "A catalogue entry.",
            entry.property,
        );
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
        let reached = scenario::reaches(&read, &model, entry.property, 300_000);
        if reached != Ok(Reached::Yes) {
            failures.push(format!("{}: {reached:?}\n{yaml}", entry.name));
        }
        let on_cluster = read.on_cluster.clone().unwrap_or_default();
        if on_cluster.contains("Not forceable") {
            unforceable.push(entry.name);
        }
        if entry.name == "expectations-expiry" {
            // The one order the runner forces with the clock.
            assert!(
                on_cluster.contains("waits the 5 minutes out"),
                "{}: {on_cluster}",
                entry.name
            );
        }
        if entry.name == "create-while-deleting" {
            // Its status updates must land before the garbage collector orphans the pod and
            // removes the orphan finalizer, both due already: the collector's requests are
            // held at its gate until then.
            for pattern in [
                "requests: {from: garbage-collector, verb: patch, resource: pods}",
                "      from: garbage-collector\n      verb: patch\n      resource: replicasets",
            ] {
                assert!(
                    yaml.matches(pattern).count() == 2,
                    "held and released: {pattern}\n{yaml}"
                );
            }
        }
        if entry.name == "ignore-controller-ref-removal" {
            // #32829 needs frontend to adopt pod1 before canary syncs: pod1 first, then
            // frontend, settled, then canary (on a cluster five workers would sync both
            // ReplicaSets at once, and canary took pod1 in 2 runs of 3).
            let at = |name: &str| yaml.find(&format!("name: {name}")).unwrap();
            let (pod, frontend, canary) = (at("pod1"), at("frontend"), at("canary"));
            assert!(pod < frontend && frontend < canary, "{yaml}");
            assert!(yaml[frontend..canary].contains("- settle"), "{yaml}");
        }
        if entry.name == "orphan-before-dependent-seen" {
            // #26120 needs the garbage collector's pod watch held, not the controller's.
            assert!(
                yaml.contains("- hold: {garbage-collector: pods}")
                    && yaml.contains("- release: {garbage-collector: pods}"),
                "{yaml}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // #22270 needs the deleted pod's event between the sync's list of its pods and the
    // expectations it records before its DELETE: one pass of the controller's code.
    assert_eq!(unforceable, ["keep-expectation-on-failed-delete"]);
}
