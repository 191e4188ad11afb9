//! Model objects as manifests: the inverse of the abstraction, for scenarios written from model
//! runs. The container payload, which the model does not have, is one pause container.

use super::object::Object;
use rsmc_spec::object::{LabelSelector, Operator, Pod, ReplicaSet, POD_DELETION_COST};
use serde_json::{json, Map, Value};

/// The container every written pod and template runs: it does nothing and stays running.
pub const PAUSE_IMAGE: &str = "registry.k8s.io/pause:3.9";

/// The manifest of a model object.
pub fn to_manifest(object: &Object) -> Value {
    match object {
        Object::ReplicaSet(rs) => replicaset_manifest(rs),
        Object::Pod(pod) => pod_manifest(pod),
    }
}

/// An apps/v1 ReplicaSet manifest. A model object the API would reject (a `restartPolicy`
/// other than Always, `minReadySeconds` other than 0) is written as it is, and reading it back
/// reports why.
pub fn replicaset_manifest(rs: &ReplicaSet) -> Value {
    let mut spec = json!({
        "replicas": rs.spec.replicas,
        "selector": selector(&rs.spec.selector),
        "template": {
            "metadata": { "labels": rs.spec.template_labels },
            "spec": { "containers": containers() },
        },
    });
    if !rs.spec.template_annotations.is_empty() {
        spec["template"]["metadata"]["annotations"] = json!(rs.spec.template_annotations);
    }
    if rs.spec.min_ready_seconds != 0 {
        spec["minReadySeconds"] = json!(rs.spec.min_ready_seconds);
    }
    if !rs.spec.restart_policy_always {
        spec["template"]["spec"]["restartPolicy"] = json!("Never");
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": metadata(&rs.meta.name, &rs.meta.labels, None),
        "spec": spec,
    })
}

/// A v1 Pod manifest, with `spec.nodeName` and the deletion-cost annotation when set.
pub fn pod_manifest(pod: &Pod) -> Value {
    let cost = pod.deletion_cost.map(|c| c.to_string());
    let mut spec = json!({ "containers": containers() });
    if let Some(node) = &pod.node_name {
        spec["nodeName"] = json!(node);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata(&pod.meta.name, &pod.meta.labels, cost),
        "spec": spec,
    })
}

fn metadata(
    name: &str,
    labels: &rsmc_spec::object::Labels,
    deletion_cost: Option<String>,
) -> Value {
    let mut meta = Map::new();
    meta.insert("name".into(), json!(name));
    if !labels.is_empty() {
        meta.insert("labels".into(), json!(labels));
    }
    if let Some(cost) = deletion_cost {
        meta.insert("annotations".into(), json!({ POD_DELETION_COST: cost }));
    }
    Value::Object(meta)
}

fn containers() -> Value {
    json!([{ "name": "app", "image": PAUSE_IMAGE }])
}

fn selector(selector: &LabelSelector) -> Value {
    let mut out = Map::new();
    if !selector.match_labels.is_empty() {
        out.insert("matchLabels".into(), json!(selector.match_labels));
    }
    if !selector.match_expressions.is_empty() {
        let expressions = selector
            .match_expressions
            .iter()
            .map(|r| {
                let mut e = json!({ "key": r.key, "operator": operator(r.operator) });
                if !r.values.is_empty() {
                    e["values"] = json!(r.values);
                }
                e
            })
            .collect();
        out.insert("matchExpressions".into(), Value::Array(expressions));
    }
    Value::Object(out)
}

fn operator(op: Operator) -> &'static str {
    match op {
        Operator::In => "In",
        Operator::NotIn => "NotIn",
        Operator::Exists => "Exists",
        Operator::DoesNotExist => "DoesNotExist",
    }
}
