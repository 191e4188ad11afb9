//! A model run as a scenario a real cluster can replay.
//!
//! A run of a free model check (a counterexample, a cover trace) is a sequence of states and
//! the actions between them. Its environment moves become the scenario's steps, in order;
//! a `settle` goes before every environment move the run made from a quiescent state (the
//! cluster had nothing left to do), and at the end. Where the run's environment moved while
//! the system was busy, the scenario issues the next step without settling, and the model
//! then explores every interleaving, the run's among them: the scenario is the run with its
//! timing left open, which is all a real cluster can be asked to reproduce.
//!
//! The scenario keeps the run's bounds (its informer lag, the rejected creates it needed).
//! Objects that exist when the run starts are applied first. A move on a pod the controller
//! created names a generated pod, which does not exist on a cluster: it becomes a move on
//! any one pod of the same owner (or with the same labels, for an orphan), which the model
//! explores as a choice that includes the run's.

use crate::scenario::{Scenario, Step, StepKind};
use rsmc_spec::model::{Action, PodSelection, PodSet, RsModel, State};
use rsmc_spec::object::{LabelSelector, Pod};
use std::sync::Arc;

/// The scenario of a run: `states[i + 1]` is `actions[i]` taken in `states[i]`.
pub fn from_run(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
) -> Scenario {
    let mut steps = Vec::new();
    let start = &states[0];
    for rs in start.api.replicasets.values() {
        let mut manifest = rsmc_spec::object::ReplicaSet::clone(rs);
        manifest.status = Default::default();
        steps.extend(Step::from_action(&Action::ApplyReplicaSet {
            replicaset: Arc::new(manifest),
        }));
    }
    for pod in start.api.pods.values() {
        steps.extend(Step::from_action(&Action::ApplyPod { pod: pod.clone() }));
    }
    for (i, action) in actions.iter().enumerate() {
        if !action.is_environment() || matches!(action, Action::ListPods) {
            continue;
        }
        let before = &states[i];
        let settled_before = i > 0 && model.is_quiescent(before);
        let last_is_settle = matches!(
            steps.last(),
            Some(Step {
                kind: StepKind::Settle,
                ..
            })
        );
        if settled_before && !last_is_settle && !matches!(action, Action::Settle) {
            steps.push(Step::new(StepKind::Settle));
        }
        steps.extend(step_for(before, action));
    }
    if !matches!(
        steps.last(),
        Some(Step {
            kind: StepKind::Settle,
            ..
        })
    ) {
        steps.push(Step::new(StepKind::Settle));
    }
    let mut scenario = Scenario::new(name, description, steps);
    // The run's own bounds: the informer lag it was explored with, and room for the pod
    // creations the API server rejected in it.
    scenario.bounds.max_lag = model.config.informer.max_lag;
    scenario.bounds.create_failures = actions
        .iter()
        .filter(|a| matches!(a, Action::CreateRejected { .. }))
        .count() as u32;
    scenario
}

/// One environment move as a step; a move on a generated pod becomes one on any one pod of
/// its owner or, for an orphan, with its labels.
fn step_for(state: &State, action: &Action) -> Option<Step> {
    let step = Step::from_action(action)?;
    let Some(pod) = action.pod_name().and_then(|n| state.api.pods.get(n)) else {
        return Some(step);
    };
    if pod.meta.generate_name.is_none() {
        return Some(step);
    }
    let StepKind::Pods { action, .. } = step.kind else {
        return Some(step);
    };
    Some(Step::new(StepKind::Pods {
        selection: PodSelection {
            set: generated_pod_set(state, pod),
            count: Some(1),
        },
        action,
    }))
}

/// The pods a generated pod is interchangeable with, by owner or labels.
fn generated_pod_set(state: &State, pod: &Pod) -> PodSet {
    match pod.meta.controller_ref() {
        Some(r)
            if state
                .api
                .replicasets
                .get(&r.name)
                .is_some_and(|o| o.meta.uid == r.uid) =>
        {
            PodSet::ControlledBy(r.name.clone())
        }
        _ => PodSet::Matching(LabelSelector {
            match_labels: pod.meta.labels.clone(),
            match_expressions: Vec::new(),
        }),
    }
}
