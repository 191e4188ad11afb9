//! A test that hangs is named and stopped within its timeout, and leaves no control plane,
//! process or state directory behind (issue 67).
//!
//! The suite runs under cargo-nextest (`scripts/test`, `.config/nextest.toml`), which stops a
//! test that outlives its `slow-timeout` with SIGTERM to its process group and, after the
//! grace period, SIGKILL. A cluster test's clusters run in process groups of their own (they
//! outlive `rsmc cluster up`), so the signal does not reach them: the test process takes them
//! down itself on SIGTERM (`take_down_on_signal` in tests/common/mod.rs). This checks the
//! whole path with nextest itself: a test that holds a cluster and then hangs is run with the
//! `hang-check` profile's short timeout.
//!
//! The cluster is brought up by the checking test and handed to the hanging one, which takes
//! it on as its own (`Cluster::adopt`, the same list the signal handler takes down). Brought
//! up inside the hanging test, its coming up counted against the 45 s timeout, and with the
//! suite's other planes coming up beside it, waiting for the machine-wide port lock
//! (conformance/src/control_plane/ports.rs) once took 31 s of them: the timeout stopped it
//! before it held a cluster, and the check failed (stop 80's CI).

mod common;

use common::Cluster;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where the hanging test writes what it took on: named by the test that runs it.
const WRITE_TO: &str = "RSMC_HANGING_TEST_WRITES_TO";

/// The state directory of the cluster the hanging test takes on.
const ADOPTS: &str = "RSMC_HANGING_TEST_ADOPTS";

/// Not a test: the test that hangs, run by
/// [`a_hung_test_is_named_stopped_and_leaves_no_cluster_behind`] under nextest's
/// `hang-check` profile. It takes on the cluster whose state directory is in
/// `RSMC_HANGING_TEST_ADOPTS`, writes its state directory and component pids to the file
/// named by `RSMC_HANGING_TEST_WRITES_TO`, and waits forever.
#[test]
#[ignore = "hangs on purpose, for a_hung_test_is_named_stopped_and_leaves_no_cluster_behind"]
fn a_test_that_hangs_with_a_cluster_up() {
    let (Some(out), Some(state)) = (std::env::var_os(WRITE_TO), std::env::var_os(ADOPTS)) else {
        panic!("run only by a_hung_test_is_named_stopped_and_leaves_no_cluster_behind ({WRITE_TO} or {ADOPTS} unset)")
    };
    let cluster = Cluster::adopt(PathBuf::from(state));
    let pids = common::pids(&cluster.state);
    let lines: Vec<String> = std::iter::once(cluster.state.display().to_string())
        .chain(pids.iter().map(u32::to_string))
        .collect();
    std::fs::write(out, lines.join("\n") + "\n").unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

#[test]
fn a_hung_test_is_named_stopped_and_leaves_no_cluster_behind() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let provision = Command::new(root.join("scripts/provision-nextest"))
        .output()
        .expect("scripts/provision-nextest runs");
    assert!(provision.status.success(), "{}", common::text(&provision));
    let nextest = PathBuf::from(
        String::from_utf8_lossy(&provision.stdout)
            .lines()
            .last()
            .expect("provision-nextest prints the binary"),
    );
    let written = tempfile::NamedTempFile::new().unwrap();
    // Up before the clock starts: however long it waits for other clusters' ports, the
    // hanging test's 45 s are its own.
    let mut cluster = Cluster::up("hang-check", &[]);
    let started = Instant::now();
    let mut command = Command::new(nextest);
    // What cargo and nextest set for this test only: inherited, they would make the inner
    // build differ from the outer (ring's build script reruns when CARGO_MANIFEST_DIR
    // changes), which rebuilds it under the tests that are running, then again after.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let cargo_sets_for_tests = [
            "CARGO_MANIFEST_",
            "CARGO_PKG_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
            "NEXTEST",
            "__NEXTEST",
        ];
        if cargo_sets_for_tests.iter().any(|p| name.starts_with(p)) {
            command.env_remove(&*name);
        }
    }
    let run = command
        .current_dir(root)
        .args([
            "nextest",
            "run",
            // As scripts/test builds it (the whole workspace, release), so nothing is rebuilt
            // under the tests that are running.
            "--workspace",
            "--release",
            "--profile",
            "hang-check",
            "-E",
            "binary_id(rsmc::timeouts)",
            "--run-ignored",
            "only",
            "--no-fail-fast",
            "--color",
            "never",
        ])
        .env(WRITE_TO, written.path())
        .env(ADOPTS, &cluster.state)
        .output()
        .expect("cargo-nextest runs");
    let took = started.elapsed();
    let all = common::text(&run);
    assert_eq!(
        run.status.code(),
        Some(100),
        "nextest's exit code for a failed test:\n{all}"
    );
    assert!(
        all.lines()
            .any(|l| l.contains("TIMEOUT") && l.contains("a_test_that_hangs_with_a_cluster_up")),
        "the hung test is named as timed out:\n{all}"
    );
    assert!(
        !all.contains("Compiling "),
        "the inner run rebuilt part of the workspace: either its build differs from the \
         suite's (an environment variable a build script reads), or a test target was stale \
         (`cargo test --workspace --release --no-run` first, as scripts/test builds):\n{all}"
    );
    // The profile's timeout (45 s) and grace period (60 s), the build check and the cluster's
    // coming up: well under four minutes when the test is stopped, forever when it is not.
    assert!(took < Duration::from_secs(240), "took {took:?}:\n{all}");

    let what = std::fs::read_to_string(written.path()).unwrap();
    let mut lines = what.lines();
    let state = PathBuf::from(
        lines
            .next()
            .unwrap_or_else(|| panic!("the hanging test did not take the cluster on:\n{all}")),
    );
    assert_eq!(state, cluster.state, "the cluster the hanging test took on");
    let pids: Vec<u32> = lines.map(|l| l.parse().unwrap()).collect();
    assert!(pids.len() >= 4, "a local plane's components: {pids:?}");
    // The test process took its cluster down before it exited: nothing of it is left.
    cluster.check_taken_down(&all);
}
