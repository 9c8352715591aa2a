//! `results.csv`: one row per run, full precision, written by the report
//! model's CSV writer.

use super::model::Report;
use crate::eval::reports::document::Table;

/// A number for the CSV: full precision, empty for NaN.
fn csv_num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

/// The columns of `results.csv`.
const COLUMNS: [&str; 29] = [
    "backend",
    "task",
    "arch",
    "run",
    "status",
    "success",
    "q_out",
    "api_f1",
    "api_precision",
    "api_recall",
    "bleu4",
    "rouge_l",
    "edit_similarity",
    "codebleu",
    "c_emb",
    "composite",
    "rounds",
    "tokens_in",
    "tokens_out",
    "llm_seconds",
    "sandbox_seconds",
    "wall_seconds",
    "cost_usd",
    "cells",
    "failed_cells",
    "code_lines",
    "run_error",
    "reproduced",
    "q_out_paper",
];

/// `results.csv`: one row per task-arch-run.
pub fn csv(report: &Report) -> String {
    let mut table = Table::new("", COLUMNS);
    for (backend, r, s) in &report.runs {
        table.row([
            backend.clone(),
            r.task.clone(),
            r.arch.clone(),
            r.run.to_string(),
            r.status.clone(),
            u8::from(r.success).to_string(),
            csv_num(r.q_out),
            csv_num(r.code.api.f1),
            csv_num(r.code.api.precision),
            csv_num(r.code.api.recall),
            csv_num(r.code.bleu4),
            csv_num(r.code.rouge_l),
            csv_num(r.code.edit_similarity),
            r.code
                .codebleu
                .map(|c| csv_num(c.codebleu))
                .unwrap_or_default(),
            r.c_emb.map(csv_num).unwrap_or_default(),
            csv_num(*s),
            r.rounds.to_string(),
            r.tokens_in.to_string(),
            r.tokens_out.to_string(),
            csv_num(r.llm_seconds),
            csv_num(r.sandbox_seconds),
            csv_num(r.wall_seconds),
            r.cost_usd.map(csv_num).unwrap_or_default(),
            r.cells.to_string(),
            r.failed_cells.to_string(),
            r.code_lines.to_string(),
            r.run_error
                .map(|e| e.name().to_string())
                .unwrap_or_default(),
            r.reproduced
                .map(|ok| u8::from(ok).to_string())
                .unwrap_or_default(),
            r.q_out_paper().map(csv_num).unwrap_or_default(),
        ]);
    }
    table.csv()
}
