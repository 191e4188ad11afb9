//! A run that stopped short, judged up to its stop (`stoppedAt` in the recording,
//! `rsmc_oracle::judge::stopped`).
//!
//! `recorded/ignore-ranking.v1.37.2.observed.stopped.json` is `rsmc conform` of the scenario
//! `rsmc check --bug ignore-ranking` wrote (`scenarios/ignore-ranking.yaml`) on a v1.37.2
//! local control plane with the built-in controller (2026-11-28, `managedFields` dropped):
//! the run stopped at step 9, an await of a status update the controller never sent (its
//! consistency gate kept the sync from starting while the scenario held the ReplicaSet
//! events).

use rsmc_oracle::judge::stopped::{judge_up_to, UpToStop};
use rsmc_oracle::judge::{judge, JudgeError};
use rsmc_oracle::observed::{self, Observed};
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::model::properties::NO_OVER_CREATION;
use rsmc_spec::profile::Profile;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn recording() -> serde_json::Value {
    let path = root().join("recorded/ignore-ranking.v1.37.2.observed.stopped.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn parsed(raw: &serde_json::Value) -> Observed {
    observed::parse(
        Path::new("ignore-ranking.observed.stopped.json"),
        &raw.to_string(),
    )
    .unwrap()
}

/// The scenario judged as the recording's release behaves.
fn prepared(observed: &Observed) -> Prepared {
    let sem = observed.release_semantics().unwrap().unwrap();
    Prepared::load(
        &root().join("scenarios/ignore-ranking.yaml"),
        Profile::K8s120,
    )
    .unwrap()
    .judged_as(sem)
}

fn judged(raw: &serde_json::Value) -> Result<UpToStop, JudgeError> {
    let observed = parsed(raw);
    let stopped = observed
        .stopped_at
        .expect("the recording says where it stopped");
    judge_up_to(
        &prepared(&observed).subject(),
        &observed,
        stopped,
        &rsmc_oracle::explore::default_budget(),
    )
}

#[test]
fn a_stopped_run_conforms_up_to_its_stop() {
    let judged = judged(&recording()).unwrap();
    assert!(
        matches!(judged, UpToStop::Conforms { writes: 6, .. }),
        "{judged}"
    );
}

/// One more pod created by the controller before the stop: the model's controller never
/// creates past its replicas, so the recording parts ways with every run there, and the
/// verdict names the step and the property.
#[test]
fn a_write_before_the_stop_that_no_run_makes_is_named() {
    let mut raw = recording();
    let events = raw["segments"][0]["events"].as_array_mut().unwrap();
    let mut extra = events
        .iter()
        .rfind(|e| e["object"]["kind"] == "Pod" && e["type"] == "ADDED")
        .unwrap()
        .clone();
    extra["object"]["metadata"]["name"] = "frontend-extra".into();
    extra["object"]["metadata"]["uid"] = "extra".into();
    extra["object"]["metadata"]["resourceVersion"] = "999".into();
    events.push(extra);
    match judged(&raw).unwrap() {
        UpToStop::Diverges {
            segment,
            divergent_step,
            breaks,
            ..
        } => {
            assert_eq!(segment, 1);
            assert_eq!(
                divergent_step,
                Some(8),
                "the scale, the last step before it"
            );
            assert_eq!(breaks, Some(NO_OVER_CREATION));
        }
        other => panic!("expected a divergence, got: {other}"),
    }
}

#[test]
fn a_stop_past_the_scenarios_steps_is_bad_input() {
    let mut raw = recording();
    raw["stoppedAt"] = 40.into();
    let e = judged(&raw).unwrap_err();
    assert!(e.to_string().contains("stoppedAt"), "{e}");
}

/// The whole-run verdict needs every settle point; it says why it cannot judge this one.
#[test]
fn the_whole_run_verdict_refuses_a_stopped_recording() {
    let observed = parsed(&recording());
    let e = judge(
        &prepared(&observed).subject(),
        &observed,
        &rsmc_oracle::explore::default_budget(),
    )
    .unwrap_err();
    assert!(matches!(e, JudgeError::Stopped { step: 8 }), "{e}");
}
