//! `rsmc monitor`: watch a running cluster and report every write that breaks a safety
//! property (`rsmc_conformance::monitor`), and with `--judge` the oracle's verdict on each
//! namespace's run. Exit codes: 0 no alarm was raised and no run judged nonconforming, 1 at
//! least one, 2 bad input or a cluster that cannot be reached or read; Ctrl-C or SIGTERM
//! ends the watch and exits by the same rule.

use crate::exit;
use clap::ValueEnum;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;
use rsmc_conformance::monitor::judging::JudgeSettings;
use rsmc_conformance::monitor::{self, attribution, report::Report, view::Settings, Options};
use rsmc_oracle::import::writer::Attribution;
use rsmc_spec::budget::Budget;
use rsmc_spec::gates::{semantics_of_server, FeatureGates};
use rsmc_spec::profile::Profile;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `rsmc monitor`.
#[derive(clap::Args, Debug)]
pub struct MonitorArgs {
    /// The cluster (default: `$KUBECONFIG`, then `~/.kube/config`, then the in-cluster
    /// service account).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context to use (default: its current context).
    #[arg(long)]
    pub context: Option<String>,
    /// The namespace to watch (default: the context's namespace, else `default`).
    #[arg(long, short = 'n', conflicts_with = "all_namespaces")]
    pub namespace: Option<String>,
    /// Watch every namespace.
    #[arg(long, short = 'A')]
    pub all_namespaces: bool,
    /// Alarms as text lines or as one JSON object per line.
    #[arg(long, value_enum, default_value = "text")]
    pub output: Output,
    /// Seconds without a change after which a namespace's ReplicaSet statuses are compared
    /// with their pods.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0, value_parser = positive_seconds)]
    pub quiet_window: f64,
    /// A field manager whose writes are a controller's, judged as such (repeatable; added
    /// to kube-controller-manager and rsmc-controller). Name your own controller here.
    #[arg(long = "controller-manager", value_name = "NAME")]
    pub controller_managers: Vec<String>,
    /// Also judge each namespace created while the monitor runs with the oracle, each time it
    /// has been quiet for the quiet window: its scenario so far, imported from what the
    /// watches saw as `rsmc import --watch` would (needs list and watch on namespaces).
    #[arg(long)]
    pub judge: bool,
    /// With `--judge`: the catalogue's switches the model judges with, as `rsmc oracle`'s.
    #[command(flatten)]
    pub switches: crate::Switches,
    /// Seconds between status lines on stderr (0: none).
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = non_negative_seconds)]
    pub status_interval: f64,
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
}

fn non_negative_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if (0.0..1e6).contains(&s) => Ok(s),
        _ => Err(format!(
            "expected a number of seconds, 0 or more, not {text:?}"
        )),
    }
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match non_negative_seconds(text) {
        Ok(s) if s > 0.0 => Ok(s),
        _ => Err(format!(
            "expected a number of seconds above 0, not {text:?}"
        )),
    }
}

/// The client and the namespace it defaults to.
async fn connect(args: &MonitorArgs) -> Result<(Client, String), String> {
    let options = KubeConfigOptions {
        context: args.context.clone(),
        ..Default::default()
    };
    let config = match &args.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("{}: not a kubeconfig: {e}", path.display()))?;
            kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("{}: {e}", path.display()))?
        }
        None if args.context.is_some() => kube::Config::from_kubeconfig(&options)
            .await
            .map_err(|e| format!("no usable kubeconfig: {e}"))?,
        None => kube::Config::infer()
            .await
            .map_err(|e| format!("no cluster: give --kubeconfig FILE or set KUBECONFIG ({e})"))?,
    };
    let namespace = config.default_namespace.clone();
    let client = Client::try_from(config).map_err(|e| e.to_string())?;
    Ok((client, namespace))
}

pub fn run(args: &MonitorArgs) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            return exit::BAD_INPUT;
        }
    };
    let code = runtime.block_on(monitor(args));
    // A judgement abandoned at the stop still runs on a blocking thread: the process exits
    // without waiting for it.
    runtime.shutdown_background();
    code
}

async fn monitor(args: &MonitorArgs) -> i32 {
    let bad = |message: String| {
        eprintln!("error: {message}");
        exit::BAD_INPUT
    };
    let (client, default_namespace) = match connect(args).await {
        Ok(c) => c,
        Err(e) => return bad(e),
    };
    let version =
        match tokio::time::timeout(Duration::from_secs(15), client.apiserver_version()).await {
            Ok(Ok(v)) => v.git_version,
            Ok(Err(e)) => return bad(format!("the cluster is unreachable: {e}")),
            Err(_) => return bad("the cluster did not answer within 15s".into()),
        };
    // The ranking follows the release; a version rsmc does not know gets the newest.
    let sem = match semantics_of_server(&version, &FeatureGates::default()) {
        Some(Ok(sem)) => sem,
        _ => Profile::Upstream.semantics(),
    };
    let namespace =
        (!args.all_namespaces).then(|| args.namespace.clone().unwrap_or(default_namespace));
    let with_events = match monitor::check_access(&client, namespace.as_deref()).await {
        Ok(events) => events,
        Err(e) => {
            return bad(format!(
                "{e} (the monitor needs list and watch on pods and replicasets; the book: concepts/monitor.md, \"Permissions\")"
            ))
        }
    };
    if !with_events {
        eprintln!(
            "rsmc monitor: warning: cannot list events, so a controller's deletions are not judged (grant list and watch on events)"
        );
    }
    let mut marks = false;
    if args.judge {
        if let Err(e) = monitor::check_namespace_access(&client, namespace.as_deref()).await {
            return bad(format!(
                "{e} (--judge needs list and watch on namespaces; the book: concepts/monitor.md, \"Permissions\")"
            ));
        }
        match monitor::check_mark_access(&client, namespace.as_deref()).await {
            Ok(()) => marks = true,
            Err(e) => eprintln!(
                "rsmc monitor: warning: {e}, so the marks rsmc conform leaves are not seen: a run with forced faults may be judged without them, and its settle points are guessed from quiet gaps (grant list and watch on configmaps)"
            ),
        }
    }
    let mut controllers: Vec<String> = attribution::DEFAULT_CONTROLLERS
        .iter()
        .map(|s| s.to_string())
        .collect();
    controllers.extend(args.controller_managers.iter().cloned());
    let judge = args.judge.then(|| JudgeSettings {
        server: version.clone(),
        attribution: Attribution {
            controllers: Attribution::default()
                .controllers
                .into_iter()
                .chain(args.controller_managers.iter().cloned())
                .collect(),
        },
        // A monitor runs for days beside other work: each judgement gets 2 GiB at most, and
        // one that needs more is reported as not judged.
        budget: Budget::default().with_memory(2 << 30),
        bug: args.switches.bug,
        fixes: args.switches.fixes.clone(),
        quiet: Duration::from_secs_f64(args.quiet_window),
        marks,
    });
    let options = Options {
        namespace: namespace.clone(),
        settings: Settings {
            quiet_window: Duration::from_secs_f64(args.quiet_window),
            controllers,
            sem,
        },
        status_every: (args.status_interval > 0.0)
            .then(|| Duration::from_secs_f64(args.status_interval)),
        judge,
    };
    eprintln!(
        "rsmc monitor: watching {} on {version}; Ctrl-C to stop",
        match &namespace {
            Some(ns) => format!("namespace {ns}"),
            None => "all namespaces".into(),
        }
    );
    let output = args.output;
    let on_report = |r: &Report| {
        let line = match output {
            Output::Text => r.text(),
            Output::Json => r.json(),
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    let on_status = |s: &monitor::report::Status| match output {
        Output::Text => eprintln!("{}", s.text()),
        Output::Json => eprintln!("{}", serde_json::json!({ "status": s })),
    };
    let outcome = monitor::run(
        client,
        options,
        with_events,
        on_report,
        on_status,
        monitor::signals(),
    )
    .await;
    eprintln!(
        "rsmc monitor: stopped; {} alarms{}{}{}",
        outcome.alarms,
        if args.judge {
            format!(", {} nonconforming judgements", outcome.nonconforming)
        } else {
            String::new()
        },
        if outcome.unreadable > 0 {
            format!(
                ", {} objects the model cannot read were skipped",
                outcome.unreadable
            )
        } else {
            String::new()
        },
        match outcome.abandoned {
            0 => String::new(),
            n => format!(
                ", {n} judgements abandoned (still under way {}s after the stop, or stopped again)",
                monitor::JUDGE_GRACE.as_secs()
            ),
        }
    );
    if outcome.alarms + outcome.nonconforming > 0 {
        exit::VIOLATION
    } else {
        exit::OK
    }
}
