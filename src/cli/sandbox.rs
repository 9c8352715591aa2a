//! `gisclaw sandbox status|stop`: the per-user sandbox services (warm
//! zygotes that outlive the commands that started them).

use std::process::ExitCode;

use clap::Subcommand;
use gisclaw::sandbox::service::{self, Found};

use super::common::{SandboxArgs, UsageError};

/// What `gisclaw sandbox` does.
#[derive(Subcommand)]
pub enum SandboxCommand {
    /// The running services: pid, age, idle timeout, clients, sessions
    /// forked, and whether this shell's commands would use it.
    Status {
        /// Also print the settings each was started for.
        #[arg(long)]
        settings: bool,
    },
    /// Stop every service (running sessions go on until their commands end
    /// them); the next command starts a fresh one.
    Stop,
}

/// Runs a `gisclaw sandbox` command.
pub fn run(command: SandboxCommand) -> anyhow::Result<ExitCode> {
    match command {
        SandboxCommand::Status { settings } => status(settings),
        SandboxCommand::Stop => stop(),
    }
}

fn status(with_settings: bool) -> anyhow::Result<ExitCode> {
    let config = SandboxArgs::default().config()?;
    let dir = service::runtime_dir().map_err(|e| UsageError(e.to_string()))?;
    let (current, _) = service::socket_for(&config).map_err(|e| UsageError(e.to_string()))?;
    let found = service::list().map_err(|e| UsageError(e.to_string()))?;
    if config.service.is_none() {
        say!("the sandbox service is turned off ([sandbox] daemon = false): each command starts its own zygote");
    }
    if found.is_empty() {
        say!(
            "no sandbox service runs (in {}); the next command starts one",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for Found { socket, status } in &found {
        let mark = if *socket == current {
            "  (this shell's)"
        } else {
            ""
        };
        match status {
            Ok(s) => {
                say!(
                    "{}{mark}\n  pid {}, up {}, exits after {} without clients; {} client(s) now (this one included), {} session(s) forked",
                    socket.display(),
                    s.pid,
                    duration(s.uptime_seconds),
                    duration(s.idle_timeout_seconds),
                    s.clients,
                    s.sessions_forked
                );
                if with_settings {
                    for line in &s.settings {
                        say!("    {line}");
                    }
                }
            }
            Err(why) => say!("{}{mark}\n  {why}", socket.display()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn stop() -> anyhow::Result<ExitCode> {
    let stopped = service::stop_all().map_err(|e| UsageError(e.to_string()))?;
    if stopped.is_empty() {
        say!("no sandbox service runs");
    }
    for Found { socket, status } in &stopped {
        match status {
            Ok(s) => say!(
                "stopped {} (pid {}, {} session(s) forked)",
                socket.display(),
                s.pid,
                s.sessions_forked
            ),
            Err(why) => say!("removed {} ({why})", socket.display()),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Seconds as `1h 02m`, `3m 05s` or `12s`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}
