//! The oracle accepts hand-made observed traces of correct behaviour and rejects doctored
//! ones, each with a precise message. The traces are in `tests/observed/`; the scenarios
//! they record are the seed's `frontend.yaml` (in `conformance/scenarios/`) and two small
//! ones in `tests/scenarios/`.

use rsmc_oracle::judge::{judge, render, AfterDivergence, Level, Subject, Verdict};
use rsmc_oracle::observed;
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::budget::Budget;
use rsmc_spec::liveness::converged::Condition;
use rsmc_spec::model::properties::{ADOPTION_RULES, NO_OVER_CREATION, SCALE_DOWN_RANKED};
use rsmc_spec::profile::Profile;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Judge `observed` (in tests/observed) against the scenario file at `scenario`.
fn judge_files(scenario: &Path, observed: &str) -> Verdict {
    let prepared = Prepared::load(scenario, Profile::K8s120).unwrap();
    let observed = observed::load(&root().join("tests/observed").join(observed)).unwrap();
    judge(
        &prepared.subject(),
        &observed,
        &Budget::default().with_states(500_000),
    )
    .unwrap()
}

fn frontend(observed: &str) -> Verdict {
    judge_files(
        &root().join("../conformance/scenarios/frontend.yaml"),
        observed,
    )
}

fn ranking(observed: &str) -> Verdict {
    judge_files(&root().join("tests/scenarios/ranking.yaml"), observed)
}

fn orphan(observed: &str) -> Verdict {
    judge_files(&root().join("tests/scenarios/orphan.yaml"), observed)
}

fn assert_conforms(v: &Verdict) {
    assert!(v.conforms, "{}", render(v));
    for p in &v.settle_points {
        assert!(matches!(p.outcome, Level::Conforms { .. }), "{}", render(v));
        assert!(matches!(p.trace, Level::Conforms { .. }), "{}", render(v));
    }
}

#[test]
fn correct_runs_conform_at_both_levels() {
    assert_conforms(&frontend("frontend.observed.json"));
    assert_eq!(frontend("frontend.observed.json").breaks(), None);
    assert_conforms(&ranking("ranking.observed.json"));
    assert_conforms(&orphan("orphan.observed.json"));
}

/// A surplus pod created and deleted again leaves a correct-looking end state: the outcome
/// level accepts it, the trace level names the surplus create.
#[test]
fn a_surplus_pod_created_then_deleted_is_caught_by_trace_validation() {
    let v = frontend("frontend-surplus-pod.observed.json");
    assert!(!v.conforms);
    let first = &v.settle_points[0];
    assert!(
        matches!(first.outcome, Level::Conforms { .. }),
        "{}",
        render(&v)
    );
    let Level::Diverges { detail, seen, .. } = &first.trace else {
        panic!("{}", render(&v));
    };
    assert_eq!(
        detail,
        "recorded event 5 of this segment is not a write the model can make at that point"
    );
    assert!(
        seen.starts_with("ADDED pod/frontend-h5v6d labels=tier=frontend controller=ReplicaSet/frontend (written by the controller or the garbage collector)"),
        "{seen}"
    );
    assert_eq!(first.divergent_step, Some(1));
    assert_eq!(first.breaks, Some(NO_OVER_CREATION));
    assert_eq!(v.breaks(), Some(NO_OVER_CREATION));
    assert_eq!(
        rsmc_oracle::judge::findings::line(&v.findings),
        format!("{NO_OVER_CREATION} (1)")
    );
    // The second segment is judged on, from the cluster's objects at the first settle point,
    // and says so; it is a run of a correct controller from there.
    let second = &v.settle_points[1];
    assert!(
        matches!(second.trace, Level::Conforms { .. }),
        "{}",
        render(&v)
    );
    assert_eq!(second.resumed.as_ref().map(|r| r.from), Some(1));
    assert!(
        render(&v).contains("(an earlier settle point diverged: judged from the cluster's objects at settle point 1, the controller idle or just restarted there)"),
        "{}",
        render(&v)
    );
    // Asked to stop at the first divergence, it does.
    let prepared = Prepared::load(
        &root().join("../conformance/scenarios/frontend.yaml"),
        Profile::K8s120,
    )
    .unwrap();
    let subject = Subject {
        after_divergence: AfterDivergence::Stop,
        ..prepared.subject()
    };
    let observed =
        observed::load(&root().join("tests/observed/frontend-surplus-pod.observed.json")).unwrap();
    let stopped = judge(&subject, &observed, &Budget::default().with_states(500_000)).unwrap();
    assert_eq!(stopped.settle_points[1].trace, Level::NotJudged);
    assert_eq!(stopped.settle_points[1].resumed, None);
}

/// Deleting the ready pod while a pod that is not ready remains breaks the ranking (not
/// ready goes first): both levels diverge, the trace level at the delete (its first write:
/// the pod is unbound, so the API server marks it deleting and removes it at once).
#[test]
fn the_wrong_victim_on_scale_down_is_caught_at_both_levels() {
    let v = ranking("ranking-wrong-victim.observed.json");
    assert!(!v.conforms);
    let third = &v.settle_points[2];
    let Level::Diverges { seen, allowed, .. } = &third.trace else {
        panic!("{}", render(&v));
    };
    assert!(
        seen.starts_with(
            "MODIFIED pod/frontend-x7k2p labels=tier=frontend controller=ReplicaSet/frontend ready deleting"
        ),
        "{seen}"
    );
    // The model deletes the pod that is not ready, named as the cluster names it.
    assert!(
        allowed
            .iter()
            .any(|a| a.contains("DELETE pods/frontend-q9w4z")
                && a.contains("DELETED pod/frontend-q9w4z")
                && !a.contains(" ready")),
        "{allowed:?}"
    );
    let Level::Diverges { side_by_side, .. } = &third.outcome else {
        panic!("{}", render(&v));
    };
    let table = side_by_side.as_ref().expect("outcomes show tables");
    assert!(table.contains("model (closest allowed)"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with('!') && l.contains("1/1") && l.contains("0/1")),
        "the differing pod row is marked: {table}"
    );
    assert_eq!(third.divergent_step, Some(5));
    assert_eq!(third.breaks, Some(SCALE_DOWN_RANKED));
}

/// A pod re-adopted by a ReplicaSet that is being deleted, then orphaned again: the end
/// state is right, the adoption is not.
#[test]
fn an_adoption_by_a_deleting_replicaset_is_caught_by_trace_validation() {
    let v = orphan("orphan-adopted-while-deleting.observed.json");
    assert!(!v.conforms);
    let second = &v.settle_points[1];
    assert!(
        matches!(second.outcome, Level::Conforms { .. }),
        "{}",
        render(&v)
    );
    let Level::Diverges { detail, seen, .. } = &second.trace else {
        panic!("{}", render(&v));
    };
    assert_eq!(
        detail,
        "recorded event 3 of this segment is not a write the model can make at that point"
    );
    assert!(
        seen.starts_with("MODIFIED pod/frontend-x7k2p labels=tier=frontend controller=ReplicaSet/frontend (written by the controller or the garbage collector)"),
        "{seen}"
    );
    assert_eq!(second.breaks, Some(ADOPTION_RULES));
    assert!(
        render(&v).contains(&format!("the divergent write breaks: {ADOPTION_RULES}")),
        "{}",
        render(&v)
    );
}

#[test]
fn a_trace_of_another_scenario_is_refused() {
    let path = root().join("../conformance/scenarios/frontend.yaml");
    let prepared = Prepared::load(&path, Profile::K8s120).unwrap();
    let observed = observed::load(&root().join("tests/observed/orphan.observed.json")).unwrap();
    let err = judge(
        &prepared.subject(),
        &observed,
        &Budget::default().with_states(1000),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the observed trace is of scenario \"orphan\", not \"frontend\""
    );
}

#[test]
fn malformed_observed_json_names_the_file_and_line() {
    let err = observed::parse(
        Path::new("o.json"),
        "{\n  \"schema\": \"rsmc-observed/v1\",\n  \"scenario\": 3\n}",
    )
    .unwrap_err();
    assert_eq!(err.position.map(|p| (p.line, p.column)), Some((3, 15)));
    assert!(
        err.to_string()
            .starts_with("o.json:3:15: scenario: invalid type: integer `3`, expected a string"),
        "{err}"
    );
    let err = observed::parse(
        Path::new("o.json"),
        "{\"schema\": \"rsmc-observed/v1\",\n \"scenario\": \"x\", \"segmnts\": []}",
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `segmnts`"), "{err}");
    assert_eq!(err.position.map(|p| p.line), Some(2));
}

/// A file cut short names no field (serde_path_to_error's `?`) and no column 0: only the
/// file, the line and column 1, and what was expected.
#[test]
fn a_truncated_observed_file_says_where_it_ends_without_a_stray_field() {
    let err = observed::parse(Path::new("bad.observed.json"), "{\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad.observed.json:2:1: EOF while parsing an object"
    );
    let err = observed::parse(Path::new("bad.observed.json"), "\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad.observed.json:2:1: EOF while parsing a value"
    );
}

/// `frontend.observed.json` changed by `doctor`, judged against the frontend scenario.
fn judged_frontend(
    doctor: impl FnOnce(&mut serde_json::Value),
) -> Result<Verdict, rsmc_oracle::judge::JudgeError> {
    let text =
        std::fs::read_to_string(root().join("tests/observed/frontend.observed.json")).unwrap();
    let mut trace: serde_json::Value = serde_json::from_str(&text).unwrap();
    doctor(&mut trace);
    let observed = observed::parse(
        Path::new("doctored.observed.json"),
        &serde_json::to_string(&trace).unwrap(),
    )
    .unwrap();
    let prepared = Prepared::load(
        &root().join("../conformance/scenarios/frontend.yaml"),
        Profile::K8s120,
    )
    .unwrap();
    judge(
        &prepared.subject(),
        &observed,
        &Budget::default().with_states(500_000),
    )
}

/// `frontend.observed.json` with its first segment's events dropped (an outcome-only
/// recording) and its first settled state changed by `doctor`, judged.
fn frontend_settled_as(doctor: impl Fn(&mut serde_json::Value)) -> Verdict {
    judged_frontend(|trace| {
        let first = &mut trace["segments"][0];
        first.as_object_mut().unwrap().remove("events");
        doctor(&mut first["settled"]);
    })
    .unwrap()
}

/// A settled state the model never settles in is named by the convergence condition it
/// breaks — the same words `rsmc check` uses for a run that does not converge — when every
/// state the model allows there keeps that condition.
#[test]
fn a_settled_state_is_named_by_the_convergence_condition_it_breaks() {
    type Doctor = fn(&mut serde_json::Value);
    let cases: [(Condition, Doctor); 3] = [
        (Condition::StatusCountsPods, |settled| {
            settled["replicasets"][0]["status"]["replicas"] = 2.into();
        }),
        (Condition::GenerationObserved, |settled| {
            settled["replicasets"][0]["status"]["observedGeneration"] = 0.into();
        }),
        (Condition::OrphansAdopted, |settled| {
            let pod = settled["pods"][1]["metadata"].as_object_mut().unwrap();
            pod.remove("ownerReferences");
        }),
    ];
    for (condition, doctor) in cases {
        let v = frontend_settled_as(doctor);
        assert!(!v.conforms, "{}", render(&v));
        let first = &v.settle_points[0];
        assert!(first.outcome.diverges(), "{}", render(&v));
        assert_divergence_visible(&first.outcome);
        assert_eq!(
            first.settled_breaks,
            Some(condition.name()),
            "{}",
            render(&v)
        );
        assert_eq!(v.breaks(), Some(condition.name()));
        assert!(
            render(&v).contains(&format!("the settled state breaks: {}", condition.name())),
            "{}",
            render(&v)
        );
    }
    // The undoctored state conforms and names nothing.
    let v = frontend_settled_as(|_| {});
    assert!(v.conforms, "{}", render(&v));
    assert_eq!(v.breaks(), None);
}

/// An outcome divergence names the fields that differ from the closest allowed state, and
/// its side-by-side tables mark a line for each: two states that differ never show
/// identical tables.
fn assert_divergence_visible(outcome: &Level) {
    let Level::Diverges {
        side_by_side: Some(table),
        fields,
        ..
    } = outcome
    else {
        panic!("an outcome divergence with tables: {outcome:?}");
    };
    assert!(!fields.is_empty(), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with('!') || l.starts_with('<') || l.starts_with('>')),
        "a marked line: {table}"
    );
}

/// A settled state that differs from every allowed one only in fields the default tables
/// leave out (`status.availableReplicas`, `status.fullyLabeledReplicas`) is shown with those
/// fields, marked, and named in the divergence.
#[test]
fn a_settled_state_differing_only_in_an_unshown_field_names_it() {
    // The first settle point: three pods created, none scheduled yet.
    let cases: [(&str, &str, u32); 2] = [
        ("availableReplicas", "status.availableReplicas", 0),
        ("fullyLabeledReplicas", "status.fullyLabeledReplicas", 3),
    ];
    for (key, path, allowed) in cases {
        let v = frontend_settled_as(|settled| {
            settled["replicasets"][0]["status"][key] = 1.into();
        });
        let first = &v.settle_points[0];
        assert_divergence_visible(&first.outcome);
        let Level::Diverges {
            side_by_side: Some(table),
            fields,
            ..
        } = &first.outcome
        else {
            unreachable!()
        };
        let named: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
        assert_eq!(
            named,
            [format!("rs/frontend {path}: seen 1, allowed {allowed}")],
            "{}",
            render(&v)
        );
        assert!(
            table
                .lines()
                .any(|l| l.starts_with('!') && l.contains(&format!("rs/frontend {path}"))),
            "{table}"
        );
        assert!(
            render(&v).contains(&format!(
                "differs from the closest allowed in:\n      rs/frontend {path}: seen 1, allowed {allowed}\n"
            )),
            "{}",
            render(&v)
        );
    }
}

/// `frontend.observed.json` with its events' `step`s changed by `doctor`, judged: the error.
fn frontend_with_steps(doctor: impl Fn(&mut serde_json::Value)) -> String {
    let err = judged_frontend(|trace| {
        for segment in trace["segments"].as_array_mut().unwrap() {
            for event in segment["events"].as_array_mut().unwrap() {
                if event.get("step").is_some() {
                    doctor(&mut event["step"]);
                }
            }
        }
    })
    .unwrap_err();
    assert!(err.exhausted().is_none(), "a bad-input error: {err}");
    err.to_string()
}

/// `step` counts the scenario's steps from 0, settle included: a recording numbered from 1, a
/// step that makes no write or writes in another segment, or one past the end is refused as
/// bad input naming the event and the steps that write there, not judged as a controller
/// writing what only the user may.
#[test]
fn an_events_step_that_no_writing_step_of_its_segment_can_be_is_bad_input() {
    let from_one = frontend_with_steps(|s| *s = (s.as_u64().unwrap() + 1).into());
    assert_eq!(
        from_one,
        "segments[0].events[0].step: step 1 (`settle`) makes no write, so no event is its own; \
         steps are numbered from 0, settle and wait included; in segment 0 these write: \
         0 (`kubectl apply -f manifests/frontend.yaml`)"
    );
    let elsewhere = frontend_with_steps(|s| *s = 2.into());
    assert!(
        elsewhere.starts_with(
            "segments[0].events[0].step: step 2 (`scheduler: bind pods of frontend to node-1`) \
             writes in segment 1 (before settle point 2), not in this one"
        ),
        "{elsewhere}"
    );
    let past = frontend_with_steps(|s| *s = 9.into());
    assert!(
        past.starts_with(
            "segments[0].events[0].step: step 9 does not exist: the scenario has 5 steps, numbered from 0"
        ),
        "{past}"
    );
}

// Writes a recording does not confirm (`unconfirmed` in an observed trace: their sender got
// no answer, and nothing later shows whether they were committed) are judged both ways: the
// verdict takes the reading a model run produces and says which it took.

/// `frontend.observed.json` (three pods made, bound and Ready) with a controller's deletion
/// of frontend-m2c8t added after its last write, as the import writes a delete whose answer
/// was lost: the mark and the removal, the settled state without the pod. The cluster never
/// deleted it, and `doctor` may change the result further.
fn add_a_lost_delete(trace: &mut Value, unconfirmed: bool) {
    let last = &mut trace["segments"][1];
    let events = last["events"].as_array_mut().unwrap();
    let mut pod = events[5]["object"].clone();
    assert_eq!(pod["metadata"]["name"], "frontend-m2c8t");
    pod["metadata"]["deletionTimestamp"] = "2026-11-22T10:00:09Z".into();
    pod["metadata"]["deletionGracePeriodSeconds"] = 0.into();
    for (event_type, version) in [("MODIFIED", "2001"), ("DELETED", "2002")] {
        let mut object = pod.clone();
        object["metadata"]["resourceVersion"] = version.into();
        let mut event = serde_json::json!({"type": event_type, "object": object});
        if unconfirmed {
            event["unconfirmed"] = true.into();
        }
        events.push(event);
    }
    let pods = last["settled"]["pods"].as_array_mut().unwrap();
    pods.retain(|p| p["metadata"]["name"] != "frontend-m2c8t");
}

/// [`add_a_lost_delete`] and `doctor` on frontend's trace, read.
fn with_a_lost_delete(
    unconfirmed: bool,
    doctor: impl FnOnce(&mut Value),
) -> Result<observed::Observed, String> {
    let text =
        std::fs::read_to_string(root().join("tests/observed/frontend.observed.json")).unwrap();
    let mut trace: Value = serde_json::from_str(&text).unwrap();
    add_a_lost_delete(&mut trace, unconfirmed);
    doctor(&mut trace);
    observed::parse(
        Path::new("doctored.observed.json"),
        &serde_json::to_string(&trace).unwrap(),
    )
    .map_err(|e| e.to_string())
}

#[test]
fn a_write_the_recording_does_not_confirm_is_read_as_a_model_run_has_it() {
    // Taken as committed, the deletion is a controller deleting a pod of a ReplicaSet that
    // has exactly its replicas: no model run does that.
    let confirmed = judged_frontend(|t| add_a_lost_delete(t, false)).unwrap();
    assert!(!confirmed.conforms, "{}", render(&confirmed));
    assert!(confirmed.unconfirmed.is_empty());

    // Unconfirmed, the reading where it was not committed is the cluster's run.
    let v = judged_frontend(|t| add_a_lost_delete(t, true)).unwrap();
    assert!(v.conforms, "{}", render(&v));
    assert_eq!(
        v.unconfirmed,
        ["the deletion of pod/frontend-m2c8t: read as not committed"]
    );
    assert!(render(&v).contains("writes the recording does not confirm"));
}

#[test]
fn no_reading_that_conforms_is_a_divergence_of_the_trace_as_written() {
    // The settled status then claims 1 replica: wrong whether the deletion was committed or
    // not.
    let v = judged_frontend(|trace| {
        add_a_lost_delete(trace, true);
        let rs = &mut trace["segments"][1]["settled"]["replicasets"][0];
        rs["status"]["replicas"] = 1.into();
    })
    .unwrap();
    assert!(!v.conforms, "{}", render(&v));
    assert_eq!(
        v.unconfirmed,
        ["the deletion of pod/frontend-m2c8t: read as committed"]
    );
    let note = v.note.clone().unwrap_or_default();
    assert!(
        note.contains(
            "no reading of the writes the recording does not confirm conforms (2 readings judged"
        ),
        "{}",
        render(&v)
    );
}

#[test]
fn unconfirmed_writes_that_a_later_write_settles_are_refused_naming_the_event() {
    // A later write to the pod shows whether the delete was committed.
    let later = with_a_lost_delete(true, |trace| {
        let events = trace["segments"][1]["events"].as_array_mut().unwrap();
        let mut again = events[5].clone();
        again["object"]["metadata"]["resourceVersion"] = "2003".into();
        events.push(again);
    });
    let e = later.unwrap_err();
    assert!(
        e.contains("segments[1].events[9]: pod/frontend-m2c8t is written after segments[1].events[7], which is unconfirmed"),
        "{e}"
    );

    // The settle point after it lists the pod the unconfirmed deletion removed.
    let listed = with_a_lost_delete(true, |trace| {
        let pod = trace["segments"][1]["events"][5]["object"].clone();
        let pods = trace["segments"][1]["settled"]["pods"]
            .as_array_mut()
            .unwrap();
        pods.push(pod);
    });
    let e = listed.unwrap_err();
    assert!(
        e.contains("segments[1].settled: pod/frontend-m2c8t is listed, but the deletion of pod/frontend-m2c8t is unconfirmed"),
        "{e}"
    );
}
