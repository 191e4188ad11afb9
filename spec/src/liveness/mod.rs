//! Convergence, checked soundly: once the environment has made its last move, every fair
//! execution reaches a converged state and never leaves the converged states again.
//!
//! stateright's `eventually` properties look only at terminal states, so a run that cycles
//! forever without converging passes, and nothing says which moves may be postponed forever.
//! This check instead:
//!
//! 1. explores the whole reachable graph, keeping the system moves as edges (`graph`);
//! 2. takes every reachable state as a possible point where the environment stops — from
//!    there on only system moves happen;
//! 3. reports a **stuck state**: no system move is enabled, and the cluster has not converged
//!    (`converged`);
//! 4. reports a **fair cycle**: a strongly connected component of system moves (`scc`) that
//!    holds an unconverged state and is weakly fair — every fairness class (`fairness`) that
//!    is enabled in all of its states is also taken by one of its moves. An execution that
//!    goes round the whole component forever then is a fair execution that never stays
//!    converged; if the component is not fair, no execution inside it is (a class enabled
//!    throughout and never taken stays so on every sub-cycle).
//!
//! Soundness within the bounds: the search is exhaustive (no partial-order or symmetry
//! reduction here), so "holds" means no fair execution from any reachable state fails to
//! converge — for this configuration's objects, budgets and informer lag bound. It assumes
//! weak fairness of system moves only: no timeout (such as the 5-minute expectations expiry,
//! or a periodic resync) is assumed to fire, so a controller that recovers only through one
//! is reported as stuck — which is how upstream judged #22270 and #69376.

pub mod converged;
pub mod fairness;
pub mod graph;
pub mod scc;

use crate::model::{Action, RsModel, State};
use graph::{Graph, Node};
use std::collections::{BTreeSet, VecDeque};

/// The name under which the convergence property is reported.
pub const CONVERGENCE: &str = "eventually converges and stays converged";

/// A run that does not converge.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The states of the run, from the initial state.
    pub states: Vec<State>,
    /// The moves between them (`actions[i]` leads from `states[i]` to `states[i + 1]`).
    pub actions: Vec<Action>,
    /// For a fair cycle, the index into `states` where the cycle starts; the last state
    /// equals that one, and the run repeats from there forever. `None` for a stuck state
    /// (the run's last state).
    pub cycle_start: Option<usize>,
    /// The convergence condition the state where it is stuck, or the cycle's first
    /// unconverged state, breaks, and how.
    pub why: converged::Unconverged,
}

/// The outcome of a liveness check.
#[derive(Debug)]
pub struct Outcome {
    pub states: usize,
    pub edges: usize,
    pub depth: usize,
    pub violation: Option<Counterexample>,
}

/// Check `model` for convergence within `budget`.
pub fn check(
    model: &RsModel,
    budget: &crate::budget::Budget,
    progress: &mut dyn FnMut(graph::Progress),
) -> Result<Outcome, crate::budget::Exhausted> {
    let g = graph::explore(model, budget, progress)?;
    let violation = find(&g).map(|found| counterexample(model, &g, found));
    Ok(Outcome {
        states: g.len(),
        edges: g.edges.len(),
        depth: g.depth,
        violation,
    })
}

/// A violation in the graph: a path of action indices, where its cycle starts, and the node
/// whose convergence failure explains it.
struct Found {
    path: Vec<u16>,
    cycle_start: Option<usize>,
    witness: Node,
}

/// The violation closest to the initial state (breadth-first numbering), if any.
fn find(g: &Graph) -> Option<Found> {
    let stuck = (0..g.len() as Node).find(|&n| g.out(n).is_empty() && !g.converged[n as usize]);
    let cycle = fair_unconverged_component(g);
    match (stuck, cycle) {
        (Some(s), Some(members)) if members[0] < s => Some(lasso(g, &members)),
        (Some(s), _) => Some(Found {
            path: g.path_to(s),
            cycle_start: None,
            witness: s,
        }),
        (None, Some(members)) => Some(lasso(g, &members)),
        (None, None) => None,
    }
}

/// The members (sorted) of the fair component holding an unconverged state whose first
/// member comes earliest, if any.
fn fair_unconverged_component(g: &Graph) -> Option<Vec<Node>> {
    let component = scc::components(g);
    let count = component
        .iter()
        .copied()
        .max()
        .map_or(0, |m| m as usize + 1);
    // Group the nodes by component (counting sort), members in ascending order.
    let mut start = vec![0usize; count + 1];
    for &c in &component {
        start[c as usize + 1] += 1;
    }
    for i in 0..count {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut members = vec![0 as Node; g.len()];
    for (n, &c) in component.iter().enumerate() {
        members[fill[c as usize]] = n as Node;
        fill[c as usize] += 1;
    }
    let mut best: Option<&[Node]> = None;
    for c in 0..count {
        let nodes = &members[start[c]..start[c + 1]];
        if best.is_some_and(|b| b[0] < nodes[0]) {
            continue;
        }
        let inside = |n: Node| component[n as usize] == c as u32;
        let cyclic = nodes.len() > 1 || g.out(nodes[0]).iter().any(|e| e.to == nodes[0]);
        if !cyclic || nodes.iter().all(|&n| g.converged[n as usize]) {
            continue;
        }
        if unfair_classes(g, nodes.iter().copied(), inside).is_empty() {
            best = Some(nodes);
        }
    }
    best.map(<[Node]>::to_vec)
}

/// The fairness classes enabled in every state of `walk` but never taken by a move inside it
/// (`inside` says which edges stay inside). Empty when going round `walk` forever is fair.
fn unfair_classes(
    g: &Graph,
    walk: impl Iterator<Item = Node>,
    inside: impl Fn(Node) -> bool,
) -> BTreeSet<u32> {
    let mut always: Option<BTreeSet<u32>> = None;
    let mut taken = BTreeSet::new();
    for n in walk {
        let enabled: BTreeSet<u32> = g.out(n).iter().map(|e| e.class).collect();
        taken.extend(g.out(n).iter().filter(|e| inside(e.to)).map(|e| e.class));
        always = Some(match always {
            None => enabled,
            Some(a) => a.intersection(&enabled).copied().collect(),
        });
    }
    always
        .unwrap_or_default()
        .difference(&taken)
        .copied()
        .collect()
}

/// A lasso into the fair component `members`: the shortest path to its first member, then a
/// closed walk inside it that visits an unconverged state and is itself fair — it takes every
/// class enabled all along it, or passes a state where that class is disabled.
fn lasso(g: &Graph, members: &[Node]) -> Found {
    let entry = members[0];
    let set: BTreeSet<Node> = members.iter().copied().collect();
    let inside = |n: Node| set.contains(&n);
    // The walk as (node, edge index taken from it).
    let mut walk: Vec<(Node, u16, Node)> = Vec::new();
    let mut at = entry;
    let goto = |from: Node, target: &dyn Fn(Node, Option<u32>) -> bool| -> Vec<(Node, u16, Node)> {
        walk_to(g, from, &inside, target)
    };
    let unconverged = |n: Node, _: Option<u32>| !g.converged[n as usize];
    let witness = if g.converged[entry as usize] {
        let steps = goto(at, &unconverged);
        at = steps.last().map_or(at, |s| s.2);
        walk.extend(steps);
        at
    } else {
        entry
    };
    loop {
        // Close the walk back at the entry (at least one move: a cycle is never empty).
        if at != entry || walk.is_empty() {
            let steps = if at == entry {
                let e = g
                    .out(at)
                    .iter()
                    .find(|e| inside(e.to))
                    .expect("a cyclic component has an inner move");
                let mut first = vec![(at, e.action, e.to)];
                first.extend(goto(e.to, &|n, _| n == entry));
                first
            } else {
                goto(at, &|n, _| n == entry)
            };
            walk.extend(steps);
            at = entry;
        }
        let nodes = walk.iter().map(|s| s.0);
        let taken: BTreeSet<u32> = walk
            .iter()
            .map(|&(n, action, _)| {
                g.out(n)
                    .iter()
                    .find(|e| e.action == action)
                    .expect("an edge of the walk")
                    .class
            })
            .collect();
        let missing: Vec<u32> = unfair_classes(g, nodes, |_| false)
            .into_iter()
            .filter(|c| !taken.contains(c))
            .collect();
        let Some(&class) = missing.first() else { break };
        // The component is fair, so the class is taken inside it somewhere or disabled
        // somewhere: go and take it, or go where it is disabled.
        let steps = goto(at, &|n, edge_class| {
            edge_class == Some(class)
                || (edge_class.is_none() && !g.out(n).iter().any(|e| e.class == class))
        });
        at = steps.last().map_or(at, |s| s.2);
        walk.extend(steps);
    }
    let mut path = g.path_to(entry);
    let cycle_start = path.len();
    path.extend(walk.iter().map(|s| s.1));
    Found {
        path,
        cycle_start: Some(cycle_start),
        witness,
    }
}

/// The shortest walk inside the component from `from` to a node satisfying `target(n, None)`,
/// or ending with a move of a class `c` satisfying `target(source, Some(c))`. Empty when
/// `from` itself is a target.
fn walk_to(
    g: &Graph,
    from: Node,
    inside: &dyn Fn(Node) -> bool,
    target: &dyn Fn(Node, Option<u32>) -> bool,
) -> Vec<(Node, u16, Node)> {
    if target(from, None) {
        return Vec::new();
    }
    let mut came: std::collections::HashMap<Node, (Node, u16)> = Default::default();
    let mut queue = VecDeque::from([from]);
    let mut seen = BTreeSet::from([from]);
    let rebuild = |came: &std::collections::HashMap<Node, (Node, u16)>, mut n: Node| {
        let mut steps = Vec::new();
        while n != from {
            let (p, a) = came[&n];
            steps.push((p, a, n));
            n = p;
        }
        steps.reverse();
        steps
    };
    while let Some(n) = queue.pop_front() {
        for e in g.out(n).iter().filter(|e| inside(e.to)) {
            if target(n, Some(e.class)) {
                let mut steps = rebuild(&came, n);
                steps.push((n, e.action, e.to));
                return steps;
            }
            if seen.insert(e.to) {
                came.insert(e.to, (n, e.action));
                if target(e.to, None) {
                    return rebuild(&came, e.to);
                }
                queue.push_back(e.to);
            }
        }
    }
    unreachable!("every node of a strongly connected component reaches every other")
}

/// Replay a found violation into states and actions.
fn counterexample(model: &RsModel, g: &Graph, found: Found) -> Counterexample {
    let (states, actions) = graph::replay(model, &found.path);
    let witness = graph::replay(model, &g.path_to(found.witness)).0;
    let why = converged::unconverged(witness.last().expect("a state"))
        .expect("the graph marked the witness unconverged");
    Counterexample {
        states,
        actions,
        cycle_start: found.cycle_start,
        why,
    }
}
