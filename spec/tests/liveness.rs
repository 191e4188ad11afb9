//! The convergence check: what it explores, and the shape of what it reports.

use rsmc_spec::bugs::Bug;
use rsmc_spec::config::Config;
use rsmc_spec::liveness;
use rsmc_spec::liveness::converged::Condition;
use rsmc_spec::model::RsModel;
use rsmc_spec::profile::Profile;
use stateright::Model;

/// The liveness search explores the states the safety checker does, less the distinctions
/// only the safety properties need (the ghost records) and on past safety violations (a
/// violation does not stop the cluster); on the small preset every run converges. The sizes
/// are pinned like the safety checker's in `state_counts.rs`.
#[test]
fn small_preset_converges_in_both_profiles() {
    for (profile, states) in [(Profile::K8s120, 81_315), (Profile::Upstream, 40_144)] {
        let model = RsModel::new(Config::preset("small").unwrap(), profile);
        let outcome = liveness::check(
            &model,
            &rsmc_spec::budget::Budget::default().with_states(1_000_000),
            &mut |_| {},
        )
        .unwrap();
        assert!(
            outcome.violation.is_none(),
            "{profile}: {:?}",
            outcome.violation.map(|v| v.why.to_string())
        );
        assert_eq!(outcome.states, states, "{profile}");
    }
}

/// A ReplicaSet recreated under its predecessor's name waits on stale expectations: no
/// system move is left and it has no pods. The report is a stuck state, not a cycle, and
/// its run is a real run of the model ending there.
#[test]
fn a_stuck_state_is_reported_as_the_end_of_a_run() {
    let config = Config::load("catalogue/stale-expectations-on-recreate").unwrap();
    let model = RsModel::new(config, Profile::K8s120).with_bug(Bug::StaleExpectationsOnRecreate);
    let cx = liveness::check(
        &model,
        &rsmc_spec::budget::Budget::default().with_states(1_000_000),
        &mut |_| {},
    )
    .unwrap()
    .violation
    .expect("stuck");
    assert_eq!(cx.cycle_start, None);
    assert_eq!(cx.states.len(), cx.actions.len() + 1);
    assert!(model.init_states().contains(&cx.states[0]));
    for (i, action) in cx.actions.iter().enumerate() {
        assert_eq!(
            model.next_state(&cx.states[i], action.clone()).as_ref(),
            Some(&cx.states[i + 1]),
            "step {i} replays"
        );
    }
    // Stuck short of replicas: expectations wait for a create that already happened.
    assert_eq!(cx.why.condition, Condition::ReplicasReached, "{}", cx.why);
    assert!(cx.why.reason.contains("frontend"), "{}", cx.why);
}

/// The limit is an error, not a verdict.
#[test]
fn a_search_beyond_the_limit_is_an_error() {
    let model = RsModel::new(Config::preset("small").unwrap(), Profile::K8s120);
    assert!(liveness::check(
        &model,
        &rsmc_spec::budget::Budget::default().with_states(1_000),
        &mut |_| {}
    )
    .is_err());
}

/// Two ReplicaSets with one selector and one replica each, and one pod. With the
/// steal-controlled-pods switch each takes the pod from the other for ever: no pod is created
/// or deleted, only ownership changes, and since states equal up to their revisions' values
/// are one state (`model::canonical`), the endless fight is a finite cycle. The report is a
/// lasso whose loop really returns to where it started (up to revisions) and never converges.
#[test]
fn two_replicasets_fighting_over_a_pod_are_a_cycle() {
    let config = Config::load("catalogue/steal-controlled-pods").unwrap();
    let model = RsModel::new(config, Profile::K8s120).with_bug(Bug::StealControlledPods);
    let outcome = liveness::check(
        &model,
        &rsmc_spec::budget::Budget::default().with_states(1_000_000),
        &mut |_| {},
    )
    .unwrap();
    let cx = outcome.violation.expect("the fight never converges");
    let start = cx.cycle_start.expect("a cycle, not a stuck state");
    assert!(start < cx.actions.len(), "the cycle has moves");
    let fingerprint = rsmc_spec::liveness::graph::fingerprint;
    let mut first = cx.states[start].clone();
    let mut last = cx.states.last().unwrap().clone();
    first.ghost = Default::default();
    last.ghost = Default::default();
    assert_eq!(fingerprint(&first), fingerprint(&last), "the loop closes");
    assert_ne!(first, last, "…at other revisions");
    let steps: Vec<String> = (start..cx.actions.len())
        .map(|i| model.describe(&cx.states[i], &cx.actions[i]))
        .collect();
    for rs in ["frontend", "canary"] {
        assert!(
            steps
                .iter()
                .any(|d| d.contains("take:") && d.contains(&format!("controller=ReplicaSet/{rs}"))),
            "{rs} takes the pod in the cycle: {steps:#?}"
        );
    }
    assert!(
        !steps
            .iter()
            .any(|d| d.contains("POST pods") || d.contains("DELETE pods")),
        "only ownership changes: {steps:#?}"
    );
    assert_eq!(cx.why.condition, Condition::ReplicasReached, "{}", cx.why);
    assert!(
        cx.why.reason.contains("controls 0 active pods, wants 1"),
        "{}",
        cx.why
    );
    // Without the switch the same cluster converges: one adopts the pod, the other creates.
    let fixed = RsModel::new(
        Config::load("catalogue/steal-controlled-pods").unwrap(),
        Profile::K8s120,
    );
    assert!(liveness::check(
        &fixed,
        &rsmc_spec::budget::Budget::default().with_states(1_000_000),
        &mut |_| {}
    )
    .unwrap()
    .violation
    .is_none());
}
