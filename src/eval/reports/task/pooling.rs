//! Whether the runs a report pools were made from the same things: every
//! run of a task from the same task file, gold, generator and data, and
//! every run of one eval folder from the same model (see
//! [`crate::provenance`]). Records written before provenance are passed.

use std::collections::BTreeMap;

use super::load::EvalData;
use crate::eval::running::record::RunRecord;
use crate::provenance::{model_differences, task_differences, Provenance};

/// Lines shown at most; the rest are counted.
const SHOWN: usize = 12;

/// What differs among the runs of `evals`, one line per difference (the
/// first run found with it named), empty when the report may pool them.
pub fn conflicts(evals: &[EvalData]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut note = |at: String, differences: Vec<String>| {
        for d in differences {
            if seen.insert(d.clone()) {
                found.push(format!("{at}: {d}"));
            }
        }
    };
    // The first run of each task, over every folder: the task's reference.
    let mut task_reference: BTreeMap<&str, (&Provenance, String)> = BTreeMap::new();
    for eval in evals {
        let mut model_reference: Option<(&Provenance, String)> = None;
        for record in &eval.records {
            let Some(p) = &record.provenance else {
                continue;
            };
            let at = locate(eval, record);
            match &model_reference {
                None => model_reference = Some((p, at.clone())),
                Some((first, first_at)) => note(
                    format!("{at} (vs {first_at})"),
                    model_differences(&first.model, &p.model),
                ),
            }
            match task_reference.get(record.task.as_str()) {
                None => {
                    task_reference.insert(&record.task, (p, at));
                }
                Some((first, first_at)) => note(
                    format!("{at} (vs {first_at})"),
                    task_differences(&first.task, &p.task),
                ),
            }
        }
    }
    if found.len() > SHOWN {
        let more = found.len() - SHOWN;
        found.truncate(SHOWN);
        found.push(format!("… and {more} more"));
    }
    found
}

fn locate(eval: &EvalData, record: &RunRecord) -> String {
    format!(
        "{} {} {} run {}",
        eval.dir.display(),
        record.task,
        record.arch,
        record.run
    )
}
/// `Err` with one message naming every conflict when the runs of `evals`
/// cannot be pooled into one report (`--mixed-provenance` pools them
/// anyway).
pub fn check_poolable(evals: &[EvalData]) -> Result<(), String> {
    let conflicts = conflicts(evals);
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(format!(
        "eval report: the runs were not made from the same task, data or model, so they cannot be pooled (`gisclaw eval report … --mixed-provenance` pools them anyway):\n  {}",
        conflicts.join("\n  ")
    ))
}
