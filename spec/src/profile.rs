//! Profiles: which Kubernetes version's behaviour the spec follows.
//!
//! The two profiles differ only by switches read in one code path (never two copies of the
//! logic). Each switch names the upstream change it stands for.

use crate::bugs::{Bug, Fix};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A named profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Profile {
    /// Kubernetes v1.20 — the control plane that runs on these machines.
    #[serde(rename = "k8s-1.20")]
    K8s120,
    /// Current upstream (about v1.36).
    #[serde(rename = "upstream")]
    Upstream,
}

impl Profile {
    pub const ALL: [Profile; 2] = [Profile::K8s120, Profile::Upstream];

    pub fn name(self) -> &'static str {
        match self {
            Profile::K8s120 => "k8s-1.20",
            Profile::Upstream => "upstream",
        }
    }

    /// The behaviour switches of this profile.
    pub fn semantics(self) -> Semantics {
        match self {
            Profile::K8s120 => Semantics {
                profile: self,
                consistency_gate: false,
                deletion_cost_rank: false,
                logarithmic_scale_down: false,
                terminating_replicas: false,
                delete_not_found_is_error: true,
                delete_precondition: false,
                bug: None,
            },
            Profile::Upstream => Semantics {
                profile: self,
                consistency_gate: true,
                deletion_cost_rank: true,
                logarithmic_scale_down: true,
                terminating_replicas: true,
                delete_not_found_is_error: false,
                delete_precondition: false,
                bug: None,
            },
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown profile name; the message lists the valid ones.
#[derive(Debug, thiserror::Error)]
#[error("unknown profile {given:?}: valid profiles are {}", Profile::ALL.map(|p| p.name()).join(", "))]
pub struct UnknownProfile {
    pub given: String,
}

impl FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProfile { given: s.into() })
    }
}

/// The behaviour switches the decision functions read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Semantics {
    pub profile: Profile,
    /// [upstream] KEP-5647 / PR #137212: a sync first checks that the informer caches have
    /// caught up with this controller's own last writes for the ReplicaSet, else it fails and
    /// is retried (pkg/controller/replicaset/replica_set.go `syncReplicaSet`).
    pub consistency_gate: bool,
    /// [upstream] ranking by `controller.kubernetes.io/pod-deletion-cost` (alpha in 1.21).
    pub deletion_cost_rank: bool,
    /// [upstream] `LogarithmicScaleDown` (beta since 1.22): ready and creation times compare in
    /// log2 buckets, ties broken by UID. UIDs are random, so the model treats those
    /// comparisons as ties.
    pub logarithmic_scale_down: bool,
    /// [upstream] `status.terminatingReplicas`.
    pub terminating_replicas: bool,
    /// [1.20] `manageReplicas` returns every failed scale-down delete as the sync's error,
    /// NotFound included; upstream swallows NotFound. Both lower the deletion expectation.
    pub delete_not_found_is_error: bool,
    /// [fix delete-precondition] PR #138818 (open): a scale-down delete carries the UID and
    /// resourceVersion of the pod as the sync ranked it, so a pod orphaned, released or
    /// replaced since is not deleted (the delete fails with a Conflict). Off in both profiles,
    /// as upstream has not merged it; the reference controller runs with it
    /// ([`crate::bugs::Fix`]).
    pub delete_precondition: bool,
    /// A catalogued upstream bug re-introduced (`crate::bugs`), or `None`: the fixed code.
    pub bug: Option<Bug>,
}

impl Semantics {
    /// Whether `bug` is switched on.
    pub fn has(&self, bug: Bug) -> bool {
        self.bug == Some(bug)
    }

    /// Whether the proposed fix `fix` is switched on.
    pub fn fixed(&self, fix: Fix) -> bool {
        match fix {
            Fix::DeletePrecondition => self.delete_precondition,
        }
    }

    /// The switches that differ from the profile, as `gate NAME=false`, `bug NAME` and `fix
    /// NAME`, for reports.
    pub fn switches(&self) -> Vec<String> {
        let gates = crate::gates::differences(self)
            .into_iter()
            .map(|g| format!("gate {g}"));
        let bug = self.bug.map(|b| format!("bug {b}"));
        let fixes = Fix::ALL
            .into_iter()
            .filter(|f| self.fixed(*f))
            .map(|f| format!("fix {f}"));
        gates.chain(bug).chain(fixes).collect()
    }

    /// These semantics with the proposed fix `fix` switched on or off.
    pub fn with_fix(mut self, fix: Fix, on: bool) -> Self {
        match fix {
            Fix::DeletePrecondition => self.delete_precondition = on,
        }
        self
    }

    /// These semantics with the catalogue's switches on (`rsmc bugs` lists them): `bug`
    /// re-introduced, each of `fixes` switched on; no bug named keeps the one they have.
    pub fn switched(mut self, bug: Option<Bug>, fixes: &[Fix]) -> Self {
        if let Some(bug) = bug {
            self.bug = Some(bug);
        }
        for fix in fixes {
            self = self.with_fix(*fix, true);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_profile_lists_the_valid_ones() {
        let err = "nonsense".parse::<Profile>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown profile \"nonsense\": valid profiles are k8s-1.20, upstream"
        );
        assert_eq!("upstream".parse::<Profile>().unwrap(), Profile::Upstream);
    }
}
