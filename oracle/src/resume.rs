//! Judging on after a divergence: the next segment starts from the cluster's objects.
//!
//! A segment that diverges leaves no model run to carry to the next settle point, and a
//! controller author would learn of the first difference only. Every later segment is judged
//! instead from the objects the cluster showed at the settle point before it, with the
//! controller's memory as after a restart or idle there (`RsModel::resumed` says why those
//! cover what a correct controller can remember at a settle point). A verdict reached so says
//! so ([`Resumed`]); it can only be more lenient than one carried through the model's own
//! runs (more start states, the objects' ages unknown, no orphan promised before the settle
//! point), so a divergence found after a resume is one no correct controller makes from the
//! cluster's objects there, and a point that conforms after a resume says no more than that.

use crate::binding::Binding;
use crate::observed::Snapshot;
use rsmc_spec::model::{RsModel, State};
use serde::Serialize;

/// How a settle point was judged after an earlier one diverged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resumed {
    /// The settle point (from 1) whose objects the segment started from.
    pub from: usize,
    /// What the controller was taken to remember there.
    pub memory: &'static str,
}

/// The words of [`Resumed::memory`].
pub const MEMORY: &str = "idle or just restarted";

/// The start states of the segment after the settle step `settle` (a script index), from the
/// cluster's `settled` objects there, each with the renaming that makes every one of them
/// itself; `Err` when the model cannot resume there, and why.
pub fn starts(
    model: &RsModel,
    settled: &Snapshot,
    settle: usize,
) -> Result<Vec<(State, Binding)>, String> {
    let states = model.resumed(&settled.replicasets, &settled.pods, settle)?;
    let mut identity = Binding::default();
    for rs in settled.replicasets.values() {
        identity.bind_uid(rs.meta.uid, rs.meta.uid);
    }
    for pod in settled.pods.values() {
        identity.bind_uid(pod.meta.uid, pod.meta.uid);
        if pod.meta.generate_name.is_some() {
            identity.bind_name(&pod.meta.name, &pod.meta.name);
        }
    }
    Ok(states.into_iter().map(|s| (s, identity.clone())).collect())
}
