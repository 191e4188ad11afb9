//! `rsmc import --watch` of kubectl watch streams. `tests/watch/` holds what
//! `kubectl get pods -A --watch --output-watch-events -o json` and the same of replicasets,
//! namespaces, ConfigMaps (the runner's fault marks) and the ReplicaSet controllers'
//! `SuccessfulDelete` events printed (kubectl v1.37.2 against the local v1.37.2 control plane)
//! while `rsmc conform` ran the suite, cut to the namespaces of `scale`, `delete-orphan`,
//! `forced/pod-replaced-under-a-stale-cache`, `forced/unseen-creations`,
//! `counterexamples/adoption-by-a-deleting-owner-after-restart` and
//! `counterexamples/catalogue-ignore-controller-ref-removal` (pods' tolerations dropped).
//! Imported, they conform; with one event doctored they are rejected naming the property it
//! breaks; bad input names its file and line.

mod import_common;

use import_common::{
    another_pod, assert_rejected_for, assert_rejected_not_naming, commands, judged,
};
use rsmc_oracle::error::InputError;
use rsmc_oracle::import::writer::Attribution;
use rsmc_oracle::import::{Imported, Options, Recording, SignedDuration};
use rsmc_oracle::judge::render;
use rsmc_spec::budget::Budget;
use rsmc_spec::bugs::Fix;
use rsmc_spec::liveness::converged::Condition;
use rsmc_spec::model::properties::{
    ADOPTION_RULES, DELETE_ONLY_CONTROLLED, GC_DELETES_ONLY_DEPENDENTS_OF_GONE,
    GC_SPARES_PODS_OTHER_OWNERS_HOLD, NO_CREATE_WHILE_DELETING, NO_DOUBLE_COUNT, NO_OVER_CREATION,
    NO_STEALING, ORPHAN_KEEPS_DEPENDENTS, SCALE_DOWN_RANKED, SINGLE_CONTROLLER, STATUS_CONSISTENT,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/watch/{name}.json"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn options(namespace: &str) -> Options {
    Options {
        namespace: Some(namespace.to_string()),
        server: Some("v1.37.2".into()),
        ..Options::default()
    }
}

/// Write the streams (pods' and ReplicaSets' doctored) and import `namespace` from them.
fn import(
    namespace: &str,
    doctor: impl FnOnce(&mut Vec<Value>, &mut Vec<Value>),
) -> Result<Imported, InputError> {
    import_doctored(namespace, |pods, rs, _| doctor(pods, rs), &[])
}

/// [`import`] with the stream of the controllers' `SuccessfulDelete` events (the claims)
/// doctored too, and the watches of the fixture streams named in `left_out` (`events`,
/// `configmaps`) left out.
fn import_doctored(
    namespace: &str,
    doctor: impl FnOnce(&mut Vec<Value>, &mut Vec<Value>, &mut Vec<Value>),
    left_out: &[&str],
) -> Result<Imported, InputError> {
    let (_dir, paths) = write_doctored(doctor, left_out);
    read(&paths, &options(namespace))?.import(&options(namespace))
}

/// The fixture streams, doctored, written as a user's files (in a folder that lives as long
/// as the value returned).
fn write_doctored(
    doctor: impl FnOnce(&mut Vec<Value>, &mut Vec<Value>, &mut Vec<Value>),
    left_out: &[&str],
) -> (tempfile::TempDir, Vec<PathBuf>) {
    let stream = |name: &str| match left_out.contains(&name) {
        true => Vec::new(),
        false => fixture(name),
    };
    let (mut pods, mut rs, mut claims) =
        (fixture("pods"), fixture("replicasets"), stream("events"));
    doctor(&mut pods, &mut rs, &mut claims);
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, events) in [
        ("pods.json", &pods),
        ("rs.json", &rs),
        ("ns.json", &stream("namespaces")),
        ("events.json", &claims),
        ("configmaps.json", &stream("configmaps")),
    ] {
        // Indented, as other printers write it: the reader takes a stream of values.
        let text: String = events
            .iter()
            .map(|e| serde_json::to_string_pretty(e).unwrap() + "\n")
            .collect();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    (dir, paths)
}

fn read(paths: &[PathBuf], options: &Options) -> Result<Recording, InputError> {
    Recording::read_watches(
        paths,
        &Attribution::default(),
        options.namespace.as_deref(),
        SignedDuration::from_secs(2),
    )
}

fn namespace(prefix: &str) -> String {
    fixture("replicasets")
        .iter()
        .filter_map(|e| e["object"]["metadata"]["namespace"].as_str())
        .find(|ns| ns.starts_with(prefix))
        .unwrap()
        .to_string()
}

#[test]
fn recorded_streams_import_as_their_scenarios_and_conform() {
    let scale = import(&namespace("rsmc-scale-"), |_, _| {}).unwrap();
    let steps = commands(&scale);
    assert_eq!(
        steps.first().map(String::as_str),
        Some("kubectl apply -f frontend.yaml")
    );
    assert!(
        steps
            .iter()
            .any(|s| s.contains("scale rs/frontend --replicas=5")),
        "{steps:#?}"
    );
    assert!(
        steps
            .iter()
            .any(|s| s.contains("scale rs/frontend --replicas=1")),
        "{steps:#?}"
    );
    assert!(scale.summary.segments >= 3, "{steps:#?}");
    let v = judged(&scale);
    assert!(v.conforms, "{steps:#?}\n{}", render(&v));

    let orphan = import(&namespace("rsmc-delete-orphan-"), |_, _| {}).unwrap();
    let steps = commands(&orphan);
    assert!(
        steps.contains(&"kubectl delete rs/frontend --cascade=orphan".to_string()),
        "{steps:#?}"
    );
    let v = judged(&orphan);
    assert!(v.conforms, "{steps:#?}\n{}", render(&v));
}

/// Runs the runner forced faults in (a held informer, a restarted controller) conform with the
/// fault marks the runner left; without the ConfigMaps' watch that carries them, the run
/// whose outcome hangs on a restart does not.
/// A whole cluster's streams with one namespace the import cannot follow: its first pod's
/// creation is missing (as when the watches start after it), so what follows in it has no
/// start. That namespace is named with its line and the reason; every other imports exactly
/// as from the streams without it.
#[test]
fn a_namespace_the_import_cannot_read_leaves_the_others_as_they_were() {
    let orphan = namespace("rsmc-scale-");
    let (clean_dir, clean) = write_doctored(|_, _, _| {}, &[]);
    let (dir, doctored) = write_doctored(
        |pods, _, _| {
            let created = find(pods, |e| {
                e["type"] == "ADDED" && e["object"]["metadata"]["namespace"] == orphan.as_str()
            });
            // Seen as a change, the line count of every file kept as it was.
            pods[created]["type"] = json!("MODIFIED");
        },
        &[],
    );
    let every = Options {
        server: Some("v1.37.2".into()),
        ..Options::default()
    };
    let clean = read(&clean, &every).unwrap();
    let doctored = read(&doctored, &every).unwrap();
    assert_eq!(doctored.namespaces(), clean.namespaces());
    assert!(clean.unreadable().is_empty());
    let unreadable: Vec<&String> = doctored.unreadable().keys().collect();
    assert_eq!(unreadable, [&orphan]);
    let why = doctored.unreadable()[&orphan].to_string();
    assert!(
        why.contains("pods.json:")
            && why.contains("its creation is not in the stream: start the watches before the objects they follow are created"),
        "{why}"
    );
    assert_eq!(
        doctored.import(&options(&orphan)).unwrap_err().to_string(),
        why
    );
    let others: Vec<String> = clean
        .namespaces()
        .into_iter()
        .filter(|ns| *ns != orphan)
        .collect();
    assert!(others.len() >= 5, "{others:?}");
    // Both files name the streams read.
    let files = |imported: &Imported, dir: &tempfile::TempDir| {
        let dir = dir.path().display().to_string();
        let observed = serde_json::to_string(&imported.observed).unwrap();
        (
            imported.scenario.to_yaml().replace(&dir, "DIR"),
            observed.replace(&dir, "DIR"),
        )
    };
    for ns in others {
        let (a, b) = (
            clean.import(&options(&ns)).unwrap(),
            doctored.import(&options(&ns)).unwrap(),
        );
        let (a, b) = (files(&a, &clean_dir), files(&b, &dir));
        assert_eq!(a.0, b.0, "{ns}");
        assert!(a.1 == b.1, "{ns}: the observed traces differ");
    }
}

#[test]
fn fault_runs_conform_by_their_marks() {
    for (prefix, fault) in [
        ("rsmc-unseen-creations-", "pods watch events are held"),
        (
            "rsmc-pod-replaced-under-a-stale-cache-",
            "held pods watch events reach",
        ),
        (
            "rsmc-counterexample-adoption-by-a-deleting-ow",
            "crashes and restarts",
        ),
    ] {
        let imported = import(&namespace(prefix), |_, _| {}).unwrap();
        let steps = commands(&imported);
        assert!(
            steps.iter().any(|s| s.contains(fault)),
            "{prefix}: {steps:#?}"
        );
        let v = judged(&imported);
        assert!(v.conforms, "{prefix}: {steps:#?}\n{}", render(&v));
    }
    let restart = namespace("rsmc-counterexample-adoption-by-a-deleting-ow");
    let unmarked = import_doctored(&restart, |_, _, _| {}, &["configmaps"]).unwrap();
    assert!(!commands(&unmarked).iter().any(|s| s.contains("fault")));
    assert!(!judged(&unmarked).conforms);
}

/// The index of the first event of `kind` in `events` that `pick` accepts.
fn find(events: &[Value], pick: impl Fn(&Value) -> bool) -> usize {
    events.iter().position(pick).unwrap()
}

#[test]
fn a_surplus_pod_is_rejected_as_over_creation() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |pods, _| {
            // The controller creates one more pod than the three first asked for.
            let i = find(pods, |e| {
                e["type"] == "ADDED" && e["object"]["metadata"]["namespace"] == ns.as_str()
            });
            let mut extra = pods[i].clone();
            let meta = &mut extra["object"]["metadata"];
            another_pod(meta, "frontend-zzzzz", "surplus-pod");
            // At the same revision, read after the first: the import keeps the file's order.
            pods.insert(i + 1, extra);
        })
        .unwrap(),
    );
    assert_rejected_for(&v, NO_OVER_CREATION);
}

#[test]
fn a_second_controller_reference_is_rejected() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |pods, _| {
            // A pod of frontend created by the controller with a second controller reference.
            let i = find(pods, |e| {
                e["type"] == "ADDED" && e["object"]["metadata"]["namespace"] == ns.as_str()
            });
            let refs = &mut pods[i]["object"]["metadata"]["ownerReferences"];
            let mut second = refs[0].clone();
            second["name"] = json!("other");
            second["uid"] = json!("other-uid");
            refs.as_array_mut().unwrap().push(second);
        })
        .unwrap(),
    );
    assert_rejected_for(&v, SINGLE_CONTROLLER);
}

fn error(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = files
        .iter()
        .map(|(name, text)| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect();
    let o = Options::default();
    match read(&paths, &o).and_then(|r| r.import(&o)) {
        Ok(_) => panic!("imported"),
        Err(e) => e
            .to_string()
            .replace(&format!("{}/", dir.path().display()), ""),
    }
}

#[test]
fn bad_input_names_the_file_the_line_and_what_was_expected() {
    let e = error(&[(
        "a.json",
        "{\"type\":\"ADDED\",\n \"object\": {}}\nnot json\n",
    )]);
    assert!(e.starts_with("a.json:3:"), "{e}");
    assert!(e.contains("expected a JSON watch event"), "{e}");

    let e = error(&[("t.json", "\n{\"type\":\"ADDED\",\n \"object\": {\"kind\":")]);
    assert!(e.starts_with("t.json:3:"), "{e}");
    assert!(e.contains("ends inside a watch event"), "{e}");

    let e = error(&[("u.json", "\n\n  {\"type\":\"RENAMED\",\"object\":{}}\n")]);
    assert!(
        e.starts_with("u.json:3:3: unknown event type \"RENAMED\""),
        "{e}"
    );

    let e = error(&[("k.json", "{\"kind\":\"Pod\",\"apiVersion\":\"v1\"}")]);
    assert!(e.contains("--output-watch-events"), "{e}");

    let e = error(&[(
        "x.json",
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"message\":\"too old resource version\"}}",
    )]);
    assert!(e.starts_with("x.json:1:1: an ERROR event"), "{e}");
    assert!(e.contains("too old resource version"), "{e}");

    // A pod of a ReplicaSet the stream never showed, deleted: who did it cannot be told.
    let pods = fixture("pods");
    let ns = namespace("rsmc-scale-");
    let mut mine: Vec<Value> = pods
        .into_iter()
        .filter(|e| e["object"]["metadata"]["namespace"] == ns.as_str())
        .collect();
    let victim = mine[0]["object"]["metadata"]["name"].clone();
    let mut deleted = mine[0].clone();
    deleted["type"] = json!("DELETED");
    deleted["object"]["metadata"]["resourceVersion"] = json!("999999");
    mine.retain(|e| e["object"]["metadata"]["name"] == victim && e["type"] == "ADDED");
    mine.push(deleted);
    let text: String = mine.iter().map(|e| format!("{e}\n")).collect();
    let e = error(&[("pods.json", &text)]);
    assert!(e.starts_with("pods.json:2:1: pod "), "{e}");
    assert!(e.contains("which the stream never showed"), "{e}");

    // A fault mark that names no fault, and one without its step.
    let mark = |data: Value| {
        let cm = json!({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "rsmc-fault-1", "namespace": ns, "resourceVersion": "1"},
            "data": data}});
        format!("{text}{cm}\n")
    };
    let e = error(&[(
        "w.json",
        &mark(json!({"step": "scale: {replicaset: a, replicas: 1}"})),
    )]);
    assert!(
        e.starts_with("w.json:3:1: fault mark ConfigMap rsmc-fault-1: data.step: `scale"),
        "{e}"
    );
    assert!(e.contains("is not a fault"), "{e}");
    let e = error(&[("w.json", &mark(json!({})))]);
    assert!(
        e.contains("rsmc-fault-1: no data.step; expected the fault"),
        "{e}"
    );
    // A mark that releases what no mark before it held: the recording is wrong, not the
    // import's guess to make.
    let e = error(&[("w.json", &mark(json!({"step": "release: pods"})))]);
    assert!(
        e.starts_with("w.json:3:1: fault mark rsmc-fault-1: nothing to release: no earlier step holds pods watch events"),
        "{e}"
    );
    let e = error(&[("w.json", &mark(json!({"step": "hold: secrets"})))]);
    assert!(
        e.contains("write it as `hold: replicasets | pods | {garbage-collector: replicasets | pods} | {requests: {verb:"),
        "{e}"
    );
}

/// In `forced/pod-replaced-under-a-stale-cache` the built-in controller of v1.37.2 deleted
/// the user's new `pod1`, which it did not control, under the name of the one it meant to
/// delete (the race of PR #138818, forced by the scenario). With the events' watch the
/// deletion is the controller's: v1.37.2's model allows it, the proposed fix forbids it,
/// naming the property. Without that watch the import takes it for a user's step.
#[test]
fn a_claimed_deletion_is_the_controllers() {
    let ns = namespace("rsmc-pod-replaced-under-a-stale-cache-");
    let with = import(&ns, |_, _| {}).unwrap();
    let v = judged(&with);
    assert!(v.conforms, "{}", render(&v));
    let fixed = with
        .judge_switched(
            &Budget::default().with_states(500_000),
            None,
            &[Fix::DeletePrecondition],
        )
        .unwrap();
    assert!(!fixed.conforms);
    assert_eq!(
        fixed.breaks(),
        Some(DELETE_ONLY_CONTROLLED),
        "{}",
        render(&fixed)
    );
    let pod1_deletes = |imported: &Imported| {
        commands(imported)
            .iter()
            .filter(|c| c.contains("delete") && c.contains("pod1"))
            .count()
    };
    let without = import_doctored(&ns, |_, _, _| {}, &["events"]).unwrap();
    assert_eq!(
        pod1_deletes(&without),
        pod1_deletes(&with) + 1,
        "{:?}\n{:?}",
        commands(&with),
        commands(&without)
    );
}

/// A pod taken from the ReplicaSet that controls it: in
/// `catalogue-ignore-controller-ref-removal`, frontend adopts pod1 (version 254); the user's
/// write that removes that reference (275) is doctored into the controller handing pod1 to
/// canary, the reference and the field manager as canary's adoption (278, then dropped)
/// shows them.
#[test]
fn a_stolen_pod_is_rejected() {
    let ns = namespace("rsmc-catalogue-ignore-controller-ref-removal-");
    let v = judged(
        &import(&ns, |pods, _| {
            let adopted = pods[at_version(pods, &ns, "278")]["object"]["metadata"].clone();
            let released = at_version(pods, &ns, "275");
            let meta = &mut pods[released]["object"]["metadata"];
            meta["ownerReferences"] = adopted["ownerReferences"].clone();
            meta["managedFields"] = adopted["managedFields"].clone();
            // canary's own adoption is then no change: gone.
            pods.remove(at_version(pods, &ns, "278"));
        })
        .unwrap(),
    );
    assert_rejected_for(&v, NO_STEALING);
}

/// A dependent killed by an orphan deletion: in `delete-orphan`, the garbage collector's
/// write that removes frontend's reference from frontend-rvfdb (548) is doctored into its
/// deletion (the pod marked, its reference kept), and the pod's later events dropped.
#[test]
fn an_orphan_delete_that_kills_a_dependent_is_rejected() {
    let ns = namespace("rsmc-delete-orphan-");
    let v = judged(
        &import(&ns, |pods, _| {
            let released = at_version(pods, &ns, "548");
            let name = pods[released]["object"]["metadata"]["name"].clone();
            let before = pods[at_version(pods, &ns, "508")]["object"].clone();
            let event = &mut pods[released];
            let when = event["object"]["metadata"]["managedFields"][0]["time"].clone();
            event["object"] = before;
            let meta = &mut event["object"]["metadata"];
            meta["resourceVersion"] = json!("548");
            meta["deletionTimestamp"] = when;
            meta["deletionGracePeriodSeconds"] = json!(30);
            pods.retain(|e| {
                let m = &e["object"]["metadata"];
                m["name"] != name
                    || m["resourceVersion"]
                        .as_str()
                        .and_then(|v| v.parse::<u64>().ok())
                        .is_none_or(|v| v <= 548)
            });
        })
        .unwrap(),
    );
    assert_rejected_for(&v, ORPHAN_KEEPS_DEPENDENTS);
}

/// In `delete-orphan`, frontend's orphan delete (ReplicaSet version 547) is followed by the
/// garbage collector's patches removing its reference from frontend-rvfdb (548),
/// frontend-4lczl (550) and frontend-rfgm6 (551), and frontend's removal (554). A pod the
/// controller creates for frontend in between (at 548, read before the collector's patch):
/// frontend is being deleted.
#[test]
fn a_creation_for_a_deleting_owner_is_rejected() {
    let ns = namespace("rsmc-delete-orphan-");
    let v = judged(
        &import(&ns, |pods, _| {
            let mut late = pods[find(pods, |e| {
                e["type"] == "ADDED" && e["object"]["metadata"]["namespace"] == ns.as_str()
            })]
            .clone();
            let meta = &mut late["object"]["metadata"];
            another_pod(meta, "frontend-zzzzz", "late-pod");
            meta["resourceVersion"] = json!("548");
            pods.insert(at_version(pods, &ns, "548"), late);
        })
        .unwrap(),
    );
    assert_rejected_for(&v, NO_CREATE_WHILE_DELETING);
}

/// The same namespace: the collector's orphaning of frontend-rfgm6 (551) is doctored into
/// the controller adopting frontend-rvfdb, orphaned at 548, back for the frontend being
/// deleted (its reference and kube-controller-manager's field entry as at 508).
#[test]
fn an_adoption_for_a_deleting_owner_is_rejected() {
    let ns = namespace("rsmc-delete-orphan-");
    let v = judged(
        &import(&ns, |pods, _| {
            let owned = pods[at_version(pods, &ns, "508")]["object"].clone();
            let mut adopted = pods[at_version(pods, &ns, "548")]["object"].clone();
            let meta = &mut adopted["metadata"];
            meta["ownerReferences"] = owned["metadata"]["ownerReferences"].clone();
            meta["managedFields"][0]["time"] = json!("2026-11-26T17:11:29Z");
            meta["resourceVersion"] = json!("551");
            let i = at_version(pods, &ns, "551");
            pods[i]["object"] = adopted;
        })
        .unwrap(),
    );
    assert_rejected_for(&v, ADOPTION_RULES);
}

/// In `scale`, frontend's three pods are bound and made ready, it is scaled to five and
/// then to one: the controller deletes the two new, unscheduled pods and two of the three
/// ready ones (753, 754). With frontend-kcprw never made ready (its Ready write, 701,
/// dropped, its later events keeping the status it had before, and frontend's status
/// counting two ready pods: the controller's write of three, 702, dropped), the victims the
/// ranking allows are the two unscheduled pods, frontend-kcprw and one ready pod; the
/// second ready one (754) is deleted while frontend-kcprw stays.
#[test]
fn a_victim_the_ranking_puts_last_is_rejected() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |pods, rs| {
            rs.remove(at_version(rs, &ns, "702"));
            for e in rs.iter_mut().filter(|e| {
                let m = &e["object"]["metadata"];
                let version = m["resourceVersion"]
                    .as_str()
                    .and_then(|v| v.parse::<u64>().ok());
                m["namespace"] == ns.as_str() && version.is_some_and(|v| v < 753)
            }) {
                let status = &mut e["object"]["status"];
                for field in ["readyReplicas", "availableReplicas"] {
                    if status[field] == 3 {
                        status[field] = json!(2);
                    }
                }
            }
            let unready = pods[at_version(pods, &ns, "690")]["object"].clone();
            pods.remove(at_version(pods, &ns, "701"));
            for e in pods.iter_mut().filter(|e| {
                e["object"]["metadata"]["name"] == unready["metadata"]["name"]
                    && e["object"]["metadata"]["deletionTimestamp"].is_string()
            }) {
                e["object"]["status"] = unready["status"].clone();
                e["object"]["metadata"]["managedFields"] =
                    unready["metadata"]["managedFields"].clone();
            }
        })
        .unwrap(),
    );
    assert_rejected_for(&v, SCALE_DOWN_RANKED);
}

/// The index of the event of `namespace` at resourceVersion `version` in `events`.
fn at_version(events: &[Value], namespace: &str, version: &str) -> usize {
    find(events, |e| {
        e["object"]["metadata"]["namespace"] == namespace
            && e["object"]["metadata"]["resourceVersion"] == version
    })
}

/// A status that disagrees with the pods. The audit import's test names the settled
/// condition at the settle point; here the doctored status is the controller's write the
/// trace check meets first, no run of the model writes it, and the verdict names that write
/// and the condition the status it writes breaks (a watch import puts no settle point where
/// the objects are not settled, so the settled state never shows it).
#[test]
fn a_wrong_status_is_rejected_at_the_write() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |_, rs| {
            // Scaled down to one, frontend goes on reporting two replicas.
            for version in ["762", "771", "774"] {
                let i = at_version(rs, &ns, version);
                rs[i]["object"]["status"]["replicas"] = json!(2);
            }
        })
        .unwrap(),
    );
    assert!(!v.conforms);
    let text = render(&v);
    let seen = text
        .lines()
        .find(|l| l.trim_start().starts_with("seen:"))
        .unwrap_or_else(|| panic!("no divergent write: {text}"));
    assert!(
        seen.contains("replicaset/frontend replicas=1 status.replicas=2"),
        "{text}"
    );
    assert_eq!(
        v.breaks(),
        Some(rsmc_spec::liveness::converged::Condition::StatusCountsPods.name()),
        "{text}"
    );
    assert!(
        text.contains("the status it writes breaks: settled: status counts the pods"),
        "{text}"
    );
}

/// The events of `namespace` at the resourceVersions `versions` in `events`, removed.
fn drop_versions(events: &mut Vec<Value>, namespace: &str, versions: &[&str]) {
    events.retain(|e| {
        let m = &e["object"]["metadata"];
        m["namespace"] != namespace || !versions.iter().any(|v| m["resourceVersion"] == *v)
    });
}

/// The claims (`SuccessfulDelete` events) of `namespace` for the pod `pod`, removed.
fn drop_claims(claims: &mut Vec<Value>, namespace: &str, pod: &str) {
    let message = format!("Deleted pod: {pod}");
    claims.retain(|e| {
        e["object"]["metadata"]["namespace"] != namespace || e["object"]["message"] != *message
    });
}

/// A pod counted by two live ReplicaSets ([`NO_DOUBLE_COUNT`]): in
/// `catalogue-ignore-controller-ref-removal`, frontend adopts the user's pod1 (254), which
/// canary's selector matches too, and counts it (258). Here canary's sync, having lost the
/// race to adopt pod1, counts it in its status all the same (at 254). The oracle judges a
/// status by its counts, not by which pods they are (a cluster's status does not say), and
/// a pod has one controller, so one of two counts of the same pod is always a count of a
/// pod its ReplicaSet does not control: the verdict names the condition canary's status
/// breaks.
#[test]
fn a_pod_counted_by_two_replicasets_is_rejected_by_the_count() {
    let ns = namespace("rsmc-catalogue-ignore-controller-ref-removal-");
    let v = judged(
        &import(&ns, |_, rs| {
            // Canary's status counts pod1, frontend's.
            let mut count = rs[at_version(rs, &ns, "218")].clone();
            let object = &mut count["object"];
            object["status"]["replicas"] = json!(1);
            object["status"]["fullyLabeledReplicas"] = json!(1);
            object["metadata"]["resourceVersion"] = json!("254");
            rs.push(count);
        })
        .unwrap(),
    );
    assert_rejected_not_naming(
        &v,
        NO_DOUBLE_COUNT,
        Some(Condition::StatusCountsPods.name()),
    );
}

/// A pod of a live ReplicaSet collected ([`GC_DELETES_ONLY_DEPENDENTS_OF_GONE`]): in
/// `delete-orphan`, once the re-applied frontend has adopted the three orphans (573–575)
/// and counted them (576), the garbage collector deletes frontend-rvfdb as the dependent
/// of the gone frontend its graph still shows, and the controller replaces it. A watch
/// shows no deleter, and no claim names this deletion: the import takes it for a client's
/// step, and a user deleting a pod the controller then replaces is a run of the model. The
/// watch import cannot tell this from `kubectl delete pod`; an audit log names the
/// collector, and the oracle rejects it there naming the rule (`tests/import.rs`).
#[test]
fn a_gc_delete_of_a_live_owners_pod_is_taken_for_a_clients() {
    let ns = namespace("rsmc-delete-orphan-");
    let imported = import(&ns, |pods, rs| {
        let adopted = pods[at_version(pods, &ns, "573")]["object"].clone();
        // The collector deletes frontend-rvfdb.
        let mut gone = adopted.clone();
        let meta = &mut gone["metadata"];
        meta["deletionTimestamp"] = json!("2026-11-26T17:12:03Z");
        meta["deletionGracePeriodSeconds"] = json!(30);
        meta["resourceVersion"] = json!("577");
        // The controller replaces it, its entry as in its adoption of frontend-rvfdb.
        let mut replacement = pods[at_version(pods, &ns, "474")].clone();
        let meta = &mut replacement["object"]["metadata"];
        another_pod(meta, "frontend-zzzzz", "replacement-pod");
        meta["ownerReferences"] = adopted["metadata"]["ownerReferences"].clone();
        let entry = adopted["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["manager"] == "kube-controller-manager")
            .unwrap();
        meta["managedFields"] = json!([entry]);
        meta["managedFields"][0]["time"] = json!("2026-11-26T17:11:33Z");
        meta["creationTimestamp"] = json!("2026-11-26T17:11:33Z");
        meta["resourceVersion"] = json!("578");
        // Its statuses count the two pods left, and then the replacement, not ready; and
        // the one terminating.
        let counted = |version: &str, replicas: i64| {
            let mut status = rs[at_version(rs, &ns, "576")].clone();
            let object = &mut status["object"];
            for (field, n) in [
                ("replicas", replicas),
                ("fullyLabeledReplicas", replicas),
                ("readyReplicas", 2),
                ("availableReplicas", 2),
                ("terminatingReplicas", 1),
            ] {
                object["status"][field] = json!(n);
            }
            object["metadata"]["resourceVersion"] = json!(version);
            for f in object["metadata"]["managedFields"].as_array_mut().unwrap() {
                if f["subresource"] == "status" {
                    f["time"] = json!("2026-11-26T17:11:33Z");
                }
            }
            status
        };
        let statuses = [counted("579", 2), counted("580", 3)];
        pods.push(json!({"type": "MODIFIED", "object": gone}));
        pods.push(replacement);
        rs.extend(statuses);
    })
    .unwrap();
    let steps = commands(&imported);
    assert_eq!(
        steps[steps.len() - 3..],
        [
            "kubectl apply -f frontend.yaml",
            "kubectl delete pods of frontend (any 1)",
            "settle"
        ],
        "{steps:#?}"
    );
    let v = judged(&imported);
    assert!(
        v.conforms && !v.broken_in_every_run(GC_DELETES_ONLY_DEPENDENTS_OF_GONE),
        "{steps:#?}\n{}",
        render(&v)
    );
}

/// A pod another live owner holds, collected ([`GC_SPARES_PODS_OTHER_OWNERS_HOLD`]): in
/// `catalogue-ignore-controller-ref-removal`, once frontend's orphaning has left pod1 with
/// no owner (275), a client gives it a reference to canary, not as controller (278, where
/// canary adopted it), and the pod is deleted (280, 281) before canary adopts it — with no
/// `SuccessfulDelete` of canary's claiming it, and canary's statuses never counting it. Had
/// the garbage collector sent that delete, it would have collected a pod canary holds; a
/// watch shows no deleter, so the import takes it for a client's step, and a user deleting
/// a shared pod is a run of the model. As for the controller-reference rule above, only an
/// audit log can name the collector (`tests/import.rs` rejects it there).
#[test]
fn a_gc_delete_of_a_pod_another_owner_holds_is_taken_for_a_clients() {
    let ns = namespace("rsmc-catalogue-ignore-controller-ref-removal-");
    let imported = import_doctored(
        &ns,
        |pods, rs, claims| {
            let orphan = pods[at_version(pods, &ns, "275")]["object"]["metadata"].clone();
            let shared = |meta: &mut Value| {
                meta["managedFields"] = orphan["managedFields"].clone();
                let refs = meta["ownerReferences"].as_array_mut().unwrap();
                refs[0]["controller"] = json!(false);
                refs[0]["blockOwnerDeletion"] = json!(false);
            };
            for version in ["278", "280", "281"] {
                let i = at_version(pods, &ns, version);
                shared(&mut pods[i]["object"]["metadata"]);
            }
            for version in ["282", "284"] {
                rs.remove(at_version(rs, &ns, version));
            }
            claims.retain(|e| e["object"]["message"] != "Deleted pod: pod1");
        },
        &[],
    )
    .unwrap();
    let steps = commands(&imported);
    for expected in [
        "patch pod/pod1 ownerReferences=[rs/canary]",
        "kubectl delete pod/pod1",
    ] {
        assert!(
            steps.iter().any(|s| s == expected),
            "{expected}: {steps:#?}"
        );
    }
    let v = judged(&imported);
    assert!(
        v.conforms && !v.broken_in_every_run(GC_SPARES_PODS_OTHER_OWNERS_HOLD),
        "{steps:#?}\n{}",
        render(&v)
    );
}

/// A delete of a pod the controller does not control ([`DELETE_ONLY_CONTROLLED`]): in
/// `catalogue-ignore-controller-ref-removal`, once the user has released pod1 from the
/// frontend being deleted (275), canary adopts it (278) and deletes it as its surplus
/// (280, 281; its claim at 283). Here canary never adopts pod1 but deletes it all the same,
/// as a controller that scales down the pods its selector matches rather than those it
/// controls: its claim makes the deletion the controller's.
#[test]
fn a_delete_of_a_pod_the_controller_does_not_control_is_rejected() {
    let ns = namespace("rsmc-catalogue-ignore-controller-ref-removal-");
    let v = judged(
        &import(&ns, |pods, _| {
            // Canary's adoption dropped; its deletion of pod1 shows pod1 as the user left it.
            let released = pods[at_version(pods, &ns, "275")]["object"]["metadata"].clone();
            pods.remove(at_version(pods, &ns, "278"));
            for version in ["280", "281"] {
                let i = at_version(pods, &ns, version);
                let meta = &mut pods[i]["object"]["metadata"];
                meta["ownerReferences"] = released["ownerReferences"].clone();
                meta["managedFields"] = released["managedFields"].clone();
            }
        })
        .unwrap(),
    );
    assert_rejected_for(&v, DELETE_ONLY_CONTROLLED);
}

/// A status that contradicts itself ([`STATUS_CONSISTENT`]): in `scale`, frontend scaled
/// down to one counts its one pod left, ready (762, 771). Here it counts the ready pods
/// among the terminating ones too (three at 762, two at 771): more ready replicas than
/// replicas.
#[test]
fn a_status_with_more_ready_than_replicas_is_rejected() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |_, rs| {
            // Ready and available count the terminating ready pods too.
            for (version, ready) in [("762", 3), ("771", 2)] {
                let i = at_version(rs, &ns, version);
                for field in ["readyReplicas", "availableReplicas"] {
                    rs[i]["object"]["status"][field] = json!(ready);
                }
            }
        })
        .unwrap(),
    );
    assert_rejected_for(&v, STATUS_CONSISTENT);
}

/// A dependent left referencing its gone owner: in `delete-orphan`, the garbage collector's
/// write that removes frontend's reference from frontend-rvfdb (548) is never made, yet
/// frontend goes (554), as when the collector orphans before its informer has delivered a
/// dependent (#26120). The stream is cut before the user re-applies frontend (572–576).
/// The last settle point has a pod that references a ReplicaSet that is gone.
#[test]
fn a_dependent_left_referencing_a_gone_owner_is_rejected() {
    let ns = namespace("rsmc-delete-orphan-");
    let v = judged(
        &import(&ns, |pods, rs| {
            // The collector's release of frontend-rvfdb and the re-apply dropped.
            let reapplied = ["572", "573", "574", "575", "576"];
            drop_versions(pods, &ns, &["548"]);
            drop_versions(pods, &ns, &reapplied);
            drop_versions(rs, &ns, &reapplied);
        })
        .unwrap(),
    );
    assert_rejected_for(&v, Condition::DeletionsFinished.name());
}

/// An orphan left unadopted: in `catalogue-ignore-controller-ref-removal`, the user
/// releases pod1 from the frontend being deleted (275); canary, whose selector matches it,
/// adopts it (278) and, wanting no replicas, deletes it (280, 281, claimed at 283) and counts
/// it on the way (282, 284). Here canary never syncs on the release (#32829: a pod whose
/// controller reference is removed is not re-adopted until a resync): those writes are
/// gone, and the last settle point has pod1 without a controller.
#[test]
fn an_orphan_left_unadopted_is_rejected() {
    let ns = namespace("rsmc-catalogue-ignore-controller-ref-removal-");
    let v = judged(
        &import_doctored(
            &ns,
            |pods, rs, claims| {
                // Canary's adoption, deletion, counts and claim of pod1 dropped.
                drop_versions(pods, &ns, &["278", "280", "281"]);
                drop_versions(rs, &ns, &["282", "284"]);
                drop_claims(claims, &ns, "pod1");
            },
            &[],
        )
        .unwrap(),
    );
    assert_rejected_for(&v, Condition::OrphansAdopted.name());
}

/// A scale-down cut short: in `scale`, frontend scaled from five to one deletes four pods
/// (751–754, claimed at 758–763). Here its delete of frontend-c8528 (754) is never sent,
/// nor its claim; its statuses count the two pods left (760, 762). Its expectations wait
/// for the delete it never sent: the last settle point has frontend controlling two pods
/// of one. The stream is cut before the kubelet's removals of the terminating pods and the
/// statuses after them (769–774): with them, the kubelet's step joins the segment (the
/// import puts no settle point where frontend has a surplus), and the search that would
/// show what the model allows there goes beyond its budget (250,000 states), naming
/// nothing.
#[test]
fn a_scale_down_cut_short_is_rejected() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import_doctored(
            &ns,
            |pods, rs, claims| {
                // The delete of frontend-c8528 and the stream's tail dropped; two pods counted.
                let victim = &pods[at_version(pods, &ns, "754")]["object"]["metadata"]["name"];
                assert_eq!(victim, "frontend-c8528");
                drop_versions(pods, &ns, &["754", "769", "770", "772", "773"]);
                drop_claims(claims, &ns, "frontend-c8528");
                drop_versions(rs, &ns, &["771", "774"]);
                for version in ["760", "762"] {
                    let i = at_version(rs, &ns, version);
                    let status = &mut rs[i]["object"]["status"];
                    for field in [
                        "replicas",
                        "fullyLabeledReplicas",
                        "readyReplicas",
                        "availableReplicas",
                    ] {
                        status[field] = json!(2);
                    }
                    status["terminatingReplicas"] = json!(1);
                }
            },
            &[],
        )
        .unwrap(),
    );
    assert_rejected_for(&v, Condition::ReplicasReached.name());
}

/// A generation never observed: in `scale`, the scale-down to one is generation 3, which
/// frontend's status observes from its first write after the scale (760). Here its last
/// status (774), which counts the one pod left, carries observedGeneration 2: a retry of
/// the status computed from the ReplicaSet as it was before the scale.
#[test]
fn a_status_behind_the_generation_is_rejected() {
    let ns = namespace("rsmc-scale-");
    let v = judged(
        &import(&ns, |_, rs| {
            // The last status observes generation 2, not 3.
            let i = at_version(rs, &ns, "774");
            rs[i]["object"]["status"]["observedGeneration"] = json!(2);
        })
        .unwrap(),
    );
    assert_rejected_for(&v, Condition::GenerationObserved.name());
}
