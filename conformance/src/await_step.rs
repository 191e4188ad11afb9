//! The runner's `await` steps: wait until another actor has done something a scenario's
//! next step must follow — the controller has sent a request the gate holds, or the garbage
//! collector (or the API server) has removed an object.
//!
//! An await that is never met is the scenario's or the implementation's failure, not a hang:
//! it ends after the settle timeout with what was awaited and what the cluster shows.

use crate::event_gate::{GateClient, RequestHold};
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::Client;
use rsmc_spec::api::Kind;
use std::time::{Duration, Instant};

const POLL: Duration = Duration::from_millis(50);

/// Wait until a request `hold` catches waits at the gate.
pub async fn held(gate: &GateClient, hold: &RequestHold, timeout: Duration) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let status = gate.status().await?;
        let caught = status.requests.iter().find(|h| h.hold.same(hold));
        match caught {
            Some(h) if h.waiting > 0 => return Ok(()),
            None => return Err(format!("the gate holds no {hold}")),
            Some(h) if started.elapsed() >= timeout => {
                let from = hold.requests.pattern.from;
                return Err(format!(
                    "no {} request of the {from} reached the gate in {}s ({} caught and gone on): the {from} did not send one",
                    hold.requests.pattern,
                    timeout.as_secs(),
                    h.caught
                ));
            }
            Some(_) => tokio::time::sleep(POLL).await,
        }
    }
}

/// Wait until the object of `kind` named `name` in `namespace` is gone.
pub async fn gone(
    client: &Client,
    namespace: &str,
    kind: Kind,
    name: &str,
    timeout: Duration,
) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let present = match kind {
            Kind::ReplicaSet => Api::<ReplicaSet>::namespaced(client.clone(), namespace)
                .get_opt(name)
                .await
                .map(|o| o.is_some()),
            Kind::Pod => Api::<Pod>::namespaced(client.clone(), namespace)
                .get_opt(name)
                .await
                .map(|o| o.is_some()),
        }
        .map_err(|e| crate::api_error::describe(&e))?;
        if !present {
            return Ok(());
        }
        if started.elapsed() >= timeout {
            return Err(format!(
                "{}/{name} is still there after {}s",
                kind.resource_name(),
                timeout.as_secs()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
