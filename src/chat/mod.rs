//! `gisclaw chat`: the interactive session's engine (conversation, sandbox,
//! commands; single-agent turns there, dual-agent turns in `plan`), its
//! rendering, and saved sessions. The REPL itself (line
//! editing, slash commands, Ctrl-C) is in the CLI (`src/cli/chat.rs`).

pub mod engine;
mod plan;
pub mod render;
pub mod store;
