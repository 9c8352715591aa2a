//! The confinement layers of gisclaw, shared by the two processes that
//! hold untrusted work: the sandbox worker's sessions (LLM-written Python)
//! and the confined reader (`gisclaw __read`, which parses bytes that a
//! cell wrote or a data folder brought). Neither links the other's
//! libraries: the worker embeds CPython and never GDAL, the reader is
//! gisclaw with Debian's GDAL.
//!
//! - [`isolate`]: user, mount, PID and IPC namespaces, the id maps, and the
//!   minimal filesystem view;
//! - [`confine`]: rlimits, no-new-privs, capabilities, Landlock, seccomp.

// Confinement reports its failures; it does not panic on a result.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod confine;
pub mod isolate;
