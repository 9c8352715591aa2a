//! `gisclaw memory show|clear`: the Error Memory kept across tasks.

use std::process::ExitCode;

use anyhow::Context;
use gisclaw::agent::memory::{default_path, ErrorMemory};

/// `gisclaw memory …`.
#[derive(clap::Subcommand, Debug)]
pub enum MemoryCommand {
    /// The remembered errors, each with the fix that followed it.
    Show,
    /// Forget them all.
    Clear,
}

/// Shows the remembered errors and fixes, or forgets them all.
pub fn run(command: MemoryCommand) -> anyhow::Result<ExitCode> {
    let path = default_path();
    let mut memory = ErrorMemory::load(&path);
    if matches!(command, MemoryCommand::Clear) {
        let n = memory.entries().len();
        memory
            .clear()
            .with_context(|| format!("removing {}", path.display()))?;
        say!("forgot {n} remembered error(s) ({})", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let entries = memory.entries();
    say!(
        "{} remembered error(s) in {}",
        entries.len(),
        path.display()
    );
    for e in entries {
        say!("\n{}  (seen {}×; e.g. {})", e.signature, e.hits, e.example);
        for line in e.fix.lines().take(8) {
            say!("    {line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
