//! `rsmc replay`: the model's kubectl views of a scenario, settle point by settle point.

use crate::exit;
use crate::ReplayArgs;
use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::replay;

pub fn run(args: &ReplayArgs) -> i32 {
    let loaded = match Prepared::load(&args.scenario, args.profile) {
        Ok(mut l) => {
            l.model = args.switches.apply(l.model);
            if args.past_violations {
                l.model = l.model.past_violations();
            }
            l
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    match replay::replay(&loaded.subject(), &args.budget.budget()) {
        Ok(r) if args.json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&r).expect("replay serialises")
            );
            exit::OK
        }
        Ok(r) => {
            print!("{}", replay::render(&r));
            exit::OK
        }
        Err(e) => {
            eprintln!(
                "error: {}: cannot replay: {e}; {}",
                args.scenario.display(),
                e.remedy()
            );
            exit::TOO_LARGE
        }
    }
}
