//! The run's summary, `run.json` (written atomically), and the status of
//! its declared outputs. The line-by-line record, `transcript.jsonl`, is
//! [`crate::record`]'s. Neither ever holds a secret: only messages, tool
//! results and gisclaw's own figures go in.

use std::path::Path;

use serde::Serialize;

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
    pub reproduced: Option<crate::record::Reproduction>,
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
