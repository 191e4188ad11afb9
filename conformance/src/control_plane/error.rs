//! What can go wrong with the local control plane.
//!
//! One enum, so every caller handles the same cases; [`ClusterError::is_bad_input`] splits
//! them into "the request cannot be served as asked" (no cluster there, one already running,
//! an unknown component, no binaries: exit code 2 for the CLI) and "the cluster itself failed"
//! (a component did not start or died). Errors about a component always carry its log file
//! and the last lines of that log, because that is where the reason is.

use std::fmt;
use std::path::PathBuf;

/// How many log lines an error shows.
pub const TAIL_LINES: usize = 20;

/// An error of the local control plane.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Nothing (or nothing alive) in the state directory.
    #[error("no local cluster in {}: run `rsmc cluster up`", dir.display())]
    NoCluster { dir: PathBuf },

    /// `up` found a live cluster in its state directory, or another `rsmc` is busy there.
    #[error(
        "a local cluster is already running in {} ({detail}): use it, or run `rsmc cluster down` first",
        dir.display()
    )]
    AlreadyRunning { dir: PathBuf, detail: String },

    /// The state directory holds files that are not a cluster's, so it is not used (`up`
    /// and `down` remove what they find in their directory).
    #[error(
        "{} is not an rsmc cluster directory (it holds {}); choose another --state-dir",
        dir.display(),
        entries.join(", ")
    )]
    NotAStateDir { dir: PathBuf, entries: Vec<String> },

    /// A component name that the cluster does not have (or a copy name already in use).
    #[error("{0}")]
    UnknownComponent(String),

    /// The etcd / kube-apiserver / kube-controller-manager binaries are not available.
    #[error("Kubernetes server binaries are not available: {0}")]
    Binaries(String),

    /// A component exited, or was not ready in time, while it was being started.
    #[error("{component} failed to start: {reason}\n{}", LogTail { log, tail })]
    ComponentFailed {
        component: String,
        reason: String,
        log: PathBuf,
        tail: String,
    },

    /// A component of a running cluster is no longer alive.
    #[error("{component} is not running (it died)\n{}", LogTail { log, tail })]
    ComponentDied {
        component: String,
        log: PathBuf,
        tail: String,
    },

    /// SIGINT or SIGTERM arrived while the cluster was being started; what had been started
    /// was stopped again.
    #[error("interrupted; everything started so far was stopped")]
    Interrupted,

    /// A flag's value cannot be used (the flag and its value, then why).
    #[error("{flag}: {detail}")]
    BadFlag { flag: String, detail: String },

    /// Preparing the cluster failed outside any component (certificates, files, state).
    #[error("{context}: {detail}")]
    Setup { context: String, detail: String },
}

impl ClusterError {
    /// Whether the request itself cannot be served (no cluster, one already running, an
    /// unknown component, missing binaries) rather than a cluster that failed.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ClusterError::NoCluster { .. }
                | ClusterError::AlreadyRunning { .. }
                | ClusterError::NotAStateDir { .. }
                | ClusterError::UnknownComponent(_)
                | ClusterError::Binaries(_)
                | ClusterError::BadFlag { .. }
        )
    }

    /// The component the error is about, if any.
    pub fn component(&self) -> Option<&str> {
        match self {
            ClusterError::ComponentFailed { component, .. }
            | ClusterError::ComponentDied { component, .. } => Some(component),
            _ => None,
        }
    }

    /// The log file of the component the error is about, if any.
    pub fn log(&self) -> Option<&std::path::Path> {
        match self {
            ClusterError::ComponentFailed { log, .. } | ClusterError::ComponentDied { log, .. } => {
                Some(log)
            }
            _ => None,
        }
    }

    pub(crate) fn setup(context: impl Into<String>, detail: impl fmt::Display) -> Self {
        ClusterError::Setup {
            context: context.into(),
            detail: detail.to_string(),
        }
    }

    /// An I/O error on `path`.
    pub(crate) fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        ClusterError::setup(format!("{what} {}", path.display()), e)
    }
}

/// The log part of a component error: where the log is and its last lines, indented.
struct LogTail<'a> {
    log: &'a PathBuf,
    tail: &'a str,
}

impl fmt::Display for LogTail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "  log: {}", self.log.display())?;
        if self.tail.trim().is_empty() {
            return write!(f, "\n  (the log is empty)");
        }
        write!(f, "\n  last lines:")?;
        for line in self.tail.lines() {
            write!(f, "\n  | {line}")?;
        }
        Ok(())
    }
}
