//! Kubernetes manifests as model objects: an explicit, total abstraction.
//!
//! A scenario applies real manifests (the seed's `frontend.yaml`, `pod-rs.yaml`): the model
//! runs on the objects they abstract to, and a conformance runner applies the same manifests to
//! a real cluster. The two runs are comparable only if the abstraction drops nothing that could
//! matter, so every field of a manifest is accounted for ([`coverage`] holds the table):
//!
//! - **Modelled.** ReplicaSet: `metadata.name`, `metadata.labels`, `spec.replicas` (default 1),
//!   `spec.selector` (`matchLabels`; `matchExpressions` with `In`, `NotIn`, `Exists`,
//!   `DoesNotExist`), `spec.minReadySeconds` (0 only: the model's availability is readiness),
//!   `spec.template.metadata.labels`, `spec.template.metadata.annotations` (but the
//!   deletion-cost annotation, rejected; the controller reads none of them, but changing them
//!   is a spec change that bumps `metadata.generation`), `spec.template.spec.restartPolicy` (the
//!   API accepts only `Always`; any other value reaches the model's validation, which rejects it
//!   as the API server does). Pod: `metadata.name`, `metadata.labels`, the
//!   `controller.kubernetes.io/pod-deletion-cost` annotation (a 32-bit integer), `spec.nodeName`.
//! - **Opaque**: carried to a cluster, read by nothing the model covers; listed with reasons in
//!   [`coverage`] (objects' own annotations, the container payload, the pod's runtime
//!   environment).
//! - **Rejected**: everything else, with the field's path and line: `manifests/x.yaml:9:3:
//!   spec.template.spec.nodeSelector: not covered by the model (pods are placed by scenario
//!   steps, not by a scheduler) — remove it`. That includes misspelt fields (`replica: 3`),
//!   which k8s-openapi, like the API server's decoder, would silently drop.
//!
//! Field types are checked by parsing into k8s-openapi's `ReplicaSet` and `Pod`, and the object
//! must pass the model's API validation (a selector that does not match the template's labels
//! is an error here, naming the file). [`Manifest`] keeps the raw manifest beside the model
//! object; [`to_manifest`] is the inverse, for writing scenarios from model runs.

pub mod coverage;
mod object;
mod write;

pub use object::Object;
pub use write::{pod_manifest, replicaset_manifest, to_manifest, PAUSE_IMAGE};

use crate::yaml::{self, describe, Document, Error, FieldPath};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use rsmc_spec::api::validation::{pod_errors, replicaset_create_errors};
use rsmc_spec::object::{
    deletion_cost, LabelSelector, Operator, Pod, ReplicaSet, Requirement, POD_DELETION_COST,
};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// A manifest as written (for a real cluster) and the model object it abstracts to.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub raw: Value,
    pub object: Object,
}

impl Manifest {
    /// The manifest [`to_manifest`] writes for a model object.
    pub fn of(object: Object) -> Manifest {
        Manifest {
            raw: to_manifest(&object),
            object,
        }
    }
}

/// Every manifest in a (possibly multi-document) file. Empty documents are skipped, as
/// `kubectl apply` skips them; a file with none is an error.
pub fn load_file(path: &Path, validation: Validation) -> Result<Vec<Manifest>, Error> {
    let manifests = yaml::load_file(path)?
        .iter()
        .filter(|doc| !doc.value().is_null())
        .map(|doc| from_document(doc, validation))
        .collect::<Result<Vec<_>, _>>()?;
    if manifests.is_empty() {
        return Err(Error::in_file(path, "no manifest in the file"));
    }
    Ok(manifests)
}

/// The kinds the model covers.
enum Kind {
    ReplicaSet,
    Pod,
}

/// Whether a manifest must pass the model's API validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Validation {
    /// It must: a manifest the API server would refuse is a mistake in the scenario.
    Api,
    /// It need not: the step expects the API server to refuse it (`refused: Invalid`), and
    /// the model's API server decides, as the real one does, when the step runs.
    Refusable,
}

/// One document as a manifest: kind, coverage, types, modelled fields and, unless the step
/// expects a refusal, API validation.
pub fn from_document(doc: &Document, validation: Validation) -> Result<Manifest, Error> {
    let api = |kind: &str, name: &str, errors: Vec<String>| match validation {
        Validation::Api => api_check(doc, kind, name, errors),
        Validation::Refusable => Ok(()),
    };
    let object = match kind(doc)? {
        Kind::ReplicaSet => {
            coverage::check(doc, &coverage::REPLICASET)?;
            let rs = replicaset(doc, doc.deserialize::<apps::ReplicaSet>()?)?;
            api("ReplicaSet", &rs.meta.name, replicaset_create_errors(&rs))?;
            Object::ReplicaSet(Arc::new(rs))
        }
        Kind::Pod => {
            coverage::check(doc, &coverage::POD)?;
            let pod = pod(doc, doc.deserialize::<core::Pod>()?)?;
            api("Pod", &pod.meta.name, pod_errors(&pod))?;
            Object::Pod(Arc::new(pod))
        }
    };
    Ok(Manifest {
        raw: doc.value().clone(),
        object,
    })
}

/// `apiVersion` and `kind`: `apps/v1 ReplicaSet` or `v1 Pod`.
fn kind(doc: &Document) -> Result<Kind, Error> {
    let root = FieldPath::root();
    let mut fields = doc.fields(&root)?;
    let api_version = fields.raw("apiVersion").and_then(Value::as_str);
    let kind = fields.raw("kind").and_then(Value::as_str);
    let covered = "the model covers apps/v1 ReplicaSet and v1 Pod";
    match (api_version, kind) {
        (Some("apps/v1"), Some("ReplicaSet")) => Ok(Kind::ReplicaSet),
        (Some("v1"), Some("Pod")) => Ok(Kind::Pod),
        (Some(v), Some(k @ ("ReplicaSet" | "Pod"))) => Err(fields.error_at(
            "apiVersion",
            format!(
                "{k} is covered as {}, got {v:?}",
                if k == "Pod" { "v1" } else { "apps/v1" }
            ),
        )),
        (_, Some(k)) => Err(fields.error_at("kind", format!("{k} is not covered: {covered}"))),
        (_, None) => Err(match fields.raw("kind") {
            Some(other) => fields.error_at(
                "kind",
                format!("invalid type: {}, expected a string", describe(other)),
            ),
            None => fields.error(format!("missing field `kind` ({covered})")),
        }),
    }
}

/// Fails with the first of `errors`, which the model's validation starts with a field path.
fn api_check(doc: &Document, kind: &str, name: &str, errors: Vec<String>) -> Result<(), Error> {
    match errors.first() {
        None => Ok(()),
        Some(e) => {
            let path = FieldPath::parse(e.split(": ").next().unwrap_or_default());
            Err(Error::at(
                doc.file(),
                doc.position(&path),
                format!(
                    "the API server would reject {kind} {name:?}: {e} (a step that expects this says `refused: Invalid`)"
                ),
            ))
        }
    }
}

fn replicaset(doc: &Document, rs: apps::ReplicaSet) -> Result<ReplicaSet, Error> {
    let root = FieldPath::root();
    let spec_path = root.key("spec");
    let spec = rs.spec.ok_or_else(|| {
        doc.error(
            &root,
            "missing field `spec`: a ReplicaSet needs a selector and a pod template",
        )
    })?;
    let template_path = spec_path.key("template");
    let template = spec.template.ok_or_else(|| {
        doc.error(
            &spec_path,
            "missing field `template`: the API requires a pod template",
        )
    })?;
    let pod_spec_path = template_path.key("spec");
    let pod_spec = template.spec.ok_or_else(|| {
        doc.error(
            &template_path,
            "missing field `spec`: the API requires a pod template's containers",
        )
    })?;
    if pod_spec.containers.is_empty() {
        return Err(doc.error(
            &pod_spec_path.key("containers"),
            "Required value: the API requires at least one container",
        ));
    }
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    if min_ready != 0 {
        return Err(doc.error(
            &spec_path.key("minReadySeconds"),
            format!("{min_ready}: only 0 is modelled (the model's availability is readiness) — remove it"),
        ));
    }
    let template_meta = template.metadata.unwrap_or_default();
    let mut model = ReplicaSet::new(
        &rs.metadata.name.unwrap_or_default(),
        spec.replicas.unwrap_or(1),
        selector(doc, &spec_path.key("selector"), spec.selector)?,
        template_meta.labels.unwrap_or_default(),
    );
    // A template's deletion-cost annotation never gets here: coverage rejects it.
    model.spec.template_annotations = template_meta.annotations.unwrap_or_default();
    model.meta.labels = rs.metadata.labels.unwrap_or_default();
    model.spec.restart_policy_always = pod_spec.restart_policy.is_none_or(|p| p == "Always");
    Ok(model)
}

fn selector(
    doc: &Document,
    path: &FieldPath,
    selector: meta::LabelSelector,
) -> Result<LabelSelector, Error> {
    let match_expressions = selector
        .match_expressions
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let operator = match r.operator.as_str() {
                "In" => Operator::In,
                "NotIn" => Operator::NotIn,
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => {
                    return Err(doc.error(
                        &path.key("matchExpressions").index(i).key("operator"),
                        format!("Unsupported value: {other:?}: supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""),
                    ))
                }
            };
            Ok(Requirement {
                key: r.key,
                operator,
                values: r.values.unwrap_or_default().into_iter().collect(),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(LabelSelector {
        match_labels: selector.match_labels.unwrap_or_default(),
        match_expressions,
    })
}

fn pod(doc: &Document, pod: core::Pod) -> Result<Pod, Error> {
    let root = FieldPath::root();
    let spec = pod.spec.ok_or_else(|| {
        doc.error(
            &root,
            "missing field `spec`: the API requires a pod's containers",
        )
    })?;
    if spec.containers.is_empty() {
        return Err(doc.error(
            &root.key("spec").key("containers"),
            "Required value: the API requires at least one container",
        ));
    }
    let mut model = Pod::new(
        &pod.metadata.name.unwrap_or_default(),
        pod.metadata.labels.unwrap_or_default(),
    );
    model.node_name = spec.node_name;
    if let Some(cost) = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_DELETION_COST))
    {
        model.deletion_cost = Some(deletion_cost(cost).map_err(|e| {
            doc.error(
                &root
                    .key("metadata")
                    .key("annotations")
                    .key(POD_DELETION_COST),
                e,
            )
        })?);
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::object::labels;

    fn parse(text: &str) -> Result<Vec<Manifest>, Error> {
        yaml::load_str(Path::new("m.yaml"), text)?
            .iter()
            .map(|d| from_document(d, Validation::Api))
            .collect()
    }

    const FRONTEND: &str = "\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
  labels:
    app: guestbook
    tier: frontend
spec:
  replicas: 3
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php-redis
        image: gcr.io/google_samples/gb-frontend:v3
";

    fn frontend_with(line: &str, replace: &str) -> String {
        assert!(FRONTEND.contains(line), "{line}");
        FRONTEND.replacen(line, replace, 1)
    }

    /// The ReplicaSet a one-document manifest abstracts to.
    fn replicaset_of(text: &str) -> Arc<ReplicaSet> {
        match &parse(text).unwrap()[0].object {
            Object::ReplicaSet(rs) => rs.clone(),
            other => panic!("not a ReplicaSet: {other:?}"),
        }
    }

    #[test]
    fn frontend_is_modelled() {
        let m = &parse(FRONTEND).unwrap()[0];
        let Object::ReplicaSet(rs) = &m.object else {
            panic!("{m:?}")
        };
        let mut expected = ReplicaSet::new(
            "frontend",
            3,
            LabelSelector::match_labels(&[("tier", "frontend")]),
            labels(&[("tier", "frontend")]),
        );
        expected.meta.labels = labels(&[("app", "guestbook"), ("tier", "frontend")]);
        assert_eq!(**rs, expected);
        assert_eq!(
            m.raw["spec"]["template"]["spec"]["containers"][0]["name"],
            "php-redis"
        );
    }

    #[test]
    fn replicas_default_to_one() {
        let text = frontend_with("  replicas: 3\n", "");
        let rs = replicaset_of(&text);
        assert_eq!(rs.spec.replicas, 1);
    }

    #[test]
    fn misspelt_field_is_named_with_its_line() {
        let err = parse(&frontend_with("  replicas: 3", "  replica: 3")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("m.yaml:9:3: spec.replica: unknown field `replica`"),
            "{msg}"
        );
        assert!(msg.contains("replicas, selector"), "{msg}");
    }

    #[test]
    fn node_selector_in_the_template_is_rejected() {
        let text = frontend_with(
            "      containers:\n",
            "      nodeSelector:\n        disk: ssd\n      containers:\n",
        );
        let err = parse(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.yaml:18:7: spec.template.spec.nodeSelector: not covered by the model (pods are placed by scenario steps, not by a scheduler) — remove it"
        );
    }

    #[test]
    fn rejected_metadata_and_status() {
        for (line, replace, field) in [
            (
                "  name: frontend\n",
                "  name: frontend\n  namespace: prod\n",
                "metadata.namespace",
            ),
            (
                "  name: frontend\n",
                "  generateName: frontend-\n",
                "metadata.generateName",
            ),
            (
                "      labels:\n        tier: frontend\n    spec:\n",
                "      labels:\n        tier: frontend\n    spec:\n      nodeName: node-1\n",
                "spec.template.spec.nodeName",
            ),
            (
                "  replicas: 3\n",
                "  replicas: 3\nstatus:\n  replicas: 3\n",
                "status",
            ),
        ] {
            let err = parse(&frontend_with(line, replace)).unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!(": {field}: not covered by the model")),
                "{err}"
            );
        }
    }

    #[test]
    fn opaque_fields_are_carried() {
        let text = frontend_with(
            "        image: gcr.io/google_samples/gb-frontend:v3\n",
            "        image: gcr.io/google_samples/gb-frontend:v3\n        ports:\n        - containerPort: 80\n      terminationGracePeriodSeconds: 5\n",
        );
        let m = &parse(&text).unwrap()[0];
        assert_eq!(
            m.raw["spec"]["template"]["spec"]["terminationGracePeriodSeconds"],
            5
        );
    }

    #[test]
    fn type_errors_name_the_field() {
        let err = parse(&frontend_with("  replicas: 3", "  replicas: three")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.yaml:9:3: spec.replicas: invalid type: string \"three\", expected i32"
        );
    }

    #[test]
    fn min_ready_seconds_other_than_zero_is_not_modelled() {
        let err = parse(&frontend_with(
            "  replicas: 3\n",
            "  replicas: 3\n  minReadySeconds: 10\n",
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.minReadySeconds: 10: only 0 is modelled"),
            "{err}"
        );
        assert!(parse(&frontend_with(
            "  replicas: 3\n",
            "  replicas: 3\n  minReadySeconds: 0\n"
        ))
        .is_ok());
    }

    #[test]
    fn api_invalid_manifest_is_rejected_with_the_field() {
        let err = parse(&frontend_with(
            "      labels:\n        tier: frontend\n    spec",
            "      labels:\n        tier: backend\n    spec",
        ))
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("m.yaml:15:7: the API server would reject ReplicaSet \"frontend\": spec.template.metadata.labels: Invalid value"), "{msg}");
        let err = parse(&frontend_with(
            "    spec:\n",
            "    spec:\n      restartPolicy: Never\n",
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.template.spec.restartPolicy: Unsupported value"),
            "{err}"
        );
    }

    #[test]
    fn other_kinds_are_named() {
        let err =
            parse("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.yaml:2:1: kind: Deployment is not covered: the model covers apps/v1 ReplicaSet and v1 Pod"
        );
        let err = parse("apiVersion: extensions/v1beta1\nkind: ReplicaSet\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("m.yaml:1:1: apiVersion: ReplicaSet is covered as apps/v1"),
            "{err}"
        );
        let err = parse("metadata: {name: x}\n").unwrap_err();
        assert!(err.to_string().contains("missing field `kind`"), "{err}");
    }

    const POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: pod1
  labels:
    tier: frontend
  annotations:
    controller.kubernetes.io/pod-deletion-cost: \"-5\"
    note: anything
spec:
  nodeName: node-1
  containers:
  - name: hello1
    image: gcr.io/google-samples/hello-app:2.0
";

    #[test]
    fn pod_fields_are_modelled() {
        let Object::Pod(pod) = &parse(POD).unwrap()[0].object else {
            panic!()
        };
        assert_eq!(pod.meta.labels, labels(&[("tier", "frontend")]));
        assert_eq!(pod.node_name.as_deref(), Some("node-1"));
        assert_eq!(pod.deletion_cost, Some(-5));
    }

    #[test]
    fn bad_deletion_cost_is_named() {
        let err = parse(&POD.replace("\"-5\"", "cheap")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "m.yaml:8:5: metadata.annotations.controller.kubernetes.io/pod-deletion-cost: Invalid value: \"cheap\": must be a 32bit integer, without a plus sign or leading zeros"
        );
        // As upstream reads it (getDeletionCostFromPodAnnotations): Go's ParseInt would take
        // both, the first-digit rule does not.
        for bad in ["\"+5\"", "\"007\""] {
            let err = parse(&POD.replace("\"-5\"", bad)).unwrap_err();
            assert!(
                err.to_string()
                    .contains("without a plus sign or leading zeros"),
                "{err}"
            );
        }
        let err = parse(&POD.replace("\"-5\"", "5")).unwrap_err();
        assert!(
            err.to_string()
                .contains("invalid type: integer `5`, expected a string"),
            "{err}"
        );
    }

    #[test]
    fn pod_restart_policy_other_than_always_is_rejected() {
        let text = POD.replace("  nodeName: node-1\n", "  restartPolicy: Never\n");
        let err = parse(&text).unwrap_err();
        assert!(
            err.to_string()
                .contains("spec.restartPolicy: only Always is covered"),
            "{err}"
        );
        assert!(parse(&POD.replace("  nodeName: node-1\n", "  restartPolicy: Always\n")).is_ok());
    }

    #[test]
    fn template_annotations_are_modelled() {
        let text = frontend_with(
            "        tier: frontend\n    spec:",
            "        tier: frontend\n      annotations:\n        test: annotation\n    spec:",
        );
        let rs = replicaset_of(&text);
        assert_eq!(
            rs.spec.template_annotations,
            labels(&[("test", "annotation")])
        );
        // Only the template's: the ReplicaSet's own annotations stay opaque.
        let text = frontend_with(
            "  name: frontend\n",
            "  name: frontend\n  annotations:\n    note: anything\n",
        );
        let rs = replicaset_of(&text);
        assert!(rs.spec.template_annotations.is_empty());
    }

    #[test]
    fn a_template_deletion_cost_is_unsupported() {
        let text = frontend_with(
            "        tier: frontend\n    spec:",
            "        tier: frontend\n      annotations:\n        controller.kubernetes.io/pod-deletion-cost: \"1\"\n    spec:",
        );
        let err = parse(&text).unwrap_err();
        assert!(err.to_string().contains("spec.template.metadata.annotations.controller.kubernetes.io/pod-deletion-cost: not covered"), "{err}");
    }

    #[test]
    fn set_based_selectors_are_modelled() {
        let text = frontend_with(
            "    matchLabels:\n      tier: frontend\n",
            "    matchExpressions:\n    - {key: tier, operator: In, values: [frontend, web]}\n    - {key: track, operator: DoesNotExist}\n",
        );
        let rs = replicaset_of(&text);
        assert_eq!(
            rs.spec.selector.to_string(),
            "tier in (frontend,web),!track"
        );
        let err = parse(&text.replace("DoesNotExist", "Missing")).unwrap_err();
        assert!(
            err.to_string().contains(
                "spec.selector.matchExpressions[1].operator: Unsupported value: \"Missing\""
            ),
            "{err}"
        );
    }

    #[test]
    fn model_to_manifest_and_back() {
        let mut rs = ReplicaSet::new(
            "canary",
            2,
            LabelSelector {
                match_labels: labels(&[("tier", "frontend")]),
                match_expressions: vec![Requirement {
                    key: "track".into(),
                    operator: Operator::In,
                    values: ["canary".to_string()].into(),
                }],
            },
            labels(&[("tier", "frontend"), ("track", "canary")]),
        );
        rs.meta.labels = labels(&[("app", "guestbook")]);
        rs.spec.template_annotations = labels(&[("test", "annotation")]);
        let mut pod = Pod::new("pod1", labels(&[("tier", "frontend")]));
        pod.node_name = Some("node-1".into());
        pod.deletion_cost = Some(7);
        for object in [
            Object::ReplicaSet(Arc::new(rs)),
            Object::Pod(Arc::new(pod)),
            Object::Pod(Arc::new(Pod::new("bare", Default::default()))),
        ] {
            let raw = to_manifest(&object);
            let back = from_document(
                &Document::from_value(Path::new("gen"), raw.clone()),
                Validation::Api,
            )
            .unwrap();
            assert_eq!(back.object, object, "{raw:#}");
            assert_eq!(back.raw, raw);
        }
    }
}
