//! `solution.py`: the successful cells of a run, consolidated into one
//! script that runs on its own with the venv's python, from the work dir.

use crate::sandbox::preamble::{helpers_for, SESSION_IMPORTS};

/// Builds the script from the cells, in order; it runs from its own
/// folder (a run's, where `data/` is linked).
pub fn consolidate<'a>(task_id: &str, cells: impl IntoIterator<Item = &'a str>) -> String {
    script(task_id, cells, None)
}

/// [`consolidate`] for a script saved elsewhere (chat's `/save FILE`): it
/// runs in `workdir`, the folder whose `data/` and `pred_results/` its
/// cells name.
pub fn consolidate_for<'a>(
    task_id: &str,
    cells: impl IntoIterator<Item = &'a str>,
    workdir: &std::path::Path,
) -> String {
    script(task_id, cells, Some(workdir))
}

fn script<'a>(
    task_id: &str,
    cells: impl IntoIterator<Item = &'a str>,
    workdir: Option<&std::path::Path>,
) -> String {
    let cells: Vec<&str> = cells.into_iter().collect();
    let (run_from, chdir) = match workdir {
        None => (
            "Run it from its folder with the sandbox's python.".to_string(),
            "os.chdir(os.path.dirname(os.path.abspath(__file__)))".to_string(),
        ),
        Some(dir) => (
            "Run it with the sandbox's python: it works in the session's folder, where data/ is linked and pred_results/ is.".to_string(),
            format!("os.chdir({})", python_string(&dir.to_string_lossy())),
        ),
    };
    let mut script = format!(
        "#!/usr/bin/env python3\n\"\"\"gisclaw solution for task {task_id}: the successful cells of the run, in order.\n\n{run_from}\n\"\"\"\n\
import os\n\n{chdir}\n\n\
import matplotlib\nmatplotlib.use(\"Agg\")\n{SESSION_IMPORTS}"
    );
    script.push_str(&helpers_for(&cells));
    for (i, cell) in cells.iter().enumerate() {
        script.push_str(&format!("\n# %% cell {}\n", i + 1));
        script.push_str(cell.trim_end());
        script.push('\n');
    }
    script
}

/// `text` as a Python string literal.
fn python_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
}

/// Splits a script into cells at lines starting with `# %%`; cells with
/// nothing but comments and blank lines are dropped.
pub fn split_cells(source: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    for line in source.lines() {
        if line.trim_start().starts_with("# %%") {
            cells.push(String::new());
        } else {
            if let Some(cell) = cells.last_mut() {
                cell.push_str(line);
                cell.push('\n');
            }
        }
    }
    cells.retain(|c| {
        c.lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    });
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_split_at_percent_markers_and_blank_cells_drop() {
        let cells = split_cells("# only a comment\n# %%\na = 1\n# %% second\nb = 2\n# %%\n\n");
        assert_eq!(cells, vec!["a = 1\n".to_string(), "b = 2\n".to_string()]);
    }

    #[test]
    fn cells_are_kept_in_order_and_helpers_inlined_only_when_used() {
        let plain = consolidate("T1", ["a = 1", "print(a)"]);
        assert!(plain.find("a = 1").unwrap() < plain.find("print(a)").unwrap());
        assert!(!plain.contains("def load_raster"));
        let with = consolidate("T1", ["d, m = load_raster('x.tif')"]);
        assert!(with.contains("def load_raster"));
    }
}
