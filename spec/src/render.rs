//! kubectl-style rendering of model states.
//!
//! It lives in the spec, beside the objects it prints, so that the model itself can show a
//! state as a person knows it (the Explorer's view, `model::svg`); the oracle re-exports it
//! for traces, replays and verdicts.
//!
//! The tables follow `kubectl get` (k8s.io/cli-runtime/pkg/printers/tablegenerator.go and
//! k8s.io/kubectl/pkg/cmd/get/humanreadable_flags.go; the column contents come from
//! pkg/printers/internalversion/printers.go `printReplicaSet` and `printPod`). The layout is
//! that of kubectl's tabwriter (cli-runtime/pkg/printers/tabwriter.go: minwidth 6, tabwidth
//! 4, padding 3, pad character `' '`): every column but the last is as wide as its widest
//! cell plus 3 spaces, and at least 6; the last column is not padded.
//!
//! Deliberate differences from real kubectl:
//!
//! - No `AGE` column. The model has no clock (a `creationTimestamp` is a revision), so any
//!   age would be invented; the conformance harness filters real ages out of kubectl output
//!   before comparing.
//! - A pod's `STATUS` is its phase, or `Terminating` once its deletionTimestamp is set, as
//!   `printPod` does; a Failed pod shows `Error`, its container's termination reason. The model has no containers, so kubelet-level reasons such as
//!   `ContainerCreating`, `Completed` or `CrashLoopBackOff` do not appear, and every pod has one
//!   container (`READY` is `1/1` or `0/1`). `RESTARTS` has no "(5m ago)" suffix.
//! - `kubectl get rs -o wide` ([`get_rs_o_wide`]) leaves out `CONTAINERS` and `IMAGES` as
//!   well as `AGE`: the model keeps no container payload.
//! - The status line ([`get_rs_status`]) is a `custom-columns` table of our choosing (the
//!   fields upstream's tests assert on), printed as kubectl prints it.
//! - The other `-wide` tables are this tool's own: they show what a user debugging the controller
//!   needs (selectors, deletion finalizers, observed generation, the controller reference)
//!   instead of kubectl's containers, images and IPs.

use crate::api::ApiServer;
use crate::object::{
    other_owner, render_labels, LabelSelector, Meta, Operator, OwnerKind, Pod, ReplicaSet,
};

/// What kubectl prints (on stderr) when a list is empty.
pub const NO_RESOURCES: &str = "No resources found in default namespace.\n";

/// kubectl's tabwriter: `tabwriterMinWidth`.
const MIN_WIDTH: usize = 6;
/// kubectl's tabwriter: `tabwriterPadding`.
const PADDING: usize = 3;

/// `kubectl get rs`: `NAME DESIRED CURRENT READY` (no `AGE`: see the module docs).
pub fn get_rs(api: &ApiServer) -> String {
    table(
        &["NAME", "DESIRED", "CURRENT", "READY"],
        api.replicasets.values().map(|o| rs_columns(o)).collect(),
    )
}

/// `kubectl get rs` with this tool's extra columns: `SELECTOR` (as kubectl's `-o wide` prints
/// it), `DELETING` (the deletion finalizers once a deletion has begun, else `-`) and
/// `OBSERVED` (`status.observedGeneration/metadata.generation`).
pub fn get_rs_wide(api: &ApiServer) -> String {
    table(
        &[
            "NAME", "DESIRED", "CURRENT", "READY", "SELECTOR", "DELETING", "OBSERVED",
        ],
        api.replicasets
            .values()
            .map(|rs| {
                let mut row = rs_selector_columns(rs);
                row.push(deleting(&rs.meta));
                row.push(format!(
                    "{}/{}",
                    rs.status.observed_generation, rs.meta.generation
                ));
                row
            })
            .collect(),
    )
}

/// `kubectl get rs -o wide` as the views show it: kubectl's columns but `AGE`, `CONTAINERS`
/// and `IMAGES` (the model has no clock and keeps no container payload, so the conformance
/// harness takes those out of real output too), i.e. `NAME DESIRED CURRENT READY SELECTOR`.
pub fn get_rs_o_wide(api: &ApiServer) -> String {
    table(
        &["NAME", "DESIRED", "CURRENT", "READY", "SELECTOR"],
        api.replicasets
            .values()
            .map(|rs| rs_selector_columns(rs))
            .collect(),
    )
}

/// The status line's `-o` argument: the generation and every count of `status`, the fields
/// upstream's tests assert on (test/integration/replicaset/replicaset_test.go reads
/// observedGeneration, fullyLabeledReplicas, readyReplicas, availableReplicas; the
/// terminating-replicas tests terminatingReplicas).
pub const RS_STATUS_OUTPUT: &str = "custom-columns=NAME:.metadata.name,GENERATION:.metadata.generation,OBSERVED:.status.observedGeneration,REPLICAS:.status.replicas,FULLY-LABELED:.status.fullyLabeledReplicas,READY:.status.readyReplicas,AVAILABLE:.status.availableReplicas,TERMINATING:.status.terminatingReplicas";

/// `kubectl get rs -o` [`RS_STATUS_OUTPUT`]. A field the API server leaves out of the object
/// reads `<none>`, as kubectl's custom columns print a path that finds nothing
/// (k8s.io/cli-runtime/pkg/printers/customcolumn.go, `printOneObject`): apps/v1
/// `ReplicaSetStatus` marks every count but `replicas` `omitempty`, so a zero count is absent,
/// and `terminatingReplicas` is a pointer, absent where the release or its gate
/// (DeploymentReplicaSetTerminatingReplicas) has no such field and present even at 0 where it
/// has.
pub fn get_rs_status(api: &ApiServer) -> String {
    let header: Vec<&str> = RS_STATUS_OUTPUT
        .trim_start_matches("custom-columns=")
        .split(',')
        .map(|c| c.split_once(':').map_or(c, |(name, _)| name))
        .collect();
    let omitted_if_zero = |n: i64| {
        if n == 0 {
            "<none>".to_string()
        } else {
            n.to_string()
        }
    };
    table(
        &header,
        api.replicasets
            .values()
            .map(|rs| {
                let s = &rs.status;
                vec![
                    rs.meta.name.clone(),
                    omitted_if_zero(rs.meta.generation.into()),
                    omitted_if_zero(s.observed_generation.into()),
                    s.replicas.to_string(),
                    omitted_if_zero(s.fully_labeled_replicas.into()),
                    omitted_if_zero(s.ready_replicas.into()),
                    omitted_if_zero(s.available_replicas.into()),
                    s.terminating_replicas
                        .map_or_else(|| "<none>".to_string(), |n| n.to_string()),
                ]
            })
            .collect(),
    )
}

/// The ReplicaSet half of the views: [`get_rs_o_wide`] then, where there is a ReplicaSet,
/// the status line [`get_rs_status`], each under the command that prints it.
pub fn rs_views(api: &ApiServer) -> String {
    let status = (!api.replicasets.is_empty()).then(|| get_rs_status(api));
    rs_views_of(&get_rs_o_wide(api), status.as_deref())
}

/// The transcript of the ReplicaSet tables, whoever printed them (the conformance harness
/// lays real kubectl output out the same way). The status line is left out where there is
/// no ReplicaSet: it would say nothing, and kubectl's custom-columns printer names the
/// `default` namespace in its "No resources found" whatever `--namespace` says (seen with
/// kubectl v1.20.2), which only a normalisation of our own could hide.
pub fn rs_views_of(wide: &str, status: Option<&str>) -> String {
    match status {
        Some(status) => format!(
            "$ kubectl get rs -o wide\n{wide}\n$ kubectl get rs -o {RS_STATUS_OUTPUT}\n{status}"
        ),
        None => format!("$ kubectl get rs -o wide\n{wide}"),
    }
}

/// `kubectl get pods --show-labels`: `NAME READY STATUS RESTARTS LABELS` (no `AGE`).
pub fn get_pods(api: &ApiServer) -> String {
    table(
        &["NAME", "READY", "STATUS", "RESTARTS", "LABELS"],
        api.pods
            .values()
            .map(|pod| {
                let mut row = pod_columns(pod);
                row.push(render_labels(&pod.meta.labels));
                row
            })
            .collect(),
    )
}

/// `kubectl get pods --show-labels` with `NODE` (`<none>` while unscheduled, as kubectl
/// prints it) and this tool's `CONTROLLED-BY`: the controller reference as
/// `ReplicaSet/<name>`, with ` (gone)` when no ReplicaSet with that name and UID exists, or
/// `<none>`.
pub fn get_pods_wide(api: &ApiServer) -> String {
    table(
        &[
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "NODE",
            "CONTROLLED-BY",
            "LABELS",
        ],
        api.pods
            .values()
            .map(|pod| {
                let mut row = pod_columns(pod);
                row.push(pod.node_name.clone().unwrap_or_else(|| "<none>".into()));
                row.push(controlled_by(api, pod));
                row.push(render_labels(&pod.meta.labels));
                row
            })
            .collect(),
    )
}

/// A terminal transcript of both listings:
///
/// ```text
/// $ kubectl get rs
/// NAME       DESIRED   CURRENT   READY
/// frontend   3         3         3
///
/// $ kubectl get pods --show-labels
/// NAME             READY   STATUS    RESTARTS   LABELS
/// frontend-b9xkq   1/1     Running   0          tier=frontend
/// ...
/// ```
pub fn snapshot(api: &ApiServer) -> String {
    format!(
        "$ kubectl get rs\n{}\n$ kubectl get pods --show-labels\n{}",
        get_rs(api),
        get_pods(api)
    )
}

/// insta filters (regex, replacement) that normalise generated names: any
/// `<prefix>-` followed by five characters of the `generateName` alphabet
/// (`crate::api::names::ALPHABET`) becomes `<prefix>-#####`. The replacement keeps the
/// name's width, so the columns of a filtered table stay aligned.
///
/// A hand-chosen name that happens to look generated (e.g. `web-bcdfg`) is normalised too;
/// the alphabet has no vowels, so ordinary words do not match.
pub fn generated_name_filters() -> Vec<(&'static str, &'static str)> {
    // `\b` on both sides: the name starts and the suffix ends at a word boundary, and the
    // prefix starts and ends with a name character (so `--bcdfg` is left alone).
    vec![(
        r"\b([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)-[bcdfghjklmnpqrstvwxz2456789]{5}\b",
        "${1}-#####",
    )]
}

fn rs_columns(rs: &ReplicaSet) -> Vec<String> {
    vec![
        rs.meta.name.clone(),
        rs.spec.replicas.to_string(),
        rs.status.replicas.to_string(),
        rs.status.ready_replicas.to_string(),
    ]
}

/// [`rs_columns`] and kubectl's `-o wide` `SELECTOR`.
fn rs_selector_columns(rs: &ReplicaSet) -> Vec<String> {
    let mut row = rs_columns(rs);
    row.push(format_selector(&rs.spec.selector));
    row
}

/// A pod's `STATUS` column: `Terminating` once its deletionTimestamp is set, `Error` when
/// failed, else its phase (see the module docs).
pub fn pod_status(pod: &Pod) -> &'static str {
    if pod.meta.is_deleting() {
        "Terminating"
    } else if pod.phase == crate::object::PodPhase::Failed {
        // printPod shows a terminated container's reason over the phase, and a container
        // that exits non-zero is reported with reason `Error` (as the runner's kubelet does).
        "Error"
    } else {
        pod.phase.as_str()
    }
}

fn pod_columns(pod: &Pod) -> Vec<String> {
    vec![
        pod.meta.name.clone(),
        format!("{}/1", u8::from(pod.is_ready())),
        pod_status(pod).to_string(),
        pod.restarts.to_string(),
    ]
}

fn deleting(meta: &Meta) -> String {
    if !meta.is_deleting() {
        return "-".into();
    }
    if meta.finalizers.is_empty() {
        // Not reachable through the API server (an object being deleted without finalizers
        // is removed), but a hand-built state should still render.
        return "<none>".into();
    }
    meta.finalizers
        .iter()
        .map(|f| f.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

fn controlled_by(api: &ApiServer, pod: &Pod) -> String {
    let Some(r) = pod.meta.controller_ref() else {
        return "<none>".into();
    };
    let live = match &r.kind {
        OwnerKind::ReplicaSet => api
            .replicasets
            .get(&r.name)
            .is_some_and(|rs| rs.meta.uid == r.uid),
        OwnerKind::Other(_) => other_owner::exists(&api.others, r),
    };
    let kind = r.kind.kind();
    if live {
        format!("{kind}/{}", r.name)
    } else {
        format!("{kind}/{} (gone)", r.name)
    }
}

/// `metav1.FormatLabelSelector`: the selector as `labels.Selector.String()` prints it, i.e.
/// every requirement (matchLabels as `k=v`, then matchExpressions) sorted by key, values of
/// `in`/`notin` sorted; `<none>` when empty.
pub fn format_selector(selector: &LabelSelector) -> String {
    let mut reqs: Vec<(&str, String)> = selector
        .match_labels
        .iter()
        .map(|(k, v)| (k.as_str(), format!("{k}={v}")))
        .collect();
    for r in &selector.match_expressions {
        let values = r.values.iter().cloned().collect::<Vec<_>>().join(",");
        let text = match r.operator {
            Operator::In => format!("{} in ({values})", r.key),
            Operator::NotIn => format!("{} notin ({values})", r.key),
            Operator::Exists => r.key.clone(),
            Operator::DoesNotExist => format!("!{}", r.key),
        };
        reqs.push((r.key.as_str(), text));
    }
    if reqs.is_empty() {
        return "<none>".into();
    }
    reqs.sort_by(|a, b| a.0.cmp(b.0));
    reqs.into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

/// Lays out a table as kubectl's tabwriter does; [`NO_RESOURCES`] when there are no rows.
/// Rows come in the order given (the callers pass name order, as a list from the API server
/// is).
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    if rows.is_empty() {
        return NO_RESOURCES.to_string();
    }
    let width = |s: &str| s.chars().count();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            let widest = rows
                .iter()
                .map(|r| width(&r[i]))
                .chain(std::iter::once(width(header[i])))
                .max()
                .unwrap_or(0);
            (widest + PADDING).max(MIN_WIDTH)
        })
        .collect();
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows.iter()) {
        debug_assert_eq!(row.len(), widths.len());
        let last = row.len() - 1;
        for (i, cell) in row.iter().enumerate() {
            out.push_str(cell);
            if i < last {
                out.extend(std::iter::repeat_n(' ', widths[i] - width(cell)));
            }
        }
        out.push('\n');
    }
    out
}

/// The wide tables of the API server's objects: `kubectl get rs -o wide` and `kubectl get pods
/// -o wide --show-labels` style, with owners and finalizers, as a counterexample needs them.
pub fn wide_tables(api: &ApiServer) -> String {
    format!(
        "$ kubectl get rs -o wide\n{}\n$ kubectl get pods -o wide --show-labels\n{}",
        get_rs_wide(api),
        get_pods_wide(api)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{names, DeleteOptions, OwnerRefPatch, Propagation, Request, Response};
    use crate::object::{labels, OwnerReference, PodPhase, ReplicaSetStatus, Requirement};

    fn apply(api: &mut ApiServer, request: Request) -> Response {
        api.apply(&request)
            .unwrap_or_else(|e| panic!("{request:?}: {e:?}"))
    }

    fn frontend_rs(replicas: i32) -> ReplicaSet {
        ReplicaSet::new(
            "frontend",
            replicas,
            LabelSelector::match_labels(&[("tier", "frontend")]),
            labels(&[("tier", "frontend")]),
        )
    }

    /// Creates a pod (by `generateName` when `name` is empty), optionally controlled by the
    /// ReplicaSet `owner`, bound to `node-1` and running with the given readiness.
    fn add_pod(api: &mut ApiServer, name: &str, owner: Option<&str>, ready: bool) -> String {
        let mut pod = Pod::new(name, labels(&[("tier", "frontend")]));
        if name.is_empty() {
            pod.meta.generate_name =
                Some(format!("{}-", owner.expect("generated pods have an owner")));
        }
        if let Some(owner) = owner {
            let uid = api.replicasets[owner].meta.uid;
            pod.meta.owner_references = vec![OwnerReference::controller_of(owner, uid)];
        }
        let Response::Written { name, .. } = apply(api, Request::CreatePod(pod)) else {
            panic!("create returns Written");
        };
        apply(
            api,
            Request::BindPod {
                name: name.clone(),
                node: "node-1".into(),
            },
        );
        apply(
            api,
            Request::SetPodStatus {
                name: name.clone(),
                phase: PodPhase::Running,
                ready,
            },
        );
        name
    }

    /// The status the controller would write for `name` with `replicas` pods, `ready` ready.
    fn set_status(api: &mut ApiServer, name: &str, replicas: i32, ready: i32) {
        let rs = &api.replicasets[name];
        let request = Request::UpdateReplicaSetStatus {
            name: name.into(),
            resource_version: rs.meta.resource_version,
            status: ReplicaSetStatus {
                replicas,
                fully_labeled_replicas: replicas,
                ready_replicas: ready,
                available_replicas: ready,
                terminating_replicas: None,
                observed_generation: rs.meta.generation,
                replica_failure: None,
            },
        };
        apply(api, request);
    }

    /// The seed's `frontend.yaml` after the controller created its three pods, all ready.
    fn frontend_settled() -> ApiServer {
        let mut api = ApiServer::default();
        apply(&mut api, Request::CreateReplicaSet(frontend_rs(3)));
        for _ in 0..3 {
            add_pod(&mut api, "", Some("frontend"), true);
        }
        set_status(&mut api, "frontend", 3, 3);
        api
    }

    fn insta_filters() -> Vec<(&'static str, &'static str)> {
        generated_name_filters()
    }

    #[test]
    fn empty_lists_print_no_resources() {
        let api = ApiServer::default();
        assert_eq!(get_rs(&api), "No resources found in default namespace.\n");
        assert_eq!(get_pods(&api), NO_RESOURCES);
        assert_eq!(get_rs_wide(&api), NO_RESOURCES);
        assert_eq!(get_pods_wide(&api), NO_RESOURCES);
        assert_eq!(
            snapshot(&api),
            "$ kubectl get rs\nNo resources found in default namespace.\n\n\
             $ kubectl get pods --show-labels\nNo resources found in default namespace.\n"
        );
    }

    #[test]
    fn small_case_exact_output() {
        let mut api = ApiServer::default();
        apply(&mut api, Request::CreateReplicaSet(frontend_rs(2)));
        let ready = add_pod(&mut api, "", Some("frontend"), true);
        let pending = names::generate("frontend-", api.last_uid + 1);
        let mut pod = Pod::new("", labels(&[("tier", "frontend")]));
        pod.meta.generate_name = Some("frontend-".into());
        let uid = api.replicasets["frontend"].meta.uid;
        pod.meta.owner_references = vec![OwnerReference::controller_of("frontend", uid)];
        apply(&mut api, Request::CreatePod(pod));
        set_status(&mut api, "frontend", 2, 1);

        assert_eq!(
            get_rs(&api),
            "NAME       DESIRED   CURRENT   READY\n\
             frontend   2         2         1\n"
        );

        let mut rows = [
            format!("{ready}   1/1     Running   0          tier=frontend"),
            format!("{pending}   0/1     Pending   0          tier=frontend"),
        ];
        rows.sort();
        assert_eq!(
            get_pods(&api),
            format!(
                "NAME             READY   STATUS    RESTARTS   LABELS\n{}\n{}\n",
                rows[0], rows[1]
            )
        );
    }

    /// The status line prints what the API server sends: a zero count of an `omitempty`
    /// field is absent (`<none>`), `replicas` is always there, and `terminatingReplicas` is
    /// a number, 0 included, only where the profile has the field. Without a ReplicaSet the
    /// views leave the line out.
    #[test]
    fn the_status_line_shows_absent_fields_as_kubectl_does() {
        let mut api = ApiServer::default();
        assert_eq!(
            rs_views(&api),
            "$ kubectl get rs -o wide\nNo resources found in default namespace.\n"
        );
        apply(&mut api, Request::CreateReplicaSet(frontend_rs(3)));
        add_pod(&mut api, "", Some("frontend"), false);
        set_status(&mut api, "frontend", 1, 0);
        assert_eq!(
            get_rs_status(&api),
            "NAME       GENERATION   OBSERVED   REPLICAS   FULLY-LABELED   READY    AVAILABLE   TERMINATING\n\
             frontend   1            1          1          1               <none>   <none>      <none>\n"
        );
        let mut rs = (*api.replicasets["frontend"]).clone();
        rs.status.terminating_replicas = Some(0);
        rs.status.replicas = 0;
        api.replicasets
            .insert("frontend".into(), std::sync::Arc::new(rs));
        assert!(
            get_rs_status(&api).ends_with("frontend   1            1          0          1               <none>   <none>      0\n"),
            "{}",
            get_rs_status(&api)
        );
        assert_eq!(
            get_rs_o_wide(&api),
            "NAME       DESIRED   CURRENT   READY   SELECTOR\nfrontend   3         0         0       tier=frontend\n"
        );
        let views = rs_views(&api);
        assert!(
            views.contains(&format!("\n$ kubectl get rs -o {RS_STATUS_OUTPUT}\nNAME ")),
            "{views}"
        );
    }

    #[test]
    fn columns_grow_with_the_widest_cell_and_keep_the_minimum_width() {
        let out = table(
            &["A", "LONGHEADER", "LAST"],
            vec![
                vec!["x".into(), "y".into(), "z".into()],
                vec!["wider-cell".into(), "".into(), "tail".into()],
            ],
        );
        assert_eq!(
            out,
            "A            LONGHEADER   LAST\n\
             x            y            z\n\
             wider-cell                tail\n"
        );
        // A column of short cells is still six wide (tabwriterMinWidth).
        let out = table(&["AB", "C"], vec![vec!["1".into(), "2".into()]]);
        assert_eq!(out, "AB    C\n1     2\n");
    }

    #[test]
    fn terminating_and_orphaned_pods_in_the_wide_view() {
        let mut api = ApiServer::default();
        apply(&mut api, Request::CreateReplicaSet(frontend_rs(1)));
        add_pod(&mut api, "pod1", Some("frontend"), true);
        add_pod(&mut api, "pod2", None, false);
        let mut unscheduled = Pod::new("pod3", labels(&[]));
        unscheduled.restarts = 2;
        apply(&mut api, Request::CreatePod(unscheduled));
        apply(
            &mut api,
            Request::DeletePod {
                name: "pod2".into(),
                options: DeleteOptions::default(),
            },
        );
        set_status(&mut api, "frontend", 1, 1);
        assert_eq!(
            get_pods_wide(&api),
            "NAME   READY   STATUS        RESTARTS   NODE     CONTROLLED-BY         LABELS\n\
             pod1   1/1     Running       0          node-1   ReplicaSet/frontend   tier=frontend\n\
             pod2   0/1     Terminating   0          node-1   <none>                tier=frontend\n\
             pod3   0/1     Pending       2          <none>   <none>                <none>\n"
        );
        assert_eq!(
            get_rs_wide(&api),
            "NAME       DESIRED   CURRENT   READY   SELECTOR        DELETING   OBSERVED\n\
             frontend   1         1         1       tier=frontend   -          1/1\n"
        );

        // Orphan deletion: the RS waits on its finalizer; once it is gone, pod1's reference
        // dangles, including after a new ReplicaSet takes the name (a different UID). The
        // deletion bumps the generation (1 → 2), the scale bumps it again (→ 3).
        apply(
            &mut api,
            Request::DeleteReplicaSet {
                name: "frontend".into(),
                options: DeleteOptions {
                    propagation: Some(Propagation::Orphan),
                    ..DeleteOptions::default()
                },
            },
        );
        apply(
            &mut api,
            Request::ScaleReplicaSet {
                name: "frontend".into(),
                replicas: 2,
            },
        );
        assert_eq!(
            get_rs_wide(&api),
            "NAME       DESIRED   CURRENT   READY   SELECTOR        DELETING   OBSERVED\n\
             frontend   2         1         1       tier=frontend   orphan     1/3\n"
        );
        apply(
            &mut api,
            Request::RemoveFinalizer {
                name: "frontend".into(),
                finalizer: crate::object::Finalizer::Orphan,
            },
        );
        assert!(get_pods_wide(&api).contains("ReplicaSet/frontend (gone)   tier=frontend\n"));
        apply(&mut api, Request::CreateReplicaSet(frontend_rs(1)));
        assert!(get_pods_wide(&api).contains("ReplicaSet/frontend (gone)   tier=frontend\n"));
    }

    #[test]
    fn selectors_print_as_kubectl_wide_does() {
        let mut selector = LabelSelector::match_labels(&[("tier", "frontend")]);
        selector.match_expressions = vec![
            Requirement {
                key: "env".into(),
                operator: Operator::In,
                values: ["qa".to_string(), "prod".to_string()].into(),
            },
            Requirement {
                key: "zone".into(),
                operator: Operator::DoesNotExist,
                values: Default::default(),
            },
            Requirement {
                key: "app".into(),
                operator: Operator::Exists,
                values: Default::default(),
            },
        ];
        assert_eq!(
            format_selector(&selector),
            "app,env in (prod,qa),tier=frontend,!zone"
        );
        assert_eq!(format_selector(&LabelSelector::default()), "<none>");
    }

    #[test]
    fn generated_name_filter_normalises_only_generated_names() {
        let text = format!(
            "{}   {}   {}   pod1   frontend   --bcdfg   tier=frontend   my-web-app",
            names::generate("frontend-", 1),
            names::generate("my.app-", 7),
            names::generate("a-", 9),
        );
        insta::with_settings!({filters => generated_name_filters()}, {
            insta::assert_snapshot!(text, @"frontend-#####   my.app-#####   a-#####   pod1   frontend   --bcdfg   tier=frontend   my-web-app");
        });
    }

    #[test]
    fn generated_name_filter_uses_the_api_alphabet() {
        let alphabet = std::str::from_utf8(names::ALPHABET).unwrap();
        let (regex, _) = generated_name_filters()[0];
        assert!(regex.contains(&format!("[{alphabet}]{{{}}}", names::SUFFIX_LEN)));
    }

    #[test]
    fn snapshot_frontend_settled() {
        let api = frontend_settled();
        assert!(get_rs(&api).contains("frontend   3         3         3\n"));
        insta::with_settings!({filters => insta_filters()}, {
            insta::assert_snapshot!(snapshot(&api));
            insta::assert_snapshot!("frontend_settled_wide", format!("{}\n{}", get_rs_wide(&api), get_pods_wide(&api)));
        });
    }

    /// The seed's bare pods pod1 and pod2 (labels tier=frontend), created after `frontend` has
    /// its three pods: the controller adopts them and, being over its replica count, deletes
    /// them; both are bound, so they stay Terminating until the kubelet confirms.
    #[test]
    fn snapshot_bare_pods_terminating() {
        let mut api = frontend_settled();
        for name in ["pod1", "pod2"] {
            add_pod(&mut api, name, None, true);
            let uid = api.pods[name].meta.uid;
            let rs_uid = api.replicasets["frontend"].meta.uid;
            apply(
                &mut api,
                Request::PatchPodOwnerReferences {
                    name: name.into(),
                    uid,
                    patch: OwnerRefPatch::Add(OwnerReference::controller_of("frontend", rs_uid)),
                },
            );
        }
        set_status(&mut api, "frontend", 5, 5);
        for name in ["pod1", "pod2"] {
            apply(
                &mut api,
                Request::DeletePod {
                    name: name.into(),
                    options: DeleteOptions::default(),
                },
            );
        }
        set_status(&mut api, "frontend", 3, 3);
        let pods = get_pods(&api);
        assert!(pods.contains("pod1             1/1     Terminating   0          tier=frontend\n"));
        assert!(pods.contains("pod2             1/1     Terminating   0          tier=frontend\n"));
        insta::with_settings!({filters => insta_filters()}, {
            insta::assert_snapshot!(snapshot(&api));
            insta::assert_snapshot!("bare_pods_terminating_wide", get_pods_wide(&api));
        });
    }
}
