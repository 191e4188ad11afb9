//! The readings of a recording that does not say whether some writes were committed.
//!
//! A write whose sender got no answer may have been committed all the same: the API server
//! answers 504 when the client's connection is cut (its request context ends) while the
//! storage write it started goes on and commits. The runner's controller restart does
//! exactly that to a request in flight: on v1.35.4 the built-in controller's DELETE of a
//! surplus pod answered 504 as it was killed, and the pod was gone. When nothing later in
//! the recording shows the write's outcome (a later write to the object, a 404 for it), the
//! recording does not say, and the import does not guess: it writes the write's events
//! marked `unconfirmed` ([`crate::observed`]), as if committed.
//!
//! The oracle then judges each reading: every combination of those writes committed or not.
//! A write read as not committed loses its events, and its object is as it was before them at
//! every later settle point (its events are the last of its object, so no later event needs
//! changing). The first reading a model run produces is the verdict, which names how it read
//! each write; when none is, the trace as written is judged and the verdict says so.

use crate::observed::{unconfirmed, Observed, Unconfirmed};

/// The recording read one way.
pub struct Reading {
    pub observed: Observed,
    /// How this reading takes each unconfirmed write, one line each.
    pub taken: Vec<String>,
}

/// Every reading of `observed`, the trace as written first, then with one write read as not
/// committed, then two, …; empty when every write is confirmed.
pub fn readings(observed: &Observed) -> Result<Vec<Reading>, String> {
    let writes = unconfirmed(observed)?;
    if writes.is_empty() {
        return Ok(Vec::new());
    }
    let mut masks: Vec<u32> = (0..1u32 << writes.len()).collect();
    masks.sort_by_key(|m| (m.count_ones(), *m));
    Ok(masks
        .into_iter()
        .map(|mask| {
            let dropped: Vec<&Unconfirmed> = (0..writes.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| &writes[i])
                .collect();
            let taken = writes
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let how = if mask & (1 << i) != 0 {
                        "not committed"
                    } else {
                        "committed"
                    };
                    format!("{}: read as {how}", w.what)
                })
                .collect();
            Reading {
                observed: without(observed, &dropped),
                taken,
            }
        })
        .collect())
}

/// `observed` with the `dropped` writes read as never committed.
fn without(observed: &Observed, dropped: &[&Unconfirmed]) -> Observed {
    let mut out = observed.clone();
    for (k, segment) in out.segments.iter_mut().enumerate() {
        if let Some(events) = segment.events.as_mut() {
            let mut j = 0;
            events.retain(|_| {
                let keep = !dropped
                    .iter()
                    .any(|w| w.segment == k && w.events.contains(&j));
                j += 1;
                keep
            });
        }
        for w in dropped.iter().filter(|w| w.segment <= k) {
            segment.settled.remove(w.kind, &w.name);
            if let Some(object) = &w.before {
                segment.settled.insert(object.clone());
            }
        }
    }
    out
}
