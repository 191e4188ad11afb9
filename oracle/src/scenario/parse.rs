//! Reading a scenario file: the format the module documentation describes, with an error at
//! the line of every mistake.

use super::definition::{Bounds, Scenario};
use super::step::{resource_name, Apply, ApplySource, Step, StepKind, REFUSED, THEN_HOLD_AFTER};
use crate::manifest::{self, Manifest, Object, Validation};
use crate::yaml::{self, describe, Document, Error, FieldPath, Fields, Seg};
use rsmc_spec::api::{Kind, Propagation, Reason, RequestPattern};
use rsmc_spec::gates::{FeatureGates, Gate};
use rsmc_spec::model::{Awaited, PodAction, PodSelection, PodSet, Recipient, RequestHold, Watcher};
use rsmc_spec::object::{deletion_cost, LabelSelector, Labels, Pod, POD_DELETION_COST};
use rsmc_spec::profile::Profile;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a step reader has at hand.
struct Ctx<'a> {
    doc: &'a Document,
    /// The scenario file's directory: manifest paths are relative to it.
    dir: PathBuf,
    /// Whether the step's manifests must pass API validation (not when the step expects the
    /// API server to refuse it).
    validation: Validation,
}

/// Reads the step kind's arguments at the path.
type Reader = fn(&Ctx, &FieldPath) -> Result<StepKind, Error>;

/// Every step kind: its keyword, how it is written, and its reader.
const KINDS: &[(&str, &str, Reader)] = &[
    (
        "apply",
        "apply: FILE | {file: FILE, nodeName: NODE} | {manifest: MANIFEST or [MANIFEST, …], nodeName: NODE}",
        apply,
    ),
    ("scale", "scale: {replicaset: NAME, replicas: N}", scale),
    (
        "delete",
        "delete: {replicaset: NAME, cascade: background|foreground|orphan} | {pod: NAME} | {pods: PODS, count: N | upTo: N} | {configMap: NAME}",
        delete,
    ),
    ("create", "create: {configMap: NAME}", create),
    (
        "deleteCollection",
        "deleteCollection: {replicasets: {labels: {KEY: VALUE, …}} | {selector: LABELSELECTOR}, cascade: background|foreground|orphan|unset}",
        delete_collection,
    ),
    (
        "label",
        "label: {pod: NAME | pods: PODS, count: N, set: {KEY: VALUE, …}, remove: [KEY, …]}",
        |c, p| pod_step(c, p, label),
    ),
    (
        "unlabel",
        "unlabel: {pod: NAME | pods: PODS, count: N, keys: [KEY, …]}",
        |c, p| pod_step(c, p, unlabel),
    ),
    (
        "annotate",
        "annotate: {pod: NAME | pods: PODS, count: N, set: {controller.kubernetes.io/pod-deletion-cost: COST}} | {…, remove: [controller.kubernetes.io/pod-deletion-cost]}",
        |c, p| pod_step(c, p, annotate),
    ),
    (
        "setOwnerReferences",
        "setOwnerReferences: {pod: NAME | pods: PODS, count: N, references: [{replicaset: NAME | apiVersion: API_VERSION, kind: KIND, name: NAME, controller: BOOL, blockOwnerDeletion: BOOL}, …]}",
        |c, p| {
            pod_step(c, p, |f| {
                Ok(PodAction::SetOwners {
                    owners: f.required("references")?,
                })
            })
        },
    ),
    (
        "schedule",
        "schedule: {pod: NAME | pods: PODS, count: N, node: NODE}",
        |c, p| {
            pod_step(c, p, |f| {
                Ok(PodAction::Schedule {
                    node: f.required("node")?,
                })
            })
        },
    ),
    ("ready", "ready: {pod: NAME | pods: PODS, count: N}", |c, p| {
        pod_step(c, p, |_| Ok(PodAction::Ready))
    }),
    (
        "unready",
        "unready: {pod: NAME | pods: PODS, count: N}",
        |c, p| pod_step(c, p, |_| Ok(PodAction::Unready)),
    ),
    ("fail", "fail: {pod: NAME | pods: PODS, count: N}", |c, p| {
        pod_step(c, p, |_| Ok(PodAction::Fail))
    }),
    (
        "restartContainers",
        "restartContainers: {pod: NAME | pods: PODS, count: N, restartCount: N}",
        |c, p| {
            pod_step(c, p, |f| {
                Ok(PodAction::Restarted {
                    restarts: f.required("restartCount")?,
                })
            })
        },
    ),
    (
        "finishDeletion",
        "finishDeletion: {pod: NAME | pods: PODS, count: N}",
        |c, p| pod_step(c, p, |_| Ok(PodAction::FinishDeletion)),
    ),
    ("wait", "wait: Ns (whole seconds, e.g. 1s)", wait),
    (
        "restartController",
        "restartController | restartController: {controller: N}",
        restart_controller,
    ),
    (
        "expireExpectations",
        "expireExpectations: {replicaset: NAME, controller: N}",
        expire_expectations,
    ),
    (
        "relist",
        "relist: controller | garbage-collector | {controller: N}",
        relist,
    ),
    (
        "hold",
        "hold: replicasets | pods | {garbage-collector: replicasets | pods} | {requests: {verb: get|create|update|patch|delete, resource: pods|replicasets|replicasets/status, name: NAME}, after: N}",
        |c, p| match held_thing(c, p, true)? {
            Held::Requests(pattern, after) => Ok(StepKind::HoldRequests(RequestHold {
                pattern,
                after: after.unwrap_or(0),
            })),
            Held::Events { kind, to } => Ok(StepKind::Hold { kind, to }),
        },
    ),
    (
        "release",
        "release: replicasets | pods | {garbage-collector: RESOURCE} | {requests: {verb: VERB, resource: RESOURCE, name: NAME} (as held), thenHoldAfter: N}",
        |c, p| match held_thing(c, p, false)? {
            Held::Requests(pattern, then_hold_after) => Ok(StepKind::ReleaseRequests {
                pattern,
                then_hold_after,
            }),
            Held::Events { kind, to } => Ok(StepKind::Release { kind, to }),
        },
    ),
    (
        "await",
        "await: {held: {verb: VERB, resource: RESOURCE, name: NAME}} | {gone: {replicaset: NAME} | {pod: NAME}}",
        await_step,
    ),
    ("startSecondLeader", "startSecondLeader", |c, p| {
        no_arguments(c, p, StepKind::StartSecondLeader)
    }),
    ("stopFirstLeader", "stopFirstLeader", |c, p| {
        no_arguments(c, p, StepKind::StopFirstLeader)
    }),
    ("settle", "settle", |c, p| no_arguments(c, p, StepKind::Settle)),
];

/// The keywords of the step kinds, for messages.
fn keywords() -> Vec<&'static str> {
    KINDS.iter().map(|(k, _, _)| *k).collect()
}

/// A scenario from its text; `path` names it in errors and anchors manifest paths.
pub(super) fn parse(path: &Path, text: &str) -> Result<Scenario, Error> {
    let docs = yaml::load_str(path, text)?;
    let doc = match docs.as_slice() {
        [doc] if !doc.value().is_null() => doc,
        [] | [_] => return Err(Error::in_file(path, "empty scenario file")),
        [_, second, ..] => {
            return Err(Error::at(
                path,
                second.start(),
                "a scenario file holds one YAML document",
            ))
        }
    };
    let ctx = Ctx {
        doc,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        validation: Validation::Api,
    };
    let root = FieldPath::root();
    let mut top = doc.fields(&root)?;
    let name: String = top.required("name")?;
    let description: String = top.optional("description")?.unwrap_or_default();
    let on_cluster: Option<String> = top.optional("onCluster")?;
    let reproduces = match top.optional::<String>("reproduces")? {
        None => None,
        Some(name) => Some(
            rsmc_spec::bugs::CATALOGUE
                .iter()
                .find(|e| e.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        rsmc_spec::bugs::CATALOGUE.iter().map(|e| e.name).collect();
                    top.error_at(
                        "reproduces",
                        format!(
                            "{name:?} is not in the bug catalogue (rsmc bugs): expected one of {}",
                            names.join(", ")
                        ),
                    )
                })?,
        ),
    };
    let profile = match top.optional::<String>("profile")? {
        None => None,
        Some(p) => Some(
            p.parse::<Profile>()
                .map_err(|e| top.error_at("profile", e))?,
        ),
    };
    let feature_gates = match top.optional::<BTreeMap<String, bool>>("featureGates")? {
        None => FeatureGates::default(),
        Some(named) => FeatureGates(
            named
                .into_iter()
                .map(|(name, on)| {
                    let gate = name
                        .parse::<Gate>()
                        .map_err(|e| doc.error(&root.key("featureGates").key(&name), e))?;
                    Ok((gate, on))
                })
                .collect::<Result<_, Error>>()?,
        ),
    };
    let nodes: Vec<String> = top.optional("nodes")?.unwrap_or_default();
    let bounds = if top.has("bounds") {
        bounds(doc, &root.key("bounds"))?
    } else {
        Bounds::default()
    };
    let steps_path = root.key("steps");
    let count = match top.raw("steps") {
        Some(Value::Array(items)) => items.len(),
        Some(other) => {
            return Err(doc.error(
                &steps_path,
                format!(
                    "invalid type: {}, expected a list of steps",
                    describe(other)
                ),
            ))
        }
        None => return Err(top.error("missing field `steps`")),
    };
    top.finish()?;
    let steps = (0..count)
        .map(|i| step(&ctx, &steps_path.index(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let scenario = Scenario {
        name,
        description,
        on_cluster,
        reproduces,
        profile,
        feature_gates,
        nodes,
        bounds,
        path: path.to_path_buf(),
        steps,
    };
    match scenario.problem() {
        Some((field, message)) => Err(doc.error(&field, message)),
        None => Ok(scenario),
    }
}

fn bounds(doc: &Document, path: &FieldPath) -> Result<Bounds, Error> {
    let mut f = doc.fields(path)?;
    let default = Bounds::default();
    let bounds = Bounds {
        max_lag: f.optional("maxLag")?.unwrap_or(default.max_lag),
        create_failures: f
            .optional("createFailures")?
            .unwrap_or(default.create_failures),
    };
    f.finish()?;
    Ok(bounds)
}

/// One step: a keyword alone (`settle`), or a mapping of one keyword to its arguments, with
/// `refused: REASON` beside it when the API server is expected to refuse the step.
fn step(ctx: &Ctx, path: &FieldPath) -> Result<Step, Error> {
    let doc = ctx.doc;
    let (keyword, args, refused) = match doc.get(path) {
        Some(Value::String(k)) => (k.as_str(), path.key(k), None),
        Some(Value::Object(map))
            if map.len() == 1 || (map.len() == 2 && map.contains_key(REFUSED)) =>
        {
            let k = map
                .keys()
                .find(|k| *k != REFUSED || map.len() == 1)
                .expect("a key besides `refused`");
            let refused = (map.len() == 2).then(|| reason(ctx, &path.key(REFUSED)));
            (k.as_str(), path.key(k), refused.transpose()?)
        }
        Some(Value::Object(map)) => {
            let keys: Vec<String> = map.keys().map(|k| format!("`{k}`")).collect();
            return Err(doc.error(
                path,
                format!(
                    "a step has exactly one kind (and may say `{REFUSED}: REASON`), this one has {} (check the indentation of its arguments)",
                    if keys.is_empty() { "none".to_string() } else { keys.join(", ") }
                ),
            ));
        }
        other => {
            return Err(doc.error(
                path,
                format!(
                    "invalid type: {}, expected a step such as `settle` or `scale: {{…}}`",
                    describe(other.unwrap_or(&Value::Null))
                ),
            ))
        }
    };
    let Some((_, _, read)) = KINDS.iter().find(|(k, _, _)| *k == keyword) else {
        return Err(doc.error(
            &args,
            format!(
                "unknown step kind `{keyword}`, expected one of {}",
                keywords().join(", ")
            ),
        ));
    };
    let ctx = Ctx {
        doc,
        dir: ctx.dir.clone(),
        validation: match refused {
            Some(_) => Validation::Refusable,
            None => Validation::Api,
        },
    };
    Ok(Step {
        position: doc.position(path),
        kind: read(&ctx, &args)?,
        refused,
    })
}

/// A fault step written alone, as in a scenario's list (`hold: pods`, `restartController`):
/// what a fault mark carries. `Err` is the reason, with where in `text` it is.
pub fn fault_step(text: &str) -> Result<StepKind, String> {
    let here = Path::new("the step");
    let docs = yaml::load_str(here, text).map_err(|e| e.to_string())?;
    let Some(doc) = docs.first() else {
        return Err("empty: expected a fault step such as `hold: pods`".to_string());
    };
    let ctx = Ctx {
        doc,
        dir: PathBuf::new(),
        validation: Validation::Api,
    };
    let step = step(&ctx, &FieldPath::root()).map_err(|e| e.to_string())?;
    match step.refused {
        None if step.kind.is_fault() => Ok(step.kind),
        _ => Err(format!(
            "`{}` is not a fault: a mark may carry only a step the recording cannot show (restartController, expireExpectations, relist, startSecondLeader, stopFirstLeader, hold, release, and a hold or release of requests)",
            text.trim()
        )),
    }
}

/// A step's `refused`: the reason of a `metav1.Status`.
fn reason(ctx: &Ctx, path: &FieldPath) -> Result<Reason, Error> {
    match ctx.doc.get(path) {
        Some(Value::String(name)) => name.parse().map_err(|e| ctx.doc.error(path, e)),
        other => Err(ctx.doc.error(
            path,
            format!(
                "invalid type: {}, expected a reason such as `Invalid` or `NotFound`",
                describe(other.unwrap_or(&Value::Null))
            ),
        )),
    }
}

/// How the step kind whose arguments are at `path` (`steps[3].scale`) is written.
fn usage(path: &FieldPath) -> &'static str {
    let keyword = match path.0.last() {
        Some(Seg::Key(k)) => k.as_str(),
        _ => "",
    };
    KINDS
        .iter()
        .find(|(k, _, _)| *k == keyword)
        .map_or("", |(_, usage, _)| usage)
}

/// An error about the shape of a step's arguments, with how they are written.
fn shape_error(ctx: &Ctx, path: &FieldPath, message: impl std::fmt::Display) -> Error {
    ctx.doc
        .error(path, format!("{message}; write it as `{}`", usage(path)))
}

/// The arguments' mapping.
fn arguments<'a>(ctx: &'a Ctx, path: &FieldPath) -> Result<Fields<'a>, Error> {
    match ctx.doc.get(path) {
        Some(Value::Object(_)) => ctx.doc.fields(path),
        None | Some(Value::Null) => Err(shape_error(ctx, path, "missing arguments")),
        Some(other) => Err(shape_error(
            ctx,
            path,
            format!("invalid type: {}, expected a mapping", describe(other)),
        )),
    }
}

fn no_arguments(ctx: &Ctx, path: &FieldPath, kind: StepKind) -> Result<StepKind, Error> {
    match ctx.doc.get(path) {
        None | Some(Value::Null) => Ok(kind),
        Some(other) => Err(shape_error(
            ctx,
            path,
            format!("takes no arguments, got {}", describe(other)),
        )),
    }
}

fn apply(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let doc = ctx.doc;
    // `file` is `None` for inline manifests.
    let (file, node_name) = match doc.get(path) {
        Some(Value::String(file)) => (Some(file.clone()), None),
        _ => {
            let mut f = arguments(ctx, path)?;
            let file = f.optional::<String>("file")?;
            if file.is_some() == f.has("manifest") {
                return Err(f.error("give either `file` or `manifest`"));
            }
            let node_name = f.optional::<String>("nodeName")?;
            f.finish()?;
            (file, node_name)
        }
    };
    let (source, mut manifests) = match file {
        Some(file) => {
            let full = ctx.dir.join(&file);
            let manifests =
                manifest::load_file(&full, ctx.validation).map_err(|e| match e.position {
                    // A file that cannot be read (or holds nothing) is named at the step.
                    None => doc.error(path, e),
                    Some(_) => e,
                })?;
            (ApplySource::File(PathBuf::from(file)), manifests)
        }
        None => {
            let at = path.key("manifest");
            let parts = match doc.get(&at) {
                Some(Value::Array(items)) => (0..items.len()).map(|i| at.index(i)).collect(),
                _ => vec![at],
            };
            let manifests = parts
                .iter()
                .map(|p| manifest::from_document(&doc.subdocument(p), ctx.validation))
                .collect::<Result<Vec<_>, _>>()?;
            (ApplySource::Inline, manifests)
        }
    };
    if let Some(node) = &node_name {
        for m in &mut manifests {
            bind(m, node).map_err(|message| doc.error(&path.key("nodeName"), message))?;
        }
    }
    Ok(StepKind::Apply(Apply {
        source,
        node_name,
        manifests,
    }))
}

/// Binds a pod manifest to `node` at creation, in the model object and the raw manifest alike.
fn bind(m: &mut Manifest, node: &str) -> Result<(), String> {
    let Object::Pod(pod) = &m.object else {
        return Err(format!(
            "binds pods, but the manifests include {} {}",
            m.object.kind(),
            m.object.name()
        ));
    };
    if let Some(other) = pod.node_name.as_deref().filter(|n| *n != node) {
        return Err(format!(
            "{node} conflicts with pod {}'s spec.nodeName {other}",
            pod.meta.name
        ));
    }
    m.object = Object::Pod(Arc::new(Pod {
        node_name: Some(node.to_string()),
        ..Pod::clone(pod)
    }));
    m.raw["spec"]["nodeName"] = Value::String(node.to_string());
    Ok(())
}

fn scale(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    let kind = StepKind::Scale {
        replicaset: f.required("replicaset")?,
        replicas: f.required("replicas")?,
    };
    f.finish()?;
    Ok(kind)
}

/// `kubectl delete --cascade=`, or `unset`: no propagationPolicy sent.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Cascade {
    Background,
    Foreground,
    Orphan,
    Unset,
}

fn delete(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    if f.has("configMap") {
        return Ok(StepKind::DeleteConfigMap {
            name: configmap_name(f)?,
        });
    }
    if !f.has("replicaset") {
        return pod_step(ctx, path, |_| Ok(PodAction::Delete));
    }
    let replicaset = f.required("replicaset")?;
    let propagation = cascade(&mut f)?;
    f.finish()?;
    Ok(StepKind::DeleteReplicaSet {
        replicaset,
        propagation,
    })
}

/// `create: {configMap: NAME}`: the one object a step creates besides `apply`'s (an owner
/// of another kind; see [`StepKind::CreateConfigMap`]).
fn create(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    if !f.has("configMap") {
        return Err(
            f.error("expected `configMap: NAME` (ReplicaSets and pods are created with `apply`)")
        );
    }
    Ok(StepKind::CreateConfigMap {
        name: configmap_name(f)?,
    })
}

/// `{configMap: NAME}`, the whole of a `create` or `delete` of a ConfigMap.
fn configmap_name(mut f: Fields<'_>) -> Result<String, Error> {
    let name = f.required("configMap")?;
    f.finish()?;
    Ok(name)
}

/// A delete's `cascade:`: the propagation it asks for (kubectl's default, `background`, when
/// the field is left out), `None` for `unset`.
fn cascade(f: &mut Fields) -> Result<Option<Propagation>, Error> {
    Ok(match f.optional("cascade")? {
        None | Some(Cascade::Background) => Some(Propagation::Background),
        Some(Cascade::Foreground) => Some(Propagation::Foreground),
        Some(Cascade::Orphan) => Some(Propagation::Orphan),
        Some(Cascade::Unset) => None,
    })
}

/// `deleteCollection: {replicasets: {labels: {…}} | {selector: {…}}, cascade: …}`.
fn delete_collection(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    let at = f.path_of("replicasets");
    if !f.has("replicasets") {
        return Err(f.error(
            "expected `replicasets: {labels: {KEY: VALUE, …}}` or `replicasets: {selector: LABELSELECTOR}` (DeleteCollection deletes ReplicaSets only)",
        ));
    }
    let mut g = ctx.doc.fields(&at)?;
    let selector = labels_or_selector(&mut g)?.ok_or_else(|| {
        ctx.doc
            .error(&at, "give exactly one of `labels`, `selector`")
    })?;
    g.finish()?;
    let propagation = cascade(&mut f)?;
    f.finish()?;
    Ok(StepKind::DeleteReplicaSets {
        selector,
        propagation,
    })
}

/// `labels: {KEY: VALUE, …}` (equality on each) or `selector: LABELSELECTOR`, whichever is
/// given; `None` when neither or both are.
fn labels_or_selector(f: &mut Fields) -> Result<Option<LabelSelector>, Error> {
    let labels = f.optional::<Labels>("labels")?;
    let selector = f.optional::<LabelSelector>("selector")?;
    Ok(match (labels, selector) {
        (Some(labels), None) => Some(LabelSelector {
            match_labels: labels,
            match_expressions: vec![],
        }),
        (None, Some(selector)) => Some(selector),
        _ => None,
    })
}

/// A step that acts on selected pods: the selection, then the action's own fields.
fn pod_step(
    ctx: &Ctx,
    path: &FieldPath,
    action: impl FnOnce(&mut Fields) -> Result<PodAction, Error>,
) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    let selection = selection(ctx, &mut f)?;
    let action = action(&mut f)?;
    f.finish()?;
    Ok(StepKind::Pods { selection, action })
}

/// `pod: NAME` or `pods: all | [NAME, …] | {of: RS} | {labels: {…}} | {selector: {…}}`, and
/// `count: N` (act on N of them) or `upTo: N` (on at most N: see [`PodSelection::up_to`]).
fn selection(ctx: &Ctx, f: &mut Fields) -> Result<PodSelection, Error> {
    let pod = f.optional::<String>("pod")?;
    let has_pods = f.has("pods");
    let (count, up_to) = match (f.optional::<u32>("count")?, f.optional::<u32>("upTo")?) {
        (Some(_), Some(_)) => return Err(f.error("give either `count: N` or `upTo: N`, not both")),
        (count, None) => (count, false),
        (None, up_to) => (up_to, true),
    };
    let set = match (pod, has_pods) {
        (Some(name), false) => PodSet::Names(vec![name]),
        (None, true) => pod_set(ctx, &f.path_of("pods"))?,
        _ => return Err(f.error("give either `pod: NAME` or `pods: …`")),
    };
    Ok(PodSelection { set, count, up_to })
}

fn pod_set(ctx: &Ctx, path: &FieldPath) -> Result<PodSet, Error> {
    let doc = ctx.doc;
    let expected = "expected `all`, a list of pod names, {of: REPLICASET}, {labels: {KEY: VALUE}} or {selector: LABELSELECTOR}";
    match doc.get(path) {
        Some(Value::String(s)) if s == "all" => Ok(PodSet::All),
        Some(Value::String(s)) => Err(doc.error(
            path,
            format!("{expected}, got {s:?} (one pod by name is `pod: {s}`)"),
        )),
        Some(Value::Array(_)) => Ok(PodSet::Names(doc.deserialize_at(path)?)),
        Some(Value::Object(_)) => {
            let mut f = doc.fields(path)?;
            let of = f.optional::<String>("of")?;
            let matching = f.has("labels") || f.has("selector");
            let selector = labels_or_selector(&mut f)?;
            f.finish()?;
            match (of, selector) {
                (Some(rs), None) if !matching => Ok(PodSet::ControlledBy(rs)),
                (None, Some(selector)) => Ok(PodSet::Matching(selector)),
                _ => Err(doc.error(path, "give exactly one of `of`, `labels`, `selector`")),
            }
        }
        other => Err(doc.error(
            path,
            format!(
                "{expected}, got {}",
                describe(other.unwrap_or(&Value::Null))
            ),
        )),
    }
}

fn label(f: &mut Fields) -> Result<PodAction, Error> {
    Ok(PodAction::Label {
        set: f.optional("set")?.unwrap_or_default(),
        remove: f.optional("remove")?.unwrap_or_default(),
    })
}

/// The one annotation a step may set or remove: the deletion cost, which the ranking reads.
/// Other annotations are opaque to the controller and the model does not hold them.
fn annotate(f: &mut Fields) -> Result<PodAction, Error> {
    let only = |key: &str| {
        format!("{key:?}: the model holds only the annotation {POD_DELETION_COST} (the scale-down ranking reads it; other annotations do not change what the controller does)")
    };
    let set = f.optional::<BTreeMap<String, Value>>("set")?;
    let remove = f.optional::<Vec<String>>("remove")?;
    let deletion_cost = match (set, remove) {
        (Some(set), None) if set.len() == 1 => {
            let (key, value) = set.into_iter().next().expect("one entry");
            if key != POD_DELETION_COST {
                return Err(f.error_at("set", only(&key)));
            }
            let text = match &value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(f.error_at(
                        "set",
                        format!("{POD_DELETION_COST}: expected a string such as \"1000\", got {}", describe(other)),
                    ))
                }
            };
            let cost = deletion_cost(&text)
                .map_err(|e| f.error_at("set", format!("{POD_DELETION_COST}: {e}")))?;
            Some(cost)
        }
        (None, Some(remove)) if remove.len() == 1 => {
            if remove[0] != POD_DELETION_COST {
                return Err(f.error_at("remove", only(&remove[0])));
            }
            None
        }
        _ => {
            return Err(f.error(format!(
                "give `set: {{{POD_DELETION_COST}: COST}}` or `remove: [{POD_DELETION_COST}]`, one annotation"
            )))
        }
    };
    Ok(PodAction::Annotate { deletion_cost })
}

fn unlabel(f: &mut Fields) -> Result<PodAction, Error> {
    Ok(PodAction::Label {
        set: Labels::new(),
        remove: f.required("keys")?,
    })
}

fn wait(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let value = ctx.doc.get(path).unwrap_or(&Value::Null);
    value
        .as_str()
        .and_then(|s| s.strip_suffix('s'))
        .and_then(|n| n.parse::<u32>().ok())
        .map(|seconds| StepKind::Wait { seconds })
        .ok_or_else(|| {
            shape_error(
                ctx,
                path,
                format!("expected whole seconds, got {}", describe(value)),
            )
        })
}

fn restart_controller(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    if ctx.doc.get(path).is_none_or(Value::is_null) {
        return Ok(StepKind::RestartController { controller: 0 });
    }
    let mut f = ctx.doc.fields(path)?;
    let controller = f.required("controller")?;
    f.finish()?;
    Ok(StepKind::RestartController { controller })
}

fn expire_expectations(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    let kind = StepKind::ExpireExpectations {
        replicaset: f.required("replicaset")?,
        controller: f.optional("controller")?.unwrap_or(0),
    };
    f.finish()?;
    Ok(kind)
}

/// The resource type a `hold` or `release` step names.
fn resource(ctx: &Ctx, path: &FieldPath) -> Result<Kind, Error> {
    match ctx.doc.get(path) {
        Some(Value::String(s)) if s == resource_name(Kind::ReplicaSet) => Ok(Kind::ReplicaSet),
        Some(Value::String(s)) if s == resource_name(Kind::Pod) => Ok(Kind::Pod),
        other => Err(shape_error(
            ctx,
            path,
            format!("got {}", describe(other.unwrap_or(&Value::Null))),
        )),
    }
}

/// What a hold or release names.
enum Held {
    Events {
        kind: Kind,
        to: Recipient,
    },
    /// Requests, and how many of them a hold lets through first (or a release, before it
    /// holds them again).
    Requests(RequestPattern, Option<u8>),
}

/// A hold's or release's argument: a resource (the ReplicaSet controller's watch events),
/// `{garbage-collector: RESOURCE}` (the garbage collector's) or `{requests: PATTERN}` — for
/// a hold (`hold`), with `after: N` to let the first N through.
fn held_thing(ctx: &Ctx, path: &FieldPath, hold: bool) -> Result<Held, Error> {
    if !matches!(ctx.doc.get(path), Some(Value::Object(_))) {
        return Ok(Held::Events {
            kind: resource(ctx, path)?,
            to: Recipient::ReplicaSetController,
        });
    }
    let mut f = arguments(ctx, path)?;
    let held = if f.has("requests") {
        // A hold may let some through first; a release may hold the same requests again
        // at once.
        let after = f.optional(if hold { "after" } else { THEN_HOLD_AFTER })?;
        Held::Requests(f.required("requests")?, after)
    } else if f.has("garbage-collector") {
        Held::Events {
            kind: resource(ctx, &path.key("garbage-collector"))?,
            to: Recipient::GarbageCollector,
        }
    } else {
        return Err(shape_error(
            ctx,
            path,
            "expected `requests` or `garbage-collector`",
        ));
    };
    f.finish()?;
    Ok(held)
}

/// `await: {held: PATTERN}` or `await: {gone: {replicaset: NAME} | {pod: NAME}}`.
fn await_step(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let mut f = arguments(ctx, path)?;
    let until = if f.has("held") {
        Awaited::Held(f.required("held")?)
    } else if f.has("gone") {
        let gone = path.key("gone");
        let mut g = arguments(ctx, &gone)?;
        let (kind, name) = match (g.optional("replicaset")?, g.optional("pod")?) {
            (Some(name), None) => (Kind::ReplicaSet, name),
            (None, Some(name)) => (Kind::Pod, name),
            _ => {
                return Err(ctx
                    .doc
                    .error(&gone, "expected `{replicaset: NAME}` or `{pod: NAME}`"))
            }
        };
        g.finish()?;
        Awaited::Gone { kind, name }
    } else {
        return Err(shape_error(ctx, path, "expected `held` or `gone`"));
    };
    f.finish()?;
    Ok(StepKind::Await(until))
}

fn relist(ctx: &Ctx, path: &FieldPath) -> Result<StepKind, Error> {
    let watcher = match ctx.doc.get(path) {
        Some(Value::String(s)) if s == "controller" => Watcher::Controller(0),
        Some(Value::String(s)) if s == "garbage-collector" => Watcher::GarbageCollector,
        Some(Value::Object(_)) => {
            let mut f = ctx.doc.fields(path)?;
            let controller = f.required("controller")?;
            f.finish()?;
            Watcher::Controller(controller)
        }
        other => {
            return Err(shape_error(
                ctx,
                path,
                format!("got {}", describe(other.unwrap_or(&Value::Null))),
            ))
        }
    };
    Ok(StepKind::Relist { watcher })
}
