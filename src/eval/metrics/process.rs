//! L2 process: the cleaned execution log of a run, the gold reference it is
//! compared with, and C_emb, their embedding cosine (GISclaw §3.3, L2).
//!
//! The paper embeds "cleaned execution logs and gold references" with a
//! cloud model; gisclaw uses all-MiniLM-L6-v2 offline ([`crate::embed`]) and
//! defines both texts so that they are alike in kind:
//!
//! - **cleaned log** of a run: in transcript order, the model's own text
//!   (its reasoning, plans, replans), each tool call (`execute_python`: its
//!   code; other tools: `name arguments`) and each observation cut to
//!   [`OBSERVATION_CHARS`] characters without gisclaw's `[variables]`
//!   summary. gisclaw's own prompts (system, task, step hand-offs) are left
//!   out: they are the same in every run and would only raise every score.
//! - **gold reference** of a task: the task's expert workflow (when it has
//!   one) followed by the cleaned log of the gold run without its reasoning
//!   (the gold replay's messages are gisclaw's, not an expert's).

use std::path::Path;

use crate::embed::{cosine, Embedder};
use crate::llm::embeddings::ServedEmbedder;
use crate::llm::Role;
use crate::llm::EXECUTE_PYTHON;
use crate::record::{self, Event, RecordError};

/// Characters of each observation kept in a cleaned log.
pub const OBSERVATION_CHARS: usize = 500;

/// The cleaned log of the transcript at `path`; with `reasoning` false the
/// model's own text is left out.
pub fn cleaned_log(path: &Path, reasoning: bool) -> Result<String, RecordError> {
    let mut log = String::new();
    for event in record::read_events(path)? {
        match event {
            Event::Message(m) if reasoning && m.message.role == Role::Assistant => {
                push_block(&mut log, m.message.content.as_deref().unwrap_or(""));
            }
            Event::Tool(tool) => {
                if tool.name == EXECUTE_PYTHON {
                    let code = tool.code().unwrap_or_else(|| tool.arguments.clone());
                    push_block(&mut log, &code);
                } else {
                    push_block(&mut log, &format!("{} {}", tool.name, tool.arguments));
                }
                push_block(
                    &mut log,
                    &clean_observation(tool.observation.as_deref().unwrap_or("")),
                );
            }
            _ => {}
        }
    }
    Ok(log)
}

/// The gold reference of a task: its workflow, then its gold run's log.
pub fn gold_reference(
    workflow: Option<&str>,
    gold_transcript: &Path,
) -> Result<String, RecordError> {
    let mut text = String::new();
    push_block(&mut text, workflow.unwrap_or(""));
    push_block(&mut text, &cleaned_log(gold_transcript, false)?);
    Ok(text)
}

/// An observation without the `[variables]` summary, cut to
/// [`OBSERVATION_CHARS`] characters.
pub fn clean_observation(observation: &str) -> String {
    let mut kept = String::new();
    let mut in_variables = false;
    for line in observation.lines() {
        if line == "[variables]" {
            in_variables = true;
            continue;
        }
        if in_variables && line.starts_with("  ") {
            continue;
        }
        in_variables = false;
        kept.push_str(line);
        kept.push('\n');
    }
    let cut: String = kept.trim().chars().take(OBSERVATION_CHARS).collect();
    cut
}

fn push_block(log: &mut String, block: &str) {
    let block = block.trim();
    if !block.is_empty() {
        log.push_str(block);
        log.push_str("\n\n");
    }
}

/// What embeds the logs for C_emb.
#[derive(Debug)]
pub enum LogEmbedder {
    /// The bundled all-MiniLM-L6-v2 (gisclaw's default).
    Bundled(Box<Embedder>),
    /// A model behind an OpenAI-compatible server (`--c-emb-model`; the
    /// paper's is text-embedding-3-large). One request at a time.
    Served(Box<std::sync::Mutex<ServedEmbedder>>),
}

impl LogEmbedder {
    /// The embedding of a document (a log, a gold reference).
    pub fn embed_document(&self, text: &str) -> Result<Vec<f32>, String> {
        match self {
            LogEmbedder::Bundled(e) => e.embed_document(text).map_err(|e| e.to_string()),
            LogEmbedder::Served(e) => {
                let e = e.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                e.embed(text).map_err(|e| e.to_string())
            }
        }
    }

    /// The model's name, as the report states it.
    pub fn model(&self) -> String {
        match self {
            LogEmbedder::Bundled(_) => "all-MiniLM-L6-v2 (bundled)".into(),
            LogEmbedder::Served(e) => e
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .model()
                .to_string(),
        }
    }
}

/// C_emb: the cosine of the embeddings of a run's cleaned log and the gold
/// reference (given as its vector, embedded once per task). An empty log
/// scores 0.
pub fn c_emb(embedder: &LogEmbedder, log: &str, reference: &[f32]) -> Result<f64, String> {
    if log.trim().is_empty() {
        return Ok(0.0);
    }
    let v = embedder.embed_document(log)?;
    if v.len() != reference.len() {
        return Err(format!(
            "the log's embedding has {} values, the gold's {}",
            v.len(),
            reference.len()
        ));
    }
    Ok(cosine(&v, reference))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn transcript(lines: &[Value]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(file.path(), text).unwrap();
        file
    }

    #[test]
    fn the_cleaned_log_keeps_reasoning_code_and_short_observations() {
        let long = "x".repeat(OBSERVATION_CHARS + 50);
        let file = transcript(&[
            serde_json::json!({"event": "start", "task": "t"}),
            serde_json::json!({"event": "message", "message": {"role": "system", "content": "You are a GIS analyst"}}),
            serde_json::json!({"event": "message", "message": {"role": "user", "content": "# Task t"}}),
            serde_json::json!({"event": "message", "message": {"role": "assistant", "content": "Read the stations first."}}),
            serde_json::json!({"event": "tool", "name": "execute_python", "arguments": "{\"code\": \"s = pd.read_csv('data/s.csv')\"}",
                               "observation": "12 rows\n[variables]\n  s (DataFrame, new): 12 rows\n[figure saved] pred_results/a.png"}),
            serde_json::json!({"event": "tool", "name": "list_files", "arguments": "{}", "observation": long}),
            serde_json::json!({"event": "end", "status": "finished"}),
        ]);
        let log = cleaned_log(file.path(), true).unwrap();
        let expected = format!(
            "Read the stations first.\n\ns = pd.read_csv('data/s.csv')\n\n12 rows\n[figure saved] pred_results/a.png\n\nlist_files {{}}\n\n{}\n\n",
            "x".repeat(OBSERVATION_CHARS)
        );
        assert_eq!(log, expected);
        let without = cleaned_log(file.path(), false).unwrap();
        assert!(
            !without.contains("Read the stations") && without.starts_with("s = pd.read_csv"),
            "{without}"
        );
    }

    #[test]
    fn the_gold_reference_starts_with_the_workflow() {
        let file = transcript(&[
            serde_json::json!({"event": "message", "message": {"role": "assistant", "content": "Gold solution of t, cell 1 of 1."}}),
            serde_json::json!({"event": "tool", "name": "execute_python", "arguments": "{\"code\": \"print(1)\"}", "observation": "1"}),
        ]);
        let text = gold_reference(Some("1. Load.\n2. Print.\n"), file.path()).unwrap();
        assert_eq!(text, "1. Load.\n2. Print.\n\nprint(1)\n\n1\n\n");
        assert_eq!(
            gold_reference(None, file.path()).unwrap(),
            "print(1)\n\n1\n\n"
        );
    }
}
