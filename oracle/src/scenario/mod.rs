//! Scenarios: what a user does to a cluster, step by step, as a file that both the model and a
//! real cluster can run.
//!
//! A scenario fixes the environment's moves (kubectl commands, the kubelet's reports, faults)
//! and leaves the system free: the model explores every interleaving of informers, workers, the
//! API server and the garbage collector between two steps, and a conformance runner replays the
//! same steps on a cluster. `settle` steps are where the two are compared.
//!
//! # The format
//!
//! ```yaml
//! name: frontend
//! description: >-
//!   The seed's frontend.yaml: three pods are created and owned by frontend.
//! profile: k8s-1.20          # optional; default: the command line's --profile
//! featureGates: {}           # optional, with profile upstream: {GateName: false, …}
//! nodes: [node-1]            # optional: the (fake) nodes pods may be bound to
//! bounds: {maxLag: 1, createFailures: 0}   # optional; these are the defaults
//! steps:
//!   - apply: manifests/frontend.yaml
//!   - settle
//!   - ready: {pods: {of: frontend}}
//!   - settle
//! ```
//!
//! - `name` (required), `description` (cite the documentation the scenario reproduces).
//! - `onCluster`: for a scenario whose point is an interleaving or a timeout that a run on a
//!   real cluster cannot force (a sync racing a watch event, expectations expiring), what
//!   such a run checks instead. `rsmc conform` prints it with the verdict. Steps a cluster
//!   cannot take at all (`relist`, `expireExpectations`, and on a cluster the runner does not
//!   manage, `restartController` and the leader steps) are reported by the runner anyway.
//! - `reproduces`: the bug catalogue entry (`rsmc bugs`) whose race the scenario forces;
//!   `rsmc conform` then says whether each run reproduced it, judged on the recording.
//! - `profile`: `k8s-1.20` or `upstream`: the behaviour the scenario was written for, which
//!   `rsmc replay` follows. Where the release that ran it is known — `rsmc conform` asks the
//!   server, a recording names it in `cluster.server` — that release's controller (with its
//!   feature gates) is what the run is judged by, and the run says when that differs.
//! - `featureGates` (with `profile: upstream`): gates the scenario is about, turned on or
//!   off (`StaleControllerConsistencyReplicaSet`, `DeploymentReplicaSetTerminatingReplicas`,
//!   `PodDeletionCost`; see `rsmc_spec::gates`). The model runs with them switched. A
//!   cluster's gates are set when it starts, so they are a requirement there: `rsmc
//!   conform` runs the scenario only on a cluster whose release and gates give the same
//!   behaviour (`rsmc cluster up --feature-gates …`; `--feature-gates` for other clusters)
//!   and lists it as not run, with the command that would run it, everywhere else.
//! - `nodes`: every node a step or a manifest binds a pod to must be listed. Nodes are names
//!   only: there is no scheduler, pods are bound by `apply … nodeName` and `schedule` steps.
//! - `bounds.maxLag` (1 to 32, default 1): how many events of one resource type an informer may
//!   be behind; a step that writes waits until every informer is less than that far behind.
//!   A sync still acts on whatever stale cache it started from while later writes land, so 1
//!   already explores stale decisions; larger values let syncs start from staler caches, at a
//!   steep cost (the seed's frontend.yaml: 15 thousand states at 1, 534 thousand at 2). `bounds.createFailures` (default 0): how many pod
//!   creations the API server may reject (an exceeded quota), anywhere in the run.
//!
//! ## Steps
//!
//! A step is a keyword alone (`- settle`) or a keyword with its arguments (`- scale: {…}`).
//!
//! | step | what it is |
//! |---|---|
//! | `apply: manifests/frontend.yaml` | `kubectl apply -f`: every manifest in the file (`---`-separated), in order. The path is relative to the scenario file. |
//! | `apply: {file: manifests/pod-rs.yaml, nodeName: node-1}` | the same, each pod bound to the node at creation, as a scheduler would bind it at once (a bound pod is deleted gracefully: it stays `Terminating` until `finishDeletion`). |
//! | `apply: {manifest: {apiVersion: v1, kind: Pod, …}}` | a manifest inline: one object or a list of them. |
//! | `scale: {replicaset: frontend, replicas: 5}` | `kubectl scale rs/frontend --replicas=5` |
//! | `delete: {replicaset: frontend, cascade: orphan}` | `kubectl delete rs/frontend --cascade=…`: `background` (kubectl's default, also when `cascade` is left out), `foreground` or `orphan`; or `unset`: a DELETE with no propagationPolicy (client-go's `Delete` with empty options), for which the API server takes the policy from a finalizer the ReplicaSet already carries, else apps/v1's default, Background. A ReplicaSet deleted with `foreground` or `orphan` may be deleted again (it stays until the garbage collector is done). |
//! | `deleteCollection: {replicasets: {labels: {e2e: abc}}, cascade: unset}` | a DeleteCollection of the ReplicaSets whose labels match (`labels` or `selector`), `cascade` as for `delete`; client-go's `DeleteCollection`, not `kubectl delete rs -l` (which deletes one by one). The API server lists them, then deletes each in name order, other actors moving in between. |
//! | `delete: {pod: pod1}` | `kubectl delete pod/pod1`; with a pod selection, every selected pod. |
//! | `label: {pods: {of: frontend}, count: 1, set: {tier: debug}, remove: [track]}` | `kubectl label … tier=debug track- --overwrite` |
//! | `unlabel: {pod: pod1, keys: [tier]}` | `kubectl label pod/pod1 tier-` |
//! | `annotate: {pods: {labels: {which: first}}, set: {controller.kubernetes.io/pod-deletion-cost: "1000"}}`, `annotate: {pod: pod1, remove: [controller.kubernetes.io/pod-deletion-cost]}` | `kubectl annotate … controller.kubernetes.io/pod-deletion-cost=1000 --overwrite` (or `…-`): the one annotation the model holds, which the scale-down ranking reads; its value as upstream reads it (a 32-bit integer, no plus sign or leading zeros). |
//! | `setOwnerReferences: {pods: {of: rs}, references: [{replicaset: rs-other, controller: true, blockOwnerDeletion: true}, {replicaset: rs}]}` | a client's merge patch replacing the pod's `metadata.ownerReferences` (an empty list removes them all); each reference names a ReplicaSet an earlier step applies and takes the UID it has when the step runs; `controller` and `blockOwnerDeletion` default to false. At most one controller; references to other kinds are outside the model. |
//! | `schedule: {pods: all, node: node-1}` | the scheduler binds each selected pod to the node. |
//! | `ready`, `unready`, `fail`, `finishDeletion`: `{pods: …}` | the kubelet reports each selected pod Running and Ready, Running and not Ready, Failed; or confirms its graceful deletion. |
//! | `restartContainers: {pods: …, restartCount: 5}` | the kubelet reports each selected pod's containers restarted, `restartCount` 5 (phase and readiness unchanged; the ranking sends pods with more restarts first). A real kubelet counts restarts itself, so a scenario with this step is played, not run on real kubelets. |
//! | `wait: 1s` | whole seconds pass, each one a model `Tick` (the ranking compares whole-second timestamps); less than 300s, since 5 minutes would let a real controller's expectations expire, which the model does only at `expireExpectations`. |
//! | `restartController`, `restartController: {controller: 1}` | the controller crashes and restarts: its queue and expectations are lost and its informers relist. |
//! | `expireExpectations: {replicaset: frontend, controller: 0}` | the controller's expectations for the ReplicaSet time out (5 minutes on a cluster). |
//! | `relist: controller`, `relist: garbage-collector`, `relist: {controller: 1}` | a watch expires and the informer relists. |
//! | `hold: pods`, `release: pods` (or `replicasets`) | the type's watch events stop reaching the ReplicaSet controller, then flow again in order: its informer falls behind meanwhile. |
//! | `hold: {garbage-collector: pods}`, `release: {garbage-collector: pods}` (or `replicasets`) | the same for the garbage collector's informer, while the controller's flow. |
//! | `hold: {requests: {verb: patch, resource: pods, name: pod1}}`, `release: {requests: …}` | the ReplicaSet controller's requests the pattern catches (verbs `get`, `create`, `update`, `patch`, `delete`; resources `pods`, `replicasets`, `replicasets/status`; `name` optional) wait at the gate, sent and not landed, until the same pattern is released. With `from: garbage-collector` in the pattern, the garbage collector's (`patch` or `delete` `pods`, `patch` `replicasets`) wait at its own gate. A release must name a hold, and every request hold must be released. |
//! | `await: {held: PATTERN}`, `await: {gone: {replicaset: frontend}}` (or `{pod: …}`) | wait until a request the scenario holds is at the gate, or until the object is gone. |
//! | `startSecondLeader`, `stopFirstLeader` | a second controller instance starts while the first runs; then the first stops (a leader handover). Controller 1 exists only after `startSecondLeader`. |
//! | `settle` | wait until nothing in the cluster moves: the points where model and cluster are compared. |
//!
//! A request the API server refuses changes nothing, and the scenario goes on. A step that is
//! one request — an apply of one manifest, a scale, a delete of a ReplicaSet — may say that
//! the API server is expected to refuse it, and why, with `refused:` beside its kind:
//!
//! ```yaml
//!   - apply: manifests/selector-mismatch.yaml
//!     refused: Invalid            # NotFound, Conflict, AlreadyExists, Invalid, Forbidden
//! ```
//!
//! Its manifest need not pass the API validation then (that is the point). A run conforms
//! only if the API server refuses the step with that reason: the model's (the script goes past
//! the step only then) and the cluster's (its runner records the refusal; see
//! [`crate::judge::refusals`]).
//!
//! Pod selections are evaluated when the step runs, as a client's list would be: `pod: NAME`,
//! or `pods:` one of `all`, a list of names, `{of: frontend}` (the pods the live ReplicaSet
//! `frontend` controls), `{labels: {tier: frontend}}` (like `kubectl -l`), or `{selector:
//! {matchExpressions: […]}}`; with `count: N`, any N of them (the model explores every choice).
//! Pods the controller creates have generated names, so select them by owner or labels.
//!
//! A scenario that does not end with `settle` gets one: every run ends where it can be
//! observed.
//!
//! Manifests are checked field by field against what the model covers ([`crate::manifest`]).
//! Every mistake is reported with the file, line and column and the field's path:
//! `scenarios/x.yaml:12:5: steps[3].scale.replicas: invalid type: string "three", expected
//! i32`.
//!
//! # Use
//!
//! [`load`] reads a file, [`compile`] gives the model's script and configuration, and
//! [`Scenario::to_yaml`] writes a scenario back. [`Scenario::new`] and [`from_actions`] build one
//! from a model run's environment moves.
//!
//! A model run (a counterexample, a cover trace) becomes a scenario a cluster can replay in
//! `from_run` ([`from_run()`], with its timing left open; [`forced`], with the steps that
//! force the order a cluster would not take by itself, found in `forcing`); `verify` says
//! what such a scenario reaches in the model ([`reaches`], and [`passes`] for a run that
//! stopped at an await).

mod compile;
mod forcing;
mod from_run;
mod held;
mod nodes;
mod parse;
mod step;
mod verify;
mod write;

pub use crate::yaml::Error;
pub use compile::{compile, Compiled};
pub use from_run::{forced, forced_counterexample, from_run};
pub use held::Held;
pub use nodes::NodeMap;
pub use parse::fault_step;
pub use step::{resource_name, Apply, ApplySource, Step, StepKind};
pub use verify::{note_reach, passes, reaches, Reached};
pub use write::from_actions;

use crate::manifest::Object;
use crate::yaml::{cannot_read, FieldPath, Seg};
use rsmc_spec::api::names::is_dns1123_subdomain;
use rsmc_spec::api::Propagation;
use rsmc_spec::gates::FeatureGates;
use rsmc_spec::model::{OwnerByName, PodAction, PodSet, Watcher};
use rsmc_spec::object::Labels;
use rsmc_spec::profile::Profile;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

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

/// Reads a scenario file and the manifests it applies.
pub fn load(path: &Path) -> Result<Scenario, Error> {
    load_str(path, &crate::yaml::read(path)?)
}

/// A scenario from its text, as if read from `path` (which anchors its manifest paths).
pub fn load_str(path: &Path, text: &str) -> Result<Scenario, Error> {
    parse::parse(path, text)
}

/// Every scenario (`*.yaml`) directly in `dir`, in name order.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, Error> {
    let unreadable = |e: std::io::Error| Error::in_file(dir, cannot_read(&e));
    let mut paths = std::fs::read_dir(dir)
        .map_err(unreadable)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    paths.retain(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml"));
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

impl Scenario {
    /// Fails on what [`load`] would reject in a scenario built in memory: nodes not listed,
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
    fn problem(&self) -> Option<(FieldPath, String)> {
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
                    root.key("steps").index(i).key(parse::REFUSED),
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

/// What is wrong with a `setOwnerReferences` list the API server would take badly: two
/// controllers (refused as Invalid, which a pod step cannot be expected to be), or one
/// ReplicaSet twice (a strategic merge keyed by UID, as the controller's adoption sends,
/// would then change an arbitrary one of the two).
fn owners_problem(owners: &[OwnerByName]) -> Option<String> {
    if owners.iter().filter(|o| o.controller).count() > 1 {
        return Some("references: at most one may have `controller: true` (the API server refuses a pod with two controllers)".into());
    }
    let mut seen = BTreeSet::new();
    owners
        .iter()
        .find(|o| !seen.insert(&o.replicaset))
        .map(|o| format!("references: replicaset {} is named twice", o.replicaset))
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
            } => owners.iter().find_map(|o| self.missing(&o.replicaset)),
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
