//! Putting the pod and ReplicaSet watches back into one order.
//!
//! Each watch delivers its own type in the order the API server committed the changes, but
//! two watches are not ordered against each other: a pod the controller created for a
//! scale-up can arrive before the ReplicaSet's new `spec.replicas`, and judged in that order
//! it would read as over-creation. Both types share etcd's revision counter (as the recorder
//! relies on too), so changes are released in resourceVersion order: a change is released
//! once the other watch has delivered something at least as new (nothing older can still come
//! from it), or after [`HOLD`] when the other watch is idle. A watch that has not begun does
//! not hold the other back.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// How long a change waits for the other watch to catch up. The API server sends both from
/// the same watch cache, so they are milliseconds apart on a healthy server.
pub const HOLD: Duration = Duration::from_millis(500);

/// Which watch a change came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    Pods = 0,
    ReplicaSets = 1,
}

impl Stream {
    fn other(self) -> Stream {
        match self {
            Stream::Pods => Stream::ReplicaSets,
            Stream::ReplicaSets => Stream::Pods,
        }
    }
}

struct Held<T> {
    rv: u64,
    seq: u64,
    stream: Stream,
    arrived: Instant,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.rv, self.seq) == (other.rv, other.seq)
    }
}
impl<T> Eq for Held<T> {}
impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.rv, self.seq).cmp(&(other.rv, other.seq))
    }
}

/// Changes of both watches, released in resourceVersion order.
pub struct Sequencer<T> {
    heap: BinaryHeap<Reverse<Held<T>>>,
    /// The newest resourceVersion each watch has delivered (0: none yet).
    seen: [u64; 2],
    seq: u64,
}

impl<T> Default for Sequencer<T> {
    fn default() -> Self {
        Sequencer {
            heap: BinaryHeap::new(),
            seen: [0, 0],
            seq: 0,
        }
    }
}

impl<T> Sequencer<T> {
    /// A change of `stream` at `rv`, arrived `now`.
    pub fn push(&mut self, stream: Stream, rv: u64, now: Instant, item: T) {
        let seen = &mut self.seen[stream as usize];
        *seen = (*seen).max(rv);
        self.seq += 1;
        self.heap.push(Reverse(Held {
            rv,
            seq: self.seq,
            stream,
            arrived: now,
            item,
        }));
    }

    /// Changes that may be judged now, oldest first.
    pub fn ready(&mut self, now: Instant) -> Vec<T> {
        let mut out = Vec::new();
        while let Some(Reverse(top)) = self.heap.peek() {
            let other = self.seen[top.stream.other() as usize];
            let caught_up = other == 0 || other >= top.rv;
            if !caught_up && now.duration_since(top.arrived) < HOLD {
                break;
            }
            if let Some(Reverse(held)) = self.heap.pop() {
                out.push(held.item);
            }
        }
        out
    }

    /// Every change held, oldest first (before a re-list replaces the view).
    pub fn drain(&mut self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.heap.len());
        while let Some(Reverse(held)) = self.heap.pop() {
            out.push(held.item);
        }
        out
    }

    /// How many changes are held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_waits_for_the_replicaset_change_before_it() {
        let t = Instant::now();
        let mut s = Sequencer::default();
        s.push(Stream::ReplicaSets, 10, t, "rs@10");
        s.push(Stream::Pods, 12, t, "pod@12");
        // The ReplicaSet watch has only reached 10: the pod at 12 waits.
        assert_eq!(s.ready(t), vec!["rs@10"]);
        s.push(Stream::ReplicaSets, 11, t, "rs@11");
        s.push(Stream::ReplicaSets, 13, t, "rs@13");
        assert_eq!(s.ready(t), vec!["rs@11", "pod@12"]);
        // rs@13 waits for the pods' watch, until the hold is over.
        assert!(s.ready(t + HOLD / 2).is_empty());
        assert_eq!(s.ready(t + HOLD), vec!["rs@13"]);
    }
}
