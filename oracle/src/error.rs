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

impl InputError {
    /// A JSON document that serde could not read: the file, serde_json's line and column,
    /// the field serde_path_to_error followed (none for a syntax error, where it says `?`),
    /// and serde's message without its own " at line L column C".
    pub fn from_json(file: &Path, e: serde_path_to_error::Error<serde_json::Error>) -> InputError {
        // serde_json counts columns from 1, but says 0 at the very start of a line (an input
        // that ends after a newline).
        let (line, column) = (e.inner().line(), e.inner().column().max(1));
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let message = message
            .rsplit_once(" at line ")
            .map_or(message.as_str(), |(m, _)| m)
            .to_string();
        // serde_path_to_error writes "." for the root and "?" where it knows no field.
        let message = if path == "." || path == "?" {
            message
        } else {
            format!("{path}: {message}")
        };
        InputError::at(file, Some(Pos { line, column }), message)
    }
}
