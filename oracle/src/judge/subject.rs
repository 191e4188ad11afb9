//! What is judged: a compiled scenario ([`Subject`]), what a judgement of it follows, and
//! the model and budget the searches take of it.

use crate::observed::Observed;
use rsmc_spec::budget::Budget;
use rsmc_spec::model::RsModel;

/// What is judged: a compiled scenario.
pub struct Subject<'a> {
    pub name: &'a str,
    pub model: &'a RsModel,
    /// Script step index → scenario step index.
    pub origin: &'a [usize],
    /// Each scenario step as a command line.
    pub steps: &'a [String],
    /// Whether the settle points after a divergence are judged ([`super::resume`]).
    pub after_divergence: AfterDivergence,
    /// The contract the model's behaviour was taken from, where the user stated one
    /// (`rsmc_spec::contract`): reports name it instead of the recorded release.
    pub contract: Option<&'a str>,
}

/// What becomes of the settle points after one that diverged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterDivergence {
    /// Each is judged from the cluster's objects at the settle point before it
    /// ([`super::resume`]), so that a report lists every divergence.
    JudgeOn,
    /// None is judged: the verdict stops at the first divergence.
    Stop,
}

/// What a judgement follows, in words: the recorded release (`v1.37.2`) where the model
/// judges by its behaviour, else the profile with its switches.
pub(crate) fn judged_release(subject: &Subject, observed: &Observed) -> String {
    if let Some(contract) = subject.contract {
        return contract.to_string();
    }
    match (
        observed.cluster["server"].as_str(),
        observed.release_semantics(),
    ) {
        (Some(server), Ok(Some(sem))) if sem == subject.model.sem => server.to_string(),
        _ => {
            let switches: String = subject
                .model
                .sem
                .switches()
                .iter()
                .map(|s| format!(", {s}"))
                .collect();
            format!("profile {}{switches}", subject.model.profile.name())
        }
    }
}

/// `model` as the witness search runs it: a backlog the scenario releases does not hold the
/// controller's writes back until it is delivered
/// (`rsmc_spec::config::InformerConfig::drain_unbounded`). A recording shows how far behind
/// the controller wrote; the lag bound only keeps exhaustive searches finite. Everything else
/// is the model the exhaustive levels explain divergences with.
pub(crate) fn draining_unbounded(model: &RsModel) -> RsModel {
    let mut m = model.clone();
    m.config.informer.drain_unbounded = true;
    m
}

/// How many states the exhaustive levels may visit per search to explain a divergence the
/// witness search has already decided: enough for every scenario of the suite, few enough
/// that a large recording's verdict comes in seconds.
pub const EXPLAIN_LIMIT: usize = 250_000;

/// The budget of an explanation: `budget`, with at most [`EXPLAIN_LIMIT`] states.
pub(crate) fn explaining(budget: &Budget) -> Budget {
    budget.with_states(
        budget
            .states
            .map_or(EXPLAIN_LIMIT, |n| n.min(EXPLAIN_LIMIT)),
    )
}

/// The scenario steps (indices) from the settle before `k` to the settle `k`.
pub(crate) fn step_ids(subject: &Subject, settles: &[usize], k: usize) -> Vec<usize> {
    let first = if k == 0 { 0 } else { settles[k - 1] + 1 };
    let mut ids: Vec<usize> = subject.origin[first..=settles[k]].to_vec();
    ids.dedup();
    ids
}

/// Those steps as numbered command lines.
pub(crate) fn step_lines(subject: &Subject, ids: &[usize]) -> Vec<String> {
    ids.iter()
        .map(|i| format!("{}. {}", i + 1, subject.steps[*i]))
        .collect()
}
