//! The model object a manifest stands for, or a cluster showed: a ReplicaSet or a pod.

use rsmc_spec::object::{Pod, ReplicaSet};
use std::sync::Arc;

/// A model object of either kind: what a manifest stands for, or what a cluster showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Object {
    ReplicaSet(Arc<ReplicaSet>),
    Pod(Arc<Pod>),
}

impl Object {
    pub fn name(&self) -> &str {
        match self {
            Object::ReplicaSet(rs) => &rs.meta.name,
            Object::Pod(pod) => &pod.meta.name,
        }
    }

    /// Its resource type, as the model names it.
    pub fn resource(&self) -> rsmc_spec::api::Kind {
        match self {
            Object::ReplicaSet(_) => rsmc_spec::api::Kind::ReplicaSet,
            Object::Pod(_) => rsmc_spec::api::Kind::Pod,
        }
    }

    /// `ReplicaSet` or `Pod`.
    pub fn kind(&self) -> &'static str {
        match self {
            Object::ReplicaSet(_) => "ReplicaSet",
            Object::Pod(_) => "Pod",
        }
    }

    /// `kind/name`, as kubectl names objects.
    pub fn describe(&self) -> String {
        format!("{}/{}", self.kind().to_lowercase(), self.name())
    }
}
