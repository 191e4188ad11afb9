//! The oracle's verdict on an observed run of a scenario, at two levels.
//!
//! - **Outcome.** At each settle point the cluster's objects must be, up to renaming, one of
//!   the quiescent states the model reaches through that segment from the states that matched
//!   the previous settle point. The model states carried from one settle point to the next
//!   are full states (expectations and all), so hidden controller memory is carried too.
//! - **Trace.** The recorded writes between two settle points must be a run of the model,
//!   internal steps hidden ([`crate::validate`]).
//!
//! A run conforms when every settle point does at both levels (the trace level where events
//! were recorded). The verdict names the first divergent step, says what the model allowed
//! and shows what was seen: for outcomes, the closest allowed state beside the observed one
//! as kubectl tables.

use crate::binding::{match_objects, Binding, ModelObjects};
use crate::broken::broken_by;
use crate::explore::{outcomes, TooLarge};
use crate::observed::{Observed, Snapshot};
use crate::side_by_side;
use crate::validate::{ends_matching, validate, Segment, Validation};
use rsmc_spec::bugs::{Status, CATALOGUE};
use rsmc_spec::model::{RsModel, State};
use serde::Serialize;
use stateright::Model;

/// What is judged: a compiled scenario.
pub struct Subject<'a> {
    pub name: &'a str,
    pub model: &'a RsModel,
    /// Script step index → scenario step index.
    pub origin: &'a [usize],
    /// Each scenario step as a command line.
    pub steps: &'a [String],
}

/// The verdict of one level at one settle point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Level {
    Conforms {
        detail: String,
    },
    Diverges {
        detail: String,
        /// What the model allowed, one entry per alternative.
        allowed: Vec<String>,
        /// What the cluster did.
        seen: String,
        /// Model and cluster side by side (outcomes only).
        #[serde(skip_serializing_if = "Option::is_none")]
        side_by_side: Option<String>,
    },
    /// No events were recorded for this segment.
    NotRecorded,
    /// An earlier settle point diverged at this level; nothing to judge from.
    NotJudged,
}

impl Level {
    fn diverges(&self) -> bool {
        matches!(self, Level::Diverges { .. })
    }
}

/// The verdict at one settle point.
#[derive(Clone, Debug, Serialize)]
pub struct SettlePoint {
    /// 1-based.
    pub index: usize,
    /// The scenario steps that led here, numbered from 1.
    pub steps: Vec<String>,
    pub outcome: Level,
    pub trace: Level,
    /// The scenario step where the divergence starts, numbered from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergent_step: Option<usize>,
    /// The safety property the first divergent write breaks, when one does
    /// ([`crate::broken`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaks: Option<&'static str>,
}

/// The whole verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub scenario: String,
    pub profile: String,
    /// The catalogue switches of the model judged by (`bug NAME`, `fix NAME`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<String>,
    pub conforms: bool,
    pub settle_points: Vec<SettlePoint>,
    /// Safety properties that every model run matching a conforming recording breaks: the
    /// cluster did what the model allows, and what it allows there is an upstream race
    /// (each with the catalogue's label, or saying that no open entry names it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken_as_modelled: Vec<String>,
    /// How the verdict was reached, when that needs saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Verdict {
    /// The property the run's first divergent write breaks, if any.
    pub fn breaks(&self) -> Option<&'static str> {
        self.settle_points.iter().find_map(|p| p.breaks)
    }
}

/// Why a run could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("the observed trace has {observed} settle points but the scenario has {expected}")]
    Segments { observed: usize, expected: usize },
    #[error("the observed trace is of scenario {observed:?}, not {expected:?}")]
    Scenario { observed: String, expected: String },
    #[error(transparent)]
    TooLarge(#[from] TooLarge),
}

/// Judge `observed` against the model of `subject`.
///
/// First by the model whose runs end at a safety violation (the model checker's, and the
/// smaller search); a run that conforms there is a run of upstream's behaviour that went
/// through no race. Otherwise by the model whose runs go on past violations: a cluster that
/// went through an upstream race (a scenario can force one) did what upstream does, and the
/// verdict says which properties every such run breaks. When that larger search is too
/// large, the first verdict stands, with a note saying so.
pub fn judge(subject: &Subject, observed: &Observed, limit: usize) -> Result<Verdict, JudgeError> {
    let first = judge_by(subject, observed, limit)?;
    if first.conforms || subject.model.past_violations {
        return Ok(first);
    }
    let model = subject.model.clone().past_violations();
    let past = Subject {
        model: &model,
        ..*subject
    };
    match judge_by(&past, observed, limit) {
        Err(JudgeError::TooLarge(t)) => Ok(Verdict {
            note: Some(format!(
                "judged by the model's runs that stop at a safety violation: with the runs that go on past one, the model explores more than {} states",
                t.limit
            )),
            ..first
        }),
        other => other,
    }
}

/// Judge `observed` against `subject.model` as it is.
fn judge_by(subject: &Subject, observed: &Observed, limit: usize) -> Result<Verdict, JudgeError> {
    if observed.scenario != subject.name {
        return Err(JudgeError::Scenario {
            observed: observed.scenario.clone(),
            expected: subject.name.to_string(),
        });
    }
    let script = subject.model.script.as_ref().expect("a scripted model");
    let settles = script.settle_indices();
    if settles.len() != observed.segments.len() {
        return Err(JudgeError::Segments {
            observed: observed.segments.len(),
            expected: settles.len(),
        });
    }
    let init = subject.model.init_states();
    let mut by_outcome: Vec<(State, Binding)> = init
        .iter()
        .map(|s| (s.clone(), Binding::default()))
        .collect();
    let mut by_trace = by_outcome.clone();
    let mut points = Vec::new();
    let mut previous_settle: Option<usize> = None;
    let empty = Snapshot::default();
    for (k, (settle, segment)) in settles.iter().zip(&observed.segments).enumerate() {
        let first = previous_settle.map_or(0, |p| p + 1);
        let mut step_ids: Vec<usize> = subject.origin[first..=*settle].to_vec();
        step_ids.dedup();
        let steps: Vec<String> = step_ids
            .iter()
            .map(|i| format!("{}. {}", i + 1, subject.steps[*i]))
            .collect();
        let before = if k == 0 {
            &empty
        } else {
            &observed.segments[k - 1].settled
        };

        // Outcome level.
        let outcome = if by_outcome.is_empty() {
            Level::NotJudged
        } else {
            let (level, next) =
                judge_outcome(subject.model, &by_outcome, *settle, &segment.settled, limit)?;
            by_outcome = next;
            level
        };

        // Trace level.
        let mut trace_divergent_step = None;
        let mut breaks = None;
        let trace = match (&segment.events, by_trace.is_empty()) {
            (_, true) => Level::NotJudged,
            (None, false) => {
                by_trace.clear();
                Level::NotRecorded
            }
            (Some(events), false) => {
                let seg = Segment {
                    model: subject.model,
                    origin: subject.origin,
                    settle: *settle,
                    events,
                    before,
                    limit,
                };
                match validate(&seg, &by_trace)? {
                    Validation::Valid(ends) => {
                        let writes = events.len();
                        let ends = ends_matching(ends, &segment.settled);
                        if ends.is_empty() {
                            by_trace.clear();
                            Level::Diverges {
                                detail: "every recorded write is a model run, but none of those runs ends in the recorded settled state: the recording misses writes".into(),
                                allowed: vec![],
                                seen: format!("{writes} recorded writes"),
                                side_by_side: None,
                            }
                        } else {
                            by_trace = ends;
                            Level::Conforms {
                                detail: format!("{writes} recorded writes are a run of the model"),
                            }
                        }
                    }
                    Validation::Diverges(d) => {
                        by_trace.clear();
                        breaks = broken_by(before, events, d.event, &subject.model.sem);
                        trace_divergent_step = events[..d.event.min(events.len())]
                            .iter()
                            .rev()
                            .find_map(|e| e.step)
                            .or(step_ids.first().copied());
                        let mut allowed = d.allowed.clone();
                        if d.could_settle {
                            allowed.push("settle here, writing nothing more".into());
                        }
                        Level::Diverges {
                            detail: format!(
                                "recorded event {} of this segment is not a write the model can make at that point",
                                d.event + 1
                            ),
                            allowed,
                            seen: d.seen,
                            side_by_side: None,
                        }
                    }
                }
            }
        };
        let divergent_step = trace_divergent_step
            .or_else(|| {
                outcome
                    .diverges()
                    .then(|| step_ids.iter().rev().nth(1).or(step_ids.last()).copied())
                    .flatten()
            })
            .map(|i| i + 1);
        points.push(SettlePoint {
            index: k + 1,
            steps,
            outcome,
            trace,
            divergent_step,
            breaks,
        });
        previous_settle = Some(*settle);
    }
    let conforms = points
        .iter()
        .all(|p| !p.outcome.diverges() && !p.trace.diverges() && p.outcome != Level::NotJudged);
    let matched = if by_trace.is_empty() {
        &by_outcome
    } else {
        &by_trace
    };
    let broken_as_modelled = if conforms {
        broken_in_every(matched)
    } else {
        Vec::new()
    };
    Ok(Verdict {
        scenario: subject.name.to_string(),
        profile: subject.model.profile.name().to_string(),
        switches: subject.model.sem.switches(),
        conforms,
        settle_points: points,
        broken_as_modelled,
        note: None,
    })
}

/// The safety properties every one of `matched` has broken on its way, each labelled as the
/// open catalogue entry that names it (or as not known).
fn broken_in_every(matched: &[(State, Binding)]) -> Vec<String> {
    let Some((first, _)) = matched.first() else {
        return Vec::new();
    };
    first
        .ghost
        .violated
        .iter()
        .filter(|p| matched.iter().all(|(s, _)| s.ghost.violated.contains(*p)))
        .map(|p| {
            let known = CATALOGUE
                .iter()
                .find(|e| e.status == Status::Open && e.property == *p);
            match known {
                Some(entry) => format!("{p}: {}", entry.known_label()),
                None => format!("{p}: no open catalogue entry names it"),
            }
        })
        .collect()
}

/// The outcome level at one settle point: explore from each candidate, keep the outcomes
/// that match the observed snapshot under the candidate's binding.
fn judge_outcome(
    model: &RsModel,
    candidates: &[(State, Binding)],
    settle: usize,
    settled: &Snapshot,
    limit: usize,
) -> Result<(Level, Vec<(State, Binding)>), TooLarge> {
    let mut matched: Vec<(State, Binding)> = Vec::new();
    let mut allowed: Vec<State> = Vec::new();
    for (start, binding) in candidates {
        let (found, _) = outcomes(model, std::slice::from_ref(start), settle, limit)?;
        for s in found {
            let objects = ModelObjects {
                replicasets: &s.api.replicasets,
                pods: &s.api.pods,
            };
            if let Some(b) = match_objects(binding, objects, settled) {
                if !matched.iter().any(|(m, mb)| *m == s && *mb == b) {
                    matched.push((s.clone(), b));
                }
            }
            if !allowed.contains(&s) {
                allowed.push(s);
            }
        }
    }
    let observed_tables = side_by_side::normalised_tables(&settled.replicasets, &settled.pods);
    let mut views: Vec<String> = allowed
        .iter()
        .map(|s| side_by_side::normalised_tables(&s.api.replicasets, &s.api.pods))
        .collect();
    views.sort();
    views.dedup();
    if !matched.is_empty() {
        return Ok((
            Level::Conforms {
                detail: match views.len() {
                    1 => "the settled state is the one the model allows here".to_string(),
                    n => format!("the settled state is one of the {n} the model allows here"),
                },
            },
            matched,
        ));
    }
    if views.is_empty() {
        return Ok((
            Level::Diverges {
                detail: "the model never settles here (no quiescent state is reachable)".into(),
                allowed: vec![],
                seen: observed_tables,
                side_by_side: None,
            },
            vec![],
        ));
    }
    let closest = views
        .iter()
        .min_by_key(|v| side_by_side::distance(v, &observed_tables))
        .expect("non-empty")
        .clone();
    let detail = match views.len() {
        1 => "the settled state is not the one the model allows here, shown beside what was seen"
            .to_string(),
        n => format!(
            "the settled state is none of the {n} the model allows here; the closest allowed one beside what was seen"
        ),
    };
    Ok((
        Level::Diverges {
            detail,
            side_by_side: Some(side_by_side::render(
                "model (closest allowed)",
                &closest,
                "cluster (observed)",
                &observed_tables,
            )),
            allowed: views,
            seen: observed_tables,
        },
        vec![],
    ))
}

/// The verdict as text for a terminal.
pub fn render(v: &Verdict) -> String {
    let mut out = format!(
        "rsmc oracle: scenario {} (profile {}{}): {}\n",
        v.scenario,
        v.profile,
        v.switches
            .iter()
            .map(|s| format!(", {s}"))
            .collect::<String>(),
        if v.conforms {
            "CONFORMS"
        } else {
            "DOES NOT CONFORM"
        }
    );
    for p in &v.settle_points {
        out.push_str(&format!("\nsettle point {}, after:\n", p.index));
        for s in &p.steps {
            out.push_str(&format!("    {s}\n"));
        }
        for (name, level) in [("outcome", &p.outcome), ("trace", &p.trace)] {
            match level {
                Level::Conforms { detail } => {
                    out.push_str(&format!("  {name}: conforms: {detail}\n"))
                }
                Level::NotRecorded => {
                    out.push_str(&format!("  {name}: not judged: no events were recorded\n"))
                }
                Level::NotJudged => out.push_str(&format!(
                    "  {name}: not judged: an earlier settle point diverged\n"
                )),
                Level::Diverges {
                    detail,
                    allowed,
                    seen,
                    side_by_side,
                } => {
                    out.push_str(&format!("  {name}: DIVERGES: {detail}\n"));
                    match side_by_side {
                        Some(table) => {
                            for line in table.lines() {
                                out.push_str(&format!("    {line}\n"));
                            }
                            let n = allowed.len();
                            out.push_str(&format!(
                                "    ({n} settled state{} allowed; `rsmc replay` lists {})\n",
                                if n == 1 { "" } else { "s" },
                                if n == 1 { "it" } else { "them" }
                            ));
                        }
                        None => {
                            out.push_str(&format!("    seen:    {seen}\n"));
                            if allowed.is_empty() {
                                out.push_str("    allowed: nothing\n");
                            }
                            for (i, a) in allowed.iter().enumerate() {
                                let head = if i == 0 { "allowed:" } else { "        " };
                                out.push_str(&format!("    {head} {a}\n"));
                            }
                        }
                    }
                }
            }
        }
        if let Some(step) = p.divergent_step {
            out.push_str(&format!("  first divergent step: {step}\n"));
        }
        if let Some(property) = p.breaks {
            out.push_str(&format!("  the divergent write breaks: {property}\n"));
        }
    }
    if let Some(note) = &v.note {
        out.push_str(&format!("\nnote: {note}\n"));
    }
    for broken in &v.broken_as_modelled {
        out.push_str(&format!("\nevery model run that matches breaks {broken}\n"));
    }
    out
}
