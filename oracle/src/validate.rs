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

use crate::binding::{invisible, model_event_object, same_write, Binding};
use crate::explore::{fingerprint, successors, TooLarge};
use crate::observed::{Event, EventType, Object, Snapshot};
use rsmc_spec::model::{Action, RsModel, State, UpToRevisions};
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
    pub limit: usize,
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
fn model_writes(s: &State, n: &State) -> Vec<(EventType, Object)> {
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
                Some(r) => s.push_str(&format!(" controller=ReplicaSet/{}", r.name)),
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

/// Whether `action`, taken in `s`, may have made a write the recording attributes to `step`.
fn same_actor(segment: &Segment, s: &State, action: &Action, step: Option<usize>) -> bool {
    match step {
        Some(k) => {
            action.is_environment() && segment.origin.get(s.script.step as usize) == Some(&k)
        }
        None => !action.is_environment(),
    }
}

/// Validate one segment's writes from the start candidates.
pub fn validate(segment: &Segment, starts: &[(State, Binding)]) -> Result<Validation, TooLarge> {
    let visible = visible_events(segment.events, segment.before);
    let mut seen: HashSet<u64> = HashSet::new();
    let mut queue: VecDeque<(State, usize, Binding, Vec<Deferred>)> = starts
        .iter()
        .map(|(s, b)| (s.clone(), 0, b.clone(), Vec::new()))
        .collect();
    let mut ends = Vec::new();
    let mut frontier = 0;
    let mut allowed: Vec<String> = Vec::new();
    let mut could_settle = false;
    while let Some((s, i, b, deferred)) = queue.pop_front() {
        if !seen.insert(fingerprint(&(UpToRevisions(&s), i, &b, &deferred))) {
            continue;
        }
        if seen.len() > segment.limit {
            return Err(TooLarge {
                limit: segment.limit,
            });
        }
        if i > frontier {
            frontier = i;
            allowed.clear();
            could_settle = false;
        }
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
                    queue.push_back((s.clone(), i + 1, b2, rest));
                }
            }
        }
        if s.script.step as usize > segment.settle {
            if i == visible.len() && deferred.is_empty() {
                ends.push((s, b));
            } else if i == frontier {
                could_settle = true;
            }
            continue;
        }
        for (action, n) in successors(segment.model, &s) {
            let writes = model_writes(&s, &n);
            if writes.is_empty() {
                queue.push_back((n, i, b.clone(), deferred.clone()));
                continue;
            }
            let mut b2 = b.clone();
            let prefix = writes
                .iter()
                .enumerate()
                .take_while(|(j, (ty, obj))| {
                    visible.get(i + j).is_some_and(|(_, e)| {
                        same_actor(segment, &s, &action, e.step)
                            && same_write(&mut b2, (*ty, obj), (e.event_type, &e.object))
                    })
                })
                .count();
            if prefix == writes.len() {
                queue.push_back((n.clone(), i + writes.len(), b2, deferred.clone()));
            }
            // A grace-0 pod delete whose removal the cluster shows later.
            if let Some(pod) = deferrable_removal(&writes) {
                if prefix >= 1 {
                    let mut b3 = b.clone();
                    let first = &writes[0];
                    let e = &visible[i].1;
                    same_write(&mut b3, (first.0, &first.1), (e.event_type, &e.object));
                    let mut more = deferred.clone();
                    more.push(Deferred {
                        step: e.step,
                        pod: pod.clone(),
                    });
                    queue.push_back((n, i + 1, b3, more));
                }
            }
            if prefix == writes.len() {
                continue;
            }
            // A step with several writes (a GC work item) that matched only some of them
            // explains those events: the divergence is at the first one it does not.
            let reached = i + prefix;
            if reached > frontier {
                frontier = reached;
                allowed.clear();
                could_settle = false;
            }
            if reached == frontier && allowed.len() < 12 {
                let what: Vec<String> = writes[prefix..]
                    .iter()
                    .map(|(ty, o)| format!("{} {}", event_word(*ty), summary(o)))
                    .collect();
                let line = b.in_observed_names(&format!(
                    "{} → {}",
                    segment.model.describe(&s, &action),
                    what.join("; ")
                ));
                if !allowed.contains(&line) {
                    allowed.push(line);
                }
            }
        }
    }
    if !ends.is_empty() {
        return Ok(Validation::Valid(ends));
    }
    let (index, event) = visible
        .get(frontier)
        .map(|(i, e)| (*i, Some(*e)))
        .unwrap_or((segment.events.len(), None));
    Ok(Validation::Diverges(Divergence {
        event: index,
        seen: event
            .map(|e| describe_event(e, |k| format!("scenario step {}", k + 1)))
            .unwrap_or_else(|| "no further write (the recording ends here)".into()),
        allowed,
        could_settle,
    }))
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
            let objects = crate::binding::ModelObjects {
                replicasets: &s.api.replicasets,
                pods: &s.api.pods,
            };
            crate::binding::match_objects(&b, objects, settled).map(|b| (s, b))
        })
        .collect()
}
