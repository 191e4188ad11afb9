//! A script run on real kubelets (`Script::real_kubelets`): the nodes bind, start, stop and
//! finish deleting pods by themselves, as system moves, so a settle comes only once every
//! pod runs on a node and every deletion has finished; a played kubelet does none of it.

mod common;

use common::walk::walk;
use rsmc_spec::api::Change;
use rsmc_spec::config::Config;
use rsmc_spec::model::{Action, NodeAct, RsModel, Script, ScriptStep, State};
use rsmc_spec::object::{labels, LabelSelector, PodPhase, ReplicaSet};
use rsmc_spec::profile::Profile;
use std::collections::BTreeSet;
use std::sync::Arc;

const NODE: &str = "kind-control-plane";

/// Apply frontend with one replica, settle, scale it to none, settle. (Two replicas give the
/// same answers in 50 times the states.)
fn model(real_kubelets: bool) -> RsModel {
    scripted(real_kubelets, true)
}

/// Apply frontend with one replica, settle if `settle_between`, scale it to none, settle.
fn scripted(real_kubelets: bool, settle_between: bool) -> RsModel {
    let frontend = ReplicaSet::new(
        "frontend",
        1,
        LabelSelector::match_labels(&[("tier", "frontend")]),
        labels(&[("tier", "frontend")]),
    );
    let steps = vec![
        ScriptStep::Move(Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend),
        }),
        ScriptStep::Settle,
        ScriptStep::Move(Action::ScaleReplicaSet {
            name: "frontend".into(),
            replicas: 0,
        }),
        ScriptStep::Settle,
    ];
    let steps = if settle_between {
        steps
    } else {
        [&steps[..1], &steps[2..]].concat()
    };
    let config = Config {
        nodes: vec![NODE.into()],
        ..Config::preset("small").unwrap()
    };
    let script = Script {
        steps,
        real_kubelets,
        ..Script::default()
    };
    RsModel::scripted(config, Profile::K8s120, script).unwrap()
}

/// Every reachable state, and the node moves taken anywhere.
fn explore(model: &RsModel) -> (Vec<State>, BTreeSet<String>) {
    let walked = walk(model);
    let taken = walked
        .taken
        .iter()
        .filter_map(|a| match a {
            Action::Node { act, .. } => Some(format!("{act:?}")),
            _ => None,
        })
        .collect();
    (walked.states, taken)
}

#[test]
fn real_nodes_run_every_pod_before_a_settle_and_finish_every_deletion() {
    let m = model(true);
    let (states, taken) = explore(&m);
    // Pinned: every change to what real nodes may do shows here (the kubelet's first
    // report, `NodeAct::Report`, took it from 5,155 to 6,923; the report of a
    // terminating pod's containers before its phase, `NodeAct::Unready`, to 16,040; a
    // binding under a delete in flight, `NodeAct::BindUnderDelete`, to this).
    assert_eq!(states.len(), 16_486, "states of the real-kubelet model");
    // After the first settle and before the scale: the pod bound to the node, Running, Ready.
    let settled: Vec<&State> = states.iter().filter(|s| s.script.step == 2).collect();
    assert!(!settled.is_empty());
    for s in &settled {
        assert_eq!(s.api.pods.len(), 1);
        for p in s.api.pods.values() {
            assert_eq!(p.node_name.as_deref(), Some(NODE));
            assert_eq!(p.phase, PodPhase::Running);
            assert!(p.is_ready());
        }
    }
    // The end: the node has finished the graceful deletion.
    let ends: Vec<&State> = states.iter().filter(|s| s.script.step == 4).collect();
    assert!(!ends.is_empty());
    for s in &ends {
        assert!(s.api.pods.is_empty(), "{:?}", s.api.pods.keys());
    }
    // Each move of a node happens somewhere, a stopped pod ending either way.
    for act in [
        NodeAct::Bind { node: NODE.into() },
        NodeAct::BindUnderDelete { node: NODE.into() },
        NodeAct::Report,
        NodeAct::Start,
        NodeAct::Unready,
        NodeAct::Stop {
            phase: PodPhase::Succeeded,
        },
        NodeAct::Stop {
            phase: PodPhase::Failed,
        },
        NodeAct::Finish,
    ] {
        assert!(taken.contains(&format!("{act:?}")), "{act:?} never taken");
    }
}

/// Scaled to none before the pod has settled: the controller's delete may read the pod before
/// the scheduler's binding and write after it, taking a bound, running pod straight to grace
/// period 0 (seen on kind); with the binding seen first, the delete is graceful. Only a delete
/// in flight at the binding does that: with a settle between, no bound pod goes so.
#[test]
fn a_delete_racing_the_binding_marks_a_bound_pod_with_grace_period_zero() {
    let raced = |model: &RsModel| {
        explore(model)
            .0
            .iter()
            .flat_map(|s| s.api.log.iter())
            .any(|e| match &e.change {
                Change::Pod {
                    before: Some(before),
                    after: Some(after),
                } => {
                    !before.meta.is_deleting()
                        && after.grace_over
                        && after.node_name.is_some()
                        && !matches!(after.phase, PodPhase::Succeeded | PodPhase::Failed)
                }
                _ => false,
            })
    };
    assert!(raced(&scripted(true, false)), "no delete raced a binding");
    assert!(
        !raced(&scripted(true, true)),
        "a bound pod's delete without a race at grace 0"
    );
}

#[test]
fn a_played_kubelet_does_nothing_by_itself() {
    let (states, taken) = explore(&model(false));
    assert!(taken.is_empty(), "{taken:?}");
    for s in states.iter().filter(|s| s.script.step == 4) {
        // Scaled to none: the pod was never bound, so it went at once.
        assert!(s.api.pods.is_empty());
    }
    for s in states.iter().filter(|s| s.script.step == 2) {
        assert!(s.api.pods.values().all(|p| p.node_name.is_none()));
    }
}
