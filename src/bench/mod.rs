//! Benchmark suites (`benchmarks/…`): which tasks a suite holds and which of
//! them a command selects, their generated data, the proof that every gold
//! solution runs through the real agent loop, and the GeoAnalystBench
//! importer.

pub mod data;
pub mod import;
pub mod select;
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
