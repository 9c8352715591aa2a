//! gisclaw: a runtime that lets an LLM do real, multi-step GIS analysis.
//!
//! The data path and the module that owns each step:
//! `sandbox` (the confined Python worker and its sessions) →
//! `observation` (what the model is shown of a cell's outcome).
//! Later steps (task, the data `card`, prompt, llm, agent, eval) build on these.

// The library never panics on a result and never prints: errors go up
// typed, output goes through the front ends (an MCP stdio server relies on
// that). Tests may unwrap.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::print_stdout,
        clippy::print_stderr
    )
)]

pub mod agent;
pub mod bench;
pub mod beneath;
pub mod card;
pub mod chat;
pub mod config;
pub mod doctor;
pub mod embed;
pub mod environ;
pub mod eval;
pub mod gdal_io;
pub mod interrupt;
pub mod js;
pub mod knowledge;
pub mod labels;
pub mod llm;
pub mod mcp;
pub mod notebook;
pub mod observation;
pub mod outputs;
pub mod paths;
pub mod protocol;
pub mod provenance;
pub mod pysource;
pub mod reader;
pub mod reads;
pub mod record;
pub mod sandbox;
pub mod task;
pub mod terminal;
pub mod util;
