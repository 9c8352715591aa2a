//! The Single Agent: a ReAct loop. The model thinks, calls a tool, reads the
//! observation, and goes on until it calls an accepted `finish`, runs out of
//! rounds or time, or stops calling tools.

use super::converse::{converse, signalled, ConverseLimits, OnText, Plain, RunState, Stop, Turn};
pub use super::converse::{AgentLimits, AgentOutcome, Ending};
use super::events::Events;
use super::memory::ErrorMemory;
use super::tools::Toolbox;
use crate::llm::{ChatBackend, Message, Role};
use crate::record::{MessageEvent, Transcript};

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
    events: Events<'_>,
) -> AgentOutcome {
    let mut state = RunState::new();
    let mut messages = vec![
        Message::text(Role::System, system),
        Message::text(Role::User, task_prompt),
    ];
    for m in &messages {
        transcript.record(MessageEvent::of(Some(0), None, m.clone()));
    }
    let bounds = ConverseLimits {
        run: limits.clone(),
        max_rounds: limits.max_rounds,
        max_failures: None,
    };
    let specs = toolbox.offered();
    let mut model = Plain(backend);
    let mut turn = Turn {
        model: &mut model,
        toolbox,
        memory,
        transcript,
        events,
        agent: None,
        on_text: OnText::Nudge,
        stop: &signalled,
    };
    match converse(&mut turn, &mut messages, &specs, &bounds, &mut state) {
        Stop::Finished(summary) => state.outcome(Ending::Finished, Some(summary)),
        Stop::Declined(reason) => state.outcome(Ending::Declined(reason), None),
        Stop::End(ending) => state.outcome(ending, None),
        Stop::GaveUp { .. } | Stop::StepDone(_) | Stop::Answered(_) => state.outcome(
            Ending::Failed(format!("no finish within {} rounds", limits.max_rounds)),
            None,
        ),
    }
}
