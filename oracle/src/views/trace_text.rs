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
    out.push_str(&crate::views::render::tables(&trace.initial));
    for step in &trace.steps {
        if trace.cycle_start == Some(step.index) {
            out.push_str(&format!(
                "\n== the cycle: steps {} to {} repeat forever\n",
                step.index,
                trace.steps.len()
            ));
        }
        out.push_str(&format!(
            "\n== step {} ({:?}): {}\n",
            step.index, step.actor, step.description
        ));
        out.push_str(&crate::views::render::tables(&step.objects));
    }
    out
}

/// A short counterexample for a terminal: the environment's moves, the step that broke the
/// property, and the cluster right after it. The full trace has every step.
pub fn summary(trace: &Trace) -> String {
    let env_steps: Vec<&crate::trace::Step> = trace
        .steps
        .iter()
        .filter(|s| s.actor == crate::trace::Actor::Environment)
        .collect();
    let mut out = format!(
        "{} steps, {} by the environment\n",
        trace.steps.len(),
        env_steps.len()
    );
    out.push_str("environment:\n");
    for s in &env_steps {
        out.push_str(&format!("  step {:>3}  {}\n", s.index, s.description));
    }
    if let Some(start) = trace.cycle_start {
        out.push_str(&format!(
            "cycle (steps {start} to {}, repeating forever, never converged):\n",
            trace.steps.len()
        ));
        for s in &trace.steps[start - 1..] {
            out.push_str(&format!("  step {:>3}  {}\n", s.index, s.description));
        }
        out.push_str("cluster at the start of the cycle:\n");
        let at = if start == 1 {
            &trace.initial
        } else {
            &trace.steps[start - 2].objects
        };
        for line in crate::views::render::tables(at).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    } else if let Some(last) = trace.steps.last() {
        out.push_str("violating step:\n");
        out.push_str(&format!("  step {:>3}  {}\n", last.index, last.description));
        out.push_str("cluster after it:\n");
        for line in crate::views::render::tables(&last.objects).lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}
