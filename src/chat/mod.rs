//! `gisclaw chat`: the interactive session's engine (conversation, sandbox,
//! commands; single-agent turns there, dual-agent turns in `plan`, tree
//! search turns in `search`), its
//! rendering, and saved sessions. The REPL itself (line
//! editing, slash commands, Ctrl-C) is in the CLI (`src/cli/chat.rs`).

pub mod engine;
pub mod live;
mod plan;
pub mod render;
mod search;
pub mod store;

use std::path::{Path, PathBuf};

use crate::sandbox::SandboxError;

/// What can go wrong in a chat session outside a turn (opening, commands,
/// saving); each says which file or name is at fault.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// A file or folder of the session cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `/show` could not draw the file.
    #[error("cannot draw it: {0}")]
    QuickLook(String),
    /// The notebook of an export could not be written.
    #[error("{0}")]
    Notebook(#[from] crate::notebook::NotebookError),
    /// The sandbox failed.
    #[error("sandbox failure: {0}")]
    Sandbox(#[from] SandboxError),
    /// A saved cell could not be replayed into a new namespace.
    #[error("rebuilding the namespace: {0}")]
    Rebuild(SandboxError),
    /// `/inspect` of something that is not a Python name.
    #[error("`{0}` is not a variable name")]
    NotAName(String),
    /// `/inspect` of a name the namespace does not have (the analysis's
    /// words, with the nearest names).
    #[error("{0}")]
    NoSuchVariable(String),
    /// A data folder that is not a folder.
    #[error("{}: not a folder", .0.display())]
    NotAFolder(PathBuf),
    /// `work/data` is a real file or folder, not the link gisclaw made.
    #[error("{} exists and is not gisclaw's data link", .0.display())]
    NotOurLink(PathBuf),
    /// A session id with a slash or a leading dot.
    #[error("`{id}` is not a session id (see {})", dir.display())]
    BadId {
        /// The id given.
        id: String,
        /// Where sessions are kept.
        dir: PathBuf,
    },
    /// No session with that id.
    #[error("no saved session {} ({available})", path.display())]
    NoSession {
        /// Where it was looked for.
        path: PathBuf,
        /// The ids there are.
        available: String,
    },
    /// `chat.json` is not a saved session.
    #[error("{}:{line}: {message}", path.display())]
    Corrupt {
        /// chat.json.
        path: PathBuf,
        /// The line at fault.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Maps an I/O error on `path` to [`ChatError::Io`].
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ChatError + '_ {
    move |source| ChatError::Io {
        path: path.to_path_buf(),
        source,
    }
}
