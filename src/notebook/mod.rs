//! A run as a Jupyter notebook (`solution.ipynb`): the task and its schema
//! card, then each cell with its real outputs (stdout, the displayed value,
//! the figures it wrote, its error) and the model's reasoning between them.
//!
//! The notebook is built from the run's record alone — `transcript.jsonl`,
//! `solution.py` (which cells the session kept) and the files under
//! `pred_results/` — so `solve`, chat's `/export` and
//! `gisclaw transcript to-ipynb DIR` share one path, and any past run can
//! be converted. [`render`] writes the nbformat 4 document.

mod render;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::write_atomic;

/// Which cells a notebook keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum NotebookMode {
    /// The cells the session kept (those of `solution.py`), in order.
    #[default]
    Cells,
    /// Every cell the run tried, failed ones marked (tagged
    /// `raises-exception`, so the notebook still runs top to bottom).
    Full,
    /// No notebook.
    Off,
}

/// Why a notebook could not be written.
#[derive(Debug, thiserror::Error)]
pub enum NotebookError {
    /// A record of the run could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A transcript line is not JSON.
    #[error("{path}, line {line}: not a JSON event ({source})")]
    BadEvent {
        /// The transcript.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The notebook could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The notebook's path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// One cell the run executed, as its transcript recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCell {
    /// The code.
    pub code: String,
    /// True when it ran to its end.
    pub ok: bool,
    /// What the cell printed (the displayed value split off when it can be).
    pub stdout: String,
    /// Warnings and other stderr text, gisclaw's own notes left out.
    pub stderr: String,
    /// `repr` of the cell's last expression.
    pub display: Option<String>,
    /// The exception: name, message, traceback.
    pub error: Option<(String, String, String)>,
    /// Files it wrote, relative to the run's folder (`pred_results/x.png`).
    pub wrote: Vec<String>,
    /// The observation the model read, for records older than the
    /// per-cell fields (then the only output shown).
    pub observation: Option<String>,
    /// The model's text before this cell (since the previous cell).
    pub reasoning: Vec<String>,
    /// True for a chat user's own cell (`/run`), false for the model's.
    pub by_user: bool,
}

/// Who or what a markdown item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// The task prompt (task, knowledge, data listing, schema card).
    Task,
    /// A chat user's message.
    User,
    /// The model's text.
    Model,
    /// A Dual Agent plan step's heading.
    Step,
    /// The run's closing summary (`finish`).
    Summary,
}

/// A piece of the notebook, in the run's order.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Markdown text (the task, a chat turn, a plan step, the summary).
    Markdown(TextKind, String),
    /// A cell.
    Cell(Box<RecordedCell>),
}

/// Notes gisclaw's sandbox prints on stderr that mean nothing outside it.
const SANDBOX_NOTES: &[&str] = &["gisclaw: plt.show() displays nothing in the sandbox"];

/// Reads the transcript at `path` into notebook items.
pub fn read_items(path: &Path) -> Result<Vec<Item>, NotebookError> {
    let text = std::fs::read_to_string(path).map_err(|source| NotebookError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut events = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => events.push(v),
            // A run killed mid-write leaves a partial last line: the rest stands.
            Err(_) if i + 1 == text.lines().count() => break,
            Err(source) => {
                return Err(NotebookError::BadEvent {
                    path: path.to_path_buf(),
                    line: i + 1,
                    source,
                })
            }
        }
    }
    Ok(items_of(&events))
}

/// Turns transcript events into items: user messages (the task prompt
/// first; a chat's turns), the model's text, the cells, plan steps and the
/// closing summary.
pub fn items_of(events: &[Value]) -> Vec<Item> {
    let chat = events
        .first()
        .is_some_and(|e| e["event"] == "start" && e.get("chat").is_some());
    let mut items = Vec::new();
    let mut reasoning: Vec<String> = Vec::new();
    let mut seen_task = false;
    for e in events {
        let kind = e["event"].as_str().unwrap_or("");
        match kind {
            "message" => {
                let m = &e["message"];
                let content = m["content"].as_str().unwrap_or("").trim();
                match m["role"].as_str() {
                    Some("user") if chat && e.get("round").is_none() => {
                        // The model's answer that ended the previous turn.
                        flush_model_text(&mut items, &mut reasoning);
                        items.push(Item::Markdown(
                            TextKind::User,
                            format!("**You:** {content}"),
                        ));
                    }
                    // The first user message is the task prompt: the task,
                    // its knowledge, the data listing and the schema card.
                    Some("user") if !seen_task && !chat && !content.is_empty() => {
                        seen_task = true;
                        items.push(Item::Markdown(TextKind::Task, content.to_string()));
                    }
                    Some("assistant") => {
                        let has_calls = m["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
                        let text = if has_calls {
                            without_code(content)
                        } else {
                            content.to_string()
                        };
                        if !text.trim().is_empty() {
                            reasoning.push(text.trim().to_string());
                        }
                    }
                    _ => {}
                }
            }
            "step" if e["goal"].is_string() => {
                items.push(Item::Markdown(
                    TextKind::Step,
                    format!(
                        "### Step {}/{}: {}",
                        e["step"].as_u64().unwrap_or(0),
                        e["of"].as_u64().unwrap_or(0),
                        e["goal"].as_str().unwrap_or("")
                    ),
                ));
            }
            "tool" | "user_cell" | "execute_python" => {
                let name = e["name"].as_str().unwrap_or("execute_python");
                if kind == "tool" && name == "finish" && e["status"] == "finished" {
                    let args: Value = serde_json::from_str(e["arguments"].as_str().unwrap_or("{}"))
                        .unwrap_or_default();
                    let summary = args["summary"].as_str().unwrap_or("").trim();
                    flush_model_text(&mut items, &mut reasoning);
                    if !summary.is_empty() {
                        items.push(Item::Markdown(
                            TextKind::Summary,
                            format!("**Summary:** {summary}"),
                        ));
                    }
                    continue;
                }
                if name != "execute_python" {
                    continue;
                }
                if kind == "user_cell" {
                    // The user's own cell: the model's text before it was
                    // an answer to the user, not this cell's reasoning.
                    flush_model_text(&mut items, &mut reasoning);
                }
                if let Some(cell) = cell_of(e, kind, std::mem::take(&mut reasoning)) {
                    items.push(Item::Cell(Box::new(cell)));
                }
            }
            _ => {}
        }
    }
    // Text after the last cell (a chat's answer, a closing explanation).
    flush_model_text(&mut items, &mut reasoning);
    items
}

/// The model's pending text as one markdown item, when there is any.
fn flush_model_text(items: &mut Vec<Item>, pending: &mut Vec<String>) {
    if !pending.is_empty() {
        let text = std::mem::take(pending)
            .iter()
            .map(|t| format!("**Model:** {t}"))
            .collect::<Vec<_>>()
            .join("\n\n");
        items.push(Item::Markdown(TextKind::Model, text));
    }
}

/// The cell of a `tool` (agent), `user_cell` (chat) or `execute_python`
/// (MCP) event.
fn cell_of(e: &Value, kind: &str, reasoning: Vec<String>) -> Option<RecordedCell> {
    let code = if kind == "tool" {
        let args: Value = serde_json::from_str(e["arguments"].as_str()?).ok()?;
        args["code"].as_str()?.to_string()
    } else {
        e["code"].as_str()?.to_string()
    };
    // A call refused before it ran (malformed, not run) has no cell.
    let status = e["status"].as_str();
    if kind == "tool" && e.get("cell").is_none() && e.get("cell_us").is_none_or(Value::is_null) {
        return None;
    }
    let ok = match kind {
        "tool" => status == Some("Ok"),
        _ => e["ok"].as_bool().unwrap_or(false),
    };
    let c = &e["cell"];
    let text = |name: &str| c[name].as_str().unwrap_or("").to_string();
    let recorded = c.is_object();
    let display = c["display"].as_str().map(str::to_string);
    let mut stdout = text("stdout");
    if let Some(d) = &display {
        let shown = format!("{d}\n");
        if stdout.ends_with(&shown) {
            stdout.truncate(stdout.len() - shown.len());
        }
    }
    let stderr = text("stderr")
        .lines()
        .filter(|l| !SANDBOX_NOTES.iter().any(|n| l.starts_with(n)))
        .map(|l| format!("{l}\n"))
        .collect();
    let error = c["error"].as_object().map(|err| {
        let field = |n: &str| err.get(n).and_then(Value::as_str).unwrap_or("").to_string();
        (field("ename"), field("evalue"), field("traceback"))
    });
    Some(RecordedCell {
        code,
        ok,
        stdout,
        stderr,
        display,
        error,
        wrote: c["wrote"]
            .as_array()
            .map(|w| {
                w.iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        observation: (!recorded).then(|| e["observation"].as_str().unwrap_or("").to_string()),
        reasoning,
        by_user: kind == "user_cell",
    })
}

/// `text` without fenced code blocks and `Action:` lines (text-mode ReAct
/// puts the call's code in the message; the notebook shows it as the cell).
fn without_code(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || t.starts_with("Action:") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The cells of a `solution.py` written by gisclaw (after each
/// `# %% cell N` line), in order.
pub fn solution_cells(script: &str) -> Vec<String> {
    let mut cells: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    for line in script.lines() {
        if line.starts_with("# %% cell ") {
            if let Some(c) = current.take() {
                cells.push(c);
            }
            current = Some(String::new());
        } else if let Some(c) = current.as_mut() {
            c.push_str(line);
            c.push('\n');
        }
    }
    cells.extend(current);
    cells
        .into_iter()
        .map(|c| format!("{}\n", c.trim_end()))
        .collect()
}

/// The MIME type of a figure a cell wrote that a page or a notebook can
/// show inline (PNG, JPEG), by its name; `None` for other files.
pub fn figure_mime(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".png") {
        Some("image/png")
    } else if lower.ends_with(".jpg") || lower.ends_with(".jpeg") {
        Some("image/jpeg")
    } else {
        None
    }
}

/// Keeps `items` for `mode`: with [`NotebookMode::Cells`], the cells that
/// `kept` lists (the session's journal: `solution.py`), matched in order
/// with the transcript's successful cells; a kept cell the transcript does
/// not hold (a chat resumed from an older record) is shown without outputs.
pub fn select(items: Vec<Item>, kept: &[String], mode: NotebookMode) -> Vec<Item> {
    if mode == NotebookMode::Full {
        return items;
    }
    let same = |a: &str, b: &str| a.trim_end() == b.trim_end();
    let mut out = Vec::new();
    let mut next = 0;
    for item in items {
        match item {
            Item::Cell(cell) => {
                if !cell.ok || next >= kept.len() {
                    continue;
                }
                if let Some(offset) = kept[next..].iter().position(|k| same(k, &cell.code)) {
                    for missing in &kept[next..next + offset] {
                        out.push(Item::Cell(Box::new(unrecorded(missing))));
                    }
                    next += offset + 1;
                    out.push(Item::Cell(cell));
                }
            }
            markdown => out.push(markdown),
        }
    }
    for missing in &kept[next..] {
        out.push(Item::Cell(Box::new(unrecorded(missing))));
    }
    out
}

/// Keeps `items` for `mode` when no journal is at hand: with
/// [`NotebookMode::Cells`], every cell that ran to its end.
pub fn select_successful(items: Vec<Item>, mode: NotebookMode) -> Vec<Item> {
    if mode == NotebookMode::Full {
        return items;
    }
    items
        .into_iter()
        .filter(|i| !matches!(i, Item::Cell(c) if !c.ok))
        .collect()
}

/// A kept cell with no record of its outputs.
fn unrecorded(code: &str) -> RecordedCell {
    RecordedCell {
        code: code.to_string(),
        ok: true,
        stdout: String::new(),
        stderr: String::new(),
        display: None,
        error: None,
        wrote: Vec::new(),
        observation: None,
        reasoning: Vec::new(),
        by_user: false,
    }
}

/// Writes `DIR/solution.ipynb` (or `to`) for the run in `dir` — its
/// `transcript.jsonl`, `solution.py` and `pred_results/` — atomically.
/// Returns the notebook's path and how many code cells it holds.
pub fn write_for_run(
    dir: &Path,
    mode: NotebookMode,
    to: Option<&Path>,
) -> Result<(PathBuf, usize), NotebookError> {
    let items = read_items(&dir.join("transcript.jsonl"))?;
    let script_path = dir.join("solution.py");
    let kept = match std::fs::read_to_string(&script_path) {
        Ok(script) => Some(solution_cells(&script)),
        // No consolidated script (an MCP session that never saved one):
        // every successful cell is kept.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(NotebookError::Read {
                path: script_path,
                source,
            })
        }
    };
    let items = match &kept {
        Some(kept) => select(items, kept, mode),
        None => select_successful(items, mode),
    };
    let notebook = render::notebook(&items, dir, mode);
    let cells = items.iter().filter(|i| matches!(i, Item::Cell(_))).count();
    let path = to.map_or_else(|| dir.join("solution.ipynb"), Path::to_path_buf);
    let mut text = serde_json::to_string_pretty(&notebook).unwrap_or_default();
    text.push('\n');
    write_atomic(&path, text.as_bytes()).map_err(|source| NotebookError::Write {
        path: path.clone(),
        source,
    })?;
    Ok((path, cells))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(code: &str, status: &str, cell: Value) -> Value {
        json!({"event": "tool", "name": "execute_python", "status": status,
               "arguments": json!({"code": code}).to_string(), "cell_us": 5, "cell": cell,
               "observation": "obs"})
    }

    fn assistant(text: &str) -> Value {
        json!({"event": "message", "round": 1, "message": {"role": "assistant", "content": text,
               "tool_calls": [{"id": "1"}]}})
    }

    #[test]
    fn the_task_reasoning_and_cells_come_in_order_and_the_display_is_split_off() {
        let events = vec![
            json!({"event": "start", "task": "T1"}),
            json!({"event": "message", "round": 0, "message": {"role": "system", "content": "rules"}}),
            json!({"event": "message", "round": 0, "message": {"role": "user", "content": "# Task T1\nDo it."}}),
            assistant("First, load.\n```python\nx = 1\n```\nAction: execute_python"),
            tool(
                "x = 1\nx",
                "Ok",
                json!({"stdout": "hi\n1\n", "display": "1", "stderr": "gisclaw: plt.show() displays nothing in the sandbox; saved x\nUserWarning: w\n", "wrote": []}),
            ),
        ];
        let items = items_of(&events);
        assert_eq!(
            items[0],
            Item::Markdown(TextKind::Task, "# Task T1\nDo it.".into())
        );
        let Item::Cell(cell) = &items[1] else {
            panic!("{items:?}")
        };
        assert_eq!(cell.reasoning, vec!["First, load.".to_string()]);
        assert_eq!(cell.stdout, "hi\n");
        assert_eq!(cell.display.as_deref(), Some("1"));
        assert_eq!(cell.stderr, "UserWarning: w\n");
    }

    #[test]
    fn only_the_journal_cells_are_kept_unless_full() {
        let events = vec![
            tool("a = 1", "Ok", json!({})),
            tool(
                "b = oops",
                "Error",
                json!({"error": {"ename": "NameError", "evalue": "oops", "traceback": "t"}}),
            ),
            tool("b = 2", "Ok", json!({})),
            tool("c = 3", "Ok", json!({})),
        ];
        let items = items_of(&events);
        let kept = vec!["a = 1\n".to_string(), "c = 3\n".to_string()];
        let codes = |items: &[Item]| -> Vec<String> {
            items
                .iter()
                .filter_map(|i| match i {
                    Item::Cell(c) => Some(c.code.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            codes(&select(items.clone(), &kept, NotebookMode::Cells)),
            vec!["a = 1", "c = 3"]
        );
        assert_eq!(codes(&select(items, &kept, NotebookMode::Full)).len(), 4);
    }

    #[test]
    fn solution_cells_are_read_back_from_the_markers() {
        // As `agent::solution::consolidate` writes it.
        let script = "import os\n\n# %% cell 1\na = 1\n\n# %% cell 2\nprint(a)\n";
        assert_eq!(
            solution_cells(script),
            vec!["a = 1\n".to_string(), "print(a)\n".to_string()]
        );
    }
}
