//! The trace file: a counterexample (or any model run) as JSON.
//!
//! Schema `rsmc-trace/v1`:
//!
//! ```text
//! {
//!   "schema": "rsmc-trace/v1",
//!   "profile": "k8s-1.20" | "upstream",
//!   "config": { … the full configuration, as `rsmc check --config` takes it … },
//!   "property": "<name of the violated property, or null>",
//!   "environment": [ <Action>, … ],        // the environment's moves only, in order
//!   "steps": [
//!     {
//!       "index": 1,                         // 1-based; step 0 is the initial state
//!       "actor": "environment" | "system",
//!       "action": <Action>,                 // externally tagged, e.g. {"ScaleReplicaSet": {"name": "frontend", "replicas": 1}}
//!       "description": "user: kubectl scale rs/frontend --replicas=1",
//!       "replicasets": { "<name>": <ReplicaSet> },   // the API server's objects after the step
//!       "pods": { "<name>": <Pod> },
//!       "others": [ <OtherOwner> ]          // owners of other kinds, only where there are any
//!     }, …
//!   ],
//!   "initial": { "replicasets": {…}, "pods": {…} },
//!   "cycleStart": 12,                       // only for a liveness violation that loops:
//!                                           // the step (1-based) the cycle begins with; the
//!                                           // last step returns to the state before it
//!   "bug": "no-expectations",               // only when `--bug` switched one on
//!   "fixes": ["delete-precondition"]        // only when `--fix` switched some on
//! }
//! ```
//!
//! A liveness violation is a lasso or a stuck run. For a lasso, steps from `cycleStart` on
//! repeat forever; for a stuck run (no `cycleStart`), the last state is one where no system
//! move is enabled and the cluster has not converged.
//!
//! Objects are the spec's own types (`rsmc_spec::object`) serialised with serde; UIDs and
//! resourceVersions are the model's small integers. The environment list is what a scenario
//! replays; the steps are what the model says happened in between.

use rsmc_spec::api::View;
use rsmc_spec::bugs::{Bug, Fix};
use rsmc_spec::config::Config;
use rsmc_spec::model::{Action, RsModel, State};
use rsmc_spec::object::{OtherOwner, Pod, ReplicaSet};
use rsmc_spec::profile::Profile;
use serde::{Deserialize, Serialize};

/// The schema identifier written into every trace.
pub const SCHEMA: &str = "rsmc-trace/v1";

/// The API server's objects at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Objects {
    pub replicasets: View<ReplicaSet>,
    pub pods: View<Pod>,
    /// The owners of other kinds (written only where there are any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherOwner>,
}

impl Objects {
    pub fn of(state: &State) -> Self {
        Objects {
            replicasets: state.api.replicasets.clone(),
            pods: state.api.pods.clone(),
            others: state.api.others.clone(),
        }
    }
}

/// Who took a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Actor {
    Environment,
    System,
}

/// One step of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub index: usize,
    pub actor: Actor,
    pub action: Action,
    pub description: String,
    #[serde(flatten)]
    pub objects: Objects,
}

/// A whole trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub schema: String,
    pub profile: String,
    pub config: Config,
    pub property: Option<String>,
    pub environment: Vec<Action>,
    pub initial: Objects,
    pub steps: Vec<Step>,
    /// For a liveness violation that loops, the 1-based index of the first step of the cycle.
    #[serde(
        default,
        rename = "cycleStart",
        skip_serializing_if = "Option::is_none"
    )]
    pub cycle_start: Option<usize>,
    /// The catalogued bug the run's model had switched on (`rsmc check --bug`), by name: a
    /// reader rebuilds the same model ([`Trace::model`]), since without the bug the run is
    /// not one of the model's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bug: Option<String>,
    /// The proposed fixes switched on (`--fix`), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
}

impl Trace {
    /// Build a trace from a path of the model: its states and the actions between them.
    pub fn from_path(
        model: &RsModel,
        property: Option<&str>,
        states: &[State],
        actions: &[Action],
    ) -> Trace {
        let steps = actions
            .iter()
            .zip(states.windows(2))
            .enumerate()
            .map(|(i, (action, pair))| Step {
                index: i + 1,
                actor: if action.is_environment() {
                    Actor::Environment
                } else {
                    Actor::System
                },
                action: action.clone(),
                description: model.describe(&pair[0], action),
                objects: Objects::of(&pair[1]),
            })
            .collect();
        Trace {
            schema: SCHEMA.to_string(),
            profile: model.profile.name().to_string(),
            config: model.config.clone(),
            property: property.map(str::to_string),
            environment: actions
                .iter()
                .filter(|a| a.is_environment())
                .cloned()
                .collect(),
            initial: Objects::of(&states[0]),
            steps,
            cycle_start: None,
            bug: model.sem.bug.map(|b| b.to_string()),
            fixes: Fix::ALL
                .into_iter()
                .filter(|f| model.sem.fixed(*f) && !model.profile.semantics().fixed(*f))
                .map(|f| f.to_string())
                .collect(),
        }
    }

    /// The model the trace is a run of: its configuration, `profile`, and the bug and
    /// fixes it records. [`parse`] has checked their names.
    pub fn model(&self, profile: Profile) -> RsModel {
        let mut model = RsModel::new(self.config.clone(), profile);
        let (bug, fixes) = self.switches().expect("checked when parsed");
        model.sem = model.sem.switched(bug, &fixes);
        model
    }

    /// The recorded bug and fixes, parsed.
    fn switches(&self) -> Result<(Option<Bug>, Vec<Fix>), String> {
        let bug = self
            .bug
            .as_deref()
            .map(|b| b.parse::<Bug>().map_err(|e| format!("bug: {e}")))
            .transpose()?;
        let fixes = self
            .fixes
            .iter()
            .enumerate()
            .map(|(i, f)| f.parse::<Fix>().map_err(|e| format!("fixes[{i}]: {e}")))
            .collect::<Result<_, _>>()?;
        Ok((bug, fixes))
    }
}

/// Parse an `rsmc-trace/v1` file's text (`file` names it in errors): the trace and the
/// profile it was written under. The error names the file and the line and column, or the
/// field, and is meant to be printed as it is.
pub fn parse(
    file: &std::path::Path,
    text: &str,
) -> Result<(Trace, rsmc_spec::profile::Profile), String> {
    let name = file.display();
    let de = &mut serde_json::Deserializer::from_str(text);
    let trace: Trace = serde_path_to_error::deserialize(de)
        .map_err(|e| crate::error::InputError::from_json(file, e).to_string())?;
    if trace.schema != SCHEMA {
        return Err(format!(
            "{name}: schema: expected {SCHEMA:?}, got {:?}",
            trace.schema
        ));
    }
    let profile = trace
        .profile
        .parse()
        .map_err(|e| format!("{name}: profile: {e}"))?;
    trace.switches().map_err(|e| format!("{name}: {e}"))?;
    Ok((trace, profile))
}
