//! The API server's ordered event log: what watches deliver.
//!
//! Every successful write appends one event carrying the object before and after the write.
//! Informers hold only a position in this log (the last revision they have delivered, per
//! resource type); their cache is the current state with the newer events undone. The log is
//! pruned below the lowest position anyone still needs, so equal clusters with equal pending
//! deliveries are equal states.

use crate::object::{Pod, ReplicaSet, Rv};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The two resource types the model watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Kind {
    ReplicaSet,
    Pod,
}

impl Kind {
    /// The resource as the API's paths and kubectl name it (`replicasets`, `pods`).
    pub fn resource_name(self) -> &'static str {
        match self {
            Kind::ReplicaSet => "replicasets",
            Kind::Pod => "pods",
        }
    }
}

/// `watch.EventType`, derived from the before/after pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

/// The object versions on either side of one write.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Change {
    ReplicaSet {
        before: Option<Arc<ReplicaSet>>,
        after: Option<Arc<ReplicaSet>>,
    },
    Pod {
        before: Option<Arc<Pod>>,
        after: Option<Arc<Pod>>,
    },
}

/// One watch event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Event {
    pub rv: Rv,
    pub name: String,
    pub change: Change,
}

impl Event {
    pub fn kind(&self) -> Kind {
        match self.change {
            Change::ReplicaSet { .. } => Kind::ReplicaSet,
            Change::Pod { .. } => Kind::Pod,
        }
    }

    pub fn event_type(&self) -> EventType {
        let (before, after) = match &self.change {
            Change::ReplicaSet { before, after } => (before.is_some(), after.is_some()),
            Change::Pod { before, after } => (before.is_some(), after.is_some()),
        };
        match (before, after) {
            (false, _) => EventType::Added,
            (true, true) => EventType::Modified,
            (true, false) => EventType::Deleted,
        }
    }
}

/// A consumer's view of one resource type: `name → object` as of some revision. Objects are
/// shared (`Arc`): a view, a state or a log entry copies pointers, never objects.
pub type View<T> = BTreeMap<String, Arc<T>>;

/// Undo the events newer than `position` on a copy of the current objects.
pub(crate) fn rewind<T>(
    current: &View<T>,
    log: &[Event],
    position: Rv,
    pick: impl Fn(&Change) -> Option<&Option<Arc<T>>>,
) -> View<T> {
    let mut view = current.clone();
    for event in log.iter().rev().take_while(|e| e.rv > position) {
        if let Some(before) = pick(&event.change) {
            match before {
                Some(obj) => {
                    view.insert(event.name.clone(), obj.clone());
                }
                None => {
                    view.remove(&event.name);
                }
            }
        }
    }
    view
}
