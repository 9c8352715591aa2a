//! A suite's solutions corpus (`--solutions`, GeoAgent's third retrieval
//! corpus): each task's text and gold solution, from the suite's own files.

use crate::bench::steps::LoadedStepTask;
use crate::knowledge::solutions::{Solution, Solutions};
use crate::task::LoadedTask;

/// The solutions of a task suite: each task's instruction and `gold.py`
/// (tasks without a gold are left out); `Err` names an unreadable gold.
pub fn of_tasks(tasks: &[LoadedTask]) -> Result<Solutions, String> {
    let mut items = Vec::new();
    for t in tasks {
        let Some(gold) = &t.gold else { continue };
        let code = std::fs::read_to_string(gold)
            .map_err(|e| format!("{}: the gold solution: {e}", gold.display()))?;
        items.push(Solution {
            task: t.task.id.clone(),
            title: t.task.title.clone(),
            text: t.task.instruction.clone(),
            code,
        });
    }
    Solutions::new(items)
}

/// The solutions of a step suite: each task's context and numbered steps,
/// and its gold cells in order.
pub fn of_steps(tasks: &[LoadedStepTask]) -> Result<Solutions, String> {
    let items = tasks
        .iter()
        .map(|t| {
            let steps: Vec<String> = t
                .task
                .steps
                .iter()
                .enumerate()
                .map(|(i, s)| format!("{}. {}", i + 1, s.prompt.trim()))
                .collect();
            Solution {
                task: t.task.id.clone(),
                title: t.task.title.clone(),
                text: format!("{}\n\n{}", t.task.context.trim(), steps.join("\n")),
                code: t.gold_cells.join("\n\n# %%\n"),
            }
        })
        .collect();
    Solutions::new(items)
}
