//! Judging an import in memory, exactly as `rsmc oracle` judges the two files `rsmc import`
//! writes: the scenario read back from its YAML, the trace checked against the
//! `rsmc-observed/v1` schema, the model set to the recorded release's behaviour. The tests
//! and `rsmc monitor --judge` use it, so neither can judge an import more kindly than a user
//! who ran the two commands.

use super::Imported;
use crate::judge::judge;
use crate::judge::verdict::{JudgeError, Verdict};
use crate::observed;
use crate::prepared::Prepared;
use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::bugs::{Bug, Fix};
use rsmc_spec::profile::Profile;
use std::path::PathBuf;

/// Why an import has no verdict.
#[derive(Debug, thiserror::Error)]
pub enum NotJudged {
    /// What was imported does not read back as `rsmc oracle` would read it (an import bug),
    /// named by the file a user would have written.
    #[error("{0}")]
    Unreadable(String),
    /// The judgement itself stopped: the trace's file, and why (a budget, most often).
    #[error("{}: cannot judge: {error}", observed.display())]
    Judge {
        observed: PathBuf,
        error: Box<JudgeError>,
    },
}

impl NotJudged {
    /// The budget a search ran out of, if that is why there is no verdict: the input is
    /// fine, and a larger budget may judge it.
    pub fn exhausted(&self) -> Option<&Exhausted> {
        match self {
            NotJudged::Judge { error, .. } => error.exhausted(),
            NotJudged::Unreadable(_) => None,
        }
    }
}

impl Imported {
    /// The verdict on this import, within `budget`; `Err` says why there is none (an import
    /// that does not read back, a model too large for the budget), naming the file a user
    /// would have written.
    pub fn judge(&self, budget: &Budget) -> Result<Verdict, NotJudged> {
        self.judge_switched(budget, None, &[])
    }

    /// [`Imported::judge`] with the catalogue's switches on, as `rsmc oracle --bug B --fix F`.
    pub fn judge_switched(
        &self,
        budget: &Budget,
        bug: Option<Bug>,
        fixes: &[Fix],
    ) -> Result<Verdict, NotJudged> {
        let unreadable = |e: String| NotJudged::Unreadable(e);
        let name = &self.observed.scenario;
        let scenario_path = PathBuf::from(format!("{name}.yaml"));
        let observed_path = PathBuf::from(format!("{name}.observed.json"));
        let text = serde_json::to_string(&self.observed).map_err(|e| unreadable(e.to_string()))?;
        let observed =
            observed::parse(&observed_path, &text).map_err(|e| unreadable(e.to_string()))?;
        let release = observed
            .release_semantics()
            .map_err(|e| unreadable(format!("{}: {e}", observed_path.display())))?;
        let mut prepared =
            Prepared::parse(&scenario_path, &self.scenario.to_yaml(), Profile::K8s120)
                .map_err(|e| unreadable(e.to_string()))?;
        if let Some(sem) = release {
            prepared = prepared.judged_as(sem);
        }
        prepared.model.sem = prepared.model.sem.switched(bug, fixes);
        judge(&prepared.subject(), &observed, budget).map_err(|error| NotJudged::Judge {
            observed: observed_path,
            error: Box::new(error),
        })
    }
}
