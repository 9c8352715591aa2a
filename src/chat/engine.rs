//! The chat session behind `gisclaw chat`: one persistent sandbox session,
//! one conversation, and the commands the REPL offers on them. Each user
//! turn runs the model with the sandbox's tools until it answers in plain
//! text (or a bound is hit); a Ctrl-C (the `interrupt` flag) stops the
//! model call or the running cell and returns with everything intact.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::store::{ChatArch, SavedChat};
use crate::agent::dual::PlanStep;
use crate::agent::memory::ErrorMemory;
use crate::agent::tools::{self, Toolbox};
use crate::agent::transcript::Transcript;
use crate::agent::{prompt, solution};
use crate::llm::config::LiveConfig;
use crate::llm::tokens::Price;
use crate::llm::{adapt, ChatBackend, ChatResponse, LlmError, Message, Role, ToolSpec, Usage};
use crate::sandbox::{CellStatus, SandboxConfig, SandboxError, Session, Zygote};

/// What the engine tells the screen.
#[derive(Debug)]
pub enum ChatEvent<'a> {
    /// A piece of the model's text as it arrives.
    Text(&'a str),
    /// The model's message is complete.
    MessageDone,
    /// The model calls a tool (`code` for `execute_python`).
    Tool {
        /// Tool name.
        name: &'a str,
        /// Its code, for `execute_python`.
        code: Option<&'a str>,
        /// Its raw arguments otherwise.
        arguments: &'a str,
    },
    /// A cell started running.
    CellRunning,
    /// A tool's observation.
    Observation {
        /// The text the model sees.
        text: &'a str,
        /// False for failing cells and refused calls.
        ok: bool,
    },
    /// Dual: the Planner's plan (`replan` 0 for the first).
    Plan {
        /// The steps, in order.
        steps: &'a [PlanStep],
        /// Which replanning cycle made it.
        replan: usize,
    },
    /// Dual: a step starts.
    Step {
        /// 1-based.
        index: usize,
        /// Steps in the plan.
        of: usize,
        /// The step's goal.
        goal: &'a str,
    },
    /// Dual: the worker marked the step done.
    StepDone {
        /// What it made.
        summary: &'a str,
    },
    /// Dual: the step failed and the plan is redone.
    StepFailed {
        /// Why.
        reason: &'a str,
    },
}

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

/// What one exchange with the model came to.
#[derive(Debug)]
pub(super) enum Exchange {
    /// The model answered in text (no tool call): its text.
    Answered(String),
    /// It called tools.
    Called {
        /// Observations of the cells that failed.
        failed: Vec<String>,
        /// The summary of a `step_done` call.
        step_done: Option<String>,
    },
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
}

const CHAT_NOTE: &str = "\n\n## Chat\nYou work with a GIS analyst in an interactive session. Use the tools to do what they ask, \
step by step. When the request is done, or you need their input, answer in plain text without a tool call: that ends your \
turn. There is no finish tool. Keep files you make under `pred_results/`.";

/// A live chat session.
pub struct ChatEngine {
    pub(super) zygote: Arc<Zygote>,
    session: Session,
    backend: Option<Box<dyn ChatBackend>>,
    reopen: Option<LiveConfig>,
    describe: String,
    price: Option<Price>,
    system: String,
    /// The attached data folder's schema card (made once per attach: it
    /// reads every file with GDAL).
    card: Option<String>,
    transcript: Transcript,
    memory: ErrorMemory,
    interrupt: &'static AtomicBool,
    pub(super) options: ChatOptions,
    /// The saved state: conversation, hints, data folder, cell journal.
    pub saved: SavedChat,
    /// Tokens used in this process.
    pub usage: Usage,
    /// The last cell that failed (for `/edit`).
    pub last_failed: Option<String>,
}

/// What resuming rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    /// Cells replayed successfully.
    pub replayed: usize,
    /// Cells that failed on replay (their first line).
    pub failed: Vec<String>,
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
    ) -> Result<(ChatEngine, Rebuilt), String> {
        let dir = saved.dir();
        let workdir = dir.join("work");
        std::fs::create_dir_all(workdir.join("pred_results"))
            .map_err(|e| format!("{}: {e}", workdir.display()))?;
        link_data(&workdir, saved.data_dir.as_deref())?;
        let mut session = Session::open_with(zygote, &workdir, options.sandbox.clone())
            .map_err(|e| e.to_string())?;
        let mut rebuilt = Rebuilt {
            replayed: 0,
            failed: Vec::new(),
        };
        let mut kept = Vec::new();
        for cell in &saved.cells {
            match session.execute(cell) {
                Ok(o) if o.status == CellStatus::Ok => {
                    rebuilt.replayed += 1;
                    kept.push(cell.clone());
                }
                Ok(_) => rebuilt
                    .failed
                    .push(cell.lines().next().unwrap_or("").to_string()),
                Err(e) => return Err(format!("rebuilding the namespace: {e}")),
            }
        }
        let packages = prompt::listed_packages(&zygote.info().packages);
        let system =
            prompt::sandbox_system_prompt("data/", &packages, &zygote.config().blocked_imports)
                + CHAT_NOTE;
        let mut transcript = Transcript::append(&dir.join("transcript.jsonl"))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let describe = backend.describe();
        let _ = transcript.record("start", json!({ "chat": saved.id, "backend": describe, "replay": backend.is_replay(), "resumed_cells": rebuilt.replayed }));
        let price = backend.price();
        let card = saved.data_dir.as_deref().map(data_card);
        let mut saved = saved;
        saved.cells = kept;
        let engine = ChatEngine {
            zygote: zygote.clone(),
            session,
            backend: Some(backend),
            reopen,
            describe,
            price,
            system,
            card,
            transcript,
            memory: ErrorMemory::in_memory(),
            interrupt,
            options,
            saved,
            usage: Usage::default(),
            last_failed: None,
        };
        engine.save();
        Ok((engine, rebuilt))
    }

    /// The session's work dir (where `data/` and `pred_results/` are).
    pub fn workdir(&self) -> &Path {
        self.session.workdir()
    }

    /// The backend's description.
    pub fn backend(&self) -> &str {
        &self.describe
    }

    /// Saves the session (errors are noted in the log, never fatal).
    pub fn save(&self) {
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

    pub(super) fn record(&mut self, kind: &str, fields: serde_json::Value) {
        let _ = self.transcript.record(kind, fields);
    }

    /// One user turn, with the session's architecture.
    pub fn turn(&mut self, text: &str, ev: &mut dyn FnMut(ChatEvent<'_>)) -> TurnEnd {
        self.interrupt.store(false, Ordering::SeqCst);
        self.saved.turns.push(self.saved.messages.len());
        let user = Message::text(Role::User, text);
        self.record("message", json!({ "message": user }));
        self.saved.messages.push(user);
        let end = match self.saved.arch {
            ChatArch::Single => self.react(ev),
            ChatArch::Dual => self.plan_and_execute(text, ev),
        };
        self.record("turn_end", json!({ "end": format!("{end:?}") }));
        self.save();
        end
    }

    /// The chat's tools (no `finish`: a text answer ends a turn;
    /// `search_docs` with `--rag`).
    pub(super) fn chat_tools(&self) -> Vec<ToolSpec> {
        tools::offered(self.options.docs.is_some())
            .into_iter()
            .filter(|s| s.name != "finish")
            .collect()
    }

    /// Single: exchanges on the conversation itself until the model answers.
    fn react(&mut self, ev: &mut dyn FnMut(ChatEvent<'_>)) -> TurnEnd {
        let specs = self.chat_tools();
        let prefix = [self.system_message()];
        let mut conversation = std::mem::take(&mut self.saved.messages);
        let mut end = TurnEnd::RoundLimit(self.options.max_rounds);
        for round in 1..=self.options.max_rounds {
            match self.exchange(&prefix, &mut conversation, &specs, round, "single", ev) {
                Ok(Exchange::Answered(_)) => {
                    end = TurnEnd::Answered;
                    break;
                }
                Ok(Exchange::Called { .. }) => {}
                Err(e) => {
                    end = e;
                    break;
                }
            }
        }
        self.saved.messages = conversation;
        end
    }

    /// One exchange: the model is sent `prefix` then `log`; its message and
    /// the results of the tools it called are appended to `log`. A
    /// `step_done` call (offered to dual workers) is answered, not run.
    pub(super) fn exchange(
        &mut self,
        prefix: &[Message],
        log: &mut Vec<Message>,
        specs: &[ToolSpec],
        round: usize,
        agent: &str,
        ev: &mut dyn FnMut(ChatEvent<'_>),
    ) -> Result<Exchange, TurnEnd> {
        let mut messages = prefix.to_vec();
        messages.extend(log.iter().cloned());
        let response = self.ask(messages, specs, ev)?;
        let adapted = adapt::adapt(response.message, round);
        ev(ChatEvent::MessageDone);
        self.record("message", json!({ "agent": agent, "message": adapted.message, "usage": response.usage, "repairs": adapted.repairs }));
        log.push(adapted.message.clone());
        if adapted.message.tool_calls.is_empty() {
            return Ok(Exchange::Answered(
                adapted.message.content.unwrap_or_default(),
            ));
        }
        let mut failed = Vec::new();
        let mut step_done = None;
        let calls = adapted.message.tool_calls;
        for (i, call) in calls.iter().enumerate() {
            let name = call.function.name.as_str();
            let malformed = adapted.malformed.iter().find(|m| m.call_id == call.id);
            let (text, ok) = if let Some(bad) = malformed {
                ev(ChatEvent::Tool {
                    name,
                    code: None,
                    arguments: &call.function.arguments,
                });
                (tools::malformed_reply(&bad.reason), false)
            } else if name == "step_done" && specs.iter().any(|s| s.name == "step_done") {
                let summary = tools::summary_of(&call.function.arguments);
                ev(ChatEvent::StepDone { summary: &summary });
                step_done = Some(summary);
                ("Step recorded.".to_string(), true)
            } else if name == "finish" {
                // Not offered in chat, but a model (or a recorded solve
                // session) may call it: its summary is the answer that ends
                // the turn, and the calls after it are not run.
                let summary = tools::summary_of(&call.function.arguments);
                ev(ChatEvent::Tool {
                    name,
                    code: None,
                    arguments: &call.function.arguments,
                });
                let text = "The turn ends here with your summary.".to_string();
                self.record("tool", json!({ "agent": agent, "name": name, "arguments": call.function.arguments, "ok": true, "observation": text }));
                log.push(Message::tool_result(&call.id, text));
                for rest in &calls[i + 1..] {
                    log.push(Message::tool_result(
                        &rest.id,
                        "Not run: the turn ended with finish.",
                    ));
                }
                ev(ChatEvent::Text(&summary));
                ev(ChatEvent::MessageDone);
                return Ok(Exchange::Answered(summary));
            } else {
                let code = tools::code_of(name, &call.function.arguments);
                ev(ChatEvent::Tool {
                    name,
                    code: code.as_deref(),
                    arguments: &call.function.arguments,
                });
                let (text, ok) =
                    match self.call_tool(name, &call.function.arguments, code.as_deref(), ev) {
                        Ok(r) => r,
                        Err(e) => return Err(TurnEnd::Failed(format!("sandbox failure: {e}"))),
                    };
                ev(ChatEvent::Observation { text: &text, ok });
                if !ok && code.is_some() {
                    failed.push(text.clone());
                }
                (text, ok)
            };
            self.record("tool", json!({ "agent": agent, "name": name, "arguments": call.function.arguments, "ok": ok, "observation": text }));
            log.push(Message::tool_result(&call.id, text));
            if self.interrupt.swap(false, Ordering::SeqCst) {
                // Every call of the message gets a result, so the
                // conversation stays well-formed.
                for rest in &calls[i + 1..] {
                    log.push(Message::tool_result(
                        &rest.id,
                        "Not run: the user interrupted.",
                    ));
                }
                return Err(TurnEnd::Interrupted);
            }
        }
        Ok(Exchange::Called { failed, step_done })
    }

    /// One model call, cancellable with the interrupt flag: the call runs on
    /// a helper thread; on Ctrl-C its answer is dropped (a live backend is
    /// re-opened for the next turn; a replay is waited for, it is instant).
    pub(super) fn ask(
        &mut self,
        messages: Vec<Message>,
        specs: &[ToolSpec],
        ev: &mut dyn FnMut(ChatEvent<'_>),
    ) -> Result<ChatResponse, TurnEnd> {
        let mut backend = match self.backend.take() {
            Some(b) => b,
            None => match &self.reopen {
                Some(config) => crate::llm::open_live(config.clone())
                    .map_err(|e| TurnEnd::Failed(e.to_string()))?,
                None => return Err(TurnEnd::Failed("the model backend is gone".into())),
            },
        };
        let specs = specs.to_vec();
        enum Piece {
            Text(String),
            Done(Box<dyn ChatBackend>, Result<ChatResponse, LlmError>),
        }
        let (tx, rx) = mpsc::channel::<Piece>();
        std::thread::spawn(move || {
            let text_tx = tx.clone();
            let result = backend.chat_streaming(&messages, &specs, &mut |t| {
                let _ = text_tx.send(Piece::Text(t.to_string()));
            });
            let _ = tx.send(Piece::Done(backend, result));
        });
        let mut interrupted = false;
        loop {
            match rx.recv_timeout(Duration::from_millis(30)) {
                Ok(Piece::Text(t)) if !interrupted => ev(ChatEvent::Text(&t)),
                Ok(Piece::Text(_)) => {}
                Ok(Piece::Done(backend, result)) => {
                    self.backend = Some(backend);
                    if interrupted {
                        return Err(TurnEnd::Interrupted);
                    }
                    return match result {
                        Ok(r) => {
                            self.usage.prompt_tokens += r.usage.prompt_tokens;
                            self.usage.completion_tokens += r.usage.completion_tokens;
                            self.usage.estimated |= r.usage.estimated;
                            Ok(r)
                        }
                        Err(LlmError::ReplayExhausted(n)) => Err(TurnEnd::Failed(format!(
                            "the replay has no more messages (after {n})"
                        ))),
                        Err(e) => Err(TurnEnd::Failed(e.to_string())),
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    if !interrupted && self.interrupt.swap(false, Ordering::SeqCst) {
                        interrupted = true;
                        if self.reopen.is_some() {
                            // Drop the request: its thread ends on its own.
                            return Err(TurnEnd::Interrupted);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(TurnEnd::Failed("the model call failed unexpectedly".into()))
                }
            }
        }
    }

    /// Runs a tool; a cell can be interrupted with the flag. `(text, ok)`.
    fn call_tool(
        &mut self,
        name: &str,
        arguments: &str,
        code: Option<&str>,
        ev: &mut dyn FnMut(ChatEvent<'_>),
    ) -> Result<(String, bool), SandboxError> {
        if name == "execute_python" {
            ev(ChatEvent::CellRunning);
        }
        let data_dir = self.saved.data_dir.clone();
        let canceller = self.session.canceller();
        let interrupt = self.interrupt;
        let done = AtomicBool::new(false);
        let out_dir = self.session.workdir().to_path_buf();
        let mut toolbox = Toolbox {
            session: &mut self.session,
            out_dir,
            data_dir,
            data_path: "data/".into(),
            outputs: Vec::new(),
            docs: self.options.docs.as_deref(),
        };
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::SeqCst) {
                    if interrupt.load(Ordering::SeqCst) {
                        canceller.cancel();
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            let r = toolbox.call(name, arguments);
            done.store(true, Ordering::SeqCst);
            r
        })?;
        let mut text = result.text;
        let ok = match &result.cell {
            Some(cell) => {
                if let Some(c) = code {
                    if let Some(note) = self.memory.observe(c, cell) {
                        text.push_str(&note);
                    }
                    if cell.status == CellStatus::Ok {
                        self.saved.cells.push(c.to_string());
                        self.last_failed = None;
                    } else {
                        self.last_failed = Some(c.to_string());
                    }
                }
                cell.status == CellStatus::Ok
            }
            None => true,
        };
        Ok((text, ok))
    }

    /// Runs the user's own code (`/run`, `/edit`) and tells the model about
    /// it in the conversation. `(observation, ok)`.
    pub fn run_user_code(
        &mut self,
        code: &str,
        ev: &mut dyn FnMut(ChatEvent<'_>),
    ) -> Result<(String, bool), String> {
        self.interrupt.store(false, Ordering::SeqCst);
        let arguments = json!({ "code": code }).to_string();
        let (text, ok) = self
            .call_tool("execute_python", &arguments, Some(code), ev)
            .map_err(|e| format!("sandbox failure: {e}"))?;
        self.interrupt.store(false, Ordering::SeqCst);
        self.saved.turns.push(self.saved.messages.len());
        self.saved.messages.push(Message::text(
            Role::User,
            format!("I ran this code in the sandbox myself:\n```python\n{code}\n```\nObservation:\n{text}"),
        ));
        self.record(
            "user_cell",
            json!({ "code": code, "ok": ok, "observation": text }),
        );
        self.save();
        Ok((text, ok))
    }

    /// One line per namespace variable.
    pub fn variables(&mut self) -> Result<Vec<String>, String> {
        let vars = self.session.variables().map_err(|e| e.to_string())?;
        Ok(vars
            .iter()
            .map(|v| format!("{}  {}  {}", v.name, v.kind, v.summary))
            .collect())
    }

    /// A closer look at one variable (type, CRS, shape, head or repr).
    pub fn inspect(&mut self, name: &str) -> Result<String, String> {
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!("/inspect {name}: not a variable name"));
        }
        let code = format!(
            "_gc_v = {name}\nprint(type(_gc_v).__module__ + '.' + type(_gc_v).__name__)\n\
             if hasattr(_gc_v, 'crs'): print('CRS:', _gc_v.crs)\n\
             if hasattr(_gc_v, 'shape'): print('shape:', _gc_v.shape)\n\
             if hasattr(_gc_v, 'dtypes'): print(_gc_v.dtypes.to_string())\n\
             if hasattr(_gc_v, 'head'): print(_gc_v.head().to_string())\n\
             else: print(repr(_gc_v)[:2000])\ndel _gc_v"
        );
        let outcome = self.session.execute(&code).map_err(|e| e.to_string())?;
        let text = crate::observation::render(&outcome);
        Ok(text
            .lines()
            .filter(|l| !l.starts_with("[variables]"))
            .collect::<Vec<_>>()
            .join("\n"))
    }

    /// Attaches a data folder and returns its schema card.
    pub fn attach_data(&mut self, dir: &Path) -> Result<String, String> {
        let dir =
            std::fs::canonicalize(dir).map_err(|e| format!("/data {}: {e}", dir.display()))?;
        if !dir.is_dir() {
            return Err(format!("/data {}: not a folder", dir.display()));
        }
        link_data(self.workdir(), Some(&dir))?;
        // The sandbox sees only the folders it was opened with: a new
        // worker gets this one, and the session's cells are replayed into it.
        self.session
            .set_readable(std::slice::from_ref(&dir))
            .map_err(|e| format!("/data {}: {e}", dir.display()))?;
        let card = data_card(&dir);
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
        solution::consolidate(
            &format!("chat {}", self.saved.id),
            self.saved.cells.iter().map(String::as_str),
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
        format!(
            "{} tokens in / {} out{} · {cost}",
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
    pub fn reset(&mut self) -> Result<(), String> {
        let workdir = self.workdir().to_path_buf();
        self.session = Session::open_with(&self.zygote, &workdir, self.options.sandbox.clone())
            .map_err(|e| e.to_string())?;
        self.saved.cells.clear();
        self.last_failed = None;
        self.saved.messages.push(Message::text(
            Role::User,
            "(The sandbox was reset: every variable and import is gone.)",
        ));
        self.record("reset", json!({}));
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
        self.record("undo", json!({ "to": start }));
        self.save();
        true
    }

    /// Copies the transcript, `solution.py`, `chat.json` and the outputs into `dir`.
    pub fn export(&self, dir: &Path) -> Result<usize, String> {
        let fail = |e: std::io::Error| format!("/export {}: {e}", dir.display());
        std::fs::create_dir_all(dir.join("pred_results")).map_err(fail)?;
        let session = self.saved.dir();
        std::fs::copy(
            session.join("transcript.jsonl"),
            dir.join("transcript.jsonl"),
        )
        .map_err(fail)?;
        std::fs::copy(session.join("chat.json"), dir.join("chat.json")).map_err(fail)?;
        crate::util::write_atomic(&dir.join("solution.py"), self.script().as_bytes())
            .map_err(fail)?;
        let mut copied = 3;
        let pred = self.workdir().join("pred_results");
        for (rel, _) in crate::card::files_under(&pred) {
            let to = dir.join("pred_results").join(&rel);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(fail)?;
            }
            std::fs::copy(pred.join(&rel), to).map_err(fail)?;
            copied += 1;
        }
        Ok(copied)
    }

    /// How long the sandbox has run cells.
    pub fn sandbox_time(&self) -> Duration {
        self.session.spent()
    }
}

/// The schema card of a data folder as the model sees it (`data/`).
fn data_card(dir: &Path) -> String {
    crate::card::card_for_dir(dir, "data/", crate::card::CARD_TOKEN_BUDGET)
}

/// Points `workdir/data` at `dir` (replacing an earlier link).
fn link_data(workdir: &Path, dir: Option<&Path>) -> Result<(), String> {
    let link = workdir.join("data");
    if let Ok(meta) = std::fs::symlink_metadata(&link) {
        if !meta.file_type().is_symlink() {
            return Err(format!(
                "{} exists and is not gisclaw's data link",
                link.display()
            ));
        }
        std::fs::remove_file(&link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    if let Some(dir) = dir {
        std::os::unix::fs::symlink(dir, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(())
}
