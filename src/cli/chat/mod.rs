//! `gisclaw chat`: the interactive session. rustyline for input (history
//! file, multi-line with a trailing `\`, tab completion of slash commands
//! and data file names), the chat engine for the work, Ctrl-C to stop a
//! step, Ctrl-D or `/quit` to leave. The slash commands are a table in
//! `commands`, the screen renders the agent's events (`screen`), keys typed
//! during a turn are kept (`type_ahead`), completion is `completer`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gisclaw::chat::engine::{ChatEngine, ChatOptions, TurnEnd};
use gisclaw::chat::render::Style;
use gisclaw::chat::store::{self, ChatArch, SavedChat};
use gisclaw::llm::replay::ReplayBackend;
use gisclaw::llm::ChatBackend;
use gisclaw::sandbox::{SandboxConfig, Zygote};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use rustyline::Editor;

use super::common::{no_backend, BackendArgs, SandboxArgs, UsageError};

mod commands;
mod completer;
mod screen;
mod type_ahead;

use commands::{slash, Flow};
use completer::ChatHelper;
use screen::Screen;
use type_ahead::TypeAhead;

/// Options of `gisclaw chat`.
#[derive(clap::Args, Debug)]
pub struct ChatArgs {
    /// A data folder to attach at the start (`/data DIR` later).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Agent architecture of the turns: single (ReAct), dual (plan, then
    /// a worker per step) or mcts (plan, then a tree search per step);
    /// `/arch` switches later. Default: single, or the resumed session's.
    #[arg(long)]
    pub arch: Option<ChatArch>,
    /// The model backend.
    #[command(flatten)]
    pub model: BackendArgs,
    /// Play back this JSONL file of assistant messages (tests, demos).
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Resume a saved session (its id is printed at the start of every chat).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Most model rounds per user turn.
    #[arg(long, default_value_t = 20)]
    pub max_rounds: usize,
    /// Per-cell time limit, in seconds.
    #[arg(long, default_value_t = 600)]
    pub cell_timeout: u64,
    /// Give the agent `search_docs` over the library-docs index
    /// (`gisclaw knowledge build` once).
    #[arg(long)]
    pub rag: bool,
    /// Do not look inside the outputs after each cell (blank images,
    /// NaN rasters, empty layers, wrong places), nor answer a `finish` with
    /// failing checks once (an ablation).
    #[arg(long)]
    pub no_output_checks: bool,
    /// Do not show the model the figures its cells write (vision feedback
    /// is on for models whose profile says `vision = true` or `"auto"` and
    /// that see images; an ablation).
    #[arg(long)]
    pub no_vision_feedback: bool,
    /// The model's context window in tokens (default: what the server
    /// says, else the published window, else the profile's
    /// `context_window`); past 75 % of it the conversation is compacted.
    /// A replay (--replay) then refuses longer requests as llama-server
    /// does.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(512..))]
    pub context_window: Option<u64>,
    /// Confinement the sandbox must have.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// Set by the SIGINT handler; the engine polls it.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPT.store(true, Ordering::SeqCst);
}

fn install_sigint_handler() {
    // SAFETY: the handler only stores to an atomic (async-signal-safe).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// The input history file, beside the saved sessions
/// (`$XDG_DATA_HOME/gisclaw/chats/history`).
fn history_path() -> PathBuf {
    store::chats_dir().join("history")
}

fn open_backend(
    args: &ChatArgs,
) -> Result<
    (
        Box<dyn ChatBackend>,
        Option<gisclaw::llm::config::LiveConfig>,
    ),
    UsageError,
> {
    if let Some(file) = &args.replay {
        let backend = ReplayBackend::open(file).map_err(|e| UsageError(e.to_string()))?;
        return Ok(match args.context_window {
            Some(window) => (Box::new(backend.with_window(window)), None),
            None => (Box::new(backend), None),
        });
    }
    let Some(live) = args.model.resolve_live()? else {
        return Err(no_backend("--replay FILE"));
    };
    let backend = gisclaw::llm::open_live(live.clone()).map_err(|e| UsageError(e.to_string()))?;
    Ok((backend, Some(live)))
}

/// Runs `gisclaw chat`.
pub fn run(args: ChatArgs) -> anyhow::Result<ExitCode> {
    // A data folder that is not one is a usage error before anything
    // starts, as for `mcp` and `card` (inside a chat, `/data` says so and
    // the chat goes on).
    if let Some(dir) = args.data.as_ref().filter(|d| !d.is_dir()) {
        return Err(UsageError(format!("--data {}: not a folder", dir.display())).into());
    }
    let mut saved = match &args.resume {
        Some(id) => SavedChat::load(id).map_err(|e| UsageError(format!("--resume {id}: {e}")))?,
        None => SavedChat {
            id: store::new_id(),
            ..SavedChat::default()
        },
    };
    if let Some(arch) = args.arch {
        saved.arch = arch;
    }
    let (backend, reopen) = open_backend(&args)?;
    let style = Style::detect();
    let sandbox = SandboxConfig {
        cell_timeout: Duration::from_secs(args.cell_timeout),
        task_budget: Duration::from_secs(365 * 24 * 3600),
        ..args.sandbox.config()?
    };
    let zygote = Zygote::start(sandbox.clone())?;
    let resuming = args.resume.is_some();
    let options = ChatOptions {
        max_rounds: args.max_rounds,
        sandbox,
        docs: super::common::open_docs(args.rag)?,
        output_checks: !args.no_output_checks,
        vision_feedback: !args.no_vision_feedback,
        context_window: args.context_window,
    };
    let (mut engine, rebuilt) =
        ChatEngine::open(&zygote, backend, reopen, saved, options, &INTERRUPT)
            .map_err(|e| UsageError(e.to_string()))?;
    // What a running cell prints is shown as it comes.
    engine.watch_output(Some(screen::live_sink()));
    let say = |text: &str| println!("{}", style.note(text));
    // The command that resumes this chat: a replayed one needs its replay
    // again (without a backend, chat has no model to answer).
    let resume = match &args.replay {
        Some(file) => format!(
            "gisclaw chat --resume {} --replay {}",
            engine.saved.id,
            file.display()
        ),
        None => format!("gisclaw chat --resume {}", engine.saved.id),
    };
    say(&format!(
        "gisclaw chat · {} · {} agent · session {} (resume: {resume})",
        engine.backend(),
        engine.saved.arch.name(),
        engine.saved.id,
    ));
    if resuming {
        say(&format!(
            "resumed: {} message(s), {} cell(s) replayed into the namespace{}",
            engine.saved.messages.len(),
            rebuilt.replayed,
            match (rebuilt.failed.len(), rebuilt.missing.as_slice()) {
                (0, _) => String::new(),
                (n, []) => format!(", {n} failed on replay"),
                (n, missing) => format!(
                    ", {n} failed on replay; not restored: {}",
                    missing.join(", ")
                ),
            }
        ));
    }
    if let Some(dir) = &args.data {
        match engine.attach_data(dir) {
            Ok(card) => say!("{card}"),
            Err(e) => println!("{}", style.error(&format!("--data: {e}"))),
        }
    }
    say("/help lists the commands · Ctrl-C stops a step · Ctrl-D or /quit leaves");
    // Ask the terminal whether it shows images now, before any key is
    // read on our behalf (the answer is remembered for the session).
    let _ = crate::cli::figure::detect();

    let mut editor: Editor<ChatHelper, DefaultHistory> = Editor::new()?;
    // After the editor: rustyline installs its own SIGINT handler for the
    // editor's lifetime (unused here: while it reads a line the terminal
    // is raw and Ctrl-C is a key).
    install_sigint_handler();
    editor.set_helper(Some(ChatHelper {
        data_dir: engine.saved.data_dir.clone(),
    }));
    let history = history_path();
    let _ = editor.load_history(&history);
    let mut typed = type_ahead::Typed::default();
    loop {
        let typed_now = std::mem::take(&mut typed);
        let line = if typed_now.entered && !typed_now.text.trim().is_empty() {
            // A line typed and entered while the last turn ran is sent as
            // it is: shown after the prompt, no second Enter.
            say!("{}{}", style.prompt(), typed_now.text);
            typed_now.text
        } else {
            match read_input(&mut editor, &style, &typed_now.text) {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    say_err!("gisclaw: reading input: {e}");
                    break;
                }
            }
        };
        let line = line.trim().to_string();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        if let Some(command) = line.strip_prefix('/') {
            match slash(&mut engine, command, &style) {
                Flow::Continue => {}
                Flow::Quit => break,
            }
            if let Some(h) = editor.helper_mut() {
                h.data_dir = engine.saved.data_dir.clone();
            }
            continue;
        }
        let keys = TypeAhead::start();
        let end = {
            let mut screen = Screen::new(style, engine.workdir());
            let end = engine.turn(&line, &mut |e| screen.show(e));
            screen.close();
            end
        };
        let keys = keys.finish();
        report_end(&end, &style);
        say(&engine.tokens());
        if keys.leave {
            say("(Ctrl-D pressed during the turn: leaving)");
            break;
        }
        typed = keys;
    }
    if let Some(parent) = history.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = editor.save_history(&history);
    engine.save();
    say(&format!("saved: {resume}"));
    Ok(ExitCode::SUCCESS)
}

/// One input, starting with `typed` (keys pressed during the last turn):
/// lines ending in `\` continue on the next line. `None` on Ctrl-D.
fn read_input(
    editor: &mut Editor<ChatHelper, DefaultHistory>,
    style: &Style,
    typed: &str,
) -> rustyline::Result<Option<String>> {
    let mut text = String::new();
    let mut prompt = style.prompt();
    let mut initial = typed.to_string();
    loop {
        let read = editor.readline_with_initial(&prompt, (&initial, ""));
        initial.clear();
        match read {
            Ok(line) => {
                if let Some(head) = line.strip_suffix('\\') {
                    text.push_str(head);
                    text.push('\n');
                    prompt = "...> ".to_string();
                    continue;
                }
                text.push_str(&line);
                return Ok(Some(text));
            }
            Err(ReadlineError::Interrupted) => {
                // Ctrl-C at the prompt drops the line being typed.
                println!("{}", style.note("(Ctrl-D or /quit leaves)"));
                text.clear();
                prompt = style.prompt();
            }
            Err(ReadlineError::Eof) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}

fn report_end(end: &TurnEnd, style: &Style) {
    match end {
        TurnEnd::Answered => {}
        TurnEnd::Interrupted => println!(
            "{}",
            style.note("interrupted: the session and its variables are intact")
        ),
        TurnEnd::RoundLimit(n) => println!(
            "{}",
            style.note(&format!(
                "stopped after {n} rounds in this turn (--max-rounds); say how to go on"
            ))
        ),
        TurnEnd::Failed(why) => println!("{}", style.error(&format!("the turn failed: {why}"))),
    }
}
