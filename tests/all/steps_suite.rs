//! Multi-step tasks (`benchmarks/geocode/`): every gold step agrees with
//! its recorded answer, a wrong step is caught and ends complete@1 there,
//! judges reject perturbed answers, malformed tasks are named.

use crate::common;

use std::path::{Path, PathBuf};

use common::{gisclaw, repo, text, zygote};
use gisclaw::bench::judge::{judge, perturb};
use gisclaw::bench::steps::{complete_at_1, run_gold, LoadedStepTask};
use gisclaw::bench::suite_tasks;

fn suite_dir() -> PathBuf {
    repo().join("benchmarks/geocode")
}

fn all_tasks() -> Vec<LoadedStepTask> {
    suite_tasks(&suite_dir())
        .unwrap()
        .iter()
        .map(|p| LoadedStepTask::load(p).unwrap())
        .collect()
}

#[test]
fn every_gold_step_agrees_with_its_recorded_answer() {
    let tasks = all_tasks();
    assert!(tasks.len() >= 30, "at least 30 step tasks");
    let steps: usize = tasks.iter().map(|t| t.task.steps.len()).sum();
    assert!(
        steps >= 300,
        "at least 300 steps (the single-turn pool): {steps}"
    );
    for t in &tasks {
        // GeoAgent's sequential tasks have 7 to 22 steps.
        assert!((7..=22).contains(&t.task.steps.len()), "{}", t.task.id);
        assert_eq!(
            t.expected.len(),
            t.task.steps.len(),
            "{}: one recorded answer per step",
            t.task.id
        );
    }
    let out = tempfile::tempdir().unwrap();
    let run = gisclaw(
        &[
            "bench",
            "verify",
            suite_dir().to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    let printed = text(&run);
    assert!(run.status.success(), "{printed}");
    assert!(
        printed.contains(&format!("{n}/{n} step tasks verified", n = tasks.len())),
        "{printed}"
    );
}

#[test]
fn judges_reject_a_perturbed_step_answer() {
    for t in all_tasks() {
        for (i, (step, want)) in t.task.steps.iter().zip(&t.expected).enumerate() {
            assert_eq!(
                judge(step.output, want, want, &step.tolerance),
                Ok(()),
                "{} step {}",
                t.task.id,
                i + 1
            );
            let wrong = perturb(want, &step.tolerance);
            assert!(
                judge(step.output, want, &wrong, &step.tolerance).is_err(),
                "{} step {} must reject {wrong:?}",
                t.task.id,
                i + 1
            );
        }
    }
}

/// Copies task `id` (and the shared `_lib`) under `root`; returns its task.yaml.
fn copy_task(id: &str, root: &Path) -> PathBuf {
    let dir = root.join("geocode").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(suite_dir().join(id)).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    std::fs::create_dir_all(root.join("_lib")).unwrap();
    std::fs::copy(
        repo().join("benchmarks/_lib/synth.py"),
        root.join("_lib/synth.py"),
    )
    .unwrap();
    dir.join("task.yaml")
}

#[test]
fn a_wrong_step_is_caught_and_ends_complete_at_1_there() {
    let root = tempfile::tempdir().unwrap();
    let task_file = copy_task("G01", root.path());
    // Step 2 with 500 m instead of the asked 400 m walking distance.
    let gold = task_file.with_file_name("gold.py");
    let source = std::fs::read_to_string(&gold)
        .unwrap()
        .replace("parks.buffer(400)", "parks.buffer(500)");
    std::fs::write(&gold, source).unwrap();
    let task = LoadedStepTask::load(&task_file).unwrap();
    let out = root.path().join("run");
    let verdicts = run_gold(zygote(), &task, &out, true).unwrap();
    let passed: Vec<bool> = verdicts.iter().map(|v| v.problem.is_none()).collect();
    assert!(passed[0], "{verdicts:?}");
    assert!(!passed[1], "the zone area differs: {verdicts:?}");
    let problem = verdicts[1].problem.as_deref().unwrap();
    assert!(
        problem.starts_with("G01: step 2: the gold no longer agrees"),
        "{problem}"
    );
    assert_eq!(complete_at_1(&passed), 1.0 / 10.0);
}

#[test]
fn malformed_step_tasks_are_named() {
    let root = tempfile::tempdir().unwrap();
    let task_file = copy_task("G03", root.path());
    let yaml = std::fs::read_to_string(&task_file).unwrap();
    // One gold cell too many.
    let gold = task_file.with_file_name("gold.py");
    std::fs::write(
        &gold,
        std::fs::read_to_string(&gold).unwrap() + "# %%\nextra = 1\n",
    )
    .unwrap();
    let e = LoadedStepTask::load(&task_file).unwrap_err().to_string();
    assert!(
        e.contains("has 10 cells for 9 steps") && e.contains("field `gold`"),
        "{e}"
    );
    // A step without its check, through the CLI.
    let broken = yaml.replacen("    check: round(float(rmse), 4)\n", "", 1);
    std::fs::write(&task_file, broken).unwrap();
    let run = gisclaw(
        &[
            "bench",
            "verify",
            task_file
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .to_str()
                .unwrap(),
        ],
        &[],
    );
    let printed = text(&run);
    assert_eq!(run.status.code(), Some(2), "{printed}");
    assert!(
        printed.contains("task.yaml:")
            && printed.contains("steps[4].check")
            && printed.contains("missing field"),
        "{printed}"
    );
}
