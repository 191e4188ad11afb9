//! The Markdown summary GitHub Actions shows on a job's page: a run appends it to the file
//! `$GITHUB_STEP_SUMMARY` names (other CI systems leave the variable unset, and nothing is
//! written). A heading with the run's headline, then a table of the cases; failures first,
//! with their one-line message, so that the reason is on the page without opening the log.

use super::{Outcome, Suite};
use std::io::Write;
use std::path::Path;

/// The summary of `suite` as Markdown.
pub fn render(suite: &Suite) -> String {
    let (failed, errors, skipped) = suite.counts();
    let passed = suite.cases.len() - failed - errors - skipped;
    let mut out = format!("### {}\n\n{}\n\n", suite.name, escape(&suite.headline));
    let facts: Vec<String> = suite
        .properties
        .iter()
        .map(|(name, value)| format!("{name} `{}`", value.replace('`', "'")))
        .collect();
    if !facts.is_empty() {
        out.push_str(&format!("{}\n\n", facts.join(" · ")));
    }
    out.push_str(&format!(
        "{passed} passed, {failed} failed, {errors} errors, {skipped} skipped\n\n"
    ));
    out.push_str("| | case | detail |\n|---|---|---|\n");
    let rank = |o: &Outcome| match o {
        Outcome::Failed { .. } => 0,
        Outcome::Error { .. } => 1,
        Outcome::Skipped { .. } => 2,
        Outcome::Passed => 3,
    };
    let mut cases: Vec<_> = suite.cases.iter().collect();
    cases.sort_by_key(|c| rank(&c.outcome));
    for case in cases {
        let (mark, detail) = match &case.outcome {
            Outcome::Passed => ("✅", ""),
            Outcome::Failed { message, .. } => ("❌", message.as_str()),
            Outcome::Error { message, .. } => ("⚠️", message.as_str()),
            Outcome::Skipped { message } => ("➖", message.as_str()),
        };
        out.push_str(&format!(
            "| {mark} | {} | {} |\n",
            escape(&case.name),
            escape(detail)
        ));
    }
    out.push('\n');
    out
}

/// Text in a table cell: one line, with the table's own separator escaped.
fn escape(text: &str) -> String {
    text.lines()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// Append the summary of `suite` to `file` (several commands of one job each add theirs).
pub fn append(file: &Path, suite: &Suite) -> Result<(), String> {
    let failed = |e: std::io::Error| {
        format!(
            "cannot append to $GITHUB_STEP_SUMMARY ({}): {e}",
            file.display()
        )
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
        .map_err(failed)?;
    f.write_all(render(suite).as_bytes()).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ci_report::Case;
    use std::time::Duration;

    #[test]
    fn failures_come_first_with_their_message_on_one_line() {
        let suite = Suite {
            name: "rsmc conform v1.37.2".into(),
            headline: "1 of 2 scenarios conform".into(),
            properties: vec![],
            time: Duration::ZERO,
            cases: vec![
                Case::new("scale-up", Outcome::Passed),
                Case::new(
                    "adopt|release",
                    Outcome::Failed {
                        message: "settle point 2:\nstatus | wrong".into(),
                        detail: String::new(),
                    },
                ),
            ],
        };
        let md = render(&suite);
        let failed = md
            .find("adopt\\|release")
            .expect("the failed case, escaped");
        let passed = md.find("scale-up").expect("the passed case");
        assert!(failed < passed, "{md}");
        assert!(
            md.contains("| ❌ | adopt\\|release | settle point 2: status \\| wrong |"),
            "{md}"
        );
        assert!(
            md.contains("1 passed, 1 failed, 0 errors, 0 skipped"),
            "{md}"
        );
    }
}
