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

use minijinja::context;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::converse::{
    converse, signalled, AgentLimits, AgentOutcome, ConverseLimits, Ending, OnText, Plain,
    RunState, Stop, Turn,
};
use super::events::{AgentEvent, Events};
use super::memory::ErrorMemory;
use super::prompt;
use super::tools::{self, missing_outputs, Toolbox};
use super::transcript::Transcript;
use crate::llm::{adapt, ChatBackend, Message, Role, ToolSpec};

/// Bounds of the Dual Agent.
#[derive(Debug, Clone)]
pub struct DualLimits {
    /// Failing cells tolerated per step before the step fails.
    pub max_corrections: usize,
    /// Replanning cycles.
    pub max_replans: usize,
    /// Model calls per step.
    pub step_rounds: usize,
}

impl Default for DualLimits {
    fn default() -> Self {
        DualLimits {
            max_corrections: 10,
            max_replans: 2,
            step_rounds: 20,
        }
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanStep {
    /// What exists when the step is done (one sentence).
    pub goal: String,
    /// Method, exact data names, parameters.
    #[serde(default)]
    pub details: String,
}

/// A plan: ordered steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    /// The steps, in order.
    pub steps: Vec<PlanStep>,
}

/// Fewest and most steps of a first plan (a replan may have one step).
pub const PLAN_STEPS: (usize, usize) = (3, 7);

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

/// The `submit_plan` tool.
pub fn plan_spec() -> ToolSpec {
    ToolSpec {
        name: "submit_plan".into(),
        description: "Submit the ordered plan.".into(),
        parameters: tools::schema::<Plan>(),
    }
}

/// The `step_done` tool.
pub fn step_done_spec() -> ToolSpec {
    ToolSpec {
        name: "step_done".into(),
        description: "Mark the current plan step as done, with a summary of what it produced."
            .into(),
        parameters: tools::schema::<tools::FinishArgs>(),
    }
}

/// Reads a plan from a planner message: a `submit_plan` call, or a JSON
/// object in the text. Checks the number of steps.
pub fn parse_plan(message: &Message, min: usize, max: usize) -> Result<Plan, String> {
    let raw = match message
        .tool_calls
        .iter()
        .find(|c| c.function.name == "submit_plan")
    {
        Some(call) => adapt::repair_json(&call.function.arguments)
            .ok_or("the submit_plan arguments are not JSON")?,
        None => {
            let text = message.content.as_deref().unwrap_or("");
            let start = text
                .find('{')
                .ok_or("no submit_plan call and no JSON plan in the text")?;
            let end = text.rfind('}').map(|e| e + 1).unwrap_or(text.len());
            adapt::repair_json(&text[start..end]).ok_or("the plan in the text is not JSON")?
        }
    };
    let plan: Plan = serde_json::from_value(raw)
        .map_err(|e| format!("the plan does not match its schema: {e}"))?;
    if plan.steps.len() < min || plan.steps.len() > max {
        return Err(format!(
            "the plan has {} steps; it needs {min} to {max}",
            plan.steps.len()
        ));
    }
    if plan.steps.iter().any(|s| s.goal.trim().is_empty()) {
        return Err("every step needs a goal".into());
    }
    Ok(plan)
}

/// The Planner's system prompt for plans of `min`..=`max` steps; `chat`
/// words it for one request of a chat session instead of a whole task.
pub fn planner_prompt(
    min: usize,
    max: usize,
    packages: &[String],
    blocked: &[gisclaw_protocol::BlockedImport],
    chat: bool,
) -> String {
    prompt::render(
        "planner",
        context! { min_steps => min, max_steps => max, packages => packages, blocked => blocked, chat => chat },
    )
}

/// The Worker's brief for step `current` (1-based) of `plan`, after the
/// `done` steps; `finish_tool`: the last step ends the run with `finish`.
pub fn step_brief(plan: &Plan, current: usize, done: &[String], finish_tool: bool) -> String {
    prompt::render(
        "step",
        context! { steps => plan.steps, current => current, step => plan.steps.get(current.wrapping_sub(1)), done => done, finish_tool => finish_tool },
    )
}

/// A planner answer, checked: the message as kept in the planner's
/// conversation, the plan or what is wrong with it, and the reply that
/// follows it in the conversation.
pub struct PlanReview {
    /// The message, with any call other than `submit_plan` dropped (a plan
    /// written as text is not a call: the text stays).
    pub message: Message,
    /// The plan, or why it was refused.
    pub plan: Result<Plan, String>,
    /// "Plan accepted." or the refusal, as a tool result or a user message.
    pub reply: Message,
}

/// Checks a planner answer for a plan of `min`..=`max` steps.
pub fn review_plan(mut message: Message, min: usize, max: usize) -> PlanReview {
    message
        .tool_calls
        .retain(|c| c.function.name == "submit_plan");
    let plan = parse_plan(&message, min, max);
    let text = match &plan {
        Ok(_) => "Plan accepted.".to_string(),
        Err(e) => format!("{e}. Call submit_plan again with {min} to {max} steps."),
    };
    let reply = match message.tool_calls.first() {
        Some(call) => Message::tool_result(&call.id, text),
        None => Message::text(Role::User, text),
    };
    PlanReview {
        message,
        plan,
        reply,
    }
}

/// What the Replanner is told: where the plan failed and why, what was
/// done, the outputs still missing and the last error.
pub fn replan_request(
    goal: &str,
    reason: &str,
    done: &[String],
    missing: &[String],
    last_error: Option<&str>,
) -> String {
    format!(
        "The plan failed at `{goal}`: {reason}.\nDone so far:\n{}\nMissing outputs: {}\nLast error:\n{}\n\nWrite a new plan (1 to {} steps) for the remaining work only. The sandbox keeps every variable and file made so far.",
        if done.is_empty() { "- nothing".to_string() } else { done.iter().map(|d| format!("- {d}")).collect::<Vec<_>>().join("\n") },
        if missing.is_empty() { "none".to_string() } else { missing.join(", ") },
        last_error.unwrap_or("(none)"),
        PLAN_STEPS.1
    )
}

/// How many times the Planner is asked for a valid plan.
pub const PLAN_TRIES: usize = 3;

/// Asks the planner (up to [`PLAN_TRIES`] times) for a valid plan.
#[allow(clippy::too_many_arguments)]
fn ask_planner(
    backend: &mut dyn ChatBackend,
    transcript: &mut Transcript,
    state: &mut RunState,
    limits: &AgentLimits,
    messages: &mut Vec<Message>,
    min: usize,
    max: usize,
    replan: usize,
    events: Events<'_>,
) -> Result<Plan, Ending> {
    let specs = [plan_spec()];
    let mut last = String::new();
    for _ in 0..PLAN_TRIES {
        let (response, llm_time) = state.ask(
            &mut Plain(&mut *backend),
            messages,
            &specs,
            limits,
            &mut |_| {},
        )?;
        let adapted = adapt::adapt(response.message, state.rounds);
        let review = review_plan(adapted.message, min, max);
        let _ = transcript.record(
            "message",
            json!({
                "round": state.rounds,
                "agent": "planner",
                "message": review.message,
                "usage": response.usage,
                "llm_ms": llm_time.as_millis() as u64,
                "retries": response.retries,
                "backend_notes": response.notes,
                "plan": review.plan.as_ref().ok(),
                "plan_error": review.plan.as_ref().err(),
            }),
        );
        messages.push(review.message);
        messages.push(review.reply);
        match review.plan {
            Ok(plan) => {
                events(AgentEvent::Plan {
                    round: state.rounds,
                    steps: &plan.steps,
                    replan,
                });
                return Ok(plan);
            }
            Err(e) => {
                events(AgentEvent::PlanRefused {
                    round: state.rounds,
                    reason: &e,
                });
                last = e;
            }
        }
    }
    Err(Ending::Failed(format!(
        "the planner gave no valid plan in {PLAN_TRIES} tries ({last})"
    )))
}

/// Runs Plan → Execute → Replan.
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
    let mut state = RunState::new();
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
        let _ = transcript.record(
            "message",
            json!({ "round": 0, "agent": "planner", "message": m }),
        );
    }
    let mut plan = match ask_planner(
        backend,
        transcript,
        &mut state,
        limits,
        &mut planner,
        PLAN_STEPS.0,
        PLAN_STEPS.1,
        0,
        &mut *events,
    ) {
        Ok(p) => p,
        Err(ending) => return state.outcome(ending, None),
    };
    let mut done: Vec<String> = Vec::new();
    let mut replans = 0;
    let mut worker_specs = toolbox.offered();
    worker_specs.push(step_done_spec());
    loop {
        let mut failure: Option<(String, String, Option<String>)> = None;
        for (i, step) in plan.steps.iter().enumerate() {
            let brief = step_brief(&plan, i + 1, &done, true);
            let mut messages = vec![
                Message::text(Role::System, inputs.system.clone()),
                Message::text(Role::User, format!("{}\n\n{brief}", inputs.task_prompt)),
            ];
            let _ = transcript.record("step", json!({ "step": i + 1, "of": plan.steps.len(), "goal": step.goal, "replan": replans }));
            let _ = transcript.record(
                "message",
                json!({ "round": state.rounds, "agent": "worker", "message": messages[1] }),
            );
            events(AgentEvent::Step {
                index: i + 1,
                of: plan.steps.len(),
                goal: &step.goal,
            });
            let bounds = ConverseLimits {
                run: limits.clone(),
                max_rounds: dual.step_rounds,
                max_failures: Some(dual.max_corrections),
            };
            let mut model = Plain(&mut *backend);
            let mut turn = Turn {
                model: &mut model,
                toolbox: &mut *toolbox,
                memory: &mut *memory,
                transcript: &mut *transcript,
                events: &mut *events,
                agent: Some("worker"),
                on_text: OnText::Nudge,
                stop: &signalled,
            };
            match converse(&mut turn, &mut messages, &worker_specs, &bounds, &mut state) {
                Stop::Finished(summary) => return state.outcome(Ending::Finished, Some(summary)),
                Stop::StepDone(summary) | Stop::Answered(summary) => {
                    done.push(format!("{}: {}", step.goal, summary.trim()))
                }
                Stop::GaveUp { reason, last_error } => {
                    failure = Some((step.goal.clone(), reason, last_error));
                    break;
                }
                Stop::End(ending) => return state.outcome(ending, None),
            }
        }
        let missing = missing_outputs(&toolbox.out_dir, &toolbox.outputs);
        let (goal, reason, last_error) = match failure {
            None if missing.is_empty() => {
                return state.outcome(Ending::Finished, Some(done.join("\n")));
            }
            None => (
                "the plan's end".to_string(),
                "every step was done but outputs are missing".to_string(),
                None,
            ),
            Some(f) => f,
        };
        if replans >= dual.max_replans {
            return state.outcome(
                Ending::Failed(format!(
                    "step `{goal}` failed ({reason}) after {replans} replanning cycle(s)"
                )),
                None,
            );
        }
        replans += 1;
        let context = replan_request(&goal, &reason, &done, &missing, last_error.as_deref());
        events(AgentEvent::Replanning {
            cycle: replans,
            of: dual.max_replans,
            reason: &reason,
        });
        let _ = transcript.record(
            "replan",
            json!({ "cycle": replans, "failed_step": goal, "reason": reason }),
        );
        planner.push(Message::text(Role::User, context));
        plan = match ask_planner(
            backend,
            transcript,
            &mut state,
            limits,
            &mut planner,
            1,
            PLAN_STEPS.1,
            replans,
            &mut *events,
        ) {
            Ok(p) => p,
            Err(ending) => return state.outcome(ending, None),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    fn call(args: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: None,
            tool_calls: vec![ToolCall::function("p", "submit_plan", args)],
            tool_call_id: None,
            images: Vec::new(),
        }
    }

    #[test]
    fn plans_are_checked_for_shape_and_length() {
        let three = r#"{"steps":[{"goal":"a"},{"goal":"b","details":"x"},{"goal":"c"}]}"#;
        assert_eq!(parse_plan(&call(three), 3, 7).unwrap().steps.len(), 3);
        let err = parse_plan(&call(r#"{"steps":[{"goal":"a"}]}"#), 3, 7).unwrap_err();
        assert!(err.contains("1 steps") && err.contains("3 to 7"), "{err}");
        assert!(parse_plan(&call(r#"{"steps":[{"goal":"a"}]}"#), 1, 7).is_ok());
        assert!(parse_plan(&call(r#"{"plan":[]}"#), 1, 7)
            .unwrap_err()
            .contains("schema"));
        let text = Message::text(
            Role::Assistant,
            format!("Here is the plan:\n```json\n{three}\n```"),
        );
        assert_eq!(parse_plan(&text, 3, 7).unwrap().steps[1].details, "x");
        // Truncated JSON is repaired.
        assert_eq!(
            parse_plan(&call(&three[..three.len() - 3]), 3, 7)
                .unwrap()
                .steps
                .len(),
            3
        );
    }

    #[test]
    fn the_plan_tool_has_a_schema_with_steps() {
        let spec = plan_spec();
        assert_eq!(spec.parameters["required"], json!(["steps"]));
        assert!(spec.parameters.to_string().contains("goal"));
    }
}
