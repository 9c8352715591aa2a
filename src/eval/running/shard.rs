//! Sharded evals: the (task, arch, run) cells of one task-suite eval split
//! over N processes (`--shard K/N`, or `--shard auto` in a Slurm array job
//! or a Kubernetes Indexed Job), all writing into one shared eval folder.
//!
//! The split is made once, by the shard that creates the folder, and kept
//! in `eval.json` ([`ShardPlan`]): every shard reads it back and computes
//! the same assignment, so each cell has exactly one owner. Cells are
//! balanced by their expected cost (longest first onto the least loaded
//! shard), measured in an earlier eval folder or estimated from the task.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::agent::run::Arch;
use crate::eval::running::record::RunRecord;
use crate::task::LoadedTask;

/// One shard of an eval: the `index`-th (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, 1 ≤ index ≤ count.
    pub index: usize,
    /// How many shards the eval has.
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A `--shard` that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// Not `K/N` nor `auto`.
    #[error("--shard {0}: expected K/N with 1 ≤ K ≤ N (e.g. 2/8), or `auto`")]
    Syntax(String),
    /// `auto` outside an array job.
    #[error("--shard auto: {0}")]
    Environment(String),
}

impl Shard {
    /// Parses `K/N`, or `auto`: from Slurm's `SLURM_ARRAY_TASK_ID`,
    /// `SLURM_ARRAY_TASK_MIN` and `SLURM_ARRAY_TASK_COUNT` (any array
    /// range, e.g. `--array=0-7` or `1-8`), else from a Kubernetes Indexed
    /// Job's `JOB_COMPLETION_INDEX` (0-based) with `GISCLAW_SHARDS` set to
    /// its completions. `env` reads a variable.
    pub fn parse(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        if text == "auto" {
            return Shard::from_environment(env);
        }
        let syntax = || ShardError::Syntax(text.to_string());
        let (k, n) = text.split_once('/').ok_or_else(syntax)?;
        let index: usize = k.trim().parse().map_err(|_| syntax())?;
        let count: usize = n.trim().parse().map_err(|_| syntax())?;
        if index == 0 || index > count {
            return Err(syntax());
        }
        Ok(Shard { index, count })
    }

    fn from_environment(env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, ShardError> {
        let number = |name: &str| -> Result<Option<usize>, ShardError> {
            env(name)
                .map(|v| {
                    v.trim().parse::<usize>().map_err(|_| {
                        ShardError::Environment(format!("{name}={v} is not a whole number"))
                    })
                })
                .transpose()
        };
        if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            let (Some(min), Some(count)) = (
                number("SLURM_ARRAY_TASK_MIN")?,
                number("SLURM_ARRAY_TASK_COUNT")?,
            ) else {
                return Err(ShardError::Environment(
                    "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_MIN or SLURM_ARRAY_TASK_COUNT is not".into(),
                ));
            };
            // A stepped range (`--array=0-14:5`) numbers tasks with gaps.
            if let Some(step) = number("SLURM_ARRAY_TASK_STEP")?.filter(|s| *s > 1) {
                return Err(ShardError::Environment(format!(
                    "the array has step {step}: submit a contiguous range (e.g. --array=0-{})",
                    count.saturating_sub(1)
                )));
            }
            let index = id.checked_sub(min).map(|i| i + 1).filter(|i| *i <= count);
            return index.map(|index| Shard { index, count }).ok_or_else(|| {
                ShardError::Environment(format!(
                    "SLURM_ARRAY_TASK_ID={id} is not in an array of {count} from {min}: submit a contiguous range"
                ))
            });
        }
        if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let count = number("GISCLAW_SHARDS")?.ok_or_else(|| {
                ShardError::Environment(
                    "JOB_COMPLETION_INDEX is set: set GISCLAW_SHARDS to the Job's completions"
                        .into(),
                )
            })?;
            if index >= count {
                return Err(ShardError::Environment(format!(
                    "JOB_COMPLETION_INDEX={index} is not below GISCLAW_SHARDS={count}"
                )));
            }
            return Ok(Shard {
                index: index + 1,
                count,
            });
        }
        Err(ShardError::Environment(
            "not in a Slurm array job (SLURM_ARRAY_TASK_ID) nor a Kubernetes Indexed Job (JOB_COMPLETION_INDEX): pass K/N".into(),
        ))
    }
}

/// One (task, arch, run) of a task-suite eval.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    /// Task id.
    pub task: String,
    /// Architecture name.
    pub arch: String,
    /// Run number (1-based).
    pub run: usize,
}

impl Cell {
    /// The cell's record file name (`T01.single.2.json`).
    pub fn file_name(&self) -> String {
        RunRecord::file_name(&self.task, &self.arch, self.run)
    }

    /// The key of its cost in [`ShardPlan::seconds`].
    fn cost_key(&self) -> String {
        format!("{}.{}", self.task, self.arch)
    }
}

/// Every cell of an eval of `tasks` × `archs` × `runs`, in its order:
/// tasks, then archs, then runs.
pub fn cells(tasks: &[String], archs: &[String], runs: usize) -> Vec<Cell> {
    let mut all = Vec::new();
    for task in tasks {
        for arch in archs {
            for run in 1..=runs {
                all.push(Cell {
                    task: task.clone(),
                    arch: arch.clone(),
                    run,
                });
            }
        }
    }
    all
}

/// How a sharded eval's cells are split: fixed in `eval.json` by the shard
/// that made the folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardPlan {
    /// How many shards.
    pub count: usize,
    /// Where the costs come from (`estimated from the tasks`, `measured in DIR`).
    pub basis: String,
    /// Expected wall seconds of one run, per `task.arch`.
    pub seconds: BTreeMap<String, u64>,
}

/// Seconds of one model round (a cloud model's answer and its cell): the
/// scale of the estimates, which only their ratios matter for.
const ROUND_SECONDS: u64 = 20;

/// Relative cost of one run of each architecture, for estimates: the Dual
/// Agent adds a planner and a replanner, the tree search expands several
/// candidates per step, the LLM alone answers once.
fn arch_factor(arch: &str) -> f64 {
    match arch {
        "dual" => 1.6,
        "mcts" => 4.0,
        "none" => 0.25,
        _ => 1.0,
    }
}

/// A task's expected model rounds: one per gold cell plus a look at the
/// data and the finish; without a gold, one per workflow line plus two.
fn estimated_rounds(loaded: &LoadedTask) -> u64 {
    let gold_rounds = loaded
        .gold
        .as_ref()
        .and_then(|g| std::fs::read_to_string(g).ok())
        .map(|s| crate::bench::verify::gold_messages(&loaded.task.id, &s).len() + 1);
    let workflow_rounds = loaded
        .task
        .workflow
        .as_deref()
        .map(|w| w.lines().filter(|l| !l.trim().is_empty()).count() + 2);
    gold_rounds.or(workflow_rounds).unwrap_or(6) as u64
}

impl ShardPlan {
    /// Costs estimated from the tasks themselves.
    pub fn estimate(tasks: &[LoadedTask], archs: &[Arch], count: usize) -> ShardPlan {
        let mut seconds = BTreeMap::new();
        for loaded in tasks {
            let base = (estimated_rounds(loaded) * ROUND_SECONDS) as f64;
            for arch in archs {
                let cost = (base * arch_factor(arch.name())).round().max(1.0) as u64;
                seconds.insert(format!("{}.{}", loaded.task.id, arch.name()), cost);
            }
        }
        ShardPlan {
            count,
            basis: "estimated from the tasks (gold cells + 2 rounds)".into(),
            seconds,
        }
    }

    /// Costs measured in an earlier eval folder `from` (the mean wall time
    /// of its runs of each task and arch); those it lacks are estimated,
    /// scaled by how the measured ones compare with their estimates.
    pub fn measured(
        from: &Path,
        tasks: &[LoadedTask],
        archs: &[Arch],
        count: usize,
    ) -> Result<ShardPlan, String> {
        let dir = from.join("records");
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("--costs-from {}: {e}", dir.display()))?;
        let records: Vec<RunRecord> = entries
            .flatten()
            .filter_map(|e| RunRecord::read(&e.path()))
            .collect();
        let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        for r in &records {
            let entry = sums.entry(format!("{}.{}", r.task, r.arch)).or_default();
            entry.0 += r.wall_seconds;
            entry.1 += 1;
        }
        let estimate = ShardPlan::estimate(tasks, archs, count);
        let (mut measured_sum, mut estimated_sum) = (0.0, 0.0);
        for (key, &est) in &estimate.seconds {
            if let Some((sum, n)) = sums.get(key) {
                measured_sum += sum / *n as f64;
                estimated_sum += est as f64;
            }
        }
        if estimated_sum == 0.0 {
            return Err(format!(
                "--costs-from {}: no recorded run of these tasks and architectures",
                from.display()
            ));
        }
        let scale = measured_sum / estimated_sum;
        let seconds = estimate
            .seconds
            .iter()
            .map(|(key, &est)| {
                let cost = match sums.get(key) {
                    Some((sum, n)) => sum / *n as f64,
                    None => est as f64 * scale,
                };
                (key.clone(), cost.round().max(1.0) as u64)
            })
            .collect();
        Ok(ShardPlan {
            count,
            basis: format!("measured in {}", from.display()),
            seconds,
        })
    }

    /// The expected seconds of one cell (1 when the plan lacks it).
    pub fn cost(&self, cell: &Cell) -> u64 {
        self.seconds.get(&cell.cost_key()).copied().unwrap_or(1)
    }

    /// The shard (1-based) of each of `cells`, in their order: longest
    /// first onto the least loaded shard (the lowest on a tie), a pure
    /// function of the cells and this plan.
    pub fn assign(&self, cells: &[Cell]) -> Vec<usize> {
        let count = self.count.max(1);
        let mut order: Vec<usize> = (0..cells.len()).collect();
        // Stable: equal costs keep the eval's order.
        order.sort_by_key(|&i| std::cmp::Reverse(self.cost(&cells[i])));
        let mut load = vec![0u64; count];
        let mut shard_of = vec![0; cells.len()];
        for i in order {
            let (least, _) = load
                .iter()
                .enumerate()
                .min_by_key(|&(s, l)| (*l, s))
                .unwrap_or((0, &0));
            load[least] += self.cost(&cells[i]);
            shard_of[i] = least + 1;
        }
        shard_of
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn shards_parse_from_k_of_n_and_from_array_jobs() {
        let none = env(&[]);
        assert_eq!(
            Shard::parse("2/8", &none).unwrap(),
            Shard { index: 2, count: 8 }
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0"] {
            assert!(
                matches!(Shard::parse(bad, &none), Err(ShardError::Syntax(_))),
                "{bad}"
            );
        }
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::parse("auto", &slurm).unwrap(),
            Shard { index: 3, count: 4 }
        );
        let stepped = env(&[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
            ("SLURM_ARRAY_TASK_STEP", "5"),
        ]);
        assert!(Shard::parse("auto", &stepped)
            .unwrap_err()
            .to_string()
            .contains("step 5"));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0"), ("GISCLAW_SHARDS", "10")]);
        assert_eq!(
            Shard::parse("auto", &k8s).unwrap(),
            Shard {
                index: 1,
                count: 10
            }
        );
        let k8s_alone = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert!(Shard::parse("auto", &k8s_alone)
            .unwrap_err()
            .to_string()
            .contains("GISCLAW_SHARDS"));
        assert!(Shard::parse("auto", &none)
            .unwrap_err()
            .to_string()
            .contains("pass K/N"));
    }

    fn plan(count: usize, costs: &[(&str, u64)]) -> ShardPlan {
        ShardPlan {
            count,
            basis: "test".into(),
            seconds: costs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    fn cell(task: &str, run: usize) -> Cell {
        Cell {
            task: task.into(),
            arch: "single".into(),
            run,
        }
    }

    #[test]
    fn cells_are_balanced_by_cost_longest_first_and_the_same_every_time() {
        let p = plan(
            3,
            &[("T1.single", 90), ("T2.single", 30), ("T3.single", 10)],
        );
        let cells: Vec<Cell> = ["T1", "T2", "T3"]
            .iter()
            .flat_map(|t| (1..=3).map(move |r| cell(t, r)))
            .collect();
        let shards = p.assign(&cells);
        // The three long runs go one per shard, then the rest balance.
        assert_eq!(&shards[..3], &[1, 2, 3]);
        let mut load = [0u64; 3];
        for (c, s) in cells.iter().zip(&shards) {
            load[s - 1] += p.cost(c);
        }
        assert_eq!(load, [130, 130, 130], "{shards:?}");
        assert_eq!(shards, p.assign(&cells), "deterministic");
        // Every cell has exactly one shard.
        assert!(shards.iter().all(|s| (1..=3).contains(s)));
    }

    #[test]
    fn more_shards_than_cells_leave_some_shards_idle() {
        let p = plan(4, &[]);
        let cells = vec![cell("T1", 1), cell("T1", 2)];
        assert_eq!(p.assign(&cells), vec![1, 2]);
    }
}
