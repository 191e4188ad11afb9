//! The levels' exhaustive searches: every state that matched the previous settle point,
//! explored through the segment, at both levels. They decide a recording that was not
//! recorded segment by segment, show that the witness search's verdicts are the same
//! ([`super::Method::Exhaustive`]), and explain a divergence the witness search found: the
//! closest state the model allows beside the cluster's, and what the settled state breaks.

use super::broken::labelled;
use super::divergence::{diverging_trace, misses_writes};
use super::resume;
use super::search::validate::{ends_matching, validate, Segment, Validation};
use super::shape::check_shape;
use super::subject::{step_ids, step_lines, AfterDivergence, Subject};
use super::verdict::{JudgeError, Level, Resumed, SettlePoint, Verdict};
use crate::compare::binding::{match_objects, Binding, ModelObjects};
use crate::explore::outcomes;
use crate::observed::{Observed, Snapshot};
use crate::views::side_by_side;
use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::liveness::converged;
use rsmc_spec::model::{RsModel, State};
use rsmc_spec::profile::Semantics;
use stateright::Model;

/// Which of the levels lost every run of the model to a divergence.
#[derive(Default)]
struct Lost {
    outcome: bool,
    trace: bool,
}

impl Lost {
    fn any(&self) -> bool {
        self.outcome || self.trace
    }
}

/// Judge by the levels' exhaustive searches: every state that matched the previous settle
/// point is carried to the next. After a divergence, the next segment starts from the
/// cluster's objects, where the subject asks for it ([`AfterDivergence`]).
pub(super) fn exhaustive(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
) -> Result<Verdict, JudgeError> {
    let settles = check_shape(subject, observed)?;
    let init = subject.model.init_states();
    let mut by_outcome: Vec<(State, Binding)> = init
        .iter()
        .map(|s| (s.clone(), Binding::default()))
        .collect();
    let mut by_trace = by_outcome.clone();
    let mut points = Vec::new();
    let empty = Snapshot::default();
    // Which levels lost every run to a divergence (not to a segment left unrecorded): each
    // goes on from the cluster's objects at the next settle point, if the subject asks.
    let mut lost = Lost::default();
    for (k, (settle, segment)) in settles.iter().zip(&observed.segments).enumerate() {
        let step_ids = step_ids(subject, &settles, k);
        let steps = step_lines(subject, &step_ids);
        let before = if k == 0 {
            &empty
        } else {
            &observed.segments[k - 1].settled
        };
        let mut resumed = None;
        let mut unresumable = None;
        if subject.after_divergence == AfterDivergence::JudgeOn && lost.any() {
            match resume::starts(subject.model, before, (k, settles[k - 1])) {
                Ok(starts) => {
                    if lost.outcome {
                        by_outcome = starts.clone();
                    }
                    if lost.trace {
                        by_trace = starts;
                    }
                    resumed = Some(Resumed::at(k));
                }
                Err(why) => unresumable = Some(why),
            }
        }
        // A search from resumed states that passes the budget leaves this point unexplained,
        // not the verdict: the next one resumes again.
        let within_budget = |result: Result<Level, Exhausted>, lost_level: &mut bool| match result {
            Err(exhausted) if resumed.is_some() => {
                *lost_level = true;
                Ok(Level::Unexplained {
                    detail: format!("from the cluster's objects at settle point {k}, {exhausted}"),
                })
            }
            other => other,
        };

        // Outcome level.
        let mut settled_breaks = None;
        let outcome = if by_outcome.is_empty() {
            match (&unresumable, lost.outcome) {
                (Some(why), true) => Level::Unexplained {
                    detail: why.clone(),
                },
                _ => Level::NotJudged,
            }
        } else {
            let mut judged_breaks = None;
            let judged = judge_outcome(
                subject.model,
                &by_outcome,
                *settle,
                &segment.settled,
                budget,
            )
            .map(|judged| {
                by_outcome = judged.matched;
                judged_breaks = judged.settled_breaks;
                judged.level
            });
            by_outcome.retain(|_| judged.is_ok());
            let level = within_budget(judged, &mut lost.outcome)?;
            settled_breaks = judged_breaks;
            lost.outcome = by_outcome.is_empty();
            level
        };

        // Trace level.
        let mut trace_divergent_step = None;
        let mut breaks = None;
        let mut written_breaks = None;
        let trace = match (&segment.events, by_trace.is_empty()) {
            (_, true) => match (&unresumable, lost.trace) {
                (Some(why), true) => Level::Unexplained {
                    detail: why.clone(),
                },
                _ => Level::NotJudged,
            },
            (None, false) => {
                by_trace.clear();
                lost.trace = false;
                Level::NotRecorded
            }
            (Some(events), false) => {
                let seg = Segment {
                    model: subject.model,
                    origin: subject.origin,
                    settle: *settle,
                    events,
                    before,
                    budget,
                };
                let validated = validate(&seg, &by_trace).map(|v| match v {
                    Validation::Valid(ends) => {
                        let writes = events.len();
                        let ends = ends_matching(ends, &segment.settled);
                        if ends.is_empty() {
                            by_trace.clear();
                            misses_writes(writes)
                        } else {
                            by_trace = ends;
                            Level::Conforms {
                                detail: format!("{writes} recorded writes are a run of the model"),
                            }
                        }
                    }
                    Validation::Diverges(d) => {
                        by_trace.clear();
                        let diverging = diverging_trace(subject, before, events, d, &step_ids);
                        trace_divergent_step = diverging.step;
                        breaks = diverging.breaks;
                        written_breaks = diverging.written_breaks;
                        diverging.level
                    }
                });
                by_trace.retain(|_| validated.is_ok());
                let level = within_budget(validated, &mut lost.trace)?;
                lost.trace = by_trace.is_empty();
                level
            }
        };
        let divergent_step = trace_divergent_step
            .or_else(|| {
                outcome
                    .diverges()
                    .then(|| step_ids.iter().rev().nth(1).or(step_ids.last()).copied())
                    .flatten()
            })
            .map(|i| i + 1);
        points.push(SettlePoint {
            index: k + 1,
            steps,
            outcome,
            trace,
            divergent_step,
            breaks,
            written_breaks,
            settled_breaks,
            recorded_breaks: None,
            difference: None,
            resumed,
        });
    }
    let conforms = points
        .iter()
        .all(|p| !p.outcome.diverges() && !p.trace.diverges() && p.outcome != Level::NotJudged);
    let matched = if by_trace.is_empty() {
        &by_outcome
    } else {
        &by_trace
    };
    let broken_as_modelled = if conforms {
        broken_in_every(matched, &subject.model.sem)
    } else {
        Vec::new()
    };
    Ok(Verdict {
        broken_as_modelled,
        ..Verdict::new(subject, conforms, points)
    })
}

/// The safety properties every one of `matched` has broken on its way, each labelled.
fn broken_in_every(matched: &[(State, Binding)], sem: &Semantics) -> Vec<String> {
    let Some((first, _)) = matched.first() else {
        return Vec::new();
    };
    first
        .ghost
        .violated
        .iter()
        .filter(|p| matched.iter().all(|(s, _)| s.ghost.violated.contains(*p)))
        .map(|p| labelled(p, sem))
        .collect()
}

/// The outcome level's verdict at one settle point.
struct JudgedOutcome {
    level: Level,
    /// The model states (with their bindings) that match the settled state.
    matched: Vec<(State, Binding)>,
    /// When it diverges, the convergence condition the settled state breaks, if one does.
    settled_breaks: Option<&'static str>,
}

/// The outcome level at one settle point: explore from each candidate, keep the outcomes
/// that match the observed snapshot under the candidate's binding. When none does, also the
/// convergence condition the settled state breaks, if one does ([`settled_breaks`]).
fn judge_outcome(
    model: &RsModel,
    candidates: &[(State, Binding)],
    settle: usize,
    settled: &Snapshot,
    budget: &Budget,
) -> Result<JudgedOutcome, Exhausted> {
    let mut matched: Vec<(State, Binding)> = Vec::new();
    let mut allowed: Vec<State> = Vec::new();
    // The renaming each allowed state is compared with the settled one under.
    let mut renamings: Vec<&Binding> = Vec::new();
    for (start, binding) in candidates {
        let pinned = binding.model_names();
        let (found, _) = outcomes(model, std::slice::from_ref(start), settle, &pinned, budget)?;
        for s in found {
            let objects = ModelObjects {
                replicasets: &s.api.replicasets,
                pods: &s.api.pods,
            };
            if let Some(b) = match_objects(binding, objects, settled) {
                if !matched.iter().any(|(m, mb)| *m == s && *mb == b) {
                    matched.push((s.clone(), b));
                }
            }
            if !allowed.contains(&s) {
                allowed.push(s);
                renamings.push(binding);
            }
        }
    }
    let observed_tables = side_by_side::normalised_tables(&settled.replicasets, &settled.pods);
    let mut views: Vec<String> = allowed
        .iter()
        .map(|s| side_by_side::normalised_tables(&s.api.replicasets, &s.api.pods))
        .collect();
    views.sort();
    views.dedup();
    if !matched.is_empty() {
        return Ok(JudgedOutcome {
            level: Level::Conforms {
                detail: match views.len() {
                    1 => "the settled state is the one the model allows here".to_string(),
                    n => format!("the settled state is one of the {n} the model allows here"),
                },
            },
            matched,
            settled_breaks: None,
        });
    }
    if views.is_empty() {
        return Ok(JudgedOutcome {
            level: Level::Diverges {
                detail: "the model never settles here (no quiescent state is reachable)".into(),
                allowed: vec![],
                seen: observed_tables,
                side_by_side: None,
                fields: vec![],
            },
            matched: vec![],
            settled_breaks: None,
        });
    }
    let broken = settled_breaks(settled, &allowed);
    // The closest allowed state: the fewest differing fields, then the fewest differing
    // lines of the tables, then the first in the tables' order (whatever order the search
    // found the states in).
    let (_, _, closest, fields) = allowed
        .iter()
        .zip(&renamings)
        .map(|(s, b)| {
            let objects = ModelObjects {
                replicasets: &s.api.replicasets,
                pods: &s.api.pods,
            };
            let fields = crate::compare::fields::state_differences(b, objects, settled);
            let view = side_by_side::normalised_tables(&s.api.replicasets, &s.api.pods);
            (
                fields.len(),
                side_by_side::distance(&view, &observed_tables),
                view,
                fields,
            )
        })
        .min_by(|x, y| (x.0, x.1, &x.2).cmp(&(y.0, y.1, &y.2)))
        .expect("non-empty");
    let (closest, observed_shown) =
        side_by_side::with_unshown_fields(&closest, &observed_tables, &fields);
    let detail = match views.len() {
        1 => "the settled state is not the one the model allows here, shown beside what was seen"
            .to_string(),
        n => format!(
            "the settled state is none of the {n} the model allows here; the closest allowed one beside what was seen"
        ),
    };
    Ok(JudgedOutcome {
        level: Level::Diverges {
            detail,
            side_by_side: Some(side_by_side::render(
                "model (closest allowed)",
                &closest,
                "cluster (observed)",
                &observed_shown,
            )),
            allowed: views,
            seen: observed_tables,
            fields,
        },
        matched: vec![],
        settled_breaks: broken,
    })
}

/// The first convergence condition the observed `settled` state breaks that every state the
/// model allows (`allowed`, not empty) keeps. A condition some allowed state breaks too is
/// not named: where the model itself settles unconverged (a fault injected, an upstream bug
/// switched on), breaking it is not what set the cluster apart.
fn settled_breaks(settled: &Snapshot, allowed: &[State]) -> Option<&'static str> {
    converged::broken_conditions(&settled.replicasets, &settled.pods, &[])
        .into_iter()
        .map(|u| u.condition)
        .find(|c| {
            allowed.iter().all(|s| {
                c.broken(&s.api.replicasets, &s.api.pods, &s.api.others)
                    .is_none()
            })
        })
        .map(|c| c.name())
}
