//! Weak fairness: which system moves count as "the same move" from one state to the next.
//!
//! Weak fairness says a move that stays enabled is eventually taken. Which moves are "the
//! same" decides what that promises, so the classes are chosen to be what keeps going in a
//! real cluster:
//!
//! - a watch delivery per informer and resource type — an informer that has an event to
//!   deliver delivers it;
//! - starting a sync per controller and key — a queued key is eventually handed to a worker
//!   (whichever worker slot: slots are kept sorted, so their numbers are not identities);
//! - the progress of the sync of a key (its next request, or a choice among ranking ties or
//!   claim orders; the choice itself is not fair — any alternative will do);
//! - a garbage-collector work item (`attemptToDelete` of a pod, orphaning one dependent, …).
//!
//! Environment moves (users, the kubelet, time, faults) are not in any class: once the
//! environment has made its last move, nothing more of it is assumed.

use crate::api::Kind;
use crate::gc::GcWork;
use crate::model::{Action, State, Watcher};

/// A class of system moves under weak fairness.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    Deliver(Watcher, Kind),
    StartSync { controller: u8, key: String },
    SyncProgress { controller: u8, key: String },
    Gc(GcWork),
}

/// The fairness class of `action` taken in `state`, or `None` for an environment move.
pub fn class_of(state: &State, action: &Action) -> Option<Class> {
    let task_key = |controller: u8, worker: u8| -> String {
        state.controllers[controller as usize].workers[worker as usize]
            .as_ref()
            .map(|t| t.key.clone())
            .unwrap_or_default()
    };
    match action {
        Action::Deliver { watcher, kind } => Some(Class::Deliver(*watcher, *kind)),
        Action::StartSync {
            controller, key, ..
        } => Some(Class::StartSync {
            controller: *controller,
            key: key.clone(),
        }),
        Action::SyncStep { controller, worker }
        | Action::CreateRejected { controller, worker }
        | Action::LandsInRemoval { controller, worker }
        | Action::Choose {
            controller, worker, ..
        } => Some(Class::SyncProgress {
            controller: *controller,
            key: task_key(*controller, *worker),
        }),
        Action::Gc { work } => Some(Class::Gc(work.clone())),
        environment => {
            assert!(
                environment.is_environment(),
                "system move without a fairness class: {environment:?}"
            );
            None
        }
    }
}
