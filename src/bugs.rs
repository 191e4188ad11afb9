//! `rsmc bugs`: the catalogue of upstream bugs and open races, as a table or JSON.

use crate::exit;
use crate::BugsArgs;
use rsmc_spec::bugs::{Status, CATALOGUE};

pub fn run(args: &BugsArgs) -> i32 {
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&CATALOGUE).expect("the catalogue serialises")
        );
        return exit::OK;
    }
    let width = CATALOGUE.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for e in &CATALOGUE {
        let how = match e.status {
            Status::Fixed => format!(
                "rsmc check --bug {} --config {} --profile {}",
                e.name, e.config, e.profile
            ),
            Status::Open => format!(
                "open upstream: rsmc check --config {} --profile {}{}",
                e.config,
                e.profile,
                e.proposed_fix
                    .map(|f| format!(" (its proposed fix: --fix {f})"))
                    .unwrap_or_default()
            ),
        };
        println!("{:<width$}  {}  {}", e.name, e.upstream, e.summary);
        println!("{:<width$}  breaks: {}", "", e.property);
        println!("{:<width$}  upstream code: {}", "", e.fix);
        println!("{:<width$}  {how}\n", "");
    }
    exit::OK
}
