//! Time to a session that is ready to execute, against the baseline of a
//! plain Python process importing the stack — both measured in this run.
//!
//! Run with `make bench` (or `cargo bench --bench sandbox_start`). Goal: the
//! ratio (warm-zygote session / plain import) is at most 0.05.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use gisclaw::sandbox::{SandboxConfig, Session, Zygote};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    common::refuse_a_stale_worker();
    let config = SandboxConfig::default();
    let python = config.venv.join("bin/python");
    let baseline_runs = 5;
    let session_runs = 30;

    let baseline = median(
        (0..baseline_runs)
            .map(|_| {
                let start = Instant::now();
                let status = Command::new(&python)
                    .args(["-c", "import geopandas, rasterio, sklearn, matplotlib"])
                    .status()
                    .expect("python runs");
                assert!(status.success());
                start.elapsed()
            })
            .collect(),
    );

    let cold = Instant::now();
    let zygote = Zygote::start(config).expect("zygote starts");
    let cold = cold.elapsed();

    let dir = tempfile::tempdir().expect("temp dir");
    let mut open_times = Vec::new();
    let mut first_cell_times = Vec::new();
    for i in 0..session_runs {
        let workdir = dir.path().join(format!("s{i}"));
        let start = Instant::now();
        let mut session = Session::open(&zygote, &workdir).expect("session opens");
        open_times.push(start.elapsed());
        let start = Instant::now();
        session
            .execute("gdf = gpd.GeoDataFrame(geometry=[])")
            .expect("cell runs");
        first_cell_times.push(start.elapsed());
    }
    let warm = median(open_times);
    // The same without namespaces (the fallback's layers only): what the
    // namespaces, the monitor and the filesystem view cost per session.
    let flat_config = SandboxConfig {
        namespaces: false,
        ..zygote.config().clone()
    };
    let flat = median(
        (0..session_runs)
            .map(|i| {
                let workdir = dir.path().join(format!("flat{i}"));
                let start = Instant::now();
                let session = Session::open_with(&zygote, &workdir, flat_config.clone())
                    .expect("session opens");
                let took = start.elapsed();
                drop(session);
                took
            })
            .collect(),
    );

    // Snapshots of a live session holding a 100k-row GeoDataFrame.
    let mut session = Session::open(&zygote, &dir.path().join("snap")).expect("session opens");
    session
        .execute("big = gpd.GeoDataFrame({'v': np.arange(100_000)}, geometry=gpd.points_from_xy(np.arange(100_000), np.arange(100_000)), crs='EPSG:3857')")
        .expect("cell runs");
    let snapshot = median(
        (0..10)
            .map(|_| {
                let start = Instant::now();
                let copy = session.snapshot().expect("snapshot");
                let took = start.elapsed();
                drop(copy);
                took
            })
            .collect(),
    );
    let first_cell = median(first_cell_times);

    println!("sandbox start (medians; {baseline_runs} baseline runs, {session_runs} sessions)");
    println!(
        "  (a) python -c 'import geopandas, rasterio, sklearn, matplotlib'  {:>9.1} ms",
        ms(baseline)
    );
    println!(
        "  (b) session ready from a warm zygote                            {:>9.1} ms",
        ms(warm)
    );
    println!(
        "      the same without namespaces (fallback layers only)          {:>9.1} ms",
        ms(flat)
    );
    println!(
        "      first trivial cell in that session                          {:>9.1} ms",
        ms(first_cell)
    );
    println!(
        "      snapshot of a session holding a 100k-row GeoDataFrame       {:>9.1} ms",
        ms(snapshot)
    );
    println!(
        "      zygote cold start (full stack import, once per process)     {:>9.1} ms",
        ms(cold)
    );
    let ratio = warm.as_secs_f64() / baseline.as_secs_f64();
    println!(
        "  ratio (b)/(a) = {ratio:.4}  (goal <= 0.05: {})",
        if ratio <= 0.05 { "met" } else { "NOT met" }
    );
}
