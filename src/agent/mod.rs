//! The agent: prompts, tools, the one conversation loop and its event
//! stream, the architectures (Single-Agent ReAct, Dual-Agent
//! Plan-Execute-Replan, the tree search in `mcts/`), and the run's record.

pub mod alone;
pub mod bindings;
pub mod context;
pub mod converse;
pub mod dedup;
pub mod dual;
pub mod events;
pub mod mcts;
pub mod memory;
pub mod plan;
pub mod plan_run;
pub mod prompt;
pub mod run;
pub mod single;
pub mod solution;
pub mod summary;
pub mod tools;
