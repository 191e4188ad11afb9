//! A small set of model runs that together use every environment move a configuration
//! enables and reach every situation the properties are about, for conformance.
//!
//! A target is either an environment move kind (applying a ReplicaSet, scaling down, deleting
//! with each propagation policy, a kubelet report, a fault…) or a situation (an adoption, a
//! release, an orphaning by the GC, a ranking tie, a surplus pod deleted, each deletion policy
//! completing, two ReplicaSets at once). A breadth-first search over the configuration's
//! state space records, for each target, the first — hence a shortest — run that hits it.
//! Runs are then picked greedily, longest first, each covering every target on its way, and
//! every picked run is extended with system moves to a quiescent state, so that it ends where
//! a cluster can be observed.
//!
//! Runs for targets other than faults are searched for in the configuration without faults
//! (a controller restart at the start is a shortcut to quiescence, and would otherwise sit in
//! every run); runs for faults in the configuration as it is. Only targets the configuration
//! can produce are searched for. The search stores each state once with the index of its
//! parent and the action from it; a run is rebuilt by replaying its actions from the initial
//! state (steps are deterministic).

use crate::explore::successors;
use rsmc_spec::api::Propagation;
use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::controller::Pending;
use rsmc_spec::model::{Action, RsModel, State};
use rsmc_spec::object::Finalizer;
use stateright::Model;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// One chosen run.
#[derive(Clone, Debug)]
pub struct Run {
    /// The model it is a run of: the configuration, or the configuration without faults.
    pub model: RsModel,
    /// The targets this run hits, in the order it hits them.
    pub targets: Vec<String>,
    pub states: Vec<State>,
    pub actions: Vec<Action>,
}

/// The result of a cover search.
#[derive(Clone, Debug)]
pub struct Cover {
    pub runs: Vec<Run>,
    /// Targets no explored run hits (not enabled by the configuration, or beyond the limit).
    pub uncovered: Vec<String>,
    /// States the search visited.
    pub explored: usize,
    /// The limit that stopped the search before it exhausted the state space, if one did.
    pub stopped: Option<Exhausted>,
}

/// The environment move kind of an action taken in `s`.
fn move_kind(s: &State, action: &Action) -> Option<String> {
    let kind = match action {
        Action::ApplyReplicaSet { replicaset } => {
            if s.api.replicasets.contains_key(&replicaset.meta.name) {
                "user: re-apply a ReplicaSet".into()
            } else {
                "user: create a ReplicaSet".into()
            }
        }
        Action::ScaleReplicaSet { name, replicas } => {
            let current = s.api.replicasets.get(name).map_or(0, |r| r.spec.replicas);
            if *replicas > current {
                "user: scale up".into()
            } else {
                "user: scale down".into()
            }
        }
        Action::DeleteReplicaSet { propagation, .. } => match propagation {
            Some(p) => format!("user: delete a ReplicaSet ({p:?})"),
            None => "user: delete a ReplicaSet (no policy)".into(),
        },
        Action::ApplyPod { .. } => "user: create a bare pod".into(),
        Action::LabelPod { .. } => "user: relabel a pod".into(),
        Action::AnnotatePod { .. } => "user: change a pod's deletion cost".into(),
        Action::SetPodOwners { .. } => "user: set a pod's owner references".into(),
        Action::DeletePod { .. } => "user: delete a pod".into(),
        Action::SchedulePod { .. } => "scheduler: bind a pod".into(),
        Action::PodReady { .. } => "kubelet: a pod turns ready".into(),
        Action::PodUnready { .. } => "kubelet: a pod turns unready".into(),
        Action::PodFailed { .. } => "kubelet: a pod fails".into(),
        Action::PodRestarted { .. } => "kubelet: a pod's containers restart".into(),
        Action::FinishPodDeletion { .. } => "kubelet: a graceful deletion finishes".into(),
        Action::Tick => "time: a second passes".into(),
        Action::CrashController { .. } => "fault: the controller restarts".into(),
        Action::ExpireExpectations { .. } => "timer: expectations expire".into(),
        Action::Relist { .. } => "fault: an informer relists".into(),
        Action::StartSecondLeader => "fault: a second leader starts".into(),
        Action::StopFirstLeader => "fault: the first leader stops".into(),
        _ => return None,
    };
    Some(kind)
}

/// The move kinds a configuration enables, as targets.
fn enabled_kinds(model: &RsModel) -> Vec<String> {
    let env = &model.config.environment;
    let mut out: Vec<String> = Vec::new();
    let mut add = |on: bool, name: &str| {
        if on {
            out.push(name.to_string());
        }
    };
    add(env.create_replica_set, "user: create a ReplicaSet");
    let scales = model
        .config
        .replicasets
        .iter()
        .any(|d| !d.scale_to.is_empty());
    add(env.scale && scales, "user: scale down");
    for p in Propagation::ALL {
        add(
            env.delete_replica_set.contains(&p),
            &format!("user: delete a ReplicaSet ({p:?})"),
        );
    }
    add(
        env.create_pod && !model.config.pods.is_empty(),
        "user: create a bare pod",
    );
    add(env.relabel_pod, "user: relabel a pod");
    add(env.delete_pod, "user: delete a pod");
    add(env.schedule_pod, "scheduler: bind a pod");
    add(env.pod_ready, "kubelet: a pod turns ready");
    add(env.pod_unready, "kubelet: a pod turns unready");
    add(env.pod_failed, "kubelet: a pod fails");
    add(
        env.finish_pod_deletion,
        "kubelet: a graceful deletion finishes",
    );
    add(env.ticks > 0, "time: a second passes");
    add(env.crashes > 0, "fault: the controller restarts");
    add(env.expectation_expiries > 0, "timer: expectations expire");
    add(env.relists > 0, "fault: an informer relists");
    add(env.second_leader, "fault: a second leader starts");
    out
}

/// The situations every configuration is searched for.
pub const SITUATIONS: [&str; 10] = [
    "situation: the controller adopts a bare pod",
    "situation: the controller releases a pod",
    "situation: the garbage collector orphans a pod",
    "situation: the garbage collector deletes a dependent",
    "situation: the ranking has a tie among scale-down victims",
    "situation: the controller deletes a surplus pod",
    "situation: a Background deletion completes",
    "situation: a Foreground deletion completes",
    "situation: an Orphan deletion completes",
    "situation: two ReplicaSets exist at once",
];

/// The situations the step `s --action--> n` is in.
fn situations(model: &RsModel, s: &State, action: &Action, n: &State) -> Vec<&'static str> {
    let mut out = Vec::new();
    let by_gc = matches!(action, Action::Gc { .. });
    let by_controller = matches!(action, Action::SyncStep { .. });
    for (name, before) in &s.api.pods {
        let after = n.api.pods.get(name);
        let owned_before = before.meta.controller_ref().is_some();
        match after {
            Some(after) if after.meta.uid == before.meta.uid => {
                let owned_after = after.meta.controller_ref().is_some();
                if by_controller && !owned_before && owned_after {
                    out.push(SITUATIONS[0]);
                }
                if by_controller && owned_before && !owned_after {
                    out.push(SITUATIONS[1]);
                }
                if by_gc && owned_before && !owned_after {
                    out.push(SITUATIONS[2]);
                }
                if by_gc && !before.meta.is_deleting() && after.meta.is_deleting() {
                    out.push(SITUATIONS[3]);
                }
                if by_controller && !before.meta.is_deleting() && after.meta.is_deleting() {
                    out.push(SITUATIONS[5]);
                }
            }
            _ => {
                if by_gc {
                    out.push(SITUATIONS[3]);
                }
                if by_controller {
                    out.push(SITUATIONS[5]);
                }
            }
        }
    }
    if let Action::Choose {
        controller, worker, ..
    } = action
    {
        let c = &s.controllers[*controller as usize];
        if let Some(task) = &c.workers[*worker as usize] {
            if matches!(model.pending(s, c, task), Pending::Choose(sets) if sets.count() > 1) {
                out.push(SITUATIONS[4]);
            }
        }
    }
    for (name, rs) in &s.api.replicasets {
        if n.api
            .replicasets
            .get(name)
            .is_some_and(|r| r.meta.uid == rs.meta.uid)
        {
            continue;
        }
        if matches!(action, Action::DeleteReplicaSet { .. }) {
            out.push(SITUATIONS[6]);
        } else if rs.meta.has_finalizer(Finalizer::ForegroundDeletion) {
            out.push(SITUATIONS[7]);
        } else if rs.meta.has_finalizer(Finalizer::Orphan) {
            out.push(SITUATIONS[8]);
        }
    }
    if s.api.replicasets.len() < 2 && n.api.replicasets.len() >= 2 {
        out.push(SITUATIONS[9]);
    }
    out
}

/// The situations a configuration can produce at all.
fn applicable_situations(model: &RsModel) -> Vec<String> {
    let c = &model.config;
    let env = &c.environment;
    let policies = &env.delete_replica_set;
    let can = [
        env.create_pod && !c.pods.is_empty(),
        env.relabel_pod,
        policies.contains(&Propagation::Orphan),
        !policies.is_empty(),
        env.scale || env.create_pod,
        env.scale || env.create_pod,
        policies.contains(&Propagation::Background),
        policies.contains(&Propagation::Foreground),
        policies.contains(&Propagation::Orphan),
        c.replicasets.len() >= 2,
    ];
    SITUATIONS
        .iter()
        .zip(can)
        .filter(|(_, on)| *on)
        .map(|(s, _)| s.to_string())
        .collect()
}

/// Every target the step hits.
fn targets_of(model: &RsModel, s: &State, action: &Action, n: &State) -> Vec<String> {
    let mut out: Vec<String> = move_kind(s, action).into_iter().collect();
    out.extend(
        situations(model, s, action, n)
            .into_iter()
            .map(String::from),
    );
    out
}

/// Whether a target is a fault's (searched for separately, so that other runs have none).
fn is_fault(target: &str) -> bool {
    target.starts_with("fault:") || target.starts_with("timer:")
}

/// The configuration without faults: no crashes, expiries, relists, second leader or
/// rejected creates.
fn calm(model: &RsModel) -> RsModel {
    let mut config = model.config.clone();
    let env = &mut config.environment;
    env.crashes = 0;
    env.expectation_expiries = 0;
    env.relists = 0;
    env.second_leader = false;
    env.create_failures = 0;
    RsModel::new(config, model.profile)
}

/// The first runs (by breadth-first search: shortest) to each of `wanted`, as action lists,
/// and how many states were visited and which limit stopped the search, if one did.
fn first_runs(
    model: &RsModel,
    wanted: &BTreeSet<String>,
    budget: &Budget,
    progress: &mut impl FnMut(usize),
) -> (Vec<Vec<Action>>, usize, Option<Exhausted>) {
    let mut meter = budget.meter();
    let init = model.init_states().remove(0);
    let mut index: HashMap<State, usize> = HashMap::new();
    let mut parents: Vec<Option<(usize, Action)>> = vec![None];
    index.insert(init.clone(), 0);
    let mut queue: VecDeque<(State, usize)> = VecDeque::from([(init, 0)]);
    // target → (index of the state it was hit from, the action that hit it)
    let mut first: BTreeMap<String, (usize, Action)> = BTreeMap::new();
    let mut stopped = None;
    let mut reported = 0;
    while let Some((s, i)) = queue.pop_front() {
        if wanted.iter().all(|t| first.contains_key(t)) {
            break;
        }
        if let Err(e) = meter.check(index.len() + 1) {
            stopped = Some(e);
            break;
        }
        if index.len() >= reported + 100_000 {
            reported = index.len();
            progress(reported);
        }
        for (action, n) in successors(model, &s) {
            for t in targets_of(model, &s, &action, &n) {
                if wanted.contains(&t) {
                    first.entry(t).or_insert_with(|| (i, action.clone()));
                }
            }
            if !index.contains_key(&n) {
                let j = parents.len();
                parents.push(Some((i, action)));
                index.insert(n.clone(), j);
                queue.push_back((n, j));
            }
        }
    }
    let path_to = |mut i: usize, last: &Action| {
        let mut actions = vec![last.clone()];
        while let Some((p, a)) = &parents[i] {
            actions.push(a.clone());
            i = *p;
        }
        actions.reverse();
        actions
    };
    let runs = first.values().map(|(i, a)| path_to(*i, a)).collect();
    (runs, index.len(), stopped)
}

/// Search `model` (a free model check's) for cover runs, each search within `budget`. Runs for the non-fault targets come from the configuration without faults, so
/// that only the runs for a fault have one. `progress` is told the states visited now and
/// then.
pub fn cover(model: &RsModel, budget: &Budget, mut progress: impl FnMut(usize)) -> Cover {
    let wanted: BTreeSet<String> = enabled_kinds(model)
        .into_iter()
        .chain(applicable_situations(model))
        .collect();
    let (faults, others): (BTreeSet<String>, BTreeSet<String>) =
        wanted.iter().cloned().partition(|t| is_fault(t));
    let quiet = calm(model);
    let mut found: Vec<(RsModel, Vec<Action>)> = Vec::new();
    let mut explored = 0;
    let mut stopped = None;
    for (m, targets) in [(&quiet, &others), (model, &faults)] {
        if targets.is_empty() {
            continue;
        }
        let (runs, n, t) = first_runs(m, targets, budget, &mut progress);
        explored += n;
        stopped = stopped.or(t);
        found.extend(runs.into_iter().map(|r| (m.clone(), r)));
    }
    found.sort_by_key(|(_, p)| std::cmp::Reverse(p.len()));
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let mut runs = Vec::new();
    for (m, actions) in found {
        let init = m.init_states().remove(0);
        let (states, actions) = replay(&m, &init, &actions);
        let hit: Vec<String> = run_targets(&m, &states, &actions)
            .into_iter()
            .filter(|t| wanted.contains(t))
            .collect();
        if hit.iter().all(|t| covered.contains(t)) {
            continue;
        }
        let (states, actions) = settle(&m, states, actions, budget);
        covered.extend(hit.iter().cloned());
        runs.push(Run {
            model: m,
            targets: hit,
            states,
            actions,
        });
    }
    Cover {
        runs,
        uncovered: wanted.difference(&covered).cloned().collect(),
        explored,
        stopped,
    }
}

/// The states of `actions` taken from `init`.
fn replay(model: &RsModel, init: &State, actions: &[Action]) -> (Vec<State>, Vec<Action>) {
    let mut states = vec![init.clone()];
    for a in actions {
        let next = model
            .next_state(states.last().expect("non-empty"), a.clone())
            .expect("a recorded step replays");
        states.push(next);
    }
    (states, actions.to_vec())
}

/// The targets a run hits, in order, each once.
fn run_targets(model: &RsModel, states: &[State], actions: &[Action]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        for t in targets_of(model, &states[i], a, &states[i + 1]) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// Extend a run with system moves only to the nearest quiescent state.
fn settle(
    model: &RsModel,
    mut states: Vec<State>,
    mut actions: Vec<Action>,
    budget: &Budget,
) -> (Vec<State>, Vec<Action>) {
    let mut meter = budget.meter();
    let last = states.last().expect("non-empty").clone();
    let mut seen: HashMap<State, Option<(State, Action)>> = HashMap::from([(last.clone(), None)]);
    let mut queue = VecDeque::from([last]);
    while let Some(s) = queue.pop_front() {
        if model.is_quiescent(&s) {
            let mut tail = Vec::new();
            let mut at = s;
            while let Some(Some((p, a))) = seen.get(&at).cloned() {
                tail.push((a, at));
                at = p;
            }
            for (a, st) in tail.into_iter().rev() {
                actions.push(a);
                states.push(st);
            }
            break;
        }
        if meter.check(seen.len()).is_err() {
            break;
        }
        for (a, n) in successors(model, &s) {
            if a.is_environment() || seen.contains_key(&n) {
                continue;
            }
            seen.insert(n.clone(), Some((s.clone(), a)));
            queue.push_back(n);
        }
    }
    (states, actions)
}
