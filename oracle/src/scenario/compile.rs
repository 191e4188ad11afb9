//! A scenario in model terms: the script the model runs, and the configuration it runs under.

use super::definition::Scenario;
use super::nodes::NodeMap;
use super::step::StepKind;
use crate::manifest::Object;
use crate::yaml::Error;
use rsmc_spec::config::Config;
use rsmc_spec::model::{Action, Awaited, PodAction, Recipient, Script, ScriptStep};
use rsmc_spec::object::OtherKind;
use rsmc_spec::profile::Profile;
use std::collections::BTreeSet;

/// What a scenario compiles to.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The scenario's profile, or the default one given to [`compile`].
    pub profile: Profile,
    pub config: Config,
    pub script: Script,
    /// For each script step, the index of the scenario step it comes from. An apply of several
    /// manifests and a wait of several seconds give several script steps; the final settle
    /// [`compile`] appends is attributed to the last step, whose effects it waits for.
    pub origin: Vec<usize>,
}

impl Compiled {
    /// Whether the script holds watch events or requests of the controller (`hold` steps).
    pub fn holds(&self) -> bool {
        self.script.steps.iter().any(is_hold)
    }

    /// Whether the script holds watch events from the garbage collector, which needs a gate
    /// in front of it (`hold: {garbage-collector: pods}`).
    pub fn holds_from_gc(&self) -> bool {
        self.script.steps.iter().any(|s| {
            matches!(
                s,
                ScriptStep::Move(Action::HoldEvents {
                    to: Recipient::GarbageCollector,
                    ..
                })
            )
        })
    }

    /// The same script without its `hold` and `release` steps and the awaits of held
    /// requests: what a cluster run whose runner cannot hold (no event gate) is judged by,
    /// the steps reported as not forced.
    pub fn without_holds(&self) -> Compiled {
        let (steps, origin) = self
            .script
            .steps
            .iter()
            .zip(&self.origin)
            .filter(|(step, _)| !is_hold(step))
            .map(|(step, origin)| (step.clone(), *origin))
            .unzip();
        Compiled {
            script: Script {
                steps,
                ..self.script.clone()
            },
            origin,
            ..self.clone()
        }
    }

    /// The same script run on real kubelets of the cluster's nodes ([`Script::real_kubelets`]):
    /// the scheduler's and the kubelet's steps are dropped, since the real ones bind, start and
    /// finish deleting pods by themselves, and the scenario's nodes stand for the cluster's as
    /// `map` says (made from this script's `config.nodes`). A scenario that needs a pod
    /// unready or failed cannot be run so: the error says which step (`--kubelet fake` plays
    /// the kubelet instead).
    pub fn on_real_kubelets(&self, map: &NodeMap) -> Result<Compiled, String> {
        let nodes = map.cluster();
        let mut steps = Vec::new();
        let mut origin = Vec::new();
        for (step, at) in self.script.steps.iter().zip(&self.origin) {
            match step {
                ScriptStep::Pods { action, .. } if action.is_real_kubelets_own() => continue,
                ScriptStep::Pods { action, .. } => match action {
                    PodAction::Unready | PodAction::Fail | PodAction::Restarted { .. } => {
                        let what = match action {
                            PodAction::Fail => "makes pods fail",
                            PodAction::Unready => "makes pods unready",
                            _ => "makes pods' containers restart",
                        };
                        return Err(format!(
                            "step {} {what}, which a real kubelet does only when their containers do",
                            at + 1,
                        ));
                    }
                    _ => {}
                },
                ScriptStep::Move(Action::ApplyPod { pod }) => {
                    let pod = map.pod(pod);
                    if let Some(node) = pod.node_name.as_ref().filter(|n| !nodes.contains(n)) {
                        return Err(format!(
                            "step {} applies pod {} bound to node {node}, which this cluster does not have (its nodes: {})",
                            at + 1,
                            pod.meta.name,
                            nodes.join(", ")
                        ));
                    }
                    steps.push(ScriptStep::Move(Action::ApplyPod { pod }));
                    origin.push(*at);
                    continue;
                }
                _ => {}
            }
            steps.push(step.clone());
            origin.push(*at);
        }
        Ok(Compiled {
            config: Config {
                nodes: nodes.to_vec(),
                ..self.config.clone()
            },
            script: Script {
                steps,
                real_kubelets: true,
                ..self.script.clone()
            },
            origin,
            ..self.clone()
        })
    }
}

fn is_hold(step: &ScriptStep) -> bool {
    matches!(
        step,
        ScriptStep::Move(
            Action::HoldEvents { .. }
                | Action::ReleaseEvents { .. }
                | Action::HoldRequests { .. }
                | Action::ReleaseRequests { .. }
                | Action::Await {
                    until: Awaited::Held(_)
                }
        )
    )
}

/// The most workers worth exploring: kube-controller-manager's default
/// `--concurrent-replicaset-syncs`, and the model's limit.
const MAX_WORKERS: usize = 5;

/// The script of `scenario`, and a configuration for it: the `small` preset with
///
/// - `controller.workers`: the number of distinct ReplicaSet names the scenario applies (not
///   counting applies expected to be refused),
///   clamped to 1..=5. The work queue never hands one key to two workers at once, so more
///   workers than keys add no behaviour; kube-controller-manager runs 5.
/// - `informer.maxLag` and the script's `createFailures` from the scenario's bounds.
/// - `environment.secondLeader` when the scenario starts a second leader (the model keeps a
///   slot for it only then), and `nodes` from the scenario.
///
/// The preset's declarations and budgets are not used by a scripted run. A script that does not
/// end with a settle gets one, so that every run ends where it can be observed.
pub fn compile(scenario: &Scenario, default_profile: Profile) -> Result<Compiled, Error> {
    scenario.check()?;
    let mut steps = Vec::new();
    let mut origin = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        for s in script_steps(&step.kind) {
            steps.push(match (step.refused, s) {
                (Some(reason), ScriptStep::Move(action)) => ScriptStep::Refused { action, reason },
                (_, s) => s,
            });
            origin.push(i);
        }
    }
    if !matches!(steps.last(), Some(ScriptStep::Settle)) {
        steps.push(ScriptStep::Settle);
        origin.push(scenario.steps.len() - 1);
    }
    Ok(Compiled {
        profile: scenario.profile.unwrap_or(default_profile),
        config: scenario.config(),
        script: Script {
            steps,
            create_failures: scenario.bounds.create_failures,
            real_kubelets: false,
        },
        origin,
    })
}

impl Scenario {
    /// The configuration [`compile`] gives the model (see there). Not yet validated.
    pub(super) fn config(&self) -> Config {
        let mut config = Config::preset("small").expect("the small preset exists");
        let names: BTreeSet<&str> = self
            .steps
            .iter()
            .filter_map(|s| match &s.kind {
                // A refused apply creates nothing.
                StepKind::Apply(apply) if s.refused.is_none() => Some(apply),
                _ => None,
            })
            .flat_map(|apply| &apply.manifests)
            .filter(|m| matches!(m.object, Object::ReplicaSet(_)))
            .map(|m| m.object.name())
            .collect();
        config.controller.workers = names.len().clamp(1, MAX_WORKERS) as u32;
        config.informer.max_lag = self.bounds.max_lag;
        config.environment.create_failures = self.bounds.create_failures;
        config.environment.second_leader = self
            .steps
            .iter()
            .any(|s| matches!(s.kind, StepKind::StartSecondLeader));
        config.nodes = self.nodes.clone();
        config
    }
}

/// The script steps of one scenario step.
fn script_steps(kind: &StepKind) -> Vec<ScriptStep> {
    let one = |action| vec![ScriptStep::Move(action)];
    match kind {
        StepKind::Apply(apply) => apply
            .manifests
            .iter()
            .map(|m| {
                ScriptStep::Move(match &m.object {
                    Object::ReplicaSet(rs) => Action::ApplyReplicaSet {
                        replicaset: rs.clone(),
                    },
                    Object::Pod(pod) => Action::ApplyPod { pod: pod.clone() },
                })
            })
            .collect(),
        StepKind::Scale {
            replicaset,
            replicas,
        } => one(Action::ScaleReplicaSet {
            name: replicaset.clone(),
            replicas: *replicas,
        }),
        StepKind::DeleteReplicaSet {
            replicaset,
            propagation,
        } => one(Action::DeleteReplicaSet {
            name: replicaset.clone(),
            propagation: *propagation,
        }),
        StepKind::DeleteReplicaSets {
            selector,
            propagation,
        } => vec![ScriptStep::DeleteReplicaSets {
            selector: selector.clone(),
            propagation: *propagation,
        }],
        StepKind::CreateConfigMap { name } => one(Action::CreateOther {
            kind: OtherKind::configmap(),
            name: name.clone(),
        }),
        StepKind::DeleteConfigMap { name } => one(Action::DeleteOther {
            kind: OtherKind::configmap(),
            name: name.clone(),
        }),
        StepKind::Pods { selection, action } => vec![ScriptStep::Pods {
            pods: selection.clone(),
            action: action.clone(),
        }],
        StepKind::Wait { seconds } => vec![ScriptStep::Move(Action::Tick); *seconds as usize],
        StepKind::Hold { kind, to } => one(Action::HoldEvents {
            kind: *kind,
            to: *to,
        }),
        StepKind::Release { kind, to } => one(Action::ReleaseEvents {
            kind: *kind,
            to: *to,
        }),
        StepKind::Await(until) => one(Action::Await {
            until: until.clone(),
        }),
        StepKind::Settle => vec![ScriptStep::Settle],
        // Every other step is a fault of one action (`StepKind::fault`).
        fault => one(fault.fault().expect("a fault step is one action")),
    }
}
