//! The agent: prompts, tools, the loop, and the run's record.
//!
//! Only the Single Agent (ReAct) exists so far; the Dual Agent
//! (plan/execute/replan) and MCTS refinement are not built yet.

pub mod dedup;
pub mod memory;
pub mod prompt;
pub mod single;
pub mod solution;
pub mod tools;
pub mod transcript;
