//! Evaluation: `gisclaw eval` runs a task suite repeatedly ([`runner`]),
//! scores every run ([`record`]: L1 [`code`], [`codebleu`] and [`api`], L2
//! [`process`] and the optional [`llm_judge`], L3 [`output_score`], the
//! [`errors`] taxonomy) and writes the [`report`] (with its charts) and its [`stats`].
//!
//! Unit suites (pass@k over samples) are run and reported by [`unit_eval`],
//! step suites (complete@1) by [`step_eval`]; all three suites run their
//! items through [`jobs`]. A task-suite eval can be split over many
//! processes and machines sharing its folder ([`shard`], with [`claim`]s
//! on the work only one of them must do). Image outputs can be graded by
//! a [`vision_judge`].

pub mod api;
pub mod breakdown;
pub mod claim;
pub mod code;
pub mod codebleu;
pub mod errors;
pub mod geojs_eval;
pub mod inspect_log;
pub mod jobs;
pub mod llm_judge;
pub mod output_score;
pub mod plan;
pub mod process;
pub mod record;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod shard;
pub mod stats;
pub mod status;
pub mod step_eval;
pub mod step_report;
pub mod unit_eval;
pub mod unit_report;
pub mod vision_judge;
