//! Held watch events and requests in the model: while a scenario holds a type, the
//! controller's informer delivers none of it and falls behind by as many events as happen;
//! while it holds a request, the sync that sent it waits and everyone else goes on. What
//! only expectations, the live recheck or a delete precondition stop then becomes a run the
//! model must refuse (with the fix) or take (as upstream has it) —
//! `conformance/scenarios/forced/`.

use rsmc_oracle::explore::default_budget;
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::replay::{replay, Replay};
use rsmc_spec::bugs::{Bug, Fix};
use rsmc_spec::model::properties::NO_OVER_CREATION;
use rsmc_spec::profile::Profile;
use std::path::Path;

fn forced(name: &str) -> Prepared {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/scenarios/forced")
        .join(format!("{name}.yaml"));
    Prepared::load(&path, Profile::K8s120).unwrap_or_else(|e| panic!("{e}"))
}

fn replayed(p: &Prepared) -> Replay {
    replay(&p.subject(), &default_budget()).expect("small enough")
}

/// How many pods frontend's settled states show at settle point `point` (1-based), per state.
fn pods_at(r: &Replay, point: usize) -> Vec<usize> {
    r.points[point - 1]
        .outcomes
        .iter()
        .map(|o| o.lines().filter(|l| l.starts_with("frontend-")).count())
        .collect()
}

#[test]
fn with_pod_events_held_the_status_shows_none_of_the_created_pods() {
    let r = replayed(&forced("unseen-creations"));
    // Three pods exist, and frontend's status, written from a cache without them, says 0.
    assert_eq!(pods_at(&r, 1), vec![3]);
    assert!(
        r.points[0].outcomes[0].contains("frontend   3         0         0"),
        "{}",
        r.points[0].outcomes[0]
    );
    assert!(r.points[1].outcomes[0].contains("frontend   3         3         0"));
}

#[test]
fn held_events_let_a_fault_do_what_prompt_informers_hide() {
    // Without expectations the sync after the controller's own status write creates again.
    let mut p = forced("unseen-creations");
    p.model = p.model.with_bug(Bug::NoExpectations).past_violations();
    let r = replayed(&p);
    assert!(
        pods_at(&r, 1).iter().any(|n| *n > 3),
        "{:?}",
        pods_at(&r, 1)
    );
}

#[test]
fn a_replaced_pod_is_deleted_as_upstream_does_and_kept_with_the_fix() {
    let pod1_survives = |p: &Prepared| -> Vec<bool> {
        let r = replayed(p);
        r.points[1]
            .outcomes
            .iter()
            .map(|o| o.lines().any(|l| l.starts_with("pod1 ")))
            .collect()
    };
    // Upstream: the stale scale-down deletes the user's new pod1 (a violation the model
    // reaches only past it), or the release came first and pod1 survives.
    let mut upstream = forced("pod-replaced-under-a-stale-cache");
    upstream.model = upstream.model.past_violations();
    let mut outcomes = pod1_survives(&upstream);
    outcomes.sort();
    assert_eq!(outcomes, vec![false, true]);
    // With PR #138818's fix the delete fails on its preconditions: pod1 always survives.
    let mut fixed = forced("pod-replaced-under-a-stale-cache");
    fixed.model = fixed
        .model
        .with_fix(Fix::DeletePrecondition)
        .past_violations();
    assert_eq!(pod1_survives(&fixed), vec![true]);
}

#[test]
fn a_held_adoption_lands_after_its_owner_is_gone_and_the_pod_is_collected() {
    // Every run the holds allow breaks the adoption rules: none settles short of it.
    let r = replayed(&forced("adoption-by-a-gone-owner"));
    assert!(
        r.points[1].outcomes.is_empty(),
        "{:?}",
        r.points[1].outcomes
    );
    // Past the violation, the garbage collector deletes pod1, the user's pod, in every run.
    let mut p = forced("adoption-by-a-gone-owner");
    p.model = p.model.past_violations();
    let r = replayed(&p);
    assert_eq!(r.points[1].outcomes.len(), 1);
    assert!(
        !r.points[1].outcomes[0].contains("pod1"),
        "{}",
        r.points[1].outcomes[0]
    );
    // Without the holds, the adoption may as well land first, and pod1 then lives on.
    let mut free = forced("adoption-by-a-gone-owner").without_holds();
    free.model = free.model.past_violations();
    let outcomes = replayed(&free).points[1].outcomes.clone();
    assert!(outcomes.iter().any(|o| o.contains("pod1")), "{outcomes:?}");
}

/// A scenario of `conformance/timed/` (they wait out real time on a cluster, so the suite
/// leaves them out).
fn timed(name: &str, profile: Profile) -> Prepared {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/timed")
        .join(format!("{name}.yaml"));
    Prepared::load(&path, profile).unwrap_or_else(|e| panic!("{e}"))
}

/// #129795: expectations that expire while the pod events are still held let the next sync
/// trust a cache without the controller's own creations. Without the consistency gate
/// (v1.20, and v1.35's defaults) every run creates too many; with it (the upstream profile,
/// v1.37's defaults) the sync waits for the cache and the run ends with the two replicas.
#[test]
fn expired_expectations_over_create_unless_the_consistency_gate_waits() {
    let old = replayed(&timed("expectations-expiry", Profile::K8s120));
    assert_eq!(old.points[0].broken, vec![NO_OVER_CREATION.to_string()]);
    let gated = replayed(&timed("expectations-expiry", Profile::Upstream));
    assert!(gated.points.iter().all(|p| p.broken.is_empty()));
    assert_eq!(pods_at(&gated, 2), vec![2]);
}
