//! Reading a Kubernetes audit log: `audit.k8s.io/v1` `Event`s, one JSON object per line, as
//! kube-apiserver writes them with `--audit-log-format=json`.
//!
//! Only what the import needs is read: the completed requests that write pods and ReplicaSets
//! (and their subresources), the marks a user may leave (ConfigMaps created with a name
//! starting [`MARK_PREFIX`] between phases, [`FAULT_MARK_PREFIX`] where a fault was forced),
//! namespace creations and deletions, and the creates and deletes of the kinds that may own
//! pods ([`super::owners::LOGGED`]: whether an owner exists decides what the garbage
//! collector does with a reference to it). Reads, other resources, the earlier stages of a request and dry
//! runs (`?dryRun=All`: admitted or refused, nothing is stored, no controller sees them —
//! `rsmc conform` itself sends one per scenario) are skipped. A write logged without its objects (a policy level below
//! `RequestResponse`) cannot be imported and is an error at its line.

use super::entry::{fault_marked, Contents, Entry, Request, FAULT_MARK_PREFIX, MARK_PREFIX};
use super::owners::{self, OtherWrite};
use super::writer::{Attribution, Writer};
use crate::error::{InputError, Pos};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use rsmc_spec::api::Kind;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, Read as _};
use std::path::Path;

/// The verbs that write.
const WRITES: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEvent {
    kind: String,
    api_version: String,
    #[serde(default)]
    level: String,
    stage: String,
    verb: String,
    user: RawUser,
    #[serde(default)]
    user_agent: String,
    #[serde(default, rename = "requestURI")]
    request_uri: String,
    #[serde(default)]
    object_ref: Option<RawObjectRef>,
    #[serde(default)]
    response_status: Option<RawStatus>,
    #[serde(default)]
    request_object: Option<Value>,
    #[serde(default)]
    response_object: Option<Value>,
    request_received_timestamp: MicroTime,
    stage_timestamp: MicroTime,
}

#[derive(Deserialize)]
struct RawUser {
    #[serde(default)]
    username: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawObjectRef {
    #[serde(default)]
    resource: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    api_group: String,
    #[serde(default)]
    subresource: Option<String>,
}

#[derive(Deserialize)]
struct RawStatus {
    #[serde(default)]
    code: u16,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

/// The longest line read: far more than any pod or ReplicaSet with both its objects.
pub const MAX_LINE_BYTES: u64 = 16 << 20;

/// The most that the kept lines may add up to (the writes of the namespaces imported); an
/// audit log itself may be of any length, since it is read a line at a time.
pub const MAX_KEPT_BYTES: usize = 1 << 30;

/// Read the log a line at a time: only what is kept stays in memory.
pub fn read(
    path: &Path,
    mut log: impl BufRead,
    attribution: &Attribution,
    namespace: Option<&str>,
) -> Result<Contents, InputError> {
    let mut kept = Kept {
        path,
        namespace,
        bytes: 0,
        contents: Contents::default(),
    };
    let mut buffer = Vec::new();
    // What each namespace's fault marks hold at the gates so far.
    let mut held: BTreeMap<String, crate::scenario::Held> = BTreeMap::new();
    for number in 1.. {
        buffer.clear();
        let read = (&mut log)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut buffer)
            .map_err(|e| InputError::in_file(path, format!("cannot read: {e}")))?;
        if read == 0 {
            break;
        }
        let at_line = |message: String| {
            InputError::at(
                path,
                Some(Pos {
                    line: number,
                    column: 1,
                }),
                message,
            )
        };
        if read as u64 > MAX_LINE_BYTES {
            return Err(at_line(format!(
                "a line longer than {} MiB: not an audit event of a pod or a ReplicaSet",
                MAX_LINE_BYTES >> 20
            )));
        }
        let line = std::str::from_utf8(&buffer).map_err(|_| at_line("not UTF-8 text".into()))?;
        if line.trim().is_empty() {
            continue;
        }
        let de = &mut serde_json::Deserializer::from_str(line);
        let raw: RawEvent = serde_path_to_error::deserialize(de).map_err(|e| {
            let mut err = InputError::from_json(path, e);
            err.position = err.position.map(|p| Pos {
                line: number,
                column: p.column,
            });
            err.message = format!("expected an audit.k8s.io/v1 Event: {}", err.message);
            err
        })?;
        if raw.kind != "Event" || raw.api_version != "audit.k8s.io/v1" {
            return Err(at_line(format!(
                "expected an audit.k8s.io/v1 Event, got apiVersion {:?} kind {:?}",
                raw.api_version, raw.kind
            )));
        }
        if raw.stage != "ResponseComplete"
            || !WRITES.contains(&raw.verb.as_str())
            || is_dry_run(&raw.request_uri)
        {
            continue;
        }
        let Some(object_ref) = raw.object_ref else {
            continue;
        };
        let (received, at) = (raw.request_received_timestamp.0, raw.stage_timestamp.0);
        // The name the request names (a create by generateName names none before its answer).
        let named = object_name(&object_ref, &raw.request_object).map(str::to_string);
        let kind = match (object_ref.api_group.as_str(), object_ref.resource.as_str()) {
            ("", "namespaces") if raw.verb == "delete" => {
                if let Some(deleted) = object_ref.name {
                    let entry = Entry::NamespaceDeleted {
                        namespace: deleted,
                        at: received,
                    };
                    kept.keep(entry, line.len(), number)?;
                }
                continue;
            }
            ("", "namespaces") if raw.verb == "create" => {
                // rsmc conform names its namespaces by generateName: the answer has the name.
                let created = object_name(&object_ref, &raw.response_object).map(str::to_string);
                if let Some(created) = created.filter(|_| answered_ok(&raw.response_status)) {
                    let entry = Entry::NamespaceCreated {
                        namespace: created,
                        line: number,
                    };
                    kept.keep(entry, line.len(), number)?;
                }
                continue;
            }
            ("", "pods") => Kind::Pod,
            ("apps", "replicasets") => Kind::ReplicaSet,
            ("", "configmaps")
                if raw.verb == "create"
                    && named.as_deref().is_some_and(|n| {
                        n.starts_with(FAULT_MARK_PREFIX) || n.starts_with(MARK_PREFIX)
                    }) =>
            {
                let name = named.unwrap_or_default();
                if kept.namespace.is_some_and(|ns| ns != object_ref.namespace) {
                    continue;
                }
                let sent = raw.request_object.as_ref().unwrap_or(&Value::Null);
                let entry = match fault_marked(&name, sent) {
                    Some(step) => {
                        let held = held.entry(object_ref.namespace.clone()).or_default();
                        let step = step.and_then(|step| {
                            held.step(number, &step)
                                .map_err(|m| format!("fault mark {name}: {m}"))?;
                            Ok(step)
                        });
                        let step = match step {
                            Ok(step) => step,
                            Err(message) => {
                                kept.refuse(object_ref.namespace, at_line(message));
                                continue;
                            }
                        };
                        Entry::Fault {
                            step,
                            namespace: object_ref.namespace,
                            at,
                            nothing_held: held.none(),
                        }
                    }
                    None => Entry::Mark {
                        namespace: object_ref.namespace,
                        at,
                    },
                };
                kept.keep(entry, line.len(), number)?;
                continue;
            }
            (group, resource) => {
                // An object that may own pods: whether it exists decides what the garbage
                // collector does with a reference to it (super::owners).
                let Some(kind) = owners::logged_kind(group, resource) else {
                    continue;
                };
                let created = match raw.verb.as_str() {
                    "create" => true,
                    "delete" | "deletecollection" => false,
                    _ => continue,
                };
                if object_ref
                    .subresource
                    .as_deref()
                    .is_some_and(|s| !s.is_empty())
                    || !answered_ok(&raw.response_status)
                {
                    continue;
                }
                let name = named.filter(|_| raw.verb != "deletecollection");
                let answer = raw.response_object.as_ref();
                let uid = answer
                    .and_then(|a| {
                        a.pointer("/metadata/uid")
                            .or_else(|| a.pointer("/details/uid"))
                    })
                    .and_then(|u| u.as_str())
                    .map(str::to_string);
                // A delete that removed the object answers with a Status; one that left it
                // marked while finalizers run, with the object.
                let removed = answer.filter(|_| !created).map(|a| {
                    a["kind"] == "Status" || a.pointer("/metadata/deletionTimestamp").is_none()
                });
                let options = raw.request_object.as_ref();
                let propagation = options
                    .and_then(|o| o["propagationPolicy"].as_str())
                    .map(str::to_string)
                    .or_else(|| query_value(&raw.request_uri, "propagationPolicy"))
                    .or_else(|| {
                        (options.and_then(|o| o["orphanDependents"].as_bool()) == Some(true))
                            .then(|| "Orphan".to_string())
                    });
                let by_controller = match attribution.writer(&raw.user.username, &raw.user_agent) {
                    Writer::Client(_) => None,
                    writer => Some(writer.to_string()),
                };
                let entry = Entry::Other(OtherWrite {
                    namespace: object_ref.namespace,
                    kind,
                    name,
                    created,
                    line: number,
                    at,
                    uid,
                    removed,
                    propagation,
                    by_controller,
                });
                kept.keep(entry, line.len(), number)?;
                continue;
            }
        };
        let status = raw.response_status.unwrap_or(RawStatus {
            code: 0,
            reason: None,
            message: None,
        });
        let accepted = (200..300).contains(&status.code);
        if accepted && (raw.level != "RequestResponse" || raw.response_object.is_none()) {
            let message = format!(
                "{} {} {:?} is logged at level {:?} without the object it wrote: the import needs level RequestResponse for pods and replicasets (the policy conformance/audit-policy.yaml)",
                raw.verb, object_ref.resource, object_ref.name.unwrap_or_default(), raw.level
            );
            kept.refuse(object_ref.namespace, at_line(message));
            continue;
        }
        let writer = attribution.writer(&raw.user.username, &raw.user_agent);
        let entry = Entry::Write(Box::new(Request {
            file: 0,
            line: number,
            writer,
            or_system: false,
            user_agent: raw.user_agent,
            verb: raw.verb,
            kind,
            subresource: object_ref.subresource.filter(|s| !s.is_empty()),
            namespace: object_ref.namespace,
            name: object_ref.name.filter(|n| !n.is_empty()),
            code: status.code,
            reason: status.reason.filter(|r| !r.is_empty()),
            message: status.message.unwrap_or_default(),
            request: raw.request_object,
            response: raw.response_object,
            label_selector: query_value(&raw.request_uri, "labelSelector"),
            received,
            at,
            seen: Vec::new(),
        }));
        kept.keep(entry, line.len(), number)?;
    }
    Ok(kept.contents)
}

/// What [`read`] keeps: the entries of the namespace imported, within [`MAX_KEPT_BYTES`],
/// and every namespace written to.
struct Kept<'a> {
    path: &'a Path,
    namespace: Option<&'a str>,
    bytes: usize,
    contents: Contents,
}

impl Kept<'_> {
    /// Set `namespace` aside as one the import cannot read, for the first `error` in it, if
    /// it is the namespace imported (or every namespace is).
    fn refuse(&mut self, namespace: String, error: InputError) {
        if self.namespace.is_none_or(|ns| ns == namespace) {
            self.contents.unreadable.entry(namespace).or_insert(error);
        }
    }

    /// Keep `entry`, read from `line` (`bytes` long), if it is of the namespace imported and
    /// that namespace can be read.
    fn keep(&mut self, entry: Entry, bytes: usize, line: usize) -> Result<(), InputError> {
        if let Entry::Write(r) = &entry {
            if r.writer != Writer::NamespaceController
                && !self.contents.namespaces.contains(&r.namespace)
            {
                self.contents.namespaces.insert(r.namespace.clone());
            }
        }
        if self.namespace.is_some_and(|ns| ns != entry.namespace())
            || self.contents.unreadable.contains_key(entry.namespace())
        {
            return Ok(());
        }
        self.bytes += bytes;
        if self.bytes > MAX_KEPT_BYTES {
            return Err(InputError::at(
                self.path,
                Some(Pos { line, column: 1 }),
                format!(
                    "the writes to pods and ReplicaSets read so far add up to more than {} MiB: import one namespace at a time (--namespace)",
                    MAX_KEPT_BYTES >> 20
                ),
            ));
        }
        self.contents.entries.push(entry);
        Ok(())
    }
}

/// Whether the request was answered with success (2xx).
fn answered_ok(status: &Option<RawStatus>) -> bool {
    status
        .as_ref()
        .is_some_and(|s| (200..300).contains(&s.code))
}

/// Whether a request asked only for a dry run (its query has `dryRun`; `All` is the one value
/// the API server accepts).
fn is_dry_run(request_uri: &str) -> bool {
    query_value(request_uri, "dryRun").is_some()
}

/// The value of `key` in the request's query, decoded.
fn query_value(request_uri: &str, key: &str) -> Option<String> {
    let query = request_uri.split_once('?').map_or("", |(_, q)| q);
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// The name a request names: its objectRef's, else the object's in `body` (a create's
/// request, or an answer); `None` when neither has one.
fn object_name<'a>(r: &'a RawObjectRef, body: &'a Option<Value>) -> Option<&'a str> {
    let name = r.name.as_deref().filter(|n| !n.is_empty());
    name.or_else(|| {
        body.as_ref()
            .and_then(|v| v.pointer("/metadata/name"))
            .and_then(|n| n.as_str())
            .filter(|n| !n.is_empty())
    })
}
