//! Reading an `rsmc-trace/v1` file, for the subcommands that take one (`rsmc scenario
//! --from-trace`, `rsmc explore --trace`): one place that names the file and what is wrong
//! with it.

use rsmc_oracle::trace::{Trace, SCHEMA};
use rsmc_spec::profile::Profile;
use std::path::Path;

/// The trace in `path` and the profile it was written under; the error names the file (and
/// line and column, or field) and is meant to be printed as it is.
pub fn read(path: &Path) -> Result<(Trace, Profile), String> {
    let file = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{file}: cannot read: {e}"))?;
    let trace: Trace = serde_json::from_str(&text)
        .map_err(|e| format!("{file}:{}:{}: {e}", e.line(), e.column()))?;
    if trace.schema != SCHEMA {
        return Err(format!(
            "{file}: schema: expected {SCHEMA:?}, got {:?}",
            trace.schema
        ));
    }
    let profile = trace
        .profile
        .parse()
        .map_err(|e| format!("{file}: profile: {e}"))?;
    Ok((trace, profile))
}
