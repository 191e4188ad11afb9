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
//! Objects that exist when the run starts are applied first; in a forced scenario, pods
//! first and ReplicaSets in the order the run first syncs them, settling in between where the
//! run's syncs did not overlap ([`apply_in_sync_order`]). A move on a pod the controller
//! created names a generated pod, which does not exist on a cluster: it becomes a move on
//! any one pod of the same owner (or with the same labels, for an orphan), which the model
//! explores as a choice that includes the run's.

use super::definition::Scenario;
use super::forcing::{Insert, Rank, Started};
use super::step::{Step, StepKind};
use super::verify::{note_reach, Reached};
use rsmc_spec::model::{Action, PodSelection, PodSet, RsModel, State};
use rsmc_spec::object::{LabelSelector, Pod};
use std::sync::Arc;

/// Why a run cannot be written as a scenario, if it cannot: of the owners of other kinds, a
/// scenario creates and deletes ConfigMaps only (`create: {configMap: …}`, what a local
/// control plane can hold), by steps; an owner there from the start, or of another kind, would
/// be written without it and replay as another run. Every conversion below expects a run for
/// which this is `None`.
pub fn unexpressible(states: &[State], actions: &[Action]) -> Option<String> {
    if let Some(o) = states.first().and_then(|s| s.api.others.first()) {
        return Some(format!(
            "the run starts with an owner of another kind ({}/{}), which a scenario cannot express: a scenario creates ConfigMaps by steps",
            o.kind.kind, o.name
        ));
    }
    actions.iter().find_map(|a| match a {
        Action::CreateOther { kind, name } | Action::DeleteOther { kind, name }
            if !kind.is_configmap() =>
        {
            Some(format!(
                "the run has an owner of kind {} {} ({name}), which a scenario cannot express: a scenario creates ConfigMaps only",
                kind.api_version, kind.kind
            ))
        }
        _ => None,
    })
}

/// The scenario of a run, with its timing left open: `states[i + 1]` is `actions[i]` taken
/// in `states[i]`.
pub fn from_run(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
) -> Scenario {
    build(model, states, actions, name, description, None)
}

/// The scenario of a run with the run's order forced where a cluster would not take it by
/// itself ([`super::forcing`]): holds of the controller's watch events and requests, awaits and
/// settles. What each hold stands for, and what the runner cannot force, is in the
/// scenario's `onCluster`. A run of a scripted model already carries its scenario's holds,
/// and is converted as it is.
pub fn forced(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
) -> Scenario {
    forced_with(
        model,
        states,
        actions,
        name,
        description,
        Started::ByRequest,
    )
}

/// [`forced`] for a counterexample of `property`, checked in the model: of the ways to force
/// the run, the first whose scenario the model takes to the violation, and `onCluster` says
/// whether one does ([`note_reach`]).
pub fn forced_counterexample(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
    property: &str,
) -> Scenario {
    let mut first = None;
    for started in [Started::ByRequest, Started::BySettle] {
        let mut scenario = forced_with(model, states, actions, name, description, started);
        if note_reach(&mut scenario, model, property) == Ok(Reached::Yes) {
            return scenario;
        }
        first.get_or_insert(scenario);
    }
    first.expect("one way was tried")
}

fn forced_with(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
    started: Started,
) -> Scenario {
    if model.script.is_some() {
        return from_run(model, states, actions, name, description);
    }
    let forcing = super::forcing::forcing(model, states, actions, started);
    let mut scenario = build(
        model,
        states,
        actions,
        name,
        description,
        Some(&forcing.inserts),
    );
    let mut on_cluster = Vec::new();
    if !forcing.reasons.is_empty() {
        on_cluster.push(format!(
            "The runner's gate forces the run's order: {}.",
            forcing.reasons.join("; ")
        ));
    }
    if !forcing.timed.is_empty() {
        on_cluster.push(format!("Forced by time: {}.", forcing.timed.join("; ")));
    }
    if !forcing.unforceable.is_empty() {
        on_cluster.push(format!(
            "Not forceable, so a cluster takes another order: {}.",
            forcing.unforceable.join("; ")
        ));
    }
    if !on_cluster.is_empty() {
        scenario.on_cluster = Some(on_cluster.join(" "));
    }
    scenario
}

fn build(
    model: &RsModel,
    states: &[State],
    actions: &[Action],
    name: &str,
    description: &str,
    inserts: Option<&[Insert]>,
) -> Scenario {
    let forced = inserts.is_some();
    let mut inserts: Vec<Insert> = inserts.map(<[Insert]>::to_vec).unwrap_or_default();
    inserts.sort_by_key(|i| (i.at, i.rank));
    let mut steps = Steps::default();
    // Holds before the run's first action go before the objects it starts with.
    for i in inserts.iter().filter(|i| i.at == 0 && i.rank == Rank::Hold) {
        steps.push(Step::new(i.kind.clone()));
    }
    let start = &states[0];
    if forced && !inserts.iter().any(|i| i.at == 0) {
        apply_in_sync_order(&mut steps, states, actions);
    } else {
        for rs in start.api.replicasets.values() {
            steps.extend(apply_replicaset(rs));
        }
        for pod in start.api.pods.values() {
            steps.extend(Step::from_action(&Action::ApplyPod { pod: pod.clone() }));
        }
    }
    let mut pending = inserts
        .iter()
        .filter(|i| !(i.at == 0 && i.rank == Rank::Hold))
        .peekable();
    for (i, action) in actions.iter().enumerate() {
        let step = action.is_environment() && !action.is_script_bookkeeping();
        if step && i > 0 && model.is_quiescent(&states[i]) && !matches!(action, Action::Settle) {
            steps.push(Step::new(StepKind::Settle));
        }
        while let Some(insert) = pending.next_if(|p| p.at <= i) {
            steps.push(Step::new(insert.kind.clone()));
        }
        if step {
            steps.extend(step_for(&states[i], action));
        }
    }
    for insert in pending {
        steps.push(Step::new(insert.kind.clone()));
    }
    steps.push(Step::new(StepKind::Settle));
    let mut scenario = Scenario::new(name, description, steps.0);
    // The run's own bounds: the informer lag it was explored with, and room for the pod
    // creations the API server rejected in it.
    scenario.bounds.max_lag = model.config.informer.max_lag;
    scenario.bounds.create_failures = actions
        .iter()
        .filter(|a| matches!(a, Action::CreateRejected { .. }))
        .count() as u32;
    scenario
}

/// The apply of a ReplicaSet the run starts with, without its status.
fn apply_replicaset(rs: &rsmc_spec::object::ReplicaSet) -> Option<Step> {
    let mut manifest = rsmc_spec::object::ReplicaSet::clone(rs);
    manifest.status = Default::default();
    Step::from_action(&Action::ApplyReplicaSet {
        replicaset: Arc::new(manifest),
    })
}

/// The objects a forced run starts with, applied so that a cluster's controller first syncs
/// them as the run did. In the run they all exist before anything happens; on a cluster
/// each apply is seen at once, and a controller with several workers syncs the ReplicaSets
/// side by side, while the run (one worker, or workers that were busy) may have synced them
/// one after another, each from what the previous one wrote: which of two matching
/// ReplicaSets adopts an orphan decides ignore-controller-ref-removal (#32829), and the
/// cluster's five workers took the other one 2 runs in 3 (the catalogue, 2026-11-28).
///
/// So the pods go first, then a settle if the run's first sync already saw them all; then
/// the ReplicaSets in the order the run first syncs them (those it never syncs last), with
/// a settle after each whose first sync was over before the next one's began.
fn apply_in_sync_order(steps: &mut Steps, states: &[State], actions: &[Action]) {
    let start = &states[0];
    for pod in start.api.pods.values() {
        steps.extend(Step::from_action(&Action::ApplyPod { pod: pod.clone() }));
    }
    let first_syncs: Vec<(usize, &str)> = {
        let mut seen = std::collections::BTreeSet::new();
        actions
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Action::StartSync { key, .. } if start.api.replicasets.contains_key(key) => {
                    seen.insert(key.as_str()).then_some((i, key.as_str()))
                }
                _ => None,
            })
            .collect()
    };
    let last_pod = start
        .api
        .pods
        .values()
        .map(|p| p.meta.resource_version)
        .max();
    if let (Some(rv), Some(&(i, _))) = (last_pod, first_syncs.first()) {
        if states[i]
            .controllers
            .iter()
            .filter(|c| c.running)
            .all(|c| c.seen.pods >= rv)
        {
            steps.push(Step::new(StepKind::Settle));
        }
    }
    let synced = |name: &str| first_syncs.iter().any(|&(_, k)| k == name);
    let order = first_syncs.iter().map(|&(i, k)| (Some(i), k)).chain(
        start
            .api
            .replicasets
            .keys()
            .filter(|k| !synced(k))
            .map(|k| (None, k.as_str())),
    );
    let order: Vec<(Option<usize>, &str)> = order.collect();
    for (n, &(_, name)) in order.iter().enumerate() {
        steps.extend(apply_replicaset(&start.api.replicasets[name]));
        // The next ReplicaSet's first sync began when no worker still synced this one.
        if let Some(&(Some(next), _)) = order.get(n + 1) {
            let busy = states[next]
                .controllers
                .iter()
                .any(|c| c.workers.iter().flatten().any(|task| task.key == name));
            if !busy {
                steps.push(Step::new(StepKind::Settle));
            }
        }
    }
}

/// Steps with no wait written twice in a row: a settle or an await right after the same one
/// waits for nothing.
#[derive(Default)]
struct Steps(Vec<Step>);

impl Steps {
    fn push(&mut self, step: Step) {
        let waits = matches!(step.kind, StepKind::Settle | StepKind::Await(_));
        if waits && self.0.last().is_some_and(|last| last.kind == step.kind) {
            return;
        }
        self.0.push(step);
    }
}

impl Extend<Step> for Steps {
    fn extend<T: IntoIterator<Item = Step>>(&mut self, iter: T) {
        for s in iter {
            self.push(s);
        }
    }
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
            up_to: false,
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
