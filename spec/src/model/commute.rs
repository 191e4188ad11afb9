//! Moves that commute with everything another actor can do first, so that a search for one
//! run may take them at once instead of trying every place they could go.
//!
//! The oracle's witness search (`oracle/src/judge/search/witness.rs`) proves a recording wrong by trying
//! every interleaving that follows it. Most of those interleavings differ only in when an
//! informer caught up, and for the garbage collector's informer that makes no difference at
//! all while the collector has nothing to do: its view is read by nothing but its own work
//! items, and there are none. Taking its deliveries first then loses no run (a partial-order
//! reduction with a persistent set: the deliveries of the collector's informer, when
//! [`RsModel::gc_deliveries_go_first`] holds).
//!
//! Why it is sound. Let `d` be an enabled delivery to the collector in `s`, and π any run
//! from `s` in which `d` is not yet taken. Every move `a` of π commutes with `d`:
//! - `d` changes only the collector's position (`State::gc`); what reads that position is the
//!   collector's work items ([`crate::gc::work_items`] of its view) and the `Await` of a
//!   request it holds, the lag bound ([`State::writes_allowed`]), and the log's trimming.
//!   Before `d`, the view is the one in `s` (only the collector's own deliveries and relists
//!   move it), which gives rise to no work item, so no move of π is the collector's. The lag
//!   bound only ever allows more with `d` taken (the collector is one event less behind),
//!   as long as no released backlog is draining — hence none may be, nor be started by a
//!   step still to come. Trimming keeps every entry a position in use still needs, so it is
//!   the same whichever goes first.
//! - `a` does not disable `d` (only a hold of the collector's events or a relist would, and
//!   no step still to come is one) and does not change what `d` delivers (the log only
//!   grows at its end; the entry `d` delivers is already there).
//!
//! So `d · π` exists and reaches the state π reaches with `d` taken, with the same writes in
//! the same order: a recorded write π makes is made, and the run still matches every settle
//! point (where everything has been delivered anyway, `d` included). No cycle can put off a
//! delivery forever (the ignoring problem of partial-order reduction): a delivery moves the
//! collector's position forward, and nothing moves it back.

use super::action::Action;
use super::state::{Positions, State};
use super::RsModel;
use crate::gc;

impl RsModel {
    /// Whether, in `s`, the garbage collector's pending watch deliveries commute with every
    /// move any other actor can make before them (see the module's notes): the collector's
    /// view gives rise to no work item, no released backlog is draining, and no step still
    /// to come holds or releases watch events or relists an informer. Only a scripted run
    /// has steps to come; a free model check (faults from budgets) never asks.
    pub fn gc_deliveries_go_first(&self, s: &State) -> bool {
        let Some(script) = &self.script else {
            return false;
        };
        let steps_touch_informers = script.moves_to_come(&s.script).any(|a| {
            matches!(
                a,
                Action::HoldEvents { .. } | Action::ReleaseEvents { .. } | Action::Relist { .. }
            )
        });
        if steps_touch_informers || s.script.draining != Positions::default() {
            return false;
        }
        let (rs, pods) = s.views(s.gc);
        gc::work_items(&rs, &pods, &s.api.others).is_empty()
    }
}
