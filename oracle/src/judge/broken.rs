//! Which property a cluster's divergent write breaks.
//!
//! When a recorded write is one the model cannot make ([validate](super::search::validate)), the verdict says
//! what the write did wrong in the terms of the model's safety properties
//! (`rsmc_spec::model::properties`), so that a report reads "breaks: adoption only by a live,
//! matching owner not being deleted" rather than only "diverges". The write is judged on the
//! cluster's own objects just before it — the previous settle point's snapshot with the
//! segment's earlier events applied — since the model states the search carried may bind
//! names differently.
//!
//! A cluster's write carries no author, so each rule is stated for any system write (the
//! runner's own writes are never judged):
//! - a pod is written with two controller references (at most one controller per pod; a real
//!   API server refuses this, as the model's does, so only a recording of something else
//!   shows it);
//! - a pod created under ReplicaSet R's controller reference makes R control more active pods
//!   than its `spec.replicas` (no over-creation), or R is being deleted (no creation while
//!   deleting);
//! - a pod controlled by a live ReplicaSet gets another's controller reference instead (no
//!   stealing);
//! - a controller reference to R is added to a pod while R is gone, deleting, or does not
//!   match the pod (adoption rules);
//! - a pod starts deleting while it references a ReplicaSet that was, at any point of the
//!   recording so far, being deleted with propagation Orphan (orphan deletion keeps its
//!   dependents: neither the controller of a deleting ReplicaSet nor the garbage collector
//!   may delete them, #42639);
//! - the garbage collector, named as the writer by the recording ([`Event::by`]: an audit
//!   log's user agent), deletes a pod whose controller is there and not deleting its
//!   dependents in the foreground (the collector deletes only dependents of gone owners;
//!   without the writer's name such a delete is judged by the rules below, as anyone's);
//! - a pod with no owner at all starts deleting: neither the controller nor the garbage
//!   collector deletes such a pod (the controller deletes only pods it controls);
//! - a pod controlled by a live R with no surplus starts deleting while another live
//!   ReplicaSet matches it: R's controller had nothing to delete and the garbage collector
//!   deletes only dependents of gone owners, so the delete is the other ReplicaSet's
//!   controller acting on a pod it does not control (the controller deletes only pods it
//!   controls);
//! - a ReplicaSet is written with a status its object contradicts: observedGeneration beyond
//!   its generation, more ready replicas than replicas, more available than ready (status
//!   consistent; only the controller writes status);
//! - a pod controlled by a live R that has a surplus starts deleting while it is in none of
//!   the victim sets the ranking allows for R's active pods (the ranking). Observed pods carry
//!   no timestamps the oracle compares, so the rules that compare times count as ties here:
//!   only what the other rules decide is named.
//!
//! The bounds differ from the model's where an author would be needed (the model bounds a
//! create by the replicas its sync acted on; here by the live spec): this only names the
//! property of a write the model has already refused, it never decides conformance.

use crate::observed::{Component, Event, EventType, Object, Observed, Snapshot};
use rsmc_spec::api::View;
use rsmc_spec::bugs::{Status, CATALOGUE};
use rsmc_spec::controller::ranking;
use rsmc_spec::liveness::converged::broken_conditions;
use rsmc_spec::model::properties::{
    adoption_allowed, another_owner_keeps, controller_keeps, over_created, status_consistent,
    Owners, ADOPTION_RULES, DELETE_ONLY_CONTROLLED, GC_DELETES_ONLY_DEPENDENTS_OF_GONE,
    GC_SPARES_PODS_OTHER_OWNERS_HOLD, NO_CREATE_WHILE_DELETING, NO_OVER_CREATION, NO_STEALING,
    ORPHAN_KEEPS_DEPENDENTS, SCALE_DOWN_RANKED, SINGLE_CONTROLLER, STATUS_CONSISTENT,
};
use rsmc_spec::object::{Finalizer, Pod, ReplicaSet, Uid};
use rsmc_spec::profile::Semantics;
use std::collections::BTreeSet;

/// The property `events[index]` breaks, judged on `before` with `events[..index]` applied;
/// `None` for the runner's own writes and for writes no property speaks of.
pub fn broken_by(
    before: &Snapshot,
    events: &[Event],
    index: usize,
    sem: &Semantics,
) -> Option<&'static str> {
    let event = events.get(index)?;
    if event.step.is_some() {
        return None;
    }
    let mut cluster = before.clone();
    let mut promises = Promises::default();
    promises.note(&cluster);
    for e in &events[..index] {
        apply(&mut cluster, e);
        if matches!(e.object, Object::ReplicaSet(_)) {
            promises.note(&cluster);
        }
    }
    let after = match &event.object {
        Object::Pod(after) => after,
        Object::ReplicaSet(rs) => return status_inconsistent(rs, event.event_type),
    };
    let old = cluster.pods.get(&after.meta.name).cloned();
    let after = (event.event_type != EventType::Deleted).then_some(&**after);
    if after.is_some_and(two_controllers) {
        return Some(SINGLE_CONTROLLER);
    }
    match (old.as_deref(), after) {
        (None, Some(new)) => created(&cluster, new),
        // A deletion begins: the mark, or the removal of a pod never marked.
        (Some(old), new)
            if !old.meta.is_deleting() && new.is_none_or(|new| new.meta.is_deleting()) =>
        {
            deleted(&cluster, old, event.by, &promises, sem)
        }
        (Some(old), Some(new)) => adopted(&cluster, old, new),
        _ => None,
    }
}

/// The convergence condition of a status (`Condition::of_status`) that `events[index]`, a
/// system's write of a ReplicaSet (only the controller writes a status), breaks for the
/// objects as they are then — `before` with `events[..=index]` applied: what is wrong with a
/// status no safety property speaks of (one that does not count the pods). Mid-run a status
/// from a stale cache may break one on its way to converging, so this names a divergent
/// write only: one no model run makes. `None` for any other write.
///
/// `allowed` is the closest write the model could make there instead, if there is one: a
/// condition it breaks too is not what sets the recorded write apart (a status the model
/// also writes from a cache a creation behind, differing in a field no condition reads), so
/// only a condition the allowed write keeps is named.
pub fn condition_written(
    before: &Snapshot,
    events: &[Event],
    index: usize,
    allowed: Option<&Object>,
) -> Option<&'static str> {
    let event = events.get(index)?;
    let Object::ReplicaSet(written) = &event.object else {
        return None;
    };
    if event.step.is_some() || event.event_type == EventType::Deleted {
        return None;
    }
    let mut cluster = before.clone();
    for e in &events[..=index] {
        apply(&mut cluster, e);
    }
    let this: View<ReplicaSet> = cluster
        .replicasets
        .iter()
        .filter(|(name, _)| **name == written.meta.name)
        .map(|(name, rs)| (name.clone(), rs.clone()))
        .collect();
    let instead: Option<View<ReplicaSet>> = match allowed {
        Some(Object::ReplicaSet(a)) if a.meta.name == written.meta.name => {
            // Under the cluster's UID, which its pods' owner references carry.
            let mut a = (**a).clone();
            a.meta.uid = written.meta.uid;
            Some(
                [(a.meta.name.clone(), std::sync::Arc::new(a))]
                    .into_iter()
                    .collect(),
            )
        }
        _ => None,
    };
    broken_conditions(&this, &cluster.pods, &[])
        .into_iter()
        .map(|u| u.condition)
        .filter(|c| c.of_status())
        .find(|c| {
            instead
                .as_ref()
                .is_none_or(|a| c.broken(a, &cluster.pods, &[]).is_none())
        })
        .map(|c| c.name())
}

/// [`STATUS_CONSISTENT`]: a ReplicaSet written with a status its own object contradicts
/// (observedGeneration beyond generation, more ready than replicas, more available than
/// ready). Only the controller writes a ReplicaSet's status.
fn status_inconsistent(rs: &ReplicaSet, event_type: EventType) -> Option<&'static str> {
    (event_type != EventType::Deleted && !status_consistent(rs)).then_some(STATUS_CONSISTENT)
}

/// A recorded write that breaks a safety property.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BrokenWrite {
    pub property: &'static str,
    /// The settle point whose segment recorded it (1-based) and its place there (1-based).
    pub settle_point: usize,
    pub event: usize,
}

impl std::fmt::Display for BrokenWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: recorded event {} before settle point {}",
            self.property, self.event, self.settle_point
        )
    }
}

/// Every recorded write of the system that breaks a safety property, judged on the recording
/// alone by the rules above — the second judgement of a run, beside the oracle's (which asks
/// whether the model allows the run): a race the model allows that the cluster really took
/// breaks its property here.
pub fn in_recording(observed: &Observed, sem: &Semantics) -> Vec<BrokenWrite> {
    let empty = Snapshot::default();
    let mut out = Vec::new();
    for (k, segment) in observed.segments.iter().enumerate() {
        let Some(events) = &segment.events else {
            continue;
        };
        let before = match k {
            0 => &empty,
            _ => &observed.segments[k - 1].settled,
        };
        for i in 0..events.len() {
            if let Some(property) = broken_by(before, events, i, sem) {
                out.push(BrokenWrite {
                    property,
                    settle_point: k + 1,
                    event: i + 1,
                });
            }
        }
    }
    out
}

/// How the cluster had not converged when the recording ended (its last settle point: the
/// namespace was quiet), in words; `None` when it had. Quiet and not converged is what a
/// convergence race looks like on a cluster that the run leaves before any timer (the
/// expectations' 5 minutes) would move it on.
pub fn unconverged_at_the_end(observed: &Observed) -> Option<String> {
    let last = &observed.segments.last()?.settled;
    let broken =
        rsmc_spec::liveness::converged::broken_conditions(&last.replicasets, &last.pods, &[]);
    let first = broken.first()?;
    Some(format!(
        "quiet at its last settle point but not converged: {first}"
    ))
}

/// [`SINGLE_CONTROLLER`]: `pod` carries more than one controller reference.
pub fn two_controllers(pod: &Pod) -> bool {
    pod.meta
        .owner_references
        .iter()
        .filter(|r| r.controller)
        .count()
        > 1
}

/// The UIDs of those of `replicasets` being deleted with propagation Orphan.
pub fn orphaning<'a>(replicasets: impl Iterator<Item = &'a ReplicaSet>) -> BTreeSet<Uid> {
    replicasets
        .filter(|rs| rs.meta.has_finalizer(Finalizer::Orphan))
        .map(|rs| rs.meta.uid)
        .collect()
}

/// The dependents an orphan deletion promised to keep, as the model's ghost records them
/// (`orphan_promises`): each ReplicaSet's dependents when it is first seen being deleted
/// with propagation Orphan. A pod created under it afterwards (a controller's sync in
/// flight) was never its dependent to keep: the garbage collector deletes it once the owner
/// is gone, as upstream's `attemptToDeleteItem` does with a dangling reference.
#[derive(Clone, Debug, Default)]
struct Promises {
    owners: BTreeSet<Uid>,
    /// (owner, pod) UIDs.
    kept: BTreeSet<(Uid, Uid)>,
}

impl Promises {
    /// Take the ReplicaSets that `cluster` shows orphaning for the first time.
    fn note(&mut self, cluster: &Snapshot) {
        for owner in orphaning(cluster.replicasets.values().map(|rs| &**rs)) {
            if !self.owners.insert(owner) {
                continue;
            }
            let dependents = cluster
                .pods
                .values()
                .filter(|p| p.meta.owner_references.iter().any(|r| r.uid == owner));
            self.kept.extend(dependents.map(|p| (owner, p.meta.uid)));
        }
    }
}

/// The cluster after one recorded event.
pub fn apply(cluster: &mut Snapshot, e: &Event) {
    match (&e.object, e.event_type) {
        (Object::ReplicaSet(rs), EventType::Deleted) => {
            cluster.replicasets.remove(&rs.meta.name);
        }
        (Object::Pod(p), EventType::Deleted) => {
            cluster.pods.remove(&p.meta.name);
        }
        (object, _) => cluster.insert(object.clone()),
    }
}

/// The live ReplicaSet with this UID.
pub fn owner(cluster: &Snapshot, uid: Uid) -> Option<&ReplicaSet> {
    cluster
        .replicasets
        .values()
        .find(|rs| rs.meta.uid == uid)
        .map(|rs| &**rs)
}

/// The active pods `uid` controls.
pub fn controlled(cluster: &Snapshot, uid: Uid) -> Vec<&Pod> {
    cluster
        .pods
        .values()
        .filter(|p| p.is_active() && p.meta.controller_ref().is_some_and(|r| r.uid == uid))
        .map(|p| &**p)
        .collect()
}

fn created(cluster: &Snapshot, pod: &Pod) -> Option<&'static str> {
    let r = pod.meta.controller_ref()?;
    let rs = owner(cluster, r.uid)?;
    if rs.meta.is_deleting() {
        return Some(NO_CREATE_WHILE_DELETING);
    }
    over_creates(cluster, pod, rs.meta.uid, rs.spec.replicas).then_some(NO_OVER_CREATION)
}

/// [`NO_OVER_CREATION`] for the create of `pod` under the ReplicaSet `owner`: with it, the
/// owner controls more active pods than `replicas` (the bound the caller can vouch for:
/// the live spec here, the largest spec of a recent window in the monitor).
pub fn over_creates(cluster: &Snapshot, pod: &Pod, owner: Uid, replicas: i32) -> bool {
    let after = controlled(cluster, owner).len() + usize::from(pod.is_active());
    over_created(after, replicas)
}

/// The property a write that turns `old` into `new` breaks by what it does to the pod's
/// controller reference: taking a pod a live ReplicaSet controls ([`NO_STEALING`]), or
/// adopting for an owner that is gone, deleting or does not match ([`ADOPTION_RULES`]).
pub fn adopted(cluster: &Snapshot, old: &Pod, new: &Pod) -> Option<&'static str> {
    let r = new.meta.controller_ref()?;
    if let Some(o) = old.meta.controller_ref() {
        if o.uid == r.uid {
            return None;
        }
        if owner(cluster, o.uid).is_some() {
            return Some(NO_STEALING);
        }
    }
    let live = cluster.replicasets.get(&r.name).map(|rs| &**rs);
    (!adoption_allowed(live, r.uid, new)).then_some(ADOPTION_RULES)
}

fn deleted(
    cluster: &Snapshot,
    pod: &Pod,
    by: Option<Component>,
    promises: &Promises,
    sem: &Semantics,
) -> Option<&'static str> {
    if orphans_dependent(pod, |owner| promises.kept.contains(&(owner, pod.meta.uid))) {
        return Some(ORPHAN_KEEPS_DEPENDENTS);
    }
    if by == Some(Component::GarbageCollector) {
        // The rule is judged on the owners a recording shows, its ReplicaSets: its owners of
        // other kinds are absent or ConfigMaps its steps created (super::super::import::owners),
        // which no event shows; a collector's delete of a pod a live ConfigMap holds is
        // rejected by the witness search rather than named here.
        let owners = Owners {
            replicasets: &cluster.replicasets,
            others: &[],
        };
        if controller_keeps(owners, pod) {
            return Some(GC_DELETES_ONLY_DEPENDENTS_OF_GONE);
        }
        if another_owner_keeps(owners, pod) {
            return Some(GC_SPARES_PODS_OTHER_OWNERS_HOLD);
        }
    }
    if pod.meta.owner_references.is_empty() {
        return Some(DELETE_ONLY_CONTROLLED);
    }
    let r = pod.meta.controller_ref()?;
    let rs = owner(cluster, r.uid)?;
    if rs.meta.is_deleting() || !pod.is_active() {
        return None;
    }
    if surplus(cluster, rs) == 0 {
        let rival = cluster.replicasets.values().any(|other| {
            other.meta.uid != r.uid
                && !other.meta.is_deleting()
                && other.spec.selector.matches(&pod.meta.labels)
        });
        return rival.then_some(DELETE_ONLY_CONTROLLED);
    }
    (!ranked_first(cluster, pod, rs, sem)).then_some(SCALE_DOWN_RANKED)
}

/// [`ORPHAN_KEEPS_DEPENDENTS`]: `pod` references a ReplicaSet that was being deleted with
/// propagation Orphan and promised to keep it (`kept`: whether the owner of that UID did),
/// so no one may delete it on that owner's account.
pub fn orphans_dependent(pod: &Pod, kept: impl Fn(Uid) -> bool) -> bool {
    pod.meta.owner_references.iter().any(|r| kept(r.uid))
}

/// The property the delete of `pod` breaks when the ReplicaSet controller of `deleter` (a
/// ReplicaSet's UID) is known to have sent it: the pod was not its to delete
/// ([`DELETE_ONLY_CONTROLLED`]), or it was a scale-down victim the ranking does not put
/// first ([`SCALE_DOWN_RANKED`]).
pub fn deleted_by(
    cluster: &Snapshot,
    pod: &Pod,
    deleter: Uid,
    sem: &Semantics,
) -> Option<&'static str> {
    if pod.meta.controller_ref().map(|r| r.uid) != Some(deleter) {
        return Some(DELETE_ONLY_CONTROLLED);
    }
    let rs = owner(cluster, deleter)?;
    if rs.meta.is_deleting() || !pod.is_active() || surplus(cluster, rs) == 0 {
        return None;
    }
    (!ranked_first(cluster, pod, rs, sem)).then_some(SCALE_DOWN_RANKED)
}

/// How many more active pods `rs` controls than its spec asks for.
fn surplus(cluster: &Snapshot, rs: &ReplicaSet) -> usize {
    let pods = controlled(cluster, rs.meta.uid);
    pods.len().saturating_sub(rs.spec.replicas.max(0) as usize)
}

/// Whether `pod` is in one of the victim sets the ranking allows for `rs`'s surplus: fewer
/// than `surplus` of the pods rank strictly before it. The same answer as looking for it in
/// `ranking::victim_choices`, without listing the sets (of a tier of 50 tied pods, a
/// scale-down by 5 has millions).
fn ranked_first(cluster: &Snapshot, pod: &Pod, rs: &ReplicaSet, sem: &Semantics) -> bool {
    let pods = controlled(cluster, rs.meta.uid);
    let surplus = pods.len().saturating_sub(rs.spec.replicas.max(0) as usize);
    let keys = ranking::rank_keys(&pods, &ranking::colocation(&pods, &[]), sem);
    let Some(own) = pods
        .iter()
        .position(|p| p.meta.name == pod.meta.name)
        .map(|i| keys[i])
    else {
        return false;
    };
    keys.iter().filter(|k| **k < own).count() < surplus
}

/// A property the model's runs broke (every run that matches a recording), labelled as the
/// switched-on bug or the open catalogue entry that names it, or as not known.
pub(super) fn labelled(p: &str, sem: &Semantics) -> String {
    let switched = sem.bug.map(|b| b.entry()).filter(|e| e.property == p);
    let known = CATALOGUE
        .iter()
        .find(|e| e.status == Status::Open && e.property == p);
    match (switched, known) {
        (Some(bug), _) => format!("{p}: the bug switched on (--bug {})", bug.name),
        (None, Some(entry)) => format!("{p}: {}", entry.known_label()),
        (None, None) => format!("{p}: no open catalogue entry names it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::object::{labels, LabelSelector, OwnerReference, PodPhase};
    use rsmc_spec::profile::Profile;
    use std::sync::Arc;

    fn rs(replicas: i32) -> ReplicaSet {
        let sel = LabelSelector::match_labels(&[("tier", "frontend")]);
        let mut rs = ReplicaSet::new("frontend", replicas, sel, labels(&[("tier", "frontend")]));
        rs.meta.uid = 1;
        rs
    }

    fn pod(name: &str, uid: Uid, owned: bool) -> Pod {
        let mut p = Pod::new(name, labels(&[("tier", "frontend")]));
        p.meta.uid = uid;
        if owned {
            p.meta.owner_references = vec![OwnerReference::controller_of("frontend", 1)];
        }
        p
    }

    fn cluster(rs: ReplicaSet, pods: Vec<Pod>) -> Snapshot {
        let mut s = Snapshot::default();
        s.insert(Object::ReplicaSet(Arc::new(rs)));
        for p in pods {
            s.insert(Object::Pod(Arc::new(p)));
        }
        s
    }

    fn by_system(event_type: EventType, pod: Pod) -> Event {
        Event {
            event_type,
            step: None,
            resource_version: 0,
            object: Object::Pod(Arc::new(pod)),
            floating: false,
            unconfirmed: false,
            or_system: false,
            by: None,
        }
    }

    fn judge(before: &Snapshot, event: Event) -> Option<&'static str> {
        broken_by(before, &[event], 0, &Profile::K8s120.semantics())
    }

    #[test]
    fn a_create_past_the_replicas_is_over_creation() {
        let before = cluster(rs(1), vec![pod("a", 2, true)]);
        let extra = by_system(EventType::Added, pod("b", 3, true));
        assert_eq!(judge(&before, extra), Some(NO_OVER_CREATION));
        let before = cluster(rs(2), vec![pod("a", 2, true)]);
        let second = by_system(EventType::Added, pod("b", 3, true));
        assert_eq!(judge(&before, second), None);
    }

    #[test]
    fn adopting_for_a_deleting_owner_breaks_the_adoption_rules() {
        let mut deleting = rs(1);
        deleting.meta.deletion_timestamp = Some(7);
        let before = cluster(deleting, vec![pod("a", 2, false)]);
        let adopt = by_system(EventType::Modified, pod("a", 2, true));
        assert_eq!(judge(&before, adopt), Some(ADOPTION_RULES));
        let before = cluster(rs(1), vec![pod("a", 2, false)]);
        let adopt = by_system(EventType::Modified, pod("a", 2, true));
        assert_eq!(judge(&before, adopt), None);
    }

    #[test]
    fn deleting_a_pod_nobody_owns_breaks_delete_only_controlled() {
        let before = cluster(rs(0), vec![pod("bare", 2, false)]);
        let gone = by_system(EventType::Deleted, pod("bare", 2, false));
        assert_eq!(judge(&before, gone), Some(DELETE_ONLY_CONTROLLED));
    }

    #[test]
    fn deleting_a_running_pod_before_a_pending_one_breaks_the_ranking() {
        let mut running = pod("running", 2, true);
        running.node_name = Some("node-1".into());
        running.phase = PodPhase::Running;
        let pending = pod("pending", 3, true);
        let before = cluster(rs(1), vec![running.clone(), pending.clone()]);
        let mut terminating = running;
        terminating.meta.deletion_timestamp = Some(9);
        let wrong = by_system(EventType::Modified, terminating);
        assert_eq!(judge(&before, wrong), Some(SCALE_DOWN_RANKED));
        let right = by_system(EventType::Deleted, pending);
        assert_eq!(judge(&before, right), None);
    }

    /// Fifty tied pods scaled down by five: any of them may go, and deciding it does not
    /// list the millions of victim sets.
    #[test]
    fn a_large_tie_is_judged_without_listing_the_victim_sets() {
        let pods: Vec<Pod> = (0..50)
            .map(|i| pod(&format!("p{i}"), 100 + i, true))
            .collect();
        let before = cluster(rs(45), pods);
        let started = std::time::Instant::now();
        let gone = by_system(EventType::Deleted, pod("p7", 107, true));
        assert_eq!(judge(&before, gone), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_second_controller_reference_breaks_single_controller() {
        let before = cluster(rs(1), vec![pod("a", 2, true)]);
        let mut two = pod("a", 2, true);
        two.meta
            .owner_references
            .push(OwnerReference::controller_of("canary", 9));
        let both = by_system(EventType::Modified, two);
        assert_eq!(judge(&before, both), Some(SINGLE_CONTROLLER));
    }

    /// A delete of a pod whose owner is (or was, earlier in the recording) being deleted
    /// with propagation Orphan: the pod was that delete's dependent and must have stayed.
    #[test]
    fn deleting_a_dependent_of_an_orphan_delete_breaks_orphan_keeps_dependents() {
        let mut orphaning = rs(1);
        orphaning.meta.deletion_timestamp = Some(7);
        orphaning.meta.finalizers = vec![Finalizer::Orphan];
        let before = cluster(orphaning.clone(), vec![pod("a", 2, true)]);
        let gone = by_system(EventType::Deleted, pod("a", 2, true));
        assert_eq!(judge(&before, gone.clone()), Some(ORPHAN_KEEPS_DEPENDENTS));
        // The owner was seen orphaning and is gone by the time of the delete: still named.
        let owner_gone = Event {
            event_type: EventType::Deleted,
            step: None,
            resource_version: 0,
            object: Object::ReplicaSet(Arc::new(orphaning)),
            floating: false,
            unconfirmed: false,
            or_system: false,
            by: None,
        };
        let before = cluster(rs(1), vec![pod("a", 2, true)]);
        let mut seen_orphaning = rs(1);
        seen_orphaning.meta.deletion_timestamp = Some(7);
        seen_orphaning.meta.finalizers = vec![Finalizer::Orphan];
        let marked = Event {
            event_type: EventType::Modified,
            step: Some(1),
            resource_version: 0,
            object: Object::ReplicaSet(Arc::new(seen_orphaning)),
            floating: false,
            unconfirmed: false,
            or_system: false,
            by: None,
        };
        let events = [marked.clone(), owner_gone.clone(), gone];
        let sem = Profile::K8s120.semantics();
        assert_eq!(
            broken_by(&before, &events, 2, &sem),
            Some(ORPHAN_KEEPS_DEPENDENTS)
        );
        // A pod created under it after the orphan delete began (a sync in flight) was never
        // its dependent: the collector deletes it once the owner is gone, as the model's.
        let late = by_system(EventType::Added, pod("b", 3, true));
        let late_gone = by_system(EventType::Deleted, pod("b", 3, true));
        let events = [marked, owner_gone, late, late_gone];
        assert_eq!(broken_by(&before, &events, 3, &sem), None);
        // A Background delete's dependents are the GC's to collect.
        let mut background = rs(1);
        background.meta.deletion_timestamp = Some(7);
        let before = cluster(background, vec![pod("a", 2, true)]);
        let gone = by_system(EventType::Deleted, pod("a", 2, true));
        assert_eq!(judge(&before, gone), None);
    }

    /// A pod another live ReplicaSet controls, with no surplus there, deleted while this
    /// ReplicaSet also matches it: the work of a controller acting on a pod it does not
    /// control (a stale cache that still shows the pod as its own).
    #[test]
    fn deleting_a_pod_another_live_replicaset_controls_breaks_delete_only_controlled() {
        let sel = LabelSelector::match_labels(&[("tier", "frontend")]);
        let mut canary = ReplicaSet::new("canary", 1, sel, labels(&[("tier", "frontend")]));
        canary.meta.uid = 9;
        let mut before = cluster(rs(1), vec![pod("a", 2, true)]);
        before.insert(Object::ReplicaSet(Arc::new(canary)));
        let gone = by_system(EventType::Deleted, pod("a", 2, true));
        assert_eq!(judge(&before, gone.clone()), Some(DELETE_ONLY_CONTROLLED));
        // With no other ReplicaSet matching, nothing names it.
        let alone = cluster(rs(1), vec![pod("a", 2, true)]);
        assert_eq!(judge(&alone, gone), None);
    }

    #[test]
    fn the_collector_deleting_a_live_owners_pod_breaks_its_rule_when_named() {
        let mut collected = by_system(EventType::Deleted, pod("a", 2, true));
        let owned = cluster(rs(1), vec![pod("a", 2, true)]);
        // Unnamed, it is anyone's delete of a pod its owner has no surplus of: nothing.
        assert_eq!(judge(&owned, collected.clone()), None);
        collected.by = Some(Component::GarbageCollector);
        assert_eq!(
            judge(&owned, collected.clone()),
            Some(GC_DELETES_ONLY_DEPENDENTS_OF_GONE)
        );
        // Its owner deleting its dependents in the foreground: the collector's to delete.
        let mut deleting = rs(1);
        deleting.meta.deletion_timestamp = Some(7);
        deleting.meta.finalizers.push(Finalizer::ForegroundDeletion);
        let foreground = cluster(deleting, vec![pod("a", 2, true)]);
        assert_eq!(judge(&foreground, collected.clone()), None);
        // The same delete named the controller's is judged as before.
        collected.by = Some(Component::ReplicaSetController);
        assert_eq!(judge(&owned, collected), None);
    }

    #[test]
    fn the_collector_deleting_a_pod_another_live_owner_holds_breaks_its_rule() {
        // frontend's pod, also referenced (not as controller) by canary.
        let sel = LabelSelector::match_labels(&[("tier", "canary")]);
        let mut canary = ReplicaSet::new("canary", 1, sel, labels(&[("tier", "canary")]));
        canary.meta.uid = 9;
        let mut shared = pod("a", 2, true);
        let mut other = OwnerReference::controller_of("canary", 9);
        other.controller = false;
        other.block_owner_deletion = false;
        shared.meta.owner_references.push(other);
        let mut collected = by_system(EventType::Deleted, shared.clone());
        collected.by = Some(Component::GarbageCollector);
        // frontend gone: canary still holds the pod.
        let mut held = Snapshot::default();
        held.insert(Object::ReplicaSet(Arc::new(canary.clone())));
        held.insert(Object::Pod(Arc::new(shared.clone())));
        assert_eq!(
            judge(&held, collected.clone()),
            Some(GC_SPARES_PODS_OTHER_OWNERS_HOLD)
        );
        // Both live: the controller's rule is the one broken first.
        let mut both = cluster(rs(1), vec![shared.clone()]);
        both.insert(Object::ReplicaSet(Arc::new(canary.clone())));
        assert_eq!(
            judge(&both, collected.clone()),
            Some(GC_DELETES_ONLY_DEPENDENTS_OF_GONE)
        );
        // canary deleting its dependents in the foreground: the collector's to delete.
        canary.meta.deletion_timestamp = Some(7);
        canary.meta.finalizers.push(Finalizer::ForegroundDeletion);
        let mut waiting = Snapshot::default();
        waiting.insert(Object::ReplicaSet(Arc::new(canary)));
        waiting.insert(Object::Pod(Arc::new(shared)));
        assert_eq!(judge(&waiting, collected), None);
    }

    #[test]
    fn the_runners_own_writes_are_not_judged() {
        let before = cluster(rs(0), vec![pod("bare", 2, false)]);
        let mut mine = by_system(EventType::Deleted, pod("bare", 2, false));
        mine.step = Some(3);
        assert_eq!(judge(&before, mine), None);
    }
}
