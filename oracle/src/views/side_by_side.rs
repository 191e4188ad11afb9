//! Two kubectl-style views side by side, with the differing lines marked.
//!
//! Generated pod names are replaced by `<prefix>#####` on both sides (same width, so columns
//! stay aligned) and pod rows are sorted by their content, so that two clusters that differ
//! only by the random suffixes show no difference.

use crate::compare::fields::FieldDiff;
use crate::views::render;
use rsmc_spec::api::{ApiServer, View};
use rsmc_spec::object::{Pod, ReplicaSet};
use similar::{ChangeTag, TextDiff};

/// The wide `kubectl get rs` and `kubectl get pods` tables of a set of objects, with
/// generated names normalised and pod rows in a canonical order.
pub fn normalised_tables(replicasets: &View<ReplicaSet>, pods: &View<Pod>) -> String {
    let api = ApiServer {
        replicasets: replicasets.clone(),
        pods: pods.clone(),
        ..ApiServer::default()
    };
    let generated: Vec<(String, String)> = pods
        .values()
        .filter_map(|p| {
            let prefix = p.meta.generate_name.as_ref()?;
            let suffix_len = p.meta.name.len().saturating_sub(prefix.len());
            Some((
                p.meta.name.clone(),
                format!("{prefix}{}", "#".repeat(suffix_len)),
            ))
        })
        .collect();
    let normalise = |text: String| {
        let mut text = text;
        for (name, masked) in &generated {
            text = text.replace(name.as_str(), masked);
        }
        text
    };
    let rs = normalise(render::get_rs_wide(&api));
    let pods_table = normalise(render::get_pods_wide(&api));
    let mut lines: Vec<&str> = pods_table.lines().collect();
    if lines.len() > 1 {
        lines[1..].sort();
    }
    format!("{rs}\n{}\n", lines.join("\n"))
}

/// The fields the tables of [`normalised_tables`] show whenever they differ: the `kubectl
/// get rs` wide columns (DESIRED, CURRENT, READY, SELECTOR, DELETING, OBSERVED) and the pod
/// columns (READY, RESTARTS, NODE, LABELS; STATUS shows Terminating for any deleting pod).
/// A ReplicaSet's finalizers show only while it is deleting, a pod's phase only while it is
/// not, and CONTROLLED-BY only the controller's name: those are listed apart.
const SHOWN: &[(&str, &str)] = &[
    ("rs", "spec.replicas"),
    ("rs", "status.replicas"),
    ("rs", "status.readyReplicas"),
    ("rs", "spec.selector"),
    ("rs", "metadata.deletionTimestamp"),
    ("rs", "status.observedGeneration"),
    ("rs", "metadata.generation"),
    ("pod", "status.conditions[Ready]"),
    ("pod", "status.containerStatuses.restartCount"),
    ("pod", "spec.nodeName"),
    ("pod", "metadata.labels"),
    ("pod", "metadata.deletionTimestamp"),
];

/// `model` and `observed` tables with, below each, the differing `fields` the tables do not
/// show (a field such as `status.terminatingReplicas`, outside the default columns), one
/// line per field on both sides, so that the side-by-side view marks every difference and
/// two states that differ never show identical tables.
pub fn with_unshown_fields(model: &str, observed: &str, fields: &[FieldDiff]) -> (String, String) {
    let unshown: Vec<&FieldDiff> = fields
        .iter()
        .filter(|f| match f.object() {
            // An object on one side only shows as a row of its own.
            None => false,
            Some(object) => {
                let kind = object.split('/').next().unwrap_or_default();
                !SHOWN.contains(&(kind, f.path()))
            }
        })
        .collect();
    if unshown.is_empty() {
        return (model.to_string(), observed.to_string());
    }
    const HEADER: &str = "OTHER FIELDS THAT DIFFER";
    let width = unshown
        .iter()
        .map(|f| f.field.len())
        .chain([HEADER.len()])
        .max()
        .unwrap_or(0)
        + 3;
    let table = |value: fn(&FieldDiff) -> &str| {
        let mut t = format!("\n{HEADER:width$}VALUE\n");
        for f in &unshown {
            t.push_str(&format!("{:width$}{}\n", f.field, value(f)));
        }
        t
    };
    (
        format!("{model}{}", table(|f| &f.allowed)),
        format!("{observed}{}", table(|f| &f.seen)),
    )
}

/// How many lines differ between two texts (0: the same).
pub fn distance(a: &str, b: &str) -> usize {
    TextDiff::from_lines(a, b)
        .iter_all_changes()
        .filter(|c| c.tag() != ChangeTag::Equal)
        .count()
}

/// `left` and `right` in two columns, aligned by a line diff; lines that differ are marked
/// with `!` (changed), `<` (only on the left) or `>` (only on the right).
pub fn render(left_title: &str, left: &str, right_title: &str, right: &str) -> String {
    let width = left
        .lines()
        .chain(std::iter::once(left_title))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let mut rows: Vec<(char, String, String)> = vec![(' ', left_title.into(), right_title.into())];
    let diff = TextDiff::from_lines(left, right);
    for op in diff.ops() {
        let mut dels = Vec::new();
        let mut ins = Vec::new();
        for change in diff.iter_changes(op) {
            let line = change.value().trim_end_matches('\n').to_string();
            match change.tag() {
                ChangeTag::Equal => rows.push((' ', line.clone(), line)),
                ChangeTag::Delete => dels.push(line),
                ChangeTag::Insert => ins.push(line),
            }
        }
        let n = dels.len().max(ins.len());
        for i in 0..n {
            let (l, r) = (dels.get(i).cloned(), ins.get(i).cloned());
            let mark = match (&l, &r) {
                (Some(_), Some(_)) => '!',
                (Some(_), None) => '<',
                _ => '>',
            };
            rows.push((mark, l.unwrap_or_default(), r.unwrap_or_default()));
        }
    }
    rows.iter()
        .map(|(mark, l, r)| {
            let pad = width.saturating_sub(l.chars().count());
            format!("{mark} {l}{} | {r}", " ".repeat(pad))
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_lines_are_marked() {
        let out = render("model", "a\nb\nc\n", "cluster", "a\nB\nc\nd\n");
        assert_eq!(
            out,
            "  model | cluster\n  a     | a\n! b     | B\n  c     | c\n>       | d\n"
        );
        assert_eq!(distance("a\nb\n", "a\nb\n"), 0);
        assert_eq!(distance("a\nb\n", "a\nc\n"), 2);
    }
}
