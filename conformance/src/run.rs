//! One scenario on a cluster: a fresh namespace, the steps, the recording, the settle points,
//! the kubectl views, and the oracle's verdict.

use crate::await_step;
use crate::controller::Controllers;
use crate::event_gate::{GateClient, RequestHold, RequestsCall};
use crate::kubectl::{kubectl, normalise_describe, normalise_table, Kubectl};
use crate::kubelet;
use crate::mark::{self, Mark};
use crate::recorder::Recorder;
use crate::settle::{settle, Queues, SettlePolicy, Settled};
use crate::steps::{self, StepContext};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Client, ResourceExt};
use rsmc_oracle::explore::default_budget;
use rsmc_oracle::judge::stopped::{judge_up_to, UpToStop};
use rsmc_oracle::judge::{self, Verdict};
use rsmc_oracle::observed::{self, RawObserved, RawSegment, RawSnapshot, SCHEMA};
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::scenario::Reached;
use rsmc_oracle::scenario::{resource_name, StepKind};
use rsmc_oracle::views::render;
use rsmc_spec::api::ApiServer;
use rsmc_spec::bugs::Entry;
use rsmc_spec::controller::expectations::EXPECTATIONS_TIMEOUT;
use rsmc_spec::liveness::CONVERGENCE;
use rsmc_spec::model::{Awaited, Recipient};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Mutex as AsyncMutex;

/// How much longer than the expectations timeout the runner waits on a controller whose clock
/// it cannot move: the timer counts from the sync that set the record, which came before the
/// step, so a little more covers a clock read late.
const EXPIRY_MARGIN: Duration = Duration::from_secs(5);

/// What every scenario of a run shares.
pub struct Target {
    pub client: Client,
    pub kubeconfig: PathBuf,
    /// The kubectl that takes each settle point's views; `None`: no views are taken
    /// (`rsmc conform --no-views`).
    pub views: Option<Kubectl>,
    pub controllers: AsyncMutex<Controllers>,
    pub policy: SettlePolicy,
    /// How long the runner waits before each of its own writes. The model lets the
    /// environment write only while every informer is within `maxLag` events of the API
    /// server (1: caught up); on a cluster the runner cannot see the informers, so it gives
    /// them this long to deliver what came before. Without it, back-to-back writes (three
    /// pods made Ready in a row) leave the controller's informer further behind than any
    /// scenario's bound and the run diverges for a reason outside the controller.
    pub write_pause: Duration,
    /// Namespaces the run created that may still exist: in use, or deleted and not yet
    /// gone. An interrupted run deletes them ([`delete_namespaces`]).
    pub namespaces: Arc<Mutex<Vec<String>>>,
    /// The deletions of finished scenarios' namespaces, under way beside the scenarios that
    /// run next ([`request_namespace_deletion`]); the end of the run waits for them.
    pub deletions: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The local cluster's controller managers whose work queues a settle point reads
    /// ([`crate::workqueues`]); empty on other clusters.
    pub probes: Vec<crate::workqueues::Probe>,
    /// The local cluster's event gate, which holds watch events from the controller under
    /// test (`hold` steps); `None` on other clusters, where those steps are not forced.
    pub gate: Option<GateClient>,
    /// The local cluster's gate in front of the garbage collector
    /// (`hold: {garbage-collector: pods}`); `None` where there is none.
    pub gc_gate: Option<GateClient>,
    /// A description of the cluster for observed traces (server version, controller).
    pub cluster: serde_json::Value,
}

/// What a user sees at one settle point: the real kubectl output, normalised, beside the
/// model's rendering of the same objects.
#[derive(Clone, Debug, Serialize)]
pub struct Views {
    /// `kubectl get rs -o wide`, the status line (`kubectl get rs -o custom-columns=…`,
    /// [`render::RS_STATUS_OUTPUT`]) and `kubectl get pods --show-labels`, as
    /// [`render::rs_views`] and [`render::get_pods`] lay them out.
    pub kubectl: String,
    /// The model's rendering of the same objects (abstracted as the oracle reads them).
    pub model: String,
    /// `kubectl describe rs` (at the last settle point only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub describe: Option<String>,
}

/// The result of one scenario.
#[derive(Debug, Serialize)]
pub struct ScenarioRun {
    pub scenario: String,
    pub path: PathBuf,
    pub namespace: String,
    pub wall_seconds: f64,
    /// How long the oracle took to judge the recording (after the run left the cluster).
    pub judge_seconds: f64,
    /// Steps the runner could not force on this cluster, and the scenario's own note.
    pub not_forced: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_cluster: Option<String>,
    /// Why the run could not be completed (the cluster broke, a settle point timed out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The views of each settle point reached; none with `--no-views`.
    pub views: Vec<Views>,
    /// How many settle points the run reached.
    pub settle_points: usize,
    /// For a scenario that forces a catalogued race (`reproduces`): whether the cluster took
    /// it, judged on the recording (set with the verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduction: Option<Reproduction>,
    /// The recording; for a run that stopped short, up to where it stopped (its last
    /// segment did not settle), which is judged only for the property a `reproduces`
    /// scenario forces.
    #[serde(skip)]
    pub observed: Option<RawObserved>,
    /// The scenario step (0-based) the run was at when it stopped short, never completed.
    #[serde(skip)]
    pub stopped_at: Option<usize>,
    /// For a run that stopped at an await: whether a run of the model gets past it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub await_in_model: Option<AwaitInModel>,
    /// For a run that stopped short of its end (not because the cluster broke): the oracle's
    /// verdict on what it recorded until the stop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_to_stop: Option<UpToStop>,
}

/// Whether the model gets past the `await` a run stopped at
/// ([`rsmc_oracle::scenario::passes`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "model")]
pub enum AwaitInModel {
    /// Some run of the model does: the cluster did not do what it does.
    GetsPast,
    /// No run does: the release's model stops there too (a fixed controller never sends
    /// the request a faulty one would).
    StopsToo,
    /// The search stopped after `explored` states.
    Unknown { explored: usize },
}

impl From<Reached> for AwaitInModel {
    fn from(reached: Reached) -> AwaitInModel {
        match reached {
            Reached::Yes => AwaitInModel::GetsPast,
            Reached::No => AwaitInModel::StopsToo,
            Reached::Unknown { explored } => AwaitInModel::Unknown { explored },
        }
    }
}

/// The most states the model is searched for a way past the await a run stopped at.
const AWAIT_SEARCH_LIMIT: usize = 300_000;

/// Whether a run reproduced the catalogued race its scenario forces.
#[derive(Clone, Debug, Serialize)]
pub struct Reproduction {
    /// The catalogue entry.
    pub entry: &'static str,
    /// Its property.
    pub property: &'static str,
    /// A recorded write broke the property; for convergence, the cluster was quiet and not
    /// converged at the last settle point.
    pub reproduced: bool,
    /// How the cluster had not converged at the end (convergence entries).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unconverged: Option<String>,
    /// Reproduced as the model reads the recording: no recorded write breaks the property
    /// by itself (it speaks of what a sync saw, which a recording does not show: a pod
    /// created for a ReplicaSet the sync saw being deleted lands after the ReplicaSet is
    /// gone), but every model run that matches the conforming recording breaks it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub as_modelled: bool,
}

/// Why a run stopped short.
#[derive(Clone, Debug, Serialize)]
pub struct RunError {
    /// The cluster (or the controller under test) broke, rather than misbehaved.
    pub broken: bool,
    pub message: String,
}

impl ScenarioRun {
    /// Why the run stopped short, in one line, where the implementation (not the cluster)
    /// kept it from its end: a settle never reached, an await never met.
    pub fn stopped_because(&self) -> Option<&str> {
        let e = self.error.as_ref().filter(|e| !e.broken)?;
        Some(e.message.lines().next().unwrap_or_default())
    }

    /// Whether the implementation conformed.
    pub fn conforms(&self) -> bool {
        self.error.is_none() && self.verdict.as_ref().is_some_and(|v| v.conforms)
    }
}

/// Whether the scenario acts on the controller's processes (restarts, handovers), which
/// must be undone after it.
pub fn needs_controller(prepared: &Prepared) -> bool {
    prepared.scenario.steps.iter().any(|s| {
        matches!(
            s.kind,
            StepKind::RestartController { .. }
                | StepKind::StartSecondLeader
                | StepKind::StopFirstLeader
        )
    })
}

/// Whether the scenario must run with no other beside it: it acts on the controller's
/// processes, or holds its watch events (which holds them for every namespace) or its
/// requests (a held request blocks one of the controller's workers, so another scenario's
/// syncs would be timed differently), or makes its expectations expire (a moved clock
/// expires every pending record, in every namespace).
pub fn runs_alone(prepared: &Prepared) -> bool {
    needs_controller(prepared)
        || prepared.scenario.steps.iter().any(|s| {
            matches!(
                s.kind,
                StepKind::Hold { .. }
                    | StepKind::Release { .. }
                    | StepKind::HoldRequests(_)
                    | StepKind::ReleaseRequests { .. }
                    | StepKind::ExpireExpectations { .. }
            )
        })
}

/// Run one scenario on the cluster (judge it with [`judge`]).
pub async fn run(target: &Target, prepared: &Prepared) -> ScenarioRun {
    let started = Instant::now();
    let scenario = &prepared.scenario;
    let mut out = ScenarioRun {
        scenario: scenario.name.clone(),
        path: scenario.path.clone(),
        namespace: String::new(),
        wall_seconds: 0.0,
        judge_seconds: 0.0,
        not_forced: Vec::new(),
        on_cluster: scenario.on_cluster.clone(),
        error: None,
        verdict: None,
        views: Vec::new(),
        settle_points: 0,
        reproduction: None,
        observed: None,
        stopped_at: None,
        await_in_model: None,
        up_to_stop: None,
    };
    match create_namespace(target, &scenario.name).await {
        Ok(ns) => out.namespace = ns,
        Err(e) => {
            out.error = Some(RunError {
                broken: true,
                message: format!(
                    "cannot create a namespace: {}",
                    crate::api_error::describe(&e)
                ),
            });
            return out;
        }
    }
    let result = steps_and_settles(target, prepared, &mut out).await;
    if runs_alone(prepared) {
        // A hold is the run's own: one that stopped (an await that timed out, a settle that
        // never came) stops with its holds set, and the next scenario of the same `rsmc
        // conform` would start with the controller's events or requests held (seen on
        // v1.37.2: the scenario after a stopped one diverged). Released before the
        // namespace goes, so held requests of the namespace land or fail now.
        for gate in target.gate.iter().chain(&target.gc_gate) {
            if let Err(e) = gate.release_all().await {
                out.error.get_or_insert(RunError {
                    broken: true,
                    message: format!("cannot release what the run held at the gates: {e}"),
                });
            }
        }
    }
    request_namespace_deletion(target, &out.namespace);
    match result {
        Ok(raw) => out.observed = Some(raw),
        Err(Stopped { error, recorded }) => {
            out.error = Some(error);
            out.observed = recorded;
        }
    }
    out.wall_seconds = started.elapsed().as_secs_f64();
    out
}

/// Judge a run's recording with the oracle. Done once every scenario has left the cluster:
/// exploring the model is CPU-bound, and a control plane starved of CPU reacts late, which
/// would end settle points early (the quiet window) on a machine with few cores.
pub fn judge(out: &mut ScenarioRun, prepared: &Prepared) {
    let Some(raw) = &out.observed else {
        return;
    };
    let started = Instant::now();
    let text = serde_json::to_string(raw).expect("observed traces serialise");
    let path = PathBuf::from(format!("{}.observed.json", prepared.scenario.name));
    let obs = match observed::parse(&path, &text) {
        Ok(obs) => obs,
        Err(e) => {
            out.error.get_or_insert(RunError {
                broken: false,
                message: format!("the recording cannot be read as an observed trace: {e}"),
            });
            return;
        }
    };
    if out.error.is_some() {
        // A run that stopped short has no last settle point for the oracle to judge, but
        // what the cluster wrote until then may already break the forced property (the
        // steal of a livelock that never settles).
        let subject = prepared.subject();
        if let Some(step) = obs.stopped_at {
            // Stopped there unmet: an await's failure is never the cluster breaking.
            if prepared
                .scenario
                .steps
                .get(step)
                .is_some_and(|s| matches!(s.kind, StepKind::Await(_)))
            {
                let reached = rsmc_oracle::scenario::passes(
                    &prepared.model,
                    &prepared.compiled.origin,
                    step,
                    AWAIT_SEARCH_LIMIT,
                );
                out.await_in_model = Some(reached.into());
            }
            out.up_to_stop = Some(
                judge_up_to(&subject, &obs, step, &default_budget()).unwrap_or_else(|e| {
                    UpToStop::Undecided {
                        detail: e.to_string(),
                    }
                }),
            );
        }
        let broken = rsmc_oracle::judge::broken::in_recording(&obs, &subject.model.sem);
        out.reproduction = prepared
            .scenario
            .reproduces
            .map(|entry| Reproduction::judged(entry, &broken, None));
        out.judge_seconds = started.elapsed().as_secs_f64();
        return;
    }
    let judged = judge::judge(&prepared.subject(), &obs, &default_budget());
    out.judge_seconds = started.elapsed().as_secs_f64();
    match judged {
        Ok(verdict) => {
            out.reproduction = prepared.scenario.reproduces.map(|entry| {
                let unconverged = (entry.property == CONVERGENCE)
                    .then(|| rsmc_oracle::judge::broken::unconverged_at_the_end(&obs))
                    .flatten();
                let mut judged =
                    Reproduction::judged(entry, &verdict.broken_on_cluster, unconverged);
                if !judged.reproduced && verdict.broken_in_every_run(entry.property) {
                    judged.reproduced = true;
                    judged.as_modelled = true;
                }
                judged
            });
            out.verdict = Some(verdict);
        }
        Err(e) => {
            out.error = Some(RunError {
                broken: false,
                message: format!("cannot judge: {e}"),
            })
        }
    }
}

impl Reproduction {
    /// Whether a run reproduced `entry`: one of the recorded writes that broke a property
    /// ([`Verdict::broken_on_cluster`]) broke its property, or, for convergence, the
    /// cluster went quiet without converging (`unconverged`: how).
    fn judged(
        entry: &'static Entry,
        broken: &[rsmc_oracle::judge::broken::BrokenWrite],
        unconverged: Option<String>,
    ) -> Reproduction {
        Reproduction {
            entry: entry.name,
            property: entry.property,
            reproduced: unconverged.is_some()
                || broken.iter().any(|b| b.property == entry.property),
            unconverged,
            as_modelled: false,
        }
    }
}

/// A run that stopped short: why, and what was recorded until then.
struct Stopped {
    error: RunError,
    /// The settled segments, then what was recorded since the last one (with the namespace
    /// as listed when the run stopped); `None` when the cluster could not be listed.
    recorded: Option<RawObserved>,
}

async fn steps_and_settles(
    target: &Target,
    prepared: &Prepared,
    out: &mut ScenarioRun,
) -> Result<RawObserved, Stopped> {
    let client = &target.client;
    let ns = out.namespace.clone();
    crate::service_account::wait_for_admission(client, &ns)
        .await
        .map_err(|message| Stopped {
            error: RunError {
                broken: true,
                message,
            },
            recorded: None,
        })?;
    let start = Api::<ReplicaSet>::namespaced(client.clone(), &ns)
        .list(&ListParams::default())
        .await
        .map_err(|e| Stopped {
            error: RunError {
                broken: true,
                message: format!(
                    "cannot list the namespace {ns}: {}",
                    crate::api_error::describe(&e)
                ),
            },
            recorded: None,
        })?;
    let mut recorder = Recorder::start(
        client,
        &ns,
        start.metadata.resource_version.as_deref().unwrap_or("0"),
    );
    let mut segments = Vec::new();
    let result = take_steps(target, prepared, out, &mut recorder, &mut segments).await;
    let observed = |segments, stopped_at| RawObserved {
        schema: SCHEMA.to_string(),
        scenario: prepared.scenario.name.clone(),
        cluster: target.cluster.clone(),
        segments,
        stopped_at,
    };
    match result {
        Ok(()) => {
            out.stopped_at = None;
            Ok(observed(segments, None))
        }
        Err(error) => {
            // Everything recorded so far, then the namespace as it is: the tail's writes
            // are judged against the last settle point's snapshot, as any segment's are.
            let recorded = crate::settle::list(client, &ns).await.ok().map(|now| {
                segments.push(RawSegment {
                    events: Some(recorder.take_segment(u64::MAX)),
                    refused: Vec::new(),
                    settled: snapshot(&now),
                });
                // Where it stopped, unless the cluster broke: then what it recorded is not
                // the implementation's doing alone.
                observed(segments, out.stopped_at.filter(|_| !error.broken))
            });
            Err(Stopped { error, recorded })
        }
    }
}

/// The scenario's steps, each settle point's segment appended to `segments`.
async fn take_steps(
    target: &Target,
    prepared: &Prepared,
    out: &mut ScenarioRun,
    recorder: &mut Recorder,
    segments: &mut Vec<RawSegment>,
) -> Result<(), RunError> {
    let client = &target.client;
    let ns = out.namespace.clone();
    let broken = |message: String| RunError {
        broken: true,
        message,
    };
    // A hold of the controller's requests in this run's namespace.
    let hold_in = |requests: &rsmc_spec::model::RequestHold| RequestHold {
        namespace: ns.clone(),
        requests: requests.clone(),
    };
    // An await the cluster does not meet: the implementation under test did not do what the
    // scenario's next steps need (say, a faulty build never sends the request a step waits
    // for), which the model would have done. The run does not conform; the cluster is fine.
    let unmet = |message: String| RunError {
        broken: false,
        message: format!("{message} (the run stops here)"),
    };
    let steps = &prepared.scenario.steps;
    let last_settle = steps
        .iter()
        .rposition(|s| s.kind == StepKind::Settle)
        .unwrap_or(steps.len());
    let alive = {
        let controllers = &target.controllers;
        move || match controllers.try_lock() {
            Ok(c) => c.check_alive(),
            // Someone else holds it for a moment: asked again on the next poll.
            Err(_) => Ok(()),
        }
    };
    // Whether real kubelets run the pods is the prepared scenario's to say
    // (`Prepared::on_real_kubelets`): the model judging the run and the runner read the same.
    let real_kubelets = prepared.compiled.script.real_kubelets;
    let policy = target.policy;
    let mut refused = Vec::new();
    // What the scenario holds at the gates when each step starts.
    let mut held = rsmc_oracle::scenario::Held::default();
    for (index, step) in steps.iter().enumerate() {
        out.stopped_at = Some(index);
        let label = format!("step {} ({})", index + 1, step.command());
        // The scenario was validated, so this holds; were it not, the run stops here.
        held.step(index, &step.kind)
            .map_err(|e| broken(format!("{label}: {e}")))?;
        match &step.kind {
            StepKind::Settle => {
                // The queues say when the controllers are done, unless something is held at
                // the gates: a held request keeps its sync in hand, and held events are work
                // the queues do not show yet.
                let gates: Vec<&GateClient> = target.gate.iter().chain(&target.gc_gate).collect();
                let queues = (held.none() && target.controllers.lock().await.queues_readable())
                    .then_some(Queues {
                        probes: &target.probes,
                        gates: &gates,
                    });
                let settled = settle(
                    client,
                    &ns,
                    recorder,
                    policy,
                    real_kubelets,
                    &alive,
                    &held,
                    queues,
                )
                .await
                    .map_err(|e| RunError {
                        broken: matches!(
                            e,
                            crate::settle::SettleError::Broken(_)
                                | crate::settle::SettleError::Api(_)
                        ),
                        message: format!("{label}: {e}"),
                    })?;
                // Right away, so that a recording puts the settle point where the run
                // found it (what a controller writes after it is the next segment's, in
                // the recording as in the run's own segments).
                mark::leave(client, &ns, index, Mark::Settle)
                    .await
                    .map_err(|e| broken(format!("{label}: {e}")))?;
                let events = recorder.take_segment(settled.resource_version);
                out.settle_points += 1;
                if let Some(kubectl) = &target.views {
                    let last = index == last_settle;
                    out.views
                        .push(views(target, kubectl, &ns, &settled, last).await);
                }
                segments.push(RawSegment {
                    events: Some(events),
                    refused: std::mem::take(&mut refused),
                    settled: snapshot(&settled),
                });
            }
            StepKind::Wait { seconds } => {
                tokio::time::sleep(Duration::from_secs(u64::from(*seconds))).await
            }
            StepKind::Relist { .. } => out.not_forced.push(format!(
                "{label}: a watch's expiry cannot be forced from outside; the informers keep watching"
            )),
            StepKind::ExpireExpectations { .. } => {
                // The controller's expectations expire once they are 5 minutes old, at its
                // next sync: a controller whose clock the runner moves has them expire at
                // once; any other (the built-in one) gets the 5 minutes, and a little more so
                // that the timer has surely run out. The mark follows: the expiry is a fact
                // only then.
                let moved = target.controllers.lock().await.move_clock(EXPECTATIONS_TIMEOUT);
                match moved {
                    Some(moved) => moved.map_err(|e| broken(format!("{label}: {e}")))?,
                    None => {
                        eprintln!(
                            "rsmc conform: {}: {label}: waiting {} s for the controller's expectations to expire",
                            prepared.scenario.name,
                            (EXPECTATIONS_TIMEOUT + EXPIRY_MARGIN).as_secs()
                        );
                        tokio::time::sleep(EXPECTATIONS_TIMEOUT + EXPIRY_MARGIN).await;
                        alive().map_err(|e| broken(format!("{label}: {e}")))?;
                    }
                }
                mark::leave(client, &ns, index, Mark::Fault(step))
                    .await
                    .map_err(|e| broken(format!("{label}: {e}")))?;
            }
            StepKind::Hold { kind, to } | StepKind::Release { kind, to } => {
                let Some(gate) = gate_of(target, *to) else {
                    out.not_forced.push(format!(
                        "{label}: only the local control plane's event gates can hold watch events from the {to}; the run is judged without this step"
                    ));
                    continue;
                };
                let hold = matches!(step.kind, StepKind::Hold { .. });
                let leave_mark = || async {
                    mark::leave(client, &ns, index, Mark::Fault(step))
                        .await
                        .map_err(|e| broken(format!("{label}: {e}")))
                };
                if hold {
                    let watching = watch_opened(gate, *kind)
                        .await
                        .map_err(|e| broken(format!("{label}: {e}")))?;
                    if !watching {
                        return Err(broken(format!(
                            "{label}: the {to} opened no watch of {} through its event gate in {} s{}",
                            resource_name(*kind),
                            WATCH_OPEN_TIMEOUT.as_secs(),
                            match to {
                                Recipient::ReplicaSetController => ": the controller under test must use the kubeconfig the runner gives it ($KUBECONFIG)",
                                Recipient::GarbageCollector => "",
                            }
                        )));
                    }
                    leave_mark().await?;
                    gate.hold(*kind).await
                } else {
                    // What the controller does on its stale cache must have happened before
                    // the events flow again: wait for the namespace to be quiet first.
                    quiet(recorder, policy).await;
                    leave_mark().await?;
                    gate.release(*kind).await
                }
                .map_err(|e| broken(format!("{label}: {e}")))?;
            }
            StepKind::HoldRequests(rsmc_spec::model::RequestHold { pattern, .. })
            | StepKind::ReleaseRequests { pattern, .. } => {
                let Some(gate) = gate_of(target, pattern.from) else {
                    out.not_forced.push(format!(
                        "{label}: only the local control plane's event gates can hold requests of the {}; the run is judged without this step",
                        pattern.from
                    ));
                    continue;
                };
                // A release that holds again names the new hold (its `after`).
                let (hold, call) = match &step.kind {
                    StepKind::HoldRequests(h) => (hold_in(h), RequestsCall::Hold),
                    StepKind::ReleaseRequests {
                        pattern,
                        then_hold_after,
                    } => (
                        hold_in(&rsmc_spec::model::RequestHold {
                            pattern: pattern.clone(),
                            after: then_hold_after.unwrap_or(0),
                        }),
                        if then_hold_after.is_some() {
                            RequestsCall::Rehold
                        } else {
                            RequestsCall::Release
                        },
                    ),
                    _ => unreachable!("a hold or release of requests"),
                };
                if call != RequestsCall::Hold {
                    // As for events: what the other actors do meanwhile has happened first.
                    quiet(recorder, policy).await;
                }
                mark::leave(client, &ns, index, Mark::Fault(step))
                    .await
                    .map_err(|e| broken(format!("{label}: {e}")))?;
                gate.requests(call, &hold)
                    .await
                    .map_err(|e| broken(format!("{label}: {e}")))?;
            }
            StepKind::Await(awaited) => {
                let waited = match awaited {
                    Awaited::Held(pattern) => {
                        let Some(gate) = gate_of(target, pattern.from) else {
                            out.not_forced.push(format!(
                                "{label}: no event gate, so nothing is held to wait for"
                            ));
                            continue;
                        };
                        let hold = hold_in(&pattern.into());
                        await_step::held(gate, &hold, target.policy.timeout).await
                    }
                    Awaited::Gone { kind, name } => {
                        await_step::gone(client, &ns, *kind, name, target.policy.timeout).await
                    }
                };
                waited.map_err(|e| unmet(format!("{label}: {e}")))?;
            }
            StepKind::RestartController { .. }
            | StepKind::StartSecondLeader
            | StepKind::StopFirstLeader => {
                let mut controllers = target.controllers.lock().await;
                if let Err(reason) = controllers.can_force() {
                    out.not_forced.push(format!("{label}: {}", reason.0));
                    continue;
                }
                mark::leave(client, &ns, index, Mark::Fault(step))
                    .await
                    .map_err(|e| broken(format!("{label}: {e}")))?;
                let r = match step.kind {
                    StepKind::RestartController { .. } => controllers.restart(),
                    StepKind::StartSecondLeader => controllers.start_second(),
                    _ => controllers.stop_first(),
                };
                r.map_err(|e| broken(format!("{label}: {e}")))?;
            }
            StepKind::Pods { action, .. }
                if real_kubelets && action.is_real_kubelets_own() =>
            {
                // The real scheduler and kubelet do it by themselves; the model judging a
                // run on real kubelets has no such step either
                // (`Compiled::on_real_kubelets`).
            }
            kind => {
                alive().map_err(|e| broken(format!("{label}: {e}")))?;
                let mut ctx = StepContext {
                    client,
                    namespace: &ns,
                    recorder,
                    index,
                    write_pause: target.write_pause,
                    refused: &mut refused,
                    local_images: real_kubelets,
                };
                steps::take(&mut ctx, kind).await.map_err(|e| {
                    let dead = alive().err();
                    broken(match dead {
                        Some(d) => format!("{label}: {d}"),
                        None => format!("{label}: {e}"),
                    })
                })?;
            }
        }
    }
    if needs_controller(prepared) {
        let mut controllers = target.controllers.lock().await;
        controllers
            .reset()
            .map_err(|e| broken(format!("after the scenario: {e}")))?;
    }
    Ok(())
}

/// How long a `hold` waits for its recipient's watch to be open through the gate. A
/// controller just started (the run's first step, or one after a restart) lists before it
/// watches, and a watcher re-opens its watch now and then: on a loaded machine that takes
/// seconds, so one look at the gate would call a healthy controller broken (it did, in CI).
const WATCH_OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether a watch of `kind` is open through `gate`, waiting up to [`WATCH_OPEN_TIMEOUT`].
async fn watch_opened(gate: &GateClient, kind: rsmc_spec::api::Kind) -> Result<bool, String> {
    let started = Instant::now();
    loop {
        if gate.status().await?.watches.get(kind) > 0 {
            return Ok(true);
        }
        if started.elapsed() >= WATCH_OPEN_TIMEOUT {
            return Ok(false);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The gate in front of `actor` (its watches and its requests), where the cluster has one.
fn gate_of(target: &Target, actor: Recipient) -> Option<&GateClient> {
    match actor {
        Recipient::ReplicaSetController => target.gate.as_ref(),
        Recipient::GarbageCollector => target.gc_gate.as_ref(),
    }
}

/// Wait until no event has been recorded for the quiet window, counted from now at the
/// earliest (at most the settle timeout: a controller that keeps writing on a stale cache is
/// released anyway, and its writes are judged). Counting from now matters: the step before a
/// `release` (a delete, say) has usually not been seen yet, and the last event recorded may
/// be seconds old, which would release the events before the controller could act on its
/// stale cache.
async fn quiet(recorder: &Recorder, policy: SettlePolicy) {
    let started = Instant::now();
    while recorder.quiet_since(started) < policy.quiet_window && started.elapsed() < policy.timeout
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn snapshot(settled: &Settled) -> RawSnapshot {
    let value = |v: serde_json::Result<serde_json::Value>| v.expect("objects serialise");
    RawSnapshot {
        replicasets: settled
            .replicasets
            .iter()
            .map(|o| value(serde_json::to_value(o)))
            .collect(),
        pods: settled
            .pods
            .iter()
            .map(|o| value(serde_json::to_value(o)))
            .collect(),
    }
}

/// The kubectl views of a settled namespace and the model's rendering of the same objects.
async fn views(
    target: &Target,
    program: &Kubectl,
    ns: &str,
    settled: &Settled,
    last: bool,
) -> Views {
    let get = |args: &'static [&'static str]| kubectl(program, &target.kubeconfig, ns, args);
    // The status line where the namespace has a ReplicaSet (`render::rs_views_of`).
    let any_rs = !settled.replicasets.is_empty();
    let status = async {
        if any_rs {
            Some(get(&["get", "rs", "-o", render::RS_STATUS_OUTPUT]).await)
        } else {
            None
        }
    };
    let (rs, status, pods) = tokio::join!(
        get(&["get", "rs", "-o", "wide"]),
        status,
        get(&["get", "pods", "--show-labels"])
    );
    let show = |r: Result<String, String>, sort: bool| match r {
        Ok(text) => normalise_table(&text, ns, sort),
        Err(e) => format!("(kubectl failed: {e})\n"),
    };
    let status = status.map(|s| show(s, false));
    let kubectl_view = view_text(&show(rs, false), status.as_deref(), &show(pods, true));
    let describe = if last && !settled.replicasets.is_empty() {
        // Events asked for explicitly: kubectl v1.37 (not v1.35) leaves them out when it
        // describes more than one object (k8s.io/kubectl pkg/cmd/describe/describe.go,
        // `Run`), and the views of every release should show the same things.
        Some(match get(&["describe", "rs", "--show-events=true"]).await {
            Ok(text) => normalise_describe(&text, ns),
            Err(e) => format!("(kubectl failed: {e})\n"),
        })
    } else {
        None
    };
    Views {
        kubectl: kubectl_view,
        model: model_view(settled, any_rs),
        describe,
    }
}

/// The model's `kubectl get` rendering of the settled objects, normalised as the real output
/// is; with the status line where kubectl was asked for it (`status_line`).
fn model_view(settled: &Settled, status_line: bool) -> String {
    let mut uids = observed::UidTokens::default();
    let mut api = ApiServer::default();
    for rs in &settled.replicasets {
        if let Ok(a) = observed::abstract_replicaset(rs, &mut uids) {
            api.replicasets.insert(a.meta.name.clone(), Arc::new(a));
        }
    }
    for p in &settled.pods {
        if let Ok(a) = observed::abstract_pod(p, &mut uids) {
            api.pods.insert(a.meta.name.clone(), Arc::new(a));
        }
    }
    let fix = |t: String, sort: bool| {
        normalise_table(
            &t.replace(
                render::NO_RESOURCES,
                "No resources found in rsmc-model namespace.\n",
            ),
            "rsmc-model",
            sort,
        )
    };
    let status = status_line.then(|| fix(render::get_rs_status(&api), false));
    view_text(
        &fix(render::get_rs_o_wide(&api), false),
        status.as_deref(),
        &fix(render::get_pods(&api), true),
    )
}

/// One settle point's transcript: the ReplicaSet tables, then the pods.
fn view_text(rs_wide: &str, rs_status: Option<&str>, pods: &str) -> String {
    format!(
        "{}\n$ kubectl get pods --show-labels\n{pods}",
        render::rs_views_of(rs_wide, rs_status)
    )
}

/// A fresh namespace for a scenario: `rsmc-<name>-xxxxx`.
async fn create_namespace(target: &Target, scenario: &str) -> Result<String, kube::Error> {
    let api: Api<Namespace> = Api::all(target.client.clone());
    let prefix: String = scenario
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "generateName": format!("rsmc-{}-", prefix.trim_end_matches('-')),
            "labels": {"app.kubernetes.io/managed-by": "rsmc"},
        },
    }))
    .expect("a Namespace manifest");
    let created = api.create(&PostParams::default(), &ns).await?;
    let name = created.name_any();
    target.namespaces.lock().unwrap().push(name.clone());
    Ok(name)
}

/// Delete a scenario's namespace in the background: a task deletes it and plays the kubelet
/// for its pods until it is gone ([`delete_namespaces`], bounded), while the next scenarios
/// run; the end of the run waits for every such task ([`Target::deletions`]).
///
/// Waiting here instead cost every scenario 5 s and more (measured on v1.37.2: 5.1 s to
/// 10.4 s, median 5.4 s, 44 % of the suite's time on the cluster), because the namespace
/// controller starts on a deleted namespace only after a fixed grace period
/// (`namespaceDeletionGracePeriod`, 5 s, in upstream
/// pkg/controller/namespace/namespace_controller.go, `enqueueNamespace`). What goes on in a
/// namespace being deleted never reaches another scenario's: each records, settles and
/// judges its own namespace only.
pub fn request_namespace_deletion(target: &Target, ns: &str) {
    let client = target.client.clone();
    let namespaces = target.namespaces.clone();
    let ns = ns.to_string();
    let task = tokio::spawn(async move {
        let remaining = delete_namespaces(
            &client,
            std::slice::from_ref(&ns),
            NAMESPACE_DELETION_TIMEOUT,
        )
        .await;
        if remaining.is_empty() {
            namespaces.lock().unwrap().retain(|n| *n != ns);
        }
    });
    target.deletions.lock().unwrap().push(task);
}

/// How long a namespace's deletion is waited for.
pub const NAMESPACE_DELETION_TIMEOUT: Duration = Duration::from_secs(60);

/// Delete namespaces and wait until they are gone or `timeout` passes; the names of those
/// still there. Pods bound to a node wait in `Terminating` for a kubelet, and the namespace
/// with them; the runner plays that kubelet and finishes their deletion (grace period 0), as
/// a node's kubelet would once the containers stopped.
pub async fn delete_namespaces(
    client: &Client,
    names: &[String],
    timeout: Duration,
) -> Vec<String> {
    let api: Api<Namespace> = Api::all(client.clone());
    for ns in names {
        let _ = api.delete(ns, &DeleteParams::background()).await;
    }
    let started = Instant::now();
    let mut remaining = Vec::new();
    for ns in names {
        let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
        loop {
            match api.get_opt(ns).await {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
            if started.elapsed() >= timeout {
                remaining.push(ns.clone());
                break;
            }
            if let Ok(list) = pods.list(&ListParams::default()).await {
                for p in list
                    .items
                    .iter()
                    .filter(|p| p.metadata.deletion_timestamp.is_some())
                {
                    let _ = kubelet::finish_deletion(&pods, p).await;
                }
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    remaining
}

/// Where a report's files for a scenario go.
pub fn report_paths(dir: &Path, scenario: &str) -> (PathBuf, PathBuf, PathBuf) {
    (
        dir.join(format!("{scenario}.observed.json")),
        dir.join(format!("{scenario}.verdict.txt")),
        dir.join(format!("{scenario}.views.txt")),
    )
}
