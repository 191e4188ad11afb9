//! What every command prints on stdout: JSON when asked (`--json`), for scripts and CI,
//! else the report for people. One place, so the two never drift apart in how they are
//! chosen or how the JSON is laid out.

use serde::Serialize;
use std::path::PathBuf;

/// Print `value` as pretty JSON when `json`, else what `human` prints.
pub fn print<T: Serialize + ?Sized>(json: bool, value: &T, human: impl FnOnce()) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(value).expect("reports serialise")
        );
    } else {
        human();
    }
}

/// This rsmc executable, which the benchmarks run as child processes; the error says why
/// it cannot be found, with the exit code to return.
pub fn own_executable() -> Result<PathBuf, i32> {
    std::env::current_exe().map_err(|e| {
        eprintln!("error: cannot find the rsmc executable: {e}");
        crate::exit::BAD_INPUT
    })
}
