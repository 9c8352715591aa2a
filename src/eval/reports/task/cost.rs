//! Cost against accuracy per cell: tokens, USD where priced, wall time and
//! the local model's CPU seconds per run, against pass@1 and the composite,
//! with the cells no other cell beats on both (the Pareto front).

use serde::Serialize;

use super::model::CellSummary;

/// What cost is measured in on the front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostAxis {
    /// USD per run: every cell is priced and some cost is above zero.
    Usd,
    /// Tokens (prompt + completion) per run: otherwise.
    Tokens,
}

impl CostAxis {
    /// The axis in words.
    pub fn describe(self) -> &'static str {
        match self {
            CostAxis::Usd => "USD per run",
            CostAxis::Tokens => "tokens per run (not every cell is priced)",
        }
    }
}

/// One cell's cost and accuracy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostPoint {
    /// The cell's label.
    pub label: String,
    /// Its architecture.
    pub arch: String,
    /// Runs.
    pub runs: usize,
    /// Prompt + completion tokens per run.
    pub tokens: f64,
    /// USD per run, when every run is priced.
    pub usd: Option<f64>,
    /// Wall seconds per run.
    pub wall_seconds: f64,
    /// CPU seconds of the local model's server per run (local models).
    pub model_cpu_seconds: Option<f64>,
    /// pass@1.
    pub pass_at_1: f64,
    /// Mean composite.
    pub composite: f64,
    /// No other cell costs no more and passes more often (or as often for less).
    pub front_pass_at_1: bool,
    /// The same with the composite.
    pub front_composite: bool,
}

impl CostPoint {
    /// The cost on `axis`.
    pub fn cost(&self, axis: CostAxis) -> f64 {
        match axis {
            CostAxis::Usd => self.usd.unwrap_or(f64::INFINITY),
            CostAxis::Tokens => self.tokens,
        }
    }
}

/// Every cell's cost and accuracy, and the fronts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostAccuracy {
    /// The cost the fronts are drawn against.
    pub axis: CostAxis,
    /// One per cell, in the report's order.
    pub points: Vec<CostPoint>,
}

/// The cost–accuracy figures of `cells`.
pub fn cost_accuracy(cells: &[CellSummary]) -> CostAccuracy {
    let mut points: Vec<CostPoint> = cells
        .iter()
        .map(|c| CostPoint {
            label: c.label.clone(),
            arch: c.arch.clone(),
            runs: c.n,
            tokens: c.tokens_in + c.tokens_out,
            usd: c.cost_usd.map(|total| total / c.n.max(1) as f64),
            wall_seconds: c.wall_seconds,
            model_cpu_seconds: c.model_cpu_seconds,
            pass_at_1: c.pass_at.get(&1).copied().unwrap_or(c.success_rate),
            composite: c.composite,
            front_pass_at_1: false,
            front_composite: false,
        })
        .collect();
    let priced = points.iter().all(|p| p.usd.is_some());
    let axis = if priced && points.iter().any(|p| p.usd.unwrap_or(0.0) > 0.0) {
        CostAxis::Usd
    } else {
        CostAxis::Tokens
    };
    let on_front = |score: &dyn Fn(&CostPoint) -> f64| -> Vec<bool> {
        let pairs: Vec<(f64, f64)> = points.iter().map(|p| (p.cost(axis), score(p))).collect();
        non_dominated(&pairs)
    };
    let by_pass = on_front(&|p| p.pass_at_1);
    let by_composite = on_front(&|p| p.composite);
    for (i, p) in points.iter_mut().enumerate() {
        p.front_pass_at_1 = by_pass[i];
        p.front_composite = by_composite[i];
    }
    CostAccuracy { axis, points }
}

/// For each (cost, accuracy) pair: whether no other pair costs no more
/// and scores no less, being better in one. NaN accuracies are dominated.
pub fn non_dominated(points: &[(f64, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|&(cost, score)| {
            !score.is_nan()
                && !points
                    .iter()
                    .any(|&(c, s)| c <= cost && s >= score && (c < cost || s > score))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_what_nothing_beats_on_both() {
        // (cost, accuracy): A cheap and weak, B dear and strong, C dearer
        // than B and weaker (dominated), D as cheap as A and stronger (A
        // dominated), E equal to D (both stay).
        let points = [(1.0, 0.2), (5.0, 0.9), (6.0, 0.8), (1.0, 0.5), (1.0, 0.5)];
        assert_eq!(non_dominated(&points), [false, true, false, true, true]);
        assert_eq!(non_dominated(&[(1.0, f64::NAN)]), [false]);
    }
}
