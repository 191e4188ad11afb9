//! The reachable state graph, kept compactly enough to search it for cycles.
//!
//! stateright's checkers remember which states they have seen, not the edges between them,
//! and a cycle cannot be found without edges. This breadth-first search stores per state only
//! its parent (to rebuild the shortest path to it), whether it has converged, and its system
//! moves as edges in one flat array; the states themselves are dropped once expanded and are
//! rebuilt, when a counterexample needs them, by replaying the recorded move indices from the
//! initial state — the model is deterministic.

use super::converged::converged;
use super::fairness::{class_of, Class};
use crate::budget::{Budget, Exhausted};
use crate::model::{Action, Ghost, RsModel, State, UpToRevisions};
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, Hash};

/// A state's number: its position in breadth-first order (0 is the initial state).
pub type Node = u32;

/// A system move from one state to another.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub to: Node,
    /// The move's index in the source state's `Model::actions` list.
    pub action: u16,
    /// Its fairness class, interned.
    pub class: u32,
}

/// The reachable graph of a model, system edges only (environment moves only lead to states;
/// they are not edges of the graph liveness is judged on).
#[derive(Debug, Default)]
pub struct Graph {
    /// Per node: the node it was first reached from, and by which action index
    /// (`u32::MAX` for the initial state).
    pub parent: Vec<(Node, u16)>,
    /// Per node: whether it has converged (`super::converged`).
    pub converged: Vec<bool>,
    /// `edges[offsets[n]..offsets[n + 1]]` are node `n`'s system moves.
    pub offsets: Vec<u64>,
    pub edges: Vec<Edge>,
    /// How many fairness classes were interned.
    pub classes: u32,
    /// The number of breadth-first levels (the longest shortest path, plus one).
    pub depth: usize,
}

impl Graph {
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Node `n`'s system moves.
    pub fn out(&self, n: Node) -> &[Edge] {
        &self.edges[self.offsets[n as usize] as usize..self.offsets[n as usize + 1] as usize]
    }

    /// The action indices from the initial state to `n` along the breadth-first tree.
    pub fn path_to(&self, mut n: Node) -> Vec<u16> {
        let mut path = Vec::new();
        while self.parent[n as usize].0 != Node::MAX {
            let (p, a) = self.parent[n as usize];
            path.push(a);
            n = p;
        }
        path.reverse();
        path
    }
}

/// Live numbers from an exploration.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub states: usize,
    pub expanded: usize,
    pub depth: usize,
}

/// A 64-bit fingerprint of a state with fixed keys (the same in every run). A collision among
/// some tens of millions of 64-bit hashes is vanishingly unlikely; stateright makes the same
/// bet.
pub fn fingerprint(state: &impl Hash) -> u64 {
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(state)
}

/// Fingerprints are hashes already; hashing them again is wasted time.
type Seen = HashMap<u64, Node, BuildHasherDefault<nohash_hasher::NoHashHasher<u64>>>;

/// Explore every state reachable in `model`, calling `progress` now and then.
pub fn explore(
    model: &RsModel,
    budget: &Budget,
    progress: &mut dyn FnMut(Progress),
) -> Result<Graph, Exhausted> {
    let mut meter = budget.meter();
    let mut g = Graph::default();
    let mut seen = Seen::default();
    let mut classes: HashMap<Class, u32> = HashMap::new();
    let mut queue: VecDeque<State> = VecDeque::new();
    for init in stateright::Model::init_states(model) {
        let fp = fingerprint(&UpToRevisions(&init));
        if seen.contains_key(&fp) {
            continue;
        }
        seen.insert(fp, g.len() as Node);
        g.parent.push((Node::MAX, 0));
        g.converged.push(converged(&init));
        queue.push_back(init);
    }
    g.offsets.push(0);
    let mut level_end = g.len();
    let mut actions = Vec::new();
    let mut expanded = 0usize;
    while let Some(state) = queue.pop_front() {
        let node = expanded as Node;
        if expanded == level_end {
            g.depth += 1;
            level_end = g.len();
        }
        actions.clear();
        model.moves(&state, &mut actions);
        for (i, action) in actions.drain(..).enumerate() {
            let class = class_of(&state, &action);
            let Some(mut next) = stateright::Model::next_state(model, &state, action) else {
                continue;
            };
            // The ghost records serve the safety properties only; states that differ in them
            // alone have the same future and the same convergence.
            next.ghost = Ghost::default();
            let fp = fingerprint(&UpToRevisions(&next));
            let to = match seen.get(&fp) {
                Some(&to) => to,
                None => {
                    let to = g.len() as Node;
                    meter.check(g.len() + 1)?;
                    seen.insert(fp, to);
                    g.parent.push((node, i as u16));
                    g.converged.push(converged(&next));
                    queue.push_back(next);
                    to
                }
            };
            if let Some(class) = class {
                let next_id = classes.len() as u32;
                let class = *classes.entry(class).or_insert(next_id);
                g.edges.push(Edge {
                    to,
                    action: i as u16,
                    class,
                });
            }
        }
        g.offsets.push(g.edges.len() as u64);
        expanded += 1;
        if expanded.is_multiple_of(65_536) {
            progress(Progress {
                states: g.len(),
                expanded,
                depth: g.depth,
            });
        }
    }
    g.depth += 1;
    g.classes = classes.len() as u32;
    progress(Progress {
        states: g.len(),
        expanded,
        depth: g.depth,
    });
    Ok(g)
}

/// The states and actions along a run given as action indices, from the initial state.
pub fn replay(model: &RsModel, indices: &[u16]) -> (Vec<State>, Vec<Action>) {
    let mut states = vec![model.initial_state()];
    let mut taken = Vec::new();
    let mut actions = Vec::new();
    for &i in indices {
        let last = states.last().expect("a state");
        actions.clear();
        model.moves(last, &mut actions);
        let action = actions
            .get(i as usize)
            .cloned()
            .expect("a recorded move is enabled on replay (the model is deterministic)");
        let next = stateright::Model::next_state(model, last, action.clone())
            .expect("a recorded move has a successor on replay");
        states.push(next);
        taken.push(action);
    }
    (states, taken)
}
