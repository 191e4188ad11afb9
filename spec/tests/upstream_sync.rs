//! Whole syncs driven against the API server, re-expressed from kubernetes
//! `pkg/controller/replicaset/replica_set_test.go`:
//! - `TestDoNotAdoptOrCreateIfBeingDeleted`
//! - `TestDoNotAdoptOrCreateIfBeingDeletedRace`
//! - `TestRSSyncExpectations`
//! - `TestSyncReplicaSetDormancy` / `TestSyncReplicaSetDeletes` (scale-down through
//!   expectations; NotFound on delete differs between 1.20 and upstream)
//! - `TestControllerUpdateStatusWithFailure` (one GET and one retry of the status write)
//! - `TestDeleteControllerAndExpectations` (a vanished ReplicaSet drops its expectations)

mod common;

use common::{
    both_profiles, create_pod, create_rs, must, new_pod, replicaset, run_sync, run_sync_with,
    PodExt,
};
use rsmc_spec::api::{ApiError, ApiServer, DeleteOptions, Propagation, Reason, Request};
use rsmc_spec::controller::Expectations;
use rsmc_spec::object::PodPhase;
use rsmc_spec::profile::Profile;

fn orphan_delete() -> DeleteOptions {
    DeleteOptions {
        propagation: Some(Propagation::Orphan),
        ..DeleteOptions::default()
    }
}

#[test]
fn a_replicaset_being_deleted_neither_adopts_nor_creates() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 3));
        create_pod(&mut api, new_pod("orphan"));
        must(
            &mut api,
            Request::DeleteReplicaSet {
                name: "web".into(),
                options: orphan_delete(),
            },
        );
        assert!(api.replicasets["web"].meta.is_deleting());
        let mut exp = Expectations::default();
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.gets, 0, "no adoption is attempted, so no recheck");
        assert_eq!(run.patches(), 0);
        assert_eq!(run.creates(), 0);
        assert!(run.deletes().is_empty());
        assert_eq!(run.error, Some(false));
        assert!(api.pods["orphan"].meta.owner_references.is_empty());
        assert!(exp.0.is_empty(), "no expectations are set");
    }
}

#[test]
fn a_replicaset_deleted_after_the_cache_was_read_fails_adoption_and_creates_nothing() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 3));
        create_pod(&mut api, new_pod("orphan"));
        let cache_at = api.rv;
        must(
            &mut api,
            Request::DeleteReplicaSet {
                name: "web".into(),
                options: orphan_delete(),
            },
        );
        let mut exp = Expectations::default();
        let run = run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.gets, 1, "the live recheck before adopting");
        assert_eq!(run.patches(), 0, "adoption fails before any patch");
        assert_eq!(run.creates(), 0);
        assert_eq!(run.status_writes(), 0);
        assert_eq!(run.error, Some(true), "the sync errors and is retried");
        assert!(api.pods["orphan"].meta.owner_references.is_empty());
    }
}

#[test]
fn a_replicaset_recreated_after_the_cache_was_read_fails_adoption_too() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 1));
        create_pod(&mut api, new_pod("orphan"));
        let cache_at = api.rv;
        must(
            &mut api,
            Request::DeleteReplicaSet {
                name: "web".into(),
                options: DeleteOptions::default(),
            },
        );
        create_rs(&mut api, replicaset("web", 1));
        let mut exp = Expectations::default();
        let run = run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.gets, 1);
        assert_eq!(run.patches(), 0);
        assert_eq!(run.creates(), 0);
        assert_eq!(run.error, Some(true));
    }
}

#[test]
fn unsatisfied_expectations_skip_manage_and_go_to_status() {
    for sem in both_profiles() {
        // Scale-up wanted, but a creation is still expected.
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 2));
        create_pod(&mut api, new_pod("a").controlled_by(&rs));
        let mut exp = Expectations::default();
        exp.expect_creations("web", 1);
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.creates(), 0);
        assert_eq!(run.status_writes(), 1);
        assert_eq!(api.replicasets["web"].status.replicas, 1);
        assert_eq!(run.error, Some(false));

        // Once the record expires, the next sync creates the missing pod.
        exp.expire("web");
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.creates(), 1);

        // Scale-down wanted, but a deletion is still expected.
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 1));
        create_pod(&mut api, new_pod("a").controlled_by(&rs));
        create_pod(&mut api, new_pod("b").controlled_by(&rs));
        let mut exp = Expectations::default();
        exp.expect_deletions("web", &["gone-already".to_string()]);
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert!(run.deletes().is_empty());
        assert!(run.offered.is_empty());
        assert_eq!(api.pods.len(), 2);
    }
}

#[test]
fn expectations_are_read_before_the_pods_are_listed() {
    // The record is satisfied when the sync begins; what the sync then does with it (set a
    // new record) does not stop this sync from managing.
    let sem = Profile::K8s120.semantics();
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 1));
    let mut exp = Expectations::default();
    exp.expect_creations("web", 1);
    exp.creation_observed("web");
    let run = run_sync(&mut api, "web", &sem, &mut exp);
    assert_eq!(run.creates(), 1);
    assert_eq!(exp.0["web"].add, 1);
}

#[test]
fn scale_down_deletes_the_ranked_victims_and_expects_their_deletion() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 1));
        for name in ["a", "b", "c"] {
            create_pod(&mut api, new_pod(name).controlled_by(&rs));
            must(
                &mut api,
                Request::BindPod {
                    name: name.into(),
                    node: "node-1".into(),
                },
            );
            must(
                &mut api,
                Request::SetPodStatus {
                    name: name.into(),
                    phase: PodPhase::Running,
                    ready: true,
                },
            );
            // Timestamps are whole seconds: without a second between them the pods would be
            // created and turn ready at the same time, and every time rule would tie.
            api.tick();
        }
        // "b" loses readiness: it goes first; the second victim is any of the equal others
        // under upstream, the most recently ready ("c") under 1.20.
        must(
            &mut api,
            Request::SetPodStatus {
                name: "b".into(),
                phase: PodPhase::Running,
                ready: false,
            },
        );
        let mut exp = Expectations::default();
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        let expected = match sem.profile {
            Profile::K8s120 => common::sets(&[&["b", "c"]]),
            Profile::Upstream => common::sets(&[&["a", "b"], &["b", "c"]]),
        };
        let mut offered = run.offered.clone();
        offered.sort();
        assert_eq!(offered, expected, "{sem:?}");
        let victims = run.deletes();
        assert_eq!(victims.len(), 2);
        let rec = &exp.0["web"];
        assert_eq!(rec.del, 2);
        assert_eq!(
            rec.deleting.iter().cloned().collect::<Vec<_>>(),
            victims,
            "the deleted pods' keys are tracked"
        );
        for v in &victims {
            // Scheduled pods are deleted gracefully: still there, with a deletionTimestamp.
            assert!(api.pods[v].meta.is_deleting());
        }
        assert_eq!(run.error, Some(false));
    }
}

#[test]
fn a_victim_already_gone_is_an_error_in_1_20_only() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 0));
        create_pod(&mut api, new_pod("a").controlled_by(&rs));
        let mut exp = Expectations::default();
        let at = api.rv;
        let run = run_sync_with(&mut api, "web", at, &sem, &mut exp, |r| match r {
            Request::DeletePod { name, .. } => Some(ApiError::not_found("pods", name)),
            _ => None,
        });
        assert_eq!(run.deletes(), vec!["a".to_string()]);
        // Either way the failed delete is counted as observed.
        assert!(exp.satisfied("web"));
        assert_eq!(exp.0["web"].del, 0);
        let want_error = sem.profile == Profile::K8s120;
        assert_eq!(run.error, Some(want_error), "{sem:?}");
        assert_eq!(sem.delete_not_found_is_error, want_error);
    }
}

#[test]
fn a_failed_delete_sets_failed_delete_and_errors_under_both_profiles() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 0));
        create_pod(&mut api, new_pod("a").controlled_by(&rs));
        let mut exp = Expectations::default();
        let at = api.rv;
        let run = run_sync_with(&mut api, "web", at, &sem, &mut exp, |r| match r {
            Request::DeletePod { .. } => Some(ApiError {
                reason: Reason::Forbidden,
                message: "denied by admission".into(),
            }),
            _ => None,
        });
        assert_eq!(run.error, Some(true));
        assert!(exp.satisfied("web"));
        assert_eq!(
            api.replicasets["web"].status.replica_failure,
            Some(rsmc_spec::object::ReplicaFailure::FailedDelete)
        );
    }
}

#[test]
fn a_conflicting_status_write_is_retried_once_on_a_fresh_copy() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 0));
        let cache_at = api.rv;
        // Someone else writes the ReplicaSet after our cache was read.
        let mut scaled = rsmc_spec::object::ReplicaSet::clone(&api.replicasets["web"]);
        scaled.meta.labels = rsmc_spec::object::labels(&[("team", "a")]);
        must(&mut api, Request::ReplaceReplicaSet(scaled));
        let mut exp = Expectations::default();
        let run = run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.status_writes(), 2);
        assert_eq!(run.gets, 1);
        assert_eq!(run.sent[0].1.as_ref().unwrap_err().reason, Reason::Conflict);
        assert!(run.sent[1].1.is_ok());
        assert_eq!(run.error, Some(false));
        assert_eq!(api.replicasets["web"].status.observed_generation, 1);

        // Two failures in a row: give up with an error after one GET.
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 0));
        let mut exp = Expectations::default();
        let at = api.rv;
        let run = run_sync_with(&mut api, "web", at, &sem, &mut exp, |r| match r {
            Request::UpdateReplicaSetStatus { name, .. } => {
                Some(ApiError::stale_resource_version("replicasets.apps", name))
            }
            _ => None,
        });
        assert_eq!(run.status_writes(), 2);
        assert_eq!(run.gets, 1);
        assert_eq!(run.error, Some(true));
    }
}

#[test]
fn a_replicaset_missing_from_the_cache_drops_its_expectations() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let mut exp = Expectations::default();
        exp.expect_creations("web", 3);
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.error, None, "no sync runs");
        assert!(run.sent.is_empty());
        assert!(!exp.0.contains_key("web"));
    }
}

#[test]
fn an_up_to_date_status_is_not_written_again() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 0));
        let mut exp = Expectations::default();
        let first = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(first.status_writes(), 1);
        let second = run_sync(&mut api, "web", &sem, &mut exp);
        assert!(second.sent.is_empty(), "{:?}", second.sent);
        assert_eq!(second.error, Some(false));
    }
}
