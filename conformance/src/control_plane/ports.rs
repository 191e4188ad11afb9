//! Free loopback ports.
//!
//! The machines are shared (other clusters, other test runs, a user's own etcd), so the
//! components never use their default ports: the kernel picks free ones. All listeners are
//! held until every port is chosen, so the ports of one cluster are distinct; they are
//! released just before the components bind them, which leaves a small window in which
//! another program could take one (the component then fails to start and says so in its log).

use super::error::ClusterError;
use std::net::{Ipv4Addr, TcpListener};

/// `n` distinct free TCP ports on 127.0.0.1.
pub fn free_ports(n: usize) -> Result<Vec<u16>, ClusterError> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ClusterError::setup("cannot find a free port on 127.0.0.1", e))?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ClusterError::setup("cannot find a free port on 127.0.0.1", e))
}
