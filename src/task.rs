//! `task.yaml`: one GIS task for `gisclaw solve` and `gisclaw eval`.
//!
//! Parsing is strict: unknown fields and wrong types are errors that name the
//! file, the line and the field. `gisclaw schema task` prints the JSON Schema
//! derived from [`Task`].

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task as written in `task.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// Short identifier, e.g. `T01` or `flood-risk`.
    pub id: String,
    /// One-line title.
    pub title: String,
    /// What the analyst asks for, in plain language.
    pub instruction: String,
    /// The input data folder, relative to the task file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<PathBuf>,
    /// Expert knowledge for this task (thresholds, parameters, method notes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_knowledge: Option<String>,
    /// The expert workflow hint (ordered steps); left out with `--no-workflow`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// Files the task must produce, relative to the work dir and under
    /// `pred_results/` (e.g. `pred_results/flood_risk.png`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
    /// Category, e.g. `Understanding where` (GeoAnalystBench's categories).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A gold solution (Python), relative to the task file; cells are split
    /// at lines starting with `# %%`. Used by `bench verify` and eval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<PathBuf>,
    /// Python files, relative to the task file, run in order in one sandbox
    /// session to generate the task's data into `data/` (instead of `data`).
    /// The generated data live in gisclaw's cache, keyed by these files' content
    /// and the seed; see `gisclaw bench generate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generator: Vec<PathBuf>,
    /// The generator's random seed (`SEED` in its namespace).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed: u64,
    /// Provenance and deviations from the upstream task, for people (not
    /// shown to the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A task with its paths resolved against the task file's folder.
#[derive(Debug, Clone)]
pub struct LoadedTask {
    /// The parsed task.
    pub task: Task,
    /// The task file.
    pub path: PathBuf,
    /// The data folder, absolute, when the task has one.
    pub data_dir: Option<PathBuf>,
    /// The gold solution, absolute, when the task has one.
    pub gold: Option<PathBuf>,
    /// The data generator's files, in order (empty when the data are given).
    pub generator: Vec<PathBuf>,
}

/// A task file that cannot be used, located as precisely as possible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}: {}{message}", file.display(), line.map(|l| l.to_string()).unwrap_or_else(|| "-".into()), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
pub struct TaskError {
    /// The task file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field at fault, when known.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// The top-level key written on `line` (1-based), or the nearest one above it.
fn key_at_or_above(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let upto = line.min(lines.len());
    lines[..upto].iter().rev().find_map(|l| {
        if l.starts_with(|c: char| c.is_whitespace()) || l.starts_with('#') || l.starts_with('-') {
            return None;
        }
        let (key, _) = l.split_once(':')?;
        let key = key.trim();
        (!key.is_empty()).then(|| key.to_string())
    })
}

/// The 1-based line where top-level `field` is written.
fn line_of_key(text: &str, field: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.split_once(':').is_some_and(|(k, _)| k == field))
        .map(|i| i + 1)
}

/// The text between the first pair of backticks, e.g. a field in serde's message.
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// Parses strict YAML into `T`; errors name `file`, the line and the field
/// (a path such as `cases[3].output` for nested fields).
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, file: &Path) -> Result<T, TaskError> {
    serde_yaml::from_str::<T>(text).map_err(|err| {
        let line = err.location().map(|l| l.line());
        let raw = err.to_string();
        let message = raw.split(" at line ").next().unwrap_or(&raw).to_string();
        let path = message
            .split_once(": ")
            .map(|(prefix, _)| prefix)
            .filter(|p| !p.is_empty() && !p.contains(' '))
            .map(str::to_string);
        let rest = path
            .as_ref()
            .map_or(message.as_str(), |p| &message[p.len() + 2..]);
        let field = if rest.starts_with("unknown field") || rest.starts_with("missing field") {
            let name = backticked(rest);
            match (&path, name) {
                (Some(p), Some(n)) => Some(format!("{p}.{n}")),
                (_, n) => n,
            }
        } else {
            path.clone()
                .or_else(|| line.and_then(|l| key_at_or_above(text, l)))
        };
        let message = rest.to_string();
        TaskError {
            file: file.to_path_buf(),
            line,
            field,
            message,
        }
    })
}

impl Task {
    /// Parses task YAML; `file` is only used in error messages.
    pub fn parse(text: &str, file: &Path) -> Result<Task, TaskError> {
        parse_yaml(text, file)
    }

    /// Reads, parses and checks a task file, resolving its paths.
    pub fn load(path: &Path) -> Result<LoadedTask, TaskError> {
        let error = |line, field: Option<&str>, message: String| TaskError {
            file: path.to_path_buf(),
            line,
            field: field.map(str::to_string),
            message,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| error(None, None, format!("cannot read: {e}")))?;
        let task = Task::parse(&text, path)?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let base = if base.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            base
        };
        let at = |field: &str| line_of_key(&text, field);
        for (i, output) in task.outputs.iter().enumerate() {
            let p = Path::new(output);
            let inside = p.starts_with("pred_results")
                && p.components().all(|c| matches!(c, Component::Normal(_)))
                && p.components().count() > 1;
            if !inside {
                return Err(error(
                    at("outputs").map(|l| l + 1 + i),
                    Some("outputs"),
                    format!("`{output}` must be a relative path under pred_results/, e.g. pred_results/map.png"),
                ));
            }
        }
        if task.id.trim().is_empty() {
            return Err(error(at("id"), Some("id"), "must not be empty".into()));
        }
        let data_dir = match &task.data {
            Some(d) => {
                let dir = base.join(d);
                if !dir.is_dir() {
                    return Err(error(
                        at("data"),
                        Some("data"),
                        format!("no folder at {}", dir.display()),
                    ));
                }
                Some(
                    dir.canonicalize()
                        .map_err(|e| error(at("data"), Some("data"), e.to_string()))?,
                )
            }
            None => None,
        };
        let gold = match &task.gold {
            Some(g) => {
                let file = base.join(g);
                if !file.is_file() {
                    return Err(error(
                        at("gold"),
                        Some("gold"),
                        format!("no file at {}", file.display()),
                    ));
                }
                Some(file)
            }
            None => None,
        };
        if task.data.is_some() && !task.generator.is_empty() {
            return Err(error(
                at("generator"),
                Some("generator"),
                "a task has either `data` (a folder) or `generator` (scripts that make its data), not both".into(),
            ));
        }
        let mut generator = Vec::new();
        for (i, script) in task.generator.iter().enumerate() {
            let file = base.join(script);
            if !file.is_file() {
                return Err(error(
                    at("generator").map(|l| l + 1 + i),
                    Some("generator"),
                    format!("no file at {}", file.display()),
                ));
            }
            generator.push(file);
        }
        Ok(LoadedTask {
            task,
            path: path.to_path_buf(),
            data_dir,
            gold,
            generator,
        })
    }

    /// The JSON Schema of `task.yaml`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(Task)).expect("a schema serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "id: T01\ntitle: Flood risk\ninstruction: Map the flood risk.\noutputs:\n  - pred_results/risk.png\n";

    fn err(text: &str) -> TaskError {
        Task::parse(text, Path::new("tasks/t.yaml")).unwrap_err()
    }

    #[test]
    fn a_minimal_task_parses() {
        let task = Task::parse(GOOD, Path::new("t.yaml")).unwrap();
        assert_eq!(task.id, "T01");
        assert_eq!(task.outputs, vec!["pred_results/risk.png"]);
        assert!(task.workflow.is_none());
    }

    #[test]
    fn an_unknown_field_is_named_with_its_line() {
        let e = err(&format!("{GOOD}instructions: typo\n"));
        assert_eq!(e.field.as_deref(), Some("instructions"));
        assert_eq!(e.line, Some(6));
        let text = e.to_string();
        assert!(
            text.starts_with("tasks/t.yaml:6: field `instructions`: unknown field"),
            "{text}"
        );
    }

    #[test]
    fn a_wrong_type_names_the_field_and_line() {
        let e = err("id: T01\ntitle: x\ninstruction: y\noutputs: 3\n");
        assert_eq!(e.field.as_deref(), Some("outputs"), "{e}");
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("invalid type"), "{e}");
    }

    #[test]
    fn a_missing_field_is_named() {
        let e = err("id: T01\ntitle: x\n");
        assert_eq!(e.field.as_deref(), Some("instruction"), "{e}");
    }

    #[test]
    fn outputs_outside_pred_results_and_missing_data_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(&path, "id: T\ntitle: t\ninstruction: i\noutputs:\n  - pred_results/a.png\n  - ../escape.png\n").unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("outputs"), Some(6)),
            "{e}"
        );
        std::fs::write(&path, "id: T\ntitle: t\ninstruction: i\ndata: nowhere\n").unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!((e.field.as_deref(), e.line), (Some("data"), Some(4)), "{e}");
        std::fs::create_dir(dir.path().join("data")).unwrap();
        std::fs::write(&path, "id: T\ntitle: t\ninstruction: i\ndata: data\n").unwrap();
        let loaded = Task::load(&path).unwrap();
        assert_eq!(
            loaded.data_dir.unwrap(),
            dir.path().join("data").canonicalize().unwrap()
        );
    }

    #[test]
    fn the_schema_lists_every_field_and_forbids_others() {
        let schema = Task::json_schema();
        let props = schema["properties"].as_object().unwrap();
        for field in [
            "id",
            "title",
            "instruction",
            "data",
            "domain_knowledge",
            "workflow",
            "outputs",
            "category",
            "gold",
            "generator",
            "seed",
            "notes",
        ] {
            assert!(props.contains_key(field), "{field}");
        }
        assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    }
}
