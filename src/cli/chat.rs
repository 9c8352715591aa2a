//! `gisclaw chat`: the interactive session. rustyline for input (history
//! file, multi-line with a trailing `\`, tab completion of slash commands
//! and data file names), the chat engine for the work, Ctrl-C to stop a
//! step, Ctrl-D or `/quit` to leave.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gisclaw::chat::engine::{AgentEvent, ChatEngine, ChatOptions, TurnEnd};
use gisclaw::chat::render::Style;
use gisclaw::chat::store::{self, ChatArch, SavedChat};
use gisclaw::llm::replay::ReplayBackend;
use gisclaw::llm::ChatBackend;
use gisclaw::sandbox::{SandboxConfig, Zygote};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

use super::common::{no_backend, BackendArgs, SandboxArgs, UsageError};

/// Options of `gisclaw chat`.
#[derive(clap::Args, Debug)]
pub struct ChatArgs {
    /// A data folder to attach at the start (`/data DIR` later).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Agent architecture of the turns: single (ReAct) or dual (plan, then
    /// a worker per step); `/arch` switches later. Default: single, or the
    /// resumed session's.
    #[arg(long, value_enum)]
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
    /// Confinement the sandbox must have.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The slash commands, with their one-line help.
const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    (
        "/data",
        "DIR — attach a data folder and show its schema card",
    ),
    ("/files", "the data files and the outputs so far"),
    ("/vars", "the namespace, one line per variable"),
    ("/inspect", "NAME — a closer look at one variable"),
    (
        "/run",
        "CODE — run your own Python in the sandbox (the model is told)",
    ),
    ("/edit", "edit the last failed cell in $EDITOR and run it"),
    ("/hint", "TEXT — domain knowledge for the next turns"),
    (
        "/arch",
        "[single|dual] — show or switch the agent architecture",
    ),
    ("/model", "the model backend"),
    ("/tokens", "tokens and cost so far"),
    ("/save", "FILE — write the script of the successful cells"),
    ("/export", "DIR — copy the transcript, script and outputs"),
    ("/reset", "a fresh namespace (the conversation stays)"),
    ("/undo", "drop the last turn from the conversation"),
    ("/quit", "leave (Ctrl-D too)"),
];

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

/// Line editing: completion of slash commands and data file names.
struct ChatHelper {
    data_dir: Option<PathBuf>,
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = &before[start..];
        if start == 0 && word.starts_with('/') {
            let pairs = COMMANDS
                .iter()
                .filter(|(c, _)| c.starts_with(word))
                .map(|(c, _)| Pair {
                    display: c.to_string(),
                    replacement: format!("{c} "),
                })
                .collect();
            return Ok((0, pairs));
        }
        let Some(dir) = &self.data_dir else {
            return Ok((pos, Vec::new()));
        };
        let prefix = word.strip_prefix("data/").unwrap_or(word);
        let pairs = gisclaw::card::files_under(dir)
            .into_iter()
            .filter(|(rel, _)| rel.starts_with(prefix))
            .take(200)
            .map(|(rel, _)| Pair {
                display: rel.clone(),
                replacement: format!("data/{rel}"),
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for ChatHelper {}

impl Helper for ChatHelper {}

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
        return Ok((Box::new(backend), None));
    }
    let Some(live) = args.model.resolve_live()? else {
        return Err(no_backend("--replay FILE"));
    };
    let backend = gisclaw::llm::open_live(live.clone()).map_err(|e| UsageError(e.to_string()))?;
    Ok((backend, Some(live)))
}

/// Runs `gisclaw chat`.
pub fn run(args: ChatArgs) -> anyhow::Result<ExitCode> {
    let mut saved = match &args.resume {
        Some(id) => SavedChat::load(id).map_err(UsageError)?,
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
    };
    let (mut engine, rebuilt) =
        ChatEngine::open(&zygote, backend, reopen, saved, options, &INTERRUPT)
            .map_err(UsageError)?;
    let say = |text: &str| println!("{}", style.note(text));
    say(&format!(
        "gisclaw chat · {} · {} agent · session {} (resume: gisclaw chat --resume {})",
        engine.backend(),
        engine.saved.arch.name(),
        engine.saved.id,
        engine.saved.id
    ));
    if resuming {
        say(&format!(
            "resumed: {} message(s), {} cell(s) replayed into the namespace{}",
            engine.saved.messages.len(),
            rebuilt.replayed,
            if rebuilt.failed.is_empty() {
                String::new()
            } else {
                format!(", {} failed on replay", rebuilt.failed.len())
            }
        ));
    }
    if let Some(dir) = &args.data {
        match engine.attach_data(dir) {
            Ok(card) => println!("{card}"),
            Err(e) => println!("{}", style.error(&e)),
        }
    }
    say("/help lists the commands · Ctrl-C stops a step · Ctrl-D or /quit leaves");

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
    let mut typed = String::new();
    loop {
        let line = match read_input(&mut editor, &style, &std::mem::take(&mut typed)) {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                eprintln!("gisclaw: reading input: {e}");
                break;
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
            let mut screen = Screen::new(style);
            let end = engine.turn(&line, &mut |e| screen.show(e));
            screen.close();
            end
        };
        let (text, leave) = keys.finish();
        report_end(&end, &style);
        say(&engine.tokens());
        if leave {
            say("(Ctrl-D pressed during the turn: leaving)");
            break;
        }
        typed = text;
    }
    if let Some(parent) = history.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = editor.save_history(&history);
    engine.save();
    say(&format!("saved: gisclaw chat --resume {}", engine.saved.id));
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

/// The keyboard while a turn runs: the terminal without line editing and
/// echo (Ctrl-C still signals, output is still translated), and a thread
/// collecting the keys pressed, so a Ctrl-D is not lost and typed text
/// starts the next prompt instead of garbling the output. Nothing happens
/// when stdin is not a terminal.
struct TypeAhead {
    stop: std::sync::Arc<AtomicBool>,
    reader: Option<std::thread::JoinHandle<Vec<u8>>>,
    saved: Option<libc::termios>,
}

impl TypeAhead {
    fn start() -> TypeAhead {
        let idle = TypeAhead {
            stop: Default::default(),
            reader: None,
            saved: None,
        };
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return idle;
        }
        // SAFETY: tcgetattr/tcsetattr on fd 0 with a termios we own.
        let saved = unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return idle;
            }
            let mut quiet = t;
            quiet.c_lflag &= !(libc::ICANON | libc::ECHO);
            quiet.c_cc[libc::VMIN] = 1;
            quiet.c_cc[libc::VTIME] = 0;
            if libc::tcsetattr(0, libc::TCSANOW, &quiet) != 0 {
                return idle;
            }
            t
        };
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let reader = std::thread::spawn(move || {
            let mut keys = Vec::new();
            while !flag.load(Ordering::SeqCst) {
                let mut fd = libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd, then a read into a local buffer.
                let ready = unsafe { libc::poll(&mut fd, 1, 50) };
                if ready > 0 && fd.revents & libc::POLLIN != 0 {
                    let mut buf = [0u8; 256];
                    let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                    if n <= 0 {
                        break;
                    }
                    keys.extend_from_slice(&buf[..n as usize]);
                } else if ready < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                {
                    break;
                }
            }
            keys
        });
        TypeAhead {
            stop,
            reader: Some(reader),
            saved: Some(saved),
        }
    }

    /// Restores the terminal: the text typed (its first line, printable
    /// characters only) and whether Ctrl-D was pressed.
    fn finish(mut self) -> (String, bool) {
        self.stop.store(true, Ordering::SeqCst);
        let keys = self
            .reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default();
        self.restore();
        typed_keys(&keys)
    }

    fn restore(&mut self) {
        if let Some(t) = self.saved.take() {
            // SAFETY: puts back the termios read in start().
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}

impl Drop for TypeAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.restore();
    }
}

/// Keys pressed during a turn → (the text up to the first Enter, printable
/// characters only, Backspace applied; whether Ctrl-D came).
fn typed_keys(keys: &[u8]) -> (String, bool) {
    let leave = keys.contains(&0x04);
    let text = String::from_utf8_lossy(keys);
    let mut line = String::new();
    let mut escape = false;
    for c in text.chars() {
        match c {
            '\r' | '\n' | '\u{4}' => break,
            '\u{1b}' => escape = true,
            '\u{7f}' | '\u{8}' => {
                line.pop();
            }
            // The rest of an escape sequence (arrow keys…) ends at a letter or `~`.
            c if escape => escape = !(c.is_ascii_alphabetic() || c == '~'),
            c if !c.is_control() => line.push(c),
            _ => {}
        }
    }
    (line, leave)
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

/// Renders engine events: streamed text, code, a spinner while a cell runs,
/// observations.
struct Screen {
    style: Style,
    spinner: Option<indicatif::ProgressBar>,
    in_text: bool,
}

impl Screen {
    fn new(style: Style) -> Screen {
        Screen {
            style,
            spinner: None,
            in_text: false,
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.finish_and_clear();
        }
    }

    fn show(&mut self, event: AgentEvent<'_>) {
        let mut out = std::io::stdout();
        match event {
            AgentEvent::Text(t) => {
                self.in_text = true;
                let _ = write!(out, "{}", self.style.reasoning(t));
                let _ = out.flush();
            }
            AgentEvent::MessageDone { .. } => {
                if self.in_text {
                    let _ = writeln!(out);
                    self.in_text = false;
                }
            }
            AgentEvent::Tool {
                name,
                code,
                arguments,
            } => {
                let _ = match code {
                    Some(code) => write!(out, "{}", self.style.code("python", code)),
                    None => writeln!(
                        out,
                        "{}",
                        self.style.note(&format!("── {name} {arguments}"))
                    ),
                };
            }
            AgentEvent::CellRunning => {
                if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                    let s = indicatif::ProgressBar::new_spinner();
                    s.set_style(super::common::bar_style(
                        "{spinner} running [{elapsed}] (Ctrl-C stops it)",
                    ));
                    s.enable_steady_tick(Duration::from_millis(120));
                    self.spinner = Some(s);
                }
            }
            AgentEvent::Observation { text, ok, code, .. } => {
                self.stop_spinner();
                let _ = write!(out, "{}", self.style.observation(text));
                if !ok && code.is_some() {
                    let _ = writeln!(out, "{}", self.style.error("(the cell failed)"));
                }
            }
            AgentEvent::Plan { steps, replan, .. } => {
                let title = if replan == 0 {
                    format!("plan ({} steps)", steps.len())
                } else {
                    format!(
                        "new plan, replanning cycle {replan} ({} steps)",
                        steps.len()
                    )
                };
                let _ = writeln!(out, "{}", self.style.heading(&title));
                for (i, step) in steps.iter().enumerate() {
                    let _ = writeln!(out, "  {}. {}", i + 1, step.goal);
                }
            }
            AgentEvent::Step { index, of, goal } => {
                let _ = writeln!(
                    out,
                    "{}",
                    self.style.heading(&format!("── step {index}/{of}: {goal}"))
                );
            }
            AgentEvent::StepDone { summary } => {
                let _ = writeln!(
                    out,
                    "{}",
                    self.style
                        .success(&format!("✓ step done: {}", summary.trim()))
                );
            }
            AgentEvent::BackendNote { .. }
            | AgentEvent::NoToolCall { .. }
            | AgentEvent::PlanRefused { .. } => {}
            AgentEvent::Replanning { reason, .. } => {
                let _ = writeln!(
                    out,
                    "{}",
                    self.style
                        .error(&format!("✗ step failed: {reason}; replanning"))
                );
            }
        }
    }

    fn close(&mut self) {
        self.stop_spinner();
        if self.in_text {
            println!();
        }
    }
}

enum Flow {
    Continue,
    Quit,
}

/// Runs one slash command (without its `/`).
fn slash(engine: &mut ChatEngine, command: &str, style: &Style) -> Flow {
    let (name, rest) = match command.split_once(char::is_whitespace) {
        Some((n, r)) => (n, r.trim()),
        None => (command, ""),
    };
    let fail = |e: String| println!("{}", style.error(&e));
    match name {
        "help" => {
            for (c, h) in COMMANDS {
                println!("  {c:<9} {h}");
            }
        }
        "quit" | "exit" => return Flow::Quit,
        "data" if rest.is_empty() => match &engine.saved.data_dir {
            Some(d) => println!("data: {}", d.display()),
            None => fail("/data DIR: name the folder to attach".into()),
        },
        "data" => match engine.attach_data(Path::new(rest)) {
            Ok(card) => println!("{card}"),
            Err(e) => fail(e),
        },
        "files" => print!("{}", engine.files()),
        "vars" => match engine.variables() {
            Ok(vars) if vars.is_empty() => println!("(no variables yet)"),
            Ok(vars) => vars.iter().for_each(|v| println!("{v}")),
            Err(e) => fail(e),
        },
        "inspect" => match engine.inspect(rest) {
            Ok(text) => println!("{text}"),
            Err(e) => fail(e),
        },
        "run" if rest.is_empty() => fail("/run CODE: type the Python after /run (end lines with \\ to continue)".into()),
        "run" => run_code(engine, rest, style),
        "edit" => match engine.last_failed.clone() {
            None => fail("/edit: no failed cell to edit".into()),
            Some(code) => match edit_in_editor(&code) {
                Ok(edited) if edited.trim().is_empty() => println!("(empty: nothing run)"),
                Ok(edited) => run_code(engine, &edited, style),
                Err(e) => fail(e),
            },
        },
        "hint" if rest.is_empty() => {
            if engine.saved.hints.is_empty() {
                println!("(no hints: /hint TEXT adds one)");
            }
            engine.saved.hints.iter().for_each(|h| println!("- {h}"));
        }
        "hint" => {
            engine.saved.hints.push(rest.to_string());
            engine.save();
            println!("{}", style.note("noted: the model sees it from the next turn"));
        }
        "arch" if rest.is_empty() => println!("{} — /arch single: reason, run a cell, observe · /arch dual: plan, then a worker per step", describe_arch(engine.saved.arch)),
        "arch" => match <ChatArch as clap::ValueEnum>::from_str(rest, true) {
            Ok(arch) => {
                engine.saved.arch = arch;
                engine.save();
                println!("{}", style.note(&format!("from the next turn: {}", describe_arch(arch))));
            }
            Err(_) => fail(format!("/arch {rest}: say single or dual")),
        },
        "model" => println!("{}", engine.backend()),
        "tokens" => println!("{} · sandbox time {:.1} s", engine.tokens(), engine.sandbox_time().as_secs_f64()),
        "save" if rest.is_empty() => fail("/save FILE: name the file".into()),
        "save" => match gisclaw::util::write_atomic(Path::new(rest), engine.script().as_bytes()) {
            Ok(()) => println!("wrote {} ({} cells)", rest, engine.saved.cells.len()),
            Err(e) => fail(format!("/save {rest}: {e}")),
        },
        "export" if rest.is_empty() => fail("/export DIR: name the folder".into()),
        "export" => match engine.export(Path::new(rest)) {
            Ok(n) => println!("exported {n} files to {rest}"),
            Err(e) => fail(e),
        },
        "reset" => match engine.reset() {
            Ok(()) => println!("{}", style.note("fresh namespace: every variable is gone")),
            Err(e) => fail(e),
        },
        "undo" => {
            if engine.undo() {
                println!("{}", style.note("dropped the last turn from the conversation (variables it made stay)"));
            } else {
                println!("(nothing to undo)");
            }
        }
        other => {
            let near: Vec<&str> = COMMANDS.iter().map(|(c, _)| *c).filter(|c| c[1..].starts_with(&other.chars().take(2).collect::<String>())).collect();
            let tip = if near.is_empty() { String::new() } else { format!(" (did you mean {}?)", near.join(", ")) };
            fail(format!("unknown command /{other}{tip}: /help lists the commands"));
        }
    }
    Flow::Continue
}

/// One line on an architecture.
fn describe_arch(arch: ChatArch) -> String {
    match arch {
        ChatArch::Single => "single agent (ReAct: reason, run a cell, observe, until it answers)".into(),
        ChatArch::Dual => "dual agent (a Planner splits the request into steps; a Worker does each; a failed step is replanned)".into(),
    }
}

fn run_code(engine: &mut ChatEngine, code: &str, style: &Style) {
    let mut screen = Screen::new(*style);
    print!("{}", style.code("python (you)", code));
    let result = engine.run_user_code(code, &mut |e| screen.show(e));
    screen.close();
    match result {
        Ok((text, _)) => print!("{}", style.observation(&text)),
        Err(e) => println!("{}", style.error(&e)),
    }
}

/// Opens `code` in `$VISUAL` / `$EDITOR` (default `vi`) and returns the result.
fn edit_in_editor(code: &str) -> Result<String, String> {
    let file = tempfile::Builder::new()
        .prefix("gisclaw-edit-")
        .suffix(".py")
        .tempfile()
        .map_err(|e| e.to_string())?;
    std::fs::write(file.path(), code).map_err(|e| e.to_string())?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let status = std::process::Command::new(program)
        .args(parts)
        .arg(file.path())
        .status()
        .map_err(|e| format!("/edit: cannot start the editor `{editor}`: {e} (set $EDITOR)"))?;
    if !status.success() {
        return Err(format!(
            "/edit: the editor `{editor}` exited with {status}; nothing run"
        ));
    }
    std::fs::read_to_string(file.path()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::typed_keys;

    #[test]
    fn keys_typed_during_a_turn_become_the_next_prompt_and_ctrl_d_is_kept() {
        assert_eq!(typed_keys(b"/vars"), ("/vars".into(), false));
        assert_eq!(
            typed_keys(b"plot it\x7f\x7fthem\rmore"),
            ("plot them".into(), false)
        );
        assert_eq!(typed_keys(b"\x1b[Aab\x1b[3~c"), ("abc".into(), false));
        assert_eq!(typed_keys(b"\x04"), (String::new(), true));
        assert_eq!(typed_keys(b"half\x04"), ("half".into(), true));
    }
}
