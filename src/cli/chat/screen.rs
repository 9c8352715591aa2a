//! The chat screen: renders the agent's events (streamed text, code, a
//! spinner while a cell runs, observations, plans and steps).

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gisclaw::chat::engine::AgentEvent;
use gisclaw::chat::live::{after_live, LiveLines};
use gisclaw::chat::render::Style;
use gisclaw::sandbox::{OutputSink, OutputStream};

/// What the screen and the session's live-output sink share: the running
/// cell's spinner and its output so far.
#[derive(Default)]
pub(super) struct Live {
    spinner: Option<indicatif::ProgressBar>,
    lines: LiveLines,
}

/// The live view shared by every screen of the chat and the session's sink.
type SharedLive = Arc<Mutex<Live>>;

/// The chat's one live view (one chat per process).
fn shared_live() -> &'static SharedLive {
    static LIVE: std::sync::OnceLock<SharedLive> = std::sync::OnceLock::new();
    LIVE.get_or_init(SharedLive::default)
}

/// The sink that prints a running cell's output as it comes: whole lines
/// above the spinner, the line in progress in its message.
pub(super) fn live_sink() -> OutputSink {
    let live = Arc::clone(shared_live());
    Arc::new(move |_stream: OutputStream, text: &str| {
        let Ok(mut live) = live.lock() else { return };
        let lines = live.lines.push(text);
        let partial = live.lines.partial();
        let print = || {
            let mut out = std::io::stdout();
            for line in &lines {
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
        };
        match &live.spinner {
            Some(spinner) => {
                if !lines.is_empty() {
                    spinner.suspend(print);
                }
                spinner.set_message(gisclaw::util::clip(&partial, 60));
            }
            None => print(),
        }
    })
}

/// Renders engine events: streamed text, code, a spinner while a cell runs,
/// observations.
pub(super) struct Screen {
    style: Style,
    /// The running cell's spinner and live output, shared with the sink.
    live: SharedLive,
    in_text: bool,
    /// How figures are drawn (detected once, before any key is read).
    figures: Option<crate::cli::figure::Protocol>,
    /// The session's work dir, figures are named relative to it.
    workdir: std::path::PathBuf,
}

impl Screen {
    pub(super) fn new(style: Style, workdir: &std::path::Path) -> Screen {
        Screen {
            figures: crate::cli::figure::detect(),
            style,
            live: Arc::clone(shared_live()),
            in_text: false,
            workdir: workdir.to_path_buf(),
        }
    }

    fn stop_spinner(&mut self) {
        if let Ok(mut live) = self.live.lock() {
            if let Some(s) = live.spinner.take() {
                s.finish_and_clear();
            }
        }
    }

    /// Ends the cell's live output: its unfinished last line is printed;
    /// true when any output was shown live.
    fn end_live(&mut self) -> bool {
        let Ok(mut live) = self.live.lock() else {
            return false;
        };
        let seen = live.lines.seen();
        if let Some(last) = live.lines.finish() {
            say!("{last}");
        }
        seen
    }

    pub(super) fn show(&mut self, event: AgentEvent<'_>) {
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
                    // Its summary is the turn's answer, printed next.
                    None if name == "finish" => {
                        writeln!(out, "{}", self.style.note("── finish"))
                    }
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
                    s.set_style(crate::cli::common::bar_style(
                        "{spinner} running [{elapsed}] (Ctrl-C stops it) {msg}",
                    ));
                    s.enable_steady_tick(Duration::from_millis(120));
                    if let Ok(mut live) = self.live.lock() {
                        live.spinner = Some(s);
                    }
                }
            }
            AgentEvent::Observation { text, ok, code, .. } => {
                self.stop_spinner();
                // Output shown live is not shown again.
                let text = if self.end_live() {
                    after_live(text)
                } else {
                    text.to_string()
                };
                let _ = write!(out, "{}", self.style.observation(&text));
                if !ok && code.is_some() {
                    let _ = writeln!(out, "{}", self.style.error("(the cell failed)"));
                }
            }
            AgentEvent::Figures { paths } => {
                self.stop_spinner();
                let _ = out.flush();
                let (style, protocol) = (&self.style, self.figures);
                crate::cli::figure::show(paths, &self.workdir, protocol, &mut |line| {
                    println!("{}", style.note(line));
                });
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
                    let _ = writeln!(out, "  {}. {}", i + 1, gisclaw::terminal::clean(&step.goal));
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
            AgentEvent::Compacted { compaction, .. } => {
                self.stop_spinner();
                let _ = writeln!(out, "{}", self.style.note(&compaction.line()));
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

    pub(super) fn close(&mut self) {
        self.stop_spinner();
        if self.in_text {
            println!();
        }
    }
}
