//! The gate's holds of requests: a request of the controller under test that a scenario's
//! `hold: {requests: …}` catches waits in the gate, not yet forwarded, until its release.
//!
//! That is the model's "the sync has decided and sent its request; the request has not
//! landed" ([`rsmc_spec::model::Action::HoldRequests`]): the controller is blocked in the
//! call as it would be on a slow network, while every other actor — the user, the garbage
//! collector, the API server — goes on, so a scenario can place other writes before the
//! request lands. A hold belongs to one namespace (the scenario's), so runs in other
//! namespaces are not held.

use hyper::{Method, Uri};
use rsmc_spec::api::{Resource, Verb};
use rsmc_spec::model;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use tokio::sync::watch;

/// One hold, as the runner asks for it and the gate reports it: the scenario's hold of
/// requests (a pattern, and how many matching requests it still lets through before it holds
/// any: the gate reports that count going down), in one namespace. A namespace and a pattern
/// name it (one hold per pair).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestHold {
    pub namespace: String,
    #[serde(flatten)]
    pub requests: model::RequestHold,
}

impl RequestHold {
    /// Whether `other` names the same hold (whatever it lets through).
    pub fn same(&self, other: &RequestHold) -> bool {
        self.namespace == other.namespace && self.requests.pattern == other.requests.pattern
    }
}

impl std::fmt::Display for RequestHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests in {}",
            self.requests.pattern, self.namespace
        )
    }
}

/// A hold and what it has caught, in `GET /rsmc-gate/status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldRequests {
    #[serde(flatten)]
    pub hold: RequestHold,
    /// Requests waiting at the gate now.
    pub waiting: usize,
    /// Requests caught since the hold began.
    pub caught: usize,
}

/// What a request is about, read from its method and path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub namespace: String,
    pub verb: Verb,
    pub resource: Resource,
    pub name: Option<String>,
}

/// The target of a request to one namespaced pod or ReplicaSet path; `None` for anything
/// else (lists, watches, other resources, other subresources), which no hold catches.
pub fn target_of(method: &Method, uri: &Uri) -> Option<Target> {
    let path = uri.path().trim_end_matches('/');
    let rest = path
        .strip_prefix("/api/v1/namespaces/")
        .or_else(|| path.strip_prefix("/apis/apps/v1/namespaces/"))?;
    let core = path.starts_with("/api/v1/");
    let parts: Vec<&str> = rest.split('/').collect();
    let (namespace, resource, name) = match parts.as_slice() {
        [ns, "pods"] if core => (ns, Resource::Pods, None),
        [ns, "pods", name] if core => (ns, Resource::Pods, Some(name)),
        [ns, "replicasets"] if !core => (ns, Resource::ReplicaSets, None),
        [ns, "replicasets", name] if !core => (ns, Resource::ReplicaSets, Some(name)),
        [ns, "replicasets", name, "status"] if !core => {
            (ns, Resource::ReplicaSetStatus, Some(name))
        }
        _ => return None,
    };
    let verb = match *method {
        // A GET of a collection is a list (or a watch): never held.
        Method::GET if name.is_some() => Verb::Get,
        Method::POST if name.is_none() => Verb::Create,
        Method::PUT if name.is_some() => Verb::Update,
        Method::PATCH if name.is_some() => Verb::Patch,
        Method::DELETE if name.is_some() => Verb::Delete,
        _ => return None,
    };
    Some(Target {
        namespace: namespace.to_string(),
        verb,
        resource,
        name: name.map(|n| n.to_string()),
    })
}

struct Hold {
    id: u64,
    hold: RequestHold,
    waiting: usize,
    caught: usize,
}

impl Hold {
    /// Whether the hold's pattern matches a request to `t`.
    fn matches(&self, t: &Target) -> bool {
        self.hold.namespace == t.namespace
            && self
                .hold
                .requests
                .pattern
                .matches(t.verb, t.resource, t.name.as_deref())
    }

    /// Whether it holds a request to `t` now: it matches and lets no more through.
    fn catches(&self, t: &Target) -> bool {
        self.hold.requests.catching() && self.matches(t)
    }
}

/// Every hold the gate has.
pub struct RequestHolds {
    holds: Mutex<(u64, Vec<Hold>)>,
    /// Bumped on every release, to wake the requests that wait.
    released: watch::Sender<u64>,
}

impl Default for RequestHolds {
    fn default() -> Self {
        RequestHolds {
            holds: Mutex::new((0, Vec::new())),
            released: watch::channel(0).0,
        }
    }
}

impl RequestHolds {
    /// Begin holding; an error when the same hold is already in place.
    pub fn hold(&self, hold: RequestHold) -> Result<(), String> {
        let mut guard = self.holds.lock().expect("not poisoned");
        let (next, holds) = &mut *guard;
        if holds.iter().any(|h| h.hold.same(&hold)) {
            return Err(format!("{hold} are already held"));
        }
        *next += 1;
        holds.push(Hold {
            id: *next,
            hold,
            waiting: 0,
            caught: 0,
        });
        Ok(())
    }

    /// End a hold: what it caught goes on. Returns how many requests were waiting; an error
    /// when there is no such hold.
    pub fn release(&self, hold: &RequestHold) -> Result<usize, String> {
        self.end(hold, None)
    }

    /// End a hold and, at the same moment, hold the same requests again, letting
    /// `hold.requests.after` through first: what it caught goes on, and a request its sender
    /// sends right after (a conflict's retry) is caught by the new hold, however soon it
    /// comes. Returns how many requests were waiting.
    pub fn rehold(&self, hold: RequestHold) -> Result<usize, String> {
        self.end(&hold.clone(), Some(hold))
    }

    /// End the hold `hold` names, replacing it with `then` (a hold of its own: the requests
    /// the ended one caught wait for that one only).
    fn end(&self, hold: &RequestHold, then: Option<RequestHold>) -> Result<usize, String> {
        let waiting = {
            let mut guard = self.holds.lock().expect("not poisoned");
            let (next, holds) = &mut *guard;
            let at = holds
                .iter()
                .position(|h| h.hold.same(hold))
                .ok_or_else(|| format!("no hold of {hold} to release"))?;
            let ended = holds.remove(at);
            if let Some(hold) = then {
                *next += 1;
                holds.insert(
                    at,
                    Hold {
                        id: *next,
                        hold,
                        waiting: 0,
                        caught: 0,
                    },
                );
            }
            ended.waiting
        };
        self.released.send_modify(|n| *n += 1);
        Ok(waiting)
    }

    /// End every hold (the start and end of a run, an interrupted one).
    pub fn release_all(&self) {
        self.holds.lock().expect("not poisoned").1.clear();
        self.released.send_modify(|n| *n += 1);
    }

    pub fn status(&self) -> Vec<HeldRequests> {
        let guard = self.holds.lock().expect("not poisoned");
        guard
            .1
            .iter()
            .map(|h| HeldRequests {
                hold: h.hold.clone(),
                waiting: h.waiting,
                caught: h.caught,
            })
            .collect()
    }

    /// Wait while a hold catches a request to `target`; returns at once when none does,
    /// and then each hold that matches it and still lets requests through counts it.
    pub async fn pass(&self, target: &Target) {
        let mut released = self.released.subscribe();
        let id = {
            let mut guard = self.holds.lock().expect("not poisoned");
            let Some(h) = guard.1.iter_mut().find(|h| h.catches(target)) else {
                for h in guard.1.iter_mut().filter(|h| h.matches(target)) {
                    h.hold.requests.let_one_through();
                }
                return;
            };
            h.waiting += 1;
            h.caught += 1;
            h.id
        };
        eprintln!(
            "event gate: holding {} {} {}",
            target.verb.method(),
            target.resource.as_str(),
            target.name.as_deref().unwrap_or("")
        );
        // Counted out when it goes on or its client gives up (the future is dropped).
        let _waiting = Waiting { holds: self, id };
        // It waits for the hold that caught it, not for any later one of the same requests.
        loop {
            if released.changed().await.is_err() {
                return;
            }
            let guard = self.holds.lock().expect("not poisoned");
            if !guard.1.iter().any(|h| h.id == id) {
                return;
            }
        }
    }
}

/// A request waiting under the hold `id`.
struct Waiting<'a> {
    holds: &'a RequestHolds,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut guard = self.holds.holds.lock().expect("not poisoned");
        if let Some(h) = guard.1.iter_mut().find(|h| h.id == self.id) {
            h.waiting -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::api::RequestPattern;
    use std::sync::Arc;

    fn target(method: Method, uri: &str) -> Option<Target> {
        target_of(&method, &uri.parse().unwrap())
    }

    #[test]
    fn requests_are_read_from_method_and_path() {
        let t = target(Method::PATCH, "/api/v1/namespaces/ns/pods/pod1").unwrap();
        assert_eq!(
            (t.namespace.as_str(), t.verb, t.resource, t.name.as_deref()),
            ("ns", Verb::Patch, Resource::Pods, Some("pod1"))
        );
        let t = target(
            Method::PUT,
            "/apis/apps/v1/namespaces/ns/replicasets/frontend/status",
        )
        .unwrap();
        assert_eq!(
            (t.verb, t.resource, t.name.as_deref()),
            (Verb::Update, Resource::ReplicaSetStatus, Some("frontend"))
        );
        let t = target(Method::POST, "/api/v1/namespaces/ns/pods").unwrap();
        assert_eq!((t.verb, t.name), (Verb::Create, None));
        assert!(target(Method::GET, "/api/v1/namespaces/ns/pods?watch=true").is_none());
        assert!(target(Method::GET, "/apis/apps/v1/namespaces/ns/replicasets").is_none());
        assert!(target(Method::POST, "/api/v1/namespaces/ns/pods/p/binding").is_none());
        assert!(target(Method::PATCH, "/apis/apps/v1/namespaces/ns/pods/p").is_none());
        assert!(target(Method::DELETE, "/api/v1/namespaces/ns/configmaps/c").is_none());
    }

    /// A hold in namespace `ns`.
    fn hold_of(verb: Verb, resource: Resource, name: Option<&str>, after: u8) -> RequestHold {
        RequestHold {
            namespace: "ns".into(),
            requests: model::RequestHold {
                pattern: RequestPattern {
                    from: model::Recipient::ReplicaSetController,
                    verb,
                    resource,
                    name: name.map(String::from),
                },
                after,
            },
        }
    }

    /// Sends `t` through the first hold, which must catch it: returns once it waits there.
    async fn caught(holds: &Arc<RequestHolds>, t: Target) -> tokio::task::JoinHandle<()> {
        let before = holds.status()[0].waiting;
        let waiting = {
            let holds = holds.clone();
            tokio::spawn(async move { holds.pass(&t).await })
        };
        while holds.status()[0].waiting == before {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished());
        waiting
    }

    #[tokio::test]
    async fn a_held_request_waits_for_its_release_and_others_pass() {
        let holds = Arc::new(RequestHolds::default());
        let hold = hold_of(Verb::Patch, Resource::Pods, None, 0);
        holds.hold(hold.clone()).unwrap();
        assert!(holds.hold(hold.clone()).is_err(), "held twice");
        // Another namespace's, another verb's: not held.
        let other = target(Method::PATCH, "/api/v1/namespaces/other/pods/p").unwrap();
        holds.pass(&other).await;
        let delete = target(Method::DELETE, "/api/v1/namespaces/ns/pods/p").unwrap();
        holds.pass(&delete).await;
        let patch = target(Method::PATCH, "/api/v1/namespaces/ns/pods/p").unwrap();
        let waiting = caught(&holds, patch).await;
        assert_eq!(holds.release(&hold), Ok(1));
        waiting.await.unwrap();
        assert!(holds.status().is_empty());
        assert!(holds.release(&hold).is_err(), "nothing left to release");
    }

    /// A hold with `after: 2` lets the first two matching requests through and holds the
    /// third; a request it does not match is not counted.
    #[tokio::test]
    async fn a_hold_lets_the_first_requests_through() {
        let holds = Arc::new(RequestHolds::default());
        let hold = hold_of(Verb::Create, Resource::Pods, None, 2);
        holds.hold(hold.clone()).unwrap();
        let create = target(Method::POST, "/api/v1/namespaces/ns/pods").unwrap();
        let other = target(Method::DELETE, "/api/v1/namespaces/ns/pods/p").unwrap();
        holds.pass(&other).await;
        holds.pass(&create).await;
        assert_eq!(
            holds.status()[0].hold.requests.after,
            1,
            "one more goes through"
        );
        holds.pass(&create).await;
        let third = caught(&holds, create).await;
        assert_eq!(holds.status()[0].caught, 1);
        let release = hold_of(Verb::Create, Resource::Pods, None, 0);
        assert_eq!(holds.release(&release), Ok(1), "released by its name");
        third.await.unwrap();
    }

    /// A release that holds again lets what was caught go on and catches the next request
    /// at once (after letting `after` through), under a hold of its own.
    #[tokio::test]
    async fn a_rehold_lets_the_caught_go_and_catches_the_next() {
        let holds = Arc::new(RequestHolds::default());
        let status = |after| hold_of(Verb::Update, Resource::ReplicaSetStatus, Some("rs"), after);
        let hold = status(0);
        holds.hold(hold.clone()).unwrap();
        let put = target(
            Method::PUT,
            "/apis/apps/v1/namespaces/ns/replicasets/rs/status",
        )
        .unwrap();
        let first = caught(&holds, put.clone()).await;
        assert_eq!(holds.rehold(status(1)), Ok(1));
        first.await.unwrap();
        assert_eq!(holds.status()[0].caught, 0, "a new hold");
        holds.pass(&put).await;
        let third = caught(&holds, put).await;
        assert_eq!(holds.release(&hold), Ok(1));
        third.await.unwrap();
        assert!(holds.rehold(hold).is_err(), "nothing left to hold again");
    }
}
