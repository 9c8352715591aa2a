//! `gisclaw doctor`: what is installed, what is missing, and the command that
//! fixes each gap.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use gisclaw_protocol::WorkerInfo;

use crate::sandbox::{worker_message, SandboxConfig, SandboxError};

/// Distributions the sandbox must offer (PyPI names).
pub const REQUIRED_PACKAGES: &[&str] = &[
    "numpy",
    "pandas",
    "geopandas",
    "shapely",
    "pyproj",
    "pyogrio",
    "fiona",
    "rasterio",
    "rasterstats",
    "xarray",
    "netCDF4",
    "h5netcdf",
    "scipy",
    "scikit-learn",
    "libpysal",
    "esda",
    "mgwr",
    "matplotlib",
    "seaborn",
    "networkx",
    "openpyxl",
];

/// The command that repairs the environment.
pub const FIX: &str = "make setup";

/// The findings of one doctor run.
#[derive(Debug, Default)]
pub struct Report {
    /// Lines to print, in order.
    pub lines: Vec<String>,
    /// Problems found (each also in `lines`).
    pub problems: usize,
}

impl Report {
    fn ok(&mut self, what: &str, detail: impl AsRef<str>) {
        self.lines
            .push(format!("  ok       {what:<22} {}", detail.as_ref()));
    }

    fn warn(&mut self, what: &str, detail: impl AsRef<str>) {
        self.lines
            .push(format!("  warning  {what:<22} {}", detail.as_ref()));
    }

    fn missing(&mut self, what: &str, detail: impl AsRef<str>) {
        self.problems += 1;
        self.lines
            .push(format!("  MISSING  {what:<22} {}", detail.as_ref()));
    }
}

/// Runs the worker in probe mode and parses what it prints.
fn probe(config: &SandboxConfig) -> Result<WorkerInfo, SandboxError> {
    let out = Command::new(&config.worker)
        .arg("probe")
        .arg("--venv")
        .arg(&config.venv)
        .arg("--cache")
        .arg(&config.cache_dir)
        .output()
        .map_err(|source| SandboxError::WorkerMissing {
            path: config.worker.clone(),
            source,
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(SandboxError::StartFailed(
            worker_message(stderr.lines()).unwrap_or_else(|| "no message".into()),
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| SandboxError::Protocol(format!("unreadable probe output: {e}")))
}

/// Whether the per-user sandbox service (the warm zygote) serves this
/// configuration, in one line.
fn service_state(config: &SandboxConfig) -> String {
    if config.service.is_none() {
        return "turned off ([sandbox] daemon = false or --no-daemon): each command imports the stack".into();
    }
    let found = match crate::sandbox::service::list() {
        Ok(found) => found,
        Err(e) => return format!("unavailable: {e}"),
    };
    let own = crate::sandbox::service::socket_for(config).map(|(socket, _)| socket);
    match found.iter().find(|f| own.as_ref().is_ok_and(|o| *o == f.socket)) {
        Some(f) => match &f.status {
            Ok(s) => format!(
                "warm: pid {}, {} session(s) forked; commands start sessions in milliseconds (`gisclaw sandbox status`)",
                s.pid, s.sessions_forked
            ),
            Err(why) => format!("{} does not answer ({why}); the next command replaces it", f.socket.display()),
        },
        None => "not running: the next command starts it (the stack's import, once), later ones reuse it".into(),
    }
}

/// `path (how it was found)`, with its real path when a link leads to it
/// (the sandbox uses the real one).
fn found_text(path: &Path, found: &crate::paths::Found) -> String {
    let how = if found.path == path {
        found.how.clone()
    } else {
        "the config file".to_string()
    };
    match path.canonicalize() {
        Ok(real) if real != path => {
            format!("{} ({how}; real path {})", path.display(), real.display())
        }
        _ => format!("{} ({how})", path.display()),
    }
}

/// Checks everything and returns the report.
pub fn run(config: &SandboxConfig) -> Report {
    let mut report = Report::default();
    report
        .lines
        .push(format!("gisclaw {}", env!("CARGO_PKG_VERSION")));
    report.lines.push("sandbox".into());
    check_install(&mut report, config);
    let info = if report.problems == 0 {
        match probe(config) {
            Ok(info) => Some(info),
            Err(err) => {
                report.missing("python stack", format!("{err} (fix: `{FIX}`)"));
                None
            }
        }
    } else {
        None
    };
    if let Some(info) = &info {
        check_stack(&mut report, config, info);
        check_confinement(&mut report, config, info);
    }
    check_gdal_and_eval(&mut report);
    check_js(&mut report);
    check_local_model(&mut report);
    check_profiles(&mut report);
    let mut summary = String::new();
    if report.problems == 0 {
        let _ = write!(summary, "all good");
    } else {
        let _ = write!(
            summary,
            "{} problem(s); `{FIX}` fixes them",
            report.problems
        );
    }
    report.lines.push(summary);
    report
}

/// The worker binary and the Python environment.
fn check_install(report: &mut Report, config: &SandboxConfig) {
    if config.worker.is_file() {
        let how = if std::env::var_os("GISCLAW_WORKER").is_some() {
            "GISCLAW_WORKER"
        } else {
            "beside gisclaw"
        };
        report.ok("worker", format!("{} ({how})", config.worker.display()));
    } else {
        report.missing(
            "worker",
            format!(
                "{} not found: run `{FIX}` (or `cargo build --workspace`)",
                config.worker.display()
            ),
        );
    }
    if config.venv.join("pyvenv.cfg").is_file() {
        report.ok(
            "python env",
            found_text(&config.venv, &crate::paths::venv_found()),
        );
    } else {
        report.missing(
            "python env",
            format!(
                "no venv at {}: run `{FIX}` (or set GISCLAW_VENV)",
                config.venv.display()
            ),
        );
    }
}

/// The sandbox's Python, its import time, the service and each library.
fn check_stack(report: &mut Report, config: &SandboxConfig, info: &WorkerInfo) {
    report.ok(
        "python",
        format!("{} ({})", info.python_version, info.executable),
    );
    report.ok(
        "stack import",
        format!(
            "{:.1} s for {} modules",
            info.import_seconds,
            info.preloaded.len()
        ),
    );
    report.ok("sandbox service", service_state(config));
    report.lines.push("libraries".into());
    for name in REQUIRED_PACKAGES {
        match info
            .packages
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
        {
            Some(p) => report.ok(name, &p.version),
            None => report.missing(name, format!("not installed: run `{FIX}`")),
        }
    }
    for failure in &info.import_failures {
        report.missing(
            &failure.module,
            format!(
                "installed but fails to import: {} (fix: `{FIX}`)",
                failure.error
            ),
        );
    }
}

/// The confinement layers the worker found.
fn check_confinement(report: &mut Report, config: &SandboxConfig, info: &WorkerInfo) {
    report.lines.push("confinement".into());
    match &info.namespace_error {
        None => report.ok(
            "namespaces",
            "user, mount, PID and IPC namespaces per session: a minimal filesystem view, no other process visible, all of a session's processes end with it",
        ),
        Some(why) => report.warn(
            "namespaces",
            format!("unavailable ({why}): sessions fall back to Landlock, seccomp and a process group; other processes of this user stay visible where Landlock is missing"),
        ),
    }
    match info.landlock_abi {
        Some(abi) => report.ok(
            "filesystem",
            format!("Landlock ABI {abi}: reads limited to the system, the Python environment, the data and the session's folders; writes to the work dir, outputs and a private tmp"),
        ),
        None => report.warn(
            "filesystem",
            "no Landlock in this kernel: without namespaces, sessions can read and write anywhere the user can (needs Linux ≥ 5.13 with Landlock enabled)",
        ),
    }
    if info.seccomp {
        report.ok(
            "system calls",
            "seccomp: no sockets, ptrace, new namespaces, mounts or new sessions",
        );
    } else {
        report.warn(
            "system calls",
            "no seccomp in this kernel: sessions can open network sockets",
        );
    }
    if !config.require.is_empty() {
        let names: Vec<&str> = config.require.iter().map(|l| l.name()).collect();
        report.ok(
            "required",
            format!(
                "{} (`[sandbox] require`): a session without them is refused",
                names.join(", ")
            ),
        );
    }
}

/// The host's GDAL (for the card) and the embedding model (for eval).
fn check_gdal_and_eval(report: &mut Report) {
    report.lines.push("native GIS (for the schema card)".into());
    match Command::new("gdal-config").arg("--version").output() {
        Ok(out) if out.status.success() => {
            report.ok("GDAL (Debian)", String::from_utf8_lossy(&out.stdout).trim());
        }
        _ => report.missing(
            "GDAL (Debian)",
            format!("libgdal-dev not installed: run `{FIX}`"),
        ),
    }
    report.lines.push("eval".into());
    match crate::embed::Embedder::load_default() {
        Ok(e) => report.ok(
            "embedding model",
            format!("all-MiniLM-L6-v2 for C_emb (L2): {}", e.dir().display()),
        ),
        Err(e) => report.warn(
            "embedding model",
            format!("{e}; without it eval leaves C_emb out"),
        ),
    }
}

/// Node and the GeoJSEval libraries, started as the suite starts them.
fn check_js(report: &mut Report) {
    report
        .lines
        .push("JavaScript runtime (the GeoJSEval suite)".into());
    match crate::js::JsConfig::installed()
        .and_then(|config| Ok((crate::js::JsWorker::start(&config)?, config)))
    {
        Ok((worker, config)) => {
            let info = worker.info();
            report.ok(
                "Node + libraries",
                format!(
                    "Node {} ({}) with {} (folder {}: {})",
                    info.node,
                    config.node.display(),
                    info.libraries
                        .iter()
                        .map(|(k, v)| format!("{k} {v}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    config.js_dir.display(),
                    crate::paths::js_found().how
                ),
            );
            if let Some(confinement) = &info.confinement {
                let warnings = confinement.warnings();
                if warnings.is_empty() {
                    report.ok("JS confinement", "every layer in force");
                } else {
                    report.warn("JS confinement", warnings.join("; "));
                }
            }
        }
        Err(e) => report.warn(
            "Node + libraries",
            format!("{e}; only `benchmarks/geojs` needs it"),
        ),
    }
}

/// The optional local model server and weights.
fn check_local_model(report: &mut Report) {
    report
        .lines
        .push("local model (optional: `make setup-local-model`)".into());
    let local = crate::llm::local::LocalSpec::installed();
    match local.check() {
        Ok(()) => report.ok(
            "llama-server + GGUF",
            format!(
                "ready for --backend local: {} with {} (folder {}: {})",
                local.server.display(),
                local.model_name(),
                crate::paths::local_found().path.display(),
                crate::paths::local_found().how
            ),
        ),
        Err(e) => report.warn(
            "llama-server + GGUF",
            format!("not ready ({e}); cloud, Ollama and replay backends work without it"),
        ),
    }
}

/// How each profile of the config file offers tools to its model.
fn check_profiles(report: &mut Report) {
    report
        .lines
        .push("model profiles (how each offers tools to its model)".into());
    match crate::config::ConfigFile::load(&crate::config::config_path()) {
        Ok(file) => {
            report.ok(
                "local",
                format!(
                    "tool mode {} (the default of --backend local)",
                    crate::llm::config::LOCAL_TOOL_MODE.name()
                ),
            );
            for (name, profile) in &file.backends.profiles {
                report.ok(name, crate::llm::config::tool_mode_line(profile));
            }
        }
        Err(e) => report.warn("config file", e.to_string()),
    }
}
