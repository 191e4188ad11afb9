//! What a user sees: the real `kubectl get rs`, `kubectl get pods --show-labels` and
//! `kubectl describe rs` of a settled namespace, normalised so that two runs that differ only
//! in what is random or time-dependent read the same.
//!
//! Normalisation: the namespace's name becomes `<namespace>`; generated pod names keep their
//! prefix and width (`frontend-#####`, as `rsmc_oracle::render::generated_name_filters`
//! does); the `AGE` column is dropped and the table laid out again as kubectl lays it out;
//! pod rows are sorted, since their order was the order of random suffixes. `describe`
//! output has its ages, timestamps and UIDs masked.
//!
//! Dropping `AGE` also makes the tables directly comparable with the model's rendering of the
//! same objects (`rsmc_oracle::render`), which has no clock to print ages from.

use regex::Regex;
use rsmc_oracle::render;
use std::path::Path;
use std::sync::LazyLock;
use tokio::process::Command;

/// Run kubectl against a namespace; stdout and stderr together, as a terminal shows them.
pub async fn kubectl(kubeconfig: &Path, namespace: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--namespace")
        .arg(namespace)
        .args(args)
        .output()
        .await
        .map_err(|e| format!("cannot run kubectl: {e}"))?;
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

/// A kubectl table without its `AGE` column, generated names masked, the namespace named
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
    let age = header_cells.iter().position(|h| h == "AGE");
    let keep = |cells: Vec<String>| -> Vec<String> {
        cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != age)
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
/// masked.
pub fn normalise_describe(text: &str, namespace: &str) -> String {
    let text = text.replace(namespace, "<namespace>");
    let text = AGE_OR_TIME.replace_all(&text, "<time>");
    mask_generated(&text)
}
