//! The order in which the API server committed what a log records.
//!
//! An audit log lists requests in the order their answers completed, which is not always the
//! order etcd committed them in; a watch stream is in commit order already. Three rules put
//! an audit log's writes back in commit order as far as the log tells it:
//! - [`concurrent_writes_in_commit_order`], on requests: of two writes to the same object
//!   that ran at the same time, the one its answer puts at the lower version goes first;
//! - [`removals_after_concurrent_writes`], on requests: a removal (a delete that removed the
//!   object at once, or an update that emptied the finalizers) goes after the writes to the
//!   same object that committed before it;
//! - [`in_commit_order`], on the events of one segment.

use super::entry::{Entry, Request};
use super::history::{removed, version};
use super::writer::Writer;
use crate::observed::{EventType, RawEvent};
use serde_json::Value;

/// An event of a segment, before it is put in order.
pub(super) struct Unordered<'a> {
    pub request: &'a Request,
    pub version: Option<u64>,
    pub event: RawEvent,
}

/// The entries with each write to an object put before the writes to the same object that
/// the log lists earlier but that committed after it.
///
/// Two requests to one object that run at the same time commit in one order and may answer
/// in the other: a user's foreground delete of a ReplicaSet committed at version 1341 and
/// answered 0.7 ms after the controller's status update that read 1341 and committed 1342
/// (v1.35.4). Applied in the log's order, the delete looks like a request that changed
/// nothing (the object was already marked) and the mark like the controller's. A successful
/// write's answer carries the version it committed (a removal-by-update's carries the
/// version it read instead, and is left to [`removals_after_concurrent_writes`]); a write
/// whose request came in before an earlier-listed write's answer completed, and whose
/// version is lower, goes before it.
pub(super) fn concurrent_writes_in_commit_order(mut entries: Vec<Entry>) -> Vec<Entry> {
    for j in 1..entries.len() {
        let Some((uid, version, received)) = committed_version(&entries[j]) else {
            continue;
        };
        let earlier = (0..j).find(|&i| {
            committed_version(&entries[i]).is_some_and(|(other, v, _)| {
                other == uid && v > version && received <= answered_at(&entries[i])
            })
        });
        if let Some(i) = earlier {
            let write = entries.remove(j);
            entries.insert(i, write);
        }
    }
    entries
}

/// An object a write names: its kind, name and UID.
type ObjectId<'a> = (rsmc_spec::api::Kind, Option<&'a str>, &'a Value);

/// A successful write's object, the version its answer says it committed, and when its
/// request came in; `None` for anything else, for a watch stream's entries (in commit order
/// already) and for a removal-by-update (whose answer carries the version it read).
fn committed_version(entry: &Entry) -> Option<(ObjectId<'_>, u64, k8s_openapi::jiff::Timestamp)> {
    let Entry::Write(w) = entry else { return None };
    if !(w.seen.is_empty() && w.accepted()) || removal(entry).is_some_and(|r| r.read.is_some()) {
        return None;
    }
    let answer = w.response.as_ref()?;
    let object = (w.kind, w.name.as_deref(), &answer["metadata"]["uid"]);
    Some((object, answered_version(w)?, w.received))
}

/// When an entry's answer completed.
fn answered_at(entry: &Entry) -> k8s_openapi::jiff::Timestamp {
    match entry {
        Entry::Write(w) => w.at,
        _ => k8s_openapi::jiff::Timestamp::MAX,
    }
}

/// The entries with every write that committed before a removal put before it.
///
/// A write to an object that succeeded committed before the object was removed: after the
/// removal it would have been refused NotFound (an update of a ReplicaSet or a pod does not
/// create it, and a created one has another UID). Its answer can still complete after the
/// removal's, so the log lists it after. Two kinds of request remove an object:
/// - a delete that removes it at once (a ReplicaSet deleted with no finalizer to wait for,
///   a pod at grace period 0 without finalizers). A user's background delete of a ReplicaSet
///   answered 0.3 ms before the controller's status update that changed nothing, whose
///   request had come in before (v1.35.4, 2026-12-06): applied in the log's order, the
///   update wrote a ReplicaSet the log no longer had, and the re-import of the suite's audit
///   log failed at random. Such a delete answers with a `Status` whose details carry the
///   removed object's UID (`(*Store).finalizeDelete` in the apiserver's
///   `registry/generic/registry/store.go`), or with the object (pods: `ReturnDeletedObject`);
/// - an update or patch that takes the last finalizer off an object marked for deletion.
///   The API server computes the update on the object it read, sees no finalizer left and
///   then deletes the object by key (`Store.Update` calling `Store.deleteWithoutFinalizers`
///   in the same file). That delete carries only the update's preconditions, which for a
///   patch hold no resourceVersion, so a write that commits between the read and the delete
///   is committed before the removal and then removed with the object; the removal's answer
///   is still the object as the update computed it, at the version it read. The garbage
///   collector's patch removing `orphan` answered at version 457 0.2 ms before the
///   controller's status update answered with version 458 of the same ReplicaSet (v1.20.2);
///   a status update that changed nothing answered with version 1506 0.8 ms after the
///   collector's patch that read 1506 removed the ReplicaSet (v1.20.2, 2026-12-03).
///
/// Such a write — to the same object (UID), accepted, its request in before the removal's
/// answer completed (and, after a removal-by-update, answered with the version the removal
/// read or a later one) — is moved before the removal. Entries a watch stream gave
/// ([`Request::seen`]) are in commit order already.
pub(super) fn removals_after_concurrent_writes(mut entries: Vec<Entry>) -> Vec<Entry> {
    let mut i = 0;
    while i < entries.len() {
        let Some(removal) = removal(&entries[i]) else {
            i += 1;
            continue;
        };
        let mut j = i + 1;
        while j < entries.len() {
            if committed_before(&entries[j], &removal) {
                let write = entries.remove(j);
                entries.insert(i, write);
                i += 1;
            }
            j += 1;
        }
        i += 1;
    }
    entries
}

/// A request that removed its object: what it removed and what its answer says.
struct Removal {
    kind: rsmc_spec::api::Kind,
    name: Option<String>,
    uid: Value,
    /// For a removal-by-update, the version the update read, which its answer carries; a
    /// write committed before it answers with that version or a later one. `None` for a
    /// delete.
    read: Option<u64>,
    /// When its answer completed.
    at: k8s_openapi::jiff::Timestamp,
}

/// The removal `entry` made, if it removed its object (see
/// [`removals_after_concurrent_writes`]).
fn removal(entry: &Entry) -> Option<Removal> {
    let Entry::Write(r) = entry else { return None };
    let answer = r.response.as_ref()?;
    if !(r.seen.is_empty() && r.accepted() && r.subresource.is_none()) {
        return None;
    }
    let (uid, read) = match (r.verb.as_str(), answer["kind"].as_str()) {
        ("delete", Some("Status")) => (answer.pointer("/details/uid")?.clone(), None),
        ("delete", _) if removed(r.kind, answer) => (answer["metadata"]["uid"].clone(), None),
        ("update" | "patch", _) if removed(r.kind, answer) => (
            answer["metadata"]["uid"].clone(),
            Some(answered_version(r)?),
        ),
        _ => return None,
    };
    if uid.is_null() {
        return None;
    }
    Some(Removal {
        kind: r.kind,
        name: r.name.clone(),
        uid,
        read,
        at: r.at,
    })
}

/// Whether `entry` is a write committed before `removal` removed its object.
fn committed_before(entry: &Entry, removal: &Removal) -> bool {
    let Entry::Write(w) = entry else { return false };
    let same_object = w.kind == removal.kind
        && w.name == removal.name
        && w.response.as_ref().map(|a| &a["metadata"]["uid"]) == Some(&removal.uid);
    let version_allows = match removal.read {
        Some(read) => answered_version(w).is_some_and(|v| v >= read),
        None => true,
    };
    w.seen.is_empty() && w.accepted() && same_object && w.received <= removal.at && version_allows
}

/// The resourceVersion an answer carries.
fn answered_version(r: &Request) -> Option<u64> {
    version(r.response.as_ref()?)
}

/// The events of a segment in the order the API server committed them, as far as the log
/// tells it. An event whose version the log gives goes by it. One whose version it does not
/// give (a binding, a deletion's mark or its removal) was committed after every write whose
/// answer completed before its request came in and after every earlier write to the same
/// object; a removal also after its own request's mark and after every write to the
/// object. A controller's or the garbage collector's is also put after every client write
/// that came in before its request: it may be the answer to it, whose watch event can reach
/// the controller before the client's answer is complete (a controller deleting pods in
/// answer to a scale came in 2 ms before the scale's answer was, on v1.37.2). It is put as
/// early as that allows: right after the latest of those. Writes that ran at the same time
/// may have been committed in another order — but never the creation of an object under the
/// name a removal frees: the name was taken until the removal, so that creation committed
/// after it, whenever its request came in. A user's `kubectl apply` recreating a ReplicaSet
/// came in 26 ms before the garbage collector's patch that took `orphan` off the old one and
/// so removed it, and was answered 105 ms after it (v1.37.2, 2026-12-07): the creation
/// waited for the name.
pub(super) fn in_commit_order(events: Vec<Unordered<'_>>) -> Vec<RawEvent> {
    let uid = |e: &RawEvent| e.object.pointer("/metadata/uid").cloned();
    let known: Vec<Known<'_>> = events
        .iter()
        .filter_map(|e| {
            e.version.map(|version| Known {
                request: e.request,
                version,
                object: uid(&e.event),
                created: (e.event.event_type == EventType::Added).then(|| name_of(&e.event)),
            })
        })
        .collect();
    let mut keyed: Vec<((u64, u8, usize), RawEvent)> = events
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let key = match e.version {
                Some(v) => (v, 0, i),
                None => {
                    let this = uid(&e.event);
                    let deletes = e.event.event_type == EventType::Deleted;
                    let system = !matches!(e.request.writer, Writer::Client(_));
                    let frees = deletes.then(|| name_of(&e.event));
                    let after = known
                        .iter()
                        .filter(|k| {
                            let r = k.request;
                            let takes_the_freed_name =
                                frees.is_some() && k.created == frees && k.object != this;
                            !takes_the_freed_name
                                && (r.at <= e.request.received
                                    || (system
                                        && matches!(r.writer, Writer::Client(_))
                                        && r.received <= e.request.received)
                                    || (std::ptr::eq(r, e.request) && deletes)
                                    || (k.object == this && (deletes || r.line < e.request.line)))
                        })
                        .map(|k| k.version)
                        .max()
                        .unwrap_or(0);
                    (after, 1, i)
                }
            };
            (key, e.event)
        })
        .collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, e)| e).collect()
}

/// An event whose version the log gives, as [`in_commit_order`] places others after it.
struct Known<'a> {
    request: &'a Request,
    version: u64,
    /// Its object's UID.
    object: Option<Value>,
    /// For a creation, the kind and name it took.
    created: Option<Name>,
}

/// An object's kind and name.
type Name = (Value, Value);

/// An event's object's kind and name.
fn name_of(event: &RawEvent) -> Name {
    (
        event.object["kind"].clone(),
        event.object["metadata"]["name"].clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::writer::Writer;
    use k8s_openapi::jiff::Timestamp;
    use rsmc_spec::api::Kind;
    use serde_json::json;

    /// A time `micros` microseconds into a second of the recording.
    fn at(micros: i64) -> Timestamp {
        Timestamp::from_microsecond(1_800_000_000_000_000 + micros).unwrap()
    }

    /// A write to the ReplicaSet `frontend`, in from `received` to `answered`, answered with
    /// `response`.
    fn write(
        line: usize,
        writer: Writer,
        verb: &str,
        subresource: Option<&str>,
        (received, answered): (i64, i64),
        response: Value,
    ) -> Entry {
        Entry::Write(Box::new(Request {
            file: 0,
            line,
            writer,
            or_system: false,
            user_agent: String::new(),
            verb: verb.into(),
            kind: Kind::ReplicaSet,
            subresource: subresource.map(Into::into),
            namespace: "ns".into(),
            name: Some("frontend".into()),
            code: 200,
            reason: None,
            message: String::new(),
            request: None,
            response: Some(response),
            label_selector: None,
            received: at(received),
            at: at(answered),
            seen: Vec::new(),
        }))
    }

    /// The ReplicaSet `frontend` of UID `uid` as stored at `version`.
    fn frontend(uid: &str, version: u64) -> Value {
        json!({"kind": "ReplicaSet", "metadata": {
            "name": "frontend", "uid": uid, "resourceVersion": version.to_string()}})
    }

    /// A user's background delete, answered with the `Status` `(*Store).finalizeDelete`
    /// writes for an object removed at once.
    fn background_delete(received: i64, answered: i64) -> Entry {
        write(
            1,
            Writer::Client("admin".into()),
            "delete",
            None,
            (received, answered),
            json!({"kind": "Status", "status": "Success", "details": {
                "name": "frontend", "group": "apps", "kind": "replicasets", "uid": "u1"}}),
        )
    }

    fn lines(entries: &[Entry]) -> Vec<usize> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Write(w) => w.line,
                _ => 0,
            })
            .collect()
    }

    /// As on v1.35.4 (2026-12-06): the controller's status update that changed nothing,
    /// its request in before the user's delete answered, answered 0.3 ms after it. It
    /// succeeded, so it came before the removal.
    #[test]
    fn a_write_answered_after_a_delete_that_removed_its_object_goes_before_it() {
        let status = |line, received, answered, uid| {
            write(
                line,
                Writer::ReplicaSetController,
                "update",
                Some("status"),
                (received, answered),
                frontend(uid, 469),
            )
        };
        let entries = vec![background_delete(0, 1_000), status(2, 900, 1_300, "u1")];
        assert_eq!(lines(&removals_after_concurrent_writes(entries)), [2, 1]);
        // In after the delete answered: left where the log has it (the import then says
        // the log is not one it can read, which is what it is).
        let entries = vec![background_delete(0, 1_000), status(2, 1_100, 1_300, "u1")];
        assert_eq!(lines(&removals_after_concurrent_writes(entries)), [1, 2]);
        // Another object of the same name (recreated): left where it is.
        let entries = vec![background_delete(0, 1_000), status(2, 900, 1_300, "u2")];
        assert_eq!(lines(&removals_after_concurrent_writes(entries)), [1, 2]);
    }

    /// A delete that only marked its object (a finalizer to wait for) removed nothing: a
    /// write after it stays after it.
    #[test]
    fn a_write_after_a_delete_that_only_marked_stays_after_it() {
        let mut marked = frontend("u1", 470);
        marked["metadata"]["deletionTimestamp"] = json!("2027-01-15T08:00:00Z");
        marked["metadata"]["finalizers"] = json!(["orphan"]);
        let delete = write(
            1,
            Writer::Client("admin".into()),
            "delete",
            None,
            (0, 1_000),
            marked,
        );
        let status = write(
            2,
            Writer::ReplicaSetController,
            "update",
            Some("status"),
            (900, 1_300),
            frontend("u1", 471),
        );
        assert_eq!(
            lines(&removals_after_concurrent_writes(vec![delete, status])),
            [1, 2]
        );
    }

    /// As on v1.37.2 (2026-12-07): a user's `kubectl apply` recreating `frontend` came in
    /// before the garbage collector's patch that took `orphan` off the old one (removing it,
    /// at no version the log gives) and was answered after it. The creation needed the name,
    /// so it goes after the removal; a client's write to another object that came in before
    /// the collector's request still goes before it.
    #[test]
    fn a_creation_under_a_name_a_removal_frees_goes_after_the_removal() {
        let request = |line, writer, verb, span| {
            let Entry::Write(w) = write(line, writer, verb, None, span, json!({})) else {
                unreachable!()
            };
            w
        };
        let event = |event_type, kind: &str, name: &str, uid: &str| RawEvent {
            event_type,
            step: None,
            object: json!({"kind": kind, "metadata": {"name": name, "uid": uid}}),
            floating: false,
            unconfirmed: false,
            or_system: false,
            by: None,
        };
        let status = request(1, Writer::ReplicaSetController, "update", (0, 100));
        let recreate = request(2, Writer::Client("admin".into()), "patch", (1_000, 3_000));
        let scale = request(3, Writer::Client("admin".into()), "patch", (1_100, 1_200));
        let collect = request(4, Writer::GarbageCollector, "patch", (1_300, 2_000));
        let events = vec![
            Unordered {
                request: &status,
                version: Some(248),
                event: event(EventType::Modified, "ReplicaSet", "frontend", "u1"),
            },
            Unordered {
                request: &recreate,
                version: Some(257),
                event: event(EventType::Added, "ReplicaSet", "frontend", "u2"),
            },
            Unordered {
                request: &scale,
                version: Some(250),
                event: event(EventType::Modified, "ReplicaSet", "backend", "u3"),
            },
            Unordered {
                request: &collect,
                version: None,
                event: event(EventType::Deleted, "ReplicaSet", "frontend", "u1"),
            },
        ];
        let order: Vec<_> = in_commit_order(events)
            .iter()
            .map(|e| (e.event_type, e.object["metadata"]["uid"].clone()))
            .collect();
        assert_eq!(
            order,
            [
                (EventType::Modified, json!("u1")),
                (EventType::Modified, json!("u3")),
                (EventType::Deleted, json!("u1")),
                (EventType::Added, json!("u2")),
            ]
        );
    }
}
