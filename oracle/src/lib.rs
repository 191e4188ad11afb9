//! rsmc-oracle: judging observed ReplicaSet behaviour against the spec.
//!
//! Its subsystems, each using only those below it (the architecture page of the book draws
//! the same):
//!
//! - [`import`] (recordings of any cluster into a scenario and an observed trace),
//!   [`replay`] (`rsmc replay`) and [`cover`] (cover runs);
//! - [`prepared`]: a scenario read, checked and compiled for a profile;
//! - [`judge`]: the verdict on a recording, decided by the witness search
//!   ([`judge::search`]); its `mod.rs` is the map;
//! - [`views`]: kubectl-style tables, side by side, and a trace as text;
//! - [`compare`] (a model object and a cluster's, up to renaming and field by field),
//!   [`explore`] (a segment's runs) and [`trace`] (the `rsmc-trace/v1` file `rsmc check`
//!   writes for every violation);
//! - [`scenario`] (scenarios, and model runs made into scenarios), [`observed`] (the
//!   `rsmc-observed/v1` format) and [`delete_claims`];
//! - [`manifest`] and [`yaml`]; [`error`].

pub mod compare;
pub mod cover;
pub mod delete_claims;
pub mod error;
pub mod explore;
pub mod import;
pub mod judge;
pub mod manifest;
pub mod observed;
pub mod prepared;
pub mod replay;
pub mod scenario;
pub mod trace;
pub mod views;
pub mod yaml;
