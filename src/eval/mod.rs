//! Evaluation: `gisclaw eval` runs a task suite repeatedly ([`runner`]),
//! scores every run ([`record`]: L1 [`code`], [`codebleu`] and [`api`], L2
//! [`process`], L3 [`output_score`], the [`errors`] taxonomy) and writes the
//! [`report`] with its [`stats`] and [`charts`].
//!
//! Not built yet: the LLM judge, the vision judge, and eval of the step
//! (geocode) and unit suites.

pub mod api;
pub mod charts;
pub mod code;
pub mod codebleu;
pub mod errors;
pub mod output_score;
pub mod process;
pub mod record;
pub mod report;
pub mod runner;
pub mod stats;
