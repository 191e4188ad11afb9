//! Who made a write seen in a watch stream, which has no user: from `managedFields` and from
//! what changed between the object's versions.
//!
//! The API server records, per field manager (by default the first word of the client's user
//! agent: `kubectl-client-side-apply`, `kubectl` for `kubectl scale`, `kubectl-label`, …), the
//! fields it set, the subresource it wrote through and when (whole seconds; kubectl v1.37.2's
//! scale writes carry no time). The rules, in the order they are tried:
//! 1. A manager's entry that is new or changed between two versions names the writer (one
//!    that only lost fields lost them to another's write, and is not it); when none grew, so does
//!    the one entry that shrank or went (its manager removed fields it owned: the ReplicaSet
//!    controller's owner reference taken off a pod it releases). When none changed (the same manager writing again within the second) the writer is the one
//!    manager owning the part that changed (the status subresource's for a status, the
//!    owner of `f:spec.f:replicas` for `spec.replicas`, the main resource's for the rest); when more than
//!    one manager changed or could have, the write is ambiguous: an error.
//! 2. A manager named as the controller under test (`rsmc-controller`, or `--controller
//!    MANAGER`) is the ReplicaSet controller. `kube-controller-manager` is the built-in
//!    controllers' one manager, so what it did tells them apart: a pod created, a controller
//!    reference added (adoption) or removed from a pod whose ReplicaSet is live and not being
//!    orphan-deleted (release), a status: the ReplicaSet controller; an owner reference
//!    removed from a pod whose ReplicaSet is gone or being orphan-deleted, a finalizer
//!    (`orphan`, `foregroundDeletion`) removed from a ReplicaSet: the garbage collector.
//!    Anything else it does is an error. Every other manager is a client (a scenario step).
//! 3. A binding (a pod's `spec.nodeName` set, which leaves `managedFields` unchanged) is the
//!    scheduler's: a client.
//! 4. Deletions carry no manager ([`deleter`]).

use super::writer::Writer;
use k8s_openapi::jiff::Timestamp;
use rsmc_spec::api::Kind;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The field manager of kube-controller-manager's controllers.
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// The manager of a write no entry names, when only a client could have made it.
pub const UNNAMED_CLIENT: &str = "a client no managedFields entry names";

/// One `managedFields` entry, as compared between versions.
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    pub manager: String,
    pub operation: String,
    /// `status`, `scale`, or empty for the object itself.
    pub subresource: String,
    pub time: Option<Timestamp>,
    pub fields: Value,
}

/// The subresource an entry's manager wrote through. Entries name it from v1.22; before (a
/// v1.20.2 kube-controller-manager's or kubelet's status write), an entry owning status
/// fields alone wrote through `status`: the main resource of a pod or a ReplicaSet ignores
/// a status.
fn subresource(entry: &Value) -> String {
    if let Some(named) = entry["subresource"].as_str() {
        return named.to_string();
    }
    let fields = entry["fieldsV1"].as_object();
    match fields.is_some_and(|f| f.len() == 1 && f.contains_key("f:status")) {
        true => "status".to_string(),
        false => String::new(),
    }
}

/// An object's `managedFields`.
pub fn managed(object: &Value) -> Vec<Managed> {
    let Some(entries) = object["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|e| Managed {
            manager: e["manager"].as_str().unwrap_or_default().to_string(),
            operation: e["operation"].as_str().unwrap_or_default().to_string(),
            subresource: subresource(e),
            time: e["time"].as_str().and_then(|t| t.parse().ok()),
            fields: e["fieldsV1"].clone(),
        })
        .collect()
}

/// The entries of `after` whose manager wrote since `before`: new ones, ones with a new time,
/// ones that own fields they did not. An entry that only lost fields lost them to another
/// manager's write (an apply or an update taking a field over), and did not write.
fn changed(before: &Value, after: &Value) -> Vec<Managed> {
    let old = managed(before);
    managed(after)
        .into_iter()
        .filter(|e| {
            let same = old.iter().find(|o| {
                (&o.manager, &o.operation, &o.subresource)
                    == (&e.manager, &e.operation, &e.subresource)
            });
            match same {
                None => true,
                Some(o) => o.time != e.time || !within(&e.fields, &o.fields),
            }
        })
        .collect()
}

/// Whether the field set `a` is part of the field set `b`.
fn within(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| within(v, w))),
        _ => a == b,
    }
}

/// The fields of set `a` that set `b` lacks, as a field set (`None` when `a` is within `b`).
/// A field set is `fieldsV1`: maps whose keys are `f:name`, `k:{…}` or `.` (the map itself).
fn fields_less(a: &Value, b: &Value) -> Option<Value> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let rest: serde_json::Map<String, Value> = a
                .iter()
                .filter_map(|(k, v)| match b.get(k) {
                    None => Some((k.clone(), v.clone())),
                    Some(w) => fields_less(v, w).map(|d| (k.clone(), d)),
                })
                .collect();
            (!rest.is_empty()).then_some(Value::Object(rest))
        }
        _ => (a != b).then(|| a.clone()),
    }
}

/// Whether two field sets share a field: one `a` ends at (a leaf of `a`) that `b` owns or
/// owns part of. A map's own entry `.` does not count: a shared parent is no field of either,
/// and a leaf of `b` where `a` goes deeper (`f:labels: {}`, left after its keys went to
/// another manager) owns none of `a`'s fields.
fn overlap(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    a.iter().filter(|(k, _)| *k != ".").any(|(k, v)| {
        b.get(k)
            .is_some_and(|w| v.as_object().is_some_and(|m| m.is_empty()) || overlap(v, w))
    })
}

/// The fields whose values differ between two versions of an object, as a field set down to
/// the first list or value that differs (lists are owned whole or by key, which a diff of
/// values cannot name; owning the list's field is owning a part of it). The server's
/// bookkeeping is left out ([`without_bookkeeping`]).
fn changed_fields(before: &Value, after: &Value) -> Value {
    fn diff(b: &Value, a: &Value) -> Option<Value> {
        match (b, a) {
            (Value::Object(b), Value::Object(a)) => {
                let keys: BTreeSet<&String> = b.keys().chain(a.keys()).collect();
                let null = Value::Null;
                let out: serde_json::Map<String, Value> = keys
                    .into_iter()
                    .filter_map(|k| {
                        let d = diff(b.get(k).unwrap_or(&null), a.get(k).unwrap_or(&null))?;
                        Some((format!("f:{k}"), d))
                    })
                    .collect();
                (!out.is_empty()).then_some(Value::Object(out))
            }
            _ => (b != a).then(|| Value::Object(Default::default())),
        }
    }
    diff(&without_bookkeeping(before), &without_bookkeeping(after))
        .unwrap_or(Value::Object(Default::default()))
}

/// `object` without the bookkeeping the server writes on every change (`resourceVersion`,
/// `generation`, `managedFields`): what is left is what a writer chose.
fn without_bookkeeping(object: &Value) -> Value {
    let mut v = object.clone();
    if let Some(meta) = v["metadata"].as_object_mut() {
        for k in ["resourceVersion", "generation", "managedFields"] {
            meta.remove(k);
        }
    }
    v
}

/// The part of an object a write changed, as the managers own it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Status,
    /// `spec.replicas` only.
    Replicas,
    Main,
}

pub fn part(kind: Kind, before: &Value, after: &Value) -> Part {
    let (b, a) = (without_bookkeeping(before), without_bookkeeping(after));
    let mut without_status = (b.clone(), a.clone());
    without_status.0["status"] = Value::Null;
    without_status.1["status"] = Value::Null;
    if without_status.0 == without_status.1 {
        return Part::Status;
    }
    if kind == Kind::ReplicaSet {
        let mut r = without_status.clone();
        r.0["spec"]["replicas"] = Value::Null;
        r.1["spec"]["replicas"] = Value::Null;
        if r.0 == r.1 {
            return Part::Replicas;
        }
    }
    Part::Main
}

/// The manager that made the write from `before` to `after` (rule 1), with its entry.
pub fn manager(kind: Kind, before: &Value, after: &Value) -> Result<Managed, String> {
    let changed = changed(before, after);
    let managers: BTreeSet<&str> = changed.iter().map(|e| e.manager.as_str()).collect();
    match managers.len() {
        1 => {
            // The entry with the latest time, when one manager changed several.
            let e = changed.iter().max_by_key(|e| e.time).cloned();
            return e.ok_or_else(|| "no managedFields entry".to_string());
        }
        0 => {}
        _ => {
            return Err(format!(
                "the managedFields entries of {} changed at once: the watch cannot tell which of them wrote",
                managers.into_iter().collect::<Vec<_>>().join(", ")
            ))
        }
    }
    // With no entry grown, one that shrank or went wrote, unless what it lost is owned by
    // another entry now: a field two managers shared (v1.20.2's release patch gives the
    // controller a label back beside the client that set it) goes to the one that writes it
    // again, whose entry need not change within the second. Lost to no one, its manager
    // removed fields it owned (the ReplicaSet controller taking its owner reference off a pod
    // it releases).
    let now = managed(after);
    let shrunk: Vec<(Managed, Value)> = managed(before)
        .into_iter()
        .filter_map(|o| {
            let same = now.iter().find(|e| {
                (&o.manager, &o.operation, &o.subresource)
                    == (&e.manager, &e.operation, &e.subresource)
            });
            let lost = match same {
                None => o.fields.clone(),
                Some(e) => fields_less(&o.fields, &e.fields)?,
            };
            Some((o, lost))
        })
        .collect();
    if let [(one, lost)] = shrunk.as_slice() {
        let takers: Vec<&Managed> = now
            .iter()
            .filter(|e| e.manager != one.manager && overlap(lost, &e.fields))
            .collect();
        let writer =
            match takers.as_slice() {
                [] => one,
                [taker] => taker,
                _ => {
                    return Err(format!(
                    "fields {} owned went to {} at once: the watch cannot tell which of them wrote",
                    one.manager,
                    takers.iter().map(|e| e.manager.as_str()).collect::<Vec<_>>().join(", ")
                ))
                }
            };
        return Ok(Managed {
            time: None,
            ..writer.clone()
        });
    }
    // No entry changed (the same manager writing again within the second): the manager that
    // owns a field whose value changed, else the owners of the part that changed.
    let changed_paths = changed_fields(before, after);
    let holders: BTreeSet<&str> = now
        .iter()
        .filter(|e| overlap(&changed_paths, &e.fields))
        .map(|e| e.manager.as_str())
        .collect();
    if let [holder] = holders.into_iter().collect::<Vec<_>>().as_slice() {
        return now
            .iter()
            .filter(|e| e.manager == *holder)
            .max_by_key(|e| e.time)
            .cloned()
            .ok_or_else(|| "no managedFields entry".to_string());
    }
    let part = part(kind, before, after);
    let owners: Vec<Managed> = now
        .into_iter()
        .filter(|e| match part {
            Part::Status => e.subresource == "status",
            Part::Replicas => e.fields.pointer("/f:spec/f:replicas").is_some(),
            Part::Main => e.subresource.is_empty(),
        })
        .collect();
    let names: BTreeSet<&str> = owners.iter().map(|e| e.manager.as_str()).collect();
    if names.is_empty() && part == Part::Replicas {
        // Seen on v1.37.2: a scale to 0 drops the scaling manager's entry, and the next scale
        // (by the same manager) does not bring it back. Only a client changes spec.replicas.
        return Ok(Managed {
            manager: UNNAMED_CLIENT.to_string(),
            operation: "Update".into(),
            subresource: "scale".into(),
            time: None,
            fields: Value::Null,
        });
    }
    match names.len() {
        1 => owners
            .into_iter()
            .max_by_key(|e| e.time)
            .ok_or_else(|| "no managedFields entry".to_string()),
        0 => Err(format!(
            "no managedFields entry changed and none owns the {part:?} part that changed: was it recorded with managedFields (kubectl's watch output keeps them)?"
        )),
        _ => Err(format!(
            "no managedFields entry changed (a manager writing again within the second), and {} could have made it",
            names.into_iter().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// What the import knows of a namespace's ReplicaSets while it follows the stream.
#[derive(Default)]
pub struct Owners {
    /// The live ReplicaSets by UID.
    pub live: BTreeMap<String, Value>,
    /// Every ReplicaSet UID the stream showed, live or gone.
    pub known: BTreeSet<String>,
}

/// The controller reference of an object: (kind, name, uid).
pub fn controller_ref(object: &Value) -> Option<(String, String, String)> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"].as_bool() == Some(true))
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("kind"), s("name"), s("uid"))
        })
}

pub fn deleting(object: &Value) -> bool {
    !object["metadata"]["deletionTimestamp"].is_null()
}

pub fn finalizers(object: &Value) -> Vec<String> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a pod counts toward its ReplicaSet: not being deleted, not Succeeded or Failed.
pub fn active(pod: &Value) -> bool {
    !deleting(pod)
        && !matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
}

/// Which built-in controller of kube-controller-manager made a write that was not a deletion
/// (rule 2).
pub fn built_in(
    kind: Kind,
    before: Option<&Value>,
    after: &Value,
    owners: &Owners,
) -> Result<Writer, String> {
    let Some(before) = before else {
        return match kind {
            Kind::Pod => Ok(Writer::ReplicaSetController),
            Kind::ReplicaSet => Err("kube-controller-manager created a ReplicaSet (a Deployment's?): the model has no Deployments".into()),
        };
    };
    if kind == Kind::ReplicaSet {
        if part(kind, before, after) == Part::Status {
            return Ok(Writer::ReplicaSetController);
        }
        let (old, new) = (finalizers(before), finalizers(after));
        if new.len() < old.len() && new.iter().all(|f| old.contains(f)) {
            return Ok(Writer::GarbageCollector);
        }
        return Err("kube-controller-manager changed a ReplicaSet's spec or metadata other than its finalizers: neither the ReplicaSet controller nor the garbage collector does".into());
    }
    let refs = |o: &Value| o["metadata"]["ownerReferences"].clone();
    if refs(before) == refs(after) {
        return Err("kube-controller-manager changed a pod other than its owner references: neither the ReplicaSet controller nor the garbage collector does".into());
    }
    match (controller_ref(before), controller_ref(after)) {
        (None, Some(_)) => Ok(Writer::ReplicaSetController),
        (Some((_, _, uid)), None) => {
            let orphaning = owners
                .live
                .get(&uid)
                .is_none_or(|rs| deleting(rs) && finalizers(rs).iter().any(|f| f == "orphan"));
            Ok(if orphaning {
                Writer::GarbageCollector
            } else {
                Writer::ReplicaSetController
            })
        }
        _ => Ok(Writer::GarbageCollector),
    }
}

/// The client named in the scenario for a write `manager` made.
pub fn client(manager: &str) -> Writer {
    Writer::Client(format!("{manager} (field manager)"))
}

/// What a recording says of a pod deletion's claim ([`crate::delete_claims`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The recording has no claims (no watch of the events).
    NotWatched,
    /// A ReplicaSet controller's `SuccessfulDelete` event claims it.
    Claimed,
    /// No event claims it. `may_be_dropped`: the controller of the pod's ReplicaSet may have
    /// sent more events about it than its recorder lets through
    /// ([`crate::delete_claims::RECORDER_BURST`]), so a claim of this deletion may be lost.
    Unclaimed { may_be_dropped: bool },
}

/// Who deleted a pod or a ReplicaSet, and whether the recording leaves it open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleter {
    pub writer: Writer,
    /// A client's deletion that may have been the ReplicaSet controller's: no event claims
    /// it, but its claim may have been dropped. The model decides ([`Claim::Unclaimed`]).
    pub or_system: bool,
}

impl From<Writer> for Deleter {
    fn from(writer: Writer) -> Deleter {
        Deleter {
            writer,
            or_system: false,
        }
    }
}

/// Who deleted an object (marked it, or removed it at once) that was `object`; deletions
/// carry no manager, so this is read from the state around it. The rules:
/// - a ReplicaSet: a client (the model's only deleter of ReplicaSets), with the propagation
///   its finalizers show; one with a controller of its own (a Deployment) could be the
///   garbage collector's: an error;
/// - a pod whose controller ReplicaSet is gone (background propagation) or being deleted with
///   `foregroundDeletion` or `orphan` (a user deleting it in an orphan deletion's moments is
///   taken for the garbage collector breaking it): the garbage collector;
/// - a pod whose deletion a ReplicaSet's controller claimed ([`Claim::Claimed`], from its
///   `SuccessfulDelete` event, [`crate::delete_claims`]): that controller, whatever the pod's
///   owner;
/// - with the claims watched, a pod of a live ReplicaSet not claimed: a client, when the
///   controller's claim could not have been dropped; when it could, a client or the
///   controller, which the recording leaves to the model ([`Deleter::or_system`]); without
///   them, a pod counted by its live ReplicaSet (not being deleted, not
///   Succeeded or Failed) while that ReplicaSet has more such pods than `spec.replicas`: the
///   ReplicaSet controller (a user deleting a surplus pod at that moment is taken for it,
///   and a controller deleting a pod it does not control for a user);
/// - a pod of a ReplicaSet the stream never showed: an error (the watch began too late to
///   tell);
/// - any other pod: a client (the user).
pub fn deleter(
    kind: Kind,
    object: &Value,
    pods: &BTreeMap<String, Value>,
    owners: &Owners,
    claim: Claim,
) -> Result<Deleter, String> {
    let user = Writer::Client("a client (a deletion carries no field manager)".into());
    if kind == Kind::ReplicaSet {
        if let Some((owner_kind, owner, _)) = controller_ref(object) {
            return Err(format!(
                "a ReplicaSet controlled by {owner_kind} {owner} is deleted: by the garbage collector or a user, which a watch does not show; record with the audit log"
            ));
        }
        return Ok(user.into());
    }
    if claim == Claim::Claimed {
        return Ok(Writer::ReplicaSetController.into());
    }
    let Some((owner_kind, owner, uid)) = controller_ref(object) else {
        return Ok(user.into());
    };
    if owner_kind != "ReplicaSet" {
        return Err(format!(
            "a pod controlled by {owner_kind} {owner} is deleted: by that controller, the garbage collector or a user, which a watch does not show; the model has ReplicaSets only"
        ));
    }
    if !owners.known.contains(&uid) {
        return Err(format!(
            "a pod of ReplicaSet {owner} (uid {uid}), which the stream never showed, is deleted: the garbage collector, the controller or a user; start the watches before the ReplicaSet is created, or record with the audit log"
        ));
    }
    let Some(rs) = owners.live.get(&uid) else {
        return Ok(Writer::GarbageCollector.into());
    };
    // The garbage collector deletes the dependents of a foreground deletion; of an orphan
    // deletion it must not, which only its deletion's judgement can say, so it is taken for
    // the deleter (as the monitor's orphan rule holds whoever deletes).
    if deleting(rs)
        && finalizers(rs)
            .iter()
            .any(|f| f == "foregroundDeletion" || f == "orphan")
    {
        return Ok(Writer::GarbageCollector.into());
    }
    if let Claim::Unclaimed { may_be_dropped } = claim {
        return Ok(Deleter {
            writer: user,
            or_system: may_be_dropped && !deleting(rs) && active(object),
        });
    }
    let wanted = rs["spec"]["replicas"].as_i64().unwrap_or(1);
    let counted = pods
        .values()
        .filter(|p| active(p) && controller_ref(p).is_some_and(|(_, _, u)| u == uid))
        .count() as i64;
    if !deleting(rs) && active(object) && counted > wanted {
        return Ok(Writer::ReplicaSetController.into());
    }
    Ok(user.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A pod labelled `tier`, with the managers' entries given as (manager, time, fieldsV1).
    fn pod(tier: &str, entries: &[(&str, &str, Value)]) -> Value {
        let managed: Vec<Value> = entries
            .iter()
            .map(|(m, t, f)| json!({"manager": m, "operation": "Update", "time": t, "fieldsV1": f}))
            .collect();
        json!({"metadata": {"labels": {"tier": tier}, "managedFields": managed}})
    }

    fn labels(owned: bool) -> Value {
        match owned {
            true => json!({"f:metadata": {"f:labels": {".": {}, "f:tier": {}}}}),
            false => json!({"f:metadata": {"f:labels": {}}}),
        }
    }

    const T: &str = "2026-11-29T12:45:02Z";

    /// v1.20.2: after the release patch the controller shares `tier` with the client that set
    /// it; the client setting it back within the second leaves its own entry as it was and
    /// takes the label from the controller's: the client wrote.
    #[test]
    fn a_field_lost_to_another_manager_names_that_manager() {
        let before = pod(
            "out",
            &[
                (CONTROLLER_MANAGER, T, labels(true)),
                ("kubectl-label", T, labels(true)),
            ],
        );
        let after = pod(
            "frontend",
            &[
                (CONTROLLER_MANAGER, T, labels(false)),
                ("kubectl-label", T, labels(true)),
            ],
        );
        assert_eq!(
            manager(Kind::Pod, &before, &after).unwrap().manager,
            "kubectl-label"
        );
        // Lost to no one: the manager removed its own field, and wrote.
        let alone = pod("frontend", &[(CONTROLLER_MANAGER, T, labels(false))]);
        let owned = pod("frontend", &[(CONTROLLER_MANAGER, T, labels(true))]);
        assert_eq!(
            manager(Kind::Pod, &owned, &alone).unwrap().manager,
            CONTROLLER_MANAGER
        );
    }

    /// v1.37.2: no entry changes at all; of the two managers of the pod, only the client
    /// owns the label whose value changed.
    #[test]
    fn with_no_entry_changed_the_owner_of_the_changed_field_wrote() {
        let entries = [
            (CONTROLLER_MANAGER, T, labels(false)),
            ("kubectl-label", T, labels(true)),
        ];
        let (before, after) = (pod("out", &entries), pod("frontend", &entries));
        assert_eq!(
            manager(Kind::Pod, &before, &after).unwrap().manager,
            "kubectl-label"
        );
    }
}
