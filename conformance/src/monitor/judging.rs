//! `rsmc monitor --judge`: what the watches saw of each namespace, kept as the stream a
//! `kubectl get --watch --output-watch-events -o json` of pods, ReplicaSets and namespaces
//! would have printed (with the ReplicaSet controllers' `SuccessfulDelete` events, which name
//! who deleted a pod, when the monitor may watch events, and the marks `rsmc conform` leaves of
//! its faults and settle points, when it may watch ConfigMaps), and handed to the watch import and the oracle
//! ([`rsmc_oracle::import::Recording::read_watch_streams`], [`rsmc_oracle::import::Imported::judge`]) each time the
//! namespace has been quiet for the quiet window after a change. So a namespace is judged
//! exactly as `rsmc import --watch` and `rsmc oracle` would judge a recording of it, with the
//! same attribution rules, and the verdict covers the whole scenario so far: a
//! nonconformance the per-write rules cannot see (a write the model never allows at that
//! point, a settle point the model cannot reach) is found too.
//!
//! **Which namespaces.** A scenario starts from an empty namespace, so only namespaces the
//! monitor saw created are judged; one that was listed when the monitor started (or whose
//! pods or ReplicaSets were) is left alone, and said so once. When a namespace's deletion
//! begins it is judged a last time, up to its teardown, and forgotten.
//!
//! **What stops a namespace being judged**, said once each: a watch of pods or ReplicaSets
//! that re-listed (what changed in the gap is unknown: the stream would lie), and a history
//! past [`MAX_NAMESPACE_BYTES`], or one that would take the histories together past
//! [`MAX_TOTAL_BYTES`]: memory stays bounded whatever the cluster does.

use super::report::{rfc3339, Judgement, Report};
use super::view::watch_event_type;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::watcher;
use kube::ResourceExt;
use rsmc_oracle::import::writer::Attribution;
use rsmc_oracle::import::{Options as ImportOptions, Recording};
use rsmc_oracle::judge::render;
use rsmc_spec::budget::Budget;
use rsmc_spec::bugs::{Bug, Fix};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Cursor;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// The most one namespace's history may hold.
pub const MAX_NAMESPACE_BYTES: usize = 16 << 20;
/// The most all the histories together may hold.
pub const MAX_TOTAL_BYTES: usize = 128 << 20;
/// How long a deleted namespace's name is remembered, so that its teardown's last events,
/// which may come after the namespace's own, start no new history.
const ENDED_FOR: Duration = Duration::from_secs(300);

/// How namespaces are judged.
#[derive(Clone, Debug)]
pub struct JudgeSettings {
    /// The release the cluster runs (`v1.37.2`): the model's behaviour.
    pub server: String,
    pub attribution: Attribution,
    pub budget: Budget,
    /// The catalogue's switches the model is judged with (`rsmc bugs`).
    pub bug: Option<Bug>,
    pub fixes: Vec<Fix>,
    /// A namespace is judged once it has had no change for this long.
    pub quiet: Duration,
    /// Whether the marks `rsmc conform` leaves are watched (ConfigMaps labelled
    /// [`rsmc_oracle::import::entry::MARK_LABEL`]; it needs list and watch on ConfigMaps): a
    /// run with forced faults is then judged with them, and cut at the run's settle points.
    pub marks: bool,
}

/// Which watch an event came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Pods,
    ReplicaSets,
    Namespaces,
    /// The controllers' `SuccessfulDelete` events.
    Events,
    /// The marks of faults and settle points (ConfigMaps).
    Marks,
}

/// One namespace's history, as a watch stream.
struct History {
    stream: Vec<u8>,
    uids: HashSet<String>,
    /// Pod and ReplicaSet changes (the namespace's own are not writes to judge).
    writes: u64,
    /// `writes` when it was last handed out to judge.
    judged_writes: u64,
    last_change: Instant,
    judging: bool,
}

/// A namespace's history to judge, off the watch loop.
#[derive(Debug)]
pub struct Job {
    pub namespace: String,
    stream: Vec<u8>,
    /// Its deletion began: the last judgement.
    pub last: bool,
}

/// The histories of the namespaces being judged.
pub struct Recorder {
    settings: JudgeSettings,
    histories: BTreeMap<String, History>,
    bytes: usize,
    /// Namespaces not judged (they had objects before the monitor saw them, or their
    /// history was dropped), each said once.
    left_alone: HashSet<String>,
    /// Namespaces judged for the last time, and when.
    ended: HashMap<String, Instant>,
    /// Whether each watch has delivered its first list.
    listed: [bool; 5],
}

impl Recorder {
    pub fn new(settings: JudgeSettings) -> Recorder {
        Recorder {
            settings,
            histories: BTreeMap::new(),
            bytes: 0,
            left_alone: HashSet::new(),
            ended: HashMap::new(),
            listed: [false; 5],
        }
    }

    pub fn settings(&self) -> &JudgeSettings {
        &self.settings
    }

    /// A namespace's change; the start of its deletion hands out its last judgement.
    pub fn namespace_event(
        &mut self,
        event: &watcher::Event<core::Namespace>,
        now: Instant,
    ) -> (Vec<Report>, Option<Job>) {
        let reports = self.event(Source::Namespaces, event, now);
        let deleting = match event {
            watcher::Event::Apply(ns)
            | watcher::Event::InitApply(ns)
            | watcher::Event::Delete(ns) => ns
                .metadata
                .deletion_timestamp
                .is_some()
                .then(|| ns.name_any()),
            _ => None,
        };
        let job = deleting.and_then(|name| self.end(&name, now));
        (reports, job)
    }

    /// The namespaces quiet for the quiet window since a change not judged yet.
    pub fn due(&mut self, now: Instant) -> Vec<Job> {
        self.ended
            .retain(|_, at| now.duration_since(*at) < ENDED_FOR);
        let quiet = self.settings.quiet;
        let mut jobs = Vec::new();
        for (namespace, h) in &mut self.histories {
            if !h.judging
                && h.writes > h.judged_writes
                && now.duration_since(h.last_change) >= quiet
            {
                h.judging = true;
                h.judged_writes = h.writes;
                jobs.push(Job {
                    namespace: namespace.clone(),
                    stream: h.stream.clone(),
                    last: false,
                });
            }
        }
        jobs
    }

    /// A judgement of `namespace` is back: it may be judged again.
    pub fn judged(&mut self, namespace: &str) {
        if let Some(h) = self.histories.get_mut(namespace) {
            h.judging = false;
        }
    }

    /// The last judgement of a namespace whose deletion began, and its history forgotten.
    fn end(&mut self, namespace: &str, now: Instant) -> Option<Job> {
        let h = self.histories.remove(namespace)?;
        self.bytes -= h.stream.len();
        self.ended.insert(namespace.to_string(), now);
        (h.writes > 0).then(|| Job {
            namespace: namespace.to_string(),
            stream: h.stream,
            last: true,
        })
    }

    /// A change `source`'s watch delivered (a namespace's goes through
    /// [`Recorder::namespace_event`]).
    pub fn event<K>(
        &mut self,
        source: Source,
        event: &watcher::Event<K>,
        now: Instant,
    ) -> Vec<Report>
    where
        K: kube::Resource + Serialize,
    {
        let i = source as usize;
        match event {
            watcher::Event::Init => Vec::new(),
            watcher::Event::InitDone => {
                self.listed[i] = true;
                Vec::new()
            }
            watcher::Event::InitApply(object) => self.listed_object(source, object, now),
            watcher::Event::Apply(object) => self.record(source, object, false, now),
            watcher::Event::Delete(object) if source == Source::Namespaces => {
                // Gone: a namespace of that name made later is a new one. Its teardown's
                // last events may still come: it stays ended for a while.
                let name = namespace_of(source, object);
                self.left_alone.remove(&name);
                self.ended.insert(name, now);
                Vec::new()
            }
            watcher::Event::Delete(object) => self.record(source, object, true, now),
        }
    }

    /// An object of a (re-)list: its namespace existed before the monitor saw it whole.
    fn listed_object<K>(&mut self, source: Source, object: &K, now: Instant) -> Vec<Report>
    where
        K: kube::Resource + Serialize,
    {
        let namespace = namespace_of(source, object);
        if matches!(source, Source::Events | Source::Marks) {
            // Old events and marks are history; a re-list brings back those made in a gap,
            // which the import puts in place by their resourceVersion.
            if self.listed[source as usize] && self.histories.contains_key(&namespace) {
                return self.record(source, object, false, now);
            }
            return Vec::new();
        }
        if self.ended.contains_key(&namespace) {
            return Vec::new();
        }
        if !self.listed[source as usize] {
            // The first list: whatever it holds was there before the monitor.
            if self.histories.contains_key(&namespace) && source == Source::Namespaces {
                // Seen changing before its own list came: it was there before.
                return self.drop_history(&namespace, "it existed before the monitor started");
            }
            if !self.histories.contains_key(&namespace) {
                self.leave_alone(&namespace);
            }
            return Vec::new();
        }
        if source == Source::Namespaces || !self.histories.contains_key(&namespace) {
            // A namespace watch re-listing loses no pod or ReplicaSet change.
            return Vec::new();
        }
        self.drop_history(
            &namespace,
            match source {
                Source::Pods => "the pods' watch re-listed: what changed in the gap is unknown",
                _ => "the ReplicaSets' watch re-listed: what changed in the gap is unknown",
            },
        )
    }

    fn record<K>(&mut self, source: Source, object: &K, deleted: bool, now: Instant) -> Vec<Report>
    where
        K: kube::Resource + Serialize,
    {
        let namespace = namespace_of(source, object);
        if self.left_alone.contains(&namespace) || self.ended.contains_key(&namespace) {
            return Vec::new();
        }
        let Ok(value) = serde_json::to_value(object) else {
            return Vec::new();
        };
        let uid = object.meta().uid.clone().unwrap_or_default();
        let h = self.histories.entry(namespace.clone()).or_insert(History {
            stream: Vec::new(),
            uids: HashSet::new(),
            writes: 0,
            judged_writes: 0,
            last_change: now,
            judging: false,
        });
        let event_type = watch_event_type(deleted, h.uids.contains(&uid));
        if deleted {
            h.uids.remove(&uid);
        } else {
            h.uids.insert(uid);
        }
        let line = serde_json::json!({ "type": event_type, "object": value }).to_string() + "\n";
        let before = h.stream.len();
        h.stream.extend_from_slice(line.as_bytes());
        h.last_change = now;
        if matches!(source, Source::Pods | Source::ReplicaSets) {
            h.writes += 1;
        }
        let (size, grown) = (h.stream.len(), h.stream.len() - before);
        self.bytes += grown;
        if size > MAX_NAMESPACE_BYTES {
            return self.drop_history(
                &namespace,
                &format!("its history passed {} MiB", MAX_NAMESPACE_BYTES >> 20),
            );
        }
        if self.bytes > MAX_TOTAL_BYTES {
            return self.drop_history(
                &namespace,
                &format!(
                    "the histories together passed {} MiB",
                    MAX_TOTAL_BYTES >> 20
                ),
            );
        }
        Vec::new()
    }

    fn leave_alone(&mut self, namespace: &str) {
        self.left_alone.insert(namespace.to_string());
    }

    fn drop_history(&mut self, namespace: &str, why: &str) -> Vec<Report> {
        if let Some(h) = self.histories.remove(namespace) {
            self.bytes -= h.stream.len();
        }
        self.leave_alone(namespace);
        vec![Report::Judgement(Judgement {
            namespace: namespace.to_string(),
            judged_at: rfc3339(SystemTime::now()),
            detail: format!("not judged from now on: {why}"),
            ..Judgement::default()
        })]
    }
}

/// The namespace an object belongs to (a namespace's is its own name).
fn namespace_of<K: kube::Resource>(source: Source, object: &K) -> String {
    match source {
        Source::Namespaces => object.meta().name.clone().unwrap_or_default(),
        _ => object.meta().namespace.clone().unwrap_or_default(),
    }
}

/// Import `job`'s history and judge it (blocking: run it off the watch loop).
pub fn judge(job: Job, settings: &JudgeSettings) -> Report {
    let started = Instant::now();
    let label = PathBuf::from(format!("<rsmc monitor: namespace {}>", job.namespace));
    let options = ImportOptions {
        namespace: Some(job.namespace.clone()),
        server: Some(settings.server.clone()),
        attribution: settings.attribution.clone(),
        ..ImportOptions::default()
    };
    let mut judgement = Judgement {
        namespace: job.namespace.clone(),
        last: job.last,
        ..Judgement::default()
    };
    let imported = Recording::read_watch_streams(
        vec![(label, Cursor::new(job.stream))],
        &settings.attribution,
        Some(&job.namespace),
        options.quiet,
    )
    .and_then(|recording| recording.import(&options));
    match imported {
        Err(e) => judgement.detail = format!("cannot import what was watched: {e}"),
        Ok(imported) => {
            judgement.steps = imported.summary.steps;
            judgement.settle_points = imported.summary.segments;
            match imported.judge_switched(&settings.budget, settings.bug, &settings.fixes) {
                Err(e) => judgement.detail = format!("not judged: {e}"),
                Ok(verdict) => {
                    judgement.conforms = Some(verdict.conforms);
                    if !verdict.conforms {
                        judgement.detail = render(&verdict);
                    }
                    judgement.verdict = serde_json::to_value(&verdict).ok();
                }
            }
        }
    }
    judgement.seconds = started.elapsed().as_secs_f64();
    judgement.judged_at = rfc3339(SystemTime::now());
    Report::Judgement(judgement)
}
