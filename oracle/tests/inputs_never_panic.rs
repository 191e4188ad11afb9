//! Every parser of user input, fed broken and hostile text, answers with a result or a clear
//! error naming the file — never a panic, a hang or memory without bound (issue 15).
//!
//! The inputs are the project's own files mutated the way people and tools break them:
//! truncated, with a character dropped or doubled, with a YAML or JSON token put anywhere
//! (anchors, aliases, tags, huge numbers, tabs, quotes, brackets). Cases the fuzzers found
//! are kept below as regression cases. `cargo fuzz` runs the same parsers without bounds on
//! time (the book, contributing/hardening.md).

use proptest::prelude::*;
use rsmc_oracle::{manifest, observed, scenario, trace, yaml};
use rsmc_spec::config::Config;
use rsmc_spec::profile::Profile;
use std::path::{Path, PathBuf};

fn repo(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// Tokens that change what YAML and JSON mean.
const TOKENS: &[&str] = &[
    ":",
    ": ",
    "-",
    "- ",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "'",
    "\n",
    "\n  ",
    "\t",
    " ",
    "#",
    ",",
    "&a ",
    "*a",
    "!!str ",
    "!foo ",
    "0",
    "-1",
    "1e999",
    "99999999999999999999",
    "null",
    "~",
    "true",
    "<<: *a",
    "---\n",
    "...",
    "\\u0000",
    "\u{feff}",
    "é",
    "%YAML 1.1\n",
    "? ",
];

/// One edit of a text.
#[derive(Clone, Debug)]
enum Edit {
    Truncate(usize),
    Remove(usize, usize),
    Insert(usize, &'static str),
    Double(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 1..40usize).prop_map(|(a, n)| Edit::Remove(a, n)),
        (any::<usize>(), prop::sample::select(TOKENS)).prop_map(|(a, t)| Edit::Insert(a, t)),
        (any::<usize>(), 1..80usize).prop_map(|(a, n)| Edit::Double(a, n)),
    ]
}

/// `text` with `edits` applied, each at a position taken modulo the text's length and moved
/// back to a character boundary.
fn mutate(text: &str, edits: &[Edit]) -> String {
    let mut t = text.to_string();
    let at = |t: &str, a: usize| {
        let mut i = if t.is_empty() { 0 } else { a % (t.len() + 1) };
        while !t.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    for e in edits {
        match e {
            Edit::Truncate(a) => {
                let i = at(&t, *a);
                t.truncate(i);
            }
            Edit::Remove(a, n) => {
                let i = at(&t, *a);
                let j = at(&t, i + n).max(i);
                t.replace_range(i..j, "");
            }
            Edit::Insert(a, token) => {
                let i = at(&t, *a);
                t.insert_str(i, token);
            }
            Edit::Double(a, n) => {
                let i = at(&t, *a);
                let j = at(&t, i + n).max(i);
                let copy = t[i..j].to_string();
                t.insert_str(j, &copy);
            }
        }
    }
    t
}

/// A scratch directory for the scenario under test: its `manifests/` holds the seed's
/// manifest, so that a scenario that still names it loads it.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("rsmc-inputs-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
    std::fs::write(
        dir.path().join("manifests/frontend.yaml"),
        repo("conformance/scenarios/manifests/frontend.yaml"),
    )
    .unwrap();
    dir
}

/// A scenario's text: loaded, and when it loads, compiled into a model script.
fn check_scenario(dir: &Path, text: &str) -> Result<(), TestCaseError> {
    let file = dir.join("s.yaml");
    match scenario::load_str(&file, text) {
        Ok(s) => {
            let _ = scenario::compile(&s, Profile::K8s120);
        }
        Err(e) => prop_assert!(clear(&e.to_string(), &file), "{e}"),
    }
    Ok(())
}

/// A clear error names the file it is about and says something after it.
fn clear(message: &str, file: &Path) -> bool {
    let name = file.display().to_string();
    message.starts_with(&name) && message.len() > name.len() + 2 && !message.contains(": ?:")
}

fn manifest_of(file: &Path, text: &str) -> Result<(), TestCaseError> {
    match yaml::load_str(file, text) {
        Ok(docs) => {
            for doc in docs.iter().filter(|d| !d.value().is_null()) {
                if let Err(e) = manifest::from_document(doc, manifest::Validation::Api) {
                    prop_assert!(clear(&e.to_string(), file), "{e}");
                }
            }
        }
        Err(e) => prop_assert!(clear(&e.to_string(), file), "{e}"),
    }
    Ok(())
}

fn config_of(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = Config::from_json("c.json", text) {
        prop_assert!(e.to_string().starts_with("c.json: "), "{e}");
    }
    Ok(())
}

fn observed_of(text: &str) -> Result<(), TestCaseError> {
    let file = PathBuf::from("o.observed.json");
    if let Err(e) = observed::parse(&file, text) {
        prop_assert!(clear(&e.to_string(), &file), "{e}");
    }
    Ok(())
}

fn trace_of(text: &str) -> Result<(), TestCaseError> {
    let file = PathBuf::from("t.trace.json");
    if let Err(e) = trace::parse(&file, text) {
        prop_assert!(clear(&e, &file), "{e}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn scenarios(edits in prop::collection::vec(edit(), 1..6)) {
        let dir = scratch();
        check_scenario(dir.path(), &mutate(&repo("conformance/scenarios/frontend.yaml"), &edits))?;
        check_scenario(dir.path(), &mutate(&repo("conformance/scenarios/delete-orphan.yaml"), &edits))?;
    }

    #[test]
    fn manifests(edits in prop::collection::vec(edit(), 1..6)) {
        let file = PathBuf::from("m.yaml");
        manifest_of(&file, &mutate(&repo("conformance/scenarios/manifests/frontend.yaml"), &edits))?;
        manifest_of(&file, &mutate(&repo("conformance/scenarios/manifests/pod-rs.yaml"), &edits))?;
    }

    #[test]
    fn configurations(edits in prop::collection::vec(edit(), 1..6)) {
        config_of(&mutate(&repo("tests/configs/recreate.json"), &edits))?;
    }

    #[test]
    fn observed_traces(edits in prop::collection::vec(edit(), 1..6)) {
        observed_of(&mutate(&repo("oracle/tests/observed/frontend.observed.json"), &edits))?;
    }

    #[test]
    fn traces(edits in prop::collection::vec(edit(), 1..6)) {
        trace_of(&mutate(seed_trace(), &edits))?;
    }

    #[test]
    fn any_text(text in "\\PC{0,300}") {
        let dir = scratch();
        check_scenario(dir.path(), &text)?;
        manifest_of(Path::new("m.yaml"), &text)?;
        config_of(&text)?;
        observed_of(&text)?;
        trace_of(&text)?;
    }
}

/// A trace of the documented schema (the `small` preset's first steps), the seed of the
/// trace mutations.
fn seed_trace() -> &'static str {
    static TRACE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TRACE.get_or_init(|| {
        use rsmc_spec::model::RsModel;
        use stateright::Model;
        let model = RsModel::new(Config::preset("small").unwrap(), Profile::K8s120);
        let mut states = vec![model.init_states().remove(0)];
        let mut actions = Vec::new();
        for _ in 0..3 {
            let last = states.last().unwrap();
            let mut next = Vec::new();
            model.actions(last, &mut next);
            let Some((action, state)) = next
                .into_iter()
                .find_map(|a| model.next_state(last, a.clone()).map(|s| (a, s)))
            else {
                break;
            };
            actions.push(action);
            states.push(state);
        }
        let t = trace::Trace::from_path(&model, None, &states, &actions);
        serde_json::to_string_pretty(&t).unwrap()
    })
}

/// Anchors that expand exponentially ("billion laughs") are refused by the YAML reader's
/// alias budget, not expanded until memory runs out.
#[test]
fn exponential_aliases_are_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("name: s\nsteps: [settle]\n");
    let dir = scratch();
    let err = scenario::load_str(&dir.path().join("s.yaml"), &text).unwrap_err();
    assert!(err.to_string().contains("alias"), "{err}");
}

/// A path to something endless is refused after a bounded read.
#[test]
fn an_endless_input_file_is_refused() {
    let err = scenario::load(Path::new("/dev/zero")).unwrap_err();
    assert!(err.to_string().contains("longer than 64 MiB"), "{err}");
    let err = Config::load("/dev/zero").unwrap_err();
    assert!(err.to_string().contains("longer than 64 MiB"), "{err}");
    let err = observed::load(Path::new("/dev/zero")).unwrap_err();
    assert!(err.to_string().contains("longer than 64 MiB"), "{err}");
}
