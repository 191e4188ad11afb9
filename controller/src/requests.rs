//! The spec's requests, sent to a real API server.
//!
//! A request the spec's sync decides names what to do in the spec's terms (tokens, the
//! template's labels); this module turns it into the API call upstream's controller makes,
//! with the real values and the payload the spec does not carry:
//! - a pod create is the ReplicaSet's real template (`GetPodFromTemplate`,
//!   pkg/controller/controller_utils.go): its labels, annotations and finalizers, its spec,
//!   `generateName: <rs>-` and the controller reference the spec decided;
//! - adopt and release are the strategic-merge patches of
//!   pkg/controller/controller_ref_manager.go `AdoptPod` and `ReleasePod`, with the pod's
//!   UID as a precondition;
//! - a scale-down delete carries the preconditions the spec gives it (none upstream; the
//!   pod's UID and resourceVersion with the proposed fix of PR #138818);
//! - a status write is a PUT of the `status` subresource onto the ReplicaSet the sync read
//!   (or re-read for its retry), with that object's resourceVersion, as
//!   pkg/controller/replicaset/replica_set_utils.go `updateReplicaSetStatus` does.
//!
//! Failures come back as the spec's [`ApiError`], whose reasons are the ones its decisions
//! read; any other failure (a timeout, a server error) is reported as `Forbidden`, which
//! every decision treats as the plain failure it is.

use crate::abstraction::Abstraction;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::Client;
use rsmc_spec::api::{ApiError, DeleteOptions, OwnerRefPatch, Reason, Request};
use rsmc_spec::object::{OwnerReference, ReplicaFailure, ReplicaSetStatus};
use serde_json::json;

/// What a request is built from.
pub struct Target<'a> {
    pub namespace: &'a str,
    /// The ReplicaSet the sync acts for, as last read (the cache's copy, or the live one a
    /// status retry fetched): the template of its pods, the object its status goes on.
    pub replicaset: &'a apps::ReplicaSet,
    /// The tokens of this sync.
    pub abstraction: &'a Abstraction,
    /// The message of the sync's last failed create or delete, for the `ReplicaFailure`
    /// condition a failed sync sets.
    pub failure: Option<&'a str>,
}

/// What a successful request produced.
#[derive(Debug, Default)]
pub struct Done {
    /// The resourceVersion the write produced, when the server returned the object.
    pub resource_version: Option<u64>,
    /// The name the server gave a created pod.
    pub created: Option<String>,
}

/// Send `request` for the sync at `t`.
pub async fn send(client: &Client, t: &Target<'_>, request: &Request) -> Result<Done, ApiError> {
    let pods: Api<core::Pod> = Api::namespaced(client.clone(), t.namespace);
    match request {
        Request::CreatePod(pod) => {
            let real = pod_from_template(t, pod)?;
            let created = pods
                .create(&PostParams::default(), &real)
                .await
                .map_err(api_error)?;
            Ok(Done {
                resource_version: version(&created.metadata),
                created: created.metadata.name,
            })
        }
        Request::PatchPodOwnerReferences { name, uid, patch } => {
            let body = owner_patch(t, *uid, patch)?;
            let patched = pods
                .patch(name, &PatchParams::default(), &Patch::Strategic(body))
                .await
                .map_err(api_error)?;
            Ok(Done {
                resource_version: version(&patched.metadata),
                created: None,
            })
        }
        Request::DeletePod { name, options } => {
            let params = delete_params(t, options)?;
            let outcome = pods.delete(name, &params).await.map_err(api_error)?;
            Ok(Done {
                resource_version: outcome.left().and_then(|p| version(&p.metadata)),
                created: None,
            })
        }
        Request::UpdateReplicaSetStatus {
            resource_version,
            status,
            ..
        } => {
            let mut rs = t.replicaset.clone();
            rs.metadata.resource_version = Some(real_version(t, *resource_version)?.to_string());
            rs.status = Some(real_status(t, status));
            let name = rs.metadata.name.clone().unwrap_or_default();
            let api: Api<apps::ReplicaSet> = Api::namespaced(client.clone(), t.namespace);
            let written = api
                .replace_status(&name, &PostParams::default(), &rs)
                .await
                .map_err(api_error)?;
            Ok(Done {
                resource_version: version(&written.metadata),
                created: None,
            })
        }
        other => Err(ApiError {
            reason: Reason::Invalid,
            message: format!("the controller never sends {other}"),
        }),
    }
}

/// `request` as the API server sees it, with real UIDs and resourceVersions (the spec's own
/// rendering names its tokens), for the log.
pub fn describe(t: &Target, request: &Request) -> String {
    let uid = |token: u32| t.abstraction.real_uid(token).unwrap_or("?").to_string();
    let rv = |token: u32| t.abstraction.real_version(token).unwrap_or("?").to_string();
    match request {
        Request::CreatePod(pod) => format!(
            "POST pods generateName={}",
            pod.meta.generate_name.as_deref().unwrap_or_default()
        ),
        Request::PatchPodOwnerReferences { name, uid: pod, patch } => {
            let what = match patch {
                OwnerRefPatch::Add(r) => format!("adopt for ReplicaSet/{} uid={}", r.name, uid(r.uid)),
                OwnerRefPatch::Remove(uids) => format!(
                    "release from uid={}",
                    uids.iter().map(|u| uid(*u)).collect::<Vec<_>>().join(",")
                ),
                OwnerRefPatch::Take { from, to } => format!(
                    "take from uid={} for ReplicaSet/{} uid={}",
                    uid(*from),
                    to.name,
                    uid(to.uid)
                ),
            };
            format!("PATCH pods/{name} {what} (precondition uid={})", uid(*pod))
        }
        Request::DeletePod { name, options } => {
            let mut out = format!("DELETE pods/{name}");
            if let Some(u) = options.uid_precondition {
                out.push_str(&format!(" precondition uid={}", uid(u)));
            }
            if let Some(v) = options.resource_version_precondition {
                out.push_str(&format!(" precondition resourceVersion={}", rv(v)));
            }
            out
        }
        Request::UpdateReplicaSetStatus {
            name,
            resource_version,
            status,
        } => format!(
            "PUT replicasets/{name}/status replicas={} ready={} available={} observedGeneration={} resourceVersion={}",
            status.replicas,
            status.ready_replicas,
            status.available_replicas,
            status.observed_generation,
            rv(*resource_version)
        ),
        other => other.to_string(),
    }
}

fn version(m: &meta::ObjectMeta) -> Option<u64> {
    m.resource_version.as_deref().and_then(|v| v.parse().ok())
}

fn unknown(what: &str) -> ApiError {
    ApiError {
        reason: Reason::Invalid,
        message: format!("the sync named {what} this controller never read"),
    }
}

fn real_uid<'a>(t: &'a Target, token: u32) -> Result<&'a str, ApiError> {
    t.abstraction
        .real_uid(token)
        .ok_or_else(|| unknown(&format!("UID token {token}")))
}

fn real_version<'a>(t: &'a Target, token: u32) -> Result<&'a str, ApiError> {
    t.abstraction
        .real_version(token)
        .ok_or_else(|| unknown(&format!("resourceVersion token {token}")))
}

fn owner_reference(t: &Target, r: &OwnerReference) -> Result<serde_json::Value, ApiError> {
    Ok(json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": r.name,
        "uid": real_uid(t, r.uid)?,
        "controller": r.controller,
        "blockOwnerDeletion": r.block_owner_deletion,
    }))
}

/// The pod `CreatePodsWithControllerRef` submits: the real template, with the labels,
/// `generateName` and controller reference the spec decided.
fn pod_from_template(t: &Target, decided: &rsmc_spec::object::Pod) -> Result<core::Pod, ApiError> {
    let template = t
        .replicaset
        .spec
        .as_ref()
        .and_then(|s| s.template.clone())
        .unwrap_or_default();
    let template_meta = template.metadata.unwrap_or_default();
    let owner_references = decided
        .meta
        .owner_references
        .iter()
        .map(|r| {
            Ok(meta::OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: r.name.clone(),
                uid: real_uid(t, r.uid)?.to_string(),
                controller: Some(r.controller),
                block_owner_deletion: Some(r.block_owner_deletion),
            })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    Ok(core::Pod {
        metadata: meta::ObjectMeta {
            generate_name: decided.meta.generate_name.clone(),
            namespace: Some(t.namespace.to_string()),
            labels: Some(decided.meta.labels.clone()),
            annotations: template_meta.annotations,
            finalizers: template_meta.finalizers,
            owner_references: Some(owner_references),
            ..Default::default()
        },
        spec: template.spec,
        status: None,
    })
}

/// The strategic-merge patch of `metadata.ownerReferences` (merge key `uid`), with the pod's
/// UID as a precondition.
fn owner_patch(
    t: &Target,
    pod_uid: u32,
    patch: &OwnerRefPatch,
) -> Result<serde_json::Value, ApiError> {
    let delete = |uid: u32| -> Result<serde_json::Value, ApiError> {
        Ok(json!({"$patch": "delete", "uid": real_uid(t, uid)?}))
    };
    let references = match patch {
        OwnerRefPatch::Add(r) => vec![owner_reference(t, r)?],
        OwnerRefPatch::Remove(uids) => uids.iter().map(|u| delete(*u)).collect::<Result<_, _>>()?,
        OwnerRefPatch::Take { from, to } => vec![delete(*from)?, owner_reference(t, to)?],
    };
    Ok(json!({
        "metadata": {
            "ownerReferences": references,
            "uid": real_uid(t, pod_uid)?,
        }
    }))
}

fn delete_params(t: &Target, options: &DeleteOptions) -> Result<DeleteParams, ApiError> {
    let uid = options
        .uid_precondition
        .map(|u| real_uid(t, u).map(str::to_string))
        .transpose()?;
    let resource_version = options
        .resource_version_precondition
        .map(|v| real_version(t, v).map(str::to_string))
        .transpose()?;
    let preconditions = (uid.is_some() || resource_version.is_some()).then_some(Preconditions {
        uid,
        resource_version,
    });
    Ok(DeleteParams {
        preconditions,
        ..DeleteParams::default()
    })
}

/// The spec's status as the API's, onto the ReplicaSet's current status: its conditions kept
/// but for `ReplicaFailure`, which `calculateStatus` sets when a sync failed and there is
/// none (with the failure's message), keeps while it stands, and removes after a sync
/// without failure.
fn real_status(t: &Target, status: &ReplicaSetStatus) -> apps::ReplicaSetStatus {
    let mut out = t.replicaset.status.clone().unwrap_or_default();
    let mut conditions = out.conditions.take().unwrap_or_default();
    let standing = conditions.iter().any(|c| c.type_ == "ReplicaFailure");
    match status.replica_failure {
        None => conditions.retain(|c| c.type_ != "ReplicaFailure"),
        Some(_) if standing => {}
        Some(reason) => conditions.push(apps::ReplicaSetCondition {
            type_: "ReplicaFailure".into(),
            status: "True".into(),
            reason: Some(
                match reason {
                    ReplicaFailure::FailedCreate => "FailedCreate",
                    ReplicaFailure::FailedDelete => "FailedDelete",
                }
                .into(),
            ),
            message: t.failure.map(str::to_string),
            last_transition_time: Some(meta::Time(k8s_openapi::jiff::Timestamp::now())),
        }),
    }
    out.conditions = (!conditions.is_empty()).then_some(conditions);
    out.replicas = status.replicas;
    out.fully_labeled_replicas = Some(status.fully_labeled_replicas);
    out.ready_replicas = Some(status.ready_replicas);
    out.available_replicas = Some(status.available_replicas);
    out.terminating_replicas = status.terminating_replicas;
    out.observed_generation = Some(i64::from(status.observed_generation));
    out
}

/// A kube-rs error as the spec's: the reasons its decisions read, everything else a plain
/// failure.
pub fn api_error(e: kube::Error) -> ApiError {
    match e {
        kube::Error::Api(status) => {
            let reason = match (status.reason.as_str(), status.code) {
                ("NotFound", _) | (_, 404) => Reason::NotFound,
                ("AlreadyExists", _) => Reason::AlreadyExists,
                ("Conflict", _) | (_, 409) => Reason::Conflict,
                ("Invalid", _) | (_, 422) => Reason::Invalid,
                _ => Reason::Forbidden,
            };
            ApiError {
                reason,
                message: status.message.clone(),
            }
        }
        other => ApiError {
            reason: Reason::Forbidden,
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsmc_spec::object::OwnerReference;

    fn objects() -> (Abstraction, apps::ReplicaSet, core::Pod) {
        let rs: apps::ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": "frontend", "namespace": "ns", "uid": "u-rs", "resourceVersion": "7"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"tier": "frontend"}},
                "template": {"metadata": {"labels": {"tier": "frontend"}, "annotations": {"a": "b"}},
                    "spec": {"containers": [{"name": "app", "image": "i"}]}}},
            "status": {"replicas": 1, "conditions": [{"type": "ReplicaFailure", "status": "True",
                "reason": "FailedCreate", "message": "quota"}]}
        }))
        .unwrap();
        let pod: core::Pod = serde_json::from_value(json!({
            "metadata": {"name": "pod1", "namespace": "ns", "uid": "u-pod", "resourceVersion": "9"}
        }))
        .unwrap();
        let mut a = Abstraction::new(0);
        a.replicaset(&rs);
        a.pod(&pod, 0);
        (a, rs, pod)
    }

    fn target<'a>(a: &'a Abstraction, rs: &'a apps::ReplicaSet) -> Target<'a> {
        Target {
            namespace: "ns",
            replicaset: rs,
            abstraction: a,
            failure: Some("pods \"x\" is forbidden"),
        }
    }

    /// `AdoptPod` and `ReleasePod`'s strategic-merge patches, with real UIDs.
    #[test]
    fn adoption_and_release_are_upstreams_patches() {
        let (mut a, rs, pod) = objects();
        let rs_token = a.replicaset(&rs).meta.uid;
        let pod_token = a.pod(&pod, 0).meta.uid;
        let t = target(&a, &rs);
        let adopt = owner_patch(
            &t,
            pod_token,
            &OwnerRefPatch::Add(OwnerReference::controller_of("frontend", rs_token)),
        )
        .unwrap();
        assert_eq!(
            adopt,
            json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": "frontend", "uid": "u-rs", "controller": true, "blockOwnerDeletion": true}],
                "uid": "u-pod"}})
        );
        let release = owner_patch(&t, pod_token, &OwnerRefPatch::Remove(vec![rs_token])).unwrap();
        assert_eq!(
            release,
            json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "u-rs"}], "uid": "u-pod"}})
        );
    }

    /// The fix's preconditions carry the real UID and resourceVersion; upstream's carry none.
    #[test]
    fn delete_preconditions_are_the_real_values() {
        let (mut a, rs, pod) = objects();
        let spec_pod = a.pod(&pod, 0);
        let t = target(&a, &rs);
        let fixed = delete_params(
            &t,
            &DeleteOptions {
                uid_precondition: Some(spec_pod.meta.uid),
                resource_version_precondition: Some(spec_pod.meta.resource_version),
                ..DeleteOptions::default()
            },
        )
        .unwrap();
        let p = fixed.preconditions.unwrap();
        assert_eq!(
            (p.uid.as_deref(), p.resource_version.as_deref()),
            (Some("u-pod"), Some("9"))
        );
        assert!(delete_params(&t, &DeleteOptions::default())
            .unwrap()
            .preconditions
            .is_none());
    }

    /// A created pod is the real template with the decided labels, name prefix and owner.
    #[test]
    fn a_created_pod_is_the_real_template() {
        let (mut a, rs, _) = objects();
        let spec_rs = a.replicaset(&rs);
        let t = target(&a, &rs);
        let decided = rsmc_spec::controller::sync::pod_from_template(&spec_rs);
        let pod = pod_from_template(&t, &decided).unwrap();
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("frontend-"));
        assert_eq!(pod.metadata.annotations.unwrap()["a"], "b");
        let owner = &pod.metadata.owner_references.unwrap()[0];
        assert_eq!((owner.uid.as_str(), owner.controller), ("u-rs", Some(true)));
        assert_eq!(pod.spec.unwrap().containers[0].image.as_deref(), Some("i"));
    }

    /// `calculateStatus`: a standing ReplicaFailure stays while the sync fails, and goes with
    /// the first sync without failure.
    #[test]
    fn the_replica_failure_condition_follows_the_spec() {
        let (a, rs, _) = objects();
        let t = target(&a, &rs);
        let failing = ReplicaSetStatus {
            replica_failure: Some(ReplicaFailure::FailedCreate),
            ..ReplicaSetStatus::default()
        };
        let kept = real_status(&t, &failing).conditions.unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            kept[0].message.as_deref(),
            Some("quota"),
            "the standing one is kept"
        );
        assert!(real_status(&t, &ReplicaSetStatus::default())
            .conditions
            .is_none());
    }
}
