//! The report's model: the composite's [`Weights`] and the figures the
//! renderers ([`super::markdown`], [`super::csv`], [`super::json`],
//! [`super::charts`]) draw from. Built by [`super::aggregate`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Serialize;

use crate::eval::metrics::api::LabelMetrics;
use crate::eval::metrics::stats::Wilcoxon;
use crate::eval::running::record::RunRecord;

/// The composite's weights (R_succ, Q_out, F_api, C_emb).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Weights {
    /// Weight of success.
    pub success: f64,
    /// Weight of output quality.
    pub output: f64,
    /// Weight of API-operation F1.
    pub api: f64,
    /// Weight of the embedding similarity.
    pub embedding: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            success: 0.4,
            output: 0.3,
            api: 0.15,
            embedding: 0.15,
        }
    }
}

/// What is wrong with a `--weights` value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightsError {
    /// A part that is not a number.
    #[error("--weights: `{0}` is not a number")]
    NotANumber(String),
    /// Not four parts.
    #[error("--weights: expected four numbers (success, output, api, embedding), got {0}")]
    Count(usize),
    /// A negative weight, or all zero.
    #[error("--weights: the weights must be non-negative and not all 0")]
    Range,
}

impl Weights {
    /// Parses `0.4,0.3,0.15,0.15` (four non-negative numbers, not all 0).
    pub fn parse(text: &str) -> Result<Weights, WeightsError> {
        let values: Vec<f64> = text
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .map_err(|_| WeightsError::NotANumber(p.trim().to_string()))
            })
            .collect::<Result<_, _>>()?;
        let [success, output, api, embedding] = values[..] else {
            return Err(WeightsError::Count(values.len()));
        };
        if values.iter().any(|v| *v < 0.0 || !v.is_finite()) || values.iter().sum::<f64>() <= 0.0 {
            return Err(WeightsError::Range);
        }
        Ok(Weights {
            success,
            output,
            api,
            embedding,
        })
    }
}

impl From<[f64; 4]> for Weights {
    /// Weights from (success, output, api, embedding).
    fn from(w: [f64; 4]) -> Weights {
        Weights {
            success: w[0],
            output: w[1],
            api: w[2],
            embedding: w[3],
        }
    }
}

impl Weights {
    /// A run's composite; without C_emb the other three weights are
    /// renormalised. Refusals are all or nothing: a task the data cannot
    /// answer scores 1 for a decline and 0 for anything else (its code and
    /// log earn nothing), and a decline of a task that can be done scores 0.
    pub fn composite(&self, r: &RunRecord) -> f64 {
        if !r.solvable || r.declined.is_some() {
            return f64::from(u8::from(!r.solvable && r.declined.is_some()));
        }
        let base = self.success * f64::from(u8::from(r.success))
            + self.output * r.q_out
            + self.api * r.code.api.f1;
        match r.c_emb {
            Some(c) => {
                (base + self.embedding * c)
                    / (self.success + self.output + self.api + self.embedding)
            }
            None => base / (self.success + self.output + self.api),
        }
    }
}

/// A cell's figures as the GISclaw paper computes them (Eq. 1 on the
/// cell's means, L3 by §3.4), beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperFigures {
    /// Q_out by the paper's L3 ([`RunRecord::q_out_paper`]) over the
    /// successful runs (NaN when none succeeded); `None` when a record
    /// predates the paper's scores.
    pub q_out: Option<f64>,
    /// Eq. 1 on the cell's means: wR·R_s + wQ·Q_out (the paper's, over
    /// successful runs; 0 when none succeeded) + wF·F_api + wC·C_emb;
    /// `None` without C_emb or the paper's Q_out.
    pub composite: Option<f64>,
}

/// The figures of one cell (backend × arch).
#[derive(Debug, Clone, Serialize)]
pub struct CellSummary {
    /// `backend · arch`.
    pub label: String,
    /// The backend's description.
    pub backend: String,
    /// `single` or `dual`.
    pub arch: String,
    /// Runs recorded.
    pub n: usize,
    /// Tasks with a record.
    pub tasks: usize,
    /// R_succ: the success rate.
    pub success_rate: f64,
    /// Q_out over successful runs (NaN when none succeeded).
    pub q_out: f64,
    /// Mean API-operation F1.
    pub f_api: f64,
    /// Mean C_emb (None while not computed).
    pub c_emb: Option<f64>,
    /// The same cell as the GISclaw paper computes it.
    pub paper: PaperFigures,
    /// Mean composite.
    pub composite: f64,
    /// Its 95 % bootstrap CI.
    pub composite_ci: (f64, f64),
    /// Mean BLEU-4.
    pub bleu4: f64,
    /// Mean ROUGE-L.
    pub rouge_l: f64,
    /// Mean edit similarity.
    pub edit_similarity: f64,
    /// Mean CodeBLEU (None when some record predates it).
    pub codebleu: Option<f64>,
    /// Mean API-operation precision.
    pub api_precision: f64,
    /// Mean API-operation recall.
    pub api_recall: f64,
    /// GeoAgent's function-call metrics over the runs.
    pub calls: LabelMetrics,
    /// pass@k for k ∈ {1, 3, 5} up to the number of runs.
    pub pass_at: BTreeMap<usize, f64>,
    /// Coefficient of variation of the per-run success rates.
    pub cv: f64,
    /// Stability-adjusted accuracy pass@k_max / (1 + CV).
    pub stability_adjusted: f64,
    /// Mean prompt tokens per run.
    pub tokens_in: f64,
    /// Mean completion tokens per run.
    pub tokens_out: f64,
    /// Mean LLM seconds per run.
    pub llm_seconds: f64,
    /// Mean sandbox seconds per run.
    pub sandbox_seconds: f64,
    /// Mean wall seconds per run.
    pub wall_seconds: f64,
    /// Mean CPU seconds of the local model's server per run (when every
    /// run of the cell has it).
    pub model_cpu_seconds: Option<f64>,
    /// Mean rounds per run.
    pub rounds: f64,
    /// Mean code lines per run.
    pub code_lines: f64,
    /// Total cost, when every run's is known.
    pub cost_usd: Option<f64>,
    /// Cost of one sweep (every task once): the total over the runs per
    /// task (GISclaw Table 6's "cost per benchmark sweep").
    pub cost_per_sweep: Option<f64>,
    /// pass@k_max per LLM second.
    pub inference_efficiency: f64,
    /// pass@k_max per token.
    pub token_efficiency: f64,
    /// pass@k_max per code line.
    pub code_line_efficiency: f64,
    /// Failed runs by error type.
    pub run_errors: BTreeMap<String, usize>,
    /// Failed cells by error type.
    pub cell_errors: BTreeMap<String, usize>,
    /// Runs that finished with failing output checks (after one refused
    /// `finish`), successful or not.
    pub finished_with_warnings: usize,
    /// Of the runs whose solution.py was re-run (`--reproduce`), how many
    /// remade their outputs: `(reproduced, tried)`; `None` when none was.
    pub reproduced: Option<(usize, usize)>,
    /// How much the runs of one task disagree (GISclaw §4.1.5).
    pub variance: RunVariance,
    /// Figures shown to the model per run, mean (vision feedback).
    pub images_shown: f64,
    /// Their estimated prompt tokens per run, mean.
    pub image_tokens: f64,
    /// The LLM judge's means (None when no run of the cell was judged).
    pub judge: Option<JudgeSummary>,
    /// The tree search's means (None for cells of other architectures).
    pub search: Option<SearchSummary>,
    /// Declines, right and wrong (None when the cell has no unsolvable
    /// task and no decline).
    pub refusal: Option<RefusalSummary>,
}

/// How a cell's runs declined (GeoBenchX's unsolvable tasks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RefusalSummary {
    /// Runs of tasks marked `solvable: false`.
    pub unsolvable_runs: usize,
    /// Of them, those that declined (correct declines).
    pub correct_declines: usize,
    /// Runs of tasks that can be done.
    pub solvable_runs: usize,
    /// Of them, those that declined (false declines).
    pub false_declines: usize,
}

impl RefusalSummary {
    /// Correct declines per unsolvable run (`None` without such runs).
    pub fn correct_rate(&self) -> Option<f64> {
        (self.unsolvable_runs > 0)
            .then(|| self.correct_declines as f64 / self.unsolvable_runs as f64)
    }

    /// False declines per solvable run (`None` without such runs).
    pub fn false_rate(&self) -> Option<f64> {
        (self.solvable_runs > 0).then(|| self.false_declines as f64 / self.solvable_runs as f64)
    }
}

/// The tree search's figures of one cell: means per run.
#[derive(Debug, Clone, Serialize)]
pub struct SearchSummary {
    /// Runs with a tree.
    pub runs: usize,
    /// Candidate nodes per run.
    pub nodes: f64,
    /// Expansions per run.
    pub expansions: f64,
    /// Candidates that ran cleanly, per run.
    pub ran: f64,
    /// Candidates that failed, per run.
    pub failed: f64,
    /// Candidates pruned by the static analysis, per run.
    pub pruned: f64,
    /// Repair nodes per run.
    pub repairs: f64,
    /// Repairs that ran cleanly, per run.
    pub repairs_ran: f64,
    /// Nodes rewarded by a rollout, per run.
    pub rollouts: f64,
}

/// The LLM judge's grades of one cell (diagnostic; cf. Table 9).
#[derive(Debug, Clone, Serialize)]
pub struct JudgeSummary {
    /// Runs judged.
    pub judged: usize,
    /// Runs whose judging failed (no valid answer).
    pub failed: usize,
    /// Mean score per dimension, in [`llm_judge::DIMENSIONS`] order.
    pub means: Vec<(String, f64)>,
    /// Mean of the five.
    pub overall: f64,
    /// The judging models.
    pub models: BTreeSet<String>,
}

/// How much a cell's runs of one task disagree (GISclaw §4.1.5: single
/// runs are noisy even for strong models, hence repeated runs).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunVariance {
    /// Tasks run more than once.
    pub tasks: usize,
    /// Of those, tasks whose runs disagree on success.
    pub success_flips: usize,
    /// Of those, tasks whose composite spans more than [`WIDE_SPAN`].
    pub wide: usize,
    /// Mean over those tasks of the composite's sample SD across runs.
    pub mean_sd: f64,
    /// The task with the widest composite span, and its runs' composites
    /// in run order.
    pub widest: Option<(String, Vec<f64>)>,
}

/// A composite span across runs of one task above which the task is
/// counted as unstable.
pub const WIDE_SPAN: f64 = 0.1;

/// A paired comparison of two cells of the same backend (SA vs DA).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The backend.
    pub backend: String,
    /// Pairs (same task, same run number).
    pub n: usize,
    /// Median of SA − DA composites.
    pub median_difference: f64,
    /// Mean of SA − DA composites.
    pub mean_difference: f64,
    /// Cohen's d of the paired differences (d_z; None when they are all equal).
    pub cohens_d: Option<f64>,
    /// The Wilcoxon test (None when no pair differs).
    pub wilcoxon: Option<Wilcoxon>,
    /// Cliff's δ (positive favours SA).
    pub cliffs_delta: f64,
}

/// Two eval folders of one backend and architecture that differ in exactly
/// one ablation flag, paired by task on the per-task mean composite (cf.
/// GISclaw Table 10: with vs without the workflow).
#[derive(Debug, Clone, Serialize)]
pub struct Ablation {
    /// The flag (`workflow`, `rag`, `output checks`, `vision feedback`).
    pub flag: String,
    /// The architecture.
    pub arch: String,
    /// The folder with the flag on.
    pub with: AblationSide,
    /// The folder with the flag off.
    pub without: AblationSide,
    /// Tasks in both.
    pub n: usize,
    /// Mean of the per-task differences (with − without).
    pub mean_difference: f64,
    /// Their median.
    pub median_difference: f64,
    /// The paired Wilcoxon test (None when no task differs).
    pub wilcoxon: Option<Wilcoxon>,
    /// Cohen's d of the differences (d_z).
    pub cohens_d: Option<f64>,
    /// Each paired task: (task, composite with, composite without).
    pub per_task: Vec<(String, f64, f64)>,
}

/// One side of an [`Ablation`].
#[derive(Debug, Clone, Serialize)]
pub struct AblationSide {
    /// The cell's label.
    pub label: String,
    /// Mean of the per-task composites.
    pub mean: f64,
    /// Their sample SD.
    pub sd: f64,
    /// Successful runs of the paired tasks.
    pub successes: usize,
    /// Runs of the paired tasks.
    pub runs: usize,
}

/// The weight-sensitivity sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Weight tuples tried.
    pub tuples: usize,
    /// Tuples under which τ is defined (the cells do not all tie).
    pub defined: usize,
    /// Median Kendall τ-b against the default ranking.
    pub tau_median: f64,
    /// Smallest τ.
    pub tau_min: f64,
    /// Largest τ.
    pub tau_max: f64,
    /// Tuples with τ ≥ 0.9.
    pub at_least_0_9: usize,
}

/// One task's line of the per-task table, per cell.
#[derive(Debug, Clone, Serialize)]
pub struct TaskLine {
    /// The task id.
    pub task: String,
    /// Per cell, in the order of [`Report::cells`].
    pub cells: Vec<TaskCell>,
}

/// One task in one cell: its runs' successes and mean scores.
#[derive(Debug, Clone, Serialize)]
pub struct TaskCell {
    /// Successful runs.
    pub successes: usize,
    /// Runs.
    pub runs: usize,
    /// Mean Q_out (NaN without runs).
    pub q_out: f64,
    /// Mean composite.
    pub composite: f64,
    /// Mean API-operation F1.
    pub f_api: f64,
    /// Mean C_emb, when every run has it.
    pub c_emb: Option<f64>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The folders it covers.
    pub evals: Vec<PathBuf>,
    /// The protocols they ran under, distinct, in folder order.
    pub protocols: Vec<crate::protocol::Protocol>,
    /// The models that embedded the logs for C_emb, distinct (folders
    /// that recorded one).
    pub c_emb_models: Vec<String>,
    /// Composite weights.
    pub weights: Weights,
    /// Runs without C_emb (their composite renormalised).
    pub c_emb_missing: usize,
    /// Per cell.
    pub cells: Vec<CellSummary>,
    /// SA vs DA per backend.
    pub comparisons: Vec<Comparison>,
    /// Ablations between folders (cf. Table 10).
    pub ablations: Vec<Ablation>,
    /// The sweep (None with fewer than two cells).
    pub sweep: Option<Sweep>,
    /// Per task.
    pub tasks: Vec<TaskLine>,
    /// Tasks whose gold run had problems (their L3 is unreliable).
    pub gold_problems: BTreeMap<String, Vec<String>>,
    /// Runs expected but not recorded.
    pub missing_runs: usize,
    /// Sharded folders: the runs without a record of each shard that has
    /// some, as (folder, `K/N`, count).
    pub missing_by_shard: Vec<(PathBuf, String, usize)>,
    /// Of the missing runs, those that could not be carried out (model
    /// server, network or sandbox failures: `failed/` notes).
    pub infrastructure_failures: usize,
    /// Every run with its composite.
    pub runs: Vec<(String, RunRecord, f64)>,
    /// Cost against accuracy per cell, with the Pareto fronts.
    pub cost: super::cost::CostAccuracy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_parse_and_renormalise_without_c_emb() {
        assert_eq!(
            Weights::parse("0.4, 0.3,0.15,0.15").unwrap(),
            Weights::default()
        );
        assert!(Weights::parse("0.4,0.3")
            .unwrap_err()
            .to_string()
            .contains("four numbers"));
        assert!(Weights::parse("0.4,x,0.1,0.1")
            .unwrap_err()
            .to_string()
            .contains("`x`"));
        assert!(Weights::parse("0,0,0,0").is_err());
    }
}
