//! Whether a run's record reproduces its outputs: after `finish`, the
//! cells of `solution.py` (the session's journal) run again, in order, in
//! a fresh session on the same inputs, writing into a scratch run folder
//! (`OUT/reproduce/`); each file the run left in `pred_results/` is then
//! compared with the one the reproduction wrote: the same bytes, or the
//! same content by the eval's output comparison (a GeoPackage's timestamps
//! differ, its features do not). The scratch folder is removed when
//! everything reproduced and kept for inspection when not.
//!
//! A failed reproduction is a warning in `run.json`, never a failure of
//! the task.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::agent::transcript::Reproduction;
use crate::beneath;
use crate::sandbox::{CellStatus, SandboxConfig, Session, Zygote};

/// The scratch run folder's name in the run's folder.
pub const SCRATCH: &str = "reproduce";

/// Largest output compared byte for byte in memory.
const COMPARED_BYTES: u64 = 256 << 20;

/// Score from which two outputs count as the same content.
const SAME_CONTENT: f64 = 0.99;

/// Runs `cells` in a fresh session in `out/reproduce/` (with the run's
/// data) and compares its `pred_results/` with the run's (an
/// [`crate::agent::run::Reproducer`]).
pub fn reproduce(
    zygote: &Arc<Zygote>,
    config: &SandboxConfig,
    data: Option<&Path>,
    out: &Path,
    cells: &[String],
) -> anyhow::Result<Reproduction> {
    let started = Instant::now();
    let scratch = out.join(SCRATCH);
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    let dirs = crate::agent::run::session_folders(&scratch, data)?;
    let mut report = Reproduction {
        cells: cells.len(),
        ..Reproduction::default()
    };
    {
        let mut session = Session::open_in(zygote, &dirs, config.clone())?;
        for (i, cell) in cells.iter().enumerate() {
            let outcome = session.execute(cell)?;
            if outcome.status != CellStatus::Ok {
                let why = outcome
                    .result
                    .error
                    .map(|e| format!("{}: {}", e.ename, crate::util::clip(&e.evalue, 80)))
                    .unwrap_or_else(|| match outcome.status {
                        CellStatus::TimedOut { limit, .. } => {
                            format!("stopped at its {} s limit", limit.as_secs())
                        }
                        CellStatus::Crashed { .. } => "the worker died".into(),
                        _ => "stopped".into(),
                    });
                report.failed_cells.push(format!("cell {} ({why})", i + 1));
            }
        }
        session.end();
    }
    compare(
        &out.join("pred_results"),
        &scratch.join("pred_results"),
        &mut report,
    );
    report.ok = report.failed_cells.is_empty() && report.differed.is_empty();
    report.seconds = started.elapsed().as_secs_f64();
    if report.ok {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(report)
}

/// Compares every file under `run` with its namesake under `again`, both
/// read as a cell could ([`beneath`]).
fn compare(run: &Path, again: &Path, report: &mut Reproduction) {
    let Ok(folder) = beneath::Dir::open(run) else {
        return;
    };
    let walk = folder.walk(beneath::WalkBudget::default());
    for (rel, entry) in walk.files {
        if !entry.is_file() || crate::card::is_sidecar(&rel) {
            continue;
        }
        report.outputs += 1;
        let name = rel.to_string_lossy().into_owned();
        let (first, second) = (run.join(&rel), again.join(&rel));
        let a = beneath::read_under(run, &first, COMPARED_BYTES);
        let b = beneath::read_under(again, &second, COMPARED_BYTES);
        match (a, b) {
            (Ok(a), Ok(b)) if a == b => {}
            (_, Err(beneath::Refused::Missing)) => {
                report
                    .differed
                    .push(format!("pred_results/{name} not made"));
            }
            _ => {
                // The same content in other bytes (timestamps, order)?
                let Ok(gold) = beneath::pin_under(run, &first) else {
                    continue;
                };
                let score = super::output_score::score_output(
                    &format!("pred_results/{name}"),
                    gold.path(),
                    &second,
                );
                if score.score < SAME_CONTENT {
                    report.differed.push(format!(
                        "pred_results/{name} differs (score {:.2}{})",
                        score.score,
                        if score.note.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", crate::util::clip(&score.note, 60))
                        }
                    ));
                }
            }
        }
    }
}
