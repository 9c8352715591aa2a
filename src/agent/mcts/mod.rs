//! `--arch mcts`: tree search over candidate codes for each plan step, on
//! forked sandbox snapshots (GeoAgent §3.3, without its re-execution of the
//! prefix). [`tree`] holds the tree and P-UCB, [`search`] the expansion,
//! the reward and the replay of the chosen path; [`step`] refines each
//! subtask of a step suite's task (prompt update, Prepend New Task,
//! re-decomposition).

pub mod search;
pub mod step;
pub mod tree;

pub use search::{run, MctsLimits, SearchHooks, SearchInputs, SearchResult};
