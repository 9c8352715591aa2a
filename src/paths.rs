//! Where gisclaw keeps things on disk (XDG base directories) and where it
//! finds its Python environment and worker executable.

use std::path::{Path, PathBuf};

/// `$XDG_DATA_HOME/gisclaw` (default `~/.local/share/gisclaw`).
pub fn data_dir() -> PathBuf {
    xdg_dir("XDG_DATA_HOME", ".local/share").join("gisclaw")
}

/// `$XDG_CONFIG_HOME/gisclaw` (default `~/.config/gisclaw`).
pub fn config_dir() -> PathBuf {
    xdg_dir("XDG_CONFIG_HOME", ".config").join("gisclaw")
}

/// `$XDG_CACHE_HOME/gisclaw` (default `~/.cache/gisclaw`).
pub fn cache_dir() -> PathBuf {
    xdg_dir("XDG_CACHE_HOME", ".cache").join("gisclaw")
}

fn xdg_dir(var: &str, fallback: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        _ => home_dir().join(fallback),
    }
}

fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// The Python environment: `GISCLAW_VENV`, else `<data_dir>/venv` (where
/// `make setup` creates it).
pub fn default_venv() -> PathBuf {
    std::env::var_os("GISCLAW_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| data_dir().join("venv"))
}

/// The worker executable: `GISCLAW_WORKER`, else `gisclaw-worker` beside the
/// running executable (or one folder up, where cargo puts test binaries).
pub fn default_worker() -> PathBuf {
    program("gisclaw-worker", "GISCLAW_WORKER")
}

/// The `gisclaw` executable that serves as the confined reader
/// (`gisclaw __read`): `GISCLAW_EXE`, else the running gisclaw itself, or
/// a `gisclaw` beside a test binary (one folder up, in `target/debug`).
pub fn default_reader() -> PathBuf {
    program("gisclaw", "GISCLAW_EXE")
}

/// The program `name`: the path in the variable `override_var` when set,
/// else `name` beside the running executable or one folder up.
fn program(name: &str, override_var: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(override_var) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    for _ in 0..2 {
        let candidate = dir.join(name);
        if candidate.is_file() {
            return candidate;
        }
        match dir.parent() {
            Some(parent) => dir = parent.to_path_buf(),
            None => break,
        }
    }
    exe.with_file_name(name)
}
