//! Validation the API server applies before a write, with field paths and messages shaped
//! like the real ones so that a user recognises them.
//!
//! - pkg/apis/apps/validation/validation.go `ValidateReplicaSet`, `ValidateReplicaSetSpec`,
//!   `ValidateReplicaSetUpdate` (selector immutable in apps/v1).
//! - staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go
//!   `ValidateOwnerReferences` / `validateOwnerReference` (at most one controller reference).
//! - staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go
//!   `ValidateLabelSelector`.

use super::names::is_dns1123_subdomain;
use crate::object::{LabelSelector, Labels, OwnerReference, Pod, ReplicaSet};

/// Go's `%#v`-like rendering of a label map, as the real messages print `map[string]string{...}`.
fn go_map(labels: &Labels) -> String {
    let inner = labels
        .iter()
        .map(|(k, v)| format!("{k:?}:{v:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("map[string]string{{{inner}}}")
}

fn name_errors(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["metadata.name: Required value: name or generateName is required".into()];
    }
    if is_dns1123_subdomain(name) {
        return vec![];
    }
    vec![format!(
        "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
    )]
}

fn selector_errors(selector: &LabelSelector) -> Vec<String> {
    selector
        .match_expressions
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            r.validate(&format!("spec.selector.matchExpressions[{i}]"))
                .err()
        })
        .collect()
}

/// `validateOwnerReference` + the single-controller rule of `ValidateOwnerReferences`.
pub fn owner_reference_errors(refs: &[OwnerReference]) -> Vec<String> {
    let mut errs = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        if r.name.is_empty() {
            errs.push(format!(
                "metadata.ownerReferences[{i}].name: Invalid value: \"\": name must not be empty"
            ));
        }
        if r.uid == 0 {
            errs.push(format!(
                "metadata.ownerReferences[{i}].uid: Invalid value: \"\": uid must not be empty"
            ));
        }
    }
    let controllers: Vec<&OwnerReference> = refs.iter().filter(|r| r.controller).collect();
    if controllers.len() > 1 {
        let found = controllers
            .iter()
            .map(|r| format!("ReplicaSet/{}", r.name))
            .collect::<Vec<_>>()
            .join(" and ");
        errs.push(format!(
            "metadata.ownerReferences: Invalid value: []v1.OwnerReference{{...}}: Only one reference can have Controller set to true. Found \"true\" in references for {found}"
        ));
    }
    errs
}

/// `ValidateReplicaSet` on create.
pub fn replicaset_create_errors(rs: &ReplicaSet) -> Vec<String> {
    let mut errs = name_errors(&rs.meta.name);
    errs.extend(owner_reference_errors(&rs.meta.owner_references));
    let spec = &rs.spec;
    if spec.replicas < 0 {
        errs.push(format!(
            "spec.replicas: Invalid value: {}: must be greater than or equal to 0",
            spec.replicas
        ));
    }
    if spec.min_ready_seconds < 0 {
        errs.push(format!(
            "spec.minReadySeconds: Invalid value: {}: must be greater than or equal to 0",
            spec.min_ready_seconds
        ));
    }
    if spec.selector.is_empty() {
        errs.push("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment".into());
    } else {
        errs.extend(selector_errors(&spec.selector));
        if !spec.selector.matches(&spec.template_labels) {
            errs.push(format!(
                "spec.template.metadata.labels: Invalid value: {}: `selector` does not match template `labels`",
                go_map(&spec.template_labels)
            ));
        }
    }
    if !spec.restart_policy_always {
        errs.push(
            "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""
                .into(),
        );
    }
    errs
}

/// `ValidateReplicaSetUpdate`: create rules plus the apps/v1 selector immutability.
pub fn replicaset_update_errors(old: &ReplicaSet, new: &ReplicaSet) -> Vec<String> {
    let mut errs = replicaset_create_errors(new);
    if old.spec.selector != new.spec.selector {
        errs.push(format!(
            "spec.selector: Invalid value: {:?}: field is immutable",
            new.spec.selector.to_string()
        ));
    }
    errs
}

/// `ValidateReplicaSetStatus`: counts are non-negative and nested (fully labeled, ready and
/// available never exceed replicas; available never exceeds ready).
pub fn replicaset_status_errors(status: &crate::object::ReplicaSetStatus) -> Vec<String> {
    let mut errs = Vec::new();
    let fields = [
        ("replicas", status.replicas),
        ("fullyLabeledReplicas", status.fully_labeled_replicas),
        ("readyReplicas", status.ready_replicas),
        ("availableReplicas", status.available_replicas),
    ];
    for (name, value) in fields {
        if value < 0 {
            errs.push(format!(
                "status.{name}: Invalid value: {value}: must be greater than or equal to 0"
            ));
        }
    }
    for (name, value) in &fields[1..] {
        if *value > status.replicas {
            errs.push(format!(
                "status.{name}: Invalid value: {value}: cannot be greater than status.replicas"
            ));
        }
    }
    if status.available_replicas > status.ready_replicas {
        errs.push(format!(
            "status.availableReplicas: Invalid value: {}: cannot be greater than readyReplicas",
            status.available_replicas
        ));
    }
    errs
}

/// Pod create/update validation, as far as the model's fields go.
pub fn pod_errors(pod: &Pod) -> Vec<String> {
    let mut errs = if pod.meta.name.is_empty() && pod.meta.generate_name.is_none() {
        name_errors("")
    } else if pod.meta.name.is_empty() {
        vec![]
    } else {
        name_errors(&pod.meta.name)
    };
    errs.extend(owner_reference_errors(&pod.meta.owner_references));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::labels;

    fn frontend() -> ReplicaSet {
        ReplicaSet::new(
            "frontend",
            3,
            LabelSelector::match_labels(&[("tier", "frontend")]),
            labels(&[("tier", "frontend")]),
        )
    }

    #[test]
    fn valid_frontend_passes() {
        assert!(replicaset_create_errors(&frontend()).is_empty());
    }

    #[test]
    fn mismatched_template_labels_are_rejected_like_the_real_api() {
        let mut rs = frontend();
        rs.spec.template_labels = labels(&[("tier", "backend")]);
        let errs = replicaset_create_errors(&rs);
        assert_eq!(
            errs,
            vec!["spec.template.metadata.labels: Invalid value: map[string]string{\"tier\":\"backend\"}: `selector` does not match template `labels`"]
        );
    }

    #[test]
    fn empty_selector_negative_replicas_and_bad_name() {
        let mut rs = frontend();
        rs.meta.name = "Frontend".into();
        rs.spec.replicas = -1;
        rs.spec.selector = LabelSelector::default();
        let errs = replicaset_create_errors(&rs);
        assert_eq!(errs.len(), 3, "{errs:#?}");
        assert!(errs[0].starts_with("metadata.name: Invalid value: \"Frontend\""));
        assert!(errs[1].starts_with("spec.replicas: Invalid value: -1"));
        assert!(errs[2].starts_with("spec.selector: Invalid value"));
    }

    #[test]
    fn selector_is_immutable() {
        let old = frontend();
        let mut new = frontend();
        new.spec.selector = LabelSelector::match_labels(&[("tier", "frontend"), ("x", "y")]);
        new.spec.template_labels = labels(&[("tier", "frontend"), ("x", "y")]);
        let errs = replicaset_update_errors(&old, &new);
        assert!(
            errs.iter().any(|e| e.ends_with("field is immutable")),
            "{errs:?}"
        );
    }

    #[test]
    fn two_controller_references_are_rejected() {
        let refs = vec![
            OwnerReference::controller_of("a", 1),
            OwnerReference::controller_of("b", 2),
        ];
        let errs = owner_reference_errors(&refs);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].contains("Only one reference can have Controller set to true"));
        assert!(errs[0].ends_with("ReplicaSet/a and ReplicaSet/b"));
    }
}
