//! A one-shot `gisclaw exec` of one trivial cell, the whole process as the
//! shell sees it: with the per-user sandbox service warm (what every
//! command after the first gets), and with `--no-daemon` (its own zygote,
//! the stack imported anew) — against the straightforward baseline, run
//! interleaved in the same process: one Python process that imports the
//! modules the zygote preloads and `exec`s the cell, as the Python agent
//! implementations do.
//!
//! Run with `make bench` (or `cargo bench --bench one_shot`). Goal: warm
//! service / baseline ≤ 0.1.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use gisclaw::sandbox::{SandboxConfig, Zygote};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `command` to its end; panics unless it succeeded and printed 42.
fn timed(command: &mut Command) -> Duration {
    let start = Instant::now();
    let out = command.output().expect("runs");
    let took = start.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("42"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn main() {
    common::refuse_a_stale_worker();
    let config = SandboxConfig::default();
    let python = config.venv.join("bin/python");
    // The modules the zygote preloads, as the baseline's imports.
    let preloaded = Zygote::start(config)
        .expect("zygote starts")
        .info()
        .preloaded
        .clone();
    let cell = "exec(compile('print(6 * 7)', '<cell>', 'exec'))";
    let baseline_code = format!("import {}\n{cell}", preloaded.join(", "));
    // A lighter reference: six core modules, as a minimal agent imports.
    let core_code =
        format!("import numpy, pandas, shapely, geopandas, rasterio, matplotlib.pyplot\n{cell}");

    let dir = tempfile::tempdir().expect("temp dir");
    let runtime = dir.path().join("run");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).expect("work dir");
    let script = dir.path().join("cell.py");
    std::fs::write(&script, "print(6 * 7)\n").expect("script");
    let gisclaw = |extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gisclaw"));
        c.arg("exec")
            .arg(&script)
            .arg("--workdir")
            .arg(&work)
            .args(extra)
            .env("GISCLAW_RUNTIME_DIR", &runtime);
        c
    };
    let stop = |runtime: &Path| {
        let _ = Command::new(env!("CARGO_BIN_EXE_gisclaw"))
            .args(["sandbox", "stop"])
            .env("GISCLAW_RUNTIME_DIR", runtime)
            .output();
    };

    // The first command starts the service (the cold start, once).
    let first = timed(&mut gisclaw(&[]));
    let rounds = 9;
    let (mut base, mut core, mut warm, mut own) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        base.push(timed(Command::new(&python).args(["-c", &baseline_code])));
        core.push(timed(Command::new(&python).args(["-c", &core_code])));
        warm.push(timed(&mut gisclaw(&[])));
        own.push(timed(&mut gisclaw(&["--no-daemon"])));
    }
    stop(&runtime);
    let (base, core, warm, own) = (median(base), median(core), median(warm), median(own));

    println!(
        "one-shot `gisclaw exec` of one trivial cell, whole process (medians of {rounds} interleaved rounds)"
    );
    println!(
        "  (a) python: import the zygote's {} modules, exec the cell      {:>9.1} ms",
        preloaded.len(),
        ms(base)
    );
    println!(
        "  (a') python: import six core modules, exec the cell             {:>9.1} ms",
        ms(core)
    );
    println!(
        "  (b) gisclaw exec, sandbox service warm                          {:>9.1} ms",
        ms(warm)
    );
    println!(
        "  (c) gisclaw exec --no-daemon (own zygote, imports anew)         {:>9.1} ms",
        ms(own)
    );
    println!(
        "      the first command, which starts the service                 {:>9.1} ms",
        ms(first)
    );
    let ratio = warm.as_secs_f64() / base.as_secs_f64();
    println!(
        "  ratio (b)/(a) = {ratio:.3}  (goal <= 0.1: {}); (b)/(a') = {:.3}; (c)/(a) = {:.2}",
        if ratio <= 0.1 { "met" } else { "NOT met" },
        warm.as_secs_f64() / core.as_secs_f64(),
        own.as_secs_f64() / base.as_secs_f64()
    );
}
