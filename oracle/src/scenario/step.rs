//! A scenario step: what it does, where it is written, and how a report shows it.

use crate::manifest::{Manifest, Object};
use crate::yaml::Pos;
use rsmc_spec::api::{Kind, Propagation, Reason, RequestPattern};
use rsmc_spec::model::{
    Action, Awaited, PodAction, PodSelection, PodSet, Recipient, RequestHold, Watcher,
};
use rsmc_spec::object::{render_labels_compact, LabelSelector, POD_DELETION_COST};
use std::fmt;
use std::path::PathBuf;

/// The field of a `release` of requests that holds them again at once.
pub const THEN_HOLD_AFTER: &str = "thenHoldAfter";

/// The key beside a step's kind that says the API server is expected to refuse it.
pub(super) const REFUSED: &str = "refused";

/// One step of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Where the step is written (its line), or `None` for a step built in memory.
    pub position: Option<Pos>,
    pub kind: StepKind,
    /// The reason the API server is expected to refuse the step with (`refused: Invalid`):
    /// the step then writes nothing, and a run whose API server answers otherwise, model or
    /// cluster, does not conform. Only a request can be refused: an apply of one manifest, a
    /// scale, a delete of a ReplicaSet.
    pub refused: Option<Reason>,
}

/// What a step does. Every environment move of the model has a step kind, so a model run's
/// environment can be written as a scenario ([`super::from_actions`]).
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// `kubectl apply -f`: create (or update) each object, in order.
    Apply(Apply),
    /// `kubectl scale rs/NAME --replicas=N`.
    Scale { replicaset: String, replicas: i32 },
    /// `kubectl delete rs/NAME --cascade=…`, or with `cascade: unset` a DELETE that sends no
    /// propagationPolicy (`propagation: None`: the API server chooses, as for client-go's
    /// `Delete` with empty `DeleteOptions`, upstream's `TestReplicaSetsAppsV1DefaultGCPolicy`).
    DeleteReplicaSet {
        replicaset: String,
        propagation: Option<Propagation>,
    },
    /// A DeleteCollection of the ReplicaSets whose labels match the selector
    /// (`DELETE …/replicasets?labelSelector=…`, client-go's `DeleteCollection`; not `kubectl
    /// delete rs -l`, which lists and deletes one by one), with the propagation as for
    /// [`StepKind::DeleteReplicaSet`]. The API server deletes them one after another
    /// ([`rsmc_spec::model::ScriptStep::DeleteReplicaSets`]).
    DeleteReplicaSets {
        selector: LabelSelector,
        propagation: Option<Propagation>,
    },
    /// `kubectl create configmap NAME`: an object pods may name as their owner. It stands
    /// for an owner of any other kind (a StatefulSet, a Job, a custom resource): on a local
    /// control plane no other workload controller runs, and to the two controllers this
    /// concerns an owner is its kind, name and UID (`rsmc_spec::object::other_owner`). The
    /// model's `Action::CreateOther`.
    CreateConfigMap { name: String },
    /// `kubectl delete configmap/NAME` (propagation Background, kubectl's default): the
    /// garbage collector then finds the references to it dangling.
    DeleteConfigMap { name: String },
    /// A user, the scheduler or the kubelet acts on each selected pod.
    Pods {
        selection: PodSelection,
        action: PodAction,
    },
    /// Seconds pass (each one a model `Tick`).
    Wait { seconds: u32 },
    /// A kube-controller-manager's ReplicaSet controller crashes and restarts, losing its
    /// memory (queue, expectations) and relisting.
    RestartController { controller: u8 },
    /// A controller's expectations for a ReplicaSet time out (5 minutes in a real cluster).
    ExpireExpectations { controller: u8, replicaset: String },
    /// A watch expires and the informer relists.
    Relist { watcher: Watcher },
    /// A second controller instance starts while the first still runs (a leader handover).
    StartSecondLeader,
    /// The first controller instance stops.
    StopFirstLeader,
    /// Watch events of one resource type stop reaching the ReplicaSet controller (or the
    /// garbage collector): its informer falls behind until `release` (the runner's event
    /// gate in front of it holds them).
    Hold { kind: Kind, to: Recipient },
    /// The held watch events flow again, in order.
    Release { kind: Kind, to: Recipient },
    /// The ReplicaSet controller's requests the pattern catches stop at the runner's gate:
    /// the sync has decided and sent them; they land on `release`.
    HoldRequests(RequestHold),
    /// The held requests go on to the API server; with `then_hold_after`, the same
    /// requests are held again at once, after letting that many through (the released ones
    /// are not caught again).
    ReleaseRequests {
        pattern: RequestPattern,
        then_hold_after: Option<u8>,
    },
    /// Wait until a held request has reached the gate, or an object is gone.
    Await(Awaited),
    /// Wait until nothing in the cluster moves; where observations are compared.
    Settle,
}

/// The resource type as the scenario format names it (`replicasets`, `pods`).
pub fn resource_name(kind: Kind) -> &'static str {
    kind.resource_name()
}

/// An apply step's manifests.
#[derive(Clone, Debug, PartialEq)]
pub struct Apply {
    pub source: ApplySource,
    /// Every pod of the step is bound to this node at creation, as a scheduler would do at once
    /// (the raw manifests carry it as `spec.nodeName`).
    pub node_name: Option<String>,
    /// The manifests, in the file's order, each with its model object.
    pub manifests: Vec<Manifest>,
}

/// Where an apply step's manifests are written.
#[derive(Clone, Debug, PartialEq)]
pub enum ApplySource {
    /// A file, as written in the scenario: relative to the scenario file's directory.
    File(PathBuf),
    /// In the scenario file itself.
    Inline,
}

impl Step {
    /// A step built in memory.
    pub fn new(kind: StepKind) -> Step {
        Step {
            position: None,
            kind,
            refused: None,
        }
    }

    /// An inline apply of model objects, written as [`crate::manifest::to_manifest`] writes
    /// them.
    pub fn apply_objects(objects: Vec<Object>) -> Step {
        Step::new(StepKind::Apply(Apply {
            source: ApplySource::Inline,
            node_name: None,
            manifests: objects.into_iter().map(Manifest::of).collect(),
        }))
    }

    /// The same step, expected to be refused with `reason`.
    pub fn refused(self, reason: Reason) -> Step {
        Step {
            refused: Some(reason),
            ..self
        }
    }

    /// The step as one line, in kubectl terms where a user takes it, with the refusal it
    /// expects.
    pub fn command(&self) -> String {
        match self.refused {
            Some(reason) => format!("{} (expected to be refused: {reason})", self.kind),
            None => self.kind.to_string(),
        }
    }

    /// Whether a step of this kind can be expected to be refused: it is one request (an apply
    /// of one manifest, a scale, a delete of a ReplicaSet). A pod step acts on a selection
    /// whose pods may vanish before their request, and several requests have several answers.
    pub fn refusable(&self) -> bool {
        match &self.kind {
            StepKind::Apply(apply) => apply.manifests.len() == 1,
            StepKind::Scale { .. } | StepKind::DeleteReplicaSet { .. } => true,
            _ => false,
        }
    }
}

impl StepKind {
    /// The model's action a fault step is, one for one (its text is that action's); `None`
    /// for any other step.
    pub fn fault(&self) -> Option<Action> {
        Some(match self {
            StepKind::RestartController { controller } => Action::CrashController {
                controller: *controller,
            },
            StepKind::ExpireExpectations {
                controller,
                replicaset,
            } => Action::ExpireExpectations {
                controller: *controller,
                key: replicaset.clone(),
            },
            StepKind::Relist { watcher } => Action::Relist { watcher: *watcher },
            StepKind::HoldRequests(h) => Action::HoldRequests {
                pattern: h.pattern.clone(),
                after: h.after,
            },
            StepKind::ReleaseRequests {
                pattern,
                then_hold_after,
            } => Action::ReleaseRequests {
                pattern: pattern.clone(),
                then_hold_after: *then_hold_after,
            },
            StepKind::StartSecondLeader => Action::StartSecondLeader,
            StepKind::StopFirstLeader => Action::StopFirstLeader,
            _ => return None,
        })
    }

    /// Whether the step is a fault the environment suffers (a controller's restart or
    /// handover, its informer held back or relisting, its expectations expiring) rather than a
    /// request to the API server: no recording of the API server shows it, so an import learns
    /// of it only from a mark the one who forced it left ([`crate::import::entry::FAULT_MARK_PREFIX`]).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            StepKind::RestartController { .. }
                | StepKind::ExpireExpectations { .. }
                | StepKind::Relist { .. }
                | StepKind::StartSecondLeader
                | StepKind::StopFirstLeader
                | StepKind::Hold { .. }
                | StepKind::Release { .. }
                | StepKind::HoldRequests(_)
                | StepKind::ReleaseRequests { .. }
        )
    }

    /// The step-kind keyword the scenario format uses for it.
    pub fn keyword(&self) -> &'static str {
        match self {
            StepKind::Apply(_) => "apply",
            StepKind::Scale { .. } => "scale",
            StepKind::DeleteReplicaSet { .. } => "delete",
            StepKind::DeleteReplicaSets { .. } => "deleteCollection",
            StepKind::CreateConfigMap { .. } => "create",
            StepKind::DeleteConfigMap { .. } => "delete",
            StepKind::Pods { action, .. } => match action {
                PodAction::Delete => "delete",
                PodAction::Label { set, .. } if set.is_empty() => "unlabel",
                PodAction::Label { .. } => "label",
                PodAction::Annotate { .. } => "annotate",
                PodAction::SetOwners { .. } => "setOwnerReferences",
                PodAction::Schedule { .. } => "schedule",
                PodAction::Ready => "ready",
                PodAction::Unready => "unready",
                PodAction::Fail => "fail",
                PodAction::Restarted { .. } => "restartContainers",
                PodAction::FinishDeletion => "finishDeletion",
            },
            StepKind::Wait { .. } => "wait",
            StepKind::RestartController { .. } => "restartController",
            StepKind::ExpireExpectations { .. } => "expireExpectations",
            StepKind::Relist { .. } => "relist",
            StepKind::StartSecondLeader => "startSecondLeader",
            StepKind::StopFirstLeader => "stopFirstLeader",
            StepKind::Hold { .. } | StepKind::HoldRequests(_) => "hold",
            StepKind::Release { .. } | StepKind::ReleaseRequests { .. } => "release",
            StepKind::Await(_) => "await",
            StepKind::Settle => "settle",
        }
    }
}

/// The pods a selection names, as kubectl arguments (`pod/pod1`, `pods -l tier=frontend`) or,
/// for the scheduler and the kubelet, in words.
fn target(selection: &PodSelection, kubectl: bool) -> String {
    let set = match &selection.set {
        PodSet::Names(names) => names
            .iter()
            .map(|n| format!("pod/{n}"))
            .collect::<Vec<_>>()
            .join(" "),
        PodSet::All if kubectl => "pods --all".into(),
        PodSet::All => "all pods".into(),
        PodSet::ControlledBy(rs) => format!("pods of {rs}"),
        PodSet::Matching(selector) => {
            let s = selector.to_string();
            if s.contains([' ', '(', '!']) {
                format!("pods -l '{s}'")
            } else {
                format!("pods -l {s}")
            }
        }
    };
    match selection.count {
        Some(n) if selection.up_to => format!("{set} (up to {n})"),
        Some(n) => format!("{set} (any {n})"),
        None => set,
    }
}

impl fmt::Display for StepKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepKind::Apply(apply) => {
                f.write_str("kubectl apply")?;
                match &apply.source {
                    ApplySource::File(path) => write!(f, " -f {}", path.display())?,
                    ApplySource::Inline => {
                        for m in &apply.manifests {
                            write!(f, " -f {}.yaml", m.object.name())?;
                        }
                    }
                }
                match &apply.node_name {
                    Some(node) => write!(f, " (pods bound to {node})"),
                    None => Ok(()),
                }
            }
            StepKind::Scale {
                replicaset,
                replicas,
            } => write!(f, "kubectl scale rs/{replicaset} --replicas={replicas}"),
            StepKind::DeleteReplicaSet {
                replicaset,
                propagation,
            } => f.write_str(&Propagation::delete_command(replicaset, *propagation)),
            StepKind::DeleteReplicaSets {
                selector,
                propagation,
            } => {
                write!(
                    f,
                    "DELETE replicasets?labelSelector={selector} (DeleteCollection"
                )?;
                match propagation {
                    Some(p) => write!(f, ", propagationPolicy={p:?})"),
                    None => f.write_str(" without a propagationPolicy: the API server chooses)"),
                }
            }
            StepKind::CreateConfigMap { name } => write!(f, "kubectl create configmap {name}"),
            StepKind::DeleteConfigMap { name } => write!(f, "kubectl delete configmap/{name}"),
            StepKind::Pods { selection, action } => {
                let kubectl = target(selection, true);
                let words = target(selection, false);
                match action {
                    PodAction::Delete => write!(f, "kubectl delete {kubectl}"),
                    PodAction::Label { set, remove } => {
                        write!(f, "kubectl label {kubectl}")?;
                        if !set.is_empty() {
                            write!(f, " {}", render_labels_compact(set))?;
                        }
                        for key in remove {
                            write!(f, " {key}-")?;
                        }
                        f.write_str(" --overwrite")
                    }
                    PodAction::Annotate {
                        deletion_cost: Some(cost),
                    } => write!(
                        f,
                        "kubectl annotate {kubectl} {POD_DELETION_COST}={cost} --overwrite"
                    ),
                    PodAction::Annotate {
                        deletion_cost: None,
                    } => write!(f, "kubectl annotate {kubectl} {POD_DELETION_COST}-"),
                    PodAction::SetOwners { owners } => {
                        write!(f, "patch {kubectl} ownerReferences=[")?;
                        for (i, o) in owners.iter().enumerate() {
                            let sep = if i == 0 { "" } else { ", " };
                            let flags = match (o.controller, o.block_owner_deletion) {
                                (true, true) => " (controller, blockOwnerDeletion)",
                                (true, false) => " (controller)",
                                (false, true) => " (blockOwnerDeletion)",
                                (false, false) => "",
                            };
                            write!(f, "{sep}{}{flags}", o.owner)?;
                        }
                        f.write_str("]")
                    }
                    PodAction::Schedule { node } => write!(f, "scheduler: bind {words} to {node}"),
                    PodAction::Ready => write!(f, "kubelet: {words} Ready"),
                    PodAction::Unready => write!(f, "kubelet: {words} not Ready"),
                    PodAction::Fail => write!(f, "kubelet: {words} Failed"),
                    PodAction::Restarted { restarts } => {
                        write!(
                            f,
                            "kubelet: {words} containers restarted, restartCount {restarts}"
                        )
                    }
                    PodAction::FinishDeletion => {
                        write!(f, "kubelet: {words} terminated, deletion completes")
                    }
                }
            }
            StepKind::Wait { seconds } => write!(f, "wait {seconds}s"),
            fault @ (StepKind::RestartController { .. }
            | StepKind::ExpireExpectations { .. }
            | StepKind::Relist { .. }
            | StepKind::HoldRequests(_)
            | StepKind::ReleaseRequests { .. }
            | StepKind::StartSecondLeader
            | StepKind::StopFirstLeader) => {
                fmt::Display::fmt(&fault.fault().expect("a fault step is one action"), f)
            }
            StepKind::Hold { kind, to } => write!(
                f,
                "fault: {} watch events are held from the {to}",
                resource_name(*kind)
            ),
            StepKind::Release { kind, to } => write!(
                f,
                "fault: held {} watch events reach the {to} again",
                resource_name(*kind)
            ),
            StepKind::Await(until) => write!(f, "await: {until}"),
            StepKind::Settle => f.write_str("settle"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::object::{labels, LabelSelector};

    fn pods(set: PodSet, count: Option<u32>, action: PodAction) -> String {
        StepKind::Pods {
            selection: PodSelection {
                set,
                count,
                up_to: false,
            },
            action,
        }
        .to_string()
    }

    #[test]
    fn kubectl_style_lines() {
        assert_eq!(
            StepKind::Scale {
                replicaset: "frontend".into(),
                replicas: 5
            }
            .to_string(),
            "kubectl scale rs/frontend --replicas=5"
        );
        assert_eq!(
            StepKind::DeleteReplicaSet {
                replicaset: "frontend".into(),
                propagation: Some(Propagation::Orphan)
            }
            .to_string(),
            "kubectl delete rs/frontend --cascade=orphan"
        );
        assert_eq!(
            StepKind::DeleteReplicaSet {
                replicaset: "frontend".into(),
                propagation: None
            }
            .to_string(),
            "DELETE rs/frontend without a propagationPolicy (the API server chooses)"
        );
        assert_eq!(
            StepKind::DeleteReplicaSets {
                selector: LabelSelector::match_labels(&[("e2e", "abc")]),
                propagation: None
            }
            .to_string(),
            "DELETE replicasets?labelSelector=e2e=abc (DeleteCollection without a propagationPolicy: the API server chooses)"
        );
        assert_eq!(
            StepKind::DeleteReplicaSets {
                selector: LabelSelector::match_labels(&[("e2e", "abc")]),
                propagation: Some(Propagation::Orphan)
            }
            .to_string(),
            "DELETE replicasets?labelSelector=e2e=abc (DeleteCollection, propagationPolicy=Orphan)"
        );
        assert_eq!(
            StepKind::CreateConfigMap {
                name: "owner".into()
            }
            .to_string(),
            "kubectl create configmap owner"
        );
        assert_eq!(
            StepKind::DeleteConfigMap {
                name: "owner".into()
            }
            .to_string(),
            "kubectl delete configmap/owner"
        );
        assert_eq!(
            pods(
                PodSet::ControlledBy("frontend".into()),
                Some(1),
                PodAction::Label {
                    set: labels(&[("tier", "debug")]),
                    remove: vec![]
                }
            ),
            "kubectl label pods of frontend (any 1) tier=debug --overwrite"
        );
        assert_eq!(
            pods(
                PodSet::Matching(LabelSelector::match_labels(&[("tier", "frontend")])),
                None,
                PodAction::Delete
            ),
            "kubectl delete pods -l tier=frontend"
        );
        assert_eq!(
            pods(
                PodSet::Names(vec!["pod1".into()]),
                None,
                PodAction::Label {
                    set: Default::default(),
                    remove: vec!["tier".into()]
                }
            ),
            "kubectl label pod/pod1 tier- --overwrite"
        );
        assert_eq!(
            pods(
                PodSet::ControlledBy("frontend".into()),
                None,
                PodAction::Ready
            ),
            "kubelet: pods of frontend Ready"
        );
        assert_eq!(
            pods(PodSet::All, None, PodAction::FinishDeletion),
            "kubelet: all pods terminated, deletion completes"
        );
        assert_eq!(
            StepKind::Apply(Apply {
                source: ApplySource::File("manifests/frontend.yaml".into()),
                node_name: None,
                manifests: vec![]
            })
            .to_string(),
            "kubectl apply -f manifests/frontend.yaml"
        );
    }
}
