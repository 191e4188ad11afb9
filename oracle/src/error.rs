//! Errors in the user's input files: always the file, and the line and column when known.

use std::fmt;
use std::path::{Path, PathBuf};

/// A place in a file: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// Renders `:line:column` after a file name, or nothing when the position is unknown.
fn position_suffix(position: &Option<Pos>) -> String {
    position.map_or_else(String::new, |p| format!(":{}:{}", p.line, p.column))
}

/// Malformed or unsupported input (a scenario, a manifest, an observed trace): the file, where
/// in it (when known), and what is wrong — `file:line:column: message`, or `file: message`.
/// The command line exits with code 2 on it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {}", .file.display(), position_suffix(.position), .message)]
pub struct InputError {
    pub file: PathBuf,
    pub position: Option<Pos>,
    pub message: String,
}

impl InputError {
    /// An error about a whole file (one that cannot be read, say), or one its message
    /// locates by field path.
    pub fn in_file(file: &Path, message: impl fmt::Display) -> InputError {
        InputError {
            file: file.to_path_buf(),
            position: None,
            message: message.to_string(),
        }
    }

    /// An error at a position of a file.
    pub fn at(file: &Path, position: Option<Pos>, message: impl fmt::Display) -> InputError {
        InputError {
            file: file.to_path_buf(),
            position,
            message: message.to_string(),
        }
    }
}
