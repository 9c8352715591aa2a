//! `gisclaw exec`: run a script in a sandbox session, cell by cell.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use gisclaw::agent::solution;
use gisclaw::observation;
use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, SessionDirs, Zygote};

pub fn run(
    file: PathBuf,
    workdir: PathBuf,
    cell_timeout: u64,
    no_confine: bool,
    sandbox: &super::common::SandboxArgs,
) -> anyhow::Result<ExitCode> {
    let source = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .context("reading the script from standard input")?
    } else {
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?
    };
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(cell_timeout),
        confine: !no_confine,
        ..sandbox.config()?
    };
    gisclaw::interrupt::install();
    let zygote = Zygote::start(config)?;
    // The folder is the user's: lent to the sandbox for this run, its files
    // keeping their owners (see gisclaw::sandbox::workdir).
    let dirs = SessionDirs {
        lend: true,
        ..SessionDirs::work(&workdir)
    };
    let mut session = Session::open_in(&zygote, &dirs, zygote.config().clone())?;
    let _stopper = gisclaw::interrupt::CellStopper::start(session.canceller());
    let mut all_ok = true;
    for code in solution::split_cells(&source) {
        if gisclaw::interrupt::requested().is_some() {
            break;
        }
        let outcome = session.execute(&code)?;
        say!(
            "── cell {} ({}, {} ms)",
            outcome.cell,
            outcome.status,
            outcome.wall.as_millis()
        );
        say_part!("{}", observation::render(&outcome));
        all_ok &= outcome.status == CellStatus::Ok;
    }
    if let Some(signal) = gisclaw::interrupt::requested() {
        say_err!(
            "gisclaw: {}",
            gisclaw::interrupt::stop_reason().unwrap_or_default()
        );
        return Ok(gisclaw::interrupt::exit_code(signal));
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
