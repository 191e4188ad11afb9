//! Finding the etcd, kube-apiserver and kube-controller-manager binaries.
//!
//! No registry serves Kubernetes server binaries for these machines, so they are built once
//! by `scripts/provision-control-plane` into a cache outside the checkout (see
//! the book, docs/src/concepts/clusters.md, "Where the binaries come from"). This module only looks in the same places as that script, in
//! the same order, and runs the script when the cache is not complete yet, so `rsmc cluster
//! up` and the tests work on a fresh machine without a separate setup step.

use super::error::ClusterError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Kubernetes version `rsmc cluster up` runs unless told otherwise: the one every
/// recorded result of the project so far comes from.
pub const DEFAULT_VERSION: &str = "v1.20.2";

/// The three binaries a cluster needs.
pub const NAMES: [&str; 3] = ["etcd", "kube-apiserver", "kube-controller-manager"];

/// The provisioning script of the source tree this crate was built from.
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../scripts/provision-control-plane"
);

/// A directory holding the three binaries, and the version they are.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub dir: PathBuf,
    /// As kube-apiserver reports it (`v1.37.2`).
    pub version: String,
}

impl Binaries {
    /// The binaries in `dir`, with the version kube-apiserver reports.
    fn in_dir(dir: PathBuf) -> Result<Binaries, ClusterError> {
        if let Some(m) = missing(&dir) {
            return Err(ClusterError::Binaries(format!(
                "{} lacks executable {m}",
                dir.display()
            )));
        }
        let program = dir.join("kube-apiserver");
        let out = Command::new(&program)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                ClusterError::Binaries(format!("cannot run {}: {e}", program.display()))
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        // "Kubernetes v1.37.2" (a distribution may add a suffix: "v1.32.4-dispatcher").
        let version = text
            .split_whitespace()
            .find(|w| w.starts_with("v1."))
            .filter(|_| out.status.success())
            .ok_or_else(|| {
                ClusterError::Binaries(format!(
                    "{} --version printed {:?}, not a Kubernetes version",
                    program.display(),
                    text.trim()
                ))
            })?;
        Ok(Binaries {
            dir,
            version: version.to_string(),
        })
    }

    /// The minor version (37 for v1.37.2): the components' flags differ by release.
    pub fn minor(&self) -> u32 {
        rsmc_spec::gates::release_minor(&self.version).unwrap_or(0)
    }

    /// kubectl of the same release, where provisioning built one (v1.34 and later); else
    /// the one on PATH.
    pub fn kubectl(&self) -> PathBuf {
        kubectl_in(&self.dir)
    }

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

/// The cache directory the provisioning script fills for `version` (written in full,
/// `v1.37.2`): `${RSMC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rsmc}/k8s-<version>`.
pub fn cache_dir(version: &str) -> PathBuf {
    let base = nonempty_env("RSMC_CACHE")
        .map(PathBuf::from)
        .or_else(|| nonempty_env("XDG_CACHE_HOME").map(|x| PathBuf::from(x).join("rsmc")))
        .unwrap_or_else(|| home().join(".cache").join("rsmc"));
    base.join(format!("k8s-{version}"))
}

/// Where the binaries of Kubernetes `version` (`v1.37.2`, or a minor, `1.37`, for the
/// newest patch the script knows) are: `$RSMC_K8S_BIN` if set; else the cache if the
/// provisioning script completed there; else the provisioning script is run (its progress
/// goes to our stderr; the first time it builds for 8 to 15 minutes).
pub fn locate(version: &str, progress: &dyn Fn(&str)) -> Result<Binaries, ClusterError> {
    if let Some(dir) = nonempty_env("RSMC_K8S_BIN") {
        return Binaries::in_dir(PathBuf::from(&dir))
            .map_err(|e| ClusterError::Binaries(format!("RSMC_K8S_BIN={dir}: {e}")));
    }
    let cache = cache_dir(version);
    let bin = cache.join("bin");
    if cache.join(".complete").is_file() && missing(&bin).is_none() {
        return Binaries::in_dir(bin);
    }
    let script = Path::new(SCRIPT);
    if !script.is_file() {
        return Err(ClusterError::Binaries(format!(
            "{} is not provisioned and the provisioning script of this build ({SCRIPT}) is \
             gone; run scripts/provision-control-plane {version} from an rsmc checkout, or set \
             RSMC_K8S_BIN to a directory with etcd, kube-apiserver and kube-controller-manager",
            cache.display()
        )));
    }
    progress(&format!(
        "provisioning Kubernetes {version} with {} (a build of 8 to 15 minutes the first time)",
        script.display()
    ));
    run_script(script, version)
}

/// Runs the provisioning script; its last line of stdout names the binary directory.
fn run_script(script: &Path, version: &str) -> Result<Binaries, ClusterError> {
    Binaries::in_dir(PathBuf::from(run_provisioning(script, version)?))
}

/// Runs a provisioning script of this source tree for `version` (its progress goes to our
/// stderr) and returns the last line it printed on stdout: what it provisioned (a binary
/// directory, a node image).
pub(crate) fn run_provisioning(script: &Path, version: &str) -> Result<String, ClusterError> {
    let out = Command::new("bash")
        .arg(script)
        .arg(version)
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
            "{} {version} failed ({}); its messages are above",
            script.display(),
            out.status
        )));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .ok_or_else(|| ClusterError::Binaries(format!("{} printed nothing", script.display())))
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

/// `dir/kubectl` where provisioning built one (v1.34 and later), else the one on PATH.
pub fn kubectl_in(dir: &Path) -> PathBuf {
    let own = dir.join("kubectl");
    if own.is_file() {
        own
    } else {
        PathBuf::from("kubectl")
    }
}
