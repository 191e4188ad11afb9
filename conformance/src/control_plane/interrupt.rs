//! Ctrl-C while a cluster is being started.
//!
//! The components run in their own process groups (so a Ctrl-C meant for `rsmc` does not
//! also hit a cluster that should outlive it), which means that an interrupted `up` would
//! leave them running unless `up` itself notices the signal. While a [`Guard`] exists, SIGINT
//! and SIGTERM only set a flag that the waiting loops of `up` poll; `up` then stops what it
//! started and returns [`super::ClusterError::Interrupted`]. The previous handlers (the
//! default, or one of the caller's) are put back when the last guard is dropped, so a
//! library caller's own handling is unaffected outside `up`.

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// How many guards exist (readable without the lock, from the waiting loops).
static GUARDS: AtomicUsize = AtomicUsize::new(0);

/// How many guards exist, and the handlers to restore when the last one goes.
static INSTALLED: Mutex<(usize, Option<(SigAction, SigAction)>)> = Mutex::new((0, None));

extern "C" fn on_signal(_: std::ffi::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether SIGINT or SIGTERM arrived since the first live guard was created (always false
/// while no guard exists: then the signals have their usual effect).
pub fn interrupted() -> bool {
    GUARDS.load(Ordering::SeqCst) > 0 && INTERRUPTED.load(Ordering::SeqCst)
}

/// Catches SIGINT and SIGTERM while it lives.
pub struct Guard(());

impl Guard {
    pub fn install() -> Guard {
        let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
        if installed.0 == 0 {
            INTERRUPTED.store(false, Ordering::SeqCst);
            let action = SigAction::new(
                SigHandler::Handler(on_signal),
                SaFlags::SA_RESTART,
                SigSet::empty(),
            );
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            let old = unsafe {
                (
                    sigaction(Signal::SIGINT, &action),
                    sigaction(Signal::SIGTERM, &action),
                )
            };
            if let (Ok(int), Ok(term)) = old {
                installed.1 = Some((int, term));
            }
        }
        installed.0 += 1;
        GUARDS.store(installed.0, Ordering::SeqCst);
        Guard(())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
        installed.0 -= 1;
        GUARDS.store(installed.0, Ordering::SeqCst);
        if installed.0 == 0 {
            if let Some((int, term)) = installed.1.take() {
                // SAFETY: restores handlers that were installed before.
                unsafe {
                    let _ = sigaction(Signal::SIGINT, &int);
                    let _ = sigaction(Signal::SIGTERM, &term);
                }
            }
        }
    }
}
