//! Benchmark suites (`benchmarks/…`): which tasks a suite holds and which of
//! them a command selects, their generated data, the proof that every gold
//! solution runs through the real agent loop, the GeoAnalystBench importer,
//! multi-step tasks with per-step checks (`steps`), function-level cases
//! (`unit`), function-level JavaScript tasks (`geojs`, judged by
//! `js_judge`), the answers both record (`answers`) and the typed judges that
//! compare them (`judge`).

pub mod answers;
pub mod coverage;
pub mod data;
pub mod geojs;
pub mod import;
pub mod js_judge;
pub mod judge;
pub mod load;
pub mod published;
pub use crate::labels;
pub mod select;
pub mod solutions;
pub mod steps;
pub mod unit;
pub mod verify;

use std::path::{Path, PathBuf};

/// The task files of a suite: `DIR/*/task.yaml`, sorted by folder name; or
/// `DIR` itself when it is a task file.
pub fn suite_tasks(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    if dir.is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path().join("task.yaml"))
        .filter(|p| p.is_file())
        .collect();
    tasks.sort();
    Ok(tasks)
}

/// What kind of suite a folder holds (as `eval.json`'s `kind` writes it:
/// `tasks`, `steps`, `unit`, `geojs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SuiteKind {
    /// `*/task.yaml` tasks judged by their outputs (geoanalyst).
    #[default]
    Tasks,
    /// `*/task.yaml` multi-step tasks with per-step checks (geocode).
    Steps,
    /// `cases/*.yaml` function-level cases (unit).
    Unit,
    /// `cases/*.yaml` function-level JavaScript tasks (GeoJSEval).
    Geojs,
}

impl SuiteKind {
    /// Its name in `eval.json` and messages.
    pub fn name(self) -> &'static str {
        match self {
            SuiteKind::Tasks => "tasks",
            SuiteKind::Steps => "steps",
            SuiteKind::Unit => "unit",
            SuiteKind::Geojs => "geojs",
        }
    }

    /// Whether its items are functions judged by their answers (a unit or
    /// GeoJSEval suite).
    pub fn function_level(self) -> bool {
        matches!(self, SuiteKind::Unit | SuiteKind::Geojs)
    }

    /// The kind of the suite at `dir` (a task file counts as its suite).
    pub fn of(dir: &Path) -> SuiteKind {
        if geojs::is_geojs_suite(dir) {
            return SuiteKind::Geojs;
        }
        if unit::is_unit_suite(dir) {
            return SuiteKind::Unit;
        }
        match suite_tasks(dir) {
            Ok(tasks) if tasks.iter().any(|t| steps::is_step_task(t)) => SuiteKind::Steps,
            _ => SuiteKind::Tasks,
        }
    }
}
