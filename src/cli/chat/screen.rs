//! The chat screen: renders the agent's events (streamed text, code, a
//! spinner while a cell runs, observations, plans and steps).

use std::io::Write;
use std::time::Duration;

use gisclaw::chat::engine::AgentEvent;
use gisclaw::chat::render::Style;

/// Renders engine events: streamed text, code, a spinner while a cell runs,
/// observations.
pub(super) struct Screen {
    style: Style,
    spinner: Option<indicatif::ProgressBar>,
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
            spinner: None,
            in_text: false,
            workdir: workdir.to_path_buf(),
        }
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.finish_and_clear();
        }
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
