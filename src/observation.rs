//! Rendering a cell's outcome as the observation text the model reads.
//!
//! The worker already truncated stdout (head + latest tail), stderr and the
//! traceback (user frames kept, library frames collapsed); this module only
//! lays the parts out and adds what the agent side knows: timeouts, crashes
//! and namespace rebuilds.

use std::fmt::Write as _;

use crate::sandbox::{CellOutcome, CellStatus};

/// The observation text for one cell.
pub fn render(outcome: &CellOutcome) -> String {
    let mut text = String::new();
    let result = &outcome.result;
    if !result.stdout.is_empty() {
        text.push_str(result.stdout.trim_end());
        text.push('\n');
    }
    if !result.stderr.is_empty() {
        let _ = writeln!(text, "[stderr]\n{}", result.stderr.trim_end());
    }
    if let Some(err) = &result.error {
        let _ = writeln!(text, "[error]\n{}", err.traceback.trim_end());
    }
    match &outcome.status {
        CellStatus::TimedOut { limit, killed } => {
            let _ = writeln!(
                text,
                "[sandbox] the cell hit its {} s limit and was {}.",
                limit.as_secs(),
                if *killed { "killed" } else { "interrupted" }
            );
        }
        CellStatus::Cancelled { killed } => {
            let _ = writeln!(
                text,
                "[sandbox] the cell was cancelled{}.",
                if *killed {
                    " and its worker killed"
                } else {
                    ""
                }
            );
        }
        CellStatus::Crashed { exit } => {
            let how = exit
                .as_ref()
                .map(|e| e.to_string())
                .unwrap_or_else(|| "ended".into());
            let _ = writeln!(
                text,
                "[sandbox] the Python worker {how} while running this cell."
            );
        }
        CellStatus::Ok | CellStatus::Error => {}
    }
    if let Some(restore) = &outcome.restore {
        let _ = write!(
            text,
            "[sandbox] a new worker was started and {} earlier cell(s) replayed",
            restore.replayed
        );
        if restore.failed.is_empty() {
            text.push_str("; the namespace is back.\n");
        } else {
            let cells: Vec<String> = restore.failed.iter().map(|c| c.to_string()).collect();
            let _ = writeln!(
                text,
                "; cell(s) {} failed on replay, so their variables are missing.",
                cells.join(", ")
            );
        }
    }
    if !result.variables.is_empty() {
        text.push_str("[variables]\n");
        let mut type_only: Vec<(&str, String)> = Vec::new();
        for var in &result.variables {
            let mark = match var.change {
                gisclaw_protocol::VariableChange::New => "new",
                gisclaw_protocol::VariableChange::Changed => "changed",
                gisclaw_protocol::VariableChange::Listed => "",
            };
            if only_names_its_type(&var.summary, &var.kind) {
                type_only.push((mark, format!("{} ({})", var.name, var.kind)));
                continue;
            }
            let _ = writeln!(
                text,
                "  {} ({}, {mark}): {}",
                var.name, var.kind, var.summary
            );
        }
        // Objects whose summary would only repeat their type (plot
        // handles, default reprs): their names on one line.
        for mark in ["new", "changed", ""] {
            let names: Vec<&str> = type_only
                .iter()
                .filter(|(m, _)| *m == mark)
                .map(|(_, n)| n.as_str())
                .collect();
            if !names.is_empty() {
                let label = if mark.is_empty() {
                    "also"
                } else {
                    &format!("also {mark}")
                };
                let _ = writeln!(text, "  {label}: {}", names.join(", "));
            }
        }
    }
    for fig in &result.figures {
        let _ = writeln!(text, "[figure saved] {fig}");
    }
    if text.is_empty() {
        text.push_str("(no output)\n");
    }
    text
}

/// True when a variable's summary says nothing but its type: Python's
/// default repr without an address (`<matplotlib.image.AxesImage object>`).
fn only_names_its_type(summary: &str, kind: &str) -> bool {
    summary
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix(" object>"))
        .is_some_and(|path| {
            path.rsplit('.').next() == Some(kind)
                && path
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
}

/// Whether `line` starts a section of an observation on a line of its own
/// (`[stderr]`, `[error]`, `[variables]`).
pub fn is_section_header(line: &str) -> bool {
    line.starts_with('[') && line.trim_end().ends_with(']') && !line.contains(' ')
}

/// The exception line of an observation (the last line of its `[error]`
/// section), else its last non-blank line.
pub fn error_line(observation: &str) -> &str {
    let lines: Vec<&str> = observation.lines().collect();
    let section = lines
        .iter()
        .rposition(|l| l.trim() == "[error]")
        .map(|start| {
            let rest = &lines[start + 1..];
            let end = rest
                .iter()
                .position(|l| is_section_header(l) || l.starts_with(FINDING_PREFIX))
                .unwrap_or(rest.len());
            &rest[..end]
        });
    section
        .unwrap_or(&lines[..])
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim())
        .unwrap_or("no message")
}

/// The statement that raised, from a failed cell's observation: the source
/// line under the innermost `File "<cell-N>"` frame of its traceback
/// (`None` for a syntax error or an error raised outside the cell's code).
pub fn failing_statement(observation: &str) -> Option<&str> {
    let lines: Vec<&str> = observation.lines().collect();
    let frame = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("File \"<cell-"))?;
    let statement = lines.get(frame + 1)?.trim();
    (!statement.is_empty() && !statement.starts_with("File \"") && !statement.starts_with('['))
        .then_some(statement)
}

/// How a static analysis finding's line starts in an observation.
const FINDING_PREFIX: &str = "[static analysis]";

/// The static analysis findings of a cell, as lines appended to its
/// observation (empty when there are none); they follow the error and are
/// never taken for it ([`error_line`]).
pub fn render_findings(findings: &[crate::sandbox::Finding]) -> String {
    let mut text = String::new();
    for f in findings {
        let likely = if f.certain { "" } else { " (likely)" };
        text.push_str(&format!(
            "{FINDING_PREFIX} line {}: {}{likely}\n",
            f.line, f.message
        ));
    }
    text
}

/// True when a static-analysis finding's advice (what follows its first
/// `; `) is already in the error line: "`pykrige` is not available in this
/// sandbox; use scipy.interpolate … instead" beside the refused import's own
/// error, which says the same.
pub fn repeats_error(finding: &str, error: &str) -> bool {
    finding
        .split_once("; ")
        .is_some_and(|(_, advice)| advice.len() >= 12 && error.contains(advice))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exception_line_is_found_between_sections() {
        let obs = "out\n[stderr]\nwarn\n[error]\nTraceback (most recent call last):\n  File \"<cell-3>\"\nPermissionError: denied\n[variables]\n  wts (X, new): <x>\n";
        assert_eq!(error_line(obs), "PermissionError: denied");
        assert_eq!(error_line("only output\n\n"), "only output");
    }

    #[test]
    fn the_failing_statement_is_the_innermost_cell_frame() {
        let obs = "[error]\nTraceback (most recent call last):\n  File \"<cell-4>\", line 3, in <module>\n    zones = clip(parcels)\n  File \"<cell-2>\", line 1, in clip\n    return gpd.clip(g, mask_gdf)\n  [3 library frame(s) in geopandas]\nNameError: name 'mask_gdf' is not defined\n";
        assert_eq!(failing_statement(obs), Some("return gpd.clip(g, mask_gdf)"));
        let syntax = "[error]\n  File \"<cell-5>\", line 1\n    x = (1,\n        ^\nSyntaxError: '(' was never closed";
        assert_eq!(failing_statement(syntax), Some("x = (1,"));
        assert_eq!(failing_statement("[error]\nKeyError: 'POP'"), None);
    }

    #[test]
    fn a_finding_that_repeats_the_errors_advice_is_recognised() {
        let error = "ModuleNotFoundError: 'pykrige' is not available in this sandbox (package constraint); use scipy.interpolate (RBFInterpolator, griddata) instead";
        assert!(repeats_error(
            "`pykrige` is not available in this sandbox; use scipy.interpolate (RBFInterpolator, griddata) instead",
            error
        ));
        assert!(!repeats_error(
            "`gdf['Pop2020']`: no such column; nearest: 'POP_2020'",
            "KeyError: 'Pop2020'"
        ));
        assert!(!repeats_error("no advice here", error));
    }

    #[test]
    fn static_analysis_lines_after_the_error_are_not_the_error() {
        let finding = crate::sandbox::Finding {
            line: 2,
            kind: "attribute".into(),
            message: "`np.flot`: no such attribute".into(),
            certain: false,
        };
        let obs = format!(
            "[error]\nTraceback (most recent call last):\nAttributeError: no flot\n{}",
            render_findings(&[finding])
        );
        assert!(obs.ends_with("[static analysis] line 2: `np.flot`: no such attribute (likely)\n"));
        assert_eq!(error_line(&obs), "AttributeError: no flot");
    }
}
