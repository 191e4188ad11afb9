//! The Events upstream's controller records on a ReplicaSet, which `kubectl describe rs`
//! shows: `SuccessfulCreate` / `FailedCreate` and `SuccessfulDelete` / `FailedDelete`, from
//! component `replicaset-controller`, with upstream's messages
//! (pkg/controller/controller_utils.go `RealPodControl.createPods` and `DeletePod`).
//!
//! Upstream's recorder writes core/v1 Events in the background; so does this one (a failed
//! event write is logged, never a failure of the sync).

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube::api::{Api, PostParams};
use kube::Client;

/// The source component upstream's events carry.
pub const COMPONENT: &str = "replicaset-controller";

/// What happened to a pod of the ReplicaSet.
pub enum Happened<'a> {
    Created { pod: &'a str },
    CreateFailed { error: &'a str },
    Deleted { pod: &'a str },
    DeleteFailed { error: &'a str },
}

impl Happened<'_> {
    fn parts(&self) -> (&'static str, &'static str, String) {
        match self {
            Happened::Created { pod } => {
                ("Normal", "SuccessfulCreate", format!("Created pod: {pod}"))
            }
            Happened::CreateFailed { error } => (
                "Warning",
                "FailedCreate",
                format!("Error creating: {error}"),
            ),
            Happened::Deleted { pod } => {
                ("Normal", "SuccessfulDelete", format!("Deleted pod: {pod}"))
            }
            Happened::DeleteFailed { error } => (
                "Warning",
                "FailedDelete",
                format!("Error deleting: {error}"),
            ),
        }
    }
}

/// Record `what` on `rs`, in the background.
pub fn record(client: &Client, rs: &apps::ReplicaSet, what: Happened) {
    let (type_, reason, message) = what.parts();
    let namespace = rs.metadata.namespace.clone().unwrap_or_default();
    let name = rs.metadata.name.clone().unwrap_or_default();
    let now = k8s_openapi::jiff::Timestamp::now();
    let event = core::Event {
        metadata: meta::ObjectMeta {
            // Upstream names an event `<object>.<unix nanoseconds in hex>`.
            name: Some(format!("{name}.{:x}", now.as_nanosecond())),
            namespace: Some(namespace.clone()),
            ..Default::default()
        },
        involved_object: core::ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("ReplicaSet".into()),
            name: Some(name),
            namespace: Some(namespace.clone()),
            uid: rs.metadata.uid.clone(),
            resource_version: rs.metadata.resource_version.clone(),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(message),
        type_: Some(type_.into()),
        source: Some(core::EventSource {
            component: Some(COMPONENT.into()),
            host: None,
        }),
        first_timestamp: Some(meta::Time(now)),
        last_timestamp: Some(meta::Time(now)),
        count: Some(1),
        ..Default::default()
    };
    let events: Api<core::Event> = Api::namespaced(client.clone(), &namespace);
    tokio::spawn(async move {
        if let Err(e) = events.create(&PostParams::default(), &event).await {
            tracing::warn!(reason, error = %e, "cannot record an event");
        }
    });
}
