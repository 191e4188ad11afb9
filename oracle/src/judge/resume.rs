//! Judging on after a divergence: the next segment starts from the cluster's objects.
//!
//! A segment that diverges leaves no model run to carry to the next settle point, and a
//! controller author would learn of the first difference only. Every later segment is judged
//! instead from the objects the cluster showed at the settle point before it, with the
//! controller's memory as after a restart or idle there (`RsModel::resumed` says why those
//! cover what a correct controller can remember at a settle point). A verdict reached so says
//! so ([`Resumed`]); it can only be more lenient than one carried through the model's own
//! runs (more start states, the objects' ages unknown, no orphan promised before the settle
//! point), so a divergence found after a resume is one no correct controller makes from the
//! cluster's objects there, and a point that conforms after a resume says no more than that.

use super::divergence::{diverging_at_stop, witnessed_levels};
use super::search::witness::{self, Found, Recording, Unfinished};
use super::subject::{draining_unbounded, explaining, Subject};
use super::verdict::{Level, RecordedBreak, Resumed, SettlePoint};
use crate::compare::binding::Binding;
use crate::observed::{Observed, Snapshot};
use rsmc_spec::budget::Budget;
use rsmc_spec::model::{RsModel, State};

/// The start states of the segment after settle point `point` (from 1; `settle` is its
/// script index), from the cluster's `settled` objects there, each with the renaming that
/// makes every one of them itself; `Err` when the model cannot resume there, saying why.
pub fn starts(
    model: &RsModel,
    settled: &Snapshot,
    (point, settle): (usize, usize),
) -> Result<Vec<(State, Binding)>, String> {
    let states = model
        .resumed(&settled.replicasets, &settled.pods, settle)
        .map_err(|why| {
            format!(
                "an earlier settle point diverged, and the model cannot start from the cluster's objects at settle point {point}: {why}"
            )
        })?;
    let mut identity = Binding::default();
    for rs in settled.replicasets.values() {
        identity.bind_uid(rs.meta.uid, rs.meta.uid);
    }
    for pod in settled.pods.values() {
        identity.bind_uid(pod.meta.uid, pod.meta.uid);
        if pod.meta.generate_name.is_some() {
            identity.bind_name(&pod.meta.name, &pod.meta.name);
        }
    }
    Ok(states.into_iter().map(|s| (s, identity.clone())).collect())
}

/// The witness search of `recording` from the cluster's objects at the settle point ending
/// segment `diverged` (from 0), on from the next segment; `Err` when the model cannot resume
/// there, saying why.
pub(crate) fn search_after(
    recording: &Recording,
    diverged: usize,
    budget: &Budget,
) -> Result<Result<Found, Unfinished>, String> {
    let settled = &recording.observed.segments[diverged].settled;
    let from = diverged + 1;
    let starts = starts(
        recording.model,
        settled,
        (from, recording.settles[diverged]),
    )?;
    Ok(witness::search_from(recording, budget, None, from, starts))
}

/// The settle points after `diverged` (from 0) judged by the witness search from the
/// cluster's objects, where the exhaustive levels that would have carried the verdict on
/// were beyond the budget: `points` after it hold no verdict yet. Each search starts at the
/// settle point after the last divergence; the points its furthest run went through conform,
/// the one it stopped at diverges (its trace, as the search found it; its outcome is not
/// searched), and the next search starts after that one.
pub(crate) fn witnessed_after(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    mut diverged: usize,
    points: &mut [SettlePoint],
    budget: &Budget,
) {
    let draining = draining_unbounded(subject.model);
    let recording = Recording::settled(&draining, subject.origin, settles, observed);
    let budget = explaining(budget);
    while diverged + 1 < points.len() {
        let from = diverged + 1;
        let mark = Some(Resumed::at(diverged + 1));
        let conforms = |(k, p): (usize, &mut SettlePoint)| {
            let writes = observed.segments[k].events.as_ref().map_or(0, Vec::len);
            (p.outcome, p.trace) = witnessed_levels(writes);
            p.resumed = mark.clone();
        };
        let unexplained = |p: &mut SettlePoint, detail: String| {
            p.outcome = Level::Unexplained {
                detail: detail.clone(),
            };
            p.trace = Level::Unexplained { detail };
            p.resumed = mark.clone();
        };
        let searched = match search_after(&recording, diverged, &budget) {
            Ok(searched) => searched,
            Err(why) => {
                unexplained(&mut points[from], why);
                diverged = from;
                continue;
            }
        };
        match searched {
            Ok(Found::Run { .. }) => {
                points.iter_mut().enumerate().skip(from).for_each(conforms);
                return;
            }
            Ok(Found::Nothing { segment, stop, .. }) => {
                (from..segment)
                    .zip(&mut points[from..segment])
                    .for_each(conforms);
                let trace = diverging_at_stop(subject, observed, settles, segment, *stop);
                let p = &mut points[segment];
                p.trace = trace.level;
                p.outcome = Level::Unexplained {
                    detail: "not searched: the trace decided this settle point".into(),
                };
                p.divergent_step = trace.step.map(|i| i + 1);
                p.breaks = trace.breaks;
                p.written_breaks = trace.written_breaks;
                p.recorded_breaks = RecordedBreak::of(&observed.segments[segment].settled);
                p.resumed = mark.clone();
                diverged = segment;
            }
            Err(unfinished) => {
                (from..unfinished.segment)
                    .zip(&mut points[from..unfinished.segment])
                    .for_each(conforms);
                unexplained(&mut points[unfinished.segment], unfinished.to_string());
                diverged = unfinished.segment;
            }
        }
    }
}
