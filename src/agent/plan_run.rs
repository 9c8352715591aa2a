//! The one Plan → Execute → Replan driver ([`plan_execute_replan`]): a
//! task run ([`super::dual`]) and a chat turn (`chat/plan.rs`) host it
//! through [`PlanHost`], which makes the model calls and runs the steps.

use std::time::Duration;

use serde_json::json;

use super::events::AgentEvent;
use super::plan::{
    plan_spec, replan_request, review_plan, DualLimits, FailedOperation, Plan, PLAN_STEPS,
    PLAN_TRIES,
};
use crate::llm::{adapt, ChatResponse, Message, Role, ToolSpec};
use crate::record::{Event, MessageEvent, Replan, StepStart};

/// How one step of a plan ended.
#[derive(Debug, Clone, PartialEq)]
pub enum StepEnd {
    /// `step_done` (or a text answer), with the Worker's summary.
    Done(String),
    /// `finish`: the whole run is done, with its summary.
    Finished(String),
    /// The step failed: why, the last error and the operations that failed.
    GaveUp {
        /// Why.
        reason: String,
        /// The last failing cell's observation.
        last_error: Option<String>,
        /// The step's failed operations, in order.
        failed: Vec<FailedOperation>,
    },
}

/// Who asks the Planner: the model calls, the transcript and the front
/// end of a task run, a chat turn or a tree search.
pub trait PlannerHost {
    /// Why the host stops early (a budget, a signal, Ctrl-C).
    type Stop;
    /// One call of the Planner on `messages`, bounded and counted like any
    /// model call: the answer and how long it took.
    fn ask_planner(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
    ) -> Result<(ChatResponse, Duration), Self::Stop>;
    /// Model calls made so far (the round of the next event).
    fn round(&self) -> usize;
    /// Writes one transcript event.
    fn record(&mut self, event: Event);
    /// Tells the front end.
    fn event(&mut self, event: AgentEvent<'_>);
    /// The stop for a Planner that gave no valid plan in [`PLAN_TRIES`].
    fn no_plan(&mut self, why: String) -> Self::Stop;
    /// Whether the Planner is offered `decline` (a task run or tree
    /// search: yes; a chat turn answers in text instead).
    fn decline_offered(&self) -> bool {
        true
    }
    /// The stop for a Planner that declined the task, with its reason.
    fn declined(&mut self, reason: String) -> Self::Stop;
}

/// The reason of a Planner's answer that declines the task: a `decline`
/// call, or (a model without tool calls) a JSON object `{"decline": "…"}`.
pub fn plan_decline(message: &Message) -> Option<String> {
    if let Some(call) = message
        .tool_calls
        .iter()
        .find(|c| c.function.name == "decline")
    {
        return crate::agent::tools::decline_reason(&call.function.arguments);
    }
    if message.tool_calls.is_empty() {
        let text = message.content.as_deref()?;
        let object = &text[text.find('{')?..=text.rfind('}')?];
        let value: serde_json::Value = serde_json::from_str(object).ok()?;
        return crate::agent::tools::reason_in(value.get("decline")?.as_str()?);
    }
    None
}

/// Where a Plan → Execute → Replan run happens: a task run or a chat turn.
/// The host makes the model calls and runs the steps in its sandbox; the
/// driver decides what comes next.
pub trait PlanHost: PlannerHost {
    /// Runs step `index` (0-based) of `plan` with a Worker, after `done`.
    fn run_step(
        &mut self,
        plan: &Plan,
        index: usize,
        done: &[String],
    ) -> Result<StepEnd, Self::Stop>;
    /// Declared outputs still missing (none for a chat turn).
    fn missing_outputs(&mut self) -> Vec<String>;
}

/// How a Plan → Execute → Replan run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanEnd<S> {
    /// Every step done and no declared output missing.
    Done,
    /// A step called `finish` with this summary.
    Finished(String),
    /// A step failed after the last replanning cycle (why).
    Failed(String),
    /// The host stopped the run; `at` is the step it was in (none while
    /// planning).
    Stopped {
        /// The host's reason.
        stop: S,
        /// The goal of the step in progress.
        at: Option<String>,
    },
}

/// A finished Plan → Execute → Replan run: how it ended and what each
/// completed step made (`goal: summary`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRun<S> {
    /// How it ended.
    pub end: PlanEnd<S>,
    /// The completed steps, in order.
    pub done: Vec<String>,
}

/// Asks the Planner (up to [`PLAN_TRIES`] times) for a plan of `min` to
/// [`PLAN_STEPS`]`.1` steps; each answer, with the plan or why it was
/// refused, goes into `planner` and the transcript.
pub fn ask_for_plan<H: PlannerHost>(
    host: &mut H,
    planner: &mut Vec<Message>,
    min: usize,
    replan: usize,
) -> Result<Plan, H::Stop> {
    let mut specs = vec![plan_spec()];
    if host.decline_offered() {
        specs.push(crate::agent::tools::decline_spec());
    }
    let mut last = String::new();
    for _ in 0..PLAN_TRIES {
        let (response, took) = host.ask_planner(planner, &specs)?;
        let round = host.round();
        let answer = adapt::adapt(response.message, round).message;
        if let Some(reason) = plan_decline(&answer).filter(|_| host.decline_offered()) {
            host.record(Event::Message(MessageEvent {
                usage: Some(response.usage),
                llm_ms: Some(took.as_millis() as u64),
                retries: Some(response.retries),
                backend_notes: Some(response.notes.clone()),
                declined: Some(reason.clone()),
                ..MessageEvent::of(Some(round), Some("planner"), answer.clone())
            }));
            planner.push(answer);
            return Err(host.declined(reason));
        }
        let review = review_plan(answer, min, PLAN_STEPS.1);
        host.record(Event::Message(MessageEvent {
            usage: Some(response.usage),
            llm_ms: Some(took.as_millis() as u64),
            retries: Some(response.retries),
            backend_notes: Some(response.notes.clone()),
            plan: review
                .plan
                .as_ref()
                .ok()
                .and_then(|p| serde_json::to_value(p).ok()),
            plan_error: review.plan.as_ref().err().map(ToString::to_string),
            ..MessageEvent::of(Some(round), Some("planner"), review.message.clone())
        }));
        planner.push(review.message);
        planner.push(review.reply);
        match review.plan {
            Ok(plan) => {
                host.event(AgentEvent::Plan {
                    round,
                    steps: &plan.steps,
                    replan,
                });
                return Ok(plan);
            }
            Err(e) => {
                last = e.to_string();
                host.event(AgentEvent::PlanRefused {
                    round,
                    reason: &last,
                });
            }
        }
    }
    Err(host.no_plan(format!(
        "the planner gave no valid plan in {PLAN_TRIES} tries ({last})"
    )))
}

/// Plan → Execute → Replan: asks `planner` (its system prompt and request
/// already in it) for a plan of `first_min` or more steps, runs each step
/// in `host`, and when a step fails (or outputs are missing at the end)
/// asks for a new plan of the rest, at most `limits.max_replans` times.
pub fn plan_execute_replan<H: PlanHost>(
    host: &mut H,
    planner: &mut Vec<Message>,
    first_min: usize,
    limits: &DualLimits,
) -> PlanRun<H::Stop> {
    let mut done: Vec<String> = Vec::new();
    // Every operation that failed in any step so far: the Replanner avoids them.
    let mut failed_ops: Vec<FailedOperation> = Vec::new();
    let mut replans = 0;
    let mut min = first_min;
    loop {
        let plan = match ask_for_plan(host, planner, min, replans) {
            Ok(plan) => plan,
            Err(stop) => {
                return PlanRun {
                    end: PlanEnd::Stopped { stop, at: None },
                    done,
                }
            }
        };
        let mut failure = None;
        for (i, step) in plan.steps.iter().enumerate() {
            host.record(Event::Step(StepStart {
                step: i + 1,
                of: plan.steps.len(),
                goal: Some(step.goal.clone()),
                replan: Some(replans),
            }));
            host.event(AgentEvent::Step {
                index: i + 1,
                of: plan.steps.len(),
                goal: &step.goal,
            });
            match host.run_step(&plan, i, &done) {
                Ok(StepEnd::Done(summary)) => {
                    done.push(format!("{}: {}", step.goal, summary.trim()))
                }
                Ok(StepEnd::Finished(summary)) => {
                    return PlanRun {
                        end: PlanEnd::Finished(summary),
                        done,
                    }
                }
                Ok(StepEnd::GaveUp {
                    reason,
                    last_error,
                    failed,
                }) => {
                    FailedOperation::remember(&mut failed_ops, failed);
                    failure = Some((step.goal.clone(), reason, last_error));
                    break;
                }
                Err(stop) => {
                    return PlanRun {
                        end: PlanEnd::Stopped {
                            stop,
                            at: Some(step.goal.clone()),
                        },
                        done,
                    }
                }
            }
        }
        let missing = host.missing_outputs();
        let (goal, reason, last_error) = match failure {
            None if missing.is_empty() => {
                return PlanRun {
                    end: PlanEnd::Done,
                    done,
                }
            }
            None => (
                "the plan's end".to_string(),
                "every step was done but outputs are missing".to_string(),
                None,
            ),
            Some(f) => f,
        };
        if replans >= limits.max_replans {
            return PlanRun {
                end: PlanEnd::Failed(format!(
                    "step `{goal}` failed ({reason}) after {replans} replanning cycle(s)"
                )),
                done,
            };
        }
        replans += 1;
        min = 1;
        host.event(AgentEvent::Replanning {
            cycle: replans,
            of: limits.max_replans,
            reason: &reason,
        });
        let request = replan_request(
            &goal,
            &reason,
            &done,
            &missing,
            last_error.as_deref(),
            &failed_ops,
        );
        let failed_json: Vec<_> = failed_ops
            .iter()
            .map(|f| json!({ "operation": f.operation, "error": f.error }))
            .collect();
        host.record(Event::Replan(Replan {
            cycle: replans,
            failed_step: goal.clone(),
            reason: reason.clone(),
            failed_operations: serde_json::Value::Array(failed_json),
            request: request.clone(),
        }));
        planner.push(Message::text(Role::User, request));
    }
}

#[cfg(test)]
mod tests {
    use super::plan_decline;
    use crate::llm::{Message, ToolCall};

    #[test]
    fn a_planner_declines_by_a_call_or_by_json_text() {
        let call = Message {
            tool_calls: vec![ToolCall::function(
                "d",
                "decline",
                r#"{"reason": "no CRS anywhere"}"#,
            )],
            ..Message::default()
        };
        assert_eq!(plan_decline(&call).as_deref(), Some("no CRS anywhere"));
        let text = Message {
            content: Some("Here: {\"decline\": \"the data end in 2015\"}".into()),
            ..Message::default()
        };
        assert_eq!(plan_decline(&text).as_deref(), Some("the data end in 2015"));
        let plan = Message {
            content: Some(r#"{"steps": [{"goal": "g", "details": "d"}]}"#.into()),
            ..Message::default()
        };
        assert_eq!(plan_decline(&plan), None);
        let empty = Message {
            tool_calls: vec![ToolCall::function("d", "decline", r#"{"reason": " "}"#)],
            ..Message::default()
        };
        assert_eq!(plan_decline(&empty), None);
    }
}
