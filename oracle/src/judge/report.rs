//! A verdict as text for a terminal: each settle point's two levels, what diverged and what
//! the model allowed, the findings, the notes. `rsmc oracle` and `rsmc conform` print it.

use super::verdict::{Level, Verdict};

/// The verdict as text for a terminal.
pub fn render(v: &Verdict) -> String {
    let mut out = format!(
        "rsmc oracle: scenario {} ({}profile {}{}): {}\n",
        v.scenario,
        v.contract
            .as_ref()
            .map(|c| format!("{c}; "))
            .unwrap_or_default(),
        v.profile,
        v.switches
            .iter()
            .map(|s| format!(", {s}"))
            .collect::<String>(),
        if v.conforms {
            "CONFORMS"
        } else {
            "DOES NOT CONFORM"
        }
    );
    for p in &v.settle_points {
        out.push_str(&format!("\nsettle point {}, after:\n", p.index));
        for s in &p.steps {
            out.push_str(&format!("    {s}\n"));
        }
        if let Some(r) = &p.resumed {
            out.push_str(&format!(
                "  (an earlier settle point diverged: judged from the cluster's objects at settle point {}, the controller {} there)\n",
                r.from, r.memory
            ));
        }
        for (name, level) in [("outcome", &p.outcome), ("trace", &p.trace)] {
            match level {
                Level::Conforms { detail } => {
                    out.push_str(&format!("  {name}: conforms: {detail}\n"))
                }
                Level::NotRecorded => {
                    out.push_str(&format!("  {name}: not judged: no events were recorded\n"))
                }
                Level::NotJudged => out.push_str(&format!(
                    "  {name}: not judged: an earlier settle point diverged, or its segment was not recorded\n"
                )),
                Level::Unexplained { detail } => {
                    out.push_str(&format!("  {name}: not judged: {detail}\n"))
                }
                Level::Diverges {
                    detail,
                    allowed,
                    seen,
                    side_by_side,
                    fields,
                } => {
                    out.push_str(&format!("  {name}: DIVERGES: {detail}\n"));
                    match side_by_side {
                        Some(table) => {
                            for line in table.lines() {
                                out.push_str(&format!("    {line}\n"));
                            }
                            let n = allowed.len();
                            out.push_str(&format!(
                                "    ({n} settled state{} allowed; `rsmc replay` lists {})\n",
                                if n == 1 { "" } else { "s" },
                                if n == 1 { "it" } else { "them" }
                            ));
                        }
                        None => {
                            out.push_str(&format!("    seen:    {seen}\n"));
                            if allowed.is_empty() {
                                out.push_str("    allowed: nothing\n");
                            }
                            for (i, a) in allowed.iter().enumerate() {
                                let head = if i == 0 { "allowed:" } else { "        " };
                                out.push_str(&format!("    {head} {a}\n"));
                            }
                        }
                    }
                    if !fields.is_empty() {
                        out.push_str("    differs from the closest allowed in:\n");
                        for f in fields {
                            out.push_str(&format!("      {f}\n"));
                        }
                    }
                }
            }
        }
        if let Some(step) = p.divergent_step {
            out.push_str(&format!("  first divergent step: {step}\n"));
        }
        if let Some(property) = p.breaks {
            out.push_str(&format!("  the divergent write breaks: {property}\n"));
        }
        if let Some(condition) = p.written_breaks {
            out.push_str(&format!("  the status it writes breaks: {condition}\n"));
        }
        if let Some(condition) = p.settled_breaks {
            out.push_str(&format!("  the settled state breaks: {condition}\n"));
        }
        if let Some(d) = &p.difference {
            out.push_str(&format!("  breaks no property: {d}\n"));
        }
        if let Some(r) = &p.recorded_breaks {
            out.push_str(&format!(
                "  the settled state as recorded breaks: {} ({}; the model's settled states here were not searched)\n",
                r.condition, r.how
            ));
        }
    }
    if v.witness_nodes > 0 {
        out.push_str(&format!(
            "\njudged by one model run that produces the recording, found in {} search nodes\n",
            v.witness_nodes
        ));
    }
    if v.floating_moved > 0 {
        let (writes, them, their) = match v.floating_moved {
            1 => ("write", "it", "its"),
            _ => ("writes", "them", "their"),
        };
        out.push_str(&format!(
            "the run makes {} recorded {writes} later than the import put {them}: the recording leaves {their} place open (a deletion's mark whose version the audit log omits)\n",
            v.floating_moved
        ));
    }
    let open = v.or_system_by_system + v.or_system_by_step;
    if open > 0 {
        out.push_str(&format!(
            "{open} recorded {} no event claims (the controller's event recorder may have dropped the claims): the run makes {} of them by the controller or the garbage collector, {} by the client step the import wrote for them\n",
            if open == 1 { "deletion" } else { "deletions" },
            v.or_system_by_system,
            v.or_system_by_step
        ));
    }
    if !v.unconfirmed.is_empty() {
        out.push_str("\nwrites the recording does not confirm (their sender got no answer):\n");
        for line in &v.unconfirmed {
            out.push_str(&format!("    {line}\n"));
        }
    }
    if let Some(note) = &v.note {
        out.push_str(&format!("\nnote: {note}\n"));
    }
    for broken in &v.broken_as_modelled {
        out.push_str(&format!("\nevery model run that matches breaks {broken}\n"));
    }
    for broken in &v.broken_on_cluster {
        out.push_str(&format!("\non the cluster: {broken}\n"));
    }
    if !v.findings.is_empty() {
        out.push_str("\nfound (at settle points):\n");
        for f in &v.findings {
            out.push_str(&format!("    {f}\n"));
        }
    }
    out
}
