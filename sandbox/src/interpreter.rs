//! Starting CPython inside the worker and calling into the Python side of the
//! runtime (`sandbox/python/gisclaw_runtime.py`).
//!
//! CPython is initialised from an explicit isolated `PyConfig` whose
//! `executable` is the venv's python: Python then finds `pyvenv.cfg`, sets
//! `sys.prefix` to the venv, and puts only the venv's site-packages on the
//! path. Environment variables such as `PYTHONPATH` are ignored.

use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

use gisclaw_protocol::{
    CellResult, Finding, PackageInfo, SessionSpec, VariableSummary, WorkerInfo,
};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyModule, PyString, PyTuple};

/// The Python half of the runtime, compiled into the binary.
const RUNTIME_SRC: &str = include_str!("../python/gisclaw_runtime.py");
/// The static analyser of cells, imported by the runtime.
const ANALYSIS_SRC: &str = include_str!("../python/gisclaw_analysis.py");
/// The schema card's check of what the libraries read (`card::library`).
const LIBRARY_VIEW_SRC: &str = include_str!("../python/gisclaw_library_view.py");
/// The helper module offered to user code (`load_raster`, …).
const TOOLS_SRC: &str = include_str!("../../tools/gisclaw_tools.py");
/// `major.minor` of the libpython this binary links.
const BUILT_FOR_PYTHON: &str = env!("GISCLAW_BUILT_FOR_PYTHON");

/// Why the interpreter could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The venv directory or its python is missing.
    #[error(
        "no Python environment at {0}: run `make setup` (or set GISCLAW_VENV to an existing one)"
    )]
    MissingVenv(PathBuf),
    /// The venv was made from another Python than the one this binary links.
    #[error("the Python environment at {venv} is Python {found}, but gisclaw-worker was built for Python {BUILT_FOR_PYTHON}: run `make setup` to recreate it")]
    VersionMismatch {
        /// The venv.
        venv: PathBuf,
        /// The version its pyvenv.cfg names.
        found: String,
    },
    /// `Py_InitializeFromConfig` or a config call failed.
    #[error("CPython failed to start: {0}")]
    Init(String),
    /// The runtime module raised while loading or pre-importing.
    #[error("the sandbox runtime failed to load: {0}")]
    Runtime(String),
}

/// One argument of a call into the runtime module.
enum Arg<'a> {
    Str(&'a str),
    Int(u64),
}

/// A running interpreter with the runtime module loaded.
pub struct Runtime {
    module: Py<PyModule>,
    /// The venv, the base installation it was made from, and the worker's
    /// cache: what a session must be able to read.
    environment: Vec<PathBuf>,
}

/// Formats a Python exception as one line (type and message).
fn py_err_line(py: Python<'_>, err: &PyErr) -> String {
    let ty = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    format!("{ty}: {}", err.value(py))
}

/// Reads the `version` line of `pyvenv.cfg` and returns its `major.minor`.
fn venv_python_version(venv: &Path) -> Option<String> {
    let text = std::fs::read_to_string(venv.join("pyvenv.cfg")).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        let key = key.trim();
        if key == "version" || key == "version_info" {
            let mut parts = value.trim().split('.');
            Some(format!("{}.{}", parts.next()?, parts.next()?))
        } else {
            None
        }
    })
}

/// Sets the variables that must be in place before any library initialises.
fn set_process_env(cache: &Path) {
    // libgomp in a forked child hangs unless OpenMP is single-threaded from
    // the start (measured with sklearn's KMeans); BLAS pools likewise.
    for var in [
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMEXPR_NUM_THREADS",
    ] {
        std::env::set_var(var, "1");
    }
    std::env::set_var("MPLBACKEND", "Agg");
    std::env::set_var("MPLCONFIGDIR", cache.join("matplotlib"));
    std::env::set_var("PYTHONHASHSEED", "0");
    // One UTF-8 locale for Python and the C libraries alike (C.UTF-8 ships
    // with every glibc), whatever the user's shell uses.
    std::env::set_var("LC_ALL", "C.UTF-8");
    std::env::set_var("LANG", "C.UTF-8");
}

/// Turns a `PyStatus` into a `Result`.
///
/// # Safety
/// `status` must come from a CPython config call.
unsafe fn check_status(status: ffi::PyStatus, what: &str) -> Result<(), StartError> {
    if ffi::PyStatus_Exception(status) == 0 {
        return Ok(());
    }
    let msg = if status.err_msg.is_null() {
        "unknown error".to_string()
    } else {
        CStr::from_ptr(status.err_msg)
            .to_string_lossy()
            .into_owned()
    };
    Err(StartError::Init(format!("{what}: {msg}")))
}

/// Initialises CPython for the venv.
fn init_python(venv: &Path) -> Result<(), StartError> {
    let python = venv.join("bin").join("python");
    let executable = CString::new(python.as_os_str().as_encoded_bytes())
        .map_err(|_| StartError::Init("venv path contains a NUL byte".into()))?;
    // CPython installs its SIGINT handler (KeyboardInterrupt, which cell
    // timeouts and cancellation rely on) only when SIGINT is not ignored at
    // start-up — and a process started in the background by a shell without
    // job control (`cmd &` in a script, nohup, some CI runners) inherits
    // SIGINT ignored. Reset it so the handler is always installed.
    // SAFETY: setting a signal disposition to its default has no
    // preconditions; no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
    // SAFETY: the config is initialised by PyConfig_InitIsolatedConfig before
    // use, only written through CPython's setters or plain int fields, and
    // cleared after Py_InitializeFromConfig copied it.
    // UTF-8 mode and a UTF-8 C locale: the isolated defaults are ASCII,
    // and GIS data is full of place names (`São_Paulo.csv`, `°C`).
    // SAFETY: the pre-config is initialised by CPython before the two
    // plain int fields are set, and read only by Py_PreInitialize.
    unsafe {
        let mut pre = MaybeUninit::<ffi::PyPreConfig>::uninit();
        ffi::PyPreConfig_InitIsolatedConfig(pre.as_mut_ptr());
        let mut pre = pre.assume_init();
        pre.utf8_mode = 1;
        pre.configure_locale = 1;
        check_status(ffi::Py_PreInitialize(&pre), "pre-initialising (UTF-8 mode)")?;
    }
    unsafe {
        let mut config = MaybeUninit::<ffi::PyConfig>::uninit();
        ffi::PyConfig_InitIsolatedConfig(config.as_mut_ptr());
        let mut config = config.assume_init();
        config.install_signal_handlers = 1;
        config.write_bytecode = 0;
        config.parse_argv = 0;
        let slot: *mut *mut libc::wchar_t = &mut config.executable;
        let result = check_status(
            ffi::PyConfig_SetBytesString(&mut config, slot.cast(), executable.as_ptr()),
            "setting executable",
        )
        .and_then(|()| check_status(ffi::Py_InitializeFromConfig(&config), "initialising"));
        ffi::PyConfig_Clear(&mut config);
        result
    }
}

/// Loads `src` as a module named `name` and registers it in `sys.modules`.
fn load_module<'py>(
    py: Python<'py>,
    src: &str,
    file: &str,
    name: &str,
) -> PyResult<Bound<'py, PyModule>> {
    let c_string = |text: &str| {
        CString::new(text).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    };
    let (code, file, cname) = (c_string(src)?, c_string(file)?, c_string(name)?);
    let module = PyModule::from_code(py, &code, &file, &cname)?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(name, &module)?;
    Ok(module)
}

impl Runtime {
    /// Starts CPython on the venv, loads the runtime and pre-imports the
    /// GIS stack. Call once per process.
    pub fn start(venv: &Path, cache: &Path) -> Result<Runtime, StartError> {
        if !venv.join("bin").join("python").exists() || !venv.join("pyvenv.cfg").exists() {
            return Err(StartError::MissingVenv(venv.to_path_buf()));
        }
        if let Some(found) = venv_python_version(venv) {
            if found != BUILT_FOR_PYTHON {
                return Err(StartError::VersionMismatch {
                    venv: venv.to_path_buf(),
                    found,
                });
            }
        }
        let _ = std::fs::create_dir_all(cache.join("matplotlib"));
        set_process_env(cache);
        init_python(venv)?;
        Python::attach(|py| {
            crate::capture::register(py)
                .and_then(|()| load_module(py, TOOLS_SRC, "gisclaw_tools.py", "gisclaw_tools"))
                .and_then(|_| {
                    load_module(py, ANALYSIS_SRC, "gisclaw_analysis.py", "gisclaw_analysis")
                })
                .and_then(|_| {
                    load_module(
                        py,
                        LIBRARY_VIEW_SRC,
                        "gisclaw_library_view.py",
                        "gisclaw_library_view",
                    )
                })
                .and_then(|_| load_module(py, RUNTIME_SRC, "gisclaw_runtime.py", "gisclaw_runtime"))
                .and_then(|module| {
                    module.getattr("preload")?.call0()?;
                    let sys = py.import("sys")?;
                    let mut environment = vec![venv.to_path_buf(), cache.to_path_buf()];
                    for name in ["prefix", "base_prefix", "exec_prefix", "base_exec_prefix"] {
                        let dir: String = sys.getattr(name)?.extract()?;
                        environment.push(PathBuf::from(dir));
                    }
                    environment.sort();
                    environment.dedup();
                    Ok(Runtime {
                        module: module.unbind(),
                        environment,
                    })
                })
                .map_err(|err| StartError::Runtime(py_err_line(py, &err)))
        })
    }

    /// Calls a runtime function that returns a JSON string and parses it.
    fn call_json<T: serde::de::DeserializeOwned>(
        &self,
        func: &str,
        args: &[Arg<'_>],
    ) -> Result<T, String> {
        Python::attach(|py| {
            let result = (|| {
                let items: Vec<Bound<'_, PyAny>> = args
                    .iter()
                    .map(|arg| match arg {
                        Arg::Str(s) => PyString::new(py, s).into_any(),
                        Arg::Int(n) => PyInt::new(py, *n).into_any(),
                    })
                    .collect();
                let args = PyTuple::new(py, items)?;
                self.module
                    .bind(py)
                    .getattr(func)?
                    .call1(args)?
                    .extract::<String>()
            })();
            let text = result.map_err(|err| format!("{func} failed: {}", py_err_line(py, &err)))?;
            serde_json::from_str(&text)
                .map_err(|err| format!("{func} returned malformed JSON: {err}"))
        })
    }

    /// Everything a session of `spec` may read besides the system
    /// directories: the Python environment (venv, base installation, cache)
    /// and the policy's read roots (the task's data).
    pub fn readable_dirs(&self, spec: &SessionSpec) -> Vec<PathBuf> {
        self.environment
            .iter()
            .chain(&spec.policy.read_roots)
            .cloned()
            .collect()
    }

    /// Versions, pre-imported modules and import failures.
    pub fn worker_info(&self) -> Result<WorkerInfo, String> {
        let mut info: WorkerInfo = self.call_json("worker_info", &[])?;
        info.landlock_abi = crate::confine::landlock_abi();
        info.seccomp = crate::confine::seccomp_available();
        info.namespace_error = crate::isolate::probe().err();
        Ok(info)
    }

    /// Turns the (forked) interpreter into a session: namespace, import
    /// hook, output budgets, tmp dir.
    pub fn start_session(&self, spec: &SessionSpec) -> Result<(), String> {
        let spec_json = serde_json::to_string(spec).map_err(|e| e.to_string())?;
        let _: serde_json::Value = self.call_json("start_session", &[Arg::Str(&spec_json)])?;
        Ok(())
    }

    /// Runs one cell and returns its (already truncated) outcome. Never
    /// fails: when the report itself cannot be made (a cell that sabotaged
    /// the runtime), the outcome says so and the session goes on.
    pub fn run_cell(&self, code: &str, cell: u64) -> CellResult {
        // An interrupt that arrived while no cell ran must not hit this one.
        Python::attach(|py| {
            let _ = py.check_signals();
        });
        self.call_json("run_cell", &[Arg::Str(code), Arg::Int(cell)])
            .unwrap_or_else(|why| unreported_cell(&why))
    }

    /// The static analysis of `code` against the live namespace.
    pub fn analyse(&self, code: &str) -> Result<Vec<Finding>, String> {
        self.call_json("analyse", &[Arg::Str(code)])
    }

    /// The digest of `code`'s syntax tree (`None` when it does not parse).
    pub fn shape(&self, code: &str) -> Result<Option<String>, String> {
        self.call_json("shape", &[Arg::Str(code)])
    }

    /// Summaries of every user variable.
    pub fn variables(&self) -> Result<Vec<VariableSummary>, String> {
        self.call_json("variables", &[])
    }

    /// Importable distributions.
    pub fn packages(&self) -> Result<Vec<PackageInfo>, String> {
        self.call_json("packages", &[])
    }

    /// Collects garbage and moves every object to the permanent generation,
    /// so that forked children do not dirty shared pages when they collect.
    pub fn freeze(&self) {
        Python::attach(|py| {
            let _ = py.import("gc").and_then(|gc| {
                gc.getattr("collect")?.call0()?;
                gc.getattr("freeze")?.call0()
            });
        });
    }

    /// Flushes `sys.stdout` and `sys.stderr` (nothing calls `Py_Finalize`).
    pub fn flush_std_streams(&self) {
        Python::attach(|py| {
            if let Ok(sys) = py.import("sys") {
                for name in ["stdout", "stderr"] {
                    let _ = sys.getattr(name).and_then(|s| s.call_method0("flush"));
                }
            }
        });
    }

    /// Forks this single-threaded process with CPython's fork protocol
    /// (`PyOS_BeforeFork`, then `PyOS_AfterFork_Parent` or `_Child`).
    /// Returns the child's pid in the parent and 0 in the child.
    pub fn fork(&self) -> std::io::Result<i32> {
        // SAFETY: the worker is single-threaded and holds the GIL; CPython is
        // prepared before the fork and repaired on both sides after it.
        unsafe {
            ffi::PyOS_BeforeFork();
            let pid = libc::fork();
            if pid == 0 {
                ffi::PyOS_AfterFork_Child();
                return Ok(0);
            }
            let err = std::io::Error::last_os_error();
            ffi::PyOS_AfterFork_Parent();
            if pid < 0 {
                Err(err)
            } else {
                Ok(pid)
            }
        }
    }
}

/// The outcome of a cell whose result could not be reported (`why`).
fn unreported_cell(why: &str) -> CellResult {
    CellResult::failure(
        "SandboxReportError",
        &format!("the cell ran, but its result could not be reported ({why}); the session goes on, with the variables as the cell left them"),
    )
}
