//! API server rules the controller relies on, re-expressed from upstream behaviour exercised
//! by kubernetes `pkg/controller/replicaset/replica_set_test.go` (`TestPatchPodFails`,
//! `TestControllerUpdateStatusWithFailure`, the fake-client reactions of
//! `TestDoNotAdoptOrCreateIfBeingDeleted*`) and by the apiserver/registry tests it depends on:
//! `staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store_test.go`
//! (`TestStoreDeleteWithOrphanDependents`, `TestGracefulStoreHandleFinalizers`,
//! preconditions), `pkg/registry/core/pod/strategy_test.go` (`TestCheckGracefulDelete`),
//! `pkg/registry/apps/replicaset/strategy_test.go` (`TestReplicaSetStrategy`, generation) and
//! `staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta_test.go`
//! (`TestValidateObjectMetaOwnerReferences`), `pkg/apis/apps/validation/validation_test.go`
//! (`TestValidateReplicaSetStatus`).

mod common;

use common::{create_pod, create_rs, must, new_pod, replicaset, PodExt};
use rsmc_spec::api::{
    ApiServer, DeleteOptions, EventType, OwnerRefPatch, Propagation, Reason, Request, Response,
};
use rsmc_spec::object::{labels, Finalizer, LabelSelector, OwnerReference, PodPhase};

fn delete_rs(name: &str, propagation: Option<Propagation>, uid: Option<u32>) -> Request {
    Request::DeleteReplicaSet {
        name: name.into(),
        options: DeleteOptions {
            propagation,
            uid_precondition: uid,
            ..DeleteOptions::default()
        },
    }
}

fn delete_pod(name: &str, uid: Option<u32>) -> Request {
    Request::DeletePod {
        name: name.into(),
        options: DeleteOptions {
            uid_precondition: uid,
            ..DeleteOptions::default()
        },
    }
}

/// PR #138818's proposed fix: a pod delete with a resourceVersion precondition fails with a
/// Conflict once the pod has been written since, and goes through while it has not.
#[test]
fn a_resource_version_precondition_on_a_pod_delete_fails_after_a_write() {
    let mut api = ApiServer::default();
    let p = create_pod(&mut api, new_pod("p"));
    let seen = p.meta.resource_version;
    must(
        &mut api,
        Request::SetPodLabels {
            name: "p".into(),
            labels: labels(&[("tier", "debug")]),
        },
    );
    let delete = |rv| Request::DeletePod {
        name: "p".into(),
        options: DeleteOptions {
            uid_precondition: Some(p.meta.uid),
            resource_version_precondition: Some(rv),
            ..DeleteOptions::default()
        },
    };
    let err = api.apply(&delete(seen)).unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert!(
        err.message
            .contains("Precondition failed: ResourceVersion in precondition"),
        "{}",
        err.message
    );
    assert!(api.pods.contains_key("p"));
    let current = api.pods["p"].meta.resource_version;
    must(&mut api, delete(current));
    assert!(!api.pods.contains_key("p"));
}

#[test]
fn a_uid_precondition_on_delete_fails_with_conflict() {
    let mut api = ApiServer::default();
    let rs = create_rs(&mut api, replicaset("web", 1));
    let p = create_pod(&mut api, new_pod("p"));
    let err = api
        .apply(&delete_rs("web", None, Some(rs.meta.uid + 100)))
        .unwrap_err();
    assert_eq!((err.reason, err.reason.code()), (Reason::Conflict, 409));
    assert!(err
        .message
        .contains("Precondition failed: UID in precondition"));
    let err = api
        .apply(&delete_pod("p", Some(p.meta.uid + 100)))
        .unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert!(api.pods.contains_key("p") && api.replicasets.contains_key("web"));
    // With the right UID both go through.
    must(&mut api, delete_pod("p", Some(p.meta.uid)));
    must(&mut api, delete_rs("web", None, Some(rs.meta.uid)));
    assert!(api.pods.is_empty() && api.replicasets.is_empty());
}

#[test]
fn a_status_update_with_a_stale_resource_version_conflicts() {
    let mut api = ApiServer::default();
    let rs = create_rs(&mut api, replicaset("web", 1));
    must(
        &mut api,
        Request::ScaleReplicaSet {
            name: "web".into(),
            replicas: 2,
        },
    );
    let err = api
        .apply(&Request::UpdateReplicaSetStatus {
            name: "web".into(),
            resource_version: rs.meta.resource_version,
            status: Default::default(),
        })
        .unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert!(err.message.contains("the object has been modified"));
    let fresh = api.replicasets["web"].meta.resource_version;
    must(
        &mut api,
        Request::UpdateReplicaSetStatus {
            name: "web".into(),
            resource_version: fresh,
            status: Default::default(),
        },
    );
}

#[test]
fn status_validation_rejects_inconsistent_counts() {
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 3));
    type Tweak = fn(&mut rsmc_spec::object::ReplicaSetStatus);
    let bad: [(&str, Tweak, &str); 4] = [
        (
            "ready above replicas",
            |s| {
                s.replicas = 1;
                s.ready_replicas = 2;
                s.available_replicas = 0
            },
            "status.readyReplicas",
        ),
        (
            "available above ready",
            |s| {
                s.replicas = 3;
                s.ready_replicas = 1;
                s.available_replicas = 2
            },
            "cannot be greater than readyReplicas",
        ),
        (
            "negative replicas",
            |s| s.replicas = -1,
            "must be greater than or equal to 0",
        ),
        (
            "fully labeled above replicas",
            |s| {
                s.replicas = 1;
                s.fully_labeled_replicas = 2
            },
            "status.fullyLabeledReplicas",
        ),
    ];
    for (name, tweak, needle) in bad {
        let mut status = rsmc_spec::object::ReplicaSetStatus::default();
        tweak(&mut status);
        let rv = api.replicasets["web"].meta.resource_version;
        let err = api
            .apply(&Request::UpdateReplicaSetStatus {
                name: "web".into(),
                resource_version: rv,
                status,
            })
            .unwrap_err();
        assert_eq!(err.reason.code(), 422, "{name}");
        assert!(
            err.message
                .starts_with("ReplicaSet.apps \"web\" is invalid: "),
            "{name}"
        );
        assert!(err.message.contains(needle), "{name}: {}", err.message);
    }
}

#[test]
fn a_second_controller_reference_is_invalid() {
    let mut api = ApiServer::default();
    let a = create_rs(&mut api, replicaset("a", 0));
    let b = create_rs(&mut api, replicaset("b", 0));
    let p = create_pod(&mut api, new_pod("p").controlled_by(&a));
    let err = api
        .apply(&Request::PatchPodOwnerReferences {
            name: "p".into(),
            uid: p.meta.uid,
            patch: OwnerRefPatch::Add(OwnerReference::controller_of("b", b.meta.uid)),
        })
        .unwrap_err();
    assert_eq!((err.reason, err.reason.code()), (Reason::Invalid, 422));
    assert!(err
        .message
        .contains("Only one reference can have Controller set to true"));
    assert!(err
        .message
        .starts_with("Pod \"p\" is invalid: metadata.ownerReferences"));
    // Re-adding the same controller merges by UID: fine.
    must(
        &mut api,
        Request::PatchPodOwnerReferences {
            name: "p".into(),
            uid: p.meta.uid,
            patch: OwnerRefPatch::Add(OwnerReference::controller_of("a", a.meta.uid)),
        },
    );
    assert_eq!(api.pods["p"].meta.owner_references.len(), 1);
    // A patch guarded by another UID (pod recreated under the name) is invalid too.
    let err = api
        .apply(&Request::PatchPodOwnerReferences {
            name: "p".into(),
            uid: p.meta.uid + 50,
            patch: OwnerRefPatch::Remove(vec![a.meta.uid]),
        })
        .unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
}

#[test]
fn replicaset_delete_follows_the_propagation_policy() {
    // (policy, finalizer expected, removed at once)
    let cases = [
        (None, None, true),
        (Some(Propagation::Background), None, true),
        (Some(Propagation::Orphan), Some(Finalizer::Orphan), false),
        (
            Some(Propagation::Foreground),
            Some(Finalizer::ForegroundDeletion),
            false,
        ),
    ];
    for (policy, finalizer, at_once) in cases {
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 1));
        let response = must(&mut api, delete_rs("web", policy, None));
        match (at_once, response) {
            (true, Response::Deleted { .. }) => assert!(api.replicasets.is_empty()),
            (false, Response::DeletionStarted { rv }) => {
                let rs = &api.replicasets["web"];
                assert_eq!(rs.meta.deletion_timestamp, Some(rv), "{policy:?}");
                assert_eq!(rs.meta.finalizers, vec![finalizer.unwrap()], "{policy:?}");
                // store.go `markAsDeleting`: the generation goes from 1 to 2.
                assert_eq!(rs.meta.generation, 2, "{policy:?}");
            }
            (_, other) => panic!("{policy:?}: {other:?}"),
        }
    }
}

#[test]
fn a_later_delete_without_policy_keeps_the_pending_finalizer() {
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 1));
    must(&mut api, delete_rs("web", Some(Propagation::Orphan), None));
    let rv = api.rv;
    let again = must(&mut api, delete_rs("web", None, None));
    assert_eq!(again, Response::DeletionStarted { rv });
    assert_eq!(api.rv, rv, "nothing written");
    assert_eq!(
        api.replicasets["web"].meta.generation, 2,
        "bumped once only"
    );
    assert_eq!(
        api.replicasets["web"].meta.finalizers,
        vec![Finalizer::Orphan]
    );
}

#[test]
fn removing_the_last_finalizer_deletes_the_replicaset() {
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 1));
    must(
        &mut api,
        delete_rs("web", Some(Propagation::Foreground), None),
    );
    must(
        &mut api,
        Request::RemoveFinalizer {
            name: "web".into(),
            finalizer: Finalizer::ForegroundDeletion,
        },
    );
    assert!(api.replicasets.is_empty());
    let last = api.log.last().unwrap();
    assert_eq!(last.event_type(), EventType::Deleted);
}

#[test]
fn removing_a_finalizer_that_is_absent_writes_nothing() {
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 1));
    must(&mut api, delete_rs("web", Some(Propagation::Orphan), None));
    let rv = api.rv;
    must(
        &mut api,
        Request::RemoveFinalizer {
            name: "web".into(),
            finalizer: Finalizer::ForegroundDeletion,
        },
    );
    assert_eq!(api.rv, rv);
    assert!(api.replicasets["web"].meta.is_deleting());
}

#[test]
fn pod_delete_is_graceful_only_when_scheduled_and_not_terminal() {
    // (bound to a node, phase, deleted at once)
    let cases = [
        (false, PodPhase::Pending, true),
        (true, PodPhase::Pending, false),
        (true, PodPhase::Running, false),
        (true, PodPhase::Succeeded, true),
        (true, PodPhase::Failed, true),
    ];
    for (bound, phase, at_once) in cases {
        let mut api = ApiServer::default();
        create_pod(&mut api, new_pod("p"));
        if bound {
            must(
                &mut api,
                Request::BindPod {
                    name: "p".into(),
                    node: "node-1".into(),
                },
            );
        }
        must(
            &mut api,
            Request::SetPodStatus {
                name: "p".into(),
                phase,
                ready: false,
            },
        );
        let response = must(&mut api, delete_pod("p", None));
        let label = format!("bound {bound}, {phase:?}");
        if at_once {
            assert!(matches!(response, Response::Deleted { .. }), "{label}");
            assert!(api.pods.is_empty(), "{label}");
            // Two writes: marked with grace period 0, then removed (store.go).
            let n = api.log.len();
            let last: Vec<EventType> = api.log[n - 2..].iter().map(|e| e.event_type()).collect();
            assert_eq!(
                last,
                vec![EventType::Modified, EventType::Deleted],
                "{label}"
            );
            let rv = api.log[n - 2].rv;
            assert!(api.pods_at(rv)["p"].grace_over, "{label}");
        } else {
            assert!(
                matches!(response, Response::DeletionStarted { .. }),
                "{label}"
            );
            assert!(api.pods["p"].meta.is_deleting(), "{label}");
            // A second delete changes nothing, even once the kubelet has stopped the pod
            // and reported a terminal phase (rest.BeforeDelete keeps a grace period that
            // runs); the kubelet's final delete removes it.
            let rv = api.rv;
            must(&mut api, delete_pod("p", None));
            assert_eq!(api.rv, rv, "{label}");
            must(
                &mut api,
                Request::SetPodStatus {
                    name: "p".into(),
                    phase: PodPhase::Succeeded,
                    ready: false,
                },
            );
            let rv = api.rv;
            must(&mut api, delete_pod("p", None));
            assert_eq!(api.rv, rv, "{label}: a terminal pod still being deleted");
            assert!(!api.pods["p"].grace_over, "{label}");
            must(&mut api, Request::FinishPodDeletion { name: "p".into() });
            assert!(api.pods.is_empty(), "{label}");
        }
    }
}

#[test]
fn generation_bumps_on_spec_changes_only() {
    let mut api = ApiServer::default();
    let rs = create_rs(&mut api, replicaset("web", 1));
    assert_eq!(
        rs.meta.generation, 1,
        "a new ReplicaSet starts at generation 1"
    );
    must(
        &mut api,
        Request::ScaleReplicaSet {
            name: "web".into(),
            replicas: 4,
        },
    );
    assert_eq!(api.replicasets["web"].meta.generation, 2);
    // Scaling to the same size is not a spec change.
    must(
        &mut api,
        Request::ScaleReplicaSet {
            name: "web".into(),
            replicas: 4,
        },
    );
    assert_eq!(api.replicasets["web"].meta.generation, 2);
    // A metadata-only change does not bump either.
    let mut relabeled = rsmc_spec::object::ReplicaSet::clone(&api.replicasets["web"]);
    relabeled.meta.labels = labels(&[("team", "a")]);
    must(&mut api, Request::ReplaceReplicaSet(relabeled));
    assert_eq!(api.replicasets["web"].meta.generation, 2);
    // Nor does a status write.
    let rv = api.replicasets["web"].meta.resource_version;
    must(
        &mut api,
        Request::UpdateReplicaSetStatus {
            name: "web".into(),
            resource_version: rv,
            status: Default::default(),
        },
    );
    assert_eq!(api.replicasets["web"].meta.generation, 2);
}

/// pkg/registry/apps/replicaset/strategy.go `PrepareForUpdate` bumps the generation on any
/// change of `spec` (`apiequality.Semantic.DeepEqual`), the pod template's annotations
/// included: test/integration/replicaset/replicaset_test.go `TestSpecReplicasChange` adds a
/// template annotation and waits for `metadata.generation` (and then observedGeneration) to
/// move, with `spec.replicas` unchanged.
#[test]
fn a_template_annotation_change_bumps_the_generation() {
    let mut api = ApiServer::default();
    create_rs(&mut api, replicaset("web", 2));
    let mut annotated = rsmc_spec::object::ReplicaSet::clone(&api.replicasets["web"]);
    annotated.spec.template_annotations = labels(&[("test", "annotation")]);
    must(&mut api, Request::ReplaceReplicaSet(annotated.clone()));
    let stored = &api.replicasets["web"];
    assert_eq!(stored.meta.generation, 2);
    assert_eq!(stored.spec.replicas, 2);
    assert_eq!(
        stored.spec.template_annotations,
        labels(&[("test", "annotation")])
    );
    // Re-applying the same annotations is no change.
    annotated.meta.resource_version = 0;
    must(&mut api, Request::ReplaceReplicaSet(annotated.clone()));
    assert_eq!(api.replicasets["web"].meta.generation, 2);
    // Changing a value, or removing the annotations, is one.
    annotated.spec.template_annotations = labels(&[("test", "other")]);
    must(&mut api, Request::ReplaceReplicaSet(annotated.clone()));
    assert_eq!(api.replicasets["web"].meta.generation, 3);
    annotated.spec.template_annotations.clear();
    must(&mut api, Request::ReplaceReplicaSet(annotated));
    assert_eq!(api.replicasets["web"].meta.generation, 4);
}

#[test]
fn create_clears_status_and_rejects_duplicates_and_mismatched_templates() {
    let mut api = ApiServer::default();
    let mut rs = replicaset("web", 1);
    rs.status.replicas = 7;
    let stored = create_rs(&mut api, rs.clone());
    assert_eq!(stored.status, Default::default());
    let err = api.apply(&Request::CreateReplicaSet(rs)).unwrap_err();
    assert_eq!(
        (err.reason, err.reason.code()),
        (Reason::AlreadyExists, 409)
    );

    let mut bad = replicaset("other", 1);
    bad.spec.template_labels = labels(&[("app", "db")]);
    let err = api.apply(&Request::CreateReplicaSet(bad)).unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
    assert!(err
        .message
        .contains("`selector` does not match template `labels`"));
}

#[test]
fn updates_with_a_stale_version_or_a_new_selector_are_rejected() {
    let mut api = ApiServer::default();
    let rs = create_rs(&mut api, replicaset("web", 1));
    must(
        &mut api,
        Request::ScaleReplicaSet {
            name: "web".into(),
            replicas: 2,
        },
    );
    let err = api.apply(&Request::ReplaceReplicaSet(rs)).unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);

    let mut changed = rsmc_spec::object::ReplicaSet::clone(&api.replicasets["web"]);
    changed.spec.selector = LabelSelector::match_labels(&[("app", "web"), ("v", "2")]);
    changed.spec.template_labels = labels(&[("app", "web"), ("v", "2")]);
    let err = api.apply(&Request::ReplaceReplicaSet(changed)).unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
    assert!(err.message.contains("field is immutable"));
}

#[test]
fn generated_pod_names_and_fresh_identity() {
    let mut api = ApiServer::default();
    let mut p = rsmc_spec::object::Pod::new("", labels(&[("app", "web")]));
    p.meta.generate_name = Some("web-".into());
    let a = create_pod(&mut api, p.clone());
    let b = create_pod(&mut api, p);
    assert!(a.meta.name.starts_with("web-") && b.meta.name.starts_with("web-"));
    assert_ne!(a.meta.name, b.meta.name);
    assert_ne!(a.meta.uid, b.meta.uid);
    // creationTimestamp is the API server's clock, in whole seconds: the same second for both
    // until a second passes.
    assert_eq!((a.meta.created, b.meta.created), (0, 0));
    api.tick();
    let mut later = rsmc_spec::object::Pod::new("", labels(&[("app", "web")]));
    later.meta.generate_name = Some("web-".into());
    assert_eq!(create_pod(&mut api, later).meta.created, 1);
    // Neither name nor generateName: rejected.
    let err = api
        .apply(&Request::CreatePod(rsmc_spec::object::Pod::new(
            "",
            Default::default(),
        )))
        .unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
}

#[test]
fn each_write_is_one_watch_event_with_before_and_after() {
    let mut api = ApiServer::default();
    create_pod(&mut api, new_pod("p"));
    must(
        &mut api,
        Request::BindPod {
            name: "p".into(),
            node: "n".into(),
        },
    );
    must(&mut api, delete_pod("p", None));
    // The kubelet's final delete (grace period 0) is two writes, as on a v1.20 cluster:
    // deletionGracePeriodSeconds goes to 0, then the pod is removed.
    must(&mut api, Request::FinishPodDeletion { name: "p".into() });
    let types: Vec<EventType> = api.log.iter().map(|e| e.event_type()).collect();
    assert_eq!(
        types,
        vec![
            EventType::Added,
            EventType::Modified,
            EventType::Modified,
            EventType::Modified,
            EventType::Deleted
        ]
    );
    let revs: Vec<u32> = api.log.iter().map(|e| e.rv).collect();
    assert_eq!(revs, vec![1, 2, 3, 4, 5]);
    // A cache at revision 2 sees the bound pod, not yet terminating.
    let at2 = api.pods_at(2);
    assert_eq!(at2["p"].node_name.as_deref(), Some("n"));
    assert!(!at2["p"].meta.is_deleting());
    assert!(!api.pods_at(3)["p"].grace_over);
    assert!(api.pods_at(4)["p"].grace_over);
    assert!(api.pods_at(5).is_empty());
}

#[test]
fn a_bound_pod_cannot_be_bound_again() {
    let mut api = ApiServer::default();
    let pod = create_pod(
        &mut api,
        rsmc_spec::object::Pod::new("p", labels(&[("app", "web")])),
    );
    let bind = |node: &str| Request::BindPod {
        name: pod.meta.name.clone(),
        node: node.into(),
    };
    must(&mut api, bind("node-1"));
    let err = api.apply(&bind("node-2")).unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert_eq!(api.pods["p"].node_name.as_deref(), Some("node-1"));
}

/// store.go `(*Store).Delete` decides a pod's grace period on its first read and applies it
/// to the pod it reads again inside `GuaranteedUpdate`: a binding that lands between the two
/// leaves a bound pod marked with grace period 0 and removed (seen on kind, v1.37). Only the
/// delete that is the pod's next write read it unbound; one conditioned on the bound revision
/// read it bound.
#[test]
fn a_delete_that_read_the_pod_before_its_binding_keeps_grace_period_zero() {
    let start = || {
        let mut api = ApiServer::default();
        create_pod(&mut api, new_pod("p"));
        api.bind_pod_under_delete("p", "n").unwrap();
        api
    };
    // The delete in flight lands: marked (bound, grace period 0), then removed.
    let mut api = start();
    assert!(matches!(
        must(&mut api, delete_pod("p", None)),
        Response::Deleted { .. }
    ));
    let marked = &api.pods_at(api.rv - 1)["p"];
    assert_eq!(marked.node_name.as_deref(), Some("n"));
    assert!(marked.grace_over && !marked.bound_under_delete);
    // Conditioned on the bound revision: it read the pod after the binding, graceful.
    let mut api = start();
    let bound = api.pods["p"].meta.resource_version;
    let conditioned = Request::DeletePod {
        name: "p".into(),
        options: DeleteOptions {
            resource_version_precondition: Some(bound),
            ..DeleteOptions::default()
        },
    };
    must(&mut api, conditioned);
    assert!(api.pods["p"].meta.is_deleting() && !api.pods["p"].grace_over);
    // Another write came first (the kubelet's first report): the delete was not in flight.
    let mut api = start();
    must(
        &mut api,
        Request::SetPodStatus {
            name: "p".into(),
            phase: PodPhase::Pending,
            ready: false,
        },
    );
    assert!(!api.pods["p"].bound_under_delete);
    must(&mut api, delete_pod("p", None));
    assert!(api.pods["p"].meta.is_deleting() && !api.pods["p"].grace_over);
    // A plain binding, as in `each_write_is_one_watch_event_with_before_and_after`: graceful.
}

/// A client's `setOwnerReferences` replaces the list (a merge patch); the controller's
/// adoption, a strategic merge keyed by UID, then completes a reference to itself where it
/// stands and puts a new controller reference before the other owners' (as the v1.20.2 and
/// v1.37.2 servers did in `upstream/test-general-pod-adoption.yaml`).
#[test]
fn an_adoption_completes_its_own_reference_in_place_and_puts_a_new_one_first() {
    let mut api = ApiServer::default();
    let a = create_rs(&mut api, replicaset("a", 0));
    let b = create_rs(&mut api, replicaset("b", 0));
    let p = create_pod(&mut api, new_pod("p"));
    let reference = |name: &str, uid, controller| OwnerReference {
        controller,
        block_owner_deletion: controller,
        ..OwnerReference::controller_of(name, uid)
    };
    let set = |api: &mut ApiServer, references: Vec<OwnerReference>| {
        must(
            api,
            Request::SetPodOwnerReferences {
                name: "p".into(),
                references,
            },
        )
    };
    let adopt = |api: &mut ApiServer| {
        must(
            api,
            Request::PatchPodOwnerReferences {
                name: "p".into(),
                uid: p.meta.uid,
                patch: OwnerRefPatch::Add(OwnerReference::controller_of("a", a.meta.uid)),
            },
        )
    };
    let owners = |api: &ApiServer| -> Vec<(String, bool)> {
        api.pods["p"]
            .meta
            .owner_references
            .iter()
            .map(|r| (r.name.clone(), r.controller))
            .collect()
    };
    set(&mut api, vec![reference("b", b.meta.uid, false)]);
    adopt(&mut api);
    assert_eq!(owners(&api), [("a".into(), true), ("b".into(), false)]);
    set(
        &mut api,
        vec![
            reference("b", b.meta.uid, false),
            reference("a", a.meta.uid, false),
        ],
    );
    adopt(&mut api);
    assert_eq!(owners(&api), [("b".into(), false), ("a".into(), true)]);
    assert!(api.pods["p"].meta.owner_references[1].block_owner_deletion);
    // Two controllers are refused, as for any write.
    let err = api
        .apply(&Request::SetPodOwnerReferences {
            name: "p".into(),
            references: vec![
                reference("a", a.meta.uid, true),
                reference("b", b.meta.uid, true),
            ],
        })
        .unwrap_err();
    assert_eq!(err.reason, Reason::Invalid);
}

/// store.go `(*Store).Update` → `shouldDeleteDuringUpdate`: an update of a pod that a grace-0
/// delete has marked (its first write made, the removal not yet) removes the pod instead of
/// storing the update (`deleteWithoutFinalizers`). The client is answered as if its update
/// were stored; the DELETED event carries the pod as it was stored, without the change. Seen
/// on v1.20.2: the ReplicaSet controller's adoption patch of a pod the garbage collector was
/// deleting (unbound, so grace period 0) was answered 200, its reference in the answer and
/// not in the DELETED event.
#[test]
fn an_update_of_a_pod_marked_with_grace_period_zero_removes_it() {
    let updates = |uid| {
        [
            Request::PatchPodOwnerReferences {
                name: "p".into(),
                uid,
                patch: OwnerRefPatch::Add(OwnerReference::controller_of("rs", 77)),
            },
            Request::SetPodLabels {
                name: "p".into(),
                labels: labels(&[("app", "other")]),
            },
            Request::SetPodDeletionCost {
                name: "p".into(),
                cost: Some(5),
            },
            Request::SetPodStatus {
                name: "p".into(),
                phase: PodPhase::Running,
                ready: true,
            },
            Request::SetPodRestarts {
                name: "p".into(),
                restarts: 1,
            },
            Request::SetPodOwnerReferences {
                name: "p".into(),
                references: vec![],
            },
        ]
    };
    for i in 0..updates(0).len() {
        let mut api = ApiServer::default();
        let p = create_pod(&mut api, new_pod("p"));
        let update = updates(p.meta.uid)[i].clone();
        // Before the delete the update is stored.
        let mut unmarked = api.clone();
        must(&mut unmarked, update.clone());
        assert!(unmarked.pods.contains_key("p"), "{update}");
        // The unbound pod's delete makes its first write only: marked, grace period 0.
        api.apply_marking(&delete_pod("p", None)).unwrap();
        let marked = api.pods["p"].clone();
        assert!(marked.grace_over && marked.meta.is_deleting(), "{update}");
        let resp = api.apply(&update).unwrap();
        assert_eq!(
            resp,
            Response::Written {
                rv: api.rv,
                name: "p".into(),
                uid: p.meta.uid
            },
            "{update}"
        );
        assert!(!api.pods.contains_key("p"), "{update}");
        let last = api.log.last().unwrap();
        assert_eq!(last.event_type(), EventType::Deleted, "{update}");
        match &last.change {
            rsmc_spec::api::Change::Pod {
                before: Some(before),
                after: None,
            } => assert_eq!(**before, *marked, "{update}"),
            other => panic!("{update}: {other:?}"),
        }
        // The removal it stands for is then not found.
        let err = api
            .apply(&Request::FinishPodDeletion { name: "p".into() })
            .unwrap_err();
        assert_eq!(err.reason, Reason::NotFound, "{update}");
    }
}
