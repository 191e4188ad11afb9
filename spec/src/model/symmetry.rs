//! Pods with generated names are interchangeable: states equal up to which of them is which
//! are one state to the safety search.
//!
//! A ReplicaSet's pods are made from one template and named by the API server
//! (`generateName`); nothing the controller, the garbage collector or the environment does
//! depends on which of them carries which name or UID, only on what each one is (labels,
//! owner, phase, node, revisions) — every choice among them is explored in every order (the
//! ranking's ties, the claim order, the order of parallel deletes, which pod a user acts
//! on), and names and UIDs are only ever compared for equality. So renaming them by any
//! bijection maps runs to runs and keeps every property, which mentions no pod by name. When
//! two pods of frontend exist and the user marks one of them ready, the two ways of doing so
//! lead to one state here.
//!
//! Revisions are part of what a pod is, but not all of them for ever. Every pod informer in
//! use (each running controller's, each in-flight sync's snapshot, the garbage collector's)
//! has a position, and the log holds no pod event below the lowest: the **settled floor**. A
//! pod revision below it is one every watcher has seen, and the model compares object
//! revisions only for equality (preconditions, a handler's "nothing changed") and with
//! positions only for order — which a settled revision passes for every position there is or
//! will be. So the order among settled revisions is unobservable, and permuting them (with
//! the pods holding them) maps runs to runs too. That is what makes a scale-down cheap:
//! deleting pod a then pod b, or b then a, of pods created long ago, is one state once the
//! names are set aside — where an order-keeping renaming of revisions alone still told which
//! was older, and a scale-down of k pods made 2^k subsets and their orders.
//!
//! The representative: pods are put in an order that does not depend on their identities —
//! live pods written above the floor by their `resourceVersion` (every write has its own
//! revision, so that order is total), then settled live pods by what they are (the pod with
//! its name, UID and settled revisions blanked) and by the places the state remembers them
//! (an expected deletion, a sync's claim or victim list, a status count, an orphan promise, a
//! user's selection), then pods only the watch log still holds by their last event's revision
//! — and the `i`-th is renamed to `<prefix>#i` with UID `u32::MAX - i`. `#` is not a
//! character of any real name, so a new name can never meet an old one. Then the settled
//! revisions take their slots in the order the renamed state first shows them. A name that
//! only the controller's memory still holds (an expected deletion, a pod a sync claimed)
//! belongs to no object and keeps its name: the renaming stays a bijection, it merely merges
//! fewer states.
//!
//! Settled pods that tie on all of that are interchangeable, so either order gives the same
//! representative: the count of classes does not depend on which member a search met first
//! (`spec/tests/symmetry.rs` checks it with one thread and two). What is not merged: pods
//! written above the floor keep their order, as some informer can still tell it.
//!
//! Bare pods (named in the configuration) are not renamed: the environment creates them by
//! name, so their names mean something.
//!
//! The liveness search and the oracle's trace-level searches do not use this quotient (see
//! [`super::canonical`]): their fairness classes and name bindings hold pod names. The
//! oracle's outcome searches (`rsmc replay`, a settle point's allowed states) do, with the
//! pods already bound to a cluster's names pinned ([`renamed`]).

use super::state::State;
use crate::api::names::{looks_generated, SUFFIX_LEN};
use crate::api::Change;
use crate::controller::sync::Phase;
use crate::object::{Pod, Rv, Uid};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The renaming of a state's generated pods, by old name and by old UID.
#[derive(Default)]
struct Renaming {
    by_name: BTreeMap<String, String>,
    by_uid: BTreeMap<Uid, Uid>,
}

impl Renaming {
    /// Identity-free positions of every generated pod the state holds an object of.
    fn of(state: &State, pinned: &BTreeSet<String>) -> Renaming {
        let floor = settled_floor(state);
        let free = |pod: &Pod| pod.meta.generate_name.is_some() && !pinned.contains(&pod.meta.name);
        let places = places(state);
        let mut order: BTreeMap<&str, (Key, &Pod)> = BTreeMap::new();
        for pod in state.api.pods.values() {
            if free(pod) {
                let key = if pod.meta.resource_version < floor {
                    let at = places.get(pod.meta.name.as_str()).cloned();
                    Key::Settled(Box::new((blank(pod, floor), at.unwrap_or_default())))
                } else {
                    Key::Live(pod.meta.resource_version)
                };
                order.insert(&pod.meta.name, (key, pod));
            }
        }
        for (rv, pod) in logged_pods(state) {
            if !free(pod) {
                continue;
            }
            order
                .entry(&pod.meta.name)
                .and_modify(|(k, _)| {
                    if matches!(k, Key::Logged(last) if rv > *last) {
                        *k = Key::Logged(rv);
                    }
                })
                .or_insert((Key::Logged(rv), pod));
        }
        // Stable: pods with equal keys stay in name order (see the module docs).
        let mut pods: Vec<(Key, &Pod)> = order.into_values().collect();
        pods.sort_by(|a, b| a.0.cmp(&b.0));
        let mut renaming = Renaming::default();
        let mut next = 0u32;
        for (_, pod) in pods {
            let prefix = pod.meta.generate_name.as_deref().unwrap_or_default();
            renaming.by_uid.insert(pod.meta.uid, u32::MAX - next);
            renaming
                .by_name
                .insert(pod.meta.name.clone(), format!("{prefix}#{next}"));
            next += 1;
        }
        renaming.gone(state, pinned, next);
        renaming
    }

    /// Pods that are gone for good but still remembered: a name in an expected deletion or
    /// in a status write's count, a UID in an orphan promise, with no object left in the
    /// API server or its log. A generated name or UID is never handed out twice, so such a
    /// pod can never be met again; only where it is remembered tells it apart. They are
    /// ordered by those places (which name no pod), so two remembered in exactly the same
    /// places are interchangeable and either order gives the same representative.
    fn gone(&mut self, state: &State, pinned: &BTreeSet<String>, mut next: u32) {
        type Places<'a> = Vec<(u8, u64, &'a str)>;
        let mut names: BTreeMap<&str, Places> = BTreeMap::new();
        let mut uids: BTreeMap<Uid, Places> = BTreeMap::new();
        for (c, controller) in state.controllers.iter().enumerate() {
            for (key, e) in &controller.expectations.0 {
                for name in &e.deleting {
                    names.entry(name).or_default().push((0, c as u64, key));
                }
            }
        }
        for (owner, counted) in &state.ghost.counted {
            for name in counted {
                names.entry(name).or_default().push((1, *owner as u64, ""));
            }
        }
        for (owner, pod) in &state.ghost.orphan_promises {
            uids.entry(*pod).or_default().push((2, *owner as u64, ""));
        }
        let mut gone_names: Vec<(Places, &str)> = names
            .into_iter()
            .filter(|(name, _)| {
                looks_generated(name)
                    && !self.by_name.contains_key(*name)
                    && !pinned.contains(*name)
            })
            .map(|(name, places)| (places, name))
            .collect();
        gone_names.sort();
        for (_, name) in gone_names {
            let prefix = &name[..name.len() - SUFFIX_LEN];
            self.by_name
                .insert(name.to_string(), format!("{prefix}#{next}"));
            next += 1;
        }
        let held: BTreeSet<Uid> = state
            .api
            .pods
            .values()
            .map(|p| &**p)
            .chain(logged_pods(state).map(|(_, p)| p))
            .map(|p| p.meta.uid)
            .collect();
        let mut gone_uids: Vec<(Places, Uid)> = uids
            .into_iter()
            .filter(|(uid, _)| !held.contains(uid))
            .map(|(uid, places)| (places, uid))
            .collect();
        gone_uids.sort();
        for (_, uid) in gone_uids {
            self.by_uid.insert(uid, u32::MAX - next);
            next += 1;
        }
    }

    fn name(&self, name: &mut String) {
        if let Some(new) = self.by_name.get(name.as_str()) {
            name.clone_from(new);
        }
    }

    fn names(&self, names: &mut BTreeSet<String>) {
        *names = std::mem::take(names)
            .into_iter()
            .map(|mut n| {
                self.name(&mut n);
                n
            })
            .collect();
    }

    fn uid(&self, uid: &mut Uid) {
        if let Some(new) = self.by_uid.get(uid) {
            *uid = *new;
        }
    }

    fn pod(&self, pod: &mut Arc<Pod>) {
        if self.by_name.contains_key(&pod.meta.name) {
            let meta = &mut Arc::make_mut(pod).meta;
            self.name(&mut meta.name);
            self.uid(&mut meta.uid);
        }
    }
}

/// Every pod object the watch log holds, with the revision of its event.
fn logged_pods(state: &State) -> impl Iterator<Item = (Rv, &Pod)> + '_ {
    state.api.log.iter().flat_map(|e| {
        let objects = match &e.change {
            Change::Pod { before, after } => [before.as_deref(), after.as_deref()],
            Change::ReplicaSet { .. } => [None, None],
        };
        objects.into_iter().flatten().map(move |p| (e.rv, p))
    })
}

/// Where a generated pod stands in the order of the representative. Live pods written since
/// the settled floor are told apart by their revision, pods only the log still holds by their
/// last event's; a settled pod (written before every watcher's position) by what it is and
/// where the state remembers it, as its revision no longer tells it apart.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Live(Rv),
    Settled(Box<(Pod, Places)>),
    Logged(Rv),
}

/// The identity-free places a pod's name or UID is remembered outside its objects: a tag,
/// then the controller or owner, the ReplicaSet key, and a position where the order is fixed.
type Places = Vec<(u8, u64, String, usize)>;

/// Every generated pod's places, by name.
fn places(state: &State) -> BTreeMap<&str, Places> {
    let mut at: BTreeMap<&str, Places> = BTreeMap::new();
    let uids: BTreeMap<Uid, &str> = state
        .api
        .pods
        .values()
        .map(|p| (p.meta.uid, p.meta.name.as_str()))
        .collect();
    for (c, controller) in state.controllers.iter().enumerate() {
        let c = c as u64;
        for (key, e) in &controller.expectations.0 {
            for name in &e.deleting {
                at.entry(name).or_default().push((0, c, key.clone(), 0));
            }
        }
        for task in controller.workers.iter().flatten() {
            let key = &task.key;
            for name in &task.claimed {
                at.entry(name).or_default().push((1, c, key.clone(), 0));
            }
            match &task.phase {
                Phase::Claim {
                    ops, fixed, next, ..
                } => {
                    let named = ops.iter().map(|(n, d)| (n, 2 + *d as u8));
                    in_order(&mut at, named, (*fixed).max(*next), c, key);
                }
                Phase::Delete {
                    victims,
                    fixed,
                    next,
                    ..
                } => {
                    let named = victims.iter().map(|n| (n, 9));
                    in_order(&mut at, named, (*fixed).max(*next), c, key);
                }
                _ => {}
            }
        }
    }
    for (owner, counted) in &state.ghost.counted {
        for name in counted {
            at.entry(name)
                .or_default()
                .push((10, *owner as u64, String::new(), 0));
        }
    }
    for (owner, pod) in &state.ghost.orphan_promises {
        if let Some(name) = uids.get(pod) {
            at.entry(name)
                .or_default()
                .push((11, *owner as u64, String::new(), 0));
        }
    }
    if let Some(selected) = &state.script.selected {
        for name in &selected.pods {
            at.entry(name).or_default().push((12, 0, String::new(), 0));
        }
    }
    for places in at.values_mut() {
        places.sort();
    }
    at
}

/// Places in an order whose first `open` entries are fixed: a position there, a set after.
fn in_order<'a>(
    at: &mut BTreeMap<&'a str, Places>,
    named: impl Iterator<Item = (&'a String, u8)>,
    open: usize,
    controller: u64,
    key: &str,
) {
    for (i, (name, tag)) in named.enumerate() {
        let place = if i < open { i } else { usize::MAX };
        at.entry(name.as_str())
            .or_default()
            .push((tag, controller, key.to_string(), place));
    }
}

/// A settled pod as the representative compares it: without its identity, and without the
/// revisions no watcher can order any more.
fn blank(pod: &Pod, floor: Rv) -> Pod {
    let mut p = pod.clone();
    p.meta.name.clear();
    p.meta.uid = 0;
    p.meta.resource_version = 0;
    if p.meta.deletion_timestamp.is_some_and(|d| d < floor) {
        p.meta.deletion_timestamp = Some(0);
    }
    p
}

/// The settled floor of the pod revisions: below the position of every pod informer still
/// in use and below every pod event the log still holds. What was written below it every
/// watcher has seen, so only its equality with other revisions can matter, not its order.
fn settled_floor(state: &State) -> Rv {
    let logged = state
        .api
        .log
        .iter()
        .filter(|e| matches!(e.change, Change::Pod { .. }))
        .map(|e| e.rv)
        .min();
    state
        .positions_in_use()
        .map(|p| p.pods)
        .chain(logged)
        .min()
        .unwrap_or(state.api.rv + 1)
}

/// `state` with its generated pods renamed to the representative identities and its settled
/// pod revisions put in the representative's order, or `None` when it has no generated pods.
/// The `pinned` pods keep their names: someone outside the state refers to them by name (the
/// oracle's bindings of the model's pods to a cluster's).
pub fn renamed(state: &State, pinned: &BTreeSet<String>) -> Option<State> {
    let renaming = Renaming::of(state, pinned);
    if renaming.by_name.is_empty() && renaming.by_uid.is_empty() {
        return None;
    }
    let mut s = renaming.apply(state);
    reorder_settled_revisions(&mut s, settled_floor(state));
    Some(s)
}

/// Give the settled pod revisions (below `floor`) their slots in the order the renamed state
/// first shows them: pods in name order, then the log's pod objects in log order. The slots
/// are the same set of values, so every other revision keeps its place.
fn reorder_settled_revisions(s: &mut State, floor: Rv) {
    let settled = |rv: Rv| rv > 0 && rv < floor;
    let mut met: Vec<Rv> = Vec::new();
    super::canonical::each_pod_revision(s, &mut |rv| {
        if settled(*rv) && !met.contains(rv) {
            met.push(*rv);
        }
    });
    let mut slots = met.clone();
    slots.sort_unstable();
    if slots == met {
        return;
    }
    let map: BTreeMap<Rv, Rv> = met.into_iter().zip(slots).collect();
    super::canonical::each_pod_revision(s, &mut |rv| {
        if let Some(new) = map.get(rv) {
            *rv = *new;
        }
    });
}

impl Renaming {
    /// `state` with every generated pod's name and UID replaced by this renaming, wherever
    /// the state holds one; containers that are sets in some order are put back in order.
    fn apply(&self, state: &State) -> State {
        let renaming = self;
        let mut s = state.clone();
        let pods = std::mem::take(&mut s.api.pods);
        for (mut name, mut pod) in pods {
            renaming.name(&mut name);
            renaming.pod(&mut pod);
            s.api.pods.insert(name, pod);
        }
        for event in &mut s.api.log {
            if let Change::Pod { before, after } = &mut event.change {
                renaming.name(&mut event.name);
                for pod in [before, after].into_iter().flatten() {
                    renaming.pod(pod);
                }
            }
        }
        for c in &mut s.controllers {
            for e in c.expectations.0.values_mut() {
                renaming.names(&mut e.deleting);
            }
            for task in c.workers.iter_mut().flatten() {
                task.claimed.iter_mut().for_each(|n| renaming.name(n));
                task.claimed.sort();
                match &mut task.phase {
                    Phase::Claim {
                        ops, fixed, next, ..
                    } => {
                        ops.iter_mut().for_each(|(n, _)| renaming.name(n));
                        // What is done or placed keeps its order; the rest is a set, in name
                        // order.
                        let open = (*fixed).max(*next).min(ops.len());
                        ops[open..].sort_by(|a, b| a.0.cmp(&b.0));
                    }
                    Phase::Delete {
                        victims,
                        fixed,
                        next,
                        ..
                    } => {
                        victims.iter_mut().for_each(|n| renaming.name(n));
                        let open = (*fixed).max(*next).min(victims.len());
                        victims[open..].sort();
                    }
                    _ => {}
                }
            }
            c.canonicalize();
        }
        s.ghost.orphan_promises = std::mem::take(&mut s.ghost.orphan_promises)
            .into_iter()
            .map(|(owner, mut pod)| {
                renaming.uid(&mut pod);
                (owner, pod)
            })
            .collect();
        for counted in s.ghost.counted.values_mut() {
            renaming.names(counted);
        }
        if let Some(selected) = &mut s.script.selected {
            renaming.names(&mut selected.pods);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::canonical::UpToRevisions;
    use super::super::{Action, RsModel};
    use super::*;
    use crate::config::Config;
    use crate::liveness::graph::fingerprint;
    use stateright::Model;
    use std::collections::VecDeque;

    /// The first state (breadth first) of the default preset with two live generated pods,
    /// neither ready, that the kubelet may mark ready.
    fn two_unready_pods(model: &RsModel) -> (State, Vec<String>) {
        let mut queue: VecDeque<State> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(s) = queue.pop_front() {
            actions.clear();
            model.actions(&s, &mut actions);
            let ready: Vec<String> = actions
                .iter()
                .filter_map(|a| match a {
                    Action::PodReady { name } if looks_generated(name) => Some(name.clone()),
                    _ => None,
                })
                .collect();
            let history = s
                .api
                .log
                .iter()
                .any(|e| matches!(e.change, Change::Pod { .. }));
            if ready.len() >= 2 && !history && s.api.pods.values().all(|p| !p.is_ready()) {
                return (s, ready);
            }
            queue.extend(actions.drain(..).filter_map(|a| model.next_state(&s, a)));
        }
        panic!("the default preset creates two pods");
    }

    /// A state and the same state with two of its generated pods' names and UIDs swapped
    /// everywhere are one state to the safety search, and two to the searches that keep names.
    #[test]
    fn swapping_two_generated_pods_gives_the_same_state() {
        let model = RsModel::new(
            Config::load("default").unwrap(),
            crate::profile::Profile::K8s120,
        );
        let (mut s, names) = two_unready_pods(&model);
        // Make the two pods differ, so that the swap is not the identity.
        let action = Action::PodReady {
            name: names[0].clone(),
        };
        s = model.next_state(&s, action).expect("enabled");
        let uid = |name: &str| s.api.pods[name].meta.uid;
        let (a, b) = (names[0].clone(), names[1].clone());
        let swap = Renaming {
            by_uid: BTreeMap::from([(uid(&a), uid(&b)), (uid(&b), uid(&a))]),
            by_name: BTreeMap::from([(a.clone(), b.clone()), (b, a)]),
        };
        let swapped = swap.apply(&s);
        assert_ne!(swapped, s);
        assert_eq!(fingerprint(&swapped), fingerprint(&s));
        assert_ne!(
            fingerprint(&UpToRevisions(&swapped)),
            fingerprint(&UpToRevisions(&s))
        );
    }

    /// The representative of a state is a fixed point: renaming it again changes nothing
    /// but the way it is reached, and the renamed state holds no generated name any more.
    #[test]
    fn the_representative_names_no_generated_pod() {
        let model = RsModel::new(
            Config::load("default").unwrap(),
            crate::profile::Profile::K8s120,
        );
        let (s, names) = two_unready_pods(&model);
        let r = renamed(&s, &BTreeSet::new()).expect("there are generated pods");
        for name in &names {
            assert!(!r.api.pods.contains_key(name));
        }
        assert!(r.api.pods.keys().filter(|n| n.contains('#')).count() >= 2);
        assert_eq!(
            renamed(&r, &BTreeSet::new()).map(|again| again == r),
            Some(true)
        );
    }
}
