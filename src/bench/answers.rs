//! Answers: what a solution's call or a step's check returned, as encoded
//! in the sandbox by `gisclaw_runtime.write_answer`, and the
//! `expected.json` files that keep the reference answers of the unit and
//! step suites.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::observation;
use crate::sandbox::{CellStatus, Session};
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

/// Runs `gisclaw_runtime.<function>(<args>…, <answer file>)` as a cell in
/// `session` — each argument a Python expression — and reads the answer it
/// wrote. `Err` only when the harness itself failed.
pub fn answer_from_runtime(
    session: &mut Session,
    function: &str,
    args: &[String],
) -> Result<Answer, String> {
    let answer_file = session.workdir().join(".gisclaw-answer.json");
    let _ = std::fs::remove_file(&answer_file);
    let mut args = args.to_vec();
    args.push(py_str(&answer_file.to_string_lossy()));
    let cell = format!(
        "import gisclaw_runtime as _gisclaw_runtime\n_gisclaw_runtime.{function}({})\ndel _gisclaw_runtime\n",
        args.join(", ")
    );
    let outcome = session
        .execute(&cell)
        .map_err(|e| format!("sandbox: {e}"))?;
    if outcome.status != CellStatus::Ok {
        return Err(format!(
            "the harness failed: {}",
            observation::error_line(&observation::render(&outcome))
        ));
    }
    let text =
        std::fs::read_to_string(&answer_file).map_err(|e| format!("no answer was written: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("unreadable answer: {e}"))
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
) -> Result<(), String> {
    let lines: Vec<String> = entries.iter().map(|e| format!("  {e}")).collect();
    let text = format!("{}\n{}\n{}\n", brackets.0, lines.join(",\n"), brackets.1);
    write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// One answer as compact JSON.
pub fn answer_json(answer: &Answer) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}
