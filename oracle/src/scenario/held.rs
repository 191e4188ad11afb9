//! What a scenario's steps hold at the gates so far, followed step by step: the watch
//! events held from each recipient and the requests held (the controller's and the garbage
//! collector's).
//!
//! Validation reads it to check that a release names something held, a hold something
//! not yet held, an await of a held request a request held, and that every hold of requests
//! is released. The import checks a recording's fault marks with it and reads it to know
//! where a quiet gap may be a settle point (nothing held), and the runner to know which
//! ReplicaSets' status may lag at a settle point because the runner itself keeps the
//! controller from writing it.

use super::step::{resource_name, StepKind};
use rsmc_spec::api::pattern::{Resource, Verb};
use rsmc_spec::api::{Kind, RequestPattern};
use rsmc_spec::model::{Awaited, Recipient};
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default)]
pub struct Held {
    events: BTreeSet<(Recipient, Kind)>,
    /// The request holds, with the index of the step (or recorded event) that made each.
    requests: Vec<(usize, RequestPattern)>,
}

impl Held {
    /// Take step `i` into account, or say what is wrong with it (and change nothing).
    pub fn step(&mut self, i: usize, kind: &StepKind) -> Result<(), String> {
        match kind {
            StepKind::Hold { kind, to } if !self.events.insert((*to, *kind)) => Err(format!(
                "{} watch events are already held from the {to} by an earlier step",
                resource_name(*kind)
            )),
            StepKind::Release { kind, to } if !self.events.remove(&(*to, *kind)) => Err(format!(
                "nothing to release: no earlier step holds {} watch events from the {to}",
                resource_name(*kind)
            )),
            StepKind::HoldRequests(h) if self.holding(&h.pattern).is_some() => Err(format!(
                "{} requests are already held by an earlier step",
                whose(&h.pattern)
            )),
            StepKind::HoldRequests(h) if !sent(&h.pattern) => Err(format!(
                "the garbage collector sends no {} requests: it patches and deletes pods (orphaning, deleting dependents) and patches replicasets (removing a finalizer)",
                h.pattern
            )),
            StepKind::HoldRequests(h) => {
                self.requests.push((i, h.pattern.clone()));
                Ok(())
            }
            // A release that holds again leaves the requests held, by its own step.
            StepKind::ReleaseRequests {
                pattern,
                then_hold_after,
            } => match self.holding(pattern) {
                Some(at) => {
                    self.requests.remove(at);
                    if then_hold_after.is_some() {
                        self.requests.push((i, pattern.clone()));
                    }
                    Ok(())
                }
                None => Err(format!(
                    "nothing to release: no earlier step holds {} requests (held: {})",
                    whose(pattern),
                    self.held_requests()
                )),
            },
            StepKind::Await(Awaited::Held(p)) if self.holding(p).is_none() => Err(format!(
                "no earlier step holds {} requests, so none can be held (held: {})",
                whose(p),
                self.held_requests()
            )),
            _ => Ok(()),
        }
    }

    /// Where `pattern`'s hold is in [`Held::requests`].
    fn holding(&self, pattern: &RequestPattern) -> Option<usize> {
        self.requests.iter().position(|(_, p)| p == pattern)
    }

    fn held_requests(&self) -> String {
        if self.requests.is_empty() {
            return "none".into();
        }
        let held: Vec<String> = self.requests.iter().map(|(_, p)| whose(p)).collect();
        held.join(", ")
    }

    /// The first hold of requests still held, and the index of the step that made it.
    pub fn first_request_hold(&self) -> Option<&(usize, RequestPattern)> {
        self.requests.first()
    }

    /// Whether nothing is held: a quiet gap may be a settle point.
    pub fn none(&self) -> bool {
        self.events.is_empty() && self.requests.is_empty()
    }

    /// Whether the garbage collector is kept from a write of `verb` on `resource` named
    /// `name` by a hold of its requests: a settle point does not wait for that write, as in
    /// the model the collector is as done as it can be. A hold's `after` is not counted
    /// here (what the gate let through is the gate's to know): the converter holds the
    /// collector's requests with none let through, and a settle point's quiet window still
    /// sees writes that follow within milliseconds.
    pub fn collector_held(&self, verb: Verb, resource: Resource, name: &str) -> bool {
        self.requests.iter().any(|(_, p)| {
            p.from == Recipient::GarbageCollector && p.matches(verb, resource, Some(name))
        })
    }

    /// Whether the ReplicaSet controller may be kept from writing `replicaset`'s current
    /// status by what is held: its ReplicaSet events (it has not seen the latest
    /// generation), or its status update of that ReplicaSet waiting at the gate. A settle
    /// point then does not wait for `status.observedGeneration` to catch up: in the model
    /// the controller is as done as it can be.
    pub fn status_may_lag(&self, replicaset: &str) -> bool {
        self.events
            .contains(&(Recipient::ReplicaSetController, Kind::ReplicaSet))
            || self.requests.iter().any(|(_, p)| {
                p.from == Recipient::ReplicaSetController
                    && p.matches(Verb::Update, Resource::ReplicaSetStatus, Some(replicaset))
            })
    }
}

/// A pattern with its sender: `the garbage-collector's PATCH pods`.
fn whose(p: &RequestPattern) -> String {
    format!("the {}'s {p}", p.from)
}

/// Whether the pattern's sender sends such requests at all: the garbage collector (as the
/// model has it, `rsmc_spec::gc`) patches and deletes pods and patches ReplicaSets; its live
/// GETs are not steps of the model, so a hold of them could not be followed.
fn sent(p: &RequestPattern) -> bool {
    match p.from {
        Recipient::ReplicaSetController => true,
        Recipient::GarbageCollector => matches!(
            (p.verb, p.resource),
            (Verb::Patch | Verb::Delete, Resource::Pods) | (Verb::Patch, Resource::ReplicaSets)
        ),
    }
}
