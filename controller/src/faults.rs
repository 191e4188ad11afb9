//! What the reference controller runs: a profile with every proposed fix, or with one fault
//! injected.
//!
//! A fault is a catalogue entry (`rsmc bugs`) put back into the controller: a fixed bug's
//! switch turned on (`no-expectations`, `no-adoption-recheck`, `ignore-ranking`,
//! `never-release`, …) or an open issue's proposed fix turned off
//! (`delete-without-precondition`). It is the same switch the model checks, read in the same
//! decision code, so a faulty build is exactly the catalogued bug; the conformance suite is
//! then expected to catch it and name the property it breaks.

use rsmc_spec::bugs::{Entry, Fix, CATALOGUE};
use rsmc_spec::profile::Semantics;
use std::fmt;
use std::str::FromStr;

/// An injectable fault: a catalogue entry with a switch or a proposed fix.
#[derive(Clone, Copy, Debug)]
pub struct Fault(&'static Entry);

impl Fault {
    /// Every fault there is.
    pub fn all() -> impl Iterator<Item = Fault> {
        CATALOGUE
            .iter()
            .filter(|e| e.switch.is_some() || e.proposed_fix.is_some())
            .map(Fault)
    }

    pub fn entry(&self) -> &'static Entry {
        self.0
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

/// A `--fault` that is no fault; the message lists the faults.
#[derive(Debug, thiserror::Error)]
#[error("unknown fault {given:?}: the faults are {}", Fault::all().map(|f| f.0.name).collect::<Vec<_>>().join(", "))]
pub struct UnknownFault {
    pub given: String,
}

impl FromStr for Fault {
    type Err = UnknownFault;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Fault::all()
            .find(|f| f.0.name == s)
            .ok_or_else(|| UnknownFault { given: s.into() })
    }
}

/// The semantics the controller decides by: `base` (a profile's or a release's) with every proposed fix, and `fault`
/// injected.
pub fn semantics(base: Semantics, fault: Option<Fault>) -> Semantics {
    let mut sem = Fix::ALL
        .into_iter()
        .fold(base, |sem, fix| sem.with_fix(fix, true));
    if let Some(Fault(entry)) = fault {
        if let Some(bug) = entry.switch {
            sem.bug = Some(bug);
        }
        if let Some(fix) = entry.proposed_fix {
            sem = sem.with_fix(fix, false);
        }
    }
    sem
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::bugs::Bug;
    use rsmc_spec::profile::Profile;

    #[test]
    fn the_reference_controller_has_every_fix_and_a_fault_undoes_one() {
        let sem = semantics(Profile::K8s120.semantics(), None);
        assert!(Fix::ALL.into_iter().all(|f| sem.fixed(f)));
        assert_eq!(sem.bug, None);
        let faulty = semantics(
            Profile::K8s120.semantics(),
            Some("delete-without-precondition".parse().unwrap()),
        );
        assert!(!faulty.fixed(Fix::DeletePrecondition));
        let faulty = semantics(
            Profile::K8s120.semantics(),
            Some("no-expectations".parse().unwrap()),
        );
        assert_eq!(faulty.bug, Some(Bug::NoExpectations));
    }

    #[test]
    fn an_open_race_without_a_fix_is_no_fault() {
        let err = "expectations-expiry"
            .parse::<Fault>()
            .unwrap_err()
            .to_string();
        assert!(err.contains("the faults are no-expectations"), "{err}");
        assert!(err.contains("delete-without-precondition"), "{err}");
    }
}
