//! The verdicts the witness search decides: on a recording a run of the model produces
//! ([`witnessed`]: both levels conform at every settle point, and the run says how far behind
//! its informers were), on one that needs informers further behind than the scenario's bound
//! ([`witnessed_further_behind`]), and on a divergence the exhaustive levels could not explain
//! within their budget ([`unexplained`]: the search's furthest point stands).

use super::broken::labelled;
use super::divergence::{diverging_at_stop, witnessed_levels};
use super::resume;
use super::search::validate::Readings;
use super::search::witness::{self, Found, Recording};
use super::subject::{
    draining_unbounded, explaining, step_ids, step_lines, AfterDivergence, Subject,
};
use super::verdict::{JudgeError, Level, RecordedBreak, SettlePoint, Verdict};
use crate::observed::Observed;
use rsmc_spec::budget::{Budget, Exhausted, Limit};
use rsmc_spec::config::InformerConfig;
use rsmc_spec::model::State;

/// Whether the witness search stopped at its state limit (not its memory, nor a scale-down
/// too wide to list: a larger lag bound does not help those).
pub(super) fn is_state_limit(u: &witness::Unfinished) -> bool {
    matches!(u.exhausted.limit, Limit::States(_))
}

/// What the searches with informers further behind than the scenario's bound found.
pub(super) enum Further {
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
/// writes, measured along it ([`Readings::behind`]).
///
/// The scenario's bound keeps the exhaustive searches (replay, explaining a divergence)
/// small; it is not a rule of the cluster: a real informer falls behind a burst of another
/// component's writes by as many events as the burst has. On a loaded machine (four
/// scenarios side by side) a v1.37.2 controller wrote status from a pod cache three events
/// behind in a scenario bounded at two whose other runs it fits; in `overlap-20` the
/// controller's pod cache was 8 events behind the garbage collector's orphan patches. The
/// search finds such a run at once when deliveries that would spoil the stale read are held
/// back (`judge/search/held.rs`); searching every recording with the largest bound from the start
/// would cost too much when it does not: the 50-pod drain's witness search grows past 8 GB
/// with it, as every write may then be made with informers behind.
///
/// One event more comes first because the largest bound can cost far more than the run
/// needs: `counterexample-observed-generation-of-a-recreated-replicaset` (v1.35.4, its
/// scenario's maxLag 2) imported from the suite's audit log at the import's default
/// maxLag 1 needed 22,738 states with informers up to 2 behind and 1.76 million with up to
/// 32, past the explanation's budget, and the recording was called divergent at random.
pub(super) fn witnessed_further_behind(
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
pub(super) fn witnessed(
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
pub(super) fn unexplained(
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
