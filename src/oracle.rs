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
        Err(e) if e.exhausted().is_some() => {
            let remedy = e.exhausted().map_or("", |x| x.remedy());
            eprintln!(
                "error: {}: cannot judge: {e}; {remedy}",
                args.observed.display(),
            );
            return exit::TOO_LARGE;
        }
        Err(e) => {
            eprintln!("error: {}: {e}", args.observed.display());
            return exit::BAD_INPUT;
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
