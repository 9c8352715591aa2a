//! The GeoJSEval suite (`benchmarks/geojs/`): function-level JavaScript
//! tasks over Turf.js, JSTS, Geolib, Leaflet and OpenLayers, in the
//! paper's fields — `function_header`, `reference_code`,
//! `parameters_list` (each set with its `edge_test` flag), `output_type`
//! (one of the paper's 25), `eval_methods`, `output_path` — with the
//! answers (`expected_answer`) recorded in `expected.json` by `gisclaw
//! bench expect` and a second route (`confirm`) per task. Every call runs
//! in the confined JavaScript runtime ([`crate::js`]); answers are judged
//! by [`super::js_judge`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::answers::{save_expected_map, HarnessError};
use super::js_judge::{self, JsMismatch};
pub use super::js_judge::{JsOutputType, JsTolerance, Recorded};
use super::labels::{DataType, Difficulty, Labels, Operation};
use super::select::Selection;
use super::unit::Route;
use crate::js::{CallOutcome, JsCall, JsError, JsRuntime};
use crate::task::{parse_yaml, read_yaml_text, TaskError};

/// The file of recorded answers.
pub const EXPECTED: &str = "expected.json";

/// The five libraries GeoJSEval tests.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum JsLibrary {
    /// Turf.js (`turf`).
    Turf,
    /// JSTS (`jsts`).
    Jsts,
    /// Geolib (`geolib`).
    Geolib,
    /// Leaflet (`L`).
    Leaflet,
    /// OpenLayers (`ol`).
    Ol,
}

impl JsLibrary {
    /// Every library, in the paper's order.
    pub const ALL: [JsLibrary; 5] = [
        JsLibrary::Turf,
        JsLibrary::Jsts,
        JsLibrary::Geolib,
        JsLibrary::Leaflet,
        JsLibrary::Ol,
    ];

    /// Its name in keys and labels (`turf`, `ol`).
    pub fn name(self) -> &'static str {
        match self {
            JsLibrary::Turf => "turf",
            JsLibrary::Jsts => "jsts",
            JsLibrary::Geolib => "geolib",
            JsLibrary::Leaflet => "leaflet",
            JsLibrary::Ol => "ol",
        }
    }

    /// How the paper's prompt names it.
    pub fn title(self) -> &'static str {
        match self {
            JsLibrary::Turf => "Turf.js",
            JsLibrary::Jsts => "JSTS",
            JsLibrary::Geolib => "Geolib",
            JsLibrary::Leaflet => "Leaflet",
            JsLibrary::Ol => "OpenLayers",
        }
    }
}

/// One parameter set of a task: one case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParamSet {
    /// Arguments by the header's parameter names: JSON values, or
    /// `{"$js": "expression"}` evaluated in the call's realm.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// An edge test: empty, invalid, degenerate or extreme input.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub edge_test: bool,
}

/// The second route that confirms every answer of a task: a function of
/// the same name computing them another way.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsConfirmation {
    /// Which kind of route.
    pub route: Route,
    /// What the route is, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The function.
    pub code: String,
}

/// One function-level task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsTask {
    /// Unique within its library.
    pub id: String,
    /// What it works on.
    pub data_type: DataType,
    /// What it does.
    pub operation: Operation,
    /// What the model is given: `function NAME(params) { /** JSDoc */ }`.
    pub function_header: String,
    /// The reference implementation.
    pub reference_code: String,
    /// The declared type of the result.
    pub output_type: JsOutputType,
    /// Method chains evaluated on the result (indirect evaluation).
    #[serde(default)]
    pub eval_methods: Vec<String>,
    /// Where each case's result is saved in an eval's folder; `{n}` is the
    /// case's number. Default `output/<library>/<id>_{n}.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    /// Tolerances when the defaults do not fit.
    #[serde(default)]
    pub tolerance: JsTolerance,
    /// The cases.
    pub parameters_list: Vec<ParamSet>,
    /// The second route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<JsConfirmation>,
}

/// One file of tasks: `benchmarks/geojs/cases/<name>.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JsCaseFile {
    /// The library its tasks exercise.
    pub library: JsLibrary,
    /// The tasks.
    pub tasks: Vec<JsTask>,
}

/// One case as run: a task and one of its parameter sets.
#[derive(Debug, Clone)]
pub struct JsInstance<'a> {
    /// `library/task#n` (n from 1), the key in `expected.json`.
    pub key: String,
    /// The library.
    pub library: JsLibrary,
    /// The task.
    pub task: &'a JsTask,
    /// Its parameter set's number, from 1.
    pub number: usize,
    /// The arguments, in the header's order, as JS expressions.
    pub args: Vec<String>,
    /// Whether it is an edge test.
    pub edge: bool,
}

/// How one call of a solution ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ran {
    /// It returned.
    Returned(Recorded),
    /// It threw (phase, error name, message).
    Threw {
        /// `compile`, `arguments`, `call`, `indirect`, `output`.
        phase: String,
        /// The result's type tag when it was the eval methods that threw.
        kind: Option<String>,
        /// `TypeError`, `Timeout`, ….
        name: String,
        /// The message.
        message: String,
    },
    /// The worker gave no answer (killed at the limit, died).
    Lost(crate::js::Lost),
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ran::Returned(r) => write!(f, "returned {}", r.kind),
            Ran::Threw {
                phase,
                name,
                message,
                ..
            } => write!(f, "{name} ({phase}): {message}"),
            Ran::Lost(lost) => write!(f, "{lost:?}"),
        }
    }
}

/// The name a header or implementation defines (`function NAME(`).
pub fn function_name(text: &str) -> Option<String> {
    let at = text.find("function")?;
    let after = text[at + "function".len()..].trim_start();
    let name: String = after
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The parameter names of the first `function NAME(a, b = 1)` in `text`
/// (defaults dropped), or why they cannot be read.
pub fn parameters(text: &str) -> Result<Vec<String>, String> {
    let open = text.find('(').ok_or("no `(` after the function's name")?;
    let mut depth = 0i32;
    let mut current = String::new();
    let mut names = Vec::new();
    for c in text[open + 1..].chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' if depth == 0 => {
                let name = current.split('=').next().unwrap_or("").trim().to_string();
                if !name.is_empty() {
                    names.push(name);
                }
                return names
                    .into_iter()
                    .map(|n| {
                        let plain = n.trim_start_matches("...");
                        if plain
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                        {
                            Ok(plain.to_string())
                        } else {
                            Err(format!("parameter `{n}` is not a plain name"))
                        }
                    })
                    .collect();
            }
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(current.split('=').next().unwrap_or("").trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    Err("the parameter list is not closed".into())
}

/// The distinct functions JavaScript code calls (`turf.area(`, `push(`),
/// comments and strings left out: the difficulty label's measure.
pub fn called_functions(code: &str) -> std::collections::BTreeSet<String> {
    const NOT_CALLS: &[&str] = &[
        "if", "for", "while", "switch", "catch", "function", "return", "typeof", "new", "await",
    ];
    let plain = without_comments_and_strings(code);
    let chars: Vec<char> = plain.chars().collect();
    let mut out = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_alphabetic() || chars[i] == '_' || chars[i] == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || matches!(chars[i], '_' | '$' | '.'))
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let mut j = i;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let declared = plain[..plain
                .char_indices()
                .nth(start)
                .map_or(plain.len(), |(b, _)| b)]
                .trim_end()
                .ends_with("function");
            if j < chars.len()
                && chars[j] == '('
                && !declared
                && !NOT_CALLS.contains(&name.as_str())
            {
                out.insert(name.trim_matches('.').to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `code` with comments and string contents blanked.
pub fn without_comments_and_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            '"' | '\'' | '`' => {
                let quote = c;
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == quote {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

impl JsTask {
    /// The function's name.
    pub fn entry(&self) -> Option<String> {
        function_name(&self.function_header)
    }

    /// The task's four labels.
    pub fn labels(&self, library: JsLibrary) -> Labels {
        Labels::new(
            library.name(),
            self.data_type,
            self.operation,
            Difficulty::from_calls(called_functions(&self.reference_code).len()),
        )
    }

    /// Where case `n`'s result goes in an eval's folder.
    pub fn output_path(&self, library: JsLibrary, n: usize) -> String {
        match &self.output_path {
            Some(template) => template.replace("{n}", &n.to_string()),
            None => format!("output/{}/{}_{n}.json", library.name(), self.id),
        }
    }

    /// The cases, in order.
    pub fn instances(&self, library: JsLibrary) -> Vec<JsInstance<'_>> {
        let order = parameters(&self.function_header).unwrap_or_default();
        self.parameters_list
            .iter()
            .enumerate()
            .map(|(i, set)| JsInstance {
                key: format!("{}/{}#{}", library.name(), self.id, i + 1),
                library,
                task: self,
                number: i + 1,
                args: order
                    .iter()
                    .map(|name| match set.params.get(name) {
                        None => "undefined".to_string(),
                        Some(Value::Object(o)) if o.len() == 1 && o.contains_key("$js") => {
                            o["$js"].as_str().unwrap_or("undefined").to_string()
                        }
                        Some(value) => value.to_string(),
                    })
                    .collect(),
                edge: set.edge_test,
            })
            .collect()
    }
}

/// True when `dir` is a GeoJSEval suite: `cases/*.yaml` holding `tasks:`
/// (a unit suite's files hold `cases:`).
pub fn is_geojs_suite(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.join("cases")) else {
        return false;
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .any(|p| {
            std::fs::read_to_string(&p)
                .map(|t| t.lines().any(|l| l.starts_with("tasks:")))
                .unwrap_or(false)
        })
}

/// A loaded suite: its files and recorded answers.
#[derive(Debug, Clone)]
pub struct JsSuite {
    /// The suite folder.
    pub dir: PathBuf,
    /// Each file with its path.
    pub files: Vec<(PathBuf, JsCaseFile)>,
    /// `expected.json`: case key → the reference's answer.
    pub expected: BTreeMap<String, Recorded>,
}

impl JsSuite {
    /// Reads `DIR/cases/*.yaml` strictly (errors name the file, line and
    /// field) and `DIR/expected.json` when present.
    pub fn load(dir: &Path) -> Result<JsSuite, TaskError> {
        let error = |file: &Path, line: Option<usize>, field: String, message: String| TaskError {
            file: file.to_path_buf(),
            line,
            field: Some(field),
            message,
        };
        let cases_dir = dir.join("cases");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
            .map_err(|e| TaskError {
                file: cases_dir.clone(),
                line: None,
                field: None,
                message: format!("cannot read: {e}"),
            })?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        paths.sort();
        let mut files = Vec::new();
        let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
        for path in paths {
            let text = read_yaml_text(&path)?;
            let file: JsCaseFile = parse_yaml(&text, &path)?;
            for (i, task) in file.tasks.iter().enumerate() {
                let line = text
                    .lines()
                    .position(|l| {
                        l.trim_start().trim_start_matches("- ") == format!("id: {}", task.id)
                    })
                    .map(|n| n + 1);
                let field = |name: &str| format!("tasks[{i}].{name}");
                crate::task::check_id(&task.id)
                    .map_err(|why| error(&path, line, field("id"), why))?;
                let Some(entry) = task.entry() else {
                    return Err(error(
                        &path,
                        line,
                        field("function_header"),
                        "has no `function NAME(`".into(),
                    ));
                };
                let names = parameters(&task.function_header)
                    .map_err(|why| error(&path, line, field("function_header"), why))?;
                for (role, code) in std::iter::once(("reference_code", &task.reference_code))
                    .chain(task.confirm.as_ref().map(|c| ("confirm.code", &c.code)))
                {
                    if function_name(code).as_deref() != Some(entry.as_str()) {
                        return Err(error(
                            &path,
                            line,
                            field(role),
                            format!("must define `{entry}` as the header does"),
                        ));
                    }
                }
                if task.parameters_list.is_empty() {
                    return Err(error(
                        &path,
                        line,
                        field("parameters_list"),
                        "has no parameter set".into(),
                    ));
                }
                for (n, set) in task.parameters_list.iter().enumerate() {
                    if let Some(unknown) = set.params.keys().find(|k| !names.contains(k)) {
                        return Err(error(
                            &path,
                            line,
                            format!("tasks[{i}].parameters_list[{n}].params.{unknown}"),
                            format!("is not a parameter of `{entry}` ({})", names.join(", ")),
                        ));
                    }
                }
                if task.output_type.indirect() && task.eval_methods.is_empty() {
                    return Err(error(
                        &path,
                        line,
                        field("eval_methods"),
                        format!(
                            "a {} is judged through its eval methods: name at least one",
                            task.output_type.name()
                        ),
                    ));
                }
                let key = format!("{}/{}", file.library.name(), task.id);
                if let Some(other) = seen.insert(key.clone(), path.clone()) {
                    return Err(error(
                        &path,
                        line,
                        field("id"),
                        format!("`{key}` is also defined in {}", other.display()),
                    ));
                }
            }
            files.push((path, file));
        }
        let expected_path = dir.join(EXPECTED);
        let expected = if expected_path.is_file() {
            let text = std::fs::read_to_string(&expected_path).map_err(|e| TaskError {
                file: expected_path.clone(),
                line: None,
                field: None,
                message: format!("cannot read: {e}"),
            })?;
            serde_json::from_str(&text).map_err(|e| TaskError {
                file: expected_path.clone(),
                line: Some(e.line()),
                field: None,
                message: e.to_string(),
            })?
        } else {
            BTreeMap::new()
        };
        Ok(JsSuite {
            dir: dir.to_path_buf(),
            files,
            expected,
        })
    }

    /// Every task with its library, in file order.
    pub fn tasks(&self) -> impl Iterator<Item = (JsLibrary, &JsTask)> {
        self.files
            .iter()
            .flat_map(|(_, f)| f.tasks.iter().map(move |t| (f.library, t)))
    }

    /// Every case, in file order.
    pub fn instances(&self) -> Vec<JsInstance<'_>> {
        self.tasks().flat_map(|(lib, t)| t.instances(lib)).collect()
    }

    /// Each task's key (`library/id`) with its labels.
    pub fn labels(&self) -> BTreeMap<String, Labels> {
        self.tasks()
            .map(|(lib, t)| (format!("{}/{}", lib.name(), t.id), t.labels(lib)))
            .collect()
    }

    /// Keeps the tasks `selection` selects (by position, id, library or
    /// label); returns how many are left.
    pub fn retain(&mut self, selection: &Selection) -> usize {
        let mut number = 0u32;
        for (_, file) in &mut self.files {
            let library = file.library;
            file.tasks.retain(|task| {
                number += 1;
                let labels = task.labels(library);
                selection.matches_case(number, &task.id, &labels.pairs())
            });
        }
        self.files.retain(|(_, f)| !f.tasks.is_empty());
        self.task_count()
    }

    /// The number of tasks.
    pub fn task_count(&self) -> usize {
        self.files.iter().map(|(_, f)| f.tasks.len()).sum()
    }
}

/// Runs `code` (a solution defining the task's function) on one case.
pub fn run_instance(
    runtime: &mut JsRuntime,
    instance: &JsInstance<'_>,
    code: &str,
) -> Result<Ran, JsError> {
    let call = JsCall {
        code: code.to_string(),
        name: instance.task.entry().unwrap_or_default(),
        args: instance.args.clone(),
        eval_methods: instance.task.eval_methods.clone(),
    };
    Ok(match runtime.call(&call)? {
        CallOutcome::Answered(a) if a.ok => Ran::Returned(Recorded {
            kind: a.kind.unwrap_or_default(),
            value: a.value.unwrap_or(Value::Null),
            indirect: a.indirect,
        }),
        CallOutcome::Answered(a) => {
            let error = a.error.unwrap_or(crate::js::Thrown {
                name: "Error".into(),
                message: String::new(),
            });
            Ran::Threw {
                phase: a.phase.unwrap_or_default(),
                kind: a.kind,
                name: error.name,
                message: error.message,
            }
        }
        CallOutcome::Lost(lost) => Ran::Lost(lost),
    })
}

/// What one reference (or route) gave on every case selected by `keep`:
/// key → how it ran.
pub fn run_all(
    runtime: &mut JsRuntime,
    suite: &JsSuite,
    confirm: bool,
    keep: &dyn Fn(&str) -> bool,
    progress: &dyn Fn(usize),
) -> Result<Vec<(String, Ran)>, JsError> {
    let mut out = Vec::new();
    for instance in suite.instances() {
        if !keep(&instance.key) {
            continue;
        }
        let code = if confirm {
            match &instance.task.confirm {
                Some(route) => route.code.clone(),
                None => continue,
            }
        } else {
            instance.task.reference_code.clone()
        };
        out.push((
            instance.key.clone(),
            run_instance(runtime, &instance, &code)?,
        ));
        progress(out.len());
    }
    Ok(out)
}

/// One case's verdict in `bench verify`.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The case's key.
    pub key: String,
    /// What is wrong, if anything.
    pub problem: Option<String>,
}

/// Judges what ran against `expected.json`: every case must return, fit
/// its declared type (edge tests may return what the docstring says for
/// bad input), and agree with the recorded answer. `routes`: these are
/// second routes' answers ([`js_judge::judge_route`]).
pub fn verify(suite: &JsSuite, ran: &[(String, Ran)], routes: bool) -> Vec<Verdict> {
    let instances: BTreeMap<String, JsInstance<'_>> = suite
        .instances()
        .into_iter()
        .map(|i| (i.key.clone(), i))
        .collect();
    ran.iter()
        .map(|(key, ran)| {
            let problem = match (instances.get(key), suite.expected.get(key), ran) {
                (None, _, _) => Some("no such case".to_string()),
                (_, None, _) => Some("no recorded answer (run `gisclaw bench expect`)".to_string()),
                (_, _, Ran::Threw { .. } | Ran::Lost(_)) => {
                    Some(format!("it did not return: {ran}"))
                }
                (Some(instance), Some(want), Ran::Returned(got)) if routes => {
                    js_judge::judge_route(
                        instance.task.output_type,
                        &instance.task.tolerance,
                        want,
                        got,
                    )
                    .err()
                    .map(|m| m.to_string())
                }
                (Some(instance), Some(want), Ran::Returned(got)) => {
                    let typed = if instance.edge {
                        None
                    } else {
                        js_judge::fits(instance.task.output_type, got)
                            .err()
                            .map(|m| m.to_string())
                    };
                    typed.or_else(|| {
                        js_judge::judge(
                            instance.task.output_type,
                            &instance.task.tolerance,
                            want,
                            got,
                        )
                        .err()
                        .map(|m: JsMismatch| m.to_string())
                    })
                }
            };
            Verdict {
                key: key.clone(),
                problem,
            }
        })
        .collect()
}

/// Records every reference answer in `expected.json` (atomically, one
/// line per case, keys sorted); refuses when any reference failed.
pub fn record(suite: &JsSuite, ran: &[(String, Ran)]) -> Result<usize, HarnessError> {
    let mut entries: BTreeMap<String, Recorded> = suite.expected.clone();
    let mut failed = Vec::new();
    for (key, outcome) in ran {
        match outcome {
            Ran::Returned(answer) => {
                entries.insert(key.clone(), answer.clone());
            }
            other => failed.push(format!("{key}: {other}")),
        }
    }
    if !failed.is_empty() {
        return Err(HarnessError::Failed(format!(
            "{} references did not return, nothing recorded:\n  {}",
            failed.len(),
            failed.join("\n  ")
        )));
    }
    save_expected_map(&suite.dir.join(EXPECTED), &entries)?;
    Ok(ran.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_headers_name_and_parameters_are_read_with_defaults_dropped() {
        let header = "function T_area(polygon, options = {units: 'km', x: [1, 2]}, ...rest) {\n /** doc (a, b) */ }";
        assert_eq!(function_name(header).as_deref(), Some("T_area"));
        assert_eq!(parameters(header).unwrap(), ["polygon", "options", "rest"]);
        assert_eq!(parameters("function f() {}").unwrap(), Vec::<String>::new());
        assert!(parameters("function f({a, b}) {}").is_err());
    }

    #[test]
    fn difficulty_counts_distinct_calls_not_comments_strings_or_keywords() {
        let code = "function T_x(p) {\n  // turf.fake(1)\n  if (!p) return 'a(b)';\n  const a = turf.area(p);\n  return turf.round(a, 2) + Math.max(a, turf.area(p));\n}";
        let calls = called_functions(code);
        assert_eq!(
            calls.into_iter().collect::<Vec<_>>(),
            ["Math.max", "turf.area", "turf.round"]
        );
    }

    #[test]
    fn json_and_expression_parameters_become_arguments_in_header_order() {
        let task: JsTask = serde_yaml::from_str(
            "id: t\ndata_type: geometry\noperation: measurement\n\
             function_header: 'function T_t(b, a) {}'\nreference_code: 'function T_t(b, a) { return 1; }'\n\
             output_type: Number\nparameters_list:\n  - params: {a: [1, 2], b: {$js: 'turf.point([0, 0])'}}\n  - params: {a: null}\n    edge_test: true\n",
        )
        .unwrap();
        let cases = task.instances(JsLibrary::Turf);
        assert_eq!(cases[0].key, "turf/t#1");
        assert_eq!(cases[0].args, ["turf.point([0, 0])", "[1,2]"]);
        assert_eq!(cases[1].args, ["undefined", "null"]);
        assert!(cases[1].edge && !cases[0].edge);
        assert_eq!(task.output_path(JsLibrary::Turf, 2), "output/turf/t_2.json");
    }
}
