//! The catalogue of historical upstream bugs and still-open races.
//!
//! A fixed bug is a switch in the spec: the minimal change that upstream's fix undid, read in
//! exactly one place of the decision code (never a second copy of the logic). With the switch
//! on, `rsmc check --bug NAME` must find a counterexample of the property the entry names;
//! with it off, the same check must not. An open entry has no switch: the model exhibits it
//! as upstream has it, and the report marks such a violation as a known upstream issue.

use crate::api::Propagation;
use crate::liveness::CONVERGENCE;
use crate::model::properties::{
    ADOPTION_RULES, DELETE_ONLY_CONTROLLED, NO_CREATE_WHILE_DELETING, NO_OVER_CREATION,
    NO_STEALING, ORPHAN_KEEPS_DEPENDENTS, SCALE_DOWN_RANKED, STATUS_CONSISTENT,
};
use crate::model::Action;
use crate::profile::Profile;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A fixed upstream bug the spec can re-introduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bug {
    /// #41675 / #88851: no expectations — every sync acts on whatever its cache shows.
    NoExpectations,
    /// #42639 / PR #42938: adopting without the live recheck of the ReplicaSet.
    NoAdoptionRecheck,
    /// #24934 / PR #27438: managing replicas of a ReplicaSet that is being deleted.
    CreateWhileDeleting,
    /// #69376 / PR #82572: a ReplicaSet's expectations survive its deletion, and a
    /// ReplicaSet recreated under the same name waits on them.
    StaleExpectationsOnRecreate,
    /// #32829: removing a pod's controller reference does not requeue the ReplicaSets that
    /// could adopt it.
    IgnoreControllerRefRemoval,
    /// #22270: a scale-down delete that fails leaves its deletion expected forever.
    KeepExpectationOnFailedDelete,
    /// #2210, #24946: ownership decided by the selector alone — a ReplicaSet takes a matching
    /// pod that another ReplicaSet controls, and two with overlapping selectors fight.
    StealControlledPods,
    /// #3948, #14396: scale-down victims picked without the ranking. The switch picks the
    /// pods the ranking would keep longest, so a running, ready pod dies while a pending one
    /// is kept — the symptom of #3948, made deterministic.
    IgnoreRanking,
    /// The release rule of ControllerRef: a controlled pod whose labels no longer match is
    /// neither counted nor released. The ReplicaSet creates a replacement and keeps
    /// controlling the pod it no longer counts.
    NeverRelease,
}

/// The proposed fix of an open entry: a switch that turns upstream's behaviour into the
/// fixed one. Upstream has not merged it, so no profile has it on; `rsmc check --fix NAME`
/// and `rsmc conform --fix NAME` judge by the fixed model, and the reference controller
/// (`rsmc controller`) runs with every fix on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fix {
    /// PR #138818: scale-down deletes carry the pod's UID and resourceVersion as
    /// preconditions (fixes `delete-without-precondition`).
    DeletePrecondition,
}

impl Fix {
    pub const ALL: [Fix; 1] = [Fix::DeletePrecondition];

    /// The name `--fix` takes.
    pub fn name(self) -> &'static str {
        match self {
            Fix::DeletePrecondition => "delete-precondition",
        }
    }

    /// The open entry this fixes.
    pub fn entry(self) -> &'static Entry {
        CATALOGUE
            .iter()
            .find(|e| e.proposed_fix == Some(self))
            .expect("every fix has a catalogue entry")
    }
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--fix` name that is not a fix; the message lists the fixes.
#[derive(Debug, thiserror::Error)]
#[error("unknown fix {given:?}: the fixes are {}", Fix::ALL.map(|f| f.name()).join(", "))]
pub struct UnknownFix {
    pub given: String,
}

impl FromStr for Fix {
    type Err = UnknownFix;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fix::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFix { given: s.into() })
    }
}

/// Whether upstream has fixed an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Fixed,
    Open,
}

/// One catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// The name `--bug` takes (fixed entries) or the report shows (open ones).
    pub name: &'static str,
    /// Upstream issue and pull-request numbers.
    pub upstream: &'static str,
    pub status: Status,
    /// One line: what went wrong.
    pub summary: &'static str,
    /// The property it breaks.
    pub property: &'static str,
    /// The configuration that exhibits it in seconds: a catalogue configuration
    /// (`spec/presets/catalogue/NAME.json`, loaded by `Config::load`) or a preset.
    pub config: &'static str,
    /// The profile it is exhibited in.
    pub profile: Profile,
    /// Where upstream fixed it (or would): file and function.
    pub fix: &'static str,
    /// The switch that re-introduces it (fixed entries only).
    #[serde(skip)]
    pub switch: Option<Bug>,
    /// The proposed fix that removes it (open entries that have one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_fix: Option<Fix>,
    /// For an open entry, the environment move a counterexample must contain to be this
    /// issue (besides breaking its property).
    #[serde(skip)]
    pub needs: Option<Ingredient>,
}

/// The environment moves an open entry's counterexamples contain: a violation of the entry's
/// property is that entry only if its run has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ingredient {
    /// The 5-minute expiry of a controller's expectations.
    ExpectationsExpiry,
    /// Some ReplicaSet deleted, whatever the propagation.
    Deletion,
    /// A ReplicaSet deleted with propagation Orphan.
    OrphanDeletion,
    /// A pod leaving its controller: an Orphan deletion or a relabelling.
    OrphanOrRelabel,
    /// A ReplicaSet deleted and then created again under the same name.
    Recreate,
}

impl Ingredient {
    fn in_run(self, actions: &[Action]) -> bool {
        let orphan = |a: &Action| {
            matches!(
                a,
                Action::DeleteReplicaSet {
                    propagation: Some(Propagation::Orphan),
                    ..
                }
            )
        };
        match self {
            Ingredient::ExpectationsExpiry => actions
                .iter()
                .any(|a| matches!(a, Action::ExpireExpectations { .. })),
            Ingredient::Deletion => actions
                .iter()
                .any(|a| matches!(a, Action::DeleteReplicaSet { .. })),
            Ingredient::OrphanDeletion => actions.iter().any(orphan),
            Ingredient::OrphanOrRelabel => actions
                .iter()
                .any(|a| orphan(a) || matches!(a, Action::LabelPod { .. })),
            Ingredient::Recreate => actions.iter().enumerate().any(|(i, a)| {
                let Action::DeleteReplicaSet { name, .. } = a else {
                    return false;
                };
                actions[i + 1..].iter().any(|later| {
                    matches!(later, Action::ApplyReplicaSet { replicaset } if &replicaset.meta.name == name)
                })
            }),
        }
    }
}

/// The catalogue, fixed entries first.
pub const CATALOGUE: [Entry; 15] = [
    Entry {
        name: "no-expectations",
        upstream: "#41675, #88851",
        status: Status::Fixed,
        summary: "a sync acts on a pod cache that has not yet seen its own creations, and creates again",
        property: NO_OVER_CREATION,
        config: "catalogue/no-expectations",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go syncReplicaSet (SatisfiedExpectations)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::NoExpectations),
    },
    Entry {
        name: "no-adoption-recheck",
        upstream: "#42639, PR #42938",
        status: Status::Fixed,
        summary: "a sync adopts pods the GC has just orphaned for a ReplicaSet being deleted, from a cache that does not show the deletion; a GC that lags then deletes them",
        property: ADOPTION_RULES,
        config: "catalogue/no-adoption-recheck",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go claimPods (RecheckDeletionTimestamp)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::NoAdoptionRecheck),
    },
    Entry {
        name: "create-while-deleting",
        upstream: "#24934, PR #27438",
        status: Status::Fixed,
        summary: "the controller keeps creating pods for a ReplicaSet that is being deleted, racing the GC",
        property: NO_CREATE_WHILE_DELETING,
        config: "catalogue/create-while-deleting",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go syncReplicaSet (DeletionTimestamp == nil before manageReplicas)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::CreateWhileDeleting),
    },
    Entry {
        name: "stale-expectations-on-recreate",
        upstream: "#69376, PR #82572",
        status: Status::Fixed,
        summary: "a ReplicaSet recreated under the same name waits on its predecessor's expectations and never syncs",
        property: CONVERGENCE,
        config: "catalogue/stale-expectations-on-recreate",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go deleteRS, updateRS (DeleteExpectations)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::StaleExpectationsOnRecreate),
    },
    Entry {
        name: "ignore-controller-ref-removal",
        upstream: "#32829",
        status: Status::Fixed,
        summary: "a pod whose controller reference is removed is not re-adopted until a resync",
        property: CONVERGENCE,
        config: "catalogue/ignore-controller-ref-removal",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go updatePod (requeue matching ReplicaSets when the controllerRef changed)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::IgnoreControllerRefRemoval),
    },
    Entry {
        name: "keep-expectation-on-failed-delete",
        upstream: "#22270",
        status: Status::Fixed,
        summary: "a scale-down delete of a pod that is already gone leaves the deletion expected, and the ReplicaSet waits for it",
        property: CONVERGENCE,
        config: "catalogue/keep-expectation-on-failed-delete",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go manageReplicas (DeletionObserved when a delete fails)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::KeepExpectationOnFailedDelete),
    },
    Entry {
        name: "steal-controlled-pods",
        upstream: "#2210, #24946",
        status: Status::Fixed,
        summary: "before ControllerRef, a ReplicaSet took every pod its selector matched: two overlapping ReplicaSets pass a pod back and forth for ever",
        property: NO_STEALING,
        config: "catalogue/steal-controlled-pods",
        profile: Profile::K8s120,
        fix: "pkg/controller/controller_ref_manager.go ClaimObject (a pod controlled by another UID is ignored)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::StealControlledPods),
    },
    Entry {
        name: "ignore-ranking",
        upstream: "#3948, #14396",
        status: Status::Fixed,
        summary: "a scale-down kills running, ready pods while pending ones survive: victims are not ranked",
        property: SCALE_DOWN_RANKED,
        config: "catalogue/ignore-ranking",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go getPodsToDelete (ActivePodsWithRanks)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::IgnoreRanking),
    },
    Entry {
        name: "never-release",
        upstream: "not filed: the release rule of the ControllerRef design (v1.6)",
        status: Status::Fixed,
        summary: "a pod relabelled out of the selector is not released: the ReplicaSet creates a replacement and controls more pods than it counts",
        property: NO_OVER_CREATION,
        config: "catalogue/never-release",
        profile: Profile::K8s120,
        fix: "pkg/controller/controller_ref_manager.go ClaimObject (release an owned object that no longer matches)",
        needs: None,
        proposed_fix: None,
        switch: Some(Bug::NeverRelease),
    },
    Entry {
        name: "expectations-expiry",
        upstream: "#129795, #130767",
        status: Status::Open,
        summary: "expectations expire after 5 minutes while the informer still lags (at scale, a backlog behind the informer cache's lock), and the next sync creates extra pods (upstream's consistency gate, KEP-5647, closes it)",
        property: NO_OVER_CREATION,
        config: "catalogue/expectations-expiry",
        profile: Profile::K8s120,
        fix: "pkg/controller/controller_utils.go ControllerExpectations (ExpectationsTimeout); client-go tools/cache processDeltas (the store's write lock, #130767)",
        switch: None,
        proposed_fix: None,
        needs: Some(Ingredient::ExpectationsExpiry),
    },
    Entry {
        name: "delete-without-precondition",
        upstream: "PR #138818",
        status: Status::Open,
        summary: "a scale-down deletes a pod that was just orphaned or released: the delete carries no precondition",
        property: DELETE_ONLY_CONTROLLED,
        config: "catalogue/delete-without-precondition",
        profile: Profile::Upstream,
        fix: "pkg/controller/replicaset/replica_set.go manageReplicas (DeletePod without Preconditions)",
        switch: None,
        proposed_fix: Some(Fix::DeletePrecondition),
        needs: Some(Ingredient::OrphanOrRelabel),
    },
    Entry {
        name: "orphan-before-dependent-seen",
        upstream: "#26120",
        status: Status::Open,
        summary: "the GC handles an orphan deletion before its pod informer has delivered a dependent; the dependent keeps its reference and is then collected as garbage",
        property: ORPHAN_KEEPS_DEPENDENTS,
        config: "catalogue/orphan-before-dependent-seen",
        profile: Profile::Upstream,
        fix: "pkg/controller/garbagecollector/garbagecollector.go attemptToOrphanWorker (orphans the dependents its graph knows; watches of different resources are not ordered)",
        switch: None,
        proposed_fix: None,
        needs: Some(Ingredient::OrphanDeletion),
    },
    Entry {
        name: "adopt-after-recheck",
        upstream: "not filed; window left by the #42639 fix, PR #42938",
        status: Status::Open,
        summary: "the user deletes the ReplicaSet between the live recheck and the adoption patch: the pod is adopted by a UID that is gone, and the GC deletes it",
        property: ADOPTION_RULES,
        config: "small",
        profile: Profile::Upstream,
        fix: "pkg/controller/controller_ref_manager.go ClaimObject (AdoptPod has no owner precondition; the API server cannot check one)",
        switch: None,
        proposed_fix: None,
        needs: Some(Ingredient::Deletion),
    },
    Entry {
        name: "expectations-after-delete",
        upstream: "not filed; window left by the #69376 fix, PR #82572",
        status: Status::Open,
        summary: "a sync in flight sets expectations after the delete handler cleared them; the ReplicaSet recreated under the same name waits on them until they expire, and then for the next event",
        property: CONVERGENCE,
        config: "catalogue/expectations-after-delete",
        profile: Profile::K8s120,
        fix: "pkg/controller/replicaset/replica_set.go manageReplicas (ExpectDeletions for a key whose ReplicaSet the deleteRS handler has meanwhile forgotten)",
        switch: None,
        proposed_fix: None,
        needs: Some(Ingredient::Recreate),
    },
    Entry {
        name: "status-onto-recreated",
        upstream: "not filed",
        status: Status::Open,
        summary: "a status retry re-reads the ReplicaSet by name and writes the deleted one's status, observedGeneration included, onto its same-named successor",
        property: STATUS_CONSISTENT,
        config: "catalogue/status-onto-recreated",
        profile: Profile::Upstream,
        fix: "pkg/controller/replicaset/replica_set_utils.go updateReplicaSetStatus (the retry GET has no UID check)",
        switch: None,
        proposed_fix: None,
        needs: Some(Ingredient::Recreate),
    },
];

impl Entry {
    /// How a report marks a violation that is this open entry.
    pub fn known_label(&self) -> String {
        if self.upstream.starts_with('#') || self.upstream.starts_with("PR ") {
            format!("known upstream issue {} ({})", self.upstream, self.name)
        } else {
            format!("known upstream race {} ({})", self.name, self.upstream)
        }
    }
}

impl Bug {
    pub fn entry(self) -> &'static Entry {
        CATALOGUE
            .iter()
            .find(|e| e.switch == Some(self))
            .expect("every switch has a catalogue entry")
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.entry().name)
    }
}

/// A `--bug` name that is not a switch; the message lists the switches, and says so when
/// the name is an open entry (which needs no switch).
#[derive(Debug, thiserror::Error)]
#[error("{}", unknown_message(.given))]
pub struct UnknownBug {
    pub given: String,
}

fn unknown_message(given: &str) -> String {
    let switches: Vec<&str> = CATALOGUE
        .iter()
        .filter(|e| e.switch.is_some())
        .map(|e| e.name)
        .collect();
    match CATALOGUE.iter().find(|e| e.name == given) {
        Some(open) => format!(
            "{given:?} is an open upstream issue ({}), not a switch: the {} profile exhibits it as is (rsmc check --profile {} --config {})",
            open.upstream, open.profile, open.profile, open.config
        ),
        None => format!(
            "unknown bug {given:?}: the switches are {}",
            switches.join(", ")
        ),
    }
}

impl FromStr for Bug {
    type Err = UnknownBug;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CATALOGUE
            .iter()
            .find(|e| e.name == s)
            .and_then(|e| e.switch)
            .ok_or_else(|| UnknownBug { given: s.into() })
    }
}

/// The open entry a counterexample of `property` (the run `actions`) matches, if any: such a
/// violation is a known upstream issue, not a finding. It matches when it breaks the entry's
/// property and contains the entry's ingredient, in either profile. With a bug switched on,
/// a violation of the switch's own property is the switch's doing, never a known issue.
pub fn known_open(
    property: &str,
    actions: &[Action],
    switch: Option<Bug>,
) -> Option<&'static Entry> {
    if switch.is_some_and(|b| b.entry().property == property) {
        return None;
    }
    CATALOGUE.iter().find(|e| {
        e.status == Status::Open
            && e.property == property
            && e.needs.is_none_or(|i| i.in_run(actions))
    })
}

/// The entry a cluster run of a counterexample of `property` (the run `actions`, its model
/// with `switch` on) reproduces: a known open race ([`known_open`]), or the bug switched on
/// when the property is that bug's — the reference controller with the same fault should
/// break it, a release's built-in controller should not.
pub fn reproduced_by(
    property: &str,
    actions: &[Action],
    switch: Option<Bug>,
) -> Option<&'static Entry> {
    known_open(property, actions, switch)
        .or_else(|| switch.map(Bug::entry).filter(|e| e.property == property))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_round_trips_through_its_name() {
        for e in CATALOGUE.iter().filter(|e| e.status == Status::Fixed) {
            let bug = e.switch.expect("a fixed entry has a switch");
            assert_eq!(e.name.parse::<Bug>().unwrap(), bug);
            assert_eq!(bug.to_string(), e.name);
        }
    }

    #[test]
    fn an_open_entry_is_not_a_switch_and_says_why() {
        let err = "expectations-expiry"
            .parse::<Bug>()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("open upstream issue (#129795, #130767)"),
            "{err}"
        );
        let err = "nonsense".parse::<Bug>().unwrap_err().to_string();
        assert!(err.contains("the switches are no-expectations"), "{err}");
    }
}
