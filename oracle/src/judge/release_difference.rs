//! A divergence that breaks no rule: the cluster differs from the judged release only in a
//! field a feature gate brings.
//!
//! A controller written for one release and run against another (a v1.20-style controller
//! on a v1.37 API server) leaves out `status.terminatingReplicas`, which v1.37's controller
//! writes (gate `DeploymentReplicaSetTerminatingReplicas`, on by default from v1.35). That is
//! a difference from the release's behaviour, not a broken property, and a report that
//! named a property for it would send its reader after a bug that is not there. A divergence
//! is such a difference when every field it differs in belongs to one gate, and each is
//! absent where the judged behaviour has the gate on and writes it, or present where the
//! gate is off and leaves it out. A field the gate brings but with a wrong value (a
//! `terminatingReplicas` that miscounts) is no release difference: it stays a plain
//! divergence.

use crate::compare::fields::FieldDiff;
use rsmc_spec::gates::Gate;
use rsmc_spec::profile::Semantics;
use serde::Serialize;
use std::fmt;

/// How what was seen differs from the judged release, in fields a gate brings alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReleaseDifference {
    /// What the judgement followed: the recorded release (`v1.37.2`) or the profile.
    pub release: String,
    /// The gate that brings the fields.
    pub gate: &'static str,
    /// Whether the behaviour judged by has the gate on (and so writes the fields).
    pub gate_on: bool,
    /// The gate's history: "added in v1.33, on by default from v1.35".
    pub since: String,
    pub fields: Vec<FieldDiff>,
}

impl ReleaseDifference {
    /// The release difference `fields` amount to under `sem`, judged as `release`, if they
    /// amount to one.
    pub fn of(fields: &[FieldDiff], sem: &Semantics, release: &str) -> Option<Self> {
        let gate = Gate::of_field(fields.first()?.path())?;
        let on = gate.is_on(sem);
        let only_presence = fields.iter().all(|f| {
            Gate::of_field(f.path()) == Some(gate)
                && match on {
                    true => f.seen == "absent",
                    false => f.allowed == "absent",
                }
        });
        only_presence.then(|| ReleaseDifference {
            release: release.to_string(),
            gate: gate.name(),
            gate_on: on,
            since: gate.since(),
            fields: fields.to_vec(),
        })
    }
}

impl ReleaseDifference {
    /// Its headline: `differs from v1.37.2: status.terminatingReplicas`.
    pub fn headline(&self) -> String {
        let paths: Vec<&str> = self.fields.iter().map(FieldDiff::path).collect();
        format!("differs from {}: {}", self.release, paths.join(", "))
    }
}

impl fmt::Display for ReleaseDifference {
    /// "differs from v1.37.2: status.terminatingReplicas absent, which its controller writes
    /// (0) with gate DeploymentReplicaSetTerminatingReplicas on (added in v1.33, on by default
    /// from v1.35)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|d| match self.gate_on {
                true => format!(
                    "{} absent, which its controller writes ({})",
                    d.field, d.allowed
                ),
                false => format!(
                    "{} written ({}), which its controller leaves out",
                    d.field, d.seen
                ),
            })
            .collect();
        write!(
            f,
            "differs from {}: {} with gate {} {} ({})",
            self.release,
            fields.join("; "),
            self.gate,
            if self.gate_on { "on" } else { "off" },
            self.since
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::gates::{semantics_of_release, FeatureGates};

    fn diff(field: &str, seen: &str, allowed: &str) -> FieldDiff {
        FieldDiff {
            field: field.into(),
            seen: seen.into(),
            allowed: allowed.into(),
        }
    }

    #[test]
    fn a_field_left_out_that_the_release_writes_is_a_release_difference() {
        let v137 = semantics_of_release(37, &FeatureGates::default());
        let left_out = [diff("status.terminatingReplicas", "absent", "0")];
        let d = ReleaseDifference::of(&left_out, &v137, "v1.37.2").expect("a difference");
        assert_eq!(
            d.to_string(),
            "differs from v1.37.2: status.terminatingReplicas absent, which its controller \
             writes (0) with gate DeploymentReplicaSetTerminatingReplicas on (added in v1.33, \
             on by default from v1.35)"
        );
        // Prefixed by its object, as an outcome names it.
        let prefixed = [diff("rs/web status.terminatingReplicas", "absent", "2")];
        assert!(ReleaseDifference::of(&prefixed, &v137, "v1.37.2").is_some());
    }

    #[test]
    fn a_wrong_value_or_another_field_is_no_release_difference() {
        let v137 = semantics_of_release(37, &FeatureGates::default());
        let miscounted = [diff("status.terminatingReplicas", "1", "0")];
        assert_eq!(ReleaseDifference::of(&miscounted, &v137, "v1.37.2"), None);
        let also_replicas = [
            diff("status.terminatingReplicas", "absent", "0"),
            diff("status.replicas", "3", "2"),
        ];
        assert_eq!(
            ReleaseDifference::of(&also_replicas, &v137, "v1.37.2"),
            None
        );
        assert_eq!(ReleaseDifference::of(&[], &v137, "v1.37.2"), None);
        // Written where the judged release leaves it out.
        let v134 = semantics_of_release(34, &FeatureGates::default());
        let written = [diff("status.terminatingReplicas", "0", "absent")];
        let d = ReleaseDifference::of(&written, &v134, "v1.34").expect("a difference");
        assert!(!d.gate_on);
        assert!(
            d.to_string()
                .contains("written (0), which its controller leaves out"),
            "{d}"
        );
        // Left out where the judged release leaves it out too is no difference at all, and
        // never reaches here; absent where the gate is off is not this one.
        assert_eq!(
            ReleaseDifference::of(
                &[diff("status.terminatingReplicas", "absent", "0")],
                &v134,
                "v1.34"
            ),
            None
        );
    }
}
