//! A kube-rs error in the words a user acts on.
//!
//! kube-rs reports a request that never reached the API server as `ServiceError: client
//! error (Connect)`, which says neither what stopped nor what to do. When the API server is
//! stopping (a kube-apiserver sent SIGTERM keeps its process for its shutdown delay while
//! refusing connections) or gone, that is what a run must say.

use std::error::Error as _;

/// `e` described for a user: a request that could not reach the API server says so, with
/// the operating system's reason; any other error is kube-rs's own words.
pub fn describe(e: &kube::Error) -> String {
    if !matches!(e, kube::Error::Service(_) | kube::Error::HyperError(_)) {
        return e.to_string();
    }
    let mut cause: Option<&dyn std::error::Error> = e.source();
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return format!("the API server stopped answering ({io})");
        }
        cause = c.source();
    }
    if e.to_string().contains("(Connect)") {
        return "the API server stopped answering (cannot connect)".to_string();
    }
    e.to_string()
}
