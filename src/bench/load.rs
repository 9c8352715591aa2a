//! A suite's tasks loaded and selected (`--tasks`), for every command that
//! runs a suite (`eval`, `bench verify`, `bench generate`, `bench coverage`).

use std::path::Path;

use super::labels::Labels;
use super::select::Selection;
use super::steps::{self, LoadedStepTask};
use super::suite_tasks;
use crate::task::{LoadedTask, Task, TaskError};

/// A suite that cannot be loaded as asked, said in one line naming the
/// folder, the file or the `--tasks` value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct SuiteError(pub String);

/// The selected tasks of `suite`, each read by `load` (a bad task file is
/// an error naming it); `id` and `labels` name a loaded task for `--tasks`.
pub fn select<T>(
    suite: &Path,
    tasks: Option<&str>,
    load: impl Fn(&Path) -> Result<T, TaskError>,
    id: impl Fn(&T) -> &str,
    labels: impl Fn(&T) -> Labels,
) -> Result<Vec<T>, SuiteError> {
    let selection =
        Selection::parse(tasks.unwrap_or("")).map_err(|e| SuiteError(format!("--tasks {e}")))?;
    let files = suite_tasks(suite).map_err(|e| SuiteError(format!("{}: {e}", suite.display())))?;
    let mut loaded = Vec::new();
    let mut ids = Vec::new();
    for file in files {
        let task = load(&file).map_err(|e| SuiteError(e.to_string()))?;
        if selection.matches_task(id(&task), &labels(&task)) {
            loaded.push(task);
        } else {
            ids.push(id(&task).to_string());
        }
    }
    if loaded.is_empty() {
        let have = match ids.as_slice() {
            [] => "it has no task.yaml".to_string(),
            [one] => format!("its task is {one}"),
            [first, .., last] => format!("its {} tasks are {first} … {last}", ids.len()),
        };
        return Err(SuiteError(format!(
            "{}: --tasks {} selects no task ({have})",
            suite.display(),
            tasks.unwrap_or("")
        )));
    }
    Ok(loaded)
}

/// The selected tasks of a suite as plain tasks; step tasks are loaded as
/// plain tasks too (for their data).
pub fn load_suite(suite: &Path, tasks: Option<&str>) -> Result<Vec<LoadedTask>, SuiteError> {
    let load = |file: &Path| {
        if steps::is_step_task(file) {
            LoadedStepTask::load(file).map(|t| t.as_loaded_task())
        } else {
            Task::load(file)
        }
    };
    select(
        suite,
        tasks,
        load,
        |t| &t.task.id,
        |t| {
            let gold = t
                .gold
                .as_ref()
                .and_then(|g| std::fs::read_to_string(g).ok());
            t.task.labels(gold.as_deref().unwrap_or_default())
        },
    )
}
