//! The oracle's verdict on an observed run of a scenario, at two levels.
//!
//! - **Outcome.** At each settle point the cluster's objects must be, up to renaming, one of
//!   the quiescent states the model reaches through that segment from the states that matched
//!   the previous settle point. The model states carried from one settle point to the next
//!   are full states (expectations and all), so hidden controller memory is carried too.
//! - **Trace.** The recorded writes between two settle points must be a run of the model,
//!   internal steps hidden ([`search::validate`]).
//!
//! A run conforms when every settle point does at both levels (the trace level where events
//! were recorded). The verdict names the first divergent step, says what the model allowed
//! and shows what was seen: for outcomes, the closest allowed state beside the observed one
//! as kubectl tables.
//!
//! Where every segment was recorded (every `rsmc conform` run), the verdict is decided by
//! the [witness search](search::witness), whose cost follows the recording rather than the
//! number of interleavings: a run of the model that produces every write and every settle
//! point exists exactly when both levels conform everywhere. The levels' exhaustive
//! searches then run only to explain a divergence, within the budget; when that is beyond
//! it, the verdict stands on the witness search's furthest point.
//!
//! # The map
//!
//! [`judge`] and [`judge_with`] are the entry points; [`stopped::judge_up_to`] judges a run
//! that stopped short. A judgement goes:
//! - [`subject`]: what is judged, and the model and budget each search takes of it;
//! - [`shape`], [`step_numbering`]: the recording fits its scenario;
//! - [`readings`]: every reading of the writes the recording does not confirm, one judged
//!   after another;
//! - [`search`]: the witness search, which decides the verdict; `witnessed` makes the
//!   verdict of what it found (a run, also one with informers further behind, or none);
//! - [`divergence`]: where the recording diverges, and the property its write breaks
//!   ([`broken`]); then the levels' `exhaustive` searches explain it, within a budget;
//! - [`resume`]: the settle points after a divergence, judged from the cluster's objects;
//! - [`refusals`], [`release_difference`], [`findings`]: what the verdict adds once it is
//!   decided (refused steps, differences from a release, everything found, grouped);
//! - [`verdict`]: the types all of them share; [`render`] (`report`) writes a verdict for a
//!   terminal.
//!
//! This file holds the order of the searches: the readings, then for each the model whose
//! runs stop at a safety violation before the one whose runs go on past it, the witness
//! search before the exhaustive levels.

pub mod broken;
pub mod divergence;
mod exhaustive;
pub mod findings;
pub mod readings;
pub mod refusals;
pub mod release_difference;
mod report;
pub mod resume;
pub mod search;
pub mod shape;
pub mod step_numbering;
pub mod stopped;
pub mod subject;
pub mod verdict;
mod witnessed;

use crate::observed::Observed;
use exhaustive::exhaustive;
pub use report::render;
use rsmc_spec::budget::Budget;
use rsmc_spec::profile::Semantics;
use search::witness::{self, Found, Recording};
use shape::check_shape;
use subject::{draining_unbounded, explaining, judged_release};
pub use subject::{AfterDivergence, Subject};
pub use verdict::{ContractNote, JudgeError, Level, RecordedBreak, SettlePoint, Verdict};
use witnessed::{is_state_limit, unexplained, witnessed, witnessed_further_behind, Further};

/// Judge `observed` against the model of `subject`.
///
/// First by the model whose runs end at a safety violation (the model checker's, and the
/// smaller search); a run that conforms there is a run of upstream's behaviour that went
/// through no race. Otherwise by the model whose runs go on past violations: a cluster that
/// went through an upstream race (a scenario can force one) did what upstream does, and the
/// verdict says which properties every such run breaks. When that larger search is too
/// large, the first verdict stands, with a note saying so.
pub fn judge(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
) -> Result<Verdict, JudgeError> {
    judge_with(subject, observed, budget, Method::Witness)
}

/// How a recorded run is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// By the witness search where every segment was recorded ([`search::witness`]).
    Witness,
    /// By the levels' exhaustive searches alone: the same verdicts, at the cost of every
    /// interleaving (for showing that they are the same, and for the count of settled states
    /// the model allows at each settle point).
    Exhaustive,
}

/// [`judge`] by the given method.
///
/// A recording no run of the model produces is judged a second time by the model's runs
/// that go on past a safety violation, whose verdict names what the recording breaks. The
/// first judgement's explanation (the exhaustive levels, the costly part: tens of seconds on
/// a 50-pod recording) is made only when the second one cannot be had.
///
/// A step the scenario expects to be refused that the cluster did not refuse so makes the
/// run not conform, whatever the search found ([`refusals`]).
///
/// A recording with writes it does not confirm is judged in each of its readings
/// ([`readings`]), until one conforms.
pub fn judge_with(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    method: Method,
) -> Result<Verdict, JudgeError> {
    let readings = readings::readings(observed).map_err(JudgeError::Unconfirmed)?;
    if readings.is_empty() {
        return judge_reading(subject, observed, budget, method);
    }
    let count = readings.len();
    let mut first = None;
    for reading in readings {
        let judged = judge_reading(subject, &reading.observed, budget, method).map(|v| Verdict {
            unconfirmed: reading.taken,
            ..v
        });
        match judged {
            Ok(v) if v.conforms => return Ok(v),
            other => {
                first.get_or_insert(other);
            }
        }
    }
    let mut verdict = first.expect("a recording has at least one reading")?;
    let none = format!(
        "no reading of the writes the recording does not confirm conforms ({count} readings judged, each write committed or not); shown: the trace as written"
    );
    verdict.prepend_note(none);
    Ok(verdict)
}

/// [`judge_with`] on one reading of a recording.
fn judge_reading(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    method: Method,
) -> Result<Verdict, JudgeError> {
    let settles = check_shape(subject, observed)?;
    let mut verdict = judge_writes(subject, observed, budget, method)?;
    verdict.broken_on_cluster = broken::in_recording(observed, &subject.model.sem);
    let mismatches = refusals::mismatches(subject, &settles, observed);
    refusals::apply(&mut verdict, &mismatches, subject);
    mark_release_differences(
        &mut verdict,
        &subject.model.sem,
        &judged_release(subject, observed),
    );
    if !verdict.conforms {
        verdict.findings = findings::findings(&verdict);
    }
    verdict.contract = subject.contract.map(|follows| ContractNote {
        follows: follows.to_string(),
        server: observed.cluster["server"].as_str().map(str::to_string),
    });
    Ok(verdict)
}

/// Marks each settle point of `verdict` whose divergence is a release difference: the
/// trace's where the trace diverges, else the outcome's.
fn mark_release_differences(verdict: &mut Verdict, sem: &Semantics, release: &str) {
    for point in &mut verdict.settle_points {
        let diverging = [&point.trace, &point.outcome]
            .into_iter()
            .find(|level| level.diverges());
        point.difference = diverging.and_then(|l| l.release_difference(sem, release));
    }
}

/// [`judge_with`] on the recorded writes and settled states alone.
fn judge_writes(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    method: Method,
) -> Result<Verdict, JudgeError> {
    let first = match witness_first(subject, observed, budget, method)? {
        Judged::Verdict(v) if v.conforms || subject.model.past_violations => return Ok(v),
        Judged::Diverges(d) if subject.model.past_violations => {
            return explain(subject, observed, budget, d)
        }
        first => first,
    };
    let model = subject.model.clone().past_violations();
    let past = Subject {
        model: &model,
        ..*subject
    };
    match judge_by(&past, observed, budget, method) {
        Err(t @ (JudgeError::TooLarge(_) | JudgeError::Unwitnessed(_))) => {
            let first = match first {
                Judged::Verdict(v) => v,
                Judged::Diverges(d) => explain(subject, observed, budget, d)?,
            };
            Ok(Verdict {
                note: Some(format!(
                    "judged by the model's runs that stop at a safety violation: with the runs that go on past one, {t}"
                )),
                ..first
            })
        }
        other => other,
    }
}

/// What judging a recording comes to before a divergence is explained.
enum Judged {
    Verdict(Verdict),
    /// No run of the model produces the recording (the witness search decided it, also with
    /// informers further behind); the exhaustive levels are still to say where and why.
    Diverges(Divergent),
}

/// Where the witness search's furthest run stopped.
struct Divergent {
    settles: Vec<usize>,
    segment: usize,
    stop: witness::Stop,
    /// What the verdict must say about the searches with informers further behind, when
    /// one of them did not finish.
    note: Option<String>,
}

/// Judge `observed` against `subject.model` as it is: by the witness search where every
/// segment was recorded, else by the levels' exhaustive searches.
fn judge_by(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    method: Method,
) -> Result<Verdict, JudgeError> {
    match witness_first(subject, observed, budget, method)? {
        Judged::Verdict(v) => Ok(v),
        Judged::Diverges(d) => explain(subject, observed, budget, d),
    }
}

/// [`judge_by`] up to the explanation of a divergence.
fn witness_first(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    method: Method,
) -> Result<Judged, JudgeError> {
    let settles = check_shape(subject, observed)?;
    let recorded = observed.segments.iter().all(|s| s.events.is_some());
    if method == Method::Exhaustive || !recorded {
        return exhaustive(subject, observed, budget).map(Judged::Verdict);
    }
    let draining = draining_unbounded(subject.model);
    let recording = Recording::settled(&draining, subject.origin, &settles, observed);
    // A recording the search cannot decide within an explanation's budget may need informers
    // further behind than the scenario says (the bound keeps the search's runs few, and a run
    // that needs a staler cache is found at once with a larger one): that is tried before the
    // rest of the budget is spent at the scenario's bound.
    let first = explaining(budget);
    let searched = match witness::search(&recording, &first, None) {
        Err(u) if is_state_limit(&u) => {
            if let Further::Found(verdict) =
                witnessed_further_behind(subject, observed, &settles, budget)?
            {
                return Ok(Judged::Verdict(*verdict));
            }
            if first.states == budget.states {
                Err(u)
            } else {
                witness::search(&recording, budget, None)
            }
        }
        other => other,
    };
    match searched {
        Ok(Found::Run {
            end,
            explored,
            readings,
        }) => witnessed(
            subject,
            observed,
            &recording,
            &end.0,
            budget,
            (explored, readings),
        )
        .map(Judged::Verdict),
        Ok(Found::Nothing { segment, stop, .. }) => {
            let note = match witnessed_further_behind(subject, observed, &settles, budget)? {
                Further::Found(verdict) => return Ok(Judged::Verdict(*verdict)),
                Further::Nothing => None,
                Further::CutShort { lag, exhausted } => Some(format!(
                    "no run of the model with informers within the scenario's maxLag {} produces the recording; searched with informers up to {lag} events behind, {exhausted}",
                    subject.model.config.informer.max_lag
                )),
            };
            Ok(Judged::Diverges(Divergent {
                settles,
                segment,
                stop: *stop,
                note,
            }))
        }
        Err(u) => Err(u.into()),
    }
}

/// The verdict on a divergence: the exhaustive levels' within an explanation's budget, else
/// what the witness search found.
fn explain(
    subject: &Subject,
    observed: &Observed,
    budget: &Budget,
    d: Divergent,
) -> Result<Verdict, JudgeError> {
    let verdict = match exhaustive(subject, observed, &explaining(budget)) {
        Err(JudgeError::TooLarge(t)) => Ok(unexplained(
            subject,
            observed,
            &d.settles,
            (d.segment, d.stop),
            &t,
            budget,
        )),
        other => other,
    };
    match (verdict, d.note) {
        (Ok(mut v), Some(note)) if !v.conforms => {
            v.prepend_note(note);
            Ok(v)
        }
        (verdict, _) => verdict,
    }
}
