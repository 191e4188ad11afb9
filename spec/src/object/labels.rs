//! Labels and label selectors (matchLabels plus set-based matchExpressions).
//!
//! Models `metav1.LabelSelector` and its conversion to a `labels.Selector`
//! (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go,
//! `LabelSelectorAsSelector`; staging/src/k8s.io/apimachinery/pkg/labels/selector.go,
//! `Requirement.Matches`).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// A label map. Ordered so that equal maps hash equally in the model.
pub type Labels = BTreeMap<String, String>;

/// Builds a label map from `key=value` pairs; handy in tests and presets.
pub fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The operator of a set-based requirement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One `matchExpressions` entry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirement {
    pub key: String,
    pub operator: Operator,
    #[serde(default)]
    pub values: BTreeSet<String>,
}

impl Requirement {
    /// `Requirement.Matches`: `NotIn` and `DoesNotExist` match a pod that lacks the key.
    pub fn matches(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }

    /// The checks `ValidateLabelSelectorRequirement` makes (apimachinery
    /// pkg/apis/meta/v1/validation/validation.go): In/NotIn need values, Exists/DoesNotExist
    /// must have none.
    pub fn validate(&self, field: &str) -> Result<(), String> {
        match self.operator {
            Operator::In | Operator::NotIn if self.values.is_empty() => Err(format!(
                "{field}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            )),
            Operator::Exists | Operator::DoesNotExist if !self.values.is_empty() => Err(format!(
                "{field}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )),
            _ => Ok(()),
        }
    }
}

/// `metav1.LabelSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default)]
    pub match_labels: Labels,
    #[serde(default)]
    pub match_expressions: Vec<Requirement>,
}

impl LabelSelector {
    /// A selector with only `matchLabels`.
    pub fn match_labels(pairs: &[(&str, &str)]) -> Self {
        LabelSelector {
            match_labels: labels(pairs),
            match_expressions: Vec::new(),
        }
    }

    /// An empty selector. In apps/v1 the API rejects it; the controller treats it as matching
    /// nothing when looking for a pod's ReplicaSets (`GetPodReplicaSets`).
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }

    /// Whether every requirement holds for `labels`.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|r| r.matches(labels))
    }
}

impl fmt::Display for LabelSelector {
    /// Renders as `kubectl describe` prints a selector: `tier=frontend,env in (prod)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self
            .match_labels
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for r in &self.match_expressions {
            let values = r.values.iter().cloned().collect::<Vec<_>>().join(",");
            parts.push(match r.operator {
                Operator::In => format!("{} in ({values})", r.key),
                Operator::NotIn => format!("{} notin ({values})", r.key),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
            });
        }
        f.write_str(&parts.join(","))
    }
}

/// Renders labels as `kubectl get --show-labels` does: `k=v,k2=v2`, or `<none>`.
pub fn render_labels(labels: &Labels) -> String {
    if labels.is_empty() {
        return "<none>".to_string();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Renders labels as `kubectl label` arguments: `k=v k2=v2`.
pub fn render_labels_compact(labels: &Labels) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn set_based_requirements_follow_apimachinery() {
        let pod = labels(&[("tier", "frontend"), ("env", "prod")]);
        let bare = labels(&[("tier", "frontend")]);
        let cases = [
            (req("env", Operator::In, &["prod", "qa"]), true, false),
            (req("env", Operator::NotIn, &["qa"]), true, true),
            (req("env", Operator::NotIn, &["prod"]), false, true),
            (req("env", Operator::Exists, &[]), true, false),
            (req("env", Operator::DoesNotExist, &[]), false, true),
        ];
        for (r, on_pod, on_bare) in cases {
            assert_eq!(r.matches(&pod), on_pod, "{r:?} on {pod:?}");
            assert_eq!(r.matches(&bare), on_bare, "{r:?} on {bare:?}");
        }
    }

    #[test]
    fn selector_display_and_match() {
        let s = LabelSelector {
            match_labels: labels(&[("tier", "frontend")]),
            match_expressions: vec![req("env", Operator::In, &["prod"])],
        };
        assert_eq!(s.to_string(), "tier=frontend,env in (prod)");
        assert!(s.matches(&labels(&[("tier", "frontend"), ("env", "prod")])));
        assert!(!s.matches(&labels(&[("tier", "frontend")])));
        assert!(LabelSelector::default().is_empty());
    }

    #[test]
    fn requirement_validation_names_the_field() {
        let err = req("env", Operator::In, &[])
            .validate("spec.selector.matchExpressions[0]")
            .unwrap_err();
        assert!(err.starts_with("spec.selector.matchExpressions[0].values: Required value"));
        assert!(req("env", Operator::Exists, &["x"]).validate("f").is_err());
    }
}
