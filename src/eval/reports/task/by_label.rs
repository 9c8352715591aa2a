//! A task suite's figures by label: per cell, each labelled task's runs
//! (n = runs, c = successes, failed runs by error type) grouped by library,
//! data type, operation and difficulty — the same tables and charts as the
//! unit and step reports, with tasks as the items.

use std::collections::BTreeMap;
use std::path::Path;

use super::model::Report;
use crate::bench::labels::Labels;
use crate::eval::metrics::breakdown::{self, Breakdown, Item, TASK_DIFFICULTY_RULE};
use crate::eval::metrics::errors::ErrorType;
use crate::eval::reports::document::Document;
use crate::eval::reports::labels;
use crate::eval::reports::task::charts::labels::{self as label_charts, LabelCharts};

/// One task's runs in one cell.
#[derive(Default)]
struct TaskRuns {
    labels: Labels,
    runs: usize,
    successes: usize,
    errors: Vec<ErrorType>,
}

/// One cell's figures by label.
struct CellFigures {
    cell: String,
    breakdown: Breakdown,
    /// Failed runs by error type.
    errors: BTreeMap<String, usize>,
    /// pass@k over its labelled tasks.
    pass_at: BTreeMap<usize, f64>,
}

/// Per cell (in the report's order), its labelled tasks' runs.
fn runs_by_cell(report: &Report) -> Vec<(String, BTreeMap<String, TaskRuns>)> {
    let mut cells: Vec<(String, BTreeMap<String, TaskRuns>)> = report
        .cells
        .iter()
        .map(|c| (c.label.clone(), BTreeMap::new()))
        .collect();
    for (backend, record, _) in report.runs.iter().filter(|(_, r, _)| !r.labels.is_empty()) {
        let cell = report
            .cells
            .iter()
            .position(|c| c.backend == *backend && c.arch == record.arch);
        let Some((_, tasks)) = cell.and_then(|i| cells.get_mut(i)) else {
            continue;
        };
        let task = tasks.entry(record.task.clone()).or_default();
        task.labels = record.labels.clone();
        task.runs += 1;
        if record.success {
            task.successes += 1;
        } else {
            task.errors
                .push(record.run_error.unwrap_or(ErrorType::Other));
        }
    }
    cells.retain(|(_, tasks)| !tasks.is_empty());
    cells
}

/// Adds the "By label" tables of the report to `doc`, and the label charts
/// drawn into `charts_dir` (nothing when no run carries labels).
pub fn section(report: &Report, charts_dir: &Path, venv: &Path, doc: &mut Document) {
    let cells = runs_by_cell(report);
    if cells.is_empty() {
        return;
    }
    let figures: Vec<CellFigures> = cells
        .iter()
        .map(|(cell, tasks)| {
            let items: Vec<Item> = tasks
                .values()
                .map(|t| Item {
                    labels: &t.labels,
                    n: t.runs,
                    c: t.successes,
                    errors: t.errors.clone(),
                })
                .collect();
            let all = breakdown::overall(&items);
            CellFigures {
                cell: cell.clone(),
                breakdown: breakdown::breakdown(&items),
                errors: all.errors,
                pass_at: all.pass_at,
            }
        })
        .collect();
    let models: Vec<(&str, &Breakdown)> = figures
        .iter()
        .map(|f| (f.cell.as_str(), &f.breakdown))
        .collect();
    match models.as_slice() {
        [(_, only)] => labels::one(only, "tasks", TASK_DIFFICULTY_RULE, doc),
        _ => labels::compared(&models, TASK_DIFFICULTY_RULE, doc),
    }
    let charts = LabelCharts {
        models: models.clone(),
        errors: figures
            .iter()
            .map(|f| (f.cell.as_str(), &f.errors))
            .collect(),
        pass_at: figures
            .iter()
            .map(|f| (f.cell.as_str(), &f.pass_at))
            .collect(),
        efficiency: Vec::new(),
    };
    label_charts::draw(&charts, charts_dir, venv, "Charts by label", doc);
}
