//! The witness search: whether one run of the model produces everything a recording shows,
//! every recorded write in order and every settle point's objects.
//!
//! This is what decides a verdict ([`super`] runs it first). The recording fixes every write
//! and leaves open only the steps that write nothing (watch deliveries, queue picks, the
//! start of a sync, a live GET), so the search follows the recording instead of every
//! interleaving, and its cost grows with the recording, not with the product of the
//! cluster's sizes.
//!
//! - [`witness`]: the search itself, depth first across every segment at once, internal
//!   steps in the order a real cluster most likely took them. Entry points
//!   [`witness::search`] and [`witness::search_from`] (from given start states, for a
//!   segment judged after a divergence).
//! - [`validate`]: one node's successors, a write allowed only where it is exactly the next
//!   recorded one; also the trace level's own exhaustive search over one segment
//!   ([`validate::validate`]).
//! - `held`: which watch deliveries to hold back so that a sync can read the stale cache the
//!   recording shows.
//! - `doomed` and `picks`: choices (a scale-down's victims, the next claim patch or delete)
//!   the rest of the recording rules out, so the search need not follow them.

mod doomed;
mod held;
mod picks;
pub mod validate;
pub mod witness;
