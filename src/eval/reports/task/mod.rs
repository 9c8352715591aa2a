//! The report of one or more eval folders: per-cell tables (a cell is one
//! backend × architecture) like GISclaw's Tables 6–8, the paired SA-vs-DA
//! test, the weight-sensitivity sweep, stability (pass@k, CV, SA), resource
//! and efficiency figures, error types, a per-task table, the figures by
//! task label ([`by_label`]), and one row per run — written as `report.md`, `results.json` and `results.csv`.
//!
//! Definitions the papers leave open, fixed here:
//! - A run's composite is `S = wR·success + wQ·Q_out + wF·F_api + wC·C_emb`
//!   with that run's Q_out (outputs it did produce count, missing ones 0);
//!   the cell's S is the mean over runs, with a 95 % percentile-bootstrap CI
//!   (10 000 resamples, fixed seed). The cell's Q_out column is the mean
//!   over successful runs only, as in Table 6. A run without C_emb (the
//!   embedding model was not available) has S renormalised over the other
//!   three weights, and the report says how many runs that concerns.
//! - pass@k is the unbiased estimator per task (n = runs, c = successes),
//!   averaged over tasks, for k ∈ {1, 3, 5} up to the number of runs. CV is
//!   the population σ/μ of the per-run success rates (run r over all tasks);
//!   SA = pass@k_max / (1 + CV). Efficiencies divide pass@k_max by the mean
//!   LLM seconds, tokens (in + out) and code lines per run (AutoGEEval
//!   Eqs. 14–16).
//! - The sweep re-ranks the cells under each of the 68 weight tuples of
//!   [`stats::weight_grid`] and gives Kendall's τ-b against the default
//!   ranking (with fewer than three cells τ is ±1 and says little).

//!
//! Layout: [`load`] reads folders, [`aggregate`] builds the [`model`];
//! [`sections`] and [`by_label`] make the report's [`Document`] from the
//! model, [`charts`] draws its charts, [`csv`] and [`json`] write the runs
//! and figures as data; [`html`] (`report.html`, on request) also reads the
//! runs' transcripts and figures.

pub mod aggregate;
pub mod by_label;
pub mod charts;
pub mod cost;
pub mod csv;
pub mod html;
pub mod json;
pub mod load;
pub mod model;
pub mod pooling;
pub mod sections;

use std::path::Path;

pub use aggregate::build;
pub use load::{EvalData, ReportError};
pub use model::{
    CellSummary, Comparison, JudgeSummary, Report, SearchSummary, Sweep, TaskLine, Weights,
    WeightsError,
};

use crate::eval::reports::document::Document;
use crate::util::write_atomic;

/// Writes `report.md`, `results.json`, `results.csv`, every table as CSV
/// under `tables/` and the `charts/` into `out`; with `html` (the folders
/// the report was built from), also the self-contained `report.html`.
pub fn write(report: &Report, out: &Path, html: Option<&[EvalData]>) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let doc = document(report, out);
    crate::eval::reports::write(&doc, out, false)?;
    crate::util::write_json(&out.join("results.json"), &json::json(report))?;
    write_atomic(&out.join("results.csv"), csv::csv(report).as_bytes())?;
    if let Some(evals) = html {
        html::write(report, evals, &doc, out)?;
    }
    Ok(())
}

/// The whole report: its sections, its figures by label and its charts,
/// drawn into `out/charts/`.
fn document(report: &Report, out: &Path) -> Document {
    let venv = crate::paths::default_venv();
    let mut doc = sections::document(report);
    by_label::section(report, &out.join("charts"), &venv, &mut doc);
    doc.heading("Charts");
    match charts::draw(report, &out.join("charts"), &venv) {
        Ok(()) => {
            for (name, what) in charts::files(report) {
                doc.chart(format!("charts/{name}"), what);
            }
        }
        Err(why) => {
            tracing::warn!("charts not drawn: {why}");
            doc.text(format!("Charts not drawn: {why}."));
        }
    }
    doc
}
