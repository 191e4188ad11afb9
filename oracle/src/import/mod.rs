//! `rsmc import`: a recording of any cluster made into a scenario and an observed trace the
//! oracle judges.
//!
//! From a Kubernetes audit log ([`audit`]) written with the shipped policy
//! (`conformance/audit-policy.yaml`, or `rsmc cluster up --audit-log`):
//! 1. the writes to pods and ReplicaSets of one namespace are read, each attributed to the
//!    ReplicaSet controller, the garbage collector or a client ([`writer`]); the recording
//!    ends where the namespace's deletion was asked for (or, in a log without it, where the
//!    namespace controller's first request came in);
//! 2. they are cut into segments: at the user's marks ([`entry::MARK_PREFIX`]) when the log
//!    has any, else wherever no write happened for the quiet window;
//! 3. each accepted write becomes the watch events it caused ([`history`]), in commit order
//!    within its segment as far as the log tells it ([`order`]), and each client's
//!    write a scenario step ([`infer`]); the controllers' writes are what the oracle judges.
//!    A client's request refused as the model's API server can refuse it (an apply, a scale
//!    or a delete of a ReplicaSet: `Invalid`, `NotFound`) is a step expected to be refused,
//!    its refusal in the segment's `refused`; other refused writes change nothing and are
//!    no step (they are counted in the summary). A refusal is in the log only when the
//!    request reached the API server as a write: `kubectl scale` of a ReplicaSet that is
//!    gone fails on its read first, which the policy does not log. A system's write
//!    answered with a server error may have been committed all the same, as a later delete
//!    shows (`Importer::committed_despite_a_lost_answer`); a controller's pod delete so
//!    answered is followed as what comes after it shows, and where nothing does, as
//!    committed but `unconfirmed`, for the oracle to judge both readings ([`lost_delete`]);
//! 4. every segment ends with a `settle` step, whose observed objects are the live objects as
//!    the writes left them.
//!
//! The observed trace's resourceVersions are renumbered 1, 2, … in the order the import puts
//! the events, because the log does not give every event's version (a binding's, a
//! deletion's); the oracle uses versions only to order events.

pub mod attribute;
pub mod audit;
pub mod entry;
pub mod history;
pub mod infer;
pub mod judged;
pub mod lost_delete;
mod order;
pub mod owners;
pub mod watch;
pub mod watched;
pub mod writer;

use crate::error::InputError;
use crate::observed::{EventType, RawEvent, RawObserved, RawSegment, Refusal, SCHEMA};
use crate::scenario::{Scenario, Step, StepKind};
use entry::{Entry, Request};
use history::Objects;
use infer::Inferred;
pub use k8s_openapi::jiff::SignedDuration;
use order::{
    concurrent_writes_in_commit_order, in_commit_order, removals_after_concurrent_writes, Unordered,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use writer::{Attribution, Writer};

/// How to import.
#[derive(Clone, Debug)]
pub struct Options {
    /// The namespace to import; required when the log writes to more than one.
    pub namespace: Option<String>,
    /// A gap between writes at least this long ends a segment (when the log has no marks).
    pub quiet: SignedDuration,
    pub attribution: Attribution,
    /// The scenario's name (default: the namespace's).
    pub name: Option<String>,
    /// The release that was recorded (default: read from kube-controller-manager's user
    /// agent, when its writes are in the log).
    pub server: Option<String>,
    /// The gates the cluster ran with, where they differ from its release's defaults
    /// (`GATE=BOOL,…`, written as the trace's `cluster.featureGates`).
    pub feature_gates: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            namespace: None,
            quiet: SignedDuration::from_secs(2),
            attribution: Attribution::default(),
            name: None,
            server: None,
            feature_gates: String::new(),
        }
    }
}

/// What an import made.
#[derive(Clone, Debug)]
pub struct Imported {
    pub scenario: Scenario,
    pub observed: RawObserved,
    pub summary: Summary,
}

/// Figures of an import, for the user.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub namespace: String,
    pub first_line: usize,
    pub last_line: usize,
    /// Writes read, of which refused by the API server, and answered with a server error
    /// (their outcome unknown to their client).
    pub writes: usize,
    pub refused: usize,
    /// Of the refused, those kept as steps expected to be refused.
    pub refused_steps: usize,
    pub lost: usize,
    /// Of those, the ones the recording does not settle, marked `unconfirmed` in the trace.
    pub unconfirmed: usize,
    /// Clients' writes that changed nothing the model has (no step, no event).
    pub invisible: usize,
    pub segments: usize,
    pub steps: usize,
    pub events: usize,
    /// When the namespace's teardown began, when it did (what completed after is left out).
    pub namespace_deleted_at: Option<k8s_openapi::jiff::Timestamp>,
}

/// A recording, read: an audit log, or watch streams.
pub struct Recording {
    /// The files read; a request's `file` indexes this.
    paths: Vec<PathBuf>,
    /// "the audit log" or "the watch streams", for the scenario's description.
    what: &'static str,
    read: entry::Contents,
}

/// The audit-log reading of [`Recording`], by its older name.
pub type AuditLog = Recording;

/// Open `path` for reading, refusing a directory.
fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, InputError> {
    std::fs::File::open(path)
        .and_then(|f| match f.metadata()?.is_dir() {
            true => Err(std::io::Error::other("is a directory, not a file")),
            false => Ok(f),
        })
        .map(std::io::BufReader::new)
        .map_err(|e| InputError::in_file(path, format!("cannot read: {e}")))
}

impl Recording {
    /// Read an audit log, attributing its writes as `attribution` says; of `namespace` only,
    /// when one is named (what is not imported is not kept).
    pub fn read(
        path: &Path,
        attribution: &Attribution,
        namespace: Option<&str>,
    ) -> Result<Recording, InputError> {
        Ok(Recording {
            paths: vec![path.to_path_buf()],
            what: "the audit log",
            read: audit::read(path, open(path)?, attribution, namespace)?,
        })
    }

    /// Read the output of `kubectl get … --watch --output-watch-events -o json` (one file per
    /// resource type, or several types in one file), attributing writes as `attribution`
    /// says and putting settle points where the cluster was quiet for `quiet` ([`watch`]).
    pub fn read_watches(
        paths: &[PathBuf],
        attribution: &Attribution,
        namespace: Option<&str>,
        quiet: SignedDuration,
    ) -> Result<Recording, InputError> {
        let mut files = Vec::new();
        for path in paths {
            files.push((path.clone(), open(path)?));
        }
        Recording::read_watch_streams(files, attribution, namespace, quiet)
    }

    /// [`Recording::read_watches`] of streams already open, each with the name its errors
    /// give (`rsmc monitor --judge` hands over what its own watches saw).
    pub fn read_watch_streams<R: std::io::BufRead>(
        streams: Vec<(PathBuf, R)>,
        attribution: &Attribution,
        namespace: Option<&str>,
        quiet: SignedDuration,
    ) -> Result<Recording, InputError> {
        let paths: Vec<PathBuf> = streams.iter().map(|(p, _)| p.clone()).collect();
        let names: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let files = names
            .iter()
            .copied()
            .zip(streams.into_iter().map(|(_, r)| r));
        let seen = watch::read(files.collect(), namespace)?;
        let read = watched::entries(&names, seen, attribution, quiet)?;
        Ok(Recording {
            paths,
            what: "the watch streams",
            read,
        })
    }

    /// The namespaces whose pods or ReplicaSets the recording writes, in name order: also
    /// those it cannot read ([`Recording::unreadable`]), which [`Recording::import`] refuses
    /// with the reason.
    pub fn namespaces(&self) -> Vec<String> {
        self.written().into_iter().collect()
    }

    /// The namespaces the recording writes to that the import cannot read, each with the
    /// first thing in it that is not modelled (file, line, what); the others are read as if
    /// these were not there.
    pub fn unreadable(&self) -> &BTreeMap<String, InputError> {
        &self.read.unreadable
    }

    fn written(&self) -> BTreeSet<String> {
        let unreadable = self.read.unreadable.keys().cloned();
        self.read
            .namespaces
            .iter()
            .cloned()
            .chain(unreadable)
            .collect()
    }

    /// The files read, for messages: `a.json, b.json`.
    fn files(&self) -> String {
        let names: Vec<String> = self.paths.iter().map(|p| p.display().to_string()).collect();
        names.join(", ")
    }

    /// Import one namespace (the only one, unless `options` names it).
    pub fn import(&self, options: &Options) -> Result<Imported, InputError> {
        let path = self.paths[0].as_path();
        let namespace = choose_namespace(path, &self.written(), options.namespace.as_deref())?;
        if let Some(error) = self.read.unreadable.get(&namespace) {
            return Err(error.clone());
        }
        let mut summary = Summary {
            namespace: namespace.clone(),
            ..Summary::default()
        };
        let mine: Vec<&Entry> = self
            .read
            .entries
            .iter()
            .filter(|e| e.namespace() == namespace)
            .collect();
        // The teardown starts when the namespace's deletion is asked for, or else when the
        // namespace controller's first request comes in; whatever completes after is left out.
        let teardown = mine
            .iter()
            .filter_map(|e| match e {
                Entry::NamespaceDeleted { at, .. } => Some(*at),
                Entry::Write(r) if r.writer == Writer::NamespaceController => Some(r.received),
                _ => None,
            })
            .min();
        summary.namespace_deleted_at = teardown;
        // A watch reader cut the teardown off by the stream's order already (its times are
        // whole seconds).
        let mine: Vec<Entry> = mine
            .into_iter()
            .filter(|e| match (e, teardown) {
                (Entry::Write(r), Some(cut)) => r.at < cut || !r.seen.is_empty(),
                (Entry::Mark { at, .. } | Entry::Fault { at, .. }, Some(cut)) => *at < cut,
                (Entry::Other(w), Some(cut)) => w.at < cut,
                (Entry::NamespaceDeleted { .. }, _) => false,
                _ => true,
            })
            .cloned()
            .collect();
        let mine = removals_after_concurrent_writes(concurrent_writes_in_commit_order(mine));
        let quiet = (!self.read.quiet_found).then_some(options.quiet);
        let segments = segments(mine, quiet);
        let server = options.server.clone().or_else(|| {
            segments
                .iter()
                .flatten()
                .filter_map(written)
                .find_map(|r| release_of(&r.user_agent))
        });
        let mut importer = Importer {
            configmap_owners: owners::configmap_owners(
                segments
                    .iter()
                    .flatten()
                    .filter_map(written)
                    .flat_map(|r| r.request.iter().chain(r.response.iter())),
            ),
            ..Importer::default()
        };
        importer.objects.removal_version_in_answer = server
            .as_deref()
            .and_then(rsmc_spec::gates::release_minor)
            .is_none_or(|minor| minor >= 26);
        for (k, segment) in segments.iter().enumerate() {
            importer
                .segment(segment, &segments[k + 1..], &mut summary)
                .map_err(|(file, line, message)| {
                    InputError::at(
                        &self.paths[file],
                        Some(crate::error::Pos { line, column: 1 }),
                        message,
                    )
                })?;
        }
        if importer.out.is_empty() {
            return Err(InputError::in_file(
                path,
                format!("no write to a pod or a ReplicaSet in namespace {namespace:?}"),
            ));
        }
        let lines: Vec<usize> = segments
            .iter()
            .flatten()
            .filter_map(written)
            .map(|r| r.line)
            .collect();
        summary.first_line = lines.first().copied().unwrap_or(0);
        summary.last_line = lines.last().copied().unwrap_or(0);
        summary.segments = importer.out.len();
        summary.steps = importer.steps.len() - importer.out.len();
        summary.events = importer.version as usize;
        let name = options.name.clone().unwrap_or_else(|| namespace.clone());
        let description = format!(
            "Imported by rsmc import from {} {} (namespace {namespace}, lines {}–{}): the clients' writes as steps, a settle point at the end of each quiet period.",
            self.what,
            self.files(),
            summary.first_line,
            summary.last_line
        );
        let scenario = Scenario::new(&name, &description, importer.steps);
        let mut cluster = serde_json::json!({
            "importedFrom": self.files(),
            "namespace": namespace,
        });
        if let Some(server) = server {
            cluster["server"] = server.into();
        }
        if !options.feature_gates.is_empty() {
            cluster["featureGates"] = options.feature_gates.clone().into();
        }
        Ok(Imported {
            scenario,
            observed: RawObserved {
                schema: SCHEMA.to_string(),
                scenario: name,
                cluster,
                segments: importer.out,
                stopped_at: None,
            },
            summary,
        })
    }
}

/// The namespace named, or the only one the log writes to.
fn choose_namespace(
    path: &Path,
    written: &BTreeSet<String>,
    wanted: Option<&str>,
) -> Result<String, InputError> {
    let list = || written.iter().cloned().collect::<Vec<_>>().join(", ");
    match wanted {
        Some(ns) if written.contains(ns) => Ok(ns.to_string()),
        Some(ns) => Err(InputError::in_file(
            path,
            format!(
                "no write to a pod or a ReplicaSet in namespace {ns:?}; the log writes to: {}",
                if written.is_empty() { "none".to_string() } else { list() }
            ),
        )),
        None => match written.len() {
            1 => Ok(written.first().unwrap().to_string()),
            0 => Err(InputError::in_file(
                path,
                "no write to a pod or a ReplicaSet: is it an audit log written with conformance/audit-policy.yaml?",
            )),
            _ => Err(InputError::in_file(
                path,
                format!(
                    "the log writes to {} namespaces; name one with --namespace: {}",
                    written.len(),
                    list()
                ),
            )),
        },
    }
}

/// The writes and faults cut into segments (each a list of [`Entry::Write`] and
/// [`Entry::Fault`]): at marks when there are any, else at quiet gaps (of `quiet`, or where
/// the reader found the cluster quiet when `quiet` is `None`) — between writes and faults,
/// a fault after a gap beginning the next segment.
///
/// Each mark is a settle point whoever left it found: one with nothing written since the
/// mark before is one too (the state held, as `settle`, `wait: 20s`, `settle` checks in
/// forced/expectations-after-delete), so marks end segments that are empty, except before
/// the first write or fault.
///
/// No gap is a settle point while watch events are held (from a `hold` to its `release`):
/// no writes is then not a settled controller. Nor is a gap that begins at a fault starting a
/// controller (a restart, a second leader): until the new process has started and synced its
/// caches it writes nothing, and that takes over 2 s on a loaded machine (seen on v1.20.2:
/// a restarted controller's first status write came after such a gap, and a settle point
/// cut there misses it). With its ReplicaSet events held after an
/// orphan delete, the v1.37.2 controller retries adopting the orphaned pod (a live recheck
/// refuses each time) and never settles, as the model says (forced/adoption-under-a-stale-
/// cache, where the runner waits for such a quiet gap before it releases the events).
fn segments(entries: Vec<Entry>, quiet: Option<SignedDuration>) -> Vec<Vec<Entry>> {
    let marked = entries.iter().any(|e| matches!(e, Entry::Mark { .. }));
    let mut out: Vec<Vec<Entry>> = vec![Vec::new()];
    let mut last_at = None;
    let mut nothing_held = true;
    let mut starting = false;
    for e in entries {
        match e {
            Entry::Mark { .. } if out.iter().any(|s| acts(s)) => out.push(Vec::new()),
            Entry::Mark { .. } => {}
            Entry::NamespaceDeleted { .. } => {}
            // Followed in order, where they came; no settle point of their own.
            Entry::NamespaceCreated { .. } | Entry::Other(_) => out.last_mut().unwrap().push(e),
            Entry::Quiet { .. } if !marked => out.push(Vec::new()),
            Entry::Quiet { .. } => {}
            Entry::Write(_) | Entry::Fault { .. } => {
                let at = match &e {
                    Entry::Write(r) => r.at,
                    Entry::Fault { at, .. } => *at,
                    _ => unreachable!("matched above"),
                };
                let gap = last_at.map(|t: k8s_openapi::jiff::Timestamp| at.duration_since(t));
                let wrote = out.last().unwrap().iter().any(|e| written(e).is_some());
                let gapped = quiet.is_some_and(|q| gap.is_some_and(|g| g >= q));
                if !marked && wrote && gapped && nothing_held && !starting {
                    out.push(Vec::new());
                }
                if let Entry::Fault {
                    nothing_held: n, ..
                } = &e
                {
                    nothing_held = *n;
                }
                starting = matches!(
                    &e,
                    Entry::Fault {
                        step: StepKind::RestartController { .. } | StepKind::StartSecondLeader,
                        ..
                    }
                );
                last_at = Some(at);
                out.last_mut().unwrap().push(e);
            }
        }
    }
    if marked {
        // What came after the last mark, if anything.
        if out.last().is_some_and(|s| !acts(s)) {
            out.pop();
        }
    } else {
        out.retain(|s| acts(s));
    }
    out
}

/// Whether a segment holds a write or a fault (not only what the import follows on the way:
/// namespace creations, objects of other kinds).
fn acts(segment: &[Entry]) -> bool {
    segment
        .iter()
        .any(|e| matches!(e, Entry::Write(_) | Entry::Fault { .. }))
}

/// The write an entry is, if it is one.
fn written(entry: &Entry) -> Option<&Request> {
    match entry {
        Entry::Write(r) => Some(r),
        _ => None,
    }
}

/// `v1.20.2` from `kube-controller-manager/v1.20.2 (linux/amd64) kubernetes/faecb19/…`.
fn release_of(user_agent: &str) -> Option<String> {
    let rest = user_agent.strip_prefix("kube-controller-manager/")?;
    let version = rest.split([' ', '/']).next()?;
    version.starts_with('v').then(|| version.to_string())
}

/// The import's state across segments.
#[derive(Default)]
struct Importer {
    objects: Objects,
    /// The ConfigMaps the namespace's pods name as owners ([`owners::configmap_owners`]).
    configmap_owners: BTreeSet<String>,
    steps: Vec<Step>,
    out: Vec<RawSegment>,
    /// The last renumbered version.
    version: u64,
}

impl Importer {
    /// A system's write whose answer was a server error (a timeout, say) may have been
    /// committed all the same; a later write shows it:
    /// - a create: a delete of an object the log never saw created, by a name that create's
    ///   generateName (or name) gives. A delete answers with the object as it was, marked:
    ///   the object created is that answer without the mark;
    /// - a patch or an update of an object: a delete whose answer has other owner
    ///   references, labels or finalizers than the import's object (the lost write left
    ///   that answer without the mark); or the garbage collector's patch removing an owner
    ///   reference the import's object lacks and the lost patch added (the collector
    ///   patches only references its graph holds, and it builds that from watch events of
    ///   what was committed): the lost write left the import's object with that reference.
    ///   Seen on v1.35.4 and v1.37.2: the controller's adoption patch answered 504 as the
    ///   runner restarted the controller (its connection cut), and committed.
    ///
    /// The event of the lost write (ADDED, or MODIFIED) is ordered as that write's request.
    fn committed_despite_a_lost_answer<'a>(
        &mut self,
        r: &Request,
        lost: &[&'a Request],
    ) -> Option<Unordered<'a>> {
        let name = r.name.as_deref()?;
        let system = |l: &&&Request| l.kind == r.kind && !matches!(l.writer, Writer::Client(_));
        let lost_patch = || {
            lost.iter().rev().filter(system).find(|l| {
                matches!(l.verb.as_str(), "patch" | "update")
                    && l.subresource.is_none()
                    && l.name.as_deref() == Some(name)
            })
        };
        let (write, event_type, object) = match (r.verb.as_str(), self.objects.get(r.kind, name)) {
            ("delete", known) => {
                let mut object = r.response.clone()?;
                if !matches!(object["kind"].as_str(), Some("Pod" | "ReplicaSet")) {
                    return None;
                }
                let meta = object["metadata"].as_object_mut()?;
                let marked = meta.remove("deletionTimestamp").is_some();
                meta.remove("deletionGracePeriodSeconds");
                if marked && !self.objects.removal_version_in_answer {
                    // Before v1.26 the answer carries the version of the delete's own mark;
                    // the lost write committed before it. Left at the mark's version, the
                    // delete would look like a write that changed nothing and its mark would
                    // be lost (v1.20.2: the adoption patch answered 500, then the
                    // controller's delete of the pod).
                    let mark = history::version(&object)?;
                    object["metadata"]["resourceVersion"] = (mark - 1).to_string().into();
                }
                match known {
                    None => {
                        let create = lost.iter().rev().filter(system).find(|l| {
                            let sent = l.request.as_ref().map(|o| &o["metadata"]);
                            let named = sent.and_then(|m| m["name"].as_str()) == Some(name);
                            let generated = sent
                                .and_then(|m| m["generateName"].as_str())
                                .is_some_and(|g| !g.is_empty() && name.starts_with(g));
                            l.verb == "create" && l.subresource.is_none() && (named || generated)
                        })?;
                        self.objects.insert_lost(r.kind, object.clone(), create.at);
                        (*create, EventType::Added, object)
                    }
                    Some(known) => {
                        let changed = ["ownerReferences", "labels", "finalizers"]
                            .iter()
                            .any(|f| known["metadata"][f] != object["metadata"][f]);
                        let write = lost_patch()?;
                        if !changed {
                            return None;
                        }
                        (*write, EventType::Modified, object)
                    }
                }
            }
            ("patch", Some(known)) if r.writer == Writer::GarbageCollector => {
                let removed = r.request.as_ref()?["metadata"]["ownerReferences"].as_array()?;
                let owners = known["metadata"]["ownerReferences"].as_array();
                let has = |uid: &serde_json::Value| {
                    owners.is_some_and(|o| o.iter().any(|x| &x["uid"] == uid))
                };
                let write = lost_patch()?;
                let sent = write.request.as_ref()?["metadata"]["ownerReferences"].as_array()?;
                let added: Vec<&serde_json::Value> = sent
                    .iter()
                    .filter(|x| x["$patch"].is_null() && !has(&x["uid"]))
                    .filter(|x| removed.iter().any(|d| d["uid"] == x["uid"]))
                    .collect();
                if added.is_empty() {
                    return None;
                }
                let mut object = known.clone();
                let refs = object["metadata"]["ownerReferences"].as_array().cloned();
                let mut refs = refs.unwrap_or_default();
                refs.extend(added.into_iter().cloned());
                object["metadata"]["ownerReferences"] = refs.into();
                (*write, EventType::Modified, object)
            }
            _ => return None,
        };
        if event_type == EventType::Modified {
            self.objects.replace_lost(r.kind, object.clone());
        }
        Some(Unordered {
            request: write,
            version: None,
            event: RawEvent {
                event_type,
                step: None,
                object,
                floating: false,
                unconfirmed: false,
                or_system: false,
                by: write.writer.component(),
            },
        })
    }

    /// The events of a system's pod delete whose answer was lost, when it removes the pod at
    /// once and what comes after it (`later`) does not show it was not committed
    /// ([`lost_delete`]).
    fn lost_delete<'a, 'b>(
        &mut self,
        r: &'a Request,
        later: impl Iterator<Item = &'b Entry>,
        summary: &mut Summary,
    ) -> Vec<Unordered<'a>> {
        let name = r.name.as_deref().unwrap_or_default();
        let Some(pod) = self.objects.get(r.kind, name) else {
            return Vec::new();
        };
        let outcome = lost_delete::outcome(r, pod, later);
        let marked = match &outcome {
            lost_delete::Outcome::NotCommitted => return Vec::new(),
            lost_delete::Outcome::Marked(m) => Some(m),
            _ => None,
        };
        let Some(committed) = lost_delete::removal(r, pod, marked) else {
            return Vec::new();
        };
        match &committed {
            lost_delete::Committed::Mark(mark) => {
                self.objects.replace_lost(r.kind, mark.object.clone())
            }
            lost_delete::Committed::Removal { .. } => self.objects.remove_lost(r.kind, name),
        }
        let unconfirmed = outcome == lost_delete::Outcome::Unknown;
        summary.unconfirmed += usize::from(unconfirmed);
        committed
            .changes()
            .into_iter()
            .map(|c| Unordered {
                request: r,
                version: None,
                event: RawEvent {
                    event_type: c.event_type,
                    step: None,
                    object: c.object,
                    floating: false,
                    unconfirmed,
                    or_system: false,
                    by: r.writer.component(),
                },
            })
            .collect()
    }

    /// One segment's writes and faults: its events, its steps and its settle point;
    /// `after`, the segments that follow it.
    fn segment(
        &mut self,
        entries: &[Entry],
        after: &[Vec<Entry>],
        summary: &mut Summary,
    ) -> Result<(), (usize, usize, String)> {
        let mut events = Vec::new();
        let mut refused = Vec::new();
        // The last client step of the segment, and when its first write came in.
        let mut last_client_step: Option<(usize, k8s_openapi::jiff::Timestamp)> = None;
        // Creates answered with a server error: they may have created the object all the same.
        let mut lost: Vec<&Request> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let r: &Request = match e {
                Entry::Write(r) => r,
                Entry::Fault { step, .. } => {
                    // Where it was forced among the clients' steps; the controllers' writes
                    // around it are the model's to place.
                    self.steps.push(Step::new(step.clone()));
                    last_client_step = None;
                    continue;
                }
                Entry::NamespaceCreated { line, .. } => {
                    self.objects.others.namespace_created(*line);
                    continue;
                }
                Entry::Other(w) => {
                    let step = self
                        .objects
                        .others
                        .record(w, &self.configmap_owners)
                        .map_err(|m| (0, w.line, m))?;
                    if let Some(kind) = step {
                        // A command of its own.
                        self.steps.push(Step::new(kind));
                        last_client_step = None;
                    }
                    continue;
                }
                _ => continue,
            };
            summary.writes += 1;
            if !r.accepted() {
                if r.code >= 500 {
                    summary.lost += 1;
                    lost.push(r);
                    let later = entries[i + 1..].iter().chain(after.iter().flatten());
                    let removal = self.lost_delete(r, later, summary);
                    events.extend(removal);
                } else {
                    summary.refused += 1;
                    let client = matches!(r.writer, Writer::Client(_));
                    if let Some((kind, reason)) = infer::refused_step(r).filter(|_| client) {
                        self.steps.push(Step::new(kind).refused(reason));
                        refused.push(Refusal {
                            step: self.steps.len() - 1,
                            reason: reason.name().to_string(),
                            message: r.message.clone(),
                        });
                        summary.refused_steps += 1;
                        // A refused request is a command of its own.
                        last_client_step = None;
                    }
                }
                continue;
            }
            let fail = |m: String| (r.file, r.line, format!("{}: {m}", r.describe()));
            if let Some(event) = self.committed_despite_a_lost_answer(r, &lost) {
                events.push(event);
            }
            let born = r.name.as_ref().and_then(|n| self.objects.born(r.kind, n));
            let applied = self.objects.apply(r).map_err(fail)?;
            let step = match &r.writer {
                Writer::Client(_) => match infer::step(r, &applied, &self.objects).map_err(fail)? {
                    Inferred::Invisible => {
                        summary.invisible += 1;
                        continue;
                    }
                    Inferred::Step(kind) => {
                        // One command acts on objects that were there when it began (created
                        // before its first write came in: a pod the controller made in
                        // answer to it is another command's).
                        let merged = last_client_step.is_some_and(|(i, began)| {
                            let existed =
                                applied.before.is_none() || born.is_some_and(|b| b < began);
                            existed && infer::merge(&mut self.steps[i].kind, &kind)
                        });
                        if !merged {
                            self.steps.push(Step::new(kind));
                            last_client_step = Some((self.steps.len() - 1, r.received));
                        }
                        last_client_step.map(|(i, _)| i)
                    }
                },
                _ => None,
            };
            for change in applied.changes {
                events.push(Unordered {
                    request: r,
                    version: change.version,
                    event: RawEvent {
                        event_type: change.event_type,
                        step,
                        object: change.object,
                        floating: change.floating,
                        unconfirmed: false,
                        or_system: r.or_system,
                        by: r.writer.component(),
                    },
                });
            }
        }
        let events = in_commit_order(events)
            .into_iter()
            .map(|mut e| {
                self.version += 1;
                e.object["metadata"]["resourceVersion"] = self.version.to_string().into();
                e
            })
            .collect();
        self.steps.push(Step::new(StepKind::Settle));
        self.out.push(RawSegment {
            events: Some(events),
            refused,
            settled: self.objects.snapshot(),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;
    use rsmc_spec::api::Kind;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).unwrap()
    }

    fn write(second: i64) -> Entry {
        Entry::Write(Box::new(Request {
            file: 0,
            line: 0,
            writer: Writer::ReplicaSetController,
            or_system: false,
            user_agent: String::new(),
            verb: "create".into(),
            kind: Kind::Pod,
            subresource: None,
            namespace: "ns".into(),
            name: None,
            code: 201,
            reason: None,
            message: String::new(),
            request: None,
            response: None,
            label_selector: None,
            received: at(second),
            at: at(second),
            seen: Vec::new(),
        }))
    }

    fn fault(second: i64, step: StepKind) -> Entry {
        Entry::Fault {
            namespace: "ns".into(),
            at: at(second),
            step,
            nothing_held: true,
        }
    }

    fn lengths(entries: Vec<Entry>) -> Vec<usize> {
        segments(entries, Some(SignedDuration::from_secs(2)))
            .iter()
            .map(Vec::len)
            .collect()
    }

    fn mark(second: i64) -> Entry {
        Entry::Mark {
            namespace: "ns".into(),
            at: at(second),
        }
    }

    #[test]
    fn marks_cut_instead_of_gaps_and_an_empty_segment_between_marks_is_kept() {
        assert_eq!(lengths(vec![write(0), mark(1), write(9), mark(10)]), [1, 1]);
        assert_eq!(
            lengths(vec![
                mark(0),
                write(1),
                write(5),
                mark(6),
                mark(30),
                write(31)
            ]),
            [2, 0, 1]
        );
        assert_eq!(lengths(vec![write(0), mark(1), mark(2)]), [1, 0]);
    }

    #[test]
    fn a_quiet_gap_cuts_but_not_the_start_up_after_a_restart() {
        assert_eq!(lengths(vec![write(0), write(5)]), [1, 1]);
        let restart = || StepKind::RestartController { controller: 0 };
        assert_eq!(lengths(vec![write(0), fault(1, restart()), write(4)]), [3]);
        assert_eq!(
            lengths(vec![
                write(0),
                fault(1, StepKind::StartSecondLeader),
                write(4)
            ]),
            [3]
        );
        // Once the restarted controller has written, a gap is quiet again.
        assert_eq!(
            lengths(vec![write(0), fault(1, restart()), write(4), write(8)]),
            [3, 1]
        );
    }
}
