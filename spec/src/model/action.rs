//! The model's actions: environment moves (user, kubelet, faults, timers) and system moves.

use super::owner_by_name::OwnerByName;
use super::script::{is_zero, Awaited};
use crate::api::{Kind, Propagation, RequestPattern};
use crate::gc::GcWork;
use crate::object::{
    render_labels_compact, Labels, OtherKind, Pod, ReplicaSet, Uid, POD_DELETION_COST,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Whose informer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Watcher {
    Controller(u8),
    GarbageCollector,
}

/// Whose watch events a script holds: the ReplicaSet controller's (every instance; the
/// runner's event gate sits in the path of their watches) or the garbage collector's (the
/// local control plane runs it in a kube-controller-manager of its own, behind a gate of its
/// own). The same events reach both; holding them from one leaves the other's informer as
/// it was.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Recipient {
    #[default]
    ReplicaSetController,
    GarbageCollector,
}

impl Recipient {
    /// The recipient whose events reach `watcher`'s informer.
    pub fn of(watcher: Watcher) -> Recipient {
        match watcher {
            Watcher::Controller(_) => Recipient::ReplicaSetController,
            Watcher::GarbageCollector => Recipient::GarbageCollector,
        }
    }

    /// Whether this is the default (for serde's `skip_serializing_if`: traces written before
    /// the garbage collector's gate read the same).
    pub fn is_controller(&self) -> bool {
        *self == Recipient::ReplicaSetController
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipient::ReplicaSetController => f.write_str("replicaset-controller"),
            Recipient::GarbageCollector => f.write_str("garbage-collector"),
        }
    }
}

/// One step of the model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    // --- the user (environment) ---
    /// `kubectl apply -f` of a ReplicaSet manifest: creates it, or, when one of that name
    /// exists, replaces its spec and labels.
    ApplyReplicaSet {
        replicaset: Arc<ReplicaSet>,
    },
    ScaleReplicaSet {
        name: String,
        replicas: i32,
    },
    DeleteReplicaSet {
        name: String,
        /// The policy the delete asks for; `None` sends none and the API server chooses
        /// ([`Propagation::chosen`]).
        propagation: Option<Propagation>,
    },
    /// `kubectl apply -f` of a bare pod's manifest: creates it (when one of that name exists,
    /// only its labels can change, as the API allows).
    ApplyPod {
        pod: Arc<Pod>,
    },
    /// `kubectl label pod/<name> k=v … k- … --overwrite`: set some labels, remove others.
    LabelPod {
        name: String,
        set: Labels,
        remove: Vec<String>,
    },
    /// `kubectl annotate pod/<name> controller.kubernetes.io/pod-deletion-cost=N --overwrite`,
    /// or with `None`, `…-`: the one annotation the model holds (the ranking reads it).
    AnnotatePod {
        name: String,
        deletion_cost: Option<i32>,
    },
    /// A merge patch of the pod's `metadata.ownerReferences`, replacing the list with
    /// references to the named ReplicaSets as they are when the move is made.
    SetPodOwners {
        name: String,
        owners: Vec<OwnerByName>,
    },
    DeletePod {
        name: String,
    },
    /// A client creates an owner of another kind (`kubectl create configmap NAME`): a new UID,
    /// which references made before to an owner of that name do not have.
    CreateOther {
        kind: OtherKind,
        name: String,
    },
    /// A client deletes an owner of another kind (propagation Background).
    DeleteOther {
        kind: OtherKind,
        name: String,
    },
    // --- the scheduler and the kubelet (environment) ---
    SchedulePod {
        name: String,
        node: String,
    },
    PodReady {
        name: String,
    },
    PodUnready {
        name: String,
    },
    PodFailed {
        name: String,
    },
    /// The kubelet reports the pod's containers restarted: `restarts` is the highest
    /// `restartCount` (the ranking's "more restarts first" reads it).
    PodRestarted {
        name: String,
        restarts: u32,
    },
    FinishPodDeletion {
        name: String,
    },
    // --- time, faults and timers (environment) ---
    /// A second passes on the API server's clock (timestamps are whole seconds).
    Tick,
    CrashController {
        controller: u8,
    },
    ExpireExpectations {
        controller: u8,
        key: String,
    },
    Relist {
        watcher: Watcher,
    },
    StartSecondLeader,
    StopFirstLeader,
    // --- a scripted environment (scenarios) ---
    /// The watch events of `kind` stop reaching `to` (the ReplicaSet controller, every
    /// instance, or the garbage collector): its informer falls behind for as long as the
    /// scenario says, as a slow or partitioned watch would leave it. A cluster run forces it
    /// with the runner's event gate in front of that recipient.
    HoldEvents {
        kind: Kind,
        #[serde(default, skip_serializing_if = "Recipient::is_controller")]
        to: Recipient,
    },
    /// The held watch events of `kind` flow to `to` again, in order.
    ReleaseEvents {
        kind: Kind,
        #[serde(default, skip_serializing_if = "Recipient::is_controller")]
        to: Recipient,
    },
    /// The requests that `pattern` catches stop at their sender's gate: a sync that has
    /// decided sends its request, and it lands only on release; a work item of the garbage
    /// collector that would send one waits. A cluster run forces it with the runner's gate
    /// in the path of the sender's requests.
    HoldRequests {
        pattern: RequestPattern,
        /// Matching requests let through first (the first of a burst the run lands on time).
        #[serde(default, skip_serializing_if = "is_zero")]
        after: u8,
    },
    /// The held requests `pattern` caught go on to the API server. With `then_hold_after`,
    /// the same requests are held again at once (letting that many through first): the
    /// released ones are not caught again, but a request their sync sends right after
    /// (a conflict's retry, milliseconds later on a cluster) is — no step between a release
    /// and a new hold could come in time.
    ReleaseRequests {
        pattern: RequestPattern,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        then_hold_after: Option<u8>,
    },
    /// The script waits until another actor has done something ([`Awaited`]).
    Await {
        until: Awaited,
    },
    /// The user lists the pods the current scenario step acts on (`kubectl get pods -l …`);
    /// the step then acts on each of them in any order.
    ListPods,
    /// A collection delete of the current scenario step reaches the API server, which lists
    /// the ReplicaSets it will delete ([`super::ScriptStep::DeleteReplicaSets`]); it then
    /// deletes them one by one, each an [`Action::DeleteReplicaSet`].
    ListCollection,
    /// The user is done with the current step before it has acted on every pod it selected:
    /// a step whose count is an upper bound ([`super::PodSelection::up_to`]), where a
    /// recording does not say how many of the writes it names are the user's.
    EndPodStep,
    /// The scenario waits until no system move is enabled.
    Settle,
    // --- the system ---
    Deliver {
        watcher: Watcher,
        kind: Kind,
    },
    StartSync {
        controller: u8,
        worker: u8,
        key: String,
    },
    SyncStep {
        controller: u8,
        worker: u8,
    },
    CreateRejected {
        controller: u8,
        worker: u8,
    },
    /// The sync's next request, an update or delete of a pod it read unmarked, lands between
    /// the two writes of a grace-0 delete that the model made in one step since: it removes
    /// the pod itself and is answered as done, writing nothing more
    /// ([`crate::api::ApiServer::removed_in_grace_zero_delete_after`]).
    LandsInRemoval {
        controller: u8,
        worker: u8,
    },
    /// A sync's choice: scale-down victims among ranking ties, in the order their parallel
    /// deletes land, or the order of its claim patches.
    Choose {
        controller: u8,
        worker: u8,
        pods: Vec<String>,
    },
    Gc {
        work: GcWork,
    },
    /// [upstream] The API server's second write of a grace-0 pod delete: the pod stored
    /// marked by the first is removed (store.go `(*Store).Delete`). A step of its own where the
    /// model splits such deletes (`RsModel::splits_grace_zero_deletes`), so that other writes
    /// land between the two as on a cluster. Enabled by the marked pod in the API server, not
    /// by anyone's view.
    RemoveMarkedPod {
        name: String,
        uid: Uid,
    },
    /// A real node's scheduler or kubelet acting on a pod by itself. A scenario run on real
    /// kubelets ([`super::Script::real_kubelets`]) does not play them: they bind, start and
    /// stop pods when they will, so their writes are the system's, as the controller's are.
    Node {
        name: String,
        act: NodeAct,
    },
}

/// What a real node does to a pod ([`Action::Node`]), as a v1.37 kubelet was seen to write
/// it (of the status writes of a pod being created, with its containers waiting, the model
/// keeps the first: it changes only the pod's resourceVersion, which a conditioned delete
/// reads).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum NodeAct {
    /// kube-scheduler binds the pod (`BindingREST.Create`).
    Bind { node: String },
    /// kube-scheduler binds the pod while a delete of it, which read it unbound, is still
    /// to write: that delete, if it is the pod's next write, marks the bound pod with grace
    /// period 0 and removes it (`Pod::bound_under_delete`; a client's delete of a pod just
    /// created races its binding so on kind). The same binding as [`NodeAct::Bind`] to
    /// whoever watches.
    BindUnderDelete { node: String },
    /// The kubelet's first report of a bound pod it is starting: still Pending, not Ready
    /// (`kubelet.go` `SyncPod` → `status_manager.go` `SetPodStatus`, before the containers
    /// run). It writes nothing the oracle compares; what it changes is the resourceVersion.
    Report,
    /// The kubelet has started every container: Running and Ready (no readiness probe, so
    /// readiness comes with the first Running status: `prober_manager.go` `UpdatePodStatus`).
    Start,
    /// The kubelet has killed a deleting pod's containers and reports them terminated, not
    /// Ready, while the pod is still Running: the terminal phase comes in a later write, when
    /// its pod worker finishes terminating the pod (seen on v1.37 on kind, 28 s apart:
    /// `status_manager.go` syncs the container statuses as they change, `kubelet_pods.go`
    /// `generateAPIPodStatus` keeps the phase until the pod worker is done).
    Unready,
    /// The kubelet has stopped a deleting pod's containers and reports its phase: not Ready,
    /// Succeeded or Failed by the containers' exit codes (`kubelet_pods.go`
    /// `generateAPIPodStatus`; a deleting pod reaches a terminal phase before its final
    /// delete since v1.27, `status_manager.go` `syncPod`).
    Stop { phase: crate::object::PodPhase },
    /// The kubelet finishes the graceful deletion: a delete of grace period 0.
    Finish,
}

impl Action {
    /// Environment moves draw from the configuration's budgets; system moves do not.
    pub fn is_environment(&self) -> bool {
        !matches!(
            self,
            Action::Deliver { .. }
                | Action::StartSync { .. }
                | Action::SyncStep { .. }
                | Action::CreateRejected { .. }
                | Action::LandsInRemoval { .. }
                | Action::Choose { .. }
                | Action::Gc { .. }
                | Action::RemoveMarkedPod { .. }
                | Action::Node { .. }
        )
    }

    /// Whether a client of the API server (the user's kubectl, the scheduler, the kubelet)
    /// makes this move by a write of its own, which a recording attributes to the scenario
    /// step that made it (`step` of an `rsmc-observed/v1` event). Faults, a second passing
    /// and held or released watch events write nothing.
    pub fn is_client_write(&self) -> bool {
        matches!(
            self,
            Action::ApplyReplicaSet { .. }
                | Action::ScaleReplicaSet { .. }
                | Action::DeleteReplicaSet { .. }
                | Action::ApplyPod { .. }
                | Action::LabelPod { .. }
                | Action::AnnotatePod { .. }
                | Action::SetPodOwners { .. }
                | Action::DeletePod { .. }
                | Action::CreateOther { .. }
                | Action::DeleteOther { .. }
                | Action::SchedulePod { .. }
                | Action::PodReady { .. }
                | Action::PodUnready { .. }
                | Action::PodFailed { .. }
                | Action::PodRestarted { .. }
                | Action::FinishPodDeletion { .. }
        )
    }
}

impl Action {
    /// Whether this is a scripted user's bookkeeping, no step of its own: listing a step's
    /// pods or the objects of its collection delete, or ending a step before its count.
    pub fn is_script_bookkeeping(&self) -> bool {
        matches!(
            self,
            Action::ListPods | Action::ListCollection | Action::EndPodStep
        )
    }

    /// The pod a per-pod environment move acts on.
    pub fn pod_name(&self) -> Option<&str> {
        match self {
            Action::DeletePod { name }
            | Action::LabelPod { name, .. }
            | Action::AnnotatePod { name, .. }
            | Action::SetPodOwners { name, .. }
            | Action::SchedulePod { name, .. }
            | Action::PodReady { name }
            | Action::PodUnready { name }
            | Action::PodFailed { name }
            | Action::PodRestarted { name, .. }
            | Action::FinishPodDeletion { name } => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Watcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Watcher::Controller(i) => write!(f, "replicaset-controller#{i}"),
            Watcher::GarbageCollector => f.write_str("garbage-collector"),
        }
    }
}

impl fmt::Display for Action {
    /// A one-line description, in kubectl terms where the step is a user's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::ApplyReplicaSet { replicaset } => {
                write!(f, "user: kubectl apply -f {}.yaml", replicaset.meta.name)
            }
            Action::ScaleReplicaSet { name, replicas } => {
                write!(f, "user: kubectl scale rs/{name} --replicas={replicas}")
            }
            Action::DeleteReplicaSet { name, propagation } => {
                write!(f, "user: {}", Propagation::delete_command(name, *propagation))
            }
            Action::ApplyPod { pod } => {
                write!(f, "user: kubectl apply -f {}.yaml (bare pod", pod.meta.name)?;
                match &pod.node_name {
                    Some(node) => write!(f, " on {node})"),
                    None => f.write_str(")"),
                }
            }
            Action::LabelPod { name, set, remove } => {
                write!(f, "user: kubectl label pod/{name}")?;
                if !set.is_empty() {
                    write!(f, " {}", render_labels_compact(set))?;
                }
                for key in remove {
                    write!(f, " {key}-")?;
                }
                f.write_str(" --overwrite")
            }
            Action::AnnotatePod {
                name,
                deletion_cost,
            } => match deletion_cost {
                Some(cost) => write!(
                    f,
                    "user: kubectl annotate pod/{name} {POD_DELETION_COST}={cost} --overwrite"
                ),
                None => write!(f, "user: kubectl annotate pod/{name} {POD_DELETION_COST}-"),
            },
            Action::SetPodOwners { name, owners } => {
                write!(f, "user: patch pod/{name} ownerReferences=[")?;
                for (i, o) in owners.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    let kind = o.owner.kind();
                    write!(
                        f,
                        "{sep}{}/{} controller={} blockOwnerDeletion={}",
                        kind.kind(),
                        o.owner.name(),
                        o.controller,
                        o.block_owner_deletion
                    )?;
                }
                f.write_str("]")
            }
            Action::DeletePod { name } => write!(f, "user: kubectl delete pod/{name}"),
            Action::CreateOther { kind, name } => {
                write!(f, "user: create {} {}/{name}", kind.api_version, kind.kind)
            }
            Action::DeleteOther { kind, name } => {
                write!(f, "user: delete {} {}/{name}", kind.api_version, kind.kind)
            }
            Action::SchedulePod { name, node } => write!(f, "scheduler: bind pod/{name} to {node}"),
            Action::PodReady { name } => write!(f, "kubelet: pod/{name} Running, Ready"),
            Action::PodUnready { name } => write!(f, "kubelet: pod/{name} not Ready"),
            Action::PodFailed { name } => write!(f, "kubelet: pod/{name} Failed"),
            Action::PodRestarted { name, restarts } => {
                write!(f, "kubelet: pod/{name} containers restarted, restartCount {restarts}")
            }
            Action::FinishPodDeletion { name } => {
                write!(f, "kubelet: pod/{name} terminated, deletion completes")
            }
            Action::Node { name, act } => match act {
                NodeAct::Bind { node } => write!(f, "scheduler: binds pod/{name} to {node}"),
                NodeAct::BindUnderDelete { node } => write!(
                    f,
                    "scheduler: binds pod/{name} to {node} while a delete of it is in flight"
                ),
                NodeAct::Report => write!(f, "kubelet: pod/{name} reported Pending, starting"),
                NodeAct::Start => write!(f, "kubelet: pod/{name} started, Running, Ready"),
                NodeAct::Unready => {
                    write!(f, "kubelet: pod/{name} containers stopped, not Ready, still Running")
                }
                NodeAct::Stop { phase } => {
                    write!(f, "kubelet: pod/{name} stopped, {phase:?}, not Ready")
                }
                NodeAct::Finish => {
                    write!(f, "kubelet: pod/{name} gone from its node, deletion completes")
                }
            },
            Action::Tick => f.write_str("time: a second passes"),
            Action::CrashController { controller } => {
                write!(
                    f,
                    "fault: replicaset-controller#{controller} crashes and restarts"
                )
            }
            Action::ExpireExpectations { controller, key } => write!(
                f,
                "timer: replicaset-controller#{controller} expectations for {key} expire (5m)"
            ),
            Action::Relist { watcher } => write!(f, "fault: {watcher} watch expires, relists"),
            Action::StartSecondLeader => {
                f.write_str("fault: replicaset-controller#1 starts while #0 still runs")
            }
            Action::StopFirstLeader => f.write_str("fault: replicaset-controller#0 steps down"),
            Action::HoldEvents { kind, to } => {
                write!(f, "fault: {kind:?} watch events are held from the {to}")
            }
            Action::ReleaseEvents { kind, to } => {
                write!(
                    f,
                    "fault: held {kind:?} watch events flow to the {to} again"
                )
            }
            Action::HoldRequests { pattern, after: 0 } => write!(
                f,
                "fault: the {}'s {pattern} requests are held at the gate",
                pattern.from
            ),
            Action::HoldRequests { pattern, after } => write!(
                f,
                "fault: the {}'s {pattern} requests are held at the gate after the next {after}",
                pattern.from
            ),
            Action::ReleaseRequests {
                pattern,
                then_hold_after: None,
            } => write!(
                f,
                "fault: the held {pattern} requests of the {} go on",
                pattern.from
            ),
            Action::ReleaseRequests {
                pattern,
                then_hold_after: Some(after),
            } => write!(
                f,
                "fault: the held {pattern} requests of the {} go on, and the next after {after} are held again",
                pattern.from
            ),
            Action::Await { until } => write!(f, "await: {until}"),
            Action::ListPods => f.write_str("user: lists the pods the next step acts on"),
            Action::EndPodStep => f.write_str("user: acts on no more of the step's pods"),
            Action::ListCollection => f.write_str(
                "API server: lists the ReplicaSets the step's DeleteCollection deletes",
            ),
            Action::Settle => f.write_str("settle: wait until nothing in the cluster moves"),
            Action::Deliver { watcher, kind } => {
                write!(f, "{watcher}: watch delivers a {kind:?} event")
            }
            Action::StartSync {
                controller,
                worker,
                key,
            } => write!(
                f,
                "replicaset-controller#{controller} worker {worker}: sync {key}"
            ),
            Action::SyncStep { controller, worker } => {
                write!(
                    f,
                    "replicaset-controller#{controller} worker {worker}: next request"
                )
            }
            Action::CreateRejected { controller, worker } => write!(
                f,
                "replicaset-controller#{controller} worker {worker}: pod create rejected (quota)"
            ),
            Action::LandsInRemoval { controller, worker } => write!(
                f,
                "replicaset-controller#{controller} worker {worker}: next request, landing in a grace-0 delete"
            ),
            Action::Choose {
                controller,
                worker,
                pods,
            } => write!(
                f,
                "replicaset-controller#{controller} worker {worker}: picks {}",
                pods.join(", ")
            ),
            Action::Gc { work } => write!(f, "garbage-collector: {work}"),
            Action::RemoveMarkedPod { name, .. } => write!(
                f,
                "kube-apiserver: removes pod/{name}, the second write of its grace-0 delete"
            ),
        }
    }
}
