//! The admin credentials and the kubeconfig of a local cluster.
//!
//! A static bearer token (`--token-auth-file`) for a user `admin` in group `system:masters`
//! is the simplest authentication that works for every client at once: kubectl, kube-rs and
//! both kube-controller-managers use the same kubeconfig. Client certificates would need
//! another signing step and gain nothing on a loopback-only cluster. The kubeconfig embeds
//! the CA (`certificate-authority-data`) so clients verify the server instead of skipping
//! verification, and so the file can be copied elsewhere on the machine.

use super::error::ClusterError;
use std::io::Read;
use std::path::Path;

/// The user of the token.
pub const USER: &str = "admin";
/// The context and cluster name in the kubeconfig.
pub const CONTEXT: &str = "rsmc-local";

/// `bytes` random bytes from the kernel, in hex.
pub fn random_hex(bytes: usize) -> Result<String, ClusterError> {
    let mut buf = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| ClusterError::setup("cannot read /dev/urandom", e))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes the token file kube-apiserver reads (`token,user,uid,"group"`).
pub fn write_token_file(path: &Path, token: &str) -> Result<(), ClusterError> {
    write_private(path, &format!("{token},{USER},{USER},\"system:masters\"\n"))
}

/// Writes the kubeconfig for `server` with the CA certificate file `ca` (an HTTPS server)
/// and `token` (none: the event gate adds the credentials).
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca: Option<&Path>,
    token: Option<&str>,
) -> Result<(), ClusterError> {
    let user = match token {
        Some(token) => format!("\n    token: {token}"),
        None => " {}".to_string(),
    };
    let ca = match ca {
        Some(ca) => {
            let pem = std::fs::read(ca).map_err(|e| ClusterError::io("cannot read", ca, e))?;
            format!("\n    certificate-authority-data: {}", base64(&pem))
        }
        None => String::new(),
    };
    let text = format!(
        "apiVersion: v1\n\
         kind: Config\n\
         clusters:\n\
         - name: {CONTEXT}\n  \
           cluster:\n    \
             server: {server}{ca}\n\
         users:\n\
         - name: {USER}\n  \
           user:{user}\n\
         contexts:\n\
         - name: {CONTEXT}\n  \
           context:\n    \
             cluster: {CONTEXT}\n    \
             user: {USER}\n    \
             namespace: default\n\
         current-context: {CONTEXT}\n",
    );
    write_private(path, &text)
}

/// Writes a file only its owner can read (it holds a credential).
fn write_private(path: &Path, text: &str) -> Result<(), ClusterError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| ClusterError::io("cannot write", path, e))
}

/// Standard base64 with padding (the kubeconfig's `*-data` fields).
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(input.as_bytes()), expected);
        }
    }
}
