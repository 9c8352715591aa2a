//! Function-level cases (`benchmarks/unit/`), in the style of AutoGEEval
//! and GeoJSEval: a function header with its docstring, the parameters of
//! a normal call and of boundary calls, the declared output type, and a
//! reference implementation whose answers are recorded in
//! `expected.json`. A solution (the reference, or later a model's code)
//! runs in the sandbox through `gisclaw_runtime.run_case`; its answers are
//! judged by [`super::judge`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::answers::{
    answer_from_runtime, py_str, save_expected_map, Answer, HarnessError, EXPECTED,
};
use super::judge::{self, Mismatch, OutputType, Tolerance};
use super::labels::{DataType, Difficulty, Labels, Operation};
use super::select::Selection;
use crate::sandbox::{Session, Zygote};
use crate::task::{parse_yaml, read_yaml_text, TaskError};

/// One file of cases: `benchmarks/unit/cases/<library>.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseFile {
    /// The library the cases exercise (the prefix of every case key).
    pub library: String,
    /// Python run before every case's `setup` (shared helpers, e.g. a
    /// function that writes a small GeoTIFF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prelude: Option<String>,
    /// The cases.
    pub cases: Vec<Case>,
}

/// One function-level case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique within the file.
    pub id: String,
    /// The function header with its docstring: what the model is given.
    pub header: String,
    /// The reference implementation (a complete function, imports inside).
    pub reference: String,
    /// Python run before the call; names it binds that match parameters
    /// become arguments (for arrays, files, objects JSON cannot hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// Arguments of the normal call (JSON values).
    #[serde(default)]
    pub params: Map<String, Value>,
    /// The declared output type, which picks the judge.
    pub output: OutputType,
    /// Tolerances when the defaults do not fit.
    #[serde(default)]
    pub tolerance: Tolerance,
    /// Boundary calls: each overrides some of `params`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundary: Vec<Map<String, Value>>,
    /// Boundary calls whose inputs JSON cannot hold: each snippet runs after
    /// `setup`, rebinding some of its names (`frame = frame[:1]`), and the
    /// call takes the normal `params`. Numbered after `boundary`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub boundary_setup: Vec<String>,
    /// The library the case exercises when it is not the file's (a file
    /// of raster operations mixes numpy and scipy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// What the case works on.
    pub data_type: DataType,
    /// What it does.
    pub operation: Operation,
    /// The second route that confirms every recorded answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirmation>,
}

/// How a case's answers are confirmed besides running its reference: a
/// function with the reference's name that computes the same answers
/// another way (the file's prelude helpers in reach), run by `bench
/// verify` on every call and judged against `expected.json` by the case's
/// own judge.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Confirmation {
    /// Which kind of route it is.
    pub route: Route,
    /// What the route is, for people (`pyproj.Geod vs the haversine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The function (imports inside).
    pub code: String,
}

/// The kind of a second route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// Another library computes it.
    Library,
    /// Computed by hand (closed form, counted), written as code.
    Hand,
    /// The library's documentation shows this answer.
    Docs,
}

/// One call of a case: the normal call (`lib/id`) or a boundary call
/// (`lib/id#b1`, …).
#[derive(Debug, Clone)]
pub struct Instance<'a> {
    /// The key in `expected.json`.
    pub key: String,
    /// The case.
    pub case: &'a Case,
    /// The arguments given as JSON.
    pub params: Map<String, Value>,
    /// The file's prelude and the case's setup, run before the call.
    pub setup: String,
}

/// The name of the first function `text` defines (`def NAME(`).
fn defined_function(text: &str) -> Option<String> {
    let after = text.split("def ").nth(1)?;
    let name: String = after
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

impl Case {
    /// The function's name, from `def NAME(` in the header.
    pub fn entry(&self) -> Option<String> {
        defined_function(&self.header)
    }

    /// The case's four labels; `library` is the file's unless the case
    /// names its own.
    pub fn labels(&self, file_library: &str) -> Labels {
        Labels::new(
            self.library.as_deref().unwrap_or(file_library),
            self.data_type,
            self.operation,
            Difficulty::of(&self.reference),
        )
    }

    /// The normal call then the boundary calls; `prelude` runs before the
    /// case's setup.
    pub fn instances(&self, library: &str, prelude: Option<&str>) -> Vec<Instance<'_>> {
        let setup = format!(
            "{}\n{}",
            prelude.unwrap_or(""),
            self.setup.as_deref().unwrap_or("")
        );
        let mut all = vec![Instance {
            key: format!("{library}/{}", self.id),
            case: self,
            params: self.params.clone(),
            setup: setup.clone(),
        }];
        for (i, overrides) in self.boundary.iter().enumerate() {
            let mut params = self.params.clone();
            params.extend(overrides.clone());
            all.push(Instance {
                key: format!("{library}/{}#b{}", self.id, i + 1),
                case: self,
                params,
                setup: setup.clone(),
            });
        }
        for (i, snippet) in self.boundary_setup.iter().enumerate() {
            all.push(Instance {
                key: format!("{library}/{}#b{}", self.id, self.boundary.len() + i + 1),
                case: self,
                params: self.params.clone(),
                setup: format!("{setup}\n{snippet}"),
            });
        }
        all
    }
}

/// A loaded unit suite: its case files and recorded answers.
#[derive(Debug, Clone)]
pub struct UnitSuite {
    /// The suite folder.
    pub dir: PathBuf,
    /// Each case file with its path.
    pub files: Vec<(PathBuf, CaseFile)>,
    /// `expected.json`: instance key → the reference's answer.
    pub expected: BTreeMap<String, Answer>,
}

/// True when `dir` is a unit suite (it has `cases/*.yaml`).
pub fn is_unit_suite(dir: &Path) -> bool {
    dir.join("cases").is_dir()
}

impl UnitSuite {
    /// Reads `DIR/cases/*.yaml` (strictly; errors name file, line and
    /// field) and `DIR/expected.json` when present.
    pub fn load(dir: &Path) -> Result<UnitSuite, TaskError> {
        let error =
            |file: &Path, line: Option<usize>, field: Option<&str>, message: String| TaskError {
                file: file.to_path_buf(),
                line,
                field: field.map(str::to_string),
                message,
            };
        let cases_dir = dir.join("cases");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&cases_dir)
            .map_err(|e| error(&cases_dir, None, None, format!("cannot read: {e}")))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        paths.sort();
        let mut files = Vec::new();
        let mut seen = BTreeMap::new();
        for path in paths {
            let text = read_yaml_text(&path)?;
            let file: CaseFile = parse_yaml(&text, &path)?;
            if let Err(why) = crate::task::check_id(&file.library) {
                let line = crate::task::line_of_key(&text, "library");
                return Err(error(&path, line, Some("library"), why));
            }
            for (i, case) in file.cases.iter().enumerate() {
                let line = text
                    .lines()
                    .position(|l| {
                        l.trim_start().trim_start_matches("- ") == format!("id: {}", case.id)
                    })
                    .map(|n| n + 1);
                let field = format!("cases[{i}]");
                if let Err(why) = crate::task::check_id(&case.id) {
                    return Err(error(&path, line, Some(&format!("{field}.id")), why));
                }
                if case.entry().is_none() {
                    return Err(error(
                        &path,
                        line,
                        Some(&format!("{field}.header")),
                        "has no `def NAME(`".into(),
                    ));
                }
                if case.entry() != defined_function(&case.reference) {
                    return Err(error(
                        &path,
                        line,
                        Some(&format!("{field}.reference")),
                        format!(
                            "must define `{}` as the header does",
                            case.entry().unwrap_or_default()
                        ),
                    ));
                }
                let key = format!("{}/{}", file.library, case.id);
                if let Some(other) = seen.insert(key.clone(), path.clone()) {
                    return Err(error(
                        &path,
                        line,
                        Some(&format!("{field}.id")),
                        format!("`{key}` is also defined in {}", other.display()),
                    ));
                }
            }
            files.push((path, file));
        }
        let expected_path = dir.join(EXPECTED);
        let expected = if expected_path.is_file() {
            let text = std::fs::read_to_string(&expected_path)
                .map_err(|e| error(&expected_path, None, None, format!("cannot read: {e}")))?;
            serde_json::from_str(&text)
                .map_err(|e| error(&expected_path, Some(e.line()), None, e.to_string()))?
        } else {
            BTreeMap::new()
        };
        Ok(UnitSuite {
            dir: dir.to_path_buf(),
            files,
            expected,
        })
    }

    /// Each instance key (`lib/id`, `lib/id#b1`, …) with its case.
    pub fn cases_by_key(&self) -> BTreeMap<String, &Case> {
        self.instances()
            .into_iter()
            .map(|i| (i.key, i.case))
            .collect()
    }

    /// Every instance of every case, in file order.
    pub fn instances(&self) -> Vec<Instance<'_>> {
        self.files
            .iter()
            .flat_map(|(_, f)| {
                f.cases
                    .iter()
                    .flat_map(|c| c.instances(&f.library, f.prelude.as_deref()))
            })
            .collect()
    }

    /// The number of cases.
    pub fn case_count(&self) -> usize {
        self.files.iter().map(|(_, f)| f.cases.len()).sum()
    }

    /// Keeps the cases `selection` selects (by position over the suite,
    /// id, library or any label, `operation=terrain`); returns how many
    /// are left.
    pub fn retain(&mut self, selection: &Selection) -> usize {
        let mut number = 0u32;
        for (_, file) in &mut self.files {
            let library = file.library.clone();
            file.cases.retain(|case| {
                number += 1;
                let labels = case.labels(&library);
                let mut pairs = labels.pairs().to_vec();
                // The file's library selects its cases too.
                pairs.push(("library", library.as_str()));
                selection.matches_case(number, &case.id, &pairs)
            });
        }
        self.files.retain(|(_, file)| !file.cases.is_empty());
        self.case_count()
    }

    /// The labels of every case, by case key (`lib/id`).
    pub fn labels(&self) -> BTreeMap<String, Labels> {
        self.files
            .iter()
            .flat_map(|(_, f)| {
                f.cases
                    .iter()
                    .map(|c| (format!("{}/{}", f.library, c.id), c.labels(&f.library)))
            })
            .collect()
    }
}

/// Runs `code` (a complete function) on one instance in `session` and reads
/// the answer. `Err` only when the harness itself failed (e.g. the setup).
pub fn run_instance(
    session: &mut Session,
    instance: &Instance,
    code: &str,
) -> Result<Answer, HarnessError> {
    let args = [
        code.to_string(),
        instance.case.entry().unwrap_or_default(),
        instance.setup.clone(),
        Value::Object(instance.params.clone()).to_string(),
    ];
    answer_from_runtime(session, "run_case", &args.map(|a| py_str(&a)))
}

/// The verdict on one instance of the reference run.
#[derive(Debug, Clone)]
pub struct InstanceVerdict {
    /// The instance key.
    pub key: String,
    /// The answer the reference gave now.
    pub answer: Option<Answer>,
    /// What is wrong (empty when it agrees with `expected.json`).
    pub problem: Option<String>,
}

/// Answers per instance key; `Err` when the harness itself failed.
pub type Answers = Vec<(String, Result<Answer, HarnessError>)>;

/// Runs every reference implementation (one sandbox session per case file,
/// each case in its own namespace) and returns the answers.
pub fn run_references(
    zygote: &Arc<Zygote>,
    suite: &UnitSuite,
    workdir: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Answers, HarnessError> {
    run_code(zygote, suite, workdir, keep, &|_, case| {
        Some(case.reference.clone())
    })
}

/// Runs every second route ([`Case::confirm`]) and returns its answers
/// (cases without one are left out). A route may use the file's prelude
/// helpers: the prelude is run in its namespace first.
pub fn run_confirmations(
    zygote: &Arc<Zygote>,
    suite: &UnitSuite,
    workdir: &Path,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Answers, HarnessError> {
    run_code(zygote, suite, workdir, keep, &|file, case| {
        case.confirm
            .as_ref()
            .map(|c| format!("{}\n{}", file.prelude.as_deref().unwrap_or(""), c.code))
    })
}

/// Runs the code `pick` gives each kept case on all its instances, one
/// sandbox session per case file.
fn run_code(
    zygote: &Arc<Zygote>,
    suite: &UnitSuite,
    workdir: &Path,
    keep: &dyn Fn(&str) -> bool,
    pick: &dyn Fn(&CaseFile, &Case) -> Option<String>,
) -> Result<Answers, HarnessError> {
    let mut results = Vec::new();
    for (path, file) in &suite.files {
        let instances: Vec<(Instance, String)> = file
            .cases
            .iter()
            .filter_map(|c| pick(file, c).map(|code| (c, code)))
            .flat_map(|(c, code)| {
                c.instances(&file.library, file.prelude.as_deref())
                    .into_iter()
                    .map(move |i| (i, code.clone()))
            })
            .filter(|(i, _)| keep(&i.key))
            .collect();
        if instances.is_empty() {
            continue;
        }
        let dir = workdir.join(&file.library);
        std::fs::create_dir_all(&dir).map_err(HarnessError::io(&dir))?;
        let mut session = Session::open(zygote, &dir)
            .map_err(|e| HarnessError::within(path.display())(e.into()))?;
        for (instance, code) in instances {
            let answer = run_instance(&mut session, &instance, &code);
            results.push((instance.key.clone(), answer));
        }
    }
    Ok(results)
}

/// Judges the second routes' answers against `expected.json`: each must
/// agree by the case's judge.
pub fn verify_confirmations(suite: &UnitSuite, answers: &Answers) -> Vec<InstanceVerdict> {
    let cases = suite.cases_by_key();
    answers
        .iter()
        .map(|(key, answer)| {
            let route = cases
                .get(key)
                .and_then(|c| c.confirm.as_ref())
                .map_or(Route::Library, |c| c.route);
            let problem = match (answer, suite.expected.get(key), cases.get(key)) {
                (Err(e), _, _) => Some(format!("the second route ({route:?}) failed: {e}")),
                (_, None, _) => Some(format!("no answer recorded in {EXPECTED}")),
                (Ok(a), Some(want), Some(case)) => judge::judge(
                    case.output,
                    want,
                    a,
                    &case.tolerance,
                )
                .err()
                .map(|m| {
                    format!("the second route ({route:?}) disagrees with the recorded answer: {m}")
                }),
                (Ok(_), Some(_), None) => Some("not a case of this suite".into()),
            };
            InstanceVerdict {
                key: key.clone(),
                answer: answer.as_ref().ok().cloned(),
                problem,
            }
        })
        .collect()
}

/// Judges the reference answers against `expected.json`: every instance
/// must have a recorded answer, the normal call must not raise, and the
/// reference must still produce what was recorded.
pub fn verify(suite: &UnitSuite, answers: &Answers) -> Vec<InstanceVerdict> {
    let cases = suite.cases_by_key();
    answers
        .iter()
        .map(|(key, answer)| {
            let problem = match (answer, suite.expected.get(key), cases.get(key)) {
                (Err(e), _, _) => Some(e.to_string()),
                (_, None, _) => Some(format!(
                    "no answer recorded in {EXPECTED} (run `gisclaw bench expect`)"
                )),
                (Ok(a), _, _) if a.kind == "error" && !key.contains('#') => Some(format!(
                    "the reference raised on the normal call: {}",
                    a.value
                )),
                (Ok(a), Some(want), Some(case)) => {
                    judge::judge(case.output, want, a, &case.tolerance)
                        .err()
                        .map(|m: Mismatch| format!("the reference no longer agrees: {m}"))
                }
                (Ok(_), Some(_), None) => Some("not a case of this suite".into()),
            };
            InstanceVerdict {
                key: key.clone(),
                answer: answer.as_ref().ok().cloned(),
                problem,
            }
        })
        .collect()
}

/// Records the reference answers in `expected.json` (atomically), keeping
/// the answers of instances not run. Refuses when the normal call of a
/// case raises or the harness failed.
pub fn record(suite: &UnitSuite, answers: &Answers) -> Result<usize, HarnessError> {
    let mut expected = suite.expected.clone();
    let known: std::collections::BTreeSet<String> =
        suite.instances().into_iter().map(|i| i.key).collect();
    expected.retain(|k, _| known.contains(k));
    for (key, answer) in answers {
        match answer {
            Err(e) => return Err(HarnessError::Refused(format!("{key}: {e}"))),
            Ok(a) if a.kind == "error" && !key.contains('#') => {
                return Err(HarnessError::Refused(format!(
                    "{key}: the reference raised on the normal call: {}",
                    a.value
                )))
            }
            Ok(a) if a.kind == "number" && a.value.is_null() && !key.contains('#') => {
                return Err(HarnessError::Refused(format!(
                    "{key}: the reference answered NaN on the normal call (nothing to judge against)"
                )))
            }
            Ok(a) => {
                expected.insert(key.clone(), a.clone());
            }
        }
    }
    save_expected_map(&suite.dir.join(EXPECTED), &expected)?;
    Ok(answers.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_comes_from_the_header_and_boundaries_override_params() {
        let text = "library: lib\ncases:\n  - id: area\n    header: |\n      def area(w: float, h: float) -> float:\n          \"\"\"Area.\"\"\"\n    reference: |\n      def area(w, h):\n          return w * h\n    params: {w: 2, h: 3}\n    output: number\n    data_type: geometry\n    operation: measurement\n    boundary:\n      - {w: 0}\n";
        let file: CaseFile = parse_yaml(text, Path::new("lib.yaml")).unwrap();
        let case = &file.cases[0];
        assert_eq!(case.entry().as_deref(), Some("area"));
        let all = case.instances("lib", None);
        assert_eq!(
            all.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(),
            ["lib/area", "lib/area#b1"]
        );
        assert_eq!(all[1].params["w"], 0);
        assert_eq!(all[1].params["h"], 3);
    }

    #[test]
    fn setup_boundaries_rebind_names_after_the_setup_and_number_on() {
        let text = "library: lib\ncases:\n  - id: total\n    header: 'def total(values, k: int) -> float: pass'\n    reference: |\n      def total(values, k):\n          return sum(values) * k\n    setup: 'values = [1, 2, 3]'\n    params: {k: 2}\n    output: number\n    data_type: array\n    operation: tabular\n    boundary:\n      - {k: 0}\n    boundary_setup:\n      - 'values = values[:1]'\n";
        let file: CaseFile = parse_yaml(text, Path::new("lib.yaml")).unwrap();
        let all = file.cases[0].instances("lib", Some("PRELUDE = 1"));
        assert_eq!(
            all.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(),
            ["lib/total", "lib/total#b1", "lib/total#b2"]
        );
        assert_eq!(all[2].params["k"], 2);
        assert!(all[2]
            .setup
            .ends_with("PRELUDE = 1\nvalues = [1, 2, 3]\nvalues = values[:1]"));
        assert!(!all[1].setup.contains("values[:1]"));
    }

    #[test]
    fn a_bad_output_type_names_the_case_field_and_line() {
        let text = "library: lib\ncases:\n  - id: a\n    header: 'def a(): pass'\n    reference: 'def a(): pass'\n    output: numbr\n";
        let e = parse_yaml::<CaseFile>(text, Path::new("cases/lib.yaml")).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert_eq!(e.field.as_deref(), Some("cases[0].output"), "{e}");
        assert!(
            e.to_string()
                .starts_with("cases/lib.yaml:6: field `cases[0].output`: unknown variant `numbr`"),
            "{e}"
        );
    }
}
