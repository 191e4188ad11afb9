//! Steps a scenario expects the API server to refuse (`refused: REASON`): the scenario format,
//! the model's API server, and the cluster's recorded answer.

use rsmc_oracle::judge::{judge, render, JudgeError, Level, Verdict};
use rsmc_oracle::observed;
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::scenario;
use rsmc_spec::budget::Budget;
use rsmc_spec::profile::Profile;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The suite's scenario of refused requests.
fn suite_scenario() -> PathBuf {
    root().join("../conformance/scenarios/refused-requests.yaml")
}

/// Its run on a real v1.37.2 control plane, recorded by `rsmc conform`.
fn recording() -> serde_json::Value {
    let text = std::fs::read_to_string(
        root().join("tests/observed/refused-requests.v1.37.2.observed.json"),
    )
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Judged by the recording's release (v1.37.2), as `rsmc oracle` judges it.
fn judged(scenario: &Path, trace: &serde_json::Value) -> Result<Verdict, JudgeError> {
    let observed =
        observed::parse(Path::new("doctored.json"), &trace.to_string()).expect("a valid trace");
    let release = observed.release_semantics().unwrap().expect("a release");
    let prepared = Prepared::load(scenario, Profile::K8s120)
        .unwrap()
        .judged_as(release);
    judge(
        &prepared.subject(),
        &observed,
        &Budget::default().with_states(500_000),
    )
}

/// The refusal recorded for scenario step `step` (from 0).
fn refusal(trace: &mut serde_json::Value, step: u64) -> &mut serde_json::Value {
    trace["segments"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|s| s["refused"].as_array_mut().unwrap().iter_mut())
        .find(|r| r["step"] == step)
        .unwrap()
}

fn divergence(v: &Verdict) -> (usize, String, Vec<String>) {
    assert!(!v.conforms, "{}", render(v));
    let point = v
        .settle_points
        .iter()
        .find(|p| p.trace.diverges())
        .expect("a diverging settle point");
    let Level::Diverges {
        detail, allowed, ..
    } = &point.trace
    else {
        unreachable!()
    };
    (
        point.divergent_step.unwrap(),
        detail.clone(),
        allowed.clone(),
    )
}

#[test]
fn the_clusters_refusals_conform() {
    let trace = recording();
    let refused: Vec<(u64, &str)> = trace["segments"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["refused"].as_array().unwrap())
        .map(|r| (r["step"].as_u64().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        refused,
        [
            (0, "Invalid"),
            (1, "NotFound"),
            (4, "Invalid"),
            (5, "NotFound")
        ]
    );
    let v = judged(&suite_scenario(), &trace).unwrap();
    assert!(v.conforms, "{}", render(&v));
}

/// A cluster that refused a step with another reason, or whose recording lacks the refusal,
/// does not conform, at the step.
#[test]
fn another_reason_or_no_refusal_does_not_conform() {
    let mut trace = recording();
    refusal(&mut trace, 4)["reason"] = "Conflict".into();
    let (step, detail, allowed) = divergence(&judged(&suite_scenario(), &trace).unwrap());
    assert_eq!(step, 5);
    assert!(
        detail.starts_with(
            "step 5 is expected to be refused (Invalid), and the cluster refused it: Conflict"
        ),
        "{detail}"
    );
    assert_eq!(allowed.len(), 1);
    assert!(allowed[0].ends_with(": Invalid"), "{allowed:?}");

    let mut trace = recording();
    for segment in trace["segments"].as_array_mut().unwrap() {
        segment["refused"]
            .as_array_mut()
            .unwrap()
            .retain(|r| r["step"] != 0);
    }
    let (step, detail, _) = divergence(&judged(&suite_scenario(), &trace).unwrap());
    assert_eq!(step, 1);
    assert!(
        detail.contains("neither a refusal of the step nor a write of it"),
        "{detail}"
    );
}

/// A scenario that expects a refusal the model's API server does not give: no run of the
/// model goes past the step, and the verdict says what the model's API server answered.
#[test]
fn a_refusal_the_model_does_not_give_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(suite_scenario()).unwrap();
    // The delete of `mismatched` (never created) expects AlreadyExists instead of NotFound.
    let doctored = text.replacen(
        "  - delete: {replicaset: mismatched}\n    refused: NotFound",
        "  - delete: {replicaset: mismatched}\n    refused: AlreadyExists",
        1,
    );
    assert_ne!(doctored, text);
    let path = dir.path().join("refused-requests.yaml");
    std::fs::write(&path, doctored).unwrap();
    let mut trace = recording();
    refusal(&mut trace, 5)["reason"] = "AlreadyExists".into();
    let (step, _, allowed) = divergence(&judged(&path, &trace).unwrap());
    assert_eq!(step, 6);
    assert!(
        allowed.iter().any(|a| a
            == "step 6 is expected to be refused, but the model's API server refuses it: NotFound, so no run goes past it"),
        "{allowed:?}"
    );
}

/// A refusal recorded for a step that sends no request in its segment is bad input.
#[test]
fn a_refusal_of_a_step_without_a_request_is_bad_input() {
    let mut trace = recording();
    refusal(&mut trace, 0)["step"] = 3.into();
    let err = judged(&suite_scenario(), &trace).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "segments[0].refused[0].step: step 3 (`settle`) sends no request in this segment"
        ),
        "{err}"
    );
}

#[test]
fn the_format_says_what_can_be_refused() {
    let load = |steps: &str| {
        let text = format!("name: x\nnodes: [node-1]\nsteps:\n{steps}");
        scenario::load_str(&root().join("tests/scenarios/x.yaml"), &text)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let rs = "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web}, spec: {replicas: 1, selector: {matchLabels: {app: api}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}}";
    // Without `refused`, the manifest the API server would refuse is a mistake, with the hint.
    let err = load(&format!("  - apply: {{manifest: {rs}}}\n")).unwrap_err();
    assert!(
        err.contains("(a step that expects this says `refused: Invalid`)"),
        "{err}"
    );
    load(&format!(
        "  - apply: {{manifest: {rs}}}\n    refused: Invalid\n"
    ))
    .unwrap();
    let err = load("  - ready: {pods: all}\n    refused: NotFound\n").unwrap_err();
    assert!(
        err.contains("steps[0].refused: only one request can be expected to be refused"),
        "{err}"
    );
    let err = load("  - scale: {replicaset: web, replicas: 2}\n    refused: Gone\n").unwrap_err();
    assert!(
        err.contains("unknown reason \"Gone\", expected one of NotFound, Conflict, AlreadyExists, Invalid, Forbidden"),
        "{err}"
    );
    // Written back, a refused step reads the same.
    let text = std::fs::read_to_string(suite_scenario()).unwrap();
    let s = scenario::load_str(&suite_scenario(), &text).unwrap();
    let again = scenario::load_str(&suite_scenario(), &s.to_yaml()).unwrap();
    assert_eq!(
        s.steps.iter().map(|s| s.refused).collect::<Vec<_>>(),
        again.steps.iter().map(|s| s.refused).collect::<Vec<_>>()
    );
    assert!(
        s.to_yaml().contains("\n  refused: NotFound\n"),
        "{}",
        s.to_yaml()
    );
}

/// A status write that leaves out a field the release's controller writes: the divergence
/// names that field, with both values, in the report and in its JSON.
#[test]
fn a_status_write_without_terminating_replicas_names_the_field() {
    let mut trace = recording();
    let first_status = trace["segments"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|s| s["events"].as_array_mut().unwrap().iter_mut())
        .find(|e| e["type"] == "MODIFIED" && e["object"]["status"]["observedGeneration"] == 1)
        .expect("the controller's first status write");
    first_status["object"]["status"]
        .as_object_mut()
        .unwrap()
        .remove("terminatingReplicas")
        .expect("v1.37.2 writes terminatingReplicas");
    let v = judged(&suite_scenario(), &trace).unwrap();
    assert!(!v.conforms, "{}", render(&v));
    let point = v
        .settle_points
        .iter()
        .find(|p| p.trace.diverges())
        .expect("a diverging settle point");
    let Level::Diverges { fields, .. } = &point.trace else {
        unreachable!()
    };
    let named: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    assert_eq!(
        named,
        ["status.terminatingReplicas: seen absent, allowed 0"],
        "{}",
        render(&v)
    );
    assert!(
        render(&v).contains(
            "    differs from the closest allowed in:\n      status.terminatingReplicas: seen absent, allowed 0\n"
        ),
        "{}",
        render(&v)
    );
    let json = serde_json::to_value(point).unwrap();
    assert_eq!(
        json["trace"]["fields"],
        serde_json::json!([{"field": "status.terminatingReplicas", "seen": "absent", "allowed": "0"}])
    );
    // It breaks no property: the status the model writes there does not count the pod the
    // controller has just created either (both from a cache a creation behind); what sets
    // the write apart is a field of the release.
    assert_eq!(point.breaks, None, "{}", render(&v));
    assert_eq!(point.written_breaks, None, "{}", render(&v));
    assert_eq!(v.breaks(), None, "{}", render(&v));
    let difference = point.difference.as_ref().expect("a release difference");
    assert_eq!(difference.gate, "DeploymentReplicaSetTerminatingReplicas");
    assert_eq!(difference.release, "v1.37.2");
    assert_eq!(
        json["difference"]["gate"],
        "DeploymentReplicaSetTerminatingReplicas"
    );
    assert!(
        render(&v).contains(
            "  breaks no property: differs from v1.37.2: status.terminatingReplicas absent, \
             which its controller writes (0) with gate DeploymentReplicaSetTerminatingReplicas on"
        ),
        "{}",
        render(&v)
    );
    assert!(
        v.headline()
            .unwrap()
            .contains("diverges: differs from v1.37.2: "),
        "{:?}",
        v.headline()
    );
}
