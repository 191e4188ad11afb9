//! `rsmc oracle`: an offline verdict on an observed run of a scenario.

use crate::ci_report::{self, Case, Outcome, Suite};
use crate::exit;
use crate::OracleArgs;
use rsmc_oracle::judge;
use rsmc_oracle::judge::stopped::{judge_up_to, UpToStop};
use rsmc_oracle::observed::{self, Observed};
use rsmc_oracle::prepared::Prepared;
use rsmc_spec::profile::Profile;

pub fn run(args: &OracleArgs) -> i32 {
    let started = std::time::Instant::now();
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
    // The command line's contract, else (unless it gives a profile) the recorded one.
    let contract = match (args.contract, args.profile) {
        (Some(c), _) => Some(c),
        (None, Some(_)) => None,
        (None, None) => match observed.contract() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {}: {e}", args.observed.display());
                return exit::BAD_INPUT;
            }
        },
    };
    let default = args.profile.unwrap_or(Profile::K8s120);
    let loaded = match Prepared::load(&args.scenario, default) {
        Ok(l) => {
            // The contract, else the command line's profile, else the recorded release, else
            // the scenario's.
            let mut l = match (contract, args.profile.map(|p| p.semantics()).or(recorded)) {
                (Some(c), _) => l.under_contract(&c),
                (None, Some(sem)) => l.judged_as(sem),
                (None, None) => l,
            };
            l.model = args.switches.apply(l.model);
            let l = l.stopping_at_first_divergence(args.stop_at_first_divergence);
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
        return stopped(args, &loaded, &observed, step, started);
    }
    let verdict = match judge::judge(&loaded.subject(), &observed, &args.budget.budget()) {
        Ok(v) => v,
        Err(e) => {
            let Some(exhausted) = e.exhausted() else {
                eprintln!("error: {}: {e}", args.observed.display());
                return exit::BAD_INPUT;
            };
            let message = format!(
                "{}: cannot judge: {e}; {}",
                args.observed.display(),
                exhausted.remedy()
            );
            eprintln!("error: {message}");
            let case = Case::new(
                loaded.scenario.name.clone(),
                Outcome::Error {
                    message,
                    detail: String::new(),
                },
            );
            return report(args, case, started, "not judged", exit::TOO_LARGE);
        }
    };
    let text = judge::render(&verdict);
    crate::output::print(args.json, &verdict, || print!("{text}"));
    let (outcome, headline, code) = match verdict.headline() {
        None => (Outcome::Passed, "conforms", exit::OK),
        Some(message) => (
            Outcome::Failed {
                message,
                detail: text.clone(),
            },
            "does not conform",
            exit::VIOLATION,
        ),
    };
    let case = Case::new(verdict.scenario.clone(), outcome).with_output(text);
    report(args, case, started, headline, code)
}

/// Write the CI reports of the one scenario judged (`--junit`, `$GITHUB_STEP_SUMMARY`) and
/// return the exit code.
fn report(
    args: &OracleArgs,
    case: Case,
    started: std::time::Instant,
    headline: &str,
    code: i32,
) -> i32 {
    let case = case.with_time(started.elapsed());
    let suite = Suite {
        name: format!("rsmc oracle {}", args.observed.display()),
        headline: format!("{}: {headline} (exit {code})", case.name),
        properties: vec![("scenario".to_string(), args.scenario.display().to_string())],
        time: started.elapsed(),
        cases: vec![case],
    };
    ci_report::written(args.junit.as_deref(), &suite, code)
}

/// A recording of a run that stopped short at scenario step `step`: judged up to the stop.
fn stopped(
    args: &OracleArgs,
    loaded: &Prepared,
    observed: &Observed,
    step: usize,
    started: std::time::Instant,
) -> i32 {
    let judged = match judge_up_to(&loaded.subject(), observed, step, &args.budget.budget()) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("error: {}: {e}", args.observed.display());
            return exit::BAD_INPUT;
        }
    };
    let text = format!(
        "the run stopped at step {} ({}); {judged}",
        step + 1,
        loaded
            .steps
            .get(step)
            .map_or("a step the scenario does not have", String::as_str)
    );
    crate::output::print(args.json, &judged, || println!("{text}"));
    let (outcome, headline, code) = match judged {
        UpToStop::Conforms { .. } => (Outcome::Passed, "conforms up to its stop", exit::OK),
        UpToStop::Diverges { .. } => (
            Outcome::Failed {
                message: text.clone(),
                detail: String::new(),
            },
            "does not conform",
            exit::VIOLATION,
        ),
        UpToStop::Undecided { .. } => (
            Outcome::Error {
                message: text.clone(),
                detail: String::new(),
            },
            "not judged",
            exit::TOO_LARGE,
        ),
    };
    let case = Case::new(loaded.scenario.name.clone(), outcome).with_output(text);
    report(args, case, started, headline, code)
}
