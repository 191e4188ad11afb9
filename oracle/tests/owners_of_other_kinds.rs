//! Owner references to kinds other than ReplicaSet, in scenarios: upstream's
//! `TestGeneralPodAdoption` (test/integration/replicaset/replicaset_test.go) rewrites the
//! ReplicaSet's pod's references to one non-controller reference to a StatefulSet that does
//! not exist (`uuid.NewUUID()`), and expects the ReplicaSet to adopt the pod again beside it.
//! Upstream's test runs no garbage collector; a cluster does, and its collector finds the
//! StatefulSet reference dangling (`attemptToDeleteItem` → `classifyReferences` in
//! pkg/controller/garbagecollector/garbagecollector.go): before the adoption the pod has no
//! solid owner and is deleted; after it the dangling reference is patched away. The scenario
//! is `tests/scenarios/general-pod-adoption-statefulset.yaml`; its recording, made by
//! `rsmc conform` on a v1.37.2 control plane, took the second way.
//!
//! A run on v1.20.2 under load (2026-12-07) took a third way: the collector's delete (grace
//! period 0, the pod unbound) marked the pod at version 1331, and the controller's adoption
//! patch, computed on that marked pod, removed it instead of being stored (`Store.Update` →
//! `shouldDeleteDuringUpdate` → `deleteWithoutFinalizers` in the apiserver's
//! registry/generic/registry/store.go): answered 200 with the reference added, while the
//! DELETED event carried the pod without it. The controller counted the pod it had
//! "adopted"; its deletePod handler found no controller on the deleted pod and woke no
//! ReplicaSet, so rs stayed at 0 pods for 1 replica (until a resync, which the model does not
//! have). The model's API server removes a marked pod on any update
//! (`ApiServer::update_pod`), so where a grace-0 delete is two steps (scripted models under
//! `upstream`) this outcome is among the model's; under `k8s-1.20`, where the model makes the
//! delete one step, the adoption landing between its writes is a move of its own
//! (`Action::LandsInRemoval`), and the outcome is among the model's there too.

use rsmc_oracle::explore::{default_budget, outcomes};
use rsmc_oracle::judge::{judge, render};
use rsmc_oracle::observed;
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::budget::Budget;
use rsmc_spec::profile::Profile;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn scenario() -> PathBuf {
    root().join("tests/scenarios/general-pod-adoption-statefulset.yaml")
}

/// Of each state the model may settle in after the StatefulSet reference is written: whether
/// the pod is the one the ReplicaSet made first, and the owners its references name.
fn pods_after_the_dangling_reference(profile: Profile) -> BTreeSet<Vec<(bool, Vec<String>)>> {
    let prepared = Prepared::load(&scenario(), profile).unwrap_or_else(|e| panic!("{e}"));
    let script = prepared.model.script.as_ref().expect("a scripted model");
    let settles = script.settle_indices();
    let starts = stateright::Model::init_states(&prepared.model);
    let (first, _) = outcomes(
        &prepared.model,
        &starts,
        settles[0],
        &BTreeSet::new(),
        &default_budget(),
    )
    .unwrap();
    let original: BTreeSet<String> = first
        .iter()
        .flat_map(|s| s.api.pods.keys().cloned())
        .collect();
    assert_eq!(original.len(), 1, "one pod, whatever its name");
    let (second, _) = outcomes(
        &prepared.model,
        &first,
        settles[1],
        &original,
        &default_budget(),
    )
    .unwrap();
    second
        .iter()
        .map(|s| {
            s.api
                .pods
                .values()
                .map(|p| (original.contains(&p.meta.name), owners(p)))
                .collect()
        })
        .collect()
}

/// The owners `pod`'s references name, as `ConfigMap keeper (controller)`.
fn owners(pod: &rsmc_spec::object::Pod) -> Vec<String> {
    pod.meta
        .owner_references
        .iter()
        .map(|r| {
            let mark = if r.controller { " (controller)" } else { "" };
            format!("{} {}{mark}", r.kind.kind(), r.name)
        })
        .collect()
}

/// The verdict on a doctored recording, `text` as an observed trace's JSON.
fn judge_doctored(
    prepared: &Prepared,
    text: &serde_json::Value,
    budget: &Budget,
) -> rsmc_oracle::judge::Verdict {
    let dir = tempfile::tempdir().unwrap();
    let doctored = dir.path().join("doctored.observed.json");
    std::fs::write(&doctored, text.to_string()).unwrap();
    judge(
        &prepared.subject(),
        &observed::load(&doctored).unwrap(),
        budget,
    )
    .unwrap()
}

#[test]
fn a_dangling_reference_to_another_kind_is_collected_before_or_after_the_adoption() {
    let kept = vec![(true, vec!["ReplicaSet rs (controller)".to_string()])];
    let replaced = vec![(false, vec!["ReplicaSet rs (controller)".to_string()])];
    // The adoption landing between the two writes of the collector's delete: the pod is
    // removed, counted adopted, and nothing wakes rs (see the module's notes).
    let lost = vec![];
    for profile in [Profile::K8s120, Profile::Upstream] {
        assert_eq!(
            pods_after_the_dangling_reference(profile),
            BTreeSet::from([kept.clone(), replaced.clone(), lost.clone()]),
            "{profile:?}"
        );
    }
}

#[test]
fn the_recorded_run_conforms_and_one_whose_reference_stays_does_not() {
    let prepared = Prepared::load(&scenario(), Profile::Upstream).unwrap();
    let path = root().join("tests/observed/general-pod-adoption-statefulset.v1.37.2.observed.json");
    let recorded = observed::load(&path).unwrap();
    let budget = Budget::default().with_states(500_000);
    let v = judge(&prepared.subject(), &recorded, &budget).unwrap();
    assert!(v.conforms, "{}", render(&v));

    // The collector's patch taking the dangling reference away is left out: the pod keeps a
    // reference to an owner that does not exist, and the settled state says so.
    let mut text: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let segment = &mut text["segments"][1];
    let events = segment["events"].as_array_mut().unwrap();
    let last = events.pop().unwrap();
    assert_eq!(
        last["object"]["metadata"]["ownerReferences"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "the last event of the segment is the collector's patch"
    );
    let kept = events.last().unwrap()["object"].clone();
    for settled in segment["settled"]["pods"].as_array_mut().unwrap() {
        *settled = kept.clone();
    }
    let v = judge_doctored(&prepared, &text, &budget);
    assert!(!v.conforms, "{}", render(&v));
    // Named as the other kind it is, not as the ReplicaSet of the same name.
    assert!(
        render(&v).contains("seen [rs (controller=true, blockOwnerDeletion=true), statefulset.apps/rs (controller=false, blockOwnerDeletion=false)]"),
        "{}",
        render(&v)
    );
}

/// A pod by its name (a generated one by its generator's prefix, `frontend-…`) and the
/// owners its references name (`ConfigMap keeper (controller)`).
type PodOwners = (String, Vec<String>);

/// Of each state the model may settle in at each settle point of `file` (the outcomes of one
/// point are the starts of the next): each pod, by its name or, generated, by its generator's
/// prefix, with the kinds its references name (the controller's marked).
fn settled_pods(file: &str, profile: Profile) -> Vec<BTreeSet<Vec<PodOwners>>> {
    let prepared = Prepared::load(&root().join(file), profile).unwrap_or_else(|e| panic!("{e}"));
    let script = prepared.model.script.as_ref().expect("a scripted model");
    let mut states = stateright::Model::init_states(&prepared.model);
    let mut points = Vec::new();
    for settle in script.settle_indices() {
        let (next, _) = outcomes(
            &prepared.model,
            &states,
            settle,
            &BTreeSet::new(),
            &default_budget(),
        )
        .unwrap();
        points.push(
            next.iter()
                .map(|s| {
                    let mut pods: Vec<_> = s
                        .api
                        .pods
                        .values()
                        .map(|p| {
                            let name = match &p.meta.generate_name {
                                Some(prefix) => format!("{prefix}…"),
                                None => p.meta.name.clone(),
                            };
                            (name, owners(p))
                        })
                        .collect();
                    pods.sort();
                    pods
                })
                .collect(),
        );
        states = next;
    }
    points
}

/// `conformance/scenarios/owners/owned-by-a-configmap.yaml`: a pod a ConfigMap controls is never adopted or
/// counted by the ReplicaSet its labels match (replica_set.go `claimPods` →
/// `ClaimObject`: a pod with another controller is not its to take); the garbage collector
/// keeps a dependent while an owner of any kind exists (`isDangling` finds it by a live GET),
/// and once the ConfigMap is deleted collects the pod it alone owned and patches the
/// reference out of the pod the ReplicaSet still owns (`classifyReferences`: dangling beside
/// solid). One outcome at each point, in both profiles.
#[test]
fn an_owner_of_another_kind_keeps_its_pods_until_it_is_deleted() {
    let pod = |name: &str, refs: &[&str]| {
        let refs = refs.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        (name.to_string(), refs)
    };
    for profile in [Profile::K8s120, Profile::Upstream] {
        let points = settled_pods(
            "../conformance/scenarios/owners/owned-by-a-configmap.yaml",
            profile,
        );
        let one = |pods: Vec<PodOwners>| BTreeSet::from([pods]);
        let expected = vec![
            one(vec![
                pod("frontend-…", &["ReplicaSet frontend (controller)"]),
                pod("held", &["ConfigMap keeper (controller)"]),
            ]),
            one(vec![
                pod(
                    "frontend-…",
                    &["ReplicaSet frontend (controller)", "ConfigMap keeper"],
                ),
                pod("held", &["ConfigMap keeper (controller)"]),
            ]),
            one(vec![pod(
                "frontend-…",
                &["ReplicaSet frontend (controller)"],
            )]),
        ];
        assert_eq!(points, expected, "{profile:?}");
    }
}

/// The recordings of `owned-by-a-configmap.yaml` made by `rsmc conform` on local control
/// planes conform, each under its release's profile; a copy in which the garbage collector
/// keeps `held` after its only owner is deleted is rejected, naming the pod the model
/// collects.
#[test]
fn recordings_of_a_configmap_owner_conform_and_one_that_keeps_its_pod_does_not() {
    let budget = Budget::default().with_states(500_000);
    for (release, profile) in [("v1.20.2", Profile::K8s120), ("v1.37.2", Profile::Upstream)] {
        let prepared = Prepared::load(
            &root().join("../conformance/scenarios/owners/owned-by-a-configmap.yaml"),
            profile,
        )
        .unwrap();
        let path = root().join(format!(
            "tests/observed/owned-by-a-configmap.{release}.observed.json"
        ));
        let v = judge(
            &prepared.subject(),
            &observed::load(&path).unwrap(),
            &budget,
        )
        .unwrap();
        assert!(v.conforms, "{release}: {}", render(&v));

        // After keeper's deletion, held's events (the collector's delete) are left out and it
        // stays in the settled state.
        let mut text: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let held = text["segments"][1]["settled"]["pods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["metadata"]["name"] == "held")
            .cloned()
            .expect("held settled at the second point");
        let last = &mut text["segments"][2];
        let events = last["events"].as_array_mut().unwrap();
        let before = events.len();
        events.retain(|e| e["object"]["metadata"]["name"] != "held");
        assert!(
            events.len() < before,
            "{release}: the collector's delete of held"
        );
        last["settled"]["pods"].as_array_mut().unwrap().push(held);
        let v = judge_doctored(&prepared, &text, &budget);
        assert!(!v.conforms, "{release}: {}", render(&v));
        let report = render(&v);
        for expected in [
            "pod/held: seen present, allowed absent",
            "allowed: garbage-collector: DELETE pods/held",
            "controller=ConfigMap/keeper deleting",
        ] {
            assert!(report.contains(expected), "{release}: {expected}: {report}");
        }
    }
}
