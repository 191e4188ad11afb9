//! The ReplicaSet controller under test, and what the runner can do to it.
//!
//! Scenarios may crash and restart the controller (`restartController`) or hand over between
//! two instances (`startSecondLeader`, `stopFirstLeader`). The runner can force these only on
//! a controller whose processes it controls:
//! - the built-in controller of the local control plane (`rsmc cluster up` runs it as a
//!   kube-controller-manager of its own, `kcm-replicaset`, beside the garbage collector's);
//! - an external controller the runner starts from `--controller-cmd`.
//!
//! On any other cluster (a kubeconfig, kind) such a step cannot be forced; the run reports
//! that step as not forced and judges what the cluster did anyway.
//!
//! An external controller whose timers read a clock the runner may move (the reference
//! controller's `--clock-offset-file`, named by [`OFFSET_FILE_ENV`]) has its expectations
//! expire at once on `expireExpectations` ([`Controllers::move_clock`]); any other waits the
//! 5 minutes out.

use crate::control_plane::{spawn_shell_logged, LocalCluster, Supervised};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The environment variable an external controller finds its clock offset file in (the
/// reference controller's `--clock-offset-file` reads it).
pub const OFFSET_FILE_ENV: &str = "RSMC_CLOCK_OFFSET_FILE";

/// The local cluster's component that runs the built-in ReplicaSet controller.
const BUILTIN: &str = "kcm-replicaset";
/// The name of a second built-in instance (a leader handover).
const BUILTIN_SECOND: &str = "kcm-replicaset-2";

/// Which implementation is tested.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Implementation {
    /// kube-controller-manager's replicaset controller.
    Builtin,
    /// A command that runs a ReplicaSet controller against `$KUBECONFIG` (on a local
    /// cluster: through its event gate). `moved_clock`: its timers read the offset file
    /// named in [`OFFSET_FILE_ENV`], so the runner moves its clock rather than waiting.
    External { command: String, moved_clock: bool },
}

/// The controller processes of a run.
pub struct Controllers {
    implementation: Implementation,
    local: Option<LocalCluster>,
    kubeconfig: PathBuf,
    log_dir: PathBuf,
    /// External instances: [first, second].
    external: [Option<Supervised>; 2],
    starts: usize,
    /// The external controller's clock, when it is moved rather than waited for.
    clock: Option<MovedClock>,
}

/// The clock offset file of an external controller, and the seconds it holds.
struct MovedClock {
    file: PathBuf,
    seconds: u64,
}

impl MovedClock {
    /// A clock that reads the machine's time, in `dir`.
    fn new(dir: &Path) -> Result<MovedClock, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let clock = MovedClock {
            file: dir.join("clock-offset"),
            seconds: 0,
        };
        clock.write()?;
        Ok(clock)
    }

    fn move_on(&mut self, by: Duration) -> Result<(), String> {
        self.seconds += by.as_secs();
        self.write()
    }

    /// Writes the offset atomically: the controller may read it at any moment.
    fn write(&self) -> Result<(), String> {
        let new = self.file.with_extension("new");
        std::fs::write(&new, format!("{}\n", self.seconds))
            .and_then(|()| std::fs::rename(&new, &self.file))
            .map_err(|e| {
                format!(
                    "cannot move the controller's clock ({}): {e}",
                    self.file.display()
                )
            })
    }
}

/// A controller step the runner cannot force here, and why.
#[derive(Debug)]
pub struct NotForced(pub String);

impl Controllers {
    /// Start what the run needs: an external controller's first instance.
    pub fn start(
        implementation: Implementation,
        local: Option<LocalCluster>,
        kubeconfig: &Path,
        log_dir: &Path,
    ) -> Result<Controllers, String> {
        if let (Implementation::External { .. }, Some(local)) = (&implementation, &local) {
            if local.builtin_replicaset() {
                return Err(format!(
                    "the local cluster in {} runs the built-in ReplicaSet controller, which would fight the external one: start it with `rsmc cluster up --without-replicaset`",
                    local.state_dir().display()
                ));
            }
        }
        if let (Implementation::Builtin, Some(local)) = (&implementation, &local) {
            if !local.builtin_replicaset() {
                return Err(format!(
                    "the local cluster in {} was started --without-replicaset: test an external controller with `--controller external --controller-cmd CMD`, or restart the cluster with the built-in one",
                    local.state_dir().display()
                ));
            }
        }
        // On a local cluster the controller talks through the event gate (when there is
        // one), so that `hold` steps can hold its watch events.
        let kubeconfig = match &local {
            Some(local) => local.controller_kubeconfig(),
            None => kubeconfig.to_path_buf(),
        };
        let clock = match &implementation {
            Implementation::External {
                moved_clock: true, ..
            } => Some(MovedClock::new(log_dir)?),
            _ => None,
        };
        let mut c = Controllers {
            implementation,
            local,
            kubeconfig,
            log_dir: log_dir.to_path_buf(),
            external: [None, None],
            starts: 0,
            clock,
        };
        if matches!(c.implementation, Implementation::External { .. }) {
            c.external[0] = Some(c.spawn_external()?);
        }
        Ok(c)
    }

    pub fn implementation(&self) -> &Implementation {
        &self.implementation
    }

    fn spawn_external(&mut self) -> Result<Supervised, String> {
        let Implementation::External { command, .. } = &self.implementation else {
            unreachable!("only external controllers are spawned")
        };
        self.starts += 1;
        std::fs::create_dir_all(&self.log_dir).map_err(|e| e.to_string())?;
        let log = self.log_dir.join(format!("controller-{}.log", self.starts));
        let mut env = vec![(
            "KUBECONFIG".to_string(),
            self.kubeconfig.display().to_string(),
        )];
        if let Some(clock) = &self.clock {
            env.push((
                OFFSET_FILE_ENV.to_string(),
                clock.file.display().to_string(),
            ));
        }
        let process =
            spawn_shell_logged("controller", command, &env, &log).map_err(|e| e.to_string())?;
        // A controller that cannot even start says so at once; give it a moment.
        std::thread::sleep(Duration::from_millis(500));
        if !process.is_alive() {
            return Err(format!(
                "the controller command `{command}` exited at once; its log: {}\n{}",
                log.display(),
                tail(&log)
            ));
        }
        Ok(process)
    }

    /// Whether the controller (and, for a local cluster, the control plane) still runs.
    pub fn check_alive(&self) -> Result<(), String> {
        if let Some(local) = &self.local {
            local.check_alive().map_err(|e| e.to_string())?;
        }
        for p in self.external.iter().flatten() {
            if !p.is_alive() {
                return Err(format!(
                    "the controller under test (pid {}) exited; its log is in {}",
                    p.pid(),
                    self.log_dir.display()
                ));
            }
        }
        Ok(())
    }

    /// Whether a scenario's controller steps can be forced here.
    pub fn can_force(&self) -> Result<(), NotForced> {
        match (&self.implementation, &self.local) {
            (Implementation::External { .. }, _) | (Implementation::Builtin, Some(_)) => Ok(()),
            (Implementation::Builtin, None) => Err(NotForced(
                "the built-in controller of a cluster the runner does not manage cannot be restarted or duplicated"
                    .into(),
            )),
        }
    }

    /// Whether the work queues of every controller at work on the cluster can be read
    /// ([`crate::workqueues`]): on a local cluster, the built-in replicaset controller
    /// running alone (no second instance, not stopped) and the garbage collector, each
    /// serving its metrics. Not for an external controller, whose queues the runner cannot
    /// see, nor on a cluster it does not manage.
    pub fn queues_readable(&self) -> bool {
        use crate::control_plane::components::{KCM_GC, KCM_SYSTEM};
        let (Implementation::Builtin, Some(local)) = (&self.implementation, &self.local) else {
            return false;
        };
        local.running_controllers().is_ok_and(|running| {
            let serves = |name: &str| running.iter().any(|(n, m)| n == name && m.is_some());
            serves(BUILTIN)
                && serves(KCM_GC)
                && running.iter().all(|(n, m)| m.is_some() || n == KCM_SYSTEM)
        })
    }

    /// Move the controller's clock on by `by` (the expectations expire at its next sync);
    /// `None` when its clock is the machine's, so the time must be waited out.
    pub fn move_clock(&mut self, by: Duration) -> Option<Result<(), String>> {
        self.clock.as_mut().map(|clock| clock.move_on(by))
    }

    /// The controller crashes and restarts (`restartController`).
    pub fn restart(&mut self) -> Result<(), String> {
        match (&self.implementation, &self.local) {
            (Implementation::Builtin, Some(local)) => {
                local.restart(BUILTIN).map_err(|e| e.to_string())
            }
            (Implementation::External { .. }, _) => {
                if let Some(p) = self.external[0].take() {
                    // A crash: no time to shut down cleanly.
                    p.stop_within(Duration::ZERO);
                }
                self.external[0] = Some(self.spawn_external()?);
                Ok(())
            }
            _ => unreachable!("checked by can_force"),
        }
    }

    /// A second instance starts (`startSecondLeader`).
    pub fn start_second(&mut self) -> Result<(), String> {
        match (&self.implementation, &self.local) {
            (Implementation::Builtin, Some(local)) => local
                .start_copy(BUILTIN, BUILTIN_SECOND)
                .map_err(|e| e.to_string()),
            (Implementation::External { .. }, _) => {
                self.external[1] = Some(self.spawn_external()?);
                Ok(())
            }
            _ => unreachable!("checked by can_force"),
        }
    }

    /// The first instance stops (`stopFirstLeader`).
    pub fn stop_first(&mut self) -> Result<(), String> {
        match (&self.implementation, &self.local) {
            (Implementation::Builtin, Some(local)) => {
                local.stop(BUILTIN).map_err(|e| e.to_string())
            }
            (Implementation::External { .. }, _) => {
                if let Some(p) = self.external[0].take() {
                    p.stop();
                }
                Ok(())
            }
            _ => unreachable!("checked by can_force"),
        }
    }

    /// Back to one running first instance, after a scenario that handed over or restarted:
    /// the next scenario starts from the same controller set-up.
    pub fn reset(&mut self) -> Result<(), String> {
        match (&self.implementation, &self.local) {
            (Implementation::Builtin, Some(local)) => {
                let status =
                    crate::control_plane::status(local.state_dir()).map_err(|e| e.to_string())?;
                let running = |name: &str| {
                    status
                        .components
                        .iter()
                        .any(|c| c.name == name && c.pid.is_some())
                };
                if running(BUILTIN_SECOND) {
                    local.stop(BUILTIN_SECOND).map_err(|e| e.to_string())?;
                }
                if !running(BUILTIN) {
                    local.restart(BUILTIN).map_err(|e| e.to_string())?;
                }
                Ok(())
            }
            (Implementation::External { .. }, _) => {
                if let Some(p) = self.external[1].take() {
                    p.stop();
                }
                if self.external[0].is_none() {
                    self.external[0] = Some(self.spawn_external()?);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Write the clock offset whole (a new file renamed over the old), so that the controller
/// never reads half a number.
fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}
