//! gisclaw: a runtime that lets an LLM do real, multi-step GIS analysis.
//!
//! The data path and the module that owns each step:
//! `sandbox` (the confined Python worker and its sessions) →
//! `observation` (what the model is shown of a cell's outcome).
//! Later steps (task, schema card, prompt, llm, agent, eval) build on these.

pub mod agent;
pub mod bench;
pub mod chat;
pub mod doctor;
pub mod embed;
pub mod environ;
pub mod eval;
pub mod interrupt;
pub mod knowledge;
pub mod llm;
pub mod observation;
pub mod outputs;
pub mod paths;
pub mod sandbox;
pub mod schema;
pub mod task;
