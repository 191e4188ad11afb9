//! Who wrote what, as far as a watch can tell.
//!
//! A watch event carries no author. Two traces of one remain:
//! - **managedFields.** The API server records, per field, the manager of the last write that
//!   set it; for a client that names none it is the client's User-Agent up to its first `/`
//!   (`kube-controller-manager`, `kubectl-label`, `rsmc-controller`). The manager that owns a
//!   pod's controller reference (`f:metadata` → `f:ownerReferences` → `k:{"uid":"…"}`) is the
//!   one that created the pod with it or patched it in. Only writes by a manager named as a
//!   controller ([`DEFAULT_CONTROLLERS`], more with `--controller-manager`) are judged: a
//!   pod that a user created with an owner reference by hand, or adopted with `kubectl
//!   patch`, is the user's business. A pod with no managedFields has no known writer and is
//!   not judged.
//! - **The ReplicaSet controller's own events.** Deletions change no field, so no manager is
//!   recorded for them. Upstream's controller (and `rsmc controller`) records an Event with
//!   reason `SuccessfulDelete` and message `Deleted pod: NAME` on the ReplicaSet after every
//!   pod it deleted (pkg/controller/controller_utils.go `DeletePod`). That names the deleter:
//!   a deletion matched to such an event is the controller of that ReplicaSet (by UID); every
//!   other deletion (kubectl, the garbage collector, the namespace controller, an eviction) is
//!   unattributed. The recorder may drop events of a busy ReplicaSet (client-go's spam filter)
//!   and merges similar ones ("(combined from similar events): Deleted pod: …"); a dropped
//!   event is a deletion left unjudged, never a false alarm.

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

/// The managers whose writes are a controller's: kube-controller-manager (the built-in
/// ReplicaSet controller and garbage collector) and rsmc's reference controller.
pub const DEFAULT_CONTROLLERS: [&str; 2] = ["kube-controller-manager", "rsmc-controller"];

/// The manager that last wrote the owner reference to `owner_uid` in `meta`, if the API
/// server recorded one.
pub fn writer_of_owner_ref(meta: &meta::ObjectMeta, owner_uid: &str) -> Option<String> {
    let key = format!("\"uid\":\"{owner_uid}\"");
    meta.managed_fields.iter().flatten().find_map(|entry| {
        let fields = &entry.fields_v1.as_ref()?.0;
        let refs = fields.get("f:metadata")?.get("f:ownerReferences")?;
        let owns = refs
            .as_object()?
            .keys()
            .any(|k| k.starts_with("k:") && k.contains(&key));
        owns.then(|| entry.manager.clone()).flatten()
    })
}

/// A ReplicaSet controller's claim that it deleted a pod: its `SuccessfulDelete` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeleteClaim {
    pub namespace: String,
    /// The ReplicaSet whose controller deleted the pod.
    pub replicaset: String,
    pub replicaset_uid: String,
    pub pod: String,
}

/// The message upstream's controller gives a successful pod deletion, before the name.
const DELETED_POD: &str = "Deleted pod: ";

/// The claim an Event makes, if it is a ReplicaSet's `SuccessfulDelete`.
pub fn delete_claim(event: &core::Event) -> Option<DeleteClaim> {
    if event.reason.as_deref() != Some("SuccessfulDelete") {
        return None;
    }
    let involved = &event.involved_object;
    if involved.kind.as_deref() != Some("ReplicaSet") {
        return None;
    }
    let message = event.message.as_deref()?;
    // An aggregated event ("(combined from similar events): Deleted pod: x") names the last.
    let at = message.rfind(DELETED_POD)?;
    let pod = message[at + DELETED_POD.len()..].trim();
    if pod.is_empty() || pod.contains(char::is_whitespace) {
        return None;
    }
    Some(DeleteClaim {
        namespace: involved
            .namespace
            .clone()
            .or_else(|| event.metadata.namespace.clone())?,
        replicaset: involved.name.clone()?,
        replicaset_uid: involved.uid.clone()?,
        pod: pod.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manager_of_a_controller_reference_is_the_one_that_owns_its_key() {
        let meta: meta::ObjectMeta = serde_json::from_value(serde_json::json!({
            "name": "web-x",
            "managedFields": [
                {"manager": "kubectl-label", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {"f:extra": {}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:ownerReferences": {".": {},
                     "k:{\"uid\":\"u-1\"}": {}}}}}
            ]
        }))
        .unwrap();
        assert_eq!(
            writer_of_owner_ref(&meta, "u-1").as_deref(),
            Some("kube-controller-manager")
        );
        assert_eq!(writer_of_owner_ref(&meta, "u-2"), None);
    }

    #[test]
    fn a_successful_delete_names_the_pod_even_when_combined() {
        let event: core::Event = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web.1", "namespace": "ns"},
            "involvedObject": {"kind": "ReplicaSet", "name": "web", "uid": "u-1", "namespace": "ns"},
            "reason": "SuccessfulDelete",
            "message": "(combined from similar events): Deleted pod: web-abcde"
        }))
        .unwrap();
        let claim = delete_claim(&event).unwrap();
        assert_eq!(
            (claim.pod.as_str(), claim.replicaset_uid.as_str()),
            ("web-abcde", "u-1")
        );
        let mut other = event;
        other.reason = Some("SuccessfulCreate".into());
        assert_eq!(delete_claim(&other), None);
    }
}
