//! Errors of the sandbox client. Each says what is wrong and, where the user
//! can fix it, the command that does.

use std::path::PathBuf;
use std::time::Duration;

use gisclaw_protocol::FrameError;

/// What can go wrong talking to the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The Python environment does not exist.
    #[error(
        "no Python environment at {0}: run `make setup` (or set GISCLAW_VENV to an existing one)"
    )]
    MissingVenv(PathBuf),
    /// The worker executable is missing or cannot run.
    #[error("cannot run the sandbox worker {path}: {source}: run `make setup` (or `cargo build --workspace`), or set GISCLAW_WORKER")]
    WorkerMissing {
        /// Where it was looked for.
        path: PathBuf,
        /// Why it could not run.
        source: std::io::Error,
    },
    /// The worker started but could not become ready (bad venv, broken
    /// site-packages, version mismatch…); the message is the worker's.
    #[error("the sandbox worker failed to start: {0}")]
    StartFailed(String),
    /// A local system call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// A channel to the worker broke.
    #[error("the {peer} channel failed: {source}")]
    Channel {
        /// `zygote` or `session`.
        peer: &'static str,
        /// The framing error.
        source: FrameError,
    },
    /// The worker answered something unexpected.
    #[error("unexpected answer from the sandbox worker: {0}")]
    Protocol(String),
    /// Another live session holds the work folder.
    #[error("the work folder {} is in use by another live gisclaw session: wait for it to end, or choose another folder", .0.display())]
    WorkDirInUse(PathBuf),
    /// The session's time budget is spent; no more cells run.
    #[error("the session's time budget of {} s is spent", .0.as_secs())]
    BudgetExhausted(Duration),
    /// The worker answered a request with an error of its own.
    #[error("the sandbox worker reported: {0}")]
    Worker(String),
    /// A confinement layer the user requires is not in force.
    #[error("the sandbox requires {layer}, which is not in force here: {why} (required by `[sandbox] require` in the config file or --require-confinement)")]
    Unconfined {
        /// The layer's name, as written in `require`.
        layer: &'static str,
        /// Why the layer is missing, as the worker reported it.
        why: String,
    },
}

impl SandboxError {
    /// Adapter for `map_err` on I/O results.
    pub(crate) fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> SandboxError {
        move |source| SandboxError::Io { what, source }
    }

    /// Adapter for `map_err` on framing results.
    pub(crate) fn channel(peer: &'static str) -> impl FnOnce(FrameError) -> SandboxError {
        move |source| SandboxError::Channel { peer, source }
    }
}

/// The worker's own one-line explanation among its last stderr lines (it
/// prefixes them `gisclaw-worker: `), else its very last line.
pub fn worker_message<'a, I>(lines: I) -> Option<String>
where
    I: DoubleEndedIterator<Item = &'a str> + Clone,
{
    lines
        .clone()
        .rev()
        .find(|l| l.starts_with("gisclaw-worker:"))
        .or_else(|| lines.last())
        .map(|l| l.trim_start_matches("gisclaw-worker: ").to_string())
}
