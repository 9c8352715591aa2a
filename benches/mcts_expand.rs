//! The cost of expanding one tree-search node under a prefix of cells:
//! gisclaw's way (fork the parent's live session, run the candidate) against
//! GeoAgent's (a fresh session that re-runs the whole prefix, then the
//! candidate), both measured in this run on the same cells.
//!
//! Run with `make bench` (or `cargo bench --bench mcts_expand`). Goal: the
//! fork-based cost does not grow with the prefix, and at a prefix of at
//! least 5 s it is at least 20× cheaper than re-running.

mod common;

use std::time::{Duration, Instant};

use gisclaw::sandbox::{CellStatus, SandboxConfig, Session, Zygote};

/// Cells of the prefix: each computes for about a second (a 900×900 SVD,
/// then a wait to make up the second on fast machines) and keeps a result.
fn prefix_cell(i: usize) -> String {
    format!(
        "import time\n_t = time.perf_counter()\nm{i} = np.linalg.svd(np.random.default_rng({i}).random((900, 900)), compute_uv=False)\n\
         time.sleep(max(0.0, 1.0 - (time.perf_counter() - _t)))"
    )
}

/// The candidate the node adds: cheap, and it reads the prefix's state.
fn candidate(last: usize) -> String {
    format!("score = float(m{last}.sum()) + 1")
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run(session: &mut Session, code: &str) {
    let out = session.execute(code).expect("cell runs");
    assert_eq!(out.status, CellStatus::Ok, "{out:?}");
}

fn main() {
    common::refuse_a_stale_worker();
    let zygote = Zygote::start(SandboxConfig::default()).expect("zygote starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let lengths = [1usize, 3, 5, 7];
    let forks = 10;
    let reruns = 3;
    println!("mcts_expand: one node expansion under a prefix of N one-second cells");
    println!(
        "{:>7} {:>10} {:>14} {:>16} {:>8}",
        "prefix", "prefix s", "fork+run ms", "re-run+run ms", "ratio"
    );
    let mut fork_costs = Vec::new();
    let mut last_ratio = 0.0;
    for &n in &lengths {
        let mut parent = Session::open(&zygote, &dir.path().join(format!("p{n}"))).expect("opens");
        let started = Instant::now();
        for i in 0..n {
            run(&mut parent, &prefix_cell(i));
        }
        let prefix = started.elapsed();
        let fork = median(
            (0..forks)
                .map(|_| {
                    let start = Instant::now();
                    let mut child = parent.snapshot().expect("snapshot");
                    run(&mut child, &candidate(n - 1));
                    let took = start.elapsed();
                    drop(child);
                    took
                })
                .collect(),
        );
        let rerun = median(
            (0..reruns)
                .map(|k| {
                    let start = Instant::now();
                    let mut fresh = Session::open(&zygote, &dir.path().join(format!("r{n}-{k}")))
                        .expect("opens");
                    for i in 0..n {
                        run(&mut fresh, &prefix_cell(i));
                    }
                    run(&mut fresh, &candidate(n - 1));
                    start.elapsed()
                })
                .collect(),
        );
        let ratio = rerun.as_secs_f64() / fork.as_secs_f64();
        println!(
            "{n:>7} {:>10.2} {:>14.1} {:>16.1} {:>7.0}×",
            prefix.as_secs_f64(),
            ms(fork),
            ms(rerun),
            ratio
        );
        fork_costs.push(fork);
        last_ratio = ratio;
    }
    let spread = fork_costs.iter().copied().max().map(ms).unwrap_or(0.0)
        / fork_costs
            .iter()
            .copied()
            .min()
            .map(ms)
            .unwrap_or(1.0)
            .max(1e-9);
    println!(
        "fork cost, longest prefix / shortest: {spread:.2} (goal: about 1, independent of the prefix)"
    );
    println!(
        "re-run / fork at the {}-cell prefix: {last_ratio:.0}× (goal: ≥ 20×)",
        lengths[lengths.len() - 1]
    );
}
