//! Messages on the two channels.
//!
//! - The **control** channel joins the agent to the zygote (the worker process
//!   that imported the GIS stack once). It carries [`ControlRequest`] and
//!   [`ControlResponse`].
//! - Each **session** channel joins the agent to one forked child holding one
//!   persistent namespace. It carries [`SessionRequest`] and [`SessionResponse`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::policy::{ConfinementPolicy, ConfinementReport};

/// Agent → zygote.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ControlRequest {
    /// Fork a session child. Two sockets follow this frame as SCM_RIGHTS
    /// messages (see [`crate::fdpass`]): the session's, then its monitor's
    /// (see [`MonitorEvent`]).
    Spawn {
        /// How the child sets itself up.
        spec: Box<SessionSpec>,
    },
    /// Exit (sessions live on until the agent closes their monitor sockets).
    /// To a shared zygote (the per-user service), this stops the service.
    Shutdown,
    /// A shared zygote's state (answered with [`ControlResponse::Status`]).
    Status,
}

/// Zygote → agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ControlResponse {
    /// Sent once, unasked, when the stack is imported and the zygote is ready.
    Ready {
        /// What the zygote's interpreter holds.
        info: Box<WorkerInfo>,
    },
    /// A session launcher was forked.
    Spawned {
        /// The launcher's process id (for logs; the session is signalled
        /// through its monitor).
        pid: i32,
    },
    /// The request could not be carried out.
    Error {
        /// One line saying what went wrong.
        message: String,
    },
    /// A shared zygote's state.
    Status {
        /// What it says of itself.
        status: Box<ServiceStatus>,
    },
}

/// The state of a shared zygote (the per-user sandbox service).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceStatus {
    /// Its process id.
    pub pid: i32,
    /// Seconds since it became ready.
    pub uptime_seconds: f64,
    /// Seconds of idleness after which it exits.
    pub idle_timeout_seconds: f64,
    /// Clients connected now (this one included).
    pub clients: usize,
    /// Sessions forked since it started.
    pub sessions_forked: u64,
    /// What it was started for: the settings its clients must share with it
    /// (gisclaw's version, the worker, the venv, the environment…), as
    /// `name: value` lines.
    pub settings: Vec<String>,
}

/// How a child process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChildExit {
    /// It called exit with this code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal ended it.
    Signaled {
        /// The signal number.
        signal: i32,
        /// The signal's name, e.g. `SIGSEGV`.
        name: String,
    },
}

impl std::fmt::Display for ChildExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildExit::Exited { code } => write!(f, "exited with code {code}"),
            ChildExit::Signaled { name, .. } => write!(f, "killed by {name}"),
        }
    }
}

/// Monitor → agent, on the monitor socket of a session's sandbox (its
/// namespace, or its process group where namespaces are unavailable).
///
/// The monitor is the sandbox's init: it forks the Python session, reaps
/// every process of the sandbox, and ends all of them when the agent closes
/// the monitor socket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum MonitorEvent {
    /// A process of the sandbox ended.
    Exited {
        /// Its process id inside the sandbox (as in [`SessionResponse::Ready`]).
        pid: i32,
        /// How it ended.
        exit: ChildExit,
    },
}

/// Agent → monitor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum MonitorRequest {
    /// Send `signal` to the sandbox's process `pid` (SIGINT interrupts a cell,
    /// SIGKILL ends a stuck session process).
    Signal {
        /// The process id inside the sandbox.
        pid: i32,
        /// The signal number.
        signal: i32,
    },
}

/// Everything a forked child needs to become a session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionSpec {
    /// The task work dir: the child's cwd; `pred_results/` is created in it.
    pub workdir: PathBuf,
    /// The session's private tmp dir (`TMPDIR`, `tempfile.gettempdir()`;
    /// seen as `/tmp` inside a namespace).
    pub tmpdir: PathBuf,
    /// An empty directory, private to the session, on which the monitor
    /// builds the namespace's root filesystem.
    pub stage: PathBuf,
    /// Confinement applied in the child before any user code runs.
    pub policy: ConfinementPolicy,
    /// Output budgets for observations.
    pub limits: OutputLimits,
    /// Imports refused by the package-constraint hook.
    pub blocked_imports: Vec<BlockedImport>,
}

/// Character budgets that keep observations small. The worker truncates, so
/// large outputs never cross the channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputLimits {
    /// Characters kept from the start of stdout.
    pub stdout_head_chars: usize,
    /// Characters kept from the end of stdout (the latest output).
    pub stdout_tail_chars: usize,
    /// Characters kept of stderr (from the start: the first warning or error).
    pub stderr_chars: usize,
    /// Characters kept of an error's traceback (exception line always kept).
    pub traceback_chars: usize,
    /// Characters of one variable's summary line.
    pub summary_chars: usize,
    /// Most variables reported for one cell.
    pub max_variables: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            stdout_head_chars: 1_000,
            stdout_tail_chars: 4_000,
            stderr_chars: 2_000,
            traceback_chars: 3_000,
            summary_chars: 240,
            max_variables: 30,
        }
    }
}

/// One refused module and the installed package to use instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedImport {
    /// Top-level module name, e.g. `arcpy`.
    pub module: String,
    /// What to use instead, e.g. `geopandas + rasterio`.
    pub alternative: String,
}

/// Agent → session child.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SessionRequest {
    /// Run one cell of Python in the session namespace.
    Exec {
        /// The code.
        code: String,
        /// The cell's number, used in tracebacks (`<cell-3>`).
        cell: u64,
        /// Send what the cell writes as it runs ([`SessionResponse::Output`]
        /// frames) besides its result.
        #[serde(default)]
        live: bool,
    },
    /// Analyse a cell against the live namespace without running it.
    Analyse {
        /// The code.
        code: String,
    },
    /// The shape of a cell: a digest of its syntax tree, the same for two
    /// cells that differ only in layout, comments or quoting.
    Shape {
        /// The code.
        code: String,
    },
    /// Summarise every user variable in the namespace.
    Variables,
    /// List the importable distributions and their versions.
    Packages,
    /// Fork this session: the copy starts with the same namespace and talks
    /// on the socket that follows this frame as an SCM_RIGHTS message. It
    /// shares the work dir and confinement, and greets with its own `Ready`.
    Snapshot,
    /// End the session process.
    Shutdown,
}

/// Which standard stream a cell wrote to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    /// `sys.stdout`.
    Stdout,
    /// `sys.stderr`.
    Stderr,
}

/// Session child → agent.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SessionResponse {
    /// Sent once, unasked, when the child is set up and confined.
    Ready {
        /// The child's process id inside its sandbox (the monitor reports
        /// its exit under this id and signals it by it).
        pid: i32,
        /// Which confinement layers are in force.
        confinement: ConfinementReport,
    },
    /// What the running cell wrote to stdout or stderr since the last
    /// such frame, sent while it runs (a few per second at most, the first
    /// 256 KiB of a cell); the cell's [`SessionResponse::Cell`] follows.
    Output {
        /// Where it was written.
        stream: OutputStream,
        /// The text, as written.
        text: String,
    },
    /// The outcome of an [`SessionRequest::Exec`].
    Cell {
        /// The result.
        result: Box<CellResult>,
    },
    /// Answer to [`SessionRequest::Analyse`].
    Findings {
        /// What the analysis found, in line order.
        findings: Vec<Finding>,
    },
    /// Answer to [`SessionRequest::Shape`].
    Shape {
        /// The digest (`None` when the code does not parse).
        shape: Option<String>,
    },
    /// Answer to [`SessionRequest::Variables`].
    Variables {
        /// One summary per user variable.
        variables: Vec<VariableSummary>,
    },
    /// Answer to [`SessionRequest::Snapshot`]: the copy exists and will
    /// send `Ready` on its own socket.
    Snapshotted,
    /// Answer to [`SessionRequest::Packages`].
    Packages {
        /// Importable distributions.
        packages: Vec<PackageInfo>,
    },
    /// The request failed inside the worker (not in user code).
    Error {
        /// One line saying what went wrong.
        message: String,
    },
}

/// The outcome of one cell, already truncated to the session's budgets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellResult {
    /// True when the cell ran to its end without an exception.
    pub ok: bool,
    /// Captured stdout (head and tail kept; see `stdout_dropped_chars`),
    /// ending with the displayed value when there is one.
    pub stdout: String,
    /// Characters of stdout dropped from the middle.
    pub stdout_dropped_chars: usize,
    /// Captured stderr (warnings), from its start.
    pub stderr: String,
    /// The exception, when the cell raised one.
    pub error: Option<PyError>,
    /// `repr` of the value of the cell's last expression, when it was an
    /// expression whose value is not `None` (also at the end of `stdout`,
    /// where the model reads it; apart here for notebooks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<String>,
    /// Variables the cell created or changed.
    pub variables: Vec<VariableSummary>,
    /// Figures saved on the cell's behalf (e.g. by an intercepted `plt.show()`).
    pub figures: Vec<String>,
    /// What each figure the cell saved with matplotlib shows (for the
    /// output checks).
    #[serde(default)]
    pub saved_figures: Vec<FigureFacts>,
    /// Wall time inside the worker, in microseconds.
    pub duration_us: u64,
    /// For a cell that raised: the source of its top-level statements that
    /// ran to their end before the raising one (their names and files are
    /// in the session, so the journal keeps them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_before_error: Option<String>,
}

/// What a figure saved with matplotlib shows: reported by the sandbox's
/// `savefig` hook, read by the output checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FigureFacts {
    /// The file written, as an absolute path inside the session's view.
    pub path: String,
    /// Axes in the figure (colorbars not counted).
    pub axes: usize,
    /// Axes that draw no data (no lines, collections, images, patches or text).
    pub empty_axes: usize,
    /// Whether the figure or one of its axes has a legend.
    pub legend: bool,
    /// Whether the figure has a colorbar.
    pub colorbar: bool,
}

impl CellResult {
    /// The result of a cell that produced nothing but the error `ename:
    /// evalue` (a worker that died or was killed, a result that could not
    /// be reported, code refused before it ran).
    pub fn failure(ename: &str, evalue: &str) -> CellResult {
        CellResult {
            ok: false,
            stdout: String::new(),
            stdout_dropped_chars: 0,
            stderr: String::new(),
            error: Some(PyError {
                ename: ename.to_string(),
                evalue: evalue.to_string(),
                traceback: format!("{ename}: {evalue}\n"),
            }),
            display: None,
            variables: Vec::new(),
            figures: Vec::new(),
            saved_figures: Vec::new(),
            duration_us: 0,
            ran_before_error: None,
        }
    }
}

/// An exception raised by a cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PyError {
    /// Exception class name, e.g. `KeyError`.
    pub ename: String,
    /// `str()` of the exception.
    pub evalue: String,
    /// The traceback with library-internal frames collapsed, ending with the
    /// exception line.
    pub traceback: String,
}

/// One finding of the static analysis of a cell (see the worker's
/// `gisclaw_analysis.py`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The cell's line (1-based; 0 when unknown).
    pub line: u32,
    /// `syntax`, `name`, `attribute`, `keyword`, `column`, `import` or `path`.
    pub kind: String,
    /// What is wrong, with the nearest real names.
    pub message: String,
    /// True when the cell cannot run as written; false for a likely
    /// problem on an object whose attributes are computed.
    pub certain: bool,
}

/// A one-line description of one variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariableSummary {
    /// The variable's name in the namespace.
    pub name: String,
    /// The type's short name, e.g. `GeoDataFrame`.
    pub kind: String,
    /// The summary line, e.g. `312 rows, EPSG:32617, columns: [...]`.
    pub summary: String,
    /// Whether the cell created it, changed it, or (for listings) neither.
    pub change: VariableChange,
}

/// How a variable relates to the cell just run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VariableChange {
    /// Created by the cell.
    New,
    /// Rebound or modified by the cell.
    Changed,
    /// Listed on request, not by a cell.
    Listed,
}

/// One importable distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageInfo {
    /// Distribution name, e.g. `geopandas`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// What the zygote's interpreter holds; also printed by `gisclaw-worker probe`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkerInfo {
    /// `sys.version`, first word (e.g. `3.11.7`).
    pub python_version: String,
    /// `sys.executable`.
    pub executable: String,
    /// `sys.prefix` (the venv).
    pub prefix: String,
    /// Modules pre-imported into every session.
    pub preloaded: Vec<String>,
    /// Stack modules that failed to import, with the error line.
    pub import_failures: Vec<ImportFailure>,
    /// Seconds spent importing the stack.
    pub import_seconds: f64,
    /// Importable distributions.
    pub packages: Vec<PackageInfo>,
    /// The GDAL versions the pre-imported libraries carry, by library
    /// (`rasterio`, `pyogrio`, `fiona`, `osgeo`).
    #[serde(default)]
    pub gdal: std::collections::BTreeMap<String, String>,
    /// Landlock ABI version the kernel offers, when any.
    pub landlock_abi: Option<i32>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Why sessions cannot have their own namespaces here (`None`: they can).
    #[serde(default)]
    pub namespace_error: Option<String>,
}

/// A module of the stack that did not import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportFailure {
    /// The module name.
    pub module: String,
    /// The error, one line.
    pub error: String,
}
