//! Reading eval folders: `eval.json`, the run records and the gold runs'
//! calls and problems.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::eval::metrics::api;
use crate::eval::running::record::RunRecord;
use crate::eval::running::runner::{self, gold_dir, records_dir, FailureNote, Manifest};

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
    /// Runs without a record that could not be carried out (model server,
    /// network or sandbox failures), ordered like the records.
    pub failures: Vec<FailureNote>,
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
        let mut failures = Vec::new();
        for task in &manifest.tasks {
            let gold = gold_dir(dir, task);
            let code = std::fs::read_to_string(gold.join("gold.py")).unwrap_or_default();
            gold_calls.insert(task.clone(), api::called_functions(&code));
            let problems = runner::gold_problems(dir, task)
                .unwrap_or_else(|| vec!["the gold run left no gold.json".into()]);
            gold_problems.insert(task.clone(), problems);
            for arch in &manifest.archs {
                for run in 1..=manifest.runs {
                    let name = RunRecord::file_name(task, arch.name(), run);
                    let path = records_dir(dir).join(&name);
                    let failure = runner::failures_dir(dir).join(&name);
                    if path.is_file() {
                        records.push(read_json(&path)?);
                    } else if failure.is_file() {
                        failures.push(read_json(&failure)?);
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
            failures,
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

/// Reads every `records/*.json` of an eval folder, in file-name order
/// (the task suite's run records, or a unit or step suite's).
pub fn read_records<T: serde::de::DeserializeOwned>(out: &Path) -> Result<Vec<T>, ReportError> {
    let dir = records_dir(out);
    let entries = std::fs::read_dir(&dir).map_err(|e| ReportError::File {
        path: dir.display().to_string(),
        message: e.to_string(),
    })?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read_json(p)).collect()
}
