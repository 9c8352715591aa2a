//! The run's record: `transcript.jsonl` (every message, tool call and
//! observation, with timings and tokens, flushed line by line) and
//! `run.json` (the summary, written atomically). Neither ever holds a
//! secret: only messages, tool results and gisclaw's own figures go in.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// An append-only JSONL transcript.
pub struct Transcript {
    path: PathBuf,
    out: BufWriter<File>,
    started: Instant,
}

impl Transcript {
    /// Creates (truncates) the transcript file.
    pub fn create(path: &Path) -> std::io::Result<Transcript> {
        Ok(Transcript {
            path: path.to_path_buf(),
            out: BufWriter::new(File::create(path)?),
            started: Instant::now(),
        })
    }

    /// Opens the transcript file for appending (created when missing), for
    /// sessions that continue (`gisclaw chat --resume`).
    pub fn append(path: &Path) -> std::io::Result<Transcript> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Transcript {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            started: Instant::now(),
        })
    }

    /// Where it is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event (`{"t": seconds, "event": kind, ...fields}`) and flushes.
    pub fn record(&mut self, kind: &str, fields: Value) -> std::io::Result<()> {
        let mut line = json!({
            "t": (self.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
            "event": kind,
        });
        if let (Some(obj), Value::Object(extra)) = (line.as_object_mut(), fields) {
            obj.extend(extra);
        }
        serde_json::to_writer(&mut self.out, &line)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// What the transcript keeps of a cell beside the observation the model
/// read: its own output (stdout, stderr, the displayed value, the error)
/// and the files it wrote under `pred_results/`, so that a notebook can be
/// rebuilt from the record alone (`gisclaw transcript to-ipynb`).
pub fn cell_record(cell: &crate::sandbox::CellOutcome, written: &[String]) -> Value {
    let r = &cell.result;
    json!({
        "stdout": r.stdout,
        "stdout_dropped_chars": r.stdout_dropped_chars,
        "stderr": r.stderr,
        "display": r.display,
        "error": r.error.as_ref().map(|e| json!({
            "ename": e.ename,
            "evalue": e.evalue,
            "traceback": e.traceback,
        })),
        "wrote": written.iter().map(|w| format!("pred_results/{w}")).collect::<Vec<_>>(),
    })
}

/// One `execute_python` call as a transcript recorded it.
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

/// The `execute_python` calls of the transcript at `path`, in order.
pub fn read_cells(path: &Path) -> std::io::Result<Vec<CellEvent>> {
    let text = std::fs::read_to_string(path)?;
    let field =
        |e: &Value, name: &str, absent: &str| e[name].as_str().unwrap_or(absent).to_string();
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "tool" && e["name"] == "execute_python")
        .map(|e| {
            let args: Value =
                serde_json::from_str(e["arguments"].as_str().unwrap_or("{}")).unwrap_or_default();
            CellEvent {
                call_id: field(&e, "call_id", "?"),
                code: field(&args, "code", ""),
                status: field(&e, "status", "?"),
                observation: field(&e, "observation", ""),
            }
        })
        .collect())
}

/// One declared output and whether it exists.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OutputStatus {
    /// Path relative to the run's folder (e.g. `pred_results/map.png`).
    pub path: String,
    /// Whether it exists and is not empty.
    pub exists: bool,
    /// Its size in bytes.
    pub bytes: u64,
    /// Why it does not count although something is there (a symlink, a
    /// path leading outside `pred_results/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// `run.json`.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// The task id.
    pub task: String,
    /// `finished` (all outputs present), `failed`, or `error` (infrastructure).
    pub status: String,
    /// Why the run ended.
    pub reason: String,
    /// The agent architecture.
    pub arch: String,
    /// The backend's description.
    pub backend: String,
    /// True when the model was a recording.
    pub replay: bool,
    /// Model rounds used.
    pub rounds: usize,
    /// Prompt tokens, summed.
    pub tokens_in: u64,
    /// Completion tokens, summed.
    pub tokens_out: u64,
    /// True when some counts were estimated by gisclaw.
    pub tokens_estimated: bool,
    /// Seconds waiting for the model.
    pub llm_seconds: f64,
    /// Seconds running cells.
    pub sandbox_seconds: f64,
    /// Seconds in all.
    pub wall_seconds: f64,
    /// CPU seconds the local model's server spent during the run (a
    /// llama-server gisclaw started; `None` otherwise). Runs sharing one
    /// server at once (`eval --jobs N`) count each other's work too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_cpu_seconds: Option<f64>,
    /// Cost estimate in USD, when the model's price is known.
    pub cost_usd: Option<f64>,
    /// Prompt tokens that repeated the start of an earlier request
    /// word for word (see `Usage::prefix_tokens`): what prefix caching
    /// could serve at most.
    pub tokens_in_prefix: u64,
    /// The cost with those tokens at the cached-input rate, when the
    /// model's price has one (`cached_input` in the config's `[prices]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd_cached_prefix: Option<f64>,
    /// The declared outputs.
    pub outputs: Vec<OutputStatus>,
    /// The model's closing summary, when it finished.
    pub summary: Option<String>,
    /// The confinement layers that were in force for the run's sandbox
    /// session, as its worker reported them.
    pub sandbox: gisclaw_protocol::ConfinementReport,
    /// Whether the output checks ran (`--no-output-checks` turns them off).
    #[serde(default)]
    pub output_checks: bool,
    /// Output checks still failing when the model finished anyway, after
    /// one `finish` was answered with them; empty when they passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finished_with_warnings: Vec<String>,
    /// Figures shown to the model (vision feedback).
    #[serde(default)]
    pub images_shown: usize,
    /// Their estimated prompt tokens (OpenAI's tile rule; included in
    /// `tokens_in` as the server counts them).
    #[serde(default)]
    pub image_tokens: u64,
    /// Times the conversation was compacted to fit the model's context
    /// window.
    #[serde(default)]
    pub compactions: usize,
    /// Whether `solution.py` remade the outputs in a fresh session (after
    /// a finished run; `None` when not tried: `--no-reproduce`, or the
    /// run did not finish).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduced: Option<Reproduction>,
    /// What the run was made from: task and data hashes, the model, the
    /// software (see [`crate::provenance`]).
    pub provenance: crate::provenance::Provenance,
}

impl RunSummary {
    /// Writes `run.json` atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::util::write_json(path, self)
    }
}

/// The status of each declared output under `out` (paths such as
/// `pred_results/map.png`). An output counts only as a plain, non-empty
/// file that really lies inside `out/pred_results/`: a symlink (to the
/// input data, or anywhere else) or a path that resolves outside is refused
/// with the reason.
pub fn output_status(out: &Path, outputs: &[String]) -> Vec<OutputStatus> {
    let pred = out.join("pred_results").canonicalize().ok();
    outputs
        .iter()
        .map(|o| {
            let path = out.join(o);
            let refused = match (std::fs::symlink_metadata(&path), path.canonicalize(), &pred) {
                (Ok(meta), _, _) if meta.file_type().is_symlink() => {
                    Some("a symbolic link, not a file".to_string())
                }
                (Ok(_), Ok(real), Some(pred)) if !real.starts_with(pred) => {
                    Some("resolves outside pred_results/".to_string())
                }
                (Ok(meta), _, _) if !meta.is_file() => Some("not a regular file".to_string()),
                _ => None,
            };
            let bytes = match refused {
                None => std::fs::symlink_metadata(&path)
                    .map(|m| m.len())
                    .unwrap_or(0),
                Some(_) => 0,
            };
            OutputStatus {
                path: o.clone(),
                exists: bytes > 0,
                bytes,
                refused,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_one_json_object_per_line_and_flushed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut t = Transcript::create(&path).unwrap();
        t.record("message", json!({"round": 1, "text": "a\nb"}))
            .unwrap();
        t.record("end", json!({"status": "finished"})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"], "message");
        assert_eq!(lines[0]["text"], "a\nb");
        assert_eq!(lines[1]["status"], "finished");
    }
}

/// What `run.json` says of the reproduction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reproduction {
    /// Every cell ran and every output came out the same.
    pub ok: bool,
    /// Cells run.
    pub cells: usize,
    /// Cells that did not run to their end, with their first line and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_cells: Vec<String>,
    /// Outputs compared.
    pub outputs: usize,
    /// Outputs that differ or are missing, with how.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differed: Vec<String>,
    /// Seconds the reproduction took.
    pub seconds: f64,
}

impl Reproduction {
    /// One line for the run's summary.
    pub fn line(&self) -> String {
        if self.ok {
            return format!(
                "reproduced: solution.py remade the {} output(s) in {:.1} s",
                self.outputs, self.seconds
            );
        }
        let mut why: Vec<String> = self.failed_cells.clone();
        why.extend(self.differed.iter().cloned());
        format!(
            "not reproduced (a warning, not a failure): {}; see reproduce/",
            why.join("; ")
        )
    }
}
