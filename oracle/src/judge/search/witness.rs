//! Witness search: is there one model run that produces everything a recording shows?
//!
//! A recording of a real run pins down almost everything the model could have done
//! differently: every write the controller, the garbage collector and the user made, in the
//! order the API server applied them, and the objects at every settle point. What it leaves
//! open are the internal steps that write nothing — watch deliveries, queue picks, the start
//! of a sync, a live GET. So instead of enumerating every interleaving of a segment (what
//! the outcome level of [`crate::judge`] does, and what grows with the product of the
//! cluster's sizes), the witness search looks for one run, the way TLA+ trace validation
//! checks a log against a specification:
//!
//! - depth first, across all the segments at once (a run that matches a segment but leaves
//!   the controller's hidden memory so that the next segment cannot be matched is abandoned
//!   for another, as the segment-by-segment levels do by carrying every matching state);
//! - internal steps are taken lazily and in the order a real cluster most likely took them
//!   ([`Likely`]): informers catch up first (unless that spoils a stale read the recording
//!   shows, [`super::held`]), then an idle worker takes a queued key, then
//!   the model makes the write the recording shows next, then everything else;
//! - a write must be exactly the next recorded one (by the same kind of actor, up to
//!   renaming, [`super::validate::expand`]), and a segment ends only in a state whose objects
//!   match the recorded settle point.
//!
//! The search is complete: it remembers every node it has expanded, so when no run exists it
//! has explored every run that follows the recording as far as it goes, and says so. A run
//! exists exactly when the segment-by-segment levels conform at every settle point (each
//! segment's trace level starting from every state that matched the previous one), so a
//! verdict reached here is the verdict those levels reach; they run only to explain a
//! divergence.

use super::validate::{
    describe_event, expand, visible, Divergence, Expansion, Frontier, Likely, Node, Readings,
    Refusal, Segment,
};
use crate::compare::binding::{match_objects, Binding, ModelObjects};
use crate::observed::{Event, Observed};
use rsmc_spec::budget::{Budget, Exhausted, Limit};
use rsmc_spec::model::{Action, RsModel, State};
use stateright::Model;
use std::collections::HashSet;
use std::rc::Rc;

/// What the search found.
#[derive(Clone, Debug)]
pub enum Found {
    /// One run producing every recorded write and settle point; its last state and renaming.
    Run {
        end: Box<(State, Binding)>,
        /// Nodes the search expanded.
        explored: usize,
        /// How the run reads what the recording leaves open.
        readings: Readings,
    },
    /// No run: the recording parts ways with every model run.
    Nothing {
        /// The segment (0-based) where the furthest run stopped.
        segment: usize,
        /// How the furthest run stopped there.
        stop: Box<Stop>,
        explored: usize,
    },
}

/// How the furthest run the search found stopped, in its segment.
#[derive(Clone, Debug)]
pub enum Stop {
    /// Every recorded write of the segment was produced, but no run that did so ends in the
    /// recorded settled state.
    MissesWrites,
    /// A recorded write no run makes: which, and what the model could do instead.
    Diverges(Divergence),
}

/// What the search stack holds: a node to expand, or the steps after the first (most likely)
/// from a node already expanded. A scale-down's pick of the next delete has a step per
/// victim, each a whole state: holding them all for every node on the path kept about
/// 100 × 100 states alive on a 100-replica recording (1.6 GB) although the search almost
/// never comes back for them. They are made again, in the same order, when it does.
enum Entry {
    Node(usize, Box<Node>),
    Siblings(usize, Rc<Node>),
}

/// The furthest point the search reached in one segment.
#[derive(Clone, Debug, Default)]
struct FrontierAt {
    frontier: Frontier,
    ends_elsewhere: bool,
}

/// The search stopped at its budget before it decided, and how far the furthest run got:
/// on a recording the model cannot produce, that write is where to look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    pub exhausted: Exhausted,
    /// The settle point (0-based) of the furthest run.
    pub segment: usize,
    /// How many of that segment's visible recorded writes it produced, of how many.
    pub matched: usize,
    pub writes: usize,
    /// The first recorded write no run it tried made, described.
    pub next: Option<String>,
    /// How many recorded writes the recording leaves to their step or the system
    /// ([`Event::or_system`]): each read both ways, they multiply the runs to search.
    pub open: usize,
}

impl std::fmt::Display for Unfinished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} while looking for a model run that produces the recording; the furthest run \
             made {} of the {} recorded writes before settle point {}",
            self.exhausted,
            self.matched,
            self.writes,
            self.segment + 1
        )?;
        if let Some(next) = &self.next {
            write!(f, ", and no run it tried made the next: {next}")?;
        }
        match self.open {
            0 => Ok(()),
            n => write!(
                f,
                " ({n} recorded writes no event attributes, each the system's or its step's, multiply the runs to search)"
            ),
        }
    }
}

impl std::error::Error for Unfinished {}

/// The recording to search for, segment by segment.
pub struct Recording<'a> {
    pub model: &'a RsModel,
    pub origin: &'a [usize],
    /// The script index of each segment's settle.
    pub settles: &'a [usize],
    pub observed: &'a Observed,
    /// The run stopped short in its last segment (an await never met, a settle that never
    /// came), whose "settle" is then the step it stopped at: that segment ends as soon as
    /// every write it recorded is produced, with no settled state to match (the cluster
    /// never settled there; what it listed at the stop may already show a write the
    /// recording missed).
    pub open_end: bool,
}

impl<'a> Recording<'a> {
    /// A recording whose every segment settled, searched with `model`.
    pub fn settled(
        model: &'a RsModel,
        origin: &'a [usize],
        settles: &'a [usize],
        observed: &'a Observed,
    ) -> Self {
        Recording {
            model,
            origin,
            settles,
            observed,
            open_end: false,
        }
    }

    /// The same recording of a run that stopped short: its last segment never settled and
    /// ends once its writes are made.
    pub fn up_to_stop(self) -> Self {
        Recording {
            open_end: true,
            ..self
        }
    }
}

/// The steps from `node` that keep the model in step with the recording, less the victim
/// sets and the picks of a sync's next request the rest of the segment rules out
/// ([`super::doomed`], [`super::picks`]). `open_end`: the segment may end before its syncs
/// do. A sync choosing among more victim sets than the model lists is offered the sets the
/// rest of the segment leaves ([`super::doomed::narrowed`]); where those are still too many,
/// or the rule stands down, the search cannot go on without missing runs: the `Err`.
fn steps(
    segment: &Segment,
    visible: &[(usize, &Event)],
    node: &Node,
    open_end: bool,
) -> Result<Expansion, Limit> {
    let mut expansion = expand(segment, visible, node);
    let rest = node.still_to_produce(visible);
    let mut ruled_out = Vec::new();
    expansion.next.retain(|(_, child)| {
        let why = super::doomed::ruled_out(segment, open_end, &rest, node, child)
            .or_else(|| super::picks::ruled_out(segment, open_end, &rest, node, child));
        match why {
            Some(why) => ruled_out.push(Refusal::because(node.matched, why)),
            None => return true,
        }
        false
    });
    // What the model could do here that the recording rules out, for the divergence.
    expansion.refused.extend(ruled_out);
    if let Some((controller, worker, sets)) = segment.model.unlisted_victim_sets(&node.state) {
        let left = super::doomed::narrowed(segment, open_end, &rest, node, &sets)
            .filter(|left| left.listable())
            .ok_or(Limit::VictimSets { sets: sets.count() })?;
        for pods in left.all() {
            let choose = Action::Choose {
                controller,
                worker,
                pods,
            };
            if let Some(n) = segment.model.next_state(&node.state, choose) {
                expansion
                    .next
                    .push((Likely::RecordedWrite, node.internal(n)));
            }
        }
    }
    Ok(expansion)
}

/// Search for a run of `recording` from the model's initial states. `avoid`, when given,
/// prunes every run that breaks that safety property: a run found then shows that not every
/// matching run breaks it.
pub fn search(
    recording: &Recording,
    budget: &Budget,
    avoid: Option<&str>,
) -> Result<Found, Unfinished> {
    let starts = recording
        .model
        .init_states()
        .into_iter()
        .map(|s| (s, Binding::default()))
        .collect();
    search_from(recording, budget, avoid, 0, starts)
}

/// [`search`] from segment `from` (from 0) on, its runs starting from `starts` (a settle
/// point resumed from the cluster's objects, [`crate::judge::resume`]).
pub fn search_from(
    recording: &Recording,
    budget: &Budget,
    avoid: Option<&str>,
    from: usize,
    starts: Vec<(State, Binding)>,
) -> Result<Found, Unfinished> {
    let empty = crate::observed::Snapshot::default();
    let events: Vec<&[Event]> = recording
        .observed
        .segments
        .iter()
        .map(|s| s.events.as_deref().unwrap_or(&[]))
        .collect();
    let segments: Vec<Segment> = (0..recording.settles.len())
        .map(|k| Segment {
            model: recording.model,
            origin: recording.origin,
            settle: recording.settles[k],
            events: events[k],
            before: if k == 0 {
                &empty
            } else {
                &recording.observed.segments[k - 1].settled
            },
            budget,
        })
        .collect();
    let visible: Vec<_> = segments.iter().map(visible).collect();
    let mut meter = budget.meter();
    let mut seen: HashSet<(usize, u64)> = HashSet::new();
    let mut stack: Vec<Entry> = Vec::new();
    for (state, binding) in starts.into_iter().rev() {
        stack.push(Entry::Node(from, Box::new(Node::start(state, binding))));
    }
    let mut furthest = (from, FrontierAt::default());
    while let Some(entry) = stack.pop() {
        let (k, node) = match entry {
            Entry::Node(k, node) => (k, *node),
            Entry::Siblings(k, parent) => {
                // Backtracking to here: the rest of the parent's steps, made again.
                let last = k + 1 == segments.len();
                // It was expanded before, so its steps are there to make again.
                let mut next = steps(
                    &segments[k],
                    &visible[k],
                    &parent,
                    last && recording.open_end,
                )
                .map(|e| e.next)
                .unwrap_or_default();
                next.sort_by_key(|(likely, _)| *likely);
                stack.extend(
                    next.into_iter()
                        .skip(1)
                        .rev()
                        .map(|(_, n)| Entry::Node(k, Box::new(n))),
                );
                continue;
            }
        };
        if !seen.insert((k, node.fingerprint())) {
            continue;
        }
        // The search stops here, and says how far the furthest run got.
        let unfinished = |exhausted: Exhausted, furthest: &(usize, FrontierAt)| {
            let (k, at) = furthest;
            let writes = &visible[*k];
            Unfinished {
                exhausted,
                segment: *k,
                matched: at.frontier.reached,
                writes: writes.len(),
                next: writes
                    .get(at.frontier.reached)
                    .map(|(_, e)| describe_event(e, |i| format!("scenario step {}", i + 1))),
                open: visible
                    .iter()
                    .flatten()
                    .filter(|(_, e)| e.opens_reading())
                    .count(),
            }
        };
        if let Err(exhausted) = meter.check(seen.len()) {
            return Err(unfinished(exhausted, &furthest));
        }
        if avoid.is_some_and(|p| node.state.ghost.violated.contains(p)) {
            continue;
        }
        let last = k + 1 == segments.len();
        let expansion = match steps(&segments[k], &visible[k], &node, last && recording.open_end) {
            Ok(expansion) => expansion,
            Err(limit) => {
                let explored = seen.len();
                return Err(unfinished(Exhausted { limit, explored }, &furthest));
            }
        };
        if k > furthest.0 {
            furthest = (k, FrontierAt::default());
        }
        if k == furthest.0 {
            furthest
                .1
                .frontier
                .note(&node, &expansion, visible[k].len());
        }
        if last && recording.open_end && node.produced_all(visible[k].len()) {
            return Ok(Found::Run {
                readings: node.readings,
                end: Box::new((node.state, node.binding)),
                explored: seen.len(),
            });
        }
        if expansion.ends(&node, visible[k].len()) {
            let settled = &recording.observed.segments[k].settled;
            let objects = ModelObjects {
                replicasets: &node.state.api.replicasets,
                pods: &node.state.api.pods,
            };
            match match_objects(&node.binding, objects, settled) {
                Some(b) if last => {
                    return Ok(Found::Run {
                        readings: node.readings,
                        end: Box::new((node.state, b)),
                        explored: seen.len(),
                    })
                }
                Some(b) => stack.push(Entry::Node(k + 1, Box::new(node.next_segment(b)))),
                None => {
                    if k == furthest.0 {
                        furthest.1.ends_elsewhere = true;
                    }
                }
            }
        }
        let mut next = expansion.next;
        // The most likely step is expanded first; steps alike keep the model's order. The
        // others wait as their parent, to be made again only if the search comes back here.
        next.sort_by_key(|(likely, _)| *likely);
        let mut next = next.into_iter();
        if let Some((_, first)) = next.next() {
            if next.len() > 0 {
                stack.push(Entry::Siblings(k, Rc::new(node)));
            }
            stack.push(Entry::Node(k, Box::new(first)));
        }
    }
    let (k, at) = furthest;
    let stop = if at.ends_elsewhere && at.frontier.reached == visible[k].len() {
        Stop::MissesWrites
    } else {
        Stop::Diverges(at.frontier.divergence(&segments[k], &visible[k]))
    };
    Ok(Found::Nothing {
        segment: k,
        stop: Box::new(stop),
        explored: seen.len(),
    })
}
