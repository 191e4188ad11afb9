//! The scheduler's and the kubelet's part, played by the runner (as kwok does) on a cluster
//! that has neither, or whose kubelets are not to be waited for.
//!
//! - Nodes are Node objects with a Ready condition; nothing runs on them.
//! - The scheduler binds a pod by posting a `Binding` (pkg/registry/core/pod/storage
//!   `BindingREST.Create`), the only way to set `spec.nodeName` after creation.
//! - The kubelet reports status through the status subresource, with the fields its status
//!   manager writes (`pkg/kubelet/status/status_manager.go` `syncPod`): the phase, the
//!   `Ready`/`ContainersReady` conditions and one status per container, so that kubectl's
//!   READY and STATUS columns read as they do for a real node.
//! - The kubelet finishes a graceful deletion with a delete of grace period 0 and a UID
//!   precondition (`status_manager.go` `syncPod`, `canBeDeleted` then `Delete` with
//!   `NewDeleteOptions(0)` and `Preconditions{UID}`).

use k8s_openapi::api::core::v1::{Binding, ContainerStatus, Node, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::Status;
use kube::{Client, ResourceExt};
use serde_json::json;

/// What the kubelet reports of a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Running, every container ready.
    Ready,
    /// Running, no container ready (a failing readiness probe).
    Unready,
    /// Failed: the containers exited with an error and will not restart.
    Failed,
}

/// Bind a pod to a node, as the scheduler does.
pub async fn bind(
    api: &Api<Pod>,
    name: &str,
    node: &str,
) -> Result<serde_json::Value, kube::Error> {
    let binding = Binding {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..ObjectMeta::default()
        },
        target: ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(node.to_string()),
            ..ObjectReference::default()
        },
    };
    api.create_subresource("binding", name, &PostParams::default(), &binding)
        .await
}

/// Report a pod's status, as the kubelet's status manager does.
pub async fn report_status(api: &Api<Pod>, pod: &Pod, report: Report) -> Result<Pod, kube::Error> {
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let ready = report == Report::Ready;
    let flag = if ready { "True" } else { "False" };
    let containers: Vec<_> = pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| {
            let state = match report {
                Report::Failed => json!({"terminated": {
                    "exitCode": 1, "reason": "Error", "startedAt": now, "finishedAt": now}}),
                _ => json!({"running": {"startedAt": now}}),
            };
            json!({
                "name": c.name,
                "image": c.image.clone().unwrap_or_default(),
                "imageID": "",
                "ready": ready,
                "restartCount": restart_count(pod, &c.name),
                "started": report != Report::Failed,
                "state": state,
            })
        })
        .collect();
    let phase = match report {
        Report::Failed => "Failed",
        _ => "Running",
    };
    let status = json!({
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": now},
                {"type": "Ready", "status": flag, "lastTransitionTime": now},
                {"type": "ContainersReady", "status": flag, "lastTransitionTime": now},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
            ],
            "containerStatuses": containers,
            "startTime": now,
        }
    });
    api.patch_status(
        &pod.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await
}

/// The pod's container statuses as reported so far.
fn container_statuses(pod: &Pod) -> impl Iterator<Item = &ContainerStatus> + Clone {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
}

/// A container's `restartCount` as the pod's status has it (0 before the first report): a
/// kubelet only ever counts up, so a later report keeps it.
fn restart_count(pod: &Pod, container: &str) -> i32 {
    container_statuses(pod)
        .find(|c| c.name == container)
        .map_or(0, |c| c.restart_count)
}

/// The highest `restartCount` of the pod's containers: what the model holds of them.
pub fn restarts(pod: &Pod) -> u32 {
    container_statuses(pod)
        .map(|c| c.restart_count.max(0) as u32)
        .max()
        .unwrap_or(0)
}

/// Report that the pod's containers have restarted, each `restartCount` now `restarts`: each
/// container's status as it was (or, before any report, one with no state, as upstream's test
/// writes it: kubectl then shows the pod's phase, as the model's rendering does) with
/// `restartCount` set, phase and conditions untouched. What upstream's `TestPodDeletionCost` writes itself through `UpdateStatus`.
/// The container statuses are one list to a merge patch, so the whole list is sent.
pub async fn report_restarts(api: &Api<Pod>, pod: &Pod, restarts: u32) -> Result<Pod, kube::Error> {
    let reported = container_statuses(pod);
    let containers: Vec<_> = pod
        .spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| {
            let mut status = reported
                .clone()
                .find(|r| r.name == c.name)
                .and_then(|r| serde_json::to_value(r).ok())
                .unwrap_or_else(|| {
                    json!({
                        "name": c.name,
                        "image": c.image.clone().unwrap_or_default(),
                        "imageID": "",
                        "ready": false,
                    })
                });
            status["restartCount"] = json!(restarts);
            status
        })
        .collect();
    let status = json!({"status": {"containerStatuses": containers}});
    api.patch_status(
        &pod.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&status),
    )
    .await
}

/// Finish a graceful deletion, as the kubelet does once the containers have stopped.
pub async fn finish_deletion(
    api: &Api<Pod>,
    pod: &Pod,
) -> Result<either::Either<Pod, Status>, kube::Error> {
    let params = DeleteParams {
        grace_period_seconds: Some(0),
        preconditions: Some(Preconditions {
            uid: pod.uid(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    api.delete(&pod.name_any(), &params).await
}

/// Make sure a Node object exists for each name (cluster-scoped, shared by every scenario of
/// a run); returns the ones this call created, for [`remove_nodes`].
pub async fn ensure_nodes(client: &Client, names: &[String]) -> Result<Vec<String>, kube::Error> {
    let api: Api<Node> = Api::all(client.clone());
    let mut created = Vec::new();
    for name in names {
        if api.get_opt(name).await?.is_some() {
            continue;
        }
        let node: Node = serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "rsmc.dev/fake": "true"}},
        }))
        .expect("a Node manifest");
        match api.create(&PostParams::default(), &node).await {
            Ok(_) => created.push(name.clone()),
            // Another scenario of the same run created it first.
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(e),
        }
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let status = json!({"status": {"conditions": [{
            "type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "rsmc plays this node's kubelet",
            "lastHeartbeatTime": now, "lastTransitionTime": now}]}});
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
            .await?;
    }
    Ok(created)
}

/// The nodes real kubelets run pods on: schedulable, not tainted against the scenarios' pods,
/// and not one of the nodes this module plays (a run with `--kubelet fake` interrupted
/// before it removed them). Sorted by name. The node lifecycle controller's taints
/// (`node.kubernetes.io/…`: not ready yet, unreachable, under pressure) come and go; a kind
/// node just created still carries `not-ready` for a moment, and the scheduler waits them
/// out, so they do not count (a settle names a pod the scheduler never binds).
pub async fn real_nodes(client: &Client) -> Result<Vec<String>, kube::Error> {
    let api: Api<Node> = Api::all(client.clone());
    let mut names: Vec<String> = api
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|n| !n.labels().contains_key("rsmc.dev/fake"))
        .filter(|n| {
            let spec = n.spec.as_ref();
            let cordoned = spec.and_then(|s| s.unschedulable).unwrap_or(false);
            let tainted = spec.and_then(|s| s.taints.as_ref()).is_some_and(|t| {
                t.iter().any(|t| {
                    t.effect != "PreferNoSchedule" && !t.key.starts_with("node.kubernetes.io/")
                })
            });
            !cordoned && !tainted
        })
        .map(|n| n.name_any())
        .collect();
    names.sort();
    Ok(names)
}

/// Remove the Node objects a run created.
pub async fn remove_nodes(client: &Client, names: &[String]) {
    let api: Api<Node> = Api::all(client.clone());
    for name in names {
        let _ = api.delete(name, &DeleteParams::default()).await;
    }
}
