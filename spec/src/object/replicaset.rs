//! The apps/v1 ReplicaSet.

use super::labels::{LabelSelector, Labels};
use super::meta::Meta;
use serde::{Deserialize, Serialize};

/// `apps.ReplicaSetSpec`. The pod template is reduced to its labels: the only part of it the
/// controller, the API rules or a user of `kubectl get` can tell apart.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReplicaSetSpec {
    pub replicas: i32,
    pub selector: LabelSelector,
    pub template_labels: Labels,
    pub min_ready_seconds: i32,
    /// `spec.template.spec.restartPolicy`; the API only accepts `Always`.
    pub restart_policy_always: bool,
}

/// The `ReplicaFailure` condition's reason (pkg/controller/replicaset/replica_set_utils.go
/// `calculateStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ReplicaFailure {
    FailedCreate,
    FailedDelete,
}

/// `apps.ReplicaSetStatus`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReplicaSetStatus {
    pub replicas: i32,
    pub fully_labeled_replicas: i32,
    pub ready_replicas: i32,
    pub available_replicas: i32,
    /// [upstream] `terminatingReplicas`; `None` where the profile has no such field.
    pub terminating_replicas: Option<i32>,
    pub observed_generation: u32,
    pub replica_failure: Option<ReplicaFailure>,
}

/// A ReplicaSet.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReplicaSet {
    pub meta: Meta,
    pub spec: ReplicaSetSpec,
    pub status: ReplicaSetStatus,
}

impl ReplicaSet {
    /// A ReplicaSet as a user submits it, with `matchLabels` selector equal to the template
    /// labels (the common case, as in the seed's `frontend.yaml`).
    pub fn new(
        name: &str,
        replicas: i32,
        selector: LabelSelector,
        template_labels: Labels,
    ) -> Self {
        ReplicaSet {
            meta: Meta::named(name, Labels::new()),
            spec: ReplicaSetSpec {
                replicas,
                selector,
                template_labels,
                min_ready_seconds: 0,
                restart_policy_always: true,
            },
            status: ReplicaSetStatus::default(),
        }
    }
}
