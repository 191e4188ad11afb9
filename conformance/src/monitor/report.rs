//! What the monitor tells its user: alarms and watch gaps on stdout (a text line each, or a
//! JSON object per line), a status line on stderr.

use serde::Serialize;
use std::time::SystemTime;

/// A write that breaks a safety property.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Alarm {
    /// The property's name as the spec states it (`rsmc_spec::model::properties`).
    pub property: &'static str,
    pub namespace: String,
    /// `pod/NAME` or `rs/NAME`.
    pub object: String,
    /// What the write did, in words.
    pub detail: String,
    /// The events involved, oldest first, as `kubectl get --watch --output-watch-events`
    /// would list them (shortened to what the judgment read).
    pub evidence: Vec<String>,
    /// When the monitor raised it (RFC 3339, UTC).
    pub raised_at: String,
    /// When the API server stamped the faulty write, where the object says (a creation or
    /// deletion timestamp, a managedFields time; whole seconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written_at: Option<String>,
}

/// A watch that broke and came back.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Gap {
    /// `pods`, `replicasets` or `events`.
    pub watch: &'static str,
    pub broken_at: String,
    pub seconds: f64,
    /// Whether the view was re-listed (changes during the gap are then not judged), or the
    /// watch resumed from its last resourceVersion (nothing was missed).
    pub relisted: bool,
    pub error: String,
    /// Objects whose listed state differs from the view's (re-listed gaps only).
    pub changed_in_gap: usize,
}

/// The oracle's verdict on a namespace's scenario so far (`--judge`, [`super::judging`]).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Judgement {
    pub namespace: String,
    pub judged_at: String,
    /// `None`: not judged (`detail` says why).
    pub conforms: Option<bool>,
    /// The namespace's deletion began: its last judgement.
    pub last: bool,
    /// The scenario imported: its user steps and settle points.
    pub steps: usize,
    pub settle_points: usize,
    /// How long the import and the oracle took.
    pub seconds: f64,
    /// The oracle's verdict in words when it does not conform, or why there is none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The verdict as `rsmc oracle --json` gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<serde_json::Value>,
}

/// Something to tell the user.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    Alarm(Alarm),
    Gap(Gap),
    Judgement(Judgement),
}

impl Report {
    /// One line of text (an alarm's evidence on indented lines after it).
    pub fn text(&self) -> String {
        match self {
            Report::Alarm(a) => {
                let mut out = format!(
                    "ALARM {} [{}] namespace {} {}: {}",
                    a.raised_at, a.property, a.namespace, a.object, a.detail
                );
                for e in &a.evidence {
                    out.push_str("\n    ");
                    out.push_str(e);
                }
                out
            }
            Report::Gap(g) => {
                let after = if g.relisted {
                    format!(
                        "re-listed after {:.1} s; changes during the gap are not judged ({} objects differed)",
                        g.seconds, g.changed_in_gap
                    )
                } else {
                    format!(
                        "resumed after {:.1} s from its last resourceVersion; nothing was missed",
                        g.seconds
                    )
                };
                format!(
                    "GAP watch of {} broken at {} ({}), {after}",
                    g.watch, g.broken_at, g.error
                )
            }
            Report::Judgement(j) => {
                let what = match j.conforms {
                    Some(true) => "conforms".to_string(),
                    Some(false) => "DOES NOT CONFORM".to_string(),
                    None => "not judged".to_string(),
                };
                let mut out = format!(
                    "JUDGED {} namespace {}{}: {what}",
                    j.judged_at,
                    j.namespace,
                    if j.last {
                        " (deleted: last judgement)"
                    } else {
                        ""
                    }
                );
                if j.conforms.is_some() {
                    out.push_str(&format!(
                        " ({} steps, {} settle points; {:.2} s)",
                        j.steps, j.settle_points, j.seconds
                    ));
                }
                for line in j.detail.lines() {
                    out.push_str("\n    ");
                    out.push_str(line);
                }
                out
            }
        }
    }

    /// One JSON object.
    pub fn json(&self) -> String {
        let value = match self {
            Report::Alarm(a) => serde_json::json!({ "alarm": a }),
            Report::Gap(g) => serde_json::json!({ "gap": g }),
            Report::Judgement(j) => serde_json::json!({ "judgement": j }),
        };
        value.to_string()
    }
}

/// The monitor's health, for the periodic status line.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Status {
    /// Milliseconds since the Unix epoch.
    pub time_ms: u128,
    pub pods: usize,
    pub replicasets: usize,
    pub namespaces: usize,
    /// Watch changes judged since the start.
    pub events: u64,
    pub events_per_second: f64,
    /// The newest resourceVersion judged.
    pub resource_version: u64,
    /// Changes waiting for the other watch ([`super::sequence`]).
    pub held: usize,
    pub alarms: u64,
    pub gaps: u64,
    pub rss_bytes: u64,
    /// Judgements (`--judge`) under way.
    pub judging: usize,
}

impl Status {
    pub fn text(&self) -> String {
        format!(
            "rsmc monitor: {} pods, {} replicasets in {} namespaces; {} events ({:.1}/s); {} alarms, {} gaps; {} MiB",
            self.pods,
            self.replicasets,
            self.namespaces,
            self.events,
            self.events_per_second,
            self.alarms,
            self.gaps,
            self.rss_bytes / (1 << 20)
        ) + &match self.judging {
            0 => String::new(),
            n => format!("; judging {n} namespaces"),
        }
    }
}

/// `t` as RFC 3339 in UTC, to the millisecond.
pub fn rfc3339(t: SystemTime) -> String {
    let ms = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    k8s_openapi::jiff::Timestamp::from_millisecond(ms)
        .map(|ts| format!("{ts:.3}"))
        .unwrap_or_else(|_| ms.to_string())
}
