//! A run that stopped short, judged up to where it stopped.
//!
//! A cluster run stops short when a step it waits for never comes: an `await` of a request
//! the implementation never sends, a settle point the namespace never reaches (a livelock).
//! Its recording has the settled segments before the stop and a last segment that never
//! settled, so the oracle's verdict ([`crate::judge`]), which matches every segment's
//! settled state, has nothing to end on. What can still be asked is whether the cluster did
//! anything the model forbids *before* it stopped: is there a run of the model, the
//! scenario followed up to the stopped step, that makes every recorded write in order and
//! matches every settle point it did reach? The [witness search](super::search::witness) answers it
//! with the last segment left open ([`Recording::open_end`]).
//!
//! That is all a stopped run says. Whether the model could also stop where the cluster did
//! is a question about the model alone (`rsmc_oracle::scenario::passes`, for awaits).

use super::divergence::diverging_at_stop;
use super::release_difference::ReleaseDifference;
use super::resume;
use super::search::witness::{self, Found, Recording};
use super::shape::check_scenario;
use super::subject::{draining_unbounded, judged_release, AfterDivergence, Subject};
use super::verdict::{JudgeError, Level};
use crate::observed::Observed;
use rsmc_spec::budget::Budget;
use serde::Serialize;

/// The verdict on a stopped run's recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum UpToStop {
    /// A run of the model makes every recorded write and meets every settle point the
    /// cluster reached.
    Conforms {
        /// Recorded writes, all segments.
        writes: usize,
        /// Search nodes expanded to find the run.
        explored: usize,
        /// Only a run that goes on past a safety violation does (the cluster went through
        /// an upstream race, or a bug switched on).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        past_a_violation: bool,
    },
    /// No run does: where the recording and the model part ways.
    Diverges {
        /// The settle point (1-based; the last is the stop) of the divergence.
        segment: usize,
        trace: Level,
        /// The scenario step the divergence starts at, numbered from 1.
        #[serde(skip_serializing_if = "Option::is_none")]
        divergent_step: Option<usize>,
        /// The safety property the divergent write breaks, when one does, else the
        /// convergence condition the status it writes breaks, if one does.
        #[serde(skip_serializing_if = "Option::is_none")]
        breaks: Option<&'static str>,
        /// Where the divergent write breaks nothing and differs from the judged release
        /// only in fields a feature gate brings ([`super::release_difference`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        difference: Option<Box<ReleaseDifference>>,
        /// What the recording shows after this divergence, before the stop, each judged from
        /// the cluster's objects at the settle point before it ([`super::resume`]), unless
        /// the run is judged to its first divergence only.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        later: Vec<Resumed>,
    },
    /// The search stopped at its budget before it decided.
    Undecided { detail: String },
}

impl UpToStop {
    pub fn conforms(&self) -> bool {
        matches!(self, UpToStop::Conforms { .. })
    }
}

/// A judgement of a stopped run's recording after a divergence, from the cluster's objects
/// at settle point `from` (numbered from 1): a further divergence, or undecided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resumed {
    pub from: usize,
    pub judged: UpToStop,
}

impl std::fmt::Display for UpToStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpToStop::Conforms {
                writes,
                past_a_violation,
                ..
            } => {
                write!(
                    f,
                    "conforms up to the stop: a run of the model makes all {writes} recorded writes"
                )?;
                if *past_a_violation {
                    write!(f, " (one that goes on past a safety violation)")?;
                }
                Ok(())
            }
            UpToStop::Diverges {
                segment,
                trace,
                divergent_step,
                breaks,
                difference,
                later,
            } => {
                let verdict = match difference {
                    Some(d) => d.headline(),
                    None => "DOES NOT CONFORM".into(),
                };
                write!(f, "{verdict} up to the stop, before settle point {segment}")?;
                if let Some(step) = divergent_step {
                    write!(f, ", at step {step}")?;
                }
                if let Level::Diverges { detail, seen, .. } = trace {
                    write!(f, ": {detail}; seen: {seen}")?;
                }
                if let Some(p) = breaks {
                    write!(f, " (it breaks {p})")?;
                }
                for r in later {
                    write!(
                        f,
                        "; then, judged from the cluster's objects at settle point {}: {}",
                        r.from, r.judged
                    )?;
                }
                Ok(())
            }
            UpToStop::Undecided { detail } => write!(f, "not decided up to the stop: {detail}"),
        }
    }
}

/// Judge `observed`, a run of `subject`'s scenario that stopped at scenario step `stopped`
/// (0-based, never completed): its segments are the settle points before that step, then
/// what was recorded until the stop. First by the model's runs that end at a safety
/// violation, then, if none matches, by those that go on past one.
pub fn judge_up_to(
    subject: &Subject,
    observed: &Observed,
    stopped: usize,
    budget: &Budget,
) -> Result<UpToStop, JudgeError> {
    check_scenario(subject, observed)?;
    if stopped >= subject.steps.len() {
        return Err(JudgeError::Step(super::step_numbering::StepError {
            field: "stoppedAt".into(),
            message: format!(
                "step {stopped} (numbered from 0) is not a step of the scenario, which has {}",
                subject.steps.len()
            ),
        }));
    }
    let script = subject.model.script.as_ref().expect("a scripted model");
    // Where the model's script stops: at the first of its steps the stopped step made.
    let stop = subject
        .origin
        .iter()
        .position(|&o| o >= stopped)
        .unwrap_or(subject.origin.len());
    let mut settles: Vec<usize> = script
        .settle_indices()
        .into_iter()
        .filter(|&i| i < stop)
        .collect();
    settles.push(stop);
    if settles.len() != observed.segments.len() {
        return Err(JudgeError::Segments {
            observed: observed.segments.len(),
            expected: settles.len(),
        });
    }
    super::step_numbering::check(subject, &settles, observed)?;
    let writes = observed
        .segments
        .iter()
        .map(|s| s.events.as_ref().map_or(0, Vec::len))
        .sum();
    let mut last = None;
    for past_a_violation in [false, true] {
        let mut model = draining_unbounded(subject.model);
        model.past_violations |= past_a_violation;
        let recording = Recording::settled(&model, subject.origin, &settles, observed).up_to_stop();
        match witness::search(&recording, budget, None) {
            Ok(Found::Run { explored, .. }) => {
                return Ok(UpToStop::Conforms {
                    writes,
                    explored,
                    past_a_violation: past_a_violation && !subject.model.past_violations,
                })
            }
            Ok(Found::Nothing { segment, stop, .. }) => last = Some((segment, *stop)),
            Err(unfinished) => {
                return Ok(UpToStop::Undecided {
                    detail: unfinished.to_string(),
                })
            }
        }
    }
    let (segment, stop) = last.expect("searched at least once");
    let mut first = diverging_at(subject, observed, &settles, segment, stop);
    if subject.after_divergence == AfterDivergence::JudgeOn {
        if let UpToStop::Diverges { later, .. } = &mut first {
            *later = judged_after(subject, observed, &settles, segment, budget);
        }
    }
    Ok(first)
}

/// The divergence the witness search stopped at, in `segment` (from 0).
fn diverging_at(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    segment: usize,
    stop: witness::Stop,
) -> UpToStop {
    let diverging = diverging_at_stop(subject, observed, settles, segment, stop);
    let breaks_none = diverging.breaks.is_none() && diverging.written_breaks.is_none();
    let difference = breaks_none
        .then(|| {
            diverging
                .level
                .release_difference(&subject.model.sem, &judged_release(subject, observed))
        })
        .flatten()
        .map(Box::new);
    UpToStop::Diverges {
        segment: segment + 1,
        trace: diverging.level,
        divergent_step: diverging.step.map(|i| i + 1),
        breaks: diverging.breaks.or(diverging.written_breaks),
        difference,
        later: Vec::new(),
    }
}

/// The recording after a divergence in `diverged` (from 0), up to the stop: each search
/// starts from the cluster's objects at the settle point that ends the segment of the last
/// divergence, as the verdict of a complete run does ([`super::resume`]), and a further
/// divergence starts the next. Nothing is said where the rest conforms.
fn judged_after(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    mut diverged: usize,
    budget: &Budget,
) -> Vec<Resumed> {
    let model = draining_unbounded(subject.model).past_violations();
    let recording = Recording::settled(&model, subject.origin, settles, observed).up_to_stop();
    let mut later = Vec::new();
    while diverged + 1 < settles.len() {
        let from = diverged + 1;
        let judged = match resume::search_after(&recording, diverged, budget) {
            Err(why) => UpToStop::Undecided { detail: why },
            Ok(searched) => match searched {
                Ok(Found::Run { .. }) => break,
                Ok(Found::Nothing { segment, stop, .. }) => {
                    diverged = segment;
                    diverging_at(subject, observed, settles, segment, *stop)
                }
                Err(unfinished) => UpToStop::Undecided {
                    detail: unfinished.to_string(),
                },
            },
        };
        let undecided = matches!(judged, UpToStop::Undecided { .. });
        later.push(Resumed { from, judged });
        if undecided {
            break;
        }
    }
    later
}
