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

use serde_json::json;

use super::engine::{AgentEvent, ChatEngine, TurnEnd};
use crate::agent::converse::Stop;
use crate::agent::dual::{self, DualLimits, Plan, PLAN_STEPS, PLAN_TRIES};
use crate::agent::prompt;
use crate::llm::{adapt, Message, Role};
use crate::util::clip;

/// Most earlier messages of the conversation the Planner is shown.
const PLANNER_HISTORY: usize = 12;
/// Most characters of one earlier message shown to the Planner.
const PLANNER_MESSAGE_CHARS: usize = 1500;

/// How a step ended.
enum StepEnd {
    /// `step_done` (or a text answer), with a summary.
    Done(String),
    /// The step failed: why, and the last error.
    GaveUp(String, Option<String>),
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
        let system = dual::planner_prompt(1, PLAN_STEPS.1, &zygote.0, &zygote.1, true);
        let context = self.planner_context(request);
        let mut planner = vec![
            Message::text(Role::System, system),
            Message::text(Role::User, context),
        ];
        let mut done: Vec<String> = Vec::new();
        let mut replans = 0;
        let (end, note) = loop {
            let plan = match self.ask_planner(&mut planner, ev) {
                Ok(p) => p,
                Err(end) => break (end, None),
            };
            ev(AgentEvent::Plan {
                round: 0,
                steps: &plan.steps,
                replan: replans,
            });
            let mut failure = None;
            let mut stopped = None;
            for (i, step) in plan.steps.iter().enumerate() {
                ev(AgentEvent::Step {
                    index: i + 1,
                    of: plan.steps.len(),
                    goal: &step.goal,
                });
                self.record("step", json!({ "step": i + 1, "of": plan.steps.len(), "goal": step.goal, "replan": replans }));
                match self.run_step(&plan, i, &done, &limits, ev) {
                    Ok(StepEnd::Done(summary)) => {
                        done.push(format!("{}: {}", step.goal, summary.trim()))
                    }
                    Ok(StepEnd::GaveUp(reason, last_error)) => {
                        failure = Some((step.goal.clone(), reason, last_error));
                        break;
                    }
                    Err(end) => {
                        stopped = Some((end, step.goal.clone()));
                        break;
                    }
                }
            }
            if let Some((end, goal)) = stopped {
                break (end, Some(format!("Stopped at `{goal}`.")));
            }
            let Some((goal, reason, last_error)) = failure else {
                break (TurnEnd::Answered, None);
            };
            if replans >= limits.max_replans {
                let why =
                    format!("step `{goal}` failed ({reason}) after {replans} replanning cycle(s)");
                break (
                    TurnEnd::Failed(why.clone()),
                    Some(format!("The plan failed: {why}.")),
                );
            }
            replans += 1;
            ev(AgentEvent::Replanning {
                cycle: replans,
                of: limits.max_replans,
                reason: &reason,
            });
            let request = dual::replan_request(&goal, &reason, &done, &[], last_error.as_deref());
            self.record("replan", json!({ "cycle": replans, "failed_step": goal, "reason": reason, "request": request }));
            planner.push(Message::text(Role::User, request));
        };
        self.conclude(&done, note);
        end
    }

    /// The packages and refused imports the Planner is told about.
    fn zygote_info(&self) -> (Vec<String>, Vec<gisclaw_protocol::BlockedImport>) {
        (
            prompt::listed_packages(&self.zygote.info().packages),
            self.zygote.config().blocked_imports.clone(),
        )
    }

    /// What the Planner is shown: data, hints, the recent conversation (its
    /// text, not the tool traffic), the namespace and the request.
    fn planner_context(&mut self, request: &str) -> String {
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

    /// Asks the Planner (up to [`PLAN_TRIES`] times) for a valid plan.
    fn ask_planner(
        &mut self,
        planner: &mut Vec<Message>,
        ev: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<Plan, TurnEnd> {
        let specs = [dual::plan_spec()];
        let mut last = String::new();
        for _ in 0..PLAN_TRIES {
            let response = self.ask(planner, &specs, ev)?;
            ev(AgentEvent::MessageDone { round: 0 });
            let review =
                dual::review_plan(adapt::adapt(response.message, 0).message, 1, PLAN_STEPS.1);
            self.record(
                "message",
                json!({ "agent": "planner", "message": review.message, "usage": response.usage, "plan": review.plan.as_ref().ok(), "plan_error": review.plan.as_ref().err() }),
            );
            planner.push(review.message);
            planner.push(review.reply);
            match review.plan {
                Ok(plan) => return Ok(plan),
                Err(e) => last = e,
            }
        }
        Err(TurnEnd::Failed(format!(
            "the planner gave no valid plan in {PLAN_TRIES} tries ({last})"
        )))
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
        specs.push(dual::step_done_spec());
        let mut prefix = vec![self.system_message()];
        prefix.extend(self.saved.messages.iter().cloned());
        prefix.push(Message::text(
            Role::User,
            dual::step_brief(plan, i + 1, done, false),
        ));
        let mut messages = prefix;
        match self.converse_turn(
            &mut messages,
            &specs,
            Some(limits.max_corrections),
            Some("worker"),
            ev,
        ) {
            Stop::Answered(text) | Stop::StepDone(text) | Stop::Finished(text) => {
                Ok(StepEnd::Done(text))
            }
            Stop::GaveUp { reason, last_error } => Ok(StepEnd::GaveUp(reason, last_error)),
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
