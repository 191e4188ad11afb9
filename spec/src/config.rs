//! The bounds and enabled environment actions of a model check.
//!
//! A configuration is one of the presets (`small`, `default`, `deep`, embedded from
//! `spec/presets/*.json`) or a JSON file that names a preset in `"preset"` and overrides any of
//! its fields (objects merge key by key; anything else replaces). Unknown fields are errors
//! naming the field, and impossible bounds are rejected with the field's path.

use crate::api::validation::replicaset_create_errors;
use crate::api::Propagation;
use crate::object::{
    LabelSelector, Labels, OtherKind, OtherOwner, OwnerKind, OwnerReference, Pod, ReplicaSet,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The presets, by name, with their JSON text.
pub const PRESETS: [(&str, &str); 3] = [
    ("small", include_str!("../presets/small.json")),
    ("default", include_str!("../presets/default.json")),
    ("deep", include_str!("../presets/deep.json")),
];

/// The bug catalogue's configurations (`spec/presets/catalogue/`), by the name `--config`
/// takes: each is the smallest override of a preset whose ingredients let the model exhibit
/// one catalogue entry, so `rsmc check --bug NAME` finds it in seconds.
pub const CATALOGUE_CONFIGS: [(&str, &str); 14] = [
    (
        "catalogue/steal-controlled-pods",
        include_str!("../presets/catalogue/steal-controlled-pods.json"),
    ),
    (
        "catalogue/no-expectations",
        include_str!("../presets/catalogue/no-expectations.json"),
    ),
    (
        "catalogue/no-adoption-recheck",
        include_str!("../presets/catalogue/no-adoption-recheck.json"),
    ),
    (
        "catalogue/create-while-deleting",
        include_str!("../presets/catalogue/create-while-deleting.json"),
    ),
    (
        "catalogue/stale-expectations-on-recreate",
        include_str!("../presets/catalogue/stale-expectations-on-recreate.json"),
    ),
    (
        "catalogue/ignore-controller-ref-removal",
        include_str!("../presets/catalogue/ignore-controller-ref-removal.json"),
    ),
    (
        "catalogue/keep-expectation-on-failed-delete",
        include_str!("../presets/catalogue/keep-expectation-on-failed-delete.json"),
    ),
    (
        "catalogue/ignore-ranking",
        include_str!("../presets/catalogue/ignore-ranking.json"),
    ),
    (
        "catalogue/never-release",
        include_str!("../presets/catalogue/never-release.json"),
    ),
    (
        "catalogue/expectations-expiry",
        include_str!("../presets/catalogue/expectations-expiry.json"),
    ),
    (
        "catalogue/orphan-before-dependent-seen",
        include_str!("../presets/catalogue/orphan-before-dependent-seen.json"),
    ),
    (
        "catalogue/delete-without-precondition",
        include_str!("../presets/catalogue/delete-without-precondition.json"),
    ),
    (
        "catalogue/status-onto-recreated",
        include_str!("../presets/catalogue/status-onto-recreated.json"),
    ),
    (
        "catalogue/expectations-after-delete",
        include_str!("../presets/catalogue/expectations-after-delete.json"),
    ),
];

/// Configurations of their own for a group of properties (`spec/presets/properties/`), by
/// the name `--config` takes: each is an override of a preset with the environment moves
/// those properties speak of, small enough to check on every change.
pub const PROPERTY_CONFIGS: [(&str, &str); 2] = [
    (
        "properties/owners",
        include_str!("../presets/properties/owners.json"),
    ),
    (
        "properties/other-owners",
        include_str!("../presets/properties/other-owners.json"),
    ),
];

/// A ReplicaSet the environment may create (or that exists from the start).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplicaSetDecl {
    pub name: String,
    pub replicas: i32,
    pub selector: LabelSelector,
    pub template_labels: Labels,
    pub exists_at_start: bool,
    /// Replica counts the user may scale to.
    pub scale_to: Vec<i32>,
}

impl ReplicaSetDecl {
    pub fn object(&self) -> ReplicaSet {
        ReplicaSet::new(
            &self.name,
            self.replicas,
            self.selector.clone(),
            self.template_labels.clone(),
        )
    }
}

/// A bare pod the user may create (or that exists from the start).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PodDecl {
    pub name: String,
    pub labels: Labels,
    pub exists_at_start: bool,
    /// The pod's owner references when it is created: owners of other kinds declared in
    /// `otherOwners` that exist from the start (a pod another controller made, as a
    /// StatefulSet's or a Job's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<PodOwnerDecl>,
}

/// An owner reference of a declared pod, to a declared owner of another kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PodOwnerDecl {
    /// The owner's `kind`, as declared in `otherOwners`.
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub controller: bool,
    #[serde(default)]
    pub block_owner_deletion: bool,
}

/// An owner of another kind (a StatefulSet, a Job, a ConfigMap; see
/// [`crate::object::other_owner`]) that the user may create or delete, or that exists from
/// the start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OtherOwnerDecl {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub exists_at_start: bool,
}

impl OtherOwnerDecl {
    pub fn kind(&self) -> OtherKind {
        OtherKind::new(&self.api_version, &self.kind)
    }
}

impl PodDecl {
    /// The pod as created, its references naming the owners in `others` (which must hold
    /// them: the configuration is validated).
    pub fn object(&self, others: &[OtherOwner], decls: &[OtherOwnerDecl]) -> Pod {
        let mut pod = Pod::new(&self.name, self.labels.clone());
        for o in &self.owners {
            let decl = decls
                .iter()
                .find(|d| d.kind == o.kind && d.name == o.name)
                .expect("a validated pod names declared owners");
            let owner = others
                .iter()
                .find(|x| x.is(&decl.kind(), &o.name))
                .expect("a validated pod's owners exist from the start");
            pod.meta.owner_references.push(OwnerReference {
                kind: OwnerKind::Other(decl.kind()),
                name: o.name.clone(),
                uid: owner.uid,
                controller: o.controller,
                block_owner_deletion: o.block_owner_deletion,
            });
        }
        pod
    }
}

/// Which environment moves are enabled, and how many the environment may make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Environment {
    /// The budget shared by user and kubelet moves.
    pub steps: u32,
    pub create_replica_set: bool,
    pub scale: bool,
    /// Deletion policies the user may delete a ReplicaSet with.
    pub delete_replica_set: Vec<Propagation>,
    pub create_pod: bool,
    pub relabel_pod: bool,
    pub delete_pod: bool,
    pub schedule_pod: bool,
    pub pod_ready: bool,
    pub pod_unready: bool,
    pub pod_failed: bool,
    pub finish_pod_deletion: bool,
    /// Controller crash-restarts (memory lost, caches relisted).
    pub crashes: u32,
    /// Expectation records that may time out (5 minutes) while they wait.
    pub expectation_expiries: u32,
    /// Watch expiries after which an informer relists (stale tombstones).
    pub relists: u32,
    /// Pod creations the API may reject (e.g. exceeded quota).
    pub create_failures: u32,
    /// A second controller instance may run alongside the first for a while (leader handover).
    pub second_leader: bool,
    /// A client may add a reference to another declared ReplicaSet to a pod's
    /// ownerReferences (not as its controller), sharing the pod as operators and
    /// Deployments' users do; what the garbage collector then owes the pod is
    /// `GC_SPARES_PODS_OTHER_OWNERS_HOLD`.
    #[serde(default)]
    pub add_owner_reference: bool,
    /// A client may create a declared owner of another kind that does not exist (again:
    /// with a new UID).
    #[serde(default)]
    pub create_other_owner: bool,
    /// A client may delete a declared owner of another kind (propagation Background).
    #[serde(default)]
    pub delete_other_owner: bool,
    /// Seconds that may pass. Timestamps are whole seconds, so without ticks every pod is
    /// created (and turns ready) in the same second and the ranking's time rules all tie.
    #[serde(default)]
    pub ticks: u32,
}

/// The controller's own settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ControllerConfig {
    /// `--concurrent-replicaset-syncs`.
    pub workers: u32,
    /// `BurstReplicas`.
    pub burst_replicas: u32,
}

/// Informer staleness.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct InformerConfig {
    /// How many events of one resource type an informer may be behind. A write is enabled only
    /// while every informer is fewer than this many events behind.
    pub max_lag: u32,
    /// The same bound for the garbage collector's informers alone (default: `maxLag`). A
    /// tighter one keeps the GC prompt while controllers lag: the catalogue uses it to show
    /// a controller-side race without the GC-side one of #26120 (the GC orphaning before it
    /// has seen a dependent) taking the shortest counterexample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_max_lag: Option<u32>,
    /// Whether every watcher has delivered the `existsAtStart` objects before anything else
    /// happens: the objects predate the controller manager, whose controllers start their
    /// workers only once their caches have synced (replica_set.go `Run`,
    /// `WaitForNamedCacheSync`). Off by default: the objects are then created just after the
    /// controller manager started, and a sync may run before they reach its cache.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub start_synced: bool,
    /// Whether a backlog a script releases leaves the lag bound off until it is delivered
    /// ([`crate::model::ScriptPos::draining`]). Not a configuration field: the oracle's
    /// witness search turns it on, as a recording pins the run down and a real controller
    /// writes while its informer drains a burst. The exhaustive searches keep it off: with it,
    /// a controller without expectations may create again on every sync of a drain, more
    /// states than a replay can enumerate.
    #[serde(skip)]
    pub drain_unbounded: bool,
}

impl InformerConfig {
    /// The largest `maxLag` a configuration may give, and the bound the oracle judges a
    /// recording with when none within the scenario's produces it: a real informer falls
    /// behind a burst of another component's writes by as many events as the burst has (the
    /// garbage collector orphaning 20 pods left the controller's pod cache 8 behind in
    /// `overlap-20`), so the bound is that of a burst of a few dozen.
    pub const MAX_LAG: u32 = 32;

    /// The lag bound of the garbage collector's informers.
    pub fn gc_lag(&self) -> u32 {
        self.gc_max_lag.unwrap_or(self.max_lag)
    }
}

/// A whole configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    pub replicasets: Vec<ReplicaSetDecl>,
    pub pods: Vec<PodDecl>,
    /// Owners of other kinds that pods may name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_owners: Vec<OtherOwnerDecl>,
    /// Label sets the user may relabel a pod to.
    pub relabel_to: Vec<Labels>,
    /// Nodes the scheduler may bind pods to.
    pub nodes: Vec<String>,
    pub environment: Environment,
    pub controller: ControllerConfig,
    pub informer: InformerConfig,
}

/// A configuration that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown configuration {0:?}: give a preset (small, default, deep), a catalogue configuration (catalogue/NAME, see rsmc bugs), a property configuration (properties/owners, properties/other-owners) or a path to a JSON file")]
    Unknown(String),
    #[error("{0}: no such configuration file (a configuration is a preset: small, default, deep; a catalogue configuration, catalogue/NAME; a property configuration, properties/owners or properties/other-owners; or a path to a JSON file)")]
    NoSuchFile(String),
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: field `{field}`: {message}")]
    Invalid {
        path: String,
        field: String,
        message: String,
    },
}

fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

impl Config {
    /// A preset by name.
    pub fn preset(name: &str) -> Option<Config> {
        let (_, text) = PRESETS.iter().find(|(n, _)| *n == name)?;
        let config: Config = serde_json::from_str(text).expect("embedded preset parses");
        config.validate().expect("embedded preset is valid");
        Some(config)
    }

    /// A preset name, a catalogue configuration's name, or a path to a JSON file overriding
    /// a preset.
    pub fn load(spec: &str) -> Result<Config, ConfigError> {
        if let Some(c) = Config::preset(spec) {
            return Ok(c);
        }
        if let Some((name, text)) = CATALOGUE_CONFIGS
            .iter()
            .chain(&PROPERTY_CONFIGS)
            .find(|(n, _)| *n == spec)
        {
            return Config::from_json(name, text);
        }
        let path = Path::new(spec);
        if !path.exists() {
            // A name with a directory or a `.json` ending was meant as a file.
            let file_like = !spec.starts_with("catalogue/")
                && !spec.starts_with("properties/")
                && (spec.contains(std::path::MAIN_SEPARATOR) || spec.ends_with(".json"));
            return Err(if file_like {
                ConfigError::NoSuchFile(spec.to_string())
            } else {
                ConfigError::Unknown(spec.to_string())
            });
        }
        let text = crate::input::read_text(path).map_err(|source| ConfigError::Read {
            path: spec.to_string(),
            source,
        })?;
        Config::from_json(spec, &text)
    }

    /// Parse an override file's text (`path` names it in errors).
    pub fn from_json(path: &str, text: &str) -> Result<Config, ConfigError> {
        let parse = |message: String| ConfigError::Parse {
            path: path.to_string(),
            message,
        };
        let mut over: Value = serde_json::from_str(text).map_err(|e| parse(e.to_string()))?;
        let preset = match over.as_object_mut().map(|o| o.remove("preset")) {
            Some(Some(Value::String(p))) => p,
            Some(Some(other)) => {
                return Err(ConfigError::Invalid {
                    path: path.into(),
                    field: "preset".into(),
                    message: format!("expected a preset name (small, default, deep), got {other}"),
                })
            }
            Some(None) => "default".to_string(),
            None => return Err(parse("expected a JSON object at the top level".into())),
        };
        let (_, base_text) =
            PRESETS
                .iter()
                .find(|(n, _)| *n == preset)
                .ok_or_else(|| ConfigError::Invalid {
                    path: path.into(),
                    field: "preset".into(),
                    message: format!(
                        "unknown preset {preset:?}: valid presets are small, default, deep"
                    ),
                })?;
        let mut base: Value = serde_json::from_str(base_text).expect("embedded preset parses");
        merge(&mut base, over);
        // Syntax errors above carry the file's line and column; after the merge the value has
        // no positions, so serde_path_to_error names the field (the command line finds its
        // line in the file: `Config::field_error`'s users).
        let config: Config = serde_path_to_error::deserialize(base).map_err(|e| {
            let field = e.path().to_string();
            let message = e.into_inner().to_string();
            if field == "." || field == "?" {
                parse(message)
            } else {
                ConfigError::Invalid {
                    path: path.into(),
                    field,
                    message,
                }
            }
        })?;
        config
            .validate()
            .map_err(|(field, message)| ConfigError::Invalid {
                path: path.into(),
                field,
                message,
            })?;
        Ok(config)
    }

    /// Reject impossible bounds: `Err((field path, what was expected))`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let fail = |f: String, m: String| Err((f, m));
        if self.replicasets.is_empty() {
            return fail(
                "replicasets".into(),
                "expected at least one ReplicaSet".into(),
            );
        }
        for (i, rs) in self.replicasets.iter().enumerate() {
            let errs = replicaset_create_errors(&rs.object());
            if let Some(e) = errs.first() {
                return fail(
                    format!("replicasets[{i}]"),
                    format!("the API would reject it: {e}"),
                );
            }
            if let Some(n) = rs.scale_to.iter().find(|n| **n < 0) {
                return fail(
                    format!("replicasets[{i}].scaleTo"),
                    format!("replica counts must be >= 0, got {n}"),
                );
            }
            if rs.replicas > 6 || rs.scale_to.iter().any(|n| *n > 6) {
                return fail(
                    format!("replicasets[{i}].replicas"),
                    "at most 6 replicas fit an exhaustive check".into(),
                );
            }
            if self.replicasets[..i].iter().any(|o| o.name == rs.name) {
                return fail(
                    format!("replicasets[{i}].name"),
                    format!("duplicate name {:?}", rs.name),
                );
            }
        }
        for (i, pod) in self.pods.iter().enumerate() {
            if !crate::api::names::is_dns1123_subdomain(&pod.name) {
                return fail(
                    format!("pods[{i}].name"),
                    format!("{:?} is not a DNS-1123 subdomain", pod.name),
                );
            }
            if crate::api::names::looks_generated(&pod.name) {
                return fail(
                    format!("pods[{i}].name"),
                    format!(
                        "{:?} looks like a name the API server generates (a prefix ending in '-' and five of {:?}); bare pods need names that cannot be mistaken for a ReplicaSet's pods",
                        pod.name,
                        std::str::from_utf8(crate::api::names::ALPHABET).expect("ASCII")
                    ),
                );
            }
            if self.pods[..i].iter().any(|o| o.name == pod.name) {
                return fail(
                    format!("pods[{i}].name"),
                    format!("duplicate name {:?}", pod.name),
                );
            }
            for (j, o) in pod.owners.iter().enumerate() {
                let declared = self
                    .other_owners
                    .iter()
                    .find(|d| d.kind == o.kind && d.name == o.name);
                if !declared.is_some_and(|d| d.exists_at_start) || !pod.exists_at_start {
                    return fail(
                        format!("pods[{i}].owners[{j}]"),
                        format!(
                            "expected an owner declared in otherOwners that exists from the start, named by a pod that does too (a reference needs its owner's UID), got {} {:?}",
                            o.kind, o.name
                        ),
                    );
                }
            }
            if pod.owners.iter().filter(|o| o.controller).count() > 1 {
                return fail(
                    format!("pods[{i}].owners"),
                    "at most one reference may be the controller's".into(),
                );
            }
        }
        for (i, o) in self.other_owners.iter().enumerate() {
            if OwnerKind::of(&o.api_version, &o.kind) == OwnerKind::ReplicaSet {
                return fail(
                    format!("otherOwners[{i}].kind"),
                    "a ReplicaSet is declared in replicasets".into(),
                );
            }
            if o.kind.is_empty() || o.api_version.is_empty() || o.name.is_empty() {
                return fail(
                    format!("otherOwners[{i}]"),
                    "expected a non-empty apiVersion, kind and name".into(),
                );
            }
            if self.other_owners[..i]
                .iter()
                .any(|x| x.kind == o.kind && x.name == o.name)
            {
                return fail(
                    format!("otherOwners[{i}].name"),
                    format!("duplicate {} {:?}", o.kind, o.name),
                );
            }
        }
        let env = &self.environment;
        if env.steps > 12 {
            return fail(
                "environment.steps".into(),
                format!("expected at most 12, got {}", env.steps),
            );
        }
        if env.schedule_pod && self.nodes.is_empty() {
            return fail("nodes".into(), "schedulePod needs at least one node".into());
        }
        if env.relabel_pod && self.relabel_to.is_empty() {
            return fail(
                "relabelTo".into(),
                "relabelPod needs at least one label set".into(),
            );
        }
        if self.controller.workers == 0 || self.controller.workers > 5 {
            return fail(
                "controller.workers".into(),
                format!(
                    "expected 1 to 5 workers (kube-controller-manager runs 5), got {}",
                    self.controller.workers
                ),
            );
        }
        if self.controller.burst_replicas == 0 {
            return fail(
                "controller.burstReplicas".into(),
                "expected at least 1".into(),
            );
        }
        if self.informer.max_lag == 0 || self.informer.max_lag > InformerConfig::MAX_LAG {
            return fail(
                "informer.maxLag".into(),
                format!(
                    "expected 1 to {} events, got {}",
                    InformerConfig::MAX_LAG,
                    self.informer.max_lag
                ),
            );
        }
        if let Some(gc) = self.informer.gc_max_lag {
            if gc == 0 || gc > self.informer.max_lag {
                return fail(
                    "informer.gcMaxLag".into(),
                    format!(
                        "expected 1 to maxLag ({}) events, got {gc}",
                        self.informer.max_lag
                    ),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_load() {
        for (name, _) in PRESETS {
            assert!(Config::preset(name).is_some(), "{name}");
        }
    }

    #[test]
    fn catalogue_and_property_configs_load() {
        for (name, _) in CATALOGUE_CONFIGS.iter().chain(&PROPERTY_CONFIGS) {
            if let Err(e) = Config::load(name) {
                panic!("{name}: {e}");
            }
        }
    }

    #[test]
    fn misspelt_field_is_named() {
        let err = Config::from_json("c.json", r#"{"controller": {"wrokers": 2}}"#).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("c.json: field `controller.wrokers`: unknown field `wrokers`"),
            "{msg}"
        );
    }

    #[test]
    fn impossible_bound_is_named() {
        let err = Config::from_json("c.json", r#"{"controller": {"workers": 0}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "c.json: field `controller.workers`: expected 1 to 5 workers (kube-controller-manager runs 5), got 0"
        );
        let err = Config::from_json("c.json", r#"{"informer": {"maxLag": 0}}"#).unwrap_err();
        assert!(err.to_string().contains("`informer.maxLag`"), "{err}");
    }

    #[test]
    fn overrides_merge_into_the_named_preset() {
        let c = Config::from_json(
            "c.json",
            r#"{"preset": "small", "environment": {"steps": 1}}"#,
        )
        .unwrap();
        assert_eq!(c.environment.steps, 1);
        assert_eq!(
            c.replicasets.len(),
            Config::preset("small").unwrap().replicasets.len()
        );
    }
}
