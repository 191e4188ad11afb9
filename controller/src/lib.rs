//! rsmc-controller: a ReplicaSet controller whose every decision is the rsmc spec's.
//!
//! The model checker explores the spec's sync (`rsmc_spec::controller`) in every
//! interleaving; this crate runs the same code against a real API server, so the
//! model-checked decisions are decisions that run. It is built on kube-rs's runtime:
//! - [`informers`]: watchers and reflector stores for ReplicaSets and pods, with the spec's
//!   event handlers on every change;
//! - the work queue is kube-rs's applier (de-duplicated keys, one sync per key at a time,
//!   `--workers` syncs at once, back-off requeues);
//! - [`sync`]: one sync, the spec's task executed request by request ([`requests`]), with
//!   upstream's events ([`events`]);
//! - [`abstraction`]: real objects in the spec's terms and back; [`memory`]: expectations and
//!   the clocks the model leaves out, read on [`clock`] (which a conformance runner may move
//!   on); [`faults`]: the catalogue's switches as injectable
//!   faults.

pub mod abstraction;
pub mod clock;
pub mod context;
pub mod events;
pub mod faults;
pub mod informers;
pub mod memory;
pub mod requests;
pub mod sync;

use context::Context;
use futures::StreamExt;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector;
use kube::Client;
use rsmc_spec::profile::Semantics;
use std::sync::Arc;
use std::time::Duration;

/// How long in-flight syncs get to finish after a stop signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Run the controller with `client` until `stop` resolves; then let in-flight syncs finish
/// (for a while) and return.
pub async fn run(
    client: Client,
    sem: Semantics,
    clock: clock::Clock,
    workers: u16,
    stop: impl std::future::Future<Output = ()>,
) {
    let (rs_reader, rs_writer) = reflector::store::<apps::ReplicaSet>();
    let (pod_reader, pod_writer) = reflector::store::<core::Pod>();
    let ctx = Arc::new(Context::new(
        client,
        sem,
        clock,
        rs_reader.clone(),
        pod_reader.clone(),
    ));
    let (trigger, queue) = futures::channel::mpsc::unbounded();
    let rs_informer = tokio::spawn(informers::run(ctx.clone(), rs_writer, trigger.clone()));
    let pod_informer = tokio::spawn(informers::run(ctx.clone(), pod_writer, trigger));
    // `WaitForNamedCacheSync`: no sync before both caches have listed.
    let synced = async {
        let _ = rs_reader.wait_until_ready().await;
        let _ = pod_reader.wait_until_ready().await;
    };
    tokio::pin!(stop);
    tokio::select! {
        _ = synced => tracing::info!(workers, "caches synced; starting workers"),
        _ = &mut stop => {
            rs_informer.abort();
            pod_informer.abort();
            return;
        }
    }
    let applier = controller::applier(
        |rs, ctx| Box::pin(sync::reconcile(rs, ctx)),
        |rs: Arc<apps::ReplicaSet>, _err: &sync::SyncFailed, ctx: Arc<Context>| {
            Action::requeue(ctx.back_off(&reflector::ObjectRef::from_obj(&*rs)))
        },
        ctx.clone(),
        rs_reader,
        queue.map(Ok::<_, std::convert::Infallible>),
        controller::Config::default().concurrency(workers),
    );
    let outcomes = applier.for_each(|outcome| {
        let ctx = ctx.clone();
        async move {
            match outcome {
                Ok((key, _)) => ctx.forget(&key),
                // The key's ReplicaSet is gone from the cache: the sync of a gone key.
                Err(controller::Error::ObjectNotFound(key)) => sync::gone(
                    &ctx,
                    key.namespace.as_deref().unwrap_or_default(),
                    &key.name,
                ),
                Err(controller::Error::ReconcilerFailed(_, _)) => {}
                Err(e) => tracing::warn!(error = %e, "work queue"),
            }
        }
    });
    tokio::pin!(outcomes);
    tokio::select! {
        _ = &mut outcomes => {}
        _ = &mut stop => {
            tracing::info!("stopping: no new syncs; waiting for the syncs under way");
            // Without informers the queue ends, and the applier ends once its syncs have.
            rs_informer.abort();
            pod_informer.abort();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, &mut outcomes).await;
        }
    }
    tracing::info!("stopped");
}
