//! Starting one component of a local control plane recorded in `cluster.json`, and waiting
//! until it is ready: what bringing a cluster up does for each component in turn, and what
//! restarting one (the controller manager, for a scenario's restart step) does alone.

use super::error::ClusterError;
use super::process::{self, Started};
use super::readiness;
use super::state::{ClusterState, Layout};

/// Starts the component `name` of `state` and records its pid.
pub(crate) fn spawn(
    layout: &Layout,
    state: &mut ClusterState,
    name: &str,
    progress: &dyn Fn(&str),
) -> Result<Started, ClusterError> {
    let component = state
        .component_mut(name)
        .ok_or_else(|| ClusterError::UnknownComponent(format!("no component {name:?}")))?;
    progress(&format!("starting {name}"));
    let started = process::spawn_detached(
        name,
        &component.command,
        &component.log,
        &layout.pid_file(name),
    )?;
    component.pid = Some(started.pid);
    state.save(layout)?;
    Ok(started)
}

/// Waits until the component `name` of `state`, just started, is ready.
pub(crate) fn wait(
    state: &ClusterState,
    name: &str,
    started: Started,
    progress: &dyn Fn(&str),
) -> Result<(), ClusterError> {
    let component = state
        .component(name)
        .ok_or_else(|| ClusterError::UnknownComponent(format!("no component {name:?}")))?;
    readiness::wait_ready(
        name,
        started,
        &component.readiness,
        &component.log,
        progress,
    )
}
