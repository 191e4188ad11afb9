//! Writing scenarios: as YAML files that [`super::load`] reads back, and from the environment
//! moves of a model run.

use super::definition::{Bounds, Scenario};
use super::step::{resource_name, Apply, ApplySource, Step, StepKind, REFUSED, THEN_HOLD_AFTER};
use crate::manifest::Object;
use crate::yaml::emit;
use rsmc_spec::api::{Kind, Propagation};
use rsmc_spec::model::{
    Action, Awaited, PodAction, PodSelection, PodSet, Recipient, RequestHold, Watcher,
};
use rsmc_spec::object::{LabelSelector, POD_DELETION_COST};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Keys written first, in this order (the rest follow alphabetically): a scenario's header, a
/// manifest's, and a step's subject before its details.
const KEY_ORDER: &[&str] = &[
    "name",
    "description",
    "onCluster",
    "reproduces",
    "profile",
    "featureGates",
    "nodes",
    "bounds",
    "steps",
    "apiVersion",
    "kind",
    "metadata",
    "spec",
    "file",
    "manifest",
    "replicaset",
    "pod",
    "pods",
    "count",
    "upTo",
    // A held request: its sender, verb, resource and name.
    "from",
    "verb",
    "resource",
    "name",
    // A refused step: its kind, then `refused`.
    "apply",
    "scale",
    "delete",
    "refused",
];

impl Scenario {
    /// A scenario from parts: the nodes are those its steps use, the profile is left to the
    /// command line, the bounds are the defaults, and the path is `NAME.yaml`.
    pub fn new(name: &str, description: &str, steps: Vec<Step>) -> Scenario {
        let mut scenario = Scenario {
            name: name.to_string(),
            description: description.to_string(),
            on_cluster: None,
            reproduces: None,
            profile: None,
            feature_gates: Default::default(),
            nodes: Vec::new(),
            bounds: Bounds::default(),
            path: PathBuf::from(format!("{name}.yaml")),
            steps,
        };
        let nodes: BTreeSet<&str> = scenario.steps.iter().flat_map(|s| s.nodes()).collect();
        scenario.nodes = nodes.into_iter().map(String::from).collect();
        scenario
    }

    /// The scenario as a YAML file. Apply steps that name a file keep naming it (relative to
    /// the scenario's directory); others carry their manifests inline.
    pub fn to_yaml(&self) -> String {
        let mut top = Map::new();
        top.insert("name".into(), json!(self.name));
        if !self.description.is_empty() {
            top.insert("description".into(), json!(self.description));
        }
        if let Some(note) = &self.on_cluster {
            top.insert("onCluster".into(), json!(note));
        }
        if let Some(entry) = self.reproduces {
            top.insert("reproduces".into(), json!(entry.name));
        }
        if let Some(profile) = self.profile {
            top.insert("profile".into(), json!(profile.name()));
        }
        if !self.feature_gates.is_empty() {
            let gates: Map<String, Value> = self
                .feature_gates
                .0
                .iter()
                .map(|(g, on)| (g.name().to_string(), json!(on)))
                .collect();
            top.insert("featureGates".into(), Value::Object(gates));
        }
        if !self.nodes.is_empty() {
            top.insert("nodes".into(), json!(self.nodes));
        }
        if self.bounds != Bounds::default() {
            top.insert(
                "bounds".into(),
                json!({"maxLag": self.bounds.max_lag, "createFailures": self.bounds.create_failures}),
            );
        }
        let steps = self.steps.iter().map(step_value).collect();
        top.insert("steps".into(), Value::Array(steps));
        emit::to_string(&Value::Object(top), KEY_ORDER)
    }
}

impl Step {
    /// The step alone as the scenario format writes it in a list (`hold: pods`), for a fault
    /// mark; read back by [`super::fault_step`].
    pub fn to_yaml(&self) -> String {
        emit::to_string(&step_value(self), KEY_ORDER)
    }
}

/// A step as the format writes it, with the refusal it expects beside its kind.
fn step_value(step: &Step) -> Value {
    let mut value = kind_value(&step.kind);
    if let (Some(reason), Value::Object(map)) = (step.refused, &mut value) {
        map.insert(REFUSED.into(), json!(reason.name()));
    }
    value
}

/// A step's kind as the format writes it.
fn kind_value(kind: &StepKind) -> Value {
    let keyword = kind.keyword();
    let args = match kind {
        StepKind::Apply(apply) => apply_value(apply),
        StepKind::Scale {
            replicaset,
            replicas,
        } => json!({"replicaset": replicaset, "replicas": replicas}),
        StepKind::DeleteReplicaSet {
            replicaset,
            propagation,
        } => json!({"replicaset": replicaset, "cascade": Propagation::asked_word(*propagation)}),
        StepKind::DeleteReplicaSets {
            selector,
            propagation,
        } => json!({
            "replicasets": selector_value(selector),
            "cascade": Propagation::asked_word(*propagation),
        }),
        StepKind::CreateConfigMap { name } | StepKind::DeleteConfigMap { name } => {
            json!({ "configMap": name })
        }
        StepKind::Pods { selection, action } => {
            let mut args = selection_value(selection);
            match action {
                PodAction::Label { set, remove } if set.is_empty() => {
                    args.insert("keys".into(), json!(remove));
                }
                PodAction::Label { set, remove } => {
                    args.insert("set".into(), json!(set));
                    if !remove.is_empty() {
                        args.insert("remove".into(), json!(remove));
                    }
                }
                PodAction::Annotate {
                    deletion_cost: Some(cost),
                } => {
                    args.insert("set".into(), json!({ POD_DELETION_COST: cost.to_string() }));
                }
                PodAction::Annotate {
                    deletion_cost: None,
                } => {
                    args.insert("remove".into(), json!([POD_DELETION_COST]));
                }
                PodAction::SetOwners { owners } => {
                    args.insert("references".into(), json!(owners));
                }
                PodAction::Restarted { restarts } => {
                    args.insert("restartCount".into(), json!(restarts));
                }
                PodAction::Schedule { node } => {
                    args.insert("node".into(), json!(node));
                }
                PodAction::Delete
                | PodAction::Ready
                | PodAction::Unready
                | PodAction::Fail
                | PodAction::FinishDeletion => {}
            }
            Value::Object(args)
        }
        StepKind::Wait { seconds } => json!(format!("{seconds}s")),
        StepKind::RestartController { controller: 0 } => Value::Null,
        StepKind::RestartController { controller } => json!({"controller": controller}),
        StepKind::ExpireExpectations {
            controller,
            replicaset,
        } => json!({"replicaset": replicaset, "controller": controller}),
        StepKind::Relist {
            watcher: Watcher::Controller(0),
        } => json!("controller"),
        StepKind::Relist {
            watcher: Watcher::Controller(c),
        } => json!({"controller": c}),
        StepKind::Relist {
            watcher: Watcher::GarbageCollector,
        } => json!("garbage-collector"),
        StepKind::Hold { kind, to } | StepKind::Release { kind, to } => match to {
            Recipient::ReplicaSetController => json!(resource_name(*kind)),
            Recipient::GarbageCollector => json!({ "garbage-collector": resource_name(*kind) }),
        },
        StepKind::HoldRequests(RequestHold { pattern, after: 0 })
        | StepKind::ReleaseRequests {
            pattern,
            then_hold_after: None,
        } => json!({ "requests": pattern }),
        StepKind::ReleaseRequests {
            pattern,
            then_hold_after: Some(after),
        } => json!({ "requests": pattern, THEN_HOLD_AFTER: after }),
        StepKind::HoldRequests(RequestHold { pattern, after }) => {
            json!({ "requests": pattern, "after": after })
        }
        StepKind::Await(Awaited::Held(pattern)) => json!({ "held": pattern }),
        StepKind::Await(Awaited::Gone { kind, name }) => {
            json!({ "gone": { kind_key(*kind): name } })
        }
        StepKind::StartSecondLeader | StepKind::StopFirstLeader | StepKind::Settle => Value::Null,
    };
    if args.is_null() {
        json!(keyword)
    } else {
        json!({ keyword: args })
    }
}

fn apply_value(apply: &Apply) -> Value {
    let mut args = Map::new();
    match &apply.source {
        ApplySource::File(path) if apply.node_name.is_none() => {
            return json!(path.display().to_string())
        }
        ApplySource::File(path) => {
            args.insert("file".into(), json!(path.display().to_string()));
        }
        ApplySource::Inline => {
            let raws: Vec<&Value> = apply.manifests.iter().map(|m| &m.raw).collect();
            let manifest = match raws.as_slice() {
                [one] => (*one).clone(),
                many => json!(many),
            };
            args.insert("manifest".into(), manifest);
        }
    }
    if let Some(node) = &apply.node_name {
        args.insert("nodeName".into(), json!(node));
    }
    Value::Object(args)
}

/// A label selector as a step writes it: `{labels: {…}}` when it is equalities only, else
/// `{selector: {…}}`.
fn selector_value(selector: &LabelSelector) -> Value {
    if selector.match_expressions.is_empty() {
        json!({"labels": selector.match_labels})
    } else {
        json!({"selector": selector})
    }
}

fn selection_value(selection: &PodSelection) -> Map<String, Value> {
    let mut args = Map::new();
    match &selection.set {
        PodSet::Names(names) if names.len() == 1 => {
            args.insert("pod".into(), json!(names[0]));
        }
        PodSet::Names(names) => {
            args.insert("pods".into(), json!(names));
        }
        PodSet::All => {
            args.insert("pods".into(), json!("all"));
        }
        PodSet::ControlledBy(rs) => {
            args.insert("pods".into(), json!({"of": rs}));
        }
        PodSet::Matching(selector) => {
            args.insert("pods".into(), selector_value(selector));
        }
    }
    if let Some(count) = selection.count {
        let key = if selection.up_to { "upTo" } else { "count" };
        args.insert(key.into(), json!(count));
    }
    args
}

impl Step {
    /// The scenario step for one environment move of a model run; `None` for a system move and
    /// for the user's listing of pods (part of the pod step that follows it). A move on one pod
    /// names the pod: names the model generated (`frontend-<suffix>`) do not exist on a real
    /// cluster, so a scenario meant for replay selects such pods instead (`{of: frontend}`).
    pub fn from_action(action: &Action) -> Option<Step> {
        let pod = |name: &String, action: PodAction| StepKind::Pods {
            selection: PodSelection {
                set: PodSet::Names(vec![name.clone()]),
                count: None,
                up_to: false,
            },
            action,
        };
        let kind = match action {
            Action::ApplyReplicaSet { replicaset } => {
                return Some(Step::apply_objects(vec![Object::ReplicaSet(
                    replicaset.clone(),
                )]))
            }
            Action::ApplyPod { pod } => {
                return Some(Step::apply_objects(vec![Object::Pod(pod.clone())]))
            }
            Action::ScaleReplicaSet { name, replicas } => StepKind::Scale {
                replicaset: name.clone(),
                replicas: *replicas,
            },
            Action::DeleteReplicaSet { name, propagation } => StepKind::DeleteReplicaSet {
                replicaset: name.clone(),
                propagation: *propagation,
            },
            Action::LabelPod { name, set, remove } => pod(
                name,
                PodAction::Label {
                    set: set.clone(),
                    remove: remove.clone(),
                },
            ),
            Action::AnnotatePod {
                name,
                deletion_cost,
            } => pod(
                name,
                PodAction::Annotate {
                    deletion_cost: *deletion_cost,
                },
            ),
            Action::SetPodOwners { name, owners } => pod(
                name,
                PodAction::SetOwners {
                    owners: owners.clone(),
                },
            ),
            Action::DeletePod { name } => pod(name, PodAction::Delete),
            Action::SchedulePod { name, node } => {
                pod(name, PodAction::Schedule { node: node.clone() })
            }
            Action::PodReady { name } => pod(name, PodAction::Ready),
            Action::PodUnready { name } => pod(name, PodAction::Unready),
            Action::PodFailed { name } => pod(name, PodAction::Fail),
            Action::PodRestarted { name, restarts } => pod(
                name,
                PodAction::Restarted {
                    restarts: *restarts,
                },
            ),
            Action::FinishPodDeletion { name } => pod(name, PodAction::FinishDeletion),
            Action::Tick => StepKind::Wait { seconds: 1 },
            Action::CrashController { controller } => StepKind::RestartController {
                controller: *controller,
            },
            Action::ExpireExpectations { controller, key } => StepKind::ExpireExpectations {
                controller: *controller,
                replicaset: key.clone(),
            },
            Action::Relist { watcher } => StepKind::Relist { watcher: *watcher },
            Action::StartSecondLeader => StepKind::StartSecondLeader,
            Action::StopFirstLeader => StepKind::StopFirstLeader,
            Action::HoldEvents { kind, to } => StepKind::Hold {
                kind: *kind,
                to: *to,
            },
            Action::ReleaseEvents { kind, to } => StepKind::Release {
                kind: *kind,
                to: *to,
            },
            Action::HoldRequests { pattern, after } => StepKind::HoldRequests(RequestHold {
                pattern: pattern.clone(),
                after: *after,
            }),
            Action::ReleaseRequests {
                pattern,
                then_hold_after,
            } => StepKind::ReleaseRequests {
                pattern: pattern.clone(),
                then_hold_after: *then_hold_after,
            },
            Action::Await { until } => StepKind::Await(until.clone()),
            Action::Settle => StepKind::Settle,
            Action::CreateOther { kind, name } if kind.is_configmap() => {
                StepKind::CreateConfigMap { name: name.clone() }
            }
            Action::DeleteOther { kind, name } if kind.is_configmap() => {
                StepKind::DeleteConfigMap { name: name.clone() }
            }
            // No step creates other kinds: a run with them is refused before it is converted
            // ([`super::unexpressible`]).
            Action::CreateOther { .. } | Action::DeleteOther { .. } => return None,
            Action::ListPods
            | Action::ListCollection
            | Action::EndPodStep
            | Action::Deliver { .. }
            | Action::StartSync { .. }
            | Action::SyncStep { .. }
            | Action::CreateRejected { .. }
            | Action::LandsInRemoval { .. }
            | Action::Choose { .. }
            | Action::Node { .. }
            | Action::Gc { .. }
            | Action::RemoveMarkedPod { .. } => return None,
        };
        Some(Step::new(kind))
    }

    /// The nodes this step binds pods to.
    pub fn nodes(&self) -> Vec<&str> {
        match &self.kind {
            StepKind::Apply(apply) => apply
                .manifests
                .iter()
                .filter_map(|m| match &m.object {
                    Object::Pod(pod) => pod.node_name.as_deref(),
                    Object::ReplicaSet(_) => None,
                })
                .chain(apply.node_name.as_deref())
                .collect(),
            StepKind::Pods {
                action: PodAction::Schedule { node },
                ..
            } => vec![node],
            _ => vec![],
        }
    }
}

/// The steps of a model run's environment moves, in order: system moves are left out and
/// consecutive seconds become one wait.
pub fn from_actions<'a>(actions: impl IntoIterator<Item = &'a Action>) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for step in actions.into_iter().filter_map(Step::from_action) {
        if let (
            StepKind::Wait { seconds: more },
            Some(Step {
                kind: StepKind::Wait { seconds },
                ..
            }),
        ) = (&step.kind, steps.last_mut())
        {
            *seconds += more;
            continue;
        }
        steps.push(step);
    }
    steps
}

/// The key naming one object of a kind in a step (`{replicaset: NAME}`, `{pod: NAME}`).
pub(super) fn kind_key(kind: Kind) -> &'static str {
    match kind {
        Kind::ReplicaSet => "replicaset",
        Kind::Pod => "pod",
    }
}
