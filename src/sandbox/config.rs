//! Settings of the sandbox: where the worker and venv are, limits, budgets,
//! and the package constraint.

use std::path::PathBuf;
use std::time::Duration;

use gisclaw_protocol::{BlockedImport, ConfinementReport, LayerStatus, OutputLimits};

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
    /// Layers a session must have in force; one that is missing refuses
    /// the session instead of running it less confined.
    pub require: Vec<Layer>,
    /// Fork sessions from the per-user sandbox service (a zygote that
    /// outlives this process, see `sandbox::service`) rather than from a
    /// zygote of this process' own. `None` (the library's default): own.
    pub service: Option<ServiceSettings>,
}

impl SandboxConfig {
    /// This config with the venv, worker and cache as real paths, resolved
    /// once: the sandbox sees folders by the paths they are bound at, and
    /// a venv reached through a symlink (`GISCLAW_VENV` naming a link, a
    /// home folder that is a link) would give Python a `sys.path` that does
    /// not exist inside it. The cache is created first; a path that cannot
    /// be resolved is kept as given (the start then says what is missing).
    pub fn resolved(mut self) -> SandboxConfig {
        let _ = std::fs::create_dir_all(&self.cache_dir);
        for path in [&mut self.venv, &mut self.worker, &mut self.cache_dir] {
            if let Ok(real) = path.canonicalize() {
                *path = real;
            }
        }
        self
    }
}

/// A confinement layer that can be required (`[sandbox] require` in the
/// config file, `--require-confinement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// User, mount, PID and IPC namespaces with the minimal view.
    Namespaces,
    /// Every capability dropped.
    Capabilities,
    /// Landlock's filesystem (and network) rules.
    Landlock,
    /// The seccomp system-call filter.
    Seccomp,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// Address-space, file-size and process-count limits.
    Rlimits,
}

/// A name in `require` that is not a confinement layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown confinement layer `{0}` (known: all, {known})", known = Layer::ALL.map(Layer::name).join(", "))]
pub struct UnknownLayer(pub String);

impl Layer {
    /// Every layer, in the order `gisclaw doctor` lists them.
    pub const ALL: [Layer; 6] = [
        Layer::Namespaces,
        Layer::Capabilities,
        Layer::Landlock,
        Layer::Seccomp,
        Layer::NoNewPrivs,
        Layer::Rlimits,
    ];

    /// The layer's name in `require`.
    pub fn name(self) -> &'static str {
        match self {
            Layer::Namespaces => "namespaces",
            Layer::Capabilities => "capabilities",
            Layer::Landlock => "landlock",
            Layer::Seccomp => "seccomp",
            Layer::NoNewPrivs => "no-new-privs",
            Layer::Rlimits => "rlimits",
        }
    }

    /// Reads names (`all` for every layer) into layers, without repeats.
    pub fn parse_list<S: AsRef<str>>(names: &[S]) -> Result<Vec<Layer>, UnknownLayer> {
        let mut layers = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            let found: Vec<Layer> = if name == "all" {
                Layer::ALL.to_vec()
            } else {
                let layer = Layer::ALL
                    .into_iter()
                    .find(|l| l.name() == name)
                    .ok_or_else(|| UnknownLayer(name.to_string()))?;
                vec![layer]
            };
            for layer in found {
                if !layers.contains(&layer) {
                    layers.push(layer);
                }
            }
        }
        Ok(layers)
    }

    /// How the layer ended up in a session, by the worker's report.
    pub fn status(self, report: &ConfinementReport) -> &LayerStatus {
        match self {
            Layer::Namespaces => &report.namespaces,
            Layer::Capabilities => &report.capabilities,
            Layer::Landlock => &report.filesystem,
            Layer::Seccomp => &report.network,
            Layer::NoNewPrivs => &report.no_new_privs,
            Layer::Rlimits => &report.rlimits,
        }
    }

    /// The first of `required` that `report` does not show fully in force,
    /// with the reason.
    pub fn first_missing(
        required: &[Layer],
        report: &ConfinementReport,
    ) -> Option<(Layer, String)> {
        required
            .iter()
            .find_map(|&layer| match layer.status(report) {
                LayerStatus::Enforced(_) => None,
                LayerStatus::Partial(why) => Some((layer, format!("only in part: {why}"))),
                LayerStatus::Unsupported(why) => Some((layer, why.clone())),
                LayerStatus::Disabled => Some((layer, "turned off for this session".into())),
            })
    }
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

/// Settings of the shared zygote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSettings {
    /// How long it stays without clients before it exits.
    pub idle: Duration,
    /// The folder of its socket (`None`: `sandbox::service::runtime_dir`'s choice); it
    /// must be the user's own with mode 0700.
    pub dir: Option<PathBuf>,
}

impl Default for ServiceSettings {
    fn default() -> Self {
        ServiceSettings {
            idle: Duration::from_secs(10 * 60),
            dir: None,
        }
    }
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
            require: Vec::new(),
            service: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(landlock: LayerStatus) -> ConfinementReport {
        let on = || LayerStatus::Enforced("on".into());
        ConfinementReport {
            namespaces: LayerStatus::Unsupported("user namespaces are off".into()),
            capabilities: on(),
            filesystem: landlock,
            network: on(),
            no_new_privs: on(),
            rlimits: on(),
        }
    }

    #[test]
    fn layer_lists_expand_all_drop_repeats_and_name_unknown_layers() {
        assert_eq!(
            Layer::parse_list(&["all", "seccomp"]).unwrap(),
            Layer::ALL.to_vec()
        );
        assert_eq!(
            Layer::parse_list(&["seccomp", " landlock", "seccomp"]).unwrap(),
            vec![Layer::Seccomp, Layer::Landlock]
        );
        let e = Layer::parse_list(&["landlok"]).unwrap_err().to_string();
        assert!(e.contains("`landlok`") && e.contains("no-new-privs"), "{e}");
    }

    #[test]
    fn only_layers_fully_in_force_satisfy_a_requirement() {
        let full = report(LayerStatus::Enforced("abi 6".into()));
        assert_eq!(
            Layer::first_missing(&[Layer::Landlock, Layer::Seccomp], &full),
            None
        );
        let (layer, why) = Layer::first_missing(&Layer::ALL, &full).unwrap();
        assert_eq!(
            (layer, why.as_str()),
            (Layer::Namespaces, "user namespaces are off")
        );
        let partial = report(LayerStatus::Partial("abi 1: no truncate".into()));
        let (layer, why) = Layer::first_missing(&[Layer::Landlock], &partial).unwrap();
        assert_eq!(layer, Layer::Landlock);
        assert!(why.starts_with("only in part"), "{why}");
        let off = report(LayerStatus::Disabled);
        assert!(Layer::first_missing(&[Layer::Landlock], &off).is_some());
    }
}
