//! The scenario steps behind the clients' writes (the user's kubectl, the scheduler, the
//! kubelet): one step per write, and consecutive writes that are one command merged.
//!
//! The rules, in the order they are tried:
//! - a ReplicaSet created, applied, patched or updated: `apply` of it as written (the model's
//!   apply replaces labels and spec); its scale subresource: `scale`; its deletion: `delete`
//!   with the request's propagation, `unset` when it gives none (the server then chooses by
//!   the finalizers the ReplicaSet carries), a step even when it writes nothing;
//! - a pod created: `apply` of it (with `spec.nodeName` when it was created bound);
//! - a pod bound (`pods/binding`): `schedule` to the binding's node;
//! - a pod's status: `ready` (Running and Ready), `unready` (Running, not Ready) or `fail`
//!   (Failed), by the phase and Ready condition written; a write that changes only the
//!   containers' restart count: `restartContainers` with the highest count;
//! - a pod's labels changed: `label` with the keys set and removed; its deletion-cost
//!   annotation changed: `annotate` setting or removing it;
//! - ReplicaSets deleted by a deletecollection: `deleteCollection` with its labelSelector
//!   (equalities only) and propagation;
//! - a pod deleted: `delete` when it was not being deleted, `finishDeletion` when it was (the
//!   kubelet's final delete);
//! - a write the model cannot see (its abstraction is unchanged: a container status, an
//!   annotation) is no step and its event is left out ([`Inferred::Invisible`]);
//! - a client's request refused as the model's API server can refuse it (an apply, a scale or a
//!   delete of a ReplicaSet, `Invalid` or `NotFound`): that step, expected to be refused with
//!   the reason the log gives ([`refused_step`]); other refused requests are counted and left
//!   out;
//! - anything else (a status written by a client, owner references or finalizers changed by a
//!   client, a forced deletion, an eviction) is an error: no scenario step does it.
//!
//! A step names a pod as the model can: a pod with a name of its own by that name; a pod named
//! by generateName (the model draws other suffixes) by its controller (`pods of frontend`),
//! or by its labels when it has none, and "any N" of those. Consecutive writes of one kind on
//! pods named alike (a command on several pods) are one step; so are consecutive applies.

use super::entry::Request;
use super::history::{Applied, Objects};
use crate::manifest::{Manifest, Object};
use crate::observed::{abstract_pod, abstract_replicaset, UidTokens};
use crate::scenario::{Apply, ApplySource, StepKind};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use rsmc_spec::api::{Kind, Propagation, Reason};
use rsmc_spec::model::{NamedOwner, OwnerByName, PodAction, PodSelection, PodSet};
use rsmc_spec::object::{LabelSelector, OwnerKind, Pod, PodPhase, ReplicaSet};
use serde_json::Value;
use std::sync::Arc;

/// What a client's write was, for the scenario.
#[derive(Debug)]
pub enum Inferred {
    Step(StepKind),
    /// It changed nothing the model has.
    Invisible,
}

/// The step a client's accepted write took (`objects` as it left them); `Err` says why no
/// step can take it.
pub fn step(r: &Request, applied: &Applied, objects: &Objects) -> Result<Inferred, String> {
    // A ReplicaSet delete that writes nothing (repeated while a Foreground or Orphan one is
    // under way, with no policy or the one in effect) is still a step: the server chose to
    // change nothing, which the model's server must choose too.
    let delete = r.kind == Kind::ReplicaSet && r.verb == "delete" && r.subresource.is_none();
    if applied.changes.is_empty() && !delete {
        return Ok(Inferred::Invisible);
    }
    match r.kind {
        Kind::ReplicaSet => replicaset_step(r, applied),
        Kind::Pod => pod_step(r, applied, objects),
    }
}

fn replicaset(v: &Value) -> Result<ReplicaSet, String> {
    let rs: apps::ReplicaSet = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    abstract_replicaset(&rs, &mut UidTokens::default())
}

fn pod(v: &Value) -> Result<Pod, String> {
    let p: core::Pod = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    abstract_pod(&p, &mut UidTokens::default())
}

fn replicaset_step(r: &Request, applied: &Applied) -> Result<Inferred, String> {
    let name = || r.name.clone().unwrap_or_default();
    match (r.verb.as_str(), r.subresource.as_deref()) {
        ("delete", None) => Ok(Inferred::Step(StepKind::DeleteReplicaSet {
            replicaset: name(),
            propagation: propagation(r.request.as_ref().unwrap_or(&Value::Null))?,
        })),
        ("deletecollection", None) => Ok(Inferred::Step(StepKind::DeleteReplicaSets {
            selector: equality_selector(r.label_selector.as_deref().unwrap_or_default())?,
            propagation: propagation(r.request.as_ref().unwrap_or(&Value::Null))?,
        })),
        (_, Some("scale")) => {
            let after = applied
                .after
                .as_ref()
                .ok_or("the scale removed the ReplicaSet")?;
            let replicas = after["spec"]["replicas"].as_i64().unwrap_or(1) as i32;
            Ok(Inferred::Step(StepKind::Scale {
                replicaset: name(),
                replicas,
            }))
        }
        (_, None) => {
            let after = applied
                .after
                .as_ref()
                .ok_or("the write removed the ReplicaSet")?;
            let new = replicaset(after)?;
            if let Some(before) = &applied.before {
                let old = replicaset(before)?;
                let unchanged = (old.meta.labels == new.meta.labels) && old.spec == new.spec;
                if (
                    &old.meta.owner_references,
                    &old.meta.finalizers,
                    &old.status,
                ) != (
                    &new.meta.owner_references,
                    &new.meta.finalizers,
                    &new.status,
                ) {
                    return Err(
                        "it changes a ReplicaSet's owner references, finalizers or status, which no scenario step does (an apply changes labels and spec)"
                            .into(),
                    );
                }
                if unchanged {
                    return Ok(Inferred::Invisible);
                }
            }
            Ok(Inferred::Step(apply_of(Object::ReplicaSet(Arc::new(new)))))
        }
        (_, Some(sub)) => Err(format!(
            "a client writes replicasets/{sub}, which no scenario step does"
        )),
    }
}

/// A label selector of equalities (`k=v,k2==v2`), as a URL's `labelSelector` gives it.
/// Set-based requirements (`!=`, `in`, `notin`, `k`, `!k`) are refused by name: a scenario
/// step can state them (`selector:`), but this reader does not parse them.
fn equality_selector(text: &str) -> Result<LabelSelector, String> {
    let mut match_labels = rsmc_spec::object::Labels::new();
    for requirement in text.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let (key, value) = requirement
            .split_once("==")
            .or_else(|| requirement.split_once('='))
            .filter(|(k, v)| !k.ends_with('!') && !k.contains(' ') && !v.contains(['(', '=']))
            .ok_or_else(|| {
                format!(
                    "a deletecollection with labelSelector {text:?}: its requirement {requirement:?} is not an equality (KEY=VALUE), the only kind the import reads"
                )
            })?;
        match_labels.insert(key.trim().to_string(), value.trim().to_string());
    }
    if match_labels.is_empty() {
        return Err("a deletecollection of every ReplicaSet (no labelSelector): no scenario step deletes all of them; give it a labelSelector".into());
    }
    Ok(LabelSelector {
        match_labels,
        match_expressions: vec![],
    })
}

/// The step a client's refused request was, with the reason it was refused with, when it is
/// one a scenario can expect to be refused: an apply, a scale or a delete of a ReplicaSet,
/// refused as the model's API server can refuse it (`Invalid`, `NotFound`). `None` for
/// anything else, which the import counts and leaves out: a pod write refused because the pod
/// is gone is a step that skipped it, and a `Conflict` is a client's stale precondition that
/// its command retries (`kubectl apply` does; so does the conformance runner).
pub fn refused_step(r: &Request) -> Option<(StepKind, Reason)> {
    let reason: Reason = r.reason.as_deref()?.parse().ok()?;
    if r.kind != Kind::ReplicaSet || !matches!(reason, Reason::Invalid | Reason::NotFound) {
        return None;
    }
    let request = r.request.as_ref();
    let kind = match (r.verb.as_str(), r.subresource.as_deref()) {
        ("delete", None) => StepKind::DeleteReplicaSet {
            replicaset: r.name.clone()?,
            propagation: propagation(request.unwrap_or(&Value::Null)).ok()?,
        },
        ("patch" | "update", Some("scale")) => StepKind::Scale {
            replicaset: r.name.clone()?,
            replicas: i32::try_from(request?["spec"]["replicas"].as_i64()?).ok()?,
        },
        // A whole ReplicaSet as written (a create, an update, a server-side apply): a patch of
        // some fields does not say what the ReplicaSet would have been.
        ("create" | "update" | "patch", None) => {
            let mut written = request?.clone();
            // A request carries no UID (the server gives one); the step's manifest has none.
            let meta = written.get_mut("metadata")?.as_object_mut()?;
            meta.entry("uid").or_insert_with(|| "refused".into());
            let rs: apps::ReplicaSet = serde_json::from_value(written).ok()?;
            rs.spec.as_ref()?.template.as_ref()?;
            let rs = abstract_replicaset(&rs, &mut UidTokens::default()).ok()?;
            apply_of(Object::ReplicaSet(Arc::new(rs)))
        }
        _ => return None,
    };
    Some((kind, reason))
}

/// The propagation a ReplicaSet delete's options ask for, `None` when they ask for none (the
/// API server then chooses by the object's finalizers, `Propagation::chosen`: reading it as
/// Background would be wrong for a delete repeated while a Foreground or Orphan one is under
/// way). The deprecated `orphanDependents` asks too: `true` for Orphan, `false` for what
/// store.go then does, neither orphan nor foreground — Background.
fn propagation(options: &Value) -> Result<Option<Propagation>, String> {
    match (
        options["propagationPolicy"].as_str(),
        options["orphanDependents"].as_bool(),
    ) {
        (Some("Orphan"), _) | (None, Some(true)) => Ok(Some(Propagation::Orphan)),
        (Some("Foreground"), _) => Ok(Some(Propagation::Foreground)),
        (Some("Background"), _) | (None, Some(false)) => Ok(Some(Propagation::Background)),
        (None, None) => Ok(None),
        (Some(other), _) => Err(format!("unknown propagationPolicy {other:?}")),
    }
}

fn apply_of(object: Object) -> StepKind {
    StepKind::Apply(Apply {
        source: ApplySource::Inline,
        node_name: None,
        manifests: vec![Manifest::of(object)],
    })
}

fn pod_step(r: &Request, applied: &Applied, objects: &Objects) -> Result<Inferred, String> {
    let before = match &applied.before {
        None => {
            let created = pod(applied.after.as_ref().ok_or("no object created")?)?;
            if !created.meta.owner_references.is_empty() {
                return Err(
                    "a client creates a pod with owner references, which no scenario step does"
                        .into(),
                );
            }
            return Ok(Inferred::Step(apply_of(Object::Pod(Arc::new(created)))));
        }
        Some(b) => b,
    };
    let old = pod(before)?;
    let selection = selection_of(&old, before, objects, r.or_system);
    let action = match (r.verb.as_str(), r.subresource.as_deref()) {
        ("delete", None) => {
            let grace = r
                .request
                .as_ref()
                .and_then(|o| o["gracePeriodSeconds"].as_i64());
            if old.meta.is_deleting() {
                PodAction::FinishDeletion
            } else if grace == Some(0) && old.node_name.is_some() {
                return Err("a forced deletion (gracePeriodSeconds 0) of a pod that is not being deleted: no scenario step does it (the kubelet's final delete is a step of its own)".into());
            } else {
                PodAction::Delete
            }
        }
        ("create", Some("binding")) => {
            let after = pod(applied
                .after
                .as_ref()
                .ok_or("the binding removed the pod")?)?;
            PodAction::Schedule {
                node: after.node_name.ok_or("a binding without a node")?,
            }
        }
        (_, Some("status")) => {
            let new = pod(applied.after.as_ref().ok_or("the status removed the pod")?)?;
            let restarted = new.restarts != old.restarts;
            if (new.phase, new.ready_since.is_some()) == (old.phase, old.ready_since.is_some()) {
                if new == old {
                    return Ok(Inferred::Invisible);
                }
                if restarted {
                    return Ok(Inferred::Step(StepKind::Pods {
                        selection,
                        action: PodAction::Restarted {
                            restarts: new.restarts,
                        },
                    }));
                }
                return Err("a status write that changes what the model has of a pod but neither its phase, its readiness nor its restart count: no scenario step does it".into());
            }
            if restarted {
                return Err("a status write that changes a pod's phase or readiness and its restart count at once: a scenario step does one of them (`ready`, `unready`, `fail` or `restartContainers`)".into());
            }
            match (new.phase, new.ready_since.is_some()) {
                (PodPhase::Running, true) => PodAction::Ready,
                (PodPhase::Running, false) => PodAction::Unready,
                (PodPhase::Failed, _) => PodAction::Fail,
                (phase, _) => {
                    return Err(format!(
                        "a status write to phase {phase:?}: the model's kubelet reports Running (Ready or not) and Failed only"
                    ))
                }
            }
        }
        (_, None) => {
            let new = pod(applied.after.as_ref().ok_or("the write removed the pod")?)?;
            let mut relabelled = new.clone();
            relabelled.meta.labels = old.meta.labels.clone();
            relabelled.deletion_cost = old.deletion_cost;
            relabelled.meta.owner_references = old.meta.owner_references.clone();
            if relabelled != old {
                return Err("a client changes a pod's finalizers or spec: of a pod's metadata, a scenario step changes labels, the deletion cost or the owner references only".into());
            }
            if new.meta.owner_references != old.meta.owner_references {
                if new.meta.labels != old.meta.labels || new.deletion_cost != old.deletion_cost {
                    return Err("a client changes a pod's owner references and its labels or deletion cost in one write: a scenario step does one of them".into());
                }
                let after = applied.after.as_ref().ok_or("the write removed the pod")?;
                return Ok(Inferred::Step(StepKind::Pods {
                    selection,
                    action: PodAction::SetOwners {
                        owners: owners_by_name(&new, after, objects)?,
                    },
                }));
            }
            let relabels = new.meta.labels != old.meta.labels;
            match (relabels, new.deletion_cost != old.deletion_cost) {
                (false, false) => return Ok(Inferred::Invisible),
                (true, true) => return Err("a client changes a pod's labels and its deletion cost in one write: a scenario step does one of them (`label` or `annotate`)".into()),
                (false, true) => {
                    return Ok(Inferred::Step(StepKind::Pods {
                        selection,
                        action: PodAction::Annotate {
                            deletion_cost: new.deletion_cost,
                        },
                    }))
                }
                (true, false) => {}
            }
            let set = new
                .meta
                .labels
                .iter()
                .filter(|(k, v)| old.meta.labels.get(*k) != Some(*v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let remove = old
                .meta
                .labels
                .keys()
                .filter(|k| !new.meta.labels.contains_key(*k))
                .cloned()
                .collect();
            PodAction::Label { set, remove }
        }
        (_, Some(sub)) => {
            return Err(format!(
                "a client writes pods/{sub}, which no scenario step does"
            ))
        }
    };
    Ok(Inferred::Step(StepKind::Pods { selection, action }))
}

/// A client's owner references as a `setOwnerReferences` step names them: each must be the
/// live ReplicaSet of its name when the write was made (a step names ReplicaSets, and takes
/// the UID each has then), or an owner of another kind that the log shows does not exist, or
/// a ConfigMap a step created ([`super::owners`]).
fn owners_by_name(pod: &Pod, raw: &Value, objects: &Objects) -> Result<Vec<OwnerByName>, String> {
    let uids = raw["metadata"]["ownerReferences"].as_array();
    pod.meta
        .owner_references
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let uid = uids
                .and_then(|refs| refs.get(i))
                .and_then(|o| o["uid"].as_str())
                .unwrap_or_default();
            if let OwnerKind::Other(kind) = &r.kind {
                // A reference to an owner that does not exist (the model's step gives it a UID
                // nothing has, as the log's is nothing's), or to a ConfigMap a step created
                // (the step takes its UID).
                if kind.is_configmap() && crate::scenario::runners_mark(&r.name).is_some() {
                    return Err(format!(
                        "a client sets an owner reference to ConfigMap {}, a mark of the runner's: no step names one",
                        r.name
                    ));
                }
                objects.others.reference(kind, &r.name, uid)?;
                return Ok(OwnerByName {
                    owner: NamedOwner::Other {
                        kind: kind.clone(),
                        name: r.name.clone(),
                    },
                    controller: r.controller,
                    block_owner_deletion: r.block_owner_deletion,
                });
            }
            if !objects.replicaset_live(&r.name, uid) {
                return Err(format!(
                    "a client sets an owner reference to replicaset/{} uid {uid}, which is not the live ReplicaSet of that name: a setOwnerReferences step names live ReplicaSets only",
                    r.name
                ));
            }
            Ok(OwnerByName {
                owner: NamedOwner::ReplicaSet(r.name.clone()),
                controller: r.controller,
                block_owner_deletion: r.block_owner_deletion,
            })
        })
        .collect()
}

/// How a step names one pod: by name when the name is its own; by its controller while that
/// is live, else by its labels, when the API server generated it ("any 1"). A write the
/// system may have made instead (`or_system`) is "up to 1".
fn selection_of(pod: &Pod, raw: &Value, objects: &Objects, or_system: bool) -> PodSelection {
    if pod.meta.generate_name.is_none() {
        return PodSelection {
            set: PodSet::Names(vec![pod.meta.name.clone()]),
            count: or_system.then_some(1),
            up_to: or_system,
        };
    }
    let set = match raw["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| {
            refs.iter()
                .find(|r| r["controller"].as_bool() == Some(true))
        })
        .filter(|r| {
            let (name, uid) = (r["name"].as_str(), r["uid"].as_str());
            name.zip(uid)
                .is_some_and(|(n, u)| objects.replicaset_live(n, u))
        })
        .and_then(|r| r["name"].as_str())
    {
        Some(owner) => PodSet::ControlledBy(owner.to_string()),
        None => PodSet::Matching(LabelSelector {
            match_labels: pod.meta.labels.clone(),
            match_expressions: Vec::new(),
        }),
    };
    PodSelection {
        set,
        count: Some(1),
        up_to: or_system,
    }
}

/// `next` folded into `last` when they are one command: consecutive applies, or the same
/// action on pods named alike. Returns whether it was folded.
pub fn merge(last: &mut StepKind, next: &StepKind) -> bool {
    match (last, next) {
        (StepKind::Apply(a), StepKind::Apply(b)) => {
            a.manifests.extend(b.manifests.iter().cloned());
            true
        }
        (
            StepKind::Pods {
                selection: s1,
                action: a1,
            },
            StepKind::Pods {
                selection: s2,
                action: a2,
            },
        ) if a1 == a2 && s1.up_to == s2.up_to => match (&mut s1.set, &s2.set) {
            (PodSet::Names(n1), PodSet::Names(n2))
                if !s1.up_to && !n2.iter().any(|n| n1.contains(n)) =>
            {
                n1.extend(n2.iter().cloned());
                true
            }
            (set1, set2) if *set1 == *set2 && !matches!(set1, PodSet::Names(_)) => {
                s1.count = Some(s1.count.unwrap_or(1) + s2.count.unwrap_or(1));
                true
            }
            _ => false,
        },
        _ => false,
    }
}
