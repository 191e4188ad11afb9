//! Claiming pods, re-expressed from kubernetes `pkg/controller/controller_ref_manager_test.go`
//! (`TestClaimPods`) and the claim-related cases of
//! `pkg/controller/replicaset/replica_set_test.go` (`TestPodControllerLookup`,
//! `TestPatchPodFails`, the adopt/release paths of `TestUpdateSelectorControllerRef`).
//!
//! `claim::decide` is `ClaimObject`'s decision from the cache; `claim::recheck` is the live
//! `RecheckDeletionTimestamp` before the first adoption.

mod common;

use common::{
    both_profiles, create_pod, create_rs, must, new_pod, pod, replicaset, run_sync,
    stored_replicaset, PodExt,
};
use rsmc_spec::api::{ApiServer, DeleteOptions, Propagation, Request};
use rsmc_spec::controller::claim::{decide, recheck};
use rsmc_spec::controller::{Claim, Expectations};
use rsmc_spec::object::{LabelSelector, Operator, Requirement};

#[test]
fn decide_keep_release_adopt_ignore() {
    let rs = stored_replicaset("web", 2, 10);
    let deleting_rs = {
        let mut r = rs.clone();
        r.meta.deletion_timestamp = Some(20);
        r
    };
    let other = stored_replicaset("other", 1, 11);
    let cases = [
        (
            "owned and matching: keep",
            &rs,
            pod("p", 1).controlled_by(&rs),
            Claim::Keep,
        ),
        (
            "owned and matching, owner being deleted: still keep",
            &deleting_rs,
            pod("p", 1).controlled_by(&rs),
            Claim::Keep,
        ),
        (
            "owned, no longer matching: release",
            &rs,
            pod("p", 1).controlled_by(&rs).with_labels(&[("app", "db")]),
            Claim::Release,
        ),
        (
            "owned, no longer matching, owner being deleted: leave it",
            &deleting_rs,
            pod("p", 1).controlled_by(&rs).with_labels(&[("app", "db")]),
            Claim::Ignore,
        ),
        ("orphan and matching: adopt", &rs, pod("p", 1), Claim::Adopt),
        (
            "orphan that does not match: ignore",
            &rs,
            pod("p", 1).with_labels(&[("app", "db")]),
            Claim::Ignore,
        ),
        (
            "orphan without labels: ignore",
            &rs,
            pod("p", 1).with_labels(&[]),
            Claim::Ignore,
        ),
        (
            "orphan, ReplicaSet being deleted: never adopt",
            &deleting_rs,
            pod("p", 1),
            Claim::Ignore,
        ),
        (
            "orphan being deleted: never adopt",
            &rs,
            pod("p", 1).deleting(5),
            Claim::Ignore,
        ),
        (
            "controlled by another ReplicaSet: ignore, even if it matches",
            &rs,
            pod("p", 1).controlled_by(&other),
            Claim::Ignore,
        ),
        (
            "controller reference with our name but an older UID: not ours",
            &rs,
            pod("p", 1).owned_by_uid("web", 3),
            Claim::Ignore,
        ),
        (
            "a reference to us that is not a controller reference: an orphan",
            &rs,
            {
                let mut p = pod("p", 1);
                let mut r = rsmc_spec::object::OwnerReference::controller_of("web", 10);
                r.controller = false;
                p.meta.owner_references.push(r);
                p
            },
            Claim::Adopt,
        ),
    ];
    for (name, owner, pod, want) in cases {
        assert_eq!(decide(owner, &pod), want, "{name}");
    }
}

#[test]
fn decide_uses_set_based_selectors() {
    let mut rs = stored_replicaset("web", 1, 10);
    rs.spec.selector = LabelSelector {
        match_labels: Default::default(),
        match_expressions: vec![Requirement {
            key: "env".into(),
            operator: Operator::NotIn,
            values: ["prod".to_string()].into(),
        }],
    };
    assert_eq!(
        decide(&rs, &pod("p", 1)),
        Claim::Adopt,
        "key absent matches NotIn"
    );
    assert_eq!(
        decide(&rs, &pod("p", 1).with_labels(&[("env", "prod")])),
        Claim::Ignore
    );
    assert_eq!(
        decide(
            &rs,
            &pod("p", 1)
                .with_labels(&[("env", "prod")])
                .controlled_by(&rs)
        ),
        Claim::Release
    );
}

#[test]
fn recheck_outcomes() {
    let cached = stored_replicaset("web", 1, 10);
    let recreated = stored_replicaset("web", 1, 12);
    let mut deleting = cached.clone();
    deleting.meta.deletion_timestamp = Some(30);
    let cases = [
        ("gone", None, Some("not found")),
        (
            "recreated under the same name",
            Some(&recreated),
            Some("is gone: got uid 12, wanted 10"),
        ),
        (
            "being deleted",
            Some(&deleting),
            Some("has just been deleted"),
        ),
        ("still there", Some(&cached), None),
    ];
    for (name, live, err) in cases {
        match (recheck(&cached, live), err) {
            (Ok(()), None) => {}
            (Err(got), Some(want)) => assert!(got.contains(want), "{name}: {got}"),
            (got, want) => panic!("{name}: got {got:?}, wanted error containing {want:?}"),
        }
    }
}

#[test]
fn sync_adopts_a_matching_orphan_after_one_live_get() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 2));
        create_pod(&mut api, new_pod("orphan-a"));
        create_pod(&mut api, new_pod("orphan-b"));
        let mut exp = Expectations::default();
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.gets, 1, "CanAdopt is checked once per sync");
        assert_eq!(run.patches(), 2);
        assert_eq!(run.creates(), 0);
        assert_eq!(run.error, Some(false));
        for name in ["orphan-a", "orphan-b"] {
            let owner = api.pods[name].meta.controller_ref().unwrap();
            assert_eq!(owner.uid, rs.meta.uid);
        }
        assert_eq!(api.replicasets["web"].status.replicas, 2);
    }
}

#[test]
fn sync_releases_an_owned_pod_that_no_longer_matches_and_replaces_it() {
    for sem in both_profiles() {
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 1));
        let p = create_pod(&mut api, new_pod("p").controlled_by(&rs));
        must(
            &mut api,
            Request::SetPodLabels {
                name: p.meta.name.clone(),
                labels: rsmc_spec::object::labels(&[("app", "debug")]),
            },
        );
        let mut exp = Expectations::default();
        let run = run_sync(&mut api, "web", &sem, &mut exp);
        assert_eq!(run.gets, 0, "releasing needs no recheck");
        assert_eq!(run.patches(), 1);
        assert!(api.pods["p"].meta.owner_references.is_empty());
        assert_eq!(run.creates(), 1, "the released pod is replaced");
        assert_eq!(run.error, Some(false));
    }
}

#[test]
fn release_swallows_not_found_and_invalid_but_adoption_does_not() {
    for sem in both_profiles() {
        // Release of a pod that was deleted and recreated under the same name (new UID):
        // the UID guard makes the patch Invalid, which release ignores.
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 0));
        create_pod(
            &mut api,
            new_pod("p").controlled_by(&rs).with_labels(&[("app", "x")]),
        );
        let cache_at = api.rv;
        must(
            &mut api,
            Request::DeletePod {
                name: "p".into(),
                options: DeleteOptions::default(),
            },
        );
        create_pod(&mut api, new_pod("p").with_labels(&[("app", "x")]));
        let mut exp = Expectations::default();
        let run = common::run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.patches(), 1);
        assert!(run.sent[0].1.is_err());
        assert_eq!(run.error, Some(false), "release ignores Invalid");

        // Adoption of an orphan that, live, already got another controller: 422, sync fails.
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 1));
        let thief = create_rs(&mut api, {
            let mut r = replicaset("thief", 0);
            r.spec.selector = LabelSelector::match_labels(&[("app", "web"), ("x", "y")]);
            r.spec.template_labels = rsmc_spec::object::labels(&[("app", "web"), ("x", "y")]);
            r
        });
        let p = create_pod(&mut api, new_pod("p"));
        let cache_at = api.rv;
        must(
            &mut api,
            Request::PatchPodOwnerReferences {
                name: "p".into(),
                uid: p.meta.uid,
                patch: rsmc_spec::api::OwnerRefPatch::Add(
                    rsmc_spec::object::OwnerReference::controller_of("thief", thief.meta.uid),
                ),
            },
        );
        let mut exp = Expectations::default();
        let run = common::run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.patches(), 1);
        let err = run.sent[0].1.as_ref().unwrap_err();
        assert_eq!(err.reason.code(), 422);
        assert_eq!(run.error, Some(true));
        assert_eq!(run.creates(), 0, "a claim error skips manageReplicas");
        assert_eq!(
            run.status_writes(),
            0,
            "a claim error skips the status update"
        );

        // Adoption of a pod that is gone by the time of the patch: NotFound is ignored.
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 1));
        create_pod(&mut api, new_pod("p"));
        let cache_at = api.rv;
        must(
            &mut api,
            Request::DeletePod {
                name: "p".into(),
                options: DeleteOptions {
                    propagation: Some(Propagation::Background),
                    ..DeleteOptions::default()
                },
            },
        );
        let mut exp = Expectations::default();
        let run = common::run_sync_with(&mut api, "web", cache_at, &sem, &mut exp, |_| None);
        assert_eq!(run.patches(), 1);
        assert_eq!(run.error, Some(false));
        // The cached sync still counts the missing pod as absent and creates one.
        assert_eq!(run.creates(), 1);
    }
}
