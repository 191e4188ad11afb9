//! Which scenario step wrote an observed event (`step` in `rsmc-observed/v1`), checked
//! against the scenario before anything is judged.
//!
//! Steps are numbered from 0 in the order the scenario lists them, `settle`, `wait`, `hold`
//! and the faults included: the number is the index into the scenario's `steps`. (Verdicts
//! list the same step as `N+1.`.) Only a step that writes as a client of the API server — an
//! apply, a scale, a delete, a label, the scheduler's binding, the kubelet's reports
//! (`rsmc_spec::model::Action::is_client_write`) — can own an event, and only in the segment
//! that ends at the first settle point after it.
//!
//! The same holds for the `step` of a recorded refusal (`refused` of a segment): only a step
//! that sends a request can have it refused.
//!
//! A `step` that breaks this is a fault of whoever made the recording, so it is refused as bad
//! input: judged, it would read as a controller writing what only a user may (a converter
//! numbering from 1 shifts every user write onto the next step), or as a user's write the
//! scenario never made.

use super::subject::Subject;
use crate::observed::Observed;
use std::collections::BTreeMap;

/// An event's `step` that no step of the scenario can be.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct StepError {
    /// Where in the observed file: `segments[K].events[J].step`.
    pub field: String,
    /// What is wrong, and which steps could write there.
    pub message: String,
}

/// Check every event's `step` of `observed` against the scenario of `subject`, whose settle
/// points are at the script positions `settles`.
pub fn check(subject: &Subject, settles: &[usize], observed: &Observed) -> Result<(), StepError> {
    let writes_in = writing_steps(subject, settles);
    for (k, segment) in observed.segments.iter().enumerate() {
        for (j, e) in segment.events.iter().flatten().enumerate() {
            let Some(step) = e.step else { continue };
            if writes_in.get(&step) == Some(&k) {
                continue;
            }
            let problem = match (subject.steps.get(step), writes_in.get(&step)) {
                (None, _) => missing(subject, step),
                (Some(command), Some(&other)) => format!(
                    "step {step} (`{command}`) writes in segment {other} (before settle point {}), not in this one",
                    other + 1
                ),
                (Some(command), None) => {
                    format!("step {step} (`{command}`) makes no write, so no event is its own")
                }
            };
            return Err(StepError {
                field: format!("segments[{k}].events[{j}].step"),
                message: format!("{problem}; {}", expected(subject, &writes_in, k)),
            });
        }
        for (j, r) in segment.refused.iter().enumerate() {
            if writes_in.get(&r.step) == Some(&k) {
                continue;
            }
            let problem = match subject.steps.get(r.step) {
                None => missing(subject, r.step),
                Some(command) => format!(
                    "step {} (`{command}`) sends no request in this segment, so none of its requests can be refused here",
                    r.step
                ),
            };
            return Err(StepError {
                field: format!("segments[{k}].refused[{j}].step"),
                message: format!("{problem}; {}", expected(subject, &writes_in, k)),
            });
        }
    }
    Ok(())
}

/// Why `step` names no step of the scenario.
fn missing(subject: &Subject, step: usize) -> String {
    format!(
        "step {step} does not exist: the scenario has {} steps, numbered from 0",
        subject.steps.len()
    )
}

/// Each scenario step that writes, with the segment it writes in.
fn writing_steps(subject: &Subject, settles: &[usize]) -> BTreeMap<usize, usize> {
    let script = subject.model.script.as_ref().expect("a scripted model");
    let mut writes_in = BTreeMap::new();
    let mut first = 0;
    for (k, &settle) in settles.iter().enumerate() {
        for position in first..=settle {
            if script.steps[position].writes() {
                writes_in.insert(subject.origin[position], k);
            }
        }
        first = settle + 1;
    }
    writes_in
}

/// What a `step` of segment `k` may be.
fn expected(subject: &Subject, writes_in: &BTreeMap<usize, usize>, k: usize) -> String {
    let here: Vec<String> = writes_in
        .iter()
        .filter(|(_, &segment)| segment == k)
        .map(|(step, _)| format!("{step} (`{}`)", subject.steps[*step]))
        .collect();
    let rule = "steps are numbered from 0, settle and wait included";
    if here.is_empty() {
        format!("{rule}, and no step writes in segment {k}: its events are the controller's and the garbage collector's, with no `step`")
    } else {
        format!("{rule}; in segment {k} these write: {}", here.join(", "))
    }
}
