//! Owners of kinds other than ReplicaSet, as an audit log shows them: whether the object a
//! pod's owner reference names exists when a client writes the reference.
//!
//! To the ReplicaSet controller and the garbage collector an owner is its kind, its name and
//! its UID. The collector looks the owner up (`attemptToDeleteItem` → `classifyReferences` →
//! `isDangling` in pkg/controller/garbagecollector/garbagecollector.go): a reference whose
//! owner is absent, or present with another UID, is dangling; the pod is deleted when no
//! other owner holds it, else the reference is patched away. So the model must know whether
//! the owner exists, and a recording must say it. An audit log written with
//! `conformance/audit-policy.yaml` does, for the kinds in [`LOGGED`], in a namespace whose
//! creation is in the log: every create and delete of those kinds is there (at level
//! Metadata, which names the object but not its UID — the apiserver's `LogRequestObject`
//! fills the objectRef's name from a create's body), so an owner that was never created
//! there, or was deleted and removed, does not exist.
//!
//! The model's owners of other kinds that exist are ConfigMaps its steps create and delete
//! (`create: {configMap: NAME}`, `delete: {configMap: NAME}`, in the background). The policy
//! logs ConfigMaps with their answers, so a client's create of a ConfigMap that a pod names as
//! its owner becomes that step, its UID known, and a reference to it with that UID is read
//! as the step's. Anything else — a kind the policy does not log (a custom resource), a
//! namespace created before the log begins, an owner of another kind that exists, a ConfigMap
//! deleted in the foreground or by a controller — is refused with the reason: a recording
//! that does not say whether the owner exists must not be given a guess.

use crate::scenario::StepKind;
use k8s_openapi::jiff::Timestamp;
use rsmc_spec::object::meta::OtherKind;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The kinds whose creates and deletes the audit policy logs, as (API group, resource,
/// kind): the workload kinds that own pods, and ConfigMap, the stand-in for an owner of any
/// kind on a local control plane.
pub const LOGGED: &[(&str, &str, &str)] = &[
    ("apps", "statefulsets", "StatefulSet"),
    ("apps", "daemonsets", "DaemonSet"),
    ("apps", "deployments", "Deployment"),
    ("batch", "jobs", "Job"),
    ("batch", "cronjobs", "CronJob"),
    ("", "replicationcontrollers", "ReplicationController"),
    ("", "configmaps", "ConfigMap"),
];

/// The kind of the objects of `resource` in API group `group`, when the policy logs them.
pub fn logged_kind(group: &str, resource: &str) -> Option<&'static str> {
    LOGGED
        .iter()
        .find(|(g, r, _)| (*g, *r) == (group, resource))
        .map(|(_, _, k)| *k)
}

/// Whether the policy logs the creates and deletes of `kind` (its group read from its
/// `apiVersion`: `apps/v1` is `apps`, `v1` the core group).
fn logs(kind: &OtherKind) -> bool {
    let group = kind.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    LOGGED
        .iter()
        .any(|(g, _, k)| (*g, *k) == (group, kind.kind.as_str()))
}

/// A create or delete of an object of a [`LOGGED`] kind, as the log has it.
#[derive(Clone, Debug)]
pub struct OtherWrite {
    pub namespace: String,
    /// Its kind (the log names the resource; [`logged_kind`] gives the kind).
    pub kind: &'static str,
    /// The object's name; `None` for a deletecollection (every object of the kind) and for a
    /// create whose name the log does not give.
    pub name: Option<String>,
    /// A create (`false`: a delete, which may remove the object or only mark it).
    pub created: bool,
    /// The line it is at.
    pub line: usize,
    /// When its answer was complete.
    pub at: Timestamp,
    /// The object's UID, where the log gives it (a ConfigMap's create or delete, logged with
    /// its answer).
    pub uid: Option<String>,
    /// For a delete: whether it removed the object (answered with a `Status`: no finalizer to
    /// wait for) or only marked it (answered with the object); `None` where the log does not
    /// say (level Metadata).
    pub removed: Option<bool>,
    /// For a delete: the propagation policy it sent, if any.
    pub propagation: Option<String>,
    /// Who sent it, when it was not a client: a controller's write is no scenario step.
    pub by_controller: Option<String>,
}

/// What the log has shown of one object of another kind.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    /// Created (at this line), not deleted since; with its UID where the log gives it.
    Created { line: usize, uid: Option<String> },
    /// Deleted (at this line) and removed, or only marked while finalizers run (`None`: the
    /// log at level Metadata does not say which).
    Deleted { line: usize, removed: Option<bool> },
}

/// The objects of other kinds in one namespace, as far as the log has gone.
#[derive(Clone, Debug, Default)]
pub struct OtherOwners {
    /// The line of the namespace's creation, when the log has it: from there on, every
    /// create and delete of a [`LOGGED`] kind in it is in the log.
    born: Option<usize>,
    seen: BTreeMap<(String, String), Seen>,
    /// Kinds of which an object was created whose name the log does not give (a create by
    /// generateName, logged at level Metadata before the name is generated), with its line.
    unnamed: BTreeMap<String, usize>,
    /// The ConfigMaps a scenario step created (`create: {configMap: NAME}`) and no step has
    /// deleted: the model's owners of another kind.
    stepped: BTreeSet<String>,
}

const CONFIGMAP: &str = "ConfigMap";

impl OtherOwners {
    /// The namespace was created at `line`.
    pub fn namespace_created(&mut self, line: usize) {
        *self = OtherOwners {
            born: Some(line),
            ..OtherOwners::default()
        };
    }

    /// Follow a create or delete; the step it is, if it is one: a client's create of a
    /// ConfigMap that a pod names as its owner somewhere in the recording (`owners`: a
    /// ConfigMap nothing names matters to nothing the model has), and the delete of one.
    /// `Err` says why a delete of such an owner is no step.
    pub fn record(
        &mut self,
        w: &OtherWrite,
        owners: &BTreeSet<String>,
    ) -> Result<Option<StepKind>, String> {
        let seen = if w.created {
            Seen::Created {
                line: w.line,
                uid: w.uid.clone(),
            }
        } else {
            Seen::Deleted {
                line: w.line,
                removed: w.removed,
            }
        };
        let Some(name) = &w.name else {
            if w.created {
                self.unnamed.insert(w.kind.to_string(), w.line);
                return Ok(None);
            }
            if w.kind == CONFIGMAP {
                if let Some(first) = self.stepped.first() {
                    return Err(format!(
                        "a deletecollection of ConfigMaps, among them {first}, which owns pods: a scenario step deletes one ConfigMap"
                    ));
                }
            }
            for ((kind, _), s) in self.seen.iter_mut() {
                if *kind == w.kind && matches!(s, Seen::Created { .. }) {
                    *s = seen.clone();
                }
            }
            return Ok(None);
        };
        self.seen.insert((w.kind.to_string(), name.clone()), seen);
        if w.kind != CONFIGMAP {
            return Ok(None);
        }
        let step = match (w.created, &w.by_controller) {
            (true, None) if owners.contains(name) => {
                self.stepped.insert(name.clone());
                Some(StepKind::CreateConfigMap { name: name.clone() })
            }
            (false, _) if self.stepped.remove(name) => {
                let background = w.propagation.as_deref().is_none_or(|p| p == "Background");
                if let Some(by) = &w.by_controller {
                    return Err(format!(
                        "{by} deletes ConfigMap {name}, which owns pods: a scenario step is a client's delete"
                    ));
                }
                if !background || w.removed != Some(true) {
                    return Err(format!(
                        "ConfigMap {name}, which owns pods, is deleted with propagation {} and {}: a `delete: {{configMap: NAME}}` step deletes it in the background, removed at once",
                        w.propagation.as_deref().unwrap_or("unset"),
                        match w.removed {
                            Some(true) => "removed at once",
                            Some(false) => "kept, marked, while finalizers run",
                            None => "the log does not say whether it was removed",
                        }
                    ));
                }
                Some(StepKind::DeleteConfigMap { name: name.clone() })
            }
            _ => None,
        };
        Ok(step)
    }

    /// Whether the model's step reads a reference to the owner `name` of `kind` with `uid` as
    /// the cluster did: the owner does not exist (the reference is dangling, whatever its
    /// UID), or it is a ConfigMap a step created that is live with that UID. `Err` says why
    /// the log cannot tell, or why no step makes the reference.
    pub fn reference(&self, kind: &OtherKind, name: &str, uid: &str) -> Result<(), String> {
        let what = format!("{} {}/{name}", kind.api_version, kind.kind);
        if !logs(kind) {
            let kinds: Vec<&str> = LOGGED.iter().map(|(_, _, k)| *k).collect();
            return Err(format!(
                "a client sets an owner reference to {what}: the audit policy (conformance/audit-policy.yaml) logs the creates and deletes of {} only, so the log cannot tell whether it exists",
                kinds.join(", ")
            ));
        }
        let Some(born) = self.born else {
            return Err(format!(
                "a client sets an owner reference to {what}: the recording does not show the namespace's creation, so it cannot tell whether the owner exists (an audit log written with conformance/audit-policy.yaml from before the namespace is created does)"
            ));
        };
        if let Some(line) = self.unnamed.get(&kind.kind) {
            return Err(format!(
                "a client sets an owner reference to {what}: a {} whose name the log does not give (created by generateName at line {line}) may be it",
                kind.kind
            ));
        }
        match self.seen.get(&(kind.kind.clone(), name.to_string())) {
            None
            | Some(Seen::Deleted {
                removed: Some(true),
                ..
            }) => Ok(()),
            Some(Seen::Created { uid: Some(live), .. })
                if kind.is_configmap() && self.stepped.contains(name) =>
            {
                if live == uid {
                    Ok(())
                } else {
                    Err(format!(
                        "a client sets an owner reference to {what} with UID {uid}, while the live ConfigMap of that name has UID {live}: a step's reference takes the live owner's UID"
                    ))
                }
            }
            Some(Seen::Created { line, .. }) => Err(format!(
                "a client sets an owner reference to {what}, which exists (created at line {line}, after the namespace at line {born}): a scenario's owners of other kinds are ConfigMaps a client creates"
            )),
            Some(Seen::Deleted { line, .. }) => Err(format!(
                "a client sets an owner reference to {what}, deleted at line {line}: the log does not say it was removed rather than kept while finalizers run"
            )),
        }
    }
}

/// The ConfigMaps pods name as owners in `writes` (their objects sent or answered): the
/// ones whose creates are steps.
pub fn configmap_owners<'a>(writes: impl Iterator<Item = &'a Value>) -> BTreeSet<String> {
    writes
        .filter_map(|o| o.pointer("/metadata/ownerReferences")?.as_array())
        .flatten()
        .filter(|r| r["apiVersion"] == "v1" && r["kind"] == CONFIGMAP)
        .filter_map(|r| r["name"].as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(kind: &'static str, name: Option<&str>, created: bool, line: usize) -> OtherWrite {
        OtherWrite {
            namespace: "ns".into(),
            kind,
            name: name.map(str::to_string),
            created,
            line,
            at: Timestamp::UNIX_EPOCH,
            uid: None,
            removed: None,
            propagation: None,
            by_controller: None,
        }
    }

    fn record(owners: &mut OtherOwners, w: OtherWrite) {
        owners.record(&w, &BTreeSet::new()).unwrap();
    }

    fn statefulset() -> OtherKind {
        OtherKind::new("apps/v1", "StatefulSet")
    }

    #[test]
    fn an_owner_never_created_in_a_namespace_the_log_saw_created_is_absent() {
        let mut owners = OtherOwners::default();
        let err = owners.reference(&statefulset(), "rs", "u").unwrap_err();
        assert!(
            err.contains("does not show the namespace's creation"),
            "{err}"
        );
        owners.namespace_created(1);
        owners.reference(&statefulset(), "rs", "u").unwrap();
        record(&mut owners, write("StatefulSet", Some("rs"), true, 5));
        let err = owners.reference(&statefulset(), "rs", "u").unwrap_err();
        assert!(err.contains("which exists (created at line 5"), "{err}");
        // Another kind of the same name is not it.
        owners
            .reference(&OtherKind::new("apps/v1", "DaemonSet"), "rs", "u")
            .unwrap();
        record(&mut owners, write("StatefulSet", None, false, 9));
        let err = owners.reference(&statefulset(), "rs", "u").unwrap_err();
        assert!(err.contains("deleted at line 9"), "{err}");
        record(&mut owners, write("Job", None, true, 12));
        let err = owners
            .reference(&OtherKind::new("batch/v1", "Job"), "j", "u")
            .unwrap_err();
        assert!(err.contains("generateName at line 12"), "{err}");
    }

    #[test]
    fn a_configmap_a_pod_names_is_created_and_deleted_by_steps() {
        let configmap = OtherKind::configmap();
        let mut owners = OtherOwners::default();
        owners.namespace_created(1);
        let named: BTreeSet<String> = ["keeper".to_string()].into();
        let mut create = write("ConfigMap", Some("keeper"), true, 3);
        create.uid = Some("u1".into());
        assert_eq!(
            owners.record(&create, &named).unwrap(),
            Some(StepKind::CreateConfigMap {
                name: "keeper".into()
            })
        );
        // One no pod names is no step; it exists all the same.
        let other = write("ConfigMap", Some("other"), true, 4);
        assert_eq!(owners.record(&other, &named).unwrap(), None);
        owners.reference(&configmap, "keeper", "u1").unwrap();
        let err = owners.reference(&configmap, "keeper", "u2").unwrap_err();
        assert!(err.contains("has UID u1"), "{err}");
        let err = owners.reference(&configmap, "other", "u3").unwrap_err();
        assert!(err.contains("which exists (created at line 4"), "{err}");
        let mut delete = write("ConfigMap", Some("keeper"), false, 8);
        delete.propagation = Some("Foreground".into());
        delete.removed = Some(false);
        let err = owners.clone().record(&delete, &named).unwrap_err();
        assert!(
            err.contains("propagation Foreground and kept, marked"),
            "{err}"
        );
        delete.by_controller = Some("garbage-collector".into());
        let err = owners.clone().record(&delete, &named).unwrap_err();
        assert!(
            err.contains("garbage-collector deletes ConfigMap keeper"),
            "{err}"
        );
        delete.by_controller = None;
        delete.propagation = None;
        delete.removed = Some(true);
        assert_eq!(
            owners.record(&delete, &named).unwrap(),
            Some(StepKind::DeleteConfigMap {
                name: "keeper".into()
            })
        );
        // Removed: a reference to it now is dangling.
        owners.reference(&configmap, "keeper", "u1").unwrap();
    }

    #[test]
    fn a_kind_the_policy_does_not_log_is_refused_by_name() {
        let mut owners = OtherOwners::default();
        owners.namespace_created(1);
        let err = owners
            .reference(&OtherKind::new("example.com/v1", "Widget"), "w", "u")
            .unwrap_err();
        assert!(err.contains("example.com/v1 Widget/w"), "{err}");
        assert!(err.contains("StatefulSet, DaemonSet"), "{err}");
        // The group is part of the kind: a StatefulSet of another group is not logged.
        assert!(owners
            .reference(&OtherKind::new("example.com/v1", "StatefulSet"), "s", "u")
            .is_err());
    }
}
