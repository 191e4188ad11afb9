//! What a kube-controller-manager's work queues say: whether a controller has work waiting
//! or in hand, the hidden state that a settle point otherwise waits out with its quiet
//! window ([`crate::settle`]).
//!
//! client-go's queue counts each step as it happens (k8s.io/client-go/util/workqueue,
//! queue.go `Add`, `Get`, `Done`; metrics.go `defaultQueueMetrics`), and the controller
//! manager serves the counts on `/metrics`:
//! - `workqueue_depth`: items added and not yet taken (an item added again while it waits
//!   is not counted twice, and one added while in hand waits until it is done);
//! - `workqueue_queue_duration_seconds_count`: items taken (`Get`), one each;
//! - `workqueue_work_duration_seconds_count`: items finished (`Done`), one each.
//!
//! So a queue is idle when nothing waits and every item taken is done. What the counts do
//! not show is an item put back for later: a sync that failed is re-added after a backoff
//! (`AddRateLimited`, counted in `workqueue_retries_total`), and until the backoff ends it is
//! in no other count. The retries are not used: the v1.37 controller retries after nearly every
//! write of its own (its consistency check, KEP-5647, fails the sync until the informer has
//! seen the write), and the event that ends such a wait queues the ReplicaSet again by
//! itself. A retry that no event brings back is one after a request that failed, which the
//! event gate sees ([`crate::event_gate::GateStatus::failed`]). (`workqueue_unfinished_work_seconds`
//! is only refreshed every 500 ms, `updateUnfinishedWorkLoop`, so it is not used either.)

use crate::control_plane::components::{KCM_GC, KCM_REPLICASET};
use crate::control_plane::state::Metrics;
use crate::control_plane::LocalCluster;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::collections::BTreeMap;
use std::time::Duration;

/// The queues of each controller manager whose work decides a settle point.
fn queues_of(component: &str) -> Option<&'static [&'static str]> {
    match component {
        // pkg/controller/replicaset/replica_set.go, `NewBaseController`: the queue is named
        // after the controller's kind, lowercase.
        KCM_REPLICASET => Some(&["replicaset"]),
        // pkg/controller/garbagecollector: the graph builder's queue of informer events, and
        // the collector's two queues of owners and dependents to act on.
        KCM_GC => Some(&[
            "garbage_collector_graph_changes",
            "garbage_collector_attempt_to_delete",
            "garbage_collector_attempt_to_orphan",
        ]),
        _ => None,
    }
}

/// One queue's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub depth: u64,
    pub taken: u64,
    pub done: u64,
}

impl Counts {
    /// Nothing waits and nothing is in hand.
    pub fn idle(&self) -> bool {
        self.depth == 0 && self.taken == self.done
    }
}

/// The work queues' counts in a Prometheus text exposition, by queue name.
pub fn parse(text: &str) -> BTreeMap<String, Counts> {
    let mut out: BTreeMap<String, Counts> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((metric, rest)) = line.split_once('{') else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once('}') else {
            continue;
        };
        let Some(name) = labels.split(',').find_map(|l| {
            l.trim()
                .strip_prefix("name=\"")
                .and_then(|v| v.strip_suffix('"'))
        }) else {
            continue;
        };
        let Some(value) = value.trim().parse::<f64>().ok().filter(|v| *v >= 0.0) else {
            continue;
        };
        if !matches!(
            metric,
            "workqueue_depth"
                | "workqueue_queue_duration_seconds_count"
                | "workqueue_work_duration_seconds_count"
        ) {
            continue;
        }
        let counts = out.entry(name.to_string()).or_default();
        match metric {
            "workqueue_depth" => counts.depth = value as u64,
            "workqueue_queue_duration_seconds_count" => counts.taken = value as u64,
            "workqueue_work_duration_seconds_count" => counts.done = value as u64,
            _ => {}
        }
    }
    out
}

/// What a reading of a controller's queues says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// Nothing waits and nothing is in hand.
    Idle,
    /// Work waits or is in hand: why, for a settle that times out.
    Busy(String),
    /// The queues cannot be read (the controller is starting, or serves no such queue).
    Unknown(String),
}

/// A controller manager whose queues a settle point reads.
pub struct Probe {
    component: String,
    url: Uri,
    queues: &'static [&'static str],
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Empty<Bytes>>,
}

impl Probe {
    /// A probe of `component` (`kcm-replicaset` or `kcm-gc`) serving at `metrics`; `None`
    /// for a component whose queues do not decide a settle point.
    pub fn new(component: &str, metrics: &Metrics) -> Result<Option<Probe>, String> {
        let Some(queues) = queues_of(component) else {
            return Ok(None);
        };
        let url = metrics
            .url
            .parse()
            .map_err(|e| format!("{component}'s metrics URL {}: {e}", metrics.url))?;
        let connector = crate::tls::connector(&metrics.cert)?;
        Ok(Some(Probe {
            component: component.to_string(),
            url,
            queues,
            client: Client::builder(TokioExecutor::new()).build(connector),
        }))
    }

    /// A probe of each controller manager of `cluster` whose queues decide a settle point
    /// and that serves its metrics.
    pub fn of_cluster(cluster: &LocalCluster) -> Result<Vec<Probe>, String> {
        let running = cluster.running_controllers().map_err(|e| e.to_string())?;
        let mut probes = Vec::new();
        for (name, metrics) in running {
            if let Some(m) = metrics {
                probes.extend(Probe::new(&name, &m)?);
            }
        }
        Ok(probes)
    }

    pub fn component(&self) -> &str {
        &self.component
    }

    /// Read the queues now.
    pub async fn read(&self) -> Reading {
        let text = match self.fetch().await {
            Ok(t) => t,
            Err(e) => return Reading::Unknown(format!("{}: {e}", self.component)),
        };
        let all = parse(&text);
        for name in self.queues {
            let Some(c) = all.get(*name) else {
                return Reading::Unknown(format!(
                    "{} serves no counts of its queue {name}",
                    self.component
                ));
            };
            if !c.idle() {
                return Reading::Busy(format!(
                    "{}'s queue {name} has {} item(s) waiting and {} in hand",
                    self.component,
                    c.depth,
                    c.taken.saturating_sub(c.done)
                ));
            }
        }
        Reading::Idle
    }

    async fn fetch(&self) -> Result<String, String> {
        let request = hyper::Request::get(self.url.clone())
            .body(Empty::<Bytes>::new())
            .map_err(|e| e.to_string())?;
        let response = tokio::time::timeout(Duration::from_secs(5), self.client.request(request))
            .await
            .map_err(|_| format!("{} did not answer within 5 s", self.url))?
            .map_err(|e| format!("{}: {e}", self.url))?;
        if !response.status().is_success() {
            return Err(format!("{}: HTTP {}", self.url, response.status()));
        }
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{}: {e}", self.url))?
            .to_bytes();
        Ok(String::from_utf8_lossy(&body).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP workqueue_depth [ALPHA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="replicaset"} 1
workqueue_depth{name="garbage_collector_graph_changes"} 0
workqueue_queue_duration_seconds_bucket{name="replicaset",le="+Inf"} 7
workqueue_queue_duration_seconds_count{name="replicaset"} 7
workqueue_queue_duration_seconds_count{name="garbage_collector_graph_changes"} 193
workqueue_work_duration_seconds_sum{name="replicaset"} 0.25
workqueue_work_duration_seconds_count{name="replicaset"} 6
workqueue_work_duration_seconds_count{name="garbage_collector_graph_changes"} 193
workqueue_retries_total{name="replicaset"} 3
workqueue_adds_total{name="replicaset"} 8
"#;

    #[test]
    fn counts_are_read_per_queue_and_idle_means_nothing_waits_or_is_in_hand() {
        let q = parse(TEXT);
        assert_eq!(
            q["replicaset"],
            Counts {
                depth: 1,
                taken: 7,
                done: 6,
            }
        );
        assert!(!q["replicaset"].idle());
        assert!(q["garbage_collector_graph_changes"].idle());
        let in_hand = Counts {
            depth: 0,
            taken: 7,
            done: 6,
        };
        assert!(!in_hand.idle());
        assert!(!q.contains_key("DynamicCABundle"));
    }
}
