//! What differs between a model object and a cluster's, field by field.
//!
//! The oracle compares objects through their [`RsView`] and [`PodView`] (see [`super::binding`]):
//! equal or not. When a recorded write or a settled state matches nothing the model allows, a
//! controller author needs the fields that differ from the closest allowed object, named as
//! the API names them (`status.terminatingReplicas`), with both values. This module derives
//! that list from the same views, so it covers exactly what the oracle compares: each view is
//! destructured without `..`, and a field added to a view does not compile until it is named
//! here too.

use super::binding::{pod_view, rs_view, Binding, ModelObjects, PodView, RsView};
use crate::manifest::Object;
use crate::observed::Snapshot;
use rsmc_spec::model::NamedOwner;
use rsmc_spec::object::{Finalizer, Labels, OwnerKind, Pod, POD_DELETION_COST};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// One field that differs: its API path and its value on each side ("absent" when the field
/// is not there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// The field's path as the API names it, e.g. `status.terminatingReplicas`; prefixed by
    /// the object (`rs/frontend status.replicas`) where a state of several objects is compared.
    pub field: String,
    /// The value the cluster showed.
    pub seen: String,
    /// The value in the closest object the model allows.
    pub allowed: String,
}

impl FieldDiff {
    fn new(field: &str, seen: String, allowed: String) -> Self {
        FieldDiff {
            field: field.to_string(),
            seen,
            allowed,
        }
    }

    /// The same difference, its field prefixed by the object it is in (`pod/frontend-x7k2p`).
    pub fn of(mut self, object: &str) -> Self {
        self.field = format!("{object} {}", self.field);
        self
    }

    /// The object the field is in (`rs/frontend`), where [`FieldDiff::of`] named one.
    pub fn object(&self) -> Option<&str> {
        self.field.split_once(' ').map(|(object, _)| object)
    }

    /// The field's API path alone (`status.terminatingReplicas`), without its object.
    pub fn path(&self) -> &str {
        self.field
            .split_once(' ')
            .map_or(self.field.as_str(), |(_, path)| path)
    }
}

impl fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: seen {}, allowed {}",
            self.field, self.seen, self.allowed
        )
    }
}

const ABSENT: &str = "absent";

fn labels(l: &Labels) -> String {
    if l.is_empty() {
        return ABSENT.to_string();
    }
    let pairs: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(",")
}

fn optional<T: fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| ABSENT.to_string(), |v| v.to_string())
}

fn finalizers(f: &BTreeSet<Finalizer>) -> String {
    if f.is_empty() {
        return ABSENT.to_string();
    }
    let names: Vec<&str> = f.iter().map(|f| f.as_str()).collect();
    format!("[{}]", names.join(","))
}

fn deletion(deleting: bool) -> String {
    if deleting { "set" } else { ABSENT }.to_string()
}

/// Pushes a difference when the two values differ.
struct Diffs(Vec<FieldDiff>);

impl Diffs {
    fn check<T: PartialEq>(
        &mut self,
        field: &str,
        seen: &T,
        allowed: &T,
        show: impl Fn(&T) -> String,
    ) {
        if seen != allowed {
            self.0
                .push(FieldDiff::new(field, show(seen), show(allowed)));
        }
    }

    /// `metadata.deletionTimestamp` (set or not) and `metadata.finalizers`, which both kinds have.
    fn deletion(
        &mut self,
        seen: (bool, &BTreeSet<Finalizer>),
        allowed: (bool, &BTreeSet<Finalizer>),
    ) {
        self.check("metadata.deletionTimestamp", &seen.0, &allowed.0, |d| {
            deletion(*d)
        });
        self.check("metadata.finalizers", seen.1, allowed.1, finalizers);
    }
}

/// The fields in which ReplicaSet view `seen` differs from `allowed`, in the API's order.
pub fn replicaset_diffs(seen: &RsView, allowed: &RsView) -> Vec<FieldDiff> {
    let RsView {
        name,
        labels: rs_labels,
        generation,
        replicas,
        selector,
        template_labels,
        template_annotations,
        min_ready_seconds,
        status,
        deleting,
        finalizers: rs_finalizers,
    } = seen;
    let (s_replicas, s_fully, s_ready, s_available, s_terminating, s_observed, s_failure) = status;
    let (a_replicas, a_fully, a_ready, a_available, a_terminating, a_observed, a_failure) =
        &allowed.status;
    let mut d = Diffs(Vec::new());
    d.check("metadata.name", name, &allowed.name, String::clone);
    d.check("metadata.labels", rs_labels, &allowed.labels, labels);
    d.check(
        "metadata.generation",
        generation,
        &allowed.generation,
        u32::to_string,
    );
    d.deletion(
        (*deleting, rs_finalizers),
        (allowed.deleting, &allowed.finalizers),
    );
    d.check("spec.replicas", replicas, &allowed.replicas, i32::to_string);
    d.check("spec.selector", selector, &allowed.selector, |s| {
        s.to_string()
    });
    d.check(
        "spec.minReadySeconds",
        min_ready_seconds,
        &allowed.min_ready_seconds,
        i32::to_string,
    );
    d.check(
        "spec.template.metadata.labels",
        template_labels,
        &allowed.template_labels,
        labels,
    );
    d.check(
        "spec.template.metadata.annotations",
        template_annotations,
        &allowed.template_annotations,
        labels,
    );
    d.check("status.replicas", s_replicas, a_replicas, i32::to_string);
    d.check(
        "status.fullyLabeledReplicas",
        s_fully,
        a_fully,
        i32::to_string,
    );
    d.check("status.readyReplicas", s_ready, a_ready, i32::to_string);
    d.check(
        "status.availableReplicas",
        s_available,
        a_available,
        i32::to_string,
    );
    d.check(
        "status.terminatingReplicas",
        s_terminating,
        a_terminating,
        optional,
    );
    d.check(
        "status.observedGeneration",
        s_observed,
        a_observed,
        u32::to_string,
    );
    d.check(
        "status.conditions[ReplicaFailure]",
        s_failure,
        a_failure,
        |f| optional(&f.map(|f| format!("{f:?}"))),
    );
    d.0
}

/// The fields in which pod view `seen` differs from `allowed`, in the API's order.
pub fn pod_diffs(seen: &PodView, allowed: &PodView) -> Vec<FieldDiff> {
    let PodView {
        fixed_name,
        generate_name,
        labels: pod_labels,
        node,
        phase,
        ready,
        deleting,
        grace_over,
        restarts,
        deletion_cost,
        finalizers: pod_finalizers,
        owners,
    } = seen;
    let mut d = Diffs(Vec::new());
    d.check("metadata.name", fixed_name, &allowed.fixed_name, |n| {
        n.clone().unwrap_or_else(|| "generated".to_string())
    });
    d.check(
        "metadata.generateName",
        generate_name,
        &allowed.generate_name,
        optional,
    );
    d.check("metadata.labels", pod_labels, &allowed.labels, labels);
    d.check(
        &format!("metadata.annotations[{POD_DELETION_COST}]"),
        deletion_cost,
        &allowed.deletion_cost,
        optional,
    );
    d.check(
        "metadata.ownerReferences",
        owners,
        &allowed.owners,
        |owners| {
            if owners.is_empty() {
                return ABSENT.to_string();
            }
            let refs: Vec<String> = owners
                .iter()
                .map(|(kind, name, controller, block)| {
                    // A ReplicaSet by its name, as the tables name them; another kind as
                    // kubectl does (`statefulset.apps/web`).
                    let owner = match kind {
                        OwnerKind::ReplicaSet => name.clone(),
                        OwnerKind::Other(kind) => NamedOwner::Other {
                            kind: kind.clone(),
                            name: name.clone(),
                        }
                        .to_string(),
                    };
                    format!("{owner} (controller={controller}, blockOwnerDeletion={block})")
                })
                .collect();
            format!("[{}]", refs.join(", "))
        },
    );
    d.deletion(
        (*deleting, pod_finalizers),
        (allowed.deleting, &allowed.finalizers),
    );
    d.check(
        "metadata.deletionGracePeriodSeconds",
        grace_over,
        &allowed.grace_over,
        |over| if *over { "0" } else { "absent or above 0" }.to_string(),
    );
    d.check("spec.nodeName", node, &allowed.node, optional);
    d.check("status.phase", phase, &allowed.phase, |p| {
        p.as_str().to_string()
    });
    d.check("status.conditions[Ready]", ready, &allowed.ready, |r| {
        if *r { "True" } else { "False" }.to_string()
    });
    d.check(
        "status.containerStatuses.restartCount",
        restarts,
        &allowed.restarts,
        u32::to_string,
    );
    d.0
}

/// The fields in which the cluster's object `seen` differs from the model's `allowed`, the
/// owners' UIDs read through `b` (a reference to a ReplicaSet of the same name but another
/// UID, one deleted and made again, is a difference the views alone do not show). Objects of
/// different kinds differ in `kind` alone.
pub fn differing(b: &Binding, seen: &Object, allowed: &Object) -> Vec<FieldDiff> {
    match (seen, allowed) {
        (Object::ReplicaSet(s), Object::ReplicaSet(a)) => {
            replicaset_diffs(&rs_view(s), &rs_view(a))
        }
        (Object::Pod(s), Object::Pod(a)) => pod_differences(b, s, a),
        (s, a) => vec![FieldDiff::new("kind", kind(s), kind(a))],
    }
}

/// The fields in which a cluster's settled objects (`seen`) differ from a model state's
/// (`allowed`), each prefixed by its object (`rs/frontend`, `pod/frontend-x7k2p`, named as the
/// cluster names it), and each object on one side only as one difference of its own.
/// ReplicaSets and user-named pods are paired by name, generated pods by `b` where bound and
/// otherwise each model pod, in order, with the free cluster pod of the same `generateName`
/// it differs least from: a closest pairing, not a best one, which is what a reader needs to
/// see what sets the two states apart.
pub fn state_differences(b: &Binding, allowed: ModelObjects, seen: &Snapshot) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    let presence = |object: String, seen: bool| {
        let (s, a) = if seen {
            ("present", ABSENT)
        } else {
            (ABSENT, "present")
        };
        FieldDiff {
            field: object,
            seen: s.to_string(),
            allowed: a.to_string(),
        }
    };
    let names: BTreeSet<&String> = allowed
        .replicasets
        .keys()
        .chain(seen.replicasets.keys())
        .collect();
    for name in names {
        let object = format!("rs/{name}");
        match (seen.replicasets.get(name), allowed.replicasets.get(name)) {
            (Some(s), Some(a)) => out.extend(
                replicaset_diffs(&rs_view(s), &rs_view(a))
                    .into_iter()
                    .map(|d| d.of(&object)),
            ),
            (Some(_), None) => out.push(presence(object, true)),
            (None, _) => out.push(presence(object, false)),
        }
    }
    // The cluster's generated pods no model pod is bound to, for the model's unbound ones.
    let mut free_seen: Vec<&Pod> = seen
        .pods
        .values()
        .map(|p| &**p)
        .filter(|p| p.meta.generate_name.is_some() && b.model_name(&p.meta.name).is_none())
        .collect();
    let mut paired: BTreeSet<&str> = BTreeSet::new();
    let pod_diffs_of = |s: &Pod, a: &Pod| pod_differences(b, s, a);
    for (name, a) in allowed.pods {
        // The cluster's name for this pod: its own, or the bound one.
        let named = match &a.meta.generate_name {
            None => Some(name.as_str()),
            Some(_) => b.observed_name(name),
        };
        let found = match (named, &a.meta.generate_name) {
            (Some(n), _) => seen.pods.get(n).map(|p| &**p),
            (None, Some(prefix)) => free_seen
                .iter()
                .enumerate()
                .filter(|(_, p)| p.meta.generate_name.as_ref() == Some(prefix))
                .min_by_key(|(_, p)| pod_diffs_of(p, a).len())
                .map(|(i, _)| i)
                .map(|i| free_seen.remove(i)),
            (None, None) => None,
        };
        match found {
            Some(s) => {
                paired.insert(&s.meta.name);
                let object = format!("pod/{}", s.meta.name);
                out.extend(pod_diffs_of(s, a).into_iter().map(|d| d.of(&object)));
            }
            None => {
                let shown = match (named, &a.meta.generate_name) {
                    (Some(n), _) => format!("pod/{n}"),
                    (None, Some(prefix)) => format!("pod/{prefix}(generated)"),
                    (None, None) => format!("pod/{name}"),
                };
                out.push(presence(shown, false));
            }
        }
    }
    for name in seen.pods.keys() {
        if !paired.contains(name.as_str()) {
            out.push(presence(format!("pod/{name}"), true));
        }
    }
    out
}

/// [`pod_diffs`], and the owners' UIDs through `b`.
fn pod_differences(b: &Binding, s: &Pod, a: &Pod) -> Vec<FieldDiff> {
    let mut diffs = pod_diffs(&pod_view(s), &pod_view(a));
    let same_owners = s
        .meta
        .owner_references
        .iter()
        .zip(&a.meta.owner_references)
        .all(|(s, a)| b.bound_uids_agree(a.uid, s.uid));
    if diffs.iter().all(|d| d.field != "metadata.ownerReferences") && !same_owners {
        diffs.push(FieldDiff::new(
            "metadata.ownerReferences.uid",
            "another object's".to_string(),
            "the owner's".to_string(),
        ));
    }
    diffs
}

fn kind(o: &Object) -> String {
    match o {
        Object::ReplicaSet(_) => "ReplicaSet",
        Object::Pod(_) => "Pod",
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::binding::{same_pod, same_replicaset};
    use rsmc_spec::object::Meta;
    use rsmc_spec::object::{
        labels as mk, LabelSelector, OwnerReference, Pod, PodPhase, ReplicaFailure, ReplicaSet,
        ReplicaSetSpec, ReplicaSetStatus,
    };
    use std::sync::Arc;

    fn rs() -> ReplicaSet {
        let mut meta = Meta::named("frontend", mk(&[("app", "guestbook")]));
        meta.uid = 1;
        ReplicaSet {
            meta,
            spec: ReplicaSetSpec {
                replicas: 3,
                selector: LabelSelector::match_labels(&[("tier", "frontend")]),
                template_labels: mk(&[("tier", "frontend")]),
                template_annotations: Labels::new(),
                min_ready_seconds: 0,
                restart_policy_always: true,
            },
            status: ReplicaSetStatus {
                replicas: 3,
                fully_labeled_replicas: 3,
                ready_replicas: 3,
                available_replicas: 3,
                terminating_replicas: Some(0),
                observed_generation: 1,
                replica_failure: None,
            },
        }
    }

    fn pod() -> Pod {
        let mut p = Pod::new("frontend-b9xkq", mk(&[("tier", "frontend")]));
        p.meta.generate_name = Some("frontend-".to_string());
        p.meta.uid = 2;
        p.meta.owner_references = vec![OwnerReference::controller_of("frontend", 1)];
        p.node_name = Some("node-1".to_string());
        p.phase = PodPhase::Running;
        p.ready_since = Some(3);
        p
    }

    /// A change to one field, and the path the change must be reported under.
    type Mutation<T> = (&'static str, fn(&mut T));

    /// Every field of the ReplicaSet view, changed one at a time, and the path it must be
    /// reported under.
    fn rs_mutations() -> Vec<Mutation<ReplicaSet>> {
        vec![
            ("metadata.name", |r| r.meta.name = "backend".into()),
            ("metadata.labels", |r| {
                r.meta.labels.insert("env".into(), "prod".into());
            }),
            ("metadata.generation", |r| r.meta.generation = 2),
            ("metadata.deletionTimestamp", |r| {
                r.meta.deletion_timestamp = Some(9)
            }),
            ("metadata.finalizers", |r| {
                r.meta.finalizers = vec![Finalizer::ForegroundDeletion]
            }),
            ("spec.replicas", |r| r.spec.replicas = 4),
            ("spec.selector", |r| {
                r.spec.selector = LabelSelector::match_labels(&[("tier", "backend")])
            }),
            ("spec.minReadySeconds", |r| r.spec.min_ready_seconds = 10),
            ("spec.template.metadata.labels", |r| {
                r.spec.template_labels.insert("env".into(), "prod".into());
            }),
            ("spec.template.metadata.annotations", |r| {
                r.spec.template_annotations.insert("a".into(), "b".into());
            }),
            ("status.replicas", |r| r.status.replicas = 2),
            ("status.fullyLabeledReplicas", |r| {
                r.status.fully_labeled_replicas = 2
            }),
            ("status.readyReplicas", |r| r.status.ready_replicas = 2),
            ("status.availableReplicas", |r| {
                r.status.available_replicas = 2
            }),
            ("status.terminatingReplicas", |r| {
                r.status.terminating_replicas = None
            }),
            ("status.observedGeneration", |r| {
                r.status.observed_generation = 0
            }),
            ("status.conditions[ReplicaFailure]", |r| {
                r.status.replica_failure = Some(ReplicaFailure::FailedCreate)
            }),
        ]
    }

    fn pod_mutations() -> Vec<Mutation<Pod>> {
        vec![
            ("metadata.generateName", |p| {
                p.meta.generate_name = Some("web-".into())
            }),
            ("metadata.labels", |p| {
                p.meta.labels.insert("env".into(), "prod".into());
            }),
            (
                "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]",
                |p| p.deletion_cost = Some(-5),
            ),
            ("metadata.ownerReferences", |p| {
                p.meta.owner_references[0].block_owner_deletion = false
            }),
            ("metadata.deletionTimestamp", |p| {
                p.meta.deletion_timestamp = Some(7)
            }),
            ("metadata.deletionGracePeriodSeconds", |p| {
                p.grace_over = true
            }),
            ("metadata.finalizers", |p| {
                p.meta.finalizers = vec![Finalizer::Orphan]
            }),
            ("spec.nodeName", |p| p.node_name = None),
            ("status.phase", |p| p.phase = PodPhase::Failed),
            ("status.conditions[Ready]", |p| p.ready_since = None),
            ("status.containerStatuses.restartCount", |p| p.restarts = 2),
        ]
    }

    /// Changes `original` by each mutation in turn and checks that exactly the mutation's
    /// field is named, and that the oracle's own comparison (`same`) sees a difference too.
    fn each_mutation_is_named<T: Clone>(
        original: T,
        mutations: Vec<Mutation<T>>,
        object: fn(T) -> Object,
        same: fn(&mut Binding, &T, &T) -> bool,
    ) {
        for (field, mutate) in mutations {
            let mut seen = original.clone();
            mutate(&mut seen);
            let diffs = differing(
                &Binding::default(),
                &object(seen.clone()),
                &object(original.clone()),
            );
            let fields: Vec<&str> = diffs.iter().map(|d| d.field.as_str()).collect();
            assert_eq!(fields, [field], "{diffs:?}");
            assert_ne!(diffs[0].seen, diffs[0].allowed);
            assert!(!same(&mut Binding::default(), &original, &seen), "{field}");
        }
        let o = object(original);
        assert!(differing(&Binding::default(), &o, &o).is_empty());
    }

    #[test]
    fn one_changed_replicaset_field_is_the_one_difference_named() {
        each_mutation_is_named(
            rs(),
            rs_mutations(),
            |r| Object::ReplicaSet(Arc::new(r)),
            same_replicaset,
        );
    }

    #[test]
    fn one_changed_pod_field_is_the_one_difference_named() {
        each_mutation_is_named(
            pod(),
            pod_mutations(),
            |p| Object::Pod(Arc::new(p)),
            same_pod,
        );
    }

    #[test]
    fn a_field_absent_on_one_side_is_written_absent() {
        let mut seen = rs();
        seen.status.terminating_replicas = None;
        let d = &replicaset_diffs(&rs_view(&seen), &rs_view(&rs()))[0];
        assert_eq!(
            d.to_string(),
            "status.terminatingReplicas: seen absent, allowed 0"
        );
        assert_eq!(
            d.clone().of("rs/frontend").field,
            "rs/frontend status.terminatingReplicas"
        );
    }

    #[test]
    fn an_owner_of_the_same_name_but_another_uid_is_named() {
        let allowed = pod();
        let mut b = Binding::default();
        assert!(b.bind_uid(1, 1));
        let mut seen = pod();
        seen.meta.owner_references[0].uid = 5;
        let diffs = differing(
            &b,
            &Object::Pod(Arc::new(seen)),
            &Object::Pod(Arc::new(allowed.clone())),
        );
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].field, "metadata.ownerReferences.uid");
        let same = differing(
            &b,
            &Object::Pod(Arc::new(pod())),
            &Object::Pod(Arc::new(allowed)),
        );
        assert!(same.is_empty(), "{same:?}");
    }

    #[test]
    fn objects_of_different_kinds_differ_in_kind() {
        let diffs = differing(
            &Binding::default(),
            &Object::Pod(Arc::new(pod())),
            &Object::ReplicaSet(Arc::new(rs())),
        );
        assert_eq!(
            diffs,
            [FieldDiff::new("kind", "Pod".into(), "ReplicaSet".into())]
        );
    }

    fn named(name: &str, uid: u32) -> Pod {
        let mut p = pod();
        p.meta.name = name.to_string();
        p.meta.uid = uid;
        p
    }

    fn view<T>(objects: Vec<(&str, T)>) -> rsmc_spec::api::View<T> {
        objects
            .into_iter()
            .map(|(n, o)| (n.to_string(), Arc::new(o)))
            .collect()
    }

    /// The model keeps the pod the cluster deleted and deleted the one the cluster kept (a
    /// wrong scale-down victim): both pods are named as the cluster names them, one on each
    /// side only; an unbound generated pod is paired with the closest free one.
    #[test]
    fn states_differ_by_the_objects_on_one_side_and_the_fields_of_the_paired_ones() {
        let mut b = Binding::default();
        assert!(b.bind_uid(1, 1));
        assert!(b.bind_name("frontend-m0001", "frontend-kept1"));
        assert!(b.bind_name("frontend-m0002", "frontend-gone2"));
        let replicasets = view(vec![("frontend", rs())]);
        let model_pods = view(vec![
            ("frontend-m0001", named("frontend-m0001", 11)),
            ("frontend-m0003", named("frontend-m0003", 13)),
        ]);
        let mut unready = named("frontend-new33", 33);
        unready.ready_since = None;
        let seen = Snapshot {
            replicasets: replicasets.clone(),
            pods: view(vec![
                ("frontend-gone2", named("frontend-gone2", 22)),
                ("frontend-new33", unready),
            ]),
        };
        let diffs = state_differences(
            &b,
            ModelObjects {
                replicasets: &replicasets,
                pods: &model_pods,
            },
            &seen,
        );
        let named: Vec<String> = diffs.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            named,
            [
                "pod/frontend-kept1: seen absent, allowed present",
                "pod/frontend-new33 status.conditions[Ready]: seen False, allowed True",
                "pod/frontend-gone2: seen present, allowed absent",
            ]
        );
    }
}
