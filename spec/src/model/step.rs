//! What each action does.

use super::action::{Action, NodeAct, Watcher};
use super::properties as prop;
use super::script::{Script, ScriptStep};
use super::state::{ControllerState, Positions, State};
use super::RsModel;
use crate::api::{
    ApiError, DeleteOptions, Kind, Propagation, Reason, Request, RequestPattern, Response, View,
};
use crate::controller::{begin, AtGate, Begin, Handlers, Pending, SyncTask, SyncView};
use crate::gc;
use crate::object::{Pod, PodPhase, ReplicaSet, Rv};
use std::sync::Arc;

impl RsModel {
    /// The successor of `s` under `action`; `None` when the action changes nothing.
    pub(super) fn step(&self, s: &State, action: &Action) -> Option<State> {
        let mut n = s.clone();
        match (&self.script, action.is_environment()) {
            (Some(script), true) => self.scripted_step(script, &mut n, action)?,
            (None, true) => {
                self.charge(&mut n, action);
                self.environment(&mut n, action).ok()?;
            }
            (_, false) => self.system(&mut n, action)?,
        }
        n.canonicalize();
        (n != *s).then_some(n)
    }

    /// A scripted environment's move: take it and move the script on. A command that fails at
    /// the API server (scaling a ReplicaSet that is gone, labelling a pod that was deleted)
    /// changes nothing, as it would on a cluster, and the script still moves on. A step the
    /// scenario expects to be refused ([`ScriptStep::Refused`]) moves the script on only when
    /// the API server refuses it with that reason: otherwise the run cannot go on (`None`),
    /// and no run of the model is the recording of a cluster that refused it.
    fn scripted_step(&self, script: &Script, n: &mut State, action: &Action) -> Option<()> {
        let step = script.steps.get(n.script.step as usize);
        match (action, step) {
            (Action::ListPods, Some(ScriptStep::Pods { pods, .. })) => {
                let selected = pods.evaluate(&n.api.replicasets, &n.api.pods);
                n.script.select(selected);
            }
            (Action::EndPodStep, Some(ScriptStep::Pods { .. })) => n.script.advance(),
            (_, Some(ScriptStep::Pods { .. })) => {
                let _ = self.environment(n, action);
                if let Some(pod) = action.pod_name() {
                    n.script.acted_on(pod);
                }
            }
            (Action::ListCollection, Some(ScriptStep::DeleteReplicaSets { selector, .. })) => {
                let names = n
                    .api
                    .replicasets
                    .values()
                    .filter(|rs| selector.matches(&rs.meta.labels))
                    .map(|rs| rs.meta.name.clone())
                    .collect();
                n.script.list_collection(names);
            }
            // One of the collection's deletes; one that finds the ReplicaSet gone is no error.
            (Action::DeleteReplicaSet { name, .. }, Some(ScriptStep::DeleteReplicaSets { .. })) => {
                let _ = self.environment(n, action);
                n.script.deleted_from_collection(name);
            }
            (_, Some(ScriptStep::Refused { reason, .. })) => {
                if self.environment(n, action) != Err(Unchanged::Refused(*reason)) {
                    return None;
                }
                n.script.advance();
            }
            _ => {
                let _ = self.environment(n, action);
                n.script.advance();
            }
        }
        Some(())
    }

    /// What the API server answers the move the script's current step expects to be refused,
    /// in words (`accepts it`, `refuses it: NotFound`); `None` when the current step expects
    /// no refusal or gets the one it expects. Says why a run stops at that step.
    pub fn refusal_mismatch(&self, s: &State) -> Option<String> {
        let script = self.script.as_ref()?;
        let Some(ScriptStep::Refused { action, reason }) = script.steps.get(s.script.step as usize)
        else {
            return None;
        };
        let mut n = s.clone();
        match self.environment(&mut n, action) {
            Err(Unchanged::Refused(r)) if r == *reason => None,
            Err(Unchanged::Refused(r)) => Some(format!("refuses it: {r}")),
            Err(Unchanged::NothingToDo) => Some("has nothing to change".into()),
            Ok(()) => Some("accepts it".into()),
        }
    }

    /// What an environment move does; why it changed nothing when it did not.
    fn environment(&self, n: &mut State, action: &Action) -> Result<(), Unchanged> {
        match action {
            Action::HoldEvents { kind, to } => n.script.held_from_mut(*to).set(*kind, true),
            Action::HoldRequests { pattern, after } => n.script.hold_requests(pattern, *after),
            Action::ReleaseRequests {
                pattern,
                then_hold_after,
            } => {
                self.release_parked(n, pattern);
                n.script.release_requests(pattern);
                if let Some(after) = then_hold_after {
                    n.script.hold_requests(pattern, *after);
                }
            }
            Action::Await { .. } => {}
            Action::ReleaseEvents { kind, to } => {
                n.script.held_from_mut(*to).set(*kind, false);
                if self.config.informer.drain_unbounded {
                    n.script.draining.set(*kind, n.api.rv);
                }
            }
            Action::ApplyReplicaSet { replicaset } => {
                let request = if n.api.replicasets.contains_key(&replicaset.meta.name) {
                    // kubectl apply of an existing object: a patch of its spec and labels,
                    // with no resourceVersion precondition.
                    Request::ReplaceReplicaSet(ReplicaSet::clone(replicaset))
                } else {
                    Request::CreateReplicaSet(ReplicaSet::clone(replicaset))
                };
                n.api.apply(&request)?;
            }
            Action::ApplyPod { pod } => match n.api.pods.get(&pod.meta.name) {
                // A pod's spec is immutable: re-applying its manifest can change its labels.
                Some(live) if live.meta.labels != pod.meta.labels => {
                    n.api.apply(&Request::SetPodLabels {
                        name: pod.meta.name.clone(),
                        labels: pod.meta.labels.clone(),
                    })?;
                }
                Some(_) => return Err(Unchanged::NothingToDo),
                None => {
                    n.api.apply(&Request::CreatePod(Pod::clone(pod)))?;
                }
            },
            Action::ScaleReplicaSet { name, replicas } => {
                n.api.apply(&Request::ScaleReplicaSet {
                    name: name.clone(),
                    replicas: *replicas,
                })?;
            }
            Action::DeleteReplicaSet { name, propagation } => {
                let meta = &n
                    .api
                    .replicasets
                    .get(name)
                    .ok_or(Unchanged::NOT_FOUND)?
                    .meta;
                let uid = meta.uid;
                if Propagation::chosen(*propagation, &meta.finalizers) == Propagation::Orphan {
                    let dependents: Vec<_> = n
                        .api
                        .pods
                        .values()
                        .filter(|p| p.meta.owner_references.iter().any(|r| r.uid == uid))
                        .map(|p| (uid, p.meta.uid))
                        .collect();
                    n.ghost.orphan_promises.extend(dependents);
                }
                n.api.apply(&Request::DeleteReplicaSet {
                    name: name.clone(),
                    options: DeleteOptions {
                        propagation: *propagation,
                        ..DeleteOptions::default()
                    },
                })?;
            }
            Action::CreateOther { kind, name } => {
                n.api.apply(&Request::CreateOther {
                    kind: kind.clone(),
                    name: name.clone(),
                })?;
            }
            Action::DeleteOther { kind, name } => {
                n.api.apply(&Request::DeleteOther {
                    kind: kind.clone(),
                    name: name.clone(),
                })?;
            }
            Action::LabelPod { name, set, remove } => {
                let mut labels = n
                    .api
                    .pods
                    .get(name)
                    .ok_or(Unchanged::NOT_FOUND)?
                    .meta
                    .labels
                    .clone();
                labels.retain(|k, _| !remove.contains(k));
                labels.extend(set.clone());
                n.api.apply(&Request::SetPodLabels {
                    name: name.clone(),
                    labels,
                })?;
            }
            Action::SetPodOwners { name, owners } => {
                let references = owners
                    .iter()
                    .map(|o| o.reference(&mut n.api).ok_or(Unchanged::NOT_FOUND))
                    .collect::<Result<Vec<_>, Unchanged>>()?;
                unless_already(n, name, |p| p.meta.owner_references == references)?;
                n.api.apply(&Request::SetPodOwnerReferences {
                    name: name.clone(),
                    references,
                })?;
            }
            Action::AnnotatePod {
                name,
                deletion_cost,
            } => {
                unless_already(n, name, |p| p.deletion_cost == *deletion_cost)?;
                n.api.apply(&Request::SetPodDeletionCost {
                    name: name.clone(),
                    cost: *deletion_cost,
                })?;
            }
            Action::DeletePod { name } => {
                let delete = Request::DeletePod {
                    name: name.clone(),
                    options: DeleteOptions::default(),
                };
                self.send(n, &delete)?;
            }
            Action::SchedulePod { name, node } => {
                n.api.apply(&Request::BindPod {
                    name: name.clone(),
                    node: node.clone(),
                })?;
            }
            Action::PodReady { name } => kubelet_status(n, name, PodPhase::Running, true)?,
            Action::PodUnready { name } => kubelet_status(n, name, PodPhase::Running, false)?,
            Action::PodFailed { name } => kubelet_status(n, name, PodPhase::Failed, false)?,
            Action::PodRestarted { name, restarts } => {
                unless_already(n, name, |p| p.restarts == *restarts)?;
                n.api.apply(&Request::SetPodRestarts {
                    name: name.clone(),
                    restarts: *restarts,
                })?;
            }
            Action::FinishPodDeletion { name } => {
                let finish = Request::FinishPodDeletion { name: name.clone() };
                self.send(n, &finish)?;
            }
            Action::Tick => n.api.tick(),
            Action::CrashController { controller } => {
                let i = *controller as usize;
                n.controllers[i] = self.fresh_controller(n);
            }
            Action::ExpireExpectations { controller, key } => {
                n.controllers[*controller as usize].expectations.expire(key);
            }
            Action::Relist { watcher } => self.relist(n, *watcher),
            Action::StartSecondLeader => n.controllers[1] = self.fresh_controller(n),
            Action::StopFirstLeader => {
                let workers = self.config.controller.workers as usize;
                n.controllers[0] = ControllerState::new(workers, false);
            }
            // Only a script makes these, and the script handles them itself.
            Action::ListPods | Action::ListCollection | Action::EndPodStep | Action::Settle => {
                return Err(Unchanged::NothingToDo)
            }
            _ => unreachable!("{action} is a system move"),
        }
        Ok(())
    }

    /// What a system move does; `None` when it cannot happen.
    fn system(&self, n: &mut State, action: &Action) -> Option<()> {
        match action {
            Action::Deliver { watcher, kind } => self.deliver(n, *watcher, *kind)?,
            Action::StartSync {
                controller,
                worker,
                key,
            } => self.start_sync(n, *controller as usize, *worker as usize, key),
            Action::SyncStep { controller, worker } => {
                self.sync_step(n, *controller as usize, *worker as usize, Answer::Served)
            }
            Action::CreateRejected { controller, worker } => {
                n.budget.create_failures -= 1;
                self.sync_step(
                    n,
                    *controller as usize,
                    *worker as usize,
                    Answer::QuotaExceeded,
                )
            }
            Action::LandsInRemoval { controller, worker } => {
                self.sync_step(n, *controller as usize, *worker as usize, Answer::InRemoval)
            }
            Action::Choose {
                controller,
                worker,
                pods,
            } => {
                let ci = *controller as usize;
                let task = n.controllers[ci].workers[*worker as usize].as_ref()?;
                let rs_view = n.api.replicasets_at(task.read_at.0);
                let pods_view = n.api.pods_at(task.read_at.1);
                let view = self.sync_view(&rs_view, &pods_view, &task.key);
                if let Some(ranked) = task.ranked_choice(&view, pods) {
                    prop::on_victims_chosen(n, ranked);
                }
                let c = &mut n.controllers[ci];
                let task = c.workers[*worker as usize].as_mut()?;
                task.choose(pods.clone(), &mut c.expectations);
            }
            Action::Gc { work } => self.gc_step(n, work),
            Action::Node { name, act } => self.node_step(n, name, act).ok()?,
            Action::RemoveMarkedPod { name, uid } => {
                n.api
                    .pods
                    .get(name)
                    .filter(|p| p.meta.uid == *uid && p.grace_over)?;
                let remove = Request::FinishPodDeletion { name: name.clone() };
                n.api.apply(&remove).ok()?;
            }
            _ => unreachable!("{action} is an environment move"),
        }
        Some(())
    }

    fn charge(&self, n: &mut State, action: &Action) {
        let b = &mut n.budget;
        match action {
            Action::CrashController { .. } => b.crashes -= 1,
            Action::ExpireExpectations { .. } => b.expiries -= 1,
            Action::Relist { .. } => b.relists -= 1,
            Action::StartSecondLeader => b.handovers -= 1,
            Action::Tick => b.ticks -= 1,
            Action::StopFirstLeader => {}
            _ => b.steps -= 1,
        }
    }

    /// A controller instance that has just started: empty memory, caches listed at the head
    /// of the log, every ReplicaSet queued by the initial list.
    pub(super) fn fresh_controller(&self, s: &State) -> ControllerState {
        let mut c = ControllerState::new(self.config.controller.workers as usize, true);
        c.seen = Positions::at(s.api.rv);
        for name in s.api.replicasets.keys() {
            c.queue.add(name);
        }
        c
    }

    pub(super) fn position(&self, s: &State, w: Watcher) -> Positions {
        match w {
            Watcher::Controller(i) => s.controllers[i as usize].seen,
            Watcher::GarbageCollector => s.gc,
        }
    }

    /// The watch delivers the next event of `kind` to `watcher`.
    fn deliver(&self, n: &mut State, watcher: Watcher, kind: Kind) -> Option<()> {
        let at = self.position(n, watcher);
        let event = n.api.next_event(kind, at.get(kind))?.clone();
        match watcher {
            Watcher::GarbageCollector => n.gc.set(kind, event.rv),
            Watcher::Controller(i) => {
                let c = &mut n.controllers[i as usize];
                c.seen.set(kind, event.rv);
                let rs_view = n.api.replicasets_at(c.seen.rs);
                let mut h = Handlers {
                    queue: &mut c.queue,
                    expectations: &mut c.expectations,
                    replicasets: &rs_view,
                    sem: &self.sem,
                };
                match &event.change {
                    crate::api::Change::ReplicaSet { before, after } => {
                        h.replicaset(before.as_deref(), after.as_deref())
                    }
                    crate::api::Change::Pod { before, after } => {
                        h.pod(before.as_deref(), after.as_deref())
                    }
                }
            }
        }
        Some(())
    }

    /// The watch expired: the informer lists afresh and replaces its cache, telling the
    /// handlers of every difference — vanished objects as (possibly stale) tombstones.
    fn relist(&self, n: &mut State, watcher: Watcher) {
        let head = Positions::at(n.api.rv);
        match watcher {
            Watcher::GarbageCollector => n.gc = head,
            Watcher::Controller(i) => {
                let c = &mut n.controllers[i as usize];
                let (old_rs, old_pods) =
                    (n.api.replicasets_at(c.seen.rs), n.api.pods_at(c.seen.pods));
                c.seen = head;
                let new_rs = n.api.replicasets.clone();
                let mut h = Handlers {
                    queue: &mut c.queue,
                    expectations: &mut c.expectations,
                    replicasets: &new_rs,
                    sem: &self.sem,
                };
                for (name, cur) in &new_rs {
                    match old_rs.get(name) {
                        Some(old) if old.meta.resource_version == cur.meta.resource_version => {}
                        old => h.replicaset(old.map(|o| &**o), Some(cur)),
                    }
                }
                for old in old_rs
                    .values()
                    .filter(|o| !new_rs.contains_key(&o.meta.name))
                {
                    h.replicaset(Some(old), None);
                }
                for (name, cur) in &n.api.pods {
                    match old_pods.get(name) {
                        Some(old) if old.meta.resource_version == cur.meta.resource_version => {}
                        old => h.pod(old.map(|o| &**o), Some(cur)),
                    }
                }
                for old in old_pods
                    .values()
                    .filter(|p| !n.api.pods.contains_key(&p.meta.name))
                {
                    h.pod(Some(old), None);
                }
            }
        }
    }

    fn start_sync(&self, n: &mut State, ci: usize, wi: usize, key: &str) {
        let c = &mut n.controllers[ci];
        if !c.queue.take(key) {
            return;
        }
        let at = c.seen;
        let rs_view = n.api.replicasets_at(at.rs);
        let pods = n.api.pods_at(at.pods);
        match begin(
            key,
            rs_view.get(key).map(|r| &**r),
            &pods,
            (at.rs, at.pods),
            &mut c.expectations,
            &self.sem,
        ) {
            Begin::Gone => {
                c.written.remove(key);
                c.queue.done(key, false);
            }
            Begin::Run(mut task) => {
                let view = self.sync_view(&rs_view, &pods, key);
                if let Pending::Done { error } = task.advance(&view, &mut c.expectations) {
                    c.queue.done(key, error);
                } else {
                    c.workers[wi] = Some(task);
                }
            }
        }
    }

    fn sync_view<'a>(
        &'a self,
        rs: &'a crate::api::View<ReplicaSet>,
        pods: &'a crate::api::View<Pod>,
        key: &str,
    ) -> SyncView<'a> {
        SyncView {
            rs: rs
                .get(key)
                .expect("a running sync's ReplicaSet is in the cache it read"),
            pods,
            sem: &self.sem,
            burst_replicas: self.config.controller.burst_replicas,
        }
    }

    /// What the sync in a worker slot waits for.
    pub fn pending(&self, s: &State, c: &ControllerState, task: &SyncTask) -> Pending {
        let rs = s.api.replicasets_at(task.read_at.0);
        let pods = s.api.pods_at(task.read_at.1);
        let view = self.sync_view(&rs, &pods, &task.key);
        let mut task = task.clone();
        let mut exp = c.expectations.clone();
        task.advance(&view, &mut exp)
    }

    /// The first sync in `s` choosing among more victim sets than a search lists
    /// ([`crate::controller::ranking::VictimSets::listable`]): its controller, worker and
    /// sets. The model offers none of them as steps; a search that meets one narrows the
    /// sets down from what it knows (the oracle's witness search, from the recording) or
    /// stops, rather than listing them until the memory runs out.
    pub fn unlisted_victim_sets(
        &self,
        s: &State,
    ) -> Option<(u8, u8, crate::controller::ranking::VictimSets)> {
        s.controllers.iter().enumerate().find_map(|(ci, c)| {
            c.workers.iter().enumerate().find_map(|(wi, task)| {
                let task = task.as_ref()?;
                if !matches!(
                    task.phase,
                    crate::controller::sync::Phase::ChooseVictims { .. }
                ) {
                    return None;
                }
                match self.pending(s, c, task) {
                    Pending::Choose(sets) if !sets.listable() => Some((ci as u8, wi as u8, sets)),
                    _ => None,
                }
            })
        })
    }

    /// [`RsModel::unlisted_victim_sets`] as a search's stop: a search that lists every step
    /// cannot go past such a state without missing runs, so it stops there.
    pub fn check_victim_sets(
        &self,
        s: &State,
        explored: usize,
    ) -> Result<(), crate::budget::Exhausted> {
        match self.unlisted_victim_sets(s) {
            None => Ok(()),
            Some((_, _, sets)) => Err(crate::budget::Exhausted {
                limit: crate::budget::Limit::VictimSets { sets: sets.count() },
                explored,
            }),
        }
    }

    /// The requests `pattern` caught are released: each sync parked on one may go on,
    /// whatever is held after.
    fn release_parked(&self, n: &mut State, pattern: &RequestPattern) {
        let s: &State = n;
        let released: Vec<(usize, usize)> = s
            .controllers
            .iter()
            .enumerate()
            .flat_map(|(ci, c)| {
                c.workers.iter().enumerate().filter_map(move |(wi, t)| {
                    let t = t.as_ref()?;
                    (t.at_gate == AtGate::Held
                        && super::enabled::caught_by(pattern, &self.pending(s, c, t)))
                    .then_some((ci, wi))
                })
            })
            .collect();
        for (ci, wi) in released {
            if let Some(t) = n.controllers[ci].workers[wi].as_mut() {
                t.at_gate = AtGate::Released;
            }
        }
    }

    /// Perform the request the sync in slot `wi` waits for, answered as `answer` says, record
    /// the outcome, and finish the sync if nothing else remains.
    fn sync_step(&self, n: &mut State, ci: usize, wi: usize, answer: Answer) {
        let Some(mut task) = n.controllers[ci].workers[wi].take() else {
            return;
        };
        let rs_view = n.api.replicasets_at(task.read_at.0);
        let pods = n.api.pods_at(task.read_at.1);
        let view = self.sync_view(&rs_view, &pods, &task.key);
        let mut exp = std::mem::take(&mut n.controllers[ci].expectations);
        let pending = if task.at_gate != AtGate::NotSent {
            // Its internal steps ran when it was sent, with the expectations they set: run
            // them again on a copy, to have the request back.
            task.at_gate = AtGate::NotSent;
            task.advance(&view, &mut exp.clone())
        } else {
            let mut ahead = task.clone();
            let pending = ahead.advance(&view, &mut exp);
            if super::enabled::held(&n.script.requests, &pending) {
                task.at_gate = AtGate::Held;
                let c = &mut n.controllers[ci];
                c.expectations = exp;
                c.workers[wi] = Some(task);
                return;
            }
            n.script
                .let_through(|p| super::enabled::caught_by(p, &pending));
            task = ahead;
            pending
        };
        match pending {
            Pending::GetReplicaSet(name) => {
                let live = n.api.replicasets.get(&name).cloned();
                task.record_get(&view, live.as_deref());
            }
            Pending::Send(req) => {
                let result = match answer {
                    Answer::QuotaExceeded => Err(ApiError {
                        reason: Reason::Forbidden,
                        message: "pods \"\" is forbidden: exceeded quota: pods".into(),
                    }),
                    Answer::InRemoval => self.landed_in_removal(n, view.rs, &task, &req, &pods),
                    Answer::Served => self.controller_request(n, view.rs, &task, &req),
                };
                if let Ok(rv) = &result {
                    if self.sem.consistency_gate {
                        record_own_write(&mut n.controllers[ci], &task.key, &req, *rv);
                    }
                }
                task.record(&view, result.as_ref().map(|_| ()), &mut exp);
            }
            Pending::Choose(_) | Pending::Order(_) | Pending::Done { .. } => {}
        }
        let next = task.advance(&view, &mut exp);
        let c = &mut n.controllers[ci];
        c.expectations = exp;
        match next {
            Pending::Done { error } => c.queue.done(&task.key, error),
            _ => c.workers[wi] = Some(task),
        }
    }

    /// The pod `req` (a sync's update or delete of a pod, decided on the sync's view `pods`)
    /// would land on between the two writes of a grace-0 delete the model made in one step
    /// after that view, as it was marked, and the revision of its removal; `None` when no such
    /// delete removed it ([`crate::api::ApiServer::removed_in_grace_zero_delete_after`]).
    pub(crate) fn lands_in_removal<'a>(
        &self,
        s: &'a State,
        task: &SyncTask,
        req: &Request,
        pods: &View<Pod>,
    ) -> Option<(Rv, &'a Arc<Pod>)> {
        let name = pod_written(req)?;
        let uid = pods.get(name)?.meta.uid;
        s.api
            .removed_in_grace_zero_delete_after(name, uid, task.read_at.1)
    }

    /// A sync's request landing between the two writes of the grace-0 delete that removed its
    /// pod since ([`Action::LandsInRemoval`]): the removal it made on a cluster is the one the
    /// model has made already, so it writes nothing; it is answered as done, and the action
    /// properties judge it on the pod as marked.
    fn landed_in_removal(
        &self,
        n: &mut State,
        rs: &ReplicaSet,
        task: &SyncTask,
        req: &Request,
        pods: &View<Pod>,
    ) -> Result<u32, ApiError> {
        let Some((rv, marked)) = self.lands_in_removal(n, task, req, pods) else {
            return self.controller_request(n, rs, task, req);
        };
        let marked = Arc::clone(marked);
        let doomed = prop::before_controller_request(n, rs, req, Some(&marked));
        prop::after_controller_request(n, rs, task, req, doomed);
        Ok(rv)
    }

    /// Apply a controller's request, checking the action properties around it. Returns the
    /// revision written.
    fn controller_request(
        &self,
        n: &mut State,
        rs: &ReplicaSet,
        task: &SyncTask,
        req: &Request,
    ) -> Result<u32, ApiError> {
        let target = pod_written(req).and_then(|name| n.api.pods.get(name).cloned());
        let doomed = prop::before_controller_request(n, rs, req, target.as_deref());
        let result = self.send(n, req);
        if let Ok(resp) = &result {
            prop::after_controller_request(n, rs, task, req, doomed);
            return Ok(match resp {
                Response::Written { rv, .. }
                | Response::Deleted { rv }
                | Response::DeletionStarted { rv } => *rv,
            });
        }
        result.map(|_| 0)
    }

    fn gc_step(&self, n: &mut State, work: &gc::GcWork) {
        let pods = n.api.pods_at(n.gc.pods);
        if let Some(req) = gc::request(work, &n.api, &pods) {
            n.script
                .let_through(|p| p.catches(super::Recipient::GarbageCollector, &req));
            prop::before_gc_request(n, &req);
            // A refused request (NotFound, a failed precondition) writes nothing; the work
            // item stays as long as the GC's view gives rise to it, and is retried.
            let _ = self.send(n, &req);
        }
    }
}

impl RsModel {
    /// A real node's move ([`Action::Node`]): the same requests the played scheduler and
    /// kubelet send.
    fn node_step(&self, n: &mut State, name: &str, act: &NodeAct) -> Result<(), Unchanged> {
        let name = name.to_string();
        match act {
            NodeAct::Bind { node } => {
                n.api.apply(&Request::BindPod {
                    name,
                    node: node.clone(),
                })?;
            }
            NodeAct::BindUnderDelete { node } => {
                n.api.bind_pod_under_delete(&name, node)?;
            }
            NodeAct::Report => kubelet_status(n, &name, PodPhase::Pending, false)?,
            NodeAct::Start => kubelet_status(n, &name, PodPhase::Running, true)?,
            NodeAct::Unready => kubelet_status(n, &name, PodPhase::Running, false)?,
            NodeAct::Stop { phase } => kubelet_status(n, &name, *phase, false)?,
            NodeAct::Finish => {
                self.send(n, &Request::FinishPodDeletion { name })?;
            }
        }
        Ok(())
    }
}

fn kubelet_status(
    n: &mut State,
    name: &str,
    phase: PodPhase,
    ready: bool,
) -> Result<(), Unchanged> {
    n.api
        .apply(&Request::SetPodStatus {
            name: name.to_string(),
            phase,
            ready,
        })
        .map(|_| ())
        .map_err(Unchanged::from)
}

/// `NothingToDo` when pod `name` already is as a patch would leave it (`NotFound` when it is
/// gone): such a patch writes nothing (no new resourceVersion, no event), as the API
/// server's update does.
fn unless_already(n: &State, name: &str, already: impl Fn(&Pod) -> bool) -> Result<(), Unchanged> {
    let live = n.api.pods.get(name).ok_or(Unchanged::NOT_FOUND)?;
    if already(live) {
        return Err(Unchanged::NothingToDo);
    }
    Ok(())
}

/// Why an environment move changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unchanged {
    /// The API server refused the request.
    Refused(Reason),
    /// There was nothing to write (re-applying an unchanged pod), or the move is the
    /// script's own bookkeeping.
    NothingToDo,
}

impl Unchanged {
    /// The object the move names is gone: what the API server answers a write to it.
    const NOT_FOUND: Unchanged = Unchanged::Refused(Reason::NotFound);
}

impl From<ApiError> for Unchanged {
    fn from(e: ApiError) -> Self {
        Unchanged::Refused(e.reason)
    }
}

/// [upstream] Record a successful write `req` (revision `rv`) of the sync of `key` in the
/// controller's consistency store, where the store records that kind of write
/// ([`crate::controller::consistency::recorded`]).
fn record_own_write(c: &mut ControllerState, key: &str, req: &Request, rv: Rv) {
    let Some(resource) = crate::controller::consistency::recorded(req) else {
        return;
    };
    let w = c.written.entry(key.to_string()).or_default();
    match resource {
        Kind::ReplicaSet => w.rs = w.rs.max(rv),
        Kind::Pod => w.pods = w.pods.max(rv),
    }
}

/// The pod a sync's request updates or deletes (an adoption, a release, a scale-down
/// delete), which the action properties judge and a grace-0 delete may have removed first.
fn pod_written(req: &Request) -> Option<&str> {
    match req {
        Request::PatchPodOwnerReferences { name, .. } | Request::DeletePod { name, .. } => {
            Some(name)
        }
        _ => None,
    }
}

/// How the API server answers a sync's request ([`RsModel::sync_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// As its state decides.
    Served,
    /// A pod create refused as an exceeded quota refuses it ([`Action::CreateRejected`]).
    QuotaExceeded,
    /// Landed between the two writes of the grace-0 delete that has since removed its pod
    /// ([`Action::LandsInRemoval`]).
    InRemoval,
}
