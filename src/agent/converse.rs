//! The one conversation loop every front end runs on (solve and eval
//! through the Single and Dual Agents, chat's turns and plan steps): ask the
//! model, adapt its message, dispatch its tool calls onto the sandbox,
//! record everything, tell the front end through [`AgentEvent`]s, and stop
//! on an accepted `finish`, a `step_done` (Dual Agent), a text answer (chat),
//! a bound, a stop request, or a failure.

use std::time::{Duration, Instant};

use super::context::{self, Compaction, ContextKeeper, FoldRequest};
use super::dedup::AmnesiaGuard;
use super::events::{AgentEvent, Events};
use super::memory::ErrorMemory;
use super::plan::FailedOperation;
use super::tools::{self, Toolbox};
use crate::llm::window::ContextWindow;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{
    adapt, tokens, ChatBackend, ChatResponse, LlmError, Message, Role, ToolSpec, Usage,
};
use crate::record::{CellRecord, CompactionEvent, Event, MessageEvent, ToolEvent, Transcript};
use crate::sandbox::{CellOutcome, CellStatus, SandboxError};

/// How the loop asks the model: plainly, as any backend does (solve,
/// eval), or with its text streamed and a Ctrl-C that abandons the call
/// (chat's asker).
pub trait Model {
    /// One model call; `on_text` gets the answer's text as it arrives
    /// (or not at all).
    fn ask(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError>;
    /// Asks for token log-probabilities from now on; false when the model
    /// behind cannot give them.
    fn want_logprobs(&mut self, on: bool) -> bool {
        let _ = on;
        false
    }
    /// Asks for `n` answers per call from now on; false when the model
    /// behind gives one per call.
    fn want_choices(&mut self, n: usize) -> bool {
        let _ = n;
        false
    }
    /// Whether the model sees images (vision feedback); asked only when a
    /// cell wrote a figure.
    fn sees_images(&mut self) -> bool {
        false
    }
    /// The model's context window, where the backend can learn it.
    fn context_window(&mut self) -> Option<ContextWindow> {
        None
    }
    /// Whether the answers are a recording (no summary is asked of one).
    fn is_replay(&self) -> bool {
        false
    }
}

/// A backend asked plainly (no streaming; the batch front ends).
pub struct Plain<'a>(pub &'a mut dyn ChatBackend);

impl Model for Plain<'_> {
    fn ask(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
        _on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError> {
        self.0.chat(messages, specs)
    }

    fn want_logprobs(&mut self, on: bool) -> bool {
        self.0.want_logprobs(on)
    }

    fn want_choices(&mut self, n: usize) -> bool {
        self.0.want_choices(n)
    }

    fn sees_images(&mut self) -> bool {
        self.0.sees_images()
    }

    fn context_window(&mut self) -> Option<ContextWindow> {
        self.0.context_window()
    }

    fn is_replay(&self) -> bool {
        self.0.is_replay()
    }
}

/// Bounds of one run.
#[derive(Debug, Clone)]
pub struct AgentLimits {
    /// Most model calls.
    pub max_rounds: usize,
    /// Longest the whole run may take.
    pub budget: Duration,
    /// Most consecutive model messages without a tool call.
    pub max_idle: usize,
    /// The model's context window in tokens when given
    /// (`--context-window`); `None`: learnt from the backend.
    pub context_window: Option<u64>,
    /// Refuse, unrun, code that already failed unchanged (GISclaw's
    /// deduplication, §4.3.2, `--protocol gisclaw-paper`); otherwise it
    /// runs after a warning.
    pub block_repeats: bool,
}

impl Default for AgentLimits {
    fn default() -> Self {
        AgentLimits {
            max_rounds: 50,
            budget: Duration::from_secs(20 * 60),
            max_idle: 3,
            context_window: None,
            block_repeats: false,
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
    /// The model declined the task, with this reason: the data cannot
    /// answer it (right for a task marked `solvable: false`).
    Declined(String),
}

/// The ending of a run whose process was signalled (SIGTERM, SIGINT,
/// SIGHUP), if it was: the stop check of the batch front ends.
pub fn signalled() -> Option<Ending> {
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
    /// Figures shown to the model (vision feedback).
    pub images_shown: usize,
    /// Their estimated prompt tokens.
    pub image_tokens: u64,
    /// Times the history was compacted to fit the context window.
    pub compactions: usize,
}

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
    /// Figures shown to the model (vision feedback).
    pub images_shown: usize,
    /// Their estimated prompt tokens.
    pub image_tokens: u64,
    guard: AmnesiaGuard,
    /// The latest requests, to find what a new one repeats of them.
    requests: PrefixLog,
    /// The model's window and how requests are sized against it.
    pub context: ContextKeeper,
    /// Compactions so far.
    pub compactions: usize,
}

/// The shape of the latest requests of a run (a fingerprint of the tools
/// and of each message, and the prompt tokens), to count the prompt tokens
/// a new request repeats at its start (`Usage::prefix_tokens`). Several are
/// kept: the Dual Agent's planner and workers, and the tree search's
/// candidates, interleave conversations.
#[derive(Debug, Clone, Default)]
struct PrefixLog(std::collections::VecDeque<(u64, Vec<u64>, u64)>);

impl PrefixLog {
    /// Requests remembered.
    const KEEP: usize = 8;

    /// Fingerprints of a request's tools and messages.
    fn shape(messages: &[Message], specs: &[ToolSpec]) -> (u64, Vec<u64>) {
        use std::hash::{Hash, Hasher};
        let mut tools = std::collections::hash_map::DefaultHasher::new();
        for spec in specs {
            spec.fingerprint().hash(&mut tools);
        }
        (
            tools.finish(),
            messages.iter().map(Message::fingerprint).collect(),
        )
    }

    /// The prompt tokens of the longest remembered request that this one
    /// (`tools`, `messages`, `prompt_tokens`) starts with; then remembers it.
    fn repeated(&mut self, tools: u64, messages: Vec<u64>, prompt_tokens: u64) -> u64 {
        let prefix = self
            .0
            .iter()
            .filter(|(t, m, _)| *t == tools && messages.starts_with(m))
            .map(|&(_, _, tokens)| tokens.min(prompt_tokens))
            .max()
            .unwrap_or(0);
        if self.0.len() == Self::KEEP {
            self.0.pop_front();
        }
        self.0.push_back((tools, messages, prompt_tokens));
        prefix
    }
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
            images_shown: 0,
            image_tokens: 0,
            guard: AmnesiaGuard::default(),
            requests: PrefixLog::default(),
            context: ContextKeeper::new(None),
            compactions: 0,
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
            images_shown: self.images_shown,
            image_tokens: self.image_tokens,
            compactions: self.compactions,
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
        model: &mut dyn Model,
        messages: &[Message],
        specs: &[ToolSpec],
        limits: &AgentLimits,
        on_text: &mut dyn FnMut(&str),
    ) -> Result<(ChatResponse, Duration), Ending> {
        if let Some(ending) = signalled() {
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
        self.context
            .resolve(limits.context_window, || model.context_window());
        // A request the history's compaction could not shape (a fresh
        // prompt: the Planner's, a tree node's) is cut to fit, in a copy.
        let mut raw = tokens::count_prompt(messages, specs);
        let fitted = self
            .context
            .limit()
            .filter(|&limit| self.context.scaled(raw) > limit)
            .map(|limit| context::fit_prompt(messages, specs, &self.context, limit));
        if let Some(cut) = &fitted {
            raw = tokens::count_prompt(cut, specs);
        }
        let messages = fitted.as_deref().unwrap_or(messages);
        self.context.sent(raw);
        let (tools, shape) = PrefixLog::shape(messages, specs);
        let asked = Instant::now();
        let response = model.ask(messages, specs, on_text);
        let took = asked.elapsed();
        self.llm_time += took;
        if let Some(ending) = signalled() {
            return Err(ending);
        }
        match response {
            Ok(r) => {
                if !r.usage.estimated {
                    self.context.learn_usage(raw, r.usage.prompt_tokens);
                }
                self.usage.prompt_tokens += r.usage.prompt_tokens;
                self.usage.completion_tokens += r.usage.completion_tokens;
                self.usage.estimated |= r.usage.estimated;
                self.usage.prefix_tokens +=
                    self.requests.repeated(tools, shape, r.usage.prompt_tokens);
                Ok((r, took))
            }
            Err(err) => {
                // A call that never happened does not count as a round,
                // nor does one refused as too long (it is sent again
                // after compaction).
                if let LlmError::ContextFull(message) = &err {
                    self.context.learn_refusal(raw, message);
                }
                if matches!(
                    err,
                    LlmError::ReplayExhausted(_) | LlmError::Cancelled | LlmError::ContextFull(_)
                ) {
                    self.rounds -= 1;
                }
                Err(ending_of(err))
            }
        }
    }
}

/// How a failed model call ends a run.
pub fn ending_of(err: LlmError) -> Ending {
    match err {
        LlmError::ReplayExhausted(n) => {
            Ending::Failed(format!("the replay ended after {n} messages"))
        }
        LlmError::Cancelled => Ending::Interrupted("the user interrupted the model call".into()),
        // A run that outgrew the model's context is the run failing, not
        // the infrastructure.
        err @ LlmError::ContextFull(_) => Ending::Failed(err.to_string()),
        err => Ending::Error(err.to_string()),
    }
}

impl Default for RunState {
    fn default() -> Self {
        RunState::new()
    }
}

/// Bounds of one conversation (the whole task, a chat turn, or one
/// Dual-Agent step).
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
    /// A `decline`, with its reason.
    Declined(String),
    /// `step_done`, with its summary (Dual Agent).
    StepDone(String),
    /// A message without a tool call, where that ends the conversation
    /// ([`OnText::Answer`]): its text.
    Answered(String),
    /// A bound of this conversation was hit; the last failure's observation
    /// is kept for the replanner.
    GaveUp {
        /// Why.
        reason: String,
        /// The last failing observation, if any.
        last_error: Option<String>,
        /// The operations of this conversation's failing cells, in order.
        failed: Vec<FailedOperation>,
    },
    /// The run must end (budget, replay ended, stop request, infrastructure
    /// failure).
    End(Ending),
}

/// What a message without a tool call means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnText {
    /// The model should have called a tool: it is nudged, and the run fails
    /// after `max_idle` such messages in a row (solve, eval).
    Nudge,
    /// The model answered: the conversation ends with its text (chat).
    Answer,
}

/// What one conversation runs with.
pub struct Turn<'t, 'b> {
    /// The model.
    pub model: &'t mut dyn Model,
    /// The tools, on the sandbox session.
    pub toolbox: &'t mut Toolbox<'b>,
    /// Error Memory: hints for failing cells, learning from fixes.
    pub memory: &'t mut ErrorMemory,
    /// Where every message and tool call is recorded.
    pub transcript: &'t mut Transcript,
    /// Where events go.
    pub events: Events<'t>,
    /// Who speaks, in the transcript (`worker` in a plan's step).
    pub agent: Option<&'static str>,
    /// What a message without a tool call means.
    pub on_text: OnText,
    /// Asked before each model call and after each tool call: `Some` ends
    /// the conversation (a signal, the user's Ctrl-C).
    pub stop: &'t dyn Fn() -> Option<Ending>,
}

/// A tool call's result, with what the loop and the front ends need.
#[derive(Debug)]
pub struct ToolRun {
    /// The observation text for the model (Error Memory's hint included).
    pub text: String,
    /// A short status for the transcript: the cell's, or `ok` /
    /// `finished`.
    pub status: String,
    /// The status in words for people: `ok`, `error`, `timed out at its
    /// 3 s limit`, `refused`, `finished`.
    pub shown: String,
    /// The cell, for `execute_python`.
    pub cell: Option<CellOutcome>,
    /// The summary of an accepted `finish`.
    pub finished: Option<String>,
    /// The reason of a `decline`.
    pub declined: Option<String>,
    /// Image files the call wrote under `pred_results/`.
    pub images: Vec<std::path::PathBuf>,
    /// Files the call created or changed under `pred_results/`.
    pub written: Vec<String>,
}

impl ToolRun {
    /// The cell as the record keeps it.
    pub fn cell_record(&self) -> Option<CellRecord> {
        self.cell
            .as_ref()
            .map(|cell| CellRecord::of(cell, &self.written))
    }
}

/// Runs one tool call: the tool, then Error Memory on a cell (its hint is
/// appended to the observation). Chat's own cells (`/run`) use it too.
pub fn run_tool(
    toolbox: &mut Toolbox<'_>,
    memory: &mut ErrorMemory,
    name: &str,
    arguments: &str,
) -> Result<ToolRun, SandboxError> {
    let code = tools::code_of(name, arguments);
    let result = toolbox.call(name, arguments)?;
    let mut text = result.text;
    let (status, shown) = match &result.cell {
        Some(cell) => {
            if let Some(note) = code.as_deref().and_then(|c| memory.observe(c, cell)) {
                // Its own section, whatever the text before it ended with.
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&note);
                text.push('\n');
            }
            (format!("{:?}", cell.status), cell.status.to_string())
        }
        None if result.finished => ("finished".to_string(), "finished".to_string()),
        None if result.declined.is_some() => ("declined".to_string(), "declined".to_string()),
        None if result.refused => ("ok".to_string(), "refused".to_string()),
        None => ("ok".to_string(), "ok".to_string()),
    };
    Ok(ToolRun {
        text,
        status,
        shown,
        cell: result.cell,
        finished: result.finished.then(|| result.summary.unwrap_or_default()),
        declined: result.declined,
        images: result.images,
        written: result.written,
    })
}

/// Vision feedback: the figures this round's cells wrote, downscaled, in one
/// user message after the tool results, with one line asking the model to
/// check them against the task. The transcript keeps their names and sizes,
/// not the pixels.
fn show_figures(
    turn: &mut Turn<'_, '_>,
    messages: &mut Vec<Message>,
    figures: &[std::path::PathBuf],
    round: usize,
    state: &mut RunState,
) {
    let pred = turn.toolbox.out_dir.join("pred_results");
    let mut shown = Vec::new();
    let mut names = Vec::new();
    for path in figures {
        let Some(image) = crate::outputs::shown::prepare(path) else {
            continue;
        };
        let name = path
            .strip_prefix(&pred)
            .map(|p| format!("pred_results/{}", p.display()))
            .unwrap_or_else(|_| path.display().to_string());
        names.push(format!("{name} ({}×{} px)", image.width, image.height));
        state.images_shown += 1;
        state.image_tokens += image.tokens;
        shown.push(image.base64);
    }
    if shown.is_empty() {
        return;
    }
    let text = format!(
        "The figure(s) just written, as they look: {}. Check each against the task (data shown, extent, legend, labels) and fix what is wrong before you finish.",
        names.join(", ")
    );
    turn.transcript.record(MessageEvent {
        images: Some(names.iter().map(|n| n.to_string()).collect()),
        ..MessageEvent::of(Some(round), None, Message::text(Role::User, text.clone()))
    });
    messages.push(Message {
        images: shown,
        ..Message::text(Role::User, text)
    });
}

/// Answers the tool calls of a message that will not run, so the
/// conversation stays well-formed (every call has a result).
fn not_run(messages: &mut Vec<Message>, calls: &[crate::llm::ToolCall], why: &str) {
    for call in calls {
        messages.push(Message::tool_result(&call.id, format!("Not run: {why}.")));
    }
}

/// Compacts the history when the next request would pass the context
/// threshold (or at once, `force`): see [`context`]. The namespace summary
/// comes from the live session, the model summarises when folding alone is
/// not enough (not a replay); the compaction is recorded in the transcript
/// and told as [`AgentEvent::Compacted`].
pub fn fit_history(
    turn: &mut Turn<'_, '_>,
    messages: &mut Vec<Message>,
    specs: &[ToolSpec],
    state: &mut RunState,
    flag: Option<u64>,
    pinned: Option<usize>,
    force: bool,
) -> Option<Compaction> {
    state.context.resolve(flag, || turn.model.context_window());
    state.context.window()?;
    let needed = state
        .context
        .needs_compaction(state.context.estimate(messages, specs));
    if !force && !needed {
        return None;
    }
    let pinned_message = pinned.and_then(|p| messages.get(p)).cloned();
    let namespace = turn
        .toolbox
        .session
        .variables()
        .ok()
        .map(|v| context::namespace_lines(&v));
    let request = FoldRequest {
        specs,
        pinned,
        namespace,
        force,
    };
    let keeper = state.context.clone();
    let live = !turn.model.is_replay();
    let started = Instant::now();
    let (usage, llm_time) = (&mut state.usage, &mut state.llm_time);
    let model = &mut *turn.model;
    let mut summarise = |note: &str| -> Option<String> {
        let mut ask = context::summary_request(note);
        if let Some(limit) = keeper.limit() {
            ask = context::fit_prompt(&ask, &[], &keeper, limit);
        }
        let started = Instant::now();
        let answer = model.ask(&ask, &[], &mut |_| {});
        *llm_time += started.elapsed();
        let answer = answer.ok()?;
        usage.prompt_tokens += answer.usage.prompt_tokens;
        usage.completion_tokens += answer.usage.completion_tokens;
        usage.estimated |= answer.usage.estimated;
        answer.message.content
    };
    let summariser: Option<context::Summariser<'_>> =
        if live { Some(&mut summarise) } else { None };
    let done = context::compact(messages, &request, &keeper, summariser)?;
    state.compactions += 1;
    let pinned_at = pinned_message.and_then(|m| messages.iter().position(|x| *x == m));
    turn.transcript.record(Event::Compaction(CompactionEvent {
        round: state.rounds,
        agent: turn.agent.map(str::to_string),
        window_source: keeper.window().map(|w| w.source.clone()),
        took_ms: started.elapsed().as_secs_f64() * 1000.0,
        compaction: serde_json::to_value(&done).unwrap_or_default(),
    }));
    (turn.events)(AgentEvent::Compacted {
        compaction: &done,
        pinned_at,
    });
    Some(done)
}

/// Runs one conversation over `messages` (which it extends) with `specs`.
pub fn converse(
    turn: &mut Turn<'_, '_>,
    messages: &mut Vec<Message>,
    specs: &[ToolSpec],
    limits: &ConverseLimits,
    state: &mut RunState,
) -> Stop {
    let mut idle = 0;
    let mut failures = 0;
    let mut last_error: Option<String> = None;
    let mut failed: Vec<FailedOperation> = Vec::new();
    let has_step_done = specs.iter().any(|s| s.name == "step_done");
    // The conversation's opening message stays through compactions.
    let pinned = messages.len().checked_sub(1);
    let mut refusals = 0;
    for _ in 0..limits.max_rounds {
        if let Some(ending) = (turn.stop)() {
            return Stop::End(ending);
        }
        let (mut response, llm_time) =
            match ask_fitted(turn, messages, specs, state, limits, pinned) {
                Ok(answer) => answer,
                // Refused as too long: compact with what the refusal taught
                // (the window, the server's token count) and ask again; a
                // request with nothing left to fold is asked once more, cut
                // to the learnt size. Two refusals in a row end the run.
                Err((ending, true)) => {
                    refusals += 1;
                    let compacted = fit_history(
                        turn,
                        messages,
                        specs,
                        state,
                        limits.run.context_window,
                        pinned,
                        false,
                    );
                    if compacted.is_some() || refusals < 2 {
                        continue;
                    }
                    return Stop::End(ending);
                }
                Err((ending, false)) => return Stop::End(ending),
            };
        refusals = 0;
        let round = state.rounds;
        let adapted = adapt::adapt(std::mem::take(&mut response.message), round);
        (turn.events)(AgentEvent::MessageDone { round });
        turn.transcript.record(answer_event(
            &response, llm_time, &adapted, round, turn.agent,
        ));
        for note in &response.notes {
            (turn.events)(AgentEvent::BackendNote { round, note });
        }
        messages.push(adapted.message.clone());
        if adapted.message.tool_calls.is_empty() {
            if turn.on_text == OnText::Answer {
                return Stop::Answered(adapted.message.content.unwrap_or_default());
            }
            idle += 1;
            (turn.events)(AgentEvent::NoToolCall { round });
            if idle > limits.run.max_idle {
                return Stop::End(Ending::Failed(format!(
                    "the model stopped calling tools ({idle} messages in a row)"
                )));
            }
            let nudge = nudge(specs);
            turn.transcript
                .record(MessageEvent::of(Some(round), None, nudge.clone()));
            messages.push(nudge);
            continue;
        }
        idle = 0;
        let mut figures: Vec<std::path::PathBuf> = Vec::new();
        let calls = &adapted.message.tool_calls;
        for (i, call) in calls.iter().enumerate() {
            let ran = Instant::now();
            let done = match answer_call(
                turn,
                state,
                &adapted.malformed,
                call,
                (has_step_done, limits.run.block_repeats),
            ) {
                Ok(done) => done,
                Err(err) => {
                    not_run(messages, &calls[i..], "the run ended");
                    return Stop::End(sandbox_ending(err));
                }
            };
            if done.ran_tool && !done.ok {
                failures += 1;
                if let Some(c) = done.code.as_deref() {
                    FailedOperation::remember(
                        &mut failed,
                        [FailedOperation::of_cell(c, &done.text)],
                    );
                }
                last_error = Some(done.text.clone());
            }
            if turn.toolbox.vision {
                figures.extend(done.shown.iter().cloned());
            }
            let took = ran.elapsed();
            state.tool_time += took;
            let stop = report_call(turn, messages, round, call, done, took);
            if let Some(stop) = stop {
                not_run(
                    messages,
                    &calls[i + 1..],
                    "the conversation ended before this call",
                );
                return stop;
            }
            if let Some(ending) = (turn.stop)() {
                not_run(messages, &calls[i + 1..], "the run was stopped");
                return Stop::End(ending);
            }
        }
        if !figures.is_empty() && turn.model.sees_images() {
            show_figures(turn, messages, &figures, round, state);
        }
        if let Some(max) = limits.max_failures {
            if failures > max {
                return Stop::GaveUp {
                    reason: format!(
                        "{failures} failing cells (the limit is {max} self-corrections)"
                    ),
                    last_error,
                    failed,
                };
            }
        }
    }
    let wanted = if has_step_done { "step_done" } else { "result" };
    Stop::GaveUp {
        reason: format!("no {wanted} within {} rounds", limits.max_rounds),
        last_error,
        failed,
    }
}

/// Shows and records what a call did, and hands its result to the model;
/// the stop it asks for.
fn report_call(
    turn: &mut Turn<'_, '_>,
    messages: &mut Vec<Message>,
    round: usize,
    call: &crate::llm::ToolCall,
    done: CallDone,
    took: Duration,
) -> Option<Stop> {
    (turn.events)(AgentEvent::Observation {
        round,
        name: &call.function.name,
        code: done.code.as_deref(),
        text: &done.text,
        ok: done.ok,
        status: &done.words,
        seconds: took.as_secs_f64(),
    });
    if !done.shown.is_empty() {
        (turn.events)(AgentEvent::Figures { paths: &done.shown });
    }
    turn.transcript.record(ToolEvent {
        round: Some(round),
        agent: turn.agent.map(str::to_string),
        call_id: Some(call.id.clone()),
        name: call.function.name.clone(),
        arguments: call.function.arguments.clone(),
        status: Some(done.status),
        tool_ms: Some(took.as_millis() as u64),
        cell_us: done.cell_us,
        observation: Some(done.text.clone()),
        cell: done.cell_record,
        ..ToolEvent::default()
    });
    messages.push(Message::tool_result(&call.id, done.text));
    done.stop
}

/// The conversation fitted to the model's window, then one request: the
/// answer and its time, or how the request ended and whether the server
/// refused it as too long.
fn ask_fitted(
    turn: &mut Turn<'_, '_>,
    messages: &mut Vec<Message>,
    specs: &[ToolSpec],
    state: &mut RunState,
    limits: &ConverseLimits,
    pinned: Option<usize>,
) -> Result<(ChatResponse, Duration), (Ending, bool)> {
    fit_history(
        turn,
        messages,
        specs,
        state,
        limits.run.context_window,
        pinned,
        false,
    );
    let events = &mut *turn.events;
    state
        .ask(
            &mut *turn.model,
            messages,
            specs,
            &limits.run,
            &mut |text| events(AgentEvent::Text(text)),
        )
        .map_err(|ending| (ending, state.context.take_refused()))
}

/// The message that asks a model that answered without a tool call for one.
fn nudge(specs: &[ToolSpec]) -> Message {
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    Message::text(
        Role::User,
        format!(
            "Continue with a tool call ({}). Call finish only when every required output exists.",
            names.join(", ")
        ),
    )
}

/// How a sandbox failure during a call ends the run: a spent budget is the
/// run's failure, anything else an error.
fn sandbox_ending(err: SandboxError) -> Ending {
    match err {
        SandboxError::BudgetExhausted(b) => {
            Ending::Failed(format!("the sandbox's {} s budget is spent", b.as_secs()))
        }
        err => Ending::Error(format!("sandbox failure: {err}")),
    }
}

/// The record of a model's answer: the message as adapted, what it cost
/// and what the backend and the adapter said of it.
fn answer_event(
    response: &ChatResponse,
    llm_time: Duration,
    adapted: &adapt::Adapted,
    round: usize,
    agent: Option<&'static str>,
) -> MessageEvent {
    MessageEvent {
        usage: Some(response.usage),
        llm_ms: Some(llm_time.as_millis() as u64),
        finish_reason: response.finish_reason.clone(),
        retries: Some(response.retries),
        backend_notes: Some(response.notes.clone()),
        repairs: Some(adapted.repairs.clone()),
        ..MessageEvent::of(Some(round), agent, adapted.message.clone())
    }
}

/// What one tool call did: its observation and status, the cell it ran
/// (with its code, time and record), the figures it wrote and the stop it
/// asks for.
struct CallDone {
    text: String,
    status: String,
    words: String,
    ok: bool,
    code: Option<String>,
    cell_us: Option<u64>,
    cell_record: Option<CellRecord>,
    shown: Vec<std::path::PathBuf>,
    stop: Option<Stop>,
    /// A tool ran (not a malformed call, not `step_done`): its failure
    /// counts against the self-corrections.
    ran_tool: bool,
}

/// Answers one call of the model's message: a malformed call gets the
/// reason, `step_done` records the step, any other tool runs (a sandbox
/// failure is the caller's to end the run with).
fn answer_call(
    turn: &mut Turn<'_, '_>,
    state: &mut RunState,
    malformed: &[adapt::Malformed],
    call: &crate::llm::ToolCall,
    (has_step_done, block_repeats): (bool, bool),
) -> Result<CallDone, SandboxError> {
    let name = call.function.name.as_str();
    let arguments = call.function.arguments.as_str();
    let plain = |text: String, status: &str, words: &str, ok: bool, stop: Option<Stop>| CallDone {
        text,
        status: status.to_string(),
        words: words.to_string(),
        ok,
        code: None,
        cell_us: None,
        cell_record: None,
        shown: Vec::new(),
        stop,
        ran_tool: false,
    };
    if let Some(bad) = malformed.iter().find(|m| m.call_id == call.id) {
        (turn.events)(AgentEvent::Tool {
            name,
            code: None,
            arguments,
        });
        let reply = tools::malformed_reply(&bad.reason);
        return Ok(plain(reply, "malformed", "malformed call", false, None));
    }
    if name == "step_done" && has_step_done {
        let summary = tools::summary_of(arguments);
        (turn.events)(AgentEvent::StepDone { summary: &summary });
        let stop = Some(Stop::StepDone(summary));
        return Ok(plain(
            "Step recorded.".into(),
            "step_done",
            "step recorded",
            true,
            stop,
        ));
    }
    let code = tools::code_of(name, arguments);
    (turn.events)(AgentEvent::Tool {
        name,
        code: code.as_deref(),
        arguments,
    });
    if name == EXECUTE_PYTHON {
        (turn.events)(AgentEvent::CellRunning);
    }
    let warning = code.as_deref().and_then(|c| state.guard.warning(c));
    if let (true, Some(w)) = (block_repeats, &warning) {
        // Refused unrun; it counts as a failing attempt.
        return Ok(CallDone {
            ran_tool: true,
            ..plain(
                format!(
                    "{w}\n[gisclaw] Not run: repeated failing code is blocked (deduplication)."
                ),
                "refused",
                "refused repeat",
                false,
                None,
            )
        });
    }
    let run = run_tool(turn.toolbox, turn.memory, name, arguments)?;
    let ok = run.cell.as_ref().is_none_or(|c| c.status == CellStatus::Ok);
    if let (Some(cell), Some(c)) = (&run.cell, &code) {
        state.guard.record(c, cell);
    }
    let text = match warning {
        Some(w) => format!("{w}\n{}", run.text),
        None => run.text.clone(),
    };
    let stop = match (&run.finished, &run.declined) {
        (_, Some(reason)) => Some(Stop::Declined(reason.clone())),
        (Some(summary), None) => Some(Stop::Finished(summary.clone())),
        (None, None) => None,
    };
    Ok(CallDone {
        text,
        ok,
        code: code.filter(|_| run.cell.is_some()),
        cell_us: run.cell.as_ref().map(|c| c.result.duration_us),
        cell_record: run.cell_record(),
        shown: run.images.clone(),
        status: run.status,
        words: run.shown,
        stop,
        ran_tool: true,
    })
}

#[cfg(test)]
mod tests {
    use super::PrefixLog;
    use crate::llm::{Message, Role};

    #[test]
    fn a_request_that_extends_an_earlier_one_repeats_its_prompt_tokens() {
        let mut log = PrefixLog::default();
        let system = Message::text(Role::System, "rules");
        let task = Message::text(Role::User, "task");
        let reply = Message::text(Role::Assistant, "a cell");
        let (tools, first) = PrefixLog::shape(&[system.clone(), task.clone()], &[]);
        assert_eq!(log.repeated(tools, first, 100), 0, "nothing before it");
        let (_, second) = PrefixLog::shape(&[system.clone(), task.clone(), reply.clone()], &[]);
        assert_eq!(log.repeated(tools, second, 160), 100);
        // Another conversation (a step's worker) shares only the system
        // prompt: no earlier request is a prefix of it.
        let step = Message::text(Role::User, "step 2");
        let (_, other) = PrefixLog::shape(&[system.clone(), step], &[]);
        assert_eq!(log.repeated(tools, other, 90), 0);
        // The first conversation goes on: its longest earlier request counts.
        let more = Message::text(Role::User, "observation");
        let (_, third) = PrefixLog::shape(&[system, task, reply, more], &[]);
        assert_eq!(log.repeated(tools, third, 200), 160);
    }

    #[test]
    fn other_tools_are_another_prefix() {
        let mut log = PrefixLog::default();
        let m = [Message::text(Role::User, "task")];
        let (none, shape) = PrefixLog::shape(&m, &[]);
        log.repeated(none, shape.clone(), 50);
        let spec = crate::llm::ToolSpec {
            name: "finish".into(),
            description: "end".into(),
            parameters: serde_json::json!({}),
        };
        let (some, _) = PrefixLog::shape(&m, &[spec]);
        assert_ne!(none, some);
        assert_eq!(log.repeated(some, shape, 60), 0);
    }
}
