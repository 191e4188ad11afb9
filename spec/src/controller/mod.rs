//! The ReplicaSet controller: its memory (queue, expectations), its event handlers, and its
//! sync with the pieces it is made of (claim, ranking, slow start, status).

pub mod claim;
pub mod consistency;
pub mod expectations;
pub mod handlers;
pub mod queue;
pub mod ranking;
pub mod slow_start;
pub mod status;
pub mod sync;

pub use claim::Claim;
pub use expectations::{Expectation, Expectations};
pub use handlers::Handlers;
pub use queue::WorkQueue;
pub use sync::{begin, AtGate, Begin, Pending, SyncTask, SyncView};
