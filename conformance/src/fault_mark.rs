//! The mark a run leaves in the cluster where it forces a fault (a controller restarted or
//! handed over, its watch events held or released), so that a recording of the API server —
//! an audit log, kubectl watches — shows it: `rsmc import` puts the fault step there
//! ([`rsmc_oracle::import::entry::FAULT_MARK_PREFIX`]). Without it, an imported fault run
//! lacks the fault that explains what the controller did, and does not conform.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::Client;
use rsmc_oracle::import::entry::{FAULT_MARK_LABEL, FAULT_MARK_PREFIX};
use rsmc_oracle::scenario::Step;
use std::collections::BTreeMap;

/// Create the mark of the scenario's step `index` (0-based), a fault, in `namespace`: the
/// ConfigMap `rsmc-fault-N` (N the step's 1-based number) whose `data.step` is the step,
/// labelled [`FAULT_MARK_LABEL`].
pub async fn leave(
    client: &Client,
    namespace: &str,
    index: usize,
    step: &Step,
) -> Result<(), String> {
    let mark = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{FAULT_MARK_PREFIX}-{}", index + 1)),
            labels: Some(BTreeMap::from([(
                FAULT_MARK_LABEL.0.to_string(),
                FAULT_MARK_LABEL.1.to_string(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("step".to_string(), step.to_yaml())])),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &mark)
        .await
        .map(|_| ())
        .map_err(|e| {
            format!(
                "cannot leave the fault's mark (a ConfigMap) for recordings: {}",
                crate::api_error::describe(&e)
            )
        })
}
