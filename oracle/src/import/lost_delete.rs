//! A controller's pod delete whose answer was lost: what it did, as far as the recording
//! says.
//!
//! The API server answers 504 when a client's connection is cut while its request runs (the
//! request's context ends; the storage write it started goes on): the runner's controller
//! restart cuts the built-in controller's connection, and on v1.35.4 its DELETE of a surplus
//! pod answered 504 and the pod was gone. Read as not committed, the pod stayed in the
//! import's objects, and the controller's next status (which no longer counted it) was no
//! model write. What follows the delete in the recording says what it did:
//! - the next write to the same pod refused as `NotFound`, or a create of its name: committed;
//! - the next write to it accepted, its answer marked for deletion where the import's pod is
//!   not: the delete committed its mark and not the removal (the mark with a grace period
//!   of 0 and the removal are two storage writes, and the cut came between them; v1.37.2:
//!   the garbage collector's orphaning patch then read the marked pod and removed it);
//! - the next write to it accepted otherwise: not committed (that write's answer is the pod);
//! - no later write to it: the recording does not say. The import writes the delete's events
//!   as committed and marks them `unconfirmed`, and the oracle judges both readings
//!   ([`crate::judge::readings`]).
//!
//! Only a delete that removes the pod at once is followed (a pod bound to no node or
//! finished, with no finalizer, deleted with no precondition it fails): its events are
//! known without its answer, the mark with a grace period of 0 and the removal (as
//! `Store.Delete` in the apiserver's `registry/generic/registry/store.go` writes them). A
//! graceful delete of a running pod leaves a mark whose grace period the kubelet ends, a
//! later write, whose answer shows the mark.

use super::entry::Change;
use super::entry::{Entry, Request};
use super::writer::Writer;
use crate::observed::EventType;
use rsmc_spec::api::Kind;
use serde_json::Value;

/// What the recording says a lost delete did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// Its mark was committed, not its removal: the metadata of the pod as the next write's
    /// answer shows it marked.
    Marked(Value),
    NotCommitted,
    /// Nothing later shows it.
    Unknown,
}

/// What the lost delete `r` of `pod` (as the import has it) did, by the first later write to
/// it that says (`later`: the recording's entries after it).
pub fn outcome<'a>(r: &Request, pod: &Value, later: impl Iterator<Item = &'a Entry>) -> Outcome {
    for e in later {
        let Entry::Write(w) = e else { continue };
        if w.kind != r.kind {
            continue;
        }
        let name = w.name.as_deref().or_else(|| {
            w.response
                .as_ref()
                .and_then(|o| o["metadata"]["name"].as_str())
        });
        if name != r.name.as_deref() {
            continue;
        }
        if w.code == 404 || (w.accepted() && w.verb == "create") {
            return Outcome::Committed;
        }
        if w.accepted() {
            let answer = w.response.as_ref().map(|o| &o["metadata"]);
            let marked = answer.filter(|m| !m["deletionTimestamp"].is_null());
            return match marked {
                Some(m) if pod["metadata"]["deletionTimestamp"].is_null() => {
                    Outcome::Marked(m.clone())
                }
                _ => Outcome::NotCommitted,
            };
        }
    }
    Outcome::Unknown
}

/// What a lost delete wrote, read as committed.
pub enum Committed {
    /// Only its mark: the pod as the delete left it.
    Mark(Change),
    /// The mark and then the pod's removal.
    Removal { mark: Change, removed: Change },
}

impl Committed {
    /// Its events, in order.
    pub fn changes(self) -> Vec<Change> {
        match self {
            Committed::Mark(mark) => vec![mark],
            Committed::Removal { mark, removed } => vec![mark, removed],
        }
    }
}

/// What the lost delete `r` of `pod` wrote had it been committed, when it removes the pod at
/// once (only its mark, as `marked` has it, when that is all it committed); `None` for
/// anything else (a graceful delete, a ReplicaSet, a client's delete, whose step the import
/// would have to infer).
pub fn removal(r: &Request, pod: &Value, marked: Option<&Value>) -> Option<Committed> {
    let system = matches!(
        r.writer,
        Writer::ReplicaSetController | Writer::GarbageCollector
    );
    if !(system && r.verb == "delete" && r.kind == Kind::Pod && r.subresource.is_none()) {
        return None;
    }
    let meta = &pod["metadata"];
    let finalizers = meta["finalizers"].as_array().is_some_and(|f| !f.is_empty());
    let finished = matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    );
    let unbound = pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty);
    let options = r.request.as_ref();
    let grace = options.and_then(|o| o["gracePeriodSeconds"].as_i64());
    let at_once = grace == Some(0) || unbound || finished;
    let precondition = |field: &str| {
        options
            .and_then(|o| o["preconditions"][field].as_str())
            .is_none_or(|want| meta[field].as_str() == Some(want))
    };
    if finalizers || !at_once || !precondition("uid") || !precondition("resourceVersion") {
        return None;
    }
    let mut object = pod.clone();
    let meta = &mut object["metadata"];
    match marked {
        Some(m) => {
            // The mark's own version: a write that then removed the pod read it.
            for f in [
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
            ] {
                meta[f] = m[f].clone();
            }
        }
        None => {
            meta["deletionTimestamp"] = r.received.to_string().into();
            meta["deletionGracePeriodSeconds"] = 0.into();
        }
    }
    let change = |event_type| Change {
        event_type,
        object: object.clone(),
        version: None,
        floating: false,
    };
    Some(match marked {
        Some(_) => Committed::Mark(change(EventType::Modified)),
        None => Committed::Removal {
            mark: change(EventType::Modified),
            removed: change(EventType::Deleted),
        },
    })
}
