//! Helpers shared by the import tests.

use rsmc_oracle::import::Imported;
use rsmc_oracle::judge::Verdict;
use rsmc_spec::budget::Budget;

/// Judged as `rsmc oracle` judges the two files an import writes.
pub fn judged(imported: &Imported) -> Verdict {
    imported
        .judge(&Budget::default().with_states(500_000))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The imported scenario's steps as command lines.
pub fn commands(imported: &Imported) -> Vec<String> {
    imported
        .scenario
        .steps
        .iter()
        .map(|s| s.command())
        .collect()
}

/// The recording is rejected, its first divergent write named as breaking `property`.
pub fn assert_rejected_for(v: &Verdict, property: &str) {
    let text = rsmc_oracle::judge::render(v);
    assert!(!v.conforms, "{text}");
    assert_eq!(v.breaks(), Some(property), "{text}");
}

/// A pod's metadata made another pod's (a doctored creation): `name` and `uid`.
pub fn another_pod(meta: &mut serde_json::Value, name: &str, uid: &str) {
    meta["name"] = name.into();
    meta["uid"] = uid.into();
}

/// The recording breaks `broken`, a property the oracle's rules (`rsmc_oracle::judge::broken`)
/// name at no write of a recording, and is rejected naming `named` instead (`None`:
/// nothing). Should the oracle learn to name it, this fails, and the test is to assert
/// [`assert_rejected_for`] `broken` instead.
pub fn assert_rejected_not_naming(v: &Verdict, broken: &str, named: Option<&str>) {
    let text = rsmc_oracle::judge::render(v);
    assert!(!v.conforms, "{text}");
    assert_ne!(v.breaks(), Some(broken), "{text}");
    assert_eq!(v.breaks(), named, "{text}");
}
