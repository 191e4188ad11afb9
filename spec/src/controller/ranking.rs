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

/// The rank keys of `pods`, given how many active related pods share each one's node.
///
/// Where ready times compare in log buckets, two Ready pods whose ready times differ are
/// ordered by bucket or, in one bucket, by random UID, and the restart rule is never reached
/// (`ActivePodsWithRanks.Less` applies it only when the times are equal). A key cannot say
/// "restarts decide unless the ready times differ" for each pair, so when the Ready pods do
/// not all share one ready time their restarts are left out of their keys: every order of
/// them the restarts would have decided is allowed (a superset of upstream's, never fewer).
/// Pods that are not Ready skip the time rule and keep their restarts.
pub fn rank_keys(pods: &[&Pod], colocated: &[usize], sem: &Semantics) -> Vec<RankKey> {
    let times_in_buckets = sem.logarithmic_scale_down;
    let mut ready_times = pods.iter().filter_map(|p| p.ready_since);
    let first = ready_times.next();
    let ready_restarts_decide = !times_in_buckets || ready_times.all(|t| Some(t) == first);
    pods.iter()
        .zip(colocated)
        .map(|(pod, &colocated)| {
            let restarts = if pod.is_ready() && !ready_restarts_decide {
                0
            } else {
                pod.restarts
            };
            (
                pod.node_name.is_some(),
                phase_ordinal(pod.phase),
                pod.is_ready(),
                if sem.deletion_cost_rank {
                    pod.ranking_cost()
                } else {
                    0
                },
                Reverse(colocated),
                Reverse(if times_in_buckets {
                    None
                } else {
                    pod.ready_since
                }),
                Reverse(restarts),
                Reverse(if times_in_buckets {
                    0
                } else {
                    pod.meta.created
                }),
            )
        })
        .collect()
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
    let keys = rank_keys(pods, &colocation(pods, related), sem);
    let mut keyed: Vec<(RankKey, &str)> = keys
        .into_iter()
        .zip(pods.iter().map(|p| p.meta.name.as_str()))
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

/// The victim sets of one scale-down, as the ranking's cut leaves them: the pods that go
/// whichever set is picked (`sure`), and the tier of equal rank that straddles the cut, of
/// which any `take` go. Kept as the cut rather than as the sets it stands for: a tier of 40
/// tied pods halved has 137,846,528,820 sets, which no search can list and no controller
/// needs to (it deletes one of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VictimSets {
    pub sure: Vec<String>,
    pub tier: Vec<String>,
    pub take: usize,
}

impl VictimSets {
    /// The most sets a search lists as its steps ([`VictimSets::all`]): every scale-down of a
    /// model check's configuration (at most C(6, 3) = 20) and of the recordings the oracle is
    /// measured on (17 of 20 tied pods: 1,140) is far below it.
    pub const LISTED: u128 = 20_000;

    /// How many sets there are (saturating).
    pub fn count(&self) -> u128 {
        binomial(self.tier.len(), self.take)
    }

    /// Whether a search lists them all as its steps.
    pub fn listable(&self) -> bool {
        self.count() <= Self::LISTED
    }

    /// One set: the first `take` of the tier with the sure ones, sorted (what a controller
    /// that must pick one deletes).
    pub fn first(&self) -> Vec<String> {
        self.with(self.tier.iter().take(self.take))
    }

    /// Every set, as sorted name lists, in the tier's order.
    pub fn all(&self) -> Vec<Vec<String>> {
        let tier: Vec<&str> = self.tier.iter().map(String::as_str).collect();
        combinations(&tier, self.take)
            .into_iter()
            .map(|pick| self.with(pick.into_iter()))
            .collect()
    }

    /// These sets less those with a pod of the tier that fails `allowed`.
    pub fn narrowed(&self, allowed: impl Fn(&str) -> bool) -> VictimSets {
        VictimSets {
            tier: self.tier.iter().filter(|p| allowed(p)).cloned().collect(),
            ..self.clone()
        }
    }

    /// Whether `chosen` is one of the sets, without listing them.
    pub fn contains(&self, chosen: &[String]) -> bool {
        let mut distinct = chosen.to_vec();
        distinct.sort();
        distinct.dedup();
        distinct.len() == chosen.len()
            && chosen.len() == self.sure.len() + self.take
            && chosen
                .iter()
                .all(|c| self.sure.contains(c) || self.tier.contains(c))
            && self.sure.iter().all(|s| chosen.contains(s))
    }

    fn with(&self, pick: impl Iterator<Item = impl AsRef<str>>) -> Vec<String> {
        let mut set = self.sure.clone();
        set.extend(pick.map(|p| p.as_ref().to_string()));
        set.sort();
        set
    }
}

/// `n` choose `k`, saturating at `u128::MAX`.
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut acc = 1u128;
    for i in 0..k {
        // acc is C(n, i) here, so acc * (n - i) is divisible by i + 1.
        match acc.checked_mul((n - i) as u128) {
            Some(product) => acc = product / (i as u128 + 1),
            None => return u128::MAX,
        }
    }
    acc
}

/// The victim sets `getPodsToDelete` may return for a scale-down by `diff`. Whole tiers of
/// equal rank go first; from the tier that straddles the cut, any subset of the right size
/// may be chosen. `order` says from which end of the ranking.
pub fn victim_sets(
    pods: &[&Pod],
    related: &[&Pod],
    diff: usize,
    sem: &Semantics,
    order: Order,
) -> VictimSets {
    let Cut { sure, tier, take } = cut(pods, related, diff, sem, order);
    VictimSets {
        sure,
        tier: tier.into_iter().map(str::to_string).collect(),
        take,
    }
}

/// Every set of `diff` pods `getPodsToDelete` may return, as sorted name lists
/// ([`victim_sets`], listed).
pub fn victim_choices(
    pods: &[&Pod],
    related: &[&Pod],
    diff: usize,
    sem: &Semantics,
    order: Order,
) -> Vec<Vec<String>> {
    victim_sets(pods, related, diff, sem, order).all()
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
    victim_sets(pods, related, diff, sem, order).contains(chosen)
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
