//! An owner reference as a scenario writes it: to an owner by kind and name, with the UID
//! that owner has when the step runs (a client reads it first, as upstream's tests take
//! `rs.UID` from the object they created).
//!
//! A reference names a ReplicaSet (`{replicaset: NAME}`) or an owner of any other kind
//! (`{apiVersion: apps/v1, kind: StatefulSet, name: NAME}`). An owner of another kind that
//! the scenario created and has not deleted gives its UID; one that does not exist gives a
//! UID nothing has, as upstream's `TestGeneralPodAdoption` draws one with `uuid.NewUUID()`
//! for a StatefulSet that was never created (test/integration/replicaset/replicaset_test.go).
//! Such a reference is dangling from the start, and the garbage collector treats it so.

use super::script::is_false;
use crate::api::ApiServer;
use crate::object::{OtherKind, OwnerKind, OwnerReference};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One owner reference of a `setOwnerReferences` step.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "Written", into = "Written")]
pub struct OwnerByName {
    pub owner: NamedOwner,
    pub controller: bool,
    pub block_owner_deletion: bool,
}

/// The owner a reference names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NamedOwner {
    ReplicaSet(String),
    Other { kind: OtherKind, name: String },
}

impl OwnerByName {
    /// A reference to the ReplicaSet `name`, neither controller nor blocking.
    pub fn replicaset(name: &str) -> Self {
        OwnerByName {
            owner: NamedOwner::ReplicaSet(name.to_string()),
            controller: false,
            block_owner_deletion: false,
        }
    }

    /// The reference as the API server stores it: the UID the owner has now, or for an owner
    /// of another kind that does not exist a UID nothing has (`None` for a ReplicaSet that
    /// does not exist: a client reading it for its UID is answered NotFound).
    pub fn reference(&self, api: &mut ApiServer) -> Option<OwnerReference> {
        let uid = match &self.owner {
            NamedOwner::ReplicaSet(name) => api.replicasets.get(name)?.meta.uid,
            NamedOwner::Other { kind, name } => match api.other(kind, name) {
                Some(o) => o.uid,
                None => api.fresh_uid(),
            },
        };
        Some(OwnerReference {
            kind: self.owner.kind(),
            name: self.owner.name().to_string(),
            uid,
            controller: self.controller,
            block_owner_deletion: self.block_owner_deletion,
        })
    }

    /// The reference `r` as a step writes it again, when the step would give it the same
    /// UID: a ReplicaSet's or a live owner's of another kind. `None` for a dangling one.
    pub fn of(r: &OwnerReference, api: &ApiServer) -> Option<Self> {
        let owner = match &r.kind {
            OwnerKind::ReplicaSet => {
                let rs = api.replicasets.get(&r.name)?;
                (rs.meta.uid == r.uid).then(|| NamedOwner::ReplicaSet(r.name.clone()))?
            }
            OwnerKind::Other(kind) => {
                let o = api.other(kind, &r.name)?;
                (o.uid == r.uid).then(|| NamedOwner::Other {
                    kind: kind.clone(),
                    name: r.name.clone(),
                })?
            }
        };
        Some(OwnerByName {
            owner,
            controller: r.controller,
            block_owner_deletion: r.block_owner_deletion,
        })
    }
}

impl NamedOwner {
    pub fn name(&self) -> &str {
        match self {
            NamedOwner::ReplicaSet(name) | NamedOwner::Other { name, .. } => name,
        }
    }

    pub fn kind(&self) -> OwnerKind {
        match self {
            NamedOwner::ReplicaSet(_) => OwnerKind::ReplicaSet,
            NamedOwner::Other { kind, .. } => OwnerKind::Other(kind.clone()),
        }
    }

    /// The ReplicaSet's name, for a reference to one.
    pub fn replicaset(&self) -> Option<&str> {
        match self {
            NamedOwner::ReplicaSet(name) => Some(name),
            NamedOwner::Other { .. } => None,
        }
    }
}

/// `KIND/NAME` as kubectl names an object: `rs/frontend`, `statefulset.apps/web`,
/// `configmap/owner`.
impl fmt::Display for NamedOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NamedOwner::ReplicaSet(name) => write!(f, "rs/{name}"),
            NamedOwner::Other { kind, name } => {
                let resource = kind.kind.to_lowercase();
                match kind.api_version.split_once('/') {
                    Some((group, _)) => write!(f, "{resource}.{group}/{name}"),
                    None => write!(f, "{resource}/{name}"),
                }
            }
        }
    }
}

/// A reference as a scenario file writes it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Written {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replicaset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    controller: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    block_owner_deletion: bool,
}

impl TryFrom<Written> for OwnerByName {
    type Error = String;

    fn try_from(w: Written) -> Result<Self, String> {
        let owner = match (w.replicaset, w.api_version, w.kind, w.name) {
            (Some(name), None, None, None) => NamedOwner::ReplicaSet(name),
            (None, Some(api_version), Some(kind), Some(name)) => {
                if kind.is_empty() || name.is_empty() || api_version.is_empty() {
                    return Err("apiVersion, kind and name must not be empty".into());
                }
                match OwnerKind::of(&api_version, &kind) {
                    OwnerKind::ReplicaSet => NamedOwner::ReplicaSet(name),
                    OwnerKind::Other(kind) => NamedOwner::Other { kind, name },
                }
            }
            _ => {
                return Err(
                    "expected {replicaset: NAME} or {apiVersion: API_VERSION, kind: KIND, name: NAME} (with controller: BOOL, blockOwnerDeletion: BOOL)"
                        .into(),
                )
            }
        };
        Ok(OwnerByName {
            owner,
            controller: w.controller,
            block_owner_deletion: w.block_owner_deletion,
        })
    }
}

impl From<OwnerByName> for Written {
    fn from(o: OwnerByName) -> Self {
        let mut w = Written {
            controller: o.controller,
            block_owner_deletion: o.block_owner_deletion,
            ..Written::default()
        };
        match o.owner {
            NamedOwner::ReplicaSet(name) => w.replicaset = Some(name),
            NamedOwner::Other { kind, name } => {
                w.api_version = Some(kind.api_version);
                w.kind = Some(kind.kind);
                w.name = Some(name);
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<OwnerByName, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn a_reference_names_a_replicaset_or_an_owner_of_another_kind() {
        let rs = read(r#"{"replicaset": "rs", "controller": true}"#).unwrap();
        assert_eq!(rs.owner, NamedOwner::ReplicaSet("rs".into()));
        assert!(rs.controller && !rs.block_owner_deletion);
        let sts =
            read(r#"{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "rs"}"#).unwrap();
        assert_eq!(sts.owner.to_string(), "statefulset.apps/rs");
        let cm = read(r#"{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner"}"#).unwrap();
        assert_eq!(cm.owner.to_string(), "configmap/owner");
        // A ReplicaSet written out in full is the same reference as by `replicaset`.
        let full =
            read(r#"{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}"#).unwrap();
        assert_eq!(full.owner, NamedOwner::ReplicaSet("rs".into()));
        // Written back as read.
        for o in [rs, sts, cm] {
            let back: OwnerByName =
                serde_json::from_value(serde_json::to_value(&o).unwrap()).unwrap();
            assert_eq!(back, o);
        }
        assert_eq!(
            serde_json::to_value(OwnerByName::replicaset("rs")).unwrap(),
            serde_json::json!({"replicaset": "rs"})
        );
    }

    #[test]
    fn a_reference_that_names_no_owner_or_two_is_refused_saying_what_is_expected() {
        for bad in [
            r#"{"controller": true}"#,
            r#"{"replicaset": "rs", "kind": "StatefulSet", "name": "x", "apiVersion": "apps/v1"}"#,
            r#"{"kind": "StatefulSet", "name": "x"}"#,
            r#"{"apiVersion": "apps/v1", "kind": "", "name": "x"}"#,
        ] {
            let e = read(bad).unwrap_err();
            assert!(
                e.contains("expected") || e.contains("must not be empty"),
                "{bad}: {e}"
            );
        }
        assert!(read(r#"{"replicaset": "rs", "uid": "x"}"#)
            .unwrap_err()
            .contains("unknown field"));
    }

    #[test]
    fn an_owner_of_another_kind_that_does_not_exist_gets_a_uid_nothing_has() {
        let mut api = ApiServer::default();
        let sts: OwnerByName =
            read(r#"{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "rs"}"#).unwrap();
        let first = sts.reference(&mut api).unwrap();
        let second = sts.reference(&mut api).unwrap();
        assert_ne!(first.uid, second.uid);
        assert_eq!(first.kind.kind(), "StatefulSet");
        assert!(OwnerByName::of(&first, &api).is_none(), "dangling");
        assert!(OwnerByName::replicaset("rs").reference(&mut api).is_none());
    }
}
