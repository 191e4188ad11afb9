//! The API server: the single source of truth.
//!
//! Applies requests with the rules of staging/src/k8s.io/apiserver/pkg/registry/generic/
//! registry/store.go (`Create`, `Update`, `Delete`, `updateForGracefulDeletionAndFinalizers`,
//! `deletionFinalizersForGarbageCollection`) and the resource strategies
//! (pkg/registry/apps/replicaset/strategy.go, pkg/registry/core/pod/strategy.go). Every
//! successful write bumps one global revision and appends a watch event.

use super::error::ApiError;
use super::log::{rewind, Change, Event, Kind, View};
use super::names;
use super::request::{DeleteOptions, OwnerRefPatch, Propagation, Request, Response};
use super::validation;
use crate::object::{Finalizer, Meta, OtherKind, OtherOwner, Pod, ReplicaSet, Rv, Seconds, Uid};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const RS: &str = "replicasets.apps";
const PODS: &str = "pods";

/// The API server's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ApiServer {
    /// The revision of the last write.
    pub rv: Rv,
    /// The last UID handed out.
    pub last_uid: u32,
    /// The wall clock, in whole seconds: what `creationTimestamp` and condition transition
    /// times are stamped with. The model has no time otherwise; only [`ApiServer::tick`]
    /// advances it, so everything between two ticks happens within one second.
    pub now: Seconds,
    pub replicasets: View<ReplicaSet>,
    pub pods: View<Pod>,
    /// The owners of other kinds that exist, in the order they were created. Their writes
    /// log no event: no watcher of the model reads them ([`crate::object::other_owner`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherOwner>,
    /// Events newer than the lowest position any watcher still needs, oldest first.
    pub log: Vec<Event>,
}

impl ApiServer {
    /// The ReplicaSets as of `position` (an informer's cache).
    pub fn replicasets_at(&self, position: Rv) -> View<ReplicaSet> {
        rewind(&self.replicasets, &self.log, position, |c| match c {
            Change::ReplicaSet { before, .. } => Some(before),
            Change::Pod { .. } => None,
        })
    }

    /// The pods as of `position` (an informer's cache).
    pub fn pods_at(&self, position: Rv) -> View<Pod> {
        rewind(&self.pods, &self.log, position, |c| match c {
            Change::Pod { before, .. } => Some(before),
            Change::ReplicaSet { .. } => None,
        })
    }

    /// The owner of another kind of this kind and name, if it exists.
    pub fn other(&self, kind: &OtherKind, name: &str) -> Option<&OtherOwner> {
        self.others.iter().find(|o| o.is(kind, name))
    }

    /// The first event of `kind` after `position`, if any: what a watch delivers next.
    pub fn next_event(&self, kind: Kind, position: Rv) -> Option<&Event> {
        self.log
            .iter()
            .find(|e| e.rv > position && e.kind() == kind)
    }

    /// How many events of `kind` a watcher at `position` has not yet delivered.
    pub fn lag(&self, kind: Kind, position: Rv) -> usize {
        self.log
            .iter()
            .filter(|e| e.rv > position && e.kind() == kind)
            .count()
    }

    /// Forget the events no one will deliver or rewind any more: those of each type at or
    /// below the lowest position any watcher of that type still holds (`floor`). The types
    /// are pruned separately: a cache of one type never reads the other's events, so pod
    /// events are not kept alive by a ReplicaSet position that has nothing newer to deliver.
    pub fn prune(&mut self, floor: impl Fn(Kind) -> Rv) {
        let (rs, pods) = (floor(Kind::ReplicaSet), floor(Kind::Pod));
        self.log.retain(|e| {
            e.rv > match e.kind() {
                Kind::ReplicaSet => rs,
                Kind::Pod => pods,
            }
        });
    }

    fn commit(&mut self, name: &str, change: Change) -> Rv {
        self.rv += 1;
        self.log.push(Event {
            rv: self.rv,
            name: name.to_string(),
            change,
        });
        self.rv
    }

    /// A UID no object has had: the next the server hands out. A client that draws a UUID
    /// of its own (a reference to an owner that does not exist) takes one too, so that no
    /// later object shares it, as no random UUID would.
    pub fn fresh_uid(&mut self) -> Uid {
        self.last_uid += 1;
        self.last_uid
    }

    fn new_identity(&mut self, meta: &mut Meta) {
        meta.uid = self.fresh_uid();
        meta.created = self.now;
        meta.resource_version = self.rv + 1;
        meta.deletion_timestamp = None;
    }

    /// A second passes. No object changes and no event is logged.
    pub fn tick(&mut self) {
        self.now += 1;
    }

    /// Apply one request, each grace-0 pod delete making both its writes.
    pub fn apply(&mut self, request: &Request) -> Result<Response, ApiError> {
        self.apply_split(request, false)
    }

    /// Apply one request, a grace-0 pod delete making only its first write: the pod is
    /// stored marked deleting with grace period 0, and the second write, the removal, is left
    /// for a step of its own (`Request::FinishPodDeletion` on the marked pod; see
    /// `end_grace`). Other requests are as [`ApiServer::apply`].
    pub fn apply_marking(&mut self, request: &Request) -> Result<Response, ApiError> {
        self.apply_split(request, true)
    }

    /// The pod `name` with UID `uid` as a grace-0 delete marked it, and the revision of the
    /// removal, when that delete made both its writes after `position` and the pod is gone.
    /// A request for the pod decided on a view at `position` (which showed it unmarked) may
    /// have landed between the two writes on a cluster, and there removed the pod itself
    /// (an update, [`ApiServer::update_pod`]; a delete, `end_grace`), answered as done.
    /// Where the model makes the two writes in one step ([`ApiServer::apply`]) that landing
    /// is a move of its own (`Action::LandsInRemoval`); the log still holds both writes,
    /// since a view at `position` needs them.
    pub fn removed_in_grace_zero_delete_after(
        &self,
        name: &str,
        uid: Uid,
        position: Rv,
    ) -> Option<(Rv, &Arc<Pod>)> {
        if self.pods.get(name).is_some_and(|p| p.meta.uid == uid) {
            return None;
        }
        self.log.iter().rev().find_map(|e| match &e.change {
            Change::Pod {
                before: Some(marked),
                after: None,
            } if e.name == name
                && marked.meta.uid == uid
                && marked.grace_over
                && marked.meta.resource_version > position =>
            {
                Some((e.rv, marked))
            }
            _ => None,
        })
    }

    /// The marked pods whose grace-0 delete has made its first write only: each is removed
    /// by a step of its own ([`ApiServer::apply_marking`]).
    pub fn marked_for_removal(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.pods.values().filter(|p| p.grace_over)
    }

    fn apply_split(&mut self, request: &Request, split: bool) -> Result<Response, ApiError> {
        match request {
            Request::CreateReplicaSet(rs) => self.create_replicaset(rs.clone()),
            Request::ReplaceReplicaSet(rs) => self.replace_replicaset(rs),
            Request::ScaleReplicaSet { name, replicas } => {
                let mut rs = ReplicaSet::clone(self.replicaset(name)?);
                rs.spec.replicas = *replicas;
                rs.meta.resource_version = 0;
                self.replace_replicaset(&rs)
            }
            Request::UpdateReplicaSetStatus {
                name,
                resource_version,
                status,
            } => {
                let old = ReplicaSet::clone(self.replicaset(name)?);
                if old.meta.resource_version != *resource_version {
                    return Err(ApiError::stale_resource_version(RS, name));
                }
                let errs = validation::replicaset_status_errors(status);
                if !errs.is_empty() {
                    return Err(ApiError::invalid("ReplicaSet", name, &errs));
                }
                let mut new = old.clone();
                new.status = status.clone();
                Ok(self.write(Some(old), Some(new)))
            }
            Request::DeleteReplicaSet { name, options } => self.delete_replicaset(name, options),
            Request::RemoveFinalizer { name, finalizer } => {
                let old = ReplicaSet::clone(self.replicaset(name)?);
                let mut new = old.clone();
                new.meta.finalizers.retain(|f| f != finalizer);
                if new.meta.finalizers == old.meta.finalizers {
                    return Ok(Response::Written {
                        rv: self.rv,
                        name: name.clone(),
                        uid: old.meta.uid,
                    });
                }
                // store.go `Update`: an object with a deletionTimestamp and no finalizers left
                // is deleted by the update that removes the last one.
                let gone = new.meta.is_deleting() && new.meta.finalizers.is_empty();
                Ok(self.write(Some(old), (!gone).then_some(new)))
            }
            Request::CreatePod(pod) => self.create_pod(pod.clone()),
            Request::PatchPodOwnerReferences { name, uid, patch } => {
                let old = Pod::clone(self.pod(name)?);
                if old.meta.uid != *uid {
                    // The patch carries metadata.uid; a different object under the same name
                    // fails the immutable-field check (ValidateObjectMetaUpdate).
                    return Err(ApiError {
                        reason: super::error::Reason::Invalid,
                        message: format!(
                            "Pod \"{name}\" is invalid: metadata.uid: Invalid value: \"{uid}\": field is immutable"
                        ),
                    });
                }
                let mut new = old.clone();
                let refs = &mut new.meta.owner_references;
                // A strategic merge keyed by UID (k8s.io/apimachinery
                // pkg/util/strategicpatch/patch.go `mergeSortedSlice`): a reference the pod has
                // is completed where it stands; a new one goes before every reference the
                // patch does not name, as the v1.20.2 and v1.37.2 servers put a ReplicaSet's
                // controller reference before a StatefulSet's
                // (upstream/test-general-pod-adoption.yaml).
                match patch {
                    OwnerRefPatch::Add(r) => match refs.iter_mut().find(|x| x.uid == r.uid) {
                        Some(existing) => *existing = r.clone(),
                        None => refs.insert(0, r.clone()),
                    },
                    OwnerRefPatch::Remove(uids) => refs.retain(|x| !uids.contains(&x.uid)),
                    OwnerRefPatch::Take { from, to } => {
                        refs.retain(|x| x.uid != *from && x.uid != to.uid);
                        refs.insert(0, to.clone());
                    }
                }
                let errs = validation::pod_errors(&new);
                if !errs.is_empty() {
                    return Err(ApiError::invalid("Pod", name, &errs));
                }
                Ok(self.update_pod(old, new))
            }
            Request::SetPodLabels { name, labels } => {
                let old = Pod::clone(self.pod(name)?);
                let mut new = old.clone();
                new.meta.labels = labels.clone();
                Ok(self.update_pod(old, new))
            }
            Request::SetPodOwnerReferences { name, references } => {
                let old = Pod::clone(self.pod(name)?);
                let mut new = old.clone();
                new.meta.owner_references = references.clone();
                let errs = validation::pod_errors(&new);
                if !errs.is_empty() {
                    return Err(ApiError::invalid("Pod", name, &errs));
                }
                Ok(self.update_pod(old, new))
            }
            Request::SetPodDeletionCost { name, cost } => {
                let old = Pod::clone(self.pod(name)?);
                let mut new = old.clone();
                new.deletion_cost = *cost;
                Ok(self.update_pod(old, new))
            }
            Request::BindPod { name, node } => self.bind_pod(name, node, false),
            Request::SetPodStatus { name, phase, ready } => {
                let old = Pod::clone(self.pod(name)?);
                let mut new = old.clone();
                new.phase = *phase;
                new.ready_since = match (*ready, old.ready_since) {
                    (false, _) => None,
                    (true, Some(since)) => Some(since),
                    (true, None) => Some(self.now),
                };
                new.available = *ready;
                new.reported = true;
                Ok(self.update_pod(old, new))
            }
            Request::SetPodRestarts { name, restarts } => {
                let old = Pod::clone(self.pod(name)?);
                let mut new = old.clone();
                new.restarts = *restarts;
                new.reported = true;
                Ok(self.update_pod(old, new))
            }
            Request::DeletePod { name, options } => self.delete_pod(name, options, split),
            Request::FinishPodDeletion { name } => {
                let old = Pod::clone(self.pod(name)?);
                if !old.meta.is_deleting() {
                    return Err(ApiError::not_found(PODS, name));
                }
                Ok(self.end_grace(old, split))
            }
            Request::CreateOther { kind, name } => {
                if self.other(kind, name).is_some() {
                    return Err(ApiError::already_exists(&kind.kind, name));
                }
                let uid = self.fresh_uid();
                self.others.push(OtherOwner {
                    kind: kind.clone(),
                    name: name.clone(),
                    uid,
                });
                // No watcher reads other kinds, so the write's revision is not the model's
                // to count: it is as if made between two of the model's revisions.
                Ok(Response::Written {
                    rv: self.rv,
                    name: name.clone(),
                    uid,
                })
            }
            Request::DeleteOther { kind, name } => {
                let Some(i) = self.others.iter().position(|o| o.is(kind, name)) else {
                    return Err(ApiError::not_found(&kind.kind, name));
                };
                self.others.remove(i);
                Ok(Response::Deleted { rv: self.rv })
            }
        }
    }

    /// store.go `(*Store).Update` for a pod (a PUT or PATCH of the pod or of its status):
    /// stores `new`, unless `old` is marked deleting with grace period 0 and `new` keeps no
    /// finalizer — then the update removes the pod instead (`shouldDeleteDuringUpdate` →
    /// `deleteWithoutFinalizers`). The removal is of the object stored, so the DELETED event
    /// carries `old`, without the update's change; the client is answered 200 with the object
    /// it computed, as if stored. On a cluster the half-done delete of an unbound pod (its
    /// first write only, [`ApiServer::apply_marking`]) is ended so by whatever write comes
    /// next: seen on v1.20.2, where the ReplicaSet controller's adoption patch removed the
    /// pod the garbage collector was deleting, and the controller, answered 200, counted it.
    fn update_pod(&mut self, old: Pod, new: Pod) -> Response {
        if old.grace_over && old.meta.is_deleting() && new.meta.finalizers.is_empty() {
            let (name, uid) = (new.meta.name, new.meta.uid);
            self.write(Some(old), None);
            return Response::Written {
                rv: self.rv,
                name,
                uid,
            };
        }
        self.write(Some(old), Some(new))
    }

    /// The scheduler's binding (`Request::BindPod`) landing while a delete of the pod is
    /// between its two reads of it: that delete, if it is the pod's next write, keeps the
    /// grace period it decided on the unbound pod (`Pod::bound_under_delete`).
    pub fn bind_pod_under_delete(&mut self, name: &str, node: &str) -> Result<Response, ApiError> {
        self.bind_pod(name, node, true)
    }

    /// pkg/registry/core/pod/storage/storage.go `BindingREST.Create` → `assignPod`.
    fn bind_pod(
        &mut self,
        name: &str,
        node: &str,
        under_delete: bool,
    ) -> Result<Response, ApiError> {
        let old = Pod::clone(self.pod(name)?);
        // `assignPod`: a pod that already has a node cannot be bound again (409 Conflict).
        if let Some(bound) = &old.node_name {
            return Err(ApiError {
                reason: super::error::Reason::Conflict,
                message: format!("pod {name} is already assigned to node \"{bound}\""),
            });
        }
        let mut new = old.clone();
        new.node_name = Some(node.to_string());
        new.bound_under_delete = under_delete;
        Ok(self.write(Some(old), Some(new)))
    }

    fn replicaset(&self, name: &str) -> Result<&Arc<ReplicaSet>, ApiError> {
        self.replicasets
            .get(name)
            .ok_or_else(|| ApiError::not_found(RS, name))
    }

    fn pod(&self, name: &str) -> Result<&Arc<Pod>, ApiError> {
        self.pods
            .get(name)
            .ok_or_else(|| ApiError::not_found(PODS, name))
    }

    /// The one write path: store `new` (or remove `old` when `new` is `None`), stamp the new
    /// revision, and log the change. A create is a write with no `old`.
    fn write<T: Stored>(&mut self, old: Option<T>, new: Option<T>) -> Response {
        let rv = self.rv + 1;
        let before = old.map(Arc::new);
        match new {
            Some(mut new) => {
                if let Some(before) = &before {
                    T::revise(before, &mut new);
                }
                new.meta_mut().resource_version = rv;
                let (name, uid) = (new.meta().name.clone(), new.meta().uid);
                let new = Arc::new(new);
                T::store(self).insert(name.clone(), new.clone());
                self.commit(&name, T::change(before, Some(new)));
                Response::Written { rv, name, uid }
            }
            None => {
                let name = before
                    .as_ref()
                    .expect("a removal has an old object")
                    .meta()
                    .name
                    .clone();
                T::store(self).remove(&name);
                self.commit(&name, T::change(before, None));
                Response::Deleted { rv }
            }
        }
    }

    fn create_replicaset(&mut self, mut rs: ReplicaSet) -> Result<Response, ApiError> {
        let errs = validation::replicaset_create_errors(&rs);
        if !errs.is_empty() {
            return Err(ApiError::invalid("ReplicaSet", &rs.meta.name, &errs));
        }
        if self.replicasets.contains_key(&rs.meta.name) {
            return Err(ApiError::already_exists(RS, &rs.meta.name));
        }
        self.new_identity(&mut rs.meta);
        // strategy.go `PrepareForCreate`: generation starts at 1, status is cleared.
        rs.meta.generation = 1;
        rs.status = Default::default();
        Ok(self.write(None, Some(rs)))
    }

    /// PUT of the spec (also the scale subresource). strategy.go `PrepareForUpdate`: status is
    /// kept from the stored object, generation bumps when the spec changed.
    fn replace_replicaset(&mut self, rs: &ReplicaSet) -> Result<Response, ApiError> {
        let old = ReplicaSet::clone(self.replicaset(&rs.meta.name)?);
        if rs.meta.resource_version != 0 && rs.meta.resource_version != old.meta.resource_version {
            return Err(ApiError::stale_resource_version(RS, &rs.meta.name));
        }
        let mut new = old.clone();
        new.spec = rs.spec.clone();
        new.meta.labels = rs.meta.labels.clone();
        let errs = validation::replicaset_update_errors(&old, &new);
        if !errs.is_empty() {
            return Err(ApiError::invalid("ReplicaSet", &rs.meta.name, &errs));
        }
        if new.spec != old.spec {
            new.meta.generation += 1;
        }
        Ok(self.write(Some(old), Some(new)))
    }

    /// store.go `Delete` for a ReplicaSet. The policy comes from the options, else from an
    /// orphan/foreground finalizer already present, else the apps/v1 default, Background
    /// ([`Propagation::chosen`]). Background removes the object at once
    /// (the GC then collects the dependents); Orphan and Foreground set the deletionTimestamp
    /// and the matching finalizer (`deletionFinalizersForGarbageCollection`).
    fn delete_replicaset(
        &mut self,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Response, ApiError> {
        let old = ReplicaSet::clone(self.replicaset(name)?);
        if let Some(uid) = options.uid_precondition {
            if uid != old.meta.uid {
                return Err(ApiError::uid_precondition(RS, name, uid, old.meta.uid));
            }
        }
        let policy = Propagation::chosen(options.propagation, &old.meta.finalizers);
        let mut new = old.clone();
        new.meta
            .finalizers
            .retain(|f| !matches!(f, Finalizer::Orphan | Finalizer::ForegroundDeletion));
        match policy {
            Propagation::Orphan => new.meta.finalizers.push(Finalizer::Orphan),
            Propagation::Foreground => new.meta.finalizers.push(Finalizer::ForegroundDeletion),
            Propagation::Background => {}
        }
        if new.meta.finalizers.is_empty() {
            return Ok(self.write(Some(old), None));
        }
        if new.meta.deletion_timestamp.is_none() {
            new.meta.deletion_timestamp = Some(self.rv + 1);
            // store.go `markAsDeleting`: an object without graceful deletion that starts
            // deleting has its generation bumped (controllers should stop acting on it), so
            // the controller's next status write records a new observedGeneration.
            if new.meta.generation > 0 {
                new.meta.generation += 1;
            }
        }
        if new == old {
            return Ok(Response::DeletionStarted { rv: self.rv });
        }
        self.write(Some(old), Some(new));
        Ok(Response::DeletionStarted { rv: self.rv })
    }

    /// store.go `Delete` for a pod: graceful (deletionTimestamp only) when the pod is bound
    /// and not terminal, immediate otherwise (pod strategy `CheckGracefulDelete`).
    fn delete_pod(
        &mut self,
        name: &str,
        options: &DeleteOptions,
        split: bool,
    ) -> Result<Response, ApiError> {
        let old = Pod::clone(self.pod(name)?);
        if let Some(uid) = options.uid_precondition {
            if uid != old.meta.uid {
                return Err(ApiError::uid_precondition(PODS, name, uid, old.meta.uid));
            }
        }
        if let Some(rv) = options.resource_version_precondition {
            if rv != old.meta.resource_version {
                return Err(ApiError::resource_version_precondition(
                    PODS,
                    name,
                    rv,
                    old.meta.resource_version,
                ));
            }
        }
        if old.meta.is_deleting() && (!old.grace_over || old.deletes_gracefully()) {
            // A second delete may only shorten a grace period, and these carry none: nothing
            // is written (`rest.BeforeDelete` in apiserver's registry/rest/delete.go returns
            // before asking `CheckGracefulDelete`, so even a pod that has reached a terminal
            // phase since keeps its grace period: a real kubelet's pod, seen on v1.37).
            return Ok(Response::DeletionStarted { rv: self.rv });
        }
        // A delete that read the pod before its binding keeps the grace period it decided
        // then, 0 (`Pod::bound_under_delete`); one conditioned on the bound revision read it
        // after the binding.
        let read_unbound =
            old.bound_under_delete && options.resource_version_precondition.is_none();
        if !old.deletes_gracefully() || read_unbound {
            return Ok(self.end_grace(old, split));
        }
        let mut new = old.clone();
        new.meta.deletion_timestamp = Some(self.rv + 1);
        self.write(Some(old), Some(new));
        Ok(Response::DeletionStarted { rv: self.rv })
    }

    /// A pod delete with grace period 0 (an unbound or terminal pod, or the kubelet's final
    /// delete). store.go `(*Store).Delete` makes two writes:
    /// `updateForGracefulDeletionAndFinalizers` stores the pod marked deleting with
    /// deletionGracePeriodSeconds 0 (MODIFIED), then the storage delete removes it (DELETED). Other requests' writes land between the two on a
    /// cluster: two parallel scale-down deletes show as MODIFIED a, MODIFIED b, DELETED a,
    /// DELETED b, and a v1.35.4 controller created a replacement between the two writes of a
    /// user's delete and wrote `terminatingReplicas: 1` from a cache holding both the new pod
    /// and the marked one. Nobody can act on the marked pod except as on one already gone (it
    /// is inactive); the only reader of "deleting but present" is upstream's
    /// `status.terminatingReplicas`. So `split` (the model's choice,
    /// `RsModel::splits_grace_zero_deletes`) makes the first write only, and the removal is a
    /// step of its own; otherwise both are made here, and trace validation lets the DELETED half arrive later
    /// (`rsmc_oracle::judge::search::validate`, deferred removals).
    fn end_grace(&mut self, old: Pod, split: bool) -> Response {
        let name = old.meta.name.clone();
        if !old.grace_over {
            let mut marked = old.clone();
            if !marked.meta.is_deleting() {
                marked.meta.deletion_timestamp = Some(self.rv + 1);
            }
            marked.grace_over = true;
            self.write(Some(old), Some(marked));
            if split {
                return Response::DeletionStarted { rv: self.rv };
            }
        }
        let gone = Pod::clone(&self.pods[&name]);
        self.write(Some(gone), None)
    }

    fn create_pod(&mut self, mut pod: Pod) -> Result<Response, ApiError> {
        let errs = validation::pod_errors(&pod);
        if !errs.is_empty() {
            return Err(ApiError::invalid("Pod", &pod.meta.name, &errs));
        }
        if pod.meta.name.is_empty() {
            let prefix = pod.meta.generate_name.clone().unwrap_or_default();
            pod.meta.name = names::generate(&prefix, self.last_uid + 1);
        }
        if self.pods.contains_key(&pod.meta.name) {
            return Err(ApiError::already_exists(PODS, &pod.meta.name));
        }
        self.new_identity(&mut pod.meta);
        Ok(self.write(None, Some(pod)))
    }
}

/// The stored kinds, so that one write path serves both.
trait Stored: Sized {
    fn meta(&self) -> &Meta;
    fn meta_mut(&mut self) -> &mut Meta;
    fn store(api: &mut ApiServer) -> &mut View<Self>;
    fn change(before: Option<Arc<Self>>, after: Option<Arc<Self>>) -> Change;
    /// What a new revision of an object does not keep of the one it replaces.
    fn revise(_before: &Self, _after: &mut Self) {}
}

impl Stored for ReplicaSet {
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn store(api: &mut ApiServer) -> &mut View<Self> {
        &mut api.replicasets
    }
    fn change(before: Option<Arc<Self>>, after: Option<Arc<Self>>) -> Change {
        Change::ReplicaSet { before, after }
    }
}

impl Stored for Pod {
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn store(api: &mut ApiServer) -> &mut View<Self> {
        &mut api.pods
    }
    fn change(before: Option<Arc<Self>>, after: Option<Arc<Self>>) -> Change {
        Change::Pod { before, after }
    }
    /// A binding made under a delete holds for its own revision only.
    fn revise(before: &Self, after: &mut Self) {
        if before.bound_under_delete {
            after.bound_under_delete = false;
        }
    }
}
