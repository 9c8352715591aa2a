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

use crate::llm::Role;
use crate::record::{self, CellRecord, Event, RecordError, ToolEvent};

use crate::llm::EXECUTE_PYTHON;
use crate::util::write_atomic;

/// Which cells a notebook keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

impl std::str::FromStr for NotebookMode {
    type Err = String;

    /// `cells`, `full` or `off` (the command line's `--notebook`).
    fn from_str(s: &str) -> Result<NotebookMode, String> {
        match s {
            "cells" => Ok(NotebookMode::Cells),
            "full" => Ok(NotebookMode::Full),
            "off" => Ok(NotebookMode::Off),
            other => Err(format!("{other:?}: say cells, full or off")),
        }
    }
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
    /// The record cannot be read, or a line of it is not an event.
    #[error(transparent)]
    Record(#[from] RecordError),
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
    let events: Vec<Event> = record::read(path)?.into_iter().map(|l| l.event).collect();
    Ok(items_of(&events))
}

/// Turns transcript events into items: user messages (the task prompt
/// first; a chat's turns), the model's text, the cells, plan steps and the
/// closing summary.
pub fn items_of(events: &[Event]) -> Vec<Item> {
    let chat = matches!(events.first(), Some(Event::Start(s)) if s.chat.is_some());
    let mut items = Vec::new();
    let mut reasoning: Vec<String> = Vec::new();
    let mut seen_task = false;
    for e in events {
        match e {
            Event::Message(m) => {
                let content = m.message.content.as_deref().unwrap_or("").trim();
                match m.message.role {
                    Role::User if chat && m.round.is_none() => {
                        // The model's answer that ended the previous turn.
                        flush_model_text(&mut items, &mut reasoning);
                        items.push(Item::Markdown(
                            TextKind::User,
                            format!("**You:** {content}"),
                        ));
                    }
                    // The first user message is the task prompt: the task,
                    // its knowledge, the data listing and the schema card.
                    Role::User if !seen_task && !chat && !content.is_empty() => {
                        seen_task = true;
                        items.push(Item::Markdown(TextKind::Task, content.to_string()));
                    }
                    Role::Assistant => {
                        let text = if m.message.tool_calls.is_empty() {
                            content.to_string()
                        } else {
                            without_code(content)
                        };
                        if !text.trim().is_empty() {
                            reasoning.push(text.trim().to_string());
                        }
                    }
                    _ => {}
                }
            }
            Event::Step(step) => {
                if let Some(goal) = &step.goal {
                    items.push(Item::Markdown(
                        TextKind::Step,
                        format!("### Step {}/{}: {goal}", step.step, step.of),
                    ));
                }
            }
            Event::Tool(tool) => {
                if tool.name == "finish" && tool.status.as_deref() == Some("finished") {
                    let summary = tool.argument("summary").unwrap_or_default();
                    flush_model_text(&mut items, &mut reasoning);
                    if !summary.trim().is_empty() {
                        items.push(Item::Markdown(
                            TextKind::Summary,
                            format!("**Summary:** {}", summary.trim()),
                        ));
                    }
                    continue;
                }
                if tool.name != EXECUTE_PYTHON {
                    continue;
                }
                if let Some(cell) = tool_cell(tool, std::mem::take(&mut reasoning)) {
                    items.push(Item::Cell(Box::new(cell)));
                }
            }
            Event::UserCell(user) => {
                // The user's own cell: the model's text before it was an
                // answer to the user, not this cell's reasoning.
                flush_model_text(&mut items, &mut reasoning);
                let cell = recorded_cell(
                    user.code.clone(),
                    user.ok,
                    user.cell.as_ref(),
                    &user.observation,
                    Vec::new(),
                );
                items.push(Item::Cell(Box::new(RecordedCell {
                    by_user: true,
                    ..cell
                })));
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

/// The cell of an `execute_python` call (the agent's, or an MCP
/// client's); `None` for a call refused before it ran (malformed, not run).
fn tool_cell(tool: &ToolEvent, reasoning: Vec<String>) -> Option<RecordedCell> {
    let code = tool.code()?;
    if tool.cell.is_none() && tool.cell_us.is_none() && tool.ok.is_none() {
        return None;
    }
    let ok = tool.ok.unwrap_or(tool.status.as_deref() == Some("Ok"));
    let observation = tool.observation.as_deref().unwrap_or("");
    Some(recorded_cell(
        code,
        ok,
        tool.cell.as_ref(),
        observation,
        reasoning,
    ))
}

/// A cell as the notebook shows it: its own output when the record kept
/// it, else the observation the model read.
fn recorded_cell(
    code: String,
    ok: bool,
    cell: Option<&CellRecord>,
    observation: &str,
    reasoning: Vec<String>,
) -> RecordedCell {
    let empty = CellRecord::default();
    let c = cell.unwrap_or(&empty);
    let display = c.display.clone();
    let mut stdout = c.stdout.clone();
    if let Some(d) = &display {
        let shown = format!("{d}\n");
        if stdout.ends_with(&shown) {
            stdout.truncate(stdout.len() - shown.len());
        }
    }
    let stderr = c
        .stderr
        .lines()
        .filter(|l| !SANDBOX_NOTES.iter().any(|n| l.starts_with(n)))
        .map(|l| format!("{l}\n"))
        .collect();
    RecordedCell {
        code,
        ok,
        stdout,
        stderr,
        display,
        error: c
            .error
            .as_ref()
            .map(|e| (e.ename.clone(), e.evalue.clone(), e.traceback.clone())),
        wrote: c.wrote.clone(),
        observation: cell.is_none().then(|| observation.to_string()),
        reasoning,
        by_user: false,
    }
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
    use serde_json::{json, Value};

    /// The events of a record written as JSON lines.
    fn typed(events: Vec<Value>) -> Vec<Event> {
        events
            .into_iter()
            .map(|e| serde_json::from_value(e).unwrap())
            .collect()
    }

    fn tool(code: &str, status: &str, cell: Value) -> Value {
        json!({"event": "tool", "name": "execute_python", "status": status,
               "arguments": json!({"code": code}).to_string(), "cell_us": 5, "cell": cell,
               "observation": "obs"})
    }

    fn assistant(text: &str) -> Value {
        json!({"event": "message", "round": 1, "message": {"role": "assistant", "content": text,
               "tool_calls": [{"id": "1", "function": {"name": "execute_python", "arguments": "{}"}}]}})
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
        let items = items_of(&typed(events));
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
        let items = items_of(&typed(events));
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
