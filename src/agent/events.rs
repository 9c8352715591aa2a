//! The one event stream of an agent run: what the conversation loop and the
//! Dual Agent tell whoever shows them — `solve`'s spinner and lines, the
//! chat screen, nothing at all in `eval`. Front ends render events; the
//! loop never prints.

use super::plan::PlanStep;

/// Something that happened in a run, in the order it happened.
#[derive(Debug)]
pub enum AgentEvent<'a> {
    /// A piece of the model's text as it arrives (streaming front ends).
    Text(&'a str),
    /// The model's message of `round` is complete.
    MessageDone {
        /// The run's model call count so far.
        round: usize,
    },
    /// The backend noted something about the call (a retry, a repair).
    BackendNote {
        /// The round.
        round: usize,
        /// The note.
        note: &'a str,
    },
    /// The model answered without a tool call where one was expected.
    NoToolCall {
        /// The round.
        round: usize,
    },
    /// The model calls a tool.
    Tool {
        /// Tool name.
        name: &'a str,
        /// Its code, for `execute_python`.
        code: Option<&'a str>,
        /// Its raw arguments.
        arguments: &'a str,
    },
    /// A cell starts running.
    CellRunning,
    /// A tool's result, as the model will read it.
    Observation {
        /// The round.
        round: usize,
        /// Tool name.
        name: &'a str,
        /// The cell's code, for `execute_python` calls that ran.
        code: Option<&'a str>,
        /// The observation text.
        text: &'a str,
        /// False for failing cells and refused calls.
        ok: bool,
        /// The status in words for people (`ok`, `error`, `timed out at its
        /// 3 s limit`, `refused`, `malformed call`, `finished`, …).
        status: &'a str,
        /// Seconds the tool took.
        seconds: f64,
    },
    /// Figures (PNG/JPEG) a cell just wrote under `pred_results/`, for
    /// front ends that show them.
    Figures {
        /// Their paths.
        paths: &'a [std::path::PathBuf],
    },
    /// The history was compacted to fit the model's context window.
    Compacted {
        /// What was folded, and the sizes before and after.
        compaction: &'a super::context::Compaction,
        /// Where the conversation's opening message now stands.
        pinned_at: Option<usize>,
    },
    /// Dual: the Planner's plan (`replan` 0 for the first).
    Plan {
        /// The round of the planner's call.
        round: usize,
        /// The steps, in order.
        steps: &'a [PlanStep],
        /// Which replanning cycle made it.
        replan: usize,
    },
    /// Dual: the Planner's answer was not a valid plan.
    PlanRefused {
        /// The round.
        round: usize,
        /// Why.
        reason: &'a str,
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
    /// Dual: a step failed and the plan is redone.
    Replanning {
        /// The replanning cycle, 1-based.
        cycle: usize,
        /// Most cycles allowed.
        of: usize,
        /// Why the step failed.
        reason: &'a str,
    },
}

impl AgentEvent<'_> {
    /// The line a batch front end (`solve`) shows for this event, if any.
    pub fn progress_line(&self) -> Option<String> {
        match self {
            AgentEvent::BackendNote { round, note } => Some(format!("round {round}: {note}")),
            AgentEvent::NoToolCall { round } => Some(format!(
                "round {round}: the model answered without calling a tool"
            )),
            AgentEvent::Observation {
                round,
                name,
                status,
                seconds,
                ..
            } => Some(format!("round {round}: {name} → {status} ({seconds:.1} s)")),
            AgentEvent::Plan { round, steps, .. } => {
                Some(format!("round {round}: plan of {} steps", steps.len()))
            }
            AgentEvent::PlanRefused { round, reason } => {
                Some(format!("round {round}: plan refused: {reason}"))
            }
            AgentEvent::Step { index, of, goal } => Some(format!("step {index}/{of}: {goal}")),
            AgentEvent::Replanning { cycle, of, reason } => {
                Some(format!("replanning ({cycle}/{of}): {reason}"))
            }
            AgentEvent::Compacted { compaction, .. } => Some(compaction.line()),
            AgentEvent::Text(_)
            | AgentEvent::Figures { .. }
            | AgentEvent::MessageDone { .. }
            | AgentEvent::Tool { .. }
            | AgentEvent::CellRunning
            | AgentEvent::StepDone { .. } => None,
        }
    }
}

/// Where a run's events go.
pub type Events<'a> = &'a mut dyn FnMut(AgentEvent<'_>);
