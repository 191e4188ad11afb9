//! `rsmc traces --cover`: a small set of model runs covering every environment move kind
//! the configuration enables and every situation the properties are about, written as
//! scenarios (and traces) for conformance.

use crate::exit;
use crate::TracesArgs;
use rsmc_oracle::cover;
use rsmc_oracle::scenario;
use rsmc_oracle::trace::Trace;
use rsmc_spec::model::RsModel;
use std::io::IsTerminal;

/// How many states each search may visit.
const LIMIT: usize = 4_000_000;

pub fn run(args: &TracesArgs) -> i32 {
    if !args.cover {
        eprintln!("error: say what to emit: --cover is the only kind of trace set so far");
        return exit::BAD_INPUT;
    }
    let config = match crate::check::load_config(&args.config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let model = RsModel::new(config, args.profile);
    let live = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let budget = args.memory.budget().with_states(LIMIT);
    let found = cover::cover(&model, &budget, |n| {
        let rate = n as f64 / started.elapsed().as_secs_f64().max(1e-3);
        if live {
            eprint!("\rrsmc traces: {n} states searched, {rate:.0}/s   ");
        } else {
            eprintln!("rsmc traces: {n} states searched, {rate:.0}/s");
        }
    });
    if live {
        eprintln!();
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("error: {}: {e}", args.out.display());
        return exit::BAD_INPUT;
    }
    println!(
        "rsmc traces --cover: profile {}, configuration {}: {} runs from {} states{}",
        model.profile.name(),
        args.config,
        found.runs.len(),
        found.explored,
        match &found.stopped {
            Some(e) => format!(" (the search stopped early: {e})"),
            None => String::new(),
        }
    );
    for (i, run) in found.runs.iter().enumerate() {
        let name = format!("cover-{}-{}", model.profile.name(), i + 1);
        let description = format!(
            "A model run of configuration {} (profile {}) chosen by `rsmc traces --cover`; it covers: {}.",
            args.config,
            model.profile.name(),
            run.targets.join("; ")
        );
        if let Some(why) = scenario::unexpressible(&run.states, &run.actions) {
            eprintln!("error: {name}: {why}");
            return exit::BAD_INPUT;
        }
        let mut scenario =
            scenario::from_run(&run.model, &run.states, &run.actions, &name, &description);
        scenario.profile = Some(model.profile);
        let yaml = args.out.join(format!("{name}.yaml"));
        let json = args.out.join(format!("{name}.trace.json"));
        let trace = Trace::from_path(&run.model, None, &run.states, &run.actions);
        let written = std::fs::write(&yaml, scenario.to_yaml()).and_then(|_| {
            std::fs::write(
                &json,
                serde_json::to_string_pretty(&trace).expect("trace serialises"),
            )
        });
        if let Err(e) = written {
            eprintln!("error: writing {}: {e}", yaml.display());
            return exit::BAD_INPUT;
        }
        println!("\n{} ({} steps)", yaml.display(), run.actions.len());
        for t in &run.targets {
            println!("  {t}");
        }
    }
    if !found.uncovered.is_empty() {
        println!("\nnot covered (not reachable in this configuration, or past the limit):");
        for t in &found.uncovered {
            println!("  {t}");
        }
    }
    exit::OK
}
