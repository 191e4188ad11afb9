//! The pod deletions a ReplicaSet controller says it made. A deletion changes no field, so
//! no field manager records who sent it, and a watch shows none. Upstream's controller (and
//! `rsmc controller`) records an Event with reason `SuccessfulDelete` and message
//! `Deleted pod: NAME` on the ReplicaSet after every pod it deleted
//! (pkg/controller/controller_utils.go `RealPodControl.DeletePod`). `rsmc monitor` and the
//! watch import (`rsmc import --watch` with a watch of these events) read the deleter from
//! them. The recorder may drop events of a busy ReplicaSet (client-go's spam filter) and
//! merges similar ones ("(combined from similar events): Deleted pod: …", the same Event
//! object updated): each ADDED or MODIFIED of such an Event is one claim, for the pod its
//! message names last.

use k8s_openapi::api::core::v1 as core;

/// How many events client-go's recorder lets one source send about one object before it
/// drops them (then about one every five minutes): `defaultSpamBurst` of
/// tools/record/events_cache.go, per `getSpamKey` (source, involved object and event type,
/// not the reason). A ReplicaSet controller's `SuccessfulCreate` and `SuccessfulDelete`
/// events (type Normal) share one allowance; its `FailedCreate` (Warning) do not. Its
/// aggregation of similar events (after 10) loses no claim: the combined Event is patched
/// with each one's message.
pub const RECORDER_BURST: usize = 25;

/// The field selector of the events that claim deletions (kubectl's `--field-selector`).
pub const FIELD_SELECTOR: &str = "involvedObject.kind=ReplicaSet,reason=SuccessfulDelete";

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
