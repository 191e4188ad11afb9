//! Whether the cluster refused what the scenario expects it to refuse.
//!
//! A step written with `refused: REASON` is judged twice. On the model's side the script
//! goes past it only when the model's API server refuses it with that reason
//! (`rsmc_spec::model::ScriptStep::Refused`): otherwise no run matches the recording, and the
//! divergence says what the model's API server answered instead ([validate](super::search::validate)). On the
//! cluster's side, here: the recording must carry the refusal (`refused` of the step's
//! segment, [`crate::observed`]) with the same reason. A refused request writes nothing, so
//! the events alone cannot tell a refusal with another reason from the expected one.

use super::subject::Subject;
use super::verdict::{Level, SettlePoint, Verdict};
use crate::observed::Observed;
use rsmc_spec::api::Reason;
use rsmc_spec::model::ScriptStep;

/// A step expected to be refused that the cluster answered otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The scenario step (from 0).
    pub step: usize,
    /// The segment it sends its request in.
    pub segment: usize,
    pub expected: Reason,
    /// What the cluster answered, in words.
    pub seen: String,
}

/// Every step of `subject` expected to be refused whose recorded answer is not that refusal;
/// `settles` are the script positions of its settle points.
pub fn mismatches(subject: &Subject, settles: &[usize], observed: &Observed) -> Vec<Mismatch> {
    let script = subject.model.script.as_ref().expect("a scripted model");
    let mut out = Vec::new();
    for (position, step) in script.steps.iter().enumerate() {
        let ScriptStep::Refused { reason, .. } = step else {
            continue;
        };
        let step = subject.origin[position];
        let Some(segment) = settles.iter().position(|&s| s >= position) else {
            continue;
        };
        let Some(recorded) = observed.segments.get(segment) else {
            continue;
        };
        let refusal = recorded.refused.iter().find(|r| r.step == step);
        let seen = match refusal {
            Some(r) if r.reason == reason.name() => continue,
            Some(r) if r.message.is_empty() => format!("refused it: {}", r.reason),
            Some(r) => format!("refused it: {}: {}", r.reason, r.message),
            None if recorded
                .events
                .iter()
                .flatten()
                .any(|e| e.step == Some(step)) =>
            {
                "accepted it: the recording shows its writes".to_string()
            }
            None => "answered something the recording does not show: it has neither a refusal of the step nor a write of it".to_string(),
        };
        out.push(Mismatch {
            step,
            segment,
            expected: *reason,
            seen,
        });
    }
    out
}

/// `verdict` with `mismatches` in it: each makes its settle point's trace diverge (where an
/// earlier divergence has not already decided it) and the run not conform.
pub fn apply(verdict: &mut Verdict, mismatches: &[Mismatch], subject: &Subject) {
    for m in mismatches {
        verdict.conforms = false;
        let Some(point) = verdict.settle_points.get_mut(m.segment) else {
            continue;
        };
        if point.trace.diverges() || matches!(point.trace, Level::NotJudged) {
            continue;
        }
        let command = subject.steps.get(m.step).map_or("", String::as_str);
        *point = SettlePoint {
            trace: Level::Diverges {
                detail: format!(
                    "step {} is expected to be refused ({}), and the cluster {}",
                    m.step + 1,
                    m.expected,
                    m.seen
                ),
                allowed: vec![format!("refuse `{command}`: {}", m.expected)],
                seen: m.seen.clone(),
                side_by_side: None,
                fields: vec![],
            },
            divergent_step: Some(m.step + 1),
            ..point.clone()
        };
    }
}
