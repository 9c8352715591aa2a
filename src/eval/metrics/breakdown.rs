//! Figures per label (library, data type, operation, difficulty) for the
//! unit and step suites: pass@k per category and the failing items' error
//! types as counts and shares. Their tables are drawn by
//! [`crate::eval::reports::labels`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bench::labels::{Labels, KEYS};
use crate::eval::metrics::errors::ErrorType;
use crate::eval::metrics::stats;

/// One scored item: a unit case (its samples) or a step (its runs).
#[derive(Debug, Clone)]
pub struct Item<'a> {
    /// Its labels.
    pub labels: &'a Labels,
    /// Attempts (samples or runs).
    pub n: usize,
    /// Attempts that passed.
    pub c: usize,
    /// The error type of every failing attempt.
    pub errors: Vec<ErrorType>,
}

/// The figures of one category (`library = shapely`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Category {
    /// Items in it.
    pub items: usize,
    /// pass@k (k ≤ the fewest attempts of its items), mean over items.
    pub pass_at: BTreeMap<usize, f64>,
    /// Failing attempts by error type.
    pub errors: BTreeMap<String, usize>,
}

impl Category {
    /// pass@1, NaN when nothing was scored.
    pub fn pass_at_1(&self) -> f64 {
        self.pass_at.get(&1).copied().unwrap_or(f64::NAN)
    }

    /// Failing attempts.
    pub fn failures(&self) -> usize {
        self.errors.values().sum()
    }
}

/// Label key → label value → its figures.
pub type Breakdown = BTreeMap<String, BTreeMap<String, Category>>;

/// The figures of `items` per value of every label key; items recorded
/// without labels are left out.
pub fn breakdown(items: &[Item]) -> Breakdown {
    let mut out = Breakdown::new();
    for key in KEYS {
        let mut groups: BTreeMap<String, Vec<&Item>> = BTreeMap::new();
        for item in items.iter().filter(|i| !i.labels.is_empty()) {
            let value = item.labels.get(key).unwrap_or_default();
            let value = if value.is_empty() { "–" } else { value };
            groups.entry(value.to_string()).or_default().push(item);
        }
        let categories = groups
            .into_iter()
            .map(|(value, items)| (value, category(&items)))
            .collect();
        out.insert(key.to_string(), categories);
    }
    out
}

/// The figures of all `items` together (one category holding them all).
pub fn overall(items: &[Item]) -> Category {
    category(&items.iter().collect::<Vec<_>>())
}

/// The figures of one group of items.
fn category(items: &[&Item]) -> Category {
    let fewest = items.iter().map(|i| i.n).min().unwrap_or(0);
    let mut pass_at = BTreeMap::new();
    for k in [1, 3, 5].into_iter().filter(|k| *k <= fewest) {
        let per: Vec<f64> = items
            .iter()
            .map(|i| stats::pass_at_k(i.n, i.c, k))
            .collect();
        pass_at.insert(k, stats::mean(&per));
    }
    let mut errors = BTreeMap::new();
    for e in items.iter().flat_map(|i| &i.errors) {
        *errors.entry(e.name().to_string()).or_insert(0) += 1;
    }
    Category {
        items: items.len(),
        pass_at,
        errors,
    }
}

/// `n` with its share of `total`: `12 (37.5 %)`; `0` alone.
pub fn count_and_share(n: usize, total: usize) -> String {
    if n == 0 || total == 0 {
        return n.to_string();
    }
    format!("{n} ({:.1} %)", 100.0 * n as f64 / total as f64)
}

/// Sorts one label key's values for display: difficulties from easy to
/// hard, every other key alphabetically.
pub fn order_values<S: AsRef<str>>(key: &str, values: &mut Vec<S>) {
    let rank = |v: &str| match (key, v) {
        ("difficulty", "easy") => 0,
        ("difficulty", "medium") => 1,
        ("difficulty", "hard") => 2,
        _ => 3,
    };
    values.sort_by(|a, b| {
        let (a, b) = (a.as_ref(), b.as_ref());
        rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
    });
    values.dedup_by(|a, b| a.as_ref() == b.as_ref());
}

/// What a whole task's difficulty means, for the task-suite reports.
pub const TASK_DIFFICULTY_RULE: &str = "A task's difficulty is its number of analysis steps (the workflow's numbered steps, else the gold's cells; GISclaw's simple, intermediate and complex tasks): at most 4 easy, 5 or 6 medium, 7 or more hard.";

/// What the difficulty label means, for the reports.
pub const DIFFICULTY_RULE: &str = "Difficulty is derived from the gold code, not written by hand: the distinct functions it calls (GeoAgent's labels) — at most 2 easy, 3 to 5 medium, 6 or more hard.";

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(library: &str, difficulty: &str) -> Labels {
        Labels {
            library: library.into(),
            data_type: "geometry".into(),
            operation: "measurement".into(),
            difficulty: difficulty.into(),
        }
    }

    #[test]
    fn difficulties_read_from_easy_to_hard_and_other_values_alphabetically() {
        let mut d = vec!["hard", "easy", "medium", "easy"];
        order_values("difficulty", &mut d);
        assert_eq!(d, ["easy", "medium", "hard"]);
        let mut l = vec!["shapely", "esda", "hard"];
        order_values("library", &mut l);
        assert_eq!(l, ["esda", "hard", "shapely"]);
    }

    #[test]
    fn categories_average_pass_at_k_over_their_items_and_share_errors() {
        let a = labels("shapely", "easy");
        let b = labels("shapely", "hard");
        let c = labels("pyproj", "easy");
        let items = [
            Item {
                labels: &a,
                n: 5,
                c: 5,
                errors: vec![],
            },
            Item {
                labels: &b,
                n: 5,
                c: 1,
                errors: vec![ErrorType::Runtime; 4],
            },
            Item {
                labels: &c,
                n: 5,
                c: 0,
                errors: vec![
                    ErrorType::Syntax,
                    ErrorType::Syntax,
                    ErrorType::Runtime,
                    ErrorType::Runtime,
                    ErrorType::Runtime,
                ],
            },
        ];
        let b = breakdown(&items);
        let shapely = &b["library"]["shapely"];
        assert_eq!(shapely.items, 2);
        // (1 + 1/5) / 2 for pass@1; (1 + (1 - C(4,5)/C(5,5)... )) pass@5 = (1 + 1) / 2.
        assert!((shapely.pass_at_1() - 0.6).abs() < 1e-12);
        assert!((shapely.pass_at[&5] - 1.0).abs() < 1e-12);
        let easy = &b["difficulty"]["easy"];
        assert_eq!(easy.items, 2);
        assert_eq!(easy.errors["runtime"], 3);
    }
}
