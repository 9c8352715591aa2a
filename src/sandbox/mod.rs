//! The agent side of the Python sandbox.
//!
//! `gisclaw` never runs LLM-written code itself. It starts one
//! `gisclaw-worker` zygote ([`Zygote`]) that imports the GIS stack once, and
//! opens [`Session`]s: forked, confined children, each with its own
//! persistent namespace, each in a sandbox of its own (namespaces where the
//! kernel allows, watched by a monitor process that ends all of it when the
//! session is dropped). Limits are enforced from here (cell timeout, task
//! budget: interrupt, then kill) and in the child (rlimits, capabilities,
//! Landlock, seccomp); a dead worker is replaced and its namespace rebuilt
//! from the journal of successful cells. The zygote is this process' own,
//! or the per-user service's that outlives it ([`service`]): the CLI's
//! commands share one so that only the first pays for the imports.

mod config;
pub mod constraint;
mod env;
mod error;
mod monitor;
pub mod preamble;
pub mod service;
mod session;
pub mod workdir;
mod zygote;

/// The source of `gisclaw_tools`, the helper module every session
/// pre-loads (`solution.py` inlines it when the cells use it; the docs
/// index documents it).
pub const TOOLS_SRC: &str = include_str!("../../tools/gisclaw_tools.py");

pub use config::{default_blocked_imports, Layer, SandboxConfig, ServiceSettings, UnknownLayer};
pub use error::{worker_message, SandboxError};
pub use gisclaw_protocol::{FigureFacts, Finding, OutputStream};
pub use session::{
    Canceller, CellOutcome, CellStatus, OutputSink, RestoreReport, Session, SessionDirs,
    MAX_CODE_BYTES,
};
pub use zygote::Zygote;
