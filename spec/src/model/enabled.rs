//! Which actions are enabled in a state.

use super::action::{Action, NodeAct, Recipient, Watcher};
use super::owner_by_name::OwnerByName;
use super::script::{Awaited, RequestHold, Script, ScriptStep};
use super::state::State;
use super::RsModel;
use crate::api::{Kind, RequestPattern};
use crate::controller::{AtGate, Pending};
use crate::gc;
use crate::object::Pod;
use std::sync::Arc;

impl RsModel {
    pub(super) fn enabled(&self, s: &State, out: &mut Vec<Action>) {
        let writes = s.writes_allowed(&self.config.informer);
        if let Some(script) = &self.script {
            let before = out.len();
            self.system_moves(s, writes, out);
            if script.real_kubelets && writes {
                self.node_moves(s, out);
            }
            let quiescent = out.len() == before;
            self.scripted_moves(script, s, writes, quiescent, out);
            return;
        }
        if writes && s.budget.steps > 0 {
            self.user_moves(s, out);
            self.kubelet_moves(s, out);
        }
        self.fault_moves(s, out);
        self.system_moves(s, writes, out);
    }

    /// The scripted environment's next move: the current step's, when it may happen. Writes
    /// wait, as a free environment's do, until every informer is within the lag bound.
    fn scripted_moves(
        &self,
        script: &Script,
        s: &State,
        writes: bool,
        quiescent: bool,
        out: &mut Vec<Action>,
    ) {
        match script.steps.get(s.script.step as usize) {
            Some(ScriptStep::Settle) if quiescent => out.push(Action::Settle),
            Some(ScriptStep::Move(action @ Action::Await { until })) if self.awaited(s, until) => {
                out.push(action.clone())
            }
            // An await not yet met: nothing to do but wait for the system.
            Some(ScriptStep::Move(Action::Await { .. })) => {}
            Some(ScriptStep::Move(action) | ScriptStep::Refused { action, .. }) if writes => {
                out.push(action.clone())
            }
            Some(ScriptStep::Pods { action, pods }) => match &s.script.selected {
                None => out.push(Action::ListPods),
                Some(selected) => {
                    if writes {
                        out.extend(selected.pods.iter().map(|p| action.on(p)));
                    }
                    if pods.up_to {
                        out.push(Action::EndPodStep);
                    }
                }
            },
            Some(ScriptStep::DeleteReplicaSets { propagation, .. }) if writes => {
                out.push(match s.script.next_in_collection() {
                    None => Action::ListCollection,
                    Some(name) => Action::DeleteReplicaSet {
                        name: name.clone(),
                        propagation: *propagation,
                    },
                })
            }
            // The script is over, or its step waits for quiescence or for the informers.
            // The script is over, or its step waits for quiescence or for the informers.
            _ => {}
        }
    }

    fn user_moves(&self, s: &State, out: &mut Vec<Action>) {
        let env = &self.config.environment;
        for decl in &self.config.replicasets {
            let live = s.api.replicasets.get(&decl.name);
            match live {
                None if env.create_replica_set => out.push(Action::ApplyReplicaSet {
                    replicaset: Arc::new(decl.object()),
                }),
                Some(rs) if !rs.meta.is_deleting() => {
                    if env.scale {
                        for n in decl.scale_to.iter().filter(|n| **n != rs.spec.replicas) {
                            out.push(Action::ScaleReplicaSet {
                                name: decl.name.clone(),
                                replicas: *n,
                            });
                        }
                    }
                    for p in &env.delete_replica_set {
                        out.push(Action::DeleteReplicaSet {
                            name: decl.name.clone(),
                            propagation: Some(*p),
                        });
                    }
                }
                _ => {}
            }
        }
        for decl in &self.config.other_owners {
            let kind = decl.kind();
            match s.api.other(&kind, &decl.name) {
                None if env.create_other_owner => out.push(Action::CreateOther {
                    kind,
                    name: decl.name.clone(),
                }),
                Some(_) if env.delete_other_owner => out.push(Action::DeleteOther {
                    kind,
                    name: decl.name.clone(),
                }),
                _ => {}
            }
        }
        if env.create_pod {
            for decl in self
                .config
                .pods
                .iter()
                // A pod declared with owners exists from the start and is not made again:
                // its owners' UIDs may have changed since.
                .filter(|d| d.owners.is_empty() && !s.api.pods.contains_key(&d.name))
            {
                out.push(Action::ApplyPod {
                    pod: Arc::new(Pod::new(&decl.name, decl.labels.clone())),
                });
            }
        }
        for pod in s.api.pods.values().filter(|p| !p.meta.is_deleting()) {
            if env.relabel_pod {
                // Relabelling to a set replaces the pod's labels: keys outside the set go.
                for set in self
                    .config
                    .relabel_to
                    .iter()
                    .filter(|l| **l != pod.meta.labels)
                {
                    out.push(Action::LabelPod {
                        name: pod.meta.name.clone(),
                        set: set.clone(),
                        remove: pod
                            .meta
                            .labels
                            .keys()
                            .filter(|k| !set.contains_key(*k))
                            .cloned()
                            .collect(),
                    });
                }
            }
            if env.delete_pod {
                out.push(Action::DeletePod {
                    name: pod.meta.name.clone(),
                });
            }
            if env.add_owner_reference {
                self.owner_additions(s, pod, out);
            }
        }
    }

    /// A client's read-modify-write of `pod`'s ownerReferences that adds a reference (not the
    /// controller's) to another declared ReplicaSet that is live and not being deleted. The
    /// move is a [`Action::SetPodOwners`], which names owners by name, so it is offered only
    /// while every reference the pod has names the live object of its name: a list with a
    /// dangling reference cannot be written back by name (and a client copying it would be
    /// writing a reference to an owner it cannot see).
    fn owner_additions(&self, s: &State, pod: &Pod, out: &mut Vec<Action>) {
        let live = |name: &str| {
            s.api
                .replicasets
                .get(name)
                .filter(|rs| !rs.meta.is_deleting())
        };
        // Every reference as a step would write it again (a dangling one it cannot).
        let Some(current) = pod
            .meta
            .owner_references
            .iter()
            .map(|r| OwnerByName::of(r, &s.api))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        for decl in &self.config.replicasets {
            let Some(rs) = live(&decl.name) else {
                continue;
            };
            if pod
                .meta
                .owner_references
                .iter()
                .any(|r| r.uid == rs.meta.uid)
            {
                continue;
            }
            let mut owners = current.clone();
            owners.push(OwnerByName::replicaset(&decl.name));
            out.push(Action::SetPodOwners {
                name: pod.meta.name.clone(),
                owners,
            });
        }
    }

    fn kubelet_moves(&self, s: &State, out: &mut Vec<Action>) {
        let env = &self.config.environment;
        for pod in s.api.pods.values() {
            let name = pod.meta.name.clone();
            if pod.meta.is_deleting() {
                // A pod whose grace-0 delete is half done is removed by the API server.
                if env.finish_pod_deletion && !pod.grace_over {
                    out.push(Action::FinishPodDeletion { name });
                }
                continue;
            }
            if !pod.is_active() {
                continue;
            }
            if env.schedule_pod && pod.node_name.is_none() {
                for node in &self.config.nodes {
                    out.push(Action::SchedulePod {
                        name: name.clone(),
                        node: node.clone(),
                    });
                }
            }
            if env.pod_ready && !pod.is_ready() {
                out.push(Action::PodReady { name: name.clone() });
            }
            if env.pod_unready && pod.is_ready() {
                out.push(Action::PodUnready { name: name.clone() });
            }
            if env.pod_failed {
                out.push(Action::PodFailed { name });
            }
        }
    }

    /// What real nodes may do next ([`Action::Node`]): bind a pod no node has (with or without
    /// a delete of it in flight), report and start a bound one, stop a deleting one's
    /// containers (reporting them not Ready first, or at once with its terminal phase) and
    /// finish its deletion. A pod that is not deleting stays Running and Ready once started
    /// (the scenarios' containers do not exit or fail probes; a scenario that needs them to
    /// is played, not run on real kubelets).
    fn node_moves(&self, s: &State, out: &mut Vec<Action>) {
        use crate::object::PodPhase;
        let mut node = |name: &str, act: NodeAct| {
            out.push(Action::Node {
                name: name.to_string(),
                act,
            })
        };
        for pod in s.api.pods.values() {
            let name = &pod.meta.name;
            if pod.meta.is_deleting() {
                if pod.grace_over {
                    continue;
                }
                // A pod deleted while its kubelet was creating its sandbox is still started
                // (Running, Ready) before its containers are stopped: the kubelet's pod worker
                // finishes the sync it is in (seen on v1.37).
                if pod.node_name.is_some() && pod.phase == PodPhase::Pending {
                    node(name, NodeAct::Start);
                }
                if pod.phase == PodPhase::Running && pod.is_ready() {
                    node(name, NodeAct::Unready);
                }
                if !matches!(pod.phase, PodPhase::Succeeded | PodPhase::Failed) {
                    for phase in [PodPhase::Succeeded, PodPhase::Failed] {
                        node(name, NodeAct::Stop { phase });
                    }
                }
                node(name, NodeAct::Finish);
            } else if pod.is_active() {
                match &pod.node_name {
                    None => {
                        for n in &self.config.nodes {
                            node(name, NodeAct::Bind { node: n.clone() });
                            node(name, NodeAct::BindUnderDelete { node: n.clone() });
                        }
                    }
                    Some(_) if pod.phase == PodPhase::Pending => {
                        if !pod.reported {
                            node(name, NodeAct::Report);
                        }
                        node(name, NodeAct::Start);
                    }
                    Some(_) => {}
                }
            }
        }
    }

    fn fault_moves(&self, s: &State, out: &mut Vec<Action>) {
        if s.budget.ticks > 0 {
            out.push(Action::Tick);
        }
        for (i, c) in s.controllers.iter().enumerate().filter(|(_, c)| c.running) {
            let controller = i as u8;
            if s.budget.crashes > 0 {
                out.push(Action::CrashController { controller });
            }
            if s.budget.expiries > 0 {
                for key in c
                    .expectations
                    .0
                    .keys()
                    .filter(|k| c.expectations.can_expire(k))
                {
                    out.push(Action::ExpireExpectations {
                        controller,
                        key: key.clone(),
                    });
                }
            }
        }
        if s.budget.relists > 0 {
            for w in self.watchers(s) {
                let at = self.position(s, w);
                if s.api.lag(Kind::ReplicaSet, at.rs) + s.api.lag(Kind::Pod, at.pods) > 0 {
                    out.push(Action::Relist { watcher: w });
                }
            }
        }
        if s.budget.handovers > 0 && s.controllers.len() > 1 && !s.controllers[1].running {
            out.push(Action::StartSecondLeader);
        }
        if s.controllers.len() > 1 && s.controllers[0].running && s.controllers[1].running {
            out.push(Action::StopFirstLeader);
        }
    }

    pub(super) fn system_moves(&self, s: &State, writes: bool, out: &mut Vec<Action>) {
        for w in self.watchers(s) {
            let at = self.position(s, w);
            for kind in [Kind::ReplicaSet, Kind::Pod] {
                let held = s.script.held_from(Recipient::of(w)).get(kind);
                if !held && s.api.next_event(kind, at.get(kind)).is_some() {
                    out.push(Action::Deliver { watcher: w, kind });
                }
            }
        }
        for (i, c) in s.controllers.iter().enumerate().filter(|(_, c)| c.running) {
            let controller = i as u8;
            // Workers are alike and kept sorted: only the first idle one starts syncs.
            if let Some(idle) = c.workers.iter().position(Option::is_none) {
                for key in &c.queue.queued {
                    if self.sem.consistency_gate
                        && c.written.get(key).is_some_and(|w| !c.seen.covers(w))
                    {
                        continue;
                    }
                    out.push(Action::StartSync {
                        controller,
                        worker: idle as u8,
                        key: key.clone(),
                    });
                }
            }
            for (w, task) in c.workers.iter().enumerate() {
                let Some(task) = task else { continue };
                let worker = w as u8;
                let pending = self.pending(s, c, task);
                // A request the script holds: the sync sends it (a step of its own, which
                // writes nothing), and then it waits for its release (a released one goes on
                // even when the same requests are held again).
                if task.at_gate != AtGate::Released && held(&s.script.requests, &pending) {
                    if task.at_gate == AtGate::NotSent {
                        out.push(Action::SyncStep { controller, worker });
                    }
                    continue;
                }
                match pending {
                    Pending::GetReplicaSet(_) => out.push(Action::SyncStep { controller, worker }),
                    Pending::Send(req) if writes => {
                        out.push(Action::SyncStep { controller, worker });
                        if s.budget.create_failures > 0
                            && matches!(req, crate::api::Request::CreatePod(_))
                        {
                            out.push(Action::CreateRejected { controller, worker });
                        }
                        if self.lands_in_removals() {
                            let pods = s.api.pods_at(task.read_at.1);
                            if self.lands_in_removal(s, task, &req, &pods).is_some() {
                                out.push(Action::LandsInRemoval { controller, worker });
                            }
                        }
                    }
                    // A victim set; the order its deletes land in is picked as they go out.
                    // Sets too many to list are offered by none: a search meeting them
                    // narrows them down or stops ([`RsModel::unlisted_victim_sets`]).
                    Pending::Choose(sets) => {
                        if !sets.listable() {
                            continue;
                        }
                        for pods in sets.all() {
                            out.push(Action::Choose {
                                controller,
                                worker,
                                pods,
                            });
                        }
                    }
                    // The next of the claim patches or deletes: any of those left.
                    Pending::Order(pods) => {
                        for pod in pods {
                            out.push(Action::Choose {
                                controller,
                                worker,
                                pods: vec![pod],
                            });
                        }
                    }
                    Pending::Send(_) | Pending::Done { .. } => {}
                }
            }
        }
        if writes {
            let (rs, pods) = s.views(s.gc);
            for work in gc::work_items(&rs, &pods, &s.api.others) {
                // A request the script holds waits at the collector's gate: the collector
                // has decided it, and it lands on release (decided again then: the model
                // keeps no work item in flight, and what the decision reads, the owner's
                // and the dependent's identity, cannot change in between).
                match gc::request(&work, &s.api, &pods) {
                    Some(req)
                        if !held_by(&s.script.requests, |p| {
                            p.catches(Recipient::GarbageCollector, &req)
                        }) =>
                    {
                        out.push(Action::Gc { work })
                    }
                    _ => {}
                }
            }
            out.extend(s.api.marked_for_removal().map(|p| Action::RemoveMarkedPod {
                name: p.meta.name.clone(),
                uid: p.meta.uid,
            }));
        }
    }

    /// Whether the condition an `await` step waits for holds.
    fn awaited(&self, s: &State, until: &Awaited) -> bool {
        match until {
            Awaited::Held(pattern) if pattern.from == Recipient::GarbageCollector => {
                // Held when the hold catches: it is the scenario's own hold of `pattern`.
                held_by(&s.script.requests, |p| p == pattern) && self.gc_due(s, pattern)
            }
            Awaited::Held(pattern) => s.controllers.iter().filter(|c| c.running).any(|c| {
                c.workers.iter().flatten().any(|t| {
                    t.at_gate == AtGate::Held && caught_by(pattern, &self.pending(s, c, t))
                })
            }),
            Awaited::Gone { kind, name } => match kind {
                Kind::ReplicaSet => !s.api.replicasets.contains_key(name),
                Kind::Pod => !s.api.pods.contains_key(name),
            },
        }
    }

    pub(super) fn watchers(&self, s: &State) -> Vec<Watcher> {
        let mut w: Vec<Watcher> = s
            .controllers
            .iter()
            .enumerate()
            .filter(|(_, c)| c.running)
            .map(|(i, _)| Watcher::Controller(i as u8))
            .collect();
        w.push(Watcher::GarbageCollector);
        w
    }
}

/// Whether a request is one the script holds: a hold that lets no more through has a
/// pattern `caught` accepts. One rule for every sender; each says what its request is.
pub(super) fn held_by(holds: &[RequestHold], caught: impl Fn(&RequestPattern) -> bool) -> bool {
    holds.iter().any(|h| h.catching() && caught(&h.pattern))
}

/// Whether a sync's next request is one the script holds.
pub(super) fn held(holds: &[RequestHold], pending: &Pending) -> bool {
    held_by(holds, |p| caught_by(p, pending))
}

/// Whether `pattern` matches a sync's next request.
pub(super) fn caught_by(pattern: &RequestPattern, pending: &Pending) -> bool {
    let from = Recipient::ReplicaSetController;
    match pending {
        Pending::GetReplicaSet(name) => pattern.from == from && pattern.matches_get(name),
        Pending::Send(req) => pattern.catches(from, req),
        _ => false,
    }
}

impl RsModel {
    /// The request the sync in `worker`'s slot of `controller` sends next, as the pattern that
    /// catches exactly it (its verb, resource and object; a pod create names none); `None`
    /// when its next step sends nothing (a choice of victims, the end of the sync). What a
    /// run's converter holds to make that request land late ([`Action::HoldRequests`]).
    pub fn next_request(&self, s: &State, controller: u8, worker: u8) -> Option<RequestPattern> {
        let c = s.controllers.get(controller as usize)?;
        let task = c.workers.get(worker as usize)?.as_ref()?;
        match self.pending(s, c, task) {
            Pending::GetReplicaSet(name) => Some(RequestPattern {
                from: Recipient::ReplicaSetController,
                verb: crate::api::pattern::Verb::Get,
                resource: crate::api::pattern::Resource::ReplicaSets,
                name: Some(name),
            }),
            Pending::Send(req) => RequestPattern::exactly(Recipient::ReplicaSetController, &req),
            _ => None,
        }
    }

    /// The request the garbage collector's work item `work` sends in `s`, as the pattern
    /// that catches exactly it; `None` when the item needs nothing there.
    pub fn gc_request(&self, s: &State, work: &gc::GcWork) -> Option<RequestPattern> {
        let (_, pods) = s.views(s.gc);
        let req = gc::request(work, &s.api, &pods)?;
        RequestPattern::exactly(Recipient::GarbageCollector, &req)
    }

    /// Whether the garbage collector has a work item in `s` whose request `pattern` catches
    /// (held or not).
    pub fn gc_due(&self, s: &State, pattern: &RequestPattern) -> bool {
        let (rs, pods) = s.views(s.gc);
        gc::work_items(&rs, &pods, &s.api.others)
            .iter()
            .any(|work| {
                gc::request(work, &s.api, &pods)
                    .is_some_and(|req| pattern.catches(Recipient::GarbageCollector, &req))
            })
    }
}
