//! `rsmc oracle`: an offline verdict on an observed run of a scenario.

use crate::exit;
use crate::OracleArgs;
use rsmc_oracle::judge;
use rsmc_oracle::observed::{self, Observed};
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::stopped::{judge_up_to, UpToStop};
use rsmc_spec::profile::Profile;

pub fn run(args: &OracleArgs) -> i32 {
    let observed = match observed::load(&args.observed) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let recorded = match observed.release_semantics() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", args.observed.display());
            return exit::BAD_INPUT;
        }
    };
    let default = args.profile.unwrap_or(Profile::K8s120);
    let loaded = match Prepared::load(&args.scenario, default) {
        Ok(l) => {
            // The command line's profile, else the recorded release, else the scenario's.
            let mut l = match args.profile.map(|p| p.semantics()).or(recorded) {
                Some(sem) => l.judged_as(sem),
                None => l,
            };
            l.model = args.switches.apply(l.model);
            match observed.real_nodes().and_then(|nodes| match nodes {
                Some(nodes) => l.on_real_kubelets(&nodes),
                None => Ok(l),
            }) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("error: {}: {e}", args.observed.display());
                    return exit::BAD_INPUT;
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if let Some(step) = observed.stopped_at {
        return stopped(args, &loaded, &observed, step);
    }
    let verdict = match judge::judge(&loaded.subject(), &observed, &args.budget.budget()) {
        Ok(v) => v,
        Err(e) => {
            let Some(exhausted) = e.exhausted() else {
                eprintln!("error: {}: {e}", args.observed.display());
                return exit::BAD_INPUT;
            };
            eprintln!(
                "error: {}: cannot judge: {e}; {}",
                args.observed.display(),
                exhausted.remedy()
            );
            return exit::TOO_LARGE;
        }
    };
    crate::output::print(args.json, &verdict, || {
        print!("{}", judge::render(&verdict))
    });
    if verdict.conforms {
        exit::OK
    } else {
        exit::VIOLATION
    }
}

/// A recording of a run that stopped short at scenario step `step`: judged up to the stop.
fn stopped(args: &OracleArgs, loaded: &Prepared, observed: &Observed, step: usize) -> i32 {
    let judged = match judge_up_to(&loaded.subject(), observed, step, &args.budget.budget()) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("error: {}: {e}", args.observed.display());
            return exit::BAD_INPUT;
        }
    };
    crate::output::print(args.json, &judged, || {
        println!(
            "the run stopped at step {} ({}); {judged}",
            step + 1,
            loaded
                .steps
                .get(step)
                .map_or("a step the scenario does not have", String::as_str)
        )
    });
    match judged {
        UpToStop::Conforms { .. } => exit::OK,
        UpToStop::Diverges { .. } => exit::VIOLATION,
        UpToStop::Undecided { .. } => exit::TOO_LARGE,
    }
}
