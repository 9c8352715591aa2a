//! The Single Agent: a ReAct loop. The model thinks, calls a tool, reads the
//! observation, and goes on until it calls an accepted `finish`, runs out of
//! rounds or time, or stops calling tools.

use super::converse::{converse, ConverseLimits, RunState, Stop};
pub use super::converse::{AgentLimits, AgentOutcome, Ending, Progress};
use super::memory::ErrorMemory;
use super::tools::Toolbox;
use super::transcript::Transcript;
use crate::llm::{ChatBackend, Message, Role};
use serde_json::json;

/// Runs the loop. The transcript receives every message and observation.
#[allow(clippy::too_many_arguments)]
pub fn run(
    backend: &mut dyn ChatBackend,
    toolbox: &mut Toolbox<'_>,
    memory: &mut ErrorMemory,
    transcript: &mut Transcript,
    system: String,
    task_prompt: String,
    limits: &AgentLimits,
    progress: Progress<'_>,
) -> AgentOutcome {
    let mut state = RunState::new();
    let mut messages = vec![
        Message::text(Role::System, system),
        Message::text(Role::User, task_prompt),
    ];
    for m in &messages {
        let _ = transcript.record("message", json!({ "round": 0, "message": m }));
    }
    let bounds = ConverseLimits {
        run: limits.clone(),
        max_rounds: limits.max_rounds,
        max_failures: None,
    };
    let specs = toolbox.offered();
    match converse(
        backend,
        toolbox,
        memory,
        transcript,
        &mut messages,
        &specs,
        &bounds,
        &mut state,
        progress,
    ) {
        Stop::Finished(summary) => state.outcome(Ending::Finished, Some(summary)),
        Stop::End(ending) => state.outcome(ending, None),
        Stop::GaveUp { .. } | Stop::StepDone(_) => state.outcome(
            Ending::Failed(format!("no finish within {} rounds", limits.max_rounds)),
            None,
        ),
    }
}
