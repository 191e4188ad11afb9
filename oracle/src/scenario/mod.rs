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
//! | `setOwnerReferences: {pods: {of: rs}, references: [{replicaset: rs-other, controller: true, blockOwnerDeletion: true}, {replicaset: rs}]}` | a client's merge patch replacing the pod's `metadata.ownerReferences` (an empty list removes them all); each reference names a ReplicaSet an earlier step applies, or an owner of another kind (`{apiVersion: v1, kind: ConfigMap, name: owner}`, `{apiVersion: apps/v1, kind: StatefulSet, name: web}`), and takes the UID it has when the step runs; an owner that does not exist (any kind but a ConfigMap a step created) gets a UID nothing has, a dangling reference. `controller` and `blockOwnerDeletion` default to false. At most one controller. |
//! | `create: {configMap: owner}`, `delete: {configMap: owner}` | `kubectl create configmap owner`, `kubectl delete configmap/owner` (Background): an owner pods may name (`setOwnerReferences`), standing for one of any other kind, a StatefulSet, a Job or a custom resource, which a local control plane has no controller for. While it exists the garbage collector keeps the pods that name it; once it is deleted their references to it dangle. |
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
mod definition;
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
pub(crate) use definition::runners_mark;
pub use definition::{Bounds, Scenario, MAX_REPLICAS};
pub use from_run::{forced, forced_counterexample, from_run, unexpressible};
pub use held::Held;
pub use nodes::NodeMap;
pub use parse::fault_step;
pub use step::{resource_name, Apply, ApplySource, Step, StepKind};
pub use verify::{note_reach, passes, reaches, Reached};
pub use write::from_actions;

use crate::yaml::cannot_read;
use std::path::Path;

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
