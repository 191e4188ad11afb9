//! Many scenarios on one cluster: independent ones side by side in their own namespaces,
//! those that restart or duplicate the controller or hold its watch events alone, and a
//! report.

use crate::run::{self, report_paths, AwaitInModel, ScenarioRun, Target};
use rsmc_oracle::judge;
use rsmc_oracle::judge::stopped::UpToStop;
use rsmc_oracle::prepared::Prepared;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Run every scenario on the cluster, `jobs` independent ones at a time, then judge each.
/// `ran` is told about each run as it leaves the cluster, `done` about each verdict
/// (progress). Results come back in the order given.
pub async fn run_all(
    target: Arc<Target>,
    scenarios: Vec<Arc<Prepared>>,
    jobs: usize,
    ran: &(dyn Fn(&ScenarioRun) + Sync),
    done: &(dyn Fn(&ScenarioRun) + Sync),
) -> Vec<ScenarioRun> {
    let (exclusive, parallel): (Vec<_>, Vec<_>) = scenarios
        .iter()
        .cloned()
        .enumerate()
        .partition(|(_, p)| run::runs_alone(p));
    let mut results: Vec<Option<ScenarioRun>> = scenarios.iter().map(|_| None).collect();
    let permits = Arc::new(Semaphore::new(jobs.max(1)));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, p) in parallel {
        let target = target.clone();
        let permits = permits.clone();
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await.expect("never closed");
            (i, run::run(&target, &p).await)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let (i, r) = joined.expect("a scenario task does not panic");
        ran(&r);
        results[i] = Some(r);
    }
    for (i, p) in exclusive {
        let r = run::run(&target, &p).await;
        ran(&r);
        results[i] = Some(r);
    }
    // Judging is CPU-heavy (it explores the model); doing it while other scenarios still
    // run starves the control plane on a small machine and makes its reactions arrive after
    // the quiet window. So the cluster work finishes first, then every run is judged.
    let mut judged = Vec::with_capacity(results.len());
    for (r, p) in results.into_iter().zip(&scenarios) {
        let mut r = r.expect("every scenario ran");
        tokio::task::block_in_place(|| run::judge(&mut r, p));
        done(&r);
        judged.push(r);
    }
    judged
}

/// One line per scenario: verdict and wall time.
pub fn summary_line(r: &ScenarioRun) -> String {
    let verdict = if r.conforms() {
        "conforms"
    } else if r.error.as_ref().is_some_and(|e| e.broken) {
        "ERROR"
    } else {
        "DOES NOT CONFORM"
    };
    let mut line = format!(
        "{verdict:>16}  {:<40} {:>6.1}s  judged in {:.3}s",
        r.scenario, r.wall_seconds, r.judge_seconds
    );
    // Everything the verdict found, grouped, with its settle points.
    if let Some(v) = r.verdict.as_ref().filter(|v| !v.findings.is_empty()) {
        line.push_str(&format!(
            "  {}",
            rsmc_oracle::judge::findings::line(&v.findings)
        ));
    }
    if let Some(rep) = &r.reproduction {
        line.push_str(&format!(
            "  {} {}",
            if rep.reproduced {
                "reproduced"
            } else {
                "did NOT reproduce"
            },
            rep.entry
        ));
    }
    if r.await_in_model == Some(AwaitInModel::StopsToo) {
        line.push_str("  (stopped at an await the model stops at too)");
    }
    if let Some(why) = r.stopped_because() {
        line.push_str(&format!("  stopped: {why}"));
    }
    match &r.up_to_stop {
        Some(UpToStop::Conforms { .. }) => line.push_str("  (conforms up to the stop)"),
        Some(UpToStop::Diverges {
            difference: Some(d),
            ..
        }) => line.push_str(&format!("  ({} up to the stop)", d.headline())),
        Some(UpToStop::Diverges { .. }) => line.push_str("  (DOES NOT CONFORM up to the stop)"),
        Some(UpToStop::Undecided { .. }) | None => {}
    }
    if !r.not_forced.is_empty() || r.on_cluster.is_some() {
        line.push_str("  (see notes)");
    }
    line
}

/// The full text report of one scenario: notes, verdict or error, and the views.
pub fn render(r: &ScenarioRun) -> String {
    let mut out = format!(
        "scenario {} ({}) in namespace {}: {:.1}s on the cluster, judged in {:.3}s\n",
        r.scenario,
        r.path.display(),
        r.namespace,
        r.wall_seconds,
        r.judge_seconds
    );
    if let Some(note) = &r.on_cluster {
        out.push_str(&format!("on a cluster: {note}\n"));
    }
    for n in &r.not_forced {
        out.push_str(&format!("not forced: {n}\n"));
    }
    if let Some(e) = &r.error {
        out.push_str(&format!("error: {}\n", e.message));
        if let Some(model) = &r.await_in_model {
            out.push_str(&match model {
                AwaitInModel::StopsToo => "the model stops there too: no run of it gets past this await (what it waits for, the model's controller never does either)\n".to_string(),
                AwaitInModel::GetsPast => "the model gets past this await: some run of it does what the cluster did not\n".to_string(),
                AwaitInModel::Unknown { explored } => format!("whether the model gets past this await is not known: its search stopped after {explored} states\n"),
            });
        }
        if r.observed.is_some() {
            out.push_str(&format!(
                "the recording up to the stop: {}.observed.stopped.json",
                r.scenario
            ));
            match &r.up_to_stop {
                Some(judged) => out.push_str(&format!(", judged by the oracle: {judged}\n")),
                None => out.push_str(" (not judged by the oracle: the cluster broke)\n"),
            }
        }
    }
    if let Some(v) = &r.verdict {
        out.push_str(&judge::render(v));
    }
    if let Some(rep) = &r.reproduction {
        out.push_str(&match rep.reproduced {
            true if rep.as_modelled => format!(
                "\nreproduced {}: no recorded write breaks {} by itself, and every model run that matches the recording breaks it\n",
                rep.entry, rep.property
            ),
            true => format!(
                "\nreproduced {}: the cluster broke {}{}\n",
                rep.entry,
                rep.property,
                rep.unconverged
                    .as_deref()
                    .map(|u| format!(" ({u})"))
                    .unwrap_or_default()
            ),
            false => format!(
                "\nnot reproduced {}: no recorded write breaks {}\n",
                rep.entry, rep.property
            ),
        });
    }
    out
}

/// The views of every settle point, cluster beside model.
pub fn render_views(r: &ScenarioRun) -> String {
    let mut out = String::new();
    for (i, v) in r.views.iter().enumerate() {
        out.push_str(&format!(
            "### settle point {}: the cluster\n{}\n",
            i + 1,
            v.kubectl
        ));
        out.push_str(&format!(
            "### settle point {}: the model's rendering of the same objects\n{}\n",
            i + 1,
            v.model
        ));
        if let Some(d) = &v.describe {
            out.push_str(&format!(
                "### settle point {}: kubectl describe rs\n{d}\n",
                i + 1
            ));
        }
    }
    out
}

/// Write each scenario's observed trace, verdict and views into `dir`, and `summary.json`.
pub fn write_report(dir: &Path, results: &[ScenarioRun]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for r in results {
        let (observed, verdict, views) = report_paths(dir, &r.scenario);
        if let Some(o) = &r.observed {
            // A stopped run's recording does not end at a settle point: named so that
            // nobody takes it for a whole run to judge.
            let observed = match r.error {
                Some(_) => observed.with_extension("stopped.json"),
                None => observed,
            };
            std::fs::write(
                &observed,
                serde_json::to_string_pretty(o).expect("serialises"),
            )?;
        }
        std::fs::write(&verdict, render(r))?;
        if !r.views.is_empty() {
            std::fs::write(&views, render_views(r))?;
        }
    }
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_string_pretty(results).expect("serialises"),
    )
}
