//! JUnit XML, as Kubernetes' own e2e suite writes it (`junit_01.xml`: a `testsuites` root,
//! one `testsuite` whose cases carry its name as their `classname`, a `failure` with a
//! one-line `message` and the explanation as its text) and as GitHub's, GitLab's and
//! Jenkins' test reports read it. Serialised by nextest's `quick-junit`.

use super::{Outcome, Suite};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::Path;

/// The report of `suite` as XML.
pub fn render(suite: &Suite) -> String {
    let mut cases = Vec::new();
    for case in &suite.cases {
        let status = match &case.outcome {
            Outcome::Passed => TestCaseStatus::success(),
            Outcome::Failed { message, detail } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(message.as_str())
                    .set_type("failed")
                    .set_description(detail.as_str());
                s
            }
            Outcome::Error { message, detail } => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                s.set_message(message.as_str())
                    .set_type("error")
                    .set_description(detail.as_str());
                s
            }
            Outcome::Skipped { message } => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(message.as_str());
                s
            }
        };
        let mut test_case = TestCase::new(case.name.as_str(), status);
        test_case.set_classname(suite.name.as_str());
        if let Some(time) = case.time {
            test_case.set_time(time);
        }
        if let Some(output) = &case.output {
            test_case.set_system_out(output.as_str());
        }
        cases.push(test_case);
    }
    let mut test_suite = TestSuite::new(suite.name.as_str());
    test_suite.set_time(suite.time);
    test_suite.add_properties(
        suite
            .properties
            .iter()
            .map(|(name, value)| quick_junit::Property::new(name.as_str(), value.as_str())),
    );
    test_suite.add_test_cases(cases);
    let mut report = Report::new("rsmc");
    report.set_time(suite.time);
    report.add_test_suite(test_suite);
    report.to_string().expect("a JUnit report serialises")
}

/// Write the report of `suite` to `file`, creating its directory.
pub fn write(file: &Path, suite: &Suite) -> Result<(), String> {
    let failed =
        |e: std::io::Error| format!("cannot write the JUnit report {}: {e}", file.display());
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    std::fs::write(file, render(suite)).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ci_report::Case;
    use std::time::Duration;

    fn suite() -> Suite {
        Suite {
            name: "rsmc check k8s-1.20/small".into(),
            headline: "verdict: violated".into(),
            properties: vec![("profile".into(), "k8s-1.20".into())],
            time: Duration::from_millis(1500),
            cases: vec![
                Case::new("no double ownership", Outcome::Passed),
                Case::new(
                    "creations never exceed <replicas> & \"more\"",
                    Outcome::Failed {
                        message: "creations never exceed: violated".into(),
                        detail: "step 1 <a>\nstep 2".into(),
                    },
                ),
                Case::new(
                    "convergence",
                    Outcome::Skipped {
                        message: "not searched".into(),
                    },
                ),
                Case::new(
                    "safety search",
                    Outcome::Error {
                        message: "stopped".into(),
                        detail: String::new(),
                    },
                ),
            ],
        }
    }

    /// What is written reads back as the same cases, names and messages escaped and all.
    #[test]
    fn the_report_reads_back_with_every_case_and_its_outcome() {
        let xml = render(&suite());
        let report = Report::deserialize_from_str(&xml).expect("well-formed JUnit");
        assert_eq!((report.tests, report.failures, report.errors), (4, 1, 1));
        let cases = &report.test_suites[0].test_cases;
        assert_eq!(
            cases[1].name.as_str(),
            "creations never exceed <replicas> & \"more\""
        );
        assert_eq!(
            cases[1].classname.as_ref().map(|c| c.as_str()),
            Some("rsmc check k8s-1.20/small")
        );
        match &cases[1].status {
            TestCaseStatus::NonSuccess {
                kind,
                message,
                description,
                ..
            } => {
                assert_eq!(*kind, NonSuccessKind::Failure);
                assert_eq!(
                    message.as_ref().unwrap().as_str(),
                    "creations never exceed: violated"
                );
                assert_eq!(description.as_ref().unwrap().as_str(), "step 1 <a>\nstep 2");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(cases[2].status, TestCaseStatus::Skipped { .. }));
    }
}
