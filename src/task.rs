//! `task.yaml`: one GIS task for `gisclaw solve` and `gisclaw eval`.
//!
//! Parsing is strict: unknown fields and wrong types are errors that name the
//! file, the line and the field. `gisclaw schema task` prints the JSON Schema
//! derived from [`Task`].

use std::path::{Component, Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::labels::{DataType, Difficulty, Labels, Operation};

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
    /// The library the task mainly exercises (a label the eval's reports
    /// break down by; `library`, `data_type` and `operation` go together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// What the task mainly works on (a label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataType>,
    /// The task's main operation (a label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<Operation>,
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
    /// `false` for a task the data cannot answer: the right answer is a
    /// `decline` with the reason, and inventing outputs scores nothing
    /// (GeoBenchX's unsolvable tasks).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub solvable: bool,
    /// Why the task cannot be done (required with `solvable: false`): what
    /// a correct decline says, and what the gold's scripted decline says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsolvable_reason: Option<String>,
    /// What kind of unsolvable task it is (`absent_data`, `unknown_crs`,
    /// `time_span`, `contradiction`), for the report's breakdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsolvable_class: Option<UnsolvableClass>,
    /// Where the task's published wording is: `--protocol gisclaw-paper`
    /// gives the model that row's instruction, domain knowledge and
    /// workflow verbatim instead of this file's
    /// ([`crate::bench::published`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<Published>,
}

/// A row of a published benchmark table (GeoAnalystBench's CSV).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The table, relative to the task file.
    pub table: PathBuf,
    /// The row's task number (the table's `id` column).
    pub row: u32,
}

/// Why a task cannot be done, in kind.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UnsolvableClass {
    /// A layer, file, column or attribute the task needs is absent.
    AbsentData,
    /// The data's coordinate reference system cannot be known.
    UnknownCrs,
    /// The data do not cover the time span the task asks about.
    TimeSpan,
    /// The request contradicts itself.
    Contradiction,
}

impl UnsolvableClass {
    /// The name used in task files and reports.
    pub fn name(self) -> &'static str {
        match self {
            UnsolvableClass::AbsentData => "absent_data",
            UnsolvableClass::UnknownCrs => "unknown_crs",
            UnsolvableClass::TimeSpan => "time_span",
            UnsolvableClass::Contradiction => "contradiction",
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
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
#[error("{}{}: {}{message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default(), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
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

/// The key written on `line` (1-based) itself, indented or not.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?.trim_start();
    let (key, _) = l.split_once(':')?;
    let is_name = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    is_name.then(|| key.to_string())
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

/// The 1-based lines where top-level `field` is written, in order.
fn lines_of_key<'t>(text: &'t str, field: &'t str) -> impl Iterator<Item = usize> + 't {
    text.lines()
        .enumerate()
        .filter(move |(_, l)| l.split_once(':').is_some_and(|(k, _)| k == field))
        .map(|(i, _)| i + 1)
}

/// The 1-based line where top-level `field` is first written.
pub fn line_of_key(text: &str, field: &str) -> Option<usize> {
    lines_of_key(text, field).next()
}

/// The text between the first pair of backticks, e.g. a field in serde's message.
fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

/// Reads a YAML file as text. Bytes that are not UTF-8 are an error naming
/// their line.
pub fn read_yaml_text(path: &Path) -> Result<String, TaskError> {
    let error = |line, message: String| TaskError {
        file: path.to_path_buf(),
        line,
        field: None,
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| error(None, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        error(
            Some(line),
            "is not UTF-8 text (save the file as UTF-8)".into(),
        )
    })
}

/// A YAML syntax error as libyaml reports it: what is wrong and where, and
/// the construct being read when it went wrong, with where that began.
#[derive(Debug, PartialEq)]
struct SyntaxError {
    problem: String,
    line: usize,
    column: usize,
    context: Option<String>,
    context_at: Option<(usize, usize)>,
}

/// `"… at line L column C"` split into the text before and the position.
fn split_position(text: &str) -> Option<(&str, usize, usize)> {
    let (before, at) = text.rsplit_once(" at line ")?;
    let (line, column) = at.split_once(" column ")?;
    Some((before, line.parse().ok()?, column.trim().parse().ok()?))
}

/// Reads serde_yaml's rendering of a scanner or parser error:
/// `PROBLEM at line L column C[, while CONTEXT[ at line L2 column C2]]`.
fn syntax_error(raw: &str) -> Option<SyntaxError> {
    let (head, context) = match raw.split_once(", while ") {
        Some((head, context)) => (head, Some(context)),
        None => (raw, None),
    };
    let (problem, line, column) = split_position(head)?;
    let (context, context_at) = match context {
        Some(c) => match split_position(c) {
            Some((text, l, col)) => (Some(format!("while {text}")), Some((l, col))),
            None => (Some(format!("while {c}")), None),
        },
        None => (None, None),
    };
    Some(SyntaxError {
        problem: problem.to_string(),
        line,
        column,
        context,
        context_at,
    })
}

/// The line to blame for a syntax error, and the message to show: a value
/// or bracket left open is blamed where it was opened, not where the file
/// ran out.
fn explain_syntax(e: &SyntaxError) -> (usize, String) {
    let context = e.context.as_deref().unwrap_or("");
    let opened = |what: &str| match e.context_at {
        Some((line, column)) => (
            line,
            format!(
                "{what} opened at column {column} is never closed ({} at line {} column {})",
                e.problem, e.line, e.column
            ),
        ),
        None => (e.line, format!("{} at column {}", e.problem, e.column)),
    };
    if context.starts_with("while scanning a quoted scalar") {
        return opened("the quoted value");
    }
    if context.starts_with("while parsing a flow") {
        return opened("the `[` or `{`");
    }
    if context.starts_with("while scanning a simple key") {
        if let Some((line, _)) = e.context_at {
            return (
                line,
                format!(
                    "this line is not `key: value` and does not continue the value above ({} at line {})",
                    e.problem, e.line
                ),
            );
        }
    }
    let hint = if e.problem.starts_with("mapping values are not allowed") {
        ": put a value that contains `: ` in quotes, or check the indentation"
    } else if e.problem.contains("tab character") {
        ": YAML indents with spaces, not tabs"
    } else {
        ""
    };
    (
        e.line,
        format!("{} at column {}{hint}", e.problem, e.column),
    )
}

/// Messages serde itself writes about the data (as opposed to YAML syntax).
const DATA_ERRORS: &[&str] = &[
    "invalid type",
    "invalid value",
    "invalid length",
    "unknown field",
    "missing field",
    "duplicate field",
    "unknown variant",
];

/// Parses strict YAML into `T`; errors name `file`, the line and the field
/// (a path such as `cases[3].output` for nested fields).
pub fn parse_yaml<T: serde::de::DeserializeOwned>(text: &str, file: &Path) -> Result<T, TaskError> {
    let has_content = text.lines().any(|l| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#') && l != "---"
    });
    if !has_content {
        return Err(TaskError {
            file: file.to_path_buf(),
            line: None,
            field: None,
            message: "the file is empty (write one `field: value` per line)".into(),
        });
    }
    serde_yaml::from_str::<T>(text).map_err(|err| {
        let raw = err.to_string();
        let error = |line, field, message| TaskError {
            file: file.to_path_buf(),
            line,
            field,
            message,
        };
        let message = raw.split(" at line ").next().unwrap_or(&raw).to_string();
        let path = message
            .split_once(": ")
            .map(|(prefix, _)| prefix)
            .filter(|p| !p.is_empty() && !p.contains(' '))
            .map(str::to_string);
        let rest = path
            .as_ref()
            .map_or(message.as_str(), |p| &message[p.len() + 2..]);
        let is_data = path.is_some() || DATA_ERRORS.iter().any(|d| rest.starts_with(d));
        if !is_data {
            if let Some(syntax) = syntax_error(&raw) {
                let (line, message) = explain_syntax(&syntax);
                let field = key_on_line(text, line).or_else(|| key_at_or_above(text, line));
                return error(Some(line), field, message);
            }
        }
        let line = err.location().map(|l| l.line());
        let named = backticked(rest);
        if path.is_none() && rest.starts_with("duplicate field") {
            let line = named
                .as_deref()
                .and_then(|n| lines_of_key(text, n).nth(1))
                .or(line);
            return error(line, named, rest.to_string());
        }
        if path.is_none() && rest.starts_with("missing field") {
            // The whole file lacks it: no line is at fault.
            return error(None, named, rest.to_string());
        }
        if path.is_none() && rest.starts_with("invalid type") && rest.contains("expected struct") {
            let found = rest.split(',').next().unwrap_or(rest);
            return error(
                line,
                None,
                format!("{found}, expected `field: value` lines at the top level"),
            );
        }
        let field = if rest.starts_with("unknown field") || rest.starts_with("missing field") {
            match (&path, named) {
                (Some(p), Some(n)) => Some(format!("{p}.{n}")),
                (_, n) => n,
            }
        } else {
            path.clone()
                .or_else(|| line.and_then(|l| key_at_or_above(text, l)))
        };
        error(line, field, rest.to_string())
    })
}

/// The required top-level fields of a task (its JSON Schema's) that `text`
/// lacks, in the schema's order.
fn missing_required(text: &str) -> Vec<String> {
    let present: Vec<String> = serde_yaml::from_str::<serde_yaml::Mapping>(text)
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Task::json_schema()["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str())
        .filter(|f| !present.iter().any(|p| p == f))
        .map(str::to_string)
        .collect()
}

/// Why `id` cannot name a task (or a case, or a library of a suite): a
/// suite's content is data, and eval, bench and the data cache make folder
/// and file names of it, so an id is one plain path segment of letters,
/// digits, `-`, `_` and `.`, and not `.` or `..`.
pub fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("must not be empty".into());
    }
    if id == "." || id == ".." {
        return Err(format!("`{id}` is not a name"));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "`{}` has {}: an id is letters, digits, `-`, `_` and `.` (it names folders and files)",
            crate::terminal::clean(id),
            match c {
                '/' => "a `/`".to_string(),
                c if c.is_whitespace() => "a space".to_string(),
                c => format!("`{}`", crate::terminal::clean(&c.to_string())),
            }
        ));
    }
    if id.len() > 100 {
        return Err("is longer than 100 characters".into());
    }
    Ok(())
}

impl Task {
    /// Parses task YAML; `file` is only used in error messages.
    pub fn parse(text: &str, file: &Path) -> Result<Task, TaskError> {
        parse_yaml(text, file).map_err(|err| {
            match err.line.is_none() && err.message.starts_with("missing field") {
                // serde stops at the first missing field: name them all, so a
                // new task file is fixed in one go.
                true => match missing_required(text) {
                    missing if missing.len() > 1 => TaskError {
                        field: Some(missing.join(", ")),
                        message: format!(
                            "missing fields {}",
                            missing
                                .iter()
                                .map(|f| format!("`{f}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        ..err
                    },
                    _ => err,
                },
                false => err,
            }
        })
    }

    /// Reads, parses and checks a task file, resolving its paths.
    pub fn load(path: &Path) -> Result<LoadedTask, TaskError> {
        let error = |line, field: Option<&str>, message: String| TaskError {
            file: path.to_path_buf(),
            line,
            field: field.map(str::to_string),
            message,
        };
        let text = read_yaml_text(path)?;
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
        if let Err(why) = check_id(&task.id) {
            return Err(error(at("id"), Some("id"), why));
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
        let labelled = [
            ("library", task.library.is_some()),
            ("data_type", task.data_type.is_some()),
            ("operation", task.operation.is_some()),
        ];
        if labelled.iter().any(|(_, set)| *set) {
            if let Some((field, _)) = labelled.iter().find(|(_, set)| !set) {
                let given = labelled.iter().find(|(_, set)| *set).map_or("", |(f, _)| f);
                return Err(error(
                    at(given),
                    Some(field),
                    format!("a labelled task names `library`, `data_type` and `operation` together; `{field}` is missing"),
                ));
            }
        }
        match (task.solvable, &task.unsolvable_reason) {
            (false, None) => {
                return Err(error(
                    at("solvable"),
                    Some("unsolvable_reason"),
                    "a task with `solvable: false` says why in `unsolvable_reason` (what a correct decline says)".into(),
                ))
            }
            (true, Some(_)) => {
                return Err(error(
                    at("unsolvable_reason"),
                    Some("unsolvable_reason"),
                    "`unsolvable_reason` belongs to a task with `solvable: false`".into(),
                ))
            }
            _ => {}
        }
        if task.solvable && task.unsolvable_class.is_some() {
            return Err(error(
                at("unsolvable_class"),
                Some("unsolvable_class"),
                "`unsolvable_class` belongs to a task with `solvable: false`".into(),
            ));
        }
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

    /// The task's four labels (empty when it has none); the difficulty is
    /// its workflow's numbered steps or, without them, the cells of `gold`
    /// (its code, cells split at `# %%`).
    pub fn labels(&self, gold: &str) -> Labels {
        let (Some(library), Some(data_type), Some(operation)) =
            (&self.library, self.data_type, self.operation)
        else {
            return Labels::default();
        };
        let numbered = |l: &&str| {
            let t = l.trim_start();
            let digits = t.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && t[digits..].starts_with(['.', ')'])
        };
        let steps = match self
            .workflow
            .as_deref()
            .map(|w| w.lines().filter(numbered).count())
        {
            Some(n) if n > 0 => n,
            _ => gold
                .lines()
                .filter(|l| l.starts_with("# %%"))
                .count()
                .max(usize::from(!gold.trim().is_empty())),
        };
        Labels::new(library, data_type, operation, Difficulty::of_steps(steps))
    }

    /// The JSON Schema of `task.yaml`.
    pub fn json_schema() -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(Task)).unwrap_or_default()
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
    fn every_missing_field_is_named_at_once() {
        let e = err("title: x\n");
        let required: Vec<String> = Task::json_schema()["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .filter(|f| f != "title")
            .collect();
        assert!(required.len() > 1, "{required:?}");
        assert_eq!(e.field, Some(required.join(", ")), "{e}");
        assert!(e.message.starts_with("missing fields `"), "{e}");
        assert_eq!(e.line, None);
    }

    /// (line, field) of the error `text` gets, and its message.
    fn located(text: &str) -> (Option<usize>, Option<String>, String) {
        let e = err(text);
        (e.line, e.field, e.message)
    }

    #[test]
    fn an_unclosed_quote_is_blamed_where_it_opens() {
        let (line, field, message) =
            located("id: T1\ntitle: x\ninstruction: \"do it\noutputs:\n  - pred_results/a.png\n");
        assert_eq!(
            (line, field.as_deref()),
            (Some(3), Some("instruction")),
            "{message}"
        );
        assert!(message.contains("never closed"), "{message}");
        let (line, field, _) =
            located("id: T1\ntitle: x\ninstruction: do\noutputs:\n  - \"a\n  - b\nseed: 3\n");
        assert_eq!((line, field.as_deref()), (Some(5), Some("outputs")));
    }

    #[test]
    fn an_unclosed_bracket_is_blamed_where_it_opens() {
        let (line, field, message) =
            located("id: T1\ntitle: x\ninstruction: do\noutputs: [a\nseed: 1\n");
        assert_eq!(
            (line, field.as_deref()),
            (Some(4), Some("outputs")),
            "{message}"
        );
    }

    #[test]
    fn a_syntax_error_names_the_key_on_its_own_line() {
        // A tab before a key: the key on that line, not the one above.
        let (line, field, message) = located("id: T1\ntitle: x\n\tinstruction: do it\n");
        assert_eq!(
            (line, field.as_deref()),
            (Some(3), Some("instruction")),
            "{message}"
        );
        assert!(message.contains("tabs"), "{message}");
        // An unquoted `: ` inside a value.
        let (line, field, message) = located("id: T1\ntitle: x\ninstruction: do it: now\n");
        assert_eq!(
            (line, field.as_deref()),
            (Some(3), Some("instruction")),
            "{message}"
        );
        assert!(message.contains("quotes"), "{message}");
        // A key indented under the value above.
        let (line, field, _) = located("id: T1\ntitle: x\ninstruction: do\n outputs: [a]\n");
        assert_eq!((line, field.as_deref()), (Some(4), Some("outputs")));
        // A line that is not `key: value`.
        let (line, _, message) = located("id: T1\ntitle: x\njust text\ninstruction: do\n");
        assert_eq!(line, Some(3), "{message}");
    }

    #[test]
    fn a_duplicate_key_is_blamed_on_its_second_line() {
        let (line, field, message) = located("id: T1\ntitle: x\ninstruction: do\nid: T2\n");
        assert_eq!((line, field.as_deref()), (Some(4), Some("id")), "{message}");
    }

    #[test]
    fn an_empty_file_a_missing_field_and_a_list_say_so_without_a_wrong_line() {
        let e = err("# only a comment\n\n");
        assert_eq!((e.line, e.message.contains("empty")), (None, true), "{e}");
        assert_eq!(
            e.to_string(),
            "tasks/t.yaml: the file is empty (write one `field: value` per line)"
        );
        let e = err("id: T1\ntitle: x\n");
        assert_eq!(
            (e.line, e.field.as_deref()),
            (None, Some("instruction")),
            "{e}"
        );
        let e = err("- a\n");
        assert!(e.message.contains("`field: value` lines"), "{e}");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(&path, b"id: T\ntitle: t\ninstruction: caf\xe9\n").unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("UTF-8"), "{e}");
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
    fn labels_go_together_and_difficulty_counts_the_steps() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(
            &path,
            "id: T\ntitle: t\ninstruction: i\nlibrary: rasterio\noperation: terrain\n",
        )
        .unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("data_type"), Some(4)),
            "{e}"
        );
        std::fs::write(&path, "id: T\ntitle: t\ninstruction: i\nlibrary: rasterio\ndata_type: raster\noperation: terrainn\n").unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("operation"), Some(6)),
            "{e}"
        );
        let workflow = |n: usize| (1..=n).map(|i| format!("{i}. step\n")).collect::<String>();
        let task = |w: Option<String>| Task {
            library: Some("rasterio".into()),
            data_type: Some(DataType::Raster),
            operation: Some(Operation::Terrain),
            workflow: w,
            ..Task::parse("id: T\ntitle: t\ninstruction: i\n", Path::new("t.yaml")).unwrap()
        };
        let difficulty = |t: &Task, gold: &str| t.labels(gold).difficulty;
        assert_eq!(difficulty(&task(Some(workflow(4))), ""), "easy");
        assert_eq!(difficulty(&task(Some(workflow(6))), ""), "medium");
        assert_eq!(difficulty(&task(Some(workflow(7))), ""), "hard");
        let gold = "# %%\na = 1\n# %%\nb = 2\n# %%\n# %%\n# %%\nc = 3\n";
        assert_eq!(difficulty(&task(None), gold), "medium");
        assert_eq!(task(None).labels("").library, "rasterio");
        let unlabelled =
            Task::parse("id: T\ntitle: t\ninstruction: i\n", Path::new("t.yaml")).unwrap();
        assert!(unlabelled.labels(gold).is_empty());
    }

    #[test]
    fn an_unsolvable_task_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(&path, "id: U\ntitle: t\ninstruction: i\nsolvable: false\n").unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("unsolvable_reason"), Some(4)),
            "{e}"
        );
        std::fs::write(
            &path,
            "id: U\ntitle: t\ninstruction: i\nunsolvable_reason: no 2020 layer\n",
        )
        .unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.line),
            (Some("unsolvable_reason"), Some(4))
        );
        std::fs::write(
            &path,
            "id: U\ntitle: t\ninstruction: i\nsolvable: false\nunsolvable_reason: no 2020 layer\nunsolvable_class: time_span\n",
        )
        .unwrap();
        let t = Task::load(&path).unwrap().task;
        assert!(!t.solvable);
        assert_eq!(t.unsolvable_class, Some(UnsolvableClass::TimeSpan));
        std::fs::write(
            &path,
            "id: U\ntitle: t\ninstruction: i\nsolvable: false\nunsolvable_reason: r\nunsolvable_class: vague\n",
        )
        .unwrap();
        let e = Task::load(&path).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("unsolvable_class"), "{e}");
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
            "library",
            "data_type",
            "operation",
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
