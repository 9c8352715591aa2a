//! The integration tests, as one binary: one link of the whole stack
//! instead of one per file, and one zygote (`common::zygote`) shared by the
//! tests that open sessions in-process. Each module is one area; the
//! local-model end-to-end tests are `#[ignore]`d and run by `make e2e`,
//! the Slurm test by `make slurm-test`.

mod common;

mod agent_e2e;
mod analysis;
mod backends;
mod bench;
mod chat;
mod cli;
mod codebleu_parity;
mod context;
mod decline;
mod declines_suite;
mod docs;
mod embed_parity;
mod eval;
mod eval_cost;
mod eval_scoring;
mod eval_shards;
mod eval_steps;
mod eval_unit;
mod figures;
mod formats;
mod geojs_suite;
mod host_boundary;
mod html_report;
mod inspect_log;
mod knowledge;
mod layout;
mod local_model;
mod mcp;
mod mcts;
mod notebook;
mod output_checks;
mod protocol;
mod provenance;
mod real_data;
mod record_schema;
mod relocated;
mod sandbox;
mod sandbox_attacks;
mod service;
mod slurm;
mod solve;
mod stats_parity;
mod steps_suite;
mod unit_suite;
mod vision;
