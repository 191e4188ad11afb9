//! `rsmc oracle`: an offline verdict on an observed run of a scenario.

use crate::exit;
use crate::OracleArgs;
use rsmc_oracle::judge;
use rsmc_oracle::observed;
use rsmc_oracle::prepared::Prepared;
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
            l
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
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
