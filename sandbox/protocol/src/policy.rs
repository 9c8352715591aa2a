//! The confinement policy of one sandbox session. The agent builds it once;
//! the worker applies it once, in its `confine` module, right after fork and
//! before any user code runs.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What a session's worker may do. Reading stays possible everywhere (the data
/// dir, the Python env, system libraries); writing and networking are narrowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfinementPolicy {
    /// Directories under which the worker may create, write and delete files
    /// (the task work dir and the session's private tmp). Everything else is
    /// read-only where Landlock is available.
    pub write_roots: Vec<PathBuf>,
    /// Whether the worker may open sockets other than AF_UNIX.
    pub allow_network: bool,
    /// Address-space cap (RLIMIT_AS) in bytes; `None` leaves it unlimited.
    pub memory_limit_bytes: Option<u64>,
    /// Largest file the worker may write (RLIMIT_FSIZE) in bytes; `None` leaves it unlimited.
    pub file_size_limit_bytes: Option<u64>,
    /// Directories the session may read besides the system directories and
    /// the Python environment (the task's data), read-only.
    pub read_roots: Vec<PathBuf>,
    /// Run the session in its own user, mount, PID and IPC namespaces with a
    /// minimal filesystem view, where the kernel allows it.
    pub namespaces: bool,
    /// Most processes and threads the session may run at once (RLIMIT_NPROC).
    pub process_limit: Option<u64>,
    /// When false, Landlock and seccomp are skipped (rlimits still apply).
    pub confine: bool,
}

/// How one confinement layer ended up after the worker tried to apply it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum LayerStatus {
    /// The layer is in force as asked.
    Enforced(String),
    /// The layer is in force only in part (e.g. an older Landlock ABI).
    Partial(String),
    /// The kernel does not offer the layer; the session runs without it.
    Unsupported(String),
    /// The policy asked for no such restriction.
    Disabled,
}

impl LayerStatus {
    /// True when the layer restricts the worker (fully or in part).
    pub fn is_active(&self) -> bool {
        matches!(self, LayerStatus::Enforced(_) | LayerStatus::Partial(_))
    }
}

/// What the worker reports back about each layer of its confinement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfinementReport {
    /// User, mount, PID and IPC namespaces with a minimal filesystem view.
    pub namespaces: LayerStatus,
    /// Capabilities dropped (bounding, permitted, effective, ambient).
    pub capabilities: LayerStatus,
    /// Filesystem write restriction (Landlock).
    pub filesystem: LayerStatus,
    /// Network and system-call restriction (seccomp: no sockets, no
    /// ptrace, no new namespaces, no leaving the session's process group).
    pub network: LayerStatus,
    /// `PR_SET_NO_NEW_PRIVS`.
    pub no_new_privs: LayerStatus,
    /// Address-space, file-size and process-count rlimits.
    pub rlimits: LayerStatus,
}

impl ConfinementReport {
    /// One warning line per layer that was asked for but is not in force.
    pub fn warnings(&self) -> Vec<String> {
        let layers = [
            ("namespaces", &self.namespaces),
            ("capability drop", &self.capabilities),
            ("filesystem confinement (Landlock)", &self.filesystem),
            ("system-call filter (seccomp)", &self.network),
            ("no-new-privs", &self.no_new_privs),
            ("resource limits", &self.rlimits),
        ];
        layers
            .iter()
            .filter_map(|(name, status)| match status {
                LayerStatus::Unsupported(why) => Some(format!("{name} unavailable: {why}")),
                LayerStatus::Partial(why) => Some(format!("{name} only partial: {why}")),
                _ => None,
            })
            .collect()
    }
}
