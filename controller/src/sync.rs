//! One sync of one ReplicaSet: the spec's [`SyncTask`], executed against the API server.
//!
//! `syncReplicaSet` (pkg/controller/replicaset/replica_set.go) in the spec is a resumable
//! task: [`rsmc_spec::controller::begin`] reads the expectations and the caches and decides
//! each pod's claim; [`SyncTask::advance`] says what it needs next — a live GET, an API
//! request, a choice among ranking ties or an order for its patches — and is told the
//! outcome. The model runs it one request per step, in every order; this runs it against a
//! real API server, one request after another. There is no second copy of any decision here:
//! what this module adds is what the model leaves to its executor — sending the request
//! ([`crate::requests`]), recording upstream's events, the expectations' 5-minute clock, the
//! consistency gate's positions, and requeueing after `minReadySeconds`.
//!
//! Choices: upstream's order among ranking ties and among claim patches is a sort's or a
//! map's, which the spec leaves open; this picks the first the spec offers.

use crate::abstraction::{by_name, seconds, Abstraction};
use crate::context::Context;
use crate::events::{self, Happened};
use crate::requests::{self, Target};
use k8s_openapi::api::apps::v1 as apps;
use kube::api::Api;
use kube::runtime::controller::Action;
use kube::ResourceExt;
use rsmc_spec::api::{Request, View};
use rsmc_spec::controller::{begin, Begin, Pending, SyncTask, SyncView};
use rsmc_spec::object::ReplicaSetStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A sync that ended in an error: the key is requeued with back-off.
#[derive(Debug, thiserror::Error)]
pub enum SyncFailed {
    /// [upstream] the caches have not caught up with this controller's own writes.
    #[error("the caches have not caught up with the controller's own writes")]
    NotCaughtUp,
    /// A request failed (the spec's sync decided it is an error).
    #[error("the sync failed: {0}")]
    Failed(String),
}

/// The applier's reconcile: one sync of `rs`.
pub async fn reconcile(rs: Arc<apps::ReplicaSet>, ctx: Arc<Context>) -> Result<Action, SyncFailed> {
    let namespace = rs.namespace().unwrap_or_default();
    let key = rs.name_any();
    if ctx.sem.consistency_gate {
        let (rs_at, pods_at) = ctx.positions();
        if !ctx
            .memory()
            .namespace(&namespace)
            .caught_up(&key, rs_at, pods_at)
        {
            return Err(SyncFailed::NotCaughtUp);
        }
    }
    let started = ctx.clock.now();
    let mut abstraction = Abstraction::new(seconds(&k8s_openapi::jiff::Timestamp::now()));
    let cached = abstraction.replicaset(&rs);
    let min_ready = cached.spec.min_ready_seconds;
    // Expectations are read before the pods are listed (upstream's order, which keeps a sync
    // from trusting a list older than the observations that satisfied them): both under the
    // memory lock, which the handlers take only after updating the store.
    let (task, pods) = {
        let mut memory = ctx.memory();
        let m = memory.namespace(&namespace);
        m.expire_if_due(&key, started);
        let pods: View<rsmc_spec::object::Pod> = by_name(
            ctx.pods
                .state()
                .into_iter()
                .filter(|p| p.namespace().as_deref() == Some(namespace.as_str())),
            |p| abstraction.pod(p, min_ready),
        );
        match begin(
            &key,
            Some(&cached),
            &pods,
            (0, 0),
            &mut m.expectations,
            &ctx.sem,
        ) {
            Begin::Run(task) => (task, pods),
            Begin::Gone => unreachable!("the ReplicaSet was given"),
        }
    };
    let mut run = Run {
        ctx: &ctx,
        namespace: &namespace,
        key: &key,
        started,
        read: vec![(*rs).clone()],
        failure: None,
        status: cached.status.clone(),
    };
    let view = SyncView {
        rs: &cached,
        pods: &pods,
        sem: &ctx.sem,
        burst_replicas: ctx.burst_replicas,
    };
    let error = run.execute(task, &view, &mut abstraction).await;
    let who = format!("{namespace}/{key}");
    if error {
        tracing::info!(replicaset = %who, "sync failed; requeued with back-off");
        return Err(SyncFailed::Failed(
            run.failure.unwrap_or_else(|| "a request failed".into()),
        ));
    }
    // `syncReplicaSet`: with minReadySeconds, a ReplicaSet whose ready pods are not all
    // available yet is synced again once they may be.
    let replicas = cached.spec.replicas;
    if min_ready > 0
        && run.status.ready_replicas == replicas
        && run.status.available_replicas != replicas
    {
        return Ok(Action::requeue(Duration::from_secs(min_ready as u64)));
    }
    Ok(Action::await_change())
}

/// The executor's side of one sync.
struct Run<'a> {
    ctx: &'a Context,
    namespace: &'a str,
    key: &'a str,
    started: Instant,
    /// The ReplicaSet objects this sync read: the cache's, then any live GET's.
    read: Vec<apps::ReplicaSet>,
    /// The message of the last failed create or delete.
    failure: Option<String>,
    /// The status as last written (or as read, when no write was needed).
    status: ReplicaSetStatus,
}

impl Run<'_> {
    /// Run `task` to its end; whether it ended in an error.
    async fn execute(
        &mut self,
        mut task: SyncTask,
        view: &SyncView<'_>,
        abstraction: &mut Abstraction,
    ) -> bool {
        let mut creating = false;
        loop {
            let pending = {
                let mut memory = self.ctx.memory();
                task.advance(view, &mut memory.namespace(self.namespace).expectations)
            };
            match pending {
                Pending::GetReplicaSet(name) => {
                    let api: Api<apps::ReplicaSet> =
                        Api::namespaced(self.ctx.client.clone(), self.namespace);
                    // A failed GET is a failed recheck, as a missing object is.
                    let live = api.get_opt(&name).await.ok().flatten();
                    let abstracted = live.as_ref().map(|l| abstraction.replicaset(l));
                    if let Some(live) = live {
                        self.read.push(live);
                    }
                    task.record_get(view, abstracted.as_ref());
                }
                Pending::Send(request) => {
                    if matches!(request, Request::CreatePod(_)) && !creating {
                        // `manageReplicas` has just called ExpectCreations.
                        creating = true;
                        self.ctx
                            .memory()
                            .namespace(self.namespace)
                            .record_set(self.key, self.started);
                    }
                    let result = self.send(&request, abstraction).await;
                    let mut memory = self.ctx.memory();
                    task.record(
                        view,
                        result.as_ref().map(|_| ()),
                        &mut memory.namespace(self.namespace).expectations,
                    );
                }
                // Any of the sets is the ranking's; listing them all could take more memory than
                // the machine has (a tier of 40 tied pods halved has 137 billion).
                Pending::Choose(sets) => {
                    let mut memory = self.ctx.memory();
                    let m = memory.namespace(self.namespace);
                    task.choose(sets.first(), &mut m.expectations);
                    // `manageReplicas` has just called ExpectDeletions.
                    m.record_set(self.key, self.started);
                }
                Pending::Order(pods) => {
                    let mut memory = self.ctx.memory();
                    task.choose(pods, &mut memory.namespace(self.namespace).expectations);
                }
                Pending::Done { error } => return error,
            }
        }
    }

    /// Send one request, with its event, log line and consistency record.
    async fn send(
        &mut self,
        request: &Request,
        abstraction: &Abstraction,
    ) -> Result<requests::Done, rsmc_spec::api::ApiError> {
        let replicaset = self.replicaset_for(request, abstraction).clone();
        let target = Target {
            namespace: self.namespace,
            replicaset: &replicaset,
            abstraction,
            failure: self.failure.as_deref(),
        };
        let result = requests::send(&self.ctx.client, &target, request).await;
        let who = format!("{}/{}", self.namespace, self.key);
        let what = requests::describe(&target, request);
        match &result {
            Ok(done) => {
                tracing::info!(replicaset = %who, request = %what, created = done.created.as_deref(), "sent")
            }
            Err(e) => tracing::info!(replicaset = %who, request = %what, error = %e, "refused"),
        }
        let client = &self.ctx.client;
        match (request, &result) {
            (Request::CreatePod(_), Ok(done)) => events::record(
                client,
                &replicaset,
                Happened::Created {
                    pod: done.created.as_deref().unwrap_or_default(),
                },
            ),
            (Request::CreatePod(_), Err(e)) => {
                events::record(
                    client,
                    &replicaset,
                    Happened::CreateFailed { error: &e.message },
                );
                self.failure = Some(e.message.clone());
            }
            (Request::DeletePod { name, .. }, Ok(_)) => {
                events::record(client, &replicaset, Happened::Deleted { pod: name })
            }
            (Request::DeletePod { .. }, Err(e)) => {
                events::record(
                    client,
                    &replicaset,
                    Happened::DeleteFailed { error: &e.message },
                );
                self.failure = Some(e.message.clone());
            }
            (Request::UpdateReplicaSetStatus { status, .. }, Ok(_)) => self.status = status.clone(),
            _ => {}
        }
        // What upstream's consistency store records (creations, adoptions, status; not
        // deletes or releases).
        let recorded = rsmc_spec::controller::consistency::recorded(request);
        if let (Ok(done), true, Some(kind)) = (&result, self.ctx.sem.consistency_gate, recorded) {
            if let Some(rv) = done.resource_version {
                let own_status = kind == rsmc_spec::api::Kind::ReplicaSet;
                self.ctx
                    .memory()
                    .namespace(self.namespace)
                    .wrote(self.key, own_status, rv);
            }
        }
        result
    }

    /// The ReplicaSet object a request is about: for a status write, the one it was read as
    /// (its resourceVersion is the write's precondition); otherwise the cache's.
    fn replicaset_for(&self, request: &Request, abstraction: &Abstraction) -> &apps::ReplicaSet {
        if let Request::UpdateReplicaSetStatus {
            resource_version, ..
        } = request
        {
            let version = abstraction.real_version(*resource_version);
            if let Some(rs) = self
                .read
                .iter()
                .rev()
                .find(|rs| rs.metadata.resource_version.as_deref() == version)
            {
                return rs;
            }
        }
        &self.read[0]
    }
}

/// The sync of a key whose ReplicaSet is gone from the cache: forget its expectations.
pub fn gone(ctx: &Context, namespace: &str, key: &str) {
    let mut memory = ctx.memory();
    let m = memory.namespace(namespace);
    let _ = begin(
        key,
        None,
        &View::new(),
        (0, 0),
        &mut m.expectations,
        &ctx.sem,
    );
    m.forget(key);
}
