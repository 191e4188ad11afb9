//! A script run on real kubelets (`Script::real_kubelets`): the nodes bind, start, stop and
//! finish deleting pods by themselves, as system moves, so a settle comes only once every
//! pod runs on a node and every deletion has finished; a played kubelet does none of it.

mod common;

use common::walk::walk;
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
    // terminating pod's containers before its phase, `NodeAct::Unready`, to this).
    assert_eq!(states.len(), 16_040, "states of the real-kubelet model");
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
