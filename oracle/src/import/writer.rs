//! Who wrote: the ReplicaSet controller and the garbage collector (whose writes the oracle
//! judges), the namespace controller (whose writes end a recording), or a client (the user,
//! the scheduler, the kubelet: the scenario's steps).
//!
//! On a cluster whose kube-controller-manager runs with `--use-service-account-credentials`
//! (kubeadm, kind) each controller authenticates as its own service account in kube-system.
//! Otherwise every controller is the manager's one user (`system:kube-controller-manager`, or
//! the local control plane's admin), and its user agent tells them apart:
//! `kube-controller-manager/v1.20.2 (linux/amd64) kubernetes/faddc6c/replicaset-controller`.
//! Another implementation under test is named by its user or user agent
//! ([`Attribution::controllers`]); `rsmc controller` sends [`REFERENCE_USER_AGENT`].

use crate::observed::Component;
use std::fmt;

/// The user agent of the reference controller (`rsmc controller`) names itself by.
pub const REFERENCE_USER_AGENT: &str = "rsmc-controller";

/// Who made a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Writer {
    ReplicaSetController,
    GarbageCollector,
    /// Deleting a namespace's objects because the namespace is being deleted.
    NamespaceController,
    /// Anyone else, by user name (and user agent, when it sent one).
    Client(String),
}

impl fmt::Display for Writer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Writer::ReplicaSetController => f.write_str("the replicaset controller"),
            Writer::GarbageCollector => f.write_str("the garbage collector"),
            Writer::NamespaceController => f.write_str("the namespace controller"),
            Writer::Client(who) => f.write_str(who),
        }
    }
}

impl Writer {
    /// The component an observed trace names as the writer ([`Component`]): the two whose
    /// writes the model makes; `None` for a client (its writes are steps) and the namespace
    /// controller (the recording is cut where it begins).
    pub fn component(&self) -> Option<Component> {
        match self {
            Writer::ReplicaSetController => Some(Component::ReplicaSetController),
            Writer::GarbageCollector => Some(Component::GarbageCollector),
            Writer::NamespaceController | Writer::Client(_) => None,
        }
    }
}

/// How writers are told apart.
#[derive(Clone, Debug)]
pub struct Attribution {
    /// User names, or user-agent prefixes, of the ReplicaSet controller under test besides
    /// the built-in one's (always known) and the reference controller's.
    pub controllers: Vec<String>,
}

impl Default for Attribution {
    fn default() -> Self {
        Attribution {
            controllers: vec![REFERENCE_USER_AGENT.to_string()],
        }
    }
}

/// kube-controller-manager's controllers by the name they use for their service account and
/// at the end of their user agent.
const CONTROLLERS: &[(&str, Writer)] = &[
    ("replicaset-controller", Writer::ReplicaSetController),
    ("generic-garbage-collector", Writer::GarbageCollector),
    ("namespace-controller", Writer::NamespaceController),
];

impl Attribution {
    /// The writer of a request made by `username` with `user_agent`.
    pub fn writer(&self, username: &str, user_agent: &str) -> Writer {
        if self
            .controllers
            .iter()
            .any(|c| username == c || user_agent.starts_with(c.as_str()))
        {
            return Writer::ReplicaSetController;
        }
        let account = username.strip_prefix("system:serviceaccount:kube-system:");
        let manager_part = user_agent
            .starts_with("kube-controller-manager/")
            .then(|| user_agent.rsplit('/').next())
            .flatten();
        for (name, writer) in CONTROLLERS {
            if account == Some(name) || manager_part == Some(name) {
                return writer.clone();
            }
        }
        Writer::Client(if user_agent.is_empty() {
            username.to_string()
        } else {
            format!("{username} ({user_agent})")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_accounts_user_agents_and_named_controllers() {
        let a = Attribution {
            controllers: vec!["my-controller".into(), REFERENCE_USER_AGENT.into()],
        };
        assert_eq!(
            a.writer(
                "system:serviceaccount:kube-system:replicaset-controller",
                ""
            ),
            Writer::ReplicaSetController
        );
        assert_eq!(
            a.writer(
                "admin",
                "kube-controller-manager/v1.20.2 (linux/amd64) kubernetes/faecb19/generic-garbage-collector"
            ),
            Writer::GarbageCollector
        );
        assert_eq!(
            a.writer(
                "system:serviceaccount:kube-system:namespace-controller",
                "x"
            ),
            Writer::NamespaceController
        );
        assert_eq!(a.writer("my-controller", ""), Writer::ReplicaSetController);
        assert_eq!(
            a.writer("admin", "rsmc-controller/0.1.0"),
            Writer::ReplicaSetController
        );
        // A user agent that only ends like a controller's is not the controller manager's.
        assert_eq!(
            a.writer("alice", "curl/replicaset-controller"),
            Writer::Client("alice (curl/replicaset-controller)".into())
        );
        assert_eq!(a.writer("alice", ""), Writer::Client("alice".into()));
    }
}
