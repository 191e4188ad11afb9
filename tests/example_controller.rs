//! The deliberately broken example controller (examples/naive-controller): its plan of one
//! poll shows each bug; its committed recordings of the nine seed scenarios on v1.37.2 and
//! v1.20.2 are judged exactly as its expected reports say, each bug named with its property
//! or its differing field and no settle point left unjudged; and, on a local control plane of
//! v1.37.2 without the built-in controller, a live run names the same bugs in one report.
//!
//! `RSMC_UPDATE_EXAMPLES=1` rewrites the expected reports from the recordings (then read the
//! diff: the reports are the guide page's examples).

mod common;

use common::Cluster;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const RELEASES: [&str; 2] = ["v1.37.2", "v1.20.2"];
const RANKING: &str = "scale-down deletes the pods the ranking puts first";
const NEVER_RELEASES: &str = "settled: each ReplicaSet controls spec.replicas matching pods";
const COUNTS_DELETING: &str = "settled: status counts the pods";
const NO_TERMINATING: &str = "differs from v1.37.2: status.terminatingReplicas";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> PathBuf {
    repo().join("examples/naive-controller")
}

/// `python3 controller.py ARGS` in the repository: exit code, stdout, stderr.
fn controller(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new("python3")
        .arg(example().join("controller.py"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("python3 runs (scripts/provision-python installs it)");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn one_poll_plans_the_writes_each_bug_makes() {
    let (code, out, err) =
        controller(&["--plan", "examples/naive-controller/fixtures/cluster.json"]);
    assert_eq!(code, Some(0), "{err}");
    let expected = std::fs::read_to_string(example().join("fixtures/plan.expected.json")).unwrap();
    assert_eq!(out, expected);
    let plan: Value = serde_json::from_str(&out).unwrap();
    let writes: Vec<(String, String, String)> = plan
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let s = |k: &str| w[k].as_str().unwrap_or("-").to_string();
            (s("replicaset"), s("verb"), s("name"))
        })
        .collect();
    let of = |rs: &str| -> Vec<(String, String)> {
        writes
            .iter()
            .filter(|w| w.0 == rs)
            .map(|w| (w.1.clone(), w.2.clone()))
            .collect()
    };
    // A deleting ReplicaSet is left alone: not even its status.
    assert!(of("old").is_empty(), "{writes:?}");
    // No release of web-c (relabelled), the deleting web-b counted, and the surplus deleted
    // by name: the Ready web-a goes, the unscheduled web-new stays.
    let pair = |verb: &str, name: &str| (verb.to_string(), name.to_string());
    assert_eq!(
        of("web"),
        [
            pair("patch", "web-new"),
            pair("delete", "web-a"),
            pair("delete", "web-b"),
            pair("status", "web"),
        ]
    );
    let status = plan
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["verb"] == "status" && w["replicaset"] == "web")
        .unwrap();
    assert_eq!(status["body"]["status"]["replicas"], 4);
    assert!(status["body"]["status"]
        .get("terminatingReplicas")
        .is_none());
    assert_eq!(of("api"), [pair("create", "-"), pair("create", "-")]);
}

#[test]
fn bad_input_is_named_with_exit_2() {
    let missing = "examples/naive-controller/fixtures/no-such.json";
    let (code, _, err) = controller(&["--plan", missing]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no-such.json"), "{err}");
    let bad = std::env::temp_dir().join(format!("naive-bad-{}.json", std::process::id()));
    std::fs::write(&bad, "{\"replicasets\": []}").unwrap();
    let (code, _, err) = controller(&["--plan", bad.to_str().unwrap()]);
    std::fs::remove_file(&bad).unwrap();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("pods"), "{err}");
}

/// Each committed recording of `release`: (scenario name, recording path).
fn recordings(release: &str) -> Vec<(String, PathBuf)> {
    let dir = example().join("recordings").join(release);
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let file = p.file_name().unwrap().to_str().unwrap();
            (file.split('.').next().unwrap().to_string(), p.clone())
        })
        .collect();
    out.sort();
    assert_eq!(out.len(), 9, "the nine seed scenarios in {}", dir.display());
    out
}

/// `rsmc oracle` on a committed recording, run from the repository with relative paths as
/// the guide shows it: exit code and output.
fn judged(name: &str, recording: &Path) -> (Option<i32>, String) {
    judged_with(name, recording, &[])
}

/// [`judged`] with more arguments.
fn judged_with(name: &str, recording: &Path, extra: &[&str]) -> (Option<i32>, String) {
    let scenario = format!("conformance/scenarios/{name}.yaml");
    let observed = recording.strip_prefix(repo()).unwrap().to_str().unwrap();
    let o = Command::new(common::RSMC)
        .args(["oracle", "--scenario", &scenario, "--observed", observed])
        .args(extra)
        .current_dir(repo())
        .output()
        .unwrap();
    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    (o.status.code(), text)
}

/// The findings a report lists at its end (`found (at settle points):`), without their
/// settle points; and for a stopped run, its one line.
fn found(report: &str) -> Vec<String> {
    let Some((_, list)) = report.split_once("\nfound (at settle points):\n") else {
        return Vec::new();
    };
    list.lines()
        .map(|l| {
            l.trim()
                .rsplit_once(" (")
                .map_or(l, |(what, _)| what)
                .to_string()
        })
        .collect()
}

#[test]
fn the_recorded_reports_are_as_expected_and_name_each_bug() {
    let update = std::env::var_os("RSMC_UPDATE_EXAMPLES").is_some();
    let mut stale = Vec::new();
    for release in RELEASES {
        for (name, recording) in recordings(release) {
            let (code, report) = judged(&name, &recording);
            let file = example().join(format!("expected/{release}/{name}.txt"));
            if update {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, &report).unwrap();
            } else if std::fs::read_to_string(&file).ok().as_deref() != Some(&report) {
                stale.push(format!("{}:\n{report}", file.display()));
            }
            let conforms =
                report.contains(": CONFORMS\n") || report.contains("conforms up to the stop");
            assert_eq!(code, Some(if conforms { 0 } else { 1 }), "{report}");
            assert!(
                !report.contains("not judged: an earlier settle point diverged"),
                "{release} {name}: a settle point left unjudged:\n{report}"
            );
            let found = found(&report);
            let want: &[&str] = match (release, name.as_str()) {
                ("v1.37.2", "isolate-by-relabelling") => &[NO_TERMINATING, NEVER_RELEASES],
                ("v1.37.2", "scale") => &[NO_TERMINATING, RANKING, COUNTS_DELETING],
                ("v1.37.2", "bare-pods-after") => &[NO_TERMINATING, RANKING, COUNTS_DELETING],
                ("v1.37.2", "delete-foreground") => &[],
                ("v1.37.2", _) => &[NO_TERMINATING],
                ("v1.20.2", "isolate-by-relabelling") => &[NEVER_RELEASES],
                ("v1.20.2", "scale") => &[COUNTS_DELETING],
                ("v1.20.2", "bare-pods-after") => &[RANKING, COUNTS_DELETING],
                _ => &[],
            };
            assert_eq!(found, want, "{release} {name}:\n{report}");
            // Each divergence says which fields differ.
            if found.iter().any(|f| f != NO_TERMINATING) {
                assert!(
                    report.contains("differs from the closest allowed in:"),
                    "{report}"
                );
            }
        }
    }
    // The stopped run before its stop: on v1.37.2 the status left without
    // terminatingReplicas, named as the release difference it is, at each settle point.
    let (_, report) = judged(
        "delete-foreground",
        &example().join("recordings/v1.37.2/delete-foreground.observed.stopped.json"),
    );
    assert!(
        report.contains("differs from v1.37.2: status.terminatingReplicas up to the stop"),
        "{report}"
    );
    // And what comes after that first divergence is judged too, from the cluster's objects.
    assert!(
        report.contains(
            "; then, judged from the cluster's objects at settle point 1: differs from v1.37.2"
        ),
        "{report}"
    );
    assert!(
        stale.is_empty(),
        "reports differ from the expected ones (RSMC_UPDATE_EXAMPLES=1 rewrites them):\n{}",
        stale.join("\n")
    );
}

/// The v1.37.2 recordings judged by the contract of v1.34 (a controller meant for a release
/// before `terminatingReplicas`): the release difference is gone, every real bug stays.
#[test]
fn judged_by_a_v1_34_contract_only_the_real_bugs_remain() {
    for (name, recording) in recordings("v1.37.2") {
        let (_, plain) = judged(&name, &recording);
        let (code, report) = judged_with(&name, &recording, &["--contract", "v1.34"]);
        assert!(
            report.starts_with(&format!(
                "rsmc oracle: scenario {name} (contract v1.34 on a v1.37.2 server; "
            )) || report.contains("the run stopped"),
            "{report}"
        );
        let want: Vec<String> = found(&plain)
            .into_iter()
            .filter(|f| f != NO_TERMINATING)
            .collect();
        assert_eq!(found(&report), want, "{name}:\n{report}");
        assert_eq!(code, Some(if want.is_empty() { 0 } else { 1 }), "{report}");
    }
}

/// On a live v1.37.2 control plane without the built-in controller: one `rsmc conform` run of
/// the nine seed scenarios lists each bug the suite exercises, in the summary and in the
/// verdicts, with no settle point left unjudged. Only what every run shows is asserted: which
/// pods a scale-down by name picks depends on the random names, so the ranking bug is not.
#[test]
fn a_live_run_on_v1_37_names_each_bug_in_one_report() {
    let mut cluster = Cluster::up(
        "naive-controller",
        &["--kubernetes", "1.37", "--without-replicaset"],
    );
    let report = std::env::temp_dir().join(format!("rsmc-naive-report-{}", std::process::id()));
    let command = format!("python3 {}", example().join("controller.py").display());
    let scenarios: Vec<String> = std::fs::read_dir(repo().join("conformance/scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(scenarios.len(), 9);
    let mut args = vec!["--controller", "external", "--controller-cmd", &command];
    args.extend(scenarios.iter().map(String::as_str));
    let (runs, code, output) = common::conform(&cluster, &args, &report);
    assert_eq!(code, Some(1), "{output}");
    let findings = |name: &str| -> Vec<String> {
        let run = runs.iter().find(|r| r["scenario"] == name).unwrap();
        run["verdict"]["findings"]
            .as_array()
            .map(|f| {
                f.iter()
                    .map(|f| f["what"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    for run in &runs {
        let name = run["scenario"].as_str().unwrap();
        for point in run["verdict"]["settle_points"]
            .as_array()
            .into_iter()
            .flatten()
        {
            for level in ["outcome", "trace"] {
                assert_ne!(
                    point[level]["result"], "not_judged",
                    "{name}: settle point {} unjudged:\n{output}",
                    point["index"]
                );
            }
        }
        if name == "delete-foreground" {
            // Leaves the deleting ReplicaSet alone: it never catches up its generation.
            let error = run["error"]["message"].as_str().unwrap_or_default();
            assert!(
                error.contains("did not settle") && error.contains("observedGeneration"),
                "{output}"
            );
        } else {
            assert!(
                findings(name).iter().any(|f| f == NO_TERMINATING),
                "{name}: {:?}\n{output}",
                findings(name)
            );
        }
    }
    assert!(
        findings("isolate-by-relabelling")
            .iter()
            .any(|f| f == NEVER_RELEASES),
        "{output}"
    );
    assert!(
        findings("scale").iter().any(|f| f == COUNTS_DELETING),
        "{output}"
    );
    let _ = std::fs::remove_dir_all(&report);
    let _ = std::fs::remove_dir_all(report.with_extension("home"));
    cluster.down_and_check();
}
