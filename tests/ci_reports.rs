//! The reports CI systems read (`--junit FILE`, and the Markdown summary appended to
//! `$GITHUB_STEP_SUMMARY`) of `rsmc check` and `rsmc oracle`, read back with nextest's JUnit
//! reader: well-formed, one case per property or scenario, and a failure's message naming
//! what broke. `rsmc conform`'s are checked on a real cluster in tests/conformance.rs.

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus};
use std::path::Path;
use std::process::Command;

fn repo(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Run rsmc with `$GITHUB_STEP_SUMMARY` pointing at `summary`: the exit code and stdout.
fn rsmc(args: &[&str], summary: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rsmc"))
        .args(args)
        .env("GITHUB_STEP_SUMMARY", summary)
        .output()
        .expect("rsmc runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn read(file: &Path) -> Report {
    let xml = std::fs::read_to_string(file).expect("the JUnit file is written");
    Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("not JUnit XML: {e}\n{xml}"))
}

fn cases(report: &Report) -> &[TestCase] {
    assert_eq!(report.test_suites.len(), 1, "one suite per run");
    &report.test_suites[0].test_cases
}

fn case<'a>(report: &'a Report, name: &str) -> &'a TestCase {
    cases(report)
        .iter()
        .find(|c| c.name.as_str() == name)
        .unwrap_or_else(|| panic!("no case {name:?}"))
}

fn failure_message(case: &TestCase) -> Option<&str> {
    match &case.status {
        TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Failure,
            message,
            ..
        } => message.as_ref().map(|m| m.as_str()),
        _ => None,
    }
}

/// A case per property, the convergence search's too; a known upstream race is skipped with
/// its label unless `--strict`, where it fails with the property's name in the message, as
/// the exit code does.
#[test]
fn check_writes_a_case_per_property_failing_as_the_exit_code_does() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let config = repo("tests/configs/recreate.json");
    let junit = dir.path().join("reports/check.xml");
    let out = dir.path().join("out");
    let args = |strict: bool| {
        let mut a = vec![
            "check",
            "--config",
            &config,
            "--skip-liveness",
            "--out",
            out.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ];
        if strict {
            a.push("--strict");
        }
        a
    };
    let (code, text) = rsmc(&args(false), &summary);
    assert_eq!(code, 0, "{text}");
    let report = read(&junit);
    let properties = text
        .lines()
        .filter(|l| l.starts_with("  safety ") || l.starts_with("  coverage "))
        .count();
    assert!(properties >= 15, "{text}");
    // Each property of the report, and the convergence search, which was not run.
    assert_eq!(cases(&report).len(), properties + 1, "{text}");
    assert_eq!(report.failures, 0);
    let known = case(&report, "status consistent");
    match &known.status {
        TestCaseStatus::Skipped { message, .. } => {
            let m = message.as_ref().unwrap().as_str();
            assert!(
                m.contains("known upstream race status-onto-recreated"),
                "{m}"
            );
        }
        other => panic!("a known race is shown as skipped: {other:?}"),
    }
    assert!(matches!(
        case(&report, "eventually converges and stays converged").status,
        TestCaseStatus::Skipped { .. }
    ));
    assert!(matches!(
        case(&report, "at most one controller reference per pod").status,
        TestCaseStatus::Success { .. }
    ));

    let (code, text) = rsmc(&args(true), &summary);
    assert_eq!(code, 1, "{text}");
    let report = read(&junit);
    assert_eq!(report.failures, 1);
    let failed = case(&report, "status consistent");
    let message = failure_message(failed).expect("a failure");
    assert!(
        message.starts_with("status consistent: violated"),
        "{message}"
    );
    let out_text = failed
        .system_out
        .as_ref()
        .map(|s| s.as_str())
        .unwrap_or_default();
    assert!(
        out_text.contains("trace: "),
        "the counterexample's files: {out_text}"
    );

    // Both runs appended their summary, the failing one with the failure first.
    let md = std::fs::read_to_string(&summary).unwrap();
    assert_eq!(md.matches("### rsmc check k8s-1.20/").count(), 2, "{md}");
    assert!(
        md.contains("| ❌ | status consistent | status consistent: violated"),
        "{md}"
    );
}

/// A safety search that stops at its memory budget (exit 3) still writes the report: every
/// property an error, none decided.
#[test]
fn a_check_stopped_by_its_budget_reports_every_property_undecided() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("check.xml");
    let (code, text) = rsmc(
        &[
            "check",
            "--config",
            "default",
            "--memory-limit",
            "64M",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &dir.path().join("summary.md"),
    );
    assert_eq!(code, 3, "{text}");
    let report = read(&junit);
    assert!(report.errors >= 15, "{report:?}");
    assert_eq!(report.errors, report.tests);
}

/// One case, the scenario: passed when it conforms, failed with its first divergence when
/// it does not.
#[test]
fn oracle_writes_one_case_with_the_first_divergence_as_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let scenario = repo("oracle/tests/scenarios/ranking.yaml");
    let junit = dir.path().join("oracle.xml");
    let judge = |observed: &str| {
        rsmc(
            &[
                "oracle",
                "--scenario",
                &scenario,
                "--observed",
                &repo(observed),
                "--junit",
                junit.to_str().unwrap(),
            ],
            &summary,
        )
    };
    let (code, text) = judge("oracle/tests/observed/ranking.observed.json");
    assert_eq!(code, 0, "{text}");
    let report = read(&junit);
    assert_eq!((report.tests, report.failures), (1, 0));
    assert!(matches!(
        cases(&report)[0].status,
        TestCaseStatus::Success { .. }
    ));

    let (code, text) = judge("oracle/tests/observed/ranking-wrong-victim.observed.json");
    assert_eq!(code, 1, "{text}");
    let report = read(&junit);
    assert_eq!((report.tests, report.failures), (1, 1));
    let failed = &cases(&report)[0];
    assert_eq!(failed.name.as_str(), "ranking");
    let message = failure_message(failed).expect("a failure");
    assert!(message.starts_with("settle point "), "{message}");
    assert!(
        message.contains("(step 5)"),
        "the divergent step: {message}"
    );
    assert!(!message.contains('\n'), "one line: {message}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("| ❌ | ranking | settle point "), "{md}");
}

/// A report that cannot be written is an error naming the file, exit 2.
#[test]
fn an_unwritable_junit_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let junit = blocker.join("check.xml");
    let (code, text) = rsmc(
        &[
            "oracle",
            "--scenario",
            &repo("oracle/tests/scenarios/ranking.yaml"),
            "--observed",
            &repo("oracle/tests/observed/ranking.observed.json"),
            "--junit",
            junit.to_str().unwrap(),
        ],
        &dir.path().join("summary.md"),
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains(&format!(
            "cannot write the JUnit report {}",
            junit.display()
        )),
        "{text}"
    );
}
