//! What a nonconforming verdict found, grouped: each property, condition or release
//! difference once, with the settle points where it was found, the way a compiler lists every
//! error and not only the first.

use crate::judge::Verdict;
use serde::Serialize;

/// One thing found, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The property or condition broken, the difference from the release
    /// (`differs from v1.37.2: status.terminatingReplicas`), or `diverges` where a divergence
    /// names neither.
    pub what: String,
    /// The settle points (from 1) where it was found, in order.
    pub settle_points: Vec<usize>,
}

/// Every finding of `v`, in the order first found: per settle point, what its divergence
/// breaks or how it differs, then the safety properties the recorded writes break on the
/// cluster (`on the cluster: …`).
pub fn findings(v: &Verdict) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut add = |what: String, point: usize| match out.iter_mut().find(|f| f.what == what) {
        Some(f) if f.settle_points.last() != Some(&point) => f.settle_points.push(point),
        Some(_) => {}
        None => out.push(Finding {
            what,
            settle_points: vec![point],
        }),
    };
    for p in &v.settle_points {
        let named = p
            .named()
            .map(str::to_string)
            .or_else(|| p.difference.as_ref().map(|d| d.headline()));
        let diverges = p.outcome.diverges() || p.trace.diverges();
        match named {
            Some(what) => add(what, p.index),
            None if diverges => add("diverges".into(), p.index),
            None => {}
        }
    }
    for b in &v.broken_on_cluster {
        add(format!("on the cluster: {}", b.property), b.settle_point);
    }
    out
}

/// The findings in one line: `scale-down deletes the pods the ranking puts first (3, 5);
/// differs from v1.37.2: status.terminatingReplicas (1, 3, 4)`.
pub fn line(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| {
            let points: Vec<String> = f.settle_points.iter().map(usize::to_string).collect();
            format!("{} ({})", f.what, points.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
