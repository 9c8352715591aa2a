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

/// The Python environment: `GISCLAW_VENV`, else the venv `make setup`
/// recorded ([`install_record`]) when it is there, else `<data_dir>/venv`.
pub fn default_venv() -> PathBuf {
    venv_found().path
}

/// A part of the install, with how it was found (for `gisclaw doctor`).
#[derive(Debug, Clone)]
pub struct Found {
    /// Where it is.
    pub path: PathBuf,
    /// How gisclaw found it: `GISCLAW_VENV`, `recorded in FILE`, `default`.
    pub how: String,
}

/// [`default_venv`] with how it was found.
pub fn venv_found() -> Found {
    if let Some(path) = std::env::var_os("GISCLAW_VENV") {
        return Found {
            path: PathBuf::from(path),
            how: "GISCLAW_VENV".into(),
        };
    }
    if let Some(found) = recorded(|r| r.venv.filter(|v| v.join("pyvenv.cfg").is_file())) {
        return found;
    }
    Found {
        path: data_dir().join("venv"),
        how: "default".into(),
    }
}

/// The part of the install the record names (`pick` takes it out of the
/// record, and only when it is really there), with the record's file.
fn recorded(pick: impl FnOnce(InstallRecord) -> Option<PathBuf>) -> Option<Found> {
    let (record, file) = install_record()?;
    pick(record).map(|path| Found {
        path,
        how: format!("recorded in {}", file.display()),
    })
}

/// Where `make setup-local-model` installed the local model server and
/// weights: `GISCLAW_LOCAL_DIR`, else the recorded folder when it is
/// there, else `<data_dir>/local`.
pub fn local_found() -> Found {
    if let Some(dir) = std::env::var_os("GISCLAW_LOCAL_DIR").filter(|d| !d.is_empty()) {
        return Found {
            path: PathBuf::from(dir),
            how: "GISCLAW_LOCAL_DIR".into(),
        };
    }
    if let Some(found) = recorded(|r| r.local_dir.filter(|d| d.is_dir())) {
        return found;
    }
    Found {
        path: data_dir().join("local"),
        how: "default".into(),
    }
}

/// The JavaScript runtime's folder (`worker.js`, `package-lock.json` and
/// the `node_modules` that `make setup` installed): `GISCLAW_JS_DIR`, else
/// the recorded folder when its libraries are there, else the checkout's
/// `sandbox/js`.
pub fn js_found() -> Found {
    if let Some(dir) = std::env::var_os("GISCLAW_JS_DIR").filter(|d| !d.is_empty()) {
        return Found {
            path: PathBuf::from(dir),
            how: "GISCLAW_JS_DIR".into(),
        };
    }
    if let Some(found) = recorded(|r| r.js_dir.filter(|d| d.join("node_modules").is_dir())) {
        return found;
    }
    Found {
        path: Path::new(env!("CARGO_MANIFEST_DIR")).join("sandbox/js"),
        how: "the checkout's sandbox/js".into(),
    }
}

/// The Node.js program: `GISCLAW_NODE`, else `node` (or Debian's older
/// `nodejs`) on `PATH`, resolved to its real path.
pub fn node_found() -> Option<Found> {
    if let Some(path) = std::env::var_os("GISCLAW_NODE").filter(|p| !p.is_empty()) {
        return Some(Found {
            path: PathBuf::from(path),
            how: "GISCLAW_NODE".into(),
        });
    }
    let path = std::env::var_os("PATH")?;
    for name in ["node", "nodejs"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                let real = candidate.canonicalize().unwrap_or(candidate);
                return Some(Found {
                    path: real,
                    how: format!("`{name}` on PATH"),
                });
            }
        }
    }
    None
}

/// What `make setup` recorded about the install: real paths, so that
/// gisclaw finds its Python environment when started with a reduced
/// environment (an MCP client launching `gisclaw mcp` without
/// `XDG_DATA_HOME`) or from a shell whose variables differ from the
/// set-up's.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct InstallRecord {
    /// The sandbox's venv.
    pub venv: Option<PathBuf>,
    /// The local model's folder (`bin/llama-server`, `models/`).
    pub local_dir: Option<PathBuf>,
    /// The JavaScript runtime's folder (`sandbox/js` with its libraries).
    pub js_dir: Option<PathBuf>,
}

/// Whether a record may be believed: a file of this user's (or root's)
/// that no one else may write (it names the programs gisclaw runs).
fn trusted(file: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(file) else {
        return false;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    meta.is_file() && (meta.uid() == me || meta.uid() == 0) && meta.mode() & 0o022 == 0
}

/// The record's file name beside the binary (in a checkout's `target/`).
pub const INSTALL_RECORD: &str = "gisclaw-install.toml";

/// The install record and its file: `gisclaw-install.toml` beside the
/// running binary or up to three folders above it (a checkout's
/// `target/`, seen from `target/debug/gisclaw` or a test binary in
/// `target/debug/deps/`), else `install.toml` in the config folder (the
/// default one too, for a client that dropped `XDG_CONFIG_HOME`). An
/// unreadable record, or one others may write, counts as none.
pub fn install_record() -> Option<(InstallRecord, PathBuf)> {
    let exe = std::env::current_exe().ok()?;
    let beside = exe
        .ancestors()
        .skip(1)
        .take(3)
        .map(|dir| dir.join(INSTALL_RECORD));
    let configs = [
        config_dir().join("install.toml"),
        home_dir().join(".config/gisclaw/install.toml"),
    ];
    beside.chain(configs).find_map(|file| {
        if !trusted(&file) {
            return None;
        }
        let text = std::fs::read_to_string(&file).ok()?;
        let record: InstallRecord = toml::from_str(&text).ok()?;
        Some((record, file))
    })
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
