//! A scripted environment: the script's moves are the only environment moves, `settle` waits
//! for quiescence, and pod steps act on a selection in any order.

mod common;

use common::frontend;
use common::walk::walk;
use rsmc_spec::config::Config;
use rsmc_spec::controller::AtGate;
use rsmc_spec::model::{
    Action, PodAction, PodSelection, PodSet, RsModel, Script, ScriptStep, State,
};
use rsmc_spec::object::{labels, LabelSelector, ReplicaSet};
use rsmc_spec::profile::Profile;
use stateright::Model;
use std::collections::BTreeSet;
use std::sync::Arc;

fn model(steps: Vec<ScriptStep>) -> RsModel {
    common::scripted(steps)
}

/// Every reachable state, and the terminal ones (no action enabled).
fn explore(model: &RsModel) -> (Vec<State>, Vec<State>) {
    let walked = walk(model);
    (walked.states, walked.terminal)
}

fn controlled(s: &State) -> usize {
    let uid = s.api.replicasets["frontend"].meta.uid;
    s.active_controlled(uid)
}

#[test]
fn apply_then_settle_ends_quiescent_with_the_replicas() {
    let m = model(vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(2)),
        }),
        ScriptStep::Settle,
    ]);
    let (_, terminal) = explore(&m);
    assert!(!terminal.is_empty());
    for s in &terminal {
        assert_eq!(s.script.step, 2, "the script ran to its end");
        assert!(m.is_quiescent(s));
        assert_eq!(controlled(s), 2);
        assert_eq!(s.api.replicasets["frontend"].status.replicas, 2);
    }
}

#[test]
fn settle_is_enabled_only_when_quiescent() {
    let m = model(vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(1)),
        }),
        ScriptStep::Settle,
    ]);
    let mut s = m.init_states().remove(0);
    s = m
        .next_state(
            &s,
            Action::ApplyReplicaSet {
                replicaset: Arc::new(frontend(1)),
            },
        )
        .unwrap();
    let mut actions = Vec::new();
    m.actions(&s, &mut actions);
    assert!(!m.is_quiescent(&s));
    assert!(!actions.contains(&Action::Settle), "{actions:?}");
}

/// "Ready every pod of frontend": the pods are listed once, then made ready one by one in
/// any order; the step is over when all are, and a failing or vanished pod is skipped.
#[test]
fn a_pod_step_acts_on_every_selected_pod() {
    let all = PodSelection {
        set: PodSet::ControlledBy("frontend".into()),
        count: None,
        up_to: false,
    };
    let m = model(vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(2)),
        }),
        ScriptStep::Settle,
        ScriptStep::Pods {
            pods: all,
            action: PodAction::Ready,
        },
        ScriptStep::Settle,
    ]);
    let (_, terminal) = explore(&m);
    assert!(!terminal.is_empty());
    for s in &terminal {
        assert_eq!(s.script.step, 4);
        assert_eq!(s.api.replicasets["frontend"].status.ready_replicas, 2);
    }
}

/// `count: 1` acts on exactly one pod, and which one is open: both are explored.
#[test]
fn a_counted_pod_step_picks_any_one() {
    let one = PodSelection {
        set: PodSet::ControlledBy("frontend".into()),
        count: Some(1),
        up_to: false,
    };
    let m = model(vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(2)),
        }),
        ScriptStep::Settle,
        ScriptStep::Pods {
            pods: one,
            action: PodAction::Ready,
        },
        ScriptStep::Settle,
    ]);
    let (_, terminal) = explore(&m);
    let ready: BTreeSet<String> = terminal
        .iter()
        .flat_map(|s| {
            s.api
                .pods
                .values()
                .filter(|p| p.is_ready())
                .map(|p| p.meta.name.clone())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(ready.len(), 2, "either pod may be the one: {ready:?}");
    for s in &terminal {
        assert_eq!(s.api.replicasets["frontend"].status.ready_replicas, 1);
    }
}

/// `upTo: 2` (an import's step for writes it cannot attribute) acts on at most two pods:
/// the step may end after none, one or both ([`Action::EndPodStep`]), where `count: 2` acts
/// on exactly two.
#[test]
fn an_up_to_pod_step_may_end_after_any_number_of_its_pods() {
    let ready_counts = |up_to: bool| -> BTreeSet<i32> {
        let m = model(vec![
            ScriptStep::Move(Action::ApplyReplicaSet {
                replicaset: Arc::new(frontend(2)),
            }),
            ScriptStep::Settle,
            ScriptStep::Pods {
                pods: PodSelection {
                    set: PodSet::ControlledBy("frontend".into()),
                    count: Some(2),
                    up_to,
                },
                action: PodAction::Ready,
            },
            ScriptStep::Settle,
        ]);
        let (_, terminal) = explore(&m);
        assert!(terminal.iter().all(|s| s.script.step == 4));
        terminal
            .iter()
            .map(|s| s.api.replicasets["frontend"].status.ready_replicas)
            .collect()
    };
    assert_eq!(ready_counts(true), BTreeSet::from([0, 1, 2]));
    assert_eq!(ready_counts(false), BTreeSet::from([2]));
}

/// A command that fails at the API server (scaling a ReplicaSet that does not exist) changes
/// nothing, and the script moves on.
#[test]
fn a_failing_command_is_skipped() {
    let m = model(vec![
        ScriptStep::Move(Action::ScaleReplicaSet {
            name: "missing".into(),
            replicas: 3,
        }),
        ScriptStep::Settle,
    ]);
    let (states, terminal) = explore(&m);
    assert_eq!(
        states.len(),
        3,
        "start, after the failed scale, after settle"
    );
    assert_eq!(terminal.len(), 1);
    assert!(terminal[0].api.replicasets.is_empty());
}

#[test]
fn a_script_may_not_make_system_moves() {
    let config = Config::preset("small").unwrap();
    let script = Script {
        steps: vec![ScriptStep::Move(Action::Gc {
            work: rsmc_spec::gc::GcWork::Orphan {
                rs: "frontend".into(),
                uid: 1,
            },
        })],
        ..Script::default()
    };
    assert!(RsModel::scripted(config, Profile::K8s120, script).is_err());
}

/// A `wait` (a tick) separates timestamps: pods created after it are newer.
#[test]
fn ticks_advance_the_clock_between_steps() {
    let m = model(vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(1)),
        }),
        ScriptStep::Settle,
        ScriptStep::Move(Action::Tick),
        ScriptStep::Move(Action::ScaleReplicaSet {
            name: "frontend".into(),
            replicas: 2,
        }),
        ScriptStep::Settle,
    ]);
    let (_, terminal) = explore(&m);
    for s in &terminal {
        let mut created: Vec<u32> = s.api.pods.values().map(|p| p.meta.created).collect();
        created.sort();
        assert_eq!(created, vec![0, 1]);
    }
}

/// A held request: the sync has run up to it — its expectations set — and sent it, and it
/// lands only on release. Holding the creation of frontend's pod leaves every state at the
/// await with the creation expected and no pod; after the release the pod exists and the
/// expectation is met.
#[test]
fn a_held_request_is_sent_with_its_expectations_and_lands_on_release() {
    held_creations(1, 0);
}

/// A hold that lets the first two creations of a burst of three through catches the third
/// only: settled with two pods and one creation still expected.
#[test]
fn a_hold_lets_the_first_requests_through() {
    held_creations(3, 2);
}

/// Hold the requests `pattern` catches (after `after` of them), take `cause`, await a held
/// one, settle, release, settle.
fn held_then_released(
    pattern: &rsmc_spec::api::RequestPattern,
    after: u8,
    cause: ScriptStep,
) -> Vec<ScriptStep> {
    use rsmc_spec::model::Awaited;
    vec![
        ScriptStep::Move(Action::HoldRequests {
            pattern: pattern.clone(),
            after,
        }),
        cause,
        ScriptStep::Move(Action::Await {
            until: Awaited::Held(pattern.clone()),
        }),
        ScriptStep::Settle,
        ScriptStep::Move(Action::ReleaseRequests {
            pattern: pattern.clone(),
            then_hold_after: None,
        }),
        ScriptStep::Settle,
    ]
}

/// Hold frontend's pod creations after `after` of them, apply it with `replicas`, await a
/// held creation, settle, release, settle: check every state at both settle points.
fn held_creations(replicas: i32, after: u8) {
    use rsmc_spec::api::{RequestPattern, Resource, Verb};
    let creates = RequestPattern {
        from: rsmc_spec::model::Recipient::ReplicaSetController,
        verb: Verb::Create,
        resource: Resource::Pods,
        name: None,
    };
    let apply = ScriptStep::Move(Action::ApplyReplicaSet {
        replicaset: Arc::new(frontend(replicas)),
    });
    let m = model(held_then_released(&creates, after, apply));
    let (states, _) = explore(&m);
    let mut held_and_settled = 0;
    let mut ended = 0;
    for s in &states {
        let expected = |s: &State| {
            s.controllers[0]
                .expectations
                .0
                .get("frontend")
                .map(|e| e.add)
        };
        if s.script.step == 4 {
            // Settled with the creation held.
            held_and_settled += 1;
            assert_eq!(
                s.api.pods.len(),
                usize::from(after),
                "only the creations let through have landed"
            );
            assert_eq!(expected(s), Some(1), "sent: its creation is expected");
            assert!(s.controllers[0]
                .workers
                .iter()
                .flatten()
                .all(|t| t.at_gate == AtGate::Held));
        }
        if s.script.step == 6 {
            ended += 1;
            assert_eq!(s.api.pods.len(), replicas as usize);
            assert!(s.controllers[0].expectations.satisfied("frontend"));
        }
    }
    assert!(held_and_settled > 0 && ended > 0);
}

/// The garbage collector's held orphaning: after an orphan delete of frontend, the
/// collector's PATCH of its pod waits at the gate, so the cluster settles with the pod still
/// controlled and the ReplicaSet still there with its `orphan` finalizer; on release the
/// pod is orphaned and the ReplicaSet goes.
#[test]
fn the_garbage_collectors_held_requests_wait_for_their_release() {
    use rsmc_spec::api::{Propagation, RequestPattern, Resource, Verb};
    use rsmc_spec::model::Recipient;
    use rsmc_spec::object::Finalizer;
    let orphaning = RequestPattern {
        from: Recipient::GarbageCollector,
        verb: Verb::Patch,
        resource: Resource::Pods,
        name: None,
    };
    let delete = ScriptStep::Move(Action::DeleteReplicaSet {
        name: "frontend".into(),
        propagation: Some(Propagation::Orphan),
    });
    let mut steps = vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend(1)),
        }),
        ScriptStep::Settle,
    ];
    steps.extend(held_then_released(&orphaning, 0, delete));
    let m = model(steps);
    let (states, terminal) = explore(&m);
    let mut held = 0;
    for s in states.iter().filter(|s| s.script.step == 6) {
        held += 1;
        let rs = &s.api.replicasets["frontend"];
        assert!(rs.meta.has_finalizer(Finalizer::Orphan));
        assert_eq!(s.api.pods.len(), 1);
        assert!(s.api.pods.values().all(|p| p
            .meta
            .owner_references
            .iter()
            .any(|r| r.uid == rs.meta.uid)));
    }
    let ended = terminal.len();
    for s in &terminal {
        assert!(!s.api.replicasets.contains_key("frontend"));
        assert_eq!(s.api.pods.len(), 1);
        assert!(s
            .api
            .pods
            .values()
            .all(|p| p.meta.owner_references.is_empty()));
    }
    assert!(held > 0 && ended > 0);
}

fn labelled(name: &str, e2e: Option<&str>) -> ReplicaSet {
    let mut rs = ReplicaSet::new(
        name,
        0,
        LabelSelector::match_labels(&[("app", name)]),
        labels(&[("app", name)]),
    );
    if let Some(v) = e2e {
        rs.meta.labels.insert("e2e".into(), v.into());
    }
    rs
}

/// A DeleteCollection (upstream `listRSDeleteCollection`): the API server lists the matching
/// ReplicaSets when the request arrives, then deletes them one by one in name order (its
/// single `DeleteCollectionWorkers` worker), and other actors may move between two deletes;
/// a ReplicaSet the selector does not match stays.
#[test]
fn a_collection_delete_lists_then_deletes_the_matching_replicasets_in_name_order() {
    let apply = |name, e2e| {
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(labelled(name, e2e)),
        })
    };
    let m = model(vec![
        apply("b", Some("x")),
        apply("a", Some("x")),
        apply("c", None),
        ScriptStep::Settle,
        ScriptStep::DeleteReplicaSets {
            selector: LabelSelector::match_labels(&[("e2e", "x")]),
            propagation: None,
        },
        ScriptStep::Settle,
    ]);
    let (states, terminal) = explore(&m);
    assert!(!terminal.is_empty());
    for s in &terminal {
        let left: Vec<&String> = s.api.replicasets.keys().collect();
        assert_eq!(left, ["c"], "only the unlabelled ReplicaSet stays");
    }
    // No state has b deleted while a still stands: the server deletes in name order.
    assert!(states
        .iter()
        .all(|s| s.api.replicasets.contains_key("b") || !s.api.replicasets.contains_key("a")));
    // Between the two deletes, the system may move: some state mid-collection (a gone, b still
    // to delete) has a system move enabled besides the next delete.
    let between = states
        .iter()
        .filter(|s| s.script.next_in_collection().is_some_and(|n| n == "b"))
        .filter(|s| !s.api.replicasets.contains_key("a"))
        .any(|s| {
            let mut actions = Vec::new();
            m.actions(s, &mut actions);
            actions.iter().any(|a| !a.is_environment())
        });
    assert!(between, "the collection's deletes are not atomic");
}
