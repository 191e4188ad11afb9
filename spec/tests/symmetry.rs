//! The pod symmetry of the safety search (`model::symmetry`) merges states, never verdicts:
//! with and without it every safety property and coverage goal comes out the same, for the
//! small preset and every catalogue switch in its own configuration. And its representative
//! is complete: the number of classes does not depend on which member of a class the
//! multi-threaded search happened to reach first.
//!
//! The reduction is a process-wide setting, so these checks live in their own test binary
//! and in one test, which switches it between runs.

use rsmc_spec::bugs::CATALOGUE;
use rsmc_spec::config::Config;
use rsmc_spec::model::{set_reduction, Reduction, RsModel};
use rsmc_spec::profile::Profile;
use stateright::{Checker, Model};

/// Unique states and the names of the properties with a discovery.
fn explore(model: &RsModel, reduction: Reduction, threads: usize) -> (usize, Vec<&'static str>) {
    set_reduction(reduction);
    let checker = model.clone().checker().threads(threads).spawn_bfs().join();
    let found = model
        .properties()
        .iter()
        .filter(|p| checker.discovery(p.name).is_some())
        .map(|p| p.name)
        .collect();
    (checker.unique_state_count(), found)
}

#[test]
fn the_pod_symmetry_changes_counts_not_verdicts() {
    let mut models = vec![
        RsModel::new(Config::load("small").unwrap(), Profile::K8s120),
        RsModel::new(Config::load("small").unwrap(), Profile::Upstream),
    ];
    for entry in CATALOGUE {
        if let Some(bug) = entry.switch {
            let config = Config::load(entry.config).unwrap();
            models.push(RsModel::new(config, entry.profile).with_bug(bug));
        }
    }
    let mut merged_somewhere = false;
    for model in &models {
        let (with, found_with) = explore(model, Reduction::RevisionsAndPods, 2);
        let (without, found_without) = explore(model, Reduction::Revisions, 2);
        let (again, _) = explore(model, Reduction::RevisionsAndPods, 1);
        let what = format!("{:?} {:?}", model.profile, model.sem.bug);
        assert_eq!(found_with, found_without, "{what}");
        assert!(with <= without, "{what}: {with} > {without}");
        assert_eq!(with, again, "{what}: one thread and two disagree");
        merged_somewhere |= with < without;
    }
    assert!(merged_somewhere, "the symmetry merged nothing anywhere");
    set_reduction(Reduction::RevisionsAndPods);
}
