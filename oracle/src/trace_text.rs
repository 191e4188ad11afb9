//! A trace as text: each step's description followed by the cluster as kubectl shows it.

use crate::trace::Trace;

/// Render `trace` step by step.
pub fn render(trace: &Trace) -> String {
    let mut out = format!(
        "rsmc trace ({}), profile {}{}\n\n",
        trace.schema,
        trace.profile,
        trace
            .property
            .as_ref()
            .map(|p| format!(", violates: {p}"))
            .unwrap_or_default()
    );
    out.push_str("== initial state\n");
    out.push_str(&crate::render::tables(&trace.initial));
    for step in &trace.steps {
        out.push_str(&format!(
            "\n== step {} ({:?}): {}\n",
            step.index, step.actor, step.description
        ));
        out.push_str(&crate::render::tables(&step.objects));
    }
    out
}
