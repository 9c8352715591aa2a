//! `results.json`: the whole model, one object per run with its composite.

use serde_json::json;

use super::model::Report;

/// `results.json`.
pub fn json(report: &Report) -> serde_json::Value {
    // serde_json writes NaN (an empty cell's mean) as null.
    json!({
        "evals": report.evals,
        "weights": report.weights,
        "c_emb_missing": report.c_emb_missing,
        "cells": report.cells,
        "comparisons": report.comparisons,
        "ablations": report.ablations,
        "sweep": report.sweep,
        "tasks": report.tasks,
        "gold_problems": report.gold_problems,
        "missing_runs": report.missing_runs,
        "missing_by_shard": report.missing_by_shard.iter().map(|(dir, shard, n)| serde_json::json!({ "folder": dir, "shard": shard, "missing": n })).collect::<Vec<_>>(),
        "infrastructure_failures": report.infrastructure_failures,
        "cost_accuracy": report.cost,
        "runs": report.runs.iter().map(|(backend, r, s)| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            v["backend"] = json!(backend);
            v["composite"] = json!(s);
            v
        }).collect::<Vec<_>>(),
    })
}
