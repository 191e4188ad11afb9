//! Which manifest fields the model covers: the table that makes the abstraction total.
//!
//! Every field of a manifest is one of:
//!
//! - **modelled**: read into the model object ([`super`] lists them);
//! - **opaque**: carried to a real cluster unchanged, and read by no decision of the
//!   ReplicaSet controller, the garbage collector or the API rules the model covers — each
//!   with its reason below;
//! - **rejected**: anything else. A field the model does not cover could change what a real
//!   cluster does where the model cannot follow, so a scenario may not use it; the error names
//!   the field, its line and why.
//!
//! Opaque fields and why:
//!
//! - an object's own `metadata.annotations` (but a pod's deletion cost, which is modelled): they
//!   are read by none of the covered rules (kubectl's `last-applied-configuration` included).
//! - `containers`, `initContainers`: the container payload; the controller copies the
//!   template into each pod and never reads it, and readiness comes from scenario steps.
//! - `volumes`: mounted by the kubelet only.
//! - `terminationGracePeriodSeconds`: how long a real kubelet waits; in the model a graceful
//!   deletion ends at a `finishDeletion` step.
//! - `securityContext`, `serviceAccountName`, `serviceAccount`, `automountServiceAccountToken`,
//!   `imagePullSecrets`, `dnsPolicy`, `dnsConfig`, `hostname`, `subdomain`,
//!   `enableServiceLinks`, `hostAliases`, `setHostnameAsFQDN`, `shareProcessNamespace`: the
//!   pod's runtime environment, read by the kubelet only.
//!
//! The template's `metadata.annotations` are modelled, not opaque: no rule of the controller
//! reads them, but they are part of `spec`, and pkg/registry/apps/replicaset/strategy.go
//! `PrepareForUpdate` bumps `metadata.generation` on any change of `spec`
//! (`apiequality.Semantic.DeepEqual`), so an apply that changes only a template annotation
//! changes the generation and then `status.observedGeneration` (test/integration/replicaset/
//! replicaset_test.go `TestSpecReplicasChange`). The deletion cost among them stays rejected:
//! the model's pods take no annotations from the template, so the pods it makes all cost 0.

use crate::yaml::{Document, Error, FieldPath};
use rsmc_spec::object::POD_DELETION_COST;
use serde_json::Value;

/// What the model does with a field (and, for a mapping, with the fields inside it).
#[derive(Debug)]
pub enum Coverage {
    /// Read into the model object (and type-checked by k8s-openapi).
    Modelled,
    /// Passed to a cluster, not read by any covered rule: the reason.
    Opaque(&'static str),
    /// Not covered: the reason, shown in the error.
    Rejected(&'static str),
    /// Only this value (the API's default) is covered: the value and why.
    Only(&'static str, &'static str),
    /// A mapping: the fields named here, and the rule for every other key (which may be another
    /// `Fields` to share a list, or [`Coverage::Unknown`]).
    Fields(&'static [(&'static str, Coverage)], &'static Coverage),
    /// A sequence whose every item follows the rule.
    Each(&'static Coverage),
    /// A key no rule names: a misspelling or a field the model does not cover.
    Unknown,
}

use Coverage::{Each, Fields, Modelled, Only, Opaque, Rejected, Unknown};

const SET_BY_SERVER: &str = "set by the API server, not by a manifest";
const ANNOTATIONS: &str =
    "annotations are read by none of the controller's, the garbage collector's or the API's covered rules";
const PAYLOAD: &str = "container payload: copied into pods, never read by the controller";
const RUNTIME: &str = "the pod's runtime environment, read by the kubelet only";
const PLACEMENT: &str = "pods are placed by scenario steps, not by a scheduler";

/// Object metadata the model does not cover, shared by ReplicaSets and pods.
const OBJECT_META: Coverage = Fields(
    &[
        ("namespace", Rejected("scenarios run in a namespace of their own")),
        (
            "generateName",
            Rejected("steps refer to the objects a user creates by name: give metadata.name"),
        ),
        (
            "ownerReferences",
            Rejected("a user's objects start unowned: owners are set by the controller and the garbage collector"),
        ),
        (
            "finalizers",
            Rejected("the model's finalizers are the garbage collector's own (orphan, foregroundDeletion)"),
        ),
        ("uid", Rejected(SET_BY_SERVER)),
        ("resourceVersion", Rejected(SET_BY_SERVER)),
        ("generation", Rejected(SET_BY_SERVER)),
        ("creationTimestamp", Rejected(SET_BY_SERVER)),
        ("deletionTimestamp", Rejected(SET_BY_SERVER)),
        ("deletionGracePeriodSeconds", Rejected(SET_BY_SERVER)),
        ("managedFields", Rejected(SET_BY_SERVER)),
        ("selfLink", Rejected(SET_BY_SERVER)),
    ],
    &Unknown,
);

/// Pod spec fields whose verdict is the same in a bare pod and in a template.
const POD_SPEC_COMMON: Coverage = Fields(
    &[
        ("containers", Opaque(PAYLOAD)),
        ("initContainers", Opaque(PAYLOAD)),
        ("volumes", Opaque("mounted by the kubelet only")),
        (
            "terminationGracePeriodSeconds",
            Opaque("a graceful deletion ends at the scenario's finishDeletion step"),
        ),
        ("securityContext", Opaque(RUNTIME)),
        ("serviceAccountName", Opaque(RUNTIME)),
        ("serviceAccount", Opaque(RUNTIME)),
        ("automountServiceAccountToken", Opaque(RUNTIME)),
        ("imagePullSecrets", Opaque(RUNTIME)),
        ("dnsPolicy", Opaque(RUNTIME)),
        ("dnsConfig", Opaque(RUNTIME)),
        ("hostname", Opaque(RUNTIME)),
        ("subdomain", Opaque(RUNTIME)),
        ("enableServiceLinks", Opaque(RUNTIME)),
        ("hostAliases", Opaque(RUNTIME)),
        ("setHostnameAsFQDN", Opaque(RUNTIME)),
        ("shareProcessNamespace", Opaque(RUNTIME)),
        ("nodeSelector", Rejected(PLACEMENT)),
        ("affinity", Rejected(PLACEMENT)),
        ("tolerations", Rejected(PLACEMENT)),
        ("topologySpreadConstraints", Rejected(PLACEMENT)),
        ("schedulingGates", Rejected(PLACEMENT)),
        ("schedulerName", Rejected(PLACEMENT)),
        ("priorityClassName", Rejected(PLACEMENT)),
        ("priority", Rejected(PLACEMENT)),
        ("preemptionPolicy", Rejected(PLACEMENT)),
        (
            "activeDeadlineSeconds",
            Rejected("a real kubelet would fail the pod by itself; failures are scenario steps"),
        ),
        (
            "readinessGates",
            Rejected("readiness comes from the scenario's kubelet steps"),
        ),
    ],
    &Unknown,
);

const SELECTOR: Coverage = Fields(
    &[
        ("matchLabels", Modelled),
        (
            "matchExpressions",
            Each(&Fields(
                &[
                    ("key", Modelled),
                    ("operator", Modelled),
                    ("values", Modelled),
                ],
                &Unknown,
            )),
        ),
    ],
    &Unknown,
);

const TEMPLATE: Coverage = Fields(
    &[
        (
            "metadata",
            Fields(
                &[
                    ("labels", Modelled),
                    (
                        "annotations",
                        Fields(
                            &[(
                                POD_DELETION_COST,
                                Rejected("the model's pods take no annotations from their template: the pods it makes all cost 0"),
                            )],
                            &Modelled,
                        ),
                    ),
                ],
                &Unknown,
            ),
        ),
        (
            "spec",
            Fields(
                &[
                    ("restartPolicy", Modelled),
                    (
                        "nodeName",
                        Rejected("a template's pods are bound by scenario steps (schedule), not by the template"),
                    ),
                ],
                &POD_SPEC_COMMON,
            ),
        ),
    ],
    &Unknown,
);

/// An apps/v1 ReplicaSet.
pub const REPLICASET: Coverage = Fields(
    &[
        ("apiVersion", Modelled),
        ("kind", Modelled),
        (
            "metadata",
            Fields(
                &[
                    ("name", Modelled),
                    ("labels", Modelled),
                    ("annotations", Opaque(ANNOTATIONS)),
                ],
                &OBJECT_META,
            ),
        ),
        (
            "spec",
            Fields(
                &[
                    ("replicas", Modelled),
                    ("selector", SELECTOR),
                    ("minReadySeconds", Modelled),
                    ("template", TEMPLATE),
                ],
                &Unknown,
            ),
        ),
        ("status", Rejected("status is written by the controller")),
    ],
    &Unknown,
);

/// A v1 Pod.
pub const POD: Coverage = Fields(
    &[
        ("apiVersion", Modelled),
        ("kind", Modelled),
        (
            "metadata",
            Fields(
                &[
                    ("name", Modelled),
                    ("labels", Modelled),
                    (
                        "annotations",
                        Fields(&[(POD_DELETION_COST, Modelled)], &Opaque(ANNOTATIONS)),
                    ),
                ],
                &OBJECT_META,
            ),
        ),
        (
            "spec",
            Fields(
                &[
                    ("nodeName", Modelled),
                    (
                        "restartPolicy",
                        Only(
                            "Always",
                            "pod phases come from the scenario's kubelet steps; with another policy a real kubelet ends the pod by itself",
                        ),
                    ),
                ],
                &POD_SPEC_COMMON,
            ),
        ),
        ("status", Rejected("status is written by the kubelet")),
    ],
    &Unknown,
);

impl Coverage {
    /// The rule for `key` in a `Fields` mapping, following the chain of shared lists.
    fn rule_for(&self, key: &str) -> &Coverage {
        match self {
            Fields(fields, others) => fields
                .iter()
                .find(|(name, _)| *name == key)
                .map_or_else(|| others.rule_for(key), |(_, rule)| rule),
            other => other,
        }
    }

    /// The names a `Fields` mapping covers, for the message about an unknown one.
    fn names(&self, out: &mut Vec<&'static str>) {
        if let Fields(fields, others) = self {
            out.extend(fields.iter().map(|(name, _)| *name));
            others.names(out);
        }
    }
}

/// Checks every field of `doc` against `coverage`; the first uncovered field, in the file's
/// order, is the error.
pub fn check(doc: &Document, coverage: &Coverage) -> Result<(), Error> {
    let mut problems = Vec::new();
    walk(doc.value(), coverage, &FieldPath::root(), &mut problems);
    problems
        .into_iter()
        .min_by_key(|(path, _)| doc.position(path))
        .map_or(Ok(()), |(path, message)| Err(doc.error(&path, message)))
}

fn walk(
    value: &Value,
    coverage: &Coverage,
    path: &FieldPath,
    problems: &mut Vec<(FieldPath, String)>,
) {
    match coverage {
        Modelled | Opaque(_) => {}
        Rejected(reason) => problems.push((
            path.clone(),
            format!("not covered by the model ({reason}) — remove it"),
        )),
        Only(allowed, reason) => {
            if value.as_str() != Some(allowed) {
                problems.push((
                    path.clone(),
                    format!("only {allowed} is covered by the model ({reason})"),
                ));
            }
        }
        Fields(..) => {
            // Values of the wrong type are left to the typed parse, which names the type.
            for (key, inner) in value.as_object().into_iter().flatten() {
                let rule = coverage.rule_for(key);
                let here = path.key(key);
                if let Unknown = rule {
                    let mut covered = Vec::new();
                    coverage.names(&mut covered);
                    problems.push((
                        here,
                        format!(
                            "unknown field `{key}`, or one the model does not cover — remove or correct it (fields covered here: {})",
                            covered.join(", ")
                        ),
                    ));
                } else {
                    walk(inner, rule, &here, problems);
                }
            }
        }
        Each(item) => {
            for (i, inner) in value.as_array().into_iter().flatten().enumerate() {
                walk(inner, item, &path.index(i), problems);
            }
        }
        Unknown => problems.push((path.clone(), "not covered by the model".into())),
    }
}
