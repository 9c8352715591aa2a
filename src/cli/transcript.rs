//! `gisclaw transcript to-ipynb DIR`: any run's record (a `solve` or
//! `eval` run folder, an exported chat, an MCP session's folder) as a
//! Jupyter notebook with the cells' real outputs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use gisclaw::notebook::{self, NotebookMode};

use super::common::UsageError;

/// What `gisclaw transcript` does.
#[derive(Subcommand)]
pub enum TranscriptCommand {
    /// Write DIR/solution.ipynb from DIR/transcript.jsonl, DIR/solution.py
    /// and the figures under DIR/pred_results/.
    ToIpynb {
        /// The run's folder.
        dir: PathBuf,
        /// Keep every cell tried, the failed ones marked (the default keeps
        /// the cells of solution.py).
        #[arg(long)]
        full: bool,
        /// Where to write the notebook (default DIR/solution.ipynb; it
        /// reads `data/` and `pred_results/` relative to its folder when run).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Runs a `gisclaw transcript` command.
pub fn run(command: TranscriptCommand) -> anyhow::Result<ExitCode> {
    match command {
        TranscriptCommand::ToIpynb { dir, full, out } => to_ipynb(&dir, full, out.as_deref()),
    }
}

fn to_ipynb(dir: &Path, full: bool, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    if !dir.join("transcript.jsonl").is_file() {
        return Err(UsageError(format!(
            "{}: no transcript.jsonl here (name a run's folder: solve --out, an eval run, a chat /export)",
            dir.display()
        ))
        .into());
    }
    let mode = if full {
        NotebookMode::Full
    } else {
        NotebookMode::Cells
    };
    let (path, cells) =
        notebook::write_for_run(dir, mode, out).map_err(|e| UsageError(e.to_string()))?;
    say!("wrote {} ({cells} cells)", path.display());
    Ok(ExitCode::SUCCESS)
}
