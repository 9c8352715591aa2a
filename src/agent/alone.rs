//! The LLM alone (GeoAgent §5.2's baseline, `--arch none`): one generation
//! without tools; the fenced code of the answer runs once in the sandbox,
//! and the model never sees its output. The run is finished when the code
//! ran and every declared output exists. It shares the Single Agent's
//! prompts, told that it has no tools, so that the agent's gain is
//! measured against the same instructions.

use std::time::Instant;

use super::converse::{AgentLimits, AgentOutcome, Ending, Plain, RunState};
use super::events::{AgentEvent, Events};
use super::tools::{missing_outputs, Toolbox};
use crate::llm::adapt::fenced_code;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{ChatBackend, Message, Role};
use crate::record::{CellRecord, MessageEvent, ToolEvent, Transcript};
use crate::sandbox::{CellStatus, SandboxError};

/// What the LLM alone is told after the task, in place of the tools.
pub const NO_TOOLS: &str = "You have no tools in this run: answer with one complete Python script in a single ```python block. It runs once, as written, in the sandbox described above (the data in data/, outputs to pred_results/); you will not see its output, so write it to run to the end without help. If the data cannot answer the task (a layer, column or period it needs is absent, the CRS cannot be known, or the request contradicts itself), answer instead with one line `DECLINE: <the reason>` and no code: inventing values is worse than declining.";

/// The reason of an answer that declines the task: a line starting with
/// `DECLINE:` in an answer without fenced code.
pub fn declined(reply: &str) -> Option<String> {
    if fenced_code(reply).is_some() {
        return None;
    }
    reply
        .lines()
        .find_map(|line| crate::agent::tools::reason_in(line.trim().strip_prefix("DECLINE:")?))
}

/// Asks once, runs the answer's code once, and says how it went.
pub fn run(
    backend: &mut dyn ChatBackend,
    toolbox: &mut Toolbox<'_>,
    transcript: &mut Transcript,
    system: String,
    task_prompt: String,
    limits: &AgentLimits,
    events: Events<'_>,
) -> AgentOutcome {
    let mut state = RunState::new();
    let messages = vec![
        Message::text(Role::System, system),
        Message::text(Role::User, format!("{task_prompt}\n\n{NO_TOOLS}")),
    ];
    for m in &messages {
        transcript.record(MessageEvent::of(Some(0), None, m.clone()));
    }
    let (response, took) = match state.ask(&mut Plain(backend), &messages, &[], limits, &mut |_| {})
    {
        Ok(answer) => answer,
        Err(ending) => return state.outcome(ending, None),
    };
    transcript.record(MessageEvent {
        usage: Some(response.usage),
        llm_ms: Some(took.as_millis() as u64),
        retries: Some(response.retries),
        ..MessageEvent::of(Some(state.rounds), None, response.message.clone())
    });
    let reply = response.message.content.unwrap_or_default();
    if let Some(reason) = declined(&reply) {
        return state.outcome(Ending::Declined(reason), None);
    }
    let code = fenced_code(&reply).unwrap_or_else(|| reply.trim().to_string());
    if code.trim().is_empty() {
        return state.outcome(Ending::Failed("the answer has no code".into()), None);
    }
    let round = state.rounds;
    (events)(AgentEvent::CellRunning);
    let ran = Instant::now();
    let (outcome, written) = match toolbox.execute_watching(&code) {
        Ok(ran) => ran,
        Err(SandboxError::BudgetExhausted(b)) => {
            return state.outcome(
                Ending::Failed(format!("the sandbox's {} s budget is spent", b.as_secs())),
                None,
            )
        }
        Err(err) => return state.outcome(Ending::Error(format!("sandbox failure: {err}")), None),
    };
    let seconds = ran.elapsed();
    state.tool_time += seconds;
    let text = crate::observation::render(&outcome);
    // The transcript keeps the machine form (`Ok`, `TimedOut { … }`); the
    // progress line says it in words.
    let status = format!("{:?}", outcome.status);
    let ok = outcome.status == CellStatus::Ok;
    (events)(AgentEvent::Observation {
        round,
        name: EXECUTE_PYTHON,
        code: Some(&code),
        text: &text,
        ok,
        status: &outcome.status.to_string(),
        seconds: seconds.as_secs_f64(),
    });
    transcript.record(ToolEvent {
        round: Some(round),
        call_id: Some("alone".into()),
        name: EXECUTE_PYTHON.into(),
        arguments: serde_json::json!({ "code": code }).to_string(),
        status: Some(status.clone()),
        tool_ms: Some(seconds.as_millis() as u64),
        cell_us: Some(outcome.result.duration_us),
        observation: Some(text.clone()),
        cell: Some(CellRecord::of(&outcome, &written)),
        ..ToolEvent::default()
    });
    let missing = missing_outputs(&toolbox.out_dir, &toolbox.outputs);
    let ending = if !ok {
        Ending::Failed(format!(
            "the script did not run to its end: {}",
            crate::observation::error_line(&text)
        ))
    } else if !missing.is_empty() {
        Ending::Failed(format!(
            "the script ran but these outputs do not exist: {}",
            missing.join(", ")
        ))
    } else {
        Ending::Finished
    };
    let summary = matches!(ending, Ending::Finished)
        .then(|| "the script ran once and wrote every declared output".to_string());
    state.outcome(ending, summary)
}

#[cfg(test)]
mod tests {
    use super::declined;

    #[test]
    fn a_decline_line_without_code_declines() {
        assert_eq!(
            declined("The data hold 2015 only.\nDECLINE: no 2020 layer in data/\n").as_deref(),
            Some("no 2020 layer in data/")
        );
        // Code wins: the script runs.
        assert_eq!(declined("DECLINE: maybe\n```python\nprint(1)\n```\n"), None);
        assert_eq!(declined("DECLINE:   \n"), None);
        assert_eq!(declined("DECLINE: ,\n"), None, "punctuation is no reason");
        assert_eq!(declined("print(1)"), None);
    }
}
