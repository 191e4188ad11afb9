//! The cost of `rsmc replay` follows the cluster's size, not its interleavings: one
//! ReplicaSet scaled 3 → N → 1 (`scenarios/scale-down-12.yaml` with N for 12). The pod
//! symmetry over settled revisions (`rsmc_spec::model::symmetry`) makes the scale-down one
//! state per count of pods deleted; without it 8 → 1 visited about 1.6 million states. The
//! counts are pinned: a change to the model's size is a visible diff here.

use rsmc_oracle::explore::default_budget;
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::replay::replay;
use rsmc_spec::profile::Profile;
use std::path::Path;

/// States visited per settle point, and the outcomes of the last one.
fn scale_down(n: u32) -> (Vec<usize>, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let text = std::fs::read_to_string(dir.join("scale-down-12.yaml")).unwrap();
    let text = text
        .replace("replicas: 12", &format!("replicas: {n}"))
        .replace("name: scale-down-12", &format!("name: scale-down-{n}"));
    let path =
        std::env::temp_dir().join(format!("rsmc-scale-down-{n}-{}.yaml", std::process::id()));
    std::fs::write(&path, text).unwrap();
    let prepared = Prepared::load(&path, Profile::K8s120);
    std::fs::remove_file(&path).unwrap();
    let prepared = prepared.unwrap();
    let r = replay(&prepared.subject(), &default_budget()).unwrap();
    let explored = r.points.iter().map(|p| p.explored).collect();
    (explored, r.points.last().unwrap().outcomes.clone())
}

#[test]
fn a_scale_down_costs_a_state_per_count_of_pods_deleted() {
    for (n, pinned) in [(3, [52, 8, 104]), (5, [52, 48, 284]), (8, [52, 60, 689])] {
        let (explored, outcomes) = scale_down(n);
        assert_eq!(explored, pinned, "3 -> {n} -> 1");
        assert_eq!(outcomes.len(), 1, "3 -> {n} -> 1: {outcomes:?}");
        assert!(
            outcomes[0].contains("frontend   1         1         0"),
            "3 -> {n} -> 1: {}",
            outcomes[0]
        );
    }
}
