//! `rsmc bench --monitor`: `rsmc monitor` against a churning namespace.
//!
//! The load generator is rsmc's own: it creates ReplicaSets of 50 pods until `--pods` pods
//! exist, then for `--seconds` sends `--rate` writes per second, each one of: delete a pod of
//! a ReplicaSet (the controller replaces it), relabel a pod with a label no selector reads,
//! create or delete a bare pod, scale a ReplicaSet by up to 5 either way. Every write is a
//! user's, so the monitor must stay silent: the run fails on any alarm. The monitor runs as
//! its own process (`rsmc monitor --output json --status-interval 0.1`), whose status lines
//! give the events it judged and the newest resourceVersion it judged; a write's lag is the
//! time from its answer to the first status line at or past its resourceVersion (so at most
//! 0.1 s too high). Peak memory is the monitor process's high-water mark (`VmHWM`).

use crate::exit;
use crate::BenchArgs;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde::Serialize;
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// Pods per ReplicaSet of the load.
const PER_REPLICASET: usize = 50;

#[derive(Serialize)]
struct Measured {
    release: String,
    machine: String,
    pods: usize,
    replicasets: usize,
    seconds: f64,
    writes: u64,
    writes_per_second: f64,
    failed_writes: u64,
    monitor_events: u64,
    monitor_events_per_second: f64,
    lag_p50_ms: u64,
    lag_p99_ms: u64,
    lag_max_ms: u64,
    lags_measured: usize,
    peak_rss_bytes: u64,
    alarms: usize,
}

/// Status lines of the monitor, as (time ms, newest resourceVersion, events judged).
type Statuses = Arc<Mutex<Vec<(u128, u64, u64)>>>;

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// A small deterministic generator (xorshift): the load is the same from run to run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

pub fn run(args: &BenchArgs) -> i32 {
    let kubeconfig = match &args.kubeconfig {
        Some(k) => k.clone(),
        None => {
            let dir = rsmc_conformance::control_plane::default_state_dir();
            match rsmc_conformance::control_plane::LocalCluster::attach(&dir) {
                Ok(c) => c.kubeconfig().to_path_buf(),
                Err(e) => {
                    eprintln!(
                        "error: {e} (start one with `rsmc cluster up`, or give --kubeconfig)"
                    );
                    return exit::BAD_INPUT;
                }
            }
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    match runtime.block_on(bench(args, &kubeconfig)) {
        Ok(m) => {
            let alarms = m.alarms;
            crate::output::print(args.json, &m, || print(&m));
            if alarms > 0 {
                exit::VIOLATION
            } else {
                exit::OK
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

fn print(m: &Measured) {
    println!(
        "rsmc bench --monitor: {} on {}; {} pods in {} ReplicaSets, {:.0} s of churn",
        m.release, m.machine, m.pods, m.replicasets, m.seconds
    );
    println!(
        "writes {} ({:.1}/s, {} refused); monitor judged {} events ({:.1}/s); lag p50 {} ms, p99 {} ms, max {} ms ({} writes); peak RSS {:.1} MiB; alarms {}",
        m.writes,
        m.writes_per_second,
        m.failed_writes,
        m.monitor_events,
        m.monitor_events_per_second,
        m.lag_p50_ms,
        m.lag_p99_ms,
        m.lag_max_ms,
        m.lags_measured,
        m.peak_rss_bytes as f64 / 1_048_576.0,
        m.alarms
    );
}

async fn client_of(kubeconfig: &std::path::Path) -> Result<Client, String> {
    let kc = kube::config::Kubeconfig::read_from(kubeconfig)
        .map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    Client::try_from(config).map_err(|e| e.to_string())
}

fn replicaset(name: &str, replicas: i32) -> apps::ReplicaSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}
            }
        }
    }))
    .unwrap_or_default()
}

fn bare_pod(name: &str) -> core::Pod {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bench-bare"}},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}
    }))
    .unwrap_or_default()
}

/// The resourceVersion a write was answered with.
fn rv_of(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<u64> {
    m.resource_version.as_deref()?.parse().ok()
}

async fn bench(args: &BenchArgs, kubeconfig: &std::path::Path) -> Result<Measured, String> {
    let client = client_of(kubeconfig).await?;
    let release = client
        .apiserver_version()
        .await
        .map_err(|e| format!("the cluster is unreachable: {e}"))?
        .git_version;
    let namespace = format!("rsmc-bench-{}", std::process::id());
    let namespaces: Api<core::Namespace> = Api::all(client.clone());
    let ns: core::Namespace = serde_json::from_value(json!({"metadata": {"name": namespace}}))
        .map_err(|e| e.to_string())?;
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .map_err(|e| format!("cannot create namespace {namespace}: {e}"))?;
    let result = measure(args, kubeconfig, &client, &namespace, release).await;
    let _ = namespaces
        .delete(&namespace, &DeleteParams::default())
        .await;
    result
}

async fn measure(
    args: &BenchArgs,
    kubeconfig: &std::path::Path,
    client: &Client,
    namespace: &str,
    release: String,
) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["monitor", "--output", "json", "--status-interval", "0.1"])
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--namespace", namespace])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start rsmc monitor: {e}"))?;
    let statuses: Statuses = Arc::default();
    let alarms: Arc<Mutex<Vec<String>>> = Arc::default();
    if let Some(err) = child.stderr.take() {
        let statuses = statuses.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                let s = &v["status"];
                if let (Some(t), Some(rv), Some(n)) = (
                    s["time_ms"].as_u64(),
                    s["resource_version"].as_u64(),
                    s["events"].as_u64(),
                ) {
                    if let Ok(mut all) = statuses.lock() {
                        all.push((t as u128, rv, n));
                    }
                }
            }
        });
    }
    if let Some(out) = child.stdout.take() {
        let alarms = alarms.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(mut all) = alarms.lock() {
                    all.push(line);
                }
            }
        });
    }
    let pid = child.id();
    let stop_monitor = |child: &mut std::process::Child| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGINT,
        );
        let _ = child.wait();
    };
    // The monitor is up once it gives its first status.
    let up = Instant::now();
    while statuses.lock().map(|s| s.is_empty()).unwrap_or(true) {
        if up.elapsed() > Duration::from_secs(30) {
            stop_monitor(&mut child);
            return Err("rsmc monitor gave no status within 30 s".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let outcome = churn(args, client, namespace).await;
    // Let the namespace be quiet for the monitor's quiet window, so statuses are judged too.
    tokio::time::sleep(Duration::from_secs(8)).await;
    let peak = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .unwrap_or(0)
        * 1024;
    stop_monitor(&mut child);
    let (writes, failed, churn_start, churn_end, written) = outcome?;
    let statuses = statuses.lock().map(|s| s.clone()).unwrap_or_default();
    let alarms = alarms.lock().map(|a| a.len()).unwrap_or(0);
    let events_at = |t: u128| {
        statuses
            .iter()
            .find(|(at, _, _)| *at >= t)
            .or(statuses.last())
            .map(|s| s.2)
            .unwrap_or(0)
    };
    let seconds = (churn_end - churn_start) as f64 / 1000.0;
    let judged = events_at(churn_end).saturating_sub(events_at(churn_start));
    let mut lags: Vec<u64> = written
        .iter()
        .filter_map(|(rv, at)| {
            let seen = statuses.iter().find(|(_, r, _)| r >= rv)?;
            Some(seen.0.saturating_sub(*at) as u64)
        })
        .collect();
    lags.sort_unstable();
    let pick = |q: f64| {
        lags.get(((lags.len() as f64 * q) as usize).min(lags.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    Ok(Measured {
        release,
        machine: crate::bench::machine(),
        pods: args.pods as usize,
        replicasets: (args.pods as usize).div_ceil(PER_REPLICASET),
        seconds,
        writes,
        writes_per_second: writes as f64 / seconds.max(0.001),
        failed_writes: failed,
        monitor_events: judged,
        monitor_events_per_second: judged as f64 / seconds.max(0.001),
        lag_p50_ms: pick(0.5),
        lag_p99_ms: pick(0.99),
        lag_max_ms: lags.last().copied().unwrap_or(0),
        lags_measured: lags.len(),
        peak_rss_bytes: peak,
        alarms,
    })
}

/// Writes sent, writes refused, when the churn began and ended (ms), and each accepted
/// write's resourceVersion and answer time.
type Churned = (u64, u64, u128, u128, Vec<(u64, u128)>);

async fn churn(args: &BenchArgs, client: &Client, namespace: &str) -> Result<Churned, String> {
    let replicasets: Api<apps::ReplicaSet> = Api::namespaced(client.clone(), namespace);
    let pods: Api<core::Pod> = Api::namespaced(client.clone(), namespace);
    let count = (args.pods as usize).div_ceil(PER_REPLICASET).max(1);
    let per = (args.pods as usize / count).max(1) as i32;
    let names: Vec<String> = (0..count).map(|i| format!("bench-{i}")).collect();
    for name in &names {
        replicasets
            .create(&PostParams::default(), &replicaset(name, per))
            .await
            .map_err(|e| format!("cannot create rs/{name}: {e}"))?;
    }
    let filled = Instant::now();
    loop {
        let n = pods
            .list_metadata(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?
            .items
            .len();
        if n as u64 >= args.pods {
            break;
        }
        if filled.elapsed() > Duration::from_secs(300) {
            return Err(format!("only {n} of {} pods after 300 s", args.pods));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let written: Arc<Mutex<Vec<(u64, u128)>>> = Arc::default();
    let failed = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    let mut replicas = vec![per; count];
    let mut bare: std::collections::VecDeque<String> = Default::default();
    let mut live: Vec<String> = Vec::new();
    let mut listed_at = Instant::now() - Duration::from_secs(10);
    let period = Duration::from_secs_f64(1.0 / args.rate.max(0.1));
    let start = now_ms();
    let began = Instant::now();
    let mut sent = 0u64;
    let mut tasks = tokio::task::JoinSet::new();
    while began.elapsed() < Duration::from_secs(args.seconds) {
        if listed_at.elapsed() > Duration::from_secs(2) {
            if let Ok(list) = pods
                .list_metadata(&ListParams::default().labels("app!=bench-bare"))
                .await
            {
                live = list
                    .items
                    .into_iter()
                    .filter_map(|p| p.metadata.name)
                    .collect();
            }
            listed_at = Instant::now();
        }
        let (pods, replicasets) = (pods.clone(), replicasets.clone());
        let (written, failed) = (written.clone(), failed.clone());
        let roll = dice.roll(100);
        let n = sent;
        let write: std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<Option<u64>, kube::Error>> + Send>,
        > = if roll < 30 && !live.is_empty() {
            let victim = live.swap_remove(dice.roll(live.len()));
            Box::pin(async move {
                let answer = pods.delete(&victim, &DeleteParams::default()).await?;
                Ok(answer.left().and_then(|p| rv_of(&p.metadata)))
            })
        } else if roll < 55 && !live.is_empty() {
            let target = live[dice.roll(live.len())].clone();
            Box::pin(async move {
                let patch = json!({"metadata": {"labels": {"bench-touch": n.to_string()}}});
                let p = pods
                    .patch(&target, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
                Ok(rv_of(&p.metadata))
            })
        } else if roll < 70 || bare.is_empty() && roll < 85 {
            let name = format!("bare-{n}");
            bare.push_back(name.clone());
            Box::pin(async move {
                let p = pods
                    .create(&PostParams::default(), &bare_pod(&name))
                    .await?;
                Ok(rv_of(&p.metadata))
            })
        } else if roll < 85 {
            let name = bare.pop_front().unwrap_or_default();
            Box::pin(async move {
                let answer = pods.delete(&name, &DeleteParams::default()).await?;
                Ok(answer.left().and_then(|p| rv_of(&p.metadata)))
            })
        } else {
            let i = dice.roll(count);
            let step = dice.roll(11) as i32 - 5;
            replicas[i] = (replicas[i] + step).clamp(per - 10, per + 10).max(0);
            let (name, to) = (names[i].clone(), replicas[i]);
            Box::pin(async move {
                let patch = json!({"spec": {"replicas": to}});
                let rs = replicasets
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await?;
                Ok(rv_of(&rs.metadata))
            })
        };
        tasks.spawn(async move {
            match write.await {
                Ok(Some(rv)) => {
                    if let Ok(mut w) = written.lock() {
                        w.push((rv, now_ms()));
                    }
                }
                Ok(None) => {}
                Err(_) => {
                    failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        });
        sent += 1;
        while tasks.try_join_next().is_some() {}
        let next = began + period * sent as u32;
        tokio::time::sleep_until(next.into()).await;
    }
    while tasks.join_next().await.is_some() {}
    let end = now_ms();
    let written = written.lock().map(|w| w.clone()).unwrap_or_default();
    Ok((
        sent,
        failed.load(std::sync::atomic::Ordering::Relaxed),
        start,
        end,
        written,
    ))
}
