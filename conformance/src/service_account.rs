//! A scenario's namespace ready for pods. Where the API server runs the ServiceAccount
//! admission plugin (kubeadm's and kind's do; the local control plane turns it off), a pod in
//! a namespace whose `default` ServiceAccount the controller manager has not made yet is
//! refused ("error looking up service account NS/default"). A ReplicaSet applied at once
//! then records a creation failure (a `ReplicaFailure` condition) that no scenario step
//! asked for — seen on kind with the reference controller, whose first sync came first.
//! Upstream's e2e framework waits for the account before a test starts; so does the runner.
//!
//! It asks the question the controller's create will ask: a server-side dry run of a pod
//! create (`dryRun=All`) goes through the same admission chain and stores nothing. Looking
//! for the account itself was not enough: whether the cluster makes accounts at all had to
//! be guessed from `default/default`, which a cluster only seconds old has not made yet
//! either (the plugin `plugin/pkg/admission/serviceaccount`, `Plugin.getServiceAccount`,
//! reads its informer and then the server, so it sees what a GET sees). The dry run leaves
//! an audit entry, which the audit import passes over (`import::audit`): it wrote nothing.

use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use kube::{Api, Client};
use std::time::{Duration, Instant};

/// How long a new namespace may take to get its `default` ServiceAccount.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The name of the pod the dry run offers (never stored).
const PROBE: &str = "rsmc-admission-probe";

/// Waits until the API server would admit a pod in `namespace` (at once where it does not
/// look up service accounts).
pub async fn wait_for_admission(client: &Client, namespace: &str) -> Result<(), String> {
    let api = Api::<Pod>::namespaced(client.clone(), namespace);
    let probe: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": PROBE},
        "spec": {"containers": [{"name": "probe", "image": "rsmc.io/probe"}]},
    }))
    .expect("a pod");
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let started = Instant::now();
    loop {
        let refusal = match api.create(&dry_run, &probe).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.message.contains("service account") => {
                status.message
            }
            Err(e) => {
                return Err(format!(
                    "a dry-run pod create in namespace {namespace} (to learn whether pods are \
                     admitted yet) failed: {}",
                    crate::api_error::describe(&e)
                ))
            }
        };
        if started.elapsed() > TIMEOUT {
            return Err(format!(
                "the API server still refuses pods in namespace {namespace} after {} s: {refusal}",
                TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
