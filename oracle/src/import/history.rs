//! The objects of a namespace as the audit log's answers leave them, and the watch events each
//! accepted write caused.
//!
//! An answer is the object as written, which is what the watch delivers, with these
//! exceptions (seen on v1.20.2 and v1.37.2 and followed here):
//! - a write that changed nothing answers with the object at its old resourceVersion: no event;
//! - the scale subresource answers with a `Scale` (its resourceVersion is the ReplicaSet's
//!   new one): the ReplicaSet is the one before with the new `spec.replicas` (and, when that
//!   changed, the next `metadata.generation`);
//! - the garbage collector patches metadata only and gets `PartialObjectMetadata` back: the
//!   object is the one before with the new metadata;
//! - a binding answers with a `Status`: the pod is the one before with `spec.nodeName`, at a
//!   resourceVersion the log does not give;
//! - a deletion that removes the object (a ReplicaSet without finalizers left, a pod whose
//!   grace period is 0 without finalizers left) answers with a `Status`, or with the object:
//!   before v1.26 at the version of its mark (its MODIFIED event, when the delete had to mark
//!   it first), the DELETED event's version not in the log; from v1.26 (kubernetes#113369)
//!   at the DELETED event's version, the mark's not in the log ([`Objects::removal_version_in_answer`]);
//! - a deletecollection answers with the objects as listed before it deleted them; those it
//!   removed at once have DELETED events whose versions the log does not give
//!   ([`Objects::delete_collection`]);
//! - a write that removes the object otherwise (the garbage collector taking the last
//!   finalizer off) answers with the object as it was stored before: the DELETED event's
//!   version is not in the log.
//!
//! Events whose resourceVersion the log does not give are placed right after the last event
//! whose version it gave (see [`super::order`]).

use super::entry::{Change, Request};
use crate::observed::{EventType, RawSnapshot};
use k8s_openapi::jiff::Timestamp;
use rsmc_spec::api::Kind;
use serde_json::Value;
use std::collections::BTreeMap;

/// What an accepted write did.
#[derive(Clone, Debug, Default)]
pub struct Applied {
    /// The object before (none for a create).
    pub before: Option<Value>,
    /// The object after (none once removed).
    pub after: Option<Value>,
    pub changes: Vec<Change>,
}

/// The live objects of one namespace, by kind and name.
#[derive(Default)]
pub struct Objects {
    /// Whether a delete that removes the object answers with the removal's version (v1.26
    /// and later: kubernetes#113369, `conditionalDelete` in the apiserver's etcd3 store) or
    /// with the last stored one (before: what v1.20.2's `conditionalDelete` decodes with,
    /// `origState.rev`).
    pub removal_version_in_answer: bool,
    live: BTreeMap<(Kind, String), Value>,
    /// When the create of each live object completed.
    born: BTreeMap<(Kind, String), Timestamp>,
    /// What the log has shown of the objects of other kinds that may own pods.
    pub others: super::owners::OtherOwners,
}

fn key(kind: Kind, name: &str) -> (Kind, String) {
    (kind, name.to_string())
}

/// An object's resourceVersion, as a number.
pub(super) fn version(object: &Value) -> Option<u64> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(|v| v.as_str())
        .and_then(|v| v.parse().ok())
}

/// Whether the object is gone once written so: marked deleted with no finalizer left (and, for
/// a pod, no grace period left either).
pub(super) fn removed(kind: Kind, object: &Value) -> bool {
    let meta = &object["metadata"];
    let marked = !meta["deletionTimestamp"].is_null();
    let finalizers = meta["finalizers"].as_array().is_some_and(|f| !f.is_empty());
    let grace_over =
        kind == Kind::ReplicaSet || meta["deletionGracePeriodSeconds"].as_i64() == Some(0);
    marked && !finalizers && grace_over
}

impl Objects {
    /// The object `name` of `kind`, as last written.
    pub fn get(&self, kind: Kind, name: &str) -> Option<&Value> {
        self.live.get(&key(kind, name))
    }

    /// When the create of the live object `name` of `kind` completed.
    pub fn born(&self, kind: Kind, name: &str) -> Option<Timestamp> {
        self.born.get(&key(kind, name)).copied()
    }

    /// Whether the ReplicaSet `name` with UID `uid` is live (a pod it controls can be named
    /// as one of its pods).
    pub fn replicaset_live(&self, name: &str, uid: &str) -> bool {
        self.get(Kind::ReplicaSet, name)
            .is_some_and(|rs| rs["metadata"]["uid"].as_str() == Some(uid))
    }

    /// Take `object` as created when `at`, by a create whose answer the log lost (see
    /// [`super::Importer`]).
    pub fn insert_lost(&mut self, kind: Kind, object: Value, at: Timestamp) {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.born.insert(key(kind, &name), at);
        self.live.insert(key(kind, &name), object);
    }

    /// Take `object` as the live object of its name, written by a patch or an update whose
    /// answer the log lost (see [`super::Importer`]).
    pub fn replace_lost(&mut self, kind: Kind, object: Value) {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.live.insert(key(kind, &name), object);
    }

    /// Take the object `name` of `kind` as removed by a delete whose answer the log lost (see
    /// [`super::lost_delete`]).
    pub fn remove_lost(&mut self, kind: Kind, name: &str) {
        self.live.remove(&key(kind, name));
        self.born.remove(&key(kind, name));
    }

    /// Every live object, as a settle point lists them.
    pub fn snapshot(&self) -> RawSnapshot {
        let mut out = RawSnapshot::default();
        for ((kind, _), object) in &self.live {
            match kind {
                Kind::ReplicaSet => out.replicasets.push(object.clone()),
                Kind::Pod => out.pods.push(object.clone()),
            }
        }
        out
    }

    /// Take an accepted request's answer; `Err` says why it cannot be followed.
    pub fn apply(&mut self, r: &Request) -> Result<Applied, String> {
        if !r.seen.is_empty() {
            return self.observe(r);
        }
        let response = r.response.clone().unwrap_or(Value::Null);
        if r.verb == "deletecollection" {
            return self.delete_collection(r, &response);
        }
        // A create, or a server-side apply or an update that created (answered 201 Created).
        let creates = r.subresource.is_none() && (r.verb == "create" || r.code == 201);
        if creates {
            let name = response["metadata"]["name"]
                .as_str()
                .ok_or("the answer has no metadata.name")?
                .to_string();
            if self.live.contains_key(&key(r.kind, &name)) {
                return Err(format!(
                    "creates {name}, which the log already has: a deletion is missing from the log"
                ));
            }
            let version = version(&response);
            self.live.insert(key(r.kind, &name), response.clone());
            self.born.insert(key(r.kind, &name), r.at);
            return Ok(Applied {
                before: None,
                after: Some(response.clone()),
                changes: vec![Change {
                    event_type: EventType::Added,
                    object: response,
                    version,
                    floating: false,
                }],
            });
        }
        let name = r.name.clone().ok_or("the request names no object")?;
        let before = self.get(r.kind, &name).cloned().ok_or_else(|| {
            format!("writes {name}, whose creation is not in the log: the log must begin before the objects it follows are created")
        })?;
        let mut after = before.clone();
        let mut new_version = None;
        let mut vanished = false;
        match (r.subresource.as_deref(), response["kind"].as_str()) {
            (Some("binding"), _) => {
                let node = r
                    .request
                    .as_ref()
                    .and_then(|b| b.pointer("/target/name"))
                    .and_then(|n| n.as_str())
                    .ok_or("a binding without target.name")?;
                after["spec"]["nodeName"] = Value::from(node);
            }
            (Some("eviction"), _) => {
                return Err("an eviction: the model has no evictions".into());
            }
            (Some("scale"), _) => {
                let replicas = response
                    .pointer("/spec/replicas")
                    .cloned()
                    .unwrap_or(Value::from(0));
                if after["spec"]["replicas"] != replicas {
                    let generation = after["metadata"]["generation"].as_i64().unwrap_or(0);
                    after["metadata"]["generation"] = Value::from(generation + 1);
                    after["spec"]["replicas"] = replicas;
                }
                after["metadata"]["resourceVersion"] = response["metadata"]["resourceVersion"].clone();
                new_version = version(&response);
            }
            (_, Some("Status")) if r.verb == "delete" => {
                // Removed at once (a ReplicaSet without finalizers).
                vanished = true;
            }
            (_, Some("PartialObjectMetadata")) => {
                after["metadata"] = response["metadata"].clone();
                new_version = version(&response);
            }
            (_, Some("Pod" | "ReplicaSet")) => {
                after = response.clone();
                new_version = version(&response);
            }
            (_, other) => {
                return Err(format!(
                    "an answer of kind {other:?}, where the import expects the object, a Scale, PartialObjectMetadata or a Status"
                ))
            }
        }
        let mut changes = Vec::new();
        let gone = vanished || removed(r.kind, &after);
        let deleted_by_answer =
            gone && r.verb == "delete" && !vanished && self.removal_version_in_answer;
        if deleted_by_answer {
            // The answer's version is the removal's; the mark before it (when the delete
            // had to mark the object first) is not in the log.
            let marked = ["deletionTimestamp", "deletionGracePeriodSeconds"]
                .iter()
                .any(|f| before["metadata"][f] != after["metadata"][f]);
            if marked {
                // Committed after the writes that completed before the delete came in (where
                // the import puts it) and before its removal: the log says no more.
                changes.push(Change {
                    event_type: EventType::Modified,
                    object: after.clone(),
                    version: None,
                    floating: true,
                });
            }
            changes.push(Change {
                event_type: EventType::Deleted,
                object: after.clone(),
                version: new_version,
                floating: false,
            });
        } else {
            let modified = match new_version {
                Some(v) => Some(v) > version(&before),
                None => r.subresource.as_deref() == Some("binding"),
            };
            if modified {
                changes.push(Change {
                    event_type: EventType::Modified,
                    object: after.clone(),
                    version: new_version,
                    floating: false,
                });
            }
            if gone {
                // The DELETED event carries the object as it was last stored.
                let last = if modified {
                    after.clone()
                } else {
                    before.clone()
                };
                changes.push(Change {
                    event_type: EventType::Deleted,
                    object: last,
                    version: None,
                    floating: false,
                });
            }
        }
        if gone {
            self.live.remove(&key(r.kind, &name));
            self.born.remove(&key(r.kind, &name));
        } else {
            self.live.insert(key(r.kind, &name), after.clone());
        }
        Ok(Applied {
            before: Some(before),
            after: (!gone).then_some(after),
            changes,
        })
    }

    /// A deletecollection: its answer lists the objects as the server listed them before
    /// deleting each (k8s.io/apiserver `pkg/registry/generic/registry/store.go`,
    /// `(*Store).DeleteCollection`), not what each delete did. Each is removed at once when it
    /// carries no finalizer and the delete asks for none (Background, or no policy, apps/v1's
    /// default): a DELETED event at a version the log does not give, in the list's order,
    /// which is the order the server deleted them. A delete that would mark an object instead
    /// (Foreground, Orphan, a finalizer it carries) leaves it at a version and with a
    /// deletionTimestamp the log does not give either, and is not followed.
    fn delete_collection(&mut self, r: &Request, response: &Value) -> Result<Applied, String> {
        if r.kind != Kind::ReplicaSet {
            return Err("a deletecollection of pods: no scenario step does it (a `delete` step deletes pods one by one)".into());
        }
        let asks_finalizer = r
            .request
            .as_ref()
            .and_then(|o| o["propagationPolicy"].as_str())
            .is_some_and(|p| p != "Background");
        let items = response["items"]
            .as_array()
            .ok_or("a deletecollection answered without items")?;
        let mut changes = Vec::new();
        for item in items {
            let name = item["metadata"]["name"]
                .as_str()
                .ok_or("a deletecollection's item has no metadata.name")?;
            let before = self.get(r.kind, name).cloned().ok_or_else(|| {
                format!("deletes {name}, whose creation is not in the log: the log must begin before the objects it follows are created")
            })?;
            let finalizers = before["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| !f.is_empty());
            let marked = before["metadata"]["deletionTimestamp"].is_string();
            if asks_finalizer || finalizers || marked {
                return Err(format!(
                    "a deletecollection that marks {name} rather than removing it (a propagationPolicy other than Background, or finalizers, or a deletion under way): the log does not give the mark"
                ));
            }
            self.live.remove(&key(r.kind, name));
            self.born.remove(&key(r.kind, name));
            changes.push(Change {
                event_type: EventType::Deleted,
                object: before,
                version: None,
                floating: false,
            });
        }
        Ok(Applied {
            before: None,
            after: None,
            changes,
        })
    }

    /// A write seen in a watch stream: its events are the objects as stored, so they are
    /// taken as they are (no answer to interpret).
    fn observe(&mut self, r: &Request) -> Result<Applied, String> {
        let first = &r.seen[0].object;
        let name = first["metadata"]["name"]
            .as_str()
            .ok_or("an object without metadata.name")?
            .to_string();
        let before = self.get(r.kind, &name).cloned();
        if before.is_none() && r.seen[0].event_type != EventType::Added {
            return Err(format!("{name} is written, but its creation is not in the stream: start the watches before the objects they follow are created"));
        }
        let mut after = before.clone();
        for change in &r.seen {
            match change.event_type {
                EventType::Added => {
                    if after.is_some() {
                        return Err(format!("{name} is added again without being deleted: an event is missing from the stream"));
                    }
                    self.born.insert(key(r.kind, &name), r.at);
                    after = Some(change.object.clone());
                }
                EventType::Modified => after = Some(change.object.clone()),
                EventType::Deleted => after = None,
            }
        }
        match &after {
            Some(object) => {
                self.live.insert(key(r.kind, &name), object.clone());
            }
            None => {
                self.live.remove(&key(r.kind, &name));
                self.born.remove(&key(r.kind, &name));
            }
        }
        Ok(Applied {
            before,
            after,
            changes: r.seen.clone(),
        })
    }
}
