//! Replaying a scenario in the model: what a cluster may show at each settle point.
//!
//! Each settle point lists every state the model may settle in there, from every state it may
//! have settled in at the previous one, as `kubectl get rs -o wide`, the status line (every
//! count of `status` and the observed generation) and `kubectl get pods -o wide
//! --show-labels` tables. Usually there is one; where the scenario races the controller (a
//! step issued before the previous one settled, a ranking tie) there are several, and each is
//! shown: the allowed set explained, not only counted.

use crate::explore::outcomes;
use crate::judge::subject::Subject;
use crate::views::render;
use crate::views::side_by_side;
use rsmc_spec::api::ApiServer;
use rsmc_spec::budget::{Budget, Exhausted};
use rsmc_spec::model::State;
use serde::Serialize;
use stateright::Model;
use std::collections::{BTreeMap, BTreeSet};

/// One settle point of a replay.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// 1-based.
    pub index: usize,
    /// The scenario steps that lead here, numbered from 1.
    pub steps: Vec<String>,
    /// Each view the model may settle in, distinct up to renaming, as kubectl tables.
    pub outcomes: Vec<String>,
    /// States the exploration visited for this segment.
    pub explored: usize,
    /// Where the model settles nowhere because every run breaks a safety property first (a
    /// violation ends a run unless the replay goes past violations): the properties the
    /// runs break, found by following them past the violation. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken: Vec<String>,
}

/// A whole replay.
#[derive(Clone, Debug, Serialize)]
pub struct Replay {
    pub scenario: String,
    pub profile: String,
    pub points: Vec<Point>,
}

/// The kubectl views of a model state.
pub fn views(s: &State) -> String {
    let api = ApiServer {
        replicasets: s.api.replicasets.clone(),
        pods: s.api.pods.clone(),
        ..ApiServer::default()
    };
    format!(
        "{}\n$ kubectl get pods -o wide --show-labels\n{}",
        render::rs_views(&api),
        render::get_pods_wide(&api)
    )
}

/// Replay `subject` in the model.
pub fn replay(subject: &Subject, budget: &Budget) -> Result<Replay, Exhausted> {
    let script = subject.model.script.as_ref().expect("a scripted model");
    let mut starts: Vec<State> = subject.model.init_states();
    let mut points = Vec::new();
    let mut first = 0;
    for (k, settle) in script.settle_indices().into_iter().enumerate() {
        let mut step_ids: Vec<usize> = subject.origin[first..=settle].to_vec();
        step_ids.dedup();
        let (found, explored) = outcomes(subject.model, &starts, settle, &BTreeSet::new(), budget)?;
        let broken = if found.is_empty() && !subject.model.past_violations {
            let past = subject.model.clone().past_violations();
            let (beyond, _) = outcomes(&past, &starts, settle, &BTreeSet::new(), budget)?;
            let names: BTreeSet<String> = beyond
                .iter()
                .flat_map(|s| s.ghost.violated.iter().map(|p| p.to_string()))
                .collect();
            names.into_iter().collect()
        } else {
            Vec::new()
        };
        // One view per outcome up to renaming: states that differ only in which generated
        // pod is which are the same outcome to a user.
        let mut by_shape: BTreeMap<String, String> = BTreeMap::new();
        for s in &found {
            by_shape
                .entry(side_by_side::normalised_tables(
                    &s.api.replicasets,
                    &s.api.pods,
                ))
                .or_insert_with(|| views(s));
        }
        let shown: Vec<String> = by_shape.into_values().collect();
        points.push(Point {
            index: k + 1,
            steps: step_ids
                .iter()
                .map(|i| format!("{}. {}", i + 1, subject.steps[*i]))
                .collect(),
            outcomes: shown,
            explored,
            broken,
        });
        starts = found;
        first = settle + 1;
    }
    Ok(Replay {
        scenario: subject.name.to_string(),
        profile: subject.model.profile.name().to_string(),
        points,
    })
}

/// A replay as text.
pub fn render(r: &Replay) -> String {
    let mut out = format!(
        "rsmc replay: scenario {} (profile {})\n",
        r.scenario, r.profile
    );
    for p in &r.points {
        out.push_str(&format!("\n== settle point {}, after:\n", p.index));
        for s in &p.steps {
            out.push_str(&format!("   {s}\n"));
        }
        let n = p.outcomes.len();
        match n {
            0 if !p.broken.is_empty() => out.push_str(&format!(
                "the model never settles here without breaking {}: a violation ends a run, as in `rsmc check` (--past-violations follows the runs past it)\n",
                p.broken.join(", ")
            )),
            0 => out.push_str("the model never settles here\n"),
            1 => out.push_str("the model settles in one state:\n\n"),
            _ => out.push_str(&format!("the model may settle in {n} states:\n")),
        }
        for (i, o) in p.outcomes.iter().enumerate() {
            if n > 1 {
                out.push_str(&format!("\n-- state {} of {n}\n", i + 1));
            }
            out.push_str(o);
        }
    }
    out
}
