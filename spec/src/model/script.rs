//! A scripted environment: a scenario's steps, in model terms, as the only environment moves.
//!
//! A model check lets the environment move freely within budgets. A scenario instead fixes
//! the environment's moves and their order, and leaves the system free: between two steps,
//! and while a step acts on several pods, every interleaving of informers, workers, the API
//! server and the garbage collector is explored. `settle` steps are where a scenario waits
//! for quiescence (no system move enabled); they are the points where the oracle compares
//! the model with what a real cluster did.
//!
//! A step that acts on pods names them by a selection, evaluated when the user lists the pods
//! ([`Action::ListPods`], which may happen at any moment after the previous step, as a real
//! client's list does); the step then acts on each selected pod, in any order, skipping pods
//! that are gone by then. Generated names therefore never appear in a script: "the pods of
//! frontend" means the same on a real cluster and in the model.

use super::action::Action;
use super::owner_by_name::OwnerByName;
use crate::api::{Kind, Propagation, Reason, RequestPattern, View};
use crate::object::{LabelSelector, Labels, Pod, ReplicaSet};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A whole script.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Script {
    pub steps: Vec<ScriptStep>,
    /// Pod creations the API server may reject (an exceeded quota), anywhere in the run.
    pub create_failures: u32,
    /// The run is on real nodes: their schedulers and kubelets bind, start, stop and finish
    /// deleting pods by themselves ([`Action::Node`], onto the configuration's nodes), and
    /// the script has no steps of theirs.
    #[serde(default, skip_serializing_if = "is_false")]
    pub real_kubelets: bool,
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

/// One step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ScriptStep {
    /// One fully determined environment move: apply a manifest, scale, delete a ReplicaSet,
    /// a second passing, or a fault. A move that fails at the API server (say, scaling a
    /// ReplicaSet that is gone) changes nothing, as the same command would on a cluster.
    Move(Action),
    /// A move the scenario expects the API server to refuse with `reason` (an apply whose
    /// selector does not match its template: `Invalid`; scaling a ReplicaSet that is gone:
    /// `NotFound`). It changes nothing; a run in which the API server answers anything else
    /// goes no further ([`super::RsModel::refusal_mismatch`] says what it answered).
    Refused { action: Action, reason: Reason },
    /// Act on every selected pod.
    Pods {
        pods: PodSelection,
        action: PodAction,
    },
    /// A DeleteCollection of the ReplicaSets whose labels match: the API server lists them
    /// when the request arrives ([`Action::ListCollection`]), then deletes each with the same
    /// options, one after another in the list's order (by name, the storage's key order),
    /// answering NotFound for none of them (k8s.io/apiserver
    /// `pkg/registry/generic/registry/store.go`, `(*Store).DeleteCollection`: its
    /// `DeleteCollectionWorkers`, kube-apiserver's `--delete-collection-workers`, default
    /// 1). It is not atomic: every other actor may move between two of its deletes.
    DeleteReplicaSets {
        selector: LabelSelector,
        propagation: Option<Propagation>,
    },
    /// Wait until no system move is enabled.
    Settle,
}

impl ScriptStep {
    /// Whether the step is a client's write (see [`Action::is_client_write`]); a pod step
    /// writes once per pod it acts on.
    pub fn writes(&self) -> bool {
        match self {
            ScriptStep::Move(a) | ScriptStep::Refused { action: a, .. } => a.is_client_write(),
            ScriptStep::Pods { .. } | ScriptStep::DeleteReplicaSets { .. } => true,
            ScriptStep::Settle => false,
        }
    }
}

/// Which pods a step acts on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodSelection {
    pub set: PodSet,
    /// Act on only this many of them, any ones (`None`: all).
    pub count: Option<u32>,
    /// `count` is an upper bound: the step may end after acting on fewer pods, none at all
    /// ([`Action::EndPodStep`]). An import writes it where the recording does not say whose
    /// some writes were (a pod deletion no event claims, when the controller's events may
    /// have been dropped): each of them is this step's or the system's, as a model run makes
    /// it. A runner acts on `count` pods.
    #[serde(default, skip_serializing_if = "is_false")]
    pub up_to: bool,
}

/// The pods a selection starts from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodSet {
    /// These pods, by name (the names of bare pods; generated names are unknown in advance).
    Names(Vec<String>),
    /// Every pod.
    All,
    /// The pods the live ReplicaSet of this name controls.
    ControlledBy(String),
    /// The pods whose labels match (`kubectl … -l`).
    Matching(LabelSelector),
}

/// What a step does to each selected pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodAction {
    /// `kubectl delete pod`.
    Delete,
    /// `kubectl label pod … k=v k2-`.
    Label { set: Labels, remove: Vec<String> },
    /// `kubectl annotate pod … controller.kubernetes.io/pod-deletion-cost=N --overwrite`, or
    /// with `None` `…-`.
    Annotate { deletion_cost: Option<i32> },
    /// A merge patch setting `metadata.ownerReferences` to these references (a user's or
    /// another controller's write, as `TestGeneralPodAdoption` makes one; an empty list
    /// removes them all).
    SetOwners { owners: Vec<OwnerByName> },
    /// The scheduler binds the pod to a node.
    Schedule { node: String },
    /// The kubelet reports the pod Running and Ready.
    Ready,
    /// The kubelet reports the pod Running, not Ready.
    Unready,
    /// The kubelet reports the pod Failed.
    Fail,
    /// The kubelet reports the pod's containers restarted, with this `restartCount`.
    Restarted { restarts: u32 },
    /// The kubelet confirms a graceful deletion (the final delete with grace period 0).
    FinishDeletion,
}

impl PodAction {
    /// Whether real nodes do this by themselves, so a run on real kubelets has no such
    /// step: binding, starting, finishing a deletion ([`super::NodeAct`]). Making a pod
    /// unready or failed, or its containers restart, is not: a real kubelet does it only
    /// when the containers do.
    pub fn is_real_kubelets_own(&self) -> bool {
        matches!(
            self,
            PodAction::Schedule { .. } | PodAction::Ready | PodAction::FinishDeletion
        )
    }

    /// The model action on one pod.
    pub fn on(&self, name: &str) -> Action {
        let name = name.to_string();
        match self {
            PodAction::Delete => Action::DeletePod { name },
            PodAction::Label { set, remove } => Action::LabelPod {
                name,
                set: set.clone(),
                remove: remove.clone(),
            },
            PodAction::Annotate { deletion_cost } => Action::AnnotatePod {
                name,
                deletion_cost: *deletion_cost,
            },
            PodAction::SetOwners { owners } => Action::SetPodOwners {
                name,
                owners: owners.clone(),
            },
            PodAction::Schedule { node } => Action::SchedulePod {
                name,
                node: node.clone(),
            },
            PodAction::Ready => Action::PodReady { name },
            PodAction::Unready => Action::PodUnready { name },
            PodAction::Fail => Action::PodFailed { name },
            PodAction::Restarted { restarts } => Action::PodRestarted {
                name,
                restarts: *restarts,
            },
            PodAction::FinishDeletion => Action::FinishPodDeletion { name },
        }
    }
}

impl PodSelection {
    /// The selected pods in `pods` (live), with how many of them to act on.
    pub fn evaluate(&self, replicasets: &View<ReplicaSet>, pods: &View<Pod>) -> Selected {
        let chosen: BTreeSet<String> = pods
            .values()
            .filter(|p| match &self.set {
                PodSet::Names(names) => names.contains(&p.meta.name),
                PodSet::All => true,
                PodSet::ControlledBy(rs) => p.meta.controller_ref().is_some_and(|r| {
                    replicasets
                        .get(rs)
                        .is_some_and(|owner| owner.meta.uid == r.uid)
                }),
                PodSet::Matching(selector) => selector.matches(&p.meta.labels),
            })
            .map(|p| p.meta.name.clone())
            .collect();
        let all = chosen.len() as u32;
        Selected {
            left: self.count.map_or(all, |n| n.min(all)),
            pods: chosen,
        }
    }
}

/// The pods a step still may act on, and how many more it will.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Selected {
    pub pods: BTreeSet<String>,
    pub left: u32,
}

impl Selected {
    fn finished(&self) -> bool {
        self.left == 0 || self.pods.is_empty()
    }
}

/// Where a scripted run is: the step to take next and, inside a pod step, what is left of its
/// selection; and which watch events the script holds from the controller. Always the
/// default in a free model check.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ScriptPos {
    pub step: u16,
    pub selected: Option<Selected>,
    /// Inside a collection delete ([`ScriptStep::DeleteReplicaSets`]): the ReplicaSets its list
    /// found that the API server has still to delete, in the order it deletes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<BTreeSet<String>>,
    #[serde(default)]
    pub held: Held,
    /// The same for the garbage collector's watch.
    #[serde(default, skip_serializing_if = "Held::is_none")]
    pub held_from_gc: Held,
    /// Per type, the head of the log when the script last released held events (0: none
    /// left to drain): until a controller's informer has delivered up to it, its lag on that
    /// type does not hold writes back ([`super::State::writes_allowed`]).
    #[serde(default)]
    pub draining: super::Positions,
    /// The requests the script holds ([`Action::HoldRequests`]), the controller's and the
    /// garbage collector's, in pattern order, one hold per pattern: a sync whose next request
    /// a hold catches has decided and sent it, and it waits at the gate until released; a
    /// work item of the collector whose request a hold catches waits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<RequestHold>,
}

/// A hold of requests (the ReplicaSet controller's or the garbage collector's): what it
/// catches, and how many of those it still lets through before it catches one.
///
/// A hold that must catch the second request of a burst (a sync that creates two pods, the
/// second of which lands late) cannot be placed between the two on a cluster, where they are
/// milliseconds apart: it is placed before the step that causes the burst and lets the
/// first through.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestHold {
    pub pattern: RequestPattern,
    /// Matching requests still let through.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub after: u8,
}

pub(super) fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// A hold that catches every request the pattern matches.
impl From<&RequestPattern> for RequestHold {
    fn from(pattern: &RequestPattern) -> RequestHold {
        RequestHold {
            pattern: pattern.clone(),
            after: 0,
        }
    }
}

impl RequestHold {
    /// Whether the hold catches a request the pattern matches now (it lets none through any
    /// more).
    pub fn catching(&self) -> bool {
        self.after == 0
    }

    /// A request it matches went through: one fewer to let through.
    pub fn let_one_through(&mut self) {
        self.after = self.after.saturating_sub(1);
    }
}

/// What an `await` step waits for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Awaited {
    /// A request the script holds has reached the gate: a sync has sent it, or the garbage
    /// collector has a work item that sends it.
    Held(RequestPattern),
    /// The object of this kind and name is gone from the API server (a ReplicaSet whose
    /// finalizers the garbage collector has removed, a pod whose deletion completed).
    Gone { kind: Kind, name: String },
}

impl std::fmt::Display for Awaited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Awaited::Held(pattern) => write!(
                f,
                "a {pattern} request of the {} is held at the gate",
                pattern.from
            ),
            Awaited::Gone { kind, name } => {
                write!(f, "{}/{name} is gone", kind.resource_name())
            }
        }
    }
}

impl ScriptPos {
    /// What the script holds from `to`.
    pub fn held_from(&self, to: super::Recipient) -> Held {
        match to {
            super::Recipient::ReplicaSetController => self.held,
            super::Recipient::GarbageCollector => self.held_from_gc,
        }
    }

    pub fn held_from_mut(&mut self, to: super::Recipient) -> &mut Held {
        match to {
            super::Recipient::ReplicaSetController => &mut self.held,
            super::Recipient::GarbageCollector => &mut self.held_from_gc,
        }
    }

    /// Hold the requests `pattern` matches, after letting `after` of them through (a
    /// second hold of the same pattern changes nothing, as on the gate).
    pub fn hold_requests(&mut self, pattern: &RequestPattern, after: u8) {
        if let Err(at) = self.requests.binary_search_by(|h| h.pattern.cmp(pattern)) {
            let hold = RequestHold {
                pattern: pattern.clone(),
                after,
            };
            self.requests.insert(at, hold);
        }
    }

    /// Let the requests `pattern` caught go.
    pub fn release_requests(&mut self, pattern: &RequestPattern) {
        self.requests.retain(|h| &h.pattern != pattern);
    }

    /// A request that `matches` went through: each hold that matches it and still lets
    /// requests through counts it.
    pub fn let_through(&mut self, matches: impl Fn(&RequestPattern) -> bool) {
        for h in &mut self.requests {
            if matches(&h.pattern) {
                h.let_one_through();
            }
        }
    }
}

/// The resource types whose watch events a script holds from one recipient
/// ([`Action::HoldEvents`]): its informer of that type delivers nothing until they are
/// released, and may fall behind by any number of events meanwhile.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Held {
    pub replicasets: bool,
    pub pods: bool,
}

impl Held {
    pub fn is_none(&self) -> bool {
        !self.replicasets && !self.pods
    }

    pub fn get(&self, kind: Kind) -> bool {
        match kind {
            Kind::ReplicaSet => self.replicasets,
            Kind::Pod => self.pods,
        }
    }

    pub fn set(&mut self, kind: Kind, held: bool) {
        match kind {
            Kind::ReplicaSet => self.replicasets = held,
            Kind::Pod => self.pods = held,
        }
    }
}

impl ScriptPos {
    /// Move on to the next step.
    pub fn advance(&mut self) {
        self.step += 1;
        self.selected = None;
        self.collection = None;
    }

    /// The API server has listed the ReplicaSets of the current collection delete.
    pub fn list_collection(&mut self, names: BTreeSet<String>) {
        if names.is_empty() {
            self.advance();
        } else {
            self.collection = Some(names);
        }
    }

    /// The ReplicaSet the current collection delete deletes next, once it has listed them.
    pub fn next_in_collection(&self) -> Option<&String> {
        self.collection.as_ref().and_then(|names| names.first())
    }

    /// The current collection delete has deleted `name` (or found it gone).
    pub fn deleted_from_collection(&mut self, name: &str) {
        if let Some(names) = &mut self.collection {
            names.remove(name);
            if names.is_empty() {
                self.advance();
            }
        }
    }

    /// The user has listed the pods of the current step.
    pub fn select(&mut self, selected: Selected) {
        if selected.finished() {
            self.advance();
        } else {
            self.selected = Some(selected);
        }
    }

    /// The current step has acted on `pod`.
    pub fn acted_on(&mut self, pod: &str) {
        if let Some(sel) = &mut self.selected {
            sel.pods.remove(pod);
            sel.left = sel.left.saturating_sub(1);
        }
        self.normalise(|_| true);
    }

    /// Forget selected pods that no longer exist (`exists` says which do); a step with nothing
    /// left to act on is over. Keeps equal situations equal states.
    pub fn normalise(&mut self, exists: impl Fn(&str) -> bool) {
        if let Some(sel) = &mut self.selected {
            sel.pods.retain(|p| exists(p));
            if sel.finished() {
                self.advance();
            }
        }
    }
}

impl Script {
    /// The moves of the steps from `pos` on (a refused one's too): what the scenario will still
    /// do, for the searches that may only reorder moves no step to come interferes with.
    pub fn moves_to_come(&self, pos: &ScriptPos) -> impl Iterator<Item = &Action> {
        self.steps[(pos.step as usize).min(self.steps.len())..]
            .iter()
            .filter_map(|step| match step {
                ScriptStep::Move(a) | ScriptStep::Refused { action: a, .. } => Some(a),
                _ => None,
            })
    }

    /// The script's steps up to and including its `n`-th settle (0-based): the segment a run
    /// between two observation points covers.
    pub fn settle_indices(&self) -> Vec<usize> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s, ScriptStep::Settle))
            .map(|(i, _)| i)
            .collect()
    }

    /// Check that every `Move` is an environment move a script may make, and that every
    /// `Refused` one is a client's write (only a request can be refused).
    pub fn validate(&self) -> Result<(), String> {
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                ScriptStep::Move(a)
                    if !a.is_environment()
                        || a.is_script_bookkeeping()
                        || matches!(a, Action::Settle) =>
                {
                    return Err(format!("step {i}: {a} is not a move a script can make"));
                }
                ScriptStep::Refused { action, .. } if !action.is_client_write() => {
                    return Err(format!(
                        "step {i}: {action} is not a request, so it cannot be refused"
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
