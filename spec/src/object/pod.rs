//! The pod as the ReplicaSet controller and the garbage collector see it.

use super::labels::Labels;
use super::meta::{Meta, Seconds};
use serde::{Deserialize, Serialize};

/// `v1.PodPhase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PodPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl PodPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            PodPhase::Pending => "Pending",
            PodPhase::Running => "Running",
            PodPhase::Succeeded => "Succeeded",
            PodPhase::Failed => "Failed",
            PodPhase::Unknown => "Unknown",
        }
    }
}

/// The annotation that orders scale-down victims in upstream
/// (pkg/apis/core/annotation_key_constants.go `PodDeletionCost`).
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// The value of a `controller.kubernetes.io/pod-deletion-cost` annotation, as upstream reads
/// it (pkg/controller/controller_utils.go `getDeletionCostFromPodAnnotations`, the same rule
/// as pkg/apis/core/helper `GetDeletionCostFromPodAnnotations`, which pod validation applies
/// since v1.21): a 32-bit decimal integer, with no plus sign and no leading zeros ("+10" and
/// "008" are refused; "-007" is -7). The error says what was expected.
pub fn deletion_cost(value: &str) -> Result<i32, String> {
    let canonical = match value.as_bytes() {
        [] | [b'+', ..] => false,
        // Only the first character is checked: "-007" is -7.
        [b'0', _, ..] => false,
        _ => true,
    };
    value
        .parse()
        .ok()
        .filter(|_| canonical)
        .ok_or_else(|| {
            format!(
                "Invalid value: {value:?}: must be a 32bit integer, without a plus sign or leading zeros"
            )
        })
}

/// A pod. Containers are not modelled: the controller never reads them, except restart
/// counts for ranking, which the model keeps as a number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pod {
    pub meta: Meta,
    /// `spec.nodeName`: set by the scheduler; decides graceful deletion and ranking rule 1.
    pub node_name: Option<String>,
    pub phase: PodPhase,
    /// The `lastTransitionTime` of the `Ready` condition when it is true; `None` when not
    /// ready. Ranking rule "ready more recently first" compares it (whole seconds).
    pub ready_since: Option<Seconds>,
    /// Whether the pod has been ready for the owner's `minReadySeconds` (the model's clock-free
    /// stand-in for `podutil.IsPodAvailable`). With `minReadySeconds: 0` it equals readiness.
    pub available: bool,
    /// The highest container restart count (ranking rule "more restarts first" compares the
    /// maximum over containers).
    pub restarts: u32,
    /// The `controller.kubernetes.io/pod-deletion-cost` annotation, parsed ([`deletion_cost`]).
    /// Absent and `"0"` rank alike ([`Pod::ranking_cost`]) but are different objects: adding the
    /// annotation with 0 is a write, an event the controller handles.
    pub deletion_cost: Option<i32>,
    /// Deleting with `metadata.deletionGracePeriodSeconds: 0`: nobody is waited for any more
    /// and the API server removes the pod in its next write ([`crate::model::Action::RemovePod`]).
    pub grace_over: bool,
    /// Whether a kubelet has written the pod's status since it was made. A real kubelet's
    /// first report of a pod it is starting (Pending, its containers waiting) changes nothing
    /// else the model holds, but it is a write: a delete conditioned on the resourceVersion
    /// read before it is refused (`--fix delete-precondition`; seen on kind, where the
    /// reference controller's delete of a pod it had just adopted failed so, twice). The
    /// flag lets that report happen once ([`crate::model::NodeAct::Report`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reported: bool,
    /// This revision is the scheduler's binding, and it landed while a delete of the pod was
    /// between its two reads of it ([`crate::model::NodeAct::BindUnderDelete`]). store.go
    /// `(*Store).Delete` decides the grace period on its first read (`rest.BeforeDelete` →
    /// the pod strategy's `CheckGracefulDelete`, which writes the period into the delete's
    /// options: 0, the pod being unbound), then `updateForGracefulDeletionAndFinalizers`
    /// reads the pod again inside `GuaranteedUpdate` and applies those options to it: the
    /// bound pod is marked with grace period 0 and removed (seen on kind, v1.37). Holds for
    /// this one revision only: the delete in flight is the pod's next write, or it read the
    /// pod after the binding after all (`ApiServer::write` drops it on the next revision).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bound_under_delete: bool,
}

impl Pod {
    /// A new pending pod with the given name and labels, as a user or the controller submits it.
    pub fn new(name: &str, labels: Labels) -> Self {
        Pod {
            meta: Meta::named(name, labels),
            node_name: None,
            phase: PodPhase::Pending,
            ready_since: None,
            available: false,
            restarts: 0,
            deletion_cost: None,
            grace_over: false,
            reported: false,
            bound_under_delete: false,
        }
    }

    /// The deletion cost the ranking compares: the annotation's value, 0 when it is absent.
    pub fn ranking_cost(&self) -> i32 {
        self.deletion_cost.unwrap_or(0)
    }

    pub fn is_ready(&self) -> bool {
        self.ready_since.is_some()
    }

    /// `controller.IsPodActive` (pkg/controller/controller_utils.go): not terminal and not being
    /// deleted.
    pub fn is_active(&self) -> bool {
        !matches!(self.phase, PodPhase::Succeeded | PodPhase::Failed) && !self.meta.is_deleting()
    }

    /// Whether the API server deletes this pod gracefully, i.e. keeps it with a
    /// deletionTimestamp until the kubelet confirms. pkg/registry/core/pod/strategy.go
    /// `CheckGracefulDelete`: an unscheduled pod or a terminal one is deleted at once.
    pub fn deletes_gracefully(&self) -> bool {
        self.node_name.is_some() && !matches!(self.phase, PodPhase::Succeeded | PodPhase::Failed)
    }
}
