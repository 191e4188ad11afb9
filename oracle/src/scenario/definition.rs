//! What a scenario is once read: its header (name, profile, gates, nodes, bounds) and its
//! steps, and the rules every scenario keeps however it was made ([`Scenario::check`]: nodes
//! listed, bounds in range, ReplicaSets named before they are used, at most
//! [`MAX_REPLICAS`]). The parser applies them to a file, [`super::compile`] to a scenario
//! built in memory (from a model run, or by a test).
//!
//! The other files of `scenario/` use these types and are called from `mod.rs`; this one calls
//! none of them but the step and hold vocabulary, so none of them imports a file that imports
//! it back.

use super::held::Held;
use super::step::{Step, StepKind, REFUSED};
use crate::manifest::Object;
use crate::yaml::{Error, FieldPath, Seg};
use rsmc_spec::api::names::is_dns1123_subdomain;
use rsmc_spec::api::Propagation;
use rsmc_spec::gates::FeatureGates;
use rsmc_spec::model::{NamedOwner, OwnerByName, PodAction, PodSet, Watcher};
use rsmc_spec::object::Labels;
use rsmc_spec::profile::Profile;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// A scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// What a run on a real cluster cannot force of what the model explores here (an
    /// interleaving inside the controller, a timeout), and what such a run checks instead.
    /// Conformance reports carry it beside the verdict, so nothing is left out silently.
    pub on_cluster: Option<String>,
    /// The bug catalogue's entry (an open upstream race) the scenario forces on a cluster:
    /// a run reproduces it when a recorded write breaks the entry's property
    /// ([`crate::judge::broken::in_recording`]).
    pub reproduces: Option<&'static rsmc_spec::bugs::Entry>,
    /// The profile the scenario is written for; `None`: the command line's. A known release
    /// overrides it ([`crate::prepared::Prepared::judged_as`]).
    pub profile: Option<Profile>,
    /// The gates the scenario turns on or off (only with the `upstream` profile).
    pub feature_gates: FeatureGates,
    /// The nodes pods may be bound to.
    pub nodes: Vec<String>,
    pub bounds: Bounds,
    /// The file the scenario was read from (or will be written to); manifest paths are
    /// relative to its directory.
    pub path: PathBuf,
    pub steps: Vec<Step>,
}

/// How far the model lets the system stray (see the format's `bounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Events of one resource type an informer may be behind.
    pub max_lag: u32,
    /// Pod creations the API server may reject, anywhere in the run.
    pub create_failures: u32,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            max_lag: 1,
            create_failures: 0,
        }
    }
}

impl Scenario {
    /// Fails on what [`super::load`] would reject in a scenario built in memory: nodes not listed,
    /// impossible bounds, controller 1 before `startSecondLeader`, waits out of range.
    pub fn check(&self) -> Result<(), Error> {
        let Some((field, message)) = self.problem() else {
            return Ok(());
        };
        let position = match field.0.as_slice() {
            [Seg::Key(k), Seg::Index(i), ..] if k == "steps" => {
                self.steps.get(*i).and_then(|s| s.position)
            }
            _ => None,
        };
        Err(Error::at(
            &self.path,
            position,
            format!("{field}: {message}"),
        ))
    }

    /// The first thing wrong with the scenario as a whole, with the field it is about.
    pub(super) fn problem(&self) -> Option<(FieldPath, String)> {
        let root = FieldPath::root();
        if self.name.is_empty() {
            return Some((root.key("name"), "must not be empty".into()));
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if !is_dns1123_subdomain(node) {
                return Some((
                    root.key("nodes").index(i),
                    format!("{node:?} is not a valid node name (a DNS-1123 subdomain)"),
                ));
            }
            if self.nodes[..i].contains(node) {
                return Some((root.key("nodes").index(i), format!("duplicate node {node}")));
            }
        }
        if !self.feature_gates.is_empty() && self.profile != Some(Profile::Upstream) {
            return Some((
                root.key("featureGates"),
                "feature gates switch behaviours of current releases: the scenario needs `profile: upstream`".into(),
            ));
        }
        if let Err((field, message)) = self.config().validate() {
            let field = match field.as_str() {
                "informer.maxLag" => "bounds.maxLag".to_string(),
                _ => field,
            };
            return Some((FieldPath::parse(&field), message));
        }
        if self.bounds.create_failures > u32::from(u8::MAX) {
            return Some((
                root.key("bounds").key("createFailures"),
                format!("expected at most {}", u8::MAX),
            ));
        }
        if self.steps.is_empty() {
            return Some((root.key("steps"), "expected at least one step".into()));
        }
        let mut second_leader = false;
        let mut replicasets = ReplicaSetsSoFar::default();
        let mut configmaps = BTreeSet::new();
        let mut holds = Held::default();
        for (i, step) in self.steps.iter().enumerate() {
            let at = root.key("steps").index(i).key(step.kind.keyword());
            if let Some(message) = self.step_problem(&step.kind, second_leader) {
                return Some((at, message));
            }
            if let Err(message) = holds.step(i, &step.kind) {
                return Some((at, message));
            }
            if step.refused.is_some() && !step.refusable() {
                return Some((
                    root.key("steps").index(i).key(REFUSED),
                    "only one request can be expected to be refused: an apply of one manifest, a scale, or a delete of a ReplicaSet".into(),
                ));
            }
            // A refused step changes nothing: the ReplicaSets it names need not exist (a
            // scale expected to get NotFound), and those it applies do not come to exist.
            if step.refused.is_none() {
                if let Some(message) = replicasets.step(&step.kind) {
                    return Some((at, message));
                }
            }
            if let Some(message) = configmap_problem(&mut configmaps, &step.kind) {
                return Some((at.key("configMap"), message));
            }
            if let Some(node) = step
                .nodes()
                .into_iter()
                .find(|n| !self.nodes.iter().any(|m| m == n))
            {
                return Some((
                    at,
                    format!(
                        "node {node} is not in `nodes` ({})",
                        if self.nodes.is_empty() {
                            "none listed".to_string()
                        } else {
                            self.nodes.join(", ")
                        }
                    ),
                ));
            }
            second_leader |= matches!(step.kind, StepKind::StartSecondLeader);
        }
        if let Some((i, pattern)) = holds.first_request_hold() {
            return Some((
                root.key("steps").index(*i).key(self.steps[*i].kind.keyword()),
                format!("the {}'s {pattern} requests held here are never released: whoever sent one would wait for ever (add `release: {{requests: …}}` before the last settle)", pattern.from),
            ));
        }
        None
    }

    /// What is wrong with one step, given whether a second leader has started before it.
    /// (The ReplicaSets a step names are [`ReplicaSetsSoFar`]'s.)
    fn step_problem(&self, kind: &StepKind, second_leader: bool) -> Option<String> {
        let controller = match kind {
            StepKind::RestartController { controller }
            | StepKind::ExpireExpectations { controller, .. }
            | StepKind::Relist {
                watcher: Watcher::Controller(controller),
            } => Some(*controller),
            _ => None,
        };
        match (kind, controller) {
            (_, Some(c)) if c > 1 => Some(format!(
                "controller {c}: expected 0 (the first instance) or 1 (the second leader)"
            )),
            (_, Some(1)) if !second_leader => {
                Some("controller 1 runs only after a startSecondLeader step".into())
            }
            (StepKind::StopFirstLeader, _) if !second_leader => {
                Some("needs an earlier startSecondLeader step".into())
            }
            (StepKind::Wait { seconds }, _) if *seconds == 0 || *seconds >= 300 => Some(format!(
                "{seconds}s: expected 1s to 299s (from 5 minutes on, a real controller's expectations expire, which the model does only at an expireExpectations step)"
            )),
            (StepKind::Pods { selection, action }, _) => {
                if selection.count == Some(0) {
                    Some("count: expected at least 1".into())
                } else if matches!(&selection.set, PodSet::Names(n) if n.is_empty()) {
                    Some("pods: names no pod".into())
                } else if matches!(action, PodAction::Label { set, remove } if set.is_empty() && remove.is_empty())
                {
                    Some("changes no label: give `set` or `remove`".into())
                } else if let PodAction::SetOwners { owners } = action {
                    owners_problem(owners)
                } else {
                    None
                }
            }
            (StepKind::Apply(apply), _) if apply.manifests.is_empty() => {
                Some("applies no manifest".into())
            }
            _ => None,
        }
    }
}

/// What is wrong with a `setOwnerReferences` list the API server would take badly or the
/// run could not mean as the model does: two controllers (refused as Invalid, which a pod
/// step cannot be expected to be); one owner twice (a strategic merge keyed by UID, as the
/// controller's adoption sends, would then change an arbitrary one of the two); an owner of
/// kind `v1 Event` (refused: `ValidateOwnerReference` in apimachinery's
/// `pkg/api/validation/objectmeta.go` bans it); or a ConfigMap of a name the runner's own
/// marks take (`rsmc-…`), which the model does not have.
fn owners_problem(owners: &[OwnerByName]) -> Option<String> {
    if owners.iter().filter(|o| o.controller).count() > 1 {
        return Some("references: at most one may have `controller: true` (the API server refuses a pod with two controllers)".into());
    }
    let mut seen = BTreeSet::new();
    if let Some(o) = owners.iter().find(|o| !seen.insert(&o.owner)) {
        return Some(format!("references: {} is named twice", o.owner));
    }
    owners.iter().find_map(|o| match &o.owner {
        NamedOwner::Other { kind, .. } if kind.is("v1", "Event") => {
            Some("references: an owner of kind v1 Event is refused by the API server".into())
        }
        NamedOwner::Other { kind, name } if kind.is_configmap() => {
            runners_mark(name).map(|why| format!("references: {}: {why}", o.owner))
        }
        _ => None,
    })
}

/// Why a scenario's ConfigMap may not be named `name`: the runner's own marks take the names
/// `rsmc-…` (settle and fault marks, which the imports read as such), and the model has no
/// such objects.
pub(crate) fn runners_mark(name: &str) -> Option<&'static str> {
    name.starts_with("rsmc-")
        .then_some("the runner's own marks are ConfigMaps named rsmc-…; name it otherwise")
}

/// What is wrong with a step that creates or deletes a ConfigMap, given those the steps before
/// it left (`live`, which it updates): one created while it exists (AlreadyExists) or deleted
/// while it does not (NotFound), which a step cannot be expected to be refused with; a name
/// the API server refuses; or one of the runner's own marks' names (`rsmc-…`).
fn configmap_problem(live: &mut BTreeSet<String>, kind: &StepKind) -> Option<String> {
    match kind {
        StepKind::CreateConfigMap { name } => {
            if !is_dns1123_subdomain(name) {
                Some(format!("{name:?}: expected a DNS subdomain name (lower-case letters, digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit)"))
            } else if let Some(why) = runners_mark(name) {
                Some(format!("{name}: {why}"))
            } else if !live.insert(name.clone()) {
                Some(format!("configmap/{name} exists already: an earlier step creates it and none deletes it"))
            } else {
                None
            }
        }
        StepKind::DeleteConfigMap { name } => (!live.remove(name)).then(|| {
            format!("configmap/{name} does not exist here: no earlier step creates it, or one deletes it")
        }),
        _ => None,
    }
}

/// The most replicas a scenario may ask of one ReplicaSet: the largest recording the oracle
/// is measured to judge within its default budget (`oracle/tests/recorded/scale-100…`, `rsmc
/// bench --oracle`). A cluster would create a million pods; the judge could not follow them.
pub const MAX_REPLICAS: i32 = 100;

/// The ReplicaSets the steps so far have applied and not deleted: a step that scales or
/// deletes another would be answered NotFound by the API server and do nothing, which a
/// scenario must not do silently. A ReplicaSet deleted with a policy that keeps it until
/// the garbage collector is done (Foreground, Orphan) may be deleted again: a delete
/// repeated while one is under way is what a client does, and what the server does with it
/// is the point (`upstream/test-replicasets-apps-v1-default-gc-policy.yaml`).
#[derive(Default)]
struct ReplicaSetsSoFar {
    live: BTreeSet<String>,
    applied: BTreeSet<String>,
    deleting: BTreeSet<String>,
    /// The labels each applied ReplicaSet was last applied with: what a collection delete
    /// selects by.
    labels: BTreeMap<String, Labels>,
}

impl ReplicaSetsSoFar {
    /// Take one step: what is wrong with the ReplicaSets it names or the replicas it asks.
    fn step(&mut self, kind: &StepKind) -> Option<String> {
        let too_many = |n: i32, what: &str| {
            (n > MAX_REPLICAS).then(|| {
                format!(
                    "{what}: {n} replicas: expected at most {MAX_REPLICAS}, the largest run the oracle is measured to judge (rsmc bench --oracle)"
                )
            })
        };
        match kind {
            StepKind::Apply(apply) => {
                for m in &apply.manifests {
                    if let Object::ReplicaSet(rs) = &m.object {
                        let name = &rs.meta.name;
                        if let Some(m) = too_many(rs.spec.replicas, &format!("replicaset {name}")) {
                            return Some(m);
                        }
                        self.live.insert(name.clone());
                        self.deleting.remove(name);
                        self.applied.insert(name.clone());
                        self.labels.insert(name.clone(), rs.meta.labels.clone());
                    }
                }
                None
            }
            StepKind::Scale {
                replicaset,
                replicas,
            } => self
                .missing(replicaset)
                .or_else(|| too_many(*replicas, &format!("replicaset {replicaset}"))),
            StepKind::DeleteReplicaSet {
                replicaset,
                propagation,
            } => {
                if self.deleting.contains(replicaset) {
                    return None;
                }
                let missing = self.missing(replicaset);
                self.live.remove(replicaset);
                if missing.is_none()
                    && matches!(
                        propagation,
                        Some(Propagation::Foreground | Propagation::Orphan)
                    )
                {
                    self.deleting.insert(replicaset.clone());
                }
                missing
            }
            StepKind::DeleteReplicaSets {
                selector,
                propagation,
            } => {
                let matching: Vec<String> = self
                    .live
                    .union(&self.deleting)
                    .filter(|name| selector.matches(&self.labels[*name]))
                    .cloned()
                    .collect();
                if matching.is_empty() {
                    return Some(format!(
                        "replicasets with labels {selector}: no ReplicaSet at this step has them, so the collection delete would delete nothing (ReplicaSets at this step: {})",
                        listed(&self.live)
                    ));
                }
                for name in matching {
                    if self.live.remove(&name)
                        && matches!(
                            propagation,
                            Some(Propagation::Foreground | Propagation::Orphan)
                        )
                    {
                        self.deleting.insert(name);
                    }
                }
                None
            }
            StepKind::Pods {
                action: PodAction::SetOwners { owners },
                ..
            } => owners
                .iter()
                .find_map(|o| o.owner.replicaset().and_then(|rs| self.missing(rs))),
            StepKind::ExpireExpectations { replicaset, .. } => (!self.applied.contains(replicaset))
                .then(|| {
                    format!(
                        "replicaset {replicaset}: no earlier step applies it (applied: {})",
                        listed(&self.applied)
                    )
                }),
            _ => None,
        }
    }

    /// Why `name` cannot be acted on here, if it cannot.
    fn missing(&self, name: &str) -> Option<String> {
        if self.live.contains(name) {
            return None;
        }
        let why = if self.applied.contains(name) {
            "an earlier step deletes it"
        } else {
            "no earlier step applies it"
        };
        Some(format!(
            "replicaset {name}: {why}, so the API server would answer NotFound (ReplicaSets at this step: {})",
            listed(&self.live)
        ))
    }
}

fn listed(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}
