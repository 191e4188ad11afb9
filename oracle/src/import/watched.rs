//! Watch events made into the writes the audit-log import follows ([`super::entry`]): each
//! write rebuilt as the request that made it, with its writer ([`super::attribute`]), its
//! time, and its events as the watch delivered them, so that [`super::infer`] and the
//! segmenting and output of [`super`] are the same for both recordings.
//!
//! A watch shows results, not requests, so:
//! - a refused request is not seen at all (the audit log keeps it as refused);
//! - one write is one event, except a deletion that removes the object at once after marking
//!   it (a pod with no grace period left): its `MODIFIED` and `DELETED` events, with other
//!   events possibly between them, are one write;
//! - the request is what the change shows: a pod's `spec.nodeName` set is a binding; its
//!   `deletionTimestamp` set, a deletion with the grace period it shows; a ReplicaSet's
//!   deletion has the propagation its finalizers show (`foregroundDeletion`: foreground,
//!   `orphan`: orphan, removed at once: background); a change through the status or scale
//!   subresource is one when its manager's entry names that subresource;
//! - its time is the newest time the change shows: the creationTimestamp of a creation, the
//!   changed `managedFields` entry's time, a deletion's `deletionTimestamp` less its grace
//!   period; whole seconds, and none for a binding, a scale and a removal. Times are made
//!   to increase in the stream's order (a write without one gets the one before).
//!
//! **Settle points.** A time gap alone cannot place them at whole-second resolution (two
//! writes 1.1 s apart may be 2 s apart by their times, and a write without a time of its own
//! hides where a gap is). The cluster was quiet at a point of the stream when the times on
//! either side (the last time before it, the first after) are at least the quiet window
//! apart, and the objects as they stand there are settled: every ReplicaSet has observed its
//! generation and counts in `status.replicas` its active pods (not being deleted, not
//! Succeeded or Failed), of which one not being deleted keeps `spec.replicas`; none is being orphan-deleted,
//! or foreground-deleted with a dependent not yet being deleted; no pod that is not being
//! deleted belongs to a ReplicaSet that is gone. A settle point goes at the first such point
//! between two timed writes (before a fault forced there), unless watch events are held
//! then. With marks (ConfigMaps named
//! [`super::entry::MARK_PREFIX`]…, in a watch of ConfigMaps) the settle points are the marks
//! instead. A fault mark ([`super::entry::FAULT_MARK_PREFIX`]…) puts its fault step where it
//! is in the stream.
//!
//! **Who deleted.** With a watch of the ReplicaSet controllers' `SuccessfulDelete` events
//! ([`crate::delete_claims`]), each claim is the controller's for the last deletion of a pod
//! of that name before it in the stream (one etcd revision order: events stored in another
//! etcd than pods cannot be ordered against them), and every other pod deletion is a
//! client's, the garbage collector's or the kubelet's ([`attribute::deleter`]) — or, once the
//! controller may have sent more events than its recorder lets through ([`Claims`]), left to
//! the model: a client's step that may act on fewer pods (`upTo`), each deletion its or the
//! system's (`orSystem`). Without such a watch (no claim anywhere in the recording), the
//! deleter is guessed from the state.
//!
//! **The end.** With a watch of namespaces, a namespace's recording ends where its deletion
//! began (its `deletionTimestamp` set): the namespace controller's deletions after that are
//! left out. Without one, they are read as any other deletions.

use super::attribute::{self, Claim, Owners, CONTROLLER_MANAGER};
use super::entry::Change;
use super::entry::{fault_marked, Contents, Entry, Request, MARK_PREFIX};
use super::watch::{Resource, Seen};
use super::writer::{Attribution, Writer};
use crate::error::{InputError, Pos};
use crate::observed::EventType;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use rsmc_spec::api::Kind;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// The writes of every namespace in `seen` (in the stream's order), with settle points; a
/// namespace whose events cannot be followed is set aside with the reason
/// ([`Contents::unreadable`]), and the others are read.
pub fn entries(
    paths: &[&Path],
    seen: Vec<Seen>,
    attribution: &Attribution,
    quiet: SignedDuration,
) -> Result<Contents, InputError> {
    let claims_watched = seen.iter().any(|s| s.resource == Resource::Event);
    let mut by_namespace: BTreeMap<String, Vec<Seen>> = BTreeMap::new();
    for s in seen {
        let ns = match s.resource {
            Resource::Namespace => s.name().to_string(),
            _ => s.namespace().to_string(),
        };
        by_namespace.entry(ns).or_default().push(s);
    }
    let mut contents = Contents {
        quiet_found: true,
        ..Contents::default()
    };
    for (namespace, events) in by_namespace {
        let mut follow = Follow {
            attribution,
            pods: BTreeMap::new(),
            replicasets: BTreeMap::new(),
            owners: Owners::default(),
            items: Vec::new(),
            held: crate::scenario::Held::default(),
            claims: claims_watched.then(|| claims(&events)),
        };
        if let Err((file, line, message)) = follow.all(&events) {
            let error = InputError::at(paths[file], Some(Pos { line, column: 1 }), message);
            contents.unreadable.insert(namespace, error);
            continue;
        }
        let written = follow.items.iter().any(|i| matches!(i, Item::Write { .. }));
        if written {
            contents.namespaces.insert(namespace.clone());
        }
        contents
            .entries
            .extend(settle_points(follow.items, &namespace, quiet));
    }
    Ok(contents)
}

/// A write, mark or end, before settle points and times are put in.
enum Item {
    Write {
        request: Box<Request>,
        /// The time the write itself shows, if any.
        own: Option<Timestamp>,
        /// Whether the objects were settled once it was made.
        settled: bool,
    },
    Mark(Timestamp),
    /// A fault mark: the step forced there, and whether nothing is held at the gates after
    /// it (a quiet gap while something is held is no settle point).
    Fault {
        step: crate::scenario::StepKind,
        nothing_held: bool,
    },
    End(Option<Timestamp>),
}

/// One namespace's objects as the stream leaves them.
struct Follow<'a> {
    attribution: &'a Attribution,
    pods: BTreeMap<String, Value>,
    replicasets: BTreeMap<String, Value>,
    owners: Owners,
    items: Vec<Item>,
    /// What the fault marks so far hold at the gates; a mark that releases what is not held
    /// (or holds what is) is an error in the recording.
    held: crate::scenario::Held,
    /// The deletions controllers claimed, and how many each ReplicaSet's pods had; `None`
    /// when the recording has no claims.
    claims: Option<Claims>,
}

/// What a namespace's recording says of its pod deletions' claims.
struct Claims {
    /// The events (by index) that begin a pod deletion a controller claimed: for each claim,
    /// the event that began the last deletion of a pod of that name before it.
    claimed: HashSet<usize>,
    /// How many pod deletions began, by the UID of the pods' controller ReplicaSet (by
    /// anyone: an upper bound of its controller's `SuccessfulDelete` events).
    deletions: HashMap<String, usize>,
    /// How many pods each ReplicaSet's controller (by the ReplicaSet's UID) created so far
    /// in the stream: each cost it one event of its recorder's allowance.
    created: HashMap<String, usize>,
}

impl Claims {
    /// Whether the recorder of the controller of the ReplicaSet `uid` may have dropped the
    /// claim of one of its pods' deletions: counting every creation it made before and every
    /// deletion of its pods in the whole recording (which may come first: a batch's events
    /// are sent in any order), it may have sent the recorder's allowance before that claim.
    fn may_be_dropped(&self, uid: &str) -> bool {
        let count = |m: &HashMap<String, usize>| m.get(uid).copied().unwrap_or(0);
        count(&self.created) + count(&self.deletions) > crate::delete_claims::RECORDER_BURST
    }

    /// The controller of the ReplicaSet `uid` created a pod: one more event spent.
    fn created_by_controller(&mut self, uid: String) {
        *self.created.entry(uid).or_default() += 1;
    }
}

fn claims(events: &[Seen]) -> Claims {
    let mut deleting: HashSet<&str> = HashSet::new();
    let mut last_deletion: HashMap<&str, usize> = HashMap::new();
    let mut claimed = HashSet::new();
    let mut deletions: HashMap<String, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        match e.resource {
            Resource::Pod => {
                let marked = attribute::deleting(&e.object);
                let begins =
                    !deleting.contains(e.uid()) && (e.event_type == EventType::Deleted || marked);
                if begins {
                    last_deletion.insert(e.name(), i);
                    if let Some((_, _, uid)) = attribute::controller_ref(&e.object) {
                        *deletions.entry(uid).or_default() += 1;
                    }
                }
                if e.event_type == EventType::Deleted {
                    deleting.remove(e.uid());
                } else if marked {
                    deleting.insert(e.uid());
                }
            }
            Resource::Event if e.event_type != EventType::Deleted => {
                if let Some(claim) = super::watch::claim_of(&e.object) {
                    if let Some(j) = last_deletion.remove(claim.pod.as_str()) {
                        claimed.insert(j);
                    }
                }
            }
            _ => {}
        }
    }
    Claims {
        claimed,
        deletions,
        created: HashMap::new(),
    }
}

/// What a write was, as rebuilt.
struct Write {
    writer: Writer,
    manager: String,
    verb: &'static str,
    subresource: Option<String>,
    request: Option<Value>,
    own: Option<Timestamp>,
    /// Perhaps the system's instead ([`Request::or_system`]).
    or_system: bool,
}

fn time_of(object: &Value, field: &str) -> Option<Timestamp> {
    object["metadata"][field].as_str()?.parse().ok()
}

/// When a deletion was asked for: its deletionTimestamp less its grace period.
fn deletion_time(object: &Value) -> Option<Timestamp> {
    let grace = object["metadata"]["deletionGracePeriodSeconds"]
        .as_i64()
        .unwrap_or(0);
    time_of(object, "deletionTimestamp")?
        .checked_sub(SignedDuration::from_secs(grace))
        .ok()
}

fn grace(object: &Value) -> Option<i64> {
    object["metadata"]["deletionGracePeriodSeconds"].as_i64()
}

/// Whether a pod written so is removed by the same write: marked, no grace period left, no
/// finalizer.
fn removed_at_once(kind: Kind, object: &Value) -> bool {
    kind == Kind::Pod
        && attribute::deleting(object)
        && grace(object) == Some(0)
        && attribute::finalizers(object).is_empty()
}

impl Follow<'_> {
    fn objects(&mut self, kind: Kind) -> &mut BTreeMap<String, Value> {
        match kind {
            Kind::Pod => &mut self.pods,
            Kind::ReplicaSet => &mut self.replicasets,
        }
    }

    /// Follow the namespace's events in order; `Err` is (file, line, message).
    fn all(&mut self, events: &[Seen]) -> Result<(), (usize, usize, String)> {
        let mut consumed = vec![false; events.len()];
        for (i, e) in events.iter().enumerate() {
            if consumed[i] {
                continue;
            }
            let kind = match e.resource {
                Resource::Namespace => {
                    if e.event_type == EventType::Deleted || attribute::deleting(&e.object) {
                        self.items
                            .push(Item::End(time_of(&e.object, "deletionTimestamp")));
                        return Ok(());
                    }
                    continue;
                }
                Resource::ConfigMap => {
                    if e.event_type != EventType::Added {
                        continue;
                    }
                    if let Some(step) = fault_marked(e.name(), &e.object) {
                        let step = step.map_err(|m| (e.file, e.line, m))?;
                        self.held.step(i, &step).map_err(|m| {
                            (e.file, e.line, format!("fault mark {}: {m}", e.name()))
                        })?;
                        self.items.push(Item::Fault {
                            step,
                            nothing_held: self.held.none(),
                        });
                    } else if e.name().starts_with(MARK_PREFIX) {
                        let at = time_of(&e.object, "creationTimestamp");
                        self.items
                            .push(Item::Mark(at.unwrap_or(Timestamp::UNIX_EPOCH)));
                    }
                    continue;
                }
                Resource::Event => continue,
                Resource::Pod => Kind::Pod,
                Resource::ReplicaSet => Kind::ReplicaSet,
            };
            let mut group = vec![e];
            if e.event_type == EventType::Modified && removed_at_once(kind, &e.object) {
                if let Some(j) = (i + 1..events.len()).find(|&j| {
                    events[j].event_type == EventType::Deleted
                        && events[j].resource == e.resource
                        && events[j].uid() == e.uid()
                }) {
                    consumed[j] = true;
                    group.push(&events[j]);
                }
            }
            let fail = |m: String| {
                let what = format!(
                    "{} {} {}",
                    kind_name(kind),
                    e.name(),
                    event_name(e.event_type)
                );
                (e.file, e.line, format!("{what}: {m}"))
            };
            let before = self.objects(kind).get(e.name()).cloned();
            let claim = match &self.claims {
                None => Claim::NotWatched,
                Some(c) if c.claimed.contains(&i) => Claim::Claimed,
                Some(c) => Claim::Unclaimed {
                    may_be_dropped: attribute::controller_ref(&e.object)
                        .is_some_and(|(_, _, uid)| c.may_be_dropped(&uid)),
                },
            };
            let write = self
                .classify(kind, before.as_ref(), e, claim)
                .map_err(fail)?;
            if kind == Kind::Pod
                && e.event_type == EventType::Added
                && write.writer == Writer::ReplicaSetController
            {
                if let (Some(c), Some((_, _, uid))) =
                    (&mut self.claims, attribute::controller_ref(&e.object))
                {
                    c.created_by_controller(uid);
                }
            }
            let last = group.last().map(|s| &s.object).unwrap_or(&e.object);
            let request = Request {
                file: e.file,
                line: e.line,
                writer: write.writer,
                or_system: write.or_system,
                user_agent: write.manager,
                verb: write.verb.to_string(),
                kind,
                subresource: write.subresource,
                namespace: e.namespace().to_string(),
                name: Some(e.name().to_string()),
                code: if e.event_type == EventType::Added {
                    201
                } else {
                    200
                },
                reason: None,
                message: String::new(),
                request: write.request,
                response: Some(last.clone()),
                label_selector: None,
                received: Timestamp::UNIX_EPOCH,
                at: Timestamp::UNIX_EPOCH,
                seen: group
                    .iter()
                    .map(|s| Change {
                        event_type: s.event_type,
                        object: s.object.clone(),
                        version: Some(s.version),
                        floating: false,
                    })
                    .collect(),
            };
            for s in &group {
                self.take(kind, s);
            }
            self.items.push(Item::Write {
                request: Box::new(request),
                own: write.own,
                settled: self.settled(),
            });
        }
        Ok(())
    }

    /// Keep what an event shows.
    fn take(&mut self, kind: Kind, s: &Seen) {
        let name = s.name().to_string();
        if kind == Kind::ReplicaSet {
            let uid = s.uid().to_string();
            self.owners.known.insert(uid.clone());
            match s.event_type {
                EventType::Deleted => self.owners.live.remove(&uid),
                _ => self.owners.live.insert(uid, s.object.clone()),
            };
        }
        match s.event_type {
            EventType::Deleted => self.objects(kind).remove(&name),
            _ => self.objects(kind).insert(name, s.object.clone()),
        };
    }

    /// The writer, the request and the time of the write that caused `e`.
    /// `claim`: what the recording says of the claim of the deletion `e` begins.
    fn classify(
        &self,
        kind: Kind,
        before: Option<&Value>,
        e: &Seen,
        claim: Claim,
    ) -> Result<Write, String> {
        let after = &e.object;
        let no_step = |writer: Writer, verb: &'static str, request: Option<Value>| Write {
            writer,
            manager: String::new(),
            verb,
            subresource: None,
            request,
            own: None,
            or_system: false,
        };
        let before = match (e.event_type, before) {
            (EventType::Added, Some(_)) => {
                return Err("added again without being deleted: an event is missing from the stream".into())
            }
            (EventType::Added, None) => return self.creation(kind, after),
            (_, None) => {
                return Err("its creation is not in the stream: start the watches before the objects they follow are created".into())
            }
            (_, Some(b)) => b,
        };
        // The deletion `e` begins, by whoever [`attribute::deleter`] says.
        let deletion = || -> Result<Write, String> {
            let deleter = attribute::deleter(kind, before, &self.pods, &self.owners, claim)?;
            let mut w = no_step(
                deleter.writer,
                "delete",
                Some(delete_options(kind, before, after)),
            );
            w.own = deletion_time(after);
            w.or_system = deleter.or_system;
            Ok(w)
        };
        if e.event_type == EventType::Deleted {
            if !attribute::deleting(before) {
                // Removed at once: a ReplicaSet without finalizers (background propagation).
                return deletion();
            }
            let left = attribute::finalizers(after);
            if left.is_empty() {
                // The grace period ended: the kubelet's final delete.
                return Ok(no_step(
                    kubelet(),
                    "delete",
                    Some(json!({"gracePeriodSeconds": 0})),
                ));
            }
            if left
                .iter()
                .all(|f| f == "orphan" || f == "foregroundDeletion")
            {
                return Ok(no_step(Writer::GarbageCollector, "patch", None));
            }
            return Err(format!("removed when its finalizers {left:?} were taken off, by a writer a watch does not show"));
        }
        if !attribute::deleting(before) && attribute::deleting(after) {
            return deletion();
        }
        let deletion_changed = ["deletionTimestamp", "deletionGracePeriodSeconds"]
            .iter()
            .any(|f| before["metadata"][f] != after["metadata"][f]);
        if attribute::deleting(before) && deletion_changed {
            if grace(after) != Some(0) {
                return Err("a second deletion with a grace period left: no scenario step makes one (the kubelet's final delete has none)".into());
            }
            let mut w = no_step(kubelet(), "delete", Some(json!({"gracePeriodSeconds": 0})));
            w.own = deletion_time(after);
            return Ok(w);
        }
        let node = |o: &Value| o["spec"]["nodeName"].as_str().map(str::to_string);
        if kind == Kind::Pod && node(before).is_none() {
            if let Some(node) = node(after) {
                let scheduler =
                    Writer::Client("the scheduler (a binding: spec.nodeName set)".into());
                return Ok(no_step(
                    scheduler,
                    "create",
                    Some(json!({"target": {"name": node}})),
                ))
                .map(|mut w| {
                    w.subresource = Some("binding".into());
                    w
                });
            }
        }
        let m = attribute::manager(kind, before, after)?;
        let writer = self.writer_of(&m.manager, kind, Some(before), after)?;
        // A write that changed the status alone went through `status` (the main resource
        // ignores a status), whatever the entry says: before v1.22 one manager's entry (the
        // runner's `unknown`, labelling and writing the kubelet's status) names none.
        let status = (attribute::part(kind, before, after) == attribute::Part::Status)
            .then(|| "status".to_string());
        let subresource = match &writer {
            Writer::Client(_) => Some(m.subresource.clone())
                .filter(|s| !s.is_empty())
                .or(status),
            _ => status,
        };
        Ok(Write {
            writer,
            manager: m.manager,
            verb: "patch",
            subresource,
            request: None,
            own: m.time,
            or_system: false,
        })
    }

    /// The write that created `object`, by its one manager.
    fn creation(&self, kind: Kind, object: &Value) -> Result<Write, String> {
        let entries = attribute::managed(object);
        let mut managers: Vec<&str> = entries.iter().map(|e| e.manager.as_str()).collect();
        managers.dedup();
        let manager = match managers.as_slice() {
            [one] => one.to_string(),
            [] => return Err("created without managedFields: record with `kubectl get --watch --output-watch-events -o json`, which keeps them".into()),
            more => {
                return Err(format!(
                    "created with the managedFields of {} at once: the watch cannot tell which created it",
                    more.join(", ")
                ))
            }
        };
        Ok(Write {
            writer: self.writer_of(&manager, kind, None, object)?,
            manager,
            verb: "create",
            subresource: None,
            request: None,
            own: time_of(object, "creationTimestamp"),
            or_system: false,
        })
    }

    /// The writer behind a field manager (see [`attribute`], rule 2).
    fn writer_of(
        &self,
        manager: &str,
        kind: Kind,
        before: Option<&Value>,
        after: &Value,
    ) -> Result<Writer, String> {
        let named = |c: &String| manager == c.as_str() || manager.starts_with(c.as_str());
        if self.attribution.controllers.iter().any(named) {
            return Ok(Writer::ReplicaSetController);
        }
        if manager == CONTROLLER_MANAGER {
            return attribute::built_in(kind, before, after, &self.owners);
        }
        if manager.is_empty() {
            return Err("a managedFields entry without a manager".into());
        }
        Ok(attribute::client(manager))
    }

    /// Whether the objects are settled (see the module doc).
    fn settled(&self) -> bool {
        let controlled_by = |uid: String| {
            self.pods
                .values()
                .filter(move |p| attribute::controller_ref(p).is_some_and(|(_, _, u)| u == uid))
        };
        for rs in self.replicasets.values() {
            let uid = rs["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let observed = rs["status"]["observedGeneration"].as_i64().unwrap_or(0);
            if observed < rs["metadata"]["generation"].as_i64().unwrap_or(0) {
                return false;
            }
            let active = controlled_by(uid.clone())
                .filter(|p| attribute::active(p))
                .count() as i64;
            if rs["status"]["replicas"].as_i64().unwrap_or(0) != active {
                return false;
            }
            if attribute::deleting(rs) {
                let finalizers = attribute::finalizers(rs);
                let blocked = finalizers.iter().any(|f| f == "orphan")
                    || (finalizers.iter().any(|f| f == "foregroundDeletion")
                        && controlled_by(uid.clone()).any(|p| !attribute::deleting(p)));
                if blocked {
                    return false;
                }
                continue;
            }
            if rs["spec"]["replicas"].as_i64().unwrap_or(1) != active {
                return false;
            }
        }
        !self.pods.values().any(|p| {
            !attribute::deleting(p)
                && attribute::controller_ref(p).is_some_and(|(k, _, uid)| {
                    k == "ReplicaSet" && !self.owners.live.contains_key(&uid)
                })
        })
    }
}

fn kubelet() -> Writer {
    Writer::Client("the kubelet (the final delete of a pod being deleted)".into())
}

/// The delete options a deletion shows: a pod's grace period, a ReplicaSet's propagation.
fn delete_options(kind: Kind, before: &Value, after: &Value) -> Value {
    match kind {
        Kind::Pod => json!({"gracePeriodSeconds": grace(after).unwrap_or(0)}),
        Kind::ReplicaSet => {
            let added: Vec<String> = attribute::finalizers(after)
                .into_iter()
                .filter(|f| !attribute::finalizers(before).contains(f))
                .collect();
            let policy = if added.iter().any(|f| f == "foregroundDeletion") {
                "Foreground"
            } else if added.iter().any(|f| f == "orphan") {
                "Orphan"
            } else {
                "Background"
            };
            json!({"propagationPolicy": policy})
        }
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Pod => "pod",
        Kind::ReplicaSet => "replicaset",
    }
}

fn event_name(t: EventType) -> &'static str {
    match t {
        EventType::Added => "ADDED",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED",
    }
}

/// The items as entries: times that increase, and a settle point ([`Entry::Quiet`]) at the
/// first settled point between two timed writes at least `quiet` apart.
fn settle_points(items: Vec<Item>, namespace: &str, quiet: SignedDuration) -> Vec<Entry> {
    let own: Vec<Option<Timestamp>> = items
        .iter()
        .map(|i| match i {
            Item::Write { own, .. } => *own,
            _ => None,
        })
        .collect();
    // The first time at or after each item.
    let mut next: Vec<Option<(usize, Timestamp)>> = vec![None; items.len() + 1];
    for i in (0..items.len()).rev() {
        next[i] = own[i].map(|t| (i, t)).or(next[i + 1]);
    }
    let tick = SignedDuration::from_micros(1);
    let mut out = Vec::new();
    // The latest time so far (and the item that showed it), the gap last cut, the last time
    // given, whether the objects were settled after the last write.
    let mut latest: Option<(usize, Timestamp)> = None;
    let mut cut: Option<(usize, usize)> = None;
    let mut last_at: Option<Timestamp> = None;
    let mut settled = false;
    let mut nothing_held = true;
    for (i, item) in items.into_iter().enumerate() {
        // A quiet gap's settle point goes before the first write or fault after it, unless
        // watch events are held then (see `super::segments`): that gap is no settle point.
        if matches!(item, Item::Write { .. } | Item::Fault { .. }) {
            if let (true, Some((li, lt)), Some((ni, nt))) = (settled, latest, next[i]) {
                if nt.duration_since(lt) >= quiet && cut != Some((li, ni)) {
                    if nothing_held {
                        out.push(Entry::Quiet {
                            namespace: namespace.to_string(),
                        });
                    }
                    cut = Some((li, ni));
                }
            }
        }
        match item {
            Item::Write {
                mut request,
                own,
                settled: after,
            } => {
                let base = own
                    .or(latest.map(|(_, t)| t))
                    .or(next[i].map(|(_, t)| t))
                    .unwrap_or(Timestamp::UNIX_EPOCH);
                let at = match last_at.and_then(|l| l.checked_add(tick).ok()) {
                    Some(min) if min > base => min,
                    _ => base,
                };
                request.at = at;
                request.received = at;
                last_at = Some(at);
                if let Some(t) = own {
                    if latest.is_none_or(|(_, l)| t >= l) {
                        latest = Some((i, t));
                    }
                }
                settled = after;
                out.push(Entry::Write(request));
            }
            Item::Mark(at) => out.push(Entry::Mark {
                namespace: namespace.to_string(),
                at,
            }),
            Item::Fault {
                step,
                nothing_held: after,
            } => {
                nothing_held = after;
                out.push(Entry::Fault {
                    namespace: namespace.to_string(),
                    at: last_at.unwrap_or(Timestamp::UNIX_EPOCH),
                    step,
                    nothing_held: after,
                })
            }
            Item::End(at) => {
                // After every write kept: the teardown is cut by the stream's order already.
                let at = match (at, last_at.and_then(|l| l.checked_add(tick).ok())) {
                    (Some(a), Some(min)) => a.max(min),
                    (a, min) => a.or(min).unwrap_or(Timestamp::UNIX_EPOCH),
                };
                out.push(Entry::NamespaceDeleted {
                    namespace: namespace.to_string(),
                    at,
                });
            }
        }
    }
    out
}
