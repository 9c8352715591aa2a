//! The search of `--arch mcts`: the Planner's steps are the depth; each
//! expansion asks the model for `width` candidate codes for the next step,
//! given the parent's namespace and last observation; each candidate is
//! checked by the static analysis against the parent's live namespace (a
//! certain finding gets one repair request, then prunes it) and run in a
//! fork of the parent's session, so no node re-runs its prefix.
//!
//! Reward of a node (GeoAgent's, on the path): the share of plan steps
//! that ran cleanly; a node that ran the last step gets 1.0 when every
//! declared output exists with real content, else `(n − ½)/n`. The search
//! stops at the first 1.0, after `iterations` expansions, when no node is
//! left to expand, or when the run's rounds or time are spent; the best
//! path so far is then replayed once in the run's own session, so that
//! its namespace, `pred_results/` and `solution.py` are that path's.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::json;

use super::tree::{NodeState, PUcb, Tree};
use crate::agent::converse::{AgentLimits, AgentOutcome, Ending, Model, RunState};
use crate::agent::dual::DualInputs;
use crate::agent::events::{AgentEvent, Events};
use crate::agent::plan::{planner_prompt, step_brief, Plan, PLAN_STEPS};
use crate::agent::plan_run::{ask_for_plan, PlannerHost};
use crate::agent::tools::{self, missing_outputs, Toolbox};
use crate::agent::transcript::Transcript;
use crate::interrupt::CellStopper;
use crate::llm::{adapt, ChatResponse, Message, Role, ToolSpec};
use crate::observation;
use crate::sandbox::{Canceller, CellStatus, Finding, SandboxError, Session};
use crate::util::{clip, write_json};

/// Bounds of the search.
#[derive(Debug, Clone)]
pub struct MctsLimits {
    /// Expansions at most.
    pub iterations: usize,
    /// Candidates asked for per expansion.
    pub width: usize,
    /// The selection constants.
    pub p_ucb: PUcb,
}

impl Default for MctsLimits {
    fn default() -> Self {
        MctsLimits {
            iterations: 12,
            width: 3,
            p_ucb: PUcb::default(),
        }
    }
}

/// Most characters of a parent's observation shown with a step.
const OBSERVATION_CHARS: usize = 2000;

/// What a search starts from.
pub struct SearchInputs<'a> {
    /// The system prompt, the task (or request) and what the Planner is told.
    pub task: &'a DualInputs,
    /// Fewest steps of the plan: 3 for a task, 1 for a chat request.
    pub min_steps: usize,
    /// A chat turn: the Planner is worded for one request, and the outputs
    /// of earlier turns in `pred_results/` stay when the chosen path is
    /// replayed.
    pub chat: bool,
}

/// How the front end stops a search: a check between steps (a signal,
/// Ctrl-C) and a watcher that interrupts a branch's running cell.
pub struct SearchHooks<'a> {
    /// `Some` when the search must stop now.
    pub stop: &'a dyn Fn() -> Option<Ending>,
    /// Interrupts the cell of the session behind a canceller when the
    /// front end is asked to stop (dropped when the cell is done).
    pub watch: &'a dyn Fn(Canceller) -> CellStopper,
}

/// How a search ended, and the code of the chosen path's nodes in order
/// (what the run's session ran last).
pub struct SearchResult {
    /// Rounds, tokens, times and the ending.
    pub outcome: AgentOutcome,
    /// The chosen path's cells.
    pub path: Vec<String>,
}

/// The model calls, transcript and front end of one search.
struct Search<'r> {
    model: &'r mut dyn Model,
    transcript: &'r mut Transcript,
    events: Events<'r>,
    limits: &'r AgentLimits,
    hooks: &'r SearchHooks<'r>,
    state: RunState,
    /// Whether every expansion so far had log-probability priors.
    priors_from_logprobs: bool,
    /// Candidates per expansion.
    width: usize,
}

impl PlannerHost for Search<'_> {
    type Stop = Ending;

    fn ask_planner(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
    ) -> Result<(ChatResponse, Duration), Ending> {
        self.ask(messages, specs)
    }

    fn round(&self) -> usize {
        self.state.rounds
    }

    fn record(&mut self, kind: &str, value: serde_json::Value) {
        let _ = self.transcript.record(kind, value);
    }

    fn event(&mut self, event: AgentEvent<'_>) {
        (self.events)(event);
    }

    fn no_plan(&mut self, why: String) -> Ending {
        Ending::Failed(why)
    }
}

impl Search<'_> {
    fn ask(
        &mut self,
        messages: &[Message],
        specs: &[ToolSpec],
    ) -> Result<(ChatResponse, Duration), Ending> {
        self.state
            .ask(&mut *self.model, messages, specs, self.limits, &mut |_| {})
    }

    /// The candidate codes of one model call for `messages` (each answer's
    /// `execute_python` call, or code written as text), with each answer's
    /// mean token log-probability when the server gave it. One answer per
    /// call, or several when the model was asked for `n` choices; answers
    /// without code give no candidate.
    fn candidates(&mut self, messages: &[Message]) -> Result<Vec<(String, Option<f64>)>, Ending> {
        let (mut response, took) = self.ask(messages, &[execute_spec()])?;
        let more = std::mem::take(&mut response.more);
        let answers = std::iter::once((response.message, response.logprob)).chain(more);
        let mut found = Vec::new();
        for (i, (message, logprob)) in answers.enumerate() {
            let adapted = adapt::adapt(message, self.state.rounds);
            let code = adapted
                .message
                .tool_calls
                .iter()
                .find_map(|c| tools::code_of(&c.function.name, &c.function.arguments));
            self.record(
                "message",
                json!({
                    "round": self.state.rounds,
                    "agent": "mcts",
                    "choice": i,
                    "message": adapted.message,
                    "usage": if i == 0 { json!(response.usage) } else { json!(null) },
                    "llm_ms": took.as_millis() as u64,
                    "repairs": adapted.repairs,
                    "logprob": logprob,
                }),
            );
            if let Some(code) = code.filter(|c| !c.trim().is_empty()) {
                found.push((code, logprob));
            }
        }
        self.event(AgentEvent::MessageDone {
            round: self.state.rounds,
        });
        Ok(found)
    }

    /// One candidate: the first of one call's answers.
    fn candidate(&mut self, messages: &[Message]) -> Result<Option<(String, Option<f64>)>, Ending> {
        Ok(self.candidates(messages)?.into_iter().next())
    }
}

/// The `execute_python` tool, the only one a candidate may call.
fn execute_spec() -> ToolSpec {
    tools::specs()
        .into_iter()
        .find(|s| s.name == "execute_python")
        .unwrap_or_else(|| ToolSpec {
            name: "execute_python".into(),
            description: "Run Python code in the persistent sandbox.".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
        })
}

/// The priors P of an expansion's candidates: each answer's geometric-mean
/// token probability (exp of its mean log-probability), normalised over
/// the candidates, when every answer came with log-probabilities; uniform
/// otherwise.
fn priors(candidates: &[(String, Option<f64>)]) -> Vec<f64> {
    let n = candidates.len().max(1) as f64;
    let logprobs: Option<Vec<f64>> = candidates.iter().map(|(_, lp)| *lp).collect();
    match logprobs {
        Some(lps) if !lps.is_empty() => {
            let top = lps.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = lps.iter().map(|lp| (lp - top).exp()).collect();
            let total: f64 = weights.iter().sum();
            weights.iter().map(|w| w / total).collect()
        }
        _ => vec![1.0 / n; candidates.len()],
    }
}

/// Findings that mean the code cannot run as written.
fn certain(findings: &[Finding]) -> Vec<&Finding> {
    findings.iter().filter(|f| f.certain).collect()
}

/// The findings as the lines a repair request shows.
fn finding_lines(findings: &[&Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("- line {}: {}", f.line, f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the tree search and leaves the best path's state in
/// `toolbox.session`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    model: &mut dyn Model,
    toolbox: &mut Toolbox<'_>,
    transcript: &mut Transcript,
    inputs: &SearchInputs<'_>,
    limits: &AgentLimits,
    mcts: &MctsLimits,
    hooks: &SearchHooks<'_>,
    events: Events<'_>,
) -> SearchResult {
    let mut search = Search {
        model,
        transcript,
        events,
        limits,
        hooks,
        state: RunState::new(),
        priors_from_logprobs: true,
        width: mcts.width.max(1),
    };
    let asked_logprobs = search.model.want_logprobs(true);
    search.priors_from_logprobs = asked_logprobs;
    let task = inputs.task;
    let mut planner = vec![
        Message::text(
            Role::System,
            planner_prompt(
                inputs.min_steps,
                PLAN_STEPS.1,
                &task.packages,
                &task.blocked,
                inputs.chat,
            ),
        ),
        Message::text(Role::User, task.task_prompt.clone()),
    ];
    let plan = match ask_for_plan(&mut search, &mut planner, inputs.min_steps, 0) {
        Ok(plan) => plan,
        Err(ending) => {
            search.model.want_logprobs(false);
            return SearchResult {
                outcome: search.state.outcome(ending, None),
                path: Vec::new(),
            };
        }
    };
    // The Planner gave one answer; each expansion asks for `width`.
    let several = search.model.want_choices(search.width);
    let mut tree = Tree::new(plan.steps.len(), mcts.p_ucb);
    let stopped = expand_all(&mut search, toolbox, task, &plan, &mut tree, mcts).err();
    search.model.want_logprobs(false);
    if several {
        search.model.want_choices(1);
    }
    let best = tree.best();
    let (ran, failed, pruned) = tree.counts();
    let prior_kind = if search.priors_from_logprobs && tree.nodes.len() > 1 {
        "logprobs"
    } else {
        "uniform"
    };
    search.record(
        "mcts_end",
        json!({ "best": best, "reward": tree.nodes[best].reward, "nodes": tree.nodes.len() - 1, "ran": ran, "failed": failed, "pruned": pruned, "expansions": tree.nodes.iter().filter(|n| !n.children.is_empty()).count(), "prior": prior_kind, "stopped": stopped.as_ref().map(|e| format!("{e:?}")) }),
    );
    if let Err(e) = write_json(&toolbox.out_dir.join("tree.json"), &tree) {
        tracing::warn!("tree.json not written: {e}");
    }
    let replayed = replay(&mut search, toolbox, &tree, best, !inputs.chat);
    let reward = tree.nodes[best].reward.unwrap_or(0.0);
    let summary = format!(
        "tree search: {} node(s) ({ran} ran, {failed} failed, {pruned} pruned); best path {} of {} step(s), reward {reward:.2}",
        tree.nodes.len() - 1,
        tree.nodes[best].step,
        plan.steps.len()
    );
    let ending = match (replayed, stopped) {
        (Err(why), _) => Ending::Failed(why),
        (Ok(()), _) if reward >= 1.0 => Ending::Finished,
        (Ok(()), Some(ending)) => ending,
        (Ok(()), None) => {
            Ending::Failed(format!("the search found no complete solution: {summary}"))
        }
    };
    SearchResult {
        outcome: search.state.outcome(ending, Some(summary)),
        path: tree
            .path(best)
            .into_iter()
            .map(|id| tree.nodes[id].code.clone())
            .collect(),
    }
}

/// Expands the tree until a complete solution, the iteration bound, or no
/// node left; `Err` when a bound of the run or a signal stops it.
fn expand_all(
    search: &mut Search<'_>,
    toolbox: &mut Toolbox<'_>,
    inputs: &DualInputs,
    plan: &Plan,
    tree: &mut Tree,
    mcts: &MctsLimits,
) -> Result<(), Ending> {
    let mut sessions: HashMap<usize, Session> = HashMap::new();
    let root = toolbox
        .session
        .snapshot()
        .map_err(|e| Ending::Error(format!("sandbox failure: {e}")))?;
    sessions.insert(0, root);
    for _ in 0..mcts.iterations {
        if let Some(ending) = (search.hooks.stop)() {
            return Err(ending);
        }
        let Some(parent) = tree.select() else {
            return Ok(());
        };
        if expand(
            search,
            toolbox,
            inputs,
            plan,
            tree,
            mcts,
            &mut sessions,
            parent,
        )? {
            return Ok(());
        }
    }
    Ok(())
}

/// One expansion of `parent`: asks for candidates, checks and runs each;
/// true when one of them completes the task.
#[allow(clippy::too_many_arguments)]
fn expand(
    search: &mut Search<'_>,
    toolbox: &mut Toolbox<'_>,
    inputs: &DualInputs,
    plan: &Plan,
    tree: &mut Tree,
    mcts: &MctsLimits,
    sessions: &mut HashMap<usize, Session>,
    parent: usize,
) -> Result<bool, Ending> {
    let step = tree.nodes[parent].step + 1;
    let n = plan.steps.len();
    search.event(AgentEvent::Step {
        index: step,
        of: n,
        goal: &plan.steps[step - 1].goal,
    });
    let Some(session) = sessions.get_mut(&parent) else {
        return Ok(false);
    };
    let variables = session
        .variables()
        .map(|vars| {
            vars.iter()
                .map(|v| format!("- {} ({}): {}", v.name, v.kind, v.summary))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let done: Vec<String> = tree
        .path(parent)
        .iter()
        .map(|id| format!("{}: done", plan.steps[tree.nodes[*id].step - 1].goal))
        .collect();
    let brief = step_brief(plan, step, &done, false);
    let mut context = format!("{}\n\n{brief}", inputs.task_prompt);
    context.push_str(&format!(
        "\n\n## The sandbox now\n{}\n",
        if variables.is_empty() {
            "(no variables yet)".to_string()
        } else {
            variables
        }
    ));
    let last = &tree.nodes[parent].observation;
    if !last.is_empty() {
        context.push_str(&format!(
            "\n## What the previous step showed\n{}\n",
            clip(last, OBSERVATION_CHARS)
        ));
    }
    context
        .push_str("\nWrite the code for this step only and run it with one execute_python call.");
    let messages = vec![
        Message::text(Role::System, inputs.system.clone()),
        Message::text(Role::User, context),
    ];
    // `width` answers: from one call when the model gives several choices
    // per call, else from repeated calls.
    let width = mcts.width.max(1);
    let mut candidates: Vec<(String, Option<f64>)> = Vec::new();
    let mut answers = 0;
    for _ in 0..width {
        let batch = search.candidates(&messages)?;
        answers += batch.len().max(1);
        for (code, logprob) in batch {
            if !candidates.iter().any(|(c, _)| *c == code) {
                candidates.push((code, logprob));
            }
        }
        if answers >= width {
            break;
        }
    }
    let priors = priors(&candidates);
    search.priors_from_logprobs &= candidates.iter().all(|(_, lp)| lp.is_some());
    for ((code, _), prior) in candidates.into_iter().zip(priors) {
        if let Some(ending) = (search.hooks.stop)() {
            return Err(ending);
        }
        let child = tree.add_child(parent, code, prior);
        let reward = try_child(search, toolbox, &messages, tree, sessions, parent, child)?;
        tree.backprop(child, reward);
        let node = &tree.nodes[child];
        search.record(
            "mcts_node",
            json!({ "id": child, "parent": parent, "step": node.step, "code": node.code, "state": node.state, "findings": node.findings, "observation": node.observation, "reward": reward, "visits": node.visits, "q": node.q, "prior": node.prior }),
        );
        if reward >= 1.0 {
            return Ok(true);
        }
    }
    // Sessions of nodes that can no longer be expanded are let go.
    sessions.retain(|id, _| tree.expandable(*id));
    Ok(false)
}

/// Checks and runs one candidate; returns its reward.
fn try_child(
    search: &mut Search<'_>,
    toolbox: &mut Toolbox<'_>,
    messages: &[Message],
    tree: &mut Tree,
    sessions: &mut HashMap<usize, Session>,
    parent: usize,
    child: usize,
) -> Result<f64, Ending> {
    let n = tree.steps as f64;
    let step = tree.nodes[child].step;
    let ran_before = (step - 1) as f64 / n;
    let sandbox_failure = |e: SandboxError| Ending::Error(format!("sandbox failure: {e}"));
    let Some(session) = sessions.get_mut(&parent) else {
        return Ok(ran_before);
    };
    let mut code = tree.nodes[child].code.clone();
    let mut findings = session.analyse(&code).unwrap_or_default();
    let sure = certain(&findings);
    if !sure.is_empty() {
        // One repair request with what the analysis found.
        let mut repair = messages.to_vec();
        repair.push(Message::text(
            Role::Assistant,
            format!("```python\n{code}\n```"),
        ));
        repair.push(Message::text(
            Role::User,
            format!(
                "Static analysis against the live namespace found, before running it:\n{}\nSend the corrected code with one execute_python call.",
                finding_lines(&sure)
            ),
        ));
        let first = finding_lines(&sure);
        // One answer for the repair, then `width` again for expansions.
        let several = search.model.want_choices(1);
        let fixed = search.candidate(&repair);
        if several {
            search.model.want_choices(search.width);
        }
        if let Some((fixed, _)) = fixed? {
            findings = session.analyse(&fixed).unwrap_or_default();
            code = fixed;
        }
        tree.nodes[child].code = code.clone();
        let still = certain(&findings);
        if !still.is_empty() {
            let node = &mut tree.nodes[child];
            node.state = NodeState::Pruned;
            node.observation = format!(
                "not run: static analysis found\n{first}\nand after the repair request\n{}",
                finding_lines(&still)
            );
            node.findings = findings;
            return Ok(ran_before);
        }
    }
    let mut branch = session.snapshot().map_err(sandbox_failure)?;
    // A branch that crashes is dropped: no rebuild of its prefix.
    branch.set_rebuild_at_once(false);
    let started = Instant::now();
    let watcher = (search.hooks.watch)(branch.canceller());
    let outcome = branch.execute(&code).map_err(sandbox_failure)?;
    drop(watcher);
    search.state.tool_time += started.elapsed();
    let ok = outcome.status == CellStatus::Ok;
    let mut text = observation::render(&outcome);
    if !ok {
        text.push_str(&observation::render_findings(&findings));
    }
    search.event(AgentEvent::Observation {
        round: search.state.rounds,
        name: "execute_python",
        code: Some(&code),
        text: &text,
        ok,
        status: if ok { "ok" } else { "error" },
        seconds: outcome.wall.as_secs_f64(),
    });
    let node = &mut tree.nodes[child];
    node.observation = text;
    node.findings = findings;
    if !ok {
        node.state = NodeState::Failed;
        return Ok(ran_before);
    }
    node.state = NodeState::Ran;
    if step < tree.steps {
        sessions.insert(child, branch);
        return Ok(step as f64 / n);
    }
    Ok(
        if missing_outputs(&toolbox.out_dir, &toolbox.outputs).is_empty() {
            1.0
        } else {
            (n - 0.5) / n
        },
    )
}

/// Runs the path to `best` once in the run's own session (after clearing
/// `pred_results/` when `fresh_outputs`), so that the run's state and
/// outputs are that path's.
fn replay(
    search: &mut Search<'_>,
    toolbox: &mut Toolbox<'_>,
    tree: &Tree,
    best: usize,
    fresh_outputs: bool,
) -> Result<(), String> {
    let pred = toolbox.out_dir.join("pred_results");
    let entries = if fresh_outputs {
        std::fs::read_dir(&pred).ok()
    } else {
        None
    };
    if let Some(entries) = entries {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
    for id in tree.path(best) {
        let code = &tree.nodes[id].code;
        let started = Instant::now();
        let outcome = toolbox
            .session
            .execute(code)
            .map_err(|e| format!("replaying the chosen path: sandbox failure: {e}"))?;
        let took = started.elapsed();
        search.state.tool_time += took;
        // The chosen path's cells are the run's cells, recorded as the
        // other architectures record theirs (the code and process scores
        // read them).
        search.record(
            "tool",
            json!({
                "round": search.state.rounds,
                "agent": "mcts",
                "call_id": format!("node-{id}"),
                "name": "execute_python",
                "arguments": json!({ "code": code }).to_string(),
                "status": format!("{:?}", outcome.status),
                "tool_ms": took.as_millis() as u64,
                "cell_us": outcome.result.duration_us,
                "observation": observation::render(&outcome),
            }),
        );
        if outcome.status != CellStatus::Ok {
            return Err(format!(
                "replaying the chosen path: node {id} failed this time: {}",
                observation::error_line(&observation::render(&outcome))
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priors_follow_the_log_probabilities_or_are_uniform() {
        let with = [("a".to_string(), Some(-0.1)), ("b".to_string(), Some(-1.1))];
        let p = priors(&with);
        assert!((p[0] + p[1] - 1.0).abs() < 1e-12);
        // exp(-0.1) / exp(-1.1) = e: the likelier answer gets e times the prior.
        assert!((p[0] / p[1] - std::f64::consts::E).abs() < 1e-9, "{p:?}");
        let without = [("a".to_string(), Some(-0.1)), ("b".to_string(), None)];
        assert_eq!(priors(&without), vec![0.5, 0.5]);
        assert!(priors(&[]).is_empty());
    }
}
