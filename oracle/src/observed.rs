//! Observed traces: what a real cluster did while a scenario ran.
//!
//! Schema `rsmc-observed/v1` (JSON):
//!
//! ```text
//! {
//!   "schema": "rsmc-observed/v1",
//!   "scenario": "frontend",                 // the scenario's name
//!   "cluster": { … },                       // free-form: controller under test, …; read:
//!                                           //   "server" (gitVersion, e.g. "v1.37.2") and
//!                                           //   "featureGates" ("GATE=BOOL,…" set at start)
//!   "segments": [                           // one per settle point of the scenario, in order
//!     {
//!       "events": [                         // watch events of ReplicaSets and pods since the
//!         {                                 //   previous settle point, ordered by resourceVersion;
//!           "type": "ADDED" | "MODIFIED" | "DELETED",   //   null when they were not recorded
//!           "step": 0,                      // the scenario step whose own write this is
//!                                           //   (see below); absent for anyone else's
//!           "object": { … },                // the object as the watch delivered it (apps/v1
//!                                           //   ReplicaSet or v1 Pod, with kind/apiVersion)
//!           "floating": true                // optional: the recording gives only the earliest
//!                                           //   place of this event (see below)
//!           "unconfirmed": true             // optional: the recording does not say whether
//!                                           //   this write was committed at all (see below)
//!           "orSystem": true                // optional, with `step`: the recording does not
//!                                           //   say whether the step or the system wrote it
//!           "by": "garbage-collector"       // optional, without `step`: the component the
//!                                           //   recording names as the writer (see below)
//!         }, …
//!       ],
//!       "refused": [                        // optional: requests of the segment's apply,
//!         {                                 //   scale and ReplicaSet delete steps that the
//!                                           //   API server refused
//!           "step": 3,                      // the step (numbered as `step` above)
//!           "reason": "Invalid",            // metav1.Status reason of the answer
//!           "message": "…"                  // its message (shown, not compared)
//!         }, …
//!       ],
//!       "settled": { "replicasets": [ … ], "pods": [ … ] }   // a list of each, once settled
//!     }, …
//!   ],
//!   "stoppedAt": 8                          // optional: the run stopped short at this step
//!                                           //   (numbered as `step`), which never completed
//! }
//! ```
//!
//! A runner knows which writes are its own (it gets their resourceVersions back), which is
//! how `step` is filled in: it lets the oracle tell the user's writes from the controller's
//! and the garbage collector's. `step` is the index of the step in the scenario's `steps`,
//! counted from 0 with every step included (`settle`, `wait`, `hold`, faults); verdicts list
//! the same step as `step + 1`. Only a step that writes as a client (apply, scale, delete,
//! label, the scheduler's binding, the kubelet's reports) can own an event, and only in the
//! segment of the settle point after it; anything else is refused as bad input
//! ([`crate::judge::step_numbering`]), since judged it would read as a controller fault.
//!
//! A run that stopped short (an `await` never met, a settle point never reached) says where
//! with `stoppedAt`: its segments are then one per settle point before that step, and a
//! last one with what was recorded until the stop, `settled` listing the namespace as it
//! was then. The oracle judges it up to the stop ([`crate::judge::stopped`]).
//!
//! `floating` is for recordings that do not give every event's resourceVersion (an audit
//! log: [`crate::import`]). Such an event is placed as early as the recording allows; it may
//! have been committed anywhere from there up to the next event of the same object, so the
//! oracle lets a model run make it at any point of that stretch, and takes whichever point a
//! run needs. A runner's own recording, ordered by the watch, never has it.
//!
//! `unconfirmed` is for a write whose client got no answer (a server error, a connection cut
//! as its sender was killed) and that nothing later in the recording confirms or rules out:
//! the API server may have committed it anyway. The events of such a write are written as if
//! it was committed, and must be the last events of their object in the trace, with the
//! settle points after them listing the object as they leave it. The oracle judges every
//! reading (each such write committed or not: then its events are left out and the object
//! is as it was before them at every later settle point), and takes one a model run
//! produces; the verdict says which ([`crate::judge::readings`]). [`unconfirmed`] finds and
//! checks them.
//!
//! `orSystem` is for a write a recording does not attribute: a pod deletion no
//! `SuccessfulDelete` event claims, when the controller's event recorder may have dropped its
//! claim ([`crate::import`]). Its `step` is the scenario step that would have made it, a pod
//! step whose count is an upper bound (`upTo: N`); a model run may make it by that step or by
//! the system (the controller, the garbage collector), and the verdict says which it took.
//!
//! `by` is the system component an import took as a write's author
//! (`replicaset-controller` or `garbage-collector`): an audit log names it by user agent, a
//! watch import by its attribution rules (a field manager, a claiming event, an owner
//! gone). A model run may still make the write by any component that can, so it never
//! decides conformance; it names what a write no run makes breaks where only its author
//! tells ([`crate::judge::broken`]: the collector deleting a pod whose controller is live).
//!
//! `refused` is how a step that the scenario expects to be refused (`refused: Invalid`) is
//! judged on the cluster's side: a refused request writes nothing, so only the runner that
//! sent it knows the answer. A step expected to be refused must have its refusal here, with
//! the same reason; other refusals (scaling a ReplicaSet that is gone) are kept for the
//! reader. A refusal of a step that sends no request in its segment is bad input, as for
//! `step`.
//!
//! Objects are abstracted into the model's domain as they are read ([`abstract_replicaset`],
//! [`abstract_pod`]): the fields the model has are read, everything the server adds
//! (managedFields, defaults, container statuses but their restart counts, timestamps) is not.
//! UIDs become small tokens, one per distinct UID in the trace; the oracle then matches them
//! to the model's UIDs up to renaming. Timestamps are not compared: the model's clock only
//! orders events, and the oracle compares what a timestamp decides (the ranking), not its
//! value.

use crate::error::InputError;
pub use crate::manifest::Object;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use rsmc_spec::api::{Kind, View};
use rsmc_spec::contract::Contract;
use rsmc_spec::gates::{semantics_of_server, FeatureGates};
use rsmc_spec::object::{
    deletion_cost, Finalizer, LabelSelector, Meta, Operator, OwnerKind, OwnerReference, Pod,
    PodPhase, ReplicaFailure, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus, Requirement, Uid,
    POD_DELETION_COST,
};
use rsmc_spec::profile::Semantics;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The schema identifier of an observed trace.
pub const SCHEMA: &str = "rsmc-observed/v1";

/// `watch.EventType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "ADDED")]
    Added,
    #[serde(rename = "MODIFIED")]
    Modified,
    #[serde(rename = "DELETED")]
    Deleted,
}

/// One watch event as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEvent {
    #[serde(rename = "type")]
    pub event_type: EventType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    pub object: serde_json::Value,
    /// The recording gives only the earliest place this event may have: it was committed
    /// there or later, before the next event of the same object (see the schema above).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub floating: bool,
    /// The recording does not say whether this write was committed (see the schema above).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unconfirmed: bool,
    /// The step or the system made it: the recording does not say (see the schema above).
    #[serde(
        default,
        rename = "orSystem",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub or_system: bool,
    /// The system component the recording names as the writer (see the schema above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Component>,
}

/// A system component a recording can name as a write's author.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Component {
    #[serde(rename = "replicaset-controller")]
    ReplicaSetController,
    #[serde(rename = "garbage-collector")]
    GarbageCollector,
}

/// The objects at a settle point, as listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSnapshot {
    pub replicasets: Vec<serde_json::Value>,
    pub pods: Vec<serde_json::Value>,
}

/// A request of the scenario's that the API server refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// The scenario step that sent it (numbered as an event's `step`).
    pub step: usize,
    /// The answer's `metav1.Status` reason (`Invalid`, `NotFound`, …).
    pub reason: String,
    /// The answer's message, for the reader.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One segment as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSegment {
    pub events: Option<Vec<RawEvent>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<Refusal>,
    pub settled: RawSnapshot,
}

/// A whole observed trace as recorded (the file's content).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawObserved {
    pub schema: String,
    pub scenario: String,
    #[serde(default)]
    pub cluster: serde_json::Value,
    pub segments: Vec<RawSegment>,
    /// The run stopped short at this scenario step (numbered as an event's `step`), which
    /// never completed; the last segment is what was recorded until then (see the schema).
    #[serde(default, rename = "stoppedAt", skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
}

/// One abstracted watch event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub event_type: EventType,
    pub step: Option<usize>,
    pub resource_version: u64,
    pub object: Object,
    /// Placed at the earliest point the recording allows ([`RawEvent::floating`]).
    pub floating: bool,
    /// Perhaps never committed ([`RawEvent::unconfirmed`]).
    pub unconfirmed: bool,
    /// Made by its step or by the system ([`RawEvent::or_system`]).
    pub or_system: bool,
    /// The component the recording names as its writer ([`RawEvent::by`]).
    pub by: Option<Component>,
}

impl Event {
    /// Whether this event opens a write the recording leaves to its step or the system: an
    /// `orSystem` event counted once per write, by its first event (a deletion's mark; the
    /// `DELETED` that may follow belongs to the same write).
    pub fn opens_reading(&self) -> bool {
        self.or_system && self.event_type != EventType::Deleted
    }
}

/// The objects at a settle point, abstracted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub replicasets: View<ReplicaSet>,
    pub pods: View<Pod>,
}

impl Snapshot {
    /// Add an object to the list of its kind.
    pub fn insert(&mut self, object: Object) {
        match object {
            Object::ReplicaSet(rs) => {
                self.replicasets.insert(rs.meta.name.clone(), rs);
            }
            Object::Pod(p) => {
                self.pods.insert(p.meta.name.clone(), p);
            }
        }
    }

    /// The object of this type and name, when listed.
    pub fn get(&self, kind: Kind, name: &str) -> Option<Object> {
        match kind {
            Kind::ReplicaSet => self.replicasets.get(name).cloned().map(Object::ReplicaSet),
            Kind::Pod => self.pods.get(name).cloned().map(Object::Pod),
        }
    }

    /// Take the object of this type and name off its list.
    pub fn remove(&mut self, kind: Kind, name: &str) {
        match kind {
            Kind::ReplicaSet => drop(self.replicasets.remove(name)),
            Kind::Pod => drop(self.pods.remove(name)),
        }
    }
}

/// One segment, abstracted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub events: Option<Vec<Event>>,
    /// The scenario's requests the API server refused in this segment.
    pub refused: Vec<Refusal>,
    pub settled: Snapshot,
}

/// A whole observed trace, abstracted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    pub scenario: String,
    pub cluster: serde_json::Value,
    pub segments: Vec<Segment>,
    /// [`RawObserved::stopped_at`].
    pub stopped_at: Option<usize>,
}

impl Observed {
    /// The behaviour of the controller of the release that was recorded
    /// (`cluster.server`, with `cluster.featureGates` switched), or `None` when the recording
    /// does not name a release.
    pub fn release_semantics(&self) -> Result<Option<Semantics>, String> {
        let Some(server) = self.cluster["server"].as_str() else {
            return Ok(None);
        };
        let gates: FeatureGates = match &self.cluster["featureGates"] {
            serde_json::Value::Null => FeatureGates::default(),
            serde_json::Value::String(s) => s
                .parse()
                .map_err(|e| format!("cluster.featureGates: {e}"))?,
            other => {
                return Err(format!(
                    "cluster.featureGates: expected a string GATE=BOOL,…, not {other}"
                ))
            }
        };
        semantics_of_server(server, &gates)
            .transpose()
            .map_err(|e| format!("cluster.featureGates: {e}"))
    }

    /// The contract the run was judged by (`cluster.contract`, written by `rsmc conform
    /// --contract`), if it names one.
    pub fn contract(&self) -> Result<Option<Contract>, String> {
        match &self.cluster["contract"] {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(s) => Contract::parse(s)
                .map(Some)
                .map_err(|e| format!("cluster.contract: {e}")),
            other => Err(format!(
                "cluster.contract: expected a release (`v1.34`) or a profile's name, not {other}"
            )),
        }
    }

    /// The nodes whose real kubelets ran the pods (`cluster.kubelet: real`, `cluster.nodes`),
    /// or `None` when the runner played the kubelet (`fake`, or not said).
    pub fn real_nodes(&self) -> Result<Option<Vec<String>>, String> {
        match self.cluster["kubelet"].as_str() {
            Some("real") => {}
            None | Some("fake") => return Ok(None),
            Some(other) => {
                return Err(format!(
                    "cluster.kubelet: expected real or fake, not {other:?}"
                ))
            }
        }
        let nodes: Option<Vec<String>> = self.cluster["nodes"]
            .as_array()
            .and_then(|a| a.iter().map(|n| n.as_str().map(str::to_string)).collect());
        match nodes {
            Some(nodes) if !nodes.is_empty() => Ok(Some(nodes)),
            _ => Err("cluster.nodes: a recording on real kubelets must name their nodes (a list of node names)".into()),
        }
    }
}

/// Read and abstract an observed trace file.
pub fn load(path: &Path) -> Result<Observed, InputError> {
    let text = rsmc_spec::input::read_text(path)
        .map_err(|e| InputError::in_file(path, format!("cannot read: {e}")))?;
    parse(path, &text)
}

/// Parse and abstract an observed trace (`file` names it in errors).
pub fn parse(file: &Path, text: &str) -> Result<Observed, InputError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: RawObserved =
        serde_path_to_error::deserialize(de).map_err(|e| InputError::from_json(file, e))?;
    if raw.schema != SCHEMA {
        return Err(InputError::in_file(
            file,
            format!("schema: expected {SCHEMA:?}, got {:?}", raw.schema),
        ));
    }
    let mut uids = UidTokens::default();
    let mut segments = Vec::new();
    for (i, seg) in raw.segments.iter().enumerate() {
        let at = |rest: String| format!("segments[{i}].{rest}");
        let events = match &seg.events {
            None => None,
            Some(events) => {
                let mut out = Vec::new();
                let mut last_rv = 0;
                for (j, e) in events.iter().enumerate() {
                    let field = at(format!("events[{j}]"));
                    let (object, rv) = abstract_object(&e.object, &mut uids)
                        .map_err(|m| InputError::in_file(file, format!("{field}.object: {m}")))?;
                    if rv <= last_rv {
                        return Err(InputError::in_file(
                            file,
                            format!(
                                "{field}: resourceVersion {rv} is not after the previous event's {last_rv}: events must be in the order the watch delivered them"
                            ),
                        ));
                    }
                    last_rv = rv;
                    if e.by.is_some() && e.step.is_some() {
                        return Err(InputError::in_file(
                            file,
                            format!(
                                "{field}: both step and by: a write is its step's or a system component's, not both"
                            ),
                        ));
                    }
                    out.push(Event {
                        event_type: e.event_type,
                        step: e.step,
                        resource_version: rv,
                        object,
                        floating: e.floating,
                        unconfirmed: e.unconfirmed,
                        or_system: e.or_system,
                        by: e.by,
                    });
                }
                Some(out)
            }
        };
        let mut settled = Snapshot::default();
        let lists = [
            ("replicasets", "ReplicaSet", &seg.settled.replicasets),
            ("pods", "Pod", &seg.settled.pods),
        ];
        for (list, kind, values) in lists {
            for (j, v) in values.iter().enumerate() {
                let field = at(format!("settled.{list}[{j}]"));
                let (object, _) = abstract_object(v, &mut uids)
                    .map_err(|m| InputError::in_file(file, format!("{field}: {m}")))?;
                if object.kind() != kind {
                    return Err(InputError::in_file(
                        file,
                        format!("{field}: expected a {kind}, got {}", object.describe()),
                    ));
                }
                settled.insert(object);
            }
        }
        segments.push(Segment {
            events,
            refused: seg.refused.clone(),
            settled,
        });
    }
    let observed = Observed {
        scenario: raw.scenario,
        cluster: raw.cluster,
        segments,
        stopped_at: raw.stopped_at,
    };
    unconfirmed(&observed).map_err(|m| InputError::in_file(file, m))?;
    Ok(observed)
}

/// The most unconfirmed writes a recording may have: every reading is judged, and there are
/// 2^n of them. A recording seldom has more than one (a controller killed with a request in
/// flight).
pub(crate) const MAX_UNCONFIRMED: usize = 6;

/// One unconfirmed write: the unconfirmed events of one object, which end its history.
#[derive(Clone, Debug)]
pub(crate) struct Unconfirmed {
    pub(crate) segment: usize,
    /// Indices of its events in the segment.
    pub(crate) events: Vec<usize>,
    pub(crate) kind: Kind,
    pub(crate) name: String,
    /// The object before the write (`None`: it did not exist).
    pub(crate) before: Option<Object>,
    /// What it is, for the verdict: `the deletion of pod/web-x2k9q`.
    pub(crate) what: String,
}

/// The recording's unconfirmed writes ([`crate::judge::readings`] judges each reading of them),
/// checked: each object's unconfirmed events end its
/// history, in one segment, and every later settle point lists the object as they leave it.
pub(crate) fn unconfirmed(observed: &Observed) -> Result<Vec<Unconfirmed>, String> {
    let mut out: Vec<Unconfirmed> = Vec::new();
    let events = |k: usize| observed.segments[k].events.as_deref().unwrap_or(&[]);
    for k in 0..observed.segments.len() {
        for (j, e) in events(k).iter().enumerate() {
            let (kind, name) = (e.object.resource(), e.object.name());
            let same = |w: &&mut Unconfirmed| w.kind == kind && w.name == name;
            let at = format!("segments[{k}].events[{j}]");
            if let Some(w) = out.iter_mut().find(same) {
                if !e.unconfirmed || w.segment != k {
                    return Err(format!(
                        "{at}: {} is written after segments[{}].events[{}], which is unconfirmed: a later write shows whether that one was committed, so it must not be marked unconfirmed",
                        e.object.describe(),
                        w.segment,
                        w.events[0]
                    ));
                }
                w.events.push(j);
                continue;
            }
            if !e.unconfirmed {
                continue;
            }
            let earlier = events(k)[..j]
                .iter()
                .rev()
                .find(|x| x.object.resource() == kind && x.object.name() == name);
            let before = match earlier {
                Some(x) if x.event_type == EventType::Deleted => None,
                Some(x) => Some(x.object.clone()),
                None if k == 0 => None,
                None => observed.segments[k - 1].settled.get(kind, name),
            };
            if before.is_none() && e.event_type != EventType::Added {
                return Err(format!(
                    "{at}: unconfirmed {} of {}, which the trace does not show before it",
                    event_word(e.event_type),
                    e.object.describe()
                ));
            }
            out.push(Unconfirmed {
                segment: k,
                events: vec![j],
                kind,
                name: name.to_string(),
                before,
                what: String::new(),
            });
        }
    }
    if out.len() > MAX_UNCONFIRMED {
        return Err(format!(
            "{} writes are unconfirmed; the oracle judges every reading of them (each committed or not) and reads at most {MAX_UNCONFIRMED}",
            out.len()
        ));
    }
    for w in &mut out {
        let written = events(w.segment);
        let first = &written[w.events[0]];
        let last = &written[*w.events.last().expect("a write has events")];
        w.what = match (first.event_type, last.event_type) {
            (_, EventType::Deleted) => format!("the deletion of {}", first.object.describe()),
            (EventType::Added, _) => format!("the creation of {}", first.object.describe()),
            _ => format!("a write to {}", first.object.describe()),
        };
        let gone = last.event_type == EventType::Deleted;
        for (k, segment) in observed.segments.iter().enumerate().skip(w.segment) {
            let listed = segment.settled.get(w.kind, &w.name).is_some();
            if listed == gone {
                return Err(format!(
                    "segments[{k}].settled: {} {} listed, but {} is unconfirmed: the settle points after it list objects as it leaves them",
                    first.object.describe(),
                    if listed { "is" } else { "is not" },
                    w.what
                ));
            }
        }
    }
    Ok(out)
}

fn event_word(t: EventType) -> &'static str {
    match t {
        EventType::Added => "creation",
        EventType::Modified => "change",
        EventType::Deleted => "deletion",
    }
}

/// Where the abstraction gets the model's small UID for a real one. A recording keeps every
/// UID it met ([`UidTokens`]); a long-running reader (the live monitor) needs one that can
/// forget the UIDs of objects that are gone, so the abstraction takes either.
pub trait UidSource {
    /// The token of `uid`, a new one for a UID not seen before.
    fn token(&mut self, uid: &str) -> Uid;
}

/// Real UIDs (random strings) as small tokens, one per distinct UID, in order of appearance.
#[derive(Default)]
pub struct UidTokens(BTreeMap<String, Uid>);

impl UidSource for UidTokens {
    fn token(&mut self, uid: &str) -> Uid {
        UidTokens::token(self, uid)
    }
}

impl UidTokens {
    /// The token of `uid`, a new one for a UID not seen before.
    pub fn token(&mut self, uid: &str) -> Uid {
        let next = self.0.len() as Uid + 1;
        *self.0.entry(uid.to_string()).or_insert(next)
    }

    /// The real UID a token stands for.
    pub fn uid(&self, token: Uid) -> Option<&str> {
        self.0
            .iter()
            .find(|(_, t)| **t == token)
            .map(|(uid, _)| uid.as_str())
    }
}

/// Abstract one object (by its `kind`), with its resourceVersion.
fn abstract_object(v: &serde_json::Value, uids: &mut UidTokens) -> Result<(Object, u64), String> {
    let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let api_version = v.get("apiVersion").and_then(|k| k.as_str()).unwrap_or("");
    let object = match (api_version, kind) {
        ("apps/v1", "ReplicaSet") => {
            let rs: apps::ReplicaSet =
                serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
            let rv = resource_version(&rs.metadata)?;
            (Object::ReplicaSet(Arc::new(abstract_replicaset(&rs, uids)?)), rv)
        }
        ("v1", "Pod") => {
            let pod: core::Pod = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
            let rv = resource_version(&pod.metadata)?;
            (Object::Pod(Arc::new(abstract_pod(&pod, uids)?)), rv)
        }
        _ => {
            return Err(format!(
                "expected an apps/v1 ReplicaSet or a v1 Pod, got apiVersion {api_version:?} kind {kind:?}"
            ))
        }
    };
    Ok(object)
}

fn resource_version(m: &meta::ObjectMeta) -> Result<u64, String> {
    let rv = m
        .resource_version
        .as_deref()
        .ok_or("metadata.resourceVersion: missing")?;
    rv.parse()
        .map_err(|_| format!("metadata.resourceVersion: expected a number, got {rv:?}"))
}

/// The metadata the model has: name, generateName, UID (as a token), labels, generation,
/// owner references (to ReplicaSets and owners of any other kind), deletion state and the
/// GC's finalizers.
fn abstract_meta(m: &meta::ObjectMeta, uids: &mut impl UidSource) -> Result<Meta, String> {
    let name = m.name.clone().ok_or("metadata.name: missing")?;
    let uid = m.uid.as_deref().ok_or("metadata.uid: missing")?;
    let mut out = Meta::named(&name, m.labels.clone().unwrap_or_default());
    out.generate_name = m.generate_name.clone().filter(|g| !g.is_empty());
    out.uid = uids.token(uid);
    out.generation = m.generation.unwrap_or(0) as u32;
    out.deletion_timestamp = m.deletion_timestamp.as_ref().map(|_| 0);
    out.finalizers = m
        .finalizers
        .iter()
        .flatten()
        .filter_map(|f| Finalizer::named(f))
        .collect();
    for r in m.owner_references.iter().flatten() {
        out.owner_references.push(OwnerReference {
            kind: OwnerKind::of(&r.api_version, &r.kind),
            name: r.name.clone(),
            uid: uids.token(&r.uid),
            controller: r.controller.unwrap_or(false),
            block_owner_deletion: r.block_owner_deletion.unwrap_or(false),
        });
    }
    Ok(out)
}

fn abstract_selector(s: &meta::LabelSelector) -> Result<LabelSelector, String> {
    let mut out = LabelSelector {
        match_labels: s.match_labels.clone().unwrap_or_default(),
        match_expressions: Vec::new(),
    };
    for e in s.match_expressions.iter().flatten() {
        let operator = match e.operator.as_str() {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            other => return Err(format!("spec.selector: unknown operator {other:?}")),
        };
        out.match_expressions.push(Requirement {
            key: e.key.clone(),
            operator,
            values: e.values.iter().flatten().cloned().collect(),
        });
    }
    Ok(out)
}

/// A ReplicaSet as the model sees it: spec (replicas, selector, template labels and
/// annotations, minReadySeconds, restartPolicy), status (counts, observedGeneration, the ReplicaFailure
/// condition), metadata.
pub fn abstract_replicaset(
    rs: &apps::ReplicaSet,
    uids: &mut impl UidSource,
) -> Result<ReplicaSet, String> {
    let spec = rs.spec.clone().unwrap_or_default();
    let template = spec.template.clone().unwrap_or_default();
    let restart = template
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.clone())
        .unwrap_or_else(|| "Always".into());
    let status = rs.status.clone().unwrap_or_default();
    let failure = status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "ReplicaFailure" && c.status == "True")
        .map(|c| match c.reason.as_deref() {
            Some("FailedCreate") => ReplicaFailure::FailedCreate,
            _ => ReplicaFailure::FailedDelete,
        });
    Ok(ReplicaSet {
        meta: abstract_meta(&rs.metadata, uids)?,
        spec: ReplicaSetSpec {
            replicas: spec.replicas.unwrap_or(1),
            selector: abstract_selector(&spec.selector)?,
            template_labels: template
                .metadata
                .as_ref()
                .and_then(|m| m.labels.clone())
                .unwrap_or_default(),
            template_annotations: template
                .metadata
                .and_then(|m| m.annotations)
                .unwrap_or_default(),
            min_ready_seconds: spec.min_ready_seconds.unwrap_or(0),
            restart_policy_always: restart == "Always",
        },
        status: ReplicaSetStatus {
            replicas: status.replicas,
            fully_labeled_replicas: status.fully_labeled_replicas.unwrap_or(0),
            ready_replicas: status.ready_replicas.unwrap_or(0),
            available_replicas: status.available_replicas.unwrap_or(0),
            terminating_replicas: status.terminating_replicas,
            observed_generation: status.observed_generation.unwrap_or(0) as u32,
            replica_failure: failure,
        },
    })
}

/// Whether a real pod's `Ready` condition is true — the one reading of readiness that the
/// import, the runner's settle and the monitor's view share.
pub fn is_ready(pod: &core::Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// A pod as the model sees it: metadata, node, phase, readiness, restarts, deletion cost.
pub fn abstract_pod(pod: &core::Pod, uids: &mut impl UidSource) -> Result<Pod, String> {
    let meta = abstract_meta(&pod.metadata, uids)?;
    let mut out = Pod::new(&meta.name, meta.labels.clone());
    out.meta = meta;
    out.node_name = pod
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .filter(|n| !n.is_empty());
    out.grace_over =
        out.meta.is_deleting() && pod.metadata.deletion_grace_period_seconds == Some(0);
    let status = pod.status.clone().unwrap_or_default();
    out.phase = match status.phase.as_deref().unwrap_or("Pending") {
        "Pending" => PodPhase::Pending,
        "Running" => PodPhase::Running,
        "Succeeded" => PodPhase::Succeeded,
        "Failed" => PodPhase::Failed,
        "Unknown" => PodPhase::Unknown,
        other => return Err(format!("status.phase: unknown phase {other:?}")),
    };
    let ready = is_ready(pod);
    out.ready_since = ready.then_some(0);
    out.available = ready;
    out.restarts = status
        .container_statuses
        .iter()
        .flatten()
        .map(|c| c.restart_count.max(0) as u32)
        .max()
        .unwrap_or(0);
    if let Some(cost) = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(POD_DELETION_COST))
    {
        out.deletion_cost = Some(
            deletion_cost(cost)
                .map_err(|e| format!("metadata.annotations[{POD_DELETION_COST}]: {e}"))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::object::labels;

    #[test]
    fn a_replicaset_keeps_its_template_annotations() {
        let rs: apps::ReplicaSet = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "rs", "uid": "u-1", "generation": 5,
                "annotations": {"note": "not the template's"}
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"foo": "bar"}},
                "template": {
                    "metadata": {"labels": {"foo": "bar"}, "annotations": {"test": "annotation"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}
                }
            },
            "status": {"replicas": 2, "observedGeneration": 5}
        }))
        .unwrap();
        let model = abstract_replicaset(&rs, &mut UidTokens::default()).unwrap();
        assert_eq!(model.spec.template_labels, labels(&[("foo", "bar")]));
        assert_eq!(
            model.spec.template_annotations,
            labels(&[("test", "annotation")])
        );
        assert_eq!(
            (model.meta.generation, model.status.observed_generation),
            (5, 5)
        );
    }

    /// A write is its step's or a component's: naming both is bad input, named by field;
    /// naming the component alone reads.
    #[test]
    fn an_event_names_a_step_or_a_component() {
        let trace = |extra: &str| {
            format!(
                r#"{{"schema": "{SCHEMA}", "scenario": "s", "segments": [{{"events": [
                    {{"type": "ADDED", {extra} "object": {{"apiVersion": "v1", "kind": "Pod",
                      "metadata": {{"name": "p", "uid": "u", "resourceVersion": "1"}}}}}}],
                  "settled": {{"replicasets": [], "pods": []}}}}]}}"#
            )
        };
        let file = Path::new("t.json");
        let by = parse(file, &trace(r#""by": "garbage-collector","#)).unwrap();
        let events = by.segments[0].events.as_ref().unwrap();
        assert_eq!(events[0].by, Some(Component::GarbageCollector));
        let both = parse(file, &trace(r#""step": 0, "by": "replicaset-controller","#));
        let e = both.unwrap_err().to_string();
        assert!(e.contains("segments[0].events[0]: both step and by"), "{e}");
    }
}
