//! The progress-amnesia guard: code that failed before and is submitted
//! again unchanged gets a pointed warning with its earlier error. It never
//! blocks the run, so a legitimate retry (a slow step, a transient failure)
//! still executes.

use std::collections::HashMap;

use crate::sandbox::{CellOutcome, CellStatus};

/// What is remembered about one failing piece of code.
#[derive(Debug, Clone)]
struct Failure {
    count: usize,
    error: String,
    timed_out: bool,
}

/// Remembers failing code by its normalised text.
#[derive(Debug, Default)]
pub struct AmnesiaGuard {
    failures: HashMap<String, Failure>,
}

/// Code with blank lines and trailing spaces removed.
fn normalise(code: &str) -> String {
    code.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

impl AmnesiaGuard {
    /// The warning to show before running `code`, if it failed before.
    pub fn warning(&self, code: &str) -> Option<String> {
        let f = self.failures.get(&normalise(code))?;
        Some(if f.timed_out {
            format!(
                "[gisclaw] This exact code already ran out of time {} time(s). If it is slow rather than wrong, cut the work (smaller grid, sample, fewer iterations) before running it again.",
                f.count
            )
        } else {
            format!(
                "[gisclaw] This exact code already failed {} time(s) with `{}`. Running it unchanged fails the same way: fix the cause or change the approach.",
                f.count, f.error
            )
        })
    }

    /// Records the outcome of `code`.
    pub fn record(&mut self, code: &str, outcome: &CellOutcome) {
        let key = normalise(code);
        if outcome.status == CellStatus::Ok {
            self.failures.remove(&key);
            return;
        }
        let error = outcome
            .result
            .error
            .as_ref()
            .map(|e| {
                format!(
                    "{}: {}",
                    e.ename,
                    e.evalue.chars().take(160).collect::<String>()
                )
            })
            .unwrap_or_else(|| "an error".into());
        let timed_out = matches!(outcome.status, CellStatus::TimedOut { .. });
        let entry = self.failures.entry(key).or_insert(Failure {
            count: 0,
            error: error.clone(),
            timed_out,
        });
        entry.count += 1;
        entry.error = error;
        entry.timed_out = timed_out;
    }
}
