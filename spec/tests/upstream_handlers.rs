//! Informer event handlers and controller expectations, re-expressed from kubernetes
//! `pkg/controller/replicaset/replica_set_test.go`:
//! - `TestExpectationsOnRecreate` (a ReplicaSet deleted and recreated under the same name)
//! - `TestDeleteFinalStateUnknown` (a pod delete delivered as a tombstone)
//! - `TestPodControllerLookup`, `TestUpdatePods`, `TestDeletionTimestamp` (which handler
//!   enqueues what, and deletion observed once per pod — #22143)
//!
//! and from `pkg/controller/controller_utils_test.go`:
//! - `TestControllerExpectations`, `TestUIDExpectations` (counters, tracked deletion keys,
//!   expiry).

mod common;

use common::{
    both_profiles, create_rs, must, pod, replicaset, run_sync, stored_replicaset, PodExt,
};
use rsmc_spec::api::{ApiServer, DeleteOptions, Request, View};
use rsmc_spec::controller::{Expectations, Handlers, WorkQueue};
use rsmc_spec::object::{LabelSelector, ReplicaSet};
use rsmc_spec::profile::{Profile, Semantics};

/// The handlers as upstream has them (no catalogued bug switched on; both profiles agree).
static FIXED: std::sync::LazyLock<Semantics> =
    std::sync::LazyLock::new(|| Profile::K8s120.semantics());

fn cache(rss: &[&ReplicaSet]) -> View<ReplicaSet> {
    rss.iter()
        .map(|rs| (rs.meta.name.clone(), std::sync::Arc::new((*rs).clone())))
        .collect()
}

fn queued(q: &WorkQueue) -> Vec<String> {
    q.queued.iter().cloned().collect()
}

// ---- ReplicaSet events ----

#[test]
fn recreate_under_the_same_name_drops_the_old_expectations() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 2));
        let old = ReplicaSet::clone(&api.replicasets["web"]);
        let mut exp = Expectations::default();
        // The first sync creates two pods; their add events have not arrived.
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.creates(), 2);
        assert!(!exp.satisfied("web"));

        // Deleted and recreated; the informer only sees the update from one UID to another.
        must(
            &mut api,
            Request::DeleteReplicaSet {
                name: "web".into(),
                options: DeleteOptions::default(),
            },
        );
        let new = create_rs(&mut api, replicaset("web", 2));
        assert_ne!(new.meta.uid, old.meta.uid);
        let mut queue = WorkQueue::default();
        let view = cache(&[&new]);
        Handlers {
            queue: &mut queue,
            expectations: &mut exp,
            replicasets: &view,
            sem: &FIXED,
        }
        .replicaset(Some(&old), Some(&new));
        assert!(exp.satisfied("web"), "old expectations are gone");
        assert!(!exp.0.contains_key("web"));
        assert_eq!(queued(&queue), vec!["web".to_string()]);

        // The new ReplicaSet syncs: it ignores the old one's pods and creates its own.
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.creates(), 2, "{sem:?}");
        assert_eq!(run.patches(), 0);
    }
}

#[test]
fn a_replicaset_delete_event_drops_expectations_and_enqueues() {
    let rs = stored_replicaset("web", 2, 10);
    let mut exp = Expectations::default();
    exp.expect_creations("web", 2);
    let mut queue = WorkQueue::default();
    let view = View::new();
    Handlers {
        queue: &mut queue,
        expectations: &mut exp,
        replicasets: &view,
        sem: &FIXED,
    }
    .replicaset(Some(&rs), None);
    assert!(!exp.0.contains_key("web"));
    assert_eq!(queued(&queue), vec!["web".to_string()]);
}

#[test]
fn add_and_same_uid_update_only_enqueue() {
    let rs = stored_replicaset("web", 2, 10);
    let mut scaled = rs.clone();
    scaled.spec.replicas = 5;
    scaled.meta.resource_version = 11;
    for (before, after) in [(None, Some(&rs)), (Some(&rs), Some(&scaled))] {
        let mut exp = Expectations::default();
        exp.expect_creations("web", 2);
        let mut queue = WorkQueue::default();
        let view = cache(&[after.unwrap()]);
        Handlers {
            queue: &mut queue,
            expectations: &mut exp,
            replicasets: &view,
            sem: &FIXED,
        }
        .replicaset(before, after);
        assert_eq!(exp.0["web"].add, 2, "expectations untouched");
        assert_eq!(queued(&queue), vec!["web".to_string()]);
    }
}

// ---- pod events ----

#[test]
fn a_tombstone_for_a_deleted_pod_still_counts_the_deletion() {
    let rs = stored_replicaset("web", 1, 10);
    // The tombstone carries the last version the informer had: no deletionTimestamp.
    let stale = pod("p", 20).controlled_by(&rs);
    let mut exp = Expectations::default();
    exp.expect_deletions("web", &["p".to_string()]);
    assert!(!exp.satisfied("web"));
    let mut queue = WorkQueue::default();
    let view = cache(&[&rs]);
    Handlers {
        queue: &mut queue,
        expectations: &mut exp,
        replicasets: &view,
        sem: &FIXED,
    }
    .pod(Some(&stale), None);
    assert!(exp.satisfied("web"));
    assert_eq!(exp.0["web"].del, 0);
    assert_eq!(queued(&queue), vec!["web".to_string()]);
}

#[test]
fn a_graceful_deletion_is_observed_once() {
    // Update (deletionTimestamp set) then delete: two events, one observed deletion.
    let rs = stored_replicaset("web", 1, 10);
    let p = pod("p", 20).controlled_by(&rs);
    let terminating = p.clone().deleting(30).rv(30);
    let mut exp = Expectations::default();
    exp.expect_deletions("web", &["p".to_string(), "q".to_string()]);
    let view = cache(&[&rs]);
    let mut queue = WorkQueue::default();
    let mut h = Handlers {
        queue: &mut queue,
        expectations: &mut exp,
        replicasets: &view,
        sem: &FIXED,
    };
    h.pod(Some(&p), Some(&terminating));
    h.pod(Some(&terminating), None);
    assert_eq!(exp.0["web"].del, 1, "q is still expected");
    assert!(!exp.satisfied("web"));
}

#[test]
fn pod_events_route_to_the_owning_replicaset() {
    let web = stored_replicaset("web", 1, 10);
    let mut web2 = stored_replicaset("web2", 1, 11);
    web2.spec.selector = LabelSelector::match_labels(&[("tier", "x")]);
    let mut broad = stored_replicaset("broad", 1, 12);
    broad.spec.selector = LabelSelector::match_labels(&[("app", "web")]);
    let mut empty = stored_replicaset("empty", 1, 13);
    empty.spec.selector = LabelSelector::default();
    let view = cache(&[&web, &web2, &broad, &empty]);

    struct Case {
        name: &'static str,
        before: Option<rsmc_spec::object::Pod>,
        after: Option<rsmc_spec::object::Pod>,
        queued: &'static [&'static str],
        add_after: i32,
        del_after: i32,
    }
    let owned = pod("p", 20).controlled_by(&web);
    let cases = vec![
        Case {
            name: "add of an owned pod: creation observed, owner enqueued",
            before: None,
            after: Some(owned.clone()),
            queued: &["web"],
            add_after: 0,
            del_after: 1,
        },
        Case {
            name: "add of a pod already being deleted: a deletion, not a creation",
            before: None,
            after: Some(owned.clone().deleting(25)),
            queued: &["web"],
            add_after: 1,
            del_after: 0,
        },
        Case {
            name: "add of a pod whose owner UID is stale: nothing",
            before: None,
            after: Some(pod("p", 20).owned_by_uid("web", 3)),
            queued: &[],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "add of an orphan: every matching ReplicaSet with a non-empty selector",
            before: None,
            after: Some(pod("p", 20)),
            queued: &["broad", "web"],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "resync (same resourceVersion): nothing",
            before: Some(owned.clone()),
            after: Some(owned.clone()),
            queued: &[],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "update of an owned pod: owner enqueued, no expectation change",
            before: Some(owned.clone()),
            after: Some(owned.clone().ready_since(21).rv(21)),
            queued: &["web"],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "controller ref changed: both old and new owners enqueued",
            before: Some(owned.clone()),
            after: Some({
                let mut p = pod("p", 20).controlled_by(&web2).rv(21);
                p.meta.labels = rsmc_spec::object::labels(&[("tier", "x")]);
                p
            }),
            queued: &["web", "web2"],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "released orphan: old owner and matching ReplicaSets enqueued",
            before: Some(owned.clone()),
            after: Some(pod("p", 20).rv(21)),
            queued: &["broad", "web"],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "orphan update without label change: nothing",
            before: Some(pod("p", 20)),
            after: Some(pod("p", 20).ready_since(21).rv(21)),
            queued: &[],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "orphan label change: the ReplicaSets matching the new labels",
            before: Some(pod("p", 20).with_labels(&[("x", "y")])),
            after: Some(pod("p", 20).rv(21)),
            queued: &["broad", "web"],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "update to terminating: a deletion observed",
            before: Some(owned.clone()),
            after: Some(owned.clone().deleting(21).rv(21)),
            queued: &["web"],
            add_after: 1,
            del_after: 0,
        },
        Case {
            name: "delete of an orphan: ignored",
            before: Some(pod("p", 20)),
            after: None,
            queued: &[],
            add_after: 1,
            del_after: 1,
        },
        Case {
            name: "delete of an owned pod: a deletion observed",
            before: Some(owned.clone()),
            after: None,
            queued: &["web"],
            add_after: 1,
            del_after: 0,
        },
    ];
    for case in cases {
        let mut exp = Expectations::default();
        // A record with one creation and the deletion of "p" outstanding.
        exp.expect_deletions("web", &["p".to_string()]);
        exp.0.get_mut("web").unwrap().add = 1;
        let mut queue = WorkQueue::default();
        Handlers {
            queue: &mut queue,
            expectations: &mut exp,
            replicasets: &view,
            sem: &FIXED,
        }
        .pod(case.before.as_ref(), case.after.as_ref());
        let want: Vec<String> = case.queued.iter().map(|s| s.to_string()).collect();
        assert_eq!(queued(&queue), want, "{}", case.name);
        assert_eq!(exp.0["web"].add, case.add_after, "{}", case.name);
        assert_eq!(exp.0["web"].del, case.del_after, "{}", case.name);
    }
}

// ---- expectations ----

#[test]
fn expectation_counters_go_negative_and_still_count_as_fulfilled() {
    let mut exp = Expectations::default();
    assert!(exp.satisfied("web"), "no record: satisfied");
    exp.expect_creations("web", 2);
    assert!(!exp.satisfied("web"));
    exp.creation_observed("web");
    assert!(!exp.satisfied("web"));
    exp.creation_observed("web");
    assert!(exp.satisfied("web"));
    exp.creation_observed("web");
    assert_eq!(exp.0["web"].add, -1);
    assert!(exp.satisfied("web"));
    // Lowering a missing record does nothing.
    exp.creation_observed("other");
    exp.deletion_observed("other", "p");
    assert!(!exp.0.contains_key("other"));
}

#[test]
fn setting_expectations_replaces_the_record() {
    let mut exp = Expectations::default();
    exp.expect_creations("web", 3);
    exp.expect_deletions("web", &["a".to_string()]);
    assert_eq!((exp.0["web"].add, exp.0["web"].del), (0, 1));
    exp.expect_creations("web", 2);
    assert_eq!((exp.0["web"].add, exp.0["web"].del), (2, 0));
    assert!(exp.0["web"].deleting.is_empty());
}

#[test]
fn deletion_is_counted_only_for_tracked_keys_and_only_once() {
    let mut exp = Expectations::default();
    exp.expect_deletions("web", &["a".to_string(), "b".to_string()]);
    exp.deletion_observed("web", "stranger");
    assert_eq!(exp.0["web"].del, 2, "an untracked pod is ignored");
    exp.deletion_observed("web", "a");
    exp.deletion_observed("web", "a");
    assert_eq!(exp.0["web"].del, 1, "the same pod counts once");
    assert!(!exp.satisfied("web"));
    exp.deletion_observed("web", "b");
    assert!(exp.satisfied("web"));
    exp.delete("web");
    assert!(!exp.0.contains_key("web"));
}

#[test]
fn expiry_makes_a_waiting_record_satisfied() {
    let mut exp = Expectations::default();
    assert!(!exp.can_expire("web"), "no record");
    exp.expect_creations("web", 1);
    assert!(exp.can_expire("web"));
    exp.expire("web");
    assert!(exp.satisfied("web"));
    assert!(!exp.can_expire("web"), "already expired");
    // A new record restarts the timer.
    exp.expect_creations("web", 1);
    assert!(!exp.satisfied("web"));
    // A fulfilled record has nothing to expire.
    exp.creation_observed("web");
    assert!(!exp.can_expire("web"));
}

#[test]
fn work_queue_never_hands_a_key_to_two_workers() {
    let mut q = WorkQueue::default();
    q.add("web");
    q.add("web");
    assert_eq!(q.queued.len(), 1);
    assert!(q.take("web"));
    assert!(!q.take("web"));
    q.add("web");
    assert!(q.queued.is_empty(), "added while processing: held back");
    q.done("web", false);
    assert_eq!(queued(&q), vec!["web".to_string()]);
    assert!(q.take("web"));
    q.done("web", true);
    assert_eq!(queued(&q), vec!["web".to_string()], "an error requeues");
    assert!(q.take("web"));
    q.done("web", false);
    assert!(q.queued.is_empty());
}
