//! Certificates and keys of a local cluster, made with the openssl CLI.
//!
//! kube-apiserver could generate a self-signed serving certificate itself (`--cert-dir`),
//! but rustls (used by kube-rs) rejects a self-signed end-entity certificate as its own
//! trust anchor. So a small CA signs a serving certificate for 127.0.0.1 and localhost, and
//! the kubeconfig carries the CA. The service-account RSA key signs and verifies service
//! account tokens (kube-apiserver requires one, and the token controller signs with it).
//! The openssl CLI is used rather than a Rust crate because it is on every machine of this
//! kind and keeps the dependency tree small.

use super::error::ClusterError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The files made by [`generate`].
#[derive(Debug, Clone)]
pub struct Certs {
    pub ca_cert: PathBuf,
    pub serving_cert: PathBuf,
    pub serving_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_pub: PathBuf,
}

/// Makes the CA, the serving certificate and the service-account key pair in `dir`.
pub fn generate(dir: &Path) -> Result<Certs, ClusterError> {
    std::fs::create_dir_all(dir).map_err(|e| ClusterError::io("cannot create", dir, e))?;
    let certs = Certs {
        ca_cert: dir.join("ca.crt"),
        serving_cert: dir.join("apiserver.crt"),
        serving_key: dir.join("apiserver.key"),
        sa_key: dir.join("sa.key"),
        sa_pub: dir.join("sa.pub"),
    };
    let ca_key = dir.join("ca.key");
    let csr = dir.join("apiserver.csr");
    let ext = dir.join("apiserver.ext");
    std::fs::write(
        &ext,
        "basicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\n\
         extendedKeyUsage=serverAuth\n\
         subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .map_err(|e| ClusterError::io("cannot write", &ext, e))?;

    openssl(
        "req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=rsmc-local-ca \
         -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
        &[("-keyout", &ca_key), ("-out", &certs.ca_cert)],
    )?;
    openssl(
        "req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver",
        &[("-keyout", &certs.serving_key), ("-out", &csr)],
    )?;
    let serial = super::kubeconfig::random_hex(16)?;
    openssl(
        &format!("x509 -req -days 3650 -set_serial 0x{serial}"),
        &[
            ("-in", &csr),
            ("-CA", &certs.ca_cert),
            ("-CAkey", &ca_key),
            ("-extfile", &ext),
            ("-out", &certs.serving_cert),
        ],
    )?;
    openssl(
        "genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048",
        &[("-out", &certs.sa_key)],
    )?;
    openssl(
        "rsa -pubout",
        &[("-in", &certs.sa_key), ("-out", &certs.sa_pub)],
    )?;
    for scratch in [&csr, &ext] {
        let _ = std::fs::remove_file(scratch);
    }
    Ok(certs)
}

/// Runs `openssl` with `options` (split at whitespace) and then the file options.
fn openssl(options: &str, files: &[(&str, &PathBuf)]) -> Result<(), ClusterError> {
    let mut cmd = Command::new("openssl");
    cmd.args(options.split_whitespace());
    for (flag, file) in files {
        cmd.arg(flag).arg(file);
    }
    let out = cmd.output().map_err(|e| {
        ClusterError::setup("cannot run openssl (is the openssl CLI installed?)", e)
    })?;
    if out.status.success() {
        Ok(())
    } else {
        let subcommand = options.split_whitespace().next().unwrap_or_default();
        Err(ClusterError::setup(
            format!("openssl {subcommand} failed ({})", out.status),
            String::from_utf8_lossy(&out.stderr).trim(),
        ))
    }
}
