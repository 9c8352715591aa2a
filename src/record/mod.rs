//! The run's record, `transcript.jsonl`: one typed [`Event`] per line with
//! its time. Every front end writes it through [`Transcript`] and every
//! reader (scoring, notebooks, reports, inspect logs, reproduction) reads
//! it through [`read`] or [`read_lossy`], so a writer and a reader agree by
//! type. `gisclaw schema transcript` prints the JSON Schema of a line
//! ([`schema`]). A record never holds a secret: only messages, tool results
//! and gisclaw's own figures go in.

pub mod event;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::llm::EXECUTE_PYTHON;
pub use event::{
    CellError, CellRecord, Check, CompactionEvent, End, Event, MctsEnd, MctsNode, MessageEvent,
    Replan, Reproduction, Retrieval, SearchCounts, Start, StepStart, ToolEvent, UserCell,
};

/// One line of the record: the event and the seconds since the record
/// was opened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    /// Seconds since the transcript was opened (to the millisecond).
    #[serde(default)]
    pub t: f64,
    /// The event, its kind in the `event` field.
    #[serde(flatten)]
    pub event: Event,
}

/// What went wrong with a record.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A line could not be written (the run's record is incomplete).
    #[error("cannot write the record {}: {source}", path.display())]
    Write {
        /// The transcript.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The record could not be read.
    #[error("cannot read the record {}: {source}", path.display())]
    Read {
        /// The transcript.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not an event of the record.
    #[error("{}, line {line}: not an event of the record: {source}", path.display())]
    Line {
        /// The transcript.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// Why.
        source: serde_json::Error,
    },
}

/// An append-only record, flushed line by line. A write that fails is
/// kept ([`Transcript::failure`]) and reported by the run at its end; the
/// lines after it are not written.
pub struct Transcript {
    path: PathBuf,
    out: BufWriter<File>,
    started: Instant,
    failure: Option<std::io::Error>,
}

impl Transcript {
    /// Creates (truncates) the transcript file.
    pub fn create(path: &Path) -> std::io::Result<Transcript> {
        Ok(Transcript::over(path, File::create(path)?))
    }

    /// Opens the transcript file for appending (created when missing), for
    /// sessions that continue (`gisclaw chat --resume`).
    pub fn append(path: &Path) -> std::io::Result<Transcript> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Transcript::over(path, file))
    }

    fn over(path: &Path, file: File) -> Transcript {
        Transcript {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            started: Instant::now(),
            failure: None,
        }
    }

    /// Where it is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event and flushes. After a failed write nothing more is
    /// written (a record with a hole would read as whole); the failure
    /// stays for [`Transcript::failure`].
    pub fn record(&mut self, event: impl Into<Event>) {
        if self.failure.is_some() {
            return;
        }
        let line = Line {
            t: (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            event: event.into(),
        };
        if let Err(e) = self.write_line(&line) {
            tracing::warn!("cannot write {}: {e}", self.path.display());
            self.failure = Some(e);
        }
    }

    fn write_line(&mut self, line: &Line) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, line)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// The first write that failed, as the run reports it.
    pub fn failure(&self) -> Result<(), RecordError> {
        match &self.failure {
            None => Ok(()),
            Some(e) => Err(RecordError::Write {
                path: self.path.clone(),
                source: std::io::Error::new(e.kind(), e.to_string()),
            }),
        }
    }
}

impl From<Start> for Event {
    fn from(s: Start) -> Event {
        Event::Start(s)
    }
}

impl From<MessageEvent> for Event {
    fn from(m: MessageEvent) -> Event {
        Event::Message(m)
    }
}

impl From<ToolEvent> for Event {
    fn from(t: ToolEvent) -> Event {
        Event::Tool(t)
    }
}

impl From<End> for Event {
    fn from(e: End) -> Event {
        Event::End(e)
    }
}

/// The record at `path`, every line an event. A run killed mid-write
/// leaves a partial last line: it is left out and the rest stands.
pub fn read(path: &Path) -> Result<Vec<Line>, RecordError> {
    let text = std::fs::read_to_string(path).map_err(|source| RecordError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let count = text.lines().count();
    let mut lines = Vec::new();
    for (i, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(text) {
            Ok(line) => lines.push(line),
            Err(_)
                if i + 1 == count && serde_json::from_str::<serde_json::Value>(text).is_err() =>
            {
                break
            }
            Err(source) => {
                return Err(RecordError::Line {
                    path: path.to_path_buf(),
                    line: i + 1,
                    source,
                })
            }
        }
    }
    Ok(lines)
}

/// The events of the record at `path` that can be read: a bad byte or line
/// costs that line, never the rest; a missing file reads as none. For
/// readers that must work on whatever a run left (scoring, reports).
pub fn read_lossy(path: &Path) -> Vec<Event> {
    read_events(path).unwrap_or_default()
}

/// [`read_lossy`], with a record that cannot be opened an error.
pub fn read_events(path: &Path) -> Result<Vec<Event>, RecordError> {
    let bytes = std::fs::read(path).map_err(|source| RecordError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .map(|l| l.event)
        .collect())
}

/// One `execute_python` call as a record holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellEvent {
    /// The tool call's id (`?` when absent).
    pub call_id: String,
    /// The code sent.
    pub code: String,
    /// The cell's status (`Ok`, `Error`, `TimedOut { … }`…; `?` when absent).
    pub status: String,
    /// The observation the model read.
    pub observation: String,
}

/// The `execute_python` calls of the record at `path`, in order (what can
/// be read of it: see [`read_lossy`]); an error when there is no record.
pub fn cells(path: &Path) -> Result<Vec<CellEvent>, RecordError> {
    Ok(read_events(path)?
        .into_iter()
        .filter_map(|event| match event {
            Event::Tool(tool) if tool.name == EXECUTE_PYTHON => Some(CellEvent {
                code: tool.code().unwrap_or_default(),
                call_id: tool.call_id.unwrap_or_else(|| "?".into()),
                status: tool.status.unwrap_or_else(|| "?".into()),
                observation: tool.observation.unwrap_or_default(),
            }),
            _ => None,
        })
        .collect())
}

/// The JSON Schema of one line of `transcript.jsonl`.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Line)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Role};

    #[test]
    fn records_are_one_json_object_per_line_flushed_and_read_back_typed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::create(&path).unwrap();
        t.record(MessageEvent::of(
            Some(1),
            None,
            Message::text(Role::User, "a\nb"),
        ));
        t.record(End {
            status: Some("finished".into()),
            ..End::default()
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"], "message");
        assert_eq!(lines[0]["message"]["content"], "a\nb");
        assert!(lines[0].get("usage").is_none(), "{}", lines[0]);
        assert_eq!(lines[1]["status"], "finished");
        let read = read(&path).unwrap();
        assert!(matches!(&read[1].event, Event::End(e) if e.status.as_deref() == Some("finished")));
        assert!(t.failure().is_ok());
    }

    #[test]
    fn a_failed_write_is_kept_and_nothing_after_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::create(&path).unwrap();
        // A full disk: /dev/full takes the open and refuses every write.
        t.out = BufWriter::new(File::options().write(true).open("/dev/full").unwrap());
        t.record(End::default());
        let err = t.failure().unwrap_err().to_string();
        assert!(
            err.contains("cannot write the record") && err.contains("t.jsonl"),
            "{err}"
        );
        t.out = BufWriter::new(File::create(&path).unwrap());
        t.record(End::default());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }

    #[test]
    fn old_transcripts_read_as_events_and_a_cut_last_line_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(
            &path,
            concat!(
                // A start of 2026-11-22: its confinement report predates the
                // namespaces and capabilities layers.
                r#"{"t":0.0,"event":"start","task":"T1","arch":"single","backend":"replay","replay":true,"sandbox":{"filesystem":{"status":"enforced"},"network":{"status":"enforced"}}}"#,
                "\n",
                r#"{"t":0.1,"event":"tool","round":1,"agent":null,"call_id":"c1","name":"execute_python","arguments":"{\"code\":\"x = 1\"}","status":"Ok","tool_ms":3,"cell_us":null,"observation":"ok","cell":null}"#,
                "\n",
                r#"{"t":0.2,"event":"tool","tool":"execute_python","code":"y = 2","ok":true,"status":"Ok","observation":"","cell":null}"#,
                "\n",
                r#"{"t":0.3,"event":"end","sta"#,
            ),
        )
        .unwrap();
        let lines = read(&path).unwrap();
        assert_eq!(lines.len(), 3);
        let Event::Tool(agent) = &lines[1].event else {
            panic!("{lines:?}")
        };
        assert_eq!(agent.code().as_deref(), Some("x = 1"));
        let Event::Tool(mcp) = &lines[2].event else {
            panic!("{lines:?}")
        };
        assert_eq!(
            (mcp.name.as_str(), mcp.code().as_deref()),
            ("execute_python", Some("y = 2"))
        );
        // A bad line in the middle is an error naming it; the lossy reader
        // skips it.
        std::fs::write(
            &path,
            "{\"event\":\"end\"}\n{\"event\":\"tool\"}\n{\"event\":\"end\"}\n",
        )
        .unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        assert_eq!(read_lossy(&path).len(), 2);
    }

    #[test]
    fn the_schema_names_every_kind() {
        let schema = schema().to_string();
        for kind in [
            "start",
            "message",
            "tool",
            "compaction",
            "retrieval",
            "step",
            "replan",
            "check",
            "gold_prefix",
            "intervention",
            "user_cell",
            "turn_end",
            "reset",
            "undo",
            "mcts_node",
            "mcts_rollout",
            "mcts_end",
            "reproduce",
            "end",
        ] {
            assert!(schema.contains(&format!("\"{kind}\"")), "{kind}");
        }
    }
}
