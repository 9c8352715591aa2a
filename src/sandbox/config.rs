//! Settings of the sandbox: where the worker and venv are, limits, budgets,
//! and the package constraint.

use std::path::PathBuf;
use std::time::Duration;

use gisclaw_protocol::{BlockedImport, OutputLimits};

use crate::paths;

/// Everything that decides how sessions are started and limited.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The Python environment (a venv made by `make setup`).
    pub venv: PathBuf,
    /// The `gisclaw-worker` executable.
    pub worker: PathBuf,
    /// Cache for the worker (matplotlib's font cache, …).
    pub cache_dir: PathBuf,
    /// Longest a single cell may run before it is interrupted (then killed).
    pub cell_timeout: Duration,
    /// Longest a whole session may spend running cells.
    pub task_budget: Duration,
    /// How long an interrupted cell gets to stop before its worker is killed.
    pub interrupt_grace: Duration,
    /// Longest the zygote may take to import the stack.
    pub startup_timeout: Duration,
    /// Address-space cap per session worker, in bytes.
    pub memory_limit_bytes: Option<u64>,
    /// Largest file a session may write, in bytes.
    pub file_size_limit_bytes: Option<u64>,
    /// Apply namespaces, Landlock and seccomp (rlimits always apply).
    pub confine: bool,
    /// Give each session its own user, mount, PID and IPC namespaces with a
    /// minimal filesystem view, where the kernel allows it (the other layers
    /// stay; `gisclaw doctor` says when the kernel refuses).
    pub namespaces: bool,
    /// Most processes and threads a session may run at once (RLIMIT_NPROC,
    /// in force inside a user namespace).
    pub process_limit: Option<u64>,
    /// Allow sockets other than AF_UNIX.
    pub allow_network: bool,
    /// Observation budgets.
    pub limits: OutputLimits,
    /// Modules refused at import, with their alternatives.
    pub blocked_imports: Vec<BlockedImport>,
}

/// The package constraint of the GISclaw paper (§2.2), enforced by the
/// worker's import hook and listed in the prompt.
pub fn default_blocked_imports() -> Vec<BlockedImport> {
    [
        ("arcpy", "geopandas, shapely and rasterio (ArcGIS is not installed)"),
        ("arcgis", "geopandas, shapely and rasterio (ArcGIS is not installed)"),
        ("pykrige", "scipy.interpolate (RBFInterpolator, griddata) or a variogram fitted with scipy.optimize"),
        ("skimage", "scipy.ndimage and rasterio.features"),
        ("osgeo", "rasterio for rasters and geopandas/pyogrio for vectors"),
    ]
    .into_iter()
    .map(|(module, alternative)| BlockedImport {
        module: module.into(),
        alternative: alternative.into(),
    })
    .collect()
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            venv: paths::default_venv(),
            worker: paths::default_worker(),
            cache_dir: paths::cache_dir(),
            cell_timeout: Duration::from_secs(120),
            task_budget: Duration::from_secs(20 * 60),
            interrupt_grace: Duration::from_secs(2),
            startup_timeout: Duration::from_secs(120),
            memory_limit_bytes: Some(8 << 30),
            file_size_limit_bytes: Some(4 << 30),
            confine: true,
            namespaces: true,
            process_limit: Some(512),
            allow_network: false,
            limits: OutputLimits::default(),
            blocked_imports: default_blocked_imports(),
        }
    }
}
