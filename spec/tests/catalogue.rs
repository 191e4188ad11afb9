//! The bug catalogue, checked entry by entry on its own configuration: a fixed bug's switch
//! makes the model break the entry's property and the model without it does not; an open
//! entry is broken as upstream has it, and `known_open` recognises it.

use rsmc_spec::bugs::{known_open, Entry, Status, CATALOGUE};
use rsmc_spec::config::Config;
use rsmc_spec::liveness::{self, CONVERGENCE};
use rsmc_spec::model::{Action, RsModel};
use stateright::{Checker, Model};

/// The run that breaks `property` in `model`, if any (the liveness search for convergence,
/// the breadth-first checker for a safety property).
fn counterexample(model: &RsModel, property: &'static str) -> Option<Vec<Action>> {
    if property == CONVERGENCE {
        let outcome = liveness::check(
            model,
            &rsmc_spec::budget::Budget::default().with_states(5_000_000),
            &mut |_| {},
        )
        .expect("within the limit");
        return outcome.violation.map(|cx| cx.actions);
    }
    let checker = model.clone().checker().threads(2).spawn_bfs().join();
    assert!(
        model.properties().iter().any(|p| p.name == property),
        "{property:?} is a property of the model"
    );
    checker.discovery(property).map(|path| path.into_actions())
}

fn model(entry: &Entry) -> RsModel {
    let config = Config::load(entry.config).unwrap_or_else(|e| panic!("{}: {e}", entry.name));
    RsModel::new(config, entry.profile)
}

#[test]
fn every_fixed_bug_is_found_with_its_switch_and_only_with_it() {
    for entry in CATALOGUE.iter().filter(|e| e.status == Status::Fixed) {
        let bug = entry.switch.expect("a fixed entry has a switch");
        let with = model(entry).with_bug(bug);
        let found = counterexample(&with, entry.property)
            .unwrap_or_else(|| panic!("{}: no counterexample of {:?}", entry.name, entry.property));
        assert!(
            known_open(entry.property, &found, Some(bug)).is_none(),
            "{}: the switch's own violation is never a known upstream issue",
            entry.name
        );
        assert!(
            counterexample(&model(entry), entry.property).is_none(),
            "{}: {:?} is broken without the switch too",
            entry.name,
            entry.property
        );
    }
}

#[test]
fn every_open_entry_is_exhibited_as_upstream_has_it_and_marked_known() {
    for entry in CATALOGUE.iter().filter(|e| e.status == Status::Open) {
        let found = counterexample(&model(entry), entry.property)
            .unwrap_or_else(|| panic!("{}: no counterexample of {:?}", entry.name, entry.property));
        let known = known_open(entry.property, &found, None)
            .unwrap_or_else(|| panic!("{}: not recognised as known", entry.name));
        assert_eq!(known.property, entry.property, "{}", entry.name);
    }
}

/// #129795 needs an expiry to be the known issue: the same property broken by a run without
/// one is a finding, not a known issue.
#[test]
fn an_over_creation_without_an_expiry_is_not_known() {
    assert!(known_open(rsmc_spec::model::properties::NO_OVER_CREATION, &[], None).is_none());
}

/// The catalogue covers reference §6: at least eight entries, each with an upstream number
/// or a statement that none is filed, a property and a configuration that loads.
#[test]
fn the_catalogue_is_complete() {
    assert!(CATALOGUE.len() >= 8);
    for e in &CATALOGUE {
        assert!(
            !e.upstream.is_empty() && !e.summary.is_empty(),
            "{}",
            e.name
        );
        assert!(Config::load(e.config).is_ok(), "{}", e.name);
        assert_eq!(e.switch.is_some(), e.status == Status::Fixed, "{}", e.name);
    }
}

/// An open entry's proposed fix removes it: with the fix, the entry's own configuration no
/// longer breaks its property.
#[test]
fn every_proposed_fix_removes_its_open_entry() {
    for fix in rsmc_spec::bugs::Fix::ALL {
        let entry = fix.entry();
        assert_eq!(entry.status, Status::Open, "{fix}");
        let fixed = model(entry).with_fix(fix);
        assert!(
            counterexample(&fixed, entry.property).is_none(),
            "{}: {:?} is still broken with {fix}",
            entry.name,
            entry.property
        );
    }
}
