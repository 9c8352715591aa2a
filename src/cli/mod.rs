//! One module per subcommand; `main.rs` only dispatches.

pub mod bench;
pub mod bench_js;
pub mod card;
pub mod chat;
pub mod common;
pub mod eval;
pub mod exec;
pub mod figure;
pub mod knowledge;
pub mod mcp;
pub mod memory;
pub mod sandbox;
pub mod solve;
pub mod transcript;
pub mod tree;
