//! The Single Agent: a ReAct loop. The model thinks, calls a tool, reads the
//! observation, and goes on until it calls an accepted `finish`, runs out of
//! rounds or time, or stops calling tools.

use std::time::{Duration, Instant};

use serde_json::json;

use super::dedup::AmnesiaGuard;
use super::memory::ErrorMemory;
use super::tools::{self, Toolbox};
use super::transcript::Transcript;
use crate::llm::{adapt, ChatBackend, LlmError, Message, Role, Usage};
use crate::sandbox::SandboxError;

/// Bounds of one run.
#[derive(Debug, Clone)]
pub struct AgentLimits {
    /// Most model calls.
    pub max_rounds: usize,
    /// Longest the whole run may take.
    pub budget: Duration,
    /// Most consecutive model messages without a tool call.
    pub max_idle: usize,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits {
            max_rounds: 50,
            budget: Duration::from_secs(20 * 60),
            max_idle: 3,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// `finish` was accepted: every declared output exists.
    Finished,
    /// The task was not done (rounds, time, idle model, replay ended).
    Failed(String),
    /// The infrastructure failed (sandbox, unusable backend).
    Error(String),
}

/// What the loop reports back.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    /// How it ended.
    pub ending: Ending,
    /// Model calls made.
    pub rounds: usize,
    /// Summed token usage.
    pub usage: Usage,
    /// Time waiting for the model.
    pub llm_time: Duration,
    /// Time running tools.
    pub tool_time: Duration,
    /// The model's closing summary.
    pub summary: Option<String>,
}

/// Progress lines for the terminal.
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// Runs the loop. The transcript receives every message and observation.
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
    let started = Instant::now();
    let specs = tools::specs();
    let mut messages = vec![Message::text(Role::System, system), Message::text(Role::User, task_prompt)];
    for m in &messages {
        let _ = transcript.record("message", json!({ "round": 0, "message": m }));
    }
    let mut out = AgentOutcome {
        ending: Ending::Failed(format!("no finish within {} rounds", limits.max_rounds)),
        rounds: 0,
        usage: Usage::default(),
        llm_time: Duration::ZERO,
        tool_time: Duration::ZERO,
        summary: None,
    };
    let mut guard = AmnesiaGuard::default();
    let mut idle = 0;
    'rounds: for round in 1..=limits.max_rounds {
        if started.elapsed() >= limits.budget {
            out.ending = Ending::Failed(format!("the {} s time budget is spent", limits.budget.as_secs()));
            break;
        }
        out.rounds = round;
        let asked = Instant::now();
        let response = backend.chat(&messages, &specs);
        let llm_ms = asked.elapsed();
        out.llm_time += llm_ms;
        let response = match response {
            Ok(r) => r,
            Err(LlmError::ReplayExhausted(n)) => {
                out.ending = Ending::Failed(format!("the replay ended after {n} messages without an accepted finish"));
                out.rounds = round - 1;
                break;
            }
            Err(err) => {
                out.ending = Ending::Error(err.to_string());
                break;
            }
        };
        out.usage.prompt_tokens += response.usage.prompt_tokens;
        out.usage.completion_tokens += response.usage.completion_tokens;
        out.usage.estimated |= response.usage.estimated;
        let adapted = adapt::adapt(response.message, round);
        let _ = transcript.record(
            "message",
            json!({
                "round": round,
                "message": adapted.message,
                "usage": response.usage,
                "llm_ms": llm_ms.as_millis() as u64,
                "repairs": adapted.repairs,
            }),
        );
        messages.push(adapted.message.clone());
        if adapted.message.tool_calls.is_empty() {
            idle += 1;
            progress(&format!("round {round}: the model answered without calling a tool"));
            if idle > limits.max_idle {
                out.ending = Ending::Failed(format!("the model stopped calling tools ({idle} messages in a row)"));
                break;
            }
            let nudge = Message::text(
                Role::User,
                "Continue with a tool call: execute_python to run code, list_files to see the data, or finish when every required output exists.",
            );
            let _ = transcript.record("message", json!({ "round": round, "message": nudge }));
            messages.push(nudge);
            continue;
        }
        idle = 0;
        for call in &adapted.message.tool_calls {
            let name = call.function.name.as_str();
            let ran = Instant::now();
            let mut cell_us = None;
            let (text, status, finished) = if let Some(bad) = adapted.malformed.iter().find(|m| m.call_id == call.id) {
                (format!("{} Send the call again with valid JSON arguments.", bad.reason), "malformed".to_string(), None)
            } else {
                let code = (name == "execute_python")
                    .then(|| serde_json::from_str::<tools::ExecuteArgs>(&call.function.arguments).ok())
                    .flatten()
                    .map(|a| a.code);
                let warning = code.as_deref().and_then(|c| guard.warning(c));
                match toolbox.call(name, &call.function.arguments) {
                    Ok(result) => {
                        let mut remembered = None;
                        let status = match &result.cell {
                            Some(cell) => {
                                cell_us = Some(cell.result.duration_us);
                                if let Some(c) = &code {
                                    guard.record(c, cell);
                                    remembered = memory.observe(c, cell);
                                }
                                format!("{:?}", cell.status)
                            }
                            None if result.finished => "finished".to_string(),
                            None => "ok".to_string(),
                        };
                        let mut text = match warning {
                            Some(w) => format!("{w}\n{}", result.text),
                            None => result.text,
                        };
                        if let Some(note) = remembered {
                            text.push_str(&note);
                            text.push('\n');
                        }
                        let finished = result.finished.then(|| result.summary.unwrap_or_default());
                        (text, status, finished)
                    }
                    Err(SandboxError::BudgetExhausted(b)) => {
                        out.ending = Ending::Failed(format!("the sandbox's {} s budget is spent", b.as_secs()));
                        break 'rounds;
                    }
                    Err(err) => {
                        out.ending = Ending::Error(format!("sandbox failure: {err}"));
                        break 'rounds;
                    }
                }
            };
            let took = ran.elapsed();
            out.tool_time += took;
            progress(&format!("round {round}: {name} → {status} ({:.1} s)", took.as_secs_f64()));
            let _ = transcript.record(
                "tool",
                json!({
                    "round": round,
                    "call_id": call.id,
                    "name": name,
                    "arguments": call.function.arguments,
                    "status": status,
                    "tool_ms": took.as_millis() as u64,
                    "cell_us": cell_us,
                    "observation": text,
                }),
            );
            messages.push(Message::tool_result(&call.id, text));
            if let Some(summary) = finished {
                out.summary = Some(summary);
                out.ending = Ending::Finished;
                break 'rounds;
            }
        }
    }
    out
}
