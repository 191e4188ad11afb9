//! The API objects of the model: ReplicaSets, pods and what they share, and the owners of
//! other kinds that pods may name.

pub mod labels;
pub mod meta;
pub mod other_owner;
pub mod pod;
pub mod replicaset;

pub use labels::{
    labels, render_labels, render_labels_compact, LabelSelector, Labels, Operator, Requirement,
};
pub use meta::{Finalizer, Meta, OtherKind, OwnerKind, OwnerReference, Rv, Seconds, Uid};
pub use other_owner::OtherOwner;
pub use pod::{deletion_cost, Pod, PodPhase, POD_DELETION_COST};
pub use replicaset::{ReplicaFailure, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
