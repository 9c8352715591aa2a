//! The report of one or more eval folders: per-cell tables (a cell is one
//! backend × architecture) like GISclaw's Tables 6–8, the paired SA-vs-DA
//! test, the weight-sensitivity sweep, stability (pass@k, CV, SA), resource
//! and efficiency figures, error types, a per-task table, and one row per
//! run — written as `report.md`, `results.json` and `results.csv`.
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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;

use super::api::{self, LabelMetrics};
use super::llm_judge;
use super::record::RunRecord;
use super::runner::{self, gold_dir, records_dir, Manifest};
use super::stats::{self, Wilcoxon};
use crate::util::write_atomic;

/// Bootstrap resamples for the CIs.
const RESAMPLES: usize = 10_000;
/// Seed of the bootstrap (reports are reproducible).
const SEED: u64 = 0x5eed_2026;

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

impl Weights {
    /// Parses `0.4,0.3,0.15,0.15` (four non-negative numbers, not all 0).
    pub fn parse(text: &str) -> Result<Weights, String> {
        let values: Vec<f64> = text
            .split(',')
            .map(|p| {
                p.trim()
                    .parse::<f64>()
                    .map_err(|_| format!("--weights: `{}` is not a number", p.trim()))
            })
            .collect::<Result<_, _>>()?;
        let [success, output, api, embedding] = values[..] else {
            return Err(format!(
                "--weights: expected four numbers (success, output, api, embedding), got {}",
                values.len()
            ));
        };
        if values.iter().any(|v| *v < 0.0 || !v.is_finite()) || values.iter().sum::<f64>() <= 0.0 {
            return Err("--weights: the weights must be non-negative and not all 0".into());
        }
        Ok(Weights {
            success,
            output,
            api,
            embedding,
        })
    }

    fn from_tuple(w: [f64; 4]) -> Weights {
        Weights {
            success: w[0],
            output: w[1],
            api: w[2],
            embedding: w[3],
        }
    }

    /// A run's composite; without C_emb the other three weights are renormalised.
    pub fn composite(&self, r: &RunRecord) -> f64 {
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

/// Problems reading an eval folder.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file cannot be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A folder is not an eval folder.
    #[error("{0}: not an eval folder (no eval.json): run `gisclaw eval` first")]
    NotEval(String),
}

/// One eval folder's saved results.
pub struct EvalData {
    /// The folder.
    pub dir: PathBuf,
    /// eval.json.
    pub manifest: Manifest,
    /// Every record, ordered by task, arch, run.
    pub records: Vec<RunRecord>,
    /// Functions each gold calls.
    pub gold_calls: BTreeMap<String, BTreeSet<String>>,
    /// Problems of each task's gold run (empty when it passed).
    pub gold_problems: BTreeMap<String, Vec<String>>,
}

impl EvalData {
    /// Reads a folder written by `gisclaw eval`.
    pub fn load(dir: &Path) -> Result<EvalData, ReportError> {
        let manifest_path = dir.join("eval.json");
        if !manifest_path.is_file() {
            return Err(ReportError::NotEval(dir.display().to_string()));
        }
        let manifest: Manifest = read_json(&manifest_path)?;
        let mut records = Vec::new();
        let mut gold_calls = BTreeMap::new();
        let mut gold_problems = BTreeMap::new();
        for task in &manifest.tasks {
            let gold = gold_dir(dir, task);
            let code = std::fs::read_to_string(gold.join("gold.py")).unwrap_or_default();
            gold_calls.insert(task.clone(), api::called_functions(&code));
            let problems = runner::gold_problems(dir, task)
                .unwrap_or_else(|| vec!["the gold run left no gold.json".into()]);
            gold_problems.insert(task.clone(), problems);
            for arch in &manifest.archs {
                for run in 1..=manifest.runs {
                    let path = records_dir(dir).join(RunRecord::file_name(task, arch, run));
                    if path.is_file() {
                        records.push(read_json(&path)?);
                    }
                }
            }
        }
        Ok(EvalData {
            dir: dir.to_path_buf(),
            manifest,
            records,
            gold_calls,
            gold_problems,
        })
    }

    /// Runs expected but not recorded.
    pub fn missing(&self) -> usize {
        self.manifest.tasks.len() * self.manifest.archs.len() * self.manifest.runs
            - self.records.len()
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ReportError> {
    let bytes = std::fs::read(path).map_err(|e| ReportError::File {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| ReportError::File {
        path: path.display().to_string(),
        message: format!("line {}, column {}: {e}", e.line(), e.column()),
    })
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
    /// Mean rounds per run.
    pub rounds: f64,
    /// Mean code lines per run.
    pub code_lines: f64,
    /// Total cost, when every run's is known.
    pub cost_usd: Option<f64>,
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
    /// The LLM judge's means (None when no run of the cell was judged).
    pub judge: Option<JudgeSummary>,
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

/// A paired comparison of two cells of the same backend (SA vs DA).
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The backend.
    pub backend: String,
    /// Pairs (same task, same run number).
    pub n: usize,
    /// Median of SA − DA composites.
    pub median_difference: f64,
    /// The Wilcoxon test (None when no pair differs).
    pub wilcoxon: Option<Wilcoxon>,
    /// Cliff's δ (positive favours SA).
    pub cliffs_delta: f64,
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
    /// Per cell: (successes, runs, mean Q_out, mean composite).
    pub cells: Vec<(usize, usize, f64, f64)>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The folders it covers.
    pub evals: Vec<PathBuf>,
    /// Composite weights.
    pub weights: Weights,
    /// Runs without C_emb (their composite renormalised).
    pub c_emb_missing: usize,
    /// Per cell.
    pub cells: Vec<CellSummary>,
    /// SA vs DA per backend.
    pub comparisons: Vec<Comparison>,
    /// The sweep (None with fewer than two cells).
    pub sweep: Option<Sweep>,
    /// Per task.
    pub tasks: Vec<TaskLine>,
    /// Tasks whose gold run had problems (their L3 is unreliable).
    pub gold_problems: BTreeMap<String, Vec<String>>,
    /// Runs expected but not recorded.
    pub missing_runs: usize,
    /// Every run with its composite.
    pub runs: Vec<(String, RunRecord, f64)>,
}

fn mean_of<F: Fn(&RunRecord) -> f64>(records: &[&RunRecord], f: F) -> f64 {
    stats::mean(&records.iter().map(|r| f(r)).collect::<Vec<_>>())
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
        label: format!("{backend} · {arch}"),
        backend: backend.to_string(),
        arch: arch.to_string(),
        n: records.len(),
        tasks: by_task.len(),
        success_rate: mean_of(records, |r| f64::from(u8::from(r.success))),
        q_out,
        f_api: mean_of(records, |r| r.code.api.f1),
        c_emb,
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
        rounds: mean_of(records, |r| r.rounds as f64),
        code_lines: lines,
        cost_usd: records.iter().map(|r| r.cost_usd).sum(),
        inference_efficiency: per(llm),
        token_efficiency: per(tokens),
        code_line_efficiency: per(lines),
        run_errors,
        cell_errors,
    }
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
        let backend = &eval.manifest.backend;
        for arch in &eval.manifest.archs {
            let records: Vec<&RunRecord> =
                eval.records.iter().filter(|r| &r.arch == arch).collect();
            if records.is_empty() {
                continue;
            }
            cells.push(summarise(
                backend,
                arch,
                &records,
                &eval.gold_calls,
                &weights,
            ));
            for r in &records {
                runs.push((backend.clone(), (*r).clone(), weights.composite(r)));
            }
            cell_records.push(records);
        }
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
        if !pairs.is_empty() {
            let (x, y): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            let diffs: Vec<f64> = pairs.iter().map(|(a, b)| a - b).collect();
            comparisons.push(Comparison {
                backend: backend.clone(),
                n: pairs.len(),
                median_difference: stats::quantile(&diffs, 0.5),
                wilcoxon: stats::wilcoxon(&x, &y),
                cliffs_delta: stats::cliffs_delta(&x, &y),
            });
        }
    }
    let sweep = (cells.len() >= 2).then(|| {
        let default: Vec<f64> = cells.iter().map(|c| c.composite).collect();
        let taus: Vec<f64> = stats::weight_grid()
            .into_iter()
            .map(|w| {
                let w = Weights::from_tuple(w);
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
    });
    let tasks = task_ids
        .iter()
        .map(|task| TaskLine {
            task: task.clone(),
            cells: cell_records
                .iter()
                .map(|rs| {
                    let mine: Vec<&RunRecord> =
                        rs.iter().copied().filter(|r| &r.task == task).collect();
                    (
                        mine.iter().filter(|r| r.success).count(),
                        mine.len(),
                        mean_of(&mine, |r| r.q_out),
                        mean_of(&mine, |r| weights.composite(r)),
                    )
                })
                .collect(),
        })
        .collect();
    Report {
        evals: evals.iter().map(|e| e.dir.clone()).collect(),
        weights,
        c_emb_missing: runs.iter().filter(|(_, r, _)| r.c_emb.is_none()).count(),
        cells,
        comparisons,
        sweep,
        tasks,
        gold_problems,
        missing_runs: evals.iter().map(EvalData::missing).sum(),
        runs,
    }
}

/// A number for tables: 3 decimals, `–` for NaN.
fn f3(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else {
        format!("{x:.3}")
    }
}

/// A grade mean for tables: 2 decimals, `–` for NaN.
fn f2(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else {
        format!("{x:.2}")
    }
}

/// A number for the CSV: full precision, empty for NaN.
fn csv_num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x}")
    }
}

/// A CSV field, quoted when needed.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `results.csv`: one row per task-arch-run.
pub fn csv(report: &Report) -> String {
    let mut out = String::from(
        "backend,task,arch,run,status,success,q_out,api_f1,api_precision,api_recall,bleu4,rouge_l,edit_similarity,codebleu,c_emb,composite,rounds,tokens_in,tokens_out,llm_seconds,sandbox_seconds,wall_seconds,cost_usd,cells,failed_cells,code_lines,run_error\n",
    );
    for (backend, r, s) in &report.runs {
        let fields = [
            csv_field(backend),
            csv_field(&r.task),
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
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// `results.json`.
pub fn json(report: &Report) -> serde_json::Value {
    // serde_json writes NaN (an empty cell's mean) as null.
    json!({
        "evals": report.evals,
        "weights": report.weights,
        "c_emb_missing": report.c_emb_missing,
        "cells": report.cells,
        "comparisons": report.comparisons,
        "sweep": report.sweep,
        "tasks": report.tasks,
        "gold_problems": report.gold_problems,
        "missing_runs": report.missing_runs,
        "runs": report.runs.iter().map(|(backend, r, s)| {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            v["backend"] = json!(backend);
            v["composite"] = json!(s);
            v
        }).collect::<Vec<_>>(),
    })
}

/// `report.md`.
pub fn markdown(report: &Report) -> String {
    let mut md = String::from("# gisclaw eval report\n\n");
    let w = &report.weights;
    let _ = writeln!(
        md,
        "Composite S = {}·R_succ + {}·Q_out + {}·F_api + {}·C_emb (per run, then averaged; 95 % percentile-bootstrap CI).",
        w.success, w.output, w.api, w.embedding
    );
    if report.c_emb_missing > 0 {
        let _ = writeln!(
            md,
            "\n**C_emb is missing for {} run(s)** (the embedding model was not available when they were scored; `gisclaw doctor` says why): their S is renormalised over R_succ, Q_out and F_api.",
            report.c_emb_missing
        );
    }
    md.push_str(
        "\nC_emb (L2): cosine of the all-MiniLM-L6-v2 embeddings (384-d, run offline) of each run's cleaned log and its task's gold reference (expert workflow + gold run). \
         The paper used text-embedding-3-large, so C_emb values are not comparable with its Table 6.\n",
    );
    if report.missing_runs > 0 {
        let _ = writeln!(md, "\n**{} run(s) have no record** (not run yet or could not run): `gisclaw eval --resume` completes them.", report.missing_runs);
    }
    md.push_str("\nImage outputs are scored by SSIM against the gold image — a weak signal (a correct map drawn differently scores low); the vision judge is not built.\n");

    md.push_str("\n## Overall (cf. GISclaw Table 6)\n\n| cell | runs | R_succ | Q_out (succ.) | F_api | C_emb | S_comp [95 % CI] | tokens in / out per run | cost |\n|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} [{}, {}] | {:.0} / {:.0} | {} |",
            c.label,
            c.n,
            f3(c.success_rate),
            f3(c.q_out),
            f3(c.f_api),
            c.c_emb.map(f3).unwrap_or_else(|| "n/a".into()),
            f3(c.composite),
            f3(c.composite_ci.0),
            f3(c.composite_ci.1),
            c.tokens_in,
            c.tokens_out,
            c.cost_usd
                .map(|x| format!("${x:.4}"))
                .unwrap_or_else(|| "unknown".into())
        );
    }
    if !report.comparisons.is_empty() {
        md.push_str("\n## Single vs Dual Agent (cf. Table 7: paired Wilcoxon signed-rank on run composites)\n\n| backend | pairs | median Δ (SA − DA) | W | p | method | Cliff's δ |\n|---|---|---|---|---|---|---|\n");
        for c in &report.comparisons {
            let (wstat, p, method) = match &c.wilcoxon {
                Some(t) => (
                    f3(t.statistic),
                    format!("{:.3e}", t.p_value),
                    format!("{:?}", t.method).to_lowercase(),
                ),
                None => ("–".into(), "–".into(), "no pair differs".into()),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {wstat} | {p} | {method} | {} |",
                c.backend,
                c.n,
                f3(c.median_difference),
                f3(c.cliffs_delta)
            );
        }
    }
    md.push_str("\n## Code (L1, cf. Table 8)\n\n| cell | BLEU-4 | ROUGE-L | edit sim. | CodeBLEU | API P | API R | API F1 | call acc. | call P | call R | call F1 | Hamming loss |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.label,
            f3(c.bleu4),
            f3(c.rouge_l),
            f3(c.edit_similarity),
            c.codebleu.map(f3).unwrap_or_else(|| "–".into()),
            f3(c.api_precision),
            f3(c.api_recall),
            f3(c.f_api),
            f3(c.calls.accuracy),
            f3(c.calls.precision),
            f3(c.calls.recall),
            f3(c.calls.f1),
            f3(c.calls.hamming_loss)
        );
    }
    if report.cells.iter().any(|c| c.judge.is_some()) {
        let heads: Vec<&str> = llm_judge::DIMENSIONS.iter().map(|(k, _)| *k).collect();
        let _ = write!(
            md,
            "\n## LLM-as-judge (L2 diagnostic, cf. Table 9; not in the composite)\n\nMean grades 1–5 over the judged runs; judge: {}.\n\n| cell | judged | failed | {} | mean |\n|---|---|---|{}---|\n",
            report.cells.iter().filter_map(|c| c.judge.as_ref()).flat_map(|j| j.models.iter().cloned()).collect::<BTreeSet<String>>().into_iter().collect::<Vec<_>>().join(", "),
            heads.join(" | ").replace('_', " "),
            "---|".repeat(heads.len())
        );
        for c in &report.cells {
            let Some(j) = &c.judge else { continue };
            let grades: Vec<String> = j.means.iter().map(|(_, m)| f2(*m)).collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                c.label,
                j.judged,
                j.failed,
                grades.join(" | "),
                f2(j.overall)
            );
        }
    }
    md.push_str("\n## Stability and efficiency\n\n| cell | pass@k | CV | SA = pass@k_max/(1+CV) | rounds | LLM s | sandbox s | code lines | inference eff. (/s) | token eff. (/1k tok) | code-line eff. (/100 lines) |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in &report.cells {
        let pass: Vec<String> = c
            .pass_at
            .iter()
            .map(|(k, v)| format!("@{k} {}", f3(*v)))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.0} | {} | {} | {} |",
            c.label,
            pass.join(", "),
            f3(c.cv),
            f3(c.stability_adjusted),
            c.rounds,
            c.llm_seconds,
            c.sandbox_seconds,
            c.code_lines,
            f3(c.inference_efficiency),
            f3(c.token_efficiency * 1000.0),
            f3(c.code_line_efficiency * 100.0)
        );
    }
    if let Some(s) = report.sweep.as_ref().filter(|s| s.defined == 0) {
        let _ = writeln!(
            md,
            "\n## Weight sensitivity\n\nThe {} cells tie under all {} weight tuples: Kendall τ is undefined.",
            report.cells.len(),
            s.tuples
        );
    }
    if let Some(s) = report.sweep.as_ref().filter(|s| s.defined > 0) {
        let _ = writeln!(
            md,
            "\n## Weight sensitivity\n\nThe {} cells re-ranked under each of the {} weight tuples (each weight in {{0.1, …, 0.5}}, summing to 1): Kendall τ-b against the default ranking has median {}, range {}–{}; τ ≥ 0.9 for {} of {} tuples.{}",
            report.cells.len(),
            s.tuples,
            f3(s.tau_median),
            f3(s.tau_min),
            f3(s.tau_max),
            s.at_least_0_9,
            s.defined,
            if report.cells.len() < 3 { " (With fewer than three cells τ can only be ±1.)" } else { "" }
        );
    }
    md.push_str("\n## Error types\n\nFailed runs (and failed cells) by type.\n\n| cell |");
    for e in super::errors::ErrorType::ALL {
        let _ = write!(md, " {} |", e.name());
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(super::errors::ErrorType::ALL.len()));
    md.push('\n');
    for c in &report.cells {
        let _ = write!(md, "| {} |", c.label);
        for e in super::errors::ErrorType::ALL {
            let runs = c.run_errors.get(e.name()).copied().unwrap_or(0);
            let cells = c.cell_errors.get(e.name()).copied().unwrap_or(0);
            let _ = write!(md, " {runs} ({cells}) |");
        }
        md.push('\n');
    }
    md.push_str("\n## Per task (successes/runs, mean Q_out, mean S)\n\n| task |");
    for c in &report.cells {
        let _ = write!(md, " {} |", c.label);
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(report.cells.len()));
    md.push('\n');
    for t in &report.tasks {
        let _ = write!(
            md,
            "| {}{} |",
            t.task,
            if report.gold_problems.contains_key(&t.task) {
                " (gold failed)"
            } else {
                ""
            }
        );
        for (succ, n, q, s) in &t.cells {
            let _ = write!(md, " {succ}/{n} · Q {} · S {} |", f3(*q), f3(*s));
        }
        md.push('\n');
    }
    if !report.gold_problems.is_empty() {
        md.push_str("\n## Gold runs with problems\n\n");
        for (task, problems) in &report.gold_problems {
            let _ = writeln!(md, "- {task}: {}", problems.join("; "));
        }
    }
    md
}

/// Writes `report.md`, `results.json`, `results.csv` and the `charts/` into
/// `out`.
pub fn write(report: &Report, out: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    let mut md = markdown(report);
    md.push_str("\n## Charts\n\n");
    match super::charts::draw(report, &out.join("charts"), &crate::paths::default_venv()) {
        Ok(()) => {
            for name in super::charts::FILES {
                let _ = writeln!(md, "![{}](charts/{name})\n", name.trim_end_matches(".png"));
            }
        }
        Err(why) => {
            tracing::warn!("charts not drawn: {why}");
            let _ = writeln!(md, "Charts not drawn: {why}.");
        }
    }
    write_atomic(&out.join("report.md"), md.as_bytes())?;
    crate::util::write_json(&out.join("results.json"), &json(report))?;
    write_atomic(&out.join("results.csv"), csv(report).as_bytes())
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
            .contains("four numbers"));
        assert!(Weights::parse("0.4,x,0.1,0.1").unwrap_err().contains("`x`"));
        assert!(Weights::parse("0,0,0,0").is_err());
    }
}
