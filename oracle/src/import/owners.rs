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
//! there does not exist. Anything else — a kind the policy does not log (a custom resource),
//! a namespace created before the log begins, an owner that exists — is refused with the
//! reason: the model's scenario steps create owners of other kinds as ConfigMaps only, and a
//! recording that does not say whether the owner exists must not be given a guess.

use rsmc_spec::object::meta::OtherKind;
use std::collections::BTreeMap;

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
}

/// What the log has shown of one object of another kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    /// Created (at this line), not deleted since.
    Created(usize),
    /// Deleted (at this line): removed, or only marked while finalizers run — the log at level
    /// Metadata does not say which.
    Deleted(usize),
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
}

impl OtherOwners {
    /// The namespace was created at `line`.
    pub fn namespace_created(&mut self, line: usize) {
        self.born = Some(line);
        self.seen.clear();
        self.unnamed.clear();
    }

    /// Follow a create or delete.
    pub fn record(&mut self, w: &OtherWrite) {
        let seen = if w.created {
            Seen::Created(w.line)
        } else {
            Seen::Deleted(w.line)
        };
        match &w.name {
            Some(name) => {
                self.seen.insert((w.kind.to_string(), name.clone()), seen);
            }
            None if w.created => {
                self.unnamed.insert(w.kind.to_string(), w.line);
            }
            None => {
                for ((kind, _), s) in self.seen.iter_mut() {
                    if *kind == w.kind && matches!(s, Seen::Created(_)) {
                        *s = seen;
                    }
                }
            }
        }
    }

    /// Whether the owner `name` of `kind` is known not to exist now (so a reference to it,
    /// whatever its UID, is dangling); `Err` says why the log cannot tell.
    pub fn absent(&self, kind: &OtherKind, name: &str) -> Result<(), String> {
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
            None => Ok(()),
            Some(Seen::Created(line)) => Err(format!(
                "a client sets an owner reference to {what}, which exists (created at line {line}, after the namespace at line {born}): a scenario's owners of other kinds are ConfigMaps its steps create, which the import does not read yet"
            )),
            Some(Seen::Deleted(line)) => Err(format!(
                "a client sets an owner reference to {what}, deleted at line {line}: the log (level Metadata) does not say whether it was removed or is still being deleted"
            )),
        }
    }
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
        }
    }

    fn statefulset() -> OtherKind {
        OtherKind::new("apps/v1", "StatefulSet")
    }

    #[test]
    fn an_owner_never_created_in_a_namespace_the_log_saw_created_is_absent() {
        let mut owners = OtherOwners::default();
        let err = owners.absent(&statefulset(), "rs").unwrap_err();
        assert!(
            err.contains("does not show the namespace's creation"),
            "{err}"
        );
        owners.namespace_created(1);
        owners.absent(&statefulset(), "rs").unwrap();
        owners.record(&write("StatefulSet", Some("rs"), true, 5));
        let err = owners.absent(&statefulset(), "rs").unwrap_err();
        assert!(err.contains("which exists (created at line 5"), "{err}");
        // Another kind of the same name is not it.
        owners
            .absent(&OtherKind::new("apps/v1", "DaemonSet"), "rs")
            .unwrap();
        owners.record(&write("StatefulSet", None, false, 9));
        let err = owners.absent(&statefulset(), "rs").unwrap_err();
        assert!(err.contains("deleted at line 9"), "{err}");
        owners.record(&write("Job", None, true, 12));
        let err = owners
            .absent(&OtherKind::new("batch/v1", "Job"), "j")
            .unwrap_err();
        assert!(err.contains("generateName at line 12"), "{err}");
    }

    #[test]
    fn a_kind_the_policy_does_not_log_is_refused_by_name() {
        let mut owners = OtherOwners::default();
        owners.namespace_created(1);
        let err = owners
            .absent(&OtherKind::new("example.com/v1", "Widget"), "w")
            .unwrap_err();
        assert!(err.contains("example.com/v1 Widget/w"), "{err}");
        assert!(err.contains("StatefulSet, DaemonSet"), "{err}");
        // The group is part of the kind: a StatefulSet of another group is not logged.
        assert!(owners
            .absent(&OtherKind::new("example.com/v1", "StatefulSet"), "s")
            .is_err());
    }
}
