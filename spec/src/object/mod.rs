//! The API objects of the model: ReplicaSets, pods and what they share.

pub mod labels;
pub mod meta;
pub mod pod;
pub mod replicaset;

pub use labels::{
    labels, render_labels, render_labels_compact, LabelSelector, Labels, Operator, Requirement,
};
pub use meta::{Finalizer, Meta, OwnerKind, OwnerReference, Rv, Seconds, Uid};
pub use pod::{deletion_cost, Pod, PodPhase, POD_DELETION_COST};
pub use replicaset::{ReplicaFailure, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
