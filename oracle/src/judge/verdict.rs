//! What the judge says: the verdict at each level of each settle point ([`Level`],
//! [`SettlePoint`]), the whole verdict ([`Verdict`]) with what it found ([`Finding`]), and why
//! a run could not be judged ([`JudgeError`]). The types alone, shared by every part of the
//! judge that makes or reads a verdict; how each is decided is in the files beside this one.

use super::release_difference::ReleaseDifference;
use super::search::witness;
use super::subject::Subject;
use crate::compare::fields::FieldDiff;
use crate::observed::Snapshot;
use rsmc_spec::budget::Exhausted;
use rsmc_spec::liveness::converged;
use rsmc_spec::profile::Semantics;
use serde::Serialize;

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
        /// The fields in which what the cluster did differs from the closest allowed
        /// alternative ([`crate::compare::fields`]); empty where no alternative is to the
        /// same object.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        fields: Vec<FieldDiff>,
    },
    /// No events were recorded for this segment.
    NotRecorded,
    /// An earlier settle point diverged at this level; nothing to judge from.
    NotJudged,
    /// Not judged here, and why (a search that would only explain a verdict already known
    /// was beyond the budget).
    Unexplained {
        detail: String,
    },
}

impl Level {
    /// Whether this level rejected what was seen.
    pub fn diverges(&self) -> bool {
        matches!(self, Level::Diverges { .. })
    }

    /// The release difference this level's divergence amounts to under `sem`, judged as
    /// `release`, if it amounts to one.
    pub fn release_difference(&self, sem: &Semantics, release: &str) -> Option<ReleaseDifference> {
        match self {
            Level::Diverges { fields, .. } => ReleaseDifference::of(fields, sem, release),
            _ => None,
        }
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
    /// ([`super::broken`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub breaks: Option<&'static str>,
    /// When the first divergent write is a controller's ReplicaSet status that breaks no
    /// safety property: the convergence condition that status breaks for the objects as they
    /// were then, which they kept just before it (a status that does not count the pods).
    /// Mid-run a status from a stale cache may break one on its way to converging; this one
    /// is named because no model run writes it. A recording whose settle points are placed
    /// where the objects settled (a watch import) may never reach the settled state the
    /// outcome level would name it at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_breaks: Option<&'static str>,
    /// When the outcome diverges: the convergence condition the settled state breaks and
    /// every state the model allows here keeps (`rsmc_spec::liveness::converged`), if one
    /// does — status counts left wrong, observedGeneration behind, an orphan not adopted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled_breaks: Option<&'static str>,
    /// When the trace diverges here but the outcome level could not be searched (its
    /// exhaustive search stopped at the budget): the first convergence condition the
    /// recorded settled state breaks, and how. A fact of the recording, not compared with the
    /// model's settled states as [`SettlePoint::settled_breaks`] is (they were not searched):
    /// a model with an upstream liveness bug switched on may settle the same way. It is what
    /// a reader of a rejected quiet state wants named — a controller idle with surplus pods
    /// left, a status never written for the last scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_breaks: Option<RecordedBreak>,
    /// When the divergence breaks no rule: the cluster differs from the release judged by
    /// only in fields a feature gate brings ([`super::release_difference`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<ReleaseDifference>,
    /// When an earlier settle point diverged: this one was judged from the cluster's
    /// objects at the one before it ([`super::resume`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed: Option<Resumed>,
}

impl SettlePoint {
    /// The property or condition this point names: the one its divergent write breaks, else
    /// the one the status it writes breaks, else the settled state's, else the recorded
    /// settled state's.
    pub fn named(&self) -> Option<&'static str> {
        self.all_named().first().copied()
    }

    /// Every property or condition this point names, each once, in [`SettlePoint::named`]'s
    /// order: a divergent write may break one property while the settled state breaks
    /// another.
    pub fn all_named(&self) -> Vec<&'static str> {
        let mut all = Vec::new();
        for name in [
            self.breaks,
            self.written_breaks,
            self.settled_breaks,
            self.recorded_breaks.as_ref().map(|r| r.condition),
        ]
        .into_iter()
        .flatten()
        {
            if !all.contains(&name) {
                all.push(name);
            }
        }
        all
    }
}

/// A convergence condition a recorded settled state breaks ([`SettlePoint::recorded_breaks`]).
#[derive(Clone, Debug, Serialize)]
pub struct RecordedBreak {
    pub condition: &'static str,
    /// How the recorded objects break it, in words.
    pub how: String,
}

impl RecordedBreak {
    /// The first condition `settled` breaks, if it breaks one.
    pub(crate) fn of(settled: &Snapshot) -> Option<RecordedBreak> {
        converged::broken_conditions(&settled.replicasets, &settled.pods, &[])
            .into_iter()
            .next()
            .map(|u| RecordedBreak {
                condition: u.condition.name(),
                how: u.reason,
            })
    }
}

/// The whole verdict.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub scenario: String,
    pub profile: String,
    /// How the model judged by differs from its profile (`gate NAME=BOOL`, `bug NAME`, `fix NAME`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<String>,
    pub conforms: bool,
    pub settle_points: Vec<SettlePoint>,
    /// Safety properties that every model run matching a conforming recording breaks: the
    /// cluster did what the model allows, and what it allows there is an upstream race
    /// (each with the catalogue's label, or saying that no open entry names it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken_as_modelled: Vec<String>,
    /// The recorded writes that break a safety property, judged on the recording alone
    /// ([`super::broken::in_recording`]): where a run forces a race the model allows, this
    /// says whether the cluster really took it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub broken_on_cluster: Vec<super::broken::BrokenWrite>,
    /// How the verdict was reached, when that needs saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Search nodes the witness search expanded to find the run (0 when the verdict came
    /// from the exhaustive levels).
    #[serde(skip_serializing_if = "is_zero")]
    pub witness_nodes: usize,
    /// Recorded writes whose place the recording leaves open (`floating` in the observed
    /// trace: a deletion's mark whose version an audit log omits) that the run found makes
    /// later than the recording puts them: the model's reading of what the recording does
    /// not say.
    #[serde(skip_serializing_if = "is_zero")]
    pub floating_moved: usize,
    /// Recorded writes the recording leaves to their step or the system (`orSystem` in the
    /// observed trace: pod deletions no event claims, whose claims may have been dropped)
    /// that the run found makes by the system.
    #[serde(skip_serializing_if = "is_zero")]
    pub or_system_by_system: usize,
    /// The same, that it makes by their step (a client's).
    #[serde(skip_serializing_if = "is_zero")]
    pub or_system_by_step: usize,
    /// How the verdict read each write the recording does not confirm (`unconfirmed` in
    /// the observed trace: its sender got no answer), one line each ([`super::readings`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unconfirmed: Vec<String>,
    /// Everything a nonconforming verdict found, grouped with its settle points
    /// ([`super::findings`]); empty where the run conforms. Derived from the settle points
    /// and `broken_on_cluster` once the verdict is final (in `judge_reading`), and kept so
    /// that the JSON verdict carries it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The contract judged by, where the user stated one, and the server the run was
    /// recorded on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contract: Option<ContractNote>,
}

/// A verdict judged by a contract rather than by the recorded release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContractNote {
    /// `v1.34`, or `profile upstream`.
    pub follows: String,
    /// The recorded server's version, where the recording names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl std::fmt::Display for ContractNote {
    /// `contract v1.34 on a v1.37.2 server`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "contract {}", self.follows)?;
        match &self.server {
            Some(server) => write!(f, " on a {server} server"),
            None => Ok(()),
        }
    }
}

impl Verdict {
    /// The verdict on `subject` with these settle points, and nothing else found yet: what
    /// every way of judging starts from (the witness search's, the exhaustive levels').
    pub(crate) fn new(subject: &Subject, conforms: bool, settle_points: Vec<SettlePoint>) -> Self {
        Verdict {
            scenario: subject.name.to_string(),
            profile: subject.model.profile.name().to_string(),
            switches: subject.model.sem.switches(),
            conforms,
            settle_points,
            broken_as_modelled: Vec::new(),
            broken_on_cluster: Vec::new(),
            note: None,
            witness_nodes: 0,
            floating_moved: 0,
            or_system_by_system: 0,
            or_system_by_step: 0,
            unconfirmed: Vec::new(),
            findings: Vec::new(),
            contract: None,
        }
    }

    /// Put `note` before the verdict's note, if it has one.
    pub(crate) fn prepend_note(&mut self, note: String) {
        self.note = Some(match self.note.take() {
            Some(n) => format!("{note}; {n}"),
            None => note,
        });
    }

    /// Whether every model run that matches the (conforming) recording breaks `property`
    /// ([`Verdict::broken_as_modelled`]): the recording does not show it by itself (a
    /// property of what a sync saw), but every reading of it the model has does.
    pub fn broken_in_every_run(&self, property: &str) -> bool {
        self.broken_as_modelled.iter().any(|b| {
            b.strip_prefix(property)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(": "))
        })
    }

    /// The first divergence in one line, for reports that show one line per scenario (a CI
    /// system's failure message): where it is (settle point, level, scenario step), the
    /// property it breaks when one is known ([`Verdict::breaks`]), and the first line of
    /// its explanation. `None` for a conforming run.
    pub fn headline(&self) -> Option<String> {
        if self.conforms {
            return None;
        }
        let first = self.settle_points.iter().find_map(|p| {
            [("outcome", &p.outcome), ("trace", &p.trace)]
                .into_iter()
                .find_map(|(name, level)| match level {
                    Level::Diverges { detail, .. } => Some((p, name, detail)),
                    _ => None,
                })
        });
        let difference = || {
            self.settle_points
                .iter()
                .find_map(|p| p.difference.as_ref())
                .map(|d| format!("differs from {}: ", d.release))
        };
        let breaks = self
            .breaks()
            .map(|b| format!("breaks {b}: "))
            .or_else(difference)
            .unwrap_or_default();
        Some(match first {
            Some((point, level, detail)) => format!(
                "settle point {}{}, {level} diverges: {breaks}{}",
                point.index,
                point
                    .divergent_step
                    .map(|s| format!(" (step {s})"))
                    .unwrap_or_default(),
                detail.lines().next().unwrap_or_default()
            ),
            None => format!(
                "does not conform: {breaks}{}",
                self.note.clone().unwrap_or_default()
            ),
        })
    }

    /// The property the run breaks first, if any: its first divergent write's, or else the
    /// convergence condition the status that write sets or its first divergent settled state
    /// breaks.
    pub fn breaks(&self) -> Option<&'static str> {
        self.settle_points.iter().find_map(SettlePoint::named)
    }
}

/// Why a run could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("the observed trace has {observed} settle points but the scenario has {expected}")]
    Segments { observed: usize, expected: usize },
    #[error("the observed trace is of scenario {observed:?}, not {expected:?}")]
    Scenario { observed: String, expected: String },
    /// An event's `step` no step of the scenario can be (bad input).
    #[error(transparent)]
    Step(#[from] super::step_numbering::StepError),
    #[error(transparent)]
    TooLarge(#[from] Exhausted),
    /// The witness search stopped at its budget: how far it got.
    #[error(transparent)]
    Unwitnessed(#[from] witness::Unfinished),
    /// The recording's unconfirmed writes cannot be read ([`super::readings`]).
    #[error("{0}")]
    Unconfirmed(String),
    /// The run stopped short (`stoppedAt`), so its last segment never settled: it is judged
    /// up to the stop ([`super::stopped::judge_up_to`]), not here.
    #[error("the run stopped short at step {} (stoppedAt {step}): its last segment never settled, so it is judged up to the stop", step + 1)]
    Stopped { step: usize },
}

impl JudgeError {
    /// The budget a search ran out of, if that is why the run could not be judged.
    pub fn exhausted(&self) -> Option<&Exhausted> {
        match self {
            JudgeError::TooLarge(e) => Some(e),
            JudgeError::Unwitnessed(u) => Some(&u.exhausted),
            _ => None,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One thing found, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The property or condition broken, the difference from the release
    /// (`differs from v1.37.2: status.terminatingReplicas`), or `diverges` where a divergence
    /// names neither.
    pub what: String,
    /// The settle points (from 1) where it was found, in order.
    pub settle_points: Vec<usize>,
}

impl std::fmt::Display for Finding {
    /// `what (1, 3, 4)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let points: Vec<String> = self.settle_points.iter().map(usize::to_string).collect();
        write!(f, "{} ({})", self.what, points.join(", "))
    }
}

/// How a settle point was judged after an earlier one diverged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resumed {
    /// The settle point (from 1) whose objects the segment started from.
    pub from: usize,
    /// What the controller was taken to remember there.
    pub memory: &'static str,
}

impl Resumed {
    /// Judged from the cluster's objects at settle point `from` (from 1).
    pub fn at(from: usize) -> Self {
        Resumed {
            from,
            memory: "idle or just restarted",
        }
    }
}
