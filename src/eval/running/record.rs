//! One scored run: what `records/<task>.<arch>.<run>.json` holds, and how it
//! is computed from a finished work dir and the gold's.

use crate::eval::running::jobs::ItemRecord;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent::summary::RunSummary;
use crate::bench::labels::Labels;
use crate::eval::metrics::api::{self, OpTable, SetScore};
use crate::eval::metrics::code;
use crate::eval::metrics::codebleu::{self, CodeBleu};
use crate::eval::metrics::errors::{self, ErrorType};
use crate::eval::metrics::llm_judge::Verdict;
use crate::eval::metrics::output_score::{self, OutputScore};
use crate::eval::metrics::process;
use crate::eval::metrics::process::LogEmbedder;
use crate::outputs::{self, OutputCheck};

/// L1 scores of the code of one run's successful cells against the gold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeScores {
    /// BLEU-4 over Python tokens.
    pub bleu4: f64,
    /// ROUGE-L F1 over Python tokens.
    pub rouge_l: f64,
    /// 1 − Levenshtein / longer length, over Python tokens.
    pub edit_similarity: f64,
    /// CodeBLEU and its four parts (absent in records written before it).
    #[serde(default)]
    pub codebleu: Option<CodeBleu>,
    /// API-operation precision, recall, F1.
    pub api: SetScore,
    /// The GIS operations the run's code performs.
    pub ops: Vec<String>,
    /// The functions it calls (GeoAgent's labels).
    pub calls: Vec<String>,
}

/// A run's scores, resources and errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The task id.
    pub task: String,
    /// `single` or `dual`.
    pub arch: String,
    /// The run number, from 1.
    pub run: usize,
    /// `finished`, `failed` or `error` (infrastructure).
    pub status: String,
    /// Why the run ended.
    pub reason: String,
    /// R_succ of this run: finished and every declared output has content.
    pub success: bool,
    /// Model rounds.
    pub rounds: usize,
    /// Prompt tokens.
    pub tokens_in: u64,
    /// Completion tokens.
    pub tokens_out: u64,
    /// Seconds waiting for the model.
    pub llm_seconds: f64,
    /// Seconds running cells.
    pub sandbox_seconds: f64,
    /// Seconds in all.
    pub wall_seconds: f64,
    /// USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// CPU seconds of the local model's server during the run (local
    /// models gisclaw started only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_cpu_seconds: Option<f64>,
    /// `execute_python` calls.
    pub cells: usize,
    /// Cells that did not end Ok.
    pub failed_cells: usize,
    /// Non-blank lines of code sent to the sandbox.
    pub code_lines: usize,
    /// Failed cells by error type.
    pub cell_errors: BTreeMap<ErrorType, usize>,
    /// The run's error type when it did not succeed.
    pub run_error: Option<ErrorType>,
    /// L1.
    pub code: CodeScores,
    /// L3 per declared output.
    pub outputs: Vec<OutputScore>,
    /// Q_out of this run: the mean output score (missing outputs score 0).
    pub q_out: f64,
    /// C_emb: cosine similarity of the cleaned log and the gold reference
    /// (L2, see [`crate::eval::metrics::process`]); `None` when the embedding model was
    /// not available.
    pub c_emb: Option<f64>,
    /// The LLM judge's verdict (L2 diagnostic), when `--judge` was given.
    #[serde(default)]
    pub judge: Option<Verdict>,
    /// Why judging failed, when it did.
    #[serde(default)]
    pub judge_error: Option<String>,
    /// The tree search's figures (`--arch mcts` runs only).
    #[serde(default)]
    pub search: Option<SearchCounts>,
    /// Output files whose checks still failed when the model finished
    /// anyway (0 when they passed, were off, or the run did not finish).
    #[serde(default)]
    pub finished_with_warnings: usize,
    /// Figures shown to the model (vision feedback).
    #[serde(default)]
    pub images_shown: usize,
    /// Their estimated prompt tokens.
    #[serde(default)]
    pub image_tokens: u64,
    /// Times the conversation was compacted to fit the context window.
    #[serde(default)]
    pub compactions: usize,
    /// Whether the run's solution.py remade its outputs (`--reproduce`;
    /// `None` when not tried).
    #[serde(default)]
    pub reproduced: Option<bool>,
    /// The task's labels (empty for unlabelled tasks and older records).
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// Whether the task can be done (`false`: the right answer is a
    /// decline; see [`RunRecord::judge_refusal`]).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub solvable: bool,
    /// The reason of the run's `decline`, when it declined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined: Option<String>,
    /// What the run was made from (run.json's `provenance`; `None` in
    /// records written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::Provenance>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

pub use crate::record::SearchCounts;

/// The counts of the `tree.json` an `--arch mcts` run left in `workdir`,
/// when there is one.
pub fn search_counts(workdir: &Path) -> Option<SearchCounts> {
    let bytes = std::fs::read(workdir.join("tree.json")).ok()?;
    let tree: crate::agent::mcts::tree::Tree = serde_json::from_slice(&bytes).ok()?;
    Some(tree.search_counts())
}

impl ItemRecord for RunRecord {
    fn succeeded(&self) -> bool {
        self.success
    }

    fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }

    fn summary(&self) -> String {
        format!(
            "{} {} run {}: {} (Q_out {:.2}, F_api {:.2})",
            self.task,
            self.arch,
            self.run,
            if self.success {
                "success"
            } else {
                self.status.as_str()
            },
            self.q_out,
            self.code.api.f1
        )
    }
}

impl RunRecord {
    /// Scores the run against whether its task can be done. An unsolvable
    /// task (`solvable: false`) succeeds only by a decline: then Q_out is
    /// 1 (no output is the right output); any other ending is an invalid
    /// answer with Q_out 0, whatever it wrote. A solvable task's decline is
    /// a failure (its composite is 0, see
    /// [`crate::eval::reports::task::Weights::composite`]).
    pub fn judge_refusal(&mut self, solvable: bool) {
        self.solvable = solvable;
        if solvable {
            if self.declined.is_some() {
                self.success = false;
                self.run_error = Some(ErrorType::Other);
            }
            return;
        }
        let declined = self.declined.is_some();
        self.success = declined;
        self.q_out = f64::from(u8::from(declined));
        self.run_error = (!declined).then_some(ErrorType::InvalidAnswer);
    }

    /// Q_out by the GISclaw paper's L3 definitions: the mean of the
    /// outputs' [`OutputScore::paper`] scores, as `q_out` is of theirs (a
    /// declined or unsolvable task's as `q_out`); `None` for a record made
    /// before those were kept.
    pub fn q_out_paper(&self) -> Option<f64> {
        if !self.solvable || self.declined.is_some() || self.outputs.is_empty() {
            return Some(self.q_out);
        }
        let scores: Option<Vec<f64>> = self.outputs.iter().map(|o| o.paper).collect();
        scores.map(|s| s.iter().sum::<f64>() / s.len() as f64)
    }

    /// The record's file name.
    pub fn file_name(task: &str, arch: &str, run: usize) -> String {
        format!("{task}.{arch}.{run}.json")
    }

    /// Writes the record atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(RunRecord::file_name(&self.task, &self.arch, self.run));
        crate::util::write_json(&path, self)?;
        Ok(path)
    }

    /// Reads a record; `None` when absent or not a whole record.
    pub fn read(path: &Path) -> Option<RunRecord> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

/// What scoring needs of the gold.
pub struct GoldReference {
    /// The gold solution's source.
    pub code: String,
    /// The gold run's work dir (its `pred_results/` are the gold outputs).
    pub dir: PathBuf,
    /// The embedding of the gold reference text (L2), when the embedding
    /// model is loaded.
    pub embedding: Option<Vec<f32>>,
}

/// L1 scores of `candidate` code against `gold` code.
pub fn code_scores(gold: &str, candidate: &str, table: &OpTable) -> CodeScores {
    // Cell markers (`# %%`) are layout, not code: a gold split into cells
    // and a candidate that is not (an agent's cells) are compared alike.
    let (gold, candidate) = (without_cell_markers(gold), without_cell_markers(candidate));
    let (gold, candidate) = (gold.as_str(), candidate.as_str());
    let (g, c) = (code::token_texts(gold), code::token_texts(candidate));
    let (gold_ops, ops) = (table.operations(gold), table.operations(candidate));
    // A task without gold gives an undefined CodeBLEU (NaN, written as
    // null, which the record could not be read back with): absent instead.
    let codebleu = Some(codebleu::codebleu(gold, candidate)).filter(|c| {
        [
            c.codebleu,
            c.ngram_match,
            c.weighted_ngram_match,
            c.syntax_match,
            c.dataflow_match,
        ]
        .iter()
        .all(|v| v.is_finite())
    });
    CodeScores {
        bleu4: code::bleu4(&g, &c),
        rouge_l: code::rouge_l(&g, &c),
        edit_similarity: code::edit_similarity(&g, &c),
        codebleu,
        api: api::set_score(&gold_ops, &ops),
        ops: ops.into_iter().collect(),
        calls: api::called_functions(candidate).into_iter().collect(),
    }
}

/// `code` without its cell-marker lines (`# %%`, `# %% cell 2`).
fn without_cell_markers(code: &str) -> String {
    code.lines()
        .filter(|line| !line.trim_start().starts_with("# %%"))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Scores a finished run in `workdir` (its `run.json`, `transcript.jsonl`,
/// `solution.py` and `pred_results/`) against the gold; C_emb only with an
/// embedder and the gold's embedding.
pub fn score_run(
    summary: &RunSummary,
    run: usize,
    workdir: &Path,
    declared: &[String],
    gold: &GoldReference,
    table: &OpTable,
    embedder: Option<&LogEmbedder>,
) -> RunRecord {
    let cells = crate::record::cells(&workdir.join("transcript.jsonl")).unwrap_or_default();
    let mut cell_errors: BTreeMap<ErrorType, usize> = BTreeMap::new();
    let mut last_error = None;
    for cell in cells.iter().filter(|c| c.status != "Ok") {
        let kind = errors::classify_cell(&cell.status, &cell.observation);
        *cell_errors.entry(kind).or_default() += 1;
        last_error = Some(kind);
    }
    let code_lines = cells
        .iter()
        .map(|c| c.code.lines().filter(|l| !l.trim().is_empty()).count())
        .sum();
    let checks: Vec<OutputCheck> = declared
        .iter()
        .map(|d| outputs::check_declared(workdir, d))
        .collect();
    let all_content = checks.iter().all(OutputCheck::is_content);
    let success = summary.status == "finished" && all_content;
    let run_error = (!success).then(|| {
        if checks
            .iter()
            .any(|c| matches!(c, OutputCheck::Unreadable(why) if why != "missing"))
        {
            ErrorType::OutputType
        } else if checks.iter().any(|c| matches!(c, OutputCheck::Trivial(..))) {
            ErrorType::InvalidAnswer
        } else if let Some(kind) = last_error {
            kind
        } else if summary.reason.contains("budget") {
            ErrorType::Timeout
        } else {
            ErrorType::Other
        }
    });
    // The code the model wrote: its successful cells, in order (solution.py
    // adds gisclaw's preamble, which is not the model's).
    let candidate: String = cells
        .iter()
        .filter(|c| c.status == "Ok")
        .map(|c| format!("{}\n", c.code))
        .collect();
    let scores: Vec<OutputScore> = declared
        .iter()
        .map(|d| output_score::score_output(d, &gold.dir, workdir))
        .collect();
    let q_out = if scores.is_empty() {
        0.0
    } else {
        scores.iter().map(|s| s.score).sum::<f64>() / scores.len() as f64
    };
    RunRecord {
        task: summary.task.clone(),
        arch: summary.arch.clone(),
        run,
        status: summary.status.clone(),
        reason: summary.reason.clone(),
        success,
        rounds: summary.rounds,
        tokens_in: summary.tokens_in,
        tokens_out: summary.tokens_out,
        llm_seconds: summary.llm_seconds,
        sandbox_seconds: summary.sandbox_seconds,
        wall_seconds: summary.wall_seconds,
        cost_usd: summary.cost_usd,
        model_cpu_seconds: summary.model_cpu_seconds,
        cells: cells.len(),
        failed_cells: cells.iter().filter(|c| c.status != "Ok").count(),
        code_lines,
        cell_errors,
        run_error,
        code: code_scores(&gold.code, &candidate, table),
        outputs: scores,
        q_out,
        c_emb: process_score(workdir, gold, embedder),
        judge: None,
        judge_error: None,
        search: search_counts(workdir),
        finished_with_warnings: summary.finished_with_warnings.len(),
        images_shown: summary.images_shown,
        image_tokens: summary.image_tokens,
        compactions: summary.compactions,
        reproduced: summary.reproduced.as_ref().map(|r| r.ok),
        labels: Labels::default(),
        solvable: true,
        declined: (summary.status == "declined").then(|| summary.reason.clone()),
        provenance: Some(summary.provenance.clone()),
    }
}

/// C_emb of the run in `workdir`; `None` without the model or the gold's
/// embedding, or when embedding fails (logged).
fn process_score(
    workdir: &Path,
    gold: &GoldReference,
    embedder: Option<&LogEmbedder>,
) -> Option<f64> {
    let (embedder, reference) = (embedder?, gold.embedding.as_deref()?);
    let log = process::cleaned_log(&workdir.join("transcript.jsonl"), true).unwrap_or_default();
    match process::c_emb(embedder, &log, reference) {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!("C_emb of {}: {e}", workdir.display());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_scores_without_gold_are_written_and_read_back() {
        let table = OpTable::built_in().unwrap();
        let scores = code_scores("", "import geopandas as gpd\nx = 1\n", &table);
        assert_eq!(scores.codebleu, None);
        let text = serde_json::to_string(&scores).unwrap();
        let back: CodeScores =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back.codebleu, None);
        let with_gold = code_scores("x = 1\n", "x = 1\n", &table);
        let c = with_gold.codebleu.expect("a gold gives a CodeBLEU");
        assert_eq!((c.syntax_match, c.dataflow_match), (1.0, 1.0));
    }

    #[test]
    fn cell_markers_do_not_count_for_or_against_a_candidate() {
        // The gold in cells; the same code as an agent's cells (no
        // markers) and as one script with the markers: scored alike, 1.0.
        let table = OpTable::built_in().unwrap();
        let gold = "# %%\nimport geopandas as gpd\n# %% buffer\nroads = gpd.read_file('data/r.shp')\nb = roads.buffer(10)\n";
        let cells =
            "import geopandas as gpd\nroads = gpd.read_file('data/r.shp')\nb = roads.buffer(10)\n";
        let with_markers = code_scores(gold, gold, &table);
        let without = code_scores(gold, cells, &table);
        assert_eq!(without.bleu4, 1.0);
        assert_eq!(without.bleu4, with_markers.bleu4);
        assert_eq!(
            without.codebleu.unwrap().codebleu,
            with_markers.codebleu.unwrap().codebleu
        );
    }
}
