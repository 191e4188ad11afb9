//! Matching the model's objects with a cluster's, up to renaming.
//!
//! The model and a real cluster name generated pods differently (the model derives the
//! suffix from a creation index, the API server draws it at random) and give objects
//! different UIDs. A [`Binding`] is a partial bijection between the two sides' UIDs and
//! generated pod names. Matching extends it, never breaks it: once `frontend-x7k2p` on the
//! cluster is the model's `frontend-b9xkq`, it stays so for the rest of the run, and owner
//! references must point at bound owners.
//!
//! What is compared is each object's [`RsView`] / [`PodView`]: every field the model has,
//! except identities (compared through the binding) and timestamps (not comparable; what
//! they decide, the ranking, shows in which pods remain).

use crate::observed::{EventType, Object};
use rsmc_spec::api::{Change, Event};
use rsmc_spec::object::{
    Finalizer, LabelSelector, Labels, OwnerKind, Pod, PodPhase, ReplicaFailure, ReplicaSet, Uid,
};
use std::collections::{BTreeMap, BTreeSet};

/// A partial bijection between model and cluster identities.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Binding {
    uids: BTreeMap<Uid, Uid>,
    uids_back: BTreeMap<Uid, Uid>,
    names: BTreeMap<String, String>,
    names_back: BTreeMap<String, String>,
}

fn bind<K: Ord + Clone>(fwd: &mut BTreeMap<K, K>, back: &mut BTreeMap<K, K>, m: &K, o: &K) -> bool {
    match (fwd.get(m), back.get(o)) {
        (Some(x), _) if x != o => false,
        (_, Some(y)) if y != m => false,
        (Some(_), Some(_)) => true,
        _ => {
            fwd.insert(m.clone(), o.clone());
            back.insert(o.clone(), m.clone());
            true
        }
    }
}

impl Binding {
    /// Pair a model UID with a cluster UID; false if either is already paired otherwise.
    pub fn bind_uid(&mut self, model: Uid, observed: Uid) -> bool {
        bind(&mut self.uids, &mut self.uids_back, &model, &observed)
    }

    /// Pair a model pod name with a cluster pod name.
    pub fn bind_name(&mut self, model: &str, observed: &str) -> bool {
        bind(
            &mut self.names,
            &mut self.names_back,
            &model.to_string(),
            &observed.to_string(),
        )
    }

    /// The model pods bound to a cluster's pods, by name: the names a search of the model
    /// must keep ([`crate::explore::outcomes`]).
    pub fn model_names(&self) -> std::collections::BTreeSet<String> {
        self.names.keys().cloned().collect()
    }

    /// The cluster's name for a model pod, where bound.
    pub fn observed_name(&self, model: &str) -> Option<&str> {
        self.names.get(model).map(String::as_str)
    }

    /// The model's name for the cluster's object `observed`, if bound.
    pub fn model_name(&self, observed: &str) -> Option<&str> {
        self.names_back.get(observed).map(String::as_str)
    }

    /// `text` with the model's generated pod names replaced by the cluster's, where bound, so
    /// that a report names pods as the user sees them.
    pub fn in_observed_names(&self, text: &str) -> String {
        self.names
            .iter()
            .fold(text.to_string(), |t, (m, o)| t.replace(m.as_str(), o))
    }

    /// Whether model UID `model` and cluster UID `observed` could be one object: bound to
    /// each other, or neither bound to anything else. Unlike [`Binding::bind_uid`] it does
    /// not extend the binding.
    pub fn bound_uids_agree(&self, model: Uid, observed: Uid) -> bool {
        match (self.uids.get(&model), self.uids_back.get(&observed)) {
            (None, None) => true,
            (Some(o), Some(m)) => *o == observed && *m == model,
            _ => false,
        }
    }

    fn is_bound_observed_name(&self, observed: &str) -> bool {
        self.names_back.contains_key(observed)
    }
}

/// A ReplicaSet as compared: everything but its UID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsView {
    pub name: String,
    pub labels: Labels,
    pub generation: u32,
    pub replicas: i32,
    pub selector: LabelSelector,
    pub template_labels: Labels,
    pub template_annotations: Labels,
    pub min_ready_seconds: i32,
    pub status: (i32, i32, i32, i32, Option<i32>, u32, Option<ReplicaFailure>),
    pub deleting: bool,
    pub finalizers: BTreeSet<Finalizer>,
}

pub fn rs_view(rs: &ReplicaSet) -> RsView {
    let s = &rs.status;
    RsView {
        name: rs.meta.name.clone(),
        labels: rs.meta.labels.clone(),
        generation: rs.meta.generation,
        replicas: rs.spec.replicas,
        selector: rs.spec.selector.clone(),
        template_labels: rs.spec.template_labels.clone(),
        template_annotations: rs.spec.template_annotations.clone(),
        min_ready_seconds: rs.spec.min_ready_seconds,
        status: (
            s.replicas,
            s.fully_labeled_replicas,
            s.ready_replicas,
            s.available_replicas,
            s.terminating_replicas,
            s.observed_generation,
            s.replica_failure,
        ),
        deleting: rs.meta.is_deleting(),
        finalizers: rs.meta.finalizers.iter().copied().collect(),
    }
}

/// A pod as compared: everything but its UID, the UIDs of its owners and, for a generated
/// pod, its name (the prefix is compared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodView {
    /// The name of a pod named by the user; `None` for a generated one.
    pub fixed_name: Option<String>,
    pub generate_name: Option<String>,
    pub labels: Labels,
    pub node: Option<String>,
    pub phase: PodPhase,
    pub ready: bool,
    pub deleting: bool,
    /// deletionGracePeriodSeconds 0: the API server removes it next.
    pub grace_over: bool,
    pub restarts: u32,
    pub deletion_cost: Option<i32>,
    pub finalizers: BTreeSet<Finalizer>,
    /// Owner references without their UIDs: (kind, name, controller, blockOwnerDeletion).
    pub owners: Vec<(OwnerKind, String, bool, bool)>,
}

pub fn pod_view(p: &Pod) -> PodView {
    PodView {
        fixed_name: p.meta.generate_name.is_none().then(|| p.meta.name.clone()),
        generate_name: p.meta.generate_name.clone(),
        labels: p.meta.labels.clone(),
        node: p.node_name.clone(),
        phase: p.phase,
        ready: p.is_ready(),
        deleting: p.meta.is_deleting(),
        grace_over: p.grace_over,
        restarts: p.restarts,
        deletion_cost: p.deletion_cost,
        finalizers: p.meta.finalizers.iter().copied().collect(),
        owners: p
            .meta
            .owner_references
            .iter()
            .map(|r| {
                let kind = r.kind.clone();
                (kind, r.name.clone(), r.controller, r.block_owner_deletion)
            })
            .collect(),
    }
}

/// Whether model ReplicaSet `m` is cluster ReplicaSet `o` under `b`, extending `b`.
pub fn same_replicaset(b: &mut Binding, m: &ReplicaSet, o: &ReplicaSet) -> bool {
    rs_view(m) == rs_view(o) && b.bind_uid(m.meta.uid, o.meta.uid)
}

/// Whether model pod `m` is cluster pod `o` under `b`, extending `b`.
pub fn same_pod(b: &mut Binding, m: &Pod, o: &Pod) -> bool {
    if pod_view(m) != pod_view(o) || !b.bind_uid(m.meta.uid, o.meta.uid) {
        return false;
    }
    if m.meta.generate_name.is_some() && !b.bind_name(&m.meta.name, &o.meta.name) {
        return false;
    }
    m.meta
        .owner_references
        .iter()
        .zip(&o.meta.owner_references)
        .all(|(x, y)| b.bind_uid(x.uid, y.uid))
}

/// The model's objects at one point: the live ReplicaSets and pods.
pub struct ModelObjects<'a> {
    pub replicasets: &'a rsmc_spec::api::View<ReplicaSet>,
    pub pods: &'a rsmc_spec::api::View<Pod>,
}

/// Match a model state's objects with a cluster snapshot, extending `b`: the same
/// ReplicaSets by name, the same user-named pods by name, and a pairing of generated pods
/// consistent with `b`. Returns the extended binding, or `None`.
pub fn match_objects(
    b: &Binding,
    model: ModelObjects,
    observed: &crate::observed::Snapshot,
) -> Option<Binding> {
    if model.replicasets.len() != observed.replicasets.len()
        || model.pods.len() != observed.pods.len()
    {
        return None;
    }
    let mut b = b.clone();
    for (name, m) in model.replicasets {
        let o = observed.replicasets.get(name)?;
        if !same_replicaset(&mut b, m, o) {
            return None;
        }
    }
    let mut free_model: Vec<&Pod> = Vec::new();
    for (name, m) in model.pods {
        let target = match (&m.meta.generate_name, b.observed_name(name)) {
            (None, _) => Some(name.as_str()),
            (Some(_), Some(bound)) => Some(bound),
            (Some(_), None) => None,
        };
        match target {
            Some(t) => {
                let o = observed.pods.get(t)?;
                if !same_pod(&mut b, m, o) {
                    return None;
                }
            }
            None => free_model.push(m),
        }
    }
    let free_observed: Vec<&Pod> = observed
        .pods
        .values()
        .filter(|o| o.meta.generate_name.is_some() && !b.is_bound_observed_name(&o.meta.name))
        .map(|o| &**o)
        .collect();
    pair(
        &b,
        &free_model,
        &free_observed,
        &mut vec![false; free_observed.len()],
    )
}

/// Backtracking: pair each of `model` with a distinct unused one of `observed`.
fn pair(b: &Binding, model: &[&Pod], observed: &[&Pod], used: &mut Vec<bool>) -> Option<Binding> {
    let Some((first, rest)) = model.split_first() else {
        return Some(b.clone());
    };
    for (i, o) in observed.iter().enumerate() {
        if used[i] {
            continue;
        }
        let mut next = b.clone();
        if same_pod(&mut next, first, o) {
            used[i] = true;
            if let Some(done) = pair(&next, rest, observed, used) {
                return Some(done);
            }
            used[i] = false;
        }
    }
    None
}

/// The object a model watch event shows, with its event type.
pub fn model_event_object(e: &Event) -> (EventType, Object) {
    let (before, after) = match &e.change {
        Change::ReplicaSet { before, after } => (
            before.clone().map(Object::ReplicaSet),
            after.clone().map(Object::ReplicaSet),
        ),
        Change::Pod { before, after } => (
            before.clone().map(Object::Pod),
            after.clone().map(Object::Pod),
        ),
    };
    match (before, after) {
        (None, Some(a)) => (EventType::Added, a),
        (Some(_), Some(a)) => (EventType::Modified, a),
        (Some(b), None) => (EventType::Deleted, b),
        (None, None) => unreachable!("an event has an object on one side"),
    }
}

/// Whether a write changes nothing the model compares (e.g. a re-apply of an unchanged
/// manifest, an annotation the model does not have): such writes are hidden on both sides.
pub fn invisible(before: Option<&Object>, after: &Object) -> bool {
    match (before, after) {
        (Some(Object::ReplicaSet(a)), Object::ReplicaSet(b)) => rs_view(a) == rs_view(b),
        (Some(Object::Pod(a)), Object::Pod(b)) => {
            pod_view(a) == pod_view(b)
                && a.meta.owner_references.iter().map(|r| r.uid).eq(b
                    .meta
                    .owner_references
                    .iter()
                    .map(|r| r.uid))
        }
        _ => false,
    }
}

/// Whether a model write (`event`) is the cluster's write `observed` under `b`, extending it.
/// A deletion is matched by identity alone: the last state a DELETED event carries differs
/// between API server versions (deletionTimestamp, grace period) and says nothing new.
pub fn same_write(
    b: &mut Binding,
    model: (EventType, &Object),
    observed: (EventType, &Object),
) -> bool {
    if model.0 != observed.0 {
        return false;
    }
    match (model.1, observed.1, model.0) {
        (Object::ReplicaSet(m), Object::ReplicaSet(o), EventType::Deleted) => {
            m.meta.name == o.meta.name && b.bind_uid(m.meta.uid, o.meta.uid)
        }
        (Object::Pod(m), Object::Pod(o), EventType::Deleted) => {
            let named = match m.meta.generate_name {
                None => m.meta.name == o.meta.name,
                Some(_) => b.bind_name(&m.meta.name, &o.meta.name),
            };
            named && b.bind_uid(m.meta.uid, o.meta.uid)
        }
        (Object::ReplicaSet(m), Object::ReplicaSet(o), _) => same_replicaset(b, m, o),
        (Object::Pod(m), Object::Pod(o), _) => same_pod(b, m, o),
        _ => false,
    }
}
