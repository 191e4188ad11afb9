//! Step descriptions for people: what a step did, in API terms.

use super::action::Action;
use super::state::State;
use super::RsModel;
use crate::api::{Change, EventType};
use crate::controller::{AtGate, Pending};
use crate::gc;

impl RsModel {
    /// A one-line description of `action` taken in `s`: for system steps, the request sent
    /// or the event delivered; for the environment, the kubectl command.
    pub fn describe(&self, s: &State, action: &Action) -> String {
        match action {
            Action::SyncStep { controller, worker }
            | Action::CreateRejected { controller, worker }
            | Action::LandsInRemoval { controller, worker } => {
                let c = &s.controllers[*controller as usize];
                let Some(task) = &c.workers[*worker as usize] else {
                    return action.to_string();
                };
                let who = format!("replicaset-controller#{controller} (sync {})", task.key);
                let pending = self.pending(s, c, task);
                let parks = task.at_gate == AtGate::NotSent
                    && super::enabled::held(&s.script.requests, &pending);
                let mut what = match pending {
                    Pending::GetReplicaSet(name) => format!("GET replicasets/{name} (live)"),
                    Pending::Send(req) => req.to_string(),
                    other => format!("{other:?}"),
                };
                if parks {
                    what.push_str(" — sent, held at the gate");
                }
                match action {
                    Action::CreateRejected { .. } => format!("{who}: {what} → 403 exceeded quota"),
                    Action::LandsInRemoval { .. } => format!(
                        "{who}: {what} → lands between the two writes of the pod's grace-0 delete, removing it; answered as done"
                    ),
                    _ => format!("{who}: {what}"),
                }
            }
            Action::Gc { work } => {
                let pods = s.api.pods_at(s.gc.pods);
                let req = gc::request(work, &s.api, &pods).map(|r| r.to_string());
                format!("garbage-collector: {}", req.unwrap_or_default())
            }
            Action::Deliver { watcher, kind } => {
                let at = self.position(s, *watcher);
                match s.api.next_event(*kind, at.get(*kind)) {
                    Some(e) => {
                        let (what, rv) = match &e.change {
                            Change::ReplicaSet { .. } => ("replicaset", e.rv),
                            Change::Pod { .. } => ("pod", e.rv),
                        };
                        let ty = match e.event_type() {
                            EventType::Added => "ADDED",
                            EventType::Modified => "MODIFIED",
                            EventType::Deleted => "DELETED",
                        };
                        format!(
                            "{}: watch delivers {ty} {what}/{} (revision {rv})",
                            watcher, e.name
                        )
                    }
                    None => action.to_string(),
                }
            }
            _ => action.to_string(),
        }
    }
}
