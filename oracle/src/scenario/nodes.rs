//! A scenario's nodes on a real cluster's nodes. A scenario names the nodes its pods are
//! bound to (`nodes: [node-1]`, `apply: {…, nodeName: node-1}`) for the played kubelet;
//! on real kubelets (`rsmc conform --kubelet real`, a kind node) those names must be the
//! cluster's, or the pods would wait for a node that never comes. Each scenario node stands
//! for one cluster node: a name the cluster has keeps it, the others take the cluster's
//! remaining nodes in order. Distinct scenario nodes stay distinct, so what depends on
//! which pods share a node (the scale-down ranking's co-location rule) is unchanged.

use super::step::{Apply, Step, StepKind};
use crate::manifest::Object;
use rsmc_spec::model::PodAction;
use rsmc_spec::object::Pod;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Each scenario node and the cluster node it stands for, and the cluster's nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeMap {
    onto: BTreeMap<String, String>,
    cluster: Vec<String>,
}

impl NodeMap {
    /// The scenario's `nodes` onto the cluster's; the error says why they do not fit.
    pub fn onto(scenario: &[String], cluster: &[String]) -> Result<NodeMap, String> {
        if scenario.len() > cluster.len() {
            return Err(format!(
                "it binds pods to {} nodes ({}), the cluster has {} ({})",
                scenario.len(),
                scenario.join(", "),
                cluster.len(),
                cluster.join(", ")
            ));
        }
        let mut free = cluster.iter().filter(|c| !scenario.contains(c));
        let map = scenario
            .iter()
            .map(|n| {
                let onto = if cluster.contains(n) {
                    n.clone()
                } else {
                    free.next().expect("counted above").clone()
                };
                (n.clone(), onto)
            })
            .collect();
        Ok(NodeMap {
            onto: map,
            cluster: cluster.to_vec(),
        })
    }

    /// The cluster's nodes, in the order it gave them.
    pub fn cluster(&self) -> &[String] {
        &self.cluster
    }

    /// The cluster node `node` stands for (itself when the scenario did not name it).
    pub fn node(&self, node: &str) -> String {
        self.onto
            .get(node)
            .cloned()
            .unwrap_or_else(|| node.to_string())
    }

    /// `pod` bound to the cluster node its scenario node stands for.
    pub fn pod(&self, pod: &Arc<Pod>) -> Arc<Pod> {
        match &pod.node_name {
            Some(n) if self.node(n) != *n => {
                let mut p = Pod::clone(pod);
                p.node_name = Some(self.node(n));
                Arc::new(p)
            }
            _ => pod.clone(),
        }
    }

    /// The scenario's steps with every binding (an apply's `nodeName`, a manifest's
    /// `spec.nodeName`, a `schedule` step's node) on the cluster's nodes.
    pub fn steps(&self, steps: &[Step]) -> Vec<Step> {
        steps
            .iter()
            .map(|step| {
                let mut step = step.clone();
                match &mut step.kind {
                    StepKind::Apply(apply) => self.apply(apply),
                    StepKind::Pods {
                        action: PodAction::Schedule { node },
                        ..
                    } => *node = self.node(node),
                    _ => {}
                }
                step
            })
            .collect()
    }

    fn apply(&self, apply: &mut Apply) {
        if let Some(n) = &apply.node_name {
            apply.node_name = Some(self.node(n));
        }
        for m in &mut apply.manifests {
            if let Object::Pod(pod) = &m.object {
                m.object = Object::Pod(self.pod(pod));
            }
            if let Some(Value::String(n)) = m.raw.pointer_mut("/spec/nodeName") {
                *n = self.node(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_cluster_node_keeps_its_name_and_the_others_take_the_rest_in_order() {
        let map =
            NodeMap::onto(&names(&["node-1", "b", "node-2"]), &names(&["a", "b", "c"])).unwrap();
        assert_eq!(map.node("node-1"), "a");
        assert_eq!(map.node("b"), "b");
        assert_eq!(map.node("node-2"), "c");
        assert_eq!(map.node("elsewhere"), "elsewhere");
    }

    #[test]
    fn more_scenario_nodes_than_cluster_nodes_do_not_fit() {
        let e = NodeMap::onto(&names(&["node-1", "node-2"]), &names(&["kind"])).unwrap_err();
        assert_eq!(
            e,
            "it binds pods to 2 nodes (node-1, node-2), the cluster has 1 (kind)"
        );
    }
}
