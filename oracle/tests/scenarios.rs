//! Scenario files: the seeds load and compile, files round-trip, and every mistake is named
//! with its file, line and field.

use rsmc_oracle::manifest::Object;
use rsmc_oracle::scenario::{self, compile, from_actions, ApplySource, Scenario, StepKind};
use rsmc_spec::api::Propagation;
use rsmc_spec::model::{Action, PodAction, PodSelection, PodSet, RsModel, ScriptStep};
use rsmc_spec::object::{labels, LabelSelector, Pod, ReplicaSet};
use rsmc_spec::profile::Profile;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/scenarios")
}

fn seed(name: &str) -> Scenario {
    scenario::load(&seeds_dir().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh directory with the given files, for scenarios that must fail; removed when the
/// test ends, passed or failed.
fn scratch(test: &str, files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("rsmc-scenarios-{test}-"))
        .tempdir()
        .expect("a temporary directory");
    std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn load_error(test: &str, files: &[(&str, &str)]) -> (TempDir, String) {
    let dir = scratch(test, files);
    let path = dir.path().join(files[0].0);
    let err = scenario::load(&path).expect_err("the scenario must be rejected");
    (dir, err.to_string())
}

#[test]
fn every_seed_scenario_loads_and_compiles() {
    let scenarios = scenario::load_dir(&seeds_dir()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bare-pods-after",
            "bare-pods-before",
            "delete-background",
            "delete-foreground",
            "delete-orphan",
            "frontend",
            "isolate-by-relabelling",
            "refused-requests",
            "scale",
        ]
    );
    for s in &scenarios {
        assert_eq!(
            s.path.file_stem().unwrap().to_str(),
            Some(s.name.as_str()),
            "a scenario is named after its file"
        );
        assert!(s.description.len() > 80, "{}: cite the seed", s.name);
        let c = compile(s, Profile::K8s120).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.script.steps.len(), c.origin.len(), "{}", s.name);
        assert_eq!(
            c.script.steps.last(),
            Some(&ScriptStep::Settle),
            "{}",
            s.name
        );
        assert!(c.origin.windows(2).all(|w| w[0] <= w[1]), "{}", s.name);
        assert_eq!(c.config.controller.workers, 1, "{}: one ReplicaSet", s.name);
        assert_eq!(c.config.informer.max_lag, 1, "the default bound");
        RsModel::scripted(c.config, c.profile, c.script)
            .unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
}

#[test]
fn frontend_compiles_to_the_seed_script() {
    let s = seed("frontend.yaml");
    assert_eq!(
        s.steps[0].command(),
        "kubectl apply -f manifests/frontend.yaml"
    );
    assert_eq!(s.steps[0].position.map(|p| p.line), Some(13));
    assert_eq!(s.steps[3].command(), "kubelet: pods of frontend Ready");
    let c = compile(&s, Profile::Upstream).unwrap();
    assert_eq!(c.profile, Profile::Upstream);
    let ScriptStep::Move(Action::ApplyReplicaSet { replicaset }) = &c.script.steps[0] else {
        panic!("{:?}", c.script.steps[0])
    };
    let mut expected = ReplicaSet::new(
        "frontend",
        3,
        LabelSelector::match_labels(&[("tier", "frontend")]),
        labels(&[("tier", "frontend")]),
    );
    expected.meta.labels = labels(&[("app", "guestbook"), ("tier", "frontend")]);
    assert_eq!(**replicaset, expected);
    assert_eq!(
        c.script.steps[1..],
        [
            ScriptStep::Settle,
            ScriptStep::Pods {
                pods: PodSelection {
                    set: PodSet::ControlledBy("frontend".into()),
                    count: None,
                    up_to: false,
                },
                action: PodAction::Schedule {
                    node: "node-1".into()
                }
            },
            ScriptStep::Pods {
                pods: PodSelection {
                    set: PodSet::ControlledBy("frontend".into()),
                    count: None,
                    up_to: false,
                },
                action: PodAction::Ready
            },
            ScriptStep::Settle,
        ]
    );
    assert_eq!(c.origin, [0, 1, 2, 3, 4]);
}

#[test]
fn a_multi_document_apply_gives_one_move_per_manifest() {
    let s = seed("bare-pods-after.yaml");
    let StepKind::Apply(apply) = &s.steps[5].kind else {
        panic!("{:?}", s.steps[5])
    };
    assert_eq!(
        apply.source,
        ApplySource::File("manifests/pod-rs.yaml".into())
    );
    assert_eq!(apply.manifests.len(), 2);
    for (m, name) in apply.manifests.iter().zip(["pod1", "pod2"]) {
        let Object::Pod(pod) = &m.object else {
            panic!("{m:?}")
        };
        assert_eq!(pod.meta.name, name);
        assert_eq!(
            pod.node_name.as_deref(),
            Some("node-1"),
            "bound at creation"
        );
        assert_eq!(
            m.raw["spec"]["nodeName"], "node-1",
            "the runner applies it bound too"
        );
    }
    assert_eq!(
        s.steps[5].command(),
        "kubectl apply -f manifests/pod-rs.yaml (pods bound to node-1)"
    );
    let c = compile(&s, Profile::K8s120).unwrap();
    let from_apply: Vec<&ScriptStep> = c
        .origin
        .iter()
        .zip(&c.script.steps)
        .filter(|(o, _)| **o == 5)
        .map(|(_, step)| step)
        .collect();
    assert_eq!(from_apply.len(), 2);
    assert!(from_apply
        .iter()
        .all(|s| matches!(s, ScriptStep::Move(Action::ApplyPod { .. }))));
}

#[test]
fn seeds_round_trip_through_yaml() {
    for s in scenario::load_dir(&seeds_dir()).unwrap() {
        let text = s.to_yaml();
        let back = scenario::load_str(&s.path, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let kinds = |s: &Scenario| s.steps.iter().map(|s| s.kind.clone()).collect::<Vec<_>>();
        assert_eq!(kinds(&back), kinds(&s), "{text}");
        assert_eq!(
            (
                &back.name,
                &back.description,
                &back.nodes,
                back.bounds,
                back.profile,
                back.reproduces.map(|e| e.name)
            ),
            (
                &s.name,
                &s.description,
                &s.nodes,
                s.bounds,
                s.profile,
                s.reproduces.map(|e| e.name)
            )
        );
    }
}

#[test]
fn a_model_run_becomes_a_scenario_that_reads_back() {
    let frontend = ReplicaSet::new(
        "frontend",
        2,
        LabelSelector::match_labels(&[("tier", "frontend")]),
        labels(&[("tier", "frontend")]),
    );
    let mut pod1 = Pod::new("pod1", labels(&[("tier", "frontend")]));
    pod1.node_name = Some("node-2".into());
    pod1.deletion_cost = Some(-3);
    let actions = [
        Action::ApplyReplicaSet {
            replicaset: Arc::new(frontend),
        },
        Action::StartSync {
            controller: 0,
            worker: 0,
            key: "frontend".into(),
        },
        Action::ApplyPod {
            pod: Arc::new(pod1),
        },
        Action::Tick,
        Action::Tick,
        Action::ListPods,
        Action::LabelPod {
            name: "pod1".into(),
            set: labels(&[("tier", "debug")]),
            remove: vec!["track".into()],
        },
        Action::StartSecondLeader,
        Action::Relist {
            watcher: rsmc_spec::model::Watcher::Controller(1),
        },
        Action::ExpireExpectations {
            controller: 1,
            key: "frontend".into(),
        },
        Action::StopFirstLeader,
        Action::DeleteReplicaSet {
            name: "frontend".into(),
            propagation: Some(Propagation::Foreground),
        },
        Action::Settle,
    ];
    let steps = from_actions(&actions);
    let keywords: Vec<&str> = steps.iter().map(|s| s.kind.keyword()).collect();
    assert_eq!(
        keywords,
        [
            "apply",
            "apply",
            "wait",
            "label",
            "startSecondLeader",
            "relist",
            "expireExpectations",
            "stopFirstLeader",
            "delete",
            "settle"
        ]
    );
    assert_eq!(steps[2].kind, StepKind::Wait { seconds: 2 });
    let s = Scenario::new("from-a-run", "A model run's environment.", steps);
    assert_eq!(s.nodes, ["node-2"]);
    let text = s.to_yaml();
    let back = scenario::load_str(Path::new("from-a-run.yaml"), &text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.steps.len(), s.steps.len());
    for (a, b) in back.steps.iter().zip(&s.steps) {
        assert_eq!(a.kind, b.kind, "{text}");
    }
    let c = compile(&back, Profile::K8s120).unwrap();
    assert!(c.config.environment.second_leader);
    let moves: Vec<&Action> = c
        .script
        .steps
        .iter()
        .filter_map(|s| match s {
            ScriptStep::Move(a) => Some(a),
            _ => None,
        })
        .collect();
    // The environment's moves come back in order (the listing is part of the pod step).
    let expected: Vec<&Action> = actions
        .iter()
        .filter(|a| {
            a.is_environment()
                && !matches!(
                    a,
                    Action::ListPods | Action::Settle | Action::LabelPod { .. }
                )
        })
        .collect();
    assert_eq!(moves, expected);
}

#[test]
fn malformed_yaml_names_file_and_line() {
    let (dir, msg) = load_error(
        "malformed",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - apply: [manifests/x.yaml\n  - settle\n",
        )],
    );
    let prefix = format!("{}:", dir.path().join("s.yaml").display());
    assert!(msg.starts_with(&prefix), "{msg}");
    let line: usize = msg[prefix.len()..]
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3..=5).contains(&line), "{msg}");
    assert!(msg.contains("YAML syntax error"), "{msg}");
}

#[test]
fn an_unknown_step_kind_is_named_with_its_line() {
    let (dir, msg) = load_error(
        "unknown-kind",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - settle\n  - scael: {replicaset: frontend, replicas: 2}\n",
        )],
    );
    assert!(
        msg.starts_with(&format!(
            "{}:4:5: steps[1].scael: unknown step kind `scael`, expected one of apply, scale,",
            dir.path().join("s.yaml").display()
        )),
        "{msg}"
    );
}

#[test]
fn a_bad_argument_type_is_named_with_its_line() {
    let (dir, msg) = load_error(
        "bad-type",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - scale:\n      replicaset: frontend\n      replicas: three\n",
        )],
    );
    assert_eq!(
        msg,
        format!(
            "{}:5:7: steps[0].scale.replicas: invalid type: string \"three\", expected i32",
            dir.path().join("s.yaml").display()
        )
    );
}

/// `upTo: N` is an upper bound on the pods a step acts on (an import writes it for writes it
/// cannot attribute); it reads back as such, and with `count` as well it is refused.
#[test]
fn up_to_bounds_a_pod_step_and_excludes_count() {
    let dir = scratch(
        "up-to",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - delete: {pods: {of: frontend}, upTo: 12}\n  - settle\n",
        )],
    );
    let loaded = scenario::load(&dir.path().join("s.yaml")).unwrap();
    assert_eq!(
        loaded.steps[0].command(),
        "kubectl delete pods of frontend (up to 12)"
    );
    let (dir, msg) = load_error(
        "up-to-and-count",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - delete: {pods: {of: frontend}, upTo: 2, count: 1}\n",
        )],
    );
    assert!(
        msg.starts_with(&format!("{}:3:", dir.path().join("s.yaml").display()))
            && msg.contains("give either `count: N` or `upTo: N`, not both"),
        "{msg}"
    );
}

#[test]
fn a_missing_manifest_file_is_named() {
    let (dir, msg) = load_error(
        "missing-manifest",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - apply: manifests/nope.yaml\n",
        )],
    );
    let scenario = dir.path().join("s.yaml");
    let manifest = dir.path().join("manifests/nope.yaml");
    assert_eq!(
        msg,
        format!(
            "{}:3:5: steps[0].apply: {}: cannot read: No such file or directory",
            scenario.display(),
            manifest.display()
        )
    );
}

const FRONTEND_TYPO: &str = "\
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
spec:
  replica: 3
  selector:
    matchLabels: {tier: frontend}
  template:
    metadata:
      labels: {tier: frontend}
    spec:
      containers:
      - {name: app, image: nginx}
";

#[test]
fn a_misspelt_manifest_field_is_named_with_its_line() {
    let (dir, msg) = load_error(
        "typo",
        &[
            ("s.yaml", "name: s\nsteps:\n  - apply: manifests/rs.yaml\n"),
            ("manifests/rs.yaml", FRONTEND_TYPO),
        ],
    );
    assert!(
        msg.starts_with(&format!(
            "{}:6:3: spec.replica: unknown field `replica`",
            dir.path().join("manifests/rs.yaml").display()
        )),
        "{msg}"
    );
}

#[test]
fn a_node_selector_is_rejected_with_field_and_line() {
    let with_selector = FRONTEND_TYPO
        .replace("  replica: 3", "  replicas: 3")
        .replace(
            "    spec:\n",
            "    spec:\n      nodeSelector: {disktype: ssd}\n",
        );
    let (dir, msg) = load_error(
        "node-selector",
        &[
            ("s.yaml", "name: s\nsteps:\n  - apply: manifests/rs.yaml\n"),
            ("manifests/rs.yaml", &with_selector),
        ],
    );
    assert_eq!(
        msg,
        format!(
            "{}:13:7: spec.template.spec.nodeSelector: not covered by the model (pods are placed by scenario steps, not by a scheduler) — remove it",
            dir.path().join("manifests/rs.yaml").display()
        )
    );
}

#[test]
fn inline_manifests_are_checked_at_their_lines_in_the_scenario() {
    let text = "name: s\nsteps:\n  - apply:\n      manifest:\n        apiVersion: v1\n        kind: Pod\n        metadata: {name: pod3, namespace: prod}\n        spec: {containers: [{name: c, image: nginx}]}\n";
    let (dir, msg) = load_error("inline", &[("s.yaml", text)]);
    assert!(
        msg.starts_with(&format!(
            "{}:7:32: metadata.namespace: not covered by the model (scenarios run in a namespace of their own)",
            dir.path().join("s.yaml").display()
        )),
        "{msg}"
    );
    let ok = text.replace(", namespace: prod", "");
    let s = scenario::load_str(&dir.path().join("s.yaml"), &ok).unwrap();
    assert_eq!(s.steps[0].command(), "kubectl apply -f pod3.yaml");
}

#[test]
fn steps_and_manifests_may_only_use_listed_nodes() {
    let (_, msg) = load_error(
        "nodes",
        &[("s.yaml", "name: s\nnodes: [node-1]\nsteps:\n  - settle\n  - schedule: {pods: all, node: node-2}\n")],
    );
    assert!(
        msg.ends_with(":5:5: steps[1].schedule: node node-2 is not in `nodes` (node-1)"),
        "{msg}"
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: node-9, containers: [{name: c, image: i}]}\n";
    let (_, msg) = load_error(
        "nodes-manifest",
        &[
            ("s.yaml", "name: s\nsteps:\n  - apply: manifests/p.yaml\n"),
            ("manifests/p.yaml", pod),
        ],
    );
    assert!(
        msg.contains("node node-9 is not in `nodes` (none listed)"),
        "{msg}"
    );
}

#[test]
fn more_mistakes_are_named() {
    for (text, expected) in [
        (
            "name: s\nsteps:\n  - delete: {replicaset: frontend, cascade: later}\n",
            ":3:36: steps[0].delete.cascade: unknown variant `later`, expected one of `background`, `foreground`, `orphan`, `unset`",
        ),
        (
            "name: s\nsteps:\n  - wait: 1\n",
            ":3:5: steps[0].wait: expected whole seconds, got integer `1`; write it as `wait: Ns (whole seconds, e.g. 1s)`",
        ),
        (
            "name: s\nsteps:\n  - restartController: {controller: 1}\n",
            ":3:5: steps[0].restartController: controller 1 runs only after a startSecondLeader step",
        ),
        (
            "name: s\nsteps:\n  - ready: {pods: pod1}\n",
            "(one pod by name is `pod: pod1`)",
        ),
        (
            "name: s\nsteps:\n  - scale: {replicaset: frontend, replicas: 2, cascade: orphan}\n",
            ":3:48: steps[0].scale.cascade: unknown field `cascade`, expected one of `replicaset`, `replicas`",
        ),
        (
            "name: s\nsteps:\n  - scale:\n    replicaset: frontend\n",
            ":3:5: steps[0]: a step has exactly one kind (and may say `refused: REASON`), this one has `replicaset`, `scale` (check the indentation of its arguments)",
        ),
        (
            "name: s\nbounds: {maxLag: 0}\nsteps: [settle]\n",
            ":2:10: bounds.maxLag: expected 1 to 32 events, got 0",
        ),
        (
            "name: s\nprofile: k8s-1.99\nsteps: [settle]\n",
            ":2:1: profile: unknown profile \"k8s-1.99\": valid profiles are k8s-1.20, upstream",
        ),
        ("name: s\nstep: [settle]\n", ":1:1: missing field `steps`"),
        (
            "name: s\nprofile: upstream\nfeatureGates: {PodDeletionCosts: false}\nsteps: [settle]\n",
            ":3:16: featureGates.PodDeletionCosts: unknown feature gate \"PodDeletionCosts\": the model has a switch for StaleControllerConsistencyReplicaSet, DeploymentReplicaSetTerminatingReplicas, PodDeletionCost",
        ),
        (
            "name: s\nprofile: upstream\nfeatureGates: {PodDeletionCost: off}\nsteps: [settle]\n",
            "featureGates.PodDeletionCost: invalid type: string \"off\", expected a boolean",
        ),
        (
            "name: s\nfeatureGates: {PodDeletionCost: false}\nsteps: [settle]\n",
            ":2:1: featureGates: feature gates switch behaviours of current releases: the scenario needs `profile: upstream`",
        ),
    ] {
        let dir = scratch("more", &[]);
        let err = scenario::load_str(&dir.path().join("s.yaml"), text).unwrap_err();
        assert!(err.to_string().ends_with(expected), "{err}\nexpected …{expected}");
    }
}

#[test]
fn workers_follow_the_replicasets_applied() {
    let manifest = |name: &str| {
        format!("{{apiVersion: apps/v1, kind: ReplicaSet, metadata: {{name: {name}}}, spec: {{selector: {{matchLabels: {{app: {name}}}}}, template: {{metadata: {{labels: {{app: {name}}}}}, spec: {{containers: [{{name: c, image: i}}]}}}}}}}}")
    };
    let names = ["a", "b", "c", "d", "e", "f", "a"];
    let steps: String = names
        .iter()
        .map(|n| format!("  - apply: {{manifest: {}}}\n", manifest(n)))
        .collect();
    for (take, workers) in [(1, 1), (3, 3), (7, 5)] {
        let text = format!(
            "name: s\nbounds: {{maxLag: 3, createFailures: 1}}\nsteps:\n{}",
            steps
                .lines()
                .take(take)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
        );
        let s = scenario::load_str(Path::new("s.yaml"), &text).unwrap_or_else(|e| panic!("{e}"));
        let c = compile(&s, Profile::K8s120).unwrap();
        assert_eq!(c.config.controller.workers, workers, "{take} applies");
        assert_eq!(c.config.informer.max_lag, 3);
        assert_eq!(c.script.create_failures, 1);
        // The appended settle is attributed to the last step.
        assert_eq!(c.script.steps.last(), Some(&ScriptStep::Settle));
        assert_eq!(*c.origin.last().unwrap(), take - 1);
    }
}

/// A scenario's `featureGates` switch the model it is explored with, and are written back.
#[test]
fn feature_gates_switch_the_scenarios_model() {
    let path = seeds_dir().join("gates/pod-deletion-cost-disabled.yaml");
    let gated = rsmc_oracle::prepared::Prepared::load(&path, Profile::K8s120).unwrap();
    assert_eq!(gated.model.profile, Profile::Upstream);
    assert!(!gated.model.sem.deletion_cost_rank, "the gate is off");
    assert!(
        gated.model.sem.consistency_gate,
        "the other gates keep the profile's"
    );
    let plain = rsmc_oracle::prepared::Prepared::load(
        &seeds_dir().join("upstream/test-pod-deletion-cost.yaml"),
        Profile::Upstream,
    )
    .unwrap();
    assert!(plain.model.sem.deletion_cost_rank);
    let text = gated.scenario.to_yaml();
    assert!(
        text.contains("featureGates: {PodDeletionCost: false}\n"),
        "{text}"
    );
    let back = scenario::load_str(&path, &text).unwrap();
    assert_eq!(back.feature_gates, gated.scenario.feature_gates);
    assert_eq!(back.profile, gated.scenario.profile);
}

/// A step that names a ReplicaSet no earlier step applies (or one an earlier step deletes)
/// would be answered NotFound and do nothing: refused with its line and the ReplicaSets
/// there are. A replica count past what the oracle can judge is refused before anything runs.
#[test]
fn steps_on_missing_replicasets_and_huge_counts_are_refused() {
    let apply = "  - apply:\n      manifest:\n        apiVersion: apps/v1\n        kind: ReplicaSet\n        metadata: {name: frontend, labels: {app: web}}\n        spec:\n          replicas: REPLICAS\n          selector: {matchLabels: {app: web}}\n          template:\n            metadata: {labels: {app: web}}\n            spec: {containers: [{name: c, image: nginx}]}\n";
    let with = |replicas: &str, more: &str| {
        format!(
            "name: s\nsteps:\n{}{more}",
            apply.replace("REPLICAS", replicas)
        )
    };
    for (text, expected) in [
        (
            with("1", "  - scale: {replicaset: backend, replicas: 2}\n"),
            ":14:5: steps[1].scale: replicaset backend: no earlier step applies it, so the API server would answer NotFound (ReplicaSets at this step: frontend)",
        ),
        (
            with(
                "1",
                "  - delete: {replicaset: frontend}\n  - scale: {replicaset: frontend, replicas: 2}\n",
            ),
            ":15:5: steps[2].scale: replicaset frontend: an earlier step deletes it, so the API server would answer NotFound (ReplicaSets at this step: none)",
        ),
        (
            with(
                "1",
                "  - delete: {replicaset: frontend}\n  - delete: {replicaset: frontend, cascade: unset}\n",
            ),
            ":15:5: steps[2].delete: replicaset frontend: an earlier step deletes it, so the API server would answer NotFound (ReplicaSets at this step: none)",
        ),
        (
            with("1", "  - expireExpectations: {replicaset: backend, controller: 0}\n"),
            ":14:5: steps[1].expireExpectations: replicaset backend: no earlier step applies it (applied: frontend)",
        ),
        (
            with("1000000", ""),
            ":3:5: steps[0].apply: replicaset frontend: 1000000 replicas: expected at most 100, the largest run the oracle is measured to judge (rsmc bench --oracle)",
        ),
        (
            with("3", "  - scale: {replicaset: frontend, replicas: 101}\n"),
            ":14:5: steps[1].scale: replicaset frontend: 101 replicas: expected at most 100, the largest run the oracle is measured to judge (rsmc bench --oracle)",
        ),
    ] {
        let dir = scratch("missing-rs", &[]);
        let err = scenario::load_str(&dir.path().join("s.yaml"), &text).unwrap_err();
        assert!(err.to_string().ends_with(expected), "{err}\nexpected …{expected}");
    }
    let dir = scratch("missing-rs", &[]);
    let fine = with("100", "  - scale: {replicaset: frontend, replicas: 0}\n");
    scenario::load_str(&dir.path().join("s.yaml"), &fine)
        .expect("100 replicas and a scale of an applied ReplicaSet load");
    // A ReplicaSet a Foreground (or Orphan) delete keeps until the garbage collector is done
    // may be deleted again, with no policy among others.
    let again = with(
        "1",
        "  - delete: {replicaset: frontend, cascade: foreground}\n  - delete: {replicaset: frontend, cascade: unset}\n",
    );
    scenario::load_str(&dir.path().join("s.yaml"), &again)
        .expect("a delete repeated while a Foreground one is under way loads");
}

#[test]
fn holds_of_requests_and_awaits_are_checked_with_their_lines() {
    let rs = "  - apply: {manifest: {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: frontend}, spec: {replicas: 1, selector: {matchLabels: {tier: frontend}}, template: {metadata: {labels: {tier: frontend}}, spec: {containers: [{name: app, image: registry.k8s.io/pause:3.9}]}}}}}\n";
    let hold = "  - hold: {requests: {verb: patch, resource: pods}}\n";
    let release = "  - release: {requests: {verb: patch, resource: pods}}\n";
    for (text, expected) in [
        (
            format!("name: s\nsteps:\n{rs}{release}"),
            ":4:5: steps[1].release: nothing to release: no earlier step holds the replicaset-controller's PATCH pods requests (held: none)",
        ),
        (
            format!("name: s\nsteps:\n{hold}{hold}{release}"),
            ":4:5: steps[1].hold: the replicaset-controller's PATCH pods requests are already held by an earlier step",
        ),
        (
            format!("name: s\nsteps:\n{hold}{rs}  - settle\n"),
            ":3:5: steps[0].hold: the replicaset-controller's PATCH pods requests held here are never released: whoever sent one would wait for ever (add `release: {requests: …}` before the last settle)",
        ),
        (
            format!("name: s\nsteps:\n{hold}  - await: {{held: {{verb: delete, resource: pods}}}}\n{release}"),
            ":4:5: steps[1].await: no earlier step holds the replicaset-controller's DELETE pods requests, so none can be held (held: the replicaset-controller's PATCH pods)",
        ),
        (
            format!("name: s\nsteps:\n{hold}  - release: {{requests: {{from: garbage-collector, verb: patch, resource: pods}}}}\n{release}"),
            ":4:5: steps[1].release: nothing to release: no earlier step holds the garbage-collector's PATCH pods requests (held: the replicaset-controller's PATCH pods)",
        ),
        (
            "name: s\nsteps:\n  - hold: {requests: {from: garbage-collector, verb: create, resource: pods}}\n".into(),
            ":3:5: steps[0].hold: the garbage collector sends no POST pods requests: it patches and deletes pods (orphaning, deleting dependents) and patches replicasets (removing a finalizer)",
        ),
        (
            "name: s\nsteps:\n  - hold: {requests: {from: scheduler, verb: patch, resource: pods}}\n".into(),
            "steps[0].hold.requests.from: expected `replicaset-controller` or `garbage-collector`, got `scheduler`",
        ),
        (
            "name: s\nsteps:\n  - hold: {requests: {verb: evict, resource: pods}}\n".into(),
            "steps[0].hold.requests.verb: unknown variant `evict`, expected one of `get`, `create`, `update`, `patch`, `delete`",
        ),
        (
            "name: s\nsteps:\n  - hold: {requests: {verb: patch, resource: nodes}}\n".into(),
            "steps[0].hold.requests.resource: unknown variant `nodes`, expected one of `pods`, `replicasets`, `replicasets/status`",
        ),
        (
            "name: s\nsteps:\n  - release: pods\n".into(),
            ":3:5: steps[0].release: nothing to release: no earlier step holds pods watch events",
        ),
        (
            "name: s\nsteps:\n  - await: {gone: {deployment: web}}\n".into(),
            ":3:13: steps[0].await.gone: expected `{replicaset: NAME}` or `{pod: NAME}`",
        ),
        (
            "name: s\nsteps:\n  - await: {seen: x}\n".into(),
            "steps[0].await: expected `held` or `gone`; write it as `await: {held: {verb: VERB, resource: RESOURCE, name: NAME}} | {gone: {replicaset: NAME} | {pod: NAME}}`",
        ),
        (
            "name: s\nreproduces: double-trouble\nsteps: [settle]\n".into(),
            ":2:1: reproduces: \"double-trouble\" is not in the bug catalogue (rsmc bugs): expected one of",
        ),
    ] {
        let dir = scratch("holds", &[]);
        let err = scenario::load_str(&dir.path().join("s.yaml"), &text).unwrap_err();
        assert!(
            err.to_string().contains(expected),
            "{err}\nexpected …{expected}\nin:\n{text}"
        );
    }
}

/// `deleteCollection` (upstream's `listRSDeleteCollection`) reads back as it is written, and
/// one that selects no ReplicaSet, or names no resource, is refused with its line.
#[test]
fn a_collection_delete_reads_back_and_selects_replicasets_that_exist() {
    let file = seeds_dir().join("upstream/e2e-list-and-delete-collection.yaml");
    let s = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let back = scenario::load_str(&s.path, &s.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.steps.len(), s.steps.len());
    let collection: Vec<_> = s
        .steps
        .iter()
        .zip(&back.steps)
        .filter(|(a, _)| a.kind.keyword() == "deleteCollection")
        .collect();
    assert_eq!(collection.len(), 1);
    assert_eq!(collection[0].0.kind, collection[0].1.kind);
    let apply = "  - apply: {manifest: {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web, labels: {e2e: x}}, spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}}}\n";
    let (dir, msg) = load_error(
        "collection-none",
        &[(
            "s.yaml",
            &format!("name: s\nsteps:\n{apply}  - deleteCollection: {{replicasets: {{labels: {{e2e: y}}}}}}\n"),
        )],
    );
    assert!(
        msg.starts_with(&format!("{}:4:", dir.path().join("s.yaml").display()))
            && msg.contains("no ReplicaSet at this step has them"),
        "{msg}"
    );
    let (_, msg) = load_error(
        "collection-no-resource",
        &[(
            "s.yaml",
            "name: s\nsteps:\n  - deleteCollection: {labels: {e2e: y}}\n",
        )],
    );
    assert!(msg.contains("expected `replicasets:"), "{msg}");
}

/// `setOwnerReferences` (upstream's TestAdoption and TestGeneralPodAdoption write a pod's
/// owner references) reads back as it is written; a reference to a ReplicaSet no earlier step
/// applies, two controllers, one owner twice, an owner the API server refuses (v1 Event) or
/// the model does not have (the runner's marks), a reference naming no owner, or a misspelt
/// key are refused with the line.
#[test]
fn owner_references_read_back_and_name_replicasets_that_exist() {
    let file = seeds_dir().join("upstream/test-adoption-other-controller.yaml");
    let s = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let back = scenario::load_str(&s.path, &s.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    let set: Vec<_> = s
        .steps
        .iter()
        .zip(&back.steps)
        .filter(|(a, _)| a.kind.keyword() == "setOwnerReferences")
        .collect();
    assert_eq!(set.len(), 1);
    assert_eq!(set[0].0.kind, set[0].1.kind);
    let apply = "  - apply: {manifest: {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web}, spec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: i}]}}}}}\n";
    let cases = [
        (
            "[{replicaset: gone}]",
            "replicaset gone: no earlier step applies it",
        ),
        (
            "[{replicaset: web, controller: true}, {replicaset: web}]",
            "rs/web is named twice",
        ),
        (
            "[{apiVersion: v1, kind: Event, name: e}]",
            "an owner of kind v1 Event is refused by the API server",
        ),
        (
            "[{apiVersion: v1, kind: ConfigMap, name: rsmc-settle-1}]",
            "configmap/rsmc-settle-1: the runner's own marks are ConfigMaps named rsmc-",
        ),
        (
            "[{kind: StatefulSet, name: web}]",
            "expected {replicaset: NAME} or {apiVersion: API_VERSION, kind: KIND, name: NAME}",
        ),
        (
            "[{replicaset: web, controller: true}, {replicaset: web, controller: true}]",
            "at most one may have `controller: true`",
        ),
        (
            "[{replicaset: web, controler: true}]",
            "unknown field `controler`",
        ),
    ];
    for (i, (references, expected)) in cases.into_iter().enumerate() {
        let (dir, msg) = load_error(
            &format!("owners-{i}"),
            &[(
                "s.yaml",
                &format!("name: s\nsteps:\n{apply}  - settle\n  - setOwnerReferences: {{pods: {{of: web}}, references: {references}}}\n"),
            )],
        );
        assert!(
            msg.starts_with(&format!("{}:5:", dir.path().join("s.yaml").display()))
                && msg.contains(expected),
            "{msg}"
        );
    }
}

/// `create: {configMap: NAME}` and `delete: {configMap: NAME}` read back as they are written
/// and compile to the model's owner of another kind; a ConfigMap created while it exists,
/// deleted while it does not, named as the runner's marks are or not as the API server takes,
/// and a `create` of anything else are refused with the line.
#[test]
fn configmaps_are_created_and_deleted_as_owners_of_another_kind() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/scenarios/owners/owned-by-a-configmap.yaml");
    let s = scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
    let back = scenario::load_str(&s.path, &s.to_yaml()).unwrap_or_else(|e| panic!("{e}"));
    let kinds = |s: &Scenario| s.steps.iter().map(|st| st.kind.clone()).collect::<Vec<_>>();
    assert_eq!(kinds(&back), kinds(&s));
    assert_eq!(
        s.steps[0].kind,
        StepKind::CreateConfigMap {
            name: "keeper".into()
        }
    );
    assert_eq!(s.steps[0].command(), "kubectl create configmap keeper");
    let compiled = compile(&s, Profile::K8s120).unwrap_or_else(|e| panic!("{e}"));
    let others: Vec<String> = compiled
        .script
        .moves_to_come(&Default::default())
        .filter(|a| matches!(a, Action::CreateOther { .. } | Action::DeleteOther { .. }))
        .map(|a| a.to_string())
        .collect();
    assert_eq!(
        others,
        [
            "user: create v1 ConfigMap/keeper",
            "user: delete v1 ConfigMap/keeper"
        ]
    );
    let cases = [
        (
            "  - create: {configMap: keeper}\n  - create: {configMap: keeper}\n",
            4,
            "steps[1].create.configMap: configmap/keeper exists already",
        ),
        (
            "  - create: {configMap: keeper}\n  - delete: {configMap: keeper}\n  - delete: {configMap: keeper}\n",
            5,
            "configmap/keeper does not exist here",
        ),
        (
            "  - create: {configMap: rsmc-settle-1}\n",
            3,
            "the runner's own marks are ConfigMaps named rsmc-",
        ),
        (
            "  - create: {configMap: Keeper}\n",
            3,
            "expected a DNS subdomain name",
        ),
        (
            "  - create: {replicaset: web}\n",
            3,
            "expected `configMap: NAME` (ReplicaSets and pods are created with `apply`)",
        ),
        (
            "  - delete: {configMap: keeper, cascade: orphan}\n",
            3,
            "unknown field `cascade`",
        ),
    ];
    for (i, (steps, line, expected)) in cases.into_iter().enumerate() {
        let (dir, msg) = load_error(
            &format!("configmaps-{i}"),
            &[("s.yaml", &format!("name: s\nsteps:\n{steps}"))],
        );
        assert!(
            msg.starts_with(&format!("{}:{line}:", dir.path().join("s.yaml").display()))
                && msg.contains(expected),
            "{msg}"
        );
    }
}
