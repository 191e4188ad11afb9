//! End-to-end test of `rsmc explore`: a counterexample from `rsmc check`, the Explorer opened
//! on it, and the page as headless Chromium renders it (the Explorer is a JavaScript app, so
//! only a browser shows what a person sees).
//!
//! Chromium comes from Debian (`scripts/provision-chromium`, which `.ci/run` calls, and this
//! test when it finds none). The page is loaded with `--dump-dom` and a virtual-time budget:
//! Chromium runs the app, waits for its requests to the Explorer, and prints the DOM — no
//! WebDriver session or async runtime to manage, and nothing to leak if the test fails.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const RSMC: &str = env!("CARGO_BIN_EXE_rsmc");

/// A child process killed when the test ends, whether it passes or panics.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `rsmc check --config small` writes its counterexample's trace into `out`.
fn counterexample(out: &Path) -> PathBuf {
    let check = Command::new(RSMC)
        .args(["check", "--config", "small", "--out"])
        .arg(out)
        .output()
        .expect("rsmc check runs");
    let report = String::from_utf8_lossy(&check.stdout);
    std::fs::read_dir(out)
        .unwrap_or_else(|e| panic!("rsmc check wrote no {}: {e}\n{report}", out.display()))
        .map(|e| e.expect("directory entry").path())
        .find(|p| p.to_string_lossy().ends_with(".trace.json"))
        .unwrap_or_else(|| panic!("rsmc check --config small wrote no trace:\n{report}"))
}

/// Starts `rsmc explore` on any free port; returns it with the URL it printed for the
/// trace's last state, once the Explorer accepts connections.
fn explore(args: &[&str]) -> (Guard, String) {
    let mut child = Command::new(RSMC)
        .arg("explore")
        .args(args)
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rsmc explore starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let guard = Guard(child);
    // Read on a thread, so a server that prints nothing fails the test instead of hanging it.
    let (lines, printed) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let url = loop {
        match printed.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => match line.find("http://").map(|i| &line[i..]) {
                Some(url) if url.contains("#/steps/") => break url.to_string(),
                _ => seen.push(line),
            },
            Err(e) => panic!("rsmc explore printed no trace URL ({e}); it printed: {seen:?}"),
        }
    };
    let host = url["http://".len()..].split('/').next().expect("host:port");
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(host).is_err() {
        assert!(
            Instant::now() < deadline,
            "the Explorer never listened on {host}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (guard, url)
}

/// The page at `url` after its scripts ran, as headless Chromium renders it.
fn rendered_dom(url: &str, profile_dir: &Path) -> String {
    // Whether `chromium --version` runs, and what it said when it did not.
    let runs = || match Command::new("chromium").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "`chromium --version` failed ({}): {}",
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run chromium: {e}")),
    };
    if runs().is_err() {
        // The project's own script installs it (idempotent; `.ci/run` calls it first).
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/provision-chromium");
        let provisioned = Command::new(&script).status();
        assert!(
            provisioned.is_ok_and(|s| s.success()),
            "headless Chromium is not installed and {} could not install it",
            script.display()
        );
        // Installed, yet it may not start: under an address-space limit (`prlimit --as`,
        // `ulimit -v`) Chromium dies at once with SIGTRAP, its reservations refused.
        if let Err(e) = runs() {
            panic!("headless Chromium is installed but does not start: {e}");
        }
    }
    let chromium = Command::new("chromium")
        .args([
            "--headless",
            // Root in a container has no user namespaces for the sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--virtual-time-budget=20000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let Output {
        status,
        stdout,
        stderr,
    } = finish_within(chromium, "chromium", Duration::from_secs(120));
    let dom = String::from_utf8_lossy(&stdout).into_owned();
    assert!(
        status.success() && dom.contains("</html>"),
        "chromium --dump-dom {url} failed ({status}):\n{}",
        String::from_utf8_lossy(&stderr)
    );
    dom
}

/// Waits for `child`'s output, killing it (and failing) past `limit`.
fn finish_within(child: Child, what: &str, limit: Duration) -> Output {
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(limit) {
        Ok(output) => output.unwrap_or_else(|e| panic!("{what}'s output: {e}")),
        Err(_) => {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            panic!("{what} did not finish within {limit:?}");
        }
    }
}

/// The page's "Path of Actions" list: how many entries it has.
fn path_length(dom: &str) -> usize {
    let start = dom.find("<ol class=\"path-list\"").expect("the path list");
    let end = start + dom[start..].find("</ol>").expect("the path list ends");
    dom[start..end].matches("<li>").count()
}

#[test]
fn the_explorer_opens_on_a_counterexample_and_draws_its_cluster() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let trace_file = counterexample(&dir.path().join("out"));
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace_file).expect("trace")).unwrap();
    let steps = trace["steps"].as_array().expect("steps");
    let last = steps.last().expect("a counterexample has steps");

    let (_server, url) = explore(&[
        "--profile",
        "k8s-1.20",
        "--config",
        "small",
        "--trace",
        trace_file.to_str().unwrap(),
    ]);
    let dom = rendered_dom(&url, &dir.path().join("chromium"));

    // The properties, as the Explorer lists them.
    for property in [
        "at most one controller reference per pod",
        "adoption only by a live, matching owner not being deleted",
    ] {
        assert!(
            dom.contains(property),
            "{property:?} not on the page:\n{dom}"
        );
    }
    // Positioned on the trace's last state: Pre-init, Init and every step are on the path.
    assert_eq!(path_length(&dom), steps.len() + 2, "{dom}");
    // That state drawn: its pods in the picture, its kubectl tables, and the step's
    // description beside them.
    let svg_start = dom.find("<svg").expect("the state's picture");
    let svg = &dom[svg_start..svg_start + dom[svg_start..].find("</svg>").expect("svg ends")];
    assert!(
        svg.contains("$ kubectl get pods -o wide --show-labels"),
        "{svg}"
    );
    let pods = last["pods"].as_object().expect("pods");
    assert!(!pods.is_empty());
    for pod in pods.keys() {
        assert!(
            svg.contains(&format!(">{pod}</text>")),
            "pod {pod} not drawn:\n{svg}"
        );
    }
    assert!(svg.contains("frontend"), "{svg}");
    // The property the trace breaks heads the picture; every step on the path is in words,
    // none a Rust `Debug` dump such as `AttemptToDelete { pod: …, uid: 2 }`.
    let property = trace["property"]
        .as_str()
        .expect("a counterexample names its property");
    assert!(
        svg.contains(&html_escape(&format!("VIOLATES: {property}"))),
        "{svg}"
    );
    for step in steps {
        let words = step["description"].as_str().expect("description");
        assert!(!words.contains(" { "), "a step in Debug text: {words}");
    }
    for debug in [
        "AttemptToDelete",
        "OrphanDependent",
        "DeletingDependents",
        "uid: ",
    ] {
        assert!(
            !dom.contains(debug),
            "Debug text {debug:?} on the page:\n{dom}"
        );
    }
    let description = last["description"].as_str().expect("description");
    assert!(
        dom.contains(&html_escape(description)),
        "the last step {description:?} is not shown:\n{dom}"
    );
}

/// Text as it appears in the DOM's serialisation.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn a_trace_that_is_not_a_run_of_the_model_is_named_and_exits_2() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("broken.trace.json");

    std::fs::write(&file, "{\"schema\": \"rsmc-trace/v1\",").unwrap();
    let (code, err) = explore_fails(&file);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.trace.json:1:"), "{err}");

    // A real counterexample whose step was changed: not enabled where it now stands.
    let original = counterexample(&dir.path().join("out"));
    let mut trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(original).unwrap()).unwrap();
    let steps = trace["steps"].as_array_mut().unwrap();
    let first = steps[0]["action"].clone();
    steps.insert(0, steps[0].clone());
    steps[0]["action"] = serde_json::json!({"PodReady": {"name": "no-such-pod"}});
    assert_ne!(steps[0]["action"], first);
    std::fs::write(&file, serde_json::to_string(&trace).unwrap()).unwrap();
    let (code, err) = explore_fails(&file);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("broken.trace.json: step 1 ("), "{err}");
    assert!(err.contains("not enabled"), "{err}");

    let (code, err) = explore_fails(&dir.path().join("missing.json"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing.json: cannot read"), "{err}");
}

/// `rsmc explore --trace FILE` expected to refuse before serving: its exit code and stderr.
fn explore_fails(file: &Path) -> (i32, String) {
    let child = Command::new(RSMC)
        .args(["explore", "--addr", "127.0.0.1:0", "--trace"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rsmc explore starts");
    let out = finish_within(child, "rsmc explore", Duration::from_secs(60));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
