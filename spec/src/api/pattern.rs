//! Which requests a scenario holds at a gate: whose, a verb, a resource and, optionally, a
//! name.
//!
//! A sync that has decided has not yet acted: its request is on its way. A scenario places a
//! race by holding some of the controller's requests until other writes have landed
//! (`hold: {requests: …}` … `release: {requests: …}`), or the garbage collector's
//! (`requests: {from: garbage-collector, …}`: it has decided to orphan or delete, and its
//! write lands later). The same pattern is read by the model (a matching request of a sync
//! waits, a matching work item of the collector waits, [`crate::model`]) and by the runner's
//! gates on a cluster — the sender's own gate, so the gate itself ignores `from` — which see
//! HTTP: a verb is the request's method (`get` a GET of one object, not a list or a watch), a
//! resource the path's (`replicasets/status` the subresource).

use super::request::Request;
use crate::model::Recipient;
use serde::{Deserialize, Serialize};
use std::fmt;

/// An API verb, as Kubernetes' authorization names the write verbs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    Get,
    Create,
    Update,
    Patch,
    Delete,
}

/// A resource a ReplicaSet controller sends requests about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Resource {
    #[serde(rename = "pods")]
    Pods,
    #[serde(rename = "replicasets")]
    ReplicaSets,
    #[serde(rename = "replicasets/status")]
    ReplicaSetStatus,
}

/// The requests a hold catches: every one of `verb` on `resource` that `from` sends, or only
/// those naming `name` (a pod create names no pod: its name is generated).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestPattern {
    /// The sender: the ReplicaSet controller unless said.
    #[serde(
        default,
        skip_serializing_if = "Recipient::is_controller",
        with = "sender"
    )]
    pub from: Recipient,
    pub verb: Verb,
    pub resource: Resource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Verb {
    pub const ALL: [Verb; 5] = [
        Verb::Get,
        Verb::Create,
        Verb::Update,
        Verb::Patch,
        Verb::Delete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }

    /// The HTTP method that carries the verb.
    pub fn method(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Create => "POST",
            Verb::Update => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }
}

impl Resource {
    pub const ALL: [Resource; 3] = [
        Resource::Pods,
        Resource::ReplicaSets,
        Resource::ReplicaSetStatus,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::ReplicaSets => "replicasets",
            Resource::ReplicaSetStatus => "replicasets/status",
        }
    }
}

/// A pattern's sender as a scenario names it: `replicaset-controller` or `garbage-collector`.
mod sender {
    use crate::model::Recipient;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(from: &Recipient, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(from)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Recipient, D::Error> {
        let name = String::deserialize(d)?;
        [Recipient::ReplicaSetController, Recipient::GarbageCollector]
            .into_iter()
            .find(|r| r.to_string() == name)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "expected `replicaset-controller` or `garbage-collector`, got `{name}`"
                ))
            })
    }
}

impl RequestPattern {
    /// The pattern that catches exactly the request `req` of `from` (a pod create names no
    /// pod); `None` for a request no gate can hold (a write of a pod's subresources).
    pub fn exactly(from: Recipient, req: &Request) -> Option<RequestPattern> {
        let (verb, resource, name) = req.verb_resource_name()?;
        Some(RequestPattern {
            from,
            verb,
            resource,
            name: name.map(String::from),
        })
    }

    /// Whether the request `req` that `from` sends is caught.
    pub fn catches(&self, from: Recipient, req: &Request) -> bool {
        self.from == from && self.matches_request(req)
    }

    /// Whether a request of `verb` on `resource`, naming `name` (if it names one), is caught,
    /// whoever sends it (a gate sees only its own sender's).
    pub fn matches(&self, verb: Verb, resource: Resource, name: Option<&str>) -> bool {
        self.verb == verb
            && self.resource == resource
            && self.name.as_deref().is_none_or(|n| Some(n) == name)
    }

    /// Whether the model's request is caught.
    pub fn matches_request(&self, req: &Request) -> bool {
        req.verb_resource_name()
            .is_some_and(|(verb, resource, name)| self.matches(verb, resource, name))
    }

    /// Whether the live GET of the ReplicaSet `name` (a sync's adoption recheck, its status
    /// retry) is caught.
    pub fn matches_get(&self, name: &str) -> bool {
        self.matches(Verb::Get, Resource::ReplicaSets, Some(name))
    }
}

impl Request {
    /// The request's verb, resource and the object it names (none for a pod create); `None`
    /// for the writes of a pod's subresources (the scheduler's binding, the kubelet's
    /// status) and a client's writes of other kinds, which no controller sends.
    pub fn verb_resource_name(&self) -> Option<(Verb, Resource, Option<&str>)> {
        use Request as R;
        Some(match self {
            R::CreateReplicaSet(rs) => (Verb::Create, Resource::ReplicaSets, Some(&rs.meta.name)),
            R::ReplaceReplicaSet(rs) => (Verb::Update, Resource::ReplicaSets, Some(&rs.meta.name)),
            R::ScaleReplicaSet { name, .. } => (Verb::Patch, Resource::ReplicaSets, Some(name)),
            R::UpdateReplicaSetStatus { name, .. } => {
                (Verb::Update, Resource::ReplicaSetStatus, Some(name))
            }
            R::DeleteReplicaSet { name, .. } => (Verb::Delete, Resource::ReplicaSets, Some(name)),
            R::RemoveFinalizer { name, .. } => (Verb::Patch, Resource::ReplicaSets, Some(name)),
            R::CreatePod(_) => (Verb::Create, Resource::Pods, None),
            R::PatchPodOwnerReferences { name, .. }
            | R::SetPodLabels { name, .. }
            | R::SetPodDeletionCost { name, .. }
            | R::SetPodOwnerReferences { name, .. } => (Verb::Patch, Resource::Pods, Some(name)),
            R::DeletePod { name, .. } | R::FinishPodDeletion { name } => {
                (Verb::Delete, Resource::Pods, Some(name))
            }
            R::BindPod { .. }
            | R::SetPodStatus { .. }
            | R::SetPodRestarts { .. }
            | R::CreateOther { .. }
            | R::DeleteOther { .. } => return None,
        })
    }
}

impl fmt::Display for RequestPattern {
    /// `PATCH pods`, `DELETE pods/pod1`, `PUT replicasets/status/frontend` (read: the status
    /// of frontend); the sender is said where the pattern is used.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.verb.method(), self.resource.as_str())?;
        match &self.name {
            Some(name) => write!(f, " {name}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{DeleteOptions, OwnerRefPatch};

    fn pattern(verb: Verb, resource: Resource, name: Option<&str>) -> RequestPattern {
        RequestPattern {
            from: Recipient::ReplicaSetController,
            verb,
            resource,
            name: name.map(str::to_string),
        }
    }

    #[test]
    fn a_pattern_catches_its_verb_and_resource_and_only_its_name() {
        let delete = Request::DeletePod {
            name: "pod1".into(),
            options: DeleteOptions::default(),
        };
        assert!(pattern(Verb::Delete, Resource::Pods, None).matches_request(&delete));
        assert!(pattern(Verb::Delete, Resource::Pods, Some("pod1")).matches_request(&delete));
        assert!(!pattern(Verb::Delete, Resource::Pods, Some("pod2")).matches_request(&delete));
        assert!(!pattern(Verb::Patch, Resource::Pods, None).matches_request(&delete));
        let adopt = Request::PatchPodOwnerReferences {
            name: "pod1".into(),
            uid: 3,
            patch: OwnerRefPatch::Remove(vec![1]),
        };
        assert!(pattern(Verb::Patch, Resource::Pods, Some("pod1")).matches_request(&adopt));
        assert!(!pattern(Verb::Patch, Resource::ReplicaSets, None).matches_request(&adopt));
        assert!(pattern(Verb::Get, Resource::ReplicaSets, Some("frontend")).matches_get("frontend"));
        assert!(!pattern(Verb::Get, Resource::ReplicaSetStatus, None).matches_get("frontend"));
    }

    #[test]
    fn a_pattern_reads_as_the_http_request_it_catches() {
        assert_eq!(
            pattern(Verb::Update, Resource::ReplicaSetStatus, Some("frontend")).to_string(),
            "PUT replicasets/status frontend"
        );
        assert_eq!(
            pattern(Verb::Patch, Resource::Pods, None).to_string(),
            "PATCH pods"
        );
    }
}
