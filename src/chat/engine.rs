//! The chat session behind `gisclaw chat`: one persistent sandbox session,
//! one conversation, and the commands the REPL offers on them. Each user
//! turn runs the model with the sandbox's tools until it answers in plain
//! text (or a bound is hit); a Ctrl-C (the `interrupt` flag) stops the
//! model call or the running cell and returns with everything intact.

use super::{io, ChatError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::store::{ChatArch, SavedChat};
use crate::agent::context::ContextKeeper;
use crate::agent::converse::{
    converse, ending_of, fit_history, run_tool, AgentLimits, ConverseLimits, Ending, Model, OnText,
    RunState, Stop, Turn,
};
pub use crate::agent::events::AgentEvent;
use crate::agent::memory::ErrorMemory;
use crate::agent::tools::{self, Toolbox};
use crate::agent::{prompt, solution};
use crate::interrupt::CellStopper;
use crate::llm::config::LiveConfig;
use crate::llm::tokens::Price;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{ChatBackend, ChatResponse, LlmError, Message, Role, ToolSpec, Usage};
use crate::outputs::sanity::OutputChecks;
use crate::record::{Event, MessageEvent, Start, Transcript, UserCell};
use crate::sandbox::{CellStatus, SandboxConfig, Session, SessionDirs, Zygote};

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model answered in text.
    Answered,
    /// The user pressed Ctrl-C.
    Interrupted,
    /// The turn's round limit was hit.
    RoundLimit(usize),
    /// The backend or the sandbox failed (one line).
    Failed(String),
}

/// Settings of a chat.
#[derive(Debug, Clone)]
pub struct ChatOptions {
    /// Most model calls per user turn.
    pub max_rounds: usize,
    /// The sandbox limits.
    pub sandbox: SandboxConfig,
    /// The library-docs index for `search_docs` (`--rag`).
    pub docs: Option<Arc<crate::knowledge::Library>>,
    /// Output checks after cells that write under `pred_results/`
    /// (`--no-output-checks` turns them off).
    pub output_checks: bool,
    /// Show the model the figures its cells write, when it sees images
    /// (`--no-vision-feedback` clears it).
    pub vision_feedback: bool,
    /// The model's context window (`--context-window`); `None`: learnt
    /// from the backend.
    pub context_window: Option<u64>,
}

const CHAT_NOTE: &str = "\n\n## Chat\nYou work with a GIS analyst in an interactive session. Use the tools to do what they ask, \
step by step. When the request is done, or you need their input, answer in plain text without a tool call: that ends your \
turn. There is no finish tool. Keep files you make under `pred_results/`.";

/// A live chat session.
pub struct ChatEngine {
    pub(super) zygote: Arc<Zygote>,
    pub(super) session: Session,
    pub(super) backend: Option<Box<dyn ChatBackend>>,
    pub(super) reopen: Option<LiveConfig>,
    describe: String,
    price: Option<Price>,
    system: String,
    /// The attached data folder's schema card (made once per attach: it
    /// reads every file with GDAL).
    card: Option<String>,
    /// The output checks' reference (the attached data's CRSs and extent),
    /// made with the card; `None` when the checks are off.
    pub(super) checks: Option<OutputChecks>,
    pub(super) transcript: Transcript,
    memory: ErrorMemory,
    pub(super) interrupt: &'static AtomicBool,
    pub(super) options: ChatOptions,
    /// The saved state: conversation, hints, data folder, cell journal.
    pub saved: SavedChat,
    /// Tokens used in this process.
    pub usage: Usage,
    /// The last cell that failed (for `/edit`).
    pub last_failed: Option<String>,
    /// The model's window and how requests are sized, across turns.
    context: ContextKeeper,
    /// Compactions in this process.
    pub compactions: usize,
}

/// What resuming rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    /// Cells replayed successfully.
    pub replayed: usize,
    /// Cells that failed on replay (their first line).
    pub failed: Vec<String>,
    /// Names the failed cells bind that the namespace lacks after the
    /// replay (see [`crate::agent::bindings`]).
    pub missing: Vec<String>,
}

/// Which of `names` the session's namespace lacks: the static analysis of
/// a cell that only reads them, against the live namespace (nothing runs).
fn absent_names(session: &mut Session, names: &[String]) -> Result<Vec<String>, ChatError> {
    let mut unique: Vec<&String> = Vec::new();
    for name in names {
        if !unique.contains(&name) {
            unique.push(name);
        }
    }
    let probe: String = unique.iter().map(|n| format!("{n}\n")).collect();
    let findings = session.analyse(&probe).map_err(ChatError::Rebuild)?;
    Ok(findings
        .iter()
        .filter(|f| f.kind == "name")
        .filter_map(|f| unique.get((f.line as usize).checked_sub(1)?))
        .map(|n| n.to_string())
        .collect())
}

/// A chat's session folders: its work folder, and its data folder readable.
fn chat_dirs(workdir: &Path, data: Option<&Path>) -> SessionDirs {
    SessionDirs {
        readable: data.map(Path::to_path_buf).into_iter().collect(),
        ..SessionDirs::work(workdir)
    }
}

impl ChatEngine {
    /// Opens (or, for a saved session with cells, rebuilds) the session.
    /// `reopen` re-creates the backend after a Ctrl-C abandoned a call.
    pub fn open(
        zygote: &Arc<Zygote>,
        backend: Box<dyn ChatBackend>,
        reopen: Option<LiveConfig>,
        saved: SavedChat,
        options: ChatOptions,
        interrupt: &'static AtomicBool,
    ) -> Result<(ChatEngine, Rebuilt), ChatError> {
        let dir = saved.dir();
        let workdir = dir.join("work");
        std::fs::create_dir_all(workdir.join("pred_results")).map_err(io(&workdir))?;
        link_data(&workdir, saved.data_dir.as_deref())?;
        let mut session = Session::open_in(
            zygote,
            &chat_dirs(&workdir, saved.data_dir.as_deref()),
            options.sandbox.clone(),
        )?;
        let mut rebuilt = Rebuilt {
            replayed: 0,
            failed: Vec::new(),
            missing: Vec::new(),
        };
        let mut kept = Vec::new();
        let mut bound_by_failed: Vec<String> = Vec::new();
        for cell in &saved.cells {
            match session.execute(cell) {
                Ok(o) if o.status == CellStatus::Ok => {
                    rebuilt.replayed += 1;
                    kept.push(cell.clone());
                }
                Ok(_) => {
                    rebuilt
                        .failed
                        .push(cell.lines().next().unwrap_or("").to_string());
                    bound_by_failed.extend(crate::agent::bindings::top_level_bindings(cell));
                }
                Err(e) => return Err(ChatError::Rebuild(e)),
            }
        }
        if !bound_by_failed.is_empty() {
            rebuilt.missing = absent_names(&mut session, &bound_by_failed)?;
        }
        let packages = prompt::listed_packages(&zygote.info().packages);
        let system = prompt::sandbox_system_prompt(
            "data/",
            &packages,
            &zygote.config().blocked_imports,
            options.docs.is_some(),
        ) + CHAT_NOTE;
        let transcript_path = dir.join("transcript.jsonl");
        let mut transcript = Transcript::append(&transcript_path).map_err(io(&transcript_path))?;
        let describe = backend.describe();
        transcript.record(Start {
            chat: Some(saved.id.clone()),
            backend: Some(describe.clone()),
            replay: Some(backend.is_replay()),
            resumed_cells: Some(rebuilt.replayed),
            ..Start::default()
        });
        let price = backend.price();
        let card = saved
            .data_dir
            .as_deref()
            .map(|dir| data_card(dir, &mut session));
        let checks = options
            .output_checks
            .then(|| OutputChecks::new(saved.data_dir.as_deref(), ""));
        let mut saved = saved;
        saved.cells = kept;
        let options_window = options.context_window;
        let mut engine = ChatEngine {
            zygote: zygote.clone(),
            session,
            backend: Some(backend),
            reopen,
            describe,
            price,
            system,
            card,
            checks,
            transcript,
            memory: ErrorMemory::in_memory(),
            interrupt,
            options,
            saved,
            usage: Usage::default(),
            last_failed: None,
            context: ContextKeeper::new(options_window),
            compactions: 0,
        };
        engine.save();
        Ok((engine, rebuilt))
    }

    /// Sends what the session's cells write to `sink` as it comes (the
    /// chat screen's live view); kept across `/reset`.
    pub fn watch_output(&mut self, sink: Option<crate::sandbox::OutputSink>) {
        self.session.set_output_sink(sink);
    }

    /// The session's work dir (where `data/` and `pred_results/` are).
    pub fn workdir(&self) -> &Path {
        self.session.workdir()
    }

    /// The backend's description.
    pub fn backend(&self) -> &str {
        &self.describe
    }

    /// The cells the session keeps: its journal when that holds every
    /// saved cell in order and more (the statements a failed cell ran
    /// before it raised, which the session keeps), else the saved cells.
    /// What `solution.py`, the notebook and `--resume` replay is then what
    /// the namespace holds.
    pub fn kept_cells(&self) -> Vec<String> {
        let journal: Vec<&str> = self.session.journal().collect();
        let mut rest = journal.iter();
        let in_order = self
            .saved
            .cells
            .iter()
            .all(|c| rest.any(|j| j.trim_end() == c.trim_end()));
        if journal.len() > self.saved.cells.len() && in_order {
            journal.into_iter().map(str::to_string).collect()
        } else {
            self.saved.cells.clone()
        }
    }

    /// Saves the session (errors are noted in the log, never fatal).
    pub fn save(&mut self) {
        self.saved.cells = self.kept_cells();
        if let Err(e) = self.saved.save() {
            tracing::warn!("saving the chat session: {e}");
        }
    }

    /// The chat's system message: rules, the data folder's schema card,
    /// the user's hints.
    pub(super) fn system_message(&self) -> Message {
        let mut system = self.system.clone();
        system.push_str("\n\n## Data\n");
        system.push_str(self.data_section());
        if !self.saved.hints.is_empty() {
            system.push_str("\n\n## Domain knowledge from the user\n");
            system.push_str(&self.hints_section());
        }
        Message::text(Role::System, system)
    }

    /// The schema card, or a line saying no data is attached.
    pub(super) fn data_section(&self) -> &str {
        self.card
            .as_deref()
            .unwrap_or("No data folder is attached yet (the user can attach one with /data DIR).")
    }

    /// The hints, one `- ` line each.
    pub(super) fn hints_section(&self) -> String {
        self.saved
            .hints
            .iter()
            .map(|h| format!("- {h}\n"))
            .collect()
    }

    /// Writes one event to the chat's record (a failed write is warned
    /// about once, and the record says no more).
    pub(super) fn record(&mut self, event: impl Into<Event>) {
        self.transcript.record(event);
    }

    /// One user turn, with the session's architecture.
    pub fn turn(&mut self, text: &str, ev: &mut dyn FnMut(AgentEvent<'_>)) -> TurnEnd {
        self.interrupt.store(false, Ordering::SeqCst);
        let user = Message::text(Role::User, text);
        self.record(MessageEvent::of(None, None, user.clone()));
        match self.saved.messages.last_mut() {
            // The last turn was stopped before any reply: one user message
            // of both (strict chat templates refuse two in a row), one turn
            // for `/undo`.
            Some(last) if last.role == Role::User && last.tool_calls.is_empty() => {
                let before = last.content.take().unwrap_or_default();
                last.content = Some(format!("{before}\n\n{text}"));
            }
            _ => {
                self.saved.turns.push(self.saved.messages.len());
                self.saved.messages.push(user);
            }
        }
        let end = match self.saved.arch {
            ChatArch::Single => self.react(ev),
            ChatArch::Dual => self.plan_and_execute(text, ev),
            ChatArch::Mcts => self.search_turn(text, ev),
        };
        self.record(Event::TurnEnd {
            end: format!("{end:?}"),
        });
        self.save();
        end
    }

    /// The chat's tools (no `finish` or `decline`: a text answer ends a
    /// turn, and says so when the data cannot answer; `search_docs` with
    /// `--rag`).
    pub(super) fn chat_tools(&self) -> Vec<ToolSpec> {
        tools::offered(self.options.docs.is_some())
            .into_iter()
            .filter(|s| s.name != "finish" && s.name != "decline")
            .collect()
    }

    /// Single: the loop on the conversation itself until the model answers.
    fn react(&mut self, ev: &mut dyn FnMut(AgentEvent<'_>)) -> TurnEnd {
        let specs = self.chat_tools();
        let mut messages = vec![self.system_message()];
        messages.append(&mut self.saved.messages);
        let compactions = self.compactions;
        let stop = self.converse_turn(&mut messages, &specs, None, None, ev);
        self.saved.messages = messages.split_off(1);
        if self.compactions != compactions {
            self.after_compaction();
        }
        self.turn_end(stop, ev)
    }

    /// After a compaction of the conversation: the turns before it cannot
    /// be undone one by one any more; the turn whose question was kept
    /// (found by its text) still can.
    fn after_compaction(&mut self) {
        let question = self
            .saved
            .turns
            .last()
            .and_then(|&t| self.saved.messages.get(t))
            .cloned();
        self.saved.turns = question
            .and_then(|q| self.saved.messages.iter().rposition(|m| *m == q))
            .into_iter()
            .collect();
    }

    /// Compacts the conversation now (`/compact`): every round but the
    /// latest is folded into one note (see [`crate::agent::context`]).
    pub fn compact(&mut self, ev: &mut dyn FnMut(AgentEvent<'_>)) -> Option<String> {
        let specs = self.chat_tools();
        let mut messages = vec![self.system_message()];
        messages.append(&mut self.saved.messages);
        let flag = self.options.context_window;
        let learnt = self.context.clone();
        let done = self.with_turn(None, ev, |turn, state| {
            // With no window known, /compact folds as if the request
            // filled it.
            if state.context.window().is_none() {
                state.context = ContextKeeper::new(Some(
                    (state.context.estimate(&messages, &specs) * 2).max(2048),
                ));
            }
            fit_history(turn, &mut messages, &specs, state, flag, None, true)
        });
        // A window made up for /compact is not the model's.
        if learnt.window().is_none() {
            self.context = learnt;
        }
        self.saved.messages = messages.split_off(1);
        if done.is_some() {
            self.saved.turns.clear();
            self.save();
        }
        done.map(|d| d.line())
    }

    /// How a turn ends, by how its conversation stopped. A `finish` (not
    /// offered in chat, but a model or a recorded solve session may call it)
    /// ends the turn with its summary as the answer.
    pub(super) fn turn_end(&self, stop: Stop, ev: &mut dyn FnMut(AgentEvent<'_>)) -> TurnEnd {
        match stop {
            Stop::Answered(_) => TurnEnd::Answered,
            Stop::Finished(summary) | Stop::StepDone(summary) | Stop::Declined(summary) => {
                ev(AgentEvent::Text(&summary));
                ev(AgentEvent::MessageDone { round: 0 });
                TurnEnd::Answered
            }
            Stop::GaveUp { .. } => TurnEnd::RoundLimit(self.options.max_rounds),
            Stop::End(Ending::Interrupted(_)) => TurnEnd::Interrupted,
            Stop::End(Ending::Failed(why) | Ending::Error(why)) => TurnEnd::Failed(why),
            Stop::End(Ending::Finished | Ending::Declined(_)) => TurnEnd::Answered,
        }
    }

    /// Runs the one conversation loop for a turn or a plan step: a text
    /// answer ends it, Ctrl-C (the `interrupt` flag) stops the model call or
    /// the running cell, successful cells join the saved journal and the
    /// last failing one is kept for `/edit`.
    pub(super) fn converse_turn(
        &mut self,
        messages: &mut Vec<Message>,
        specs: &[ToolSpec],
        max_failures: Option<usize>,
        agent: Option<&'static str>,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Stop {
        let limits = ConverseLimits {
            run: AgentLimits {
                max_rounds: usize::MAX,
                budget: Duration::from_secs(365 * 24 * 3600),
                context_window: self.options.context_window,
                ..AgentLimits::default()
            },
            max_rounds: self.options.max_rounds,
            max_failures,
        };
        self.with_turn(agent, ev, |turn, state| {
            converse(turn, messages, specs, &limits, state)
        })
    }

    /// Runs `work` with the chat's [`Turn`] (its model, its sandbox's tools,
    /// Ctrl-C as the stop, successful cells joining the journal and the
    /// last failing one kept for `/edit`) and a run state that carries the
    /// context window across turns; then counts its tokens and
    /// compactions.
    fn with_turn<R>(
        &mut self,
        agent: Option<&'static str>,
        ev: &mut dyn FnMut(AgentEvent<'_>),
        work: impl FnOnce(&mut Turn<'_, '_>, &mut RunState) -> R,
    ) -> R {
        let interrupt = self.interrupt;
        let mut model = ChatModel {
            backend: &mut self.backend,
            reopen: &self.reopen,
            interrupt,
        };
        let (mut toolbox, _stopper) = sandbox_tools(
            &mut self.session,
            self.saved.data_dir.clone(),
            self.options.docs.as_deref(),
            self.checks.clone(),
            self.options.vision_feedback,
            interrupt,
        );
        let (cells, last_failed) = (&mut self.saved.cells, &mut self.last_failed);
        let mut events = |event: AgentEvent<'_>| {
            if let AgentEvent::Observation {
                code: Some(code),
                ok,
                ..
            } = &event
            {
                keep_cell(cells, last_failed, code, *ok);
            }
            ev(event);
        };
        let stop = move || {
            interrupt
                .swap(false, Ordering::SeqCst)
                .then(|| Ending::Interrupted("the user interrupted".into()))
        };
        let mut state = RunState::new();
        state.context = self.context.clone();
        let mut turn = Turn {
            model: &mut model,
            toolbox: &mut toolbox,
            memory: &mut self.memory,
            transcript: &mut self.transcript,
            events: &mut events,
            agent,
            on_text: OnText::Answer,
            stop: &stop,
        };
        let result = work(&mut turn, &mut state);
        drop(toolbox);
        self.add_usage(state.usage);
        self.context = state.context;
        self.compactions += state.compactions;
        result
    }

    pub(super) fn add_usage(&mut self, usage: Usage) {
        self.usage.prompt_tokens += usage.prompt_tokens;
        self.usage.completion_tokens += usage.completion_tokens;
        self.usage.estimated |= usage.estimated;
        self.usage.prefix_tokens += usage.prefix_tokens;
    }

    /// One model call outside the loop (the Planner's), streamed and
    /// cancellable like the loop's.
    pub(super) fn ask(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<ChatResponse, TurnEnd> {
        let mut model = ChatModel {
            backend: &mut self.backend,
            reopen: &self.reopen,
            interrupt: self.interrupt,
        };
        match model.ask(messages, specs, &mut |t| ev(AgentEvent::Text(t))) {
            Ok(r) => {
                self.add_usage(r.usage);
                Ok(r)
            }
            Err(err) => Err(self.turn_end(Stop::End(ending_of(err)), ev)),
        }
    }

    /// Runs the user's own code (`/run`, `/edit`) and tells the model about
    /// it in the conversation. `(observation, ok)`.
    pub fn run_user_code(
        &mut self,
        code: &str,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<(String, bool), ChatError> {
        self.interrupt.store(false, Ordering::SeqCst);
        let arguments = json!({ "code": code }).to_string();
        ev(AgentEvent::CellRunning);
        let run = {
            let (mut toolbox, _stopper) = sandbox_tools(
                &mut self.session,
                self.saved.data_dir.clone(),
                self.options.docs.as_deref(),
                self.checks.clone(),
                false,
                self.interrupt,
            );
            run_tool(&mut toolbox, &mut self.memory, EXECUTE_PYTHON, &arguments)?
        };
        let ok = run
            .cell
            .as_ref()
            .is_some_and(|c| c.status == CellStatus::Ok);
        let cell = run.cell_record();
        let text = run.text;
        ev(AgentEvent::Observation {
            round: 0,
            name: EXECUTE_PYTHON,
            code: Some(code),
            text: &text,
            ok,
            status: &run.shown,
            seconds: run.cell.as_ref().map_or(0.0, |c| c.wall.as_secs_f64()),
        });
        if !run.images.is_empty() {
            ev(AgentEvent::Figures { paths: &run.images });
        }
        keep_cell(&mut self.saved.cells, &mut self.last_failed, code, ok);
        self.interrupt.store(false, Ordering::SeqCst);
        self.saved.turns.push(self.saved.messages.len());
        self.saved.messages.push(Message::text(
            Role::User,
            format!("I ran this code in the sandbox myself:\n```python\n{code}\n```\nObservation:\n{text}"),
        ));
        self.record(Event::UserCell(UserCell {
            code: code.to_string(),
            ok,
            observation: text.clone(),
            cell,
        }));
        self.save();
        Ok((text, ok))
    }

    /// One line per namespace variable.
    pub fn variables(&mut self) -> Result<Vec<String>, ChatError> {
        let vars = self.session.variables()?;
        Ok(vars
            .iter()
            .map(|v| format!("{}  {}  {}", v.name, v.kind, v.summary))
            .collect())
    }

    /// A closer look at one variable (type, CRS, shape, head or repr).
    pub fn inspect(&mut self, name: &str) -> Result<String, ChatError> {
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(ChatError::NotAName(name.to_string()));
        }
        // A name the namespace lacks is said so, with the names it has
        // (the static analysis reads the live namespace; nothing runs).
        let findings = self.session.analyse(name)?;
        if let Some(missing) = findings.iter().find(|f| f.kind == "name") {
            return Err(ChatError::NoSuchVariable(missing.message.clone()));
        }
        // Long values (a polygon's WKT) are cut at 60 characters so that
        // the table's columns stay aligned.
        let code = format!(
            "_gc_v = {name}\nprint(type(_gc_v).__module__ + '.' + type(_gc_v).__name__)\n\
             if hasattr(_gc_v, 'crs'): print('CRS:', _gc_v.crs)\n\
             if hasattr(_gc_v, 'shape'): print('shape:', _gc_v.shape)\n\
             if hasattr(_gc_v, 'columns'): print(_gc_v.dtypes.to_string())\n\
             import pandas as _gc_pd\n\
             with _gc_pd.option_context('display.max_colwidth', 60, 'display.width', 160):\n    print(repr(_gc_v.head() if hasattr(_gc_v, 'head') else _gc_v)[:4000])\n\
             del _gc_v, _gc_pd"
        );
        // A look, not a step of the analysis: kept out of the journal (and
        // so out of solution.py, /save and a resumed chat's replay).
        let outcome = self.session.execute_unrecorded(&code)?;
        let text = crate::observation::render(&outcome);
        Ok(text
            .lines()
            .filter(|l| !l.starts_with("[variables]"))
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// Attaches a data folder and returns its schema card.
    pub fn attach_data(&mut self, dir: &Path) -> Result<String, ChatError> {
        let dir = std::fs::canonicalize(dir).map_err(io(dir))?;
        if !dir.is_dir() {
            return Err(ChatError::NotAFolder(dir));
        }
        link_data(self.workdir(), Some(&dir))?;
        // The sandbox sees only the folders it was opened with: a new
        // worker gets this one, and the session's cells are replayed into it.
        self.session.set_readable(std::slice::from_ref(&dir))?;
        let card = data_card(&dir, &mut self.session);
        if self.options.output_checks {
            self.checks = Some(OutputChecks::new(Some(&dir), ""));
        }
        self.saved.data_dir = Some(dir);
        self.card = Some(card.clone());
        self.save();
        Ok(card)
    }

    /// The data files and the outputs made so far.
    pub fn files(&self) -> String {
        let mut text = match &self.saved.data_dir {
            Some(dir) => prompt::data_listing(Some(dir), "data/"),
            None => "no data folder attached (/data DIR)\n".to_string(),
        };
        let outputs = crate::card::files_under(&self.workdir().join("pred_results"));
        text.push_str(&format!("{} file(s) in `pred_results/`:\n", outputs.len()));
        for (rel, size) in outputs {
            text.push_str(&format!("- pred_results/{rel} ({size} bytes)\n"));
        }
        text
    }

    /// The consolidated script of the successful cells.
    pub fn script(&self) -> String {
        let kept = self.kept_cells();
        solution::consolidate(
            &format!("chat {}", self.saved.id),
            kept.iter().map(String::as_str),
        )
    }

    /// The script for `/save FILE`: it runs in the chat's work folder
    /// (where `data/` is linked), wherever the file is saved.
    pub fn saved_script(&self) -> String {
        let kept = self.kept_cells();
        solution::consolidate_for(
            &format!("chat {}", self.saved.id),
            kept.iter().map(String::as_str),
            self.workdir(),
        )
    }

    /// Tokens and cost so far.
    pub fn tokens(&self) -> String {
        let cost = match self.price {
            Some(p) => format!(
                "${:.4}",
                p.cost(self.usage.prompt_tokens, self.usage.completion_tokens)
            ),
            None => "cost unknown".into(),
        };
        let context = self
            .context
            .status()
            .map(|s| format!(" · {s}"))
            .unwrap_or_default();
        format!(
            "{} tokens in / {} out{} · {cost}{context}",
            self.usage.prompt_tokens,
            self.usage.completion_tokens,
            if self.usage.estimated {
                " (partly estimated)"
            } else {
                ""
            }
        )
    }

    /// A fresh namespace (the conversation stays; the model is told).
    pub fn reset(&mut self) -> Result<(), ChatError> {
        let workdir = self.workdir().to_path_buf();
        // One live session per folder: the old one ends first.
        let sink = self.session.output_sink();
        self.session.end();
        self.session = Session::open_in(
            &self.zygote,
            &chat_dirs(&workdir, self.saved.data_dir.as_deref()),
            self.options.sandbox.clone(),
        )?;
        self.session.set_output_sink(sink);
        self.saved.cells.clear();
        self.last_failed = None;
        self.saved.messages.push(Message::text(
            Role::User,
            "(The sandbox was reset: every variable and import is gone.)",
        ));
        self.record(Event::Reset {});
        self.save();
        Ok(())
    }

    /// Drops the last turn from the conversation (the namespace keeps what
    /// its cells made). False when there is no turn.
    pub fn undo(&mut self) -> bool {
        let Some(start) = self.saved.turns.pop() else {
            return false;
        };
        self.saved.messages.truncate(start);
        self.record(Event::Undo { to: start });
        self.save();
        true
    }

    /// Copies the transcript, `solution.py`, `chat.json` and the outputs into
    /// `dir`, links the data folder there as `data`, and writes
    /// `solution.ipynb` (the kept cells with their outputs).
    pub fn export(&self, dir: &Path) -> Result<usize, ChatError> {
        let out = dir.join("pred_results");
        std::fs::create_dir_all(&out).map_err(io(&out))?;
        let session = self.saved.dir();
        for name in ["transcript.jsonl", "chat.json"] {
            let to = dir.join(name);
            std::fs::copy(session.join(name), &to).map_err(io(&to))?;
        }
        let script = dir.join("solution.py");
        crate::util::write_atomic(&script, self.script().as_bytes()).map_err(io(&script))?;
        let mut copied = 3;
        // The outputs are the cells' files: each is opened beneath the
        // folder as the cell could (crate::beneath); a link out of it, a
        // FIFO or a file the sandbox could not read is left behind.
        let pred = self.workdir().join("pred_results");
        let folder = crate::beneath::Dir::open(&pred).map_err(io(&pred))?;
        for (rel, _) in folder.walk(crate::beneath::WalkBudget::default()).files {
            let Ok((mut from, _)) = folder.open_file(&rel) else {
                continue;
            };
            let to = out.join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            let mut file = std::fs::File::create(&to).map_err(io(&to))?;
            std::io::copy(&mut from, &mut file).map_err(io(&to))?;
            copied += 1;
        }
        // The data beside them, so solution.py and the notebook run there.
        let data = dir.join("data");
        if let (Some(source), Err(_)) = (&self.saved.data_dir, std::fs::symlink_metadata(&data)) {
            std::os::unix::fs::symlink(source, &data).map_err(io(&data))?;
        }
        crate::notebook::write_for_run(dir, crate::notebook::NotebookMode::Cells, None)?;
        Ok(copied + 1)
    }

    /// An image of `file` to show the user (`/show`): a PNG or JPEG as it
    /// is; a raster (band 1, decimated to ≤ 800 px, with a colour bar) or a
    /// vector layer drawn with matplotlib in a fork of the session, so that
    /// neither the namespace nor the journal notices. A relative path is
    /// looked up in the session's work dir (`pred_results/…`, `data/…`),
    /// then from the current folder. Returns the image and, for a drawn
    /// one, `true` (the caller removes it once shown).
    pub fn quick_look(&mut self, file: &Path) -> Result<(PathBuf, bool), ChatError> {
        let in_work = self.workdir().join(file);
        let path = if file.is_relative() && in_work.exists() {
            in_work
        } else {
            file.to_path_buf()
        };
        if !path.exists() {
            return Err(ChatError::Io {
                path,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        if crate::notebook::figure_mime(&path.to_string_lossy()).is_some() {
            return Ok((path, false));
        }
        let out = self.workdir().join(".gisclaw-quicklook.png");
        let code = QUICK_LOOK
            .replace(
                "{PATH}",
                &serde_json::to_string(&path.to_string_lossy()).unwrap_or_default(),
            )
            .replace(
                "{OUT}",
                &serde_json::to_string(&out.to_string_lossy()).unwrap_or_default(),
            );
        let mut fork = self.session.snapshot()?;
        let outcome = fork.execute(&code)?;
        drop(fork);
        match outcome.result.error {
            None if out.exists() => Ok((out, true)),
            error => Err(ChatError::QuickLook(error.map_or_else(
                || "nothing was drawn".to_string(),
                |e| format!("{}: {}", e.ename, e.evalue),
            ))),
        }
    }

    /// Keeps a quick look drawn by [`ChatEngine::quick_look`] where it can
    /// be opened (`work/quicklook/NAME.png`, for a terminal that cannot
    /// show images), with the data's one-line description from the card.
    pub fn keep_quick_look(
        &self,
        image: &Path,
        file: &str,
    ) -> Result<(PathBuf, String), ChatError> {
        let dir = self.workdir().join("quicklook");
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let name: String = file
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let kept = dir.join(format!("{name}.png"));
        std::fs::rename(image, &kept).map_err(io(&kept))?;
        // A data file is described from the data folder itself (the work
        // dir's `data` is a link the card does not follow).
        let described = match (file.strip_prefix("data/"), &self.saved.data_dir) {
            (Some(rel), Some(data)) => crate::card::inspect_file(data, "data/", rel),
            _ => crate::card::inspect_file(self.workdir(), "", file),
        };
        let summary = described
            .ok()
            .and_then(|entry| {
                entry
                    .lines()
                    .next()
                    .map(|l| l.trim_start_matches("- ").to_string())
            })
            .unwrap_or_default();
        Ok((kept, summary))
    }

    /// How long the sandbox has run cells.
    pub fn sandbox_time(&self) -> Duration {
        self.session.spent()
    }
}

/// The cell `/show` runs in a fork of the session: a raster's band 1 or a
/// vector layer, drawn to `{OUT}`.
const QUICK_LOOK: &str = r#"import os as _os
import matplotlib.pyplot as _plt
_path, _out = {PATH}, {OUT}
_fig, _ax = _plt.subplots(figsize=(7, 6))
try:
    import rasterio as _rio
    with _rio.open(_path) as _src:
        _step = max(1, max(_src.width, _src.height) // 800)
        _band = _src.read(1, out_shape=(max(1, _src.height // _step), max(1, _src.width // _step)), masked=True)
        _b = _src.bounds
    _img = _ax.imshow(_band, extent=(_b.left, _b.right, _b.bottom, _b.top))
    _fig.colorbar(_img, ax=_ax, shrink=0.8)
except Exception as _raster_error:
    import geopandas as _gpd
    _layer = _gpd.read_file(_path)
    if "geometry" in _layer and _layer.geometry.notna().any():
        _layer.plot(ax=_ax)
    else:
        # A table: its coordinate columns as points.
        import pandas as _pd
        _table = _pd.read_csv(_path) if _path.lower().endswith((".csv", ".tsv")) else _pd.DataFrame(_layer)
        _names = {c.lower(): c for c in _table.columns}
        _xs = [_names[n] for n in ("lon", "longitude", "lng", "x", "easting", "long") if n in _names]
        _ys = [_names[n] for n in ("lat", "latitude", "y", "northing") if n in _names]
        if not (_xs and _ys):
            raise ValueError("no geometry and no coordinate columns (lon/lat, x/y, easting/northing) to draw")
        _ax.scatter(_table[_xs[0]], _table[_ys[0]], s=8)
        _ax.set_xlabel(_xs[0])
        _ax.set_ylabel(_ys[0])
_ax.set_title(_os.path.basename(_path))
_fig.savefig(_out, dpi=100, bbox_inches="tight")
_plt.close(_fig)
"#;

/// The schema card of a data folder as the model sees it (`data/`).
/// The tools on the chat's session (`data/` in its work dir, outputs under
/// it, `search_docs` with `--rag`), and a watcher that stops the running
/// cell when the user presses Ctrl-C (the `interrupt` flag).
pub(super) fn sandbox_tools<'s>(
    session: &'s mut Session,
    data_dir: Option<std::path::PathBuf>,
    docs: Option<&'s crate::knowledge::Library>,
    checks: Option<OutputChecks>,
    vision: bool,
    interrupt: &'static AtomicBool,
) -> (Toolbox<'s>, CellStopper) {
    let stopper = CellStopper::watch(session.canceller(), move || {
        interrupt.load(Ordering::SeqCst)
    });
    let out_dir = session.workdir().to_path_buf();
    let toolbox = Toolbox {
        session,
        out_dir,
        data_dir,
        data_path: "data/".into(),
        outputs: Vec::new(),
        docs,
        checks,
        vision,
    };
    (toolbox, stopper)
}

/// Keeps a cell's code: in the saved journal when it ran, for `/edit` when
/// it failed.
pub(super) fn keep_cell(
    cells: &mut Vec<String>,
    last_failed: &mut Option<String>,
    code: &str,
    ok: bool,
) {
    if ok {
        cells.push(code.to_string());
        *last_failed = None;
    } else {
        *last_failed = Some(code.to_string());
    }
}

/// Chat's way of asking the model: its text streamed to the screen, and a
/// Ctrl-C (the `interrupt` flag) that abandons the call. The call runs on a
/// helper thread; abandoned, a live backend is re-opened for the next call
/// (the request's thread ends on its own), a replay is waited for (it is
/// instant).
pub(super) struct ChatModel<'e> {
    pub(super) backend: &'e mut Option<Box<dyn ChatBackend>>,
    pub(super) reopen: &'e Option<LiveConfig>,
    pub(super) interrupt: &'static AtomicBool,
}

impl Model for ChatModel<'_> {
    fn want_logprobs(&mut self, on: bool) -> bool {
        self.backend.as_mut().is_some_and(|b| b.want_logprobs(on))
    }

    fn sees_images(&mut self) -> bool {
        self.backend.as_mut().is_some_and(|b| b.sees_images())
    }

    fn context_window(&mut self) -> Option<crate::llm::window::ContextWindow> {
        self.backend.as_mut().and_then(|b| b.context_window())
    }

    fn is_replay(&self) -> bool {
        self.backend.as_ref().is_some_and(|b| b.is_replay())
    }

    fn ask(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError> {
        let mut backend = match self.backend.take() {
            Some(b) => b,
            None => match self.reopen {
                Some(config) => crate::llm::open_live(config.clone())?,
                None => return Err(LlmError::Backend("the model backend is gone".into())),
            },
        };
        let (messages, specs) = (messages.to_vec(), specs.to_vec());
        enum Piece {
            Text(String),
            Done(Box<dyn ChatBackend>, Box<Result<ChatResponse, LlmError>>),
        }
        let (tx, rx) = mpsc::channel::<Piece>();
        std::thread::spawn(move || {
            let text_tx = tx.clone();
            let result = backend.chat_streaming(&messages, &specs, &mut |t| {
                let _ = text_tx.send(Piece::Text(t.to_string()));
            });
            let _ = tx.send(Piece::Done(backend, Box::new(result)));
        });
        let mut interrupted = false;
        loop {
            match rx.recv_timeout(Duration::from_millis(30)) {
                Ok(Piece::Text(t)) if !interrupted => on_text(&t),
                Ok(Piece::Text(_)) => {}
                Ok(Piece::Done(backend, result)) => {
                    *self.backend = Some(backend);
                    return if interrupted {
                        Err(LlmError::Cancelled)
                    } else {
                        *result
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !interrupted && self.interrupt.swap(false, Ordering::SeqCst) {
                        interrupted = true;
                        if self.reopen.is_some() {
                            // Drop the request: its thread ends on its own.
                            return Err(LlmError::Cancelled);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(LlmError::Backend(
                        "the model call failed unexpectedly".into(),
                    ))
                }
            }
        }
    }
}

/// The card of `dir`, checked by what `session`'s libraries read of it.
fn data_card(dir: &Path, session: &mut Session) -> String {
    crate::card::checked_card(dir, "data/", crate::card::CARD_TOKEN_BUDGET, session)
}

/// Points `workdir/data` at `dir` (replacing an earlier link).
fn link_data(workdir: &Path, dir: Option<&Path>) -> Result<(), ChatError> {
    let link = workdir.join("data");
    if let Ok(meta) = std::fs::symlink_metadata(&link) {
        if !meta.file_type().is_symlink() {
            return Err(ChatError::NotOurLink(link));
        }
        std::fs::remove_file(&link).map_err(io(&link))?;
    }
    if let Some(dir) = dir {
        std::os::unix::fs::symlink(dir, &link).map_err(io(&link))?;
    }
    Ok(())
}
