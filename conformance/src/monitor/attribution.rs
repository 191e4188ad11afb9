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
//! - **The ReplicaSet controller's own events** ([`rsmc_oracle::delete_claims`]): a deletion
//!   matched to a `SuccessfulDelete` event is that ReplicaSet's controller's (by UID); every
//!   other deletion (kubectl, the garbage collector, the namespace controller, an eviction)
//!   is unattributed. A dropped event is a deletion left unjudged, never a false alarm.

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

pub use rsmc_oracle::delete_claims::{delete_claim, DeleteClaim};

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
}
