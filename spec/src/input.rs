//! Reading a user's input file with a bound on its size.
//!
//! Every file rsmc reads (configurations, scenarios, manifests, traces, observed traces) is
//! text a person or a recorder wrote; the largest the project has (a recording of 100
//! replicas) is under a megabyte. A path to something endless (`/dev/zero`, a FIFO fed
//! forever) or enormous must be refused, not read until the kernel kills the process.

use std::io::Read;
use std::path::Path;

/// The largest input file rsmc reads.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The text of `path`, refused when it is longer than [`MAX_INPUT_BYTES`] or not UTF-8.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    }
    let mut text = String::new();
    file.take(MAX_INPUT_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "longer than {} MiB, more than any input rsmc reads",
                MAX_INPUT_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}
