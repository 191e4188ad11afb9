//! End-to-end tests of the `rsmc` command line.

use std::process::Command;

fn rsmc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rsmc"))
        .args(args)
        .output()
        .expect("rsmc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rsmc-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn unknown_profile_lists_the_valid_ones_and_exits_2() {
    let (code, _, err) = rsmc(&["check", "--profile", "nonsense"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("valid profiles are k8s-1.20, upstream"),
        "{err}"
    );
}

#[test]
fn misspelt_config_field_is_named_and_exits_2() {
    let dir = temp_dir("misspelt");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.json");
    std::fs::write(&file, "{\n  \"controller\": {\"wrokers\": 2}\n}\n").unwrap();
    let (code, out, err) = rsmc(&["check", "--config", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("unknown field `wrokers`"), "{err}");
    assert!(err.contains("bad.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn impossible_bound_is_named_and_exits_2() {
    let dir = temp_dir("bound");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bound.json");
    std::fs::write(&file, r#"{"preset": "small", "informer": {"maxLag": 0}}"#).unwrap();
    let (code, _, err) = rsmc(&["check", "--config", file.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("field `informer.maxLag`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_configuration_where_everything_holds_exits_0_and_reports_every_property() {
    let dir = temp_dir("holds");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("no-bare-pods.json");
    std::fs::write(
        &file,
        r#"{"preset": "small", "environment": {"createPod": false}}"#,
    )
    .unwrap();
    let out_dir = dir.join("out");
    let (code, out, _) = rsmc(&[
        "check",
        "--config",
        file.to_str().unwrap(),
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert!(report["unique_states"].as_u64().unwrap() > 1000, "{report}");
    let props = report["properties"].as_array().unwrap();
    assert_eq!(props.len(), 15);
    for p in props.iter().filter(|p| p["kind"] == "safety") {
        assert_eq!(p["result"], "holds", "{p}");
    }
    assert!(!out_dir.exists(), "no violation, so no trace directory");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_violation_exits_1_and_writes_trace_and_tables() {
    let dir = temp_dir("violation");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/configs/recreate.json");
    let (code, out, _) = rsmc(&["check", "--config", config, "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("violation: status consistent"), "{out}");
    assert!(out.contains("violating step:"), "{out}");
    assert!(out.contains("user: kubectl delete rs/frontend"), "{out}");
    let json = dir.join("k8s-1.20-status-consistent.trace.json");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(trace["schema"], "rsmc-trace/v1");
    assert_eq!(trace["property"], "status consistent");
    let env = trace["environment"].as_array().unwrap();
    assert!(
        env.iter().any(|a| a.get("DeleteReplicaSet").is_some())
            && env.iter().any(|a| a.get("ApplyReplicaSet").is_some()),
        "the recreate race needs a delete and a create: {env:?}"
    );
    // The file is the documented schema: it parses back into the oracle's `Trace`, and its
    // last step shows the violation (observedGeneration beyond generation).
    let parsed: rsmc_oracle::trace::Trace =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).expect("trace parses");
    let last = parsed.steps.last().expect("steps");
    assert!(
        last.objects
            .replicasets
            .values()
            .any(|rs| rs.status.observed_generation > rs.meta.generation),
        "{last:?}"
    );
    let text = std::fs::read_to_string(dir.join("k8s-1.20-status-consistent.txt")).unwrap();
    assert!(text.contains("$ kubectl get rs -o wide"), "{text}");
    assert!(
        text.contains("NAME       DESIRED   CURRENT   READY"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
