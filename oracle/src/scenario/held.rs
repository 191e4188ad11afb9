//! What a scenario's steps hold at the gates so far, followed step by step: the watch
//! events held from each recipient and the controller's requests held.
//!
//! The import reads it to know where a quiet gap may be a settle point (nothing held), and
//! the runner to know which ReplicaSets' status may lag at a settle point because the runner
//! itself keeps the controller from writing it.

use super::StepKind;
use rsmc_spec::api::pattern::{Resource, Verb};
use rsmc_spec::api::{Kind, RequestPattern};
use rsmc_spec::model::Recipient;
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default)]
pub struct Held {
    events: BTreeSet<(Recipient, Kind)>,
    requests: BTreeSet<RequestPattern>,
}

impl Held {
    /// Take one step into account.
    pub fn follow(&mut self, step: &StepKind) {
        match step {
            StepKind::Hold { kind, to } => {
                self.events.insert((*to, *kind));
            }
            StepKind::Release { kind, to } => {
                self.events.remove(&(*to, *kind));
            }
            StepKind::HoldRequests(h) => {
                self.requests.insert(h.pattern.clone());
            }
            // A release that holds again leaves the requests held.
            StepKind::ReleaseRequests {
                pattern,
                then_hold_after: None,
            } => {
                self.requests.remove(pattern);
            }
            _ => {}
        }
    }

    /// Whether nothing is held: a quiet gap may be a settle point.
    pub fn none(&self) -> bool {
        self.events.is_empty() && self.requests.is_empty()
    }

    /// Whether the ReplicaSet controller may be kept from writing `replicaset`'s current
    /// status by what is held: its ReplicaSet events (it has not seen the latest
    /// generation), or its status update of that ReplicaSet waiting at the gate. A settle
    /// point then does not wait for `status.observedGeneration` to catch up: in the model
    /// the controller is as done as it can be.
    pub fn status_may_lag(&self, replicaset: &str) -> bool {
        self.events
            .contains(&(Recipient::ReplicaSetController, Kind::ReplicaSet))
            || self
                .requests
                .iter()
                .any(|p| p.matches(Verb::Update, Resource::ReplicaSetStatus, Some(replicaset)))
    }
}
