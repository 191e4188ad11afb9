//! `rsmc oracle`: an offline verdict on an observed run of a scenario.

use crate::exit;
use crate::OracleArgs;
use rsmc_oracle::judge;
use rsmc_oracle::observed;
use rsmc_oracle::prepared::Prepared;

pub fn run(args: &OracleArgs) -> i32 {
    let loaded = match Prepared::load(&args.scenario, args.profile) {
        Ok(mut l) => {
            l.model = args.switches.apply(l.model);
            l
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let observed = match observed::load(&args.observed) {
        Ok(o) => o,
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
