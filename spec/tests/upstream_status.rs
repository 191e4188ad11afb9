//! Status calculation, re-expressed from kubernetes
//! `pkg/controller/replicaset/replica_set_utils_test.go`: `TestCalculateStatus`,
//! `TestCalculateStatusConditions`, and the skip test of `updateReplicaSetStatus` exercised by
//! `pkg/controller/replicaset/replica_set_test.go` `TestControllerUpdateStatusWithFailure` /
//! `TestSyncReplicaSetDormancy`. `terminatingReplicas` follows the upstream-only
//! `TestCalculateStatus` cases for `DeploymentReplicaSetTerminatingReplicas`.

mod common;

use common::{both_profiles, pod, stored_replicaset, PodExt};
use rsmc_spec::controller::status::{calculate, to_write};
use rsmc_spec::object::{labels, Pod, ReplicaFailure, ReplicaSetStatus};
use rsmc_spec::profile::Profile;

struct Counts {
    replicas: i32,
    fully_labeled: i32,
    ready: i32,
    available: i32,
}

#[test]
fn counts_follow_the_claimed_pods() {
    let full = labels(&[("app", "web"), ("tier", "front")]);
    let cases: Vec<(&str, i32, Vec<Pod>, Counts)> = vec![
        (
            "no pods",
            0,
            vec![],
            Counts {
                replicas: 0,
                fully_labeled: 0,
                ready: 0,
                available: 0,
            },
        ),
        (
            "every pod carries the template labels and is ready",
            0,
            vec![
                pod("a", 1)
                    .with_labels(&[("app", "web"), ("tier", "front")])
                    .ready_since(2),
                pod("b", 2)
                    .with_labels(&[("app", "web"), ("tier", "front"), ("extra", "1")])
                    .ready_since(3),
            ],
            Counts {
                replicas: 2,
                fully_labeled: 2,
                ready: 2,
                available: 2,
            },
        ),
        (
            "a pod missing a template label is not fully labeled",
            0,
            vec![
                pod("a", 1).with_labels(&[("app", "web"), ("tier", "front")]),
                pod("b", 2).with_labels(&[("app", "web")]),
                pod("c", 3).with_labels(&[("app", "web"), ("tier", "back")]),
            ],
            Counts {
                replicas: 3,
                fully_labeled: 1,
                ready: 0,
                available: 0,
            },
        ),
        (
            "with minReadySeconds 0 every ready pod is available",
            0,
            vec![pod("a", 1).ready_since(2), pod("b", 2)],
            Counts {
                replicas: 2,
                fully_labeled: 0,
                ready: 1,
                available: 1,
            },
        ),
        (
            "with minReadySeconds > 0 only ready pods that have been ready long enough",
            10,
            vec![
                pod("a", 1).ready_since(2).available(),
                pod("b", 2).ready_since(3),
                pod("c", 3),
            ],
            Counts {
                replicas: 3,
                fully_labeled: 0,
                ready: 2,
                available: 1,
            },
        ),
    ];
    for (name, min_ready, pods, want) in cases {
        let mut rs = stored_replicaset("web", 3, 10);
        rs.spec.template_labels = full.clone();
        rs.spec.min_ready_seconds = min_ready;
        let claimed: Vec<&Pod> = pods.iter().collect();
        for sem in both_profiles() {
            let s = calculate(&rs, &claimed, 0, false, &sem);
            assert_eq!(s.replicas, want.replicas, "{name}");
            assert_eq!(s.fully_labeled_replicas, want.fully_labeled, "{name}");
            assert_eq!(s.ready_replicas, want.ready, "{name}");
            assert_eq!(s.available_replicas, want.available, "{name}");
        }
    }
}

#[test]
fn terminating_replicas_exist_only_upstream() {
    let rs = stored_replicaset("web", 2, 10);
    let pods = [pod("a", 1)];
    let claimed: Vec<&Pod> = pods.iter().collect();
    for (profile, want) in [(Profile::K8s120, None), (Profile::Upstream, Some(3))] {
        let s = calculate(&rs, &claimed, 3, false, &profile.semantics());
        assert_eq!(s.terminating_replicas, want, "{profile}");
    }
    let s = calculate(&rs, &claimed, 0, false, &Profile::Upstream.semantics());
    assert_eq!(
        s.terminating_replicas,
        Some(0),
        "upstream reports zero, not absent"
    );
}

/// One ReplicaFailure case: name, desired replicas, claimed pods, standing condition, manage
/// error, expected condition.
type FailureCase = (
    &'static str,
    i32,
    usize,
    Option<ReplicaFailure>,
    bool,
    Option<ReplicaFailure>,
);

#[test]
fn replica_failure_condition() {
    use ReplicaFailure::{FailedCreate, FailedDelete};
    let cases: [FailureCase; 5] = [
        (
            "too few pods and an error: FailedCreate",
            3,
            1,
            None,
            true,
            Some(FailedCreate),
        ),
        (
            "too many pods and an error: FailedDelete",
            1,
            3,
            None,
            true,
            Some(FailedDelete),
        ),
        (
            "a standing condition is kept while errors continue",
            1,
            3,
            Some(FailedCreate),
            true,
            Some(FailedCreate),
        ),
        (
            "a sync without error removes it",
            3,
            1,
            Some(FailedCreate),
            false,
            None,
        ),
        ("no error, no condition", 3, 1, None, false, None),
    ];
    for (name, desired, n, standing, error, want) in cases {
        let mut rs = stored_replicaset("web", desired, 10);
        rs.status.replica_failure = standing;
        let pods: Vec<Pod> = (0..n)
            .map(|i| pod(&format!("p{i}"), i as u32 + 1))
            .collect();
        let claimed: Vec<&Pod> = pods.iter().collect();
        for sem in both_profiles() {
            let s = calculate(&rs, &claimed, 0, error, &sem);
            assert_eq!(s.replica_failure, want, "{name}");
        }
    }
}

#[test]
fn calculate_keeps_observed_generation_and_to_write_sets_it() {
    let mut rs = stored_replicaset("web", 1, 10);
    rs.meta.generation = 4;
    rs.status.observed_generation = 3;
    let pods = [pod("a", 1)];
    let claimed: Vec<&Pod> = pods.iter().collect();
    let sem = Profile::K8s120.semantics();
    let s = calculate(&rs, &claimed, 0, false, &sem);
    assert_eq!(s.observed_generation, 3, "calculate leaves it alone");
    let written = to_write(&rs, s).expect("a new generation is always written");
    assert_eq!(written.observed_generation, 4);
}

#[test]
fn to_write_skips_only_an_unchanged_status_at_the_observed_generation() {
    let base = ReplicaSetStatus {
        replicas: 2,
        fully_labeled_replicas: 2,
        ready_replicas: 1,
        available_replicas: 1,
        terminating_replicas: None,
        observed_generation: 5,
        replica_failure: None,
    };
    let mut rs = stored_replicaset("web", 2, 10);
    rs.meta.generation = 5;
    rs.status = base.clone();
    type Tweak = fn(&mut ReplicaSetStatus);
    let changes: [(&str, Tweak); 6] = [
        ("replicas", |s| s.replicas = 3),
        ("fully labeled", |s| s.fully_labeled_replicas = 1),
        ("ready", |s| s.ready_replicas = 2),
        ("available", |s| s.available_replicas = 0),
        ("terminating", |s| s.terminating_replicas = Some(1)),
        ("condition", |s| {
            s.replica_failure = Some(ReplicaFailure::FailedCreate)
        }),
    ];
    assert_eq!(to_write(&rs, base.clone()), None, "nothing changed");
    for (name, tweak) in changes {
        let mut new = base.clone();
        tweak(&mut new);
        let written = to_write(&rs, new.clone()).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(written, new, "{name}");
    }
    // Same counts but a generation not yet observed.
    let mut newer = rs.clone();
    newer.meta.generation = 6;
    let written = to_write(&newer, base.clone()).expect("generation changed");
    assert_eq!(written.observed_generation, 6);
}
