//! Multi-step tasks (`benchmarks/geocode/`), in the style of GeoAgent's
//! GeoCode: a context, then 4–10 step prompts given one after another in
//! one sandbox session; after each step a check expression is evaluated in
//! the session namespace and its answer judged against the answer the gold
//! solution gave (recorded in the task's `expected.json`). Scored by
//! complete@1 (the run of consecutive passed steps from the first, over
//! the number of steps) and pass@1 (every step passed).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::answers::{
    answer_from_runtime, answer_json, py_str, save_expected, Answer, HarnessError, EXPECTED,
};
use super::data;
use super::judge::{self, OutputType, Tolerance};
use super::labels::{DataType, Difficulty, Labels, Operation};
use crate::agent::run::prepare_out;
use crate::agent::solution::split_cells;
use crate::observation;
use crate::sandbox::{CellStatus, Session, Zygote};
use crate::task::{line_of_key, parse_yaml, read_yaml_text, LoadedTask, Task, TaskError};

/// A multi-step task as written in its `task.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepTask {
    /// Short identifier, e.g. `G01`.
    pub id: String,
    /// One-line title.
    pub title: String,
    /// What the model is told before the first step (the data, the goal).
    pub context: String,
    /// The libraries the steps are meant to use.
    #[serde(default)]
    pub libraries: Vec<String>,
    /// The data generator's files (relative to the task file).
    pub generator: Vec<PathBuf>,
    /// The generator's seed.
    #[serde(default)]
    pub seed: u64,
    /// The gold solution: one cell (split at `# %%`) per step.
    pub gold: PathBuf,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Provenance, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// One step: the prompt and how its result is checked.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What the model is asked to do in this step.
    pub prompt: String,
    /// A Python expression evaluated in the session namespace after the
    /// step (e.g. `len(parcels)`, `round(float(mean_ndvi), 4)`).
    pub check: String,
    /// The check's output type, which picks the judge.
    pub output: OutputType,
    /// Tolerances when the defaults do not fit.
    #[serde(default)]
    pub tolerance: Tolerance,
    /// The library the step exercises most.
    pub library: String,
    /// What it works on.
    pub data_type: DataType,
    /// What it does.
    pub operation: Operation,
}

/// A step task with its paths resolved.
#[derive(Debug, Clone)]
pub struct LoadedStepTask {
    /// The parsed task.
    pub task: StepTask,
    /// The task file.
    pub path: PathBuf,
    /// The gold cells, one per step.
    pub gold_cells: Vec<String>,
    /// The recorded answers of the gold, one per step (empty when not yet
    /// recorded).
    pub expected: Vec<Answer>,
}

impl StepTask {
    /// The task's text as a retrieval query: its context and every step's
    /// prompt.
    pub fn query(&self) -> String {
        let steps: Vec<&str> = self.steps.iter().map(|s| s.prompt.trim()).collect();
        format!("{} {}", self.context.trim(), steps.join(" "))
    }
}

/// True when the task file is a step task (it has a top-level `steps:`).
pub fn is_step_task(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.lines().any(|l| l.starts_with("steps:")))
}

impl LoadedStepTask {
    /// Reads and checks a step task: 4–10 steps, one gold cell per step,
    /// generator files present.
    pub fn load(path: &Path) -> Result<LoadedStepTask, TaskError> {
        let error = |field: &str, message: String| TaskError {
            file: path.to_path_buf(),
            line: None,
            field: Some(field.to_string()),
            message,
        };
        let text = read_yaml_text(path)?;
        let task: StepTask = parse_yaml(&text, path)?;
        let line_of = |key: &str| line_of_key(&text, key);
        if let Err(why) = crate::task::check_id(&task.id) {
            return Err(TaskError {
                line: line_of("id"),
                ..error("id", why)
            });
        }
        if !(4..=22).contains(&task.steps.len()) {
            return Err(TaskError {
                line: line_of("steps"),
                ..error(
                    "steps",
                    format!("{} steps; a task has 4 to 22", task.steps.len()),
                )
            });
        }
        let base = path.parent().unwrap_or(Path::new("."));
        for script in &task.generator {
            if !base.join(script).is_file() {
                return Err(TaskError {
                    line: line_of("generator"),
                    ..error(
                        "generator",
                        format!("no file at {}", base.join(script).display()),
                    )
                });
            }
        }
        let gold_path = base.join(&task.gold);
        let source = std::fs::read_to_string(&gold_path).map_err(|e| TaskError {
            line: line_of("gold"),
            ..error("gold", format!("{}: {e}", gold_path.display()))
        })?;
        let gold_cells = split_cells(&source);
        if gold_cells.len() != task.steps.len() {
            return Err(TaskError {
                line: line_of("gold"),
                ..error(
                    "gold",
                    format!(
                        "{} has {} cells for {} steps",
                        gold_path.display(),
                        gold_cells.len(),
                        task.steps.len()
                    ),
                )
            });
        }
        let expected_path = base.join(EXPECTED);
        let expected = match std::fs::read_to_string(&expected_path) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| TaskError {
                file: expected_path.clone(),
                line: Some(e.line()),
                field: None,
                message: e.to_string(),
            })?,
            Err(_) => Vec::new(),
        };
        Ok(LoadedStepTask {
            task,
            path: path.to_path_buf(),
            gold_cells,
            expected,
        })
    }

    /// Each step's four labels (its difficulty from its gold cell).
    pub fn step_labels(&self) -> Vec<Labels> {
        self.task
            .steps
            .iter()
            .zip(&self.gold_cells)
            .map(|(step, cell)| {
                Labels::new(
                    &step.library,
                    step.data_type,
                    step.operation,
                    Difficulty::of(cell),
                )
            })
            .collect()
    }

    /// The task as a plain [`LoadedTask`] for data generation.
    pub fn as_loaded_task(&self) -> LoadedTask {
        let base = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        LoadedTask {
            task: Task {
                id: self.task.id.clone(),
                title: self.task.title.clone(),
                instruction: self.task.context.clone(),
                data: None,
                domain_knowledge: None,
                workflow: None,
                outputs: Vec::new(),
                category: None,
                library: None,
                data_type: None,
                operation: None,
                gold: Some(self.task.gold.clone()),
                generator: self.task.generator.clone(),
                seed: self.task.seed,
                notes: self.task.notes.clone(),
                solvable: true,
                unsolvable_reason: None,
                unsolvable_class: None,
                published: None,
            },
            path: self.path.clone(),
            data_dir: None,
            gold: Some(base.join(&self.task.gold)),
            generator: self.task.generator.iter().map(|g| base.join(g)).collect(),
        }
    }
}

/// Evaluates a step's check in the session namespace.
pub fn run_check(session: &mut Session, check: &str) -> Result<Answer, HarnessError> {
    answer_from_runtime(
        session,
        "evaluate_check",
        &[py_str(check), "globals()".into()],
    )
}

/// What happened in one step of a gold run.
#[derive(Debug, Clone)]
pub struct StepVerdict {
    /// The check's answer, when it ran.
    pub answer: Option<Answer>,
    /// What is wrong (none when the step passed).
    pub problem: Option<String>,
}

/// complete@1: consecutive passed steps from the first, over all steps.
pub fn complete_at_1(passed: &[bool]) -> f64 {
    if passed.is_empty() {
        return 0.0;
    }
    passed.iter().take_while(|p| **p).count() as f64 / passed.len() as f64
}

/// Runs the gold of `task` step by step in a fresh session in `out` and
/// checks each step against the recorded answers (when `judge_expected`;
/// otherwise only that every cell and check runs and the step's answer is
/// not an error).
pub fn run_gold(
    zygote: &Arc<Zygote>,
    task: &LoadedStepTask,
    out: &Path,
    judge_expected: bool,
) -> Result<Vec<StepVerdict>, HarnessError> {
    let id = &task.task.id;
    let mut loaded = task.as_loaded_task();
    data::ensure(zygote, &mut loaded)?;
    let dirs = prepare_out(out, loaded.data_dir.as_deref())
        .map_err(|e| HarnessError::within(id)(HarnessError::Prepare(format!("{e:#}"))))?;
    let mut session = Session::open_in(zygote, &dirs, zygote.config().clone())
        .map_err(|e| HarnessError::within(id)(e.into()))?;
    let mut verdicts = Vec::new();
    for (i, (step, cell)) in task.task.steps.iter().zip(&task.gold_cells).enumerate() {
        let n = i + 1;
        let outcome = session
            .execute(cell)
            .map_err(|e| HarnessError::within(id)(e.into()))?;
        if outcome.status != CellStatus::Ok {
            let text = observation::render(&outcome);
            verdicts.push(StepVerdict {
                answer: None,
                problem: Some(format!(
                    "{id}: gold cell {n} failed: {}",
                    observation::error_line(&text)
                )),
            });
            continue;
        }
        let answer = match run_check(&mut session, &step.check) {
            Ok(a) => a,
            Err(e) => {
                verdicts.push(StepVerdict {
                    answer: None,
                    problem: Some(format!("{id}: step {n}: {e}")),
                });
                continue;
            }
        };
        let problem = if answer.kind == "error" {
            Some(format!(
                "{id}: step {n}: the check `{}` raised {}",
                step.check, answer.value
            ))
        } else if !judge_expected {
            None
        } else {
            match task.expected.get(i) {
                None => Some(format!(
                    "{id}: step {n}: no answer recorded in {EXPECTED} (run `gisclaw bench expect`)"
                )),
                Some(want) => judge::judge(step.output, want, &answer, &step.tolerance)
                    .err()
                    .map(|m| format!("{id}: step {n}: the gold no longer agrees: {m}")),
            }
        };
        verdicts.push(StepVerdict {
            answer: Some(answer),
            problem,
        });
    }
    Ok(verdicts)
}

/// Writes the gold's answers to the task's `expected.json` (atomically).
pub fn record(task: &LoadedStepTask, verdicts: &[StepVerdict]) -> Result<(), HarnessError> {
    if let Some(problem) = verdicts.iter().find_map(|v| v.problem.clone()) {
        return Err(HarnessError::Refused(problem));
    }
    let entries: Vec<String> = verdicts
        .iter()
        .filter_map(|v| v.answer.as_ref())
        .map(answer_json)
        .collect();
    let path = task.path.parent().unwrap_or(Path::new(".")).join(EXPECTED);
    save_expected(&path, &entries, ('[', ']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complete_at_1_counts_the_leading_run() {
        assert_eq!(complete_at_1(&[true, true, false, true]), 0.5);
        assert_eq!(complete_at_1(&[false, true, true, true]), 0.0);
        assert_eq!(complete_at_1(&[true; 5]), 1.0);
        assert_eq!(complete_at_1(&[]), 0.0);
    }
}
