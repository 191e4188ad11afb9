//! The clock the controller's timers read (today one: the expectations timeout).
//!
//! Upstream's timer is 5 minutes of wall time. A conformance run that must make expectations
//! expire (the scenario step `expireExpectations`) would wait those 5 minutes on every run;
//! the reference controller instead lets the runner move its clock on. The runner names a
//! file when it starts the controller (`rsmc controller --clock-offset-file`, or the
//! environment variable `rsmc conform --moved-clock` sets) and writes into it how many
//! seconds the controller's clock is ahead of the machine's; every sync reads it afresh. With
//! no file (or before the runner writes one) the clock is the machine's.
//!
//! Only the timers read this clock: back-off, resync and the API server's own time are left
//! alone, so moving it on is exactly the model's `ExpireExpectations` move — nothing else in
//! the controller notices.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The controller's clock: the machine's monotonic clock plus the offset the runner wrote.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    offset_file: Option<PathBuf>,
}

impl Clock {
    /// A clock moved by the seconds written in `offset_file` (none: the machine's clock).
    pub fn new(offset_file: Option<PathBuf>) -> Clock {
        Clock { offset_file }
    }

    /// Now, as the controller's timers see it.
    pub fn now(&self) -> Instant {
        Instant::now() + self.offset()
    }

    /// The offset the file holds now. A file that is missing is no offset (the runner has
    /// not moved the clock yet); one that holds something other than a number of seconds is
    /// logged and read as no offset, rather than stopping the controller mid-run.
    fn offset(&self) -> Duration {
        let Some(path) = &self.offset_file else {
            return Duration::ZERO;
        };
        match std::fs::read_to_string(path) {
            Ok(text) => match text.trim().parse::<u64>() {
                Ok(seconds) => Duration::from_secs(seconds),
                Err(_) if text.trim().is_empty() => Duration::ZERO,
                Err(e) => {
                    tracing::warn!(
                        file = %path.display(),
                        "the clock offset is not a number of seconds ({e}); the clock is not moved"
                    );
                    Duration::ZERO
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Duration::ZERO,
            Err(e) => {
                tracing::warn!(file = %path.display(), "cannot read the clock offset: {e}");
                Duration::ZERO
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_moves_by_what_the_file_says_and_not_otherwise() {
        let dir = std::env::temp_dir().join(format!("rsmc-clock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("offset");
        let clock = Clock::new(Some(file.clone()));
        let before = Instant::now();
        assert!(
            clock.now() < before + Duration::from_secs(60),
            "no file yet"
        );
        std::fs::write(&file, "300\n").unwrap();
        assert!(clock.now() >= before + Duration::from_secs(300));
        std::fs::write(&file, "five minutes").unwrap();
        assert!(
            clock.now() < before + Duration::from_secs(60),
            "not a number"
        );
        assert!(Clock::default().now() < before + Duration::from_secs(60));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
