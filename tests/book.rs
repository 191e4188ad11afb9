//! The book (docs/) and the README as a reader meets them: the book builds with the pinned
//! mdBook, its command reference is the binary's own, every link between its pages (and from
//! the README into it) leads to a page and a heading that exist, and every `rsmc` command
//! they show either runs here as shown or, in a block marked as needing a cluster or a long
//! run, at least parses: each flag exists and each value is one rsmc takes.
//!
//! How a fenced block is marked: ```` ```sh ```` runs from the repository root, each `rsmc`
//! command expected to exit 0 or with the code of a trailing `# exits N`; ```` ```sh,cluster
//! ```` needs a cluster, ```` ```sh,long ```` takes minutes: their commands are only parsed
//! (`rsmc ARGS --help`, which clap answers only when every argument before it is valid).
//! `cargo run --release -- ARGS` counts as `rsmc ARGS`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rsmc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rsmc"))
}

/// The README and every page of the book, with their text.
fn pages() -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let readme = root().join("README.md");
    out.insert(readme.clone(), std::fs::read_to_string(&readme).unwrap());
    let mut dirs = vec![root().join("docs/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.insert(path, text);
            }
        }
    }
    out
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn the_command_reference_is_the_binarys_own() {
    let out = rsmc().arg("help-markdown").output().unwrap();
    assert!(out.status.success());
    let generated = String::from_utf8(out.stdout).unwrap();
    let file = root().join("docs/src/reference/cli.md");
    if std::env::var_os("RSMC_UPDATE_BOOK").is_some() {
        std::fs::write(&file, &generated).unwrap();
    }
    let written = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        written == generated,
        "{} differs from the binary's --help: regenerate it with\n  RSMC_UPDATE_BOOK=1 cargo test --release --test book the_command_reference\n(or cargo run -- help-markdown > docs/src/reference/cli.md)",
        shown(&file)
    );
    for command in [
        "rsmc check",
        "rsmc conform",
        "rsmc import",
        "rsmc cluster up",
    ] {
        assert!(generated.contains(&format!("## `{command}`")), "{command}");
    }
}

#[test]
fn the_book_builds_with_the_pinned_mdbook() {
    let provision = Command::new(root().join("scripts/provision-mdbook"))
        .output()
        .expect("scripts/provision-mdbook runs");
    assert!(
        provision.status.success(),
        "scripts/provision-mdbook failed:\n{}",
        String::from_utf8_lossy(&provision.stderr)
    );
    let stdout = String::from_utf8(provision.stdout).unwrap();
    let mdbook = stdout.lines().last().expect("the binary's path");
    let dest = tempfile::tempdir().unwrap();
    let build = Command::new(mdbook)
        .args(["build", "docs", "--dest-dir"])
        .arg(dest.path())
        .current_dir(root())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success(), "mdbook build docs failed:\n{log}");
    assert!(!log.contains("WARN"), "mdbook warns:\n{log}");
    for page in [
        "index.html",
        "reference/cli.html",
        "tutorials/check-in-ci.html",
    ] {
        assert!(dest.path().join(page).is_file(), "{page} was not built");
    }
}

/// mdBook's id of a heading: its text without inline markup, lower-cased, spaces to dashes,
/// characters other than letters, digits, `-` and `_` dropped (mdbook-html's `normalize_id`).
fn anchor(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](target) keeps its text.
    while let Some(open) = rest.find('[') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(close), Some(end)) if close < end => {
                text.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The lines of a page outside its fenced code blocks (and not the fences themselves).
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut in_code = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            return false;
        }
        !in_code
    })
}

/// The anchors of a page's headings, outside code blocks; a repeated one gets `-1`, `-2`…
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for line in prose_lines(text).filter(|l| l.starts_with('#')) {
        let id = anchor(line.trim_start_matches('#'));
        let n = seen.entry(id.clone()).or_default();
        out.push(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of the inline links `[text](target)` of a page, outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose_lines(text) {
        // Code spans can hold brackets that are no links.
        let line: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_link_of_the_book_and_the_readme_leads_somewhere() {
    let pages = pages();
    let book = root().join("docs/src");
    let mut broken = Vec::new();
    for (page, text) in &pages {
        for target in links(text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let dest = normalise(&dest);
            let from_book = page.starts_with(&book);
            if !dest.exists() {
                broken.push(format!("{}: {target}: no such file", shown(page)));
            } else if from_book && !dest.starts_with(&book) {
                broken.push(format!(
                    "{}: {target}: leads out of the book (a built book has no such page; name the file in `code` or link it on GitHub)",
                    shown(page)
                ));
            } else if let Some(fragment) = fragment {
                let Some(text) = pages.get(&dest) else {
                    continue;
                };
                if !anchors(text).iter().any(|a| a == fragment) {
                    broken.push(format!(
                        "{}: {target}: no heading #{fragment} in {}",
                        shown(page),
                        shown(&dest)
                    ));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links:\n  {}",
        broken.join("\n  ")
    );
}

/// `a/b/../c` as `a/c`, without asking the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// How a fenced block's commands are tried.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mark {
    Runs,
    ParsesOnly,
}

/// Every `rsmc` command in the shell blocks of a page: (its arguments, the exit code a
/// trailing `# exits N` gives, how it is tried).
fn commands(text: &str) -> Vec<(Vec<String>, i32, Mark)> {
    // None outside a block; Some(None) in a block that is not shell; Some(Some(mark)).
    let mut block: Option<Option<Mark>> = None;
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(info) = trimmed.strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => {
                    let words: Vec<&str> = info.split(',').map(str::trim).collect();
                    let shell = matches!(words[0], "sh" | "bash" | "shell");
                    let marked = words.iter().any(|w| *w == "cluster" || *w == "long");
                    Some(shell.then_some(if marked { Mark::ParsesOnly } else { Mark::Runs }))
                }
            };
            continue;
        }
        let Some(Some(mark)) = block else {
            continue;
        };
        pending.push_str(trimmed.trim_end_matches('\\'));
        pending.push(' ');
        if trimmed.ends_with('\\') {
            continue;
        }
        let command = std::mem::take(&mut pending);
        let (command, expected) = match command.split_once(" # exits ") {
            Some((c, n)) => (c.to_string(), n.trim().parse().expect("# exits N")),
            None => (command.split(" #").next().unwrap().to_string(), 0),
        };
        let words = shell_words(&command);
        let args = match words
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["rsmc", ..] => words[1..].to_vec(),
            ["cargo", "run", "--release", "--", ..] => words[4..].to_vec(),
            _ => continue,
        };
        out.push((args, expected, mark));
    }
    out
}

/// A directory that looks like the repository's root to a command (each of its entries but
/// `target` linked in), so that what a command writes (`--out`, `--junit report.xml`) lands
/// there and goes with it, and the checkout stays as it was.
fn scratch_checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(root()).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "target" {
            std::os::unix::fs::symlink(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    dir
}

/// A command line's words as the shell passes them: split at blanks outside quotes, the
/// quotes removed (no variables or escapes: the book's commands have none).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The commands a plain block may run: those that need no cluster and end by themselves.
/// Any other in a plain block fails the test before it runs, so that a page can never make
/// the suite start a cluster, a server or a benchmark.
const RUN_HERE: &[&str] = &[
    "check",
    "bugs",
    "oracle",
    "replay",
    "import",
    "scenario",
    "traces",
    "completions",
    "--help",
    "--version",
];

#[test]
fn every_rsmc_command_shown_parses_and_the_runnable_ones_run() {
    let mut failed = Vec::new();
    let mut ran = 0;
    for (page, text) in pages() {
        // A page's commands run in order in one checkout, as its reader runs them: a later
        // command may read what an earlier one wrote (an import, then its judgement).
        let scratch = scratch_checkout();
        for (args, expected, mark) in commands(&text) {
            let shown_command = format!("{}: rsmc {}", shown(&page), args.join(" "));
            let subcommand = args.first().map(String::as_str).unwrap_or_default();
            if mark == Mark::Runs && !RUN_HERE.contains(&subcommand) {
                failed.push(format!(
                    "{shown_command}: `rsmc {subcommand}` needs a cluster or runs until stopped: mark its block sh,cluster or sh,long"
                ));
                continue;
            }
            let parse = rsmc()
                .args(&args)
                .arg("--help")
                .current_dir(root())
                .output()
                .unwrap();
            // A command shown to be refused as bad usage (`# exits 2`) need not parse.
            let shown_refused = mark == Mark::Runs && expected == 2;
            if !parse.status.success() && !shown_refused {
                failed.push(format!(
                    "{shown_command}: does not parse: {}",
                    String::from_utf8_lossy(&parse.stderr)
                        .lines()
                        .next()
                        .unwrap_or_default()
                ));
                continue;
            }
            if mark == Mark::ParsesOnly {
                continue;
            }
            // What a command the test runs writes must go with the scratch checkout: one that
            // wrote to /tmp once left its files behind after every run of the suite.
            if let Some(path) = args.iter().find(|a| a.starts_with('/')) {
                failed.push(format!(
                    "{shown_command}: runs here but names the absolute path {path}: what it writes would be left behind; name a path in the checkout (target/…)"
                ));
                continue;
            }
            let run = rsmc()
                .args(&args)
                .current_dir(scratch.path())
                .output()
                .unwrap();
            ran += 1;
            let code = run.status.code().unwrap_or(-1);
            if code != expected {
                failed.push(format!(
                    "{shown_command}: exits {code}, the page says {expected}:\n{}",
                    String::from_utf8_lossy(&run.stderr)
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(
        ran >= 3,
        "the book shows at least a few commands that run here, ran {ran}"
    );
}
