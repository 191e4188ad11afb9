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

use crate::manifest::Object;
use crate::observed::{EventType, Observed};
use rsmc_spec::api::Kind;

/// The most unconfirmed writes a recording may have: every reading is judged, and there are
/// 2^n of them. A recording seldom has more than one (a controller killed with a request in
/// flight).
pub const MAX_UNCONFIRMED: usize = 6;

/// One unconfirmed write: the unconfirmed events of one object, which end its history.
#[derive(Clone, Debug)]
struct Unconfirmed {
    segment: usize,
    /// Indices of its events in the segment.
    events: Vec<usize>,
    kind: Kind,
    name: String,
    /// The object before the write (`None`: it did not exist).
    before: Option<Object>,
    /// What it is, for the verdict: `the deletion of pod/web-x2k9q`.
    what: String,
}

/// The recording read one way.
pub struct Reading {
    pub observed: Observed,
    /// How this reading takes each unconfirmed write, one line each.
    pub taken: Vec<String>,
}

/// Refuse a recording whose unconfirmed events this module cannot read (bad input).
pub fn check(observed: &Observed) -> Result<(), String> {
    unconfirmed(observed).map(|_| ())
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

/// The recording's unconfirmed writes, checked: each object's unconfirmed events end its
/// history, in one segment, and every later settle point lists the object as they leave it.
fn unconfirmed(observed: &Observed) -> Result<Vec<Unconfirmed>, String> {
    let mut out: Vec<Unconfirmed> = Vec::new();
    let events = |k: usize| observed.segments[k].events.as_deref().unwrap_or(&[]);
    for k in 0..observed.segments.len() {
        for (j, e) in events(k).iter().enumerate() {
            let (kind, name) = (e.object.resource(), e.object.name());
            let same = |w: &&mut Unconfirmed| w.kind == kind && w.name == name;
            let at = format!("segments[{k}].events[{j}]");
            if let Some(w) = out.iter_mut().find(same) {
                if !e.unconfirmed || w.segment != k {
                    return Err(format!(
                        "{at}: {} is written after segments[{}].events[{}], which is unconfirmed: a later write shows whether that one was committed, so it must not be marked unconfirmed",
                        e.object.describe(),
                        w.segment,
                        w.events[0]
                    ));
                }
                w.events.push(j);
                continue;
            }
            if !e.unconfirmed {
                continue;
            }
            let earlier = events(k)[..j]
                .iter()
                .rev()
                .find(|x| x.object.resource() == kind && x.object.name() == name);
            let before = match earlier {
                Some(x) if x.event_type == EventType::Deleted => None,
                Some(x) => Some(x.object.clone()),
                None if k == 0 => None,
                None => observed.segments[k - 1].settled.get(kind, name),
            };
            if before.is_none() && e.event_type != EventType::Added {
                return Err(format!(
                    "{at}: unconfirmed {} of {}, which the trace does not show before it",
                    event_word(e.event_type),
                    e.object.describe()
                ));
            }
            out.push(Unconfirmed {
                segment: k,
                events: vec![j],
                kind,
                name: name.to_string(),
                before,
                what: String::new(),
            });
        }
    }
    if out.len() > MAX_UNCONFIRMED {
        return Err(format!(
            "{} writes are unconfirmed; the oracle judges every reading of them (each committed or not) and reads at most {MAX_UNCONFIRMED}",
            out.len()
        ));
    }
    for w in &mut out {
        let written = events(w.segment);
        let first = &written[w.events[0]];
        let last = &written[*w.events.last().expect("a write has events")];
        w.what = match (first.event_type, last.event_type) {
            (_, EventType::Deleted) => format!("the deletion of {}", first.object.describe()),
            (EventType::Added, _) => format!("the creation of {}", first.object.describe()),
            _ => format!("a write to {}", first.object.describe()),
        };
        let gone = last.event_type == EventType::Deleted;
        for (k, segment) in observed.segments.iter().enumerate().skip(w.segment) {
            let listed = segment.settled.get(w.kind, &w.name).is_some();
            if listed == gone {
                return Err(format!(
                    "segments[{k}].settled: {} {} listed, but {} is unconfirmed: the settle points after it list objects as it leaves them",
                    first.object.describe(),
                    if listed { "is" } else { "is not" },
                    w.what
                ));
            }
        }
    }
    Ok(out)
}

fn event_word(t: EventType) -> &'static str {
    match t {
        EventType::Added => "creation",
        EventType::Modified => "change",
        EventType::Deleted => "deletion",
    }
}
