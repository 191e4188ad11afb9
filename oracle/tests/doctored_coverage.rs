//! Every safety property the model checks and every settled condition has a doctored copy
//! of a real recording in each import's tests (`import.rs`: audit logs, `watch_import.rs`:
//! watch streams), read from their source: an assertion that the copy is rejected naming
//! it, or, where the oracle or the import cannot name it, the assertion of what happens
//! instead with the property it breaks as an argument.

use rsmc_spec::liveness::converged::Condition;
use rsmc_spec::model::properties::{
    self, ADOPTION_RULES, DELETE_ONLY_CONTROLLED, GC_DELETES_ONLY_DEPENDENTS_OF_GONE,
    GC_SPARES_PODS_OTHER_OWNERS_HOLD, NO_CREATE_WHILE_DELETING, NO_DOUBLE_COUNT, NO_OVER_CREATION,
    NO_STEALING, ORPHAN_KEEPS_DEPENDENTS, SCALE_DOWN_RANKED, SINGLE_CONTROLLER, STATUS_CONSISTENT,
};
use stateright::Expectation;
use std::collections::BTreeSet;

/// Each safety property's constant, by the name the tests write it with.
const PROPERTIES: [(&str, &str); 12] = [
    ("SINGLE_CONTROLLER", SINGLE_CONTROLLER),
    ("NO_DOUBLE_COUNT", NO_DOUBLE_COUNT),
    ("ADOPTION_RULES", ADOPTION_RULES),
    ("NO_STEALING", NO_STEALING),
    ("NO_OVER_CREATION", NO_OVER_CREATION),
    ("NO_CREATE_WHILE_DELETING", NO_CREATE_WHILE_DELETING),
    ("DELETE_ONLY_CONTROLLED", DELETE_ONLY_CONTROLLED),
    ("SCALE_DOWN_RANKED", SCALE_DOWN_RANKED),
    (
        "GC_DELETES_ONLY_DEPENDENTS_OF_GONE",
        GC_DELETES_ONLY_DEPENDENTS_OF_GONE,
    ),
    (
        "GC_SPARES_PODS_OTHER_OWNERS_HOLD",
        GC_SPARES_PODS_OTHER_OWNERS_HOLD,
    ),
    ("ORPHAN_KEEPS_DEPENDENTS", ORPHAN_KEEPS_DEPENDENTS),
    ("STATUS_CONSISTENT", STATUS_CONSISTENT),
];

/// The assertions that count as a doctored copy for `{}` (the source stripped of
/// whitespace): rejected naming it (by the helper, the verdict's first break, or a settle
/// point's); rejected naming something else, the oracle having no rule for it
/// (`assert_rejected_not_naming`); accepted, the import unable to see it.
const ASSERTIONS: [&str; 6] = [
    "assert_rejected_for(&v,{})",
    "v.breaks(),Some({})",
    ".settled_breaks,Some({})",
    ".written_breaks,Some({})",
    "assert_rejected_not_naming(&v,{},",
    "!v.broken_in_every_run({})",
];

#[test]
fn every_property_and_settled_condition_has_a_doctored_copy_in_each_import() {
    let safety: BTreeSet<&str> = properties::all()
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .collect();
    let listed: BTreeSet<&str> = PROPERTIES.iter().map(|(_, p)| *p).collect();
    assert_eq!(
        safety, listed,
        "the spec's safety properties changed: list them here, and doctor a recording for each new one in both import tests"
    );
    let names: Vec<String> = PROPERTIES
        .iter()
        .map(|(name, _)| name.to_string())
        .chain(
            Condition::ALL
                .iter()
                .map(|c| format!("Condition::{c:?}.name()")),
        )
        .collect();
    for (file, source) in [
        ("import.rs", include_str!("import.rs")),
        ("watch_import.rs", include_str!("watch_import.rs")),
    ] {
        let text: String = source
            .replace("rsmc_spec::liveness::converged::", "")
            .split_whitespace()
            .collect();
        let missing: Vec<&String> = names
            .iter()
            .filter(|name| {
                !ASSERTIONS
                    .iter()
                    .any(|a| text.contains(&a.replace("{}", name)))
            })
            .collect();
        assert!(
            missing.is_empty(),
            "tests/{file} has no doctored copy for {missing:?}"
        );
    }
}
