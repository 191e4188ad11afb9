//! Slow-start batching, re-expressed from kubernetes
//! `pkg/controller/replicaset/replica_set_test.go`: `TestSlowStartBatch`, plus the part of
//! `TestSyncReplicaSetCreateFailures` that concerns how many creates a failing scale-up sends
//! and how the expectations are lowered for the creates that will never be observed.

mod common;

use common::{both_profiles, create_rs, replicaset, run_sync_with};
use rsmc_spec::api::{ApiError, ApiServer, Reason, Request};
use rsmc_spec::controller::slow_start::{batch_sizes, run, INITIAL_BATCH_SIZE};
use rsmc_spec::controller::Expectations;
use rsmc_spec::object::ReplicaFailure;

#[test]
fn batch_sizes_double_and_the_last_is_capped() {
    let cases: &[(u32, u32, &[u32])] = &[
        (0, 1, &[]),
        (1, 1, &[1]),
        (2, 1, &[1, 1]),
        (3, 1, &[1, 2]),
        (7, 1, &[1, 2, 4]),
        (10, 1, &[1, 2, 4, 3]),
        (20, 1, &[1, 2, 4, 8, 5]),
        (10, 3, &[3, 6, 1]),
        (2, 5, &[2]),
        (10, 0, &[]),
    ];
    for (count, initial, want) in cases {
        assert_eq!(
            batch_sizes(*count, *initial),
            want.to_vec(),
            "count {count}, initial {initial}"
        );
        assert_eq!(
            batch_sizes(*count, *initial).iter().sum::<u32>(),
            if *initial == 0 { 0 } else { *count }
        );
    }
    assert_eq!(INITIAL_BATCH_SIZE, 1);
}

/// A call that succeeds for the first `ok` calls and fails from then on.
fn fails_after(ok: u32) -> impl FnMut() -> bool {
    let mut calls = 0;
    move || {
        calls += 1;
        calls <= ok
    }
}

#[test]
fn run_reports_successes_and_stops_after_the_first_failing_batch() {
    // (count, initial, successes before failing forever, expected successes, expected calls)
    let cases: &[(&str, u32, u32, u32, u32, u32)] = &[
        ("every call succeeds", 10, 1, u32::MAX, 10, 10),
        ("the first call fails", 10, 1, 0, 0, 1),
        ("a failure in the third batch", 10, 1, 5, 5, 7),
        ("a failure in the last batch", 10, 1, 9, 9, 10),
        ("the second batch fails entirely", 10, 1, 1, 1, 3),
        ("a larger first batch fails partly", 10, 3, 2, 2, 3),
        ("nothing to do", 0, 1, 0, 0, 0),
        ("a zero initial batch never calls", 10, 0, u32::MAX, 0, 0),
    ];
    for (name, count, initial, ok, successes, calls) in cases {
        let mut counted = 0;
        let mut inner = fails_after(*ok);
        let got = run(*count, *initial, || {
            counted += 1;
            inner()
        });
        assert_eq!(got, (*successes, *calls), "{name}");
        assert_eq!(counted, *calls, "{name}: calls made");
    }
}

#[test]
fn a_failing_scale_up_sends_whole_batches_then_lowers_the_expectations() {
    // 10 missing replicas; the 2nd create is rejected. Batches are 1 then 2: three creates
    // go out, two succeed, the sync stops, and the eight creations that will never be
    // observed are subtracted from the expectation, leaving the two in flight.
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 10));
        let mut exp = Expectations::default();
        let mut creates = 0;
        let at = api.rv;
        let run = run_sync_with(&mut api, "web", at, &sem, &mut exp, |r| {
            if let Request::CreatePod(_) = r {
                creates += 1;
                if creates == 2 {
                    return Some(ApiError {
                        reason: Reason::Forbidden,
                        message: "exceeded quota: pods".into(),
                    });
                }
            }
            None
        });
        assert_eq!(run.creates(), 3, "{sem:?}");
        assert_eq!(api.pods.len(), 2, "{sem:?}");
        assert_eq!(exp.0["web"].add, 2, "{sem:?}");
        assert!(!exp.satisfied("web"));
        assert_eq!(run.error, Some(true), "{sem:?}");
        let status = api.replicasets["web"].status.clone();
        assert_eq!(status.replica_failure, Some(ReplicaFailure::FailedCreate));
        // The status counts the pods the sync started from, not the ones it created.
        assert_eq!(status.replicas, 0);
    }
}

#[test]
fn a_successful_scale_up_sends_every_create_and_expects_them() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 7));
        let mut exp = Expectations::default();
        let run = common::run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.creates(), 7);
        assert_eq!(run.error, Some(false));
        assert_eq!(exp.0["web"].add, 7);
        for pod in api.pods.values() {
            assert_eq!(pod.meta.generate_name.as_deref(), Some("web-"));
            assert!(pod.meta.name.starts_with("web-"));
            let owner = pod
                .meta
                .controller_ref()
                .expect("created with a controller ref");
            assert_eq!((owner.name.as_str(), owner.uid), ("web", rs.meta.uid));
            assert_eq!(pod.meta.labels, rs.spec.template_labels);
        }
    }
}
