//! Taking a scenario's steps on a cluster: the user's kubectl commands and the scheduler's and
//! the kubelet's writes, each marked as the runner's own in the recording.
//!
//! Every step does what the model's environment move does (`rsmc_spec::model::step`), through
//! the API a real client uses: `kubectl apply` is a server-side apply, `kubectl scale` patches
//! the scale subresource, the scheduler posts a Binding, the kubelet patches the status
//! subresource and finishes a graceful deletion with a grace-period-0 delete carrying a UID
//! precondition. A request the API server refuses (the pod is gone, the ReplicaSet was
//! deleted) changes nothing and the scenario goes on, as in the model; the refusals of
//! applies, scales and ReplicaSet deletes are recorded with their reasons (`refused` of the
//! segment), which is how the oracle checks a step the scenario expects to be refused.

use crate::kubelet;
use crate::precondition;
use crate::recorder::{PendingWrite, Recorded, Recorder, Resource};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PropagationPolicy};
use kube::{Client, ResourceExt};
use rsmc_oracle::manifest::Object;
use rsmc_oracle::observed::{abstract_pod, abstract_replicaset, Refusal, UidTokens};
use rsmc_oracle::scenario::{Apply, StepKind};
use rsmc_spec::api::{Propagation, View};
use rsmc_spec::model::{NamedOwner, OwnerByName, PodAction, PodSelection};
use rsmc_spec::object::{Finalizer, POD_DELETION_COST};
use serde_json::json;
use std::sync::Arc;

/// The field manager of the runner's server-side applies.
pub const FIELD_MANAGER: &str = "rsmc";

/// What taking a step needs.
pub struct StepContext<'a> {
    pub client: &'a Client,
    pub namespace: &'a str,
    pub recorder: &'a mut Recorder,
    /// The scenario step's index (events of its writes carry it).
    pub index: usize,
    /// How long to wait before each write (see [`crate::run::Target::write_pause`]).
    pub write_pause: std::time::Duration,
    /// The segment's refused requests so far, where this step's go.
    pub refused: &'a mut Vec<Refusal>,
    /// Real kubelets run the pods, on images found in the node ([`use_local_images`]).
    pub local_images: bool,
}

impl StepContext<'_> {
    async fn before_write(&self) {
        tokio::time::sleep(self.write_pause).await;
    }
    fn replicasets(&self) -> Api<ReplicaSet> {
        Api::namespaced(self.client.clone(), self.namespace)
    }
    fn pods(&self) -> Api<Pod> {
        Api::namespaced(self.client.clone(), self.namespace)
    }
    fn configmaps(&self) -> Api<ConfigMap> {
        Api::namespaced(self.client.clone(), self.namespace)
    }

    /// Take the outcome of one of the step's own requests (an apply, a scale, a delete of a
    /// ReplicaSet: the requests a scenario may expect to be refused) as [`accept`] does, and
    /// record a refusal with its reason: the oracle checks it against the step's `refused`.
    fn answer<T>(
        &mut self,
        what: impl FnOnce() -> String,
        r: Result<T, kube::Error>,
    ) -> Result<Option<T>, StepError> {
        if let Err(kube::Error::Api(status)) = &r {
            if refused_status(status) {
                self.refused.push(Refusal {
                    step: self.index,
                    reason: status.reason.clone(),
                    message: status.message.clone(),
                });
            }
        }
        accept(what, r)
    }
}

/// A request failed for a reason other than the API server refusing it.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {}", crate::api_error::describe(.source))]
pub struct StepError {
    what: String,
    #[source]
    source: kube::Error,
}

/// Whether the API server refused a request (the answer a model step also gets), as
/// opposed to the request not reaching it.
fn refused(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if refused_status(s))
}

fn refused_status(s: &kube::core::Status) -> bool {
    s.code >= 400 && s.code < 500
}

/// Take the outcome of a write: a refusal is a step that changed nothing.
fn accept<T>(
    what: impl FnOnce() -> String,
    r: Result<T, kube::Error>,
) -> Result<Option<T>, StepError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if refused(&e) => Ok(None),
        Err(source) => Err(StepError {
            what: what(),
            source,
        }),
    }
}

/// Take one of the user's, the scheduler's or the kubelet's steps (not `settle`, `wait` or
/// the controller steps, which the runner handles).
pub async fn take(ctx: &mut StepContext<'_>, kind: &StepKind) -> Result<(), StepError> {
    if !matches!(kind, StepKind::Apply(_) | StepKind::Pods { .. }) {
        ctx.before_write().await;
    }
    match kind {
        StepKind::Apply(apply) => self::apply(ctx, apply).await,
        StepKind::Scale {
            replicaset,
            replicas,
        } => {
            // Conditioned on the version read (see [`precondition`]): scaling to the current
            // count writes nothing.
            let api = ctx.replicasets();
            let api = &api;
            let written = precondition::write(
                || async { Ok(api.get_scale(replicaset).await?.metadata.resource_version) },
                |rv| {
                    let patch = Patch::Merge(json!({
                        "metadata": {"resourceVersion": rv},
                        "spec": {"replicas": replicas},
                    }));
                    async move {
                        let scale = api
                            .patch_scale(replicaset, &PatchParams::default(), &patch)
                            .await?;
                        Ok(scale.metadata.resource_version)
                    }
                },
            )
            .await;
            let answer = ctx.answer(|| format!("scale rs/{replicaset}"), written)?;
            if let Some(own) = answer.flatten() {
                ctx.recorder.own_write(ctx.index, Some(&own));
            }
            Ok(())
        }
        StepKind::DeleteReplicaSet {
            replicaset,
            propagation,
        } => {
            let params = delete_params(*propagation);
            let api = ctx.replicasets();
            let what = || format!("delete rs/{replicaset}");
            // Read first, for the delete's condition (see [`precondition::delete`]); a
            // ReplicaSet that is not there is deleted unconditioned, to be refused as the
            // user's delete would be.
            let r = match api.get(replicaset).await {
                Ok(before) => precondition::delete(&api, before, &params).await.map(Some),
                Err(_) => api.delete(replicaset, &params).await.map(|_| None),
            };
            if let Some(Some(before)) = ctx.answer(what, r)? {
                if delete_writes(&before, *propagation) {
                    record_delete(ctx, Resource::ReplicaSet, &before, None);
                }
            }
            Ok(())
        }
        StepKind::DeleteReplicaSets {
            selector,
            propagation,
        } => delete_collection(ctx, selector, *propagation).await,
        StepKind::CreateConfigMap { name } => {
            let configmap = ConfigMap {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            let r = ctx
                .configmaps()
                .create(&kube::api::PostParams::default(), &configmap)
                .await;
            ctx.answer(|| format!("create configmap {name}"), r)?;
            Ok(())
        }
        StepKind::DeleteConfigMap { name } => {
            // kubectl's default cascade, Background: the ConfigMap goes at once, and the
            // garbage collector learns of it from its watch.
            let params = delete_params(Some(Propagation::Background));
            let r = ctx.configmaps().delete(name, &params).await;
            ctx.answer(|| format!("delete configmap/{name}"), r)?;
            Ok(())
        }
        StepKind::Pods { selection, action } => pods(ctx, selection, action).await,
        other => unreachable!("the runner takes {} itself", other.keyword()),
    }
}

/// A DELETE's options asking for `propagation`, or for none.
fn delete_params(propagation: Option<Propagation>) -> DeleteParams {
    DeleteParams {
        propagation_policy: propagation.map(|p| match p {
            Propagation::Background => PropagationPolicy::Background,
            Propagation::Foreground => PropagationPolicy::Foreground,
            Propagation::Orphan => PropagationPolicy::Orphan,
        }),
        ..DeleteParams::default()
    }
}

/// A DeleteCollection of the ReplicaSets `selector` matches, as client-go's
/// `DeleteCollection` sends it. Its answer lists the ReplicaSets as the server listed them
/// before deleting each; the runner lists them just before too, so that it knows which of the
/// deletes write (a delete repeated while one is under way may not: [`delete_writes`]) and
/// marks those as this step's. No one else creates ReplicaSets in a scenario's namespace, so
/// the two lists name the same ones.
async fn delete_collection(
    ctx: &mut StepContext<'_>,
    selector: &rsmc_spec::object::LabelSelector,
    propagation: Option<Propagation>,
) -> Result<(), StepError> {
    let api = ctx.replicasets();
    let list = ListParams::default().labels(&selector.to_string());
    let what = || format!("deletecollection replicasets -l {selector}");
    let before = api.list(&list).await.map_err(|source| StepError {
        what: what(),
        source,
    })?;
    let answer = api
        .delete_collection(&delete_params(propagation), &list)
        .await;
    if let Some(deleted) = ctx.answer(what, answer)? {
        let deleted: Vec<String> = match deleted {
            either::Either::Left(list) => list.items.iter().filter_map(|rs| rs.uid()).collect(),
            either::Either::Right(_) => Vec::new(),
        };
        for rs in before.items.iter().filter(|rs| {
            rs.uid().is_some_and(|uid| deleted.contains(&uid)) && delete_writes(rs, propagation)
        }) {
            record_delete(ctx, Resource::ReplicaSet, rs, None);
        }
    }
    Ok(())
}

/// Whether a delete asking for `asked` writes the ReplicaSet `before`: always when it starts
/// the deletion; while one is under way, only when the policy it takes effect with
/// ([`Propagation::chosen`]) is not the one in effect already, whose finalizer it swaps. A
/// delete repeated without a policy, or with the policy in effect, writes nothing, and the
/// ReplicaSet's next event is the garbage collector's, not this step's.
fn delete_writes(before: &ReplicaSet, asked: Option<Propagation>) -> bool {
    if before.metadata.deletion_timestamp.is_none() {
        return true;
    }
    let finalizers: Vec<Finalizer> = before
        .metadata
        .finalizers
        .iter()
        .flatten()
        .filter_map(|f| Finalizer::named(f))
        .collect();
    Propagation::chosen(asked, &finalizers) != Propagation::chosen(None, &finalizers)
}

/// Mark a deletion's event: the first event of the object after the version the runner read
/// that deletes it or marks it deleting. The answer's resourceVersion is not used: a delete
/// that removes the object at once answers with the object as it was before.
/// A delete with grace period 0 is two events (marked, then gone); the recorder gives the
/// second to the same step.
///
/// `grace` is the grace period the delete asks for (`None`: the object's own). A delete of an
/// object already being deleted writes only when it asks for a shorter grace period than the
/// one running (`rest.BeforeDelete`: the played kubelet's final delete, grace 0); otherwise it
/// writes nothing, and the next event marked deleting is someone else's (a real kubelet's
/// status write of the terminating pod, its own final delete), not this step's.
fn record_delete<K: kube::Resource>(
    ctx: &mut StepContext<'_>,
    resource: Resource,
    before: &K,
    grace: Option<i64>,
) {
    let meta = before.meta();
    let running = meta
        .deletion_timestamp
        .as_ref()
        .map(|_| meta.deletion_grace_period_seconds.unwrap_or(0));
    if let Some(running) = running {
        if running > 0 && grace.is_none_or(|g| g >= running) {
            return;
        }
    }
    ctx.recorder.own_pending(PendingWrite {
        step: ctx.index,
        resource,
        uid: meta.uid.clone().unwrap_or_default(),
        after: version(meta.resource_version.as_deref()),
        matches: Box::new(move |e: &Recorded| {
            let marked = e.object.pointer("/metadata/deletionTimestamp").is_some();
            let shortened = || {
                let period = e.object.pointer("/metadata/deletionGracePeriodSeconds");
                running.is_none_or(|r| period.and_then(|p| p.as_i64()).is_some_and(|p| p < r))
            };
            e.event_type == rsmc_oracle::observed::EventType::Deleted || (marked && shortened())
        }),
    });
}

fn version(v: Option<&str>) -> u64 {
    v.and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// `kubectl apply`: a server-side apply of each manifest, in order, conditioned on the
/// version read just before (see [`precondition`]). An apply that changes nothing writes
/// nothing, and then nothing is marked.
async fn apply(ctx: &mut StepContext<'_>, apply: &Apply) -> Result<(), StepError> {
    for manifest in &apply.manifests {
        ctx.before_write().await;
        let mut raw = manifest.raw.clone();
        if let Some(meta) = raw.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            meta.remove("namespace");
        }
        if ctx.local_images {
            use_local_images(&mut raw);
        }
        let name = manifest.object.name().to_string();
        let what = || format!("apply {} {name}", manifest.object.kind());
        let written = match &manifest.object {
            Object::ReplicaSet(_) => apply_one(&ctx.replicasets(), &name, &raw).await,
            Object::Pod(_) => apply_one(&ctx.pods(), &name, &raw).await,
        };
        if let Some(own) = ctx.answer(what, written)?.flatten() {
            ctx.recorder.own_write(ctx.index, Some(&own));
        }
    }
    Ok(())
}

/// Ask for each container's image `IfNotPresent` where the manifest does not say: on real
/// kubelets here no registry is reachable, and the images are stand-ins tagged in the node
/// (`rsmc cluster up --kind`), which an untagged name's default (`Always`) would pull. The
/// pull policy is nothing the model or the views compare.
fn use_local_images(raw: &mut serde_json::Value) {
    let pod_spec = match raw["kind"].as_str() {
        Some("ReplicaSet") => raw.pointer_mut("/spec/template/spec"),
        _ => raw.pointer_mut("/spec"),
    };
    let containers = pod_spec
        .and_then(|s| s.get_mut("containers"))
        .and_then(|c| c.as_array_mut());
    for c in containers.into_iter().flatten() {
        if let Some(c) = c.as_object_mut() {
            c.entry("imagePullPolicy")
                .or_insert_with(|| "IfNotPresent".into());
        }
    }
}

/// One server-side apply of `raw` to the object `name`, conditioned on its version: the
/// resourceVersion of its own event, if it wrote.
async fn apply_one<K>(
    api: &Api<K>,
    name: &str,
    raw: &serde_json::Value,
) -> Result<Option<String>, kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let params = &params;
    precondition::write(
        || precondition::version_of(api, name),
        |rv| {
            let body = precondition::with_resource_version(raw, rv.as_deref());
            async move {
                let new = api.patch(name, params, &Patch::Apply(&body)).await?;
                Ok(new.meta().resource_version.clone())
            }
        },
    )
    .await
}

/// The cluster's objects in the namespace, abstracted as the model sees them.
pub async fn current(
    client: &Client,
    namespace: &str,
) -> Result<
    (
        View<rsmc_spec::object::ReplicaSet>,
        View<rsmc_spec::object::Pod>,
        Vec<Pod>,
    ),
    StepError,
> {
    let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), namespace);
    let pod_api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let list_error = |what: &str| {
        let what = what.to_string();
        move |source| StepError { what, source }
    };
    let replicasets = rs_api
        .list(&ListParams::default())
        .await
        .map_err(list_error("list replicasets"))?;
    let pods = pod_api
        .list(&ListParams::default())
        .await
        .map_err(list_error("list pods"))?;
    let mut uids = UidTokens::default();
    let mut rs_view = View::new();
    for rs in &replicasets.items {
        if let Ok(a) = abstract_replicaset(rs, &mut uids) {
            rs_view.insert(a.meta.name.clone(), Arc::new(a));
        }
    }
    let mut pod_view = View::new();
    for p in &pods.items {
        if let Ok(a) = abstract_pod(p, &mut uids) {
            pod_view.insert(a.meta.name.clone(), Arc::new(a));
        }
    }
    Ok((rs_view, pod_view, pods.items))
}

/// A pod step: evaluate the selection as a client's list would, then act on the pods.
///
/// The model lists first and acts afterwards (`ScriptPos::select`), and a selected pod that
/// is gone by then drops out of the selection, so the step acts on another one
/// (`ScriptPos::normalise`). The runner does the same: a pod the API server no longer has
/// (the controller deleted it after the list) refuses the write, and the step goes on to the
/// next selected pod until it has acted on as many as it should. A pod listed in the middle of
/// a grace-0 delete (marked, removal pending) is already gone to the model, so it is never
/// chosen.
async fn pods(
    ctx: &mut StepContext<'_>,
    selection: &PodSelection,
    action: &PodAction,
) -> Result<(), StepError> {
    let (replicasets, views, listed) = current(ctx.client, ctx.namespace).await?;
    let selected = selection.evaluate(&replicasets, &views);
    let gone = |name: &String| views.get(name.as_str()).is_none_or(|p| p.grace_over);
    // "Any N of them": the model explores every choice, so the first N by name will do.
    let mut left = selected.left;
    for name in selected.pods.iter().filter(|n| !gone(n)) {
        if left == 0 {
            break;
        }
        let Some(pod) = listed.iter().find(|p| p.name_any() == *name) else {
            continue;
        };
        ctx.before_write().await;
        if pod_action(ctx, pod, action).await? {
            left -= 1;
        }
    }
    Ok(())
}

/// What became of a write to one pod.
enum PodWrite<T> {
    /// The API server took it.
    Taken(Option<T>),
    /// The pod is no longer there (a 404): the model's selection has dropped it.
    Gone,
}

impl<T> PodWrite<T> {
    fn new(what: impl FnOnce() -> String, r: Result<T, kube::Error>) -> Result<Self, StepError> {
        match r {
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(PodWrite::Gone),
            r => accept(what, r).map(PodWrite::Taken),
        }
    }

    /// The written object, if the request changed something.
    fn written(&self) -> Option<&T> {
        match self {
            PodWrite::Taken(v) => v.as_ref(),
            PodWrite::Gone => None,
        }
    }

    /// Whether the step has acted on the pod (refusals for other reasons count, as they do
    /// in the model).
    fn acted(&self) -> bool {
        matches!(self, PodWrite::Taken(_))
    }
}

/// A merge patch of one field of the pod's metadata (the `labels` or `annotations` map, the
/// `ownerReferences` list, which a merge patch replaces whole), conditioned on the version
/// read (see [`precondition`]): setting what the pod already has writes nothing, and the
/// step's own write is recorded as such. Whether the step acted on the pod.
async fn patch_metadata(
    ctx: &mut StepContext<'_>,
    api: &Api<Pod>,
    name: &str,
    field: &str,
    value: serde_json::Value,
    what: impl FnOnce() -> String,
) -> Result<bool, StepError> {
    let map = &value;
    let written = precondition::write(
        || precondition::version_of(api, name),
        |rv| {
            let patch = Patch::Merge(json!({
                "metadata": {field: map, "resourceVersion": rv},
            }));
            async move {
                let p = api.patch(name, &PatchParams::default(), &patch).await?;
                Ok(p.metadata.resource_version)
            }
        },
    )
    .await;
    let r = PodWrite::new(what, written)?;
    if let Some(Some(own)) = r.written() {
        ctx.recorder.own_write(ctx.index, Some(own));
    }
    Ok(r.acted())
}

/// The `ownerReferences` a `setOwnerReferences` step writes: each named owner's UID read
/// just before (as a client takes `rs.UID` from the object it holds); `None` when one of the
/// named ReplicaSets is not there. An owner of another kind that is not there (a ConfigMap
/// the scenario did not create or has deleted; any other kind, which no step creates in the
/// scenario's fresh namespace) gets a random UID, as upstream's `TestGeneralPodAdoption`
/// names a StatefulSet that does not exist with `uuid.NewUUID()`; the model gives it a UID
/// nothing has ([`OwnerByName::reference`]).
async fn owner_references(
    ctx: &StepContext<'_>,
    owners: &[OwnerByName],
) -> Result<Option<serde_json::Value>, StepError> {
    let mut references = Vec::new();
    for o in owners {
        let kind = o.owner.kind();
        let name = o.owner.name();
        let what = || format!("get {} for its uid", o.owner);
        let uid = match &o.owner {
            NamedOwner::ReplicaSet(_) => match accept(what, ctx.replicasets().get(name).await)? {
                Some(rs) => rs.uid(),
                None => return Ok(None),
            },
            NamedOwner::Other { kind, .. } if kind.is_configmap() => {
                accept(what, ctx.configmaps().get(name).await)?.and_then(|c| c.uid())
            }
            NamedOwner::Other { .. } => None,
        };
        let mut reference = json!({
            "apiVersion": kind.api_version(),
            "kind": kind.kind(),
            "name": name,
            "uid": uid.unwrap_or_else(random_uid),
        });
        // Left out when false, as upstream's tests leave the pointers nil.
        for (key, set) in [
            ("controller", o.controller),
            ("blockOwnerDeletion", o.block_owner_deletion),
        ] {
            if set {
                reference[key] = true.into();
            }
        }
        references.push(reference);
    }
    Ok(Some(references.into()))
}

/// A random version-4 UUID, in its usual text form. The standard library's hasher keys are
/// drawn at random per process and differ for each hasher made, which is all a UID for an
/// owner that does not exist needs: unlike any other UID on the cluster.
fn random_uid() -> String {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    };
    let random = (u128::from(word()) << 64) | u128::from(word());
    // The version (4) in the 13th hex digit, the variant (binary 10) atop the 17th.
    let bits =
        (random & !(0xf_u128 << 76) & !(0x3_u128 << 62)) | (0x4_u128 << 76) | (0x2_u128 << 62);
    let hex = format!("{bits:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Act on one pod; false when the pod was gone.
async fn pod_action(
    ctx: &mut StepContext<'_>,
    pod: &Pod,
    action: &PodAction,
) -> Result<bool, StepError> {
    let api = ctx.pods();
    let name = pod.name_any();
    let what = |verb: &str| format!("{verb} pod/{name}");
    let acted = match action {
        PodAction::Delete => {
            // Conditioned on the pod as listed (see [`precondition::delete`]).
            let r = PodWrite::new(
                || what("delete"),
                precondition::delete(&api, pod.clone(), &DeleteParams::default()).await,
            )?;
            if let Some(before) = r.written() {
                record_delete(ctx, Resource::Pod, before, None);
            }
            r.acted()
        }
        PodAction::Label { set, remove } => {
            let mut labels = serde_json::Map::new();
            for k in remove {
                labels.insert(k.clone(), serde_json::Value::Null);
            }
            for (k, v) in set {
                labels.insert(k.clone(), json!(v));
            }
            patch_metadata(ctx, &api, &name, "labels", labels.into(), || what("label")).await?
        }
        PodAction::Annotate { deletion_cost } => {
            let mut annotations = serde_json::Map::new();
            annotations.insert(
                POD_DELETION_COST.into(),
                deletion_cost.map_or(serde_json::Value::Null, |c| json!(c.to_string())),
            );
            patch_metadata(ctx, &api, &name, "annotations", annotations.into(), || {
                what("annotate")
            })
            .await?
        }
        PodAction::SetOwners { owners } => match owner_references(ctx, owners).await? {
            Some(references) => {
                patch_metadata(ctx, &api, &name, "ownerReferences", references, || {
                    what("set the owner references of")
                })
                .await?
            }
            // A ReplicaSet it names is gone: the model's step is refused NotFound too.
            None => true,
        },
        PodAction::Schedule { node } => {
            let r = PodWrite::new(|| what("bind"), kubelet::bind(&api, &name, node).await)?;
            if r.written().is_some() {
                let node = node.clone();
                ctx.recorder.own_pending(PendingWrite {
                    step: ctx.index,
                    resource: Resource::Pod,
                    uid: pod.uid().unwrap_or_default(),
                    after: version(pod.metadata.resource_version.as_deref()),
                    matches: Box::new(move |e: &Recorded| {
                        e.object.pointer("/spec/nodeName").and_then(|n| n.as_str())
                            == Some(node.as_str())
                    }),
                });
            }
            r.acted()
        }
        PodAction::Ready | PodAction::Unready | PodAction::Fail => {
            let report = match action {
                PodAction::Ready => kubelet::Report::Ready,
                PodAction::Unready => kubelet::Report::Unready,
                _ => kubelet::Report::Failed,
            };
            let r = PodWrite::new(
                || what("report the status of"),
                kubelet::report_status(&api, pod, report).await,
            )?;
            if let Some(p) = r.written() {
                ctx.recorder
                    .own_write(ctx.index, p.metadata.resource_version.as_deref());
            }
            r.acted()
        }
        PodAction::Restarted { restarts } if kubelet::restarts(pod) == *restarts => {
            // The count the pod has already: the model's kubelet has nothing to report.
            true
        }
        PodAction::Restarted { restarts } => {
            let r = PodWrite::new(
                || what("report the container restarts of"),
                kubelet::report_restarts(&api, pod, *restarts).await,
            )?;
            if let Some(p) = r.written() {
                ctx.recorder
                    .own_write(ctx.index, p.metadata.resource_version.as_deref());
            }
            r.acted()
        }
        PodAction::FinishDeletion => {
            if pod.metadata.deletion_timestamp.is_none() {
                // The model's kubelet has nothing to finish either.
                return Ok(true);
            }
            let r = PodWrite::new(
                || what("finish the deletion of"),
                kubelet::finish_deletion(&api, pod).await,
            )?;
            if r.written().is_some() {
                record_delete(ctx, Resource::Pod, pod, Some(0));
            }
            r.acted()
        }
    };
    Ok(acted)
}

#[cfg(test)]
mod tests {
    use super::random_uid;

    #[test]
    fn a_random_uid_is_a_version_4_uuid_unlike_the_last() {
        let uids: Vec<String> = (0..100).map(|_| random_uid()).collect();
        for uid in &uids {
            let groups: Vec<&str> = uid.split('-').collect();
            assert_eq!(
                groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
                [8, 4, 4, 4, 12],
                "{uid}"
            );
            assert!(groups[2].starts_with('4'), "{uid}");
            assert!(matches!(&groups[3][..1], "8" | "9" | "a" | "b"), "{uid}");
        }
        let distinct: std::collections::BTreeSet<_> = uids.iter().collect();
        assert_eq!(distinct.len(), uids.len());
    }
}
