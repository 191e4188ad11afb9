//! A scripted run resumed from a cluster's objects at a settle point
//! (`RsModel::resumed`): the runs from the resumed states include every run from the states
//! the model itself settled in, so a segment judged from them is never called divergent
//! when a correct controller could have made it.

mod common;

use common::frontend;
use common::walk::{walk, walk_from};
use rsmc_spec::api::Kind;
use rsmc_spec::model::{Action, Recipient, RsModel, ScriptStep, State};
use std::collections::BTreeSet;
use std::sync::Arc;

fn model(steps: Vec<ScriptStep>) -> RsModel {
    common::scripted(steps)
}

fn apply(replicas: i32) -> ScriptStep {
    ScriptStep::Move(Action::ApplyReplicaSet {
        replicaset: Arc::new(frontend(replicas)),
    })
}

fn scale(replicas: i32) -> ScriptStep {
    ScriptStep::Move(Action::ScaleReplicaSet {
        name: "frontend".into(),
        replicas,
    })
}

/// What a settled state shows a user: the ReplicaSet's spec and status, and the pods'
/// labels, phase, readiness and deletion, without names, UIDs or revisions.
fn shown(s: &State) -> String {
    let rs: Vec<String> = s
        .api
        .replicasets
        .values()
        .map(|r| format!("{} {:?} {:?}", r.meta.name, r.spec.replicas, r.status))
        .collect();
    let mut pods: Vec<String> = s
        .api
        .pods
        .values()
        .map(|p| {
            format!(
                "{:?} {:?} {} {}",
                p.meta.labels,
                p.phase,
                p.is_ready(),
                p.meta.is_deleting()
            )
        })
        .collect();
    pods.sort();
    format!("{rs:?} {pods:?}")
}

/// The model's own states at the first settle point, and what its runs from them settle in
/// at the second, against the same from the states resumed from their objects.
#[test]
fn the_runs_from_a_resumed_settle_point_include_the_models_own() {
    let m = model(vec![
        apply(2),
        ScriptStep::Settle,
        scale(3),
        ScriptStep::Settle,
    ]);
    let walked = walk(&m);
    let at_first: Vec<&State> = walked
        .states
        .iter()
        .filter(|s| s.script.step == 2)
        .collect();
    assert!(!at_first.is_empty());
    let own: BTreeSet<String> = walked.terminal.iter().map(shown).collect();
    let mut resumed_ends = BTreeSet::new();
    for s in &at_first {
        // A correct controller at a settle point is the idle one: nothing queued, no sync
        // under way, no expectation pending.
        let c = &s.controllers[0];
        assert!(
            c.queue.queued.is_empty() && c.queue.processing.is_empty(),
            "{s:?}"
        );
        assert!(c.workers.iter().all(Option::is_none), "{s:?}");
        assert!(
            c.expectations.0.keys().all(|k| c.expectations.satisfied(k)),
            "{s:?}"
        );
        assert!(c.written.is_empty(), "{s:?}");
        let starts = m.resumed(&s.api.replicasets, &s.api.pods, 1).unwrap();
        assert_eq!(starts.len(), 2);
        let (idle, restarted) = (&starts[0], &starts[1]);
        assert!(m.is_quiescent(idle), "{idle:?}");
        assert!(
            !m.is_quiescent(restarted),
            "a restarted controller has its ReplicaSets queued"
        );
        assert_eq!(idle.script.step, 2);
        let ends = walk_from(&m, starts).terminal;
        assert!(ends.iter().all(|e| e.script.step == 4 && m.is_quiescent(e)));
        resumed_ends.extend(ends.iter().map(shown));
    }
    assert!(
        own.is_subset(&resumed_ends),
        "every settled state of the model's own runs is one of the resumed runs':\n{own:#?}\n{resumed_ends:#?}"
    );
}

/// A settle point the script holds watch events or requests across, or after a handover,
/// is not resumed, and the error says why.
#[test]
fn a_settle_point_under_a_hold_is_not_resumed() {
    let m = model(vec![
        apply(1),
        ScriptStep::Settle,
        ScriptStep::Move(Action::HoldEvents {
            kind: Kind::Pod,
            to: Recipient::ReplicaSetController,
        }),
        scale(2),
        ScriptStep::Settle,
        ScriptStep::Move(Action::ReleaseEvents {
            kind: Kind::Pod,
            to: Recipient::ReplicaSetController,
        }),
        ScriptStep::Settle,
    ]);
    let (none, no_pods) = (Default::default(), Default::default());
    let held = m.resumed(&none, &no_pods, 4).unwrap_err();
    assert!(held.contains("holds watch events"), "{held}");
    assert!(m.resumed(&none, &no_pods, 1).is_ok());
    assert!(m.resumed(&none, &no_pods, 6).is_ok());
    let not_settle = m.resumed(&none, &no_pods, 3).unwrap_err();
    assert_eq!(not_settle, "script step 3 is not a settle");
}
