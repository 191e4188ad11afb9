//! Reports that CI systems read: JUnit XML (`--junit FILE`) and, when `$GITHUB_STEP_SUMMARY`
//! names a file, a Markdown summary appended to it.
//!
//! `rsmc check` makes a test case of each property, `rsmc conform` of each scenario and
//! `rsmc oracle` of the one scenario it judges. Each command builds a [`Suite`] from its
//! own results and hands it here, so that the XML and the Markdown of the three commands are
//! laid out by one piece of code, and a test case's outcome is decided by the same rule the
//! command's exit code follows: a case fails exactly when it would make the command exit 1.

mod junit;
mod step_summary;

use std::path::Path;
use std::time::Duration;

/// What happened to one test case, in the terms every JUnit reader knows.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It holds, conforms or was reached.
    Passed,
    /// It failed the command (exit 1): `message` is one line naming what broke (a property,
    /// a divergence), `detail` the whole explanation.
    Failed { message: String, detail: String },
    /// It could not be decided or run (a search past its budget, a cluster that broke):
    /// JUnit's `error`.
    Error { message: String, detail: String },
    /// Nothing was decided that fails the command, but a reader should see it: a violation
    /// that is a known upstream issue (as pytest reports an expected failure), a coverage
    /// property not reached, a search not run, a scenario this cluster cannot run.
    Skipped { message: String },
}

/// One test case.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub outcome: Outcome,
    /// Time spent on this case, where the command measures it per case.
    pub time: Option<Duration>,
    /// Anything else a reader may want (the counterexample's files, a known issue's label).
    pub output: Option<String>,
}

impl Case {
    pub fn new(name: impl Into<String>, outcome: Outcome) -> Self {
        Case {
            name: name.into(),
            outcome,
            time: None,
            output: None,
        }
    }

    pub fn with_time(mut self, time: Duration) -> Self {
        self.time = Some(time);
        self
    }

    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = Some(output.into());
        self
    }
}

/// The test cases of one command's run.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The suite's name: the command and what it ran on (`rsmc check k8s-1.20/default`).
    pub name: String,
    /// The one-line headline of the run (`verdict: holds (exit 0: every property holds)`).
    pub headline: String,
    /// Facts of the run shown with it (profile, configuration, server, states).
    pub properties: Vec<(String, String)>,
    pub time: Duration,
    pub cases: Vec<Case>,
}

impl Suite {
    /// How many cases ended each way: (failed, errors, skipped).
    fn counts(&self) -> (usize, usize, usize) {
        let count = |f: fn(&Outcome) -> bool| self.cases.iter().filter(|c| f(&c.outcome)).count();
        (
            count(|o| matches!(o, Outcome::Failed { .. })),
            count(|o| matches!(o, Outcome::Error { .. })),
            count(|o| matches!(o, Outcome::Skipped { .. })),
        )
    }
}

/// Write the reports a run asked for: the JUnit file when `junit` names one, and the
/// Markdown summary when `$GITHUB_STEP_SUMMARY` is set. A report that cannot be written is
/// an error naming the file; the command then exits 2 (bad input), since a CI job that asked
/// for a report and gets none would read as if nothing ran.
pub fn write(junit: Option<&Path>, suite: &Suite) -> Result<(), String> {
    if let Some(file) = junit {
        junit::write(file, suite)?;
    }
    if let Some(file) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|f| !f.is_empty()) {
        step_summary::append(Path::new(&file), suite)?;
    }
    Ok(())
}

/// [`write`] for a command about to exit with `code`: its exit code, or 2 when a report it
/// was asked for could not be written (the error printed).
pub fn written(junit: Option<&Path>, suite: &Suite, code: i32) -> i32 {
    match write(junit, suite) {
        Ok(()) => code,
        Err(e) => {
            eprintln!("error: {e}");
            crate::exit::BAD_INPUT
        }
    }
}
