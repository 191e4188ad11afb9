//! What every recording is read into: the writes to pods and ReplicaSets of each namespace, in
//! the order the import follows, with who made them, the marks a user left (of settle points
//! and of faults) and where a namespace's teardown began. An audit log ([`super::audit`])
//! gives each request; a watch stream ([`super::watch`]) gives each write's result, from
//! which a request is rebuilt.

use super::writer::Writer;
use crate::error::InputError;
use crate::observed::EventType;
use crate::scenario::{resource_name, StepKind};
use k8s_openapi::jiff::Timestamp;
use rsmc_spec::api::Kind;
use serde_json::Value;

/// One watch event a write caused (what a [`Request`] saw come of it).
#[derive(Clone, Debug)]
pub struct Change {
    pub event_type: EventType,
    pub object: Value,
    /// Its resourceVersion, when the log gives it.
    pub version: Option<u64>,
    /// Whether the log gives only a lower bound of its place ([`crate::observed::RawEvent::floating`]).
    pub floating: bool,
}

/// A ConfigMap created with a name that starts so marks the end of a phase (`kubectl create
/// configmap rsmc-settle-1`): where the import puts a settle point.
pub const MARK_PREFIX: &str = "rsmc-settle";

/// A ConfigMap created with a name that starts so, whose `data.step` is a fault step as a
/// scenario writes it (`kubectl create configmap rsmc-fault-1 --from-literal=step='hold: pods'`),
/// marks a fault of the environment that the recording cannot show (a controller restarted,
/// its informer held back): the import puts that step there. `rsmc conform` leaves one before
/// every fault it forces; a user who injects faults with other tools can do the same.
pub const FAULT_MARK_PREFIX: &str = "rsmc-fault";

/// The label `rsmc conform` puts on the marks it leaves, so that `rsmc monitor --judge` can
/// watch them alone (a label selector) rather than every ConfigMap of the cluster. The
/// import goes by the name.
pub const MARK_LABEL: MarkLabel = MarkLabel {
    key: "rsmc.io/mark",
    fault: "fault",
    settle: "settle",
};

/// The key of [`MARK_LABEL`] and its value on each kind of mark.
pub struct MarkLabel {
    pub key: &'static str,
    /// On a fault mark ([`FAULT_MARK_PREFIX`]).
    pub fault: &'static str,
    /// On a settle mark ([`MARK_PREFIX`]).
    pub settle: &'static str,
}

impl MarkLabel {
    /// The label selector of every mark `rsmc conform` leaves.
    pub fn selector(&self) -> String {
        format!("{} in ({},{})", self.key, self.fault, self.settle)
    }
}

/// The fault the ConfigMap `name` marks, when its name says it marks one: its `data.step`
/// read as a fault step (`Err` says what is wrong with it). `None` for any other ConfigMap.
pub fn fault_marked(name: &str, configmap: &Value) -> Option<Result<StepKind, String>> {
    if !name.starts_with(FAULT_MARK_PREFIX) {
        return None;
    }
    Some(match configmap["data"]["step"].as_str() {
        Some(text) => crate::scenario::fault_step(text)
            .map_err(|e| format!("fault mark ConfigMap {name}: data.step: {e}")),
        None => Err(format!(
            "fault mark ConfigMap {name}: no data.step; expected the fault as a scenario step, e.g. `hold: pods`"
        )),
    })
}

/// One request that wrote, or tried to write, a pod or a ReplicaSet.
#[derive(Clone, Debug)]
pub struct Request {
    /// Which of the files read it is in (an index into the import's list; 0 for an audit
    /// log, which is one file).
    pub file: usize,
    /// The line (1-based) where it is, or, for a write seen in a watch stream, where its
    /// first event begins.
    pub line: usize,
    pub writer: Writer,
    /// A client's write that may have been the system's instead: the recording does not say
    /// (a pod deletion no event claims, past the controller's event burst). Its step is an
    /// upper bound and its events are marked `orSystem` ([`crate::observed`]).
    pub or_system: bool,
    /// The client's user agent (empty when it sent none).
    pub user_agent: String,
    /// `create`, `update`, `patch`, `delete` or `deletecollection`.
    pub verb: String,
    pub kind: Kind,
    /// `status`, `scale`, `binding`, `eviction`, or `None` for the object itself.
    pub subresource: Option<String>,
    pub namespace: String,
    /// The object's name; `None` for a create by generateName (the answer has it) and a
    /// deletecollection.
    pub name: Option<String>,
    /// The HTTP status code of the answer.
    pub code: u16,
    /// The reason of a refusal (`NotFound`, `Conflict`, `Invalid`, …).
    pub reason: Option<String>,
    /// The refusal's message.
    pub message: String,
    pub request: Option<Value>,
    pub response: Option<Value>,
    /// A deletecollection's `labelSelector` (from its URL's query), as sent.
    pub label_selector: Option<String>,
    /// When the API server received it.
    pub received: Timestamp,
    /// When the answer was complete.
    pub at: Timestamp,
    /// The watch events the write caused, when it was seen in a watch stream rather than
    /// logged as a request: the objects as stored, with their resourceVersions (empty for an
    /// audit log's request, whose events are worked out from its answer).
    pub seen: Vec<Change>,
}

impl Request {
    /// Whether the API server accepted it.
    ///
    /// A watch shows only what was stored: every write seen there was accepted, and a refused
    /// one is not seen at all.
    pub fn accepted(&self) -> bool {
        (200..300).contains(&self.code)
    }

    /// The request in a message: `patch pods/pod1/status by kubectl`.
    pub fn describe(&self) -> String {
        let resource = resource_name(self.kind);
        let mut target = format!("{resource}/{}", self.name.as_deref().unwrap_or("*"));
        if let Some(sub) = &self.subresource {
            target = format!("{target}/{sub}");
        }
        format!("{} {target} by {}", self.verb, self.writer)
    }
}

/// One line the import uses.
#[derive(Clone, Debug)]
pub enum Entry {
    Write(Box<Request>),
    /// A user's mark: a phase ended here.
    Mark {
        namespace: String,
        at: Timestamp,
    },
    /// A fault of the environment was forced here ([`FAULT_MARK_PREFIX`]).
    Fault {
        namespace: String,
        at: Timestamp,
        step: StepKind,
        /// Whether nothing is held at the gates after it: a quiet gap while something is
        /// held is no settle point. (The reader checks the marks with
        /// [`crate::scenario::Held`], so a recording that releases what it never held is
        /// refused at the mark's line.)
        nothing_held: bool,
    },
    /// The namespace was created here (at this line): from here on the log has its whole life.
    NamespaceCreated {
        namespace: String,
        line: usize,
    },
    /// An object of a kind that may own pods was created or deleted.
    Other(super::owners::OtherWrite),
    /// The namespace's deletion was asked for (received then): what follows is its teardown.
    NamespaceDeleted {
        namespace: String,
        at: Timestamp,
    },
    /// The cluster was quiet here, as the reader judged it ([`Contents::quiet_found`]): a
    /// settle point, unless the recording has marks.
    Quiet {
        namespace: String,
    },
}

impl Entry {
    pub fn namespace(&self) -> &str {
        match self {
            Entry::Write(r) => &r.namespace,
            Entry::Mark { namespace, .. }
            | Entry::Fault { namespace, .. }
            | Entry::NamespaceCreated { namespace, .. }
            | Entry::NamespaceDeleted { namespace, .. }
            | Entry::Quiet { namespace } => namespace,
            Entry::Other(w) => &w.namespace,
        }
    }
}

/// What a log holds for the import.
#[derive(Debug, Default)]
pub struct Contents {
    /// Every line the import uses (of the namespace named, when one is), in the log's order.
    pub entries: Vec<Entry>,
    /// The namespaces whose pods or ReplicaSets anyone but the namespace controller wrote.
    pub namespaces: std::collections::BTreeSet<String>,
    /// The namespaces the reader could not follow, each with the first thing in it that it
    /// could not read (the file, the line, what is not modelled); their entries are left
    /// out. A whole cluster's recording holds namespaces of every kind, and one the model
    /// does not cover must not keep the others from being judged.
    pub unreadable: std::collections::BTreeMap<String, InputError>,
    /// Whether the reader put the settle points itself ([`Entry::Quiet`]): a watch stream's
    /// times are whole seconds, too coarse to cut at a quiet gap alone.
    pub quiet_found: bool,
}
