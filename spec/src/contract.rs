//! A contract: the behaviour an implementation under test means to follow, where it differs
//! from the cluster it runs on.
//!
//! A controller written for v1.20's semantics and run against a v1.37 API server leaves out
//! `status.terminatingReplicas`, which v1.37's own controller writes. Judged by the server's
//! release that is a difference on every status write; judged by the contract the author
//! states (`--contract v1.20`) it is what was meant, and only what breaks the contract is
//! reported. A contract is a release (`v1.34`, `1.34`, `v1.34.2`: that release's controller
//! with its feature gates at their defaults) or a profile by name (`k8s-1.20`, `upstream`).

use crate::gates::{release_minor, semantics_of_release, FeatureGates};
use crate::profile::{Profile, Semantics};

/// The oldest release whose controller the model follows (its `k8s-1.20` profile).
pub const OLDEST_MINOR: u32 = 20;
/// The newest release whose feature gates the model knows (the newest the project runs).
pub const NEWEST_MINOR: u32 = 37;

/// The behaviour an implementation is judged by, and how its user named it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contract {
    /// `v1.34` for a release, the profile's name for a profile.
    label: ContractLabel,
    pub sem: Semantics,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ContractLabel {
    Release(u32),
    Profile(Profile),
}

impl Contract {
    /// `v1.34`, `1.34`, `v1.34.2`, `k8s-1.20` or `upstream`; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Contract, String> {
        if let Ok(profile) = text.parse::<Profile>() {
            return Ok(Contract {
                label: ContractLabel::Profile(profile),
                sem: profile.semantics(),
            });
        }
        let expected = format!(
            "expected a release from v1.{OLDEST_MINOR} to v1.{NEWEST_MINOR} (`v1.34`, `1.34`) or a profile ({})",
            Profile::ALL.map(Profile::name).join(", ")
        );
        let minor = release_minor(text).ok_or_else(|| format!("{text:?}: {expected}"))?;
        if !(OLDEST_MINOR..=NEWEST_MINOR).contains(&minor) {
            return Err(format!("{text:?}: {expected}"));
        }
        Ok(Contract {
            label: ContractLabel::Release(minor),
            sem: semantics_of_release(minor, &FeatureGates::default()),
        })
    }

    /// As the user writes it, [`Contract::parse`] reads it back: `v1.34`, or `upstream`.
    pub fn name(&self) -> String {
        match self.label {
            ContractLabel::Release(minor) => format!("v1.{minor}"),
            ContractLabel::Profile(p) => p.name().to_string(),
        }
    }

    /// How reports name it: `v1.34`, or `profile upstream`.
    pub fn label(&self) -> String {
        match self.label {
            ContractLabel::Release(minor) => format!("v1.{minor}"),
            ContractLabel::Profile(p) => format!("profile {}", p.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::Gate;

    #[test]
    fn a_release_contract_is_that_releases_controller_with_its_default_gates() {
        let c = Contract::parse("v1.34").unwrap();
        assert_eq!(c.label(), "v1.34");
        assert!(!Gate::DeploymentReplicaSetTerminatingReplicas.is_on(&c.sem));
        assert!(Gate::PodDeletionCost.is_on(&c.sem));
        assert_eq!(Contract::parse("1.34").unwrap(), c);
        assert_eq!(Contract::parse("v1.34.2").unwrap(), c);
        let v137 = Contract::parse("v1.37").unwrap();
        assert!(Gate::DeploymentReplicaSetTerminatingReplicas.is_on(&v137.sem));
        assert_eq!(
            Contract::parse("v1.20").unwrap().sem.profile,
            Profile::K8s120
        );
    }

    #[test]
    fn a_profile_contract_is_the_profile() {
        let c = Contract::parse("k8s-1.20").unwrap();
        assert_eq!(c.label(), "profile k8s-1.20");
        assert_eq!(Contract::parse(&c.name()).unwrap(), c);
        assert_eq!(c.sem, Profile::K8s120.semantics());
    }

    #[test]
    fn anything_else_is_refused_saying_what_is_accepted() {
        for bad in ["v1.19", "v1.38", "latest", "2.0"] {
            let e = Contract::parse(bad).unwrap_err();
            assert!(
                e.contains("expected a release from v1.20 to v1.37")
                    && e.contains("k8s-1.20, upstream"),
                "{bad}: {e}"
            );
        }
    }
}
