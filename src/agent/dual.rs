//! The Dual Agent: Plan → Execute → Replan.
//!
//! - **Planner**: task + knowledge + schema card → 3–7 ordered steps through
//!   the `submit_plan` tool (JSON Schema below; a JSON object in the text is
//!   accepted from servers without tools). An invalid plan is sent back with
//!   what is wrong, at most twice.
//! - **Worker**: one conversation per step in the shared sandbox, with the
//!   single agent's tools plus `step_done`; at most 10 self-corrections
//!   (failing cells) per step.
//! - **Replanner**: the Planner again, with the failure (the step, the
//!   reason, the last error, the missing outputs), for the remaining work;
//!   at most 2 cycles.
//!
//! Rounds, tokens and time come from one budget with the run's limits.

use std::time::Duration;

use super::converse::{
    converse, signalled, AgentLimits, AgentOutcome, ConverseLimits, Ending, OnText, Plain,
    RunState, Stop, Turn,
};
use super::events::{AgentEvent, Events};
use super::memory::ErrorMemory;
use super::plan::{planner_prompt, step_brief, step_done_spec, DualLimits, Plan, PLAN_STEPS};
use super::plan_run::{plan_execute_replan, PlanEnd, PlanHost, PlannerHost, StepEnd};
use super::tools::{missing_outputs, Toolbox};
use crate::llm::{ChatBackend, ChatResponse, Message, Role, ToolSpec};
use crate::record::{Event, MessageEvent, Transcript};

/// What the Dual Agent starts from.
pub struct DualInputs {
    /// The Worker's system prompt (the single agent's rules).
    pub system: String,
    /// The task prompt (instruction, knowledge, workflow, schema card, outputs).
    pub task_prompt: String,
    /// Installed packages (`name version`), for the Planner.
    pub packages: Vec<String>,
    /// Refused imports with alternatives, for the Planner.
    pub blocked: Vec<gisclaw_protocol::BlockedImport>,
}

/// A task run hosting Plan → Execute → Replan: one budget of rounds,
/// tokens and time ([`RunState`]) for the Planner and every Worker.
struct TaskHost<'r, 'e> {
    backend: &'r mut dyn ChatBackend,
    toolbox: &'r mut Toolbox<'e>,
    memory: &'r mut ErrorMemory,
    transcript: &'r mut Transcript,
    events: Events<'r>,
    inputs: &'r DualInputs,
    limits: &'r AgentLimits,
    dual: &'r DualLimits,
    worker_specs: Vec<ToolSpec>,
    state: RunState,
}

impl PlannerHost for TaskHost<'_, '_> {
    type Stop = Ending;

    fn ask_planner(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
    ) -> Result<(ChatResponse, Duration), Ending> {
        self.state.ask(
            &mut Plain(&mut *self.backend),
            messages,
            specs,
            self.limits,
            &mut |_| {},
        )
    }

    fn round(&self) -> usize {
        self.state.rounds
    }

    fn record(&mut self, event: Event) {
        self.transcript.record(event);
    }

    fn event(&mut self, event: AgentEvent<'_>) {
        (self.events)(event);
    }

    fn no_plan(&mut self, why: String) -> Ending {
        Ending::Failed(why)
    }

    fn declined(&mut self, reason: String) -> Ending {
        Ending::Declined(reason)
    }
}

impl PlanHost for TaskHost<'_, '_> {
    fn run_step(&mut self, plan: &Plan, index: usize, done: &[String]) -> Result<StepEnd, Ending> {
        let step = &plan.steps[index];
        let brief = crate::agent::prompt::brief_with_docs(
            self.toolbox.docs,
            step_brief(plan, index + 1, done, true),
            &format!("{} {}", step.goal, step.details),
            "this step",
            self.transcript,
        );
        let mut messages = vec![
            Message::text(Role::System, self.inputs.system.clone()),
            Message::text(
                Role::User,
                format!("{}\n\n{brief}", self.inputs.task_prompt),
            ),
        ];
        self.transcript.record(MessageEvent::of(
            Some(self.state.rounds),
            Some("worker"),
            messages[1].clone(),
        ));
        let bounds = ConverseLimits {
            run: self.limits.clone(),
            max_rounds: self.dual.step_rounds,
            max_failures: Some(self.dual.max_corrections),
        };
        let mut model = Plain(&mut *self.backend);
        let mut turn = Turn {
            model: &mut model,
            toolbox: &mut *self.toolbox,
            memory: &mut *self.memory,
            transcript: &mut *self.transcript,
            events: &mut *self.events,
            agent: Some("worker"),
            on_text: OnText::Nudge,
            stop: &signalled,
        };
        match converse(
            &mut turn,
            &mut messages,
            &self.worker_specs,
            &bounds,
            &mut self.state,
        ) {
            Stop::Finished(summary) => Ok(StepEnd::Finished(summary)),
            // A Worker that finds the data cannot answer the task ends the run.
            Stop::Declined(reason) => Err(Ending::Declined(reason)),
            Stop::StepDone(summary) | Stop::Answered(summary) => Ok(StepEnd::Done(summary)),
            Stop::GaveUp {
                reason,
                last_error,
                failed,
            } => Ok(StepEnd::GaveUp {
                reason,
                last_error,
                failed,
            }),
            Stop::End(ending) => Err(ending),
        }
    }

    fn missing_outputs(&mut self) -> Vec<String> {
        missing_outputs(&self.toolbox.out_dir, &self.toolbox.outputs)
    }
}

/// Runs Plan → Execute → Replan for a task.
#[allow(clippy::too_many_arguments)]
pub fn run(
    backend: &mut dyn ChatBackend,
    toolbox: &mut Toolbox<'_>,
    memory: &mut ErrorMemory,
    transcript: &mut Transcript,
    inputs: &DualInputs,
    limits: &AgentLimits,
    dual: &DualLimits,
    events: Events<'_>,
) -> AgentOutcome {
    let planner_system = planner_prompt(
        PLAN_STEPS.0,
        PLAN_STEPS.1,
        &inputs.packages,
        &inputs.blocked,
        false,
    );
    let mut planner = vec![
        Message::text(Role::System, planner_system),
        Message::text(Role::User, inputs.task_prompt.clone()),
    ];
    for m in &planner {
        transcript.record(MessageEvent::of(Some(0), Some("planner"), m.clone()));
    }
    let mut worker_specs = toolbox.offered();
    worker_specs.push(step_done_spec());
    let mut host = TaskHost {
        backend,
        toolbox,
        memory,
        transcript,
        events,
        inputs,
        limits,
        dual,
        worker_specs,
        state: RunState::new(),
    };
    let run = plan_execute_replan(&mut host, &mut planner, PLAN_STEPS.0, dual);
    let (ending, summary) = match run.end {
        PlanEnd::Done => (Ending::Finished, Some(run.done.join("\n"))),
        PlanEnd::Finished(summary) => (Ending::Finished, Some(summary)),
        PlanEnd::Failed(why) => (Ending::Failed(why), None),
        PlanEnd::Stopped { stop, .. } => (stop, None),
    };
    host.state.outcome(ending, summary)
}
