//! A plain breadth-first walk of a model's whole state space, for tests that look at every
//! reachable state (stateright's checker keeps fingerprints, not the states themselves).

use rsmc_spec::model::{Action, RsModel, State};
use stateright::Model;
use std::collections::{BTreeSet, VecDeque};

/// What a walk found.
pub struct Walked {
    /// Every reachable state, each once, in the order first reached.
    pub states: Vec<State>,
    /// The states in which no move leads anywhere.
    pub terminal: Vec<State>,
    /// Every move that led somewhere from some state.
    pub taken: BTreeSet<Action>,
}

/// Walks every state reachable from `model`'s initial states.
pub fn walk(model: &RsModel) -> Walked {
    walk_from(model, model.init_states())
}

/// Walks every state reachable from `starts`.
pub fn walk_from(model: &RsModel, starts: Vec<State>) -> Walked {
    let mut seen = BTreeSet::new();
    let mut queue: VecDeque<State> = starts.into();
    let mut out = Walked {
        states: Vec::new(),
        terminal: Vec::new(),
        taken: BTreeSet::new(),
    };
    while let Some(s) = queue.pop_front() {
        if seen.contains(&s) {
            continue;
        }
        seen.insert(s.clone());
        let mut actions = Vec::new();
        model.actions(&s, &mut actions);
        let mut moved = false;
        for a in actions {
            if let Some(next) = model.next_state(&s, a.clone()) {
                moved = true;
                out.taken.insert(a);
                queue.push_back(next);
            }
        }
        if !moved {
            out.terminal.push(s.clone());
        }
        out.states.push(s);
    }
    out
}
