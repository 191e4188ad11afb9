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
//! - [`search`]: the witness search, which decides the verdict;
//! - [`divergence`]: where the recording diverges, and the property its write breaks
//!   ([`broken`]); then this file's exhaustive levels explain it, within a budget;
//! - [`resume`]: the settle points after a divergence, judged from the cluster's objects;
//! - [`refusals`], [`release_difference`], [`findings`]: what the verdict adds once it is
//!   decided (refused steps, differences from a release, everything found, grouped);
//! - [`verdict`]: the types all of them share; [`render`] writes a verdict for a terminal.

pub mod broken;
pub mod divergence;
pub mod findings;
pub mod readings;
pub mod refusals;
pub mod release_difference;
pub mod resume;
pub mod search;
pub mod shape;
pub mod step_numbering;
pub mod stopped;
pub mod subject;
pub mod verdict;

use crate::compare::binding::{match_objects, Binding, ModelObjects};
use crate::explore::outcomes;
use crate::observed::{Observed, Snapshot};
use crate::views::side_by_side;
use divergence::{diverging_at_stop, diverging_trace, misses_writes, witnessed_levels};
use rsmc_spec::budget::{Budget, Exhausted, Limit};
use rsmc_spec::bugs::{Status, CATALOGUE};
use rsmc_spec::config::InformerConfig;
use rsmc_spec::liveness::converged;
use rsmc_spec::model::{RsModel, State};
use rsmc_spec::profile::Semantics;
use search::validate::{ends_matching, validate, Readings, Segment, Validation};
use search::witness::{self, Found, Recording};
use shape::check_shape;
use stateright::Model;
use subject::{draining_unbounded, explaining, judged_release, step_ids, step_lines};
pub use subject::{AfterDivergence, Subject};
use verdict::Resumed;
pub use verdict::{ContractNote, JudgeError, Level, RecordedBreak, SettlePoint, Verdict};

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

/// Whether the witness search stopped at its state limit (not its memory, nor a scale-down
/// too wide to list: a larger lag bound does not help those).
fn is_state_limit(u: &witness::Unfinished) -> bool {
    matches!(u.exhausted.limit, Limit::States(_))
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

/// What the searches with informers further behind than the scenario's bound found.
enum Further {
    /// A run: the recording's verdict, with a note saying how far behind it was.
    Found(Box<Verdict>),
    /// No run, every search finished (or none was made: the bound is the largest already).
    Nothing,
    /// No run found, and the search with informers up to `lag` behind stopped at its budget:
    /// a run further behind may exist.
    CutShort { lag: u32, exhausted: Exhausted },
}

/// The verdict of a recording that no run of the model produces with informers within the
/// scenario's `maxLag` (or none the search found within its budget), when a run with
/// informers further behind does: searched with one event more than the scenario's bound,
/// then with the largest bound a scenario may give (`InformerConfig::MAX_LAG`), each with
/// an explanation's budget. The verdict says how far behind the run's informers were at its
/// writes, measured along it ([`search::validate::Readings::behind`]).
///
/// The scenario's bound keeps the exhaustive searches (replay, explaining a divergence)
/// small; it is not a rule of the cluster: a real informer falls behind a burst of another
/// component's writes by as many events as the burst has. On a loaded machine (four
/// scenarios side by side) a v1.37.2 controller wrote status from a pod cache three events
/// behind in a scenario bounded at two whose other runs it fits; in `overlap-20` the
/// controller's pod cache was 8 events behind the garbage collector's orphan patches. The
/// search finds such a run at once when deliveries that would spoil the stale read are held
/// back ([`search::held`]); searching every recording with the largest bound from the start
/// would cost too much when it does not: the 50-pod drain's witness search grows past 8 GB
/// with it, as every write may then be made with informers behind.
///
/// One event more comes first because the largest bound can cost far more than the run
/// needs: `counterexample-observed-generation-of-a-recreated-replicaset` (v1.35.4, its
/// scenario's maxLag 2) imported from the suite's audit log at the import's default
/// maxLag 1 needed 22,738 states with informers up to 2 behind and 1.76 million with up to
/// 32, past the explanation's budget, and the recording was called divergent at random.
fn witnessed_further_behind(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    budget: &Budget,
) -> Result<Further, JudgeError> {
    let bound = subject.model.config.informer.max_lag;
    let mut further = Further::Nothing;
    let mut lags = vec![bound + 1, InformerConfig::MAX_LAG];
    lags.retain(|&l| l <= InformerConfig::MAX_LAG);
    lags.dedup();
    for lag in lags {
        let mut model = subject.model.clone();
        model.config.informer.max_lag = lag;
        model.config.informer.gc_max_lag = None;
        let wider = Subject {
            model: &model,
            ..*subject
        };
        let draining = draining_unbounded(&model);
        let recording = Recording::settled(&draining, subject.origin, settles, observed);
        match witness::search(&recording, &explaining(budget), None) {
            Ok(Found::Run {
                end,
                explored,
                readings,
            }) => {
                let behind = readings.behind;
                let mut verdict = witnessed(
                    &wider,
                    observed,
                    &recording,
                    &end.0,
                    budget,
                    (explored, readings),
                )?;
                verdict.prepend_note(format!(
                    "judged by a run of the model whose informers were up to {behind} events behind at a write, where the scenario's maxLag {bound} allows fewer than {bound} (searched with maxLag {lag})"
                ));
                return Ok(Further::Found(Box::new(verdict)));
            }
            // A larger bound allows every run a smaller one does: the largest bound searched
            // decides.
            Ok(Found::Nothing { .. }) => further = Further::Nothing,
            Err(u) => {
                further = Further::CutShort {
                    lag,
                    exhausted: u.exhausted,
                }
            }
        }
    }
    Ok(further)
}

/// The verdict when the witness search found a run (having expanded `explored` nodes, and
/// read what the recording leaves open as `readings` say): every settle point conforms at both
/// levels, and a property the run breaks is one every matching run breaks unless a search
/// that avoids it finds another run.
fn witnessed(
    subject: &Subject,
    observed: &Observed,
    recording: &Recording,
    end: &State,
    budget: &Budget,
    (explored, readings): (usize, Readings),
) -> Result<Verdict, JudgeError> {
    let settle_points = observed
        .segments
        .iter()
        .enumerate()
        .map(|(k, segment)| {
            let writes = segment.events.as_ref().map_or(0, Vec::len);
            SettlePoint {
                index: k + 1,
                steps: step_lines(subject, &step_ids(subject, recording.settles, k)),
                outcome: Level::Conforms {
                    detail: "the settled state is the one the run that produces the recorded writes reaches".into(),
                },
                trace: Level::Conforms {
                    detail: format!("{writes} recorded writes are a run of the model"),
                },
                divergent_step: None,
                breaks: None,
                written_breaks: None,
                settled_breaks: None,
                recorded_breaks: None,
                difference: None,
                resumed: None,
            }
        })
        .collect();
    let mut broken_as_modelled = Vec::new();
    let mut undecided = Vec::new();
    for p in &end.ghost.violated {
        match witness::search(recording, budget, Some(p)) {
            Ok(Found::Nothing { .. }) => broken_as_modelled.push(labelled(p, &subject.model.sem)),
            Ok(Found::Run { .. }) => {}
            Err(e) => undecided.push(format!("{p} ({e})")),
        }
    }
    Ok(Verdict {
        broken_as_modelled,
        note: (!undecided.is_empty()).then(|| {
            format!(
                "the run found breaks {}; whether every matching run does was not decided",
                undecided.join(", ")
            )
        }),
        witness_nodes: explored,
        floating_moved: readings.moved,
        or_system_by_system: readings.by_system,
        or_system_by_step: readings.by_step,
        ..Verdict::new(subject, true, settle_points)
    })
}

/// The verdict when no run of the model produces the recording and the levels' exhaustive
/// searches, which would explain where, are beyond the budget: the settle points before the
/// witness search's furthest one conform, that one diverges where the search stopped.
fn unexplained(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    (segment, stop): (usize, witness::Stop),
    exhausted: &Exhausted,
    budget: &Budget,
) -> Verdict {
    let why = format!(
        "the exhaustive search that would show what the model allows here stopped: {exhausted}"
    );
    let mut points = Vec::new();
    for (k, seg) in observed.segments.iter().enumerate() {
        let ids = step_ids(subject, settles, k);
        let events = seg.events.as_deref().unwrap_or(&[]);
        let (outcome, trace, divergent_step, breaks, written_breaks) = if k < segment {
            let (outcome, trace) = witnessed_levels(events.len());
            (outcome, trace, None, None, None)
        } else if k == segment {
            let trace = diverging_at_stop(subject, observed, settles, segment, stop.clone());
            (
                Level::Unexplained {
                    detail: why.clone(),
                },
                trace.level,
                trace.step,
                trace.breaks,
                trace.written_breaks,
            )
        } else {
            (Level::NotJudged, Level::NotJudged, None, None, None)
        };
        points.push(SettlePoint {
            index: k + 1,
            steps: step_lines(subject, &ids),
            outcome,
            trace,
            divergent_step: divergent_step.map(|i| i + 1),
            breaks,
            written_breaks,
            settled_breaks: None,
            recorded_breaks: (k == segment)
                .then(|| RecordedBreak::of(&seg.settled))
                .flatten(),
            difference: None,
            resumed: None,
        });
    }
    if subject.after_divergence == AfterDivergence::JudgeOn {
        resume::witnessed_after(subject, observed, settles, segment, &mut points, budget);
    }
    Verdict {
        note: Some(why),
        ..Verdict::new(subject, false, points)
    }
}

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
fn exhaustive(
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

/// A property broken by every matching run, labelled as the open catalogue entry that names
/// it (or as not known).
fn labelled(p: &str, sem: &Semantics) -> String {
    let switched = sem.bug.map(|b| b.entry()).filter(|e| e.property == p);
    let known = CATALOGUE
        .iter()
        .find(|e| e.status == Status::Open && e.property == p);
    match (switched, known) {
        (Some(bug), _) => format!("{p}: the bug switched on (--bug {})", bug.name),
        (None, Some(entry)) => format!("{p}: {}", entry.known_label()),
        (None, None) => format!("{p}: no open catalogue entry names it"),
    }
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
    converged::broken_conditions(&settled.replicasets, &settled.pods)
        .into_iter()
        .map(|u| u.condition)
        .find(|c| {
            allowed
                .iter()
                .all(|s| c.broken(&s.api.replicasets, &s.api.pods).is_none())
        })
        .map(|c| c.name())
}

/// The verdict as text for a terminal.
pub fn render(v: &Verdict) -> String {
    let mut out = format!(
        "rsmc oracle: scenario {} ({}profile {}{}): {}\n",
        v.scenario,
        v.contract
            .as_ref()
            .map(|c| format!("{c}; "))
            .unwrap_or_default(),
        v.profile,
        v.switches
            .iter()
            .map(|s| format!(", {s}"))
            .collect::<String>(),
        if v.conforms {
            "CONFORMS"
        } else {
            "DOES NOT CONFORM"
        }
    );
    for p in &v.settle_points {
        out.push_str(&format!("\nsettle point {}, after:\n", p.index));
        for s in &p.steps {
            out.push_str(&format!("    {s}\n"));
        }
        if let Some(r) = &p.resumed {
            out.push_str(&format!(
                "  (an earlier settle point diverged: judged from the cluster's objects at settle point {}, the controller {} there)\n",
                r.from, r.memory
            ));
        }
        for (name, level) in [("outcome", &p.outcome), ("trace", &p.trace)] {
            match level {
                Level::Conforms { detail } => {
                    out.push_str(&format!("  {name}: conforms: {detail}\n"))
                }
                Level::NotRecorded => {
                    out.push_str(&format!("  {name}: not judged: no events were recorded\n"))
                }
                Level::NotJudged => out.push_str(&format!(
                    "  {name}: not judged: an earlier settle point diverged, or its segment was not recorded\n"
                )),
                Level::Unexplained { detail } => {
                    out.push_str(&format!("  {name}: not judged: {detail}\n"))
                }
                Level::Diverges {
                    detail,
                    allowed,
                    seen,
                    side_by_side,
                    fields,
                } => {
                    out.push_str(&format!("  {name}: DIVERGES: {detail}\n"));
                    match side_by_side {
                        Some(table) => {
                            for line in table.lines() {
                                out.push_str(&format!("    {line}\n"));
                            }
                            let n = allowed.len();
                            out.push_str(&format!(
                                "    ({n} settled state{} allowed; `rsmc replay` lists {})\n",
                                if n == 1 { "" } else { "s" },
                                if n == 1 { "it" } else { "them" }
                            ));
                        }
                        None => {
                            out.push_str(&format!("    seen:    {seen}\n"));
                            if allowed.is_empty() {
                                out.push_str("    allowed: nothing\n");
                            }
                            for (i, a) in allowed.iter().enumerate() {
                                let head = if i == 0 { "allowed:" } else { "        " };
                                out.push_str(&format!("    {head} {a}\n"));
                            }
                        }
                    }
                    if !fields.is_empty() {
                        out.push_str("    differs from the closest allowed in:\n");
                        for f in fields {
                            out.push_str(&format!("      {f}\n"));
                        }
                    }
                }
            }
        }
        if let Some(step) = p.divergent_step {
            out.push_str(&format!("  first divergent step: {step}\n"));
        }
        if let Some(property) = p.breaks {
            out.push_str(&format!("  the divergent write breaks: {property}\n"));
        }
        if let Some(condition) = p.written_breaks {
            out.push_str(&format!("  the status it writes breaks: {condition}\n"));
        }
        if let Some(condition) = p.settled_breaks {
            out.push_str(&format!("  the settled state breaks: {condition}\n"));
        }
        if let Some(d) = &p.difference {
            out.push_str(&format!("  breaks no property: {d}\n"));
        }
        if let Some(r) = &p.recorded_breaks {
            out.push_str(&format!(
                "  the settled state as recorded breaks: {} ({}; the model's settled states here were not searched)\n",
                r.condition, r.how
            ));
        }
    }
    if v.witness_nodes > 0 {
        out.push_str(&format!(
            "\njudged by one model run that produces the recording, found in {} search nodes\n",
            v.witness_nodes
        ));
    }
    if v.floating_moved > 0 {
        let (writes, them, their) = match v.floating_moved {
            1 => ("write", "it", "its"),
            _ => ("writes", "them", "their"),
        };
        out.push_str(&format!(
            "the run makes {} recorded {writes} later than the import put {them}: the recording leaves {their} place open (a deletion's mark whose version the audit log omits)\n",
            v.floating_moved
        ));
    }
    let open = v.or_system_by_system + v.or_system_by_step;
    if open > 0 {
        out.push_str(&format!(
            "{open} recorded {} no event claims (the controller's event recorder may have dropped the claims): the run makes {} of them by the controller or the garbage collector, {} by the client step the import wrote for them\n",
            if open == 1 { "deletion" } else { "deletions" },
            v.or_system_by_system,
            v.or_system_by_step
        ));
    }
    if !v.unconfirmed.is_empty() {
        out.push_str("\nwrites the recording does not confirm (their sender got no answer):\n");
        for line in &v.unconfirmed {
            out.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(note) = &v.note {
        out.push_str(&format!("\nnote: {note}\n"));
    }
    for broken in &v.broken_as_modelled {
        out.push_str(&format!("\nevery model run that matches breaks {broken}\n"));
    }
    for broken in &v.broken_on_cluster {
        out.push_str(&format!("\non the cluster: {broken}\n"));
    }
    if !v.findings.is_empty() {
        out.push_str("\nfound (at settle points):\n");
        for f in &v.findings {
            out.push_str(&format!("    {f}\n"));
        }
    }
    out
}
