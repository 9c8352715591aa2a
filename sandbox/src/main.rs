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

// A worker reports its failures over the protocol; it does not panic on a
// result. Tests may unwrap.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod capture;
mod confine;
mod interpreter;
mod isolate;
mod monitor;
mod session;
mod zygote;

use std::path::PathBuf;
use std::process::ExitCode;

/// Parsed command line.
struct Args {
    mode: String,
    venv: PathBuf,
    cache: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut argv = std::env::args().skip(1);
    let mode = argv
        .next()
        .ok_or("usage: gisclaw-worker zygote|probe --venv DIR --cache DIR")?;
    let (mut venv, mut cache) = (None, None);
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--venv" => venv = Some(PathBuf::from(value)),
            "--cache" => cache = Some(PathBuf::from(value)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        mode,
        venv: venv.ok_or("--venv DIR is required")?,
        cache: cache.ok_or("--cache DIR is required")?,
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
            eprintln!("gisclaw-worker: unknown mode {other} (expected zygote or probe)");
            ExitCode::from(2)
        }
    }
}
