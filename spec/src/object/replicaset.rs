//! The apps/v1 ReplicaSet.

use super::labels::{LabelSelector, Labels};
use super::meta::Meta;
use serde::{Deserialize, Serialize};

/// `apps.ReplicaSetSpec`. The pod template is reduced to its labels, the only part of it the
/// controller, the API rules or a user of `kubectl get` can tell apart, and its annotations,
/// which the controller copies into pods without reading them but which are part of the spec
/// the API server compares when it decides whether an update bumps `metadata.generation`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ReplicaSetSpec {
    pub replicas: i32,
    pub selector: LabelSelector,
    pub template_labels: Labels,
    /// `spec.template.metadata.annotations`. No decision of the controller reads them, but a
    /// change to them alone is a spec change: pkg/registry/apps/replicaset/strategy.go
    /// `PrepareForUpdate` bumps the generation when `!apiequality.Semantic.DeepEqual(oldRS.Spec,
    /// newRS.Spec)`, and test/integration/replicaset/replicaset_test.go `TestSpecReplicasChange`
    /// checks that adding a template annotation bumps it and that observedGeneration follows.
    /// An empty map stands for an absent field too: `Semantic.DeepEqual`
    /// (staging/src/k8s.io/apimachinery/third_party/forked/golang/reflect/deep_equal.go
    /// `Equalities.DeepEqual`) equates a nil and an empty map. Left out of JSON when empty, so
    /// `rsmc-trace/v1` traces written before the field existed read the same and still load.
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub template_annotations: Labels,
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
                template_annotations: Labels::new(),
                min_ready_seconds: 0,
                restart_policy_always: true,
            },
            status: ReplicaSetStatus::default(),
        }
    }
}
