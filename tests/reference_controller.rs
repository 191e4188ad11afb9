//! The reference controller (`rsmc controller`) on the local control plane of the newest
//! release, with the built-in replicaset controller left out: it passes the whole conformance suite, judged with its
//! proposed fix, and shows what the built-in controller shows; and each faulty build
//! (`--fault NAME`) is caught by a nonconforming verdict that names the property of the
//! fault's catalogue entry. The table of what caught each fault is printed. A run that
//! stops short (a livelock never settles) is still judged for the race it forces.

mod common;

use common::{
    builtin_views, cluster_views, conforms, nonconforming, open_choice, rsmc, suite_dir, Cluster,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The release the reference controller is tried on: the newest the project provisions, whose
/// behaviour (the consistency gate, terminatingReplicas) it follows with `--profile auto`.
const RELEASE: &str = "1.37";

/// The faults the oracle must catch (the list): catalogue entries, each with the
/// feature gates the controller runs with and is judged by (`""`: the release's defaults).
///
/// `no-expectations` is tried with the consistency gate off: on v1.37.2 with its defaults the
/// whole suite conforms with it (measured), because the gate (KEP-5647, on from v1.36) keeps
/// a sync from starting until the caches have seen the controller's own creations, which is
/// the race expectations guard against; with the gate off, as on v1.35 and before, it is
/// caught.
const FAULTS: [(&str, &str); 5] = [
    (
        "no-expectations",
        "StaleControllerConsistencyReplicaSet=false",
    ),
    ("no-adoption-recheck", ""),
    ("delete-without-precondition", ""),
    ("ignore-ranking", ""),
    ("never-release", ""),
];

/// Scenarios where the reference controller differs from the built-in one by design:
/// it has PR #138818's proposed fix. The user's new pod1 survives the stale scale-down; and a
/// pod adopted and then picked for deletion in the same sync is deleted one sync later (the
/// sync ranks the pod as its cache had it before the adoption, so the delete's
/// resourceVersion precondition fails once: a `FailedDelete` event the built-in controller
/// does not record). The second happens wherever a sync adopts and deletes at once, when its
/// cache has not yet seen the adoption patch: in `bare-pods-after` every time, in
/// `test-pod-orphaning-and-adoption-when-labels-change` (the pod relabelled back is adopted
/// while the ReplicaSet has one pod too many) in some runs.
const DIFFERS_BY_FIX: [&str; 3] = [
    "pod-replaced-under-a-stale-cache",
    "bare-pods-after",
    "test-pod-orphaning-and-adoption-when-labels-change",
];

/// `rsmc conform` of the whole suite against `rsmc controller ARGS`, both with `gates`
/// switched, judged with the fix, `jobs` scenarios side by side; `views`: with the kubectl
/// views of each settle point.
fn conform_reference(
    cluster: &Cluster,
    controller_args: &str,
    gates: &str,
    jobs: &str,
    views: bool,
    report: &Path,
) -> (Vec<Value>, Option<i32>, String) {
    let suite = suite_dir();
    let mut rest = vec!["--jobs", jobs, suite.to_str().unwrap()];
    if !views {
        rest.push("--no-views");
    }
    common::conform_reference(cluster, controller_args, gates, &rest, report)
}

/// Each catalogue entry's property, as `rsmc bugs --json` lists it.
fn properties() -> BTreeMap<String, String> {
    let o = rsmc(&["bugs", "--json"], Path::new("/nonexistent"));
    let entries: Value = serde_json::from_slice(&o.stdout).expect("rsmc bugs --json");
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["property"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_reference_controller_conforms_and_kubectl_shows_what_it_shows_for_the_builtin() {
    let mut cluster = Cluster::up(
        "reference",
        &["--kubernetes", RELEASE, "--without-replicaset"],
    );
    let report = cluster.state.with_extension("report");

    // Two scenarios side by side, so that what kubectl shows is compared on a quiet
    // cluster (the scenarios that force a race run alone).
    let (runs, code, output) = conform_reference(&cluster, "", "", "2", true, &report);
    let failing = nonconforming(&runs, &report);
    assert!(
        failing.is_empty(),
        "the reference controller does not conform:\n{}\n{output}",
        failing.join("\n")
    );
    assert_eq!(code, Some(0), "{output}");
    assert!(runs.len() >= 30, "the whole suite ran");
    let mut differ = Vec::new();
    for r in &runs {
        let name = r["scenario"].as_str().unwrap();
        if open_choice(r) || DIFFERS_BY_FIX.contains(&name) {
            continue;
        }
        let builtin = builtin_views(RELEASE, name).unwrap_or_else(|| {
            panic!("no snapshot of the built-in controller's {name} on v{RELEASE}")
        });
        // insta keeps a snapshot without its last newline.
        if cluster_views(r).trim_end() != builtin.trim_end() {
            differ.push(format!(
                "{name}:\n--- built-in\n{builtin}--- reference\n{}",
                cluster_views(r)
            ));
        }
    }
    assert!(
        differ.is_empty(),
        "kubectl shows the reference controller's runs differently:\n{}",
        differ.join("\n")
    );

    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
}

/// The whole suite against the faulty build `fault` on a cluster of its own: the table row
/// of the scenarios whose verdict names `property`, or why the fault was not caught.
fn catch(fault: &str, gates: &str, property: &str) -> Result<String, String> {
    let mut cluster = Cluster::up(
        &format!("fault-{fault}"),
        &["--kubernetes", RELEASE, "--without-replicaset"],
    );
    let report = cluster.state.with_extension("report");
    // Four side by side, without the kubectl views: a faulty build only has to be caught,
    // and kubectl took 39 % of a suite's CPU.
    let (runs, code, output) = conform_reference(
        &cluster,
        &format!("--fault {fault}"),
        gates,
        "4",
        false,
        &report,
    );
    if code != Some(1) {
        return Err(format!(
            "--fault {fault}: a nonconforming run exits 1, this one {code:?}\n{output}"
        ));
    }
    // --no-views: not one kubectl view taken, yet the settle points counted.
    let views = |r: &&Value| r["views"].as_array().map_or(0, |v| v.len());
    let settled = |r: &&Value| r["error"].is_null() && r["settle_points"] == 0;
    if let Some(r) = runs.iter().find(|r| views(r) > 0 || settled(r)) {
        return Err(format!(
            "--no-views: {} has {} views and {} settle points",
            r["scenario"],
            views(&r),
            r["settle_points"]
        ));
    }
    let caught: Vec<&str> = runs
        .iter()
        .filter(|r| !conforms(r))
        .filter(|r| {
            r["verdict"]["settle_points"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["breaks"].as_str() == Some(property)))
        })
        .map(|r| r["scenario"].as_str().unwrap())
        .collect();
    if caught.is_empty() {
        return Err(format!("{fault}: no verdict names {property:?}\n{output}"));
    }
    let row = format!("| `{fault}` {gates} | {} | {property} |", caught.join(", "));
    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
    Ok(row)
}

/// Each faulty build is caught by a verdict naming its catalogue entry's property. The five
/// run at once, each on a control plane of its own: a run mostly waits for its cluster to
/// settle (one suite keeps about a fifth of the two cores busy), so this takes about as long
/// as one run instead of five.
#[test]
fn every_injected_fault_is_caught_with_its_property_named() {
    let properties = properties();
    let rows: Vec<Result<String, String>> = std::thread::scope(|s| {
        let runs: Vec<_> = FAULTS
            .iter()
            .map(|&(fault, gates)| {
                let property = &properties[fault];
                s.spawn(move || catch(fault, gates, property))
            })
            .collect();
        runs.into_iter()
            .map(|r| r.join().unwrap_or_else(|_| Err("its run panicked".into())))
            .collect()
    });
    let mut table = vec![
        "| fault | caught by | property named |".to_string(),
        "|---|---|---|".into(),
    ];
    let mut missed = Vec::new();
    for row in rows {
        match row {
            Ok(row) => table.push(row),
            Err(why) => missed.push(why),
        }
    }
    println!("{}", table.join("\n"));
    assert!(
        missed.is_empty(),
        "faults not caught:\n{}",
        missed.join("\n")
    );
}

/// The forced scenario `rsmc check --bug ENTRY` writes for the counterexample of the entry's
/// property: the check's `--out` directory (next to the cluster's state) and the scenario.
fn checked_scenario(cluster: &Cluster, entry: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let out = cluster.state.with_extension("check");
    let check = rsmc(
        &["check", "--bug", entry, "--out", out.to_str().unwrap()],
        &cluster.state,
    );
    assert_eq!(check.status.code(), Some(1), "{}", common::text(&check));
    // One scenario per broken property; the one for the entry's says it reproduces it.
    let scenario = std::fs::read_dir(&out)
        .expect("the check's --out")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.to_string_lossy().ends_with(".scenario.yaml")
                && std::fs::read_to_string(p)
                    .is_ok_and(|t| t.lines().any(|l| l == format!("reproduces: {entry}")))
        })
        .expect("the check wrote a scenario that reproduces the entry");
    (out, scenario)
}

/// The garbage collector's requests held at its own gate (issue 30): the scenario `rsmc
/// check --bug create-while-deleting` writes holds the collector's orphaning of the pod and
/// its removal of the orphan finalizer until the controller's status updates have landed,
/// as the counterexample orders them. Against the reference controller with that bug (the
/// consistency gate off, as on v1.35 and before), a sync that saw frontend being deleted
/// creates a pod for it, which lands after frontend is gone: no write breaks the property
/// by itself, and every model run that matches the recording does.
#[test]
fn the_garbage_collectors_held_requests_force_create_while_deleting() {
    const ENTRY: &str = "create-while-deleting";
    let mut cluster = Cluster::up(
        "gc-requests",
        &["--kubernetes", RELEASE, "--without-replicaset"],
    );
    let (out, scenario) = checked_scenario(&cluster, ENTRY);
    let yaml = std::fs::read_to_string(&scenario).unwrap();
    assert!(yaml.contains("from: garbage-collector"), "{yaml}");
    let report = cluster.state.with_extension("report");
    let (runs, code, output) = common::conform_reference(
        &cluster,
        &format!("--fault {ENTRY}"),
        "StaleControllerConsistencyReplicaSet=false",
        &["--bug", ENTRY, scenario.to_str().unwrap()],
        &report,
    );
    assert_eq!(code, Some(0), "{output}");
    assert!(conforms(&runs[0]), "{output}");
    assert_eq!(runs[0]["reproduction"]["entry"], ENTRY, "{output}");
    assert_eq!(runs[0]["reproduction"]["reproduced"], true, "{output}");
    assert_eq!(runs[0]["reproduction"]["as_modelled"], true, "{output}");
    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
    let _ = std::fs::remove_dir_all(&out);
}

/// A run that stops short is still judged for the race its scenario forces. The scenario
/// `rsmc check --bug steal-controlled-pods` writes, run against the reference controller with
/// that bug, never settles — two ReplicaSets pass the pod back and forth, which is the bug —
/// and the recording up to the stop shows the steal.
#[test]
fn a_run_that_never_settles_is_judged_for_the_race_it_forces() {
    const ENTRY: &str = "steal-controlled-pods";
    let mut cluster = Cluster::up(
        "stopped-run",
        &["--kubernetes", RELEASE, "--without-replicaset"],
    );
    let (out, scenario) = checked_scenario(&cluster, ENTRY);
    let report = cluster.state.with_extension("report");
    let controller = format!("{} controller --fault {ENTRY}", common::RSMC);
    let (runs, code, output) = common::conform(
        &cluster,
        &[
            "--controller",
            "external",
            "--controller-cmd",
            &controller,
            "--bug",
            ENTRY,
            "--settle-timeout",
            "15",
            scenario.to_str().unwrap(),
        ],
        &report,
    );
    assert_eq!(code, Some(1), "{output}");
    let run = &runs[0];
    let error = run["error"]["message"].as_str().unwrap_or_default();
    assert!(error.contains("did not settle"), "the run stops: {output}");
    assert_eq!(run["reproduction"]["entry"], ENTRY, "{output}");
    assert_eq!(run["reproduction"]["reproduced"], true, "{output}");
    // Every write until the stop (thousands: the pod passed back and forth) is a run of the
    // model with the bug, one that goes on past the violation; without it, none is
    // (`rsmc oracle` on the stopped recording says where).
    assert_eq!(run["up_to_stop"]["result"], "conforms", "{output}");
    assert_eq!(run["up_to_stop"]["past_a_violation"], true, "{output}");
    let name = run["scenario"].as_str().unwrap();
    assert!(
        report
            .join(format!("{name}.observed.stopped.json"))
            .exists(),
        "the report keeps the recording up to the stop"
    );
    assert!(!report.join(format!("{name}.observed.json")).exists());
    cluster.down_and_check();
    let _ = std::fs::remove_dir_all(&report);
    let _ = std::fs::remove_dir_all(&out);
}

/// `conformance/timed/expectations-expiry` (#129795) on the reference controller, its clock
/// moved by the runner (`--moved-clock`) instead of 5 minutes waited out: with the
/// consistency gate off (as on v1.35 and before) the cluster takes the race — the sync after
/// the expiry creates from a cache without its own pods — and the run conforms to a model
/// that allows it; with the gate on (v1.37's default) the same run conforms and creates
/// nothing extra. The built-in controllers wait the real 5 minutes in
/// `scripts/reproduce-findings`, on demand.
#[test]
fn expired_expectations_over_create_on_a_moved_clock_unless_the_gate_waits() {
    const ENTRY: &str = "expectations-expiry";
    let mut cluster = Cluster::up("expiry", &["--kubernetes", RELEASE, "--without-replicaset"]);
    let scenario =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance/timed/expectations-expiry.yaml");
    for (gates, reproduced) in [
        ("StaleControllerConsistencyReplicaSet=false", true),
        ("", false),
    ] {
        let report = cluster.state.with_extension(format!("report-{reproduced}"));
        let rest = ["--moved-clock", scenario.to_str().unwrap()];
        let (runs, code, output) = common::conform_reference(&cluster, "", gates, &rest, &report);
        assert_eq!(code, Some(0), "gates {gates:?}: {output}");
        assert!(conforms(&runs[0]), "gates {gates:?}: {output}");
        assert_eq!(runs[0]["reproduction"]["entry"], ENTRY, "{output}");
        assert_eq!(
            runs[0]["reproduction"]["reproduced"], reproduced,
            "gates {gates:?}: {output}"
        );
        let _ = std::fs::remove_dir_all(&report);
    }
    cluster.down_and_check();
}
