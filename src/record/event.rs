//! The events of a run's record, one type per kind. Every writer builds an
//! [`Event`] and every reader matches on one, so the two cannot drift
//! apart: the JSON of each line is `{"t": seconds, "event": kind, …}` with
//! the kind's fields, as gisclaw has always written it (fields a writer
//! leaves out are absent, and read back as `None`).
//!
//! Payloads whose types belong to a higher module (a plan, a compaction, a
//! tree node's findings) are kept as JSON values here; what readers use is
//! typed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::{Message, Usage};

/// One line of `transcript.jsonl` (without its time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A run, chat, step run or MCP session began.
    Start(Start),
    /// A message of the conversation (the prompt, the model's answer, a nudge).
    Message(MessageEvent),
    /// A tool call and its result (the agent's, or an MCP client's).
    Tool(ToolEvent),
    /// The conversation was compacted to fit the model's window.
    Compaction(CompactionEvent),
    /// Library docs retrieved into a brief (`--rag`).
    Retrieval(Retrieval),
    /// A plan's or a step suite's step began.
    Step(StepStart),
    /// The Planner was asked for a new plan.
    Replan(Replan),
    /// A step suite's check of a step.
    Check(Check),
    /// A step started with the gold code of the steps before it run.
    GoldPrefix {
        /// The step.
        step: usize,
        /// Gold cells run before it.
        gold_cells: usize,
    },
    /// A person stepped in with the gold code of a step (`--interventions`).
    Intervention {
        /// The step.
        step: usize,
        /// What ended the attempt before it (`GaveUp`, `End`…).
        after: String,
    },
    /// A chat user's own cell (`/run`).
    UserCell(UserCell),
    /// A chat turn ended.
    TurnEnd {
        /// How (`Answered`, `Interrupted`…).
        end: String,
    },
    /// A chat's session was reset.
    Reset {},
    /// A chat's last turn was undone.
    Undo {
        /// The message count it went back to.
        to: usize,
    },
    /// A node of the tree search, once evaluated.
    MctsNode(MctsNode),
    /// A tree-search rollout.
    MctsRollout {
        /// The node rolled out from.
        node: usize,
        /// What it ran and earned (as tree.json holds it).
        rollout: Value,
    },
    /// The tree search ended.
    MctsEnd(MctsEnd),
    /// `solution.py` was run again in a fresh session.
    Reproduce(Reproduction),
    /// The run ended.
    End(End),
}

impl Event {
    /// The kind as written in the `event` field.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Start(_) => "start",
            Event::Message(_) => "message",
            Event::Tool(_) => "tool",
            Event::Compaction(_) => "compaction",
            Event::Retrieval(_) => "retrieval",
            Event::Step(_) => "step",
            Event::Replan(_) => "replan",
            Event::Check(_) => "check",
            Event::GoldPrefix { .. } => "gold_prefix",
            Event::Intervention { .. } => "intervention",
            Event::UserCell(_) => "user_cell",
            Event::TurnEnd { .. } => "turn_end",
            Event::Reset {} => "reset",
            Event::Undo { .. } => "undo",
            Event::MctsNode(_) => "mcts_node",
            Event::MctsRollout { .. } => "mcts_rollout",
            Event::MctsEnd(_) => "mcts_end",
            Event::Reproduce(_) => "reproduce",
            Event::End(_) => "end",
        }
    }
}

/// `start`: what began, and with what. Each front end fills its fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Start {
    /// The task's id (solve, eval, step runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The architecture (`single`, `dual`, `mcts`, `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// The backend's description (never a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Whether the model was a recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<bool>,
    /// Whether the task's workflow was in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<bool>,
    /// Whether the task's domain knowledge was in the prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_knowledge: Option<bool>,
    /// The protocol of a run under a paper's preset (`--protocol`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Whether library docs were retrieved (`--rag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rag: Option<bool>,
    /// gisclaw's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gisclaw: Option<String>,
    /// The confinement layers in force for the session, as the worker
    /// reported them (kept as written: the report has gained layers over
    /// time, and an older record must still read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Value>,
    /// A chat's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<String>,
    /// Cells a resumed chat ran again to rebuild its namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_cells: Option<usize>,
    /// The suite kind of an eval run that is not a task run (`steps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// The run's number in an eval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    /// A step run's mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// An MCP session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<bool>,
    /// An MCP server's data folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

/// `message`: one message and, for a model's answer, what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageEvent {
    /// The model round it belongs to (absent for a chat user's message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// Which agent (`planner`, `worker`, `mcts`; absent for the single agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The message.
    pub message: Message,
    /// The answer's token counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Milliseconds waiting for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_ms: Option<u64>,
    /// The server's reason for stopping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Failed attempts before the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
    /// What the backend said about the exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_notes: Option<Vec<String>>,
    /// Repairs gisclaw made to the answer (a tool call's JSON…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repairs: Option<Vec<String>>,
    /// Names of the figures shown with a user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// A Planner's reason for declining.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declined: Option<String>,
    /// A Planner's plan, as parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    /// Why a Planner's answer is not a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_error: Option<String>,
    /// The tree search's sample number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<usize>,
    /// The sample's mean token log-probability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprob: Option<f64>,
}

impl MessageEvent {
    /// A message with nothing else recorded.
    pub fn of(round: Option<usize>, agent: Option<&str>, message: Message) -> MessageEvent {
        MessageEvent {
            round,
            agent: agent.map(str::to_string),
            message,
            usage: None,
            llm_ms: None,
            finish_reason: None,
            retries: None,
            backend_notes: None,
            repairs: None,
            images: None,
            declined: None,
            plan: None,
            plan_error: None,
            choice: None,
            logprob: None,
        }
    }
}

/// `tool`: one tool call and what came of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolEvent {
    /// The model round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// Which agent called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool (`execute_python`, `finish`…; older MCP transcripts wrote
    /// it as `tool`).
    #[serde(alias = "tool")]
    pub name: String,
    /// Its arguments as JSON text (`{"code": …}`).
    #[serde(default)]
    pub arguments: String,
    /// The cell's status (`Ok`, `Error`…) or the call's (`finished`, `refused`…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Whether it succeeded (MCP sessions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// Milliseconds the call took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_ms: Option<u64>,
    /// Microseconds the cell ran in the sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_us: Option<u64>,
    /// What the model (or client) read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// The cell's own output, for a cell that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<CellRecord>,
    /// The code of an older MCP transcript's `execute_python`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl ToolEvent {
    /// A call of `name` with no arguments and nothing else recorded.
    pub fn named(name: &str) -> ToolEvent {
        ToolEvent {
            name: name.to_string(),
            arguments: "{}".into(),
            ..ToolEvent::default()
        }
    }

    /// The code of an `execute_python` call (from its arguments, or an older
    /// MCP transcript's `code`).
    pub fn code(&self) -> Option<String> {
        let from_arguments = serde_json::from_str::<Value>(&self.arguments)
            .ok()
            .and_then(|a| a["code"].as_str().map(str::to_string));
        from_arguments.or_else(|| self.code.clone())
    }

    /// One argument's text (`summary` of a `finish`…).
    pub fn argument(&self, name: &str) -> Option<String> {
        serde_json::from_str::<Value>(&self.arguments)
            .ok()
            .and_then(|a| a[name].as_str().map(str::to_string))
    }
}

/// What the record keeps of a cell beside the observation the model read:
/// its own output and the files it wrote under `pred_results/`, so that a
/// notebook can be rebuilt from the record alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellRecord {
    /// Its standard output (as kept: the front may be dropped).
    #[serde(default)]
    pub stdout: String,
    /// Characters dropped from the front of stdout.
    #[serde(default)]
    pub stdout_dropped_chars: usize,
    /// Its standard error.
    #[serde(default)]
    pub stderr: String,
    /// The value of its last expression, shown.
    #[serde(default)]
    pub display: Option<String>,
    /// The exception it raised.
    #[serde(default)]
    pub error: Option<CellError>,
    /// Files it wrote (`pred_results/x`).
    #[serde(default)]
    pub wrote: Vec<String>,
}

impl CellRecord {
    /// The record of a cell that ran, with the outputs it wrote.
    pub fn of(cell: &crate::sandbox::CellOutcome, written: &[String]) -> CellRecord {
        let r = &cell.result;
        CellRecord {
            stdout: r.stdout.clone(),
            stdout_dropped_chars: r.stdout_dropped_chars,
            stderr: r.stderr.clone(),
            display: r.display.clone(),
            error: r.error.as_ref().map(|e| CellError {
                ename: e.ename.clone(),
                evalue: e.evalue.clone(),
                traceback: e.traceback.clone(),
            }),
            wrote: written
                .iter()
                .map(|w| format!("pred_results/{w}"))
                .collect(),
        }
    }
}

/// A cell's exception.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellError {
    /// Its type's name.
    #[serde(default)]
    pub ename: String,
    /// Its message.
    #[serde(default)]
    pub evalue: String,
    /// Its traceback.
    #[serde(default)]
    pub traceback: String,
}

/// `compaction`: the conversation was shortened to fit the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompactionEvent {
    /// The model round.
    pub round: usize,
    /// Which agent's conversation.
    #[serde(default)]
    pub agent: Option<String>,
    /// Where the window's size came from.
    #[serde(default)]
    pub window_source: Option<String>,
    /// Milliseconds it took.
    pub took_ms: f64,
    /// What was kept and dropped.
    pub compaction: Value,
}

/// `retrieval`: library docs put into a brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Retrieval {
    /// What the brief was for (`this task`, `this step`).
    #[serde(rename = "for")]
    pub for_what: String,
    /// The query sent to the index.
    pub query: String,
    /// The libraries the text names.
    pub libraries: Vec<String>,
    /// The entries retrieved.
    pub hits: Vec<String>,
}

/// `step`: a step began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepStart {
    /// Its number, from 1.
    pub step: usize,
    /// Steps in all.
    pub of: usize,
    /// A plan step's goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// The plan's replans so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replan: Option<usize>,
}

/// `replan`: the Planner was asked again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Replan {
    /// The replan's number.
    pub cycle: usize,
    /// The step that failed.
    pub failed_step: String,
    /// Why.
    pub reason: String,
    /// The operations that failed, with their errors.
    pub failed_operations: Value,
    /// What the Planner was told.
    pub request: String,
}

/// `check`: a step suite's check of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// The step.
    pub step: usize,
    /// The check, as the suite states it.
    pub check: Value,
    /// Whether it passed.
    pub passed: bool,
    /// Why not.
    #[serde(default)]
    pub problem: Option<String>,
}

/// `user_cell`: a chat user's own cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserCell {
    /// The code.
    pub code: String,
    /// Whether it ran without error.
    pub ok: bool,
    /// What it showed.
    pub observation: String,
    /// Its own output.
    #[serde(default)]
    pub cell: Option<CellRecord>,
}

/// `mcts_node`: a node of the tree search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MctsNode {
    /// Its id.
    pub id: usize,
    /// Its parent's.
    #[serde(default)]
    pub parent: Option<usize>,
    /// The plan step it does.
    pub step: usize,
    /// How it was made (sample, repair, rollout).
    pub origin: Value,
    /// Its code.
    pub code: String,
    /// Its state (ran, failed, pruned…).
    pub state: Value,
    /// Static-analysis findings.
    #[serde(default)]
    pub findings: Value,
    /// What its cell showed.
    #[serde(default)]
    pub observation: String,
    /// Output checks' warnings.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Failure lines its prompt was told.
    #[serde(default)]
    pub told: Vec<String>,
    /// Its reward (`None`: never evaluated).
    #[serde(default)]
    pub reward: Option<f64>,
    /// Visits.
    #[serde(default)]
    pub visits: u32,
    /// Mean value.
    #[serde(default)]
    pub q: f64,
    /// Prior.
    #[serde(default)]
    pub prior: f64,
}

/// What a tree search made of its nodes: the counts of the record's
/// `mcts_end` and of an eval run's record (`RunRecord.search`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchCounts {
    /// Candidate nodes (the root not counted).
    pub nodes: usize,
    /// Nodes that were expanded (asked for children).
    #[serde(default)]
    pub expansions: usize,
    /// Candidates that ran cleanly.
    pub ran: usize,
    /// Candidates that ran and failed.
    pub failed: usize,
    /// Candidates pruned by the static analysis without running.
    pub pruned: usize,
    /// Repair nodes (fixes of failed candidates).
    #[serde(default)]
    pub repairs: usize,
    /// Of them, those that ran cleanly.
    #[serde(default)]
    pub repairs_ran: usize,
    /// Nodes rewarded by a rollout (`--mcts-rollout`).
    #[serde(default)]
    pub rollouts: usize,
}

/// `mcts_end`: what the tree search did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MctsEnd {
    /// The best node.
    pub best: usize,
    /// Its reward.
    #[serde(default)]
    pub reward: Option<f64>,
    /// What the search made of its nodes.
    #[serde(flatten)]
    pub counts: SearchCounts,
    /// Where priors came from.
    #[serde(default)]
    pub prior: String,
    /// Why it stopped early.
    #[serde(default)]
    pub stopped: Option<String>,
}

/// `end`: how a run ended (a step run: how many steps passed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct End {
    /// `finished`, `failed`, `declined`, `error`, `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Model rounds used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// A step run's steps passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_passed: Option<usize>,
    /// A step run's steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<usize>,
}

/// What `run.json` says of the reproduction.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reproduction {
    /// Every cell ran and every output came out the same.
    pub ok: bool,
    /// Cells run.
    pub cells: usize,
    /// Cells that did not run to their end, with their first line and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_cells: Vec<String>,
    /// Outputs compared.
    pub outputs: usize,
    /// Outputs that differ or are missing, with how.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differed: Vec<String>,
    /// Seconds the reproduction took.
    pub seconds: f64,
}

impl Reproduction {
    /// One line for the run's summary.
    pub fn line(&self) -> String {
        if self.ok {
            return format!(
                "reproduced: solution.py remade the {} output(s) in {:.1} s",
                self.outputs, self.seconds
            );
        }
        let mut why: Vec<String> = self.failed_cells.clone();
        why.extend(self.differed.iter().cloned());
        format!(
            "not reproduced (a warning, not a failure): {}; see reproduce/",
            why.join("; ")
        )
    }
}
