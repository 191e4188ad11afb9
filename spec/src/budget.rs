//! Search budgets: how far a search over the model may go before it stops on its own.
//!
//! Every search the project runs — the safety and convergence checks of `rsmc check`, the
//! oracle's outcome and witness searches, `rsmc replay`, `rsmc traces` — can meet an input
//! whose state space does not fit the machine. Without a budget such a search grows until
//! the kernel's OOM killer ends the process, with nothing said. With one, it stops with
//! [`Exhausted`], which says which limit was hit, how far the search got and what to change;
//! the commands turn that into exit 3.
//!
//! Two limits:
//! - **memory**: the process's resident memory, measured as the search grows (sampled every
//!   [`SAMPLE_EVERY`] steps, a system call each: too rare to cost, frequent enough that a
//!   search cannot outgrow its budget by much between two samples). Resident memory, not an
//!   estimate from counted states, because what a state costs depends on the scenario, and
//!   the queue of a breadth-first search grows faster than its set of visited states.
//! - **states**: a count of visited states, for the searches whose cost must stay
//!   predictable (the oracle's), and for tests.

use std::fmt;

/// The default memory budget: a third of the 24 GiB CI machine, leaving the rest for the
/// test suite's other binaries and the local control plane that run beside a search.
pub const DEFAULT_MEMORY: u64 = 8 << 30;

/// How many steps pass between two samples of resident memory.
pub const SAMPLE_EVERY: usize = 1024;

/// The limits of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Visited states, when bounded.
    pub states: Option<usize>,
    /// Resident memory of the whole process, in bytes.
    pub memory: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            states: None,
            memory: DEFAULT_MEMORY,
        }
    }
}

impl Budget {
    /// This budget with a bound on visited states.
    pub fn with_states(self, states: usize) -> Self {
        Budget {
            states: Some(states),
            ..self
        }
    }

    /// This budget with another memory limit.
    pub fn with_memory(self, memory: u64) -> Self {
        Budget { memory, ..self }
    }

    /// A meter that checks a search against this budget.
    pub fn meter(&self) -> Meter {
        Meter {
            budget: *self,
            steps: 0,
        }
    }
}

/// Which limit a search hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// More states than the bound.
    States(usize),
    /// The process's resident memory passed the budget.
    Memory { budget: u64, resident: u64 },
    /// A scale-down's victim sets were more than a search lists
    /// (`rsmc_spec::controller::ranking::VictimSets`), and nothing narrowed them down.
    VictimSets { sets: u128 },
}

/// A search stopped at its budget.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Exhausted {
    pub limit: Limit,
    /// The states the search had visited when it stopped.
    pub explored: usize,
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.limit {
            Limit::States(n) => write!(
                f,
                "the search hit its state limit of {} states",
                thousands(n as u64)
            ),
            Limit::Memory { budget, resident } => write!(
                f,
                "the search hit its memory budget of {} (the process held {}) after {} states",
                bytes(budget),
                bytes(resident),
                thousands(self.explored as u64)
            ),
            Limit::VictimSets { sets } => write!(
                f,
                "the search met a scale-down whose tied pods make {} victim sets, more than it lists ({}), after {} states",
                thousands_u128(sets),
                thousands_u128(crate::controller::ranking::VictimSets::LISTED),
                thousands(self.explored as u64)
            ),
        }
    }
}

impl Exhausted {
    /// What a user can change, as a command-line hint.
    pub fn remedy(&self) -> &'static str {
        match self.limit {
            Limit::States(_) => "raise it with --state-limit N, or make the input smaller",
            Limit::Memory { .. } => {
                "raise it with --memory-limit SIZE (e.g. 16G) if the machine has the memory, or make the input smaller"
            }
            Limit::VictimSets { .. } => {
                "record the whole scale-down (every deletion it made), or make the input smaller"
            }
        }
    }
}

/// Checks one search against its budget.
#[derive(Clone, Debug)]
pub struct Meter {
    budget: Budget,
    steps: usize,
}

impl Meter {
    /// Called once per visited state with the number visited so far.
    pub fn check(&mut self, explored: usize) -> Result<(), Exhausted> {
        if let Some(n) = self.budget.states {
            if explored > n {
                return Err(Exhausted {
                    limit: Limit::States(n),
                    explored,
                });
            }
        }
        self.steps += 1;
        if self.steps.is_multiple_of(SAMPLE_EVERY) {
            self.check_memory(explored)?;
        }
        Ok(())
    }

    /// Sample resident memory now, whatever the step count.
    pub fn check_memory(&self, explored: usize) -> Result<(), Exhausted> {
        match resident_bytes() {
            Some(resident) if resident > self.budget.memory => Err(Exhausted {
                limit: Limit::Memory {
                    budget: self.budget.memory,
                    resident,
                },
                explored,
            }),
            _ => Ok(()),
        }
    }
}

/// The process's resident memory in bytes, where the platform tells.
pub fn resident_bytes() -> Option<u64> {
    memory_stats::memory_stats().map(|m| m.physical_mem as u64)
}

/// Parse a size as a user writes it: `8G`, `512M`, `1.5G`, `100000K` or plain bytes (binary
/// units: G is 2^30).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let scale: u64 = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => {
            return Err(format!(
                "{text:?}: expected a size such as 8G, 512M or 1048576 (unit K, M, G or T)"
            ))
        }
    };
    let value: f64 = number.trim().parse().map_err(|_| {
        format!(
            "{text:?}: expected a size such as 8G, 512M or 1048576 (a number, then K, M, G or T)"
        )
    })?;
    if !value.is_finite() || value <= 0.0 {
        return Err(format!("{text:?}: a memory limit must be more than zero"));
    }
    Ok((value * scale as f64) as u64)
}

/// A byte count for people: `8.0 GiB`, `512 MiB`.
pub fn bytes(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", n >> 20)
    }
}

/// A count with thousands separators: `2,000,000`.
pub fn thousands(n: u64) -> String {
    thousands_u128(n as u128)
}

/// [`thousands`] of a count that may pass `u64`.
pub fn thousands_u128(n: u128) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5g"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").unwrap_err().contains("expected a size"));
        assert!(parse_size("8X").unwrap_err().contains("unit K, M, G or T"));
        assert!(parse_size("0").unwrap_err().contains("more than zero"));
    }

    #[test]
    fn a_state_bound_stops_the_search_past_it() {
        let mut m = Budget::default().with_states(2).meter();
        assert!(m.check(1).is_ok());
        assert!(m.check(2).is_ok());
        let e = m.check(3).unwrap_err();
        assert_eq!(e.limit, Limit::States(2));
        assert!(e.to_string().contains("state limit of 2 states"));
    }

    #[test]
    fn a_memory_budget_below_what_the_process_holds_stops_the_search() {
        let m = Budget::default().with_memory(1).meter();
        let e = m.check_memory(7).unwrap_err();
        assert!(matches!(e.limit, Limit::Memory { budget: 1, .. }));
        assert!(e.to_string().contains("memory budget"), "{e}");
        assert!(e.to_string().contains("after 7 states"), "{e}");
    }

    #[test]
    fn counts_read_with_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2_000_000), "2,000,000");
    }
}
