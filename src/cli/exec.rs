//! `gisclaw exec`: run a script in a sandbox session, cell by cell.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use gisclaw::observation;
use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, Zygote};

/// Splits a script into cells at `# %%` lines.
fn split_cells(source: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    for line in source.lines() {
        if line.trim_start().starts_with("# %%") {
            cells.push(String::new());
        } else {
            let cell = cells.last_mut().expect("at least one cell");
            cell.push_str(line);
            cell.push('\n');
        }
    }
    cells.retain(|c| c.lines().any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#')));
    cells
}

pub fn run(file: PathBuf, workdir: PathBuf, cell_timeout: u64, no_confine: bool) -> anyhow::Result<ExitCode> {
    let source = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading the script from standard input")?
    } else {
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?
    };
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(cell_timeout),
        confine: !no_confine,
        ..SandboxConfig::default()
    };
    let zygote = Zygote::start(config)?;
    let mut session = Session::open(&zygote, &workdir)?;
    let mut all_ok = true;
    for code in split_cells(&source) {
        let outcome = session.execute(&code)?;
        println!("── cell {} ({:?}, {} ms)", outcome.cell, outcome.status, outcome.wall.as_millis());
        print!("{}", observation::render(&outcome));
        all_ok &= outcome.status == CellStatus::Ok;
    }
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::split_cells;

    #[test]
    fn cells_split_at_percent_markers_and_blank_cells_drop() {
        let cells = split_cells("# only a comment\n# %%\na = 1\n# %% second\nb = 2\n# %%\n\n");
        assert_eq!(cells, vec!["a = 1\n".to_string(), "b = 2\n".to_string()]);
    }
}
