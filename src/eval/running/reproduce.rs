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

use crate::beneath;
use crate::record::Reproduction;
use crate::sandbox::{CellStatus, SandboxConfig, Session, Zygote};

/// The scratch run folder's name in the run's folder.
pub const SCRATCH: &str = "reproduce";

/// Largest output compared byte for byte (streamed, 64 KiB at a time: a
/// cell's two sparse 512 MiB files cost no memory).
const COMPARED_BYTES: u64 = 4 << 30;

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
        // SIGTERM/SIGINT/SIGHUP stop the reproduction's cell too.
        let _stopper = crate::interrupt::CellStopper::start(session.canceller());
        for (i, cell) in cells.iter().enumerate() {
            if let Some(why) = crate::interrupt::stop_reason() {
                report
                    .failed_cells
                    .push(format!("cell {} not run ({why})", i + 1));
                break;
            }
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
/// read as a cell could ([`beneath`]): first byte for byte, streamed;
/// files that differ are compared by content by the eval's comparison,
/// each side in its own confined reader (`crate::reader`). Stops at a
/// stop request (a signal), saying so.
fn compare(run: &Path, again: &Path, report: &mut Reproduction) {
    let (Ok(first), Ok(second)) = (beneath::Dir::open(run), beneath::Dir::open(again)) else {
        return;
    };
    let walk = first.walk(beneath::WalkBudget::default());
    let run_dir = run.parent().unwrap_or(run);
    let again_dir = again.parent().unwrap_or(again);
    for (rel, entry) in walk.files {
        if !entry.is_file() || crate::card::is_sidecar(&rel) {
            continue;
        }
        if let Some(why) = crate::interrupt::stop_reason() {
            report
                .differed
                .push(format!("comparison not finished ({why})"));
            return;
        }
        report.outputs += 1;
        let name = rel.to_string_lossy().into_owned();
        match same_bytes(&first, &second, &rel) {
            Ok(true) => {}
            Err(beneath::Refused::Missing) => {
                report
                    .differed
                    .push(format!("pred_results/{name} not made"));
            }
            _ => {
                // The same content in other bytes (timestamps, order)?
                let score = crate::eval::metrics::output_score::score_output(
                    &format!("pred_results/{name}"),
                    run_dir,
                    again_dir,
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

/// Whether `rel` has the same bytes under both folders, streamed (at most
/// [`COMPARED_BYTES`]; a stop request ends it as "not the same"). `Err`
/// when the second side's file cannot be read (`Missing` when absent).
fn same_bytes(
    first: &beneath::Dir,
    second: &beneath::Dir,
    rel: &Path,
) -> Result<bool, beneath::Refused> {
    use std::io::Read;
    let (mut b, b_facts) = second.open_file(rel)?;
    let Ok((mut a, a_facts)) = first.open_file(rel) else {
        return Ok(false);
    };
    if a_facts.len != b_facts.len || a_facts.len > COMPARED_BYTES {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    let mut left = a_facts.len;
    while left > 0 {
        if crate::interrupt::requested().is_some() {
            return Ok(false);
        }
        let n = (x.len() as u64).min(left) as usize;
        if a.read_exact(&mut x[..n]).is_err() || b.read_exact(&mut y[..n]).is_err() {
            return Ok(false);
        }
        if x[..n] != y[..n] {
            return Ok(false);
        }
        left -= n as u64;
    }
    Ok(true)
}
