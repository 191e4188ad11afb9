//! Reading an `rsmc-trace/v1` file, for the subcommands that take one (`rsmc scenario
//! --from-trace`, `rsmc explore --trace`): one place that names the file and what is wrong
//! with it.

use rsmc_oracle::trace::Trace;
use rsmc_spec::profile::Profile;
use std::path::Path;

/// The trace in `path` and the profile it was written under; the error names the file (and
/// line and column, or field) and is meant to be printed as it is.
pub fn read(path: &Path) -> Result<(Trace, Profile), String> {
    let text = rsmc_spec::input::read_text(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    rsmc_oracle::trace::parse(path, &text)
}
