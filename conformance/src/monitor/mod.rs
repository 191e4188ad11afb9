//! `rsmc monitor`: a live watch of a running cluster that reports, as they happen, the
//! writes that break a safety property of the model.
//!
//! **What it reads.** `list` and `watch` of pods and ReplicaSets (one namespace or all), and
//! of Events with reason `SuccessfulDelete` on ReplicaSets (to name who deleted a pod; without
//! that permission deletions by a controller are left unjudged and a warning says so). Nothing
//! is written. The watches are kube-rs watchers: a watch the server closes resumes from its
//! last resourceVersion, one that cannot (410 Gone, as after an API server restart whose watch
//! cache starts later) lists again.
//!
//! **What it judges** (each change on the view just before it, by the oracle's rules in
//! `rsmc_oracle::judge::broken`, so the model, the oracle and the monitor name a write alike):
//! - any pod written with two controller references: at most one controller reference per pod;
//! - a pod created by a controller ([`attribution`]: its controller reference's field
//!   manager) that makes its ReplicaSet control more active pods than the largest
//!   `spec.replicas` of the last [`view::REPLICAS_WINDOW`]: no over-creation;
//! - a controller reference set by a controller that takes a pod from a live ReplicaSet (no
//!   stealing), or names a ReplicaSet that is gone, being deleted or not matching (adoption
//!   rules);
//! - a pod deleted while it references a ReplicaSet seen being deleted with propagation
//!   Orphan: orphan deletion keeps its dependents. Whoever sends it: the garbage collector
//!   removes that reference from every dependent before it lets the owner go, and a user
//!   deleting such a pod in that window (milliseconds on a healthy cluster) would be reported
//!   too — the only deletion judged without knowing its sender;
//! - a pod deletion a ReplicaSet's controller claims (its `SuccessfulDelete` event) of a pod it
//!   did not control at that moment (the controller deletes only pods it controls), or, when
//!   it had a surplus, of a pod the ranking does not put first (scale-down deletes the pods
//!   the ranking puts first; pods' timestamps are not compared, so ties are allowed);
//! - once a namespace has had no change for the quiet window, each live ReplicaSet whose
//!   status does not count its pods (replicas, ready), does not observe its generation, or
//!   says ready > replicas or available > ready: status consistent.
//!
//! **What it leaves alone**, so that users' actions raise nothing: every write whose
//! controller reference was set by a manager that is not a controller's, every deletion no
//! controller claims (kubectl delete of pods, the garbage collector's and the namespace
//! controller's deletions, evictions) but the orphan rule above, labels, scales, ReplicaSet
//! deletions of any propagation, bare pods. Creations while the ReplicaSet is being deleted
//! are not judged: a slow-start batch the sync decided before the deletion legitimately goes
//! on, and a watch cannot tell it from a new decision. Pods controlled by other kinds (Jobs,
//! DaemonSets) are not in the view.
//!
//! **Gaps.** While a watch is broken nothing is judged from it; when it is back the gap is
//! reported: resumed (nothing missed) or re-listed (the listed objects replace the view, no
//! change between is judged, and the number of objects that differ is given). Statuses are
//! not compared while a watch is broken.

pub mod attribution;
pub mod judging;
pub mod report;
pub mod sequence;
pub mod view;

use futures::{Stream, StreamExt};
use judging::{JudgeSettings, Recorder, Source};
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use kube::api::ListParams;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};
use report::{Report, Status};
use std::pin::Pin;
use std::time::{Duration, Instant};
use view::{Monitor, Settings, Watch};

/// How the monitor runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// One namespace, or all of them (`None`).
    pub namespace: Option<String>,
    pub settings: Settings,
    /// How often the status line is given (`None`: never).
    pub status_every: Option<Duration>,
    /// `--judge`: the oracle on each namespace's scenario once quiet ([`judging`]).
    pub judge: Option<JudgeSettings>,
}

/// How a run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    pub alarms: u64,
    /// Judgements (`--judge`) that found a namespace's run nonconforming.
    pub nonconforming: u64,
    pub unreadable: u64,
    /// Judgements still under way when the monitor stopped, abandoned.
    pub abandoned: usize,
}

/// What the watches deliver, merged.
enum Input {
    Pod(watcher::Result<watcher::Event<core::Pod>>),
    ReplicaSet(watcher::Result<watcher::Event<apps::ReplicaSet>>),
    Event(watcher::Result<watcher::Event<core::Event>>),
    Namespace(watcher::Result<watcher::Event<core::Namespace>>),
    Mark(watcher::Result<watcher::Event<core::ConfigMap>>),
}

/// The field selector of the deletions' events.
const DELETE_EVENTS: &str = rsmc_oracle::delete_claims::FIELD_SELECTOR;

fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Whether the monitor may list what it needs: `Err` for pods or ReplicaSets (it cannot
/// work), `Ok(false)` for events (it works, without judging controllers' deletions).
pub async fn check_access(client: &Client, namespace: Option<&str>) -> Result<bool, String> {
    let one = ListParams::default().limit(1);
    api::<core::Pod>(client, namespace)
        .list_metadata(&one)
        .await
        .map_err(|e| format!("cannot list pods: {e}"))?;
    api::<apps::ReplicaSet>(client, namespace)
        .list_metadata(&one)
        .await
        .map_err(|e| format!("cannot list replicasets: {e}"))?;
    let events = api::<core::Event>(client, namespace)
        .list_metadata(&one.fields(DELETE_EVENTS))
        .await;
    Ok(events.is_ok())
}

/// The namespaces `--judge` watches: all, or the one watched (by name).
fn namespaces_watched(
    client: &Client,
    namespace: Option<&str>,
) -> (Api<core::Namespace>, watcher::Config) {
    let config = watcher::Config::default();
    let config = match namespace {
        Some(ns) => config.fields(&format!("metadata.name={ns}")),
        None => config,
    };
    (Api::all(client.clone()), config)
}

/// The watch of the marks `rsmc conform` leaves (of faults and of settle points): ConfigMaps
/// with their label only.
fn marks() -> watcher::Config {
    watcher::Config::default().labels(&rsmc_oracle::import::entry::MARK_LABEL.selector())
}

/// Whether `--judge` may list and watch the marks (ConfigMaps, by their label).
pub async fn check_mark_access(client: &Client, namespace: Option<&str>) -> Result<(), String> {
    let params = ListParams::default()
        .limit(1)
        .labels(&marks().label_selector.unwrap_or_default());
    api::<core::ConfigMap>(client, namespace)
        .list_metadata(&params)
        .await
        .map(|_| ())
        .map_err(|e| format!("cannot list configmaps: {e}"))
}

/// Whether `--judge` may list and watch namespaces (it must see where each one starts and
/// where its deletion begins).
pub async fn check_namespace_access(
    client: &Client,
    namespace: Option<&str>,
) -> Result<(), String> {
    let (api, config) = namespaces_watched(client, namespace);
    let mut params = ListParams::default().limit(1);
    if let Some(fields) = config.field_selector {
        params = params.fields(&fields);
    }
    api.list_metadata(&params)
        .await
        .map(|_| ())
        .map_err(|e| format!("cannot list namespaces: {e}"))
}

/// Each Ctrl-C or SIGTERM the process gets while the stream lives: what [`run`] stops on
/// (the first ends the watch, the next abandons the judgements still under way). Once a
/// handler is installed the signals no longer end the process by themselves, so every one
/// must be heard.
pub fn signals() -> Pin<Box<dyn Stream<Item = ()> + Send>> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        loop {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            if tx.send(()).is_err() {
                return;
            }
        }
    });
    futures::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|()| ((), rx)) },
    )
    .boxed()
}

/// How long judgements under way when the watch stops are waited for before they are
/// abandoned. A monitor runs as a pod: Kubernetes kills it 30 seconds after SIGTERM by
/// default, and a judgement can search for minutes.
pub const JUDGE_GRACE: Duration = Duration::from_secs(5);

/// Watch until the first of `signals` (Ctrl-C, SIGTERM); each report goes to `on_report`,
/// each status to `on_status`. The judgements under way then get [`JUDGE_GRACE`] to finish,
/// or until the next signal, and are abandoned (counted in [`Outcome::abandoned`]; their
/// blocking threads are left to the process's exit).
pub async fn run(
    client: Client,
    options: Options,
    with_events: bool,
    mut on_report: impl FnMut(&Report),
    mut on_status: impl FnMut(&Status),
    mut signals: impl Stream<Item = ()> + Unpin,
) -> Outcome {
    let ns = options.namespace.as_deref();
    let config = watcher::Config::default();
    let pods = watcher(api::<core::Pod>(&client, ns), config.clone())
        .default_backoff()
        .map(Input::Pod)
        .boxed();
    let replicasets = watcher(api::<apps::ReplicaSet>(&client, ns), config.clone())
        .default_backoff()
        .map(Input::ReplicaSet)
        .boxed();
    let mut streams: Vec<Pin<Box<dyn Stream<Item = Input> + Send>>> = vec![pods, replicasets];
    if with_events {
        let events = watcher(
            api::<core::Event>(&client, ns),
            config.fields(DELETE_EVENTS),
        )
        .default_backoff()
        .map(Input::Event)
        .boxed();
        streams.push(events);
    }
    let mut recorder = options.judge.clone().map(Recorder::new);
    if let Some(judge) = &options.judge {
        let (namespaces, config) = namespaces_watched(&client, ns);
        streams.push(
            watcher(namespaces, config)
                .default_backoff()
                .map(Input::Namespace)
                .boxed(),
        );
        if judge.marks {
            let marks = watcher(api::<core::ConfigMap>(&client, ns), marks());
            streams.push(marks.default_backoff().map(Input::Mark).boxed());
        }
    }
    let (verdicts_in, mut verdicts) = tokio::sync::mpsc::unbounded_channel();
    let mut nonconforming = 0;
    let mut inputs = futures::stream::select_all(streams);
    let mut monitor = Monitor::new(options.settings, Instant::now());
    let mut tick = tokio::time::interval(view::TICK);
    let status_every = options.status_every.unwrap_or(Duration::from_secs(3600));
    let mut status = tokio::time::interval(status_every);
    status.tick().await;
    let mut judging = 0usize;
    loop {
        let reports = tokio::select! {
            _ = signals.next() => break,
            input = inputs.next() => match input {
                Some(input) => {
                    let (mut reports, job) = match &mut recorder {
                        Some(r) => record(r, &input),
                        None => (Vec::new(), None),
                    };
                    if let (Some(job), Some(r)) = (job, &recorder) {
                        spawn_judge(job, r.settings().clone(), verdicts_in.clone());
                        judging += 1;
                    }
                    reports.extend(handle(&mut monitor, input));
                    reports
                }
                None => break,
            },
            Some(report) = verdicts.recv() => {
                judging -= 1;
                if let Report::Judgement(j) = &report {
                    nonconforming += u64::from(j.conforms == Some(false));
                    if let Some(r) = &mut recorder {
                        r.judged(&j.namespace);
                    }
                }
                vec![report]
            }
            _ = tick.tick() => {
                if let Some(r) = &mut recorder {
                    for job in r.due(Instant::now()) {
                        spawn_judge(job, r.settings().clone(), verdicts_in.clone());
                        judging += 1;
                    }
                }
                monitor.tick(Instant::now())
            }
            _ = status.tick() => {
                if options.status_every.is_some() {
                    on_status(&Status {
                        judging,
                        ..monitor.status(Instant::now())
                    });
                }
                Vec::new()
            }
        };
        for r in &reports {
            on_report(r);
        }
    }
    // What is still held was seen: judge it before leaving.
    for r in monitor.tick(Instant::now() + sequence::HOLD) {
        on_report(&r);
    }
    // The judgements under way are waited for, a while: a last one may be the
    // nonconformance.
    drop(verdicts_in);
    let grace = tokio::time::sleep(JUDGE_GRACE);
    tokio::pin!(grace);
    while judging > 0 {
        let report = tokio::select! {
            Some(report) = verdicts.recv() => report,
            _ = &mut grace => break,
            _ = signals.next() => break,
        };
        judging -= 1;
        if let Report::Judgement(j) = &report {
            nonconforming += u64::from(j.conforms == Some(false));
        }
        on_report(&report);
    }
    Outcome {
        alarms: monitor.alarms(),
        nonconforming,
        unreadable: monitor.unreadable(),
        abandoned: judging,
    }
}

/// Hand a change to `--judge`'s recorder: reports of namespaces it stops judging, and the
/// last judgement of a namespace whose deletion began.
fn record(recorder: &mut Recorder, input: &Input) -> (Vec<Report>, Option<judging::Job>) {
    let now = Instant::now();
    match input {
        Input::Pod(Ok(e)) => (recorder.event(Source::Pods, e, now), None),
        Input::ReplicaSet(Ok(e)) => (recorder.event(Source::ReplicaSets, e, now), None),
        Input::Event(Ok(e)) => (recorder.event(Source::Events, e, now), None),
        Input::Namespace(Ok(e)) => recorder.namespace_event(e, now),
        Input::Mark(Ok(e)) => (recorder.event(Source::Marks, e, now), None),
        _ => (Vec::new(), None),
    }
}

/// Judge off the watch loop; the verdict comes back on `to`.
fn spawn_judge(
    job: judging::Job,
    settings: JudgeSettings,
    to: tokio::sync::mpsc::UnboundedSender<Report>,
) {
    tokio::task::spawn_blocking(move || {
        let _ = to.send(judging::judge(job, &settings));
    });
}

fn handle(monitor: &mut Monitor, input: Input) -> Vec<Report> {
    let now = Instant::now();
    match input {
        Input::Pod(Ok(e)) => monitor.pod_event(e, now),
        Input::ReplicaSet(Ok(e)) => monitor.replicaset_event(e, now),
        Input::Event(Ok(e)) => monitor.event_event(e, now),
        Input::Pod(Err(e)) => failed(monitor, Watch::Pods, e, now),
        Input::ReplicaSet(Err(e)) => failed(monitor, Watch::ReplicaSets, e, now),
        Input::Event(Err(e)) => failed(monitor, Watch::Events, e, now),
        // The namespaces and the marks matter to `--judge` alone; their watches retry by
        // themselves.
        Input::Namespace(_) | Input::Mark(_) => Vec::new(),
    }
}

fn failed(monitor: &mut Monitor, watch: Watch, e: watcher::Error, now: Instant) -> Vec<Report> {
    monitor.watch_failed(watch, e.to_string(), now);
    Vec::new()
}
