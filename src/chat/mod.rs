//! `gisclaw chat`: the interactive session's engine (conversation, sandbox,
//! commands), its rendering, and saved sessions. The REPL itself (line
//! editing, slash commands, Ctrl-C) is in the CLI (`src/cli/chat.rs`).

pub mod engine;
pub mod render;
pub mod store;
