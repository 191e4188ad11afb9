//! The stateright model: every interleaving of the environment, the informers, the
//! controller's workers, the API server and the garbage collector, within a configuration's
//! bounds.

pub mod action;
mod describe;
mod enabled;
pub mod properties;
pub mod state;
mod step;

pub use action::{Action, Watcher};
pub use state::{Budget, ControllerState, Ghost, Positions, State};

use crate::api::{ApiServer, Request};
use crate::config::Config;
use crate::object::Pod;
use crate::profile::{Profile, Semantics};
use stateright::{Model, Property};

/// The model of one configuration under one profile.
#[derive(Clone, Debug)]
pub struct RsModel {
    pub config: Config,
    pub profile: Profile,
    pub sem: Semantics,
}

impl RsModel {
    pub fn new(config: Config, profile: Profile) -> Self {
        RsModel {
            config,
            profile,
            sem: profile.semantics(),
        }
    }

    /// The cluster the configuration starts from: objects marked `existsAtStart` have been
    /// created, and no watcher has delivered anything yet.
    pub fn initial_state(&self) -> State {
        let mut api = ApiServer::default();
        for decl in self.config.replicasets.iter().filter(|d| d.exists_at_start) {
            api.apply(&Request::CreateReplicaSet(decl.object()))
                .expect("validated configuration");
        }
        for decl in self.config.pods.iter().filter(|d| d.exists_at_start) {
            api.apply(&Request::CreatePod(Pod::new(
                &decl.name,
                decl.labels.clone(),
            )))
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
            budget: Budget {
                steps: env.steps as u8,
                crashes: env.crashes as u8,
                expiries: env.expectation_expiries as u8,
                relists: env.relists as u8,
                create_failures: env.create_failures as u8,
                handovers: env.second_leader as u8,
            },
            ghost: Ghost::default(),
        }
    }
}

impl Model for RsModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial_state()]
    }

    /// A state reached through a violation has no successors: the first violation is the
    /// finding. (It must stay inside stateright's boundary: states outside it are dropped
    /// before their properties are checked.)
    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        if state.ghost.violated.is_empty() {
            self.enabled(state, actions);
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

    fn properties(&self) -> Vec<Property<Self>> {
        properties::all()
    }
}
