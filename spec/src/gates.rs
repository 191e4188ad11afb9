//! Feature gates: the upstream switches that change what the ReplicaSet controller does, by
//! release, so that the model follows the cluster it judges.
//!
//! A profile ([`crate::profile::Profile`]) says which era's code the model follows (v1.20, or
//! current upstream); within the current era three behaviours are feature gates whose default
//! changed from release to release, and which a cluster may run with turned on or off. The
//! defaults are upstream's table, `pkg/features/kube_features.go` (`defaultVersionedKube
//! FeatureGates`, read at v1.37.2); a gate a release does not have counts as off before it
//! was added (the behaviour did not exist) and as on after it was removed (it went GA and
//! its code path is unconditional: `LogarithmicScaleDown` is no longer in the table at
//! v1.37 and is not a gate here).

use crate::profile::{Profile, Semantics};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// A feature gate the model has a switch for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gate {
    /// KEP-5647: a sync waits until the informers have seen the controller's own last writes
    /// (`pkg/controller/replicaset/replica_set.go`, `NewReplicaSetController` builds its consistency store, `syncReplicaSet` asks it `EnsureReady`).
    /// Beta and on in v1.36; absent before.
    StaleControllerConsistencyReplicaSet,
    /// KEP-3973: `status.terminatingReplicas` counts the pods being deleted
    /// (`replica_set_utils.go`, `calculateStatus`). Alpha (off) in v1.33, beta (on) in v1.35.
    DeploymentReplicaSetTerminatingReplicas,
    /// Scale-down ranks by `controller.kubernetes.io/pod-deletion-cost`
    /// (`pkg/controller/controller_utils.go`, `ActivePodsWithRanks.Less`). Alpha (off) in
    /// v1.21, beta (on) in v1.22.
    PodDeletionCost,
}

impl Gate {
    pub const ALL: [Gate; 3] = [
        Gate::StaleControllerConsistencyReplicaSet,
        Gate::DeploymentReplicaSetTerminatingReplicas,
        Gate::PodDeletionCost,
    ];

    /// The name upstream's `--feature-gates` flag uses.
    pub fn name(self) -> &'static str {
        match self {
            Gate::StaleControllerConsistencyReplicaSet => "StaleControllerConsistencyReplicaSet",
            Gate::DeploymentReplicaSetTerminatingReplicas => {
                "DeploymentReplicaSetTerminatingReplicas"
            }
            Gate::PodDeletionCost => "PodDeletionCost",
        }
    }

    /// `(first minor with the gate, its default then, minor it turned on by default)`.
    fn history(self) -> (u32, Option<u32>) {
        match self {
            Gate::StaleControllerConsistencyReplicaSet => (36, Some(36)),
            Gate::DeploymentReplicaSetTerminatingReplicas => (33, Some(35)),
            Gate::PodDeletionCost => (21, Some(22)),
        }
    }

    /// The object fields this gate brings: a controller with the gate on writes them, one
    /// with it off leaves them out. Named as the API names them. The other gates change what
    /// the controller decides, not which fields it writes.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Gate::DeploymentReplicaSetTerminatingReplicas => &["status.terminatingReplicas"],
            Gate::StaleControllerConsistencyReplicaSet | Gate::PodDeletionCost => &[],
        }
    }

    /// The gate that brings field `path` (`status.terminatingReplicas`), if one does.
    pub fn of_field(path: &str) -> Option<Gate> {
        Gate::ALL.into_iter().find(|g| g.fields().contains(&path))
    }

    /// The gate's history in words: "added in v1.33, on by default from v1.35".
    pub fn since(self) -> String {
        let (added, on_from) = self.history();
        match on_from {
            Some(on) if on == added => format!("added in v1.{added}, on by default"),
            Some(on) => format!("added in v1.{added}, on by default from v1.{on}"),
            None => format!("added in v1.{added}, off by default"),
        }
    }

    /// Whether release `1.minor` has this gate at all (a cluster cannot turn on what its
    /// release does not have).
    pub fn exists_in(self, minor: u32) -> bool {
        minor >= self.history().0
    }

    /// The gate's default in release `1.minor` (off where the release does not have it).
    pub fn default_in(self, minor: u32) -> bool {
        let (added, on_from) = self.history();
        minor >= added && on_from.is_some_and(|m| minor >= m)
    }

    /// Whether `sem` has this gate's behaviour on.
    pub fn is_on(self, sem: &Semantics) -> bool {
        match self {
            Gate::StaleControllerConsistencyReplicaSet => sem.consistency_gate,
            Gate::DeploymentReplicaSetTerminatingReplicas => sem.terminating_replicas,
            Gate::PodDeletionCost => sem.deletion_cost_rank,
        }
    }

    /// `sem` with this gate's behaviour on or off.
    pub fn set(self, mut sem: Semantics, on: bool) -> Semantics {
        match self {
            Gate::StaleControllerConsistencyReplicaSet => sem.consistency_gate = on,
            Gate::DeploymentReplicaSetTerminatingReplicas => sem.terminating_replicas = on,
            Gate::PodDeletionCost => sem.deletion_cost_rank = on,
        }
        sem
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Gate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Gate::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown feature gate {s:?}: the model has a switch for {}",
                    Gate::ALL.map(|g| g.name()).join(", ")
                )
            })
    }
}

/// Gates turned on or off explicitly, as upstream's `--feature-gates A=true,B=false`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates(pub BTreeMap<Gate, bool>);

impl FeatureGates {
    /// The gates of `other` over these.
    pub fn merged(&self, other: &FeatureGates) -> FeatureGates {
        let mut out = self.0.clone();
        out.extend(other.0.iter().map(|(g, v)| (*g, *v)));
        FeatureGates(out)
    }

    /// The `--feature-gates` value that sets them (empty when none is set).
    pub fn flag(&self) -> String {
        self.0
            .iter()
            .map(|(g, v)| format!("{g}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `sem` with each of these gates switched.
    pub fn applied(&self, sem: Semantics) -> Semantics {
        self.0.iter().fold(sem, |s, (g, on)| g.set(s, *on))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// An error when release `1.minor` has no gate of these.
    pub fn check_release(&self, minor: u32) -> Result<(), String> {
        match self.0.keys().find(|g| !g.exists_in(minor)) {
            None => Ok(()),
            Some(g) => Err(format!(
                "feature gate {g} does not exist in Kubernetes v1.{minor} (it was added in v1.{})",
                g.history().0
            )),
        }
    }
}

impl FromStr for FeatureGates {
    type Err = String;
    /// `A=true,B=false` (spaces allowed around items; an empty string sets none).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = BTreeMap::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| format!("{item:?}: expected GATE=true or GATE=false"))?;
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                v => return Err(format!("{item:?}: expected true or false, not {v:?}")),
            };
            out.insert(name.trim().parse::<Gate>()?, on);
        }
        Ok(FeatureGates(out))
    }
}

/// Written as the flag's value, `A=true,B=false`, in files (a cluster's state, an observed
/// trace's `cluster`).
impl Serialize for FeatureGates {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.flag())
    }
}

impl<'de> Deserialize<'de> for FeatureGates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The minor of a Kubernetes release written `v1.37.2`, `1.37` or `v1.32.4-dispatcher`.
pub fn release_minor(version: &str) -> Option<u32> {
    let rest = version
        .strip_prefix('v')
        .unwrap_or(version)
        .strip_prefix("1.")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|m| m.parse().ok())
}

/// The profile a release's controller follows: `k8s-1.20` up to v1.20, `upstream` after.
pub fn profile_of_release(minor: u32) -> Profile {
    if minor <= 20 {
        Profile::K8s120
    } else {
        Profile::Upstream
    }
}

/// What release `1.minor`'s controller does with these gates set and the others at their
/// defaults: its profile's semantics, each gate switched to match.
pub fn semantics_of_release(minor: u32, gates: &FeatureGates) -> Semantics {
    let base = profile_of_release(minor).semantics();
    if base.profile == Profile::K8s120 {
        return base;
    }
    Gate::ALL.into_iter().fold(base, |sem, g| {
        let on = gates.0.get(&g).copied().unwrap_or(g.default_in(minor));
        g.set(sem, on)
    })
}

/// What the controller of the server whose `gitVersion` is `server` does with `gates` set:
/// `None` when the version names no release (a development build), an error when a gate is
/// not in that release.
pub fn semantics_of_server(
    server: &str,
    gates: &FeatureGates,
) -> Option<Result<Semantics, String>> {
    let minor = release_minor(server)?;
    Some(
        gates
            .check_release(minor)
            .map(|()| semantics_of_release(minor, gates)),
    )
}

/// Why a server's behaviour cannot be followed: its version names no release.
pub fn unknown_release(server: &str) -> String {
    format!("cannot tell the release from the server's version {server:?}: give --profile")
}

/// The behaviour to follow on a cluster of release `server` (its `gitVersion`) running with
/// `gates`: with `profile` `auto`, the release's own; with a profile's name, that profile's
/// with the gates switched. What `rsmc conform` judges by and `rsmc controller` runs as.
pub fn semantics_for(
    profile: &str,
    server: &str,
    gates: &FeatureGates,
) -> Result<Semantics, String> {
    let release = semantics_of_server(server, gates)
        .transpose()
        .map_err(|e| format!("--feature-gates: {e}"))?;
    match (profile, release) {
        ("auto", Some(sem)) => Ok(sem),
        ("auto", None) => Err(unknown_release(server)),
        (p, _) => {
            let p: Profile = p.parse().map_err(|e| format!("--profile: {e}"))?;
            Ok(gates.applied(p.semantics()))
        }
    }
}

/// The gates where `sem` differs from its profile's own semantics, as `NAME=on|off`, for
/// reports.
pub fn differences(sem: &Semantics) -> Vec<String> {
    let base = sem.profile.semantics();
    Gate::ALL
        .into_iter()
        .filter(|g| g.is_on(sem) != g.is_on(&base))
        .map(|g| format!("{g}={}", g.is_on(sem)))
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_field_is_named_with_the_gate_that_brings_it() {
        assert_eq!(
            Gate::of_field("status.terminatingReplicas"),
            Some(Gate::DeploymentReplicaSetTerminatingReplicas)
        );
        assert_eq!(Gate::of_field("status.replicas"), None);
        assert_eq!(
            Gate::DeploymentReplicaSetTerminatingReplicas.since(),
            "added in v1.33, on by default from v1.35"
        );
        assert_eq!(
            Gate::StaleControllerConsistencyReplicaSet.since(),
            "added in v1.36, on by default"
        );
    }

    use super::*;

    #[test]
    fn releases_and_their_minors() {
        assert_eq!(release_minor("v1.20.2"), Some(20));
        assert_eq!(release_minor("1.37"), Some(37));
        assert_eq!(release_minor("v1.32.4-dispatcher"), Some(32));
        assert_eq!(release_minor("v0.0.0-master+$Format:%H$"), None);
        assert_eq!(release_minor("latest"), None);
    }

    #[test]
    fn each_release_has_its_defaults() {
        let none = FeatureGates::default();
        assert_eq!(semantics_of_release(20, &none), Profile::K8s120.semantics());
        assert_eq!(
            semantics_of_release(37, &none),
            Profile::Upstream.semantics()
        );
        assert_eq!(
            semantics_of_release(36, &none),
            Profile::Upstream.semantics()
        );
        let v135 = semantics_of_release(35, &none);
        assert!(!v135.consistency_gate && v135.terminating_replicas);
        assert_eq!(
            differences(&v135),
            vec!["StaleControllerConsistencyReplicaSet=false"]
        );
        let v134 = semantics_of_release(34, &none);
        assert!(!v134.consistency_gate && !v134.terminating_replicas && v134.deletion_cost_rank);
    }

    #[test]
    fn gates_set_explicitly_win_over_the_defaults() {
        let gates: FeatureGates =
            "StaleControllerConsistencyReplicaSet=false, PodDeletionCost=false"
                .parse()
                .unwrap();
        let sem = semantics_of_release(37, &gates);
        assert!(!sem.consistency_gate && !sem.deletion_cost_rank && sem.terminating_replicas);
        assert_eq!(
            gates.flag(),
            "StaleControllerConsistencyReplicaSet=false,PodDeletionCost=false"
        );
        assert!(gates.check_release(35).is_err());
        assert!(gates.check_release(36).is_ok());
    }

    #[test]
    fn bad_gates_are_named() {
        let e = "Nonsense=true".parse::<FeatureGates>().unwrap_err();
        assert!(e.contains("unknown feature gate \"Nonsense\""), "{e}");
        let e = "PodDeletionCost".parse::<FeatureGates>().unwrap_err();
        assert!(e.contains("expected GATE=true"), "{e}");
        let e = "PodDeletionCost=yes".parse::<FeatureGates>().unwrap_err();
        assert!(e.contains("not \"yes\""), "{e}");
    }
}
