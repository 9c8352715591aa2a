//! Answers: what a solution's call or a step's check returned, as encoded
//! in the sandbox by `gisclaw_runtime.write_answer`, and the
//! `expected.json` files that keep the reference answers of the unit and
//! step suites.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::data::DataError;
use crate::observation;
use crate::sandbox::{CellStatus, SandboxError, Session};
use crate::util::write_atomic;

/// The file that holds a suite's (or a step task's) reference answers.
pub const EXPECTED: &str = "expected.json";

/// An answer: the kind the encoder saw and its plain-JSON value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// number, string, bool, list, dict, geometry, array, none, error, other.
    pub kind: String,
    /// The value; for `array` `{"shape": [...], "data": [...]}` (NaN as
    /// null), for `error` `{"ename", "evalue"}`.
    #[serde(default)]
    pub value: Value,
}

/// Why the bench harness (not the code under test) failed.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The sandbox failed.
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    /// The harness cell itself raised (its error line).
    #[error("the harness failed: {0}")]
    Failed(String),
    /// The harness cell hit its time limit or was cancelled (its status).
    #[error("the harness cell did not end: {0}")]
    TimedOut(String),
    /// The harness wrote no answer file.
    #[error("no answer was written: {0}")]
    NoAnswer(std::io::Error),
    /// The answer file is not an answer.
    #[error("unreadable answer: {0}")]
    Unreadable(serde_json::Error),
    /// A file cannot be written or a folder made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The task's data could not be made.
    #[error(transparent)]
    Data(#[from] DataError),
    /// The run folder could not be prepared.
    #[error("{0}")]
    Prepare(String),
    /// What is recorded would be wrong (a problem of the reference or gold).
    #[error("{0}")]
    Refused(String),
    /// The harness failed for this task or file.
    #[error("{what}: {source}")]
    In {
        /// The task id or case file.
        what: String,
        /// The failure.
        source: Box<HarnessError>,
    },
}

impl HarnessError {
    /// This failure, said to be of `what` (a task id, a case file).
    pub fn within(what: impl std::fmt::Display) -> impl FnOnce(HarnessError) -> HarnessError {
        move |source| HarnessError::In {
            what: what.to_string(),
            source: Box::new(source),
        }
    }

    /// Maps an I/O error on `path`.
    pub fn io(path: &Path) -> impl FnOnce(std::io::Error) -> HarnessError + '_ {
        move |source| HarnessError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The largest answer file read.
const MAX_ANSWER_BYTES: u64 = 256 << 20;

/// Runs `gisclaw_runtime.<function>(<args>…, <answer file>)` as a cell in
/// `session` — each argument a Python expression — and reads the answer it
/// wrote. `Err` only when the harness itself failed.
pub fn answer_from_runtime(
    session: &mut Session,
    function: &str,
    args: &[String],
) -> Result<Answer, HarnessError> {
    let answer_file = session.workdir().join(".gisclaw-answer.json");
    let _ = std::fs::remove_file(&answer_file);
    let mut args = args.to_vec();
    args.push(py_str(&answer_file.to_string_lossy()));
    let cell = format!(
        "import gisclaw_runtime as _gisclaw_runtime\n_gisclaw_runtime.{function}({})\ndel _gisclaw_runtime\n",
        args.join(", ")
    );
    let outcome = session.execute(&cell)?;
    if matches!(
        outcome.status,
        CellStatus::TimedOut { .. } | CellStatus::Cancelled { .. }
    ) {
        return Err(HarnessError::TimedOut(format!("{:?}", outcome.status)));
    }
    if outcome.status != CellStatus::Ok {
        let text = observation::render(&outcome);
        return Err(HarnessError::Failed(
            observation::error_line(&text).to_string(),
        ));
    }
    // A cell's file: read as the cell could (crate::beneath: no link out
    // of the work folder, no FIFO) and at most MAX_ANSWER_BYTES.
    let text = crate::beneath::read_under(session.workdir(), &answer_file, MAX_ANSWER_BYTES)
        .map_err(|why| match why {
            crate::beneath::Refused::Missing => HarnessError::NoAnswer(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no answer file",
            )),
            why => HarnessError::NoAnswer(std::io::Error::other(why.to_string())),
        })?;
    serde_json::from_slice(&text).map_err(HarnessError::Unreadable)
}

/// `text` as a Python string literal (JSON string syntax is valid Python).
pub fn py_str(text: &str) -> String {
    // A str always serialises; the fallback is an empty literal.
    serde_json::to_string(text).unwrap_or_else(|_| "''".into())
}

/// Writes an `expected.json` atomically with one answer per line, so that
/// diffs stay readable when a case changes: `entries` are the lines' JSON
/// (already serialised), `brackets` the enclosing `[`/`]` or `{`/`}`.
pub fn save_expected(
    path: &Path,
    entries: &[String],
    brackets: (char, char),
) -> Result<(), HarnessError> {
    let lines: Vec<String> = entries.iter().map(|e| format!("  {e}")).collect();
    let text = format!("{}\n{}\n{}\n", brackets.0, lines.join(",\n"), brackets.1);
    write_atomic(path, text.as_bytes()).map_err(HarnessError::io(path))
}

/// [`save_expected`] of a map of answers by key, one `"key": answer`
/// line each, in key order.
pub fn save_expected_map<T: serde::Serialize>(
    path: &Path,
    answers: &std::collections::BTreeMap<String, T>,
) -> Result<(), HarnessError> {
    let entries: Vec<String> = answers
        .iter()
        .map(|(key, answer)| {
            format!(
                "{}: {}",
                serde_json::Value::String(key.clone()),
                serde_json::to_string(answer).unwrap_or_default()
            )
        })
        .collect();
    save_expected(path, &entries, ('{', '}'))
}

/// One answer as compact JSON.
pub fn answer_json(answer: &Answer) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}
