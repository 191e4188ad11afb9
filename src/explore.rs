//! `rsmc explore`: stateright's Explorer over the model, in a browser.
//!
//! The Explorer lets a person walk the state space by hand: every enabled action from the
//! selected state, the properties, and each state drawn as the cluster with its kubectl
//! tables (`Model::as_svg`, `rsmc_spec::model::svg`). With `--trace` it opens on the last
//! state of a trace file, so a counterexample from `rsmc check` can be stepped through and
//! varied. The Explorer checks on demand only, so even the large presets open at once.

use crate::exit;
use crate::trace_file;
use rsmc_oracle::trace::{Objects, Trace};
use rsmc_spec::bugs::Fix;
use rsmc_spec::config::Config;
use rsmc_spec::model::{Action, RsModel, State};
use rsmc_spec::profile::Profile;
use stateright::{Model, Path};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;

/// Arguments of `rsmc explore`.
#[derive(clap::Args, Debug)]
pub struct ExploreArgs {
    /// Behaviour profile (default `k8s-1.20`; with `--trace`, the trace's, which this must
    /// match if given).
    #[arg(long)]
    pub profile: Option<Profile>,
    /// A preset (small, default, deep), catalogue/NAME, properties/NAME or a JSON file
    /// overriding a preset (default `default`; with `--trace`, the configuration the trace
    /// records, which this must match if given).
    #[arg(long)]
    pub config: Option<String>,
    /// Without `--config`, `--bug` opens the preset the catalogue names for the bug. With
    /// `--trace`, the trace's own bug and fixes are switched on, and these add to them.
    #[command(flatten)]
    pub switches: crate::Switches,
    /// Where the Explorer listens (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// Open the Explorer on the last state of this `rsmc-trace/v1` file (a counterexample
    /// that `rsmc check` wrote, a cover run).
    #[arg(long)]
    pub trace: Option<PathBuf>,
}

pub fn run(args: &ExploreArgs) -> i32 {
    match prepare(args) {
        Ok(explorer) => serve(explorer),
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}

/// Everything `serve` needs, checked before anything listens.
struct Explorer {
    model: RsModel,
    /// What the configuration was given as (a preset name, a file, or the trace's file).
    config_name: String,
    addr: SocketAddr,
    /// With `--trace`: the Explorer's path (action indices from the initial state) to the
    /// trace's last state, and what to say about it.
    trace: Option<(String, String)>,
}

fn prepare(args: &ExploreArgs) -> Result<Explorer, String> {
    let (model, config_name, trace) = match &args.trace {
        None => {
            let name = crate::config_name(args.config.as_deref(), args.switches.bug);
            let config = Config::load(&name).map_err(|e| e.to_string())?;
            let profile = args.profile.unwrap_or(Profile::K8s120);
            (
                args.switches.apply(RsModel::new(config, profile)),
                name,
                None,
            )
        }
        Some(file) => {
            let (trace, profile) = trace_file::read(file)?;
            agrees_with_flags(args, &trace, profile, file)?;
            // The trace's own bug and fixes, and any the flags add.
            let model = args.switches.apply(trace.model(profile));
            let path = replay(&model, &trace)
                .map_err(|e| format!("{}: {e}", file.display()))?
                .encode(&model);
            let about = match &trace.property {
                Some(p) => format!(
                    "the last state of the trace (step {}, violating \"{p}\")",
                    trace.steps.len()
                ),
                None => format!("the last state of the trace (step {})", trace.steps.len()),
            };
            let name = args
                .config
                .clone()
                .unwrap_or_else(|| format!("as recorded in {}", file.display()));
            (model, name, Some((path, about)))
        }
    };
    let addr = listenable(args.addr)?;
    Ok(Explorer {
        model,
        config_name,
        addr,
        trace,
    })
}

/// With `--trace`, the model is the one the trace records; `--profile` and `--config` may
/// repeat it (as `rsmc check` prints them) but not contradict it.
fn agrees_with_flags(
    args: &ExploreArgs,
    trace: &Trace,
    profile: Profile,
    file: &std::path::Path,
) -> Result<(), String> {
    let file = file.display();
    if let Some(p) = args.profile.filter(|p| *p != profile) {
        return Err(format!(
            "{file} was written under profile {}, not --profile {}",
            profile.name(),
            p.name()
        ));
    }
    if let Some(name) = &args.config {
        let config = Config::load(name).map_err(|e| e.to_string())?;
        if config != trace.config {
            return Err(format!(
                "{file} records another configuration than --config {name} (leave --config out to use the trace's)"
            ));
        }
    }
    Ok(())
}

/// Replays the trace's steps from the model's initial state, checking that each is enabled
/// where the trace takes it and leaves the objects the trace recorded: the Explorer can only
/// show a run of its own model.
fn replay(model: &RsModel, trace: &Trace) -> Result<Path<State, Action>, String> {
    let init = model.initial_state();
    if Objects::of(&init) != trace.initial {
        return Err("initial: the model's initial cluster differs from the trace's".into());
    }
    let mut state = init.clone();
    for step in &trace.steps {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        let next = enabled
            .contains(&step.action)
            .then(|| model.next_state(&state, step.action.clone()))
            .flatten()
            .ok_or_else(|| {
                format!(
                    "step {} ({}): not enabled in the model here; the trace is not a run of \
                     this model (another rsmc version, or written with a bug switched on?)",
                    step.index, step.action
                )
            })?;
        if Objects::of(&next) != step.objects {
            return Err(format!(
                "step {} ({}): the model's objects after it differ from the trace's",
                step.index, step.action
            ));
        }
        state = next;
    }
    let actions: Vec<Action> = trace.steps.iter().map(|s| s.action.clone()).collect();
    Path::from_actions(model, init, &actions)
        .ok_or_else(|| "the replayed run is not a path of the model".into())
}

/// Whether the Explorer can listen on `addr`, checked first so that a busy port is a clear
/// error rather than a panic inside the server; port 0 becomes the free port found.
fn listenable(addr: SocketAddr) -> Result<SocketAddr, String> {
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// Prints where to look and serves until the process is interrupted (Ctrl-C ends it; the
/// Explorer keeps nothing on disk).
fn serve(explorer: Explorer) -> i32 {
    let Explorer {
        model,
        config_name,
        addr,
        trace,
    } = explorer;
    println!(
        "rsmc explore: profile {}, configuration {config_name}",
        model.profile.name()
    );
    if let Some(bug) = model.sem.bug {
        println!("  with the upstream bug {bug} re-introduced (rsmc bugs)");
    }
    for fix in Fix::ALL.into_iter().filter(|f| model.sem.fixed(*f)) {
        println!("  with the proposed fix {fix} (rsmc bugs)");
    }
    println!("Explorer: http://{addr}/");
    if let Some((path, about)) = &trace {
        println!("{about}: http://{addr}/#/steps/{path}");
    }
    println!("(Ctrl-C stops it)");
    model.checker().serve(addr);
    exit::OK
}
