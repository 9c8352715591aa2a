//! A chat turn with the Dual Agent (`/arch dual`): the Planner turns the
//! request into 1–7 steps, seeing the conversation, the data and what the
//! namespace holds; a Worker carries out each step in the shared sandbox
//! (with `step_done`), seeing the conversation and the step's brief; a
//! failed step (more than [`DualLimits::max_corrections`] failing cells, or
//! no `step_done` within the round limit) sends the Planner the failure for
//! a new plan of the rest, at most [`DualLimits::max_replans`] times.
//!
//! Only the outcome enters the chat's conversation (one assistant message
//! listing what each step made), so later turns, in either architecture,
//! see a short, well-formed history; the transcript keeps every message.

use std::time::{Duration, Instant};

use super::engine::{AgentEvent, ChatEngine, TurnEnd};
use crate::agent::converse::Stop;
use crate::agent::plan::{self, DualLimits, Plan, PLAN_STEPS};
use crate::agent::plan_run::{plan_execute_replan, PlanEnd, PlanHost, PlannerHost, StepEnd};
use crate::agent::prompt;
use crate::llm::{ChatResponse, Message, Role, ToolSpec};
use crate::util::clip;

/// Most earlier messages of the conversation the Planner is shown.
const PLANNER_HISTORY: usize = 12;
/// Most characters of one earlier message shown to the Planner.
const PLANNER_MESSAGE_CHARS: usize = 1500;

/// A chat turn hosting Plan → Execute → Replan: model calls stream to the
/// screen and stop on Ctrl-C; Workers see the conversation.
struct ChatHost<'a> {
    engine: &'a mut ChatEngine,
    ev: &'a mut dyn FnMut(AgentEvent<'_>),
    limits: &'a DualLimits,
}

impl PlannerHost for ChatHost<'_> {
    type Stop = TurnEnd;

    fn ask_planner(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
    ) -> Result<(ChatResponse, Duration), TurnEnd> {
        let asked = Instant::now();
        let response = self.engine.ask(messages, specs, self.ev)?;
        (self.ev)(AgentEvent::MessageDone { round: 0 });
        Ok((response, asked.elapsed()))
    }

    fn round(&self) -> usize {
        0
    }

    fn record(&mut self, event: crate::record::Event) {
        self.engine.record(event);
    }

    fn event(&mut self, event: AgentEvent<'_>) {
        (self.ev)(event);
    }

    fn no_plan(&mut self, why: String) -> TurnEnd {
        TurnEnd::Failed(why)
    }

    fn decline_offered(&self) -> bool {
        false
    }

    fn declined(&mut self, reason: String) -> TurnEnd {
        TurnEnd::Failed(reason)
    }
}

impl PlanHost for ChatHost<'_> {
    fn run_step(&mut self, plan: &Plan, index: usize, done: &[String]) -> Result<StepEnd, TurnEnd> {
        self.engine
            .run_step(plan, index, done, self.limits, self.ev)
    }

    fn missing_outputs(&mut self) -> Vec<String> {
        // A chat turn declares no outputs.
        Vec::new()
    }
}

impl ChatEngine {
    /// One turn: plan, execute the steps, replan on failure.
    pub(super) fn plan_and_execute(
        &mut self,
        request: &str,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> TurnEnd {
        let limits = DualLimits::default();
        let zygote = self.zygote_info();
        let system = plan::planner_prompt(1, PLAN_STEPS.1, &zygote.0, &zygote.1, true);
        let context = self.planner_context(request);
        let mut planner = vec![
            Message::text(Role::System, system),
            Message::text(Role::User, context),
        ];
        let run = plan_execute_replan(
            &mut ChatHost {
                engine: self,
                ev,
                limits: &limits,
            },
            &mut planner,
            1,
            &limits,
        );
        let (end, note) = match run.end {
            PlanEnd::Done | PlanEnd::Finished(_) => (TurnEnd::Answered, None),
            PlanEnd::Failed(why) => {
                let note = format!("The plan failed: {why}.");
                (TurnEnd::Failed(why), Some(note))
            }
            PlanEnd::Stopped { stop, at } => (stop, at.map(|goal| format!("Stopped at `{goal}`."))),
        };
        self.conclude(&run.done, note);
        end
    }

    /// The packages and refused imports the Planner is told about.
    pub(super) fn zygote_info(&self) -> (Vec<String>, Vec<gisclaw_protocol::BlockedImport>) {
        (
            prompt::listed_packages(&self.zygote.info().packages),
            self.zygote.config().blocked_imports.clone(),
        )
    }

    /// What the Planner is shown: data, hints, the recent conversation (its
    /// text, not the tool traffic), the namespace and the request.
    pub(super) fn planner_context(&mut self, request: &str) -> String {
        let mut text = format!("## Data\n{}\n", self.data_section());
        if !self.saved.hints.is_empty() {
            text.push_str(&format!(
                "\n## Domain knowledge from the user\n{}",
                self.hints_section()
            ));
        }
        // The request itself is the conversation's last message.
        let earlier = &self.saved.messages[..self.saved.messages.len().saturating_sub(1)];
        let said: Vec<String> = earlier
            .iter()
            .filter(|m| matches!(m.role, Role::User | Role::Assistant))
            .filter_map(|m| {
                let content = m.content.as_deref()?.trim();
                let who = if m.role == Role::User {
                    "User"
                } else {
                    "Assistant"
                };
                (!content.is_empty())
                    .then(|| format!("{who}: {}", clip(content, PLANNER_MESSAGE_CHARS)))
            })
            .collect();
        if !said.is_empty() {
            text.push_str("\n## The session so far\n");
            text.push_str(&said[said.len().saturating_sub(PLANNER_HISTORY)..].join("\n"));
            text.push('\n');
        }
        match self.variables() {
            Ok(vars) if !vars.is_empty() => text.push_str(&format!(
                "\n## Variables in the sandbox now\n{}\n",
                vars.join("\n")
            )),
            _ => text.push_str("\n## Variables in the sandbox now\n(none)\n"),
        }
        text.push_str(&format!("\n## The request\n{request}\n"));
        text
    }

    /// Runs step `i` of `plan` with a Worker that sees the conversation and
    /// the step's brief.
    fn run_step(
        &mut self,
        plan: &Plan,
        i: usize,
        done: &[String],
        limits: &DualLimits,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<StepEnd, TurnEnd> {
        let mut specs = self.chat_tools();
        specs.push(plan::step_done_spec());
        let mut prefix = vec![self.system_message()];
        prefix.extend(self.saved.messages.iter().cloned());
        let step = &plan.steps[i];
        let brief = crate::agent::prompt::brief_with_docs(
            self.options.docs.as_deref(),
            plan::step_brief(plan, i + 1, done, false),
            &format!("{} {}", step.goal, step.details),
            "this step",
            &mut self.transcript,
        );
        prefix.push(Message::text(Role::User, brief));
        let mut messages = prefix;
        match self.converse_turn(
            &mut messages,
            &specs,
            Some(limits.max_corrections),
            Some("worker"),
            ev,
        ) {
            Stop::Answered(text)
            | Stop::StepDone(text)
            | Stop::Finished(text)
            | Stop::Declined(text) => Ok(StepEnd::Done(text)),
            Stop::GaveUp {
                reason,
                last_error,
                failed,
            } => Ok(StepEnd::GaveUp {
                reason,
                last_error,
                failed,
            }),
            Stop::End(end) => Err(self.turn_end(Stop::End(end), ev)),
        }
    }

    /// Puts the turn's outcome into the conversation as one assistant message.
    fn conclude(&mut self, done: &[String], note: Option<String>) {
        let mut text = if done.is_empty() {
            "No step of the plan was completed.".to_string()
        } else {
            format!(
                "Steps done:\n{}",
                done.iter()
                    .map(|d| format!("- {d}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        };
        if let Some(note) = note {
            text.push_str(&format!("\n{note}"));
        }
        self.saved
            .messages
            .push(Message::text(Role::Assistant, text));
    }
}
