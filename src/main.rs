//! The `gisclaw` command line. Subcommands only parse and dispatch.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, Zygote};
use gisclaw::{doctor, observation};

/// A runtime that lets an LLM do real, multi-step GIS analysis.
#[derive(Parser)]
#[command(name = "gisclaw", version, about)]
struct Cli {
    /// More log output (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Report what is installed, what is missing and how to fix it.
    Doctor,
    /// Run a Python file in a sandbox session, cell by cell (cells are split
    /// at lines starting with `# %%`), and print each observation.
    Exec {
        /// The Python file (`-` for standard input).
        file: PathBuf,
        /// The session's work dir (its cwd; outputs go to pred_results/).
        #[arg(long, default_value = ".")]
        workdir: PathBuf,
        /// Per-cell time limit in seconds.
        #[arg(long, default_value_t = 120)]
        cell_timeout: u64,
        /// Run without Landlock and seccomp (rlimits still apply).
        #[arg(long)]
        no_confine: bool,
    },
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "gisclaw=debug,info",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::env::var_os("NO_COLOR").is_none())
        .init();
}

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

fn exec(file: PathBuf, workdir: PathBuf, cell_timeout: u64, no_confine: bool) -> anyhow::Result<ExitCode> {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Doctor => {
            let report = doctor::run(&SandboxConfig::default());
            for line in &report.lines {
                println!("{line}");
            }
            Ok(if report.problems == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Exec {
            file,
            workdir,
            cell_timeout,
            no_confine,
        } => exec(file, workdir, cell_timeout, no_confine),
    };
    result.unwrap_or_else(|err| {
        eprintln!("gisclaw: {err:#}");
        ExitCode::from(2)
    })
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
