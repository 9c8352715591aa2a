//! The conversation engine both architectures run on: ask the model, adapt
//! its message, dispatch its tool calls onto the sandbox, record everything,
//! and stop on an accepted `finish`, a `step_done` (Dual Agent), a bound, or
//! a failure.

use std::time::{Duration, Instant};

use serde_json::json;

use super::dedup::AmnesiaGuard;
use super::memory::ErrorMemory;
use super::tools::{self, Toolbox};
use super::transcript::Transcript;
use crate::llm::{adapt, ChatBackend, ChatResponse, LlmError, Message, Role, ToolSpec, Usage};
use crate::sandbox::{CellStatus, SandboxError};

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
    /// gisclaw was asked to stop (SIGTERM, SIGINT, SIGHUP).
    Interrupted(String),
}

/// The ending of a run whose process was signalled, if it was.
fn interrupted() -> Option<Ending> {
    crate::interrupt::stop_reason().map(Ending::Interrupted)
}

/// What a run reports back.
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

/// State shared by every conversation of one run (rounds, time, tokens,
/// the amnesia guard), so the Dual Agent's steps draw on one budget.
pub struct RunState {
    /// When the run started.
    pub started: Instant,
    /// Model calls so far.
    pub rounds: usize,
    /// Tokens so far.
    pub usage: Usage,
    /// Time waiting for the model.
    pub llm_time: Duration,
    /// Time running tools.
    pub tool_time: Duration,
    guard: AmnesiaGuard,
}

impl RunState {
    /// A fresh run starting now.
    pub fn new() -> RunState {
        RunState {
            started: Instant::now(),
            rounds: 0,
            usage: Usage::default(),
            llm_time: Duration::ZERO,
            tool_time: Duration::ZERO,
            guard: AmnesiaGuard::default(),
        }
    }

    /// The outcome of the run so far with `ending`.
    pub fn outcome(&self, ending: Ending, summary: Option<String>) -> AgentOutcome {
        AgentOutcome {
            ending,
            rounds: self.rounds,
            usage: self.usage,
            llm_time: self.llm_time,
            tool_time: self.tool_time,
            summary,
        }
    }
}

impl RunState {
    /// One model call within the run's bounds: checks rounds and time,
    /// counts the round, its time and tokens. `Err` ends the run (a bound,
    /// the replay's end, a backend that failed for good). Returns the
    /// answer and how long the model took.
    pub fn ask(
        &mut self,
        backend: &mut dyn ChatBackend,
        messages: &[Message],
        specs: &[ToolSpec],
        limits: &AgentLimits,
    ) -> Result<(ChatResponse, Duration), Ending> {
        if let Some(ending) = interrupted() {
            return Err(ending);
        }
        if self.rounds >= limits.max_rounds {
            return Err(Ending::Failed(format!(
                "no finish within {} rounds",
                limits.max_rounds
            )));
        }
        if self.started.elapsed() >= limits.budget {
            return Err(Ending::Failed(format!(
                "the {} s time budget is spent",
                limits.budget.as_secs()
            )));
        }
        self.rounds += 1;
        let asked = Instant::now();
        let response = backend.chat(messages, specs);
        let took = asked.elapsed();
        self.llm_time += took;
        if let Some(ending) = interrupted() {
            return Err(ending);
        }
        match response {
            Ok(r) => {
                self.usage.prompt_tokens += r.usage.prompt_tokens;
                self.usage.completion_tokens += r.usage.completion_tokens;
                self.usage.estimated |= r.usage.estimated;
                Ok((r, took))
            }
            Err(LlmError::ReplayExhausted(n)) => {
                self.rounds -= 1;
                Err(Ending::Failed(format!(
                    "the replay ended after {n} messages without an accepted finish"
                )))
            }
            // A run that outgrew the model's context is the run failing,
            // not the infrastructure.
            Err(err @ LlmError::ContextFull(_)) => Err(Ending::Failed(err.to_string())),
            Err(err) => Err(Ending::Error(err.to_string())),
        }
    }
}

impl Default for RunState {
    fn default() -> Self {
        RunState::new()
    }
}

/// Bounds of one conversation (the whole task, or one Dual-Agent step).
#[derive(Debug, Clone)]
pub struct ConverseLimits {
    /// Run-wide bounds.
    pub run: AgentLimits,
    /// Most model calls in this conversation.
    pub max_rounds: usize,
    /// Most failing cells in this conversation before it gives up
    /// (`None`: no limit).
    pub max_failures: Option<usize>,
}

/// How one conversation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// An accepted `finish`, with its summary.
    Finished(String),
    /// `step_done`, with its summary (Dual Agent).
    StepDone(String),
    /// A bound of this conversation was hit; the last failure's observation
    /// is kept for the replanner.
    GaveUp {
        /// Why.
        reason: String,
        /// The last failing observation, if any.
        last_error: Option<String>,
    },
    /// The run must end (budget, replay ended, infrastructure failure).
    End(Ending),
}

/// Runs one conversation over `messages` (which it extends) with `specs`.
#[allow(clippy::too_many_arguments)]
pub fn converse(
    backend: &mut dyn ChatBackend,
    toolbox: &mut Toolbox<'_>,
    memory: &mut ErrorMemory,
    transcript: &mut Transcript,
    messages: &mut Vec<Message>,
    specs: &[ToolSpec],
    limits: &ConverseLimits,
    state: &mut RunState,
    progress: Progress<'_>,
) -> Stop {
    let mut idle = 0;
    let mut failures = 0;
    let mut last_error: Option<String> = None;
    for _ in 0..limits.max_rounds {
        let (response, llm_time) = match state.ask(backend, messages, specs, &limits.run) {
            Ok(answer) => answer,
            Err(ending) => return Stop::End(ending),
        };
        let round = state.rounds;
        let adapted = adapt::adapt(response.message, round);
        let _ = transcript.record(
            "message",
            json!({
                "round": round,
                "message": adapted.message,
                "usage": response.usage,
                "llm_ms": llm_time.as_millis() as u64,
                "finish_reason": response.finish_reason,
                "retries": response.retries,
                "backend_notes": response.notes,
                "repairs": adapted.repairs,
            }),
        );
        for note in &response.notes {
            progress(&format!("round {round}: {note}"));
        }
        messages.push(adapted.message.clone());
        if adapted.message.tool_calls.is_empty() {
            idle += 1;
            progress(&format!(
                "round {round}: the model answered without calling a tool"
            ));
            if idle > limits.run.max_idle {
                return Stop::End(Ending::Failed(format!(
                    "the model stopped calling tools ({idle} messages in a row)"
                )));
            }
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            let nudge = Message::text(
                Role::User,
                format!(
                    "Continue with a tool call ({}). Call finish only when every required output exists.",
                    names.join(", ")
                ),
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
            let mut stop = None;
            let (text, status) = if let Some(bad) =
                adapted.malformed.iter().find(|m| m.call_id == call.id)
            {
                (tools::malformed_reply(&bad.reason), "malformed".to_string())
            } else if name == "step_done" && specs.iter().any(|s| s.name == "step_done") {
                stop = Some(Stop::StepDone(tools::summary_of(&call.function.arguments)));
                ("Step recorded.".to_string(), "step_done".to_string())
            } else {
                let code = tools::code_of(name, &call.function.arguments);
                let warning = code.as_deref().and_then(|c| state.guard.warning(c));
                match toolbox.call(name, &call.function.arguments) {
                    Ok(result) => {
                        let mut remembered = None;
                        let status = match &result.cell {
                            Some(cell) => {
                                cell_us = Some(cell.result.duration_us);
                                if let Some(c) = &code {
                                    state.guard.record(c, cell);
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
                        if let Some(cell) = &result.cell {
                            if cell.status != CellStatus::Ok {
                                failures += 1;
                                last_error = Some(text.clone());
                            }
                        }
                        if result.finished {
                            stop = Some(Stop::Finished(result.summary.unwrap_or_default()));
                        }
                        (text, status)
                    }
                    Err(SandboxError::BudgetExhausted(b)) => {
                        return Stop::End(Ending::Failed(format!(
                            "the sandbox's {} s budget is spent",
                            b.as_secs()
                        )));
                    }
                    Err(err) => return Stop::End(Ending::Error(format!("sandbox failure: {err}"))),
                }
            };
            let took = ran.elapsed();
            state.tool_time += took;
            progress(&format!(
                "round {round}: {name} → {status} ({:.1} s)",
                took.as_secs_f64()
            ));
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
            if let Some(stop) = stop {
                return stop;
            }
            if let Some(ending) = interrupted() {
                return Stop::End(ending);
            }
        }
        if let Some(max) = limits.max_failures {
            if failures > max {
                return Stop::GaveUp {
                    reason: format!(
                        "{failures} failing cells (the limit is {max} self-corrections)"
                    ),
                    last_error,
                };
            }
        }
    }
    Stop::GaveUp {
        reason: format!("no result within {} rounds", limits.max_rounds),
        last_error,
    }
}
