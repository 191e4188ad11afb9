//! The marks a run leaves in the cluster, so that a recording of the API server — an audit
//! log, kubectl watches, `rsmc monitor` — shows what it cannot see otherwise:
//! - where the run forced a fault (a controller restarted or handed over, its watch events
//!   or requests held or released): `rsmc import` puts the fault step there
//!   ([`rsmc_oracle::import::entry::FAULT_MARK_PREFIX`]). Without it, an imported fault run
//!   lacks the fault that explains what the controller did, and does not conform;
//! - where the run found a settle point: the import ends a segment there
//!   ([`rsmc_oracle::import::entry::MARK_PREFIX`]) instead of guessing settle points from
//!   quiet gaps. A settle point found by reading the controllers' work queues
//!   (`--idle-window`) leaves no gap of the quiet window in the recording, and on a loaded
//!   machine a restarted controller may be silent for longer than that while it starts
//!   (seen on v1.20.2): the guess cuts a segment where the run did not settle.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::Client;
use rsmc_oracle::import::entry::{FAULT_MARK_PREFIX, MARK_LABEL, MARK_PREFIX};
use rsmc_oracle::scenario::Step;
use std::collections::BTreeMap;

/// What a mark says.
pub enum Mark<'a> {
    /// The fault `step` is forced here.
    Fault(&'a Step),
    /// The run found the namespace settled here.
    Settle,
}

/// Leave the mark of the scenario's step `index` (0-based) in `namespace`: a ConfigMap named
/// for the mark's kind and the step's 1-based number (`rsmc-fault-3`, `rsmc-settle-5`) and
/// labelled [`MARK_LABEL`] with the kind; a fault mark's `data.step` is the step.
pub async fn leave(
    client: &Client,
    namespace: &str,
    index: usize,
    mark: Mark<'_>,
) -> Result<(), String> {
    let (prefix, kind, data) = match mark {
        Mark::Fault(step) => (
            FAULT_MARK_PREFIX,
            MARK_LABEL.fault,
            Some(BTreeMap::from([("step".to_string(), step.to_yaml())])),
        ),
        Mark::Settle => (MARK_PREFIX, MARK_LABEL.settle, None),
    };
    let configmap = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{prefix}-{}", index + 1)),
            labels: Some(BTreeMap::from([(
                MARK_LABEL.key.to_string(),
                kind.to_string(),
            )])),
            ..ObjectMeta::default()
        },
        data,
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &configmap)
        .await
        .map(|_| ())
        .map_err(|e| {
            format!(
                "cannot leave the {kind} mark (a ConfigMap) for recordings: {}",
                crate::api_error::describe(&e)
            )
        })
}
