//! Builders and a small sync driver shared by the integration tests that re-express upstream
//! unit tests.
#![allow(dead_code)]

pub mod walk;

use rsmc_spec::api::{ApiError, ApiServer, Request, Response, View};
use rsmc_spec::controller::{begin, Begin, Expectations, Pending, SyncView};
use rsmc_spec::object::{
    labels, LabelSelector, Labels, OwnerReference, Pod, PodPhase, ReplicaSet, Rv, Uid,
};
use rsmc_spec::profile::{Profile, Semantics};

/// The labels every test pod and ReplicaSet template carries unless a test says otherwise.
/// `frontend`, selecting and labelling its pods `tier=frontend`.
pub fn frontend(replicas: i32) -> ReplicaSet {
    ReplicaSet::new(
        "frontend",
        replicas,
        rsmc_spec::object::LabelSelector::match_labels(&[("tier", "frontend")]),
        rsmc_spec::object::labels(&[("tier", "frontend")]),
    )
}

/// A model of the `small` preset whose environment is `steps` (profile k8s-1.20).
pub fn scripted(steps: Vec<rsmc_spec::model::ScriptStep>) -> rsmc_spec::model::RsModel {
    let config = rsmc_spec::config::Config::preset("small").unwrap();
    let script = rsmc_spec::model::Script {
        steps,
        ..rsmc_spec::model::Script::default()
    };
    rsmc_spec::model::RsModel::scripted(config, rsmc_spec::profile::Profile::K8s120, script)
        .unwrap()
}

pub fn app_labels() -> Labels {
    labels(&[("app", "web")])
}

/// A ReplicaSet named `name` selecting `app=web`, as a user would submit it.
pub fn replicaset(name: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet::new(
        name,
        replicas,
        LabelSelector::match_labels(&[("app", "web")]),
        app_labels(),
    )
}

/// A ReplicaSet as if the API server had stored it: identity filled in.
pub fn stored_replicaset(name: &str, replicas: i32, uid: Uid) -> ReplicaSet {
    let mut rs = replicaset(name, replicas);
    rs.meta.uid = uid;
    rs.meta.resource_version = uid;
    rs.meta.created = uid;
    rs.meta.generation = 1;
    rs
}

/// A running, scheduled, not-ready pod labelled `app=web`, with identity filled in from
/// `uid` (creation revision and resourceVersion equal the UID).
pub fn pod(name: &str, uid: Uid) -> Pod {
    let mut p = Pod::new(name, app_labels());
    p.meta.uid = uid;
    p.meta.resource_version = uid;
    p.meta.created = uid;
    p.node_name = Some("node-1".into());
    p.phase = PodPhase::Running;
    p
}

/// Chainable tweaks for test pods.
pub trait PodExt: Sized {
    fn on(self, node: Option<&str>) -> Self;
    fn phase(self, phase: PodPhase) -> Self;
    fn ready_since(self, rv: Rv) -> Self;
    fn available(self) -> Self;
    fn restarts(self, n: u32) -> Self;
    fn created(self, rv: Rv) -> Self;
    fn cost(self, cost: i32) -> Self;
    fn rv(self, rv: Rv) -> Self;
    fn with_labels(self, pairs: &[(&str, &str)]) -> Self;
    fn controlled_by(self, rs: &ReplicaSet) -> Self;
    fn owned_by_uid(self, name: &str, uid: Uid) -> Self;
    fn deleting(self, at: Rv) -> Self;
}

impl PodExt for Pod {
    fn on(mut self, node: Option<&str>) -> Self {
        self.node_name = node.map(str::to_string);
        self
    }
    fn phase(mut self, phase: PodPhase) -> Self {
        self.phase = phase;
        self
    }
    fn ready_since(mut self, rv: Rv) -> Self {
        self.ready_since = Some(rv);
        self
    }
    fn available(mut self) -> Self {
        self.available = true;
        self
    }
    fn restarts(mut self, n: u32) -> Self {
        self.restarts = n;
        self
    }
    fn created(mut self, rv: Rv) -> Self {
        self.meta.created = rv;
        self
    }
    fn cost(mut self, cost: i32) -> Self {
        self.deletion_cost = Some(cost);
        self
    }
    fn rv(mut self, rv: Rv) -> Self {
        self.meta.resource_version = rv;
        self
    }
    fn with_labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.meta.labels = labels(pairs);
        self
    }
    fn controlled_by(self, rs: &ReplicaSet) -> Self {
        self.owned_by_uid(&rs.meta.name, rs.meta.uid)
    }
    fn owned_by_uid(mut self, name: &str, uid: Uid) -> Self {
        self.meta
            .owner_references
            .push(OwnerReference::controller_of(name, uid));
        self
    }
    fn deleting(mut self, at: Rv) -> Self {
        self.meta.deletion_timestamp = Some(at);
        self
    }
}

/// Both profiles' semantics, for tests that run a table under each.
pub fn both_profiles() -> [Semantics; 2] {
    [Profile::K8s120.semantics(), Profile::Upstream.semantics()]
}

/// Apply a request that must succeed.
pub fn must(api: &mut ApiServer, request: Request) -> Response {
    api.apply(&request)
        .unwrap_or_else(|e| panic!("{request:?} failed: {e}"))
}

/// Create `rs` in `api` and return the stored copy.
pub fn create_rs(api: &mut ApiServer, rs: ReplicaSet) -> ReplicaSet {
    let name = rs.meta.name.clone();
    must(api, Request::CreateReplicaSet(rs));
    ReplicaSet::clone(&api.replicasets[&name])
}

/// Create `pod` in `api` (identity is assigned by the server) and return the stored copy.
pub fn create_pod(api: &mut ApiServer, pod: Pod) -> Pod {
    let Response::Written { name, .. } = must(api, Request::CreatePod(pod)) else {
        panic!("a pod create writes");
    };
    Pod::clone(&api.pods[&name])
}

/// A bare pod as a user submits it (no identity yet), labelled `app=web`.
pub fn new_pod(name: &str) -> Pod {
    Pod::new(name, app_labels())
}

/// What one sync did.
#[derive(Debug, Default)]
pub struct SyncRun {
    /// Every request sent, in order, with its outcome.
    pub sent: Vec<(Request, Result<Response, ApiError>)>,
    /// Live GETs of the ReplicaSet.
    pub gets: usize,
    /// The victim sets offered at scale-down (the first one is taken).
    pub offered: Vec<Vec<String>>,
    /// `Pending::Done`'s error flag, or `None` when the ReplicaSet was not in the cache.
    pub error: Option<bool>,
}

impl SyncRun {
    pub fn creates(&self) -> usize {
        self.sent
            .iter()
            .filter(|(r, _)| matches!(r, Request::CreatePod(_)))
            .count()
    }
    pub fn deletes(&self) -> Vec<String> {
        self.sent
            .iter()
            .filter_map(|(r, _)| match r {
                Request::DeletePod { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect()
    }
    pub fn patches(&self) -> usize {
        self.sent
            .iter()
            .filter(|(r, _)| matches!(r, Request::PatchPodOwnerReferences { .. }))
            .count()
    }
    pub fn status_writes(&self) -> usize {
        self.sent
            .iter()
            .filter(|(r, _)| matches!(r, Request::UpdateReplicaSetStatus { .. }))
            .count()
    }
}

/// Runs one sync of `key` to its end, reading the caches as of `cache_at` (both informers at
/// the same revision) and sending every request to `api`. `inject` may replace the outcome of
/// a request with an error (the request is then not applied).
pub fn run_sync_with(
    api: &mut ApiServer,
    key: &str,
    cache_at: Rv,
    sem: &Semantics,
    expectations: &mut Expectations,
    inject: impl FnMut(&Request) -> Option<ApiError>,
) -> SyncRun {
    run_sync_burst(api, key, cache_at, sem, expectations, 500, inject)
}

/// [`run_sync_with`] with a `BurstReplicas` other than upstream's 500.
pub fn run_sync_burst(
    api: &mut ApiServer,
    key: &str,
    cache_at: Rv,
    sem: &Semantics,
    expectations: &mut Expectations,
    burst_replicas: u32,
    mut inject: impl FnMut(&Request) -> Option<ApiError>,
) -> SyncRun {
    let rs_view: View<ReplicaSet> = api.replicasets_at(cache_at);
    let pods: View<Pod> = api.pods_at(cache_at);
    let mut run = SyncRun::default();
    let mut task = match begin(
        key,
        rs_view.get(key).map(|r| &**r),
        &pods,
        (cache_at, cache_at),
        expectations,
        sem,
    ) {
        Begin::Gone => return run,
        Begin::Run(task) => task,
    };
    let view = SyncView {
        rs: &rs_view[key],
        pods: &pods,
        sem,
        burst_replicas,
    };
    for _ in 0..10_000 {
        match task.advance(&view, expectations) {
            Pending::GetReplicaSet(name) => {
                run.gets += 1;
                let live = api.replicasets.get(&name).cloned();
                task.record_get(&view, live.as_deref());
            }
            Pending::Send(request) => {
                let outcome = match inject(&request) {
                    Some(err) => Err(err),
                    None => api.apply(&request),
                };
                task.record(&view, outcome.as_ref().map(|_| ()), expectations);
                run.sent.push((request, outcome));
            }
            Pending::Choose(choices) => {
                let first = choices.first();
                run.offered = choices.all();
                task.choose(first, expectations);
            }
            Pending::Order(pods) => task.choose(pods, expectations),
            Pending::Done { error } => {
                run.error = Some(error);
                return run;
            }
        }
    }
    panic!("sync of {key} did not finish");
}

/// [`run_sync_with`] with every request applied as is, caches up to date.
pub fn run_sync(
    api: &mut ApiServer,
    key: &str,
    sem: &Semantics,
    expectations: &mut Expectations,
) -> SyncRun {
    let at = api.rv;
    run_sync_with(api, key, at, sem, expectations, |_| None)
}

/// Sorted name lists from string slices, for comparing victim sets.
pub fn sets(choices: &[&[&str]]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = choices
        .iter()
        .map(|c| {
            let mut v: Vec<String> = c.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        })
        .collect();
    out.sort();
    out
}
