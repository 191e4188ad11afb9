//! Starting, watching and stopping the processes of a cluster.
//!
//! Each process runs in its own process group: a Ctrl-C meant for `rsmc` must not reach a
//! cluster that outlives the command that started it, and stopping a process must also stop
//! whatever it started (a `sh -c` controller's children). Its stdout and stderr go to one log
//! file (appended to, with a header line per start, so a restart keeps the earlier run's
//! lines), which is where every error message points.
//!
//! Cluster components outlive `rsmc cluster up`, so they are known only by the pid files in
//! the state directory. A pid is trusted only while `/proc/PID/cmdline` still mentions the
//! state directory (every component's command line names files in it), so a reused pid of
//! some unrelated process is never signalled. [`Supervised`] is for processes that live only
//! as long as their owner (an external controller under test); it stops them when dropped.

use super::error::{ClusterError, TAIL_LINES};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a process gets to exit after SIGTERM before it is killed.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// How to start a component; kept in `cluster.json` so it can be started again.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CommandLine {
    pub program: PathBuf,
    pub args: Vec<String>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

impl CommandLine {
    /// The command as one shell-like line (for logs and messages).
    pub fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self, log: &Path) -> Result<Command, ClusterError> {
        let (out, err) = open_log(log, &self.display())?;
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        Ok(cmd)
    }
}

/// A process that was started, and where in its log this start begins.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    pub pid: u32,
    /// The log's length when the process started: readiness looks only after it.
    pub log_offset: u64,
}

/// Starts a cluster component that outlives this process: in its own process group, output
/// appended to `log`, pid written to `pid_file`.
pub fn spawn_detached(
    name: &str,
    cmd: &CommandLine,
    log: &Path,
    pid_file: &Path,
) -> Result<Started, ClusterError> {
    let mut command = cmd.command(log)?;
    let log_offset = std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
    let child = command.spawn().map_err(|e| ClusterError::ComponentFailed {
        component: name.to_string(),
        reason: format!("cannot run {}: {e}", cmd.program.display()),
        log: log.to_path_buf(),
        tail: tail(log),
    })?;
    let pid = child.id();
    // Not waited for through `child`: `alive` reaps it with waitpid when it exits while we
    // are still its parent.
    drop(child);
    std::fs::write(pid_file, format!("{pid}\n"))
        .map_err(|e| ClusterError::io("cannot write", pid_file, e))?;
    Ok(Started { pid, log_offset })
}

/// Opens `log` for appending and writes a header naming what starts now; returns two handles
/// for stdout and stderr.
fn open_log(log: &Path, what: &str) -> Result<(File, File), ClusterError> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| ClusterError::io("cannot create", dir, e))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| ClusterError::io("cannot open", log, e))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    writeln!(file, "==== rsmc: starting at unix time {now}: {what}")
        .map_err(|e| ClusterError::io("cannot write", log, e))?;
    let second = file
        .try_clone()
        .map_err(|e| ClusterError::io("cannot open", log, e))?;
    Ok((file, second))
}

/// Whether `pid` is a live (not zombie) process whose command line contains `marker`.
/// Reaps it first if it is an exited child of ours.
pub fn alive(pid: u32, marker: &str) -> bool {
    if !running(pid) {
        return false;
    }
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => String::from_utf8_lossy(&cmdline).contains(marker),
        Err(_) => false,
    }
}

/// Whether `pid` exists and is not a zombie; reaps it if it is an exited child of ours.
pub fn running(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    // ECHILD when it is not our child: then its parent reaps it, not us.
    let _ = waitpid(Pid::from_raw(raw), Some(WaitPidFlag::WNOHANG));
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "PID (comm) S ...": the state follows the last ')' (comm may contain parentheses).
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Stops the process group led by `pid` if `pid` is still ours (see [`alive`]): SIGTERM,
/// then SIGKILL after `timeout`. Returns whether there was something to stop.
pub fn stop(pid: u32, marker: &str, timeout: Duration) -> bool {
    if !alive(pid, marker) {
        return false;
    }
    terminate_group(pid, timeout, || running(pid));
    true
}

/// SIGTERM to the group, wait until `still_running` is false or `timeout` passes, then
/// SIGKILL to the group and wait a little more. A zero `timeout` sends SIGKILL only.
fn terminate_group(pid: u32, timeout: Duration, mut still_running: impl FnMut() -> bool) {
    let Ok(raw) = i32::try_from(pid) else {
        return;
    };
    let group = Pid::from_raw(-raw);
    // A zero grace period means a crash: no SIGTERM to clean up on.
    if !timeout.is_zero() && kill(group, Signal::SIGTERM).is_err() {
        // Not a group leader after all (should not happen): the process alone.
        let _ = kill(Pid::from_raw(raw), Signal::SIGTERM);
    }
    if !timeout.is_zero() && wait_until(timeout, || !still_running()) {
        // Whatever else the group started goes too.
        let _ = kill(group, Signal::SIGKILL);
        return;
    }
    let _ = kill(group, Signal::SIGKILL);
    let _ = kill(Pid::from_raw(raw), Signal::SIGKILL);
    wait_until(Duration::from_secs(5), || !still_running());
}

/// Polls `done` until it holds or `timeout` passes; whether it held.
fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if done() {
            return true;
        }
        if start.elapsed() >= timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Reads the pid in `pid_file`.
pub fn read_pid(pid_file: &Path) -> Option<u32> {
    std::fs::read_to_string(pid_file).ok()?.trim().parse().ok()
}

/// Stops every process named by a `*.pid` file in `pids_dir` that is still ours (its
/// command line mentions `marker`), each with the grace period `grace(name)` between
/// SIGTERM and SIGKILL, removing the pid files. Returns what was stopped.
pub fn reap_pid_files(
    pids_dir: &Path,
    marker: &str,
    grace: impl Fn(&str) -> Duration,
) -> Vec<(String, u32)> {
    let mut stopped = Vec::new();
    let Ok(entries) = std::fs::read_dir(pids_dir) else {
        return stopped;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pid"))
        .collect();
    // Controllers before kube-apiserver before etcd, so nothing logs a dead dependency.
    files.sort_by_key(|p| stop_rank(p));
    for file in files {
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(pid) = read_pid(&file) {
            if stop(pid, marker, grace(&name)) {
                stopped.push((name, pid));
            }
        }
        let _ = std::fs::remove_file(&file);
    }
    stopped
}

fn stop_rank(pid_file: &Path) -> u8 {
    match pid_file.file_stem().and_then(|s| s.to_str()) {
        Some("etcd") => 2,
        Some("kube-apiserver") => 1,
        _ => 0,
    }
}

/// The last [`TAIL_LINES`] lines of `log` (empty if it cannot be read).
pub fn tail(log: &Path) -> String {
    tail_lines(log, TAIL_LINES)
}

/// The last `n` lines of `log` (empty if it cannot be read).
pub fn tail_lines(log: &Path, n: usize) -> String {
    const WINDOW: u64 = 64 * 1024;
    let Ok(mut file) = File::open(log) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(WINDOW);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = file.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The part of `log` after byte `offset` (what the current run of a component wrote).
pub fn log_since(log: &Path, offset: u64) -> String {
    let Ok(mut file) = File::open(log) else {
        return String::new();
    };
    if file.seek(SeekFrom::Start(offset)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = file.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

/// A process owned by this one (e.g. a controller under test): it runs in its own process
/// group with its output in a log file, and is stopped (the whole group) when dropped.
#[derive(Debug)]
pub struct Supervised {
    name: String,
    pid: u32,
    log: PathBuf,
    child: Mutex<Child>,
    stopped: std::sync::atomic::AtomicBool,
}

/// Starts `argv` (program and arguments) with `env` added to ours, output appended to
/// `log`, as a [`Supervised`] process named `name` (the name is used in errors).
pub fn spawn_logged(
    name: &str,
    argv: &[String],
    env: &[(String, String)],
    log: &Path,
) -> Result<Supervised, ClusterError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| ClusterError::setup(format!("cannot start {name}"), "empty command"))?;
    let cmd = CommandLine {
        program: PathBuf::from(program),
        args: args.to_vec(),
        env: env.to_vec(),
    };
    let child = cmd
        .command(log)?
        .spawn()
        .map_err(|e| ClusterError::ComponentFailed {
            component: name.to_string(),
            reason: format!("cannot run {program}: {e}"),
            log: log.to_path_buf(),
            tail: tail(log),
        })?;
    Ok(Supervised {
        name: name.to_string(),
        pid: child.id(),
        log: log.to_path_buf(),
        child: Mutex::new(child),
        stopped: std::sync::atomic::AtomicBool::new(false),
    })
}

/// [`spawn_logged`] for a shell command line (run with `sh -c`, so it may carry arguments,
/// variables and redirections).
pub fn spawn_shell_logged(
    name: &str,
    command: &str,
    env: &[(String, String)],
    log: &Path,
) -> Result<Supervised, ClusterError> {
    let argv = ["sh", "-c", command].map(String::from);
    spawn_logged(name, &argv, env, log)
}

impl Supervised {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The last lines of its log.
    pub fn tail(&self) -> String {
        tail(&self.log)
    }

    /// Whether it has not exited yet.
    pub fn is_alive(&self) -> bool {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        matches!(child.try_wait(), Ok(None))
    }

    /// `Ok` while it runs; [`ClusterError::ComponentDied`] with its log once it exited.
    pub fn check_alive(&self) -> Result<(), ClusterError> {
        if self.is_alive() {
            Ok(())
        } else {
            Err(ClusterError::ComponentDied {
                component: self.name.clone(),
                log: self.log.clone(),
                tail: self.tail(),
            })
        }
    }

    /// Stops its whole process group: SIGTERM, then SIGKILL after [`STOP_TIMEOUT`].
    /// Idempotent.
    pub fn stop(&self) {
        self.stop_within(STOP_TIMEOUT);
    }

    /// Kills its whole process group at once (SIGKILL: a crash, no chance to clean up) and
    /// reaps it. Idempotent.
    pub fn kill(&self) {
        self.stop_within(Duration::ZERO);
    }

    /// [`Supervised::stop`] with another grace period.
    pub fn stop_within(&self, timeout: Duration) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if self.stopped.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if !matches!(child.try_wait(), Ok(None)) {
            // Exited by itself; whatever it left in its group (a shell's children) still goes.
            if let Ok(raw) = i32::try_from(self.pid) {
                let _ = kill(Pid::from_raw(-raw), Signal::SIGKILL);
            }
            return;
        }
        terminate_group(self.pid, timeout, || matches!(child.try_wait(), Ok(None)));
        let _ = child.wait();
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop();
    }
}
