//! The convergence check: what it explores, and the shape of what it reports.

use rsmc_spec::bugs::Bug;
use rsmc_spec::config::Config;
use rsmc_spec::liveness;
use rsmc_spec::model::RsModel;
use rsmc_spec::profile::Profile;
use stateright::{Checker, Model};

/// The liveness search explores exactly the states the safety checker does (it keeps the
/// graph; stateright does not), and on the small preset every run converges. The sizes are
/// pinned like the safety checker's in `state_counts.rs`.
#[test]
fn small_preset_converges_in_both_profiles() {
    for (profile, states) in [(Profile::K8s120, 101_037), (Profile::Upstream, 50_622)] {
        let model = RsModel::new(Config::preset("small").unwrap(), profile);
        let outcome = liveness::check(&model, 1_000_000, &mut |_| {}).unwrap();
        assert!(
            outcome.violation.is_none(),
            "{profile}: {:?}",
            outcome.violation.map(|v| v.reason)
        );
        assert_eq!(outcome.states, states, "{profile}");
        let checker = model.checker().threads(2).spawn_bfs().join();
        assert_eq!(outcome.states, checker.unique_state_count(), "{profile}");
    }
}

/// A ReplicaSet recreated under its predecessor's name waits on stale expectations: no
/// system move is left and it has no pods. The report is a stuck state, not a cycle, and
/// its run is a real run of the model ending there.
#[test]
fn a_stuck_state_is_reported_as_the_end_of_a_run() {
    let config = Config::load("catalogue/stale-expectations-on-recreate").unwrap();
    let model = RsModel::new(config, Profile::K8s120).with_bug(Bug::StaleExpectationsOnRecreate);
    let cx = liveness::check(&model, 1_000_000, &mut |_| {})
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
    assert!(cx.reason.contains("frontend"), "{}", cx.reason);
}

/// The limit is an error, not a verdict.
#[test]
fn a_search_beyond_the_limit_is_an_error() {
    let model = RsModel::new(Config::preset("small").unwrap(), Profile::K8s120);
    assert!(liveness::check(&model, 1_000, &mut |_| {}).is_err());
}
