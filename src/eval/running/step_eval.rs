//! Eval of a step suite (`benchmarks/geocode/`, GeoAgent's multi-turn
//! tasks): per task and run, one sandbox session and one conversation; the
//! model gets the task's context, then each step's prompt in turn, works
//! with the agent's tools and calls `step_done`; after each step the step's
//! check expression is evaluated in the session and judged against the
//! gold's answer in `expected.json`.
//!
//! Scored per run by **complete@1** (consecutive passed steps from the
//! first, over all steps — GeoAgent Table 6), the **step pass rate** (steps
//! passed, each judged on its own: step-level pass@1) and **task pass**
//! (every step passed); averaged per task and over the suite, with failing
//! steps typed by the error taxonomy.
//!
//! Models: a live backend, recorded sessions ([`recording`]) or the gold
//! cells ([`gold_step_messages`]). [`StepMode`]: the agent or the LLM
//! alone (one generation per step, no tools, its code run once: GeoAgent's
//! baseline), continuing from its own state or from the gold prefix (each
//! step in a fresh session that ran the gold cells before it: single-turn
//! pass@1).
//!
//! Layout: `eval.json`, `runs/<task>/run-<r>/` (the work dir with its
//! `transcript.jsonl`), `records/<task>.<r>.json` (atomic; its presence
//! means done, so `--resume` continues), `results.json`, `results.csv`
//! (task × run × step), `report.md` (written by [`crate::eval::reports::step`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::agent::converse::{
    converse, signalled, AgentLimits, ConverseLimits, OnText, Plain, RunState, Stop, Turn,
};
use crate::agent::mcts::step::{StepSearch, StepSearchLimits};
use crate::agent::memory::ErrorMemory;
use crate::agent::plan::step_done_spec;
use crate::agent::run::{prepare_out, sandbox_limits};
use crate::agent::tools::{self, Toolbox};
use crate::bench::data;
use crate::bench::judge;
use crate::bench::labels::Labels;
use crate::bench::steps::{complete_at_1, run_check, LoadedStepTask};
use crate::eval::metrics::api::called_functions;
use crate::eval::metrics::errors::{self, ErrorType};
use crate::eval::running::jobs::{self, Plan};
use crate::eval::running::jobs::{ItemError, ItemRecord, SuiteEvent};
use crate::eval::running::runner::{records_dir, BackendSource};
use crate::llm::replay::ReplayBackend;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{ChatBackend, Message, Role, ToolCall};
use crate::record::{Check, End, Event, MessageEvent, Start, StepStart, ToolEvent, Transcript};
use crate::sandbox::{Session, Zygote};
use crate::util::write_json;

/// The recording of one run: `DIR/<task>.<run>.jsonl`, else
/// `DIR/<task>.jsonl`.
pub fn recording(dir: &Path, task: &str, run: usize) -> Option<PathBuf> {
    [format!("{task}.{run}.jsonl"), format!("{task}.jsonl")]
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// The messages that play a step task's gold: per step, its cell then
/// `step_done`.
pub fn gold_step_messages(task: &LoadedStepTask) -> Vec<Message> {
    let call = |id: String, name: &str, arguments: serde_json::Value| {
        ToolCall::function(id, name, arguments.to_string())
    };
    task.gold_cells
        .iter()
        .enumerate()
        .flat_map(|(i, cell)| {
            [
                Message {
                    content: Some(format!("Gold cell of step {}.", i + 1)),
                    tool_calls: vec![call(
                        format!("gold_{}", i + 1),
                        EXECUTE_PYTHON,
                        json!({ "code": cell }),
                    )],
                    ..Message::default()
                },
                Message {
                    content: Some(format!("Step {} done.", i + 1)),
                    tool_calls: vec![call(
                        format!("done_{}", i + 1),
                        "step_done",
                        json!({ "summary": format!("gold step {}", i + 1) }),
                    )],
                    ..Message::default()
                },
            ]
        })
        .collect()
}

/// The messages that play a step task's gold for the LLM alone: per step,
/// its cell in one fenced block.
pub fn gold_alone_messages(task: &LoadedStepTask) -> Vec<Message> {
    task.gold_cells
        .iter()
        .map(|cell| Message {
            content: Some(format!("```python\n{cell}\n```")),
            ..Message::default()
        })
        .collect()
}

/// How the steps are answered and from which state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepMode {
    /// The LLM alone (GeoAgent §5.2): one generation per step, no tools,
    /// its code run once; otherwise the agent with its tools.
    pub alone: bool,
    /// Each step starts from the gold state of the steps before it (a
    /// fresh session that ran their gold cells, which the prompt shows):
    /// single-turn pass@1. Otherwise the run continues from the model's
    /// own state.
    pub gold_prefix: bool,
    /// `--interventions K`: after K failing cells, or an answer that does
    /// not match, the step's gold cell is shown once (a scripted stand-in
    /// for the person of GeoAgent's human-intervention mode); 0: never.
    pub interventions: usize,
    /// `--arch mcts`: each step is refined by GeoAgent's tree search
    /// ([`crate::agent::mcts::step`]) instead of the agent's conversation.
    pub search: bool,
}

impl StepMode {
    /// `agent` or `LLM alone`, with `gold prefix` when set.
    pub fn label(&self) -> String {
        let mut label = if self.alone {
            "LLM alone"
        } else if self.search {
            "tree search"
        } else {
            "agent"
        }
        .to_string();
        if self.gold_prefix {
            label.push_str(" · gold prefix");
        }
        if self.interventions > 0 {
            label.push_str(&format!(" · human after {}", self.interventions));
        }
        label
    }
}

/// Bounds of one run.
#[derive(Debug, Clone)]
pub struct StepLimits {
    /// Most model rounds in the whole run.
    pub max_rounds: usize,
    /// Most model rounds per step.
    pub step_rounds: usize,
    /// Most failing cells per step before it is given up.
    pub step_failures: usize,
    /// Time budget of the run.
    pub budget: Duration,
    /// Per-cell time limit.
    pub cell_timeout: Duration,
    /// The bounds of each step's tree search (`--arch mcts`).
    pub search: StepSearchLimits,
}

/// One step of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResult {
    /// From 1.
    pub step: usize,
    /// The check agreed with the gold's answer.
    pub passed: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The failure's type.
    pub error: Option<ErrorType>,
    /// How the step's conversation ended: `step_done`, `gave_up`, `ended`
    /// (the run ended before or during it).
    pub ending: String,
    /// The step's code executed: its check ran and gave an answer, right
    /// or wrong (GeoAgent's complete rate counts steps that executed).
    #[serde(default)]
    pub executed: bool,
    /// The step's labels (empty in records written before labels).
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// The distinct functions the code run in this step calls (GeoAgent's
    /// labels, for its Table 5).
    #[serde(default)]
    pub calls: Vec<String>,
    /// The distinct functions the step's gold cell calls.
    #[serde(default)]
    pub gold_calls: Vec<String>,
    /// Times a person (the gold cell, `--interventions`) stepped in.
    #[serde(default)]
    pub hints: usize,
}

/// The distinct functions `code` calls, its names resolved through the
/// aliases every session starts with (`gpd.read_file` is
/// `geopandas.read_file`).
fn session_calls(code: &str) -> Vec<String> {
    let with_imports = format!("{}\n{code}", crate::sandbox::preamble::SESSION_IMPORTS);
    called_functions(&with_imports).into_iter().collect()
}

/// The code the model ran in one step, from the step's messages: its
/// `execute_python` calls, or (the LLM alone) the fenced code of its
/// answers.
fn step_code(messages: &[Message], alone: bool) -> String {
    let mut code = String::new();
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        if alone {
            if let Some(text) = &m.content {
                code.push_str(&crate::eval::running::unit_eval::extract_code(text));
            }
            continue;
        }
        for call in m
            .tool_calls
            .iter()
            .filter(|c| c.function.name == EXECUTE_PYTHON)
        {
            if let Some(cell) = serde_json::from_str::<serde_json::Value>(&call.function.arguments)
                .ok()
                .and_then(|v| v.get("code").and_then(|c| c.as_str()).map(str::to_string))
            {
                code.push_str(&cell);
                code.push('\n');
            }
        }
    }
    code
}

/// One run of one step task: `records/<task>.<run>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRunRecord {
    /// Task id.
    pub task: String,
    /// Run number, from 1.
    pub run: usize,
    /// Per step.
    pub steps: Vec<StepResult>,
    /// complete@1 of this run: consecutive steps whose answer matched.
    pub complete_at_1: f64,
    /// complete@1 counting steps that executed (GeoAgent's), right answer
    /// or not.
    #[serde(default)]
    pub complete_at_1_executed: f64,
    /// Steps passed over steps.
    pub step_pass_rate: f64,
    /// Every step passed.
    pub passed: bool,
    /// Model rounds.
    pub rounds: usize,
    /// Prompt tokens.
    pub tokens_in: u64,
    /// Completion tokens.
    pub tokens_out: u64,
    /// Seconds waiting for the model.
    pub llm_seconds: f64,
    /// Seconds running tools.
    pub sandbox_seconds: f64,
    /// Why the run ended early, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
    /// `--arch mcts`: the nodes its step searches made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<StepSearchTally>,
}

/// The nodes of a run's step searches, by how they were made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSearchTally {
    /// Candidates for a step's prompt.
    pub samples: usize,
    /// Regenerated from a prompt the model fixed (node-prompt update).
    pub prompt_updates: usize,
    /// Run after a prepended task defining undefined variables.
    pub prepended_tasks: usize,
    /// Steps split into smaller subtasks.
    pub redecompositions: usize,
}

impl StepSearchTally {
    /// The tally of node counts by origin (samples, prompt updates,
    /// prepended tasks, re-decompositions).
    fn of([samples, prompt_updates, prepended_tasks, redecompositions]: [usize; 4]) -> Self {
        StepSearchTally {
            samples,
            prompt_updates,
            prepended_tasks,
            redecompositions,
        }
    }
}

/// A run succeeds when every step passed.
impl ItemRecord for StepRunRecord {
    fn succeeded(&self) -> bool {
        self.passed
    }

    fn tokens(&self) -> u64 {
        self.tokens_in + self.tokens_out
    }

    fn summary(&self) -> String {
        format!(
            "{} run {}: {}/{} steps pass, complete@1 {:.3}",
            self.task,
            self.run,
            self.steps.iter().filter(|s| s.passed).count(),
            self.steps.len(),
            self.complete_at_1
        )
    }
}

impl StepRunRecord {
    /// The record's file name.
    pub fn file_name(task: &str, run: usize) -> String {
        format!("{task}.{run}.json")
    }
}

const SYSTEM: &str = "You are a GIS analyst working in a persistent Python sandbox: variables and imports survive from one \
execute_python call to the next. The task comes in steps. For each step, write and run the code it asks for with execute_python, \
read the observation, fix errors, and keep the variable names the step asks for (later steps and the checks use them). \
When the step is done, call step_done with a one-line summary. The input data is in data/.";

/// What the agent is told of `search_docs` with `--rag`.
const SEARCH_DOCS: &str = "search_docs(query) gives the exact signatures and docstrings of the installed libraries' \
functions: call it before using an API you are not sure of, and after an error saying an API does not exist or was called wrongly.";

/// The system prompt of the LLM alone: no tools, one answer per step.
const SYSTEM_ALONE: &str = "You are a GIS analyst writing Python for a persistent session: variables and imports survive from one \
step's code to the next. The task comes in steps. For each step, answer with the code it asks for in one ```python block; it is run \
once, as written, and you will not see its output. Keep the variable names the step asks for (later steps and the checks use them). \
The input data is in data/.";

/// The LLM alone answers one step: one generation without tools, its code
/// run once. How the step ended (`answered`, or `ended` with why) and the
/// type of the cell's failure, if it failed.
fn answer_alone(
    backend: &mut dyn ChatBackend,
    session: &mut Session,
    messages: &mut Vec<Message>,
    state: &mut RunState,
    limits: &AgentLimits,
    transcript: &mut Transcript,
) -> Result<Option<ErrorType>, String> {
    let (response, took) = state
        .ask(&mut Plain(backend), messages, &[], limits, &mut |_| {})
        .map_err(|e| format!("{e:?}"))?;
    transcript.record(MessageEvent {
        usage: Some(response.usage),
        llm_ms: Some(took.as_millis() as u64),
        ..MessageEvent::of(Some(state.rounds), None, response.message.clone())
    });
    let reply = response.message.content.clone().unwrap_or_default();
    // Its own answers stay in the conversation; their outputs do not.
    messages.push(Message::text(Role::Assistant, reply.clone()));
    let code = crate::eval::running::unit_eval::extract_code(&reply);
    let ran = std::time::Instant::now();
    let outcome = session
        .execute(&code)
        .map_err(|e| format!("sandbox: {e}"))?;
    state.tool_time += ran.elapsed();
    let observation = crate::observation::render(&outcome);
    let status = format!("{:?}", outcome.status);
    transcript.record(ToolEvent {
        round: Some(state.rounds),
        name: EXECUTE_PYTHON.into(),
        arguments: json!({ "code": code }).to_string(),
        status: Some(status.clone()),
        observation: Some(observation.clone()),
        ..ToolEvent::default()
    });
    Ok((outcome.status != crate::sandbox::CellStatus::Ok)
        .then(|| errors::classify_cell(&status, &observation)))
}

/// A step run's first messages, recorded: the system message and the
/// task's context (with the suite's most similar other solved task when
/// `--solutions`); the context is returned too.
fn opening(
    task: &LoadedStepTask,
    system: &Message,
    solutions: Option<&crate::knowledge::solutions::Solutions>,
    transcript: &mut Transcript,
) -> (String, Vec<Message>) {
    let context = crate::agent::prompt::brief_with_solutions(
        solutions,
        format!("# {}\n\n{}", task.task.title, task.task.context),
        (&task.task.query(), &task.task.id),
        transcript,
    );
    let messages = vec![system.clone(), Message::text(Role::User, context.clone())];
    for m in &messages {
        transcript.record(MessageEvent::of(Some(0), None, m.clone()));
    }
    (context, messages)
}

/// What a step run retrieves from: the library docs (`--rag`) and the
/// suite's solutions (`--solutions`).
pub type Knowledge<'a> = (
    Option<&'a crate::knowledge::Library>,
    Option<&'a crate::knowledge::solutions::Solutions>,
);

/// Runs one (task, run) in `workdir` in `mode` (with the library docs
/// when `--rag`, the suite's most similar other solved task when
/// `--solutions`) and scores it.
#[allow(clippy::too_many_arguments)]
pub fn run_one(
    zygote: &Arc<Zygote>,
    task: &LoadedStepTask,
    backend: &mut dyn ChatBackend,
    workdir: &Path,
    run: usize,
    limits: &StepLimits,
    mode: StepMode,
    (docs, solutions): Knowledge<'_>,
) -> Result<StepRunRecord, ItemError> {
    let id = &task.task.id;
    let mut loaded = task.as_loaded_task();
    data::ensure(zygote, &mut loaded)?;
    let config = sandbox_limits(zygote.config(), limits.cell_timeout, limits.budget);
    let open = |dir: &Path| -> Result<Session, ItemError> {
        let dirs = prepare_out(dir, loaded.data_dir.as_deref())
            .map_err(|e| ItemError::Run(format!("{e:#}")))?;
        Ok(Session::open_in(zygote, &dirs, config.clone())?)
    };
    let mut session = open(workdir)?;
    let mut stopper = crate::interrupt::CellStopper::start(session.canceller());
    let mut transcript = start_record(workdir, id, run, mode, backend)?;
    let specs = step_tools(docs.is_some());
    let (run_limits, bounds) = step_bounds(limits);
    let system = system_message(mode, docs.is_some());
    let (context, mut messages) = opening(task, &system, solutions, &mut transcript);
    let mut state = RunState::new();
    let mut memory = ErrorMemory::in_memory();
    let mut ended: Option<String> = None;
    let mut results = Vec::new();
    let mut search_counts = [0usize; 4];
    let n = task.task.steps.len();
    let labels = task.step_labels();
    for (i, step) in task.task.steps.iter().enumerate() {
        let number = i + 1;
        if let Some(why) = &ended {
            results.push(not_attempted(task, i, why, &labels[i]));
            continue;
        }
        if mode.gold_prefix && i > 0 {
            // A fresh session that ran the gold of the steps before.
            drop(stopper);
            session = open(&workdir.join(format!("step-{number}")))?;
            stopper = crate::interrupt::CellStopper::start(session.canceller());
            run_gold_prefix(&mut session, task, i)?;
            transcript.record(Event::GoldPrefix {
                step: number,
                gold_cells: i,
            });
            messages = vec![
                system.clone(),
                Message::text(
                    Role::User,
                    prefixed_context(&context, &task.gold_cells[..i]),
                ),
            ];
        }
        let ask = step_start(&mut transcript, mode, number, n);
        if mode.search {
            let (result, step_ended) = searched_step(
                (backend, &mut state, &run_limits, &mut transcript),
                (&mut session, &mut stopper, &mut messages),
                (task, i, &labels[i], &limits.search),
                &mut search_counts,
            );
            ended = ended.or(step_ended);
            results.push(result);
            continue;
        }
        let brief = Message::text(
            Role::User,
            crate::agent::prompt::brief_with_docs(
                docs,
                format!("Step {number} of {n}: {}\n\n{ask}", step.prompt.trim()),
                &step.prompt,
                "this step",
                &mut transcript,
            ),
        );
        transcript.record(MessageEvent::of(Some(state.rounds), None, brief.clone()));
        messages.push(brief);
        let first = messages.len();
        let mut hints = 0usize;
        // One attempt, and with `--interventions K` a second after the
        // gold cell is shown when the first left the step unsolved (K
        // failing cells, or a wrong answer).
        let (stop, cell_error, checked) = loop {
            let attempt_bounds = match mode.interventions {
                // `max_failures` counts self-corrections: K failing cells
                // end the attempt.
                k if k > 0 && hints == 0 => ConverseLimits {
                    max_failures: Some(k - 1),
                    ..bounds.clone()
                },
                _ => bounds.clone(),
            };
            let (stop, cell_error) = attempt(
                backend,
                &mut session,
                &mut messages,
                &mut state,
                &mut transcript,
                &mut memory,
                (workdir, loaded.data_dir.clone(), docs),
                (&specs, &attempt_bounds, &run_limits),
                mode.alone,
            );
            // The check runs whatever happened: the variable may be there.
            let checked = run_check(&mut session, &step.check);
            let solved = matches!(
                (&checked, task.expected.get(i)),
                (Ok(got), Some(want)) if judge::judge(step.output, want, got, &step.tolerance).is_ok()
            );
            if mode.interventions == 0 || hints > 0 || solved || matches!(stop, Stop::End(_)) {
                break (stop, cell_error, checked);
            }
            hints += 1;
            let hint = intervention(&mut transcript, &stop, number, &task.gold_cells[i], ask);
            transcript.record(MessageEvent::of(Some(state.rounds), None, hint.clone()));
            messages.push(hint);
        };
        let ending = ending_of(&stop, mode.alone);
        if let Stop::End(e) = &stop {
            ended = Some(format!("{e:?}"));
        }
        let called = step_code(&messages[first.min(messages.len())..], mode.alone);
        results.push(judged_step(
            &mut transcript,
            task,
            i,
            &labels[i],
            (ending, cell_error, checked),
            &called,
            hints,
        ));
    }
    drop(stopper);
    transcript.record(End {
        steps_passed: Some(results.iter().filter(|r| r.passed).count()),
        of: Some(n),
        ..End::default()
    });
    let mut record = run_record(id, run, results, &state, ended);
    record.search = mode.search.then(|| StepSearchTally::of(search_counts));
    Ok(record)
}

/// Records the start of step `number` of `n`; what its brief asks for.
fn step_start(
    transcript: &mut Transcript,
    mode: StepMode,
    number: usize,
    n: usize,
) -> &'static str {
    transcript.record(Event::Step(StepStart {
        step: number,
        of: n,
        goal: None,
        replan: None,
    }));
    if mode.alone {
        "Answer with this step's code in one ```python block."
    } else {
        "Call step_done when this step is done."
    }
}

/// Step `i` + 1 refined by the tree search from `session`'s state
/// (`--arch mcts`): the session continues from the node that ran, the
/// conversation gains the step and its code, and the step is judged;
/// with why the run ended, if it did during the search.
#[allow(clippy::type_complexity)]
fn searched_step(
    (backend, state, run_limits, transcript): (
        &mut dyn ChatBackend,
        &mut RunState,
        &AgentLimits,
        &mut Transcript,
    ),
    (session, stopper, messages): (
        &mut Session,
        &mut crate::interrupt::CellStopper,
        &mut Vec<Message>,
    ),
    (task, i, labels, search): (&LoadedStepTask, usize, &Labels, &StepSearchLimits),
    counts: &mut [usize; 4],
) -> (StepResult, Option<String>) {
    let (number, n) = (i + 1, task.task.steps.len());
    let step = &task.task.steps[i];
    let mut found = StepSearch {
        backend,
        state,
        limits: run_limits,
        transcript: &mut *transcript,
        search,
        context: messages,
    }
    .run(session, number, step.prompt.trim());
    if let Some(mut fork) = found.session.take() {
        // The session continues from the node that ran.
        fork.set_rebuild_at_once(true);
        *session = fork;
        *stopper = crate::interrupt::CellStopper::start(session.canceller());
    }
    let ended = found.ended.as_ref().map(|e| format!("{e:?}"));
    let ending = if ended.is_some() {
        "ended"
    } else {
        "step_done"
    };
    counts
        .iter_mut()
        .zip(found.counts)
        .for_each(|(a, b)| *a += b);
    // Later steps see the code this one ran.
    messages.push(Message::text(
        Role::User,
        format!("Step {number} of {n}: {}", step.prompt.trim()),
    ));
    messages.push(Message::text(
        Role::Assistant,
        format!("```python\n{}\n```", found.code),
    ));
    let checked = run_check(session, &step.check);
    // No node ran: the type of the last failure.
    let cell_error = found
        .last_error
        .as_deref()
        .map(|line| errors::classify_cell("Failed", line));
    let result = judged_step(
        transcript,
        task,
        i,
        labels,
        (ending, cell_error, checked),
        &found.code,
        0,
    );
    (result, ended)
}

/// Step `i` + 1 judged after its attempt(s): its check against the
/// recorded answer (recorded in the transcript), what it called and how it
/// ended.
fn judged_step(
    transcript: &mut Transcript,
    task: &LoadedStepTask,
    i: usize,
    labels: &Labels,
    (ending, cell_error, checked): (
        &str,
        Option<ErrorType>,
        Result<crate::bench::answers::Answer, crate::bench::answers::HarnessError>,
    ),
    called: &str,
    hints: usize,
) -> StepResult {
    let step = &task.task.steps[i];
    let executed = checked.is_ok() && cell_error.is_none() && ending != "ended";
    let verdict = verdict_of(task, i, checked);
    transcript.record(Event::Check(Check {
        step: i + 1,
        check: serde_json::to_value(&step.check).unwrap_or_default(),
        passed: verdict.is_ok(),
        problem: verdict.as_ref().err().map(|e| e.1.clone()),
    }));
    // A failing cell of the LLM alone says more than the check it left
    // undefined.
    let (passed, problem, error) = match verdict {
        Ok(()) => (true, None, None),
        Err((kind, why)) => (false, Some(why), Some(cell_error.unwrap_or(kind))),
    };
    StepResult {
        step: i + 1,
        passed,
        problem,
        error,
        ending: ending.into(),
        executed,
        labels: labels.clone(),
        calls: session_calls(called),
        gold_calls: session_calls(&task.gold_cells[i]),
        hints,
    }
}

/// The run's record in `workdir`, opened with its start.
fn start_record(
    workdir: &Path,
    id: &str,
    run: usize,
    mode: StepMode,
    backend: &dyn ChatBackend,
) -> Result<Transcript, ItemError> {
    let path = workdir.join("transcript.jsonl");
    let mut transcript = Transcript::create(&path).map_err(ItemError::io(&path))?;
    transcript.record(Start {
        task: Some(id.to_string()),
        suite: Some("steps".into()),
        run: Some(run),
        mode: Some(mode.label()),
        backend: Some(backend.describe()),
        replay: Some(backend.is_replay()),
        ..Start::default()
    });
    Ok(transcript)
}

/// The tools of a step run: the agent's, without `finish` and `decline`,
/// with `step_done`.
fn step_tools(docs: bool) -> Vec<crate::llm::ToolSpec> {
    let mut specs: Vec<_> = tools::offered(docs)
        .into_iter()
        .filter(|s| s.name != "finish" && s.name != "decline")
        .collect();
    specs.push(step_done_spec());
    specs
}

/// The run's limits and each step's.
fn step_bounds(limits: &StepLimits) -> (AgentLimits, ConverseLimits) {
    let run_limits = AgentLimits {
        max_rounds: limits.max_rounds,
        budget: limits.budget,
        ..AgentLimits::default()
    };
    let bounds = ConverseLimits {
        run: run_limits.clone(),
        max_rounds: limits.step_rounds,
        max_failures: Some(limits.step_failures),
    };
    (run_limits, bounds)
}

/// The task's context with the gold code of the steps before (`--gold-prefix`).
fn prefixed_context(context: &str, gold: &[String]) -> String {
    format!(
        "{context}\n\nThe steps before this one are done: this code ran, and its variables are in the session.\n```python\n{}\n```",
        gold.join("\n\n")
    )
}

/// A person steps in after `stop` with step `number`'s gold code
/// (`--interventions`): recorded, and the message that shows it.
fn intervention(
    transcript: &mut Transcript,
    stop: &Stop,
    number: usize,
    gold: &str,
    ask: &str,
) -> Message {
    transcript.record(Event::Intervention {
        step: number,
        after: format!("{stop:?}")
            .split(['(', ' ', '{'])
            .next()
            .unwrap_or_default()
            .to_string(),
    });
    Message::text(
        Role::User,
        format!(
            "A person steps in: step {number} is not done yet. This code does it:\n```python\n{}\n```\n{ask}",
            gold.trim_end()
        ),
    )
}

/// One attempt at a step: the LLM alone's answer run once, or the agent's
/// conversation until it calls `step_done` (or stops); with the error type
/// of the LLM alone's failing cell.
#[allow(clippy::too_many_arguments)]
fn attempt(
    backend: &mut dyn ChatBackend,
    session: &mut Session,
    messages: &mut Vec<Message>,
    state: &mut RunState,
    transcript: &mut Transcript,
    memory: &mut ErrorMemory,
    (workdir, data_dir, docs): (&Path, Option<PathBuf>, Option<&crate::knowledge::Library>),
    (specs, bounds, run_limits): (&[crate::llm::ToolSpec], &ConverseLimits, &AgentLimits),
    alone: bool,
) -> (Stop, Option<ErrorType>) {
    if alone {
        match answer_alone(backend, session, messages, state, run_limits, transcript) {
            Ok(error) => (Stop::StepDone(String::new()), error),
            Err(why) => (Stop::End(crate::agent::converse::Ending::Failed(why)), None),
        }
    } else {
        let mut toolbox = Toolbox {
            session,
            out_dir: workdir.to_path_buf(),
            data_dir,
            data_path: "data/".into(),
            outputs: Vec::new(),
            docs,
            // Step suites judge each step's answer, not output files.
            checks: None,
            vision: false,
        };
        let mut model = Plain(&mut *backend);
        let mut turn = Turn {
            model: &mut model,
            toolbox: &mut toolbox,
            memory,
            transcript,
            events: &mut |_| {},
            agent: None,
            on_text: OnText::Nudge,
            stop: &signalled,
        };
        let stop = converse(&mut turn, messages, specs, bounds, state);
        (stop, None)
    }
}

/// A step left unattempted because the run ended before it (`why`).
fn not_attempted(task: &LoadedStepTask, i: usize, why: &str, labels: &Labels) -> StepResult {
    StepResult {
        step: i + 1,
        passed: false,
        problem: Some(format!("not attempted: {why}")),
        error: Some(ErrorType::Other),
        ending: "ended".into(),
        executed: false,
        labels: labels.clone(),
        calls: Vec::new(),
        gold_calls: session_calls(&task.gold_cells[i]),
        hints: 0,
    }
}

/// Runs the gold cells of the steps before step `i` + 1 in `session`; a
/// gold cell that fails is the suite's error, not the model's.
fn run_gold_prefix(
    session: &mut Session,
    task: &LoadedStepTask,
    i: usize,
) -> Result<(), ItemError> {
    for (j, cell) in task.gold_cells[..i].iter().enumerate() {
        let outcome = session.execute(cell)?;
        if outcome.status != crate::sandbox::CellStatus::Ok {
            return Err(ItemError::Run(format!(
                "{}: the gold cell of step {} failed as a prefix (run `gisclaw bench verify`): {}",
                task.task.id,
                j + 1,
                crate::observation::error_line(&crate::observation::render(&outcome))
            )));
        }
    }
    Ok(())
}

/// The system message of a step run in `mode` (with `search_docs` when
/// the run has the docs).
fn system_message(mode: StepMode, docs: bool) -> Message {
    Message::text(
        Role::System,
        match (mode.alone, docs) {
            (true, _) => SYSTEM_ALONE.to_string(),
            (false, false) => SYSTEM.to_string(),
            (false, true) => format!("{SYSTEM} {SEARCH_DOCS}"),
        },
    )
}

/// How a step's attempt ended, as its record says.
fn ending_of(stop: &Stop, alone: bool) -> &'static str {
    match stop {
        Stop::StepDone(_) if alone => "answered",
        Stop::StepDone(_) | Stop::Finished(_) | Stop::Answered(_) => "step_done",
        // Not offered on step suites; a recording may still call it.
        Stop::GaveUp { .. } | Stop::Declined(_) => "gave_up",
        Stop::End(_) => "ended",
    }
}

/// Step `i` + 1's check judged against its recorded answer: `Err` with the
/// error type and why when it fails.
fn verdict_of(
    task: &LoadedStepTask,
    i: usize,
    checked: Result<crate::bench::answers::Answer, crate::bench::answers::HarnessError>,
) -> Result<(), (ErrorType, String)> {
    let step = &task.task.steps[i];
    match (checked, task.expected.get(i)) {
        (_, None) => Err((
            ErrorType::Other,
            format!(
                "no gold answer recorded for step {} (run `gisclaw bench expect`)",
                i + 1
            ),
        )),
        (Err(e), _) => Err((errors::classify_harness(&e), e.to_string())),
        (Ok(got), Some(want)) => judge::judge(step.output, want, &got, &step.tolerance)
            .map_err(|m| (errors::classify_mismatch(&m), m.to_string())),
    }
}

/// The run's record from its steps' results and the loop's counts.
fn run_record(
    id: &str,
    run: usize,
    results: Vec<StepResult>,
    state: &RunState,
    ended: Option<String>,
) -> StepRunRecord {
    let passed: Vec<bool> = results.iter().map(|r| r.passed).collect();
    let executed: Vec<bool> = results.iter().map(|r| r.executed).collect();
    StepRunRecord {
        task: id.to_string(),
        run,
        complete_at_1: complete_at_1(&passed),
        complete_at_1_executed: complete_at_1(&executed),
        step_pass_rate: passed.iter().filter(|p| **p).count() as f64 / passed.len().max(1) as f64,
        passed: passed.iter().all(|p| *p),
        steps: results,
        rounds: state.rounds,
        tokens_in: state.usage.prompt_tokens,
        tokens_out: state.usage.completion_tokens,
        llm_seconds: state.llm_time.as_secs_f64(),
        sandbox_seconds: state.tool_time.as_secs_f64(),
        ended,
        search: None,
    }
}

/// What the step suite tells its front end.
pub type StepEvent = SuiteEvent<StepRunRecord>;

/// Runs every (task, run) not yet recorded, `jobs` at a time; returns how
/// many could not run.
#[allow(clippy::too_many_arguments)]
pub fn run_step_eval(
    zygote: &Arc<Zygote>,
    tasks: &[LoadedStepTask],
    source: &BackendSource,
    runs: usize,
    out: &Path,
    jobs: usize,
    limits: &StepLimits,
    mode: StepMode,
    knowledge: Knowledge<'_>,
    events: &(dyn Fn(StepEvent) + Sync),
) -> Result<usize, ItemError> {
    let records = records_dir(out);
    std::fs::create_dir_all(&records).map_err(ItemError::io(&records))?;
    let items = tasks
        .iter()
        .flat_map(|task| (1..=runs).map(move |run| (task, run)));
    let plan = Plan::new(items, |(task, run)| {
        records
            .join(StepRunRecord::file_name(&task.task.id, *run))
            .is_file()
    });
    let work = |&(task, run): &(&LoadedStepTask, usize)| -> Result<StepRunRecord, ItemError> {
        let id = &task.task.id;
        let mut backend: Box<dyn ChatBackend> = match source {
            BackendSource::Gold => Box::new(ReplayBackend::from_messages(
                &format!("gold of {id}"),
                if mode.alone {
                    gold_alone_messages(task)
                } else {
                    gold_step_messages(task)
                },
            )),
            BackendSource::Recorded(dir) => {
                let file = recording(dir, id, run).ok_or_else(|| ItemError::NoRecording {
                    dir: dir.clone(),
                    item: format!("{id} run {run}"),
                })?;
                Box::new(ReplayBackend::open(&file)?)
            }
            BackendSource::Live(live) => crate::llm::open_live((**live).clone())?,
        };
        let workdir = out.join("runs").join(id).join(format!("run-{run}"));
        let record = run_one(
            zygote,
            task,
            backend.as_mut(),
            &workdir,
            run,
            limits,
            mode,
            knowledge,
        )?;
        // A run cut short by a stop request has no record.
        ItemError::check_stop()?;
        let path = records.join(StepRunRecord::file_name(id, run));
        write_json(&path, &record).map_err(ItemError::io(&path))?;
        Ok(record)
    };
    Ok(jobs::run_all(
        plan,
        jobs,
        |_| (),
        |_, item| work(item),
        |(task, run)| format!("{} run {run}", task.task.id),
        events,
    ))
}
