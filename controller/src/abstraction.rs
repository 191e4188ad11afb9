//! Real objects in the spec's terms, and back.
//!
//! The spec's decisions read small integers where a cluster has strings: a UID is a token, a
//! resourceVersion is a token, a time is a whole second. One [`Abstraction`] is made per
//! sync (and per watch event handled): within it every real UID and resourceVersion gets one
//! token, so the comparisons the spec makes (is this pod's controller this ReplicaSet? has
//! this pod changed since?) answer as they would on the real values, and the tokens a
//! decision names are turned back into the real values for the request. Nothing outlives it:
//! the controller's memory across syncs (expectations) is keyed by names, as upstream's is.
//!
//! The fields are read by the oracle's abstraction (`rsmc_oracle::observed`), which judges
//! recorded objects; the controller adds what a decision needs and a judgement does not:
//! resourceVersions, creation and readiness times (the ranking compares them), and
//! availability (ready for the ReplicaSet's `minReadySeconds`, at the moment of the sync).

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use rsmc_oracle::observed::{abstract_pod, abstract_replicaset, UidTokens};
use rsmc_spec::object::{
    deletion_cost, Meta, Pod, ReplicaSet, Rv, Seconds, Uid, POD_DELETION_COST,
};
use std::collections::BTreeMap;

/// Tokens for one sync or one event.
#[derive(Default)]
pub struct Abstraction {
    uids: UidTokens,
    /// Real resourceVersions in order of appearance; a token is an index + 1.
    versions: Vec<String>,
    /// The wall clock's second at the start of the sync (availability is judged at it).
    now: Seconds,
}

impl Abstraction {
    pub fn new(now: Seconds) -> Abstraction {
        Abstraction {
            now,
            ..Abstraction::default()
        }
    }

    fn version(&mut self, rv: Option<&str>) -> Rv {
        let rv = rv.unwrap_or_default();
        match self.versions.iter().position(|v| v == rv) {
            Some(i) => i as Rv + 1,
            None => {
                self.versions.push(rv.to_string());
                self.versions.len() as Rv
            }
        }
    }

    /// The real UID of a token this abstraction gave out.
    pub fn real_uid(&self, token: Uid) -> Option<&str> {
        self.uids.uid(token)
    }

    /// The real resourceVersion of a token this abstraction gave out.
    pub fn real_version(&self, token: Rv) -> Option<&str> {
        self.versions
            .get((token as usize).checked_sub(1)?)
            .map(String::as_str)
    }

    /// A ReplicaSet as the spec's sync reads it.
    pub fn replicaset(&mut self, rs: &apps::ReplicaSet) -> ReplicaSet {
        let mut plain = rs.clone();
        opaque_foreign_owners(&mut plain.metadata);
        let mut out = abstract_replicaset(&plain, &mut self.uids)
            .expect("an API server's ReplicaSet has every field the spec reads");
        self.real_meta(&rs.metadata, &mut out.meta);
        out
    }

    /// A pod as the spec's sync reads it; `min_ready_seconds` of the ReplicaSet being synced
    /// decides whether a ready pod is available yet.
    pub fn pod(&mut self, pod: &core::Pod, min_ready_seconds: i32) -> Pod {
        let mut plain = pod.clone();
        opaque_foreign_owners(&mut plain.metadata);
        // A deletion cost that is not an integer counts as none (upstream logs it and
        // ranks the pod as if it had no annotation).
        if let Some(annotations) = plain.metadata.annotations.as_mut() {
            if annotations
                .get(POD_DELETION_COST)
                .is_some_and(|c| deletion_cost(c).is_err())
            {
                annotations.remove(POD_DELETION_COST);
            }
        }
        let mut out = abstract_pod(&plain, &mut self.uids)
            .expect("an API server's pod has every field the spec reads");
        self.real_meta(&pod.metadata, &mut out.meta);
        let ready_since = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready" && c.status == "True"))
            .map(|c| {
                c.last_transition_time
                    .as_ref()
                    .map_or(self.now, |t| seconds(&t.0))
            });
        out.ready_since = ready_since;
        out.available = ready_since.is_some_and(|since| {
            min_ready_seconds <= 0
                || i64::from(self.now) - i64::from(since) >= i64::from(min_ready_seconds)
        });
        out
    }

    /// The metadata the oracle's abstraction leaves out: resourceVersion and creation time.
    fn real_meta(&mut self, real: &meta::ObjectMeta, out: &mut Meta) {
        out.resource_version = self.version(real.resource_version.as_deref());
        out.created = real
            .creation_timestamp
            .as_ref()
            .map_or(self.now, |t| seconds(&t.0));
    }
}

/// Whole seconds since the epoch (the spec's times; `metav1.Time` keeps no more).
pub fn seconds(t: &k8s_openapi::jiff::Timestamp) -> Seconds {
    t.as_second().clamp(0, i64::from(Seconds::MAX)) as Seconds
}

/// Owner references to other kinds than apps/v1 ReplicaSet (a Deployment owning a
/// ReplicaSet, a Job owning a pod) are kept as references the spec can compare but never
/// resolve: the same UID, a name no ReplicaSet can have. To the spec such a controller is
/// "another controller", which is all a ReplicaSet controller needs to know of it.
fn opaque_foreign_owners(m: &mut meta::ObjectMeta) {
    for r in m.owner_references.iter_mut().flatten() {
        if r.api_version != "apps/v1" || r.kind != "ReplicaSet" {
            r.name = format!("{}/{}", r.kind, r.name);
            r.api_version = "apps/v1".into();
            r.kind = "ReplicaSet".into();
        }
    }
}

/// The objects of one namespace, by name.
pub fn by_name<T, K: k8s_openapi::Metadata<Ty = meta::ObjectMeta>>(
    objects: impl IntoIterator<Item = std::sync::Arc<K>>,
    mut f: impl FnMut(&K) -> T,
) -> BTreeMap<String, std::sync::Arc<T>> {
    objects
        .into_iter()
        .map(|o| {
            let name = o.metadata().name.clone().unwrap_or_default();
            (name, std::sync::Arc::new(f(&o)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> core::Pod {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn uids_and_versions_round_trip_and_compare_as_the_real_ones() {
        let mut a = Abstraction::new(1000);
        let p = pod(serde_json::json!({
            "metadata": {"name": "p", "uid": "u-p", "resourceVersion": "42",
                "creationTimestamp": "2026-01-01T00:00:10Z",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                    "uid": "u-rs", "controller": true}]},
            "status": {"phase": "Running"}
        }));
        let spec = a.pod(&p, 0);
        let owner = spec.meta.controller_ref().unwrap().uid;
        assert_eq!(a.real_uid(owner), Some("u-rs"));
        assert_eq!(a.real_uid(spec.meta.uid), Some("u-p"));
        assert_eq!(a.real_version(spec.meta.resource_version), Some("42"));
        assert_eq!(
            a.pod(&p, 0).meta.resource_version,
            spec.meta.resource_version
        );
        assert_eq!(spec.meta.created, 1_767_225_610);
    }

    #[test]
    fn a_pod_is_available_once_ready_for_min_ready_seconds() {
        let p = pod(serde_json::json!({
            "metadata": {"name": "p", "uid": "u"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
        }));
        let since = 1_767_225_600;
        let at = |now| Abstraction::new(now).pod(&p, 30);
        assert_eq!(at(since + 10).ready_since, Some(since));
        assert!(!at(since + 10).available);
        assert!(at(since + 30).available);
        assert!(Abstraction::new(since).pod(&p, 0).available);
    }

    #[test]
    fn a_foreign_controller_is_another_controller() {
        let mut a = Abstraction::new(0);
        let p = pod(serde_json::json!({
            "metadata": {"name": "p", "uid": "u",
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j",
                    "uid": "u-job", "controller": true}]}
        }));
        let r = a.pod(&p, 0).meta.controller_ref().cloned().unwrap();
        assert_eq!(r.name, "Job/j");
        assert_eq!(a.real_uid(r.uid), Some("u-job"));
    }
}
