//! The figures per label ([`crate::eval::metrics::breakdown`]) as tables:
//! one model's ([`one`]: pass@k and error types per category) or several
//! side by side ([`compared`]: pass@1 per category, the heatmap's numbers).

use crate::bench::labels::KEYS;
use crate::eval::metrics::breakdown::{count_and_share, order_values, Breakdown};
use crate::eval::metrics::errors::ErrorType;
use crate::eval::reports::document::{Document, Table};

/// One model's tables: per label key, one row per value with its items,
/// pass@k and failing attempts by error type (count and share of the
/// category's failures). `what` names the items (`cases`, `steps`,
/// `tasks`); `rule` says how their difficulty was derived. Nothing when no
/// item carries a label.
pub fn one(breakdown: &Breakdown, what: &str, rule: &str, doc: &mut Document) {
    if breakdown.values().all(|c| c.is_empty()) {
        return;
    }
    doc.heading("By label (cf. AutoGEEval §4.3, GeoJSEval Fig. 8)");
    doc.text(format!("{rule} Error types (those that occur): failing attempts, and their share of the category's failing attempts."));
    // The error types that occur anywhere, in the taxonomy's order.
    let kinds: Vec<&str> = ErrorType::ALL
        .iter()
        .map(|e| e.name())
        .filter(|name| {
            breakdown
                .values()
                .flat_map(|c| c.values())
                .any(|c| c.errors.contains_key(*name))
        })
        .collect();
    for key in KEYS {
        let Some(categories) = breakdown.get(key) else {
            continue;
        };
        let mut ks: Vec<usize> = categories
            .values()
            .flat_map(|c| c.pass_at.keys().copied())
            .collect();
        ks.sort_unstable();
        ks.dedup();
        let mut columns = vec![key.to_string(), what.to_string()];
        columns.extend(ks.iter().map(|k| format!("pass@{k}")));
        columns.extend(kinds.iter().map(|e| e.to_string()));
        let mut table = Table::new(format!("By {key}"), columns);
        let mut values: Vec<&String> = categories.keys().collect();
        order_values(key, &mut values);
        for (value, c) in values.into_iter().map(|v| (v, &categories[v])) {
            let mut row = vec![value.clone(), c.items.to_string()];
            row.extend(
                ks.iter()
                    .map(|k| c.pass_at.get(k).map_or("–".into(), |v| format!("{v:.3}"))),
            );
            let total = c.failures();
            row.extend(
                kinds
                    .iter()
                    .map(|e| count_and_share(c.errors.get(*e).copied().unwrap_or(0), total)),
            );
            table.row(row);
        }
        doc.subtable(table);
    }
}

/// Several models' pass@1 per label value, one table per key (the
/// heatmap's numbers); `rule` says how difficulty was derived. Nothing
/// when no item carries a label.
pub fn compared(models: &[(&str, &Breakdown)], rule: &str, doc: &mut Document) {
    if models.iter().all(|(_, b)| b.values().all(|c| c.is_empty())) {
        return;
    }
    doc.heading("pass@1 by label (cf. GeoJSEval Fig. 8, AutoGEEval Figs. 7–9)");
    doc.text(rule);
    for key in KEYS {
        let mut values: Vec<&String> = models
            .iter()
            .filter_map(|(_, b)| b.get(key))
            .flat_map(|c| c.keys())
            .collect();
        order_values(key, &mut values);
        let mut columns = vec![key.to_string()];
        columns.extend(models.iter().map(|(label, _)| label.to_string()));
        let mut table = Table::new(format!("By {key}"), columns);
        for value in values {
            let mut row = vec![value.clone()];
            row.extend(
                models
                    .iter()
                    .map(|(_, b)| match b.get(key).and_then(|c| c.get(value)) {
                        Some(c) if c.pass_at_1().is_finite() => {
                            format!("{:.3} ({})", c.pass_at_1(), c.items)
                        }
                        _ => "–".into(),
                    }),
            );
            table.row(row);
        }
        doc.subtable(table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::labels::Labels;
    use crate::eval::metrics::breakdown::{breakdown, Item, DIFFICULTY_RULE};

    fn labels(library: &str, difficulty: &str) -> Labels {
        Labels {
            library: library.into(),
            data_type: "geometry".into(),
            operation: "measurement".into(),
            difficulty: difficulty.into(),
        }
    }

    #[test]
    fn one_model_has_pass_at_k_and_error_shares_and_models_sit_side_by_side() {
        let (a, b, c) = (
            labels("shapely", "easy"),
            labels("shapely", "hard"),
            labels("pyproj", "easy"),
        );
        let item = |labels, c, errors| Item {
            labels,
            n: 5,
            c,
            errors,
        };
        let items = [
            item(&a, 5, vec![]),
            item(&b, 1, vec![ErrorType::Runtime; 4]),
            item(
                &c,
                0,
                [[ErrorType::Syntax; 2].as_slice(), &[ErrorType::Runtime; 3]].concat(),
            ),
        ];
        let b = breakdown(&items);
        let mut doc = Document::default();
        one(&b, "cases", DIFFICULTY_RULE, &mut doc);
        let md = doc.markdown();
        assert!(
            md.contains("| pyproj | 1 | 0.000 | 0.000 | 0.000 |"),
            "{md}"
        );
        assert!(md.contains("2 (40.0 %)"), "{md}");
        assert!(md.contains("3 (60.0 %)"), "{md}");
        let mut doc = Document::default();
        compared(&[("m1", &b), ("m2", &b)], DIFFICULTY_RULE, &mut doc);
        let both = doc.markdown();
        assert!(
            both.contains("| shapely | 0.600 (2) | 0.600 (2) |"),
            "{both}"
        );
        let mut empty = Document::default();
        one(&breakdown(&[]), "cases", DIFFICULTY_RULE, &mut empty);
        assert!(empty.blocks.is_empty());
    }
}
