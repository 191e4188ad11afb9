//! Quiescence: when a cluster has settled, so that a `settle` step can compare it.
//!
//! A namespace has settled when, all at once:
//! 1. **no watch event** of a ReplicaSet or a pod has arrived for the quiet window (default
//!    2 s; the built-in controller and garbage collector react within milliseconds), counted
//!    from the settle's start at the earliest;
//! 2. **every ReplicaSet's status is current**: `status.observedGeneration` is at least
//!    `metadata.generation`, so the controller has synced the latest spec (and the mark of a
//!    deletion, which bumps the generation) — unless the scenario itself keeps the controller
//!    from writing it: its ReplicaSet events or that status update held at the gate
//!    ([`Held::status_may_lag`]), where the model settles with the status behind too;
//! 3. **no deletion is pending on the system**: no ReplicaSet carries the `orphan` finalizer
//!    (the garbage collector always finishes orphaning), and one carrying `foregroundDeletion`
//!    only while a pod that blocks it waits for the kubelet to finish its graceful deletion
//!    (a step of the scenario, not of the system); and no pod that is not being deleted
//!    refers to a ReplicaSet that is gone (the garbage collector still has to delete it or
//!    drop the reference). With `--kubelet real` a terminating pod is pending too, since the
//!    kubelet will finish it, and so is a pod not yet bound, started and Ready;
//! 4. **the recording has caught up**: every listed object's resourceVersion has arrived as a
//!    watch event, so the recorded events end in exactly the listed state.
//!
//! These mirror the model's quiescence (no system step enabled) for what a cluster shows from
//! outside. The controllers' hidden state (queues, expectations) has no sign in the API, and
//! the quiet window stands in for it. Where the runner can read the work queues of every
//! controller at work (the local cluster's built-in controller and garbage collector, which
//! serve their metrics: [`crate::workqueues`]), it reads them instead: the namespace has
//! settled when, besides 2–4, their event gates have passed on to them every event the
//! runner saw (each gate reads how far each watch it forwards has got:
//! [`crate::event_gate::progress`]), those queues are idle — nothing waiting, nothing in
//! hand — and no request of theirs in the namespace failed within the quiet window (they
//! retry it after a backoff the queues do not show; their event gates see the answers),
//! after a shorter window without events (the idle window, `rsmc conform --idle-window`,
//! 0.5 s by default). An event not passed on once the whole quiet window has gone (a watch
//! the gate cannot follow) leaves the quiet window to decide, as without the queues.
//! That window is what remains of the old one: the hand-over inside a process, from a watch
//! event's arrival to the work it queues, which takes milliseconds.
//! The queues catch what the window alone missed on a loaded machine: a controller whose
//! sync was queued or under way for more than 2 s (a kind run whose status write came after
//! the settle point). An expectation the controller waits on is an event not yet delivered,
//! which the window and 4 cover as before. A namespace that has not settled by the timeout
//! fails the scenario, naming what was still moving.

use crate::event_gate::GateClient;
use crate::recorder::Recorder;
use crate::workqueues::{Probe, Reading};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use rsmc_oracle::observed::is_ready;
use rsmc_oracle::scenario::Held;
use rsmc_spec::api::pattern::{Resource, Verb};
use rsmc_spec::api::Kind;
use std::time::{Duration, Instant};

/// How a settle point is waited for.
#[derive(Clone, Copy, Debug)]
pub struct SettlePolicy {
    pub quiet_window: Duration,
    /// The quiet window where every controller's queues are read and idle; `None`: the
    /// queues are not read. A recording of such a run has no quiet gaps at its settle
    /// points; the runner marks them ([`crate::mark`]).
    pub idle_window: Option<Duration>,
    pub timeout: Duration,
}

impl Default for SettlePolicy {
    fn default() -> Self {
        SettlePolicy {
            quiet_window: Duration::from_secs(2),
            idle_window: Some(Duration::from_millis(500)),
            timeout: Duration::from_secs(60),
        }
    }
}

/// The namespace's objects once settled, and the list's resourceVersion.
pub struct Settled {
    pub replicasets: Vec<ReplicaSet>,
    pub pods: Vec<Pod>,
    pub resource_version: u64,
}

/// Why a settle point was not reached.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    #[error("did not settle within {}s: {reason}", timeout.as_secs())]
    Timeout { timeout: Duration, reason: String },
    #[error("the recording is incomplete: {0}")]
    Recording(String),
    #[error("cannot list the namespace: {}", crate::api_error::describe(.0))]
    Api(#[from] kube::Error),
    #[error("{0}")]
    Broken(String),
}

/// Wait until the namespace settles. `alive` is asked between polls whether everything the
/// run depends on (the control plane, the controller under test) still runs.
/// `real_kubelets` says whether real kubelets bind, start and finish the pods by themselves
/// (the prepared scenario's `Script::real_kubelets`, which the model judging the run reads
/// too): then a pod not yet bound, started or gone still moves. `queues`: what is read
/// instead of waiting out the quiet window, when every controller at work can be read;
/// `None` otherwise.
#[allow(clippy::too_many_arguments)]
pub async fn settle(
    client: &Client,
    namespace: &str,
    recorder: &Recorder,
    policy: SettlePolicy,
    real_kubelets: bool,
    alive: &(dyn Fn() -> Result<(), String> + Sync),
    held: &Held,
    queues: Option<Queues<'_>>,
) -> Result<Settled, SettleError> {
    let mut queues = queues.zip(policy.idle_window);
    let started = Instant::now();
    let mut reason = String::from("events keep arriving");
    loop {
        alive().map_err(SettleError::Broken)?;
        if let Some(e) = recorder.error() {
            return Err(SettleError::Recording(e));
        }
        if started.elapsed() > policy.timeout {
            return Err(SettleError::Timeout {
                timeout: policy.timeout,
                reason,
            });
        }
        let window = match queues {
            Some((_, idle_window)) => idle_window,
            None => policy.quiet_window,
        };
        let quiet = recorder.quiet_since(started);
        if quiet < window {
            reason = "watch events keep arriving".into();
            tokio::time::sleep(window - quiet).await;
            continue;
        }
        let listed = list(client, namespace).await?;
        if let Some(why) = moving(
            &listed.replicasets,
            &listed.pods,
            recorder,
            real_kubelets,
            held,
        ) {
            reason = why;
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        // Whether the controllers are done, as far as the queues (if read) tell.
        let done = match &queues {
            None => true,
            Some((readable, _)) => {
                let newest =
                    [Kind::ReplicaSet, Kind::Pod].map(|k| (k, recorder.newest_version(k.into())));
                match readable.busy(namespace, &newest, policy.quiet_window).await {
                    Ok(None) => true,
                    // An event not delivered after the whole quiet window: a watch the gate
                    // cannot follow (a controller that re-listed gets what it missed by its
                    // list, which the gate does not read). As without the queues, the quiet
                    // window decides.
                    Ok(Some(Busy::Undelivered(_)))
                        if recorder.quiet_since(started) >= policy.quiet_window =>
                    {
                        true
                    }
                    Ok(Some(Busy::Undelivered(why) | Busy::Working(why))) => {
                        reason = why;
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        false
                    }
                    // Unreadable now (a controller starting): the quiet window, as without
                    // queues.
                    Err(_) => {
                        queues = None;
                        false
                    }
                }
            }
        };
        if !done {
            continue;
        }
        if still(client, namespace, &listed).await? {
            return Ok(listed);
        }
        reason = "the namespace changed while it was listed".into();
    }
}

/// What a settle point reads where it can tell that the controllers are done: their work
/// queues, and their event gates for the events they have received and the requests that
/// failed.
#[derive(Clone, Copy)]
pub struct Queues<'a> {
    pub probes: &'a [Probe],
    pub gates: &'a [&'a GateClient],
}

/// Why a controller may not be done.
enum Busy {
    /// An event the runner saw has not reached it yet.
    Undelivered(String),
    /// It has work queued or in hand, or a failed request to retry.
    Working(String),
}

impl Queues<'_> {
    /// Why some controller is busy with `namespace` or may be (`Ok(None)`: none is), or why
    /// one cannot be read. `newest`: per type, the newest resourceVersion the runner has seen
    /// in the namespace. The gates are read before the queues: an event delivered is in a
    /// queue by the time the queue is read (the informer's hand-over to the queue takes
    /// microseconds, not the milliseconds of a metrics request).
    async fn busy(
        &self,
        namespace: &str,
        newest: &[(Kind, u64)],
        retry_quiet: Duration,
    ) -> Result<Option<Busy>, String> {
        for g in self.gates {
            let status = g.status().await?;
            for &(kind, version) in newest {
                match status.delivered.get(kind) {
                    Some(delivered) if delivered >= version => {}
                    Some(delivered) => {
                        return Ok(Some(Busy::Undelivered(format!(
                            "a controller has received {} events up to resourceVersion {delivered}, not yet {version}",
                            rsmc_oracle::scenario::resource_name(kind)
                        ))))
                    }
                    None => return Err("a watch through the gate cannot be read".into()),
                }
            }
            let ago = status
                .failed
                .get(namespace)
                .map(|ms| Duration::from_millis(*ms));
            if let Some(ago) = ago.filter(|ago| *ago < retry_quiet) {
                return Ok(Some(Busy::Working(format!(
                    "a request of a controller in the namespace failed {:.1} s ago: it retries after a backoff its queue does not show",
                    ago.as_secs_f64()
                ))));
            }
        }
        for p in self.probes {
            match p.read().await {
                Reading::Idle => {}
                Reading::Busy(why) => return Ok(Some(Busy::Working(why))),
                Reading::Unknown(why) => return Err(why),
            }
        }
        Ok(None)
    }
}

/// Whether the namespace is still as `listed`: every object at the same resourceVersion.
/// ReplicaSets and pods are two lists, not one snapshot: a real kubelet may report a pod
/// Ready between them, and the controller update the ReplicaSet's status before the pods
/// are listed, so the ReplicaSet listed is already stale (seen on kind:
/// e2e-list-and-delete-collection, a settle point with `readyReplicas` 0 beside a Ready
/// pod, the status update recorded just after). Listed again once nothing moves and the
/// controllers are idle, the same objects at the same versions are a state that held.
async fn still(client: &Client, namespace: &str, listed: &Settled) -> Result<bool, kube::Error> {
    let again = list(client, namespace).await?;
    let versions = |s: &Settled| {
        let rs = s
            .replicasets
            .iter()
            .map(|o| (o.uid(), o.resource_version()));
        let pods = s.pods.iter().map(|o| (o.uid(), o.resource_version()));
        rs.chain(pods).collect::<std::collections::BTreeSet<_>>()
    };
    Ok(versions(&again) == versions(listed))
}

/// The namespace's ReplicaSets and pods as they are now, and the later of the two lists'
/// resourceVersions. A settle point when nothing moves; the end of a stopped run's
/// recording otherwise.
pub async fn list(client: &Client, namespace: &str) -> Result<Settled, kube::Error> {
    let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), namespace);
    let pod_api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let replicasets = rs_api.list(&ListParams::default()).await?;
    let pods = pod_api.list(&ListParams::default()).await?;
    let version = |v: Option<&str>| v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Ok(Settled {
        resource_version: version(replicasets.metadata.resource_version.as_deref())
            .max(version(pods.metadata.resource_version.as_deref())),
        replicasets: replicasets.items,
        pods: pods.items,
    })
}

/// What still moves, if anything.
fn moving(
    replicasets: &[ReplicaSet],
    pods: &[Pod],
    recorder: &Recorder,
    real_kubelets: bool,
    held: &Held,
) -> Option<String> {
    for rs in replicasets {
        let generation = rs.metadata.generation.unwrap_or(0);
        let observed = rs
            .status
            .as_ref()
            .and_then(|s| s.observed_generation)
            .unwrap_or(0);
        if observed < generation && !held.status_may_lag(&rs.name_any()) {
            return Some(format!(
                "ReplicaSet {} has status.observedGeneration {observed} < metadata.generation {generation}",
                rs.name_any()
            ));
        }
        let finalizers = rs.finalizers();
        let uid = rs.uid().unwrap_or_default();
        let dependents: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.owner_references().iter().any(|r| r.uid == uid))
            .collect();
        // The collector's next writes for this ReplicaSet: one per dependent (`verb` on each
        // pod), then the finalizer's removal. A hold of them keeps it waiting; in the model
        // it is then as done as it can be.
        let collector_waits = |verb: Verb| {
            if dependents.is_empty() {
                held.collector_held(Verb::Patch, Resource::ReplicaSets, &rs.name_any())
            } else {
                dependents
                    .iter()
                    .all(|p| held.collector_held(verb, Resource::Pods, &p.name_any()))
            }
        };
        if finalizers.iter().any(|f| f == "orphan") && !collector_waits(Verb::Patch) {
            return Some(format!(
                "ReplicaSet {} waits for the garbage collector to {}",
                rs.name_any(),
                if dependents.is_empty() {
                    "remove its orphan finalizer"
                } else {
                    "orphan its pods"
                }
            ));
        }
        if finalizers.iter().any(|f| f == "foregroundDeletion") && !collector_waits(Verb::Delete) {
            let waits_for_kubelet = pods.iter().any(|p| {
                p.metadata.deletion_timestamp.is_some()
                    && p.owner_references()
                        .iter()
                        .any(|r| r.uid == uid && r.block_owner_deletion == Some(true))
            });
            if real_kubelets || !waits_for_kubelet {
                return Some(format!(
                    "ReplicaSet {} waits for the garbage collector to delete its pods (foreground)",
                    rs.name_any()
                ));
            }
        }
    }
    // A pod whose ReplicaSet owner is gone is the garbage collector's pending work
    // (`attemptToDeleteItem` deletes it, or drops the dangling reference when another owner
    // is alive). Without this a slow garbage collector looks like one that did nothing.
    for p in pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let dangling = p.owner_references().iter().find(|r| {
            r.kind == "ReplicaSet"
                && !replicasets
                    .iter()
                    .any(|rs| rs.uid().as_deref() == Some(r.uid.as_str()))
        });
        let name = p.name_any();
        let collector_waits = [Verb::Delete, Verb::Patch]
            .iter()
            .any(|v| held.collector_held(*v, Resource::Pods, &name));
        if let Some(r) = dangling.filter(|_| !collector_waits) {
            return Some(format!(
                "pod {} refers to ReplicaSet {} (uid {}), which is gone: the garbage collector has not yet acted",
                p.name_any(),
                r.name,
                r.uid
            ));
        }
    }
    if real_kubelets {
        if let Some(p) = pods
            .iter()
            .find(|p| p.metadata.deletion_timestamp.is_some())
        {
            return Some(format!("pod {} is terminating", p.name_any()));
        }
        // The model's real nodes bind and start every pod before it settles
        // (`RsModel::node_moves`); a pod whose image is missing never starts, and the settle
        // times out naming it.
        if let Some((p, what)) = pods.iter().find_map(|p| {
            let status = p.status.as_ref();
            let phase = status.and_then(|s| s.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed")) {
                None
            } else if p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_none() {
                Some((p, "waits for the scheduler"))
            } else if phase != Some("Running") || !is_ready(p) {
                Some((p, "waits for its kubelet to start it"))
            } else {
                None
            }
        }) {
            return Some(format!("pod {} {what}", p.name_any()));
        }
    }
    let versions = replicasets
        .iter()
        .map(|o| (o.name_any(), o.resource_version()))
        .chain(pods.iter().map(|o| (o.name_any(), o.resource_version())));
    for (name, rv) in versions {
        let rv = rv.and_then(|v| v.parse().ok()).unwrap_or(0);
        if !recorder.has_seen(rv) {
            return Some(format!(
                "the watch has not yet delivered {name} at resourceVersion {rv}"
            ));
        }
    }
    None
}
