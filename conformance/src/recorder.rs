//! Recording what a cluster does in a namespace: every watch event of ReplicaSets and pods, in
//! the order of their resourceVersions, with the runner's own writes marked.
//!
//! Two watches (one per resource type) start from the namespace's empty state, before the
//! first step, and run until the scenario ends. Both resource types share etcd's revision
//! counter, so sorting the merged events by resourceVersion gives the order the API server
//! committed them in, which is what the oracle's trace check replays.
//!
//! A watch that the server closes (its timeout) is reopened from the last resourceVersion
//! seen, so nothing is lost; a watch that cannot resume (410 Gone: the server compacted past
//! it) is an error of the recording, never silently a shorter trace.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, WatchEvent, WatchParams};
use kube::Client;
use rsmc_oracle::observed::{EventType, RawEvent};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::task::JoinHandle;

/// Which resource an event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    ReplicaSet,
    Pod,
}

impl From<rsmc_spec::api::Kind> for Resource {
    fn from(kind: rsmc_spec::api::Kind) -> Resource {
        match kind {
            rsmc_spec::api::Kind::ReplicaSet => Resource::ReplicaSet,
            rsmc_spec::api::Kind::Pod => Resource::Pod,
        }
    }
}

/// One recorded watch event.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub event_type: EventType,
    pub resource: Resource,
    pub resource_version: u64,
    pub uid: String,
    pub name: String,
    /// The object as the watch delivered it, with `apiVersion` and `kind`.
    pub object: serde_json::Value,
}

/// A write of the runner whose response carried no resourceVersion (a binding, a deletion
/// answered with a Status): the first later event on the object that `matches` is it.
pub struct PendingWrite {
    pub step: usize,
    pub resource: Resource,
    pub uid: String,
    /// Only events after this resourceVersion (the object's version the runner last read).
    pub after: u64,
    pub matches: Box<dyn Fn(&Recorded) -> bool + Send + Sync>,
}

#[derive(Default)]
struct Shared {
    events: Vec<Recorded>,
    error: Option<String>,
    last_event: Option<Instant>,
    /// Per resource, the newest resourceVersion of an event so far, taken or not.
    newest: HashMap<Resource, u64>,
}

/// The recording of one namespace.
pub struct Recorder {
    shared: Arc<Mutex<Shared>>,
    tasks: Vec<JoinHandle<()>>,
    started: Instant,
    /// The runner's own writes by the resourceVersion the server answered with.
    own: HashMap<u64, usize>,
    pending: Vec<PendingWrite>,
    /// Events up to here went into earlier segments.
    taken: u64,
}

impl Recorder {
    /// Start watching ReplicaSets and pods in `namespace` from `resource_version` (a list's
    /// version taken while the namespace was still empty).
    pub fn start(client: &Client, namespace: &str, resource_version: &str) -> Recorder {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let tasks = vec![
            tokio::spawn(watch::<ReplicaSet>(
                Api::namespaced(client.clone(), namespace),
                Resource::ReplicaSet,
                resource_version.to_string(),
                shared.clone(),
            )),
            tokio::spawn(watch::<Pod>(
                Api::namespaced(client.clone(), namespace),
                Resource::Pod,
                resource_version.to_string(),
                shared.clone(),
            )),
        ];
        Recorder {
            shared,
            tasks,
            started: Instant::now(),
            own: HashMap::new(),
            pending: Vec::new(),
            taken: 0,
        }
    }

    /// The runner wrote this, and the server answered with `resource_version`.
    pub fn own_write(&mut self, step: usize, resource_version: Option<&str>) {
        if let Some(rv) = resource_version.and_then(|v| v.parse().ok()) {
            self.own.insert(rv, step);
        }
    }

    /// The runner wrote something whose event is recognised by `write.matches`.
    pub fn own_pending(&mut self, write: PendingWrite) {
        self.pending.push(write);
    }

    /// Why the recording is incomplete, if it is.
    pub fn error(&self) -> Option<String> {
        self.shared.lock().unwrap().error.clone()
    }

    /// How long no event has arrived since `since`: since the last event, or since `since`
    /// if that is later. A wait that begins right after a step counts from its own start:
    /// the step's events may not have arrived yet, and an older event must not make the
    /// namespace look quiet.
    pub fn quiet_since(&self, since: std::time::Instant) -> std::time::Duration {
        let last = self.shared.lock().unwrap().last_event;
        quiet_since(last.unwrap_or(self.started), since)
    }

    /// The newest resourceVersion of the events of `resource` recorded so far (0: none): a
    /// controller that watches it has every event of the namespace once its watch has
    /// delivered this version ([`crate::settle`]).
    pub fn newest_version(&self, resource: Resource) -> u64 {
        let shared = self.shared.lock().unwrap();
        shared.newest.get(&resource).copied().unwrap_or(0)
    }

    /// Whether an event with exactly this resourceVersion has arrived (a listed object's
    /// version: the recording has caught up with it).
    pub fn has_seen(&self, resource_version: u64) -> bool {
        resource_version <= self.taken
            || self
                .shared
                .lock()
                .unwrap()
                .events
                .iter()
                .any(|e| e.resource_version == resource_version)
    }

    /// The events of the segment that ends at `up_to` (a list's resourceVersion), in
    /// resourceVersion order, the runner's own writes marked with their step.
    pub fn take_segment(&mut self, up_to: u64) -> Vec<RawEvent> {
        let mut events: Vec<Recorded> = {
            let mut shared = self.shared.lock().unwrap();
            let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut shared.events)
                .into_iter()
                .partition(|e| e.resource_version <= up_to);
            shared.events = later;
            now
        };
        events.sort_by_key(|e| e.resource_version);
        self.taken = self.taken.max(up_to);
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            let mut step = self.own.remove(&e.resource_version);
            if step.is_none() {
                if let Some(i) = self.pending.iter().position(|p| {
                    p.resource == e.resource
                        && p.uid == e.uid
                        && e.resource_version > p.after
                        && (p.matches)(&e)
                }) {
                    let write = self.pending.remove(i);
                    if removal_follows(&e) {
                        self.pending.push(PendingWrite {
                            step: write.step,
                            resource: write.resource,
                            uid: write.uid.clone(),
                            after: e.resource_version,
                            matches: Box::new(|e: &Recorded| e.event_type == EventType::Deleted),
                        });
                    }
                    step = Some(write.step);
                }
            }
            out.push(RawEvent {
                event_type: e.event_type,
                step,
                object: e.object,
                floating: false,
                unconfirmed: false,
                or_system: false,
                by: None,
            });
        }
        out
    }
}

/// Whether the event is the first half of a deletion with nothing left to wait for: store.go
/// `updateForGracefulDeletionAndFinalizers` stores the object marked deleting with
/// deletionGracePeriodSeconds 0 and, with no finalizer pending, the same request removes it
/// (the DELETED event that follows belongs to the same write).
fn removal_follows(e: &Recorded) -> bool {
    let meta = &e.object["metadata"];
    e.event_type == EventType::Modified
        && meta["deletionTimestamp"].is_string()
        && meta["deletionGracePeriodSeconds"].as_i64() == Some(0)
        && meta["finalizers"].as_array().is_none_or(|f| f.is_empty())
}

impl Drop for Recorder {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Watch one resource type until aborted, reopening the watch where the server closed it.
async fn watch<K>(api: Api<K>, resource: Resource, from: String, shared: Arc<Mutex<Shared>>)
where
    K: kube::Resource + Clone + DeserializeOwned + Serialize + std::fmt::Debug + Send + 'static,
{
    let mut version = from;
    loop {
        let params = WatchParams::default().timeout(290);
        let stream = match api.watch(&params, &version).await {
            Ok(s) => s,
            Err(e) => {
                let e = crate::api_error::describe(&e);
                fail(&shared, format!("{resource:?} watch could not start: {e}"));
                return;
            }
        };
        let mut stream = stream.boxed();
        loop {
            match stream.try_next().await {
                Ok(Some(event)) => {
                    let (event_type, object) = match event {
                        WatchEvent::Added(o) => (EventType::Added, o),
                        WatchEvent::Modified(o) => (EventType::Modified, o),
                        WatchEvent::Deleted(o) => (EventType::Deleted, o),
                        WatchEvent::Bookmark(b) => {
                            version = b.metadata.resource_version;
                            continue;
                        }
                        WatchEvent::Error(e) => {
                            fail(
                                &shared,
                                format!(
                                    "{resource:?} watch failed ({} {}): {}; events were lost",
                                    e.code, e.reason, e.message
                                ),
                            );
                            return;
                        }
                    };
                    let meta = object.meta();
                    let rv_text = meta.resource_version.clone().unwrap_or_default();
                    let Ok(rv) = rv_text.parse::<u64>() else {
                        fail(
                            &shared,
                            format!("{resource:?} event without a numeric resourceVersion"),
                        );
                        return;
                    };
                    let recorded = Recorded {
                        event_type,
                        resource,
                        resource_version: rv,
                        uid: meta.uid.clone().unwrap_or_default(),
                        name: meta.name.clone().unwrap_or_default(),
                        object: serde_json::to_value(&object).expect("objects serialise"),
                    };
                    version = rv_text;
                    let mut s = shared.lock().unwrap();
                    s.events.push(recorded);
                    s.last_event = Some(Instant::now());
                    let newest = s.newest.entry(resource).or_default();
                    *newest = (*newest).max(rv);
                }
                // The server ended the watch (its timeout): reopen where it stopped.
                Ok(None) => break,
                Err(e) => {
                    fail(&shared, format!("{resource:?} watch broke: {e}"));
                    return;
                }
            }
        }
    }
}

fn fail(shared: &Mutex<Shared>, message: String) {
    let mut s = shared.lock().unwrap();
    s.error.get_or_insert(message);
}

/// How long nothing has happened since `since`, the last event being at `last_event`.
fn quiet_since(last_event: Instant, since: Instant) -> std::time::Duration {
    last_event.max(since).elapsed()
}

#[cfg(test)]
mod tests {
    use super::quiet_since;
    use std::time::{Duration, Instant};

    #[test]
    fn an_old_event_does_not_make_a_new_wait_quiet() {
        let now = Instant::now();
        let old_event = now - Duration::from_secs(10);
        assert!(quiet_since(old_event, now) < Duration::from_secs(1));
        // Since an earlier moment, the old event is what counts.
        let earlier = now - Duration::from_secs(20);
        assert!(quiet_since(old_event, earlier) >= Duration::from_secs(10));
    }
}
