//! That a recording fits the scenario it is judged against: its scenario's name, one segment
//! per settle, every event's step one the scenario has; and where the settles are in the
//! model's script.

use super::subject::Subject;
use super::verdict::JudgeError;
use crate::observed::Observed;

/// The script indices of the scenario's settles, once the recording is known to be of this
/// scenario and to have one segment per settle.
pub(crate) fn check_shape(
    subject: &Subject,
    observed: &Observed,
) -> Result<Vec<usize>, JudgeError> {
    if let Some(step) = observed.stopped_at {
        return Err(JudgeError::Stopped { step });
    }
    check_scenario(subject, observed)?;
    let script = subject.model.script.as_ref().expect("a scripted model");
    let settles = script.settle_indices();
    if settles.len() != observed.segments.len() {
        return Err(JudgeError::Segments {
            observed: observed.segments.len(),
            expected: settles.len(),
        });
    }
    super::step_numbering::check(subject, &settles, observed)?;
    Ok(settles)
}

/// That the recording is of the subject's scenario.
pub(crate) fn check_scenario(subject: &Subject, observed: &Observed) -> Result<(), JudgeError> {
    if observed.scenario != subject.name {
        return Err(JudgeError::Scenario {
            observed: observed.scenario.clone(),
            expected: subject.name.to_string(),
        });
    }
    Ok(())
}
