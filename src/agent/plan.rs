//! Plans: the Planner's tools (`submit_plan`, and `step_done` for the
//! Worker), reading and checking a plan from a planner answer, and the
//! Planner's and Worker's prompts. The driver that runs a plan is
//! [`super::plan_run`].

use minijinja::context;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::prompt;
use super::tools;
use crate::llm::{adapt, Message, Role, ToolSpec};

/// Bounds of a Plan → Execute → Replan run.
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
    #[schemars(length(min = 1, max = 7))]
    pub steps: Vec<PlanStep>,
}

/// Fewest and most steps of a first plan (a replan may have one step).
pub const PLAN_STEPS: (usize, usize) = (3, 7);

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

/// Why a planner answer is not a usable plan; said back to the planner.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The `submit_plan` arguments cannot be read even after repair.
    #[error("the submit_plan arguments are not JSON")]
    CallNotJson,
    /// No call and no `{` in the text.
    #[error("no submit_plan call and no JSON plan in the text")]
    NoPlan,
    /// The text has braces but no JSON between them.
    #[error("the plan in the text is not JSON")]
    TextNotJson,
    /// JSON that is not a plan.
    #[error("the plan does not match its schema: {0}")]
    Schema(String),
    /// Too few or too many steps.
    #[error("the plan has {steps} steps; it needs {min} to {max}")]
    StepCount {
        /// Steps given.
        steps: usize,
        /// Fewest allowed.
        min: usize,
        /// Most allowed.
        max: usize,
    },
    /// A step without a goal.
    #[error("every step needs a goal")]
    EmptyGoal,
}

/// Reads a plan from a planner message: a `submit_plan` call, or a JSON
/// object in the text. Checks the number of steps.
pub fn parse_plan(message: &Message, min: usize, max: usize) -> Result<Plan, PlanError> {
    let raw = match message
        .tool_calls
        .iter()
        .find(|c| c.function.name == "submit_plan")
    {
        Some(call) => adapt::repair_json(&call.function.arguments).ok_or(PlanError::CallNotJson)?,
        None => {
            let text = message.content.as_deref().unwrap_or("");
            let start = text.find('{').ok_or(PlanError::NoPlan)?;
            let end = text.rfind('}').map(|e| e + 1).unwrap_or(text.len());
            adapt::repair_json(&text[start..end]).ok_or(PlanError::TextNotJson)?
        }
    };
    let plan: Plan = serde_json::from_value(raw).map_err(|e| PlanError::Schema(e.to_string()))?;
    if plan.steps.len() < min || plan.steps.len() > max {
        return Err(PlanError::StepCount {
            steps: plan.steps.len(),
            min,
            max,
        });
    }
    if plan.steps.iter().any(|s| s.goal.trim().is_empty()) {
        return Err(PlanError::EmptyGoal);
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
    pub plan: Result<Plan, PlanError>,
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

/// An operation that failed in a step: the statement that raised (or the
/// cell's first line when the traceback names none) and its error line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedOperation {
    /// The statement (at most [`FailedOperation::WIDTH`] characters).
    pub operation: String,
    /// The exception line (likewise cut).
    pub error: String,
}

impl FailedOperation {
    /// Characters kept of the statement and of the error.
    pub const WIDTH: usize = 160;
    /// Failed operations listed to the Replanner (the latest distinct ones).
    pub const LISTED: usize = 8;

    /// The failed operation of a cell with `code` whose observation is
    /// `observation`.
    pub fn of_cell(code: &str, observation: &str) -> FailedOperation {
        let statement = crate::observation::failing_statement(observation).unwrap_or_else(|| {
            code.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
                .unwrap_or("")
        });
        FailedOperation {
            operation: cut(statement, Self::WIDTH),
            error: cut(crate::observation::error_line(observation), Self::WIDTH),
        }
    }

    /// Adds `new` to `list` unless already there, keeping the latest
    /// [`FailedOperation::LISTED`].
    pub fn remember(
        list: &mut Vec<FailedOperation>,
        new: impl IntoIterator<Item = FailedOperation>,
    ) {
        for op in new {
            list.retain(|o| o != &op);
            list.push(op);
        }
        let extra = list.len().saturating_sub(Self::LISTED);
        list.drain(..extra);
    }
}

fn cut(text: &str, width: usize) -> String {
    match text.char_indices().nth(width) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// What the Replanner is told (the paper's failure-aware context): where
/// the plan failed and why, what was done, the outputs still missing, the
/// last error and every operation that failed so far, to be avoided by a
/// simpler plan of the remaining work.
pub fn replan_request(
    goal: &str,
    reason: &str,
    done: &[String],
    missing: &[String],
    last_error: Option<&str>,
    failed: &[FailedOperation],
) -> String {
    let failed_text = if failed.is_empty() {
        "- none (the step ran without errors but did not reach its goal)".to_string()
    } else {
        failed
            .iter()
            .map(|f| format!("- `{}` → {}", f.operation, f.error))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "The plan failed at `{goal}`: {reason}.\nDone so far:\n{}\nMissing outputs: {}\nOperations that failed:\n{failed_text}\nLast error:\n{}\n\nWrite a new, simpler plan (1 to {} steps) for the remaining work only, avoiding the operations that failed: use another function, method or data path for them. The sandbox keeps every variable and file made so far.",
        if done.is_empty() { "- nothing".to_string() } else { done.iter().map(|d| format!("- {d}")).collect::<Vec<_>>().join("\n") },
        if missing.is_empty() { "none".to_string() } else { missing.join(", ") },
        last_error.unwrap_or("(none)"),
        PLAN_STEPS.1
    )
}

/// How many times the Planner is asked for a valid plan.
pub const PLAN_TRIES: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

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
        let err = parse_plan(&call(r#"{"steps":[{"goal":"a"}]}"#), 3, 7)
            .unwrap_err()
            .to_string();
        assert!(err.contains("1 steps") && err.contains("3 to 7"), "{err}");
        assert!(parse_plan(&call(r#"{"steps":[{"goal":"a"}]}"#), 1, 7).is_ok());
        assert!(matches!(
            parse_plan(&call(r#"{"plan":[]}"#), 1, 7),
            Err(PlanError::Schema(_))
        ));
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
