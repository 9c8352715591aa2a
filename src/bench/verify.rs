//! Proof of solvability: every task's gold solution runs through the real
//! agent loop — the replay backend plays one `execute_python` call per gold
//! cell, then `finish` — in a real sandbox, and every declared output must
//! then exist and hold real content (see [`crate::outputs`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::data::{self, Provenance};
use crate::agent::memory::ErrorMemory;
use crate::agent::plan::DualLimits;
use crate::agent::run::{run_task, sandbox_limits, Arch, RunOptions};
use crate::agent::single::AgentLimits;
use crate::agent::solution::split_cells;

use crate::card;
use crate::llm::replay::ReplayBackend;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{Message, ToolCall};
use crate::observation;
use crate::outputs::{self, OutputCheck};
use crate::sandbox::Zygote;
use crate::task::LoadedTask;

/// The verdict on one task.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The task id.
    pub id: String,
    /// Gold cells played.
    pub cells: usize,
    /// Seconds spent generating data (0 when cached or given).
    pub generate_seconds: f64,
    /// Seconds of the gold run.
    pub run_seconds: f64,
    /// Each declared output with its check.
    pub outputs: Vec<(String, OutputCheck)>,
    /// Everything wrong, each naming the task and the file or cell.
    pub problems: Vec<String>,
    /// What the agent's output checks would say about the gold's outputs
    /// (the run itself has them off): a measure of their false alarms.
    pub check_warnings: Vec<String>,
}

impl Verdict {
    /// True when the gold ran and every output has content.
    pub fn passed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The gold solution as the LLM alone's one answer: the whole script in a
/// fenced block (`--arch none`).
pub fn gold_alone_messages(source: &str) -> Vec<Message> {
    vec![Message {
        content: Some(format!("```python\n{}\n```", source.trim_end())),
        ..Message::default()
    }]
}

/// The gold of a task the data cannot answer (`solvable: false`), played
/// by architecture `arch` from the gold messages it would get otherwise:
/// the gold's cells (the exploration that shows why), then `decline` with
/// the task's reason in place of the closing `finish` or `step_done`. The
/// tree search's Planner and the LLM alone decline at once (the Planner
/// with a `decline` call, the LLM alone with a `DECLINE:` line).
pub fn gold_declining(
    arch: crate::agent::run::Arch,
    mut messages: Vec<Message>,
    reason: &str,
) -> Vec<Message> {
    use crate::agent::run::Arch;
    let decline = |id: &str| Message {
        content: Some("The data cannot answer this task.".into()),
        tool_calls: vec![ToolCall::function(
            id,
            "decline",
            json!({ "reason": reason }).to_string(),
        )],
        ..Message::default()
    };
    match arch {
        Arch::Single | Arch::Dual => {
            messages.pop();
            messages.push(decline("gold_decline"));
            messages
        }
        Arch::Mcts => vec![decline("gold_decline")],
        Arch::None => vec![Message {
            content: Some(format!("DECLINE: {reason}")),
            ..Message::default()
        }],
    }
}

/// The assistant messages that play a gold script: one `execute_python` per
/// cell, then `finish`.
pub fn gold_messages(task_id: &str, source: &str) -> Vec<Message> {
    let cells = split_cells(source);
    let n = cells.len();
    let call = |i: usize, name: &str, arguments: serde_json::Value| {
        ToolCall::function(format!("gold_{i}"), name, arguments.to_string())
    };
    let mut messages: Vec<Message> = cells
        .into_iter()
        .enumerate()
        .map(|(i, code)| Message {
            content: Some(format!(
                "Gold solution of {task_id}, cell {} of {n}.",
                i + 1
            )),
            tool_calls: vec![call(i + 1, EXECUTE_PYTHON, json!({ "code": code }))],
            ..Message::default()
        })
        .collect();
    messages.push(Message {
        content: Some("The gold solution has run.".into()),
        tool_calls: vec![call(
            n + 1,
            "finish",
            json!({ "summary": format!("gold solution of {task_id}") }),
        )],
        ..Message::default()
    });
    messages
}

/// A gold script's cells in 3–7 consecutive groups of nearly equal size,
/// one per plan step (trailing groups are empty when there are fewer cells
/// than the fewest steps of a plan).
fn gold_groups(source: &str) -> Vec<Vec<String>> {
    use crate::agent::plan::PLAN_STEPS;
    let cells = split_cells(source);
    let steps = cells.len().clamp(PLAN_STEPS.0, PLAN_STEPS.1);
    let total = cells.len().max(1);
    let mut groups: Vec<Vec<String>> = vec![Vec::new(); steps];
    for (i, cell) in cells.into_iter().enumerate() {
        groups[i * steps / total].push(cell);
    }
    groups
}

/// The Planner's message submitting one step per gold group.
fn gold_plan_message(task_id: &str, steps: usize) -> Message {
    let plan: Vec<serde_json::Value> = (1..=steps)
        .map(|s| json!({ "goal": format!("gold cells of step {s} of {task_id} have run"), "details": "" }))
        .collect();
    Message {
        content: Some(format!("Plan for the gold solution of {task_id}.")),
        tool_calls: vec![ToolCall::function(
            "gold_plan",
            "submit_plan",
            json!({ "steps": plan }).to_string(),
        )],
        ..Message::default()
    }
}

/// The messages that play a gold script through the Dual Agent: a plan of
/// 3–7 steps (the cells split into that many consecutive groups), then each
/// step's cells as `execute_python` calls closed by `step_done`.
pub fn gold_dual_messages(task_id: &str, source: &str) -> Vec<Message> {
    let groups = gold_groups(source);
    let mut messages = vec![gold_plan_message(task_id, groups.len())];
    let call = |id: String, name: &str, arguments: serde_json::Value| {
        ToolCall::function(id, name, arguments.to_string())
    };
    for (s, group) in groups.into_iter().enumerate() {
        for (c, code) in group.into_iter().enumerate() {
            messages.push(Message {
                content: Some(format!("Gold step {}, cell {}.", s + 1, c + 1)),
                tool_calls: vec![call(
                    format!("gold_{}_{}", s + 1, c + 1),
                    EXECUTE_PYTHON,
                    json!({ "code": code }),
                )],
                ..Message::default()
            });
        }
        messages.push(Message {
            content: Some(format!("Gold step {} is done.", s + 1)),
            tool_calls: vec![call(
                format!("gold_{}_done", s + 1),
                "step_done",
                json!({ "summary": format!("gold step {}", s + 1) }),
            )],
            ..Message::default()
        });
    }
    messages
}

/// The messages that play a gold script through the tree search: the same
/// plan as [`gold_dual_messages`], then each step's cells as one candidate,
/// asked `width` times (identical candidates count once, so the gold is the
/// only child of each step); with `rollout`, the rest of the gold as the
/// rollout from the first step, which completes the task.
pub fn gold_mcts_messages(
    task_id: &str,
    source: &str,
    width: usize,
    rollout: bool,
) -> Vec<Message> {
    let groups = gold_groups(source);
    let mut messages = vec![gold_plan_message(task_id, groups.len())];
    let step_code = |s: usize, group: &[String]| {
        if group.is_empty() {
            format!("pass  # gold step {} has no cell", s + 1)
        } else {
            group.join("\n\n")
        }
    };
    let n = groups.len();
    for (s, group) in groups.iter().enumerate() {
        let code = step_code(s, group);
        for k in 0..width.max(1) {
            messages.push(Message {
                content: Some(format!("Gold step {}.", s + 1)),
                tool_calls: vec![ToolCall::function(
                    format!("gold_{}_{k}", s + 1),
                    EXECUTE_PYTHON,
                    json!({ "code": code }).to_string(),
                )],
                ..Message::default()
            });
        }
        if rollout && s + 1 < n {
            // The rollout from the first step's node: the gold's remaining
            // steps in one completion, which completes the task.
            let rest: Vec<String> = groups
                .iter()
                .enumerate()
                .skip(s + 1)
                .map(|(k, g)| format!("# %% step {}\n{}", k + 1, step_code(k, g)))
                .collect();
            messages.push(Message {
                content: Some("Gold rollout.".to_string()),
                tool_calls: vec![ToolCall::function(
                    "gold_rollout",
                    EXECUTE_PYTHON,
                    json!({ "code": rest.join("\n") }).to_string(),
                )],
                ..Message::default()
            });
            break;
        }
    }
    messages
}

/// Runs one task's gold in `out` (a fresh work dir) and judges it.
pub fn verify_task(zygote: &Arc<Zygote>, loaded: &mut LoadedTask, out: &Path) -> Verdict {
    verify_task_within(zygote, loaded, out, None)
}

/// [`verify_task`] with the gold's replay behind a context window of
/// `window` tokens (`bench verify --context-window`): the run compacts
/// its history to fit, as a live run with that window would.
pub fn verify_task_within(
    zygote: &Arc<Zygote>,
    loaded: &mut LoadedTask,
    out: &Path,
    window: Option<u64>,
) -> Verdict {
    let id = loaded.task.id.clone();
    let mut verdict = Verdict {
        id: id.clone(),
        cells: 0,
        generate_seconds: 0.0,
        run_seconds: 0.0,
        outputs: Vec::new(),
        problems: Vec::new(),
        check_warnings: Vec::new(),
    };
    match data::ensure(zygote, loaded) {
        Ok(Provenance::Generated(took)) => verdict.generate_seconds = took.as_secs_f64(),
        Ok(_) => {}
        Err(e) => {
            verdict.problems.push(e.to_string());
            return verdict;
        }
    }
    if let Some(dir) = &loaded.data_dir {
        for problem in unreadable_data(dir) {
            verdict.problems.push(format!("{id}: {problem}"));
        }
    }
    let Some(gold) = loaded.gold.clone() else {
        verdict
            .problems
            .push(format!("{id}: the task has no gold solution"));
        return verdict;
    };
    let source = match std::fs::read_to_string(&gold) {
        Ok(s) => s,
        Err(e) => {
            verdict
                .problems
                .push(format!("{id}: {}: cannot read: {e}", gold.display()));
            return verdict;
        }
    };
    let mut messages = gold_messages(&id, &source);
    if let Some(reason) = loaded.task.unsolvable_reason.as_deref() {
        messages = gold_declining(Arch::Single, messages, reason);
    }
    verdict.cells = messages.len() - 1;
    let replay = ReplayBackend::from_messages(&format!("gold {}", gold.display()), messages);
    let mut backend: Box<dyn crate::llm::ChatBackend> = match window {
        Some(tokens) => Box::new(replay.with_window(tokens)),
        None => Box::new(replay),
    };
    let budget = Duration::from_secs(900);
    let options = RunOptions {
        arch: Arch::Single,
        include_workflow: true,
        include_domain_knowledge: true,
        protocol: crate::protocol::Protocol::Ours,
        hints: Vec::new(),
        limits: AgentLimits {
            max_rounds: verdict.cells + 2,
            budget,
            context_window: window,
            ..AgentLimits::default()
        },
        dual: DualLimits::default(),
        mcts: crate::agent::mcts::MctsLimits::default(),
        sandbox: sandbox_limits(zygote.config(), Duration::from_secs(300), budget),
        docs: None,
        solutions: None,
        // The gold is the reference: its replay is not told about its outputs.
        output_checks: false,
        vision_feedback: false,
        notebook: crate::notebook::NotebookMode::Off,
        reproduce: None,
        live_output: None,
    };
    let started = Instant::now();
    let mut memory = ErrorMemory::in_memory();
    let summary = run_task(
        zygote,
        loaded,
        &mut *backend,
        &mut memory,
        out,
        &options,
        &mut |_| {},
    );
    verdict.run_seconds = started.elapsed().as_secs_f64();
    match summary {
        Err(e) => verdict
            .problems
            .push(format!("{id}: the run could not start: {e:#}")),
        Ok(summary) => {
            for failure in failed_cells(&out.join("transcript.jsonl")) {
                verdict.problems.push(format!("{id}: {failure}"));
            }
            let wanted = if loaded.task.solvable {
                "finished"
            } else {
                "declined"
            };
            if summary.status != wanted && verdict.problems.is_empty() {
                verdict.problems.push(format!(
                    "{id}: the run ended {}: {}",
                    summary.status, summary.reason
                ));
            }
        }
    }
    for output in &loaded.task.outputs {
        let check = outputs::check_declared(out, output);
        if !loaded.task.solvable {
            // The gold of a task the data cannot answer declines, and
            // writes none of the outputs the request asks for.
            if !matches!(&check, OutputCheck::Unreadable(why) if why == "missing") {
                verdict.problems.push(format!(
                    "{id}: the task is unsolvable, yet its gold wrote {output}"
                ));
            }
            verdict.outputs.push((output.clone(), check));
            continue;
        }
        match &check {
            OutputCheck::Content(..) => {}
            OutputCheck::Unreadable(why) if why == "missing" => verdict.problems.push(format!(
                "{id}: declared output {output} was not produced by the gold"
            )),
            other => verdict
                .problems
                .push(format!("{id}: {output}: {}", other.describe())),
        }
        verdict.outputs.push((output.clone(), check));
    }
    verdict.check_warnings = crate::outputs::sanity::OutputChecks::new(
        loaded.data_dir.as_deref(),
        &loaded.task.instruction,
    )
    .all(&out.join("pred_results"));
    verdict
}

/// Gold cells that did not run cleanly, from the run's transcript.
fn failed_cells(transcript: &Path) -> Vec<String> {
    let Ok(cells) = crate::record::cells(transcript) else {
        return vec!["no transcript was written".into()];
    };
    cells
        .iter()
        .filter(|c| c.status != "Ok")
        .map(|c| {
            let last = observation::error_line(&c.observation);
            let cell = c.call_id.trim_start_matches("gold_");
            format!("gold cell {cell} failed ({}): {last}", c.status)
        })
        .collect()
}

/// Data files GDAL cannot read although their extension says it should.
pub fn unreadable_data(dir: &Path) -> Vec<String> {
    card::files_under(dir)
        .into_iter()
        .filter(|(name, _)| !card::is_sidecar(Path::new(name)))
        .filter_map(|(name, _)| match outputs::check(&dir.join(&name)) {
            OutputCheck::Unreadable(why) => Some(format!(
                "data file data/{name} is corrupt or unreadable: {why}"
            )),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_cells_become_calls_then_finish() {
        let m = gold_messages("T9", "a = 1\n# %%\nb = a + 1\n");
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].tool_calls[0].function.name, "execute_python");
        assert!(m[1].tool_calls[0].function.arguments.contains("b = a + 1"));
        assert_eq!(m[2].tool_calls[0].function.name, "finish");
    }

    #[test]
    fn gold_plays_through_the_dual_agent_as_a_plan_of_consecutive_cell_groups() {
        use crate::agent::plan::{parse_plan, PLAN_STEPS};
        let source: String = (1..=10).map(|i| format!("# %%\nx{i} = {i}\n")).collect();
        let m = gold_dual_messages("T9", &source);
        let plan = parse_plan(&m[0], PLAN_STEPS.0, PLAN_STEPS.1).unwrap();
        assert_eq!(plan.steps.len(), 7);
        // Per step: its cells, then step_done; the cells stay in order.
        let names: Vec<&str> = m[1..]
            .iter()
            .map(|x| x.tool_calls[0].function.name.as_str())
            .collect();
        assert_eq!(names.iter().filter(|n| **n == "step_done").count(), 7);
        assert_eq!(names.iter().filter(|n| **n == "execute_python").count(), 10);
        let codes: Vec<&str> = m
            .iter()
            .flat_map(|x| &x.tool_calls)
            .filter(|c| c.function.name == "execute_python")
            .map(|c| c.function.arguments.as_str())
            .collect();
        assert!(codes[0].contains("x1 = 1") && codes[9].contains("x10 = 10"));
        // Fewer cells than the fewest steps: trailing steps are empty.
        let short = gold_dual_messages("T9", "a = 1\n");
        assert_eq!(
            parse_plan(&short[0], PLAN_STEPS.0, PLAN_STEPS.1)
                .unwrap()
                .steps
                .len(),
            3
        );
        assert_eq!(short.len(), 1 + 1 + 3);
    }
}
