//! Slow-start batching of creations.
//!
//! pkg/controller/replicaset/replica_set.go `slowStartBatch`: creations go out in batches of
//! 1, 2, 4, … (`controller.SlowStartInitialBatchSize` = 1), each batch in parallel; after a
//! batch with any failure no further batch starts, so a systematic failure (quota, admission)
//! costs one request per batch size instead of `diff` requests.

/// The initial batch size (`SlowStartInitialBatchSize`).
pub const INITIAL_BATCH_SIZE: u32 = 1;

/// The sizes of the batches `slowStartBatch(count, initial)` issues when nothing fails.
pub fn batch_sizes(count: u32, initial: u32) -> Vec<u32> {
    let mut sizes = Vec::new();
    let mut remaining = count;
    let mut batch = remaining.min(initial);
    while batch > 0 {
        sizes.push(batch);
        remaining -= batch;
        batch = (2 * batch).min(remaining);
    }
    sizes
}

/// Runs `slowStartBatch` over `outcomes` (one entry per attempted call, `true` = success) and
/// returns `(successes, attempted)`: what the real function returns and how many calls it made.
/// Used by the tests; the model steps through the same batches one request at a time.
pub fn run(count: u32, initial: u32, mut call: impl FnMut() -> bool) -> (u32, u32) {
    let (mut successes, mut attempted) = (0, 0);
    for size in batch_sizes(count, initial) {
        let ok = (0..size).filter(|_| call()).count() as u32;
        attempted += size;
        successes += ok;
        if ok < size {
            break;
        }
    }
    (successes, attempted)
}
