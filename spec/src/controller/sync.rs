//! One sync of one ReplicaSet, as a resumable task.
//!
//! pkg/controller/replicaset/replica_set.go `syncReplicaSet`, `claimPods`, `manageReplicas`,
//! and replica_set_utils.go `updateReplicaSetStatus`. The sync reads the controller's cache
//! once (the model keeps only the informer positions it read at and rebuilds the view), then
//! needs the outside world one request at a time: [`advance`] runs the internal steps up to
//! the next request and says what it is; the executor (the model, one atomic step per
//! request, or a real client) performs it and hands the outcome to [`SyncTask::record`].
//! The sync's decisions therefore exist once, whoever executes them.

use super::claim::{self, Claim};
use super::expectations::Expectations;
use super::ranking;
use super::status;
use crate::api::{ApiError, DeleteOptions, OwnerRefPatch, Reason, Request, View};
use crate::bugs::Bug;
use crate::object::{OwnerReference, Pod, ReplicaSet, Rv};
use crate::profile::Semantics;
use serde::{Deserialize, Serialize};

/// What a sync reads: its ReplicaSet and pod caches, and how the controller is configured.
pub struct SyncView<'a> {
    pub rs: &'a ReplicaSet,
    pub pods: &'a View<Pod>,
    pub sem: &'a Semantics,
    /// `--kube-api-burst`-independent `BurstReplicas` (500 upstream).
    pub burst_replicas: u32,
}

impl SyncView<'_> {
    fn pod(&self, name: &str) -> Option<&Pod> {
        self.pods.get(name).map(|p| &**p)
    }

    fn key(&self) -> &str {
        &self.rs.meta.name
    }
}

/// Where a sync is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// Working through the adopt/release patches.
    Claim {
        /// The pods to adopt or release, with the decision: those before `next` done, the
        /// rest in the order they are sent where it is fixed, else in name order.
        ops: Vec<(String, Claim)>,
        /// How many of `ops` have their place in the order fixed. Upstream walks the pods in
        /// lister order, which is a map's: any order is possible. The executor picks the
        /// order one pod at a time as the patches go out ([`Pending::Order`]): picking a
        /// whole order up front would make n! choices where one at a time makes 2^n states.
        fixed: usize,
        next: usize,
        /// Outcome of the live recheck before the first adoption (`None`: not done yet).
        recheck: Option<bool>,
        failed: bool,
    },
    /// Scale-down: the victims are still to be chosen among the ranking's ties.
    ChooseVictims { diff: usize },
    /// Scale-up in slow-start batches.
    Create {
        total: u32,
        batch: u32,
        sent: u32,
        failed: u32,
        done_before: u32,
        successes: u32,
    },
    /// Scale-down deletes. They run in parallel upstream, so they may land in any order:
    /// the executor picks which goes next as they go out ([`Pending::Order`]), as for claims.
    Delete {
        /// Those before `next` sent, the rest in the order they go where it is fixed, else
        /// in name order.
        victims: Vec<String>,
        /// How many of `victims` have their place in the order fixed.
        fixed: usize,
        next: usize,
        error: bool,
    },
    /// Writing status; `retried` after the one GET-and-retry on failure.
    Status {
        manage_error: bool,
        fresh_rv: Option<Rv>,
        retried: bool,
    },
    /// Finished: `error` requeues the key with back-off.
    Done { error: bool },
}

/// The state of one sync between two of its requests.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SyncTask {
    pub key: String,
    /// Informer positions the cache was read at (ReplicaSets, pods).
    pub read_at: (Rv, Rv),
    /// `SatisfiedExpectations`, read before listing pods.
    pub needs_sync: bool,
    /// The pods claimed so far, by name.
    pub claimed: Vec<String>,
    pub phase: Phase,
    /// Where its next request is when a scenario's gate holds requests. Always
    /// [`AtGate::NotSent`] in a free model check.
    #[serde(default, skip_serializing_if = "AtGate::is_not_sent")]
    pub at_gate: AtGate,
}

/// Where a sync's next request is with respect to a scenario's hold of requests
/// ([`crate::model::Action::HoldRequests`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub enum AtGate {
    /// Not sent yet: the sync's internal steps up to it have not run.
    #[default]
    NotSent,
    /// The sync ran its internal steps up to the request (the expectations they set are
    /// set) and sent it; a hold caught it and it waits there.
    Held,
    /// The hold that caught it was released: it goes on even if the same requests are held
    /// again before it has landed (as on the gate, where a request waits for the hold that
    /// caught it, not for a later one).
    Released,
}

impl AtGate {
    fn is_not_sent(&self) -> bool {
        *self == AtGate::NotSent
    }
}

/// What a sync needs next from its executor.
#[allow(clippy::large_enum_variant)] // transient, never stored in the model state
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pending {
    /// A live (quorum) GET of the ReplicaSet: before the first adoption, or before the status
    /// retry.
    GetReplicaSet(String),
    /// An API request.
    Send(Request),
    /// Scale-down: pick one of these victim sets (ties of the ranking), in any order: the
    /// deletes run in parallel, so the order in which they land is the executor's choice.
    Choose(ranking::VictimSets),
    /// Claiming: put these pods' adopt/release patches in an order (any order).
    Order(Vec<String>),
    /// The sync is over.
    Done { error: bool },
}

/// How a sync begins.
pub enum Begin {
    /// The ReplicaSet is not in the cache: forget its expectations; nothing else.
    Gone,
    /// A sync to run.
    Run(SyncTask),
}

/// The first step of `syncReplicaSet`: read the expectations, list and filter the pods, and
/// decide the claim of each active pod.
pub fn begin(
    key: &str,
    rs: Option<&ReplicaSet>,
    pods: &View<Pod>,
    read_at: (Rv, Rv),
    expectations: &mut Expectations,
    sem: &Semantics,
) -> Begin {
    let Some(rs) = rs else {
        expectations.delete(key);
        return Begin::Gone;
    };
    // [bug no-expectations] without expectations every sync manages replicas.
    let needs_sync = sem.has(Bug::NoExpectations) || expectations.satisfied(key);
    let mut claimed = Vec::new();
    let mut ops = Vec::new();
    for pod in pods.values().filter(|p| p.is_active()) {
        let decision = match claim::decide(rs, pod) {
            // [bug steal-controlled-pods] another controller's pod is adopted all the same.
            Claim::Ignore if sem.has(Bug::StealControlledPods) && claim::takeable(rs, pod) => {
                Claim::Adopt
            }
            // [bug never-release] an owned pod that no longer matches is left as it is.
            Claim::Release if sem.has(Bug::NeverRelease) => Claim::Ignore,
            decision => decision,
        };
        match decision {
            Claim::Keep => claimed.push(pod.meta.name.clone()),
            Claim::Ignore => {}
            decision => ops.push((pod.meta.name.clone(), decision)),
        }
    }
    Begin::Run(SyncTask {
        key: key.to_string(),
        read_at,
        needs_sync,
        claimed,
        at_gate: AtGate::NotSent,
        phase: Phase::Claim {
            fixed: usize::from(ops.len() == 1),
            ops,
            next: 0,
            recheck: None,
            failed: false,
        },
    })
}

impl SyncTask {
    /// Runs the internal steps until the sync needs something from outside.
    pub fn advance(&mut self, view: &SyncView, expectations: &mut Expectations) -> Pending {
        loop {
            match &mut self.phase {
                Phase::Claim {
                    ops,
                    fixed,
                    next,
                    recheck,
                    failed,
                } => {
                    if let Some(open) = open_order(ops, *fixed, *next, |(n, _)| n) {
                        return Pending::Order(open);
                    }
                    if let Some((name, decision)) = ops.get(*next).cloned() {
                        let Some(pod) = view.pod(&name) else {
                            *next += 1;
                            continue;
                        };
                        match decision {
                            // [bug no-adoption-recheck] adopt on the cache's word alone.
                            Claim::Adopt
                                if recheck.is_none() && !view.sem.has(Bug::NoAdoptionRecheck) =>
                            {
                                return Pending::GetReplicaSet(view.key().to_string())
                            }
                            Claim::Adopt if *recheck == Some(false) => {
                                // `CanAdopt` failed once: every adoption of this sync fails.
                                *failed = true;
                                *next += 1;
                            }
                            Claim::Adopt => {
                                let ours = OwnerReference::controller_of(
                                    &view.rs.meta.name,
                                    view.rs.meta.uid,
                                );
                                let patch = match pod.meta.controller_ref() {
                                    // Only with the steal-controlled-pods switch.
                                    Some(other) if other.uid != ours.uid => OwnerRefPatch::Take {
                                        from: other.uid,
                                        to: ours,
                                    },
                                    _ => OwnerRefPatch::Add(ours),
                                };
                                return Pending::Send(Request::PatchPodOwnerReferences {
                                    name,
                                    uid: pod.meta.uid,
                                    patch,
                                });
                            }
                            _ => {
                                return Pending::Send(Request::PatchPodOwnerReferences {
                                    name,
                                    uid: pod.meta.uid,
                                    patch: OwnerRefPatch::Remove(vec![view.rs.meta.uid]),
                                })
                            }
                        }
                        continue;
                    }
                    if *failed {
                        // `claimPods` returned an error: no manage, no status.
                        self.phase = Phase::Done { error: true };
                        continue;
                    }
                    self.claimed.sort();
                    self.phase = self.manage(view, expectations);
                }
                Phase::ChooseVictims { diff } => {
                    // [bug ignore-ranking] the pods the ranking would keep longest go first.
                    let order = if view.sem.has(Bug::IgnoreRanking) {
                        ranking::Order::KeptFirst
                    } else {
                        ranking::Order::Ranked
                    };
                    let diff = *diff;
                    return Pending::Choose(self.victim_sets(view, diff, order));
                }
                Phase::Create {
                    total,
                    batch,
                    sent,
                    failed,
                    done_before,
                    successes,
                } => {
                    if sent < batch {
                        return Pending::Send(Request::CreatePod(pod_from_template(view.rs)));
                    }
                    if *failed > 0 {
                        // Skipped and failed creations will never be observed.
                        for _ in 0..(*total - *successes) {
                            expectations.creation_observed(&self.key);
                        }
                        self.phase = status_phase(true);
                        continue;
                    }
                    *done_before += *batch;
                    if done_before == total {
                        self.phase = status_phase(false);
                        continue;
                    }
                    *batch = (2 * *batch).min(*total - *done_before);
                    *sent = 0;
                }
                Phase::Delete {
                    victims,
                    fixed,
                    next,
                    error,
                } => {
                    if let Some(open) = open_order(victims, *fixed, *next, |n| n) {
                        return Pending::Order(open);
                    }
                    match victims.get(*next) {
                        Some(name) => {
                            return Pending::Send(Request::DeletePod {
                                name: name.clone(),
                                options: scale_down_delete_options(view.pod(name), view.sem),
                            })
                        }
                        None => self.phase = status_phase(*error),
                    }
                }
                Phase::Status {
                    manage_error,
                    fresh_rv,
                    retried,
                } => {
                    if *retried && fresh_rv.is_none() {
                        return Pending::GetReplicaSet(view.key().to_string());
                    }
                    let claimed: Vec<&Pod> =
                        self.claimed.iter().filter_map(|n| view.pod(n)).collect();
                    let terminating = terminating_claimed(view);
                    let computed =
                        status::calculate(view.rs, &claimed, terminating, *manage_error, view.sem);
                    match status::to_write(view.rs, computed) {
                        None => {
                            self.phase = Phase::Done {
                                error: *manage_error,
                            }
                        }
                        Some(status) => {
                            return Pending::Send(Request::UpdateReplicaSetStatus {
                                name: view.key().to_string(),
                                resource_version: fresh_rv.unwrap_or(view.rs.meta.resource_version),
                                status,
                            })
                        }
                    }
                }
                Phase::Done { error } => return Pending::Done { error: *error },
            }
        }
    }

    /// The victim sets of a scale-down by `diff` over the claimed pods of `view`, the ranking
    /// read in `order`. Related pods are those of ReplicaSets sharing this one's controller;
    /// the model's ReplicaSets have no owner, so there are none and every rank is 0.
    pub fn victim_sets(
        &self,
        view: &SyncView,
        diff: usize,
        order: ranking::Order,
    ) -> ranking::VictimSets {
        ranking::victim_sets(&self.claimed_pods(view), &[], diff, view.sem, order)
    }

    /// The pods this sync has claimed, as its cache shows them.
    fn claimed_pods<'v>(&self, view: &'v SyncView) -> Vec<&'v Pod> {
        self.claimed.iter().filter_map(|n| view.pod(n)).collect()
    }

    /// Whether `chosen` is a victim set the ranking allows for this sync, when it is choosing
    /// them: what the property [`crate::model::properties::SCALE_DOWN_RANKED`] holds a choice
    /// to.
    pub fn ranked_choice(&self, view: &SyncView, chosen: &[String]) -> Option<bool> {
        match self.phase {
            Phase::ChooseVictims { diff } => Some(ranking::is_victim_choice(
                &self.claimed_pods(view),
                &[],
                diff,
                view.sem,
                ranking::Order::Ranked,
                chosen,
            )),
            _ => None,
        }
    }

    /// `manageReplicas` when expectations allow and the ReplicaSet is not being deleted;
    /// otherwise straight to status.
    fn manage(&self, view: &SyncView, expectations: &mut Expectations) -> Phase {
        // [bug create-while-deleting] manage replicas even while the ReplicaSet is deleted.
        let deleting = view.rs.meta.is_deleting() && !view.sem.has(Bug::CreateWhileDeleting);
        if !self.needs_sync || deleting {
            return status_phase(false);
        }
        let diff = self.claimed.len() as i64 - view.rs.spec.replicas as i64;
        let burst = view.burst_replicas as i64;
        if diff < 0 {
            let total = (-diff).min(burst) as u32;
            expectations.expect_creations(&self.key, total as i32);
            Phase::Create {
                total,
                batch: total.min(super::slow_start::INITIAL_BATCH_SIZE),
                sent: 0,
                failed: 0,
                done_before: 0,
                successes: 0,
            }
        } else if diff > 0 {
            Phase::ChooseVictims {
                diff: diff.min(burst) as usize,
            }
        } else {
            status_phase(false)
        }
    }

    /// Settle a choice: the order of the claim patches ([`Pending::Order`]), or the
    /// scale-down victims in the order their deletes land ([`Pending::Choose`]), whose
    /// deletion is then expected.
    ///
    /// While choosing victims, `pods` is the victim set; their order stays open. While
    /// claiming or deleting, `pods` go next, in this order (one pod is the model's pick of
    /// the next request, a whole list an executor's order).
    pub fn choose(&mut self, pods: Vec<String>, expectations: &mut Expectations) {
        match &mut self.phase {
            Phase::Claim {
                ops, fixed, next, ..
            } => fix_next(ops, fixed, *next, &pods, |(n, _)| n),
            Phase::Delete {
                victims,
                fixed,
                next,
                ..
            } => fix_next(victims, fixed, *next, &pods, |n| n),
            _ => {
                let mut victims = pods;
                victims.sort();
                expectations.expect_deletions(&self.key, &victims);
                self.phase = Phase::Delete {
                    fixed: usize::from(victims.len() == 1),
                    victims,
                    next: 0,
                    error: false,
                };
            }
        }
    }

    /// The outcome of a [`Pending::GetReplicaSet`].
    pub fn record_get(&mut self, view: &SyncView, live: Option<&ReplicaSet>) {
        match &mut self.phase {
            Phase::Claim { recheck, .. } => {
                *recheck = Some(claim::recheck(view.rs, live).is_ok());
            }
            Phase::Status { fresh_rv, .. } => match live {
                Some(rs) => *fresh_rv = Some(rs.meta.resource_version),
                None => self.phase = Phase::Done { error: true },
            },
            _ => {}
        }
    }

    /// The outcome of a [`Pending::Send`].
    pub fn record(
        &mut self,
        view: &SyncView,
        outcome: Result<(), &ApiError>,
        expectations: &mut Expectations,
    ) {
        let reason = outcome.err().map(|e| e.reason);
        let key = self.key.clone();
        match &mut self.phase {
            Phase::Claim {
                ops, next, failed, ..
            } => {
                let (name, decision) = ops[*next].clone();
                *next += 1;
                match (decision, reason) {
                    (Claim::Adopt, None) => self.claimed.push(name),
                    // The pod is gone: nothing to claim.
                    (_, Some(Reason::NotFound)) => {}
                    // ReleasePod also swallows Invalid (no such reference, or a new pod
                    // under the same name).
                    (Claim::Release, Some(Reason::Invalid)) => {}
                    (Claim::Release, None) => {}
                    _ => *failed = true,
                }
            }
            Phase::Create {
                sent,
                failed,
                successes,
                ..
            } => {
                *sent += 1;
                match reason {
                    None => *successes += 1,
                    Some(_) => *failed += 1,
                }
            }
            Phase::Delete {
                victims,
                next,
                error,
                ..
            } => {
                let name = victims[*next].clone();
                *next += 1;
                if let Some(reason) = reason {
                    // [bug keep-expectation-on-failed-delete] the failed delete stays expected.
                    if !view.sem.has(Bug::KeepExpectationOnFailedDelete) {
                        expectations.deletion_observed(&key, &name);
                    }
                    if reason != Reason::NotFound || view.sem.delete_not_found_is_error {
                        *error = true;
                    }
                }
            }
            Phase::Status {
                manage_error,
                retried,
                ..
            } => {
                let manage_error = *manage_error;
                match reason {
                    None => {
                        self.phase = Phase::Done {
                            error: manage_error,
                        }
                    }
                    Some(_) if !*retried => *retried = true,
                    Some(_) => self.phase = Phase::Done { error: true },
                }
            }
            Phase::ChooseVictims { .. } | Phase::Done { .. } => {}
        }
    }
}

/// The options of a scale-down delete: none upstream (`DeletePod` without preconditions);
/// with the proposed fix of PR #138818, the UID and resourceVersion of the pod as the sync
/// ranked it, so that a pod written since (orphaned, released, replaced) is not deleted.
fn scale_down_delete_options(cached: Option<&Pod>, sem: &Semantics) -> DeleteOptions {
    match cached {
        Some(pod) if sem.delete_precondition => DeleteOptions {
            uid_precondition: Some(pod.meta.uid),
            resource_version_precondition: Some(pod.meta.resource_version),
            ..DeleteOptions::default()
        },
        _ => DeleteOptions::default(),
    }
}

/// The items whose place is still open when the next request is due: none when the next
/// one's place is fixed or only one remains (nothing to pick from).
fn open_order<T>(
    items: &[T],
    fixed: usize,
    next: usize,
    name: impl Fn(&T) -> &String,
) -> Option<Vec<String>> {
    (next >= fixed && items.len().saturating_sub(next) >= 2)
        .then(|| items[next..].iter().map(|i| name(i).clone()).collect())
}

/// Move `pods` (in this order) to the front of the items not yet done, the rest keeping
/// their order, and fix their places.
fn fix_next<T>(
    items: &mut [T],
    fixed: &mut usize,
    next: usize,
    pods: &[String],
    name: impl Fn(&T) -> &String,
) {
    let open = &mut items[next..];
    open.sort_by_key(|i| pods.iter().position(|p| p == name(i)).unwrap_or(usize::MAX));
    let placed = open.iter().filter(|i| pods.contains(name(i))).count();
    *fixed = next + placed;
}

fn status_phase(manage_error: bool) -> Phase {
    Phase::Status {
        manage_error,
        fresh_rv: None,
        retried: false,
    }
}

/// [upstream] pods this ReplicaSet controls that are terminating (being deleted, not yet
/// terminal), for `status.terminatingReplicas`.
fn terminating_claimed(view: &SyncView) -> usize {
    view.pods
        .values()
        .filter(|p| {
            p.meta.is_deleting()
                && !matches!(
                    p.phase,
                    crate::object::PodPhase::Succeeded | crate::object::PodPhase::Failed
                )
                && p.meta
                    .controller_ref()
                    .is_some_and(|r| r.uid == view.rs.meta.uid)
                && view.rs.spec.selector.matches(&p.meta.labels)
        })
        .count()
}

/// The pod `CreatePodsWithControllerRef` submits: the template's labels, `generateName:
/// <rs>-`, and the controller reference (pkg/controller/controller_utils.go
/// `GetPodFromTemplate`). Upstream also copies the template's annotations; the model's pod keeps
/// none but the deletion cost, which a template may not set (the oracle rejects it), so the copy
/// has nothing to carry.
pub fn pod_from_template(rs: &ReplicaSet) -> Pod {
    let mut pod = Pod::new("", rs.spec.template_labels.clone());
    pod.meta.generate_name = Some(format!("{}-", rs.meta.name));
    pod.meta.owner_references = vec![OwnerReference::controller_of(&rs.meta.name, rs.meta.uid)];
    pod
}
