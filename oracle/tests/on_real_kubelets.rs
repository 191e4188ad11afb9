//! A scenario prepared for real kubelets (`rsmc conform --kubelet real`): the nodes it
//! names stand for the cluster's, in the steps the runner takes and in the model that judges
//! the run alike; what a real kubelet cannot be made to do is refused with the reason.

use rsmc_oracle::manifest::Object;
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::scenario::StepKind;
use rsmc_spec::model::{Action, ScriptStep};
use rsmc_spec::profile::Profile;
use std::path::{Path, PathBuf};

fn upstream(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/scenarios/upstream")
        .join(format!("{name}.yaml"))
}

fn kind() -> Vec<String> {
    vec!["kind-control-plane".to_string()]
}

#[test]
fn the_scenarios_node_stands_for_the_clusters_in_the_steps_and_the_model() {
    let played = Prepared::load(
        &upstream("test-pod-deletion-cost-adopted-pods"),
        Profile::K8s120,
    )
    .unwrap();
    let real = played.on_real_kubelets(&kind()).unwrap();
    assert_eq!(real.scenario.nodes, kind());
    assert_eq!(real.compiled.config.nodes, kind());
    let mut bound = 0;
    for step in &real.scenario.steps {
        if let StepKind::Apply(apply) = &step.kind {
            for m in &apply.manifests {
                if let Object::Pod(pod) = &m.object {
                    assert_eq!(pod.node_name.as_deref(), Some("kind-control-plane"));
                    assert_eq!(m.raw["spec"]["nodeName"], "kind-control-plane");
                    bound += 1;
                }
            }
        }
    }
    assert_eq!(bound, 2, "pod-100 and pod-1000");
    let model_pods: Vec<_> = real
        .compiled
        .script
        .steps
        .iter()
        .filter_map(|s| match s {
            ScriptStep::Move(Action::ApplyPod { pod }) => pod.node_name.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(model_pods, ["kind-control-plane", "kind-control-plane"]);
    assert!(real.steps.iter().any(|s| s.contains("kind-control-plane")));
    assert!(
        !real.steps.iter().any(|s| s.contains("node-1")),
        "{:?}",
        real.steps
    );
    // The played scenario is untouched.
    assert_eq!(played.scenario.nodes, ["node-1"]);
}

#[test]
fn what_a_real_kubelet_cannot_be_made_to_do_is_refused() {
    let unready = Prepared::load(
        &upstream("test-ready-and-available-replicas"),
        Profile::K8s120,
    )
    .unwrap();
    let e = unready.on_real_kubelets(&kind()).err().unwrap();
    assert!(e.contains("makes pods unready"), "{e}");
    let two = Prepared::parse(
        Path::new("two-nodes.yaml"),
        "name: two-nodes\nnodes: [node-1, node-2]\nsteps:\n  - settle\n",
        Profile::K8s120,
    )
    .unwrap();
    let e = two.on_real_kubelets(&kind()).err().unwrap();
    assert_eq!(
        e,
        "it binds pods to 2 nodes (node-1, node-2), the cluster has 1 (kind-control-plane)"
    );
}
