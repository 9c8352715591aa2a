//! Evaluation (issue 5). Only the statistics are built so far; the runner,
//! the three scoring layers and the report are not, and `gisclaw eval` does
//! not exist yet.

pub mod stats;
pub mod api;
pub mod code;
pub mod output_score;
