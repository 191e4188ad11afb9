//! Free loopback ports for a cluster's components, safe against other clusters coming up at
//! the same time.
//!
//! The machines are shared (other clusters, other test runs, a user's own etcd), so the
//! components never use their default ports. A port has to be chosen before the component
//! that listens on it starts, and between the two it is free for anyone to take. Two things
//! took them, seen when the suite's control planes came up side by side (issue 67; "event-gate
//! … Address already in use" with six at once):
//!
//! - **another `rsmc cluster up`** choosing the same port in that window. A [`Reservation`]
//!   holds a machine-wide lock (`flock` on a file in the temporary directory) from choosing
//!   until the caller drops it, which `up` does once every component listens: the windows of
//!   two `up`s never overlap, and a port a running cluster listens on is never chosen, since
//!   it cannot be bound.
//! - **the kernel**, which hands the same ports out for `bind(0)` and as the local port of
//!   every outgoing connection (each API server's connections to its etcd, kubectl's, the
//!   controllers'). The ports are therefore chosen below the kernel's ephemeral range
//!   (`/proc/sys/net/ipv4/ip_local_port_range`), where it never picks one by itself, starting
//!   at a random place so that two machines' worth of clusters do not crowd the same ports.

use super::error::ClusterError;
use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::ops::Range;
use std::path::PathBuf;

/// The lowest port chosen: below it are the well-known and commonly configured services.
const LOWEST: u16 = 10_000;

/// The ports of one cluster, chosen under the machine-wide lock, which is held until this is
/// dropped.
pub struct Reservation {
    _lock: File,
}

impl Reservation {
    /// Waits for the machine-wide lock (`waiting` is called once if another `up` holds it).
    pub fn take(waiting: &dyn Fn(&str)) -> Result<Reservation, ClusterError> {
        Reservation::take_at(&lock_file(), waiting)
    }

    /// Waits for the lock held on the file at `path`: the machine-wide one for [`take`], a
    /// private one in the tests, whose waits would otherwise queue behind every cluster the
    /// suite brings up beside them (one that came up in between held the machine-wide lock
    /// for 50 s on a loaded machine).
    ///
    /// [`take`]: Reservation::take
    fn take_at(
        path: &std::path::Path,
        waiting: &dyn Fn(&str),
    ) -> Result<Reservation, ClusterError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .or_else(|_| File::open(path))
            .map_err(|e| ClusterError::io("cannot open the port lock", path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                waiting("waiting for another cluster to finish choosing its ports");
                file.lock()
                    .map_err(|e| ClusterError::io("cannot lock", path, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(ClusterError::io("cannot lock", path, e))
            }
        }
        Ok(Reservation { _lock: file })
    }

    /// `n` distinct ports on 127.0.0.1 that are free now and outside the kernel's ephemeral
    /// range.
    pub fn free_ports(&self, n: usize) -> Result<Vec<u16>, ClusterError> {
        let range = outside_ephemeral(&ephemeral_range());
        let len = u32::from(range.end - range.start);
        let start = random_below(len)?;
        let mut found = Vec::with_capacity(n);
        // Held until every port is chosen, so the ports are distinct.
        let mut listeners = Vec::with_capacity(n);
        for i in 0..len {
            if found.len() == n {
                break;
            }
            let port = range.start + ((start + i) % len) as u16;
            if let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, port)) {
                listeners.push(l);
                found.push(port);
            }
        }
        if found.len() < n {
            return Err(ClusterError::setup(
                "cannot find a free port on 127.0.0.1",
                format!(
                    "only {} of {n} free in {}..{} (outside the kernel's ephemeral range)",
                    found.len(),
                    range.start,
                    range.end
                ),
            ));
        }
        Ok(found)
    }
}

/// The machine-wide lock file: the same for every user's `rsmc` on the machine.
fn lock_file() -> PathBuf {
    std::env::temp_dir().join("rsmc-ports.lock")
}

/// The kernel's ephemeral port range (Linux's default where it cannot be read).
fn ephemeral_range() -> Range<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|p| p.parse::<u16>().ok());
            let (lo, hi) = (it.next()??, it.next()??);
            (lo <= hi).then(|| lo..hi.saturating_add(1))
        })
        .unwrap_or(32_768..61_000)
}

/// The larger of the ranges below and above `ephemeral` (from [`LOWEST`]).
fn outside_ephemeral(ephemeral: &Range<u16>) -> Range<u16> {
    let below = LOWEST..ephemeral.start.max(LOWEST);
    let above = ephemeral.end.max(LOWEST)..u16::MAX;
    if below.len() >= above.len() {
        below
    } else {
        above
    }
}

/// A random number below `n` (`n` > 0), from /dev/urandom.
fn random_below(n: u32) -> Result<u32, ClusterError> {
    use std::io::Read;
    let mut buf = [0u8; 4];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| ClusterError::setup("cannot read /dev/urandom", e))?;
    Ok(u32::from_le_bytes(buf) % n.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_chosen_below_the_default_ephemeral_range() {
        assert_eq!(outside_ephemeral(&(32_768..61_000)), 10_000..32_768);
        // A range that leaves more room above.
        assert_eq!(outside_ephemeral(&(1_024..20_000)), 20_000..65_535);
    }

    #[test]
    fn the_ports_are_distinct_free_and_outside_the_ephemeral_range() {
        let reservation = Reservation::take(&|_| {}).unwrap();
        let ports = reservation.free_ports(5).unwrap();
        let mut sorted = ports.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 5, "{ports:?}");
        let ephemeral = ephemeral_range();
        for port in ports {
            assert!(!ephemeral.contains(&port), "{port} in {ephemeral:?}");
            TcpListener::bind((Ipv4Addr::LOCALHOST, port)).expect("free after choosing");
        }
    }

    #[test]
    fn a_second_reservation_waits_for_the_first() {
        // A lock of its own: the machine-wide one is taken by every cluster the suite brings
        // up beside this test, and one of them may take it between the two below.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ports.lock");
        let first = Reservation::take_at(&path, &|_| {}).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let second_path = path.clone();
        let second = std::thread::spawn(move || {
            let told = std::cell::Cell::new(false);
            let r = Reservation::take_at(&second_path, &|_| told.set(true)).unwrap();
            tx.send(()).unwrap();
            drop(r);
            told.get()
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the second reservation was taken while the first was held"
        );
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10))
            .expect("taken once the first is dropped");
        assert!(second.join().unwrap(), "the waiting was told");
    }
}
