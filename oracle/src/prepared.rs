//! A scenario ready to explore: read and checked, compiled for a profile, and its scripted
//! model built — what `rsmc replay`, `rsmc oracle` and a conformance run all start from.

use crate::error::InputError;
use crate::judge::subject::{AfterDivergence, Subject};
use crate::scenario::{self, Compiled, NodeMap, Scenario};
use rsmc_spec::contract::Contract;
use rsmc_spec::model::RsModel;
use rsmc_spec::profile::{Profile, Semantics};
use std::path::Path;

/// A loaded scenario and its model.
pub struct Prepared {
    pub scenario: Scenario,
    pub compiled: Compiled,
    pub model: RsModel,
    /// Each scenario step as a command line.
    pub steps: Vec<String>,
    /// What the verdict does after a settle point diverges (judge on, by default).
    pub after_divergence: AfterDivergence,
    /// The contract the model follows, where the user stated one ([`Prepared::under_contract`]).
    pub contract: Option<String>,
}

impl Prepared {
    /// Load `path`; `profile` applies unless the scenario names its own.
    pub fn load(path: &Path, profile: Profile) -> Result<Prepared, InputError> {
        Prepared::from_scenario(path, scenario::load(path)?, profile)
    }

    /// [`Prepared::load`] of a scenario's text, its errors naming `path`.
    pub fn parse(path: &Path, text: &str, profile: Profile) -> Result<Prepared, InputError> {
        Prepared::from_scenario(path, scenario::load_str(path, text)?, profile)
    }

    fn from_scenario(
        path: &Path,
        scenario: Scenario,
        profile: Profile,
    ) -> Result<Prepared, InputError> {
        let compiled = scenario::compile(&scenario, profile)?;
        let mut model = RsModel::scripted(
            compiled.config.clone(),
            compiled.profile,
            compiled.script.clone(),
        )
        .map_err(|e| InputError::in_file(path, e))?;
        model.sem = scenario.feature_gates.applied(model.sem);
        let steps = scenario.steps.iter().map(|s| s.command()).collect();
        Ok(Prepared {
            scenario,
            compiled,
            model,
            steps,
            after_divergence: AfterDivergence::JudgeOn,
            contract: None,
        })
    }

    /// The same scenario judged without its `hold` and `release` steps (see
    /// [`Compiled::without_holds`]), with the same catalogue switches.
    pub fn without_holds(&self) -> Prepared {
        self.recompiled(self.compiled.without_holds())
            .expect("a valid script without some of its moves is valid")
    }

    /// The same scenario judged as run on real kubelets of `nodes` (see
    /// [`Compiled::on_real_kubelets`]), with the same catalogue switches; the error says why
    /// it cannot be.
    pub fn on_real_kubelets(&self, nodes: &[String]) -> Result<Prepared, String> {
        // One map for the model and for the steps the runner takes: they bind pods to the
        // same cluster nodes. (The compiled config's nodes are the scenario's.)
        let map = NodeMap::onto(&self.compiled.config.nodes, nodes)?;
        let mut real = self.recompiled(self.compiled.on_real_kubelets(&map)?)?;
        real.scenario.steps = map.steps(&self.scenario.steps);
        real.scenario.nodes = self.scenario.nodes.iter().map(|n| map.node(n)).collect();
        real.steps = real.scenario.steps.iter().map(|s| s.command()).collect();
        Ok(real)
    }

    fn recompiled(&self, compiled: Compiled) -> Result<Prepared, String> {
        let mut model = RsModel::scripted(
            compiled.config.clone(),
            compiled.profile,
            compiled.script.clone(),
        )?;
        model.sem = self.model.sem;
        Ok(Prepared {
            scenario: self.scenario.clone(),
            compiled,
            model,
            steps: self.steps.clone(),
            after_divergence: self.after_divergence,
            contract: self.contract.clone(),
        })
    }

    /// The same scenario judged by `sem`, whatever profile it was written for: where a
    /// run's release is known (a conformance run, a recording that names its server), its
    /// controller's behaviour is what the run must agree with
    /// ([`rsmc_spec::gates::semantics_of_release`]). Catalogue switches (`bug`, `fix`) are
    /// applied after this.
    pub fn judged_as(mut self, sem: Semantics) -> Prepared {
        self.compiled.profile = sem.profile;
        self.model.profile = sem.profile;
        self.model.sem = sem;
        self
    }

    /// The gates the scenario is about that `sem` has switched the other way, as
    /// `NAME=on|off` the scenario wants: a cluster judged by `sem` cannot run it.
    pub fn gates_unlike(&self, sem: &Semantics) -> Vec<String> {
        self.scenario
            .feature_gates
            .0
            .iter()
            .filter(|(g, on)| g.is_on(sem) != **on)
            .map(|(g, on)| format!("{g}={on}"))
            .collect()
    }

    /// The profile the scenario names for itself, when it differs from the one it is
    /// judged by.
    pub fn written_for_another_profile(&self) -> Option<Profile> {
        self.scenario.profile.filter(|p| *p != self.model.profile)
    }

    /// What the oracle judges and replays.
    pub fn subject(&self) -> Subject<'_> {
        Subject {
            name: &self.scenario.name,
            model: &self.model,
            origin: &self.compiled.origin,
            steps: &self.steps,
            after_divergence: self.after_divergence,
            contract: self.contract.as_deref(),
        }
    }

    /// The same scenario judged by `contract`'s behaviour, whatever the cluster's release:
    /// an implementation written for another release is judged by what it means to follow,
    /// and reports name the contract.
    pub fn under_contract(self, contract: &Contract) -> Prepared {
        let mut p = self.judged_as(contract.sem);
        p.contract = Some(contract.label());
        p
    }

    /// The same scenario, its verdicts leaving the settle points after the first divergence
    /// unjudged where `stop` (`--stop-at-first-divergence`).
    pub fn stopping_at_first_divergence(mut self, stop: bool) -> Prepared {
        if stop {
            self.after_divergence = AfterDivergence::Stop;
        }
        self
    }
}
