//! The informers: kube-rs watchers feeding kube-rs reflector stores, and the spec's event
//! handlers on every change.
//!
//! client-go's shared informer updates its indexer and then calls the handlers with the old
//! and the new object; so does this: each watch event is applied to the store (a kube-rs
//! `Writer`), then the spec's [`Handlers`] (pkg/controller/replicaset/replica_set.go
//! `addRS`, `updateRS`, `deleteRS`, `addPod`, `updatePod`, `deletePod`) see the change, with
//! the namespace's ReplicaSets as the store now has them. What they queue goes to the work
//! queue (the kube-rs applier's), and what they observe lowers the expectations.
//!
//! A relist (the watch's `Init` … `InitDone`) is handled as client-go's `Replace`: every
//! listed object is an add or an update of what the store had, and every object the store had
//! that the list lacks is a delete (the tombstone upstream calls `DeletedFinalStateUnknown`).

use crate::abstraction::{by_name, Abstraction};
use crate::context::Context;
use futures::channel::mpsc::UnboundedSender;
use futures::StreamExt;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Resource, ResourceExt};
use rsmc_spec::api::View;
use rsmc_spec::controller::{Handlers, WorkQueue};
use rsmc_spec::object::ReplicaSet;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

/// Where the handlers' queued keys go: the work queue's input.
pub type Trigger = UnboundedSender<ObjectRef<apps::ReplicaSet>>;

/// The two kinds the controller watches, and what its informer of each does.
pub trait Watched:
    Resource<DynamicType = ()>
    + Clone
    + Debug
    + Send
    + Sync
    + k8s_openapi::serde::de::DeserializeOwned
    + 'static
{
    /// Whether this is the ReplicaSet informer (else the pods').
    const REPLICASETS: bool;
    /// Its store in the context.
    fn store(ctx: &Context) -> &Store<Self>;
    /// The spec's handler of a change.
    fn changed(ctx: &Context, before: Option<&Self>, after: Option<&Self>, trigger: &Trigger);
}

impl Watched for apps::ReplicaSet {
    const REPLICASETS: bool = true;
    fn store(ctx: &Context) -> &Store<Self> {
        &ctx.replicasets
    }
    fn changed(ctx: &Context, before: Option<&Self>, after: Option<&Self>, trigger: &Trigger) {
        replicaset_changed(ctx, before, after, trigger)
    }
}

impl Watched for core::Pod {
    const REPLICASETS: bool = false;
    fn store(ctx: &Context) -> &Store<Self> {
        &ctx.pods
    }
    fn changed(ctx: &Context, before: Option<&Self>, after: Option<&Self>, trigger: &Trigger) {
        pod_changed(ctx, before, after, trigger)
    }
}

/// Watch every object of kind `K`, keep its store, run the handlers.
pub async fn run<K: Watched>(ctx: Arc<Context>, writer: Writer<K>, trigger: Trigger) {
    let api = Api::<K>::all(ctx.client.clone());
    let reader = K::store(&ctx).clone();
    inform(api, writer, reader, |before, after| {
        let rv = after
            .or(before)
            .and_then(|o| o.meta().resource_version.as_deref());
        ctx.advance(K::REPLICASETS, rv);
        K::changed(&ctx, before, after, &trigger);
    })
    .await
}

/// One informer: watch `api`, apply each event to `writer`, then tell `changed` the object
/// before and after (`None` before: added; `None` after: deleted).
async fn inform<K>(
    api: Api<K>,
    mut writer: Writer<K>,
    reader: Store<K>,
    mut changed: impl FnMut(Option<&K>, Option<&K>),
) where
    K: Resource + Clone + Debug + Send + Sync + k8s_openapi::serde::de::DeserializeOwned + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    let mut events = watcher(api, watcher::Config::default())
        .default_backoff()
        .boxed();
    let mut relisted: Option<Vec<K>> = None;
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(event) => event,
            Err(e) => {
                tracing::warn!(kind = %K::kind(&Default::default()), error = %e, "watch failed; retrying");
                continue;
            }
        };
        match &event {
            watcher::Event::Init => {
                relisted = Some(Vec::new());
                writer.apply_watcher_event(&event);
            }
            watcher::Event::InitApply(obj) => {
                relisted.get_or_insert_with(Vec::new).push(obj.clone());
                writer.apply_watcher_event(&event);
            }
            watcher::Event::InitDone => {
                let before: Vec<Arc<K>> = reader.state();
                writer.apply_watcher_event(&event);
                let listed = relisted.take().unwrap_or_default();
                replace(&before, &listed, &mut changed);
            }
            watcher::Event::Apply(obj) => {
                let old = reader.get(&ObjectRef::from_obj(obj));
                writer.apply_watcher_event(&event);
                changed(old.as_deref(), Some(obj));
            }
            watcher::Event::Delete(obj) => {
                writer.apply_watcher_event(&event);
                changed(Some(obj), None);
            }
        }
    }
}

/// client-go's `Replace`: the differences between the cache and a fresh list, as changes.
fn replace<K: Resource>(
    before: &[Arc<K>],
    listed: &[K],
    changed: &mut impl FnMut(Option<&K>, Option<&K>),
) where
    K::DynamicType: Default + Eq + std::hash::Hash + Clone,
{
    let key = |o: &K| (o.namespace(), o.name_any());
    let old: BTreeMap<_, &Arc<K>> = before.iter().map(|o| (key(o), o)).collect();
    for new in listed {
        match old.get(&key(new)) {
            Some(o) if o.resource_version() == new.resource_version() => {}
            o => changed(o.map(|o| &***o), Some(new)),
        }
    }
    let now: std::collections::BTreeSet<_> = listed.iter().map(key).collect();
    for o in before.iter().filter(|o| !now.contains(&key(o))) {
        changed(Some(o), None);
    }
}

/// The namespace's ReplicaSets as the store has them, in the spec's terms.
fn replicasets_of(
    ctx: &Context,
    namespace: &str,
    abstraction: &mut Abstraction,
) -> View<ReplicaSet> {
    by_name(
        ctx.replicasets
            .state()
            .into_iter()
            .filter(|rs| rs.namespace().as_deref() == Some(namespace)),
        |rs| abstraction.replicaset(rs),
    )
}

/// Run `handle` on the namespace's memory and queue what it queued.
fn with_handlers(
    ctx: &Context,
    namespace: &str,
    abstraction: &mut Abstraction,
    trigger: &Trigger,
    handle: impl FnOnce(&mut Handlers, &mut Abstraction),
) {
    let replicasets = replicasets_of(ctx, namespace, abstraction);
    let mut queue = WorkQueue::default();
    {
        let mut memory = ctx.memory();
        let mut handlers = Handlers {
            queue: &mut queue,
            expectations: &mut memory.namespace(namespace).expectations,
            replicasets: &replicasets,
            sem: &ctx.sem,
        };
        handle(&mut handlers, abstraction);
    }
    for key in queue.queued {
        // The receiver is gone only while the controller shuts down.
        let _ = trigger.unbounded_send(ObjectRef::new(&key).within(namespace));
    }
}

fn now() -> rsmc_spec::object::Seconds {
    crate::abstraction::seconds(&k8s_openapi::jiff::Timestamp::now())
}

fn replicaset_changed(
    ctx: &Context,
    before: Option<&apps::ReplicaSet>,
    after: Option<&apps::ReplicaSet>,
    trigger: &Trigger,
) {
    let Some(namespace) = after.or(before).and_then(|o| o.namespace()) else {
        return;
    };
    let mut abstraction = Abstraction::new(now());
    with_handlers(ctx, &namespace, &mut abstraction, trigger, |h, a| {
        let before = before.map(|o| a.replicaset(o));
        let after = after.map(|o| a.replicaset(o));
        h.replicaset(before.as_ref(), after.as_ref());
    });
}

fn pod_changed(
    ctx: &Context,
    before: Option<&core::Pod>,
    after: Option<&core::Pod>,
    trigger: &Trigger,
) {
    let Some(namespace) = after.or(before).and_then(|o| o.namespace()) else {
        return;
    };
    let mut abstraction = Abstraction::new(now());
    with_handlers(ctx, &namespace, &mut abstraction, trigger, |h, a| {
        // Availability is no handler's concern: judged against no ReplicaSet here.
        let before = before.map(|o| a.pod(o, 0));
        let after = after.map(|o| a.pod(o, 0));
        h.pod(before.as_ref(), after.as_ref());
    });
}
