//! The stateright model: every interleaving of the environment, the informers, the
//! controller's workers, the API server and the garbage collector, within a configuration's
//! bounds.

pub mod action;
mod canonical;
mod commute;
pub use canonical::{set_reduction, Reduction, UpToPods, UpToRevisions};
mod describe;
mod enabled;
pub mod owner_by_name;
pub mod properties;
mod resume;
pub mod script;
pub mod state;
mod step;
mod svg;
mod symmetry;

pub use action::{Action, NodeAct, Recipient, Watcher};
pub use owner_by_name::{NamedOwner, OwnerByName};
pub use script::{
    Awaited, Held, PodAction, PodSelection, PodSet, RequestHold, Script, ScriptPos, ScriptStep,
};
pub use state::{Budget, ControllerState, Ghost, Positions, State};

use crate::api::{ApiError, ApiServer, Request, Response};
use crate::config::Config;
use crate::profile::{Profile, Semantics};
use stateright::{Model, Property};
use std::sync::Arc;

/// The model of one configuration under one profile.
#[derive(Clone, Debug)]
pub struct RsModel {
    pub config: Config,
    pub profile: Profile,
    pub sem: Semantics,
    /// A scripted environment (a scenario), or `None` for a free model check within the
    /// configuration's budgets.
    pub script: Option<Arc<Script>>,
    /// Whether runs go on past a safety violation ([`RsModel::past_violations`]); by default
    /// the first violation on a path ends it.
    pub past_violations: bool,
}

impl RsModel {
    pub fn new(config: Config, profile: Profile) -> Self {
        RsModel {
            config,
            profile,
            sem: profile.semantics(),
            script: None,
            past_violations: false,
        }
    }

    /// The same model with runs going on past safety violations: a violation does not stop
    /// a cluster, and the oracle, judging a cluster that went through an upstream race,
    /// needs what follows. The violated properties stay recorded in the state
    /// ([`Ghost::violated`]).
    pub fn past_violations(mut self) -> Self {
        self.past_violations = true;
        self
    }

    /// Whether every grace-0 pod delete (the user's, the controller's, the garbage
    /// collector's, the kubelet's final one) makes its two writes (marked, removed) as two
    /// steps, with other writes between them, as on a cluster (`ApiServer::end_grace`).
    /// Only a profile with a reader of "marked but present" (`status.terminatingReplicas`)
    /// can tell, and only the oracle must accept every run a cluster makes, so it is done for
    /// scripted models (what the oracle and `rsmc replay` explore): in a free model check
    /// splitting the garbage collector's deletes alone multiplied `small`'s upstream states
    /// by 4.3 (safety) and 6.5 (convergence) for one status count, so there a delete stays
    /// one step and such a count is not explored (the book: concepts/clusters.md, "Recordings of
    /// the newer releases").
    pub fn splits_grace_zero_deletes(&self) -> bool {
        self.sem.terminating_replicas && self.script.is_some()
    }

    /// Whether a sync's update or delete of a pod may land between the two writes of a
    /// grace-0 delete that this model makes in one step ([`Action::LandsInRemoval`]): where
    /// it does not split them, in the models the oracle and `rsmc replay` explore. On a
    /// cluster such a request removes the pod itself and is answered as done (seen on v1.20.2:
    /// an adoption answered 200, counted, and the ReplicaSet left short). Where the delete is
    /// two steps the request lands between them as any other does; a free model check, which
    /// keeps the delete one step for its size, does not explore it either.
    pub fn lands_in_removals(&self) -> bool {
        self.script.is_some() && !self.splits_grace_zero_deletes()
    }

    /// Send `request` to the model's API server, a grace-0 pod delete split in two steps
    /// where this model splits them ([`RsModel::splits_grace_zero_deletes`]).
    pub(crate) fn send(&self, n: &mut State, request: &Request) -> Result<Response, ApiError> {
        if self.splits_grace_zero_deletes() {
            n.api.apply_marking(request)
        } else {
            n.api.apply(request)
        }
    }

    /// The same model with a catalogued upstream bug switched back on.
    pub fn with_bug(mut self, bug: crate::bugs::Bug) -> Self {
        self.sem.bug = Some(bug);
        self
    }

    /// The same model with an open entry's proposed fix switched on.
    pub fn with_fix(mut self, fix: crate::bugs::Fix) -> Self {
        self.sem = self.sem.with_fix(fix, true);
        self
    }

    /// A model whose environment does exactly what `script` says, from an empty cluster. The
    /// configuration supplies the controller's settings and the informer bound; its
    /// declarations and budgets are not used.
    pub fn scripted(config: Config, profile: Profile, script: Script) -> Result<Self, String> {
        script.validate()?;
        Ok(RsModel {
            script: Some(Arc::new(script)),
            ..RsModel::new(config, profile)
        })
    }

    /// The cluster the configuration starts from: objects marked `existsAtStart` have been
    /// created, and no watcher has delivered anything yet — unless `informer.startSynced`,
    /// when every watcher has delivered them, through the same handlers as any delivery. A
    /// scripted run starts empty.
    pub fn initial_state(&self) -> State {
        let mut s = self.created_state();
        if self.config.informer.start_synced {
            let mut moves = Vec::new();
            loop {
                moves.clear();
                self.enabled(&s, &mut moves);
                let Some(deliver) = moves
                    .drain(..)
                    .find(|a| matches!(a, Action::Deliver { .. }))
                else {
                    break;
                };
                s = self
                    .step(&s, &deliver)
                    .expect("a delivery always has a successor");
            }
        }
        s
    }

    /// The configuration's objects created; no watcher has delivered any of them.
    fn created_state(&self) -> State {
        let mut api = ApiServer::default();
        let scripted = self.script.is_some();
        for decl in self.config.replicasets.iter().filter(|d| d.exists_at_start) {
            if scripted {
                break;
            }
            api.apply(&Request::CreateReplicaSet(decl.object()))
                .expect("validated configuration");
        }
        for decl in self
            .config
            .other_owners
            .iter()
            .filter(|d| d.exists_at_start)
        {
            if scripted {
                break;
            }
            api.apply(&Request::CreateOther {
                kind: decl.kind(),
                name: decl.name.clone(),
            })
            .expect("validated configuration");
        }
        for decl in self.config.pods.iter().filter(|d| d.exists_at_start) {
            if scripted {
                break;
            }
            let pod = decl.object(&api.others, &self.config.other_owners);
            api.apply(&Request::CreatePod(pod))
                .expect("validated configuration");
        }
        let env = &self.config.environment;
        let workers = self.config.controller.workers as usize;
        let mut controllers = vec![ControllerState::new(workers, true)];
        if env.second_leader {
            controllers.push(ControllerState::new(workers, false));
        }
        State {
            api,
            controllers,
            gc: Positions::default(),
            budget: match &self.script {
                Some(script) => Budget {
                    create_failures: script.create_failures as u8,
                    ..Budget::default()
                },
                None => Budget {
                    steps: env.steps as u8,
                    crashes: env.crashes as u8,
                    expiries: env.expectation_expiries as u8,
                    relists: env.relists as u8,
                    create_failures: env.create_failures as u8,
                    handovers: env.second_leader as u8,
                    ticks: env.ticks as u8,
                },
            },
            ghost: Ghost::default(),
            script: ScriptPos::default(),
        }
    }

    /// Whether no system move is enabled in `s`: every informer has delivered everything, no
    /// key is queued, no sync is under way and the garbage collector has nothing to do. This
    /// is what a scenario's `settle` waits for.
    pub fn is_quiescent(&self, s: &State) -> bool {
        let mut moves = Vec::new();
        self.system_moves(s, s.writes_allowed(&self.config.informer), &mut moves);
        moves.is_empty()
    }
}

impl RsModel {
    /// Every move enabled in `s`, also after a safety violation: the successor relation the
    /// convergence check explores (a safety violation does not stop the cluster). The
    /// safety checker's [`Model::actions`] stops at the first violation instead.
    pub fn moves(&self, s: &State, out: &mut Vec<Action>) {
        self.enabled(s, out);
    }

    /// The safety properties `s` breaks, by name.
    pub fn broken(&self, s: &State) -> Vec<&'static str> {
        self.properties()
            .into_iter()
            .filter(|p| matches!(p.expectation, stateright::Expectation::Always))
            .filter(|p| !(p.condition)(self, s))
            .map(|p| p.name)
            .collect()
    }
}

impl Model for RsModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial_state()]
    }

    /// A state reached through a violation has no successors, unless the model goes on
    /// [`RsModel::past_violations`]: the first violation is the finding. (It must stay inside
    /// stateright's boundary: states outside it are dropped before their properties are
    /// checked.)
    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if self.past_violations || state.ghost.violated.is_empty() {
            self.moves(state, actions);
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        self.step(last, &action)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }

    fn format_step(&self, last: &State, action: Action) -> Option<String> {
        Some(self.describe(last, &action))
    }

    /// The Explorer draws the cluster and its kubectl tables (`svg`), not the `Debug` dump,
    /// headed by the safety properties the state breaks.
    fn as_svg(&self, path: stateright::Path<State, Action>) -> Option<String> {
        let last = path.last_state();
        Some(svg::svg(&last.api, &self.broken(last)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::all()
    }
}
