//! The monitor's view of the cluster, and the judgment of each change as it is applied.
//!
//! The view is the model's abstraction of every live pod and ReplicaSet (the oracle's
//! [`Snapshot`], per namespace), a few lines of evidence per object, the ReplicaSets seen
//! being deleted with propagation Orphan while a pod still references them, and the
//! deletions of the last [`ATTRIBUTION_WINDOW`] waiting for their deleter to be named. All of
//! it is dropped with the objects, so memory follows the live objects, not the history.
//!
//! Each change is judged on the view as it was just before it, by the oracle's rules
//! ([`rsmc_oracle::judge::broken`]), for the writers [`super::attribution`] can name.

use super::attribution::{self, DeleteClaim};
use super::report::{rfc3339, Alarm, Gap, Report, Status};
use super::sequence::{self, Sequencer, Stream};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube::runtime::watcher;
use rsmc_oracle::judge::broken;
use rsmc_oracle::observed::{
    abstract_pod, abstract_replicaset, is_ready, Object, Snapshot, UidSource,
};
use rsmc_spec::api::View;
use rsmc_spec::liveness::converged::Condition;
use rsmc_spec::model::properties::{
    NO_OVER_CREATION, ORPHAN_KEEPS_DEPENDENTS, SINGLE_CONTROLLER, STATUS_CONSISTENT,
};
use rsmc_spec::object::{Finalizer, Pod, ReplicaSet, Uid};
use rsmc_spec::profile::Semantics;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// How often [`Monitor::tick`] is called.
pub const TICK: Duration = Duration::from_millis(100);

/// Evidence lines kept per object: its last few events.
pub const EVIDENCE: usize = 4;

/// How long a deletion waits for the controller's `SuccessfulDelete` event (and an event for
/// its deletion): the recorder sends it right after the delete returns.
pub const ATTRIBUTION_WINDOW: Duration = Duration::from_secs(30);

/// How long a ReplicaSet's larger `spec.replicas` still bounds its creations after a
/// scale-down: a sync that read the larger value may still be creating the pods it decided
/// (a slow-start batch cannot be called back). The spec's bound is the replicas the sync
/// acted on, which a watch cannot see; this window stands in for the sync's duration.
pub const REPLICAS_WINDOW: Duration = Duration::from_secs(60);

/// What the judgment needs to know.
#[derive(Clone, Debug)]
pub struct Settings {
    /// How long a namespace must see no change before its statuses are compared with its pods.
    pub quiet_window: Duration,
    /// The field managers whose writes are a controller's ([`attribution`]).
    pub controllers: Vec<String>,
    /// The ranking and the rest of the release's behaviour.
    pub sem: Semantics,
}

/// One change a watch delivered.
#[derive(Clone, Debug)]
pub enum Change {
    Pod {
        deleted: bool,
        pod: Box<core::Pod>,
    },
    ReplicaSet {
        deleted: bool,
        rs: Box<apps::ReplicaSet>,
    },
}

/// The three watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Watch {
    Pods = 0,
    ReplicaSets = 1,
    Events = 2,
}

impl Watch {
    pub fn name(self) -> &'static str {
        match self {
            Watch::Pods => "pods",
            Watch::ReplicaSets => "replicasets",
            Watch::Events => "events",
        }
    }
}

/// Model UIDs for real ones, forgetting those no live object uses (see [`Monitor::tick`]).
#[derive(Default)]
struct LiveUids {
    map: HashMap<String, Uid>,
    next: Uid,
}

impl UidSource for LiveUids {
    fn token(&mut self, uid: &str) -> Uid {
        if let Some(t) = self.map.get(uid) {
            return *t;
        }
        // 0 is the model's "no UID"; wrapping after 4 billion UIDs reuses tokens long gone.
        self.next = self.next.wrapping_add(1).max(1);
        self.map.insert(uid.to_string(), self.next);
        self.next
    }
}

/// A deletion waiting to learn who sent it.
struct Deletion {
    pod: String,
    at: Instant,
    /// The pod's controller just before the delete.
    controller: Option<Uid>,
    /// What the delete breaks if that controller sent it (the ranking).
    if_controller: Option<&'static str>,
    /// What the delete breaks if another ReplicaSet's controller sent it.
    otherwise: String,
    evidence: Vec<String>,
    written_at: Option<String>,
}

/// A controller's claim waiting for the deletion it names.
struct Claim {
    claim: DeleteClaim,
    deleter: Uid,
    at: Instant,
}

/// One namespace.
#[derive(Default)]
struct Space {
    cluster: Snapshot,
    /// ReplicaSets seen deleting with propagation Orphan, kept while a pod references them.
    orphaning: BTreeSet<Uid>,
    /// A ReplicaSet's largest recent `spec.replicas` after a scale-down, and until when.
    recent_replicas: HashMap<Uid, (i32, Instant)>,
    evidence: HashMap<String, VecDeque<String>>,
    deletions: VecDeque<Deletion>,
    claims: VecDeque<Claim>,
    last_change: Option<Instant>,
    status_judged: bool,
}

impl Space {
    fn note(&mut self, key: &str, line: String) {
        let lines = self.evidence.entry(key.to_string()).or_default();
        if lines.len() == EVIDENCE {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    fn evidence_of(&self, key: &str) -> Vec<String> {
        self.evidence
            .get(key)
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn is_empty(&self) -> bool {
        self.cluster.pods.is_empty()
            && self.cluster.replicasets.is_empty()
            && self.deletions.is_empty()
            && self.claims.is_empty()
    }

    /// The largest `spec.replicas` a sync of `rs` may still be acting on.
    fn replicas_bound(&self, rs: &ReplicaSet, now: Instant) -> i32 {
        match self.recent_replicas.get(&rs.meta.uid) {
            Some((n, until)) if *until > now => rs.spec.replicas.max(*n),
            _ => rs.spec.replicas,
        }
    }
}

/// The monitor's whole state.
pub struct Monitor {
    settings: Settings,
    spaces: HashMap<String, Space>,
    uids: LiveUids,
    held: Sequencer<Change>,
    /// Objects of a re-list under way, per watch.
    relisting: [Option<Vec<Change>>; 2],
    listed: [bool; 3],
    /// When each watch broke, and why, until it is back.
    broken: [Option<(SystemTime, Instant, String)>; 3],
    events: u64,
    alarms: u64,
    gaps: u64,
    unreadable: u64,
    resource_version: u64,
    rate: (Instant, u64),
}

impl Monitor {
    pub fn new(settings: Settings, now: Instant) -> Monitor {
        Monitor {
            settings,
            spaces: HashMap::new(),
            uids: LiveUids::default(),
            held: Sequencer::default(),
            relisting: [None, None],
            listed: [false; 3],
            broken: [None, None, None],
            events: 0,
            alarms: 0,
            gaps: 0,
            unreadable: 0,
            resource_version: 0,
            rate: (now, 0),
        }
    }

    /// Alarms raised so far.
    pub fn alarms(&self) -> u64 {
        self.alarms
    }

    /// Objects skipped because the model cannot read them (an unknown phase, say).
    pub fn unreadable(&self) -> u64 {
        self.unreadable
    }

    /// A watch failed (it retries by itself).
    pub fn watch_failed(&mut self, watch: Watch, error: String, now: Instant) {
        let slot = &mut self.broken[watch as usize];
        if slot.is_none() {
            *slot = Some((SystemTime::now(), now, error));
        }
    }

    /// One event of the pods' watch.
    pub fn pod_event(&mut self, event: watcher::Event<core::Pod>, now: Instant) -> Vec<Report> {
        let event = lift(event, |pod, deleted| Change::Pod {
            deleted,
            pod: Box::new(pod),
        });
        self.watch_event(Stream::Pods, event, now)
    }

    /// One event of the ReplicaSets' watch.
    pub fn replicaset_event(
        &mut self,
        event: watcher::Event<apps::ReplicaSet>,
        now: Instant,
    ) -> Vec<Report> {
        let event = lift(event, |rs, deleted| Change::ReplicaSet {
            deleted,
            rs: Box::new(rs),
        });
        self.watch_event(Stream::ReplicaSets, event, now)
    }

    /// One event of the watch of the ReplicaSet controllers' `SuccessfulDelete` events. Only
    /// changes after the first list name deleters: listed events are history.
    pub fn event_event(&mut self, event: watcher::Event<core::Event>, now: Instant) -> Vec<Report> {
        let mut out = Vec::new();
        match event {
            watcher::Event::Init | watcher::Event::InitApply(_) => {}
            watcher::Event::InitDone => {
                out.extend(self.back(Watch::Events, true, 0));
                self.listed[Watch::Events as usize] = true;
            }
            watcher::Event::Delete(_) => {}
            watcher::Event::Apply(e) => {
                out.extend(self.back(Watch::Events, false, 0));
                if let Some(claim) = attribution::delete_claim(&e) {
                    out.extend(self.claimed(claim, now));
                }
            }
        }
        out
    }

    fn watch_event(
        &mut self,
        stream: Stream,
        event: watcher::Event<Change>,
        now: Instant,
    ) -> Vec<Report> {
        let watch = match stream {
            Stream::Pods => Watch::Pods,
            Stream::ReplicaSets => Watch::ReplicaSets,
        };
        let mut out = Vec::new();
        match event {
            watcher::Event::Init => {
                // What is held happened before the list: judge it first.
                for change in self.held.drain() {
                    out.extend(self.judge(change, now));
                }
                self.relisting[stream as usize] = Some(Vec::new());
            }
            watcher::Event::InitApply(change) => {
                self.relisting[stream as usize]
                    .get_or_insert_with(Vec::new)
                    .push(change);
            }
            watcher::Event::InitDone => {
                let listed = self.relisting[stream as usize].take().unwrap_or_default();
                let changed = self.replace(stream, listed, now);
                out.extend(self.back(watch, true, changed));
                self.listed[watch as usize] = true;
            }
            watcher::Event::Apply(change) | watcher::Event::Delete(change) => {
                out.extend(self.back(watch, false, 0));
                let rv = resource_version(&change);
                self.held.push(stream, rv, now, change);
            }
        }
        out.extend(self.release(now));
        out
    }

    /// The report of a watch that is back after breaking, if it broke.
    fn back(&mut self, watch: Watch, relisted: bool, changed: usize) -> Option<Report> {
        let (at, since, error) = self.broken[watch as usize].take()?;
        if !self.listed[watch as usize] {
            // It broke before its first list: there was nothing to miss.
            return None;
        }
        self.gaps += 1;
        Some(Report::Gap(Gap {
            watch: watch.name(),
            broken_at: rfc3339(at),
            seconds: since.elapsed().as_secs_f64(),
            relisted,
            error,
            changed_in_gap: changed,
        }))
    }

    /// Put a (re-)list of one kind in place of the view's objects of that kind, judging
    /// nothing: whatever happened while the watch was away was not seen. The number of
    /// objects that differ from the view.
    fn replace(&mut self, stream: Stream, listed: Vec<Change>, now: Instant) -> usize {
        let mut fresh: HashMap<String, Vec<Object>> = HashMap::new();
        let mut lines: Vec<(String, String, String)> = Vec::new();
        for change in &listed {
            let Some((namespace, object)) = self.abstracted(change) else {
                continue;
            };
            lines.push((namespace.clone(), key_of(&object), line("LISTED", change)));
            fresh.entry(namespace).or_default().push(object);
        }
        let mut changed = 0;
        for (name, space) in self.spaces.iter_mut() {
            let listed = fresh.remove(name).unwrap_or_default();
            changed += replace_kind(space, stream, listed, now);
        }
        for (name, listed) in fresh {
            let space = self.spaces.entry(name).or_default();
            changed += replace_kind(space, stream, listed, now);
        }
        for (namespace, key, line) in lines {
            if let Some(space) = self.spaces.get_mut(&namespace) {
                space.note(&key, line);
            }
        }
        changed
    }

    /// Judge the changes whose turn has come.
    fn release(&mut self, now: Instant) -> Vec<Report> {
        let mut out = Vec::new();
        for change in self.held.ready(now) {
            out.extend(self.judge(change, now));
        }
        out
    }

    /// The namespace and the model's object of a change; `None` for an object of another
    /// controller (a pod a Job or a DaemonSet controls) or one the model cannot read.
    fn abstracted(&mut self, change: &Change) -> Option<(String, Object)> {
        let (namespace, object) = match change {
            Change::Pod { pod, .. } => {
                let namespace = pod.metadata.namespace.clone().unwrap_or_default();
                let object = match own_refs_only(&pod.metadata) {
                    Refs::Foreign => return None,
                    Refs::Kept => abstract_pod(pod, &mut self.uids),
                    Refs::Stripped(m) => {
                        let mut copy = (**pod).clone();
                        copy.metadata = *m;
                        abstract_pod(&copy, &mut self.uids)
                    }
                };
                (namespace, object.map(|p| Object::Pod(Arc::new(p))))
            }
            Change::ReplicaSet { rs, .. } => {
                let namespace = rs.metadata.namespace.clone().unwrap_or_default();
                // A ReplicaSet's own owner (a Deployment) plays no part in the rules.
                let object = if rs.metadata.owner_references.is_some() {
                    let mut copy = (**rs).clone();
                    copy.metadata.owner_references = None;
                    abstract_replicaset(&copy, &mut self.uids)
                } else {
                    abstract_replicaset(rs, &mut self.uids)
                };
                (namespace, object.map(|r| Object::ReplicaSet(Arc::new(r))))
            }
        };
        match object {
            Ok(object) => Some((namespace, object)),
            Err(_) => {
                self.unreadable += 1;
                None
            }
        }
    }

    /// Apply one change to the view, and judge it.
    fn judge(&mut self, change: Change, now: Instant) -> Vec<Report> {
        self.events += 1;
        self.resource_version = self.resource_version.max(resource_version(&change));
        let deleted = match &change {
            Change::Pod { deleted, .. } | Change::ReplicaSet { deleted, .. } => *deleted,
        };
        let text = line(if deleted { "DELETED" } else { "MODIFIED" }, &change);
        let Some((namespace, object)) = self.abstracted(&change) else {
            // A pod another controller took over leaves the view.
            if let Change::Pod { pod, .. } = &change {
                let namespace = pod.metadata.namespace.clone().unwrap_or_default();
                let name = pod.metadata.name.clone().unwrap_or_default();
                if let Some(space) = self.spaces.get_mut(&namespace) {
                    space.cluster.pods.remove(&name);
                    space.evidence.remove(&format!("pod/{name}"));
                }
            }
            return Vec::new();
        };
        let settings = self.settings.clone();
        let space = self.spaces.entry(namespace.clone()).or_default();
        space.last_change = Some(now);
        space.status_judged = false;
        let mut out = Vec::new();
        match (&change, object) {
            (Change::Pod { pod, .. }, Object::Pod(model)) => {
                let key = format!("pod/{}", model.meta.name);
                let old = space.cluster.pods.get(&model.meta.name).cloned();
                let known = old.as_ref().is_some_and(|o| o.meta.uid == model.meta.uid);
                let kind = watch_event_type(deleted, known);
                space.note(&key, retype(&text, kind));
                let found = judge_pod(space, &settings, pod, old.as_deref(), &model, deleted, now);
                for (property, detail, written_at) in found {
                    out.push(alarm(
                        property,
                        &namespace,
                        &key,
                        detail,
                        space.evidence_of(&key),
                        written_at,
                    ));
                }
                if deleted {
                    space.cluster.pods.remove(&model.meta.name);
                    space.evidence.remove(&key);
                } else {
                    space.cluster.insert(Object::Pod(model));
                }
            }
            (Change::ReplicaSet { .. }, Object::ReplicaSet(model)) => {
                let key = format!("rs/{}", model.meta.name);
                let old = space.cluster.replicasets.get(&model.meta.name).cloned();
                let known = old.as_ref().is_some_and(|o| o.meta.uid == model.meta.uid);
                let kind = watch_event_type(deleted, known);
                space.note(&key, retype(&text, kind));
                if let Some(old) = old.filter(|o| o.meta.uid == model.meta.uid) {
                    if model.spec.replicas < old.spec.replicas {
                        let bound = space.replicas_bound(&old, now);
                        space
                            .recent_replicas
                            .insert(model.meta.uid, (bound, now + REPLICAS_WINDOW));
                    }
                }
                if model.meta.has_finalizer(Finalizer::Orphan) {
                    space.orphaning.insert(model.meta.uid);
                }
                if deleted {
                    space.cluster.replicasets.remove(&model.meta.name);
                    space.evidence.remove(&key);
                    space.recent_replicas.remove(&model.meta.uid);
                } else {
                    space.cluster.insert(Object::ReplicaSet(model));
                }
            }
            _ => {}
        }
        self.alarms += out.len() as u64;
        out.extend(self.resolve(&namespace, now));
        out
    }

    /// A controller says it deleted a pod: judge the deletion it names, now or when it comes.
    fn claimed(&mut self, claim: DeleteClaim, now: Instant) -> Vec<Report> {
        let deleter = self.uids.token(&claim.replicaset_uid);
        let namespace = claim.namespace.clone();
        let space = self.spaces.entry(namespace.clone()).or_default();
        space.claims.push_back(Claim {
            claim,
            deleter,
            at: now,
        });
        self.resolve(&namespace, now)
    }

    /// Match the namespace's claims with its deletions; alarms for the deletions that break
    /// a property by their deleter's account.
    fn resolve(&mut self, namespace: &str, now: Instant) -> Vec<Report> {
        let Some(space) = self.spaces.get_mut(namespace) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut unmatched = VecDeque::new();
        while let Some(claim) = space.claims.pop_front() {
            // The deletion a claim names may still be held for ordering (the claim is sent
            // after the delete returns, but its watch is not held): wait until it is out.
            if now.duration_since(claim.at) < sequence::HOLD + TICK {
                unmatched.push_back(claim);
                continue;
            }
            let found = space
                .deletions
                .iter()
                .rposition(|d| d.pod == claim.claim.pod);
            let Some(i) = found else {
                if now.duration_since(claim.at) < ATTRIBUTION_WINDOW {
                    unmatched.push_back(claim);
                }
                continue;
            };
            let Some(d) = space.deletions.remove(i) else {
                continue;
            };
            let by = format!("rs/{}", claim.claim.replicaset);
            let (property, detail) = if d.controller == Some(claim.deleter) {
                match d.if_controller {
                    Some(p) => (
                        p,
                        format!("{by}'s controller deleted it while pods the ranking puts first were kept"),
                    ),
                    None => continue,
                }
            } else {
                (
                    rsmc_spec::model::properties::DELETE_ONLY_CONTROLLED,
                    format!("{by}'s controller deleted it, but {}", d.otherwise),
                )
            };
            let mut evidence = d.evidence;
            evidence.push(format!(
                "EVENT rs/{} SuccessfulDelete \"Deleted pod: {}\"",
                claim.claim.replicaset, claim.claim.pod
            ));
            out.push(alarm(
                property,
                namespace,
                &format!("pod/{}", d.pod),
                detail,
                evidence,
                d.written_at,
            ));
        }
        space.claims = unmatched;
        self.alarms += out.len() as u64;
        out
    }

    /// Release held changes, compare the statuses of namespaces that have been quiet for the
    /// quiet window, and forget what is too old to matter.
    pub fn tick(&mut self, now: Instant) -> Vec<Report> {
        let mut out = self.release(now);
        let quiet = self.settings.quiet_window;
        let all_listed =
            self.listed[Watch::Pods as usize] && self.listed[Watch::ReplicaSets as usize];
        let claimed: Vec<String> = self
            .spaces
            .iter()
            .filter(|(_, s)| !s.claims.is_empty())
            .map(|(n, _)| n.clone())
            .collect();
        for namespace in claimed {
            out.extend(self.resolve(&namespace, now));
        }
        for (namespace, space) in self.spaces.iter_mut() {
            space
                .deletions
                .retain(|d| now.duration_since(d.at) < ATTRIBUTION_WINDOW);
            space
                .claims
                .retain(|c| now.duration_since(c.at) < ATTRIBUTION_WINDOW);
            space.recent_replicas.retain(|_, (_, until)| *until > now);
            let referenced: HashSet<Uid> = space
                .cluster
                .pods
                .values()
                .flat_map(|p| p.meta.owner_references.iter().map(|r| r.uid))
                .collect();
            space.orphaning.retain(|u| referenced.contains(u));
            let quiet_now = space
                .last_change
                .is_some_and(|t| now.duration_since(t) >= quiet);
            if all_listed
                && quiet_now
                && !space.status_judged
                && self.broken[..2].iter().all(Option::is_none)
            {
                space.status_judged = true;
                for (rs, detail) in statuses_off(&space.cluster) {
                    let key = format!("rs/{rs}");
                    out.push(alarm(
                        STATUS_CONSISTENT,
                        namespace,
                        &key,
                        detail,
                        space.evidence_of(&key),
                        None,
                    ));
                }
            }
        }
        self.alarms += out
            .iter()
            .filter(|r| matches!(r, Report::Alarm(a) if a.property == STATUS_CONSISTENT))
            .count() as u64;
        self.spaces.retain(|_, s| !s.is_empty());
        self.forget_uids();
        out
    }

    /// Drop the UIDs no live object, pending deletion or claim refers to, once they are many.
    fn forget_uids(&mut self) {
        let objects: usize = self
            .spaces
            .values()
            .map(|s| s.cluster.pods.len() + s.cluster.replicasets.len())
            .sum();
        if self.uids.map.len() <= 2 * objects + 1024 {
            return;
        }
        let mut used: HashSet<Uid> = HashSet::new();
        for s in self.spaces.values() {
            for p in s.cluster.pods.values() {
                used.insert(p.meta.uid);
                used.extend(p.meta.owner_references.iter().map(|r| r.uid));
            }
            used.extend(s.cluster.replicasets.values().map(|r| r.meta.uid));
            used.extend(s.orphaning.iter().copied());
            used.extend(s.recent_replicas.keys().copied());
            used.extend(s.deletions.iter().filter_map(|d| d.controller));
            used.extend(s.claims.iter().map(|c| c.deleter));
        }
        self.uids.map.retain(|_, t| used.contains(t));
    }

    /// The monitor's health now.
    pub fn status(&mut self, now: Instant) -> Status {
        let (since, count) = self.rate;
        let seconds = now.duration_since(since).as_secs_f64();
        let rate = if seconds > 0.0 {
            (self.events - count) as f64 / seconds
        } else {
            0.0
        };
        self.rate = (now, self.events);
        Status {
            time_ms: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0),
            pods: self.spaces.values().map(|s| s.cluster.pods.len()).sum(),
            replicasets: self
                .spaces
                .values()
                .map(|s| s.cluster.replicasets.len())
                .sum(),
            namespaces: self.spaces.len(),
            events: self.events,
            events_per_second: rate,
            resource_version: self.resource_version,
            held: self.held.len(),
            alarms: self.alarms,
            gaps: self.gaps,
            rss_bytes: memory_stats_rss(),
            // Judgements are the run loop's (`super::run`), which says how many.
            judging: 0,
        }
    }
}

/// The resident memory of this process.
fn memory_stats_rss() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

/// A watcher event of a kube type as a change, deletions marked.
fn lift<K>(event: watcher::Event<K>, f: impl Fn(K, bool) -> Change) -> watcher::Event<Change> {
    match event {
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(k) => watcher::Event::InitApply(f(k, false)),
        watcher::Event::InitDone => watcher::Event::InitDone,
        watcher::Event::Apply(k) => watcher::Event::Apply(f(k, false)),
        watcher::Event::Delete(k) => watcher::Event::Delete(f(k, true)),
    }
}

/// What a pod's owner references are to the model.
enum Refs {
    /// All to ReplicaSets.
    Kept,
    /// Some to other kinds, none of them the controller: the ReplicaSets' alone.
    Stripped(Box<meta::ObjectMeta>),
    /// Controlled by something other than a ReplicaSet: not the ReplicaSet controller's.
    Foreign,
}

fn own_refs_only(m: &meta::ObjectMeta) -> Refs {
    let refs = m.owner_references.as_deref().unwrap_or_default();
    let ours = |r: &&meta::OwnerReference| r.kind == "ReplicaSet" && r.api_version == "apps/v1";
    if refs.iter().all(|r| ours(&r)) {
        return Refs::Kept;
    }
    if refs.iter().any(|r| !ours(&r) && r.controller == Some(true)) {
        return Refs::Foreign;
    }
    let mut out = m.clone();
    out.owner_references = Some(refs.iter().filter(ours).cloned().collect());
    Refs::Stripped(Box::new(out))
}

/// Replace one kind of object in `space` by `listed`; the number that differ.
fn replace_kind(space: &mut Space, stream: Stream, listed: Vec<Object>, now: Instant) -> usize {
    let changed = match stream {
        Stream::Pods => {
            let fresh = listed.into_iter().filter_map(|o| match o {
                Object::Pod(p) => Some((p.meta.name.clone(), p)),
                Object::ReplicaSet(_) => None,
            });
            swap_in(
                &mut space.cluster.pods,
                fresh.collect(),
                &mut space.evidence,
                "pod",
            )
        }
        Stream::ReplicaSets => {
            let fresh: View<ReplicaSet> = listed
                .into_iter()
                .filter_map(|o| match o {
                    Object::ReplicaSet(r) => Some((r.meta.name.clone(), r)),
                    Object::Pod(_) => None,
                })
                .collect();
            let orphaning = fresh
                .values()
                .filter(|r| r.meta.has_finalizer(Finalizer::Orphan));
            space.orphaning.extend(orphaning.map(|r| r.meta.uid));
            swap_in(
                &mut space.cluster.replicasets,
                fresh,
                &mut space.evidence,
                "rs",
            )
        }
    };
    if changed > 0 {
        space.last_change = Some(now);
        space.status_judged = false;
    }
    changed
}

/// Put `fresh` in place of `view`, forgetting the evidence of the objects gone (keyed
/// `KIND/NAME`); the number of objects that differ.
fn swap_in<T: PartialEq>(
    view: &mut View<T>,
    fresh: View<T>,
    evidence: &mut HashMap<String, VecDeque<String>>,
    kind: &str,
) -> usize {
    let changed = differ(view, &fresh);
    for gone in view.keys().filter(|k| !fresh.contains_key(*k)) {
        evidence.remove(&format!("{kind}/{gone}"));
    }
    *view = fresh;
    changed
}

/// How many objects of `a` and `b` differ (added, removed or changed).
fn differ<T: PartialEq>(a: &View<T>, b: &View<T>) -> usize {
    let changed = b.iter().filter(|(k, v)| a.get(*k) != Some(*v)).count();
    changed + a.keys().filter(|k| !b.contains_key(*k)).count()
}

/// The evidence key of a model object.
fn key_of(o: &Object) -> String {
    match o {
        Object::Pod(p) => format!("pod/{}", p.meta.name),
        Object::ReplicaSet(r) => format!("rs/{}", r.meta.name),
    }
}

/// What one pod change breaks, with what it did and when it was written.
fn judge_pod(
    space: &mut Space,
    settings: &Settings,
    raw: &core::Pod,
    old: Option<&Pod>,
    new: &Pod,
    deleted: bool,
    now: Instant,
) -> Vec<(&'static str, String, Option<String>)> {
    let mut out = Vec::new();
    let meta = &raw.metadata;
    let old = old.filter(|o| o.meta.uid == new.meta.uid);
    if !deleted && broken::two_controllers(new) && !old.is_some_and(broken::two_controllers) {
        out.push((
            SINGLE_CONTROLLER,
            "written with two controller references".to_string(),
            stamp(meta.creation_timestamp.as_ref()),
        ));
    }
    let cluster = &space.cluster;
    // Who wrote the controller reference the pod now has, if a controller did.
    let by_controller = |r: &rsmc_spec::object::OwnerReference| {
        let real = meta
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true) && o.name == r.name)?;
        let manager = attribution::writer_of_owner_ref(meta, &real.uid)?;
        settings.controllers.contains(&manager).then_some(manager)
    };
    match old {
        None if !deleted => {
            // A creation (or a pod of the same name with a new UID).
            if let Some(r) = new.meta.controller_ref() {
                if let (Some(manager), Some(rs)) = (by_controller(r), broken::owner(cluster, r.uid))
                {
                    let bound = space.replicas_bound(rs, now);
                    if broken::over_creates(cluster, new, rs.meta.uid, bound) {
                        let n = broken::controlled(cluster, rs.meta.uid).len() + 1;
                        out.push((
                            NO_OVER_CREATION,
                            format!(
                                "created by {manager} for rs/{}, which now controls {n} active pods; its spec.replicas is {} (at most {bound} in the last {} s)",
                                rs.meta.name,
                                rs.spec.replicas,
                                REPLICAS_WINDOW.as_secs()
                            ),
                            stamp(meta.creation_timestamp.as_ref()),
                        ));
                    }
                }
            }
        }
        Some(old) if !old.meta.is_deleting() && (deleted || new.meta.is_deleting()) => {
            out.extend(deletion(space, settings, old, meta, now));
        }
        Some(old) if !deleted => {
            let changed = old.meta.controller_ref().map(|r| r.uid)
                != new.meta.controller_ref().map(|r| r.uid);
            if let Some(r) = new.meta.controller_ref().filter(|_| changed) {
                if let Some(manager) = by_controller(r) {
                    if let Some(p) = broken::adopted(cluster, old, new) {
                        let time = meta
                            .managed_fields
                            .iter()
                            .flatten()
                            .find(|m| m.manager.as_deref() == Some(&manager))
                            .and_then(|m| m.time.as_ref());
                        out.push((
                            p,
                            format!("{manager} set its controller reference to rs/{}", r.name),
                            stamp(time),
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// A pod starts being deleted: the orphan rule now (whoever deletes), the rest once a
/// controller claims the deletion.
fn deletion(
    space: &mut Space,
    settings: &Settings,
    old: &Pod,
    meta: &meta::ObjectMeta,
    now: Instant,
) -> Option<(&'static str, String, Option<String>)> {
    // A graceful deletion is stamped with its deadline: the request was the grace before.
    let grace = meta.deletion_grace_period_seconds.unwrap_or(0);
    let written_at = meta.deletion_timestamp.as_ref().map(|t| {
        let asked =
            t.0.checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(grace));
        asked.unwrap_or(t.0).to_string()
    });
    // The monitor keeps no promises per pod: any dependent of an orphaning owner counts.
    if broken::orphans_dependent(old, |owner| space.orphaning.contains(&owner)) {
        return Some((
            ORPHAN_KEEPS_DEPENDENTS,
            "deleted while it references a ReplicaSet deleted with propagation Orphan".into(),
            written_at,
        ));
    }
    let cluster = &space.cluster;
    let controller = old.meta.controller_ref().map(|r| r.uid);
    let if_controller =
        controller.and_then(|uid| broken::deleted_by(cluster, old, uid, &settings.sem));
    let otherwise = match old.meta.controller_ref() {
        Some(r) => format!("its controller was rs/{}", r.name),
        None => "it had no controller".to_string(),
    };
    let evidence = space.evidence_of(&format!("pod/{}", old.meta.name));
    space.deletions.push_back(Deletion {
        pod: old.meta.name.clone(),
        at: now,
        controller,
        if_controller,
        otherwise,
        evidence,
        written_at,
    });
    None
}

/// The live ReplicaSets of a quiet namespace whose status disagrees with their pods.
fn statuses_off(cluster: &Snapshot) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for rs in cluster
        .replicasets
        .values()
        .filter(|r| !r.meta.is_deleting())
    {
        let one: View<ReplicaSet> = [(rs.meta.name.clone(), rs.clone())].into_iter().collect();
        let s = &rs.status;
        let found = [Condition::StatusCountsPods, Condition::GenerationObserved]
            .into_iter()
            .find_map(|c| c.broken(&one, &cluster.pods, &[]))
            .or_else(|| {
                (s.ready_replicas > s.replicas || s.available_replicas > s.ready_replicas).then(
                    || {
                        format!(
                            "rs/{} status says replicas {}, ready {}, available {}",
                            rs.meta.name, s.replicas, s.ready_replicas, s.available_replicas
                        )
                    },
                )
            });
        if let Some(detail) = found {
            out.push((rs.meta.name.clone(), format!("once quiet, {detail}")));
        }
    }
    out
}

fn alarm(
    property: &'static str,
    namespace: &str,
    object: &str,
    detail: String,
    evidence: Vec<String>,
    written_at: Option<String>,
) -> Report {
    Report::Alarm(Alarm {
        property,
        namespace: namespace.to_string(),
        object: object.to_string(),
        detail,
        evidence,
        raised_at: rfc3339(SystemTime::now()),
        written_at,
    })
}

fn stamp(t: Option<&meta::Time>) -> Option<String> {
    t.map(|t| t.0.to_string())
}

/// A change as one line of `kubectl get --watch --output-watch-events`, shortened.
fn line(event: &str, change: &Change) -> String {
    match change {
        Change::Pod { pod, .. } => {
            let m = &pod.metadata;
            let status = pod.status.as_ref();
            let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
            let ready = is_ready(pod);
            let mut out = format!(
                "{event} pod/{} rv={} {phase}{}",
                m.name.as_deref().unwrap_or(""),
                m.resource_version.as_deref().unwrap_or(""),
                if ready { " ready" } else { "" }
            );
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
                out.push_str(&format!(" node={node}"));
            }
            push_common(&mut out, m);
            out
        }
        Change::ReplicaSet { rs, .. } => {
            let m = &rs.metadata;
            let spec = rs.spec.as_ref();
            let status = rs.status.as_ref();
            let mut out = format!(
                "{event} rs/{} rv={} replicas={} status={}/{}ready gen={}/{}",
                m.name.as_deref().unwrap_or(""),
                m.resource_version.as_deref().unwrap_or(""),
                spec.and_then(|s| s.replicas).unwrap_or(1),
                status.map(|s| s.replicas).unwrap_or(0),
                status.and_then(|s| s.ready_replicas).unwrap_or(0),
                m.generation.unwrap_or(0),
                status.and_then(|s| s.observed_generation).unwrap_or(0),
            );
            push_common(&mut out, m);
            out
        }
    }
}

/// The metadata every line shows: controller, labels, deletion, finalizers, last writer.
fn push_common(out: &mut String, m: &meta::ObjectMeta) {
    let controllers: Vec<String> = m
        .owner_references
        .iter()
        .flatten()
        .filter(|r| r.controller == Some(true))
        .map(|r| format!("{}/{}", r.kind.to_lowercase(), r.name))
        .collect();
    if !controllers.is_empty() {
        out.push_str(&format!(" controller={}", controllers.join(",")));
    }
    if let Some(labels) = m.labels.as_ref().filter(|l| !l.is_empty()) {
        let l: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        out.push_str(&format!(" labels={}", l.join(",")));
    }
    if m.deletion_timestamp.is_some() {
        out.push_str(" deleting");
    }
    if let Some(f) = m.finalizers.as_ref().filter(|f| !f.is_empty()) {
        out.push_str(&format!(" finalizers={}", f.join(",")));
    }
    let last = m.managed_fields.iter().flatten().max_by(|a, b| {
        a.time
            .as_ref()
            .map(|t| t.0)
            .cmp(&b.time.as_ref().map(|t| t.0))
    });
    if let Some(manager) = last.and_then(|e| e.manager.as_deref()) {
        out.push_str(&format!(" by={manager}"));
    }
}

/// `line` with its event type replaced.
fn retype(line: &str, kind: &str) -> String {
    match line.split_once(' ') {
        Some((_, rest)) => format!("{kind} {rest}"),
        None => line.to_string(),
    }
}

/// The resourceVersion of a change (0 if the server's is not a number).
fn resource_version(change: &Change) -> u64 {
    let m = match change {
        Change::Pod { pod, .. } => &pod.metadata,
        Change::ReplicaSet { rs, .. } => &rs.metadata,
    };
    m.resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The type a watch event of an object has: `known` when the view holds it (same UID).
pub fn watch_event_type(deleted: bool, known: bool) -> &'static str {
    match (deleted, known) {
        (true, _) => "DELETED",
        (false, true) => "MODIFIED",
        (false, false) => "ADDED",
    }
}
