//! `gisclaw-worker`: the process that runs LLM-written Python for gisclaw.
//!
//! It embeds CPython through pyo3 and links nothing GDAL-related (the Python
//! wheels bring their own GDAL, GEOS and PROJ; mixing them with Debian's GDAL
//! in one process corrupts their calls). Modes:
//!
//! - `gisclaw-worker zygote --venv DIR --cache DIR`: import the GIS stack once,
//!   then fork one confined child per session on request. The control socket
//!   is standard input; see `gisclaw_protocol::messages`.
//! - `gisclaw-worker probe --venv DIR --cache DIR`: import the stack, print a
//!   `WorkerInfo` JSON document on stdout and exit (used by `gisclaw doctor`).
//! - `gisclaw-worker service --venv DIR --cache DIR --socket PATH
//!   --idle-seconds N`: the zygote as a per-user service on a Unix socket,
//!   outliving the command that started it; see [`service`].

// A worker reports its failures over the protocol; it does not panic on a
// result. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod capture;
use gisclaw_confine::confine;
mod interpreter;
use gisclaw_confine::isolate;
mod live;
mod monitor;
mod service;
mod session;
mod zygote;

use std::path::PathBuf;
use std::process::ExitCode;

/// Parsed command line.
struct Args {
    mode: String,
    venv: PathBuf,
    cache: PathBuf,
    /// The service's socket.
    socket: Option<PathBuf>,
    /// The service's idle timeout.
    idle_seconds: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut argv = std::env::args().skip(1);
    let mode = argv
        .next()
        .ok_or("usage: gisclaw-worker zygote|probe|service --venv DIR --cache DIR [--socket PATH --idle-seconds N]")?;
    let (mut venv, mut cache, mut socket, mut idle_seconds) = (None, None, None, 600);
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--venv" => venv = Some(PathBuf::from(value)),
            "--cache" => cache = Some(PathBuf::from(value)),
            "--socket" => socket = Some(PathBuf::from(value)),
            "--idle-seconds" => {
                idle_seconds = value
                    .parse()
                    .map_err(|_| format!("--idle-seconds: `{value}` is not a whole number"))?
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if mode == "service" && socket.is_none() {
        return Err("service needs --socket PATH".into());
    }
    Ok(Args {
        mode,
        venv: venv.ok_or("--venv DIR is required")?,
        cache: cache.ok_or("--cache DIR is required")?,
        socket,
        idle_seconds,
    })
}

/// Closes every descriptor above stderr that this process inherited but
/// for the control socket on fd 0: whatever gisclaw's own parent left open
/// must not reach a session.
fn close_inherited_fds() {
    // SAFETY: close_range takes integers only; nothing is open yet but the
    // standard streams and what the parent left.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
}

fn main() -> ExitCode {
    close_inherited_fds();
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => {
            eprintln!("gisclaw-worker: {msg}");
            return ExitCode::from(2);
        }
    };
    if let (true, Some(socket)) = (args.mode == "service", args.socket.clone()) {
        let service = service::ServiceArgs {
            socket,
            idle_seconds: args.idle_seconds,
        };
        return service::run(service, || {
            interpreter::Runtime::start(&args.venv, &args.cache).map_err(|e| e.to_string())
        });
    }
    let runtime = match interpreter::Runtime::start(&args.venv, &args.cache) {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("gisclaw-worker: {err}");
            return ExitCode::from(3);
        }
    };
    match args.mode.as_str() {
        "probe" => match runtime.worker_info() {
            Ok(info) => match serde_json::to_string(&info) {
                Ok(line) => {
                    println!("{line}");
                    runtime.flush_std_streams();
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("gisclaw-worker: {err}");
                    ExitCode::from(3)
                }
            },
            Err(err) => {
                eprintln!("gisclaw-worker: {err}");
                ExitCode::from(3)
            }
        },
        "zygote" => zygote::serve(runtime),
        other => {
            eprintln!("gisclaw-worker: unknown mode {other} (expected zygote, probe or service)");
            ExitCode::from(2)
        }
    }
}
