//! Shared set-up for integration tests: one real zygote per test binary,
//! started on the venv that `make setup` made (or `GISCLAW_VENV`).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use gisclaw::sandbox::{SandboxConfig, Session, Zygote};

/// The zygote shared by every test of this binary.
pub fn zygote() -> &'static Arc<Zygote> {
    static ZYGOTE: OnceLock<Arc<Zygote>> = OnceLock::new();
    ZYGOTE.get_or_init(|| {
        Zygote::start(SandboxConfig::default()).unwrap_or_else(|err| panic!("starting the sandbox: {err}"))
    })
}

/// A fresh work dir, removed when the returned guard drops.
pub fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("gisclaw-test-").tempdir().expect("temp dir")
}

/// A session with the default limits in a fresh work dir.
pub fn session() -> (Session, tempfile::TempDir) {
    let dir = workdir();
    let s = Session::open(zygote(), dir.path()).expect("open session");
    (s, dir)
}

/// A session with its own limits.
pub fn session_with(config: SandboxConfig) -> (Session, tempfile::TempDir) {
    let dir = workdir();
    let s = Session::open_with(zygote(), dir.path(), config).expect("open session");
    (s, dir)
}

/// The default config, for tweaking in a test.
pub fn config() -> SandboxConfig {
    zygote().config().clone()
}

/// Path of a file inside the work dir.
pub fn in_dir(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}
