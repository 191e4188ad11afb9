//! The scale-down ranking's inputs a scenario can change on live pods: the deletion-cost
//! annotation (`annotate`) and the containers' restart count (`restartContainers`), replayed
//! in the model as upstream's `TestPodDeletionCost` (test/integration/replicaset) sets them:
//! two pods of a ReplicaSet, never scheduled (Pending, so no time rule applies), the first
//! with cost 1000 and 5 restarts, the second with cost 100 and none; scaled to 1.

use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::replay;
use rsmc_spec::profile::Profile;

const RS: &str = "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs}, spec: {replicas: 2, selector: {matchLabels: {foo: bar}}, template: {metadata: {labels: {foo: bar}}, spec: {containers: [{name: c, image: fakeimage}]}}}}";

/// The scenario with the two pods' costs (`None`: no annotation).
fn scenario(first: Option<&str>, second: Option<&str>) -> String {
    let mut steps = format!(
        "  - apply: {{manifest: {RS}}}\n  - settle\n  - label: {{pods: {{of: rs}}, count: 1, set: {{which: first}}}}\n  - settle\n"
    );
    let others = "{selector: {matchExpressions: [{key: which, operator: DoesNotExist}]}}";
    for (pods, cost) in [("{labels: {which: first}}", first), (others, second)] {
        if let Some(cost) = cost {
            steps += &format!("  - annotate: {{pods: {pods}, set: {{controller.kubernetes.io/pod-deletion-cost: \"{cost}\"}}}}\n");
        }
    }
    steps += "  - restartContainers: {pods: {labels: {which: first}}, restartCount: 5}\n  - settle\n  - scale: {replicaset: rs, replicas: 1}\n  - settle\n";
    format!("name: ranking-inputs\nsteps:\n{steps}")
}

/// The labels of the pods left at the last settle point, each distinct outcome once.
fn survivors(text: &str, profile: Profile) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ranking-inputs.yaml");
    std::fs::write(&path, text).unwrap();
    let prepared = Prepared::load(&path, profile).unwrap();
    let r = replay::replay(&prepared.subject(), &rsmc_oracle::explore::default_budget()).unwrap();
    let last = r.points.last().unwrap();
    last.outcomes
        .iter()
        .map(|view| {
            let pods: Vec<&str> = view
                .lines()
                .skip_while(|l| !l.starts_with("NAME") || !l.contains("LABELS"))
                .skip(1)
                .take_while(|l| !l.is_empty())
                .collect();
            assert_eq!(pods.len(), 1, "one pod left: {view}");
            pods[0].rsplit(' ').next().unwrap().to_string()
        })
        .collect()
}

const FIRST: &str = "foo=bar,which=first";
const SECOND: &str = "foo=bar";

#[test]
fn the_cost_decides_where_the_gate_is_on_and_restarts_otherwise() {
    let different = scenario(Some("1000"), Some("100"));
    // enabled-with-different-costs: the cheaper pod goes, the first (index 0) remains.
    assert_eq!(survivors(&different, Profile::Upstream), [FIRST]);
    // disabled-with-different-costs (v1.20 has no gate): 5 restarts send the first.
    assert_eq!(survivors(&different, Profile::K8s120), [SECOND]);
    for profile in [Profile::Upstream, Profile::K8s120] {
        // enabled-with-same-costs and enabled-with-no-costs: the restarts decide.
        assert_eq!(
            survivors(&scenario(Some("100"), Some("100")), profile),
            [SECOND]
        );
        assert_eq!(survivors(&scenario(None, None), profile), [SECOND]);
    }
}

#[test]
fn an_annotation_the_model_does_not_hold_or_a_bad_cost_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    for (args, expected) in [
        (
            "set: {team: web}",
            "\"team\": the model holds only the annotation controller.kubernetes.io/pod-deletion-cost",
        ),
        (
            "set: {controller.kubernetes.io/pod-deletion-cost: \"+5\"}",
            "Invalid value: \"+5\": must be a 32bit integer, without a plus sign or leading zeros",
        ),
        (
            "remove: [team]",
            "\"team\": the model holds only the annotation",
        ),
    ] {
        let text = format!(
            "name: bad\nsteps:\n  - apply: {{manifest: {RS}}}\n  - annotate: {{pods: all, {args}}}\n"
        );
        std::fs::write(&path, text).unwrap();
        let Err(e) = Prepared::load(&path, Profile::K8s120) else {
            panic!("{args}: loaded");
        };
        let e = e.to_string();
        assert!(e.contains("bad.yaml:4:") && e.contains(expected), "{e}");
    }
}
