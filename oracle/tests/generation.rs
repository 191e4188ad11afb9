//! `metadata.generation` and `status.observedGeneration` through a scenario, settle point by
//! settle point. The kubectl tables of a replay do not show them, so they are read off the
//! model's settled states here.
//!
//! conformance/scenarios/upstream/test-spec-replicas-change.yaml re-expresses
//! kubernetes/kubernetes test/integration/replicaset/replicaset_test.go (v1.20)
//! `TestSpecReplicasChange`: create at 2 replicas, scale to 3, 0 and 2 (each a spec change:
//! pkg/registry/apps/replicaset/strategy.go `PrepareForUpdate` bumps the generation), then
//! re-apply with only a template annotation added — also a spec change, so the generation
//! reaches 5 and the controller's status write (pkg/controller/replicaset/replica_set.go
//! `syncReplicaSet` → replica_set_utils.go `calculateStatus`, which sets
//! `ObservedGeneration = rs.Generation`) brings observedGeneration to 5.

use rsmc_oracle::explore::{default_budget, outcomes};
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::profile::Profile;
use std::collections::BTreeSet;
use std::path::Path;

/// For each settle point of `file`, every (generation, observedGeneration) of ReplicaSet `rs`
/// among the states the model may settle in.
fn generations(file: &str, rs: &str, profile: Profile) -> Vec<BTreeSet<(u32, u32)>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/scenarios")
        .join(file);
    let prepared = Prepared::load(&path, profile).unwrap_or_else(|e| panic!("{e}"));
    let script = prepared.model.script.as_ref().expect("a scripted model");
    let mut starts = stateright::Model::init_states(&prepared.model);
    let mut points = Vec::new();
    for settle in script.settle_indices() {
        let free = BTreeSet::new();
        let (found, _) =
            outcomes(&prepared.model, &starts, settle, &free, &default_budget()).unwrap();
        assert!(
            !found.is_empty(),
            "the model never settles at step {settle}"
        );
        points.push(
            found
                .iter()
                .map(|s| {
                    let r = &s.api.replicasets[rs];
                    (r.meta.generation, r.status.observed_generation)
                })
                .collect(),
        );
        starts = found;
    }
    points
}

#[test]
fn a_template_annotation_bumps_the_generation_and_observed_generation_follows() {
    for profile in [Profile::K8s120, Profile::Upstream] {
        let points = generations("upstream/test-spec-replicas-change.yaml", "rs", profile);
        let expected: Vec<BTreeSet<(u32, u32)>> =
            (1..=5).map(|g| BTreeSet::from([(g, g)])).collect();
        assert_eq!(points, expected, "{profile:?}");
    }
}
