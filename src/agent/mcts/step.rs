//! The tree search of a step suite (`eval --arch mcts` on
//! `benchmarks/geocode`): each subtask of a sequential task is refined
//! GeoAgent's way (§3.3, Figs 3–4 and its appendix prompts), under the
//! state the steps before left:
//!
//! - **Samples**: `width` candidate codes for the step's prompt, each run
//!   in a fork of the session (no candidate re-runs the steps before).
//! - **Prepend New Task**: a candidate that fails on an undefined name
//!   gets a new task before it — code that defines the undefined
//!   variables for this step (GeoAgent's prompt) — and runs again after it.
//! - **Node-prompt update**: any other failure asks the model to fix the
//!   error *in the prompt* (GeoAgent's prompt): the node's prompt becomes
//!   the updated one and a new candidate is generated from it.
//! - **Re-decomposition**: when every node has had its refinements and
//!   none ran, the step is split into smaller subtasks, each generated
//!   with the code before it and run in order in one fork.
//!
//! Selection among the failed nodes is P-UCB (GeoAgent's constants, priors
//! uniform); the reward of a node is GeoAgent's: whether its step ran
//! (the checks against the gold answer are never looked at). The search
//! of a step ends at the first node that runs, or when its expansions are
//! spent; the session then continues from that node's fork.

use serde_json::json;

use super::tree::PUcb;
use crate::agent::converse::{AgentLimits, Ending, Plain, RunState};
use crate::llm::{adapt, ChatBackend, Message, Role};
use crate::record::{Event, MctsNode, MessageEvent, Transcript};
use crate::sandbox::{CellStatus, SandboxError, Session};

/// How a node of a step's tree was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOrigin {
    /// A candidate for the step's prompt.
    Sample,
    /// Regenerated from a prompt the model fixed.
    PromptUpdate,
    /// Run after a prepended task that defines undefined variables.
    Prepend,
    /// The step split into smaller subtasks.
    Redecomposition,
}

impl StepOrigin {
    /// The name records write.
    pub fn name(self) -> &'static str {
        match self {
            StepOrigin::Sample => "sample",
            StepOrigin::PromptUpdate => "prompt_update",
            StepOrigin::Prepend => "prepend_task",
            StepOrigin::Redecomposition => "redecomposition",
        }
    }
}

/// One node of a step's tree.
struct StepNode {
    origin: StepOrigin,
    /// The prompt its code was generated from.
    prompt: String,
    /// Everything it ran in its fork, in order.
    code: String,
    /// The error line when it failed.
    error: Option<String>,
    /// Refinements asked from it.
    visits: u32,
    /// Its fork, kept while it ran cleanly.
    fork: Option<Session>,
}

/// The bounds of a step's search.
#[derive(Debug, Clone)]
pub struct StepSearchLimits {
    /// Model calls a step's search may make at most.
    pub expansions: usize,
    /// Candidates for the step's prompt.
    pub width: usize,
    /// Refinements of one failed node at most.
    pub refinements: u32,
    /// The selection constants.
    pub p_ucb: PUcb,
}

impl Default for StepSearchLimits {
    fn default() -> Self {
        StepSearchLimits {
            expansions: 12,
            width: 3,
            refinements: 2,
            p_ucb: PUcb::default(),
        }
    }
}

/// What the search of one step found.
#[derive(Default)]
pub struct StepFound {
    /// The fork of the node that ran (the session to continue from).
    pub session: Option<Session>,
    /// The code of the chosen node (the last tried when none ran).
    pub code: String,
    /// Nodes made, by origin: samples, prompt updates, prepended tasks,
    /// re-decompositions.
    pub counts: [usize; 4],
    /// The run ended during the search (rounds, budget, model failure).
    pub ended: Option<Ending>,
    /// When no node ran: the error line of the last node that failed.
    pub last_error: Option<String>,
}

/// GeoAgent's node-prompt update (appendix), filled in.
fn prompt_update(prompt: &str, code: &str, error: &str) -> String {
    format!(
        "Your goal is to fix the error in the initial prompt. I first give you the Python code\n```python\n{code}\n```\nGive your solution for fixing the error `{error}` and add it to the initial prompt. The initial prompt:\n{prompt}\n\nAnswer with the updated prompt only."
    )
}

/// GeoAgent's Prepend New Task (appendix), filled in.
fn prepend_task(step: &str, error: &str) -> String {
    format!(
        "Defining the undefined variables for the next step task: {step}\n(The step failed with `{error}`.) Give your code for the undefined variables in this step, in one ```python block:"
    )
}

/// The re-decomposition request.
fn redecompose(step: &str, tried: &[String]) -> String {
    format!(
        "This step could not be done in one piece: {step}\nThe attempts failed with: {}.\nSplit it into 2 to 4 smaller subtasks that together do the step, one per line, numbered `1.`, `2.`, …, nothing else.",
        tried.join("; ")
    )
}

/// The request for a candidate's code.
fn generate(prompt: &str) -> String {
    format!("{prompt}\n\nAnswer with this step's code in one ```python block; it runs in the session, after the steps before.")
}

/// The numbered lines of a decomposition.
fn subtasks(reply: &str) -> Vec<String> {
    reply
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (number, rest) = line.split_once(['.', ')'])?;
            (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
                .then(|| rest.trim().to_string())
        })
        .filter(|s| !s.is_empty())
        .take(6)
        .collect()
}

/// The undefined name of a `NameError` line, if that is the failure.
fn undefined_name(error: &str) -> Option<&str> {
    let rest = error.split("NameError: name '").nth(1)?;
    rest.split('\'').next()
}

/// The search of one step.
pub struct StepSearch<'a> {
    /// The model.
    pub backend: &'a mut dyn ChatBackend,
    /// The run's counts.
    pub state: &'a mut RunState,
    /// The run's bounds.
    pub limits: &'a AgentLimits,
    /// The run's record.
    pub transcript: &'a mut Transcript,
    /// The search's bounds.
    pub search: &'a StepSearchLimits,
    /// The conversation before this step (system prompt, task context).
    pub context: &'a [Message],
}

impl StepSearch<'_> {
    /// One model call with `request` after the context; its text.
    fn ask(&mut self, request: String) -> Result<String, Ending> {
        let mut messages = self.context.to_vec();
        let message = Message::text(Role::User, request);
        self.transcript.record(MessageEvent {
            agent: Some("mcts".into()),
            ..MessageEvent::of(Some(self.state.rounds), None, message.clone())
        });
        messages.push(message);
        let (response, took) = self
            .state
            .ask(
                &mut Plain(&mut *self.backend),
                &messages,
                &[],
                self.limits,
                &mut |_| {},
            )
            .map_err(|e| Ending::Failed(format!("{e:?}")))?;
        self.transcript.record(MessageEvent {
            agent: Some("mcts".into()),
            usage: Some(response.usage),
            llm_ms: Some(took.as_millis() as u64),
            ..MessageEvent::of(Some(self.state.rounds), None, response.message.clone())
        });
        Ok(response.message.content.unwrap_or_default())
    }

    /// Runs `code` in a fork of `root`: the node, recorded.
    fn evaluate(
        &mut self,
        root: &mut Session,
        nodes: &mut Vec<StepNode>,
        (parent, origin, prompt): (Option<usize>, StepOrigin, String),
        (step, parts): (usize, Vec<String>),
    ) -> Result<usize, SandboxError> {
        let mut fork = root.snapshot()?;
        fork.set_rebuild_at_once(false);
        let mut error = None;
        let mut observation = String::new();
        let ran = std::time::Instant::now();
        for part in &parts {
            let outcome = fork.execute(part)?;
            observation = crate::observation::render(&outcome);
            if outcome.status != CellStatus::Ok {
                error = Some(crate::observation::error_line(&observation).to_string());
                break;
            }
        }
        self.state.tool_time += ran.elapsed();
        let id = nodes.len();
        let code = parts.join("\n\n");
        self.transcript.record(Event::MctsNode(MctsNode {
            id,
            parent,
            step,
            origin: json!(origin.name()),
            code: code.clone(),
            state: json!(if error.is_none() { "ran" } else { "failed" }),
            findings: json!([]),
            observation: crate::util::clip(&observation, 2000),
            warnings: Vec::new(),
            told: Vec::new(),
            reward: Some(if error.is_none() { 1.0 } else { 0.0 }),
            visits: 0,
            q: 0.0,
            prior: 1.0,
        }));
        nodes.push(StepNode {
            origin,
            prompt,
            code,
            fork: error.is_none().then_some(fork),
            error,
            visits: 0,
        });
        Ok(id)
    }

    /// Searches step `step` (its `prompt`) from `root`'s state.
    pub fn run(&mut self, root: &mut Session, step: usize, prompt: &str) -> StepFound {
        let mut nodes: Vec<StepNode> = Vec::new();
        let mut found = StepFound::default();
        let mut asked = 0usize;
        let budget = self.search.expansions.max(1);
        let outcome = (|| -> Result<Option<usize>, Ending> {
            let sandbox = |e: SandboxError| Ending::Failed(format!("sandbox: {e}"));
            // Samples of the step's prompt.
            for _ in 0..self.search.width.max(1) {
                if asked >= budget {
                    break;
                }
                asked += 1;
                let reply = self.ask(generate(prompt))?;
                let code = adapt::fenced_code(&reply).unwrap_or(reply);
                let id = self
                    .evaluate(
                        root,
                        &mut nodes,
                        (None, StepOrigin::Sample, prompt.to_string()),
                        (step, vec![code]),
                    )
                    .map_err(sandbox)?;
                if nodes[id].error.is_none() {
                    return Ok(Some(id));
                }
            }
            // Refinements of the most promising failed node.
            while asked < budget {
                let total: u32 = nodes.iter().map(|n| n.visits).sum::<u32>() + 1;
                let pick = nodes
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.error.is_some() && n.visits < self.search.refinements)
                    .filter(|(_, n)| n.origin != StepOrigin::Redecomposition)
                    .max_by(|(_, a), (_, b)| {
                        let score =
                            |n: &StepNode| self.search.p_ucb.score(0.0, 1.0, n.visits, total);
                        score(a).total_cmp(&score(b))
                    })
                    .map(|(i, _)| i);
                let Some(id) = pick else { break };
                nodes[id].visits += 1;
                let error = nodes[id].error.clone().unwrap_or_default();
                let code = nodes[id].code.clone();
                let child = if undefined_name(&error).is_some() {
                    asked += 1;
                    let reply = self.ask(prepend_task(prompt, &error))?;
                    let defining = adapt::fenced_code(&reply).unwrap_or(reply);
                    let node_prompt = nodes[id].prompt.clone();
                    self.evaluate(
                        root,
                        &mut nodes,
                        (Some(id), StepOrigin::Prepend, node_prompt),
                        (step, vec![defining, code]),
                    )
                } else {
                    asked += 1;
                    let updated = self.ask(prompt_update(&nodes[id].prompt, &code, &error))?;
                    if asked >= budget {
                        break;
                    }
                    asked += 1;
                    let reply = self.ask(generate(updated.trim()))?;
                    let regenerated = adapt::fenced_code(&reply).unwrap_or(reply);
                    self.evaluate(
                        root,
                        &mut nodes,
                        (
                            Some(id),
                            StepOrigin::PromptUpdate,
                            updated.trim().to_string(),
                        ),
                        (step, vec![regenerated]),
                    )
                }
                .map_err(sandbox)?;
                if nodes[child].error.is_none() {
                    return Ok(Some(child));
                }
            }
            // Re-decomposition, once, when the refinements are spent.
            if asked + 2 <= budget {
                let tried: Vec<String> = nodes
                    .iter()
                    .filter_map(|n| n.error.clone())
                    .take(4)
                    .collect();
                asked += 1;
                let parts = subtasks(&self.ask(redecompose(prompt, &tried))?);
                if parts.is_empty() {
                    return Ok(None);
                }
                let mut codes: Vec<String> = Vec::new();
                for part in &parts {
                    if asked >= budget {
                        return Ok(None);
                    }
                    asked += 1;
                    let before = if codes.is_empty() {
                        String::new()
                    } else {
                        format!(
                            "\n\nThe subtasks before this one ran:\n```python\n{}\n```",
                            codes.join("\n\n")
                        )
                    };
                    let reply = self.ask(generate(&format!(
                        "Subtask of the step `{prompt}`: {part}{before}"
                    )))?;
                    codes.push(adapt::fenced_code(&reply).unwrap_or(reply));
                }
                let id = self
                    .evaluate(
                        root,
                        &mut nodes,
                        (None, StepOrigin::Redecomposition, parts.join("\n")),
                        (step, codes),
                    )
                    .map_err(sandbox)?;
                if nodes[id].error.is_none() {
                    return Ok(Some(id));
                }
            }
            Ok(None)
        })();
        for node in &nodes {
            let slot = match node.origin {
                StepOrigin::Sample => 0,
                StepOrigin::PromptUpdate => 1,
                StepOrigin::Prepend => 2,
                StepOrigin::Redecomposition => 3,
            };
            found.counts[slot] += 1;
        }
        match outcome {
            Ok(Some(id)) => {
                found.code = nodes[id].code.clone();
                found.session = nodes[id].fork.take();
            }
            Ok(None) | Err(_) => {
                found.code = nodes.last().map(|n| n.code.clone()).unwrap_or_default();
                found.last_error = nodes.iter().rev().find_map(|n| n.error.clone());
                found.ended = outcome.err();
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decomposition_is_its_numbered_lines() {
        let reply =
            "Here:\n1. Read the layer\n2) Buffer it by 500 m\n\n3. Count the points inside\nthanks";
        assert_eq!(
            subtasks(reply),
            vec![
                "Read the layer",
                "Buffer it by 500 m",
                "Count the points inside"
            ]
        );
        assert!(subtasks("no numbers here").is_empty());
    }

    #[test]
    fn an_undefined_name_is_read_from_the_error_line() {
        assert_eq!(
            undefined_name("NameError: name 'stations' is not defined"),
            Some("stations")
        );
        assert_eq!(undefined_name("KeyError: 'name'"), None);
    }

    #[test]
    fn the_papers_prompts_carry_the_code_the_error_and_the_step() {
        let update = prompt_update(
            "Buffer the stations.",
            "buf = st.buffer(5)",
            "AttributeError: x",
        );
        assert!(update.starts_with("Your goal is to fix the error in the initial prompt."));
        assert!(update.contains("buf = st.buffer(5)") && update.contains("AttributeError: x"));
        let prepend = prepend_task(
            "Buffer the stations.",
            "NameError: name 'st' is not defined",
        );
        assert!(prepend.starts_with(
            "Defining the undefined variables for the next step task: Buffer the stations."
        ));
    }
}
