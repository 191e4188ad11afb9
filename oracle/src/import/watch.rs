//! Reading `kubectl get … --watch --output-watch-events -o json`: watch events
//! (`{"type":"ADDED","object":{…}}`) printed one after another, each a JSON object that may
//! span lines (kubectl v1.37.2 prints one a line; other printers indent them), for pods and
//! ReplicaSets, and optionally namespaces (where a namespace's deletion began: the end of
//! its recording) and ConfigMaps (the marks, [`super::entry::MARK_PREFIX`] and
//! [`super::entry::FAULT_MARK_PREFIX`]).
//!
//! What kubectl prints, checked with kubectl v1.37.2 against a v1.37.2 API server:
//! - one resource type per command (`kubectl get pods,rs --watch` is refused: "you may only
//!   specify a single resource type"), so a recording is one file per type, or their
//!   concatenation in one file: the files are merged by resourceVersion, which is etcd's
//!   revision, one counter for every type;
//! - first the objects that exist, as `ADDED` events, then what changes; a watch started
//!   before the run lists nothing of it;
//! - the objects with their `managedFields` (a plain `kubectl get -o json` drops them; the
//!   watch does not), which is what attribution needs ([`super::watched`]);
//! - `BOOKMARK` events are skipped; an `ERROR` event (the watch broke, e.g. its
//!   resourceVersion expired) means the stream has a gap: an error at its line.
//!
//! The files are read as streams (a value at a time, never whole), each event at most
//! [`MAX_EVENT_BYTES`]; only the namespace imported is kept, within
//! [`super::audit::MAX_KEPT_BYTES`]. Bad input is an error naming the file, the line and the
//! column, and what was expected.

use super::audit::MAX_KEPT_BYTES;
use crate::error::{InputError, Pos};
use crate::observed::EventType;
use serde_json::Value;
use std::cell::Cell;
use std::io::{BufRead, Read};
use std::path::Path;
use std::rc::Rc;

/// The largest watch event read: far more than any pod or ReplicaSet.
pub const MAX_EVENT_BYTES: u64 = 16 << 20;

/// What a watch event is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    Pod,
    ReplicaSet,
    /// Only its deletion is used: where the namespace's teardown began.
    Namespace,
    /// Only a creation named like a mark is used.
    ConfigMap,
    /// A ReplicaSet controller's `SuccessfulDelete` event: who deleted a pod
    /// ([`crate::delete_claims`]).
    Event,
}

/// One watch event, where it was read.
#[derive(Clone, Debug)]
pub struct Seen {
    pub file: usize,
    pub line: usize,
    pub resource: Resource,
    pub event_type: EventType,
    pub object: Value,
    /// The object's resourceVersion: etcd's revision when the event happened (a DELETED
    /// event's is the removal's).
    pub version: u64,
}

impl Seen {
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }

    pub fn namespace(&self) -> &str {
        self.object["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
    }

    pub fn uid(&self) -> &str {
        self.object["metadata"]["uid"].as_str().unwrap_or_default()
    }
}

/// Where the reader is in a file: kept by [`Counted`] as serde_json reads through it.
#[derive(Default)]
struct Position {
    line: Cell<usize>,
    column: Cell<usize>,
    /// Where the value being read began (its first byte that is not whitespace).
    start: Cell<Option<(usize, usize)>>,
    /// Bytes read since the value began.
    bytes: Cell<u64>,
}

/// A reader that counts lines and columns, and refuses a value longer than
/// [`MAX_EVENT_BYTES`]. serde_json reads a byte at a time from it, so the count is exact.
struct Counted<R> {
    inner: R,
    at: Rc<Position>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let at = &self.at;
        for &b in &buf[..n] {
            if at.start.get().is_none() && !b.is_ascii_whitespace() {
                at.start.set(Some((at.line.get(), at.column.get())));
            }
            if at.start.get().is_some() {
                at.bytes.set(at.bytes.get() + 1);
                if at.bytes.get() > MAX_EVENT_BYTES {
                    return Err(std::io::Error::other(format!(
                        "a value longer than {} MiB: not a watch event of a pod or a ReplicaSet",
                        MAX_EVENT_BYTES >> 20
                    )));
                }
            }
            if b == b'\n' {
                at.line.set(at.line.get() + 1);
                at.column.set(1);
            } else {
                at.column.set(at.column.get() + 1);
            }
        }
        Ok(n)
    }
}

/// Read watch streams (`files`, each a path and its reader) into the events they saw (of
/// `namespace` only, when one is named), in etcd's order, each once; [`super::watched`]
/// makes them into writes and settle points.
pub fn read<R: BufRead>(
    files: Vec<(&Path, R)>,
    namespace: Option<&str>,
) -> Result<Vec<Seen>, InputError> {
    let mut seen = Vec::new();
    let mut kept = 0usize;
    for (file, (path, reader)) in files.into_iter().enumerate() {
        read_one(file, path, reader, namespace, &mut seen, &mut kept)?;
    }
    // One order for every file: etcd's revision. An event read twice (the same type watched
    // into two files) is kept once.
    seen.sort_by_key(|s| (s.version, s.resource, s.file, s.line));
    seen.dedup_by(|b, a| {
        (a.version, a.resource, a.event_type, a.uid())
            == (b.version, b.resource, b.event_type, b.uid())
    });
    Ok(seen)
}

/// Read one file's events into `seen`.
fn read_one<R: BufRead>(
    file: usize,
    path: &Path,
    reader: R,
    namespace: Option<&str>,
    seen: &mut Vec<Seen>,
    kept: &mut usize,
) -> Result<(), InputError> {
    let at = Rc::new(Position::default());
    at.line.set(1);
    at.column.set(1);
    let counted = Counted {
        inner: reader,
        at: at.clone(),
    };
    let mut stream = serde_json::Deserializer::from_reader(counted).into_iter::<Value>();
    loop {
        at.start.set(None);
        at.bytes.set(0);
        let value = match stream.next() {
            None => return Ok(()),
            Some(Ok(v)) => v,
            Some(Err(e)) => return Err(syntax_error(path, &e)),
        };
        let (line, column) = at.start.get().unwrap_or((1, 1));
        let here = |message: String| InputError::at(path, Some(Pos { line, column }), message);
        let Some(event) = event_of(value).map_err(here)? else {
            continue;
        };
        let (event_type, object) = event;
        let resource = match (object["apiVersion"].as_str(), object["kind"].as_str()) {
            (Some("v1"), Some("Pod")) => Resource::Pod,
            (Some("apps/v1"), Some("ReplicaSet")) => Resource::ReplicaSet,
            (Some("v1"), Some("Namespace")) => Resource::Namespace,
            (Some("v1"), Some("ConfigMap")) => Resource::ConfigMap,
            // Of events, only the controller's claims of deletions.
            (Some("v1"), Some("Event")) if claim_of(&object).is_some() => Resource::Event,
            // Another type watched into the same file (a Deployment, another event): not the
            // model's.
            _ => continue,
        };
        let version = object
            .pointer("/metadata/resourceVersion")
            .and_then(|v| v.as_str())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| {
                here("expected the object's metadata.resourceVersion, a number as a string".into())
            })?;
        let event = Seen {
            file,
            line,
            resource,
            event_type,
            object,
            version,
        };
        let ns = match resource {
            Resource::Namespace => event.name(),
            _ => event.namespace(),
        };
        if namespace.is_some_and(|wanted| wanted != ns) {
            continue;
        }
        *kept += at.bytes.get() as usize;
        if *kept > MAX_KEPT_BYTES {
            return Err(here(format!(
                "the events read so far add up to more than {} MiB: import one namespace at a time (--namespace)",
                MAX_KEPT_BYTES >> 20
            )));
        }
        seen.push(event);
    }
}

/// The pod deletion an Event object claims, if it is a ReplicaSet controller's
/// `SuccessfulDelete`.
pub fn claim_of(object: &Value) -> Option<crate::delete_claims::DeleteClaim> {
    let event: k8s_openapi::api::core::v1::Event = serde_json::from_value(object.clone()).ok()?;
    crate::delete_claims::delete_claim(&event)
}

/// A watch event's type and object; `None` for a bookmark.
fn event_of(value: Value) -> Result<Option<(EventType, Value)>, String> {
    let Value::Object(mut map) = value else {
        return Err(format!(
            "expected a watch event {{\"type\": …, \"object\": {{…}}}}, got {}",
            short(&value)
        ));
    };
    let Some(Value::String(kind)) = map.get("type").cloned() else {
        let hint = if map.contains_key("kind") {
            ": an object without its event; record with kubectl's --output-watch-events"
        } else {
            ""
        };
        return Err(format!(
            "expected a watch event {{\"type\": …, \"object\": {{…}}}}, got an object without a string \"type\"{hint}"
        ));
    };
    let object = map.remove("object").unwrap_or(Value::Null);
    let event_type = match kind.as_str() {
        "ADDED" => EventType::Added,
        "MODIFIED" => EventType::Modified,
        "DELETED" => EventType::Deleted,
        "BOOKMARK" => return Ok(None),
        "ERROR" => {
            return Err(format!(
                "an ERROR event: the watch broke ({}), so the stream misses what happened until kubectl listed again; record again",
                object["message"].as_str().unwrap_or("no message")
            ))
        }
        other => {
            return Err(format!(
                "unknown event type {other:?}: expected ADDED, MODIFIED, DELETED, BOOKMARK or ERROR"
            ))
        }
    };
    if !object.is_object() {
        return Err(format!(
            "expected the event's \"object\" to be an object, got {}",
            short(&object)
        ));
    }
    Ok(Some((event_type, object)))
}

/// A value in a message, cut short.
fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// A stream that is not JSON, or ends inside a value: where, and what was expected.
fn syntax_error(path: &Path, e: &serde_json::Error) -> InputError {
    let pos = Some(Pos {
        line: e.line().max(1),
        column: e.column().max(1),
    });
    let message = match e.classify() {
        serde_json::error::Category::Eof => {
            "the stream ends inside a watch event (expected the rest of the object and its closing `}`): was kubectl stopped mid-write? remove the partial event".to_string()
        }
        serde_json::error::Category::Io => e.to_string(),
        _ => {
            let text = e.to_string();
            let text = text.split(" at line ").next().unwrap_or(&text).to_string();
            format!("expected a JSON watch event as `kubectl get --watch --output-watch-events -o json` prints: {text}")
        }
    };
    InputError::at(path, pos, message)
}
