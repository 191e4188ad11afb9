//! `rsmc scenario --from-trace`: turn a model trace (a counterexample, a cover run) into a
//! scenario a cluster can replay.

use crate::exit;
use crate::trace_file;
use crate::ScenarioArgs;
use rsmc_oracle::scenario;
use stateright::Model;

pub fn run(args: &ScenarioArgs) -> i32 {
    let file = args.from_trace.display();
    let (trace, profile) = match trace_file::read(&args.from_trace) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let model = trace.model(profile);
    let actions: Vec<_> = trace.steps.iter().map(|s| s.action.clone()).collect();
    let mut states = model.init_states();
    for (i, a) in actions.iter().enumerate() {
        match model.next_state(states.last().expect("non-empty"), a.clone()) {
            Some(n) => states.push(n),
            None => {
                eprintln!(
                    "error: {file}: steps[{i}]: the model cannot take this step ({a}): the trace is not a run of its configuration"
                );
                return exit::BAD_INPUT;
            }
        }
    }
    let name = args.name.clone().unwrap_or_else(|| {
        args.from_trace
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| {
                n.trim_end_matches(".json")
                    .trim_end_matches(".trace")
                    .to_string()
            })
            .unwrap_or_else(|| "scenario".into())
    });
    let description = format!(
        "Converted from the trace {file}{}.",
        trace
            .property
            .as_ref()
            .map(|p| format!(" (a counterexample of \"{p}\")"))
            .unwrap_or_default()
    );
    if let Some(why) = scenario::unexpressible(&states, &actions) {
        eprintln!("error: {file}: {why}");
        return exit::BAD_INPUT;
    }
    let mut scenario = match (&trace.property, args.open) {
        (_, true) => scenario::from_run(&model, &states, &actions, &name, &description),
        (Some(property), false) => scenario::forced_counterexample(
            &model,
            &states,
            &actions,
            &name,
            &description,
            property,
        ),
        (None, false) => scenario::forced(&model, &states, &actions, &name, &description),
    };
    scenario.profile = Some(profile);
    if !args.open {
        scenario.reproduces = trace
            .property
            .as_deref()
            .and_then(|p| rsmc_spec::bugs::reproduced_by(p, &actions, model.sem.bug));
    }
    let yaml = scenario.to_yaml();
    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, yaml) {
                eprintln!("error: {}: {e}", path.display());
                return exit::BAD_INPUT;
            }
        }
        None => print!("{yaml}"),
    }
    exit::OK
}
