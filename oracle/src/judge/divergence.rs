//! Where a recording diverges, as the trace level says it: the recorded write no model run
//! makes ([`diverging_trace`]), where the witness search's furthest run stopped
//! ([`diverging_at_stop`]), the property the divergent write breaks, and the levels of a
//! settle point a found run went through ([`witnessed_levels`]).

use super::broken::broken_by;
use super::search::validate::Divergence;
use super::search::witness;
use super::subject::{step_ids, Subject};
use super::verdict::Level;
use crate::observed::{Event, Observed, Snapshot};

/// The levels of a settle point a run the witness search found went through, when the
/// levels' exhaustive searches were not made: its `writes` recorded writes are a run, and it
/// settles as recorded.
pub(crate) fn witnessed_levels(writes: usize) -> (Level, Level) {
    (
        Level::Conforms {
            detail: "the settled state is one a run that produces the recorded writes reaches"
                .into(),
        },
        Level::Conforms {
            detail: format!("{writes} recorded writes are a run of the model"),
        },
    )
}

/// The trace level where every recorded write is a model run but none ends in the settled
/// state.
pub(crate) fn misses_writes(writes: usize) -> Level {
    Level::Diverges {
        detail: "every recorded write is a model run, but none of those runs ends in the recorded settled state: the recording misses writes".into(),
        allowed: vec![],
        seen: format!("{writes} recorded writes"),
        side_by_side: None,
        fields: vec![],
    }
}

/// The trace level at a divergence, and what its divergent write breaks.
pub(crate) struct Diverging {
    pub level: Level,
    /// The scenario step (0-based) it starts at.
    pub step: Option<usize>,
    pub breaks: Option<&'static str>,
    pub written_breaks: Option<&'static str>,
}

impl Diverging {
    /// Every recorded write is a run, but none ends in the settled state.
    pub(crate) fn misses_writes(writes: usize) -> Diverging {
        Diverging {
            level: misses_writes(writes),
            step: None,
            breaks: None,
            written_breaks: None,
        }
    }
}

/// How the witness search's furthest run stopped in `segment` (from 0), as the trace level
/// there ([`diverging_trace`]).
pub(crate) fn diverging_at_stop(
    subject: &Subject,
    observed: &Observed,
    settles: &[usize],
    segment: usize,
    stop: witness::Stop,
) -> Diverging {
    let events = observed.segments[segment]
        .events
        .as_deref()
        .unwrap_or_default();
    match stop {
        witness::Stop::MissesWrites => Diverging::misses_writes(events.len()),
        witness::Stop::Diverges(d) => {
            let empty = Snapshot::default();
            let before = match segment {
                0 => &empty,
                k => &observed.segments[k - 1].settled,
            };
            diverging_trace(
                subject,
                before,
                events,
                d,
                &step_ids(subject, settles, segment),
            )
        }
    }
}

/// The trace level at a divergence, the scenario step it starts at, the property the
/// divergent write breaks and, where it breaks none, the convergence condition the status it
/// writes breaks ([`super::broken::condition_written`]).
pub(crate) fn diverging_trace(
    subject: &Subject,
    before: &Snapshot,
    events: &[Event],
    d: Divergence,
    step_ids: &[usize],
) -> Diverging {
    let breaks = broken_by(before, events, d.event, &subject.model.sem);
    let written_breaks = breaks
        .is_none()
        .then(|| super::broken::condition_written(before, events, d.event, d.closest.as_ref()))
        .flatten();
    let step = d.stuck_at.or_else(|| {
        events[..d.event.min(events.len())]
            .iter()
            .rev()
            .find_map(|e| e.step)
            .or(step_ids.first().copied())
    });
    let mut allowed = d.allowed.clone();
    if d.could_settle {
        allowed.push("settle here, writing nothing more".into());
    }
    Diverging {
        level: Level::Diverges {
            detail: format!(
                "recorded event {} of this segment is not a write the model can make at that point",
                d.event + 1
            ),
            allowed,
            seen: d.seen,
            side_by_side: None,
            fields: d.fields,
        },
        step,
        breaks,
        written_breaks,
    }
}
