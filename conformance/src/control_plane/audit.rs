//! The local API server's audit log, for recording a run that `rsmc import` turns into a
//! scenario and an observed trace.
//!
//! The policy is `conformance/audit-policy.yaml`, shipped as a file so that any other
//! cluster's API server can be given the same one: every write to pods and ReplicaSets at
//! `RequestResponse` level, once complete, refused ones included. The log is the user's file
//! (named by `rsmc cluster up --audit-log`), outside the state directory, so `rsmc cluster
//! down` leaves it; the API server appends to it.
//!
//! In this cluster every component authenticates as the one admin user, so a record's
//! `user` does not say who wrote; its `userAgent` does (kube-controller-manager names each
//! controller's client after the controller: `…/replicaset-controller`,
//! `…/generic-garbage-collector`).

use super::error::ClusterError;
use super::state::Layout;
use std::path::{Path, PathBuf};

/// The audit policy (`conformance/audit-policy.yaml`).
pub const POLICY: &str = include_str!("../../audit-policy.yaml");

/// `log` made absolute (the API server runs elsewhere), with its directory checked: the
/// flag's value, or what is wrong with it.
pub fn resolve(log: &Path) -> Result<PathBuf, ClusterError> {
    let bad = |why: &str| ClusterError::BadFlag {
        flag: format!("--audit-log {}", log.display()),
        detail: why.to_string(),
    };
    let name = log
        .file_name()
        .ok_or_else(|| bad("expected a file name, not a directory"))?;
    let parent = match log.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = parent
        .canonicalize()
        .map_err(|e| bad(&format!("its directory cannot be used: {e}")))?;
    let path = dir.join(name);
    if path.is_dir() {
        return Err(bad("it is a directory; expected a file to append to"));
    }
    if path.to_str().is_none() {
        return Err(bad(
            "its path is not UTF-8 (it is passed to kube-apiserver in a flag)",
        ));
    }
    Ok(path)
}

/// Writes the policy into the state directory; kube-apiserver's flags for logging to `log`
/// (absolute, from [`resolve`]) as JSON lines.
pub fn flags(layout: &Layout, log: &Path) -> Result<Vec<String>, ClusterError> {
    let policy = layout.audit_policy();
    std::fs::write(&policy, POLICY).map_err(|e| ClusterError::io("cannot write", &policy, e))?;
    Ok(vec![
        format!("--audit-policy-file={}", policy.display()),
        format!("--audit-log-path={}", log.display()),
        "--audit-log-format=json".to_string(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_in_a_missing_directory_or_a_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let e = resolve(&tmp.path().join("nowhere/audit.log")).unwrap_err();
        assert!(
            e.to_string().contains("its directory cannot be used"),
            "{e}"
        );
        let e = resolve(tmp.path()).unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
        let ok = resolve(&tmp.path().join("audit.log")).unwrap();
        assert!(ok.is_absolute());
    }
}
