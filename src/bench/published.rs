//! GeoAnalystBench as published: under `--protocol gisclaw-paper` a task
//! that names its row of the vendored table (`published:` in `task.yaml`)
//! gives the model that row's instruction, domain knowledge and
//! human-designed workflow verbatim (trimmed, CRLF line breaks as LF), instead of the suite's enriched
//! wording (which adds the parameters our synthetic data need).
//!
//! What stays ours, because the published row cannot describe it: the
//! data listing and schema card (they describe *our* generated data, as
//! they were generated) and the list of required outputs (the scorer's
//! contract; 28 of the 50 published instructions name no output file).
//! Parameters the published text lacks (T07's −200 cm, T08's 2,500 m) go
//! nowhere: the paper expects the model to infer them (§4.2.2).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::bench::import::{read_table, Table, PINNED_SHA256};
pub use crate::protocol::Wording;
use crate::task::{LoadedTask, TaskError};

/// The published text of one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedText {
    /// The row's `Task` column (first line).
    pub title: String,
    /// The row's `Instruction`.
    pub instruction: String,
    /// The row's `Domain Knowledge` (`None` when empty).
    pub domain_knowledge: Option<String>,
    /// The row's `Human Designed Workflow` (`None` when empty).
    pub workflow: Option<String>,
}

/// The tables read so far, by path, so that a suite reads its table once.
#[derive(Debug, Default)]
pub struct Tables {
    read: HashMap<PathBuf, Table>,
}

impl Tables {
    /// The published text of `loaded`, when its task names a row; an error
    /// naming the task file and its `published` field when the table cannot
    /// be read, is not the pinned version, or lacks the row.
    pub fn text_of(&mut self, loaded: &LoadedTask) -> Result<Option<PublishedText>, TaskError> {
        let Some(published) = &loaded.task.published else {
            return Ok(None);
        };
        let error = |message: String| TaskError {
            file: loaded.path.clone(),
            line: None,
            field: Some("published".into()),
            message,
        };
        let base = loaded.path.parent().unwrap_or(Path::new("."));
        let path = base.join(&published.table);
        if !self.read.contains_key(&path) {
            let table = read_table(&path).map_err(|e| error(e.to_string()))?;
            if table.sha256 != PINNED_SHA256 {
                return Err(error(format!(
                    "{} is not the GeoAnalystBench table gisclaw pins (its SHA-256 is {}, the pinned one {PINNED_SHA256}): the published wording is that version's",
                    path.display(),
                    table.sha256
                )));
            }
            self.read.insert(path.clone(), table);
        }
        let row = self.read[&path].row(published.row).ok_or_else(|| {
            error(format!(
                "{} has no row with id {}",
                path.display(),
                published.row
            ))
        })?;
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        Ok(Some(PublishedText {
            title: row
                .get("Task")
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
            instruction: row.get("Instruction").to_string(),
            domain_knowledge: some(row.get("Domain Knowledge")),
            workflow: some(row.get("Human Designed Workflow")),
        }))
    }

    /// Gives each of `tasks` that names a row its published wording;
    /// returns how many did.
    pub fn apply(&mut self, tasks: &mut [LoadedTask]) -> Result<usize, TaskError> {
        let mut applied = 0;
        for loaded in tasks.iter_mut() {
            if let Some(text) = self.text_of(loaded)? {
                let task = &mut loaded.task;
                if !text.title.is_empty() {
                    task.title = text.title;
                }
                task.instruction = text.instruction;
                task.domain_knowledge = text.domain_knowledge;
                task.workflow = text.workflow;
                applied += 1;
            }
        }
        Ok(applied)
    }
}

/// Gives `tasks` the wording `wording` asks for: nothing changes for
/// [`Wording::Suite`]; returns how many tasks took the published text.
pub fn apply(wording: Wording, tasks: &mut [LoadedTask]) -> Result<usize, TaskError> {
    match wording {
        Wording::Suite => Ok(0),
        Wording::Published => Tables::default().apply(tasks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task_in(dir: &Path, table: &str, row: u32) -> LoadedTask {
        let text = format!(
            "id: T01\ntitle: ours\ninstruction: our enriched wording\ndomain_knowledge: our parameters\nworkflow: our steps\npublished:\n  table: {table}\n  row: {row}\n"
        );
        let path = dir.join("task.yaml");
        std::fs::write(&path, text).unwrap();
        crate::task::Task::load(&path).unwrap()
    }

    #[test]
    fn a_table_other_than_the_pinned_one_is_refused_naming_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let header = crate::bench::import::COLUMNS.join(",");
        std::fs::write(
            dir.path().join("t.csv"),
            format!("{header}\n1,T,c,,,Task,Do it,Know it,,1. Step,3,code\n"),
        )
        .unwrap();
        let mut tasks = vec![task_in(dir.path(), "t.csv", 1)];
        let err = apply(Wording::Published, &mut tasks)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("task.yaml") && err.contains("field `published`"),
            "{err}"
        );
        assert!(
            err.contains("not the GeoAnalystBench table gisclaw pins"),
            "{err}"
        );
        assert_eq!(tasks[0].task.instruction, "our enriched wording");
        assert_eq!(apply(Wording::Suite, &mut tasks).unwrap(), 0);
    }
}
