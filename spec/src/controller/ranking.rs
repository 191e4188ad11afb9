//! The scale-down ranking: which pods go first.
//!
//! pkg/controller/controller_utils.go `ActivePodsWithRanks.Less` and
//! pkg/controller/replicaset/replica_set.go `getPodsToDelete`,
//! `getPodsRankedByRelatedPodsOnSameNode`. Rules, first decisive wins:
//! 1. unassigned before assigned; 2. Pending < Unknown < Running; 3. not ready before ready;
//! 4. [upstream] lower pod-deletion-cost first; 5. more co-located related pods first;
//! 6. both ready: ready more recently first; 7. more restarts first; 8. newer first.
//!
//! `sort.Sort` is not stable, so pods equal under every rule may go in any order. The model
//! therefore computes a rank key per pod and returns every victim set the sort could pick.

use crate::object::{Pod, PodPhase};
use crate::profile::Semantics;
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// `podPhaseToOrdinal`.
fn phase_ordinal(phase: PodPhase) -> u8 {
    match phase {
        PodPhase::Pending => 0,
        PodPhase::Unknown => 1,
        PodPhase::Running => 2,
        _ => 0,
    }
}

/// A pod's position in the ranking; smaller sorts first (deleted first). Pods with equal keys
/// are ties. Times are whole seconds, so pods created (or turned ready) in the same second
/// tie, as they do upstream; a time that a profile compares in log buckets (upstream's
/// LogarithmicScaleDown, with a random-UID tie-break) is left out of the key: every order is
/// possible.
pub type RankKey = (
    bool,                 // assigned
    u8,                   // phase ordinal
    bool,                 // ready
    i32,                  // deletion cost (0 when the profile ignores it)
    Reverse<usize>,       // co-located related pods (more first)
    Reverse<Option<u32>>, // ready since (more recent first; only both-ready pods differ)
    Reverse<u32>,         // restarts (more first)
    Reverse<u32>,         // creation second (newer first)
);

/// The rank key of `pod`, given how many active related pods share its node.
pub fn rank_key(pod: &Pod, colocated: usize, sem: &Semantics) -> RankKey {
    let times_in_buckets = sem.logarithmic_scale_down;
    (
        pod.node_name.is_some(),
        phase_ordinal(pod.phase),
        pod.is_ready(),
        if sem.deletion_cost_rank {
            pod.deletion_cost
        } else {
            0
        },
        Reverse(colocated),
        Reverse(if times_in_buckets {
            None
        } else {
            pod.ready_since
        }),
        Reverse(pod.restarts),
        Reverse(if times_in_buckets {
            0
        } else {
            pod.meta.created
        }),
    )
}

/// `getPodsRankedByRelatedPodsOnSameNode`: per pod, the number of active related pods on its
/// node (unscheduled pods share the node "").
pub fn colocation(pods: &[&Pod], related: &[&Pod]) -> Vec<usize> {
    let mut on_node: BTreeMap<Option<&str>, usize> = BTreeMap::new();
    for p in related.iter().filter(|p| p.is_active()) {
        *on_node.entry(p.node_name.as_deref()).or_default() += 1;
    }
    pods.iter()
        .map(|p| on_node.get(&p.node_name.as_deref()).copied().unwrap_or(0))
        .collect()
}

/// Which end of the ranking victims come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Upstream: the pods ranked first are deleted first.
    Ranked,
    /// [bug ignore-ranking] the pods the ranking would keep longest are deleted first.
    KeptFirst,
}

/// Where a scale-down by `diff` cuts the ranking: the pods that go whichever set is picked,
/// and the tier of equal rank that straddles the cut, of which `take` go.
struct Cut<'a> {
    sure: Vec<String>,
    tier: Vec<&'a str>,
    take: usize,
}

fn cut<'a>(
    pods: &[&'a Pod],
    related: &[&Pod],
    diff: usize,
    sem: &Semantics,
    order: Order,
) -> Cut<'a> {
    if diff == 0 || diff >= pods.len() {
        let sure = match diff {
            0 => Vec::new(),
            _ => pods.iter().map(|p| p.meta.name.clone()).collect(),
        };
        return Cut {
            sure,
            tier: Vec::new(),
            take: 0,
        };
    }
    let ranks = colocation(pods, related);
    let mut keyed: Vec<(RankKey, &str)> = pods
        .iter()
        .zip(ranks)
        .map(|(p, r)| (rank_key(p, r, sem), p.meta.name.as_str()))
        .collect();
    keyed.sort();
    if order == Order::KeptFirst {
        keyed.reverse();
    }
    let cut_key = keyed[diff - 1].0;
    let goes_first = |k: &RankKey| match order {
        Order::Ranked => *k < cut_key,
        Order::KeptFirst => *k > cut_key,
    };
    let sure: Vec<String> = keyed
        .iter()
        .filter(|(k, _)| goes_first(k))
        .map(|(_, n)| n.to_string())
        .collect();
    let tier: Vec<&str> = keyed
        .iter()
        .filter(|(k, _)| *k == cut_key)
        .map(|(_, n)| *n)
        .collect();
    let take = diff - sure.len();
    Cut { sure, tier, take }
}

/// Every set of `diff` pods `getPodsToDelete` may return, as sorted name lists. Whole tiers
/// of equal rank go first; from the tier that straddles the cut, any subset of the right
/// size may be chosen. `order` says from which end of the ranking.
pub fn victim_choices(
    pods: &[&Pod],
    related: &[&Pod],
    diff: usize,
    sem: &Semantics,
    order: Order,
) -> Vec<Vec<String>> {
    let Cut { sure, tier, take } = cut(pods, related, diff, sem, order);
    combinations(&tier, take)
        .into_iter()
        .map(|pick| {
            let mut set = sure.clone();
            set.extend(pick.into_iter().map(str::to_string));
            set.sort();
            set
        })
        .collect()
}

/// Whether `chosen` is one of the [`victim_choices`], without making them all: a sync picking
/// 17 victims among 20 tied pods has 1,140 sets, and each pick is checked against them.
pub fn is_victim_choice(
    pods: &[&Pod],
    related: &[&Pod],
    diff: usize,
    sem: &Semantics,
    order: Order,
    chosen: &[String],
) -> bool {
    let Cut { sure, tier, take } = cut(pods, related, diff, sem, order);
    let mut distinct = chosen.to_vec();
    distinct.sort();
    distinct.dedup();
    distinct.len() == chosen.len()
        && chosen.len() == sure.len() + take
        && chosen
            .iter()
            .all(|c| sure.contains(c) || tier.contains(&c.as_str()))
        && sure.iter().all(|s| chosen.contains(s))
}

/// All `k`-element subsets of `items`, in order.
fn combinations<'a>(items: &[&'a str], k: usize) -> Vec<Vec<&'a str>> {
    if k == 0 {
        return vec![vec![]];
    }
    if items.len() < k {
        return vec![];
    }
    let mut with_first: Vec<Vec<&str>> = combinations(&items[1..], k - 1)
        .into_iter()
        .map(|mut rest| {
            rest.insert(0, items[0]);
            rest
        })
        .collect();
    with_first.extend(combinations(&items[1..], k));
    with_first
}
