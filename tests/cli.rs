//! End-to-end tests of the `rsmc` command line.

use std::path::{Path, PathBuf};
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

/// A path that does not exist yet, `NAME` in a fresh temporary directory that is removed
/// with everything in it when the test ends, passed or failed.
struct Scratch {
    _root: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

fn temp_dir(name: &str) -> Scratch {
    let root = tempfile::Builder::new()
        .prefix("rsmc-cli-")
        .tempdir()
        .expect("a temporary directory");
    Scratch {
        path: root.path().join(name),
        _root: root,
    }
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
fn an_audit_log_in_a_missing_directory_is_refused_before_anything_starts() {
    let state = temp_dir("cluster");
    let log = state.with_file_name("nowhere").join("audit.log");
    let (code, _, err) = rsmc(&[
        "cluster",
        "up",
        "--audit-log",
        log.to_str().unwrap(),
        "--state-dir",
        state.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--audit-log") && err.contains("its directory cannot be used"),
        "{err}"
    );
    assert!(!state.exists(), "nothing is created");
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
    assert_eq!(props.len(), 22);
    for p in props.iter().filter(|p| p["kind"] != "coverage") {
        assert_eq!(p["result"], "holds", "{p}");
    }
    assert_eq!(props[21]["kind"], "liveness");
    // The convergence search identifies states up to revisions only, not up to pod renaming:
    // it meets as many states as the safety search with the symmetry off, and more than with.
    let (code, out, _) = rsmc(&[
        "check",
        "--config",
        file.to_str().unwrap(),
        "--json",
        "--skip-liveness",
        "--no-symmetry",
    ]);
    assert_eq!(code, 0, "{out}");
    let without: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["liveness_states"], without["unique_states"]);
    assert!(
        report["unique_states"].as_u64() < without["unique_states"].as_u64(),
        "{report}"
    );
    assert!(!out_dir.exists(), "no violation, so no trace directory");
}

#[test]
fn a_violation_exits_1_and_writes_trace_and_tables() {
    let dir = temp_dir("violation");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/configs/recreate.json");
    // The race is a catalogued open one: reported, marked, and failing only with --strict.
    let (code, out, _) = rsmc(&[
        "check",
        "--config",
        config,
        "--skip-liveness",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("violated — known upstream race status-onto-recreated"),
        "{out}"
    );
    let (code, out, _) = rsmc(&[
        "check",
        "--config",
        config,
        "--strict",
        "--skip-liveness",
        "--out",
        dir.to_str().unwrap(),
    ]);
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
}

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn replay_prints_the_seed_views_settle_point_by_settle_point() {
    let (code, out, err) = rsmc(&["replay", &repo("conformance/scenarios/frontend.yaml")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("== settle point 2, after:"), "{out}");
    assert!(
        out.contains("frontend   3         3         3       tier=frontend\n"),
        "{out}"
    );
    assert!(out.contains("AVAILABLE   TERMINATING\n"), "{out}");
    assert_eq!(out.matches("1/1     Running").count(), 3, "{out}");
}

#[test]
fn oracle_exit_codes_follow_the_verdict() {
    let scenario = repo("oracle/tests/scenarios/ranking.yaml");
    let good = repo("oracle/tests/observed/ranking.observed.json");
    let bad = repo("oracle/tests/observed/ranking-wrong-victim.observed.json");
    let (code, out, _) = rsmc(&["oracle", "--scenario", &scenario, "--observed", &good]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("CONFORMS"), "{out}");
    let (code, out, _) = rsmc(&["oracle", "--scenario", &scenario, "--observed", &bad]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("DOES NOT CONFORM"), "{out}");
    assert!(out.contains("first divergent step: 5"), "{out}");
    // Everything found is listed once at the end, with its settle points.
    assert!(
        out.contains("\nfound (at settle points):\n    scale-down deletes the pods the ranking puts first (3)\n"),
        "{out}"
    );
    let (code, out, _) = rsmc(&[
        "oracle",
        "--scenario",
        &scenario,
        "--observed",
        &bad,
        "--json",
    ]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON verdict");
    assert_eq!(v["conforms"], false);
    assert_eq!(v["settle_points"][2]["trace"]["result"], "diverges");
    assert_eq!(
        v["findings"],
        serde_json::json!([{"what": "scale-down deletes the pods the ranking puts first", "settle_points": [3]}])
    );
}

/// A recording whose steps are numbered from 1 (each user write given to the step after it)
/// is bad input, exit 2, with the file and the event named, not a controller found writing
/// what only the user may.
#[test]
fn oracle_refuses_steps_numbered_from_one_with_exit_2() {
    let scenario = repo("oracle/tests/scenarios/ranking.yaml");
    let text =
        std::fs::read_to_string(repo("oracle/tests/observed/ranking.observed.json")).unwrap();
    let mut observed: serde_json::Value = serde_json::from_str(&text).unwrap();
    for segment in observed["segments"].as_array_mut().unwrap() {
        for event in segment["events"].as_array_mut().unwrap() {
            if let Some(step) = event.get("step").and_then(|s| s.as_u64()) {
                event["step"] = (step + 1).into();
            }
        }
    }
    let file = temp_dir("from-one.observed.json");
    std::fs::write(&file, observed.to_string()).unwrap();
    let (code, out, err) = rsmc(&[
        "oracle",
        "--scenario",
        &scenario,
        "--observed",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.starts_with(&format!(
            "error: {}: segments[0].events[0].step: step 1",
            file.display()
        )),
        "{err}"
    );
    assert!(err.contains("numbered from 0"), "{err}");
}

/// `ranking.observed.json` as if recorded on another cluster: `cluster` replaced.
fn ranking_recorded_on(cluster: serde_json::Value) -> Scratch {
    let text =
        std::fs::read_to_string(repo("oracle/tests/observed/ranking.observed.json")).unwrap();
    let mut observed: serde_json::Value = serde_json::from_str(&text).unwrap();
    observed["cluster"] = cluster;
    let file = temp_dir("ranking.observed.json");
    std::fs::write(&file, observed.to_string()).unwrap();
    file
}

#[test]
fn oracle_judges_a_recording_as_its_release_did() {
    let scenario = repo("oracle/tests/scenarios/ranking.yaml");
    let judged = |cluster: serde_json::Value, extra: &[&str]| {
        let file = ranking_recorded_on(cluster);
        let path = file.to_str().unwrap().to_string();
        let mut args = vec![
            "oracle",
            "--scenario",
            &scenario,
            "--observed",
            &path,
            "--json",
        ];
        args.extend(extra);
        let (code, out, err) = rsmc(&args);
        assert_ne!(code, 2, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON verdict");
        (v["profile"].clone(), v["switches"].clone())
    };
    // v1.35 has no consistency gate: upstream's behaviour with that gate off.
    let (profile, switches) = judged(serde_json::json!({"server": "v1.35.4"}), &[]);
    assert_eq!(profile, "upstream");
    assert_eq!(
        switches,
        serde_json::json!(["gate StaleControllerConsistencyReplicaSet=false"])
    );
    // The gates a cluster ran with are followed; the command line's profile wins.
    let cluster = serde_json::json!({"server": "v1.37.2", "featureGates": "PodDeletionCost=false"});
    let (profile, switches) = judged(cluster.clone(), &[]);
    assert_eq!(profile, "upstream");
    assert_eq!(switches, serde_json::json!(["gate PodDeletionCost=false"]));
    let (profile, _) = judged(cluster, &["--profile", "k8s-1.20"]);
    assert_eq!(profile, "k8s-1.20");
    let (profile, _) = judged(serde_json::json!({"server": "v1.20.2"}), &[]);
    assert_eq!(profile, "k8s-1.20");
    // A gate the release does not have is bad input.
    let file = ranking_recorded_on(serde_json::json!({
        "server": "v1.35.4",
        "featureGates": "StaleControllerConsistencyReplicaSet=true"
    }));
    let (code, _, err) = rsmc(&[
        "oracle",
        "--scenario",
        &scenario,
        "--observed",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cluster.featureGates: feature gate StaleControllerConsistencyReplicaSet does not exist in Kubernetes v1.35"),
        "{err}"
    );
}

/// The kind workflow users copy (`.github/workflows/conform-kind.yaml`) runs on GitHub, not
/// here; what can be checked is that it runs the commands the project's CI runs on kind
/// (`tests/kind.rs`: `cluster up --kind`, `conform --local --kubelet real`) and asks each only
/// for flags it has. A flag on a `set --` or `…SWITCHES:` line belongs to the next rsmc
/// command.
#[test]
fn the_kind_workflow_runs_the_commands_ci_runs_with_flags_rsmc_has() {
    let workflow = std::fs::read_to_string(repo(".github/workflows/conform-kind.yaml")).unwrap();
    let flags_of = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .filter(|w| w.starts_with("--") && w.len() > 2)
            .map(|w| w.trim_end_matches(';').to_string())
            .collect()
    };
    let mut pending = Vec::new();
    let mut checked = Vec::new();
    for line in workflow
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
    {
        if line.contains("set --") || line.contains("SWITCHES:") {
            pending.extend(flags_of(line));
            continue;
        }
        let Some(at) = line.find("rsmc ") else {
            continue;
        };
        let words: Vec<&str> = line[at..].split_whitespace().collect();
        let command: Vec<&str> = match words.get(1) {
            Some(&"cluster") => words[1..3].to_vec(),
            Some(&"conform") => vec!["conform"],
            _ => continue,
        };
        let (_, help, _) = rsmc(&[&command[..], &["--help"]].concat());
        let mut flags = flags_of(&line[at..]);
        flags.append(&mut pending);
        for flag in &flags {
            assert!(
                help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
                "rsmc {} has no {flag}",
                command.join(" ")
            );
        }
        checked.push((command.join(" "), flags));
    }
    let has = |command: &str, flag: &str| {
        checked
            .iter()
            .any(|(c, f)| c == command && f.iter().any(|x| x == flag))
    };
    assert!(has("cluster up", "--kind"), "{checked:?}");
    assert!(has("cluster up", "--without-replicaset"), "{checked:?}");
    assert!(has("conform", "--local"), "{checked:?}");
    assert!(has("conform", "--kubelet"), "{checked:?}");
    assert!(has("conform", "--controller-cmd"), "{checked:?}");
    assert!(
        checked.iter().any(|(c, _)| c == "cluster down"),
        "{checked:?}"
    );
    assert!(
        workflow.contains("--kubelet real"),
        "the suite on real kubelets"
    );
}

#[test]
fn a_replay_past_its_memory_budget_stops_with_exit_3_and_names_the_limit() {
    let scenario = repo("oracle/tests/scenarios/scale-down-12.yaml");
    let (code, out, err) = rsmc(&["replay", &scenario, "--memory-limit", "8M"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("memory budget of 8 MiB") && err.contains("--memory-limit"),
        "{err}"
    );
    let (code, _, err) = rsmc(&["replay", &scenario, "--state-limit", "1000"]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("state limit of 1,000 states") && err.contains("--state-limit"),
        "{err}"
    );
    let (code, _, err) = rsmc(&["replay", &scenario, "--memory-limit", "lots"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected a size such as 8G"), "{err}");
}

#[test]
fn a_check_past_its_memory_budget_stops_with_exit_3() {
    let (code, out, err) = rsmc(&["check", "--config", "default", "--memory-limit", "64M"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        err.contains("the safety search of default stopped at depth")
            && err.contains("memory budget of 64 MiB"),
        "{err}"
    );
}

#[test]
fn oracle_bad_input_names_file_and_line_and_exits_2() {
    let dir = temp_dir("oracle-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let observed = dir.join("o.json");
    std::fs::write(
        &observed,
        "{\n  \"schema\": \"rsmc-observed/v1\",\n  \"scenario\": [\n}\n",
    )
    .unwrap();
    let scenario = repo("oracle/tests/scenarios/orphan.yaml");
    let (code, _, err) = rsmc(&[
        "oracle",
        "--scenario",
        &scenario,
        "--observed",
        observed.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("o.json:3:14: scenario: invalid type: sequence, expected a string"),
        "{err}"
    );
    let bad_scenario = dir.join("s.yaml");
    std::fs::write(
        &bad_scenario,
        "name: x\nsteps:\n  - scale: {replicaset: a, replicas: three}\n",
    )
    .unwrap();
    let (code, _, err) = rsmc(&["replay", bad_scenario.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("s.yaml:3:"), "{err}");
}

/// Counterexamples and cover runs become scenarios the model replays.
#[test]
fn model_runs_become_replayable_scenarios() {
    let dir = temp_dir("runs");
    let config = repo("tests/configs/recreate.json");
    let (code, out, _) = rsmc(&[
        "check",
        "--config",
        &config,
        "--skip-liveness",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "a known race: {out}");
    let scenario = dir.join("k8s-1.20-status-consistent.scenario.yaml");
    assert!(out.contains(scenario.to_str().unwrap()), "{out}");
    let (code, out, err) = rsmc(&["replay", scenario.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("kubectl scale rs/frontend --replicas=1"),
        "{out}"
    );

    let trace = dir.join("k8s-1.20-status-consistent.trace.json");
    let (code, yaml, err) = rsmc(&["scenario", "--from-trace", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // The same steps as the scenario `check` wrote (only the name and description differ).
    let steps = |text: &str| text.split_once("\nsteps:").map(|(_, s)| s.to_string());
    let written = std::fs::read_to_string(&scenario).unwrap();
    assert!(steps(&yaml).is_some(), "{yaml}");
    assert_eq!(steps(&yaml), steps(&written));

    let cover = dir.join("cover");
    let (code, out, err) = rsmc(&[
        "traces",
        "--cover",
        "--config",
        "small",
        "--out",
        cover.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("situation: the controller adopts a bare pod"),
        "{out}"
    );
    assert!(
        out.contains("situation: the ranking has a tie among scale-down victims"),
        "{out}"
    );
    let first = cover.join("cover-k8s-1.20-1.yaml");
    let (code, _, err) = rsmc(&["replay", first.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

/// `rsmc bugs` lists the catalogue; `--json` carries every entry's number and property.
#[test]
fn bugs_lists_the_catalogue() {
    let (code, out, _) = rsmc(&["bugs", "--json"]);
    assert_eq!(code, 0);
    let entries: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let entries = entries.as_array().expect("a list");
    assert!(entries.len() >= 8, "{out}");
    for e in entries {
        for field in ["name", "upstream", "status", "summary", "property"] {
            assert!(e[field].is_string(), "{field} in {e}");
        }
    }
    let (code, out, _) = rsmc(&["bugs"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("#129795") && out.contains("no-expectations"),
        "{out}"
    );
}

/// A switch re-introduces a fixed bug on its catalogue configuration: exit 1, the named
/// property violated, and the Explorer command carries the switch. Its property is a safety
/// one, so the convergence search is skipped, and says so.
#[test]
fn check_with_a_bug_finds_it_and_says_how_to_open_it() {
    let dir = temp_dir("bug");
    let (code, out, err) = rsmc(&[
        "check",
        "--bug",
        "no-expectations",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("configuration catalogue/no-expectations"),
        "{out}"
    );
    assert!(
        out.contains("violation: creations never exceed the replicas acted on"),
        "{out}"
    );
    assert!(out.contains("--bug no-expectations --trace"), "{out}");
    assert!(err.contains("convergence search skipped"), "{err}");
    // The trace records the bug: the scenario of it names the bug it reproduces, whether
    // `check` wrote it or `rsmc scenario --from-trace` converts the trace.
    let stem = "k8s-1.20-creations-never-exceed-the-replicas-acted-on";
    let written = std::fs::read_to_string(dir.join(format!("{stem}.scenario.yaml"))).unwrap();
    assert!(
        written.contains("\nreproduces: no-expectations\n"),
        "{written}"
    );
    let trace = dir.join(format!("{stem}.trace.json"));
    let (code, yaml, err) = rsmc(&["scenario", "--from-trace", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "a trace of a --bug model converts: {err}");
    assert!(yaml.contains("\nreproduces: no-expectations\n"), "{yaml}");
    assert!(!out.contains("eventually converges"), "{out}");
    let (code, _, err) = rsmc(&["check", "--bug", "expectations-expiry"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("open upstream issue (#129795, #130767), not a switch"),
        "{err}"
    );
}

/// A counterexample whose late request is the second of a burst (a sync creates two pods and
/// the second lands after the scheduler's write) gets a hold placed before the burst that
/// lets the first through — a hold between the two would catch either by chance on a
/// cluster — and its scenario still reaches the violation in the model.
#[test]
fn a_hold_that_must_catch_the_second_of_a_burst_lets_the_first_through() {
    let dir = temp_dir("burst");
    let (code, out, _) = rsmc(&[
        "check",
        "--bug",
        "ignore-ranking",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    let stem = "k8s-1.20-scale-down-deletes-the-pods-the-ranking-puts-first";
    let written = std::fs::read_to_string(dir.join(format!("{stem}.scenario.yaml"))).unwrap();
    let steps = &written[written.find("\nsteps:\n").expect("steps")..];
    assert!(
        steps.starts_with(
            "\nsteps:\n- hold: {after: 1, requests: {verb: create, resource: pods}}\n- apply:"
        ),
        "{written}"
    );
    // The hold before the scale comes once the sync's status update (trace step 13) has
    // landed and reached the controller, as in the run: caught by the hold, that update kept
    // v1.37.2's consistency gate from syncing frontend again, and the run stopped.
    assert!(
        steps.contains("- settle\n- hold: replicasets\n- scale:"),
        "{written}"
    );
    let words = written.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("In the model, a run of this scenario breaks"),
        "{written}"
    );
}

/// `rsmc bench` measures each configuration in its own `rsmc check` process and reports the
/// states it explored (pinned: a change to the model's size shows here too) and its peak
/// memory, and with `--compare-reduction` how many more states the search explores without
/// the pod symmetry and without any reduction (all pinned).
#[test]
fn bench_reports_states_and_peak_memory() {
    let (code, out, err) = rsmc(&[
        "bench",
        "--config",
        "catalogue/no-expectations",
        "--profile",
        "k8s-1.20",
        "--compare-reduction",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["unique_states"], 4_797, "{row}");
    assert_eq!(row["unique_states_without_symmetry"], 7_037, "{row}");
    assert_eq!(row["unique_states_without_reduction"], 14_560, "{row}");
    assert!(row["reduction_factor"].as_f64().unwrap() > 3.0, "{row}");
    assert!(row["symmetry_factor"].as_f64().unwrap() > 1.4, "{row}");
    assert!(
        row["peak_memory_bytes"].as_u64().unwrap() > 1_000_000,
        "{row}"
    );
    assert!(row["unique_per_second"].as_f64().unwrap() > 0.0, "{row}");
}

/// `rsmc bench --oracle` measures each case in its own process: the small replays' states are
/// pinned (as in `oracle/tests/replay_scale.rs`), so a change to the model's size shows here.
#[test]
fn bench_oracle_measures_the_small_replays() {
    let (code, out, err) = rsmc(&["bench", "--oracle", "--cases=-> 3 ->,-> 5 ->", "--json"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    let got: Vec<(&str, u64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["case"].as_str().unwrap(),
                r["states"].as_u64().unwrap(),
                r["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("replay 3 -> 3 -> 1", 164, "replayed"),
            ("replay 3 -> 5 -> 1", 384, "replayed"),
        ]
    );
    assert!(rows
        .iter()
        .all(|r| r["peak_memory_bytes"].as_u64() > Some(1_000_000)));
    let (code, _, err) = rsmc(&["bench", "--oracle", "--cases=nothing-like-this"]);
    assert_eq!(code, 2);
    assert!(err.contains("no case matches"), "{err}");
}

/// Zero checker threads would search nothing and report progress for ever.
#[test]
fn zero_threads_is_refused_with_exit_2() {
    for command in ["check", "bench"] {
        let (code, _, err) = rsmc(&[command, "--threads", "0"]);
        assert_eq!(code, 2, "{command}: {err}");
        assert!(
            err.contains("--threads") && err.contains("expected at least 1"),
            "{command}: {err}"
        );
    }
}

/// A counterexample that cannot be written (`--out` under a file) fails the check: a
/// violation nobody can read is no result. The JSON says so in its verdict fields.
#[test]
fn a_counterexample_that_cannot_be_written_fails_with_exit_2() {
    let dir = temp_dir("unwritable");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("afile");
    std::fs::write(&file, "not a directory").unwrap();
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/configs/recreate.json");
    let out_dir = file.join("x");
    let (code, out, err) = rsmc(&[
        "check",
        "--config",
        config,
        "--skip-liveness",
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("cannot write the counterexample of \"status consistent\""),
        "{err}"
    );
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(report["exit_code"], 2, "{report}");
    assert_eq!(report["verdict"], "violated", "{report}");
}

/// A configuration path that does not exist is named as a missing file, not as an unknown
/// preset.
#[test]
fn a_missing_configuration_file_is_named_as_missing() {
    let (code, _, err) = rsmc(&["check", "--config", "/nonexistent.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/nonexistent.json: no such configuration file"),
        "{err}"
    );
    let (code, _, err) = rsmc(&["check", "--config", "smal"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown configuration \"smal\""), "{err}");
}

/// The report gives each search's states, time and rate, and the whole run's time; the JSON
/// has a top-level verdict and what its exit code means.
#[test]
fn the_check_report_gives_each_phase_and_an_overall_verdict() {
    // `small` breaks one property, by a known upstream race: exit 0, and the verdict says so.
    let dir = temp_dir("phases");
    let out_dir = dir.to_str().unwrap();
    let (code, out, _) = rsmc(&["check", "--config", "small", "--json", "--out", out_dir]);
    assert_eq!(code, 0, "{out}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(r["verdict"], "known violations only", "{r}");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(
        r["exit_meaning"],
        "every violation is a known open upstream issue (--strict fails on them)",
        "{r}"
    );
    let safety = r["safety_seconds"].as_f64().unwrap();
    let liveness = r["liveness_seconds"].as_f64().unwrap();
    let total = r["seconds"].as_f64().unwrap();
    assert!(safety + liveness <= total + 1e-6, "{r}");
    let rate = r["unique_per_second"].as_f64().unwrap();
    let unique = r["unique_states"].as_f64().unwrap();
    assert!((rate * safety - unique).abs() <= unique * 0.01 + 1.0, "{r}");
    let (code, out, _) = rsmc(&["check", "--config", "small", "--out", out_dir]);
    assert_eq!(code, 0, "{out}");
    for line in [
        "  safety: ",
        "  liveness: ",
        "  total: ",
        "  verdict: known violations only (exit 0",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let strict = [
        "check",
        "--config",
        "small",
        "--json",
        "--strict",
        "--skip-liveness",
    ];
    let (code, out, _) = rsmc(&[&strict[..], &["--out", out_dir]].concat());
    assert_eq!(code, 1, "{out}");
    let r: serde_json::Value = serde_json::from_str(&out).expect("JSON report");
    assert_eq!(r["verdict"], "violated", "{r}");
    assert_eq!(r["exit_code"], 1, "{r}");
    assert!(r["liveness_seconds"].is_null(), "{r}");
}

/// A counterexample is the same file on every run, whatever the thread count: the shortest,
/// and among the shortest the first a one-thread breadth-first search meets.
#[test]
fn counterexamples_are_byte_identical_across_runs_and_thread_counts() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/configs/recreate.json");
    let files = |threads: &str| {
        let dir = temp_dir(&format!("threads-{threads}"));
        let (code, out, err) = rsmc(&[
            "check",
            "--config",
            config,
            "--strict",
            "--skip-liveness",
            "--threads",
            threads,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, 1, "{out}{err}");
        let mut names: Vec<_> = std::fs::read_dir(&*dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        assert!(!names.is_empty(), "{out}");
        names
            .iter()
            .map(|p| (p.file_name().unwrap().to_owned(), std::fs::read(p).unwrap()))
            .collect::<Vec<_>>()
    };
    let one = files("1");
    for threads in ["2", "2", "4"] {
        assert!(
            one == files(threads),
            "the files differ with --threads {threads}"
        );
    }
}

/// A value of the wrong type in a configuration file is named by its field and line, as an
/// unknown field is.
#[test]
fn a_config_value_of_the_wrong_type_names_field_and_line() {
    let dir = temp_dir("wrong-type");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lag.json");
    std::fs::write(
        &file,
        "{\n  \"preset\": \"small\",\n  \"informer\": {\n    \"maxLag\": \"one\"\n  }\n}\n",
    )
    .unwrap();
    let (code, _, err) = rsmc(&["check", "--config", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{}:4:5: field `informer.maxLag`: invalid type: string \"one\", expected u32",
            file.display()
        )),
        "{err}"
    );
    std::fs::write(&file, "{\n  \"controller\": {\"wrokers\": 2}\n}\n").unwrap();
    let (code, _, err) = rsmc(&["check", "--config", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{}:2:", file.display()))
            && err.contains("field `controller.wrokers`: unknown field `wrokers`"),
        "{err}"
    );
}

/// `rsmc bugs | head -1`: a reader that closes the pipe early ends the command quietly (141,
/// as SIGPIPE would), not with a panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    for _ in 0..3 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rsmc"))
            .arg("bugs")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("rsmc runs");
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            matches!(out.status.code(), Some(0 | 141)),
            "{:?} {err}",
            out.status
        );
    }
}

/// `rsmc import` writes a scenario and an observed trace that `rsmc oracle` judges, says how,
/// refuses to replace files it did not write (exit 2), and names a bad line (exit 2).
#[test]
fn import_writes_what_the_oracle_judges_and_refuses_bad_input() {
    let out = temp_dir("imported");
    let log = repo("oracle/tests/audit/delete-orphan.audit.log");
    let args = [
        "import",
        "--audit-log",
        &log,
        "--name",
        "orphan",
        "--out",
        out.to_str().unwrap(),
    ];
    let (code, stdout, err) = rsmc(&args);
    assert_eq!(code, 0, "{err}");
    let scenario = out.join("orphan.yaml");
    let observed = out.join("orphan.observed.json");
    assert!(
        stdout.contains(&format!(
            "rsmc oracle --scenario {} --observed {}",
            scenario.display(),
            observed.display()
        )),
        "{stdout}"
    );
    let (code, verdict, err) = rsmc(&[
        "oracle",
        "--scenario",
        scenario.to_str().unwrap(),
        "--observed",
        observed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{verdict}{err}");
    assert!(
        verdict.contains("(profile k8s-1.20): CONFORMS"),
        "{verdict}"
    );
    // Again: the files are there; nothing is replaced without --force.
    let before = std::fs::read_to_string(&scenario).unwrap();
    let (code, _, err) = rsmc(&args);
    assert_eq!(code, 2);
    assert!(err.contains("exists; remove it or pass --force"), "{err}");
    assert_eq!(std::fs::read_to_string(&scenario).unwrap(), before);
    // A log with a line that is not an audit event.
    let bad = out.join("bad.log");
    std::fs::write(&bad, "{\"kind\": \"Pod\"}\n").unwrap();
    let (code, _, err) = rsmc(&[
        "import",
        "--audit-log",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("{}:1:", bad.display()))
            && err.contains("expected an audit.k8s.io/v1 Event"),
        "{err}"
    );
}

/// A whole cluster's log with a namespace the import cannot read: `--all-namespaces` writes
/// the others, names the one left out with its line and the reason, counts them, and exits 2.
#[test]
fn a_namespace_left_out_of_a_whole_clusters_import_is_named_and_the_others_written() {
    let out = temp_dir("cluster");
    // The orphan run's first pod creation logged without its object, as a policy at level
    // Metadata logs it.
    let mut line = 0;
    let (log, orphan_ns) = two_namespaces(&out, |orphan, before| {
        let create = orphan
            .iter()
            .position(|l| l["verb"] == "create" && l["objectRef"]["resource"] == "pods")
            .unwrap();
        orphan[create]["level"] = serde_json::json!("Metadata");
        line = before + create + 1;
    });

    let (code, stdout, err) = rsmc(&[
        "import",
        "--audit-log",
        log.to_str().unwrap(),
        "--all-namespaces",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{err}");
    assert!(
        err.contains(&format!("{}:{line}:", log.display()))
            && err.contains("is logged at level \"Metadata\""),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "rsmc import: 1 of 2 namespaces written; left out, each for the reason above: {orphan_ns}"
        )),
        "{err}"
    );
    let written = files_ending(&out, ".yaml");
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with("rsmc-scale-"), "{written:?}");
    assert!(stdout.contains(&written[0]), "{stdout}");
}

/// `rsmc import --judge` judges each namespace it writes as `rsmc oracle` judges the two
/// files, writes the verdict beside them and says it: here a whole cluster's audit log of
/// `scale` (conforms) and `delete-orphan` with the adopting ReplicaSet's status doctored to
/// count two replicas of its three (does not conform, naming the property its writes
/// break); exit 1. The same with `--state-limit 1`: neither judged within the budget, exit 3.
#[test]
fn a_whole_clusters_import_is_judged_namespace_by_namespace() {
    let out = temp_dir("judged");
    // The adopting frontend's two status writes (lines 32 and 34 of its log), as
    // oracle/tests/import.rs doctors them.
    let (log, orphan_ns) = two_namespaces(&out, |orphan, _| {
        for i in [31, 33] {
            orphan[i]["responseObject"]["status"]["replicas"] = serde_json::json!(2);
        }
    });
    let import = |extra: &[&str]| {
        let mut args = vec![
            "import",
            "--audit-log",
            log.to_str().unwrap(),
            "--all-namespaces",
            "--judge",
            "--force",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        rsmc(&args)
    };
    let (code, stdout, err) = import(&[]);
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(
        err.contains(&format!(
            "rsmc import: 2 of 2 namespaces written; 1 conform, 1 do not ({orphan_ns})"
        )),
        "{err}"
    );
    let verdicts = files_ending(&out, ".verdict.txt");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for name in &verdicts {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        let path = out.join(name).display().to_string();
        if name.starts_with(&orphan_ns) {
            assert!(
                stdout.contains("  does not conform (") && stdout.contains(&path),
                "{stdout}"
            );
            assert!(text.contains("status consistent"), "{text}");
        } else {
            assert!(stdout.contains(&format!("  conforms: {path}")), "{stdout}");
            assert!(text.contains("conforms"), "{text}");
        }
    }

    let (code, stdout, err) = import(&["--state-limit", "1"]);
    assert_eq!(code, 3, "{stdout}{err}");
    assert!(
        err.contains("2 not judged within the budget") && err.contains("--state-limit N"),
        "{err}"
    );
}

/// An audit log of two namespaces, `scale.v1.20.2`'s and `delete-orphan`'s, written to
/// `dir`, the second doctored by `doctor` (given its lines and the number of lines before
/// them); the log and the second namespace.
fn two_namespaces(
    dir: &Path,
    doctor: impl FnOnce(&mut Vec<serde_json::Value>, usize),
) -> (PathBuf, String) {
    std::fs::create_dir_all(dir).unwrap();
    let read = |name: &str| {
        std::fs::read_to_string(repo(&format!("oracle/tests/audit/{name}.audit.log"))).unwrap()
    };
    let scale = read("scale.v1.20.2");
    let mut orphan: Vec<serde_json::Value> = read("delete-orphan")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let orphan_ns = orphan[0]["objectRef"]["namespace"]
        .as_str()
        .unwrap()
        .to_string();
    doctor(&mut orphan, scale.lines().count());
    let log = dir.join("cluster.audit.log");
    let orphan: String = orphan.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&log, format!("{scale}{orphan}")).unwrap();
    (log, orphan_ns)
}

/// The names of the files in `dir` that end with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

/// Only an external controller can have its clock moved; asking for it otherwise is refused
/// before anything starts.
#[test]
fn a_moved_clock_without_an_external_controller_is_refused_with_exit_2() {
    let (code, _, err) = rsmc(&[
        "conform",
        "--moved-clock",
        &repo("conformance/timed/expectations-expiry.yaml"),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--controller-cmd"), "{err}");
}

/// A conform window that is no number of seconds is refused before anything starts, naming
/// the flag and what it takes.
#[test]
fn a_window_that_is_no_number_of_seconds_is_refused_with_exit_2() {
    let scenario = repo("conformance/scenarios/frontend.yaml");
    for (flag, value, expected) in [
        ("--idle-window", "soon", "or `off`"),
        ("--idle-window", "-1", "0 or more"),
        ("--quiet-window", "-1", "0 or more"),
    ] {
        let (code, _, err) = rsmc(&["conform", &format!("{flag}={value}"), &scenario]);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains(flag) && err.contains(expected), "{err}");
    }
}

/// A release that holds the same requests again (`thenHoldAfter`) leaves them held, so it
/// too needs a release before the end; a release does not take a hold's `after`.
#[test]
fn a_release_that_holds_again_must_be_released_in_turn() {
    let dir = temp_dir("rehold");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = |release: &str| {
        format!(
            "name: rehold\nsteps:\n  - hold: {{requests: {{verb: update, resource: replicasets/status}}}}\n  - apply:\n      manifest:\n        apiVersion: apps/v1\n        kind: ReplicaSet\n        metadata: {{name: frontend}}\n        spec:\n          replicas: 1\n          selector: {{matchLabels: {{tier: frontend}}}}\n          template:\n            metadata: {{labels: {{tier: frontend}}}}\n            spec:\n              containers: [{{name: app, image: registry.k8s.io/pause:3.9}}]\n  - release: {{requests: {{verb: update, resource: replicasets/status}}, {release}}}\n  - settle\n"
        )
    };
    let path = dir.join("rehold.yaml");
    std::fs::write(&path, scenario("thenHoldAfter: 1")).unwrap();
    let (code, _, err) = rsmc(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("steps[2].release") && err.contains("never released"),
        "{err}"
    );
    std::fs::write(&path, scenario("after: 1")).unwrap();
    let (code, _, err) = rsmc(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown field `after`"), "{err}");
}

#[test]
fn cluster_up_kind_refuses_a_release_before_v1_34_before_touching_anything() {
    let dir = temp_dir("kind-old-release");
    let (code, _, err) = rsmc(&[
        "cluster",
        "up",
        "--kind",
        "--kubernetes",
        "v1.20.2",
        "--state-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--kubernetes v1.20.2: kind nodes are built for v1.34 and later"),
        "{err}"
    );
    assert!(!dir.exists(), "{} was made", dir.display());
    let (code, _, err) = rsmc(&["cluster", "up", "--kind", "--audit-log", "/tmp/x.log"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be used with"), "{err}");
}

/// `--contract`: a recording of a controller written for an older release, run on a newer
/// server, is judged by the release it follows, and the report says so; the recording's own
/// `cluster.contract` is the default; a contract the model does not know is bad input.
#[test]
fn oracle_judges_by_a_stated_contract() {
    let scenario = repo("conformance/scenarios/frontend.yaml");
    let recording = repo("examples/naive-controller/recordings/v1.37.2/frontend.observed.json");
    let (code, out, _) = rsmc(&["oracle", "--scenario", &scenario, "--observed", &recording]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("differs from v1.37.2: status.terminatingReplicas"),
        "{out}"
    );
    let judged = |observed: &str, extra: &[&str]| {
        let mut args = vec![
            "oracle",
            "--scenario",
            &scenario,
            "--observed",
            observed,
            "--json",
        ];
        args.extend(extra);
        let (code, out, err) = rsmc(&args);
        (
            code,
            serde_json::from_str::<serde_json::Value>(&out).ok(),
            err,
        )
    };
    let (code, v, err) = judged(&recording, &["--contract", "v1.34"]);
    assert_eq!(code, 0, "{err}");
    let v = v.expect("JSON verdict");
    assert_eq!(
        v["contract"],
        serde_json::json!({"follows": "v1.34", "server": "v1.37.2"})
    );
    // The recording's cluster.contract, as `rsmc conform --contract` writes it.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&recording).unwrap()).unwrap();
    doc["cluster"]["contract"] = "v1.34".into();
    let file = temp_dir("contract.observed.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let (code, _, err) = judged(file.to_str().unwrap(), &[]);
    assert_eq!(code, 0, "{err}");
    // The command line's profile wins over the recorded contract.
    let (code, _, err) = judged(file.to_str().unwrap(), &["--profile", "upstream"]);
    assert_eq!(code, 1, "{err}");
    doc["cluster"]["contract"] = 34.into();
    std::fs::write(&file, doc.to_string()).unwrap();
    let (code, _, err) = judged(file.to_str().unwrap(), &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cluster.contract: expected a release"),
        "{err}"
    );
    for args in [
        &["--contract", "v1.19"][..],
        &["--contract", "v1.34", "--profile", "upstream"],
    ] {
        let (code, _, err) = judged(&recording, args);
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    let (code, _, err) = rsmc(&["conform", "--local", "--contract", "latest"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("expected a release from v1.20 to v1.37"),
        "{err}"
    );
}
