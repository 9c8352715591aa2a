//! The search of `--arch mcts`: the Planner's steps are the depth; each
//! expansion asks the model for `width` candidate codes for the next step,
//! given the parent's namespace, its last observation and one line per
//! candidate that already failed under that state (its failing call and
//! error). Candidates that differ only in layout, comments or quoting (the
//! same syntax tree) count once. Each is checked by the static analysis
//! against the parent's live namespace (a certain finding prunes it
//! unrun) and run in a fork of the parent's session, so no node re-runs
//! its prefix. A candidate that fails, is pruned, or writes outputs that
//! fail their checks gets a repair request (its code, the error's compact
//! traceback and findings, or the warnings); the fix is its child for the
//! same step, run under the same state, up to `--mcts-repairs` in a row.
//!
//! Reward of a node (GeoAgent's, on the path): the share of plan steps
//! that ran cleanly (a quarter step less when its outputs fail their
//! checks); a node that ran the last step gets 1.0 when every declared
//! output was written on its path with real content and passes its
//! checks, `(n − ¼)/n` with warnings, `(n − ½)/n` with outputs missing.
//! With `--mcts-rollout` a node that ran estimates its reward instead from
//! one completion of the remaining steps run in a throwaway fork
//! (`(steps done + rollout steps that ran)/n`, the end rule when it ran
//! to the end); a rollout that completes the task is kept as the path's
//! last nodes. The search stops at the first 1.0, after `iterations`
//! expansions, when no node is left to expand, or when the run's rounds
//! or time are spent; the best path so far is then replayed once in the
//! run's own session, so that its namespace, `pred_results/` and
//! `solution.py` are that path's.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::json;

use super::tree::{Node, NodeState, PUcb, Rollout, Tree};
use crate::agent::converse::{AgentLimits, AgentOutcome, Ending, Model, RunState};
use crate::agent::dual::DualInputs;
use crate::agent::events::{AgentEvent, Events};
use crate::agent::plan::{planner_prompt, step_brief, Plan, PLAN_STEPS};
use crate::agent::plan_run::{ask_for_plan, PlannerHost};
use crate::agent::tools::{self, missing_outputs, Toolbox};
use crate::interrupt::CellStopper;
use crate::llm::EXECUTE_PYTHON;
use crate::llm::{adapt, ChatResponse, Message, Role, ToolSpec};
use crate::observation;
use crate::outputs::sanity::Snapshot;
use crate::record::{Event, MctsEnd, MctsNode, MessageEvent, ToolEvent, Transcript};
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
    /// Repairs in a row of a failed candidate (0: none).
    pub repairs: usize,
    /// Estimate a new node's reward from a rollout of the remaining steps.
    pub rollout: bool,
}

impl Default for MctsLimits {
    fn default() -> Self {
        MctsLimits {
            iterations: 12,
            width: 3,
            p_ucb: PUcb::default(),
            repairs: 2,
            rollout: false,
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
    /// A chat request (the Planner is not offered `decline`).
    chat: bool,
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

    fn record(&mut self, event: Event) {
        self.transcript.record(event);
    }

    fn event(&mut self, event: AgentEvent<'_>) {
        (self.events)(event);
    }

    fn no_plan(&mut self, why: String) -> Ending {
        Ending::Failed(why)
    }

    fn decline_offered(&self) -> bool {
        !self.chat
    }

    fn declined(&mut self, reason: String) -> Ending {
        Ending::Declined(reason)
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
            self.record(Event::Message(MessageEvent {
                choice: Some(i),
                usage: (i == 0).then_some(response.usage),
                llm_ms: Some(took.as_millis() as u64),
                repairs: Some(adapted.repairs.clone()),
                logprob,
                ..MessageEvent::of(
                    Some(self.state.rounds),
                    Some("mcts"),
                    adapted.message.clone(),
                )
            }));
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
        .find(|s| s.name == EXECUTE_PYTHON)
        .unwrap_or_else(|| ToolSpec {
            name: EXECUTE_PYTHON.into(),
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
        chat: inputs.chat,
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
    let mut grower = Grower {
        search: &mut search,
        toolbox,
        inputs: task,
        plan: &plan,
        tree: &mut tree,
        mcts,
        sessions: HashMap::new(),
        shapes: HashMap::new(),
    };
    let stopped = grower.expand_all().err();
    drop(grower);
    search.model.want_logprobs(false);
    if several {
        search.model.want_choices(1);
    }
    let best = tree.best();
    let (ran, failed, pruned) = tree.counts();
    let (repairs, repairs_ran) = tree.repairs();
    let prior_kind = if search.priors_from_logprobs && tree.nodes.len() > 1 {
        "logprobs"
    } else {
        "uniform"
    };
    search.record(Event::MctsEnd(MctsEnd {
        best,
        reward: tree.nodes[best].reward,
        counts: tree.search_counts(),
        prior: prior_kind.into(),
        stopped: stopped.as_ref().map(why),
    }));
    if let Err(e) = write_json(&toolbox.out_dir.join("tree.json"), &tree) {
        tracing::warn!("tree.json not written: {e}");
    }
    let replayed = replay(&mut search, toolbox, &tree, best, !inputs.chat);
    let reward = tree.nodes[best].reward.unwrap_or(0.0);
    let summary = format!(
        "tree search: {} node(s) ({ran} ran, {failed} failed, {pruned} pruned; {repairs} repair(s), {repairs_ran} ran); best path {} of {} step(s), reward {reward:.2}",
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

/// What one node's check and run came to.
enum Verdict {
    /// Its reward; the node ran cleanly with outputs that pass their checks.
    Good(f64),
    /// Its reward; the node failed, was pruned, or wrote outputs with
    /// warnings: a repair may do better.
    Repairable(f64),
}

impl Verdict {
    fn reward(&self) -> f64 {
        match self {
            Verdict::Good(r) | Verdict::Repairable(r) => *r,
        }
    }
}

/// The search's state while the tree grows: the model side, the run's
/// toolbox, the plan and the forked session of every node that can still
/// be expanded.
struct Grower<'g, 's, 't> {
    search: &'g mut Search<'s>,
    toolbox: &'g mut Toolbox<'t>,
    inputs: &'g DualInputs,
    plan: &'g Plan,
    tree: &'g mut Tree,
    mcts: &'g MctsLimits,
    sessions: HashMap<usize, Session>,
    /// Each node's shape once computed (see [`Grower::shape`]).
    shapes: HashMap<usize, String>,
}

impl Grower<'_, '_, '_> {
    /// Expands the tree until a complete solution, the iteration bound, or
    /// no node left; `Err` when a bound of the run or a signal stops it.
    fn expand_all(&mut self) -> Result<(), Ending> {
        let root = self
            .toolbox
            .session
            .snapshot()
            .map_err(|e| Ending::Error(format!("sandbox failure: {e}")))?;
        self.sessions.insert(0, root);
        for _ in 0..self.mcts.iterations {
            if let Some(ending) = (self.search.hooks.stop)() {
                return Err(ending);
            }
            let Some(parent) = self.tree.select() else {
                return Ok(());
            };
            if self.expand(parent)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// The request for the step after `parent`: the task, the step's
    /// brief (with docs under `--rag`), the state's variables and last
    /// observation, and what was tried under this state and failed. Also
    /// the failure lines it names.
    fn step_request(&mut self, parent: usize) -> (Vec<Message>, Vec<String>) {
        let step = self.tree.nodes[parent].step + 1;
        let plan = self.plan;
        let variables = self
            .sessions
            .get_mut(&parent)
            .map(variables_section)
            .unwrap_or_else(|| NO_VARIABLES.to_string());
        let done: Vec<String> = self
            .tree
            .path(parent)
            .iter()
            .map(|id| format!("{}: done", plan.steps[self.tree.nodes[*id].step - 1].goal))
            .collect();
        let brief = step_brief(plan, step, &done, false);
        let goal = &plan.steps[step - 1].goal;
        let brief = crate::agent::prompt::brief_with_docs(
            self.toolbox.docs,
            brief,
            &format!("{goal} {}", plan.steps[step - 1].details),
            "this step",
            &mut *self.search.transcript,
        );
        let mut context = format!("{}\n\n{brief}", self.inputs.task_prompt);
        context.push_str(&format!("\n\n## The sandbox now\n{variables}\n"));
        let last = &self.tree.nodes[parent].observation;
        if !last.is_empty() {
            context.push_str(&format!(
                "\n## What the previous step showed\n{}\n",
                clip(last, OBSERVATION_CHARS)
            ));
        }
        let told: Vec<String> = self
            .tree
            .failed_under(parent)
            .into_iter()
            .map(|id| failure_line(&self.tree.nodes[id]))
            .collect();
        if !told.is_empty() {
            context.push_str(&format!(
                "\n## Tried for this step under this state, and failed\n{}\nWrite code that avoids these failures.\n",
                told.iter().map(|l| format!("- {l}")).collect::<Vec<_>>().join("\n")
            ));
        }
        context.push_str(
            "\nWrite the code for this step only and run it with one execute_python call.",
        );
        let messages = vec![
            Message::text(Role::System, self.inputs.system.clone()),
            Message::text(Role::User, context),
        ];
        (messages, told)
    }

    /// The shape of `code` under `state` (its syntax tree's digest), or its
    /// lines without blanks and trailing spaces when it does not parse.
    fn shape(&mut self, state: usize, code: &str) -> String {
        let parsed = self
            .sessions
            .get_mut(&state)
            .and_then(|s| s.shape(code).ok().flatten());
        parsed.unwrap_or_else(|| {
            let lines: Vec<&str> = code
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
                .collect();
            format!("text:{}", lines.join("\n"))
        })
    }

    /// One expansion of `parent`: asks for candidates, checks and runs
    /// each, then repairs those that failed; true when a node completes
    /// the task.
    fn expand(&mut self, parent: usize) -> Result<bool, Ending> {
        let step = self.tree.nodes[parent].step + 1;
        let n = self.plan.steps.len();
        self.search.event(AgentEvent::Step {
            index: step,
            of: n,
            goal: &self.plan.steps[step - 1].goal,
        });
        if !self.sessions.contains_key(&parent) {
            return Ok(false);
        }
        let (messages, told) = self.step_request(parent);
        // `width` answers: from one call when the model gives several
        // choices per call, else from repeated calls.
        let width = self.mcts.width.max(1);
        let mut candidates: Vec<(String, Option<f64>)> = Vec::new();
        // Shapes of what this state has tried: a candidate that differs
        // from one of them only in layout, comments or quoting is the same.
        let mut seen: Vec<String> = Vec::new();
        for id in self.tree.tried_under(parent) {
            let shape = match self.shapes.get(&id) {
                Some(shape) => shape.clone(),
                None => {
                    let code = self.tree.nodes[id].code.clone();
                    let shape = self.shape(parent, &code);
                    self.shapes.insert(id, shape.clone());
                    shape
                }
            };
            seen.push(shape);
        }
        let mut shapes: Vec<String> = Vec::new();
        let mut answers = 0;
        for _ in 0..width {
            let batch = self.search.candidates(&messages)?;
            answers += batch.len().max(1);
            for (code, logprob) in batch {
                let shape = self.shape(parent, &code);
                if !seen.contains(&shape) {
                    seen.push(shape.clone());
                    shapes.push(shape);
                    candidates.push((code, logprob));
                }
            }
            if answers >= width {
                break;
            }
        }
        let priors = priors(&candidates);
        self.search.priors_from_logprobs &= candidates.iter().all(|(_, lp)| lp.is_some());
        let mut to_repair = Vec::new();
        for (((code, _), prior), shape) in candidates.into_iter().zip(priors).zip(shapes) {
            if let Some(ending) = (self.search.hooks.stop)() {
                return Err(ending);
            }
            let child = self.tree.add_child(parent, code, prior);
            self.shapes.insert(child, shape);
            self.tree.nodes[child].told = told.clone();
            let verdict = self.settle(child)?;
            if verdict.reward() >= 1.0 {
                return Ok(true);
            }
            if matches!(verdict, Verdict::Repairable(_)) {
                to_repair.push(child);
            }
        }
        for failed in to_repair {
            if self.repair_chain(&messages, failed)? {
                return Ok(true);
            }
        }
        // Sessions of nodes that can no longer be expanded are let go.
        let tree = &*self.tree;
        self.sessions.retain(|id, _| tree.expandable(*id));
        Ok(false)
    }

    /// Evaluates node `id`, backs its reward up and records it; a run that
    /// stops meanwhile leaves the node recorded as not run.
    fn settle(&mut self, id: usize) -> Result<Verdict, Ending> {
        let verdict = match self.evaluate(id) {
            Ok(verdict) => verdict,
            Err(ending) => {
                // A node that ran was recorded where the run stopped.
                if self.tree.nodes[id].state == NodeState::Pending {
                    let node = &mut self.tree.nodes[id];
                    node.observation = format!("not run: the search stopped ({})", why(&ending));
                    self.record_node(id, None);
                }
                return Err(ending);
            }
        };
        self.tree.backprop(id, verdict.reward());
        self.record_node(id, Some(verdict.reward()));
        Ok(verdict)
    }

    /// Asks for repairs of `failed` (each a child of the last attempt),
    /// up to `--mcts-repairs` in a row; true when one completes the task.
    fn repair_chain(&mut self, messages: &[Message], failed: usize) -> Result<bool, Ending> {
        let mut last = failed;
        while self.tree.repairs_above(last) < self.mcts.repairs {
            if let Some(ending) = (self.search.hooks.stop)() {
                return Err(ending);
            }
            let node = &self.tree.nodes[last];
            let mut request = messages.to_vec();
            request.push(Message::text(
                Role::Assistant,
                format!("```python\n{}\n```", node.code),
            ));
            request.push(Message::text(Role::User, repair_prompt(node)));
            let told = vec![failure_line(node)];
            // One answer for a repair, then `width` again for expansions.
            let several = self.search.model.want_choices(1);
            let fixed = self.search.candidate(&request);
            if several {
                self.search.model.want_choices(self.search.width);
            }
            let Some((code, _)) = fixed? else {
                return Ok(false);
            };
            let repair = self.tree.add_repair(last, code);
            self.tree.nodes[repair].told = told;
            match self.settle(repair)? {
                Verdict::Good(reward) => return Ok(reward >= 1.0),
                Verdict::Repairable(reward) if reward >= 1.0 => return Ok(true),
                Verdict::Repairable(_) => last = repair,
            }
        }
        Ok(false)
    }

    /// Checks node `id` against its state's namespace, runs it in a fork
    /// of that state, checks what it wrote and (with `--mcts-rollout`)
    /// rolls the rest of the plan out from it.
    fn evaluate(&mut self, id: usize) -> Result<Verdict, Ending> {
        let n = self.tree.steps as f64;
        let step = self.tree.nodes[id].step;
        let state = self.tree.state_of(id);
        let ran_before = (step - 1) as f64 / n;
        let sandbox_failure = |e: SandboxError| Ending::Error(format!("sandbox failure: {e}"));
        let code = self.tree.nodes[id].code.clone();
        let Some(session) = self.sessions.get_mut(&state) else {
            return Ok(Verdict::Good(ran_before));
        };
        let findings = session.analyse(&code).unwrap_or_default();
        let sure = certain(&findings);
        if !sure.is_empty() {
            let node = &mut self.tree.nodes[id];
            node.state = NodeState::Pruned;
            node.observation = format!("not run: static analysis found\n{}", finding_lines(&sure));
            node.findings = findings;
            return Ok(Verdict::Repairable(ran_before));
        }
        let mut branch = session.snapshot().map_err(sandbox_failure)?;
        // A branch that crashes is dropped: no rebuild of its prefix.
        branch.set_rebuild_at_once(false);
        let pred = self.toolbox.out_dir.join("pred_results");
        let before = Snapshot::of(&pred);
        let started = Instant::now();
        let watcher = (self.search.hooks.watch)(branch.canceller());
        let outcome = branch.execute(&code).map_err(sandbox_failure)?;
        drop(watcher);
        self.search.state.tool_time += started.elapsed();
        let written = Snapshot::of(&pred).changed_since(&before);
        let ok = outcome.status == CellStatus::Ok;
        let mut text = observation::render(&outcome);
        let warnings = match &mut self.toolbox.checks {
            Some(checks) if ok => checks.after_cell(&pred, &written, &outcome.result.saved_figures),
            _ => Vec::new(),
        };
        for line in &warnings {
            text.push_str(&format!("[output check] {line}\n"));
        }
        if !ok {
            text.push_str(&observation::render_findings(&findings));
        }
        self.search.event(AgentEvent::Observation {
            round: self.search.state.rounds,
            name: EXECUTE_PYTHON,
            code: Some(&code),
            text: &text,
            ok,
            status: if ok { "ok" } else { "error" },
            seconds: outcome.wall.as_secs_f64(),
        });
        let node = &mut self.tree.nodes[id];
        node.observation = text;
        node.findings = findings;
        node.warnings = warnings;
        node.wrote = written
            .iter()
            .map(|w| format!("pred_results/{w}"))
            .collect();
        if !ok {
            node.state = NodeState::Failed;
            return Ok(Verdict::Repairable(ran_before));
        }
        node.state = NodeState::Ran;
        let warned = !node.warnings.is_empty();
        let verdict = |reward: f64| {
            if warned {
                Verdict::Repairable(reward)
            } else {
                Verdict::Good(reward)
            }
        };
        if step < self.tree.steps {
            // Output-check warnings cost a quarter step.
            let own = (step as f64 - if warned { 0.25 } else { 0.0 }) / n;
            let rolled = if self.mcts.rollout {
                self.rollout(id, &mut branch)
            } else {
                Ok(None)
            };
            self.sessions.insert(id, branch);
            return match rolled {
                Ok(estimate) => Ok(verdict(estimate.unwrap_or(own))),
                // The run stopped during the rollout: the node ran, and
                // keeps its own reward.
                Err(ending) => {
                    self.tree.backprop(id, own);
                    self.record_node(id, Some(own));
                    Err(ending)
                }
            };
        }
        Ok(verdict(end_reward(
            self.tree.steps,
            self.outputs_present(&self.tree.path(id), &[]),
            warned,
        )))
    }

    /// Whether every declared output exists with real content and was
    /// written by a node of `path` (or by `extra`): a file another branch
    /// left in the shared `pred_results/` does not count.
    fn outputs_present(&self, path: &[usize], extra: &[String]) -> bool {
        let outputs = &self.toolbox.outputs;
        if !missing_outputs(&self.toolbox.out_dir, outputs).is_empty() {
            return false;
        }
        let written: Vec<&String> = path
            .iter()
            .flat_map(|id| self.tree.nodes[*id].wrote.iter())
            .chain(extra)
            .collect();
        outputs
            .iter()
            .all(|o| written.iter().any(|w| same_output(w, o)))
    }

    /// `--mcts-rollout`: the rest of the plan after node `id`, asked for in
    /// one completion and run in a throwaway fork of its session; returns
    /// the reward it estimates (`None` when the model gave no code). A
    /// rollout that completes the task is kept: its steps become nodes and
    /// the last one's reward is 1.
    fn rollout(&mut self, id: usize, branch: &mut Session) -> Result<Option<f64>, Ending> {
        let started = Instant::now();
        let n = self.tree.steps;
        let step = self.tree.nodes[id].step;
        let asked = n - step;
        let request = self.rollout_request(id, branch);
        let several = self.search.model.want_choices(1);
        let answer = self.search.candidate(&request);
        if several {
            self.search.model.want_choices(self.search.width);
        }
        let Some((code, _)) = answer? else {
            return Ok(None);
        };
        let parts = rollout_parts(&code);
        let mut fork = branch
            .snapshot()
            .map_err(|e| Ending::Error(format!("sandbox failure: {e}")))?;
        fork.set_rebuild_at_once(false);
        let pred = self.toolbox.out_dir.join("pred_results");
        let before = Snapshot::of(&pred);
        let mut ran_parts: Vec<(String, String)> = Vec::new();
        let mut error = None;
        let mut figures = Vec::new();
        for part in &parts {
            let cell_started = Instant::now();
            let watcher = (self.search.hooks.watch)(fork.canceller());
            let outcome = fork.execute(part);
            drop(watcher);
            self.search.state.tool_time += cell_started.elapsed();
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(e) => {
                    error = Some(format!("sandbox failure: {e}"));
                    break;
                }
            };
            let text = observation::render(&outcome);
            if outcome.status != CellStatus::Ok {
                error = Some(observation::error_line(&text).to_string());
                break;
            }
            figures.extend(outcome.result.saved_figures.iter().cloned());
            ran_parts.push((part.clone(), text));
        }
        drop(fork);
        let written: Vec<String> = Snapshot::of(&pred)
            .changed_since(&before)
            .into_iter()
            .map(|w| format!("pred_results/{w}"))
            .collect();
        // A step counts when its part ran; every part running counts the
        // rest of the plan (the model may have merged or split steps).
        let reached_end = error.is_none();
        let ran = if reached_end {
            asked
        } else {
            ran_parts.len().min(asked.saturating_sub(1))
        };
        let warnings = match &mut self.toolbox.checks {
            Some(checks) if reached_end => {
                let rel: Vec<String> = written
                    .iter()
                    .filter_map(|w| w.strip_prefix("pred_results/").map(str::to_string))
                    .collect();
                checks.after_cell(&pred, &rel, &figures)
            }
            _ => Vec::new(),
        };
        let (reward, outputs_present) = if reached_end {
            let present = self.outputs_present(&self.tree.path(id), &written);
            (end_reward(n, present, !warnings.is_empty()), Some(present))
        } else {
            ((step + ran) as f64 / n as f64, None)
        };
        let record = Rollout {
            asked,
            given: parts.len(),
            ran,
            error,
            outputs_present,
            warnings,
            reward,
            took_ms: started.elapsed().as_millis() as u64,
        };
        self.search.record(Event::MctsRollout {
            node: id,
            rollout: serde_json::to_value(&record).unwrap_or_default(),
        });
        self.tree.nodes[id].rollout = Some(record);
        if reward < 1.0 {
            return Ok(Some(reward));
        }
        // The rollout completed the task: its steps are the path's rest,
        // the last one at the plan's last step.
        let mut at = id;
        let count = ran_parts.len();
        for (i, (code, text)) in ran_parts.into_iter().enumerate() {
            let last = i + 1 == count;
            let kept = self.tree.add_rollout_step(at, code);
            let node = &mut self.tree.nodes[kept];
            node.step = if last { n } else { node.step.min(n - 1) };
            node.state = NodeState::Ran;
            node.observation = text;
            if last {
                node.wrote = written.clone();
            }
            let reward = if last {
                1.0
            } else {
                node.step as f64 / n as f64
            };
            self.tree.backprop(kept, reward);
            self.record_node(kept, Some(reward));
            at = kept;
        }
        Ok(Some(reward))
    }

    /// The request of a rollout from node `id`: the task, the plan with the
    /// steps done, the namespace now, and the remaining steps to write.
    fn rollout_request(&mut self, id: usize, branch: &mut Session) -> Vec<Message> {
        let step = self.tree.nodes[id].step;
        let plan = self.plan;
        let variables = variables_section(branch);
        let steps: Vec<String> = plan
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mark = if i < step { "done" } else { "to write" };
                format!("{}. {} ({mark})", i + 1, s.goal)
            })
            .collect();
        let markers: Vec<String> = (step + 1..=plan.steps.len())
            .map(|k| format!("# %% step {k}"))
            .collect();
        let context = format!(
            "{}\n\n## The plan\n{}\n\n## The sandbox now\n{}\n\n## What the last step showed\n{}\n\nWrite the code for every remaining step ({} to {}) in one execute_python call. Start each step's code with its marker line: {}.",
            self.inputs.task_prompt,
            steps.join("\n"),
            variables,
            clip(&self.tree.nodes[id].observation, OBSERVATION_CHARS),
            step + 1,
            plan.steps.len(),
            markers.join(", ")
        );
        vec![
            Message::text(Role::System, self.inputs.system.clone()),
            Message::text(Role::User, context),
        ]
    }

    /// Writes node `id` to the transcript (`reward` `None`: not run).
    fn record_node(&mut self, id: usize, reward: Option<f64>) {
        let node = &self.tree.nodes[id];
        let event = Event::MctsNode(MctsNode {
            id,
            parent: node.parent,
            step: node.step,
            origin: serde_json::to_value(node.origin).unwrap_or_default(),
            code: node.code.clone(),
            state: serde_json::to_value(&node.state).unwrap_or_default(),
            findings: serde_json::to_value(&node.findings).unwrap_or_default(),
            observation: node.observation.clone(),
            warnings: node.warnings.clone(),
            told: node.told.clone(),
            reward,
            visits: node.visits,
            q: node.q,
            prior: node.prior,
        });
        self.search.record(event);
    }
}

/// What a prompt says when a session has no variables.
const NO_VARIABLES: &str = "(no variables yet)";

/// A session's variables as a prompt's "sandbox now" section: one
/// `- name (kind): summary` line each.
fn variables_section(session: &mut Session) -> String {
    let lines: Vec<String> = session
        .variables()
        .map(|vars| {
            vars.iter()
                .map(|v| format!("- {} ({}): {}", v.name, v.kind, v.summary))
                .collect()
        })
        .unwrap_or_default();
    if lines.is_empty() {
        NO_VARIABLES.to_string()
    } else {
        lines.join("\n")
    }
}

/// The reward of a path that ran its last step: 1 when every declared
/// output is present and passes its checks; a quarter step less with
/// output-check warnings, half a step less with outputs missing.
fn end_reward(steps: usize, outputs_present: bool, warned: bool) -> f64 {
    let n = steps as f64;
    match (outputs_present, warned) {
        (true, false) => 1.0,
        (true, true) => (n - 0.25) / n,
        (false, _) => (n - 0.5) / n,
    }
}

/// Whether a written path and a declared output name the same file
/// (`pred_results/a.tif` and `./pred_results/a.tif`).
fn same_output(written: &str, declared: &str) -> bool {
    let clean = |p: &str| p.trim_start_matches("./").replace("//", "/");
    clean(written) == clean(declared)
}

/// A failed (or warned) node as one line for later requests: the call
/// that failed and its error.
fn failure_line(node: &Node) -> String {
    let call = match node.state {
        NodeState::Pruned => node
            .findings
            .iter()
            .find(|f| f.certain)
            .and_then(|f| node.code.lines().nth((f.line as usize).saturating_sub(1))),
        _ => observation::failing_statement(&node.observation),
    }
    .or_else(|| node.code.lines().rev().find(|l| !l.trim().is_empty()))
    .unwrap_or("")
    .trim();
    let why = match node.state {
        NodeState::Pruned => node
            .findings
            .iter()
            .find(|f| f.certain)
            .map(|f| f.message.clone())
            .unwrap_or_else(|| "static analysis".to_string()),
        NodeState::Failed => observation::error_line(&node.observation).to_string(),
        _ => format!("output check: {}", node.warnings.join("; ")),
    };
    format!("`{}` → {}", clip(call, 120), clip(&why, 200))
}

/// What a repair request tells the model about a node: its error (the
/// compact traceback and static findings the single agent sees), or the
/// analysis that kept it from running, or its outputs' warnings.
fn repair_prompt(node: &Node) -> String {
    let what = match node.state {
        NodeState::Pruned => format!(
            "Static analysis against the live namespace found, before running it:\n{}",
            finding_lines(&certain(&node.findings))
        ),
        NodeState::Failed => format!(
            "It failed:\n{}",
            clip(&error_part(&node.observation), OBSERVATION_CHARS)
        ),
        _ => format!(
            "It ran, but the outputs it wrote fail their checks:\n{}",
            node.warnings
                .iter()
                .map(|w| format!("- {w}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    format!("{what}\nFix the cause and send the corrected code for this step with one execute_python call.")
}

/// The `[error]` section of an observation and the static findings after
/// it (the whole observation when it has none).
fn error_part(observation: &str) -> String {
    let lines: Vec<&str> = observation.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim() == "[error]") else {
        return observation.to_string();
    };
    let mut kept = Vec::new();
    let mut in_error = true;
    for line in &lines[start..] {
        if line.starts_with("[static analysis]") {
            kept.push(*line);
        } else if observation::is_section_header(line) {
            in_error = line.trim() == "[error]";
            if in_error {
                kept.push(*line);
            }
        } else if in_error {
            kept.push(*line);
        }
    }
    kept.join("\n")
}

/// A rollout's code cut at its `# %% step k` lines, one part per step
/// (what comes before the first marker goes with the first step; empty
/// parts are dropped); the whole code as one part when it has no marker.
fn rollout_parts(code: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut marked = false;
    for line in code.lines() {
        let marker = line
            .trim()
            .strip_prefix("# %%")
            .is_some_and(|rest| rest.trim().to_lowercase().starts_with("step"));
        if marker {
            if marked {
                parts.push(String::new());
            }
            marked = true;
            continue;
        }
        if let Some(last) = parts.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    parts.retain(|p| !p.trim().is_empty());
    if parts.is_empty() {
        parts.push(code.to_string());
    }
    parts
}

/// An ending as words for the tree's records.
fn why(ending: &Ending) -> String {
    match ending {
        Ending::Finished => "finished".to_string(),
        Ending::Failed(s) | Ending::Error(s) | Ending::Interrupted(s) => s.clone(),
        Ending::Declined(s) => format!("declined: {s}"),
    }
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
        search.record(Event::Tool(ToolEvent {
            round: Some(search.state.rounds),
            agent: Some("mcts".into()),
            call_id: Some(format!("node-{id}")),
            name: EXECUTE_PYTHON.into(),
            arguments: json!({ "code": code }).to_string(),
            status: Some(format!("{:?}", outcome.status)),
            tool_ms: Some(took.as_millis() as u64),
            cell_us: Some(outcome.result.duration_us),
            observation: Some(observation::render(&outcome)),
            ..ToolEvent::default()
        }));
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
    fn a_rollout_is_cut_at_its_step_markers() {
        let code = "import numpy as np\n# %% step 2\na = 1\n# %% Step 3: map\nb = a\n";
        assert_eq!(
            rollout_parts(code),
            vec![
                "import numpy as np\na = 1\n".to_string(),
                "b = a\n".to_string()
            ]
        );
        assert_eq!(rollout_parts("x = 1"), vec!["x = 1\n".to_string()]);
        // A marker with nothing under it gives no part.
        assert_eq!(
            rollout_parts("# %% step 2\n# %% step 3\nz = 3"),
            vec!["z = 3\n".to_string()]
        );
    }

    #[test]
    fn the_end_reward_counts_outputs_and_their_checks() {
        assert_eq!(end_reward(4, true, false), 1.0);
        assert_eq!(end_reward(4, true, true), 3.75 / 4.0);
        assert_eq!(end_reward(4, false, false), 3.5 / 4.0);
        assert!(same_output("./pred_results/a.tif", "pred_results/a.tif"));
        assert!(!same_output("pred_results/b.tif", "pred_results/a.tif"));
    }

    #[test]
    fn a_failure_is_one_line_with_its_call_and_error() {
        let mut t = Tree::new(2, PUcb::default());
        let id = t.add_child(0, "x = 1\ny = x / 0\nprint(y)".into(), 1.0);
        let node = &mut t.nodes[id];
        node.state = NodeState::Failed;
        node.observation = "[stdout]\nhello\n[error]\nTraceback (most recent call last):\n  File \"<cell-2>\", line 2, in <module>\n    y = x / 0\nZeroDivisionError: division by zero\n[static analysis] line 2: something (likely)\n[variables]\n  x (int, new): 1\n".into();
        assert_eq!(
            failure_line(node),
            "`y = x / 0` → ZeroDivisionError: division by zero"
        );
        let prompt = repair_prompt(node);
        assert!(
            prompt.contains("ZeroDivisionError: division by zero"),
            "{prompt}"
        );
        assert!(prompt.contains("[static analysis] line 2"), "{prompt}");
        assert!(
            !prompt.contains("[variables]") && !prompt.contains("hello"),
            "{prompt}"
        );
        node.state = NodeState::Pruned;
        node.findings = vec![Finding {
            line: 3,
            kind: "name".into(),
            message: "`prnt` is not defined".into(),
            certain: true,
        }];
        assert_eq!(failure_line(node), "`print(y)` → `prnt` is not defined");
    }

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
