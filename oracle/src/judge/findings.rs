//! What a nonconforming verdict found, grouped: each property, condition or release
//! difference once, with the settle points where it was found, the way a compiler lists every
//! error and not only the first.

use super::verdict::{Finding, Verdict};
use std::collections::BTreeMap;

/// Every finding of `v`, in the order first found: per settle point, everything its
/// divergence breaks (the write and the settled state may break different rules), else how
/// it differs, then the safety properties the recorded writes break on the
/// cluster (`on the cluster: …`, unless a divergence names the same property).
pub fn findings(v: &Verdict) -> Vec<Finding> {
    // Found at `point`, in settle point order: a point is added once, at the end.
    fn add(out: &mut Vec<Finding>, what: String, point: usize) {
        match out.iter_mut().find(|f| f.what == what) {
            Some(f) if f.settle_points.last() != Some(&point) => f.settle_points.push(point),
            Some(_) => {}
            None => out.push(Finding {
                what,
                settle_points: vec![point],
            }),
        }
    }
    let mut out: Vec<Finding> = Vec::new();
    for p in &v.settle_points {
        let mut named: Vec<String> = p.all_named().into_iter().map(str::to_string).collect();
        if named.is_empty() {
            named.extend(p.difference.as_ref().map(|d| d.headline()));
        }
        if named.is_empty() && (p.outcome.diverges() || p.trace.diverges()) {
            named.push("diverges".into());
        }
        for what in named {
            add(&mut out, what, p.index);
        }
    }
    // A property the recording alone breaks: where a divergence already names it, that
    // finding gains the settle point; else it is found on the cluster only.
    for b in &v.broken_on_cluster {
        match out.iter_mut().find(|f| f.what == b.property) {
            Some(f) => {
                f.settle_points.push(b.settle_point);
                f.settle_points.sort_unstable();
                f.settle_points.dedup();
            }
            None => add(
                &mut out,
                format!("on the cluster: {}", b.property),
                b.settle_point,
            ),
        }
    }
    out
}

/// The findings in one line: `scale-down deletes the pods the ranking puts first (3, 5);
/// differs from v1.37.2: status.terminatingReplicas (1, 3, 4)`.
pub fn line(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(Finding::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The findings of many scenarios' verdicts, grouped by what was found: each with the
/// scenarios (and their settle points) where it was, in the order first found.
pub fn across<'a>(
    verdicts: impl IntoIterator<Item = (&'a str, &'a [Finding])>,
) -> Vec<(String, Vec<String>)> {
    let mut order: Vec<String> = Vec::new();
    let mut where_found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (scenario, found) in verdicts {
        for f in found {
            if !where_found.contains_key(&f.what) {
                order.push(f.what.clone());
            }
            let points: Vec<String> = f.settle_points.iter().map(usize::to_string).collect();
            where_found
                .entry(f.what.clone())
                .or_default()
                .push(format!("{scenario} ({})", points.join(", ")));
        }
    }
    order
        .into_iter()
        .map(|what| {
            let scenarios = where_found.remove(&what).unwrap_or_default();
            (what, scenarios)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(what: &str, points: &[usize]) -> Finding {
        Finding {
            what: what.into(),
            settle_points: points.to_vec(),
        }
    }

    #[test]
    fn findings_across_scenarios_are_grouped_by_what_in_the_order_first_found() {
        let a = [found("ranking", &[3]), found("status", &[1, 2])];
        let b = [found("status", &[4]), found("creations", &[1])];
        let grouped = across([("scale", &a[..]), ("adopt", &b[..])]);
        assert_eq!(
            grouped,
            vec![
                ("ranking".to_string(), vec!["scale (3)".to_string()]),
                (
                    "status".to_string(),
                    vec!["scale (1, 2)".to_string(), "adopt (4)".to_string()]
                ),
                ("creations".to_string(), vec!["adopt (1)".to_string()]),
            ]
        );
        assert_eq!(line(&a), "ranking (3); status (1, 2)");
    }
}
