//! How a model object is compared with a cluster's: equal up to renaming, or which fields
//! differ.
//!
//! - [`binding`]: the model's and the cluster's objects matched up to renaming (generated
//!   names, UIDs) through a [`binding::Binding`] that a run extends and never breaks, each
//!   object compared through its view of the fields the model has.
//! - [`fields`]: where two such objects differ, field by field, named as the API names them,
//!   for a report that says what differs from the closest allowed object.

pub mod binding;
pub mod fields;
