//! `gisclaw eval status DIR`: how far a task-suite eval (sharded or not)
//! has come, read from its folder alone: per shard, the cells recorded,
//! running, failed and not started, and the time left.
//!
//! A cell is *done* when it has a record; *running* when its work dir
//! exists and the process of its shard is alive (it holds its claim in
//! `shards/`); *failed* when a `failed/` note says it could not be carried
//! out; else *missing* (not started, or left by a process that was killed). The time left of a shard is the expected time
//! of its cells not done (the mean wall time recorded for the same task
//! and arch, else the plan's cost scaled to what was recorded), divided by
//! how many runs the shard has been making at once (its records' summed
//! wall time over the span they cover).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::eval::running::claim::{live_holder, ClaimTimes};
use crate::eval::running::record::RunRecord;
use crate::eval::running::runner::{failures_dir, records_dir, run_claim, EvalError, Manifest};
use crate::eval::running::shard::{Cell, Shard};

/// Where one cell stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellState {
    /// Recorded.
    Done,
    /// Its work dir is changing.
    Running,
    /// Could not be carried out (`failed/`); `--resume` runs it again.
    Failed,
    /// Not started, or left by a killed process.
    Missing,
}

/// One shard's progress (the whole eval when it is not sharded).
#[derive(Debug, Clone)]
pub struct ShardStatus {
    /// The shard (`None`: not sharded).
    pub shard: Option<Shard>,
    /// Cells it owns.
    pub cells: usize,
    /// Recorded.
    pub done: usize,
    /// Running now.
    pub running: usize,
    /// Could not be carried out.
    pub failed: usize,
    /// Not started or interrupted.
    pub missing: usize,
    /// The process running the shard, when one is (`host pid N`).
    pub process: Option<String>,
    /// Runs it makes at once, as its records show (at least 1).
    pub parallel: f64,
    /// Expected seconds until its last cell is recorded (`None`: nothing
    /// to base it on yet).
    pub seconds_left: Option<f64>,
}

/// The progress of a whole eval.
#[derive(Debug, Clone)]
pub struct EvalStatus {
    /// eval.json.
    pub manifest: Manifest,
    /// Per shard, in order.
    pub shards: Vec<ShardStatus>,
    /// Expected seconds until the whole eval is recorded when every shard
    /// runs at once: the slowest shard's.
    pub eta_seconds: Option<f64>,
}

/// Reads the progress of the eval in `out` as of `now`.
pub fn status(out: &Path, now: SystemTime) -> Result<EvalStatus, EvalError> {
    let manifest = Manifest::read(out)?;
    if manifest.kind != crate::bench::SuiteKind::Tasks {
        return Err(EvalError::Folder {
            path: out.join("eval.json").display().to_string(),
            message: format!(
                "a {} suite's eval: `eval status` follows task-suite evals",
                manifest.kind.name()
            ),
        });
    }
    let cells = manifest.cells();
    let owners: Vec<usize> = match &manifest.shards {
        Some(plan) => plan.assign(&cells),
        None => vec![1; cells.len()],
    };
    let count = manifest.shards.as_ref().map_or(1, |p| p.count);
    let mut records: BTreeMap<Cell, (RunRecord, SystemTime)> = BTreeMap::new();
    for cell in &cells {
        let path = records_dir(out).join(cell.file_name());
        if let (Some(record), Ok(modified)) = (
            RunRecord::read(&path),
            std::fs::metadata(&path).and_then(|m| m.modified()),
        ) {
            records.insert(cell.clone(), (record, modified));
        }
    }
    let expected = Expected::new(&manifest, &cells, &records);
    let mut shards = Vec::new();
    for index in 1..=count {
        let mut s = ShardStatus {
            shard: manifest.shards.as_ref().map(|_| Shard { index, count }),
            cells: 0,
            done: 0,
            running: 0,
            failed: 0,
            missing: 0,
            process: None,
            parallel: 1.0,
            seconds_left: Some(0.0),
        };
        let shard = manifest.shards.as_ref().map(|_| Shard { index, count });
        let holder = live_holder(&run_claim(out, shard), &ClaimTimes::default(), now);
        s.process = holder.as_ref().map(|h| format!("{} pid {}", h.host, h.pid));
        let since = holder.map(|h| SystemTime::UNIX_EPOCH + Duration::from_secs(h.started));
        let mut mine = Vec::new();
        for (cell, _) in cells.iter().zip(&owners).filter(|(_, o)| **o == index) {
            s.cells += 1;
            let state = cell_state(out, cell, records.contains_key(cell), since);
            match state {
                CellState::Done => s.done += 1,
                CellState::Running => s.running += 1,
                CellState::Failed => s.failed += 1,
                CellState::Missing => s.missing += 1,
            }
            if state != CellState::Done {
                s.seconds_left = match (s.seconds_left, expected.of(cell)) {
                    (Some(left), Some(e)) => Some(left + e),
                    _ => None,
                };
            }
            if let Some(r) = records.get(cell) {
                mine.push(r);
            }
        }
        s.parallel = parallelism(&mine);
        s.seconds_left = s.seconds_left.map(|left| left / s.parallel);
        shards.push(s);
    }
    let eta_seconds = shards
        .iter()
        .map(|s| s.seconds_left)
        .try_fold(0.0f64, |worst, left| left.map(|l| worst.max(l)));
    Ok(EvalStatus {
        manifest,
        shards,
        eta_seconds,
    })
}

/// `since`: when the live process of the cell's shard started, if one runs.
fn cell_state(out: &Path, cell: &Cell, recorded: bool, since: Option<SystemTime>) -> CellState {
    if recorded {
        return CellState::Done;
    }
    let workdir = out
        .join("runs")
        .join(&cell.task)
        .join(format!("{}-{}", cell.arch, cell.run));
    // Running: its shard's live process wrote into its work dir (a dir
    // left by a killed process is older than the process now running).
    let written = [workdir.join("transcript.jsonl"), workdir]
        .iter()
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .max();
    if since.is_some_and(|since| written.is_some_and(|w| w >= since)) {
        CellState::Running
    } else if failures_dir(out).join(cell.file_name()).is_file() {
        CellState::Failed
    } else {
        CellState::Missing
    }
}

/// How many runs at once the records show: their summed wall time over
/// the span from the first start to the last end (at least 1).
fn parallelism(records: &[&(RunRecord, SystemTime)]) -> f64 {
    let ends: Vec<SystemTime> = records.iter().map(|(_, t)| *t).collect();
    let starts: Vec<SystemTime> = records
        .iter()
        .map(|(r, t)| {
            t.checked_sub(Duration::from_secs_f64(r.wall_seconds.max(0.0)))
                .unwrap_or(*t)
        })
        .collect();
    let (Some(first), Some(last)) = (starts.iter().min(), ends.iter().max()) else {
        return 1.0;
    };
    let span = last.duration_since(*first).map_or(0.0, |d| d.as_secs_f64());
    let busy: f64 = records.iter().map(|(r, _)| r.wall_seconds.max(0.0)).sum();
    if span <= 0.0 {
        return 1.0;
    }
    (busy / span).max(1.0)
}

/// The expected wall seconds of a cell.
struct Expected {
    /// Mean recorded wall time per `task.arch`.
    measured: BTreeMap<(String, String), f64>,
    /// Recorded wall time ÷ the plan's cost, over the recorded cells.
    plan_scale: Option<f64>,
    /// Mean recorded wall time of any cell.
    overall: Option<f64>,
    plan: Option<crate::eval::running::shard::ShardPlan>,
}

impl Expected {
    fn new(
        manifest: &Manifest,
        cells: &[Cell],
        records: &BTreeMap<Cell, (RunRecord, SystemTime)>,
    ) -> Expected {
        let mut sums: BTreeMap<(String, String), (f64, usize)> = BTreeMap::new();
        let (mut wall, mut cost) = (0.0, 0.0);
        for cell in cells {
            if let Some((r, _)) = records.get(cell) {
                let e = sums
                    .entry((cell.task.clone(), cell.arch.clone()))
                    .or_default();
                e.0 += r.wall_seconds;
                e.1 += 1;
                wall += r.wall_seconds;
                if let Some(plan) = &manifest.shards {
                    cost += plan.cost(cell) as f64;
                }
            }
        }
        Expected {
            measured: sums
                .into_iter()
                .map(|(k, (s, n))| (k, s / n as f64))
                .collect(),
            plan_scale: (cost > 0.0).then(|| wall / cost),
            overall: (!records.is_empty()).then(|| wall / records.len() as f64),
            plan: manifest.shards.clone(),
        }
    }

    fn of(&self, cell: &Cell) -> Option<f64> {
        if let Some(m) = self.measured.get(&(cell.task.clone(), cell.arch.clone())) {
            return Some(*m);
        }
        match (&self.plan, self.plan_scale) {
            (Some(plan), Some(scale)) => Some(plan.cost(cell) as f64 * scale),
            _ => self.overall,
        }
    }
}

/// Cells without a record, per shard (`None`: the eval is not sharded),
/// in shard order.
pub fn missing_by_shard(out: &Path, manifest: &Manifest) -> Vec<(Option<Shard>, usize)> {
    let all = manifest.cells();
    let records = records_dir(out);
    let missing = |c: &Cell| !records.join(c.file_name()).is_file();
    match &manifest.shards {
        None => vec![(None, all.iter().filter(|c| missing(c)).count())],
        Some(plan) => {
            let mut counts = vec![0; plan.count];
            for (s, c) in plan.assign(&all).into_iter().zip(&all) {
                counts[s - 1] += usize::from(missing(c));
            }
            counts
                .into_iter()
                .enumerate()
                .map(|(i, n)| {
                    let shard = Shard {
                        index: i + 1,
                        count: plan.count,
                    };
                    (Some(shard), n)
                })
                .collect()
        }
    }
}

/// `1 h 05 min`, `3 min`, `40 s`.
pub fn human_duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human_duration(40.2), "40 s");
        assert_eq!(human_duration(150.0), "3 min");
        assert_eq!(human_duration(3900.0), "1 h 05 min");
    }

    #[test]
    fn parallelism_is_busy_time_over_the_span_of_the_records() {
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        let record = |wall: f64| {
            RunRecord {
            wall_seconds: wall,
            ..serde_json::from_value(serde_json::json!({
                "task": "T", "arch": "single", "run": 1, "status": "finished", "reason": "",
                "success": true, "rounds": 1, "tokens_in": 0, "tokens_out": 0,
                "llm_seconds": 0.0, "sandbox_seconds": 0.0, "wall_seconds": 0.0,
                "cells": 0, "failed_cells": 0, "code_lines": 0, "cell_errors": {},
                "code": {"bleu4": 0.0, "rouge_l": 0.0, "edit_similarity": 0.0,
                         "api": {"precision": 0.0, "recall": 0.0, "f1": 0.0}, "ops": [], "calls": []},
                "outputs": [], "q_out": 0.0
            }))
            .unwrap()
        }
        };
        // Two runs of 100 s side by side, then one alone: 300 s busy in 200 s.
        let records = [
            (record(100.0), at(1100)),
            (record(100.0), at(1100)),
            (record(100.0), at(1200)),
        ];
        let refs: Vec<_> = records.iter().collect();
        assert!((parallelism(&refs) - 1.5).abs() < 1e-9);
        assert_eq!(parallelism(&[]), 1.0);
    }
}
