//! A scripted run resumed from a cluster's objects at a settle point.
//!
//! The oracle judges a recording segment by segment, each from where the model's runs of
//! the previous one settled. Once a segment diverges there is no such run, and every later
//! settle point would go unjudged; a controller author wants them judged all the same. So the
//! next segment starts from the objects the cluster showed when it settled, with what the
//! objects do not show — the controller's memory — taken as any state a correct controller
//! can be in there.
//!
//! Why two states cover it. A settle point is reached only when nothing moves
//! ([`RsModel::is_quiescent`]): every informer has delivered everything, no key is queued,
//! no sync is under way and the garbage collector has nothing to do. What is left of a
//! controller's memory then is its expectations and its consistency store. The store is
//! empty once the caches have reached its revisions ([`super::ControllerState::canonicalize`]),
//! and an expectation record the caches have seen fulfilled behaves as no record
//! (`Expectations::satisfied`), so a correct controller at a settle point is the **idle**
//! state: caches at the head, queue empty, workers idle, no expectations (the oracle's
//! tests check that every settle state of the seed scenarios' runs is this one). A controller
//! that **restarted** there (caches listed again, every ReplicaSet queued) is a run a cluster
//! may show as well — a poll-based controller looks like one — and is added. More start
//! states only add runs, so the verdicts after a divergence can miss a later bug but never
//! invent one: that is the direction a report of everything found needs.
//!
//! What the objects do not say is chosen so as to allow more runs, never fewer: their
//! creation and readiness times are as the caller gives them (the oracle's reading of a
//! recording leaves every time 0, so every comparison by age between resumed pods is a tie
//! and the scale-down ranking may pick any of them), and the clock starts after them, so a
//! pod made later is younger than all of them. The environment's budget is the script's
//! whole one.
//!
//! A settle point at which the script holds watch events or requests, or after a second
//! leader took over, is not resumed: what a held cache or a parked request holds is not in
//! the objects (`Err`, saying why).

use super::action::Action;
use super::script::{ScriptPos, ScriptStep};
use super::state::{Budget, ControllerState, Ghost, Positions, State};
use super::RsModel;
use crate::api::{ApiServer, View};
use crate::object::{Meta, Pod, ReplicaSet, Seconds};
use std::sync::Arc;

impl RsModel {
    /// The states a run of the script may be in just after its settle step `settle` (a script
    /// index) when the cluster shows `replicasets` and `pods` there: the controller idle, and
    /// the controller just restarted. The objects keep their UIDs; their resourceVersions are
    /// given afresh, in order, as the states' whole history.
    pub fn resumed(
        &self,
        replicasets: &View<ReplicaSet>,
        pods: &View<Pod>,
        settle: usize,
    ) -> Result<Vec<State>, String> {
        let script = self
            .script
            .as_ref()
            .ok_or("only a scripted run is resumed at a settle point")?;
        if !matches!(script.steps.get(settle), Some(ScriptStep::Settle)) {
            return Err(format!("script step {settle} is not a settle"));
        }
        let mut position = ScriptPos::default();
        for step in &script.steps[..settle] {
            let ScriptStep::Move(action) = step else {
                continue;
            };
            match action {
                Action::HoldEvents { kind, to } => position.held_from_mut(*to).set(*kind, true),
                Action::ReleaseEvents { kind, to } => {
                    position.held_from_mut(*to).set(*kind, false)
                }
                Action::HoldRequests { pattern, after } => position.hold_requests(pattern, *after),
                Action::ReleaseRequests {
                    pattern,
                    then_hold_after,
                } => {
                    position.release_requests(pattern);
                    if let Some(after) = then_hold_after {
                        position.hold_requests(pattern, *after);
                    }
                }
                Action::StartSecondLeader | Action::StopFirstLeader => {
                    return Err(
                        "a second controller instance took over before this settle point, and which one leads is not in the objects".into(),
                    )
                }
                _ => {}
            }
        }
        if !position.held.is_none() || !position.held_from_gc.is_none() {
            return Err("the script holds watch events across this settle point: what the held caches show is not in the objects".into());
        }
        if !position.requests.is_empty() {
            return Err("the script holds requests across this settle point: what they would write is not in the objects".into());
        }
        position.step = (settle + 1) as u16;

        let mut api = ApiServer::default();
        let mut latest = 0;
        for (name, rs) in replicasets {
            let mut rs = ReplicaSet::clone(rs);
            latest = latest.max(renumbered(&mut api, &mut rs.meta));
            api.replicasets.insert(name.clone(), Arc::new(rs));
        }
        for (name, pod) in pods {
            let mut pod = Pod::clone(pod);
            latest = latest
                .max(renumbered(&mut api, &mut pod.meta))
                .max(pod.ready_since.unwrap_or(0));
            api.pods.insert(name.clone(), Arc::new(pod));
        }
        api.now = latest + 1;

        let workers = self.config.controller.workers as usize;
        let idle = ControllerState {
            seen: Positions::at(api.rv),
            ..ControllerState::new(workers, true)
        };
        let start = |leader: ControllerState| {
            let mut controllers = vec![leader];
            if self.config.environment.second_leader {
                controllers.push(ControllerState::new(workers, false));
            }
            let mut s = State {
                api: api.clone(),
                controllers,
                gc: Positions::at(api.rv),
                budget: Budget {
                    create_failures: script.create_failures as u8,
                    ..Budget::default()
                },
                ghost: Ghost::default(),
                script: position.clone(),
            };
            s.canonicalize();
            s
        };
        let idle = start(idle);
        let restarted = start(self.fresh_controller(&idle));
        Ok(vec![idle, restarted])
    }
}

/// `meta` made the next write of `api`'s history: its resourceVersion (and the revision its
/// deletion began at, if it is deleting) the next revision, its UID counted as handed out.
/// Returns its creation time.
fn renumbered(api: &mut ApiServer, meta: &mut Meta) -> Seconds {
    api.rv += 1;
    meta.resource_version = api.rv;
    meta.deletion_timestamp = meta.deletion_timestamp.map(|_| api.rv);
    api.last_uid = api.last_uid.max(meta.uid);
    meta.created
}
