//! The model's actions: environment moves (user, kubelet, faults, timers) and system moves.

use crate::api::{Kind, Propagation};
use crate::gc::GcWork;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Whose informer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Watcher {
    Controller(u8),
    GarbageCollector,
}

/// One step of the model.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Action {
    // --- the user (environment) ---
    CreateReplicaSet {
        name: String,
    },
    ScaleReplicaSet {
        name: String,
        replicas: i32,
    },
    DeleteReplicaSet {
        name: String,
        propagation: Propagation,
    },
    CreatePod {
        name: String,
    },
    RelabelPod {
        name: String,
        labels: String,
    },
    DeletePod {
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
    FinishPodDeletion {
        name: String,
    },
    // --- faults and timers (environment) ---
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
    ChooseVictims {
        controller: u8,
        worker: u8,
        victims: Vec<String>,
    },
    Gc {
        work: GcWork,
    },
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
                | Action::ChooseVictims { .. }
                | Action::Gc { .. }
        )
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
            Action::CreateReplicaSet { name } => write!(f, "user: kubectl apply -f {name}.yaml"),
            Action::ScaleReplicaSet { name, replicas } => {
                write!(f, "user: kubectl scale rs/{name} --replicas={replicas}")
            }
            Action::DeleteReplicaSet { name, propagation } => write!(
                f,
                "user: kubectl delete rs/{name} --cascade={}",
                propagation.cascade_flag()
            ),
            Action::CreatePod { name } => {
                write!(f, "user: kubectl apply -f {name}.yaml (bare pod)")
            }
            Action::RelabelPod { name, labels } => {
                write!(f, "user: kubectl label pod/{name} {labels} --overwrite")
            }
            Action::DeletePod { name } => write!(f, "user: kubectl delete pod/{name}"),
            Action::SchedulePod { name, node } => write!(f, "scheduler: bind pod/{name} to {node}"),
            Action::PodReady { name } => write!(f, "kubelet: pod/{name} Running, Ready"),
            Action::PodUnready { name } => write!(f, "kubelet: pod/{name} not Ready"),
            Action::PodFailed { name } => write!(f, "kubelet: pod/{name} Failed"),
            Action::FinishPodDeletion { name } => {
                write!(f, "kubelet: pod/{name} terminated, deletion completes")
            }
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
            Action::ChooseVictims {
                controller,
                worker,
                victims,
            } => write!(
                f,
                "replicaset-controller#{controller} worker {worker}: ranks and picks {}",
                victims.join(", ")
            ),
            Action::Gc { work } => write!(f, "garbage-collector: {work:?}"),
        }
    }
}
