//! A scenario's namespace ready for pods. Where the API server runs the ServiceAccount
//! admission plugin (kubeadm's and kind's do; the local control plane turns it off), a pod in
//! a namespace whose `default` ServiceAccount the controller manager has not made yet is
//! refused ("error looking up service account NS/default"). A ReplicaSet applied at once
//! then records a creation failure (a `ReplicaFailure` condition) that no scenario step
//! asked for — seen on kind with the reference controller, whose first sync came first.
//! Upstream's e2e framework waits for the account before a test starts; so does the runner.

use k8s_openapi::api::core::v1::ServiceAccount;
use kube::{Api, Client};
use std::time::{Duration, Instant};

/// How long a new namespace may take to get its `default` ServiceAccount.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Waits until `namespace` has its `default` ServiceAccount, where this cluster makes one:
/// one whose own `default` namespace has none makes none, and nothing is waited for.
pub async fn wait_for_default(client: &Client, namespace: &str) -> Result<(), String> {
    let describe = |e: kube::Error| crate::api_error::describe(&e);
    let made_here = Api::<ServiceAccount>::namespaced(client.clone(), "default")
        .get_opt("default")
        .await
        .map_err(|e| {
            format!(
                "cannot read ServiceAccount default/default: {}",
                describe(e)
            )
        })?
        .is_some();
    if !made_here {
        return Ok(());
    }
    let api = Api::<ServiceAccount>::namespaced(client.clone(), namespace);
    let started = Instant::now();
    loop {
        let found = api.get_opt("default").await.map_err(|e| {
            format!(
                "cannot read ServiceAccount {namespace}/default: {}",
                describe(e)
            )
        })?;
        if found.is_some() {
            return Ok(());
        }
        if started.elapsed() > TIMEOUT {
            return Err(format!(
                "namespace {namespace} has no `default` ServiceAccount after {} s, and this \
                 cluster's API server refuses pods without one (its `default` namespace has one)",
                TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
