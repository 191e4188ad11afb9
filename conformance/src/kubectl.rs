//! What a user sees: the real `kubectl get rs -o wide`, the status line (`kubectl get rs -o
//! custom-columns=…`), `kubectl get pods --show-labels` and `kubectl describe rs` of a
//! settled namespace, normalised so that two runs that differ only
//! in what is random or time-dependent read the same.
//!
//! Normalisation: the namespace's name becomes `<namespace>`; generated pod names keep their
//! prefix and width (`frontend-#####`, as `rsmc_oracle::views::render::generated_name_filters`
//! does); the `AGE` column (and `-o wide`'s `CONTAINERS` and `IMAGES`) is dropped and the
//! table laid out again as kubectl lays it out;
//! pod rows are sorted, since their order was the order of random suffixes. `describe`
//! output has its ages, timestamps and UIDs masked.
//!
//! Dropping those also makes the tables directly comparable with the model's rendering of the
//! same objects (`rsmc_oracle::views::render`), which has no clock to print ages from and no
//! containers.

use regex::Regex;
use rsmc_oracle::views::render;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use tokio::process::Command;

/// The kubectl whose output the views show.
pub struct Kubectl {
    /// The local cluster's own release's, else the one on PATH.
    pub program: PathBuf,
    /// Its `--cache-dir`: the local cluster's
    /// ([`crate::control_plane::LocalCluster::kubectl_cache_dir`]); `None`, kubectl's
    /// default, elsewhere.
    pub cache_dir: Option<PathBuf>,
}

/// Run `kubectl` against a namespace; stdout and stderr together, as a terminal shows them.
pub async fn kubectl(
    kubectl: &Kubectl,
    kubeconfig: &Path,
    namespace: &str,
    args: &[&str],
) -> Result<String, String> {
    let program = &kubectl.program;
    let mut command = Command::new(program);
    command.arg("--kubeconfig").arg(kubeconfig);
    if let Some(dir) = &kubectl.cache_dir {
        command.arg("--cache-dir").arg(dir);
    }
    let out = command
        .arg("--namespace")
        .arg(namespace)
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(format!("kubectl {} failed: {text}", args.join(" ")));
    }
    // kubectl warns about the version skew with an old server; that is not what it shows.
    Ok(text
        .lines()
        .filter(|l| !l.starts_with("WARNING: version difference"))
        .map(|l| format!("{l}\n"))
        .collect())
}

static GENERATED: LazyLock<Regex> = LazyLock::new(|| {
    let (pattern, _) = render::generated_name_filters()[0];
    Regex::new(pattern).expect("a valid pattern")
});

/// Mask generated name suffixes, keeping the width.
pub fn mask_generated(text: &str) -> String {
    GENERATED
        .replace_all(text, |c: &regex::Captures| format!("{}-#####", &c[1]))
        .into_owned()
}

/// The columns of kubectl's tables the model cannot show: it has no clock (`AGE`) and keeps
/// no container payload (`-o wide`'s `CONTAINERS` and `IMAGES`; spec/src/render.rs).
const DROPPED_COLUMNS: &[&str] = &["AGE", "CONTAINERS", "IMAGES"];

/// A kubectl table without the [`DROPPED_COLUMNS`], generated names masked, the namespace named
/// `<namespace>`, rows sorted when `sort_rows`, laid out again.
pub fn normalise_table(text: &str, namespace: &str, sort_rows: bool) -> String {
    let text = text.replace(namespace, "<namespace>");
    let mut lines = text.lines();
    let Some(header) = lines.next() else {
        return String::new();
    };
    if header.starts_with("No resources found") {
        return text;
    }
    // Columns are separated by at least two spaces (kubectl's padding is three); no cell has
    // two spaces in a row.
    let split = |l: &str| -> Vec<String> {
        l.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect()
    };
    let header_cells = split(header);
    let dropped: Vec<usize> = header_cells
        .iter()
        .enumerate()
        .filter(|(_, h)| DROPPED_COLUMNS.contains(&h.as_str()))
        .map(|(i, _)| i)
        .collect();
    let keep = |cells: Vec<String>| -> Vec<String> {
        cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, c)| mask_generated(&c))
            .collect()
    };
    let mut rows: Vec<Vec<String>> = lines
        .filter(|l| !l.is_empty())
        .map(|l| keep(split(l)))
        .collect();
    if sort_rows {
        rows.sort();
    }
    let header = keep(header_cells);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    render::table(&header, rows)
}

static AGE_OR_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)(\b\d+[smhd](\d+[smh])?\b( \(x\d+ over \d+[smhd](\d+[smh])?\))?)",
        r"|(\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4})",
        r"|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
    ))
    .expect("a valid pattern")
});

/// `kubectl describe` output with ages, timestamps, UIDs, the namespace and generated names
/// masked, and its `Events:` table laid out again for the masked cells.
///
/// Generated names are masked before ages: a random suffix can read as an age (`rs-4m25s`),
/// and masked as one it would make two runs of the same scenario differ.
///
/// Events of the same age are put in one order first: kubectl sorts events by time, in whole
/// seconds, so two of the same second (the parallel deletes of a scale-down) come in either
/// order from run to run, and once ages are masked that order would be all that differs.
pub fn normalise_describe(text: &str, namespace: &str) -> String {
    let text = mask_generated(&text.replace(namespace, "<namespace>"));
    let text = each_events_block(&text, sort_ties);
    relayout_events(&AGE_OR_TIME.replace_all(&text, "<time>"))
}

/// The cells of an `Events:` row (separated by at least two spaces; no cell has two spaces in
/// a row).
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// An `Events:` table with each run of rows that differ only in their message (same type,
/// reason, age and source) sorted by message: events of the same second have no order of
/// their own, and events of different reasons keep theirs.
fn sort_ties(block: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = block.iter().map(|l| l.to_string()).collect();
    let key = |l: &str| {
        let mut c = cells(l);
        c.pop();
        c.join("  ")
    };
    let mut start = 2.min(out.len()); // after the header and its `----` row
    while start < out.len() {
        let first = key(&out[start]);
        let end = (start..out.len())
            .find(|i| key(&out[*i]) != first)
            .unwrap_or(out.len());
        out[start..end].sort();
        start = end;
    }
    out
}

/// The padding kubectl's describe printer puts between the columns of its `Events:` table.
const EVENTS_PADDING: usize = 2;

/// Lay out every `Events:` table of a describe output again (one per object described), as
/// kubectl would have laid out the masked cells.
///
/// kubectl sizes the `Age` column to the widest age it printed, so a run in which one event
/// was 9 s old and another 10 s old is padded differently from a run where all were 9 s old;
/// after masking both must read the same. Cells are separated by at least two spaces and
/// contain no two spaces in a row. A block whose rows do not all have the header's number of
/// cells is left as it was rather than guessed at.
pub fn relayout_events(text: &str) -> String {
    each_events_block(text, relayout_block)
}

/// `text` with each indented `Events:` table (one per object described) replaced by what `f`
/// makes of its lines.
fn each_events_block(text: &str, f: impl Fn(&[&str]) -> Vec<String>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        out.push(lines[i].to_string());
        i += 1;
        if lines[i - 1] != "Events:" {
            continue;
        }
        let end = lines[i..]
            .iter()
            .position(|l| !l.starts_with("  "))
            .map_or(lines.len(), |n| i + n);
        out.extend(f(&lines[i..end]));
        i = end;
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// One indented `Events:` table, laid out with the widths of its own cells.
fn relayout_block(block: &[&str]) -> Vec<String> {
    let cells: Vec<Vec<&str>> = block.iter().map(|l| cells(l)).collect();
    let columns = cells.first().map_or(0, Vec::len);
    if columns == 0 || cells.iter().any(|row| row.len() != columns) {
        return block.iter().map(|l| l.to_string()).collect();
    }
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    cells
        .iter()
        .map(|row| {
            let mut line = String::from("  ");
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < columns {
                    let pad = widths[i] + EVENTS_PADDING - cell.chars().count();
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NINE_AND_TEN: &str = "Name: x\nEvents:\n  Type    Reason  Age   From  Message\n  ----    ------  ----  ----  -------\n  Normal  Made    10s   rs    one\n  Normal  Made    9s    rs    two\n";
    const ALL_NINE: &str = "Name: x\nEvents:\n  Type    Reason  Age   From  Message\n  ----    ------  ----  ----  -------\n  Normal  Made    9s    rs    one\n  Normal  Made    9s    rs    two\n";

    #[test]
    fn describe_events_read_the_same_whatever_the_widest_age() {
        let a = normalise_describe(NINE_AND_TEN, "ns");
        let b = normalise_describe(ALL_NINE, "ns");
        assert_eq!(a, b);
        assert!(
            a.contains("  Normal  Made    <time>  rs    one\n"),
            "re-laid out with the masked width: {a}"
        );
    }

    #[test]
    fn relayout_is_idempotent_and_keeps_what_follows_the_events() {
        let text = format!("{NINE_AND_TEN}Other: kept\n");
        let once = normalise_describe(&text, "ns");
        assert_eq!(relayout_events(&once), once);
        assert!(once.ends_with("Other: kept\n"));
    }

    #[test]
    fn every_described_object_has_its_events_laid_out() {
        let two = format!("{NINE_AND_TEN}\n{NINE_AND_TEN}");
        let out = normalise_describe(&two, "ns");
        assert_eq!(
            out.matches("  Normal  Made    <time>  rs    one\n").count(),
            2
        );
    }

    #[test]
    fn a_generated_suffix_that_reads_as_an_age_is_masked_as_a_name() {
        let event = |pod: &str| {
            format!("Events:\n  Type    Reason  Age  From  Message\n  Normal  Made    3s   rs    Created pod: {pod}\n")
        };
        let age_like = normalise_describe(&event("rs-4m25s"), "ns");
        assert_eq!(age_like, normalise_describe(&event("rs-bcdfg"), "ns"));
        assert!(age_like.contains("Created pod: rs-#####"), "{age_like}");
    }

    #[test]
    fn events_of_the_same_age_read_in_one_order() {
        let table = |first: &str, second: &str| {
            format!("Events:\n  Type    Reason  Age  From  Message\n  ----    ------  ----  ----  -------\n  Normal  Made    5s   rs    zero\n  Normal  Gone    3s   rs    {first}\n  Normal  Gone    3s   rs    {second}\n  Normal  Made    3s   rs    again\n")
        };
        let a = normalise_describe(&table("Deleted pod: pod1", "Deleted pod: pod2"), "ns");
        let b = normalise_describe(&table("Deleted pod: pod2", "Deleted pod: pod1"), "ns");
        assert_eq!(a, b);
        assert!(
            a.find("zero").unwrap() < a.find("pod1").unwrap(),
            "older first: {a}"
        );
        assert!(
            a.find("pod2").unwrap() < a.find("again").unwrap(),
            "another reason keeps its place: {a}"
        );
    }

    #[test]
    fn an_irregular_events_block_is_left_alone() {
        let text = "Events:\n  Type  Reason\n  Normal\n";
        assert_eq!(relayout_events(text), text);
    }
}
