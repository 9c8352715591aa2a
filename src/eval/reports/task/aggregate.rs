//! From loaded eval folders to the report's model: per-cell means,
//! bootstrap CIs, pass@k and stability, the paired SA-vs-DA test, the
//! weight-sensitivity sweep and the per-task table.

use std::collections::{BTreeMap, BTreeSet};

use super::load::EvalData;
use super::model::{
    Ablation, AblationSide, CellSummary, Comparison, JudgeSummary, PaperFigures, RefusalSummary,
    Report, RunVariance, SearchSummary, Sweep, TaskCell, TaskLine, Weights, WIDE_SPAN,
};
use crate::bench::SuiteKind;
use crate::eval::metrics::errors::ErrorType;
use crate::eval::metrics::{api, llm_judge, stats};
use crate::eval::running::record::RunRecord;
use crate::eval::running::runner::ABLATIONS;

/// Bootstrap resamples for the CIs.
const RESAMPLES: usize = 10_000;
/// Seed of the bootstrap (reports are reproducible).
const SEED: u64 = 0x5eed_2026;

fn judge_summary(records: &[&RunRecord]) -> Option<JudgeSummary> {
    let verdicts: Vec<&llm_judge::Verdict> =
        records.iter().filter_map(|r| r.judge.as_ref()).collect();
    let failed = records.iter().filter(|r| r.judge_error.is_some()).count();
    if verdicts.is_empty() && failed == 0 {
        return None;
    }
    let means = llm_judge::DIMENSIONS
        .iter()
        .map(|(key, _)| {
            (
                key.to_string(),
                stats::mean(
                    &verdicts
                        .iter()
                        .filter_map(|v| v.score(key))
                        .map(f64::from)
                        .collect::<Vec<_>>(),
                ),
            )
        })
        .collect();
    Some(JudgeSummary {
        judged: verdicts.len(),
        failed,
        means,
        overall: stats::mean(&verdicts.iter().map(|v| v.mean()).collect::<Vec<_>>()),
        models: verdicts.iter().map(|v| v.model.clone()).collect(),
    })
}

fn search_summary(records: &[&RunRecord]) -> Option<SearchSummary> {
    let counts: Vec<_> = records.iter().filter_map(|r| r.search).collect();
    if counts.is_empty() {
        return None;
    }
    let mean = |f: &dyn Fn(&crate::eval::running::record::SearchCounts) -> usize| {
        stats::mean(&counts.iter().map(|c| f(c) as f64).collect::<Vec<_>>())
    };
    Some(SearchSummary {
        runs: counts.len(),
        nodes: mean(&|c| c.nodes),
        expansions: mean(&|c| c.expansions),
        ran: mean(&|c| c.ran),
        failed: mean(&|c| c.failed),
        pruned: mean(&|c| c.pruned),
        repairs: mean(&|c| c.repairs),
        repairs_ran: mean(&|c| c.repairs_ran),
        rollouts: mean(&|c| c.rollouts),
    })
}

fn mean_of<F: Fn(&RunRecord) -> f64>(records: &[&RunRecord], f: F) -> f64 {
    stats::mean(&records.iter().map(|r| f(r)).collect::<Vec<_>>())
}

/// The cell as the GISclaw paper computes it: Q_out by its L3 over the
/// successful runs, and Eq. 1 on the cell's means.
fn paper_figures(records: &[&RunRecord], c_emb: Option<f64>, weights: &Weights) -> PaperFigures {
    let successes: Option<Vec<f64>> = records
        .iter()
        .filter(|r| r.success)
        .map(|r| r.q_out_paper())
        .collect();
    let q_out = successes.map(|q| stats::mean(&q));
    let composite = match (q_out, c_emb) {
        (Some(q), Some(c)) => {
            let q = if q.is_nan() { 0.0 } else { q };
            Some(
                (weights.success * mean_of(records, |r| f64::from(u8::from(r.success)))
                    + weights.output * q
                    + weights.api * mean_of(records, |r| r.code.api.f1)
                    + weights.embedding * c)
                    / (weights.success + weights.output + weights.api + weights.embedding),
            )
        }
        _ => None,
    };
    PaperFigures { q_out, composite }
}

/// Run-to-run disagreement of one cell's records.
fn run_variance(records: &[&RunRecord], weights: &Weights) -> RunVariance {
    let mut by_task: BTreeMap<&str, Vec<(usize, f64, bool)>> = BTreeMap::new();
    for r in records {
        by_task
            .entry(&r.task)
            .or_default()
            .push((r.run, weights.composite(r), r.success));
    }
    let mut variance = RunVariance::default();
    let mut sds = Vec::new();
    let mut widest: Option<(f64, String, Vec<f64>)> = None;
    for (task, mut runs) in by_task.into_iter().filter(|(_, runs)| runs.len() > 1) {
        runs.sort_by_key(|r| r.0);
        let scores: Vec<f64> = runs.iter().map(|r| r.1).collect();
        let span = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            - scores.iter().cloned().fold(f64::INFINITY, f64::min);
        variance.tasks += 1;
        variance.success_flips +=
            usize::from(runs.iter().any(|r| r.2) && runs.iter().any(|r| !r.2));
        variance.wide += usize::from(span > WIDE_SPAN);
        sds.push(stats::sample_sd(&scores));
        if widest.as_ref().is_none_or(|w| span > w.0) {
            widest = Some((span, task.to_string(), scores));
        }
    }
    variance.mean_sd = stats::mean(&sds);
    variance.widest = widest.filter(|w| w.0 > 0.0).map(|(_, t, s)| (t, s));
    variance
}

fn summarise(
    backend: &str,
    arch: &str,
    records: &[&RunRecord],
    gold_calls: &BTreeMap<String, BTreeSet<String>>,
    weights: &Weights,
) -> CellSummary {
    let composites: Vec<f64> = records.iter().map(|r| weights.composite(r)).collect();
    let successes: Vec<&&RunRecord> = records.iter().filter(|r| r.success).collect();
    let q_out = stats::mean(&successes.iter().map(|r| r.q_out).collect::<Vec<_>>());
    let c_emb = records
        .iter()
        .map(|r| r.c_emb)
        .collect::<Option<Vec<f64>>>()
        .map(|v| stats::mean(&v));
    // pass@k per task.
    let mut by_task: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for r in records {
        let e = by_task.entry(&r.task).or_default();
        e.0 += 1;
        e.1 += usize::from(r.success);
    }
    let runs = by_task.values().map(|(n, _)| *n).min().unwrap_or(0);
    let mut pass_at = BTreeMap::new();
    for k in [1, 3, 5] {
        if k <= runs {
            let per_task: Vec<f64> = by_task
                .values()
                .map(|(n, c)| stats::pass_at_k(*n, *c, k))
                .collect();
            pass_at.insert(k, stats::mean(&per_task));
        }
    }
    let per_run: Vec<f64> = {
        let mut rates: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        for r in records {
            let e = rates.entry(r.run).or_default();
            e.0 += 1;
            e.1 += usize::from(r.success);
        }
        rates.values().map(|(n, c)| *c as f64 / *n as f64).collect()
    };
    let cv = stats::coefficient_of_variation(&per_run);
    let top = pass_at.values().last().copied().unwrap_or(f64::NAN);
    let examples: Vec<(BTreeSet<String>, BTreeSet<String>)> = records
        .iter()
        .map(|r| {
            (
                gold_calls.get(&r.task).cloned().unwrap_or_default(),
                r.code.calls.iter().cloned().collect(),
            )
        })
        .collect();
    let mut run_errors = BTreeMap::new();
    let mut cell_errors = BTreeMap::new();
    for r in records {
        if let Some(e) = r.run_error {
            *run_errors.entry(e.name().to_string()).or_insert(0) += 1;
        }
        for (e, n) in &r.cell_errors {
            *cell_errors.entry(e.name().to_string()).or_insert(0) += n;
        }
    }
    let tokens = mean_of(records, |r| (r.tokens_in + r.tokens_out) as f64);
    let llm = mean_of(records, |r| r.llm_seconds);
    let lines = mean_of(records, |r| r.code_lines as f64);
    let per = |x: f64| if x > 0.0 { top / x } else { f64::NAN };
    CellSummary {
        judge: judge_summary(records),
        search: search_summary(records),
        label: format!("{backend} · {arch}"),
        backend: backend.to_string(),
        arch: arch.to_string(),
        n: records.len(),
        tasks: by_task.len(),
        success_rate: mean_of(records, |r| f64::from(u8::from(r.success))),
        q_out,
        f_api: mean_of(records, |r| r.code.api.f1),
        c_emb,
        paper: paper_figures(records, c_emb, weights),
        composite: stats::mean(&composites),
        composite_ci: stats::bootstrap_ci(&composites, 0.95, RESAMPLES, SEED),
        bleu4: mean_of(records, |r| r.code.bleu4),
        rouge_l: mean_of(records, |r| r.code.rouge_l),
        edit_similarity: mean_of(records, |r| r.code.edit_similarity),
        codebleu: records
            .iter()
            .map(|r| r.code.codebleu.map(|c| c.codebleu))
            .collect::<Option<Vec<f64>>>()
            .map(|v| stats::mean(&v)),
        api_precision: mean_of(records, |r| r.code.api.precision),
        api_recall: mean_of(records, |r| r.code.api.recall),
        calls: api::label_metrics(&examples),
        pass_at,
        cv,
        stability_adjusted: stats::stability_adjusted(top, cv),
        tokens_in: mean_of(records, |r| r.tokens_in as f64),
        tokens_out: mean_of(records, |r| r.tokens_out as f64),
        llm_seconds: llm,
        sandbox_seconds: mean_of(records, |r| r.sandbox_seconds),
        wall_seconds: mean_of(records, |r| r.wall_seconds),
        model_cpu_seconds: records
            .iter()
            .map(|r| r.model_cpu_seconds)
            .collect::<Option<Vec<f64>>>()
            .map(|v| stats::mean(&v)),
        rounds: mean_of(records, |r| r.rounds as f64),
        code_lines: lines,
        cost_usd: records.iter().map(|r| r.cost_usd).sum(),
        cost_per_sweep: records
            .iter()
            .map(|r| r.cost_usd)
            .sum::<Option<f64>>()
            .map(|total| total * by_task.len() as f64 / records.len().max(1) as f64),
        inference_efficiency: per(llm),
        token_efficiency: per(tokens),
        code_line_efficiency: per(lines),
        run_errors,
        finished_with_warnings: records
            .iter()
            .filter(|r| r.finished_with_warnings > 0)
            .count(),
        reproduced: {
            let tried: Vec<bool> = records.iter().filter_map(|r| r.reproduced).collect();
            (!tried.is_empty()).then(|| (tried.iter().filter(|ok| **ok).count(), tried.len()))
        },
        variance: run_variance(records, weights),
        images_shown: mean_of(records, |r| r.images_shown as f64),
        image_tokens: mean_of(records, |r| r.image_tokens as f64),
        cell_errors,
        refusal: refusal_summary(records),
    }
}

/// Declines of a cell's runs, when any task is unsolvable or any run declined.
fn refusal_summary(records: &[&RunRecord]) -> Option<RefusalSummary> {
    let count = |solvable: bool, declined: bool| {
        records
            .iter()
            .filter(|r| r.solvable == solvable && (!declined || r.declined.is_some()))
            .count()
    };
    let summary = RefusalSummary {
        unsolvable_runs: count(false, false),
        correct_declines: count(false, true),
        solvable_runs: count(true, false),
        false_declines: count(true, true),
    };
    (summary.unsolvable_runs + summary.false_declines > 0).then_some(summary)
}

/// One task's runs in one folder and architecture.
struct TaskScore {
    /// The mean composite over the runs.
    composite: f64,
    /// Successful runs.
    wins: usize,
    /// Runs.
    runs: usize,
}

/// Each task's [`TaskScore`] in `eval` for `arch`.
fn task_scores(eval: &EvalData, arch: &str, weights: &Weights) -> BTreeMap<String, TaskScore> {
    let mut by: BTreeMap<String, Vec<&RunRecord>> = BTreeMap::new();
    for r in eval.records.iter().filter(|r| r.arch == arch) {
        by.entry(r.task.clone()).or_default().push(r);
    }
    by.into_iter()
        .map(|(task, rs)| {
            let score = TaskScore {
                composite: mean_of(&rs, |r| weights.composite(r)),
                wins: rs.iter().filter(|r| r.success).count(),
                runs: rs.len(),
            };
            (task, score)
        })
        .collect()
}

/// The ablations among `evals`: every two task-suite folders of one backend
/// whose flags differ in exactly one, per architecture both ran.
fn ablations(evals: &[EvalData], weights: &Weights) -> Vec<Ablation> {
    let mut out = Vec::new();
    for (i, a) in evals.iter().enumerate() {
        for b in &evals[i + 1..] {
            let (ma, mb) = (&a.manifest, &b.manifest);
            if ma.kind != SuiteKind::Tasks
                || mb.kind != SuiteKind::Tasks
                || ma.backend != mb.backend
            {
                continue;
            }
            let differing: Vec<usize> = (0..ABLATIONS.len())
                .filter(|&k| ma.ablations()[k] != mb.ablations()[k])
                .collect();
            let (flag, name) = match differing[..] {
                [flag] => (flag, ABLATIONS[flag].to_string()),
                // `--rag` under GeoAgent's setting brings its solutions
                // corpus: one retrieval ablation.
                [r, s]
                    if ABLATIONS[r] == "rag"
                        && ABLATIONS[s] == "solutions"
                        && ma.rag == ma.solutions
                        && mb.rag == mb.solutions =>
                {
                    (r, "rag + solutions".to_string())
                }
                _ => continue,
            };
            let (with, without) = if ma.ablations()[flag] { (a, b) } else { (b, a) };
            for arch in ma
                .archs
                .iter()
                .filter(|x| mb.archs.contains(x))
                .map(|a| a.name())
            {
                let (w, wo) = (
                    task_scores(with, arch, weights),
                    task_scores(without, arch, weights),
                );
                let paired: Vec<(&TaskScore, &TaskScore)> = w
                    .iter()
                    .filter_map(|(t, x)| wo.get(t).map(|y| (x, y)))
                    .collect();
                if paired.is_empty() {
                    continue;
                }
                let xs: Vec<f64> = paired.iter().map(|(x, _)| x.composite).collect();
                let ys: Vec<f64> = paired.iter().map(|(_, y)| y.composite).collect();
                let diffs: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| x - y).collect();
                let side = |e: &EvalData, scores: Vec<&TaskScore>| {
                    let composites: Vec<f64> = scores.iter().map(|t| t.composite).collect();
                    AblationSide {
                        label: format!("{} · {arch}", e.manifest.condition()),
                        mean: stats::mean(&composites),
                        sd: stats::sample_sd(&composites),
                        successes: scores.iter().map(|t| t.wins).sum(),
                        runs: scores.iter().map(|t| t.runs).sum(),
                    }
                };
                out.push(Ablation {
                    flag: name.clone(),
                    arch: arch.to_string(),
                    with: side(with, paired.iter().map(|p| p.0).collect()),
                    without: side(without, paired.iter().map(|p| p.1).collect()),
                    n: paired.len(),
                    mean_difference: stats::mean(&diffs),
                    median_difference: stats::quantile(&diffs, 0.5),
                    wilcoxon: stats::wilcoxon(&xs, &ys),
                    cohens_d: stats::cohens_d_paired(&diffs),
                    per_task: w
                        .iter()
                        .filter_map(|(t, x)| {
                            wo.get(t).map(|y| (t.clone(), x.composite, y.composite))
                        })
                        .collect(),
                });
            }
        }
    }
    out
}

/// Builds the report of `evals` with `weights`.
pub fn build(evals: &[EvalData], weights: Weights) -> Report {
    let mut cells = Vec::new();
    let mut comparisons = Vec::new();
    let mut runs = Vec::new();
    let mut gold_problems = BTreeMap::new();
    let mut task_ids: Vec<String> = Vec::new();
    // (cell label, records) for the per-task table and the sweep.
    let mut cell_records: Vec<Vec<&RunRecord>> = Vec::new();
    for eval in evals {
        for (task, problems) in &eval.gold_problems {
            if !problems.is_empty() {
                gold_problems.insert(task.clone(), problems.clone());
            }
        }
        for t in &eval.manifest.tasks {
            if !task_ids.contains(t) {
                task_ids.push(t.clone());
            }
        }
        let backend = &eval.manifest.condition();
        for arch in eval.manifest.archs.iter().map(|a| a.name()) {
            let records: Vec<&RunRecord> = eval.records.iter().filter(|r| r.arch == arch).collect();
            if records.is_empty() {
                continue;
            }
            let mut cell = summarise(backend, arch, &records, &eval.gold_calls, &weights);
            let failed = eval.failures.iter().filter(|f| f.arch == arch).count();
            if failed > 0 {
                cell.run_errors
                    .insert(ErrorType::Infrastructure.name().to_string(), failed);
            }
            cells.push(cell);
            for r in &records {
                runs.push((backend.clone(), (*r).clone(), weights.composite(r)));
            }
            cell_records.push(records);
        }
        comparisons.extend(single_vs_dual(eval, backend, &weights));
    }
    let sweep = (cells.len() >= 2).then(|| sweep_of(&cells, &cell_records));
    let tasks = task_lines(&task_ids, &cell_records, &weights);
    let ablations = ablations(evals, &weights);
    let mut protocols = Vec::new();
    let mut c_emb_models = Vec::new();
    for eval in evals {
        if !protocols.contains(&eval.manifest.protocol) {
            protocols.push(eval.manifest.protocol);
        }
        if let Some(m) = &eval.manifest.c_emb_model {
            if !c_emb_models.contains(m) {
                c_emb_models.push(m.clone());
            }
        }
    }
    Report {
        protocols,
        c_emb_models,
        cost: super::cost::cost_accuracy(&cells),
        ablations,
        evals: evals.iter().map(|e| e.dir.clone()).collect(),
        weights,
        c_emb_missing: runs.iter().filter(|(_, r, _)| r.c_emb.is_none()).count(),
        cells,
        comparisons,
        sweep,
        tasks,
        gold_problems,
        missing_runs: evals.iter().map(EvalData::missing).sum(),
        missing_by_shard: evals
            .iter()
            .filter(|e| e.manifest.shards.is_some())
            .flat_map(|e| {
                crate::eval::running::status::missing_by_shard(&e.dir, &e.manifest)
                    .into_iter()
                    .filter(|(_, n)| *n > 0)
                    .map(|(s, n)| {
                        (
                            e.dir.clone(),
                            s.map(|s| s.to_string()).unwrap_or_default(),
                            n,
                        )
                    })
            })
            .collect(),
        infrastructure_failures: evals.iter().map(|e| e.failures.len()).sum(),
        runs,
    }
}

/// Single against dual over the runs of one folder both ran (paired by
/// task and run): differences, effect sizes and tests.
fn single_vs_dual(eval: &EvalData, backend: &str, weights: &Weights) -> Option<Comparison> {
    let single: BTreeMap<(&str, usize), f64> = eval
        .records
        .iter()
        .filter(|r| r.arch == "single")
        .map(|r| ((r.task.as_str(), r.run), weights.composite(r)))
        .collect();
    let dual: BTreeMap<(&str, usize), f64> = eval
        .records
        .iter()
        .filter(|r| r.arch == "dual")
        .map(|r| ((r.task.as_str(), r.run), weights.composite(r)))
        .collect();
    let pairs: Vec<(f64, f64)> = single
        .iter()
        .filter_map(|(k, s)| dual.get(k).map(|d| (*s, *d)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let (x, y): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let diffs: Vec<f64> = pairs.iter().map(|(a, b)| a - b).collect();
    Some(Comparison {
        backend: backend.to_string(),
        n: pairs.len(),
        median_difference: stats::quantile(&diffs, 0.5),
        mean_difference: stats::mean(&diffs),
        cohens_d: stats::cohens_d_paired(&diffs),
        wilcoxon: stats::wilcoxon(&x, &y),
        cliffs_delta: stats::cliffs_delta(&x, &y),
    })
}

/// How stable the cells' ranking is over the weight grid (Kendall's τ-b
/// of each weighting's ranking against the default's).
fn sweep_of(cells: &[CellSummary], cell_records: &[Vec<&RunRecord>]) -> Sweep {
    let default: Vec<f64> = cells.iter().map(|c| c.composite).collect();
    let taus: Vec<f64> = stats::weight_grid()
        .into_iter()
        .map(|w| {
            let w = Weights::from(w);
            let scores: Vec<f64> = cell_records
                .iter()
                .map(|rs| mean_of(rs, |r| w.composite(r)))
                .collect();
            stats::kendall_tau_b(&default, &scores)
        })
        .collect();
    let tuples = taus.len();
    // τ is undefined (NaN) when all cells tie under a weighting.
    let taus: Vec<f64> = taus.into_iter().filter(|t| !t.is_nan()).collect();
    Sweep {
        tuples,
        defined: taus.len(),
        tau_median: stats::quantile(&taus, 0.5),
        tau_min: taus.iter().copied().fold(f64::INFINITY, f64::min),
        tau_max: taus.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        at_least_0_9: taus.iter().filter(|t| **t >= 0.9).count(),
    }
}

/// Per task, each cell's successes and mean scores.
fn task_lines(
    task_ids: &[String],
    cell_records: &[Vec<&RunRecord>],
    weights: &Weights,
) -> Vec<TaskLine> {
    task_ids
        .iter()
        .map(|task| TaskLine {
            task: task.clone(),
            cells: cell_records
                .iter()
                .map(|rs| {
                    let mine: Vec<&RunRecord> =
                        rs.iter().copied().filter(|r| &r.task == task).collect();
                    TaskCell {
                        successes: mine.iter().filter(|r| r.success).count(),
                        runs: mine.len(),
                        q_out: mean_of(&mine, |r| r.q_out),
                        composite: mean_of(&mine, |r| weights.composite(r)),
                        f_api: mean_of(&mine, |r| r.code.api.f1),
                        c_emb: mine
                            .iter()
                            .map(|r| r.c_emb)
                            .collect::<Option<Vec<f64>>>()
                            .filter(|v| !v.is_empty())
                            .map(|v| stats::mean(&v)),
                    }
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run record with the given task, run, success and Q_out.
    fn record(task: &str, run: usize, success: bool, q_out: f64) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "task": task, "arch": "single", "run": run, "status": "finished", "reason": "",
            "success": success, "rounds": 1, "tokens_in": 0, "tokens_out": 0, "llm_seconds": 0.0,
            "sandbox_seconds": 0.0, "wall_seconds": 0.0, "cost_usd": null, "cells": 1,
            "failed_cells": 0, "code_lines": 1, "cell_errors": {}, "run_error": null,
            "code": {"bleu4": 0.0, "rouge_l": 0.0, "edit_similarity": 0.0,
                     "codebleu": {"codebleu": 0.0, "ngram_match": 0.0, "weighted_ngram_match": 0.0,
                                  "syntax_match": 0.0, "dataflow_match": 0.0},
                     "api": {"precision": 0.0, "recall": 0.0, "f1": 0.0}, "ops": [], "calls": []},
            "outputs": [], "q_out": q_out, "c_emb": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn the_papers_composite_is_eq_1_on_the_cells_means_with_q_out_of_successes() {
        // Two successes (Q_out 0.8, 0.6), two failures (0.5 partial, 0);
        // F_api and C_emb 0 in every record. The paper: 0.4·0.5 + 0.3·0.7
        // = 0.41. Ours, the mean of the runs' composites: (0.4 + 0.3·0.8,
        // 0.4 + 0.3·0.6, 0.3·0.5, 0) / 4 = 0.3425.
        let weights = Weights::default();
        let records = [
            record("T1", 1, true, 0.8),
            record("T2", 1, true, 0.6),
            record("T3", 1, false, 0.5),
            record("T4", 1, false, 0.0),
        ];
        let refs: Vec<&RunRecord> = records.iter().collect();
        let paper = paper_figures(&refs, Some(0.0), &weights);
        assert!((paper.q_out.unwrap() - 0.7).abs() < 1e-12, "{paper:?}");
        assert!((paper.composite.unwrap() - 0.41).abs() < 1e-12, "{paper:?}");
        let ours = stats::mean(
            &refs
                .iter()
                .map(|r| weights.composite(r))
                .collect::<Vec<_>>(),
        );
        assert!((ours - 0.3425).abs() < 1e-12, "{ours}");
        // Nothing succeeded: the paper's Q_out is undefined, its composite
        // counts it 0; no C_emb, no composite.
        let failed: Vec<&RunRecord> = refs[2..].to_vec();
        let none = paper_figures(&failed, Some(0.0), &weights);
        assert!(none.q_out.unwrap().is_nan());
        assert_eq!(none.composite, Some(0.0));
        assert_eq!(paper_figures(&refs, None, &weights).composite, None);
    }

    #[test]
    fn run_to_run_variance_counts_flips_wide_spans_and_the_widest_task() {
        let weights = Weights::default();
        let records = [
            // T1: stable. T2: flips (0.4 + 0.3 vs 0.0). T3: same success, span 0.15.
            record("T1", 1, true, 1.0),
            record("T1", 2, true, 1.0),
            record("T2", 2, false, 0.0),
            record("T2", 1, true, 1.0),
            record("T3", 1, true, 0.5),
            record("T3", 2, true, 1.0),
            record("T4", 1, true, 1.0),
        ];
        let refs: Vec<&RunRecord> = records.iter().collect();
        let v = run_variance(&refs, &weights);
        assert_eq!((v.tasks, v.success_flips, v.wide), (3, 1, 2));
        let (task, runs) = v.widest.unwrap();
        assert_eq!(task, "T2");
        // In run order: run 1 succeeded (0.4 + 0.3·1), run 2 did not.
        assert!(
            (runs[0] - 0.7).abs() < 1e-9 && runs[1].abs() < 1e-9,
            "{runs:?}"
        );
        let sd = |a: f64, b: f64| (a - b).abs() / 2f64.sqrt();
        assert!((v.mean_sd - (0.0 + sd(0.7, 0.0) + sd(0.55, 0.7)) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn declines_score_all_or_nothing_and_the_cell_counts_both_rates() {
        let weights = Weights::default();
        // An unsolvable task: declined (right), answered anyway (wrong,
        // whatever its outputs scored).
        let mut right = record("U1", 1, false, 0.0);
        right.declined = Some("no 2020 layer".into());
        right.judge_refusal(false);
        let mut wrong = record("U1", 2, true, 0.9);
        wrong.code.api.f1 = 1.0;
        wrong.judge_refusal(false);
        // A solvable task: declined (wrong), finished (scored as ever).
        let mut false_decline = record("T1", 1, false, 0.0);
        false_decline.declined = Some("I cannot".into());
        false_decline.code.api.f1 = 1.0;
        false_decline.judge_refusal(true);
        let mut done = record("T1", 2, true, 1.0);
        done.judge_refusal(true);
        assert!(right.success && right.q_out == 1.0 && right.run_error.is_none());
        assert!(!wrong.success && wrong.q_out == 0.0);
        assert_eq!(wrong.run_error, Some(ErrorType::InvalidAnswer));
        assert!(!false_decline.success);
        assert_eq!(false_decline.run_error, Some(ErrorType::Other));
        assert_eq!(weights.composite(&right), 1.0);
        assert_eq!(weights.composite(&wrong), 0.0);
        assert_eq!(weights.composite(&false_decline), 0.0);
        // 0.4 + 0.3 + 0.15 · 0 + 0.15 · 0 (the helper's C_emb is 0).
        assert!((weights.composite(&done) - 0.7).abs() < 1e-9);
        let records = [&right, &wrong, &false_decline, &done];
        let r = refusal_summary(&records).unwrap();
        assert_eq!(
            (
                r.unsolvable_runs,
                r.correct_declines,
                r.solvable_runs,
                r.false_declines
            ),
            (2, 1, 2, 1)
        );
        assert_eq!((r.correct_rate(), r.false_rate()), (Some(0.5), Some(0.5)));
        // Neither an unsolvable task nor a decline: no refusal figures.
        assert_eq!(refusal_summary(&[&done]), None);
    }
}
