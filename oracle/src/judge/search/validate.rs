//! Trace validation: is the cluster's sequence of writes one the model can produce?
//!
//! Outcome judgement only looks at where a segment settles. A controller can settle in a
//! correct-looking state after doing something it must not: create a surplus pod and delete
//! it, adopt a pod for a ReplicaSet being deleted, delete a pod it no longer controlled.
//! Those leave watch events. Here the recorded events of a segment are replayed against the
//! model: the search runs over pairs (model state, number of recorded writes matched, the
//! renaming so far). A model step that writes nothing the oracle compares (a watch delivery,
//! the start of a sync, a live GET, picking victims, a rejected request) is internal and free;
//! a model step that writes must produce exactly the next recorded write, by the same kind of
//! actor: the scenario's own writes carry their step, everyone else's must be the system's.
//!
//! Writes that change nothing the oracle compares are hidden on both sides ([`invisible`]).
//! A garbage-collector work item's writes are one atomic model step (see `rsmc_spec::gc`), so
//! they must appear back to back in the recording; a cluster that interleaves another write
//! inside them is reported as diverging, with that reason visible in the allowed writes.

use crate::compare::binding::{invisible, model_event_object, same_write, Binding};
use crate::compare::fields::{differing, FieldDiff};
use crate::explore::{fingerprint, successors};
use crate::observed::{Event, EventType, Object, Snapshot};
use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::model::{Action, RsModel, State, UpToRevisions, Watcher};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// What the search needs to know about the scenario.
pub struct Segment<'a> {
    pub model: &'a RsModel,
    /// Script step index → scenario step index.
    pub origin: &'a [usize],
    /// The script index of the settle that ends the segment.
    pub settle: usize,
    /// The recorded events of the segment.
    pub events: &'a [Event],
    /// The cluster's objects at the previous settle point (empty for the first segment).
    pub before: &'a Snapshot,
    pub budget: &'a Budget,
}

/// Where the recorded writes and the model part ways.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// Index of the first recorded event no model run reproduces (into the segment's events).
    pub event: usize,
    /// That event, described.
    pub seen: String,
    /// What the model could write instead at that point (deduplicated, at most a dozen).
    pub allowed: Vec<String>,
    /// Whether the model could also settle there, having written nothing more.
    pub could_settle: bool,
    /// The scenario step (from 0) that a run there cannot go past: one expected to be
    /// refused that the model's API server does not refuse so.
    pub stuck_at: Option<usize>,
    /// Where the model could write the same object there: the fields in which the recorded
    /// write differs from the closest such write (fewest differing fields). Empty when no
    /// allowed write is to that object, or the two differ only in who made them.
    pub fields: Vec<FieldDiff>,
    /// That closest allowed write's object, as the model would write it.
    pub closest: Option<Object>,
}

/// The verdict on one segment's writes.
#[derive(Clone, Debug)]
pub enum Validation {
    /// The writes are a model run; these are the states (with renamings) it may end in.
    Valid(Vec<(State, Binding)>),
    Diverges(Divergence),
}

/// The recorded events that change something the oracle compares, with their indices.
fn visible_events<'a>(events: &'a [Event], before: &Snapshot) -> Vec<(usize, &'a Event)> {
    let mut current: BTreeMap<(bool, String), Object> = BTreeMap::new();
    for rs in before.replicasets.values() {
        current.insert((true, rs.meta.name.clone()), Object::ReplicaSet(rs.clone()));
    }
    for p in before.pods.values() {
        current.insert((false, p.meta.name.clone()), Object::Pod(p.clone()));
    }
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let key = (
            matches!(e.object, Object::ReplicaSet(_)),
            e.object.name().to_string(),
        );
        let hidden = e.event_type == EventType::Modified && invisible(current.get(&key), &e.object);
        match e.event_type {
            EventType::Deleted => {
                current.remove(&key);
            }
            _ => {
                current.insert(key, e.object.clone());
            }
        }
        if !hidden {
            out.push((i, e));
        }
    }
    out
}

/// The second write of a grace-0 pod delete, made by the model in the same step as the first
/// (`ApiServer::end_grace`) and not yet seen in the recording. On a cluster the two are
/// separate etcd writes, and other requests' writes can land between them; the search lets
/// the DELETED event match any later point of the segment, by the same actor. The states the
/// model explores meanwhile already lack the pod where the cluster's still shows it
/// deleting: to the v1.20 controller and garbage collector both are an inactive pod.
#[derive(Clone, Debug, Hash)]
struct Deferred {
    /// The scenario step the recording attributes the delete to (`None`: the system).
    step: Option<usize>,
    pod: std::sync::Arc<rsmc_spec::object::Pod>,
}

/// The pod of a step whose writes are exactly a grace-0 delete (marked, then removed).
fn deferrable_removal(
    writes: &[(EventType, Object)],
) -> Option<&std::sync::Arc<rsmc_spec::object::Pod>> {
    match writes {
        [(EventType::Modified, Object::Pod(marked)), (EventType::Deleted, Object::Pod(gone))]
            if marked.grace_over && marked.meta.name == gone.meta.name =>
        {
            Some(gone)
        }
        _ => None,
    }
}

/// The model's compared writes of one step from `s` to `n`.
pub(crate) fn model_writes(s: &State, n: &State) -> Vec<(EventType, Object)> {
    let mut previous: BTreeMap<(bool, String), Object> = BTreeMap::new();
    let mut out = Vec::new();
    for e in n.api.log.iter().filter(|e| e.rv > s.api.rv) {
        let (ty, obj) = model_event_object(e);
        let key = (matches!(obj, Object::ReplicaSet(_)), obj.name().to_string());
        let before = previous.get(&key).cloned().or_else(|| match &obj {
            Object::ReplicaSet(_) => s
                .api
                .replicasets
                .get(obj.name())
                .cloned()
                .map(Object::ReplicaSet),
            Object::Pod(_) => s.api.pods.get(obj.name()).cloned().map(Object::Pod),
        });
        let hidden = ty == EventType::Modified && invisible(before.as_ref(), &obj);
        previous.insert(key, obj.clone());
        if !hidden {
            out.push((ty, obj));
        }
    }
    out
}

/// A recorded event for people: type, object, who wrote it.
pub fn describe_event(e: &Event, scenario_step: impl Fn(usize) -> String) -> String {
    let who = match e.step {
        Some(k) => format!("written by step {}: {}", k + 1, scenario_step(k)),
        None => "written by the controller or the garbage collector".to_string(),
    };
    format!(
        "{} {} ({who})",
        event_word(e.event_type),
        summary(&e.object)
    )
}

/// An object in one line: what distinguishes it in a write.
pub fn summary(o: &Object) -> String {
    match o {
        Object::ReplicaSet(rs) => {
            let mut s = format!(
                "replicaset/{} replicas={} status.replicas={} ready={}",
                rs.meta.name, rs.spec.replicas, rs.status.replicas, rs.status.ready_replicas
            );
            if let Some(t) = rs.status.terminating_replicas {
                s.push_str(&format!(" terminating={t}"));
            }
            // What the oracle compares besides (`binding::rs_view`), where it stands out:
            // without it a write the model could make and the one seen may read the same.
            if rs.status.fully_labeled_replicas != rs.status.replicas {
                s.push_str(&format!(
                    " fullyLabeled={}",
                    rs.status.fully_labeled_replicas
                ));
            }
            if rs.status.available_replicas != rs.status.ready_replicas {
                s.push_str(&format!(" available={}", rs.status.available_replicas));
            }
            if let Some(failure) = &rs.status.replica_failure {
                s.push_str(&format!(" condition ReplicaFailure={failure:?}"));
            }
            if rs.meta.is_deleting() {
                let f: Vec<&str> = rs.meta.finalizers.iter().map(|f| f.as_str()).collect();
                s.push_str(&format!(" deleting finalizers=[{}]", f.join(",")));
            }
            s
        }
        Object::Pod(p) => {
            let mut s = format!(
                "pod/{} labels={}",
                p.meta.name,
                rsmc_spec::object::render_labels(&p.meta.labels)
            );
            match p.meta.controller_ref() {
                Some(r) => s.push_str(&format!(" controller={}/{}", r.kind.kind(), r.name)),
                None => s.push_str(" controller=<none>"),
            }
            if p.is_ready() {
                s.push_str(" ready");
            }
            if p.meta.is_deleting() {
                s.push_str(" deleting");
            }
            s
        }
    }
}

/// Whether `action`, taken in `s`, may have made the write the recording shows as the
/// visible event `at`, by the actor the recording attributes it to.
///
/// The removal of a pod marked by a grace-0 delete (`Action::RemoveMarkedPod`) is the second
/// write of the request that marked it, whoever sent that: the recording attributes both
/// writes to the same actor, so the removal belongs to the actor of the pod's latest earlier
/// event, the mark.
fn same_actor(
    segment: &Segment,
    s: &State,
    action: &Action,
    visible: &[(usize, &Event)],
    at: usize,
) -> bool {
    let step = visible[at].1.step;
    if let Action::RemoveMarkedPod { .. } = action {
        let removed = &visible[at].1.object;
        return visible[..at]
            .iter()
            .rev()
            .find(|(_, e)| matches!(e.object, Object::Pod(_)) && e.object.name() == removed.name())
            .is_some_and(|(_, mark)| mark.step == step);
    }
    let by_step = |k: usize| {
        action.is_environment() && segment.origin.get(s.script.step as usize) == Some(&k)
    };
    match step {
        // The recording does not say whose it is: its step's or the system's, whichever a
        // run makes it.
        Some(k) if visible[at].1.or_system => by_step(k) || !action.is_environment(),
        Some(k) => by_step(k),
        None => !action.is_environment(),
    }
}

/// A node of a search over recorded writes: a model state, how many of the segment's
/// visible recorded writes it has gone past, the renaming so far, the grace-0 removals it
/// made that the recording has not shown yet, and the floating recorded writes it went past
/// without producing them yet.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub state: State,
    pub matched: usize,
    pub binding: Binding,
    deferred: Vec<Deferred>,
    /// Indices (into the visible writes) of floating events ([`Event::floating`]) the
    /// search went past: a later model write must produce each, before the next recorded
    /// write of the same object.
    postponed: Vec<usize>,
    /// How the run so far read what the recording leaves open, for the verdict (not part
    /// of the fingerprint: runs that differ only in it are alike).
    pub readings: Readings,
}

/// How a run read what a recording leaves open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readings {
    /// Floating events ([`Event::floating`]) made later than recorded.
    pub moved: usize,
    /// Writes left to their step or the system ([`Event::or_system`], counted by their
    /// first event: a deletion's mark) that the system made.
    pub by_system: usize,
    /// The same, made by their step.
    pub by_step: usize,
    /// The most events a watcher was behind when the run made a write, on a type the lag
    /// bound holds it to ([`State::lag`]).
    pub behind: usize,
}

impl Readings {
    /// These readings and those of one more model step, by `action`, that produced the
    /// visible recorded writes `met` (moving `moved` floating ones) from `s`.
    fn and(self, action: &Action, s: &State, met: &[&Event], moved: usize) -> Readings {
        let open = met.iter().filter(|e| e.opens_reading()).count();
        let by_step = action.is_environment();
        Readings {
            moved: self.moved + moved,
            by_system: self.by_system + if by_step { 0 } else { open },
            by_step: self.by_step + if by_step { open } else { 0 },
            behind: self.behind.max(s.lag()),
        }
    }
}

impl Node {
    /// Whether the run so far has produced every one of the segment's `visible` recorded
    /// writes, none of them left to be made later.
    pub fn produced_all(&self, visible: usize) -> bool {
        self.matched == visible && self.deferred.is_empty() && self.postponed.is_empty()
    }

    /// A node at the start of a segment.
    pub fn start(state: State, binding: Binding) -> Self {
        Node {
            state,
            matched: 0,
            binding,
            deferred: Vec::new(),
            postponed: Vec::new(),
            readings: Readings::default(),
        }
    }

    /// The node after a model step from this one that writes nothing, to `state`.
    pub(crate) fn internal(&self, state: State) -> Self {
        Node {
            state,
            ..self.clone()
        }
    }

    /// A node at the start of the next segment, from one that ended the previous.
    pub fn next_segment(&self, binding: Binding) -> Self {
        Node {
            readings: self.readings,
            ..Node::start(self.state.clone(), binding)
        }
    }

    /// The visible recorded writes this node has still to produce: those after `matched`,
    /// and the floating ones it went past.
    pub(crate) fn still_to_produce<'a>(&self, visible: &[(usize, &'a Event)]) -> Vec<&'a Event> {
        let later = visible.get(self.matched..).unwrap_or_default();
        self.postponed
            .iter()
            .map(|&at| visible[at].1)
            .chain(later.iter().map(|(_, e)| *e))
            .collect()
    }

    /// What identifies the node for the searches' visited sets.
    pub fn fingerprint(&self) -> u64 {
        fingerprint(&(
            UpToRevisions(&self.state),
            self.matched,
            &self.binding,
            &self.deferred,
            &self.postponed,
        ))
    }
}

/// How likely a step is on a real cluster, for the witness search's order: informers
/// catching up first (but for a delivery that would spoil the stale read a status write
/// still to come shows, [`super::held`]), then a worker taking a queued key, then the write
/// the recording shows next, then everything else.
///
/// A worker starts promptly on a real controller: the key is queued by the event that
/// needs it and an idle worker takes it at once, while other components go on writing. A
/// sync started before another component's burst of writes reads the cache from before
/// them: the overlap-20 recording shows web-a's status written with all 20 pods counted
/// after the garbage collector had orphaned 15 of them. Ranking the start below the
/// recorded writes leaves the search to find that read only by backtracking through every
/// interleaving of the burst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Likely {
    CatchUp,
    /// A worker taking a queued key (`StartSync`).
    Prompt,
    RecordedWrite,
    Other,
}

/// What one node of a segment leads to.
pub(crate) struct Expansion {
    /// The nodes that follow, in the model's order, each with how likely its step is.
    pub next: Vec<(Likely, Node)>,
    /// The node is past the segment's settle.
    pub settled: bool,
    /// Writes the model could make that the recording does not show next.
    pub refused: Vec<Refusal>,
    /// The scenario step the node cannot go past (see [`Divergence::stuck_at`]).
    pub stuck_at: Option<usize>,
}

/// A step the model could take that the recording does not show next.
#[derive(Clone, Debug)]
pub(crate) struct Refusal {
    /// How many visible recorded writes the step matched before it parted ways.
    pub reached: usize,
    /// The step described.
    pub line: String,
    /// The step's first write the recording does not show, with the renaming in force there:
    /// compared field by field with the recorded write at a divergence. `None` for a step
    /// refused for another reason (a run the rest of the recording rules out).
    pub write: Option<AllowedWrite>,
}

impl Refusal {
    /// A step refused for a reason other than its writes.
    pub fn because(reached: usize, line: String) -> Self {
        Refusal {
            reached,
            line,
            write: None,
        }
    }
}

/// A write the model could make, and the renaming it would be read under.
#[derive(Clone, Debug)]
pub(crate) struct AllowedWrite {
    pub event_type: EventType,
    pub object: Object,
    pub binding: Binding,
}

impl AllowedWrite {
    /// Whether this write is to the object `seen` is: the ReplicaSet of the same name, the
    /// pod bound to it, or for a generated pod bound to nothing yet, one with the same
    /// `generateName`.
    fn is_to(&self, seen: &Object) -> bool {
        match (&self.object, seen) {
            (Object::ReplicaSet(m), Object::ReplicaSet(o)) => m.meta.name == o.meta.name,
            (Object::Pod(m), Object::Pod(o)) => match &m.meta.generate_name {
                None => m.meta.name == o.meta.name,
                Some(prefix) => match self.binding.observed_name(&m.meta.name) {
                    Some(bound) => bound == o.meta.name,
                    None => {
                        self.binding.model_name(&o.meta.name).is_none()
                            && o.meta.generate_name.as_ref() == Some(prefix)
                    }
                },
            },
            _ => false,
        }
    }

    /// The fields in which `seen` differs from this write.
    fn differences(&self, seen: &Object) -> Vec<FieldDiff> {
        differing(&self.binding, seen, &self.object)
    }
}

impl Expansion {
    /// Whether the node ends the segment: settled with every recorded write produced.
    pub fn ends(&self, node: &Node, visible: usize) -> bool {
        self.settled && node.produced_all(visible)
    }
}

/// The visible recorded writes of a segment, computed once per segment.
pub(crate) fn visible<'a>(segment: &Segment<'a>) -> Vec<(usize, &'a Event)> {
    visible_events(segment.events, segment.before)
}

/// The steps from `node` that keep the model in step with the recording.
pub(crate) fn expand(segment: &Segment, visible: &[(usize, &Event)], node: &Node) -> Expansion {
    let Node {
        state: s,
        matched: i,
        binding: b,
        deferred,
        postponed,
        readings,
    } = node;
    let i = *i;
    let mut next = Vec::new();
    let mut refused = Vec::new();
    let mut stuck_at = None;
    // The next recorded event may be a removal the model made earlier (see `Deferred`).
    if let Some((_, e)) = visible.get(i) {
        for (k, d) in deferred.iter().enumerate() {
            let mut b2 = b.clone();
            let model = Object::Pod(d.pod.clone());
            if e.step == d.step
                && same_write(
                    &mut b2,
                    (EventType::Deleted, &model),
                    (e.event_type, &e.object),
                )
            {
                let mut rest = deferred.clone();
                rest.remove(k);
                next.push((
                    Likely::RecordedWrite,
                    Node {
                        state: s.clone(),
                        matched: i + 1,
                        binding: b2,
                        deferred: rest,
                        postponed: postponed.clone(),
                        readings: *readings,
                    },
                ));
            }
        }
        // A floating write may have been committed later: go past it, to be made later.
        if e.floating {
            let mut later = postponed.clone();
            later.push(i);
            next.push((
                Likely::Other,
                Node {
                    state: s.clone(),
                    matched: i + 1,
                    binding: b.clone(),
                    deferred: deferred.clone(),
                    postponed: later,
                    readings: *readings,
                },
            ));
        }
    }
    if s.script.step as usize > segment.settle {
        return Expansion {
            next,
            settled: true,
            refused,
            stuck_at,
        };
    }
    // A step the scenario expects to be refused that the model's API server does not refuse
    // stops every run here: say so where the recording and the model part ways.
    if let Some(answer) = segment.model.refusal_mismatch(s) {
        let step = segment.origin[s.script.step as usize];
        stuck_at = Some(step);
        refused.push(Refusal::because(
            i,
            format!("step {} is expected to be refused, but the model's API server {answer}, so no run goes past it", step + 1),
        ));
    }
    let mut moves = successors(segment.model, s);
    if segment.model.gc_deliveries_go_first(s) {
        let gc_delivery = |a: &Action| {
            matches!(
                a,
                Action::Deliver {
                    watcher: Watcher::GarbageCollector,
                    ..
                }
            )
        };
        if moves.iter().any(|(a, _)| gc_delivery(a)) {
            // They commute with every other move (the model's `commute` module says why):
            // taking them first loses no run, and spares trying every other place for them.
            moves.retain(|(a, _)| gc_delivery(a));
            next.clear();
        }
    }
    for (action, n) in moves {
        let writes = model_writes(s, &n);
        if writes.is_empty() {
            let likely = match &action {
                Action::Deliver { .. }
                    if super::held::holds_back(visible, &node.state, node.matched, &action) =>
                {
                    Likely::Other
                }
                Action::Deliver { .. } => Likely::CatchUp,
                Action::StartSync { .. } => Likely::Prompt,
                // The pick of the next claim patch or delete that the recording shows next.
                Action::Choose { pods, .. }
                    if pods.len() == 1 && writes_next(b, visible.get(i), &pods[0]) =>
                {
                    Likely::RecordedWrite
                }
                // A victim set whose every pod the system writes later in the recording.
                Action::Choose { pods, .. }
                    if pods.len() > 1
                        && pods.iter().all(|p| {
                            visible[i..].iter().any(|e| {
                                (e.1.step.is_none() || e.1.or_system) && writes_next(b, Some(e), p)
                            })
                        }) =>
                {
                    Likely::RecordedWrite
                }
                _ => Likely::Other,
            };
            next.push((
                likely,
                Node {
                    state: n,
                    matched: i,
                    binding: b.clone(),
                    deferred: deferred.clone(),
                    postponed: postponed.clone(),
                    readings: *readings,
                },
            ));
            continue;
        }
        let met = meet(segment, s, &action, visible, node, &writes);
        let seen = |met: &[Met]| -> Vec<&Event> { met.iter().map(|m| visible[m.at].1).collect() };
        let prefix = met.len();
        if prefix == writes.len() {
            let last = met.last().expect("a step with writes");
            // A write the recording leaves to the step or the system is taken for the
            // system's first: its claim was most likely dropped (see `Event::or_system`).
            let likely =
                match action.is_environment() && met.iter().any(|m| visible[m.at].1.or_system) {
                    true => Likely::Other,
                    false => Likely::RecordedWrite,
                };
            next.push((
                likely,
                Node {
                    state: n.clone(),
                    matched: last.cursor,
                    binding: last.binding.clone(),
                    deferred: deferred.clone(),
                    postponed: last.postponed.clone(),
                    readings: readings.and(&action, s, &seen(&met), last.moved),
                },
            ));
        }
        // A grace-0 pod delete whose removal the cluster shows later.
        if let (Some(pod), Some(first)) = (deferrable_removal(&writes), met.first()) {
            let mut more = deferred.clone();
            more.push(Deferred {
                step: visible[first.at].1.step,
                pod: pod.clone(),
            });
            next.push((
                Likely::RecordedWrite,
                Node {
                    state: n,
                    matched: first.cursor,
                    binding: first.binding.clone(),
                    deferred: more,
                    postponed: first.postponed.clone(),
                    readings: readings.and(&action, s, &seen(&met[..1]), first.moved),
                },
            ));
        }
        if prefix == writes.len() {
            continue;
        }
        // A step with several writes (a GC work item) that matched only some of them
        // explains those events: the divergence is at the first one it does not.
        let what: Vec<String> = writes[prefix..]
            .iter()
            .map(|(ty, o)| format!("{} {}", event_word(*ty), summary(o)))
            .collect();
        let (event_type, object) = writes[prefix].clone();
        let binding = met.last().map_or(b, |m| &m.binding).clone();
        refused.push(Refusal {
            reached: met.last().map_or(i, |m| m.cursor),
            line: binding.in_observed_names(&format!(
                "{} → {}",
                segment.model.describe(s, &action),
                what.join("; ")
            )),
            write: Some(AllowedWrite {
                event_type,
                object,
                binding,
            }),
        });
    }
    Expansion {
        next,
        settled: false,
        refused,
        stuck_at,
    }
}

/// Where one model write met the recording ([`meet`]).
struct Met {
    /// The visible recorded write it produced.
    at: usize,
    /// The node's `matched`, `binding` and `postponed` once it has.
    cursor: usize,
    binding: Binding,
    postponed: Vec<usize>,
    /// Postponed writes produced so far in the step.
    moved: usize,
}

/// How far the writes of one model step (`action` from `s`) follow the recording from
/// `node`, write by write: each is either a floating write the node went past or the next
/// recorded one, by the actor the recording names; the next recorded one only when no
/// write of the same object is still postponed (that one was committed before it). Stops
/// at the first write that is neither.
fn meet(
    segment: &Segment,
    s: &State,
    action: &Action,
    visible: &[(usize, &Event)],
    node: &Node,
    writes: &[(EventType, Object)],
) -> Vec<Met> {
    let mut out: Vec<Met> = Vec::new();
    let (mut cursor, mut binding, mut postponed) =
        (node.matched, node.binding.clone(), node.postponed.clone());
    let mut moved = 0;
    for (ty, obj) in writes {
        let produces = |at: usize, b: &Binding| {
            let mut trial = b.clone();
            let e = visible[at].1;
            (same_actor(segment, s, action, visible, at)
                && same_write(&mut trial, (*ty, obj), (e.event_type, &e.object)))
            .then_some(trial)
        };
        let earlier = postponed
            .iter()
            .enumerate()
            .find_map(|(k, &at)| produces(at, &binding).map(|b| (k, at, b)));
        let at = match earlier {
            Some((k, at, b)) => {
                postponed.remove(k);
                binding = b;
                moved += 1;
                at
            }
            None => {
                let blocked = |at: usize| {
                    let object = &visible[at].1.object;
                    postponed.iter().any(|&p| {
                        let other = &visible[p].1.object;
                        other.kind() == object.kind() && other.name() == object.name()
                    })
                };
                match (cursor < visible.len() && !blocked(cursor))
                    .then(|| produces(cursor, &binding))
                    .flatten()
                {
                    Some(b) => {
                        binding = b;
                        cursor += 1;
                        cursor - 1
                    }
                    None => break,
                }
            }
        };
        out.push(Met {
            at,
            cursor,
            binding: binding.clone(),
            postponed: postponed.clone(),
            moved,
        });
    }
    out
}

/// Whether the next recorded write is to the model's pod `pod` (by its bound name, or its
/// own for a pod the user named).
fn writes_next(b: &Binding, next: Option<&(usize, &Event)>, pod: &str) -> bool {
    next.is_some_and(|(_, e)| {
        matches!(e.object, Object::Pod(_)) && b.observed_name(pod).unwrap_or(pod) == e.object.name()
    })
}

/// Where the recorded writes part ways with every model run explored so far: the furthest
/// any run got, and what the model could do there instead.
#[derive(Clone, Debug, Default)]
pub(crate) struct Frontier {
    /// Visible recorded writes matched by the furthest run.
    pub reached: usize,
    /// What the model could do there instead (deduplicated by description, at most a dozen).
    refusals: Vec<Refusal>,
    /// Whether a run could settle there, having written nothing more.
    pub could_settle: bool,
    /// A step a run there cannot go past.
    pub stuck_at: Option<usize>,
}

impl Frontier {
    /// A node reached `matched` writes.
    pub fn reach(&mut self, matched: usize) {
        if matched > self.reached {
            *self = Frontier {
                reached: matched,
                ..Frontier::default()
            };
        }
    }

    /// Record what an expansion of `node` says about the frontier.
    pub fn note(&mut self, node: &Node, expansion: &Expansion, visible: usize) {
        self.reach(node.matched);
        if expansion.settled && !expansion.ends(node, visible) && node.matched == self.reached {
            self.could_settle = true;
        }
        if expansion.stuck_at.is_some() && node.matched == self.reached {
            self.stuck_at = self.stuck_at.or(expansion.stuck_at);
        }
        for r in &expansion.refused {
            self.reach(r.reached);
            if r.reached == self.reached
                && self.refusals.len() < 12
                && self.refusals.iter().all(|known| known.line != r.line)
            {
                self.refusals.push(r.clone());
            }
        }
    }

    /// The divergence this frontier describes.
    pub fn divergence(self, segment: &Segment, visible: &[(usize, &Event)]) -> Divergence {
        let (index, event) = visible
            .get(self.reached)
            .map(|(i, e)| (*i, Some(*e)))
            .unwrap_or((segment.events.len(), None));
        let (fields, closest) = event
            .and_then(|e| closest_write(&self.refusals, e))
            .map_or((Vec::new(), None), |(f, o)| (f, Some(o)));
        Divergence {
            event: index,
            seen: event
                .map(|e| describe_event(e, |k| format!("scenario step {}", k + 1)))
                .unwrap_or_else(|| "no further write (the recording ends here)".into()),
            allowed: self.refusals.into_iter().map(|r| r.line).collect(),
            could_settle: self.could_settle,
            stuck_at: self.stuck_at,
            fields,
            closest,
        }
    }
}

/// The closest of `allowed` to the recorded write `seen` among those of the same kind of
/// event to the same object (the first of the fewest differing fields, in the model's
/// order), with the fields in which `seen` differs from it; `None` when none is to that
/// object.
fn closest_write(allowed: &[Refusal], seen: &Event) -> Option<(Vec<FieldDiff>, Object)> {
    allowed
        .iter()
        .filter_map(|r| r.write.as_ref())
        .filter(|w| w.event_type == seen.event_type && w.is_to(&seen.object))
        .map(|w| (w.differences(&seen.object), w.object.clone()))
        .min_by_key(|(fields, _)| fields.len())
}

/// Validate one segment's writes from the start candidates: every run that matches them, by
/// a breadth-first search over every interleaving of internal steps. This is the oracle's
/// exhaustive level, used to explain a divergence; [`super::witness`] decides verdicts.
pub fn validate(segment: &Segment, starts: &[(State, Binding)]) -> Result<Validation, Exhausted> {
    let mut meter = segment.budget.meter();
    let visible = visible(segment);
    let mut seen: HashSet<u64> = HashSet::new();
    let mut queue: VecDeque<Node> = starts
        .iter()
        .map(|(s, b)| Node::start(s.clone(), b.clone()))
        .collect();
    let mut ends = Vec::new();
    let mut frontier = Frontier::default();
    while let Some(node) = queue.pop_front() {
        if !seen.insert(node.fingerprint()) {
            continue;
        }
        meter.check(seen.len())?;
        segment.model.check_victim_sets(&node.state, seen.len())?;
        let expansion = expand(segment, &visible, &node);
        frontier.note(&node, &expansion, visible.len());
        if expansion.ends(&node, visible.len()) {
            ends.push((node.state.clone(), node.binding.clone()));
        }
        queue.extend(expansion.next.into_iter().map(|(_, n)| n));
    }
    if !ends.is_empty() {
        return Ok(Validation::Valid(ends));
    }
    Ok(Validation::Diverges(frontier.divergence(segment, &visible)))
}

fn event_word(ty: EventType) -> &'static str {
    match ty {
        EventType::Added => "ADDED",
        EventType::Modified => "MODIFIED",
        EventType::Deleted => "DELETED",
    }
}

/// Whether an end state of a valid trace also shows the recorded settle-point objects.
pub fn ends_matching(ends: Vec<(State, Binding)>, settled: &Snapshot) -> Vec<(State, Binding)> {
    ends.into_iter()
        .filter_map(|(s, b)| {
            let objects = crate::compare::binding::ModelObjects {
                replicasets: &s.api.replicasets,
                pods: &s.api.pods,
            };
            crate::compare::binding::match_objects(&b, objects, settled).map(|b| (s, b))
        })
        .collect()
}
