//! Finding the etcd, kube-apiserver and kube-controller-manager binaries.
//!
//! No registry serves Kubernetes server binaries for these machines, so they are built once
//! by `scripts/provision-control-plane` into a cache outside the checkout (see
//! `docs/control-plane.md`). This module only looks in the same places as that script, in
//! the same order, and runs the script when the cache is not complete yet, so `rsmc cluster
//! up` and the tests work on a fresh machine without a separate setup step.

use super::error::ClusterError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Kubernetes version of the control plane.
pub const K8S_VERSION: &str = "v1.20.2";

/// The three binaries a cluster needs.
pub const NAMES: [&str; 3] = ["etcd", "kube-apiserver", "kube-controller-manager"];

/// The provisioning script of the source tree this crate was built from.
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scripts/provision-control-plane"
);

/// A directory holding the three binaries.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
}

impl Binaries {
    pub fn etcd(&self) -> PathBuf {
        self.dir.join("etcd")
    }
    pub fn kube_apiserver(&self) -> PathBuf {
        self.dir.join("kube-apiserver")
    }
    pub fn kube_controller_manager(&self) -> PathBuf {
        self.dir.join("kube-controller-manager")
    }
}

/// The cache directory the provisioning script fills:
/// `${RSMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rsmc}/k8s-v1.20.2`.
pub fn cache_dir() -> PathBuf {
    let base = nonempty_env("RSMC_CACHE")
        .map(PathBuf::from)
        .or_else(|| nonempty_env("XDG_CACHE_HOME").map(|x| PathBuf::from(x).join("rsmc")))
        .unwrap_or_else(|| home().join(".cache").join("rsmc"));
    base.join(format!("k8s-{K8S_VERSION}"))
}

/// Where the binaries are: `$RSMC_K8S_BIN` if set; else the cache if the provisioning
/// script completed there; else the provisioning script is run (its progress goes to our
/// stderr; the first time it builds for about 8 minutes).
pub fn locate(progress: &dyn Fn(&str)) -> Result<Binaries, ClusterError> {
    if let Some(dir) = nonempty_env("RSMC_K8S_BIN") {
        let dir = PathBuf::from(dir);
        return match missing(&dir) {
            None => Ok(Binaries { dir }),
            Some(m) => Err(ClusterError::Binaries(format!(
                "RSMC_K8S_BIN={} lacks executable {m}",
                dir.display()
            ))),
        };
    }
    let cache = cache_dir();
    let bin = cache.join("bin");
    if cache.join(".complete").is_file() && missing(&bin).is_none() {
        return Ok(Binaries { dir: bin });
    }
    let script = Path::new(SCRIPT);
    if !script.is_file() {
        return Err(ClusterError::Binaries(format!(
            "{} is not provisioned and the provisioning script of this build ({SCRIPT}) is \
             gone; run scripts/provision-control-plane from an rsmc checkout, or set \
             RSMC_K8S_BIN to a directory with etcd, kube-apiserver and kube-controller-manager",
            cache.display()
        )));
    }
    progress(&format!(
        "provisioning Kubernetes {K8S_VERSION} binaries into {} (about 8 minutes, once)",
        cache.display()
    ));
    run_script(script)
}

/// Runs the provisioning script; its last line of stdout names the binary directory.
fn run_script(script: &Path) -> Result<Binaries, ClusterError> {
    let out = Command::new("bash")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| ClusterError::Binaries(format!("cannot run {}: {e}", script.display())))?;
    if super::interrupt::interrupted() {
        return Err(ClusterError::Interrupted);
    }
    if !out.status.success() {
        return Err(ClusterError::Binaries(format!(
            "{} failed ({}); its messages are above",
            script.display(),
            out.status
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let dir = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| PathBuf::from(l.trim()))
        .ok_or_else(|| {
            ClusterError::Binaries(format!("{} printed no directory", script.display()))
        })?;
    match missing(&dir) {
        None => Ok(Binaries { dir }),
        Some(m) => Err(ClusterError::Binaries(format!(
            "{} lacks executable {m} after provisioning",
            dir.display()
        ))),
    }
}

/// The first of the three binaries that is not an executable file in `dir`.
fn missing(dir: &Path) -> Option<&'static str> {
    use std::os::unix::fs::PermissionsExt;
    NAMES.into_iter().find(|name| {
        !std::fs::metadata(dir.join(name))
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    })
}

fn nonempty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub(crate) fn home() -> PathBuf {
    nonempty_env("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}
