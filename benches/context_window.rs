//! Context management on the 50 GeoAnalystBench gold replays: each gold is
//! replayed through the Single Agent behind windows of 4k, 8k, 32k and 128k
//! tokens (the replay refuses a longer request as llama-server does) and
//! without one. Printed per window: prompt tokens per run (sum and
//! median), the largest request, the runs that compacted and how often,
//! the runs whose largest request the window could not hold without
//! compaction (they would have ended with "the conversation no longer fits
//! the model's context window" before), the runs that finished, and the
//! cost of a compaction: its time in gisclaw and the prompt tokens that no
//! longer repeat an earlier request's prefix after the cut (what a
//! provider's prefix cache can no longer serve).
//!
//! Run with `make bench` (or `cargo bench --bench context_window`); it
//! needs the suite's data (`gisclaw bench generate benchmarks/geoanalyst`
//! makes it, and so does this bench on first use).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use gisclaw::bench::verify::verify_task_within;
use gisclaw::sandbox::{SandboxConfig, Zygote};
use gisclaw::task::Task;
use serde_json::Value;

/// One run's figures.
#[derive(Debug, Default, Clone)]
struct RunFigures {
    finished: bool,
    prompt_tokens: u64,
    prefix_tokens: u64,
    largest_request: u64,
    compactions: usize,
    compaction_ms: Vec<f64>,
}

fn figures(out: &Path) -> RunFigures {
    let run: Value = std::fs::read(out.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let mut f = RunFigures {
        finished: run["status"] == "finished",
        prompt_tokens: run["tokens_in"].as_u64().unwrap_or(0),
        prefix_tokens: run["tokens_in_prefix"].as_u64().unwrap_or(0),
        compactions: run["compactions"].as_u64().unwrap_or(0) as usize,
        ..RunFigures::default()
    };
    let transcript = std::fs::read_to_string(out.join("transcript.jsonl")).unwrap_or_default();
    for line in transcript.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(tokens) = event["usage"]["prompt_tokens"].as_u64() {
            f.largest_request = f.largest_request.max(tokens);
        }
        if event["event"] == "compaction" {
            f.compaction_ms
                .push(event["took_ms"].as_f64().unwrap_or(0.0));
        }
    }
    f
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn tasks(suite: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(suite)
        .expect("the suite folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("task.yaml"))
        .filter(|p| p.exists())
        .collect();
    files.sort();
    files
}

fn main() {
    common::refuse_a_stale_worker();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geoanalyst");
    let zygote: Arc<Zygote> = Zygote::start(SandboxConfig::default()).expect("zygote starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let windows: [Option<u64>; 5] = [None, Some(131_072), Some(32_768), Some(8_192), Some(4_096)];
    let files = tasks(&suite);
    println!(
        "context_window: the {} gold replays of {} behind each window",
        files.len(),
        suite.display()
    );
    let mut baseline: Vec<RunFigures> = Vec::new();
    println!(
        "{:>8} {:>9} {:>12} {:>12} {:>10} {:>9} {:>10} {:>11} {:>10} {:>13} {:>12}",
        "window",
        "finished",
        "prompt tok",
        "of which pfx",
        "median/run",
        "largest",
        "compacted",
        "compactions",
        "would end",
        "ms/compaction",
        "prefix lost"
    );
    for window in windows {
        let started = Instant::now();
        let mut runs = Vec::new();
        for file in &files {
            let mut loaded = Task::load(file).expect("the task loads");
            let out = dir
                .path()
                .join(format!("{}-{}", window.unwrap_or(0), loaded.task.id));
            let _ = verify_task_within(&zygote, &mut loaded, &out, window);
            let f = figures(&out);
            let _ = std::fs::remove_dir_all(&out);
            runs.push(f);
        }
        let label = window.map_or("none".to_string(), |w| format!("{}k", w / 1024));
        let finished = runs.iter().filter(|r| r.finished).count();
        let total: u64 = runs.iter().map(|r| r.prompt_tokens).sum();
        let per_run = median(runs.iter().map(|r| r.prompt_tokens).collect());
        let largest = runs.iter().map(|r| r.largest_request).max().unwrap_or(0);
        let compacted = runs.iter().filter(|r| r.compactions > 0).count();
        let compactions: usize = runs.iter().map(|r| r.compactions).sum();
        let ms: Vec<f64> = runs.iter().flat_map(|r| r.compaction_ms.clone()).collect();
        let mean_ms = if ms.is_empty() {
            0.0
        } else {
            ms.iter().sum::<f64>() / ms.len() as f64
        };
        // Runs whose largest request (measured without a window) passes
        // this window: before compaction they ended with ContextFull.
        let would_end = match window {
            Some(w) if !baseline.is_empty() => baseline
                .iter()
                .filter(|b| b.largest_request > w)
                .count()
                .to_string(),
            _ => "-".into(),
        };
        let prefix: u64 = runs.iter().map(|r| r.prefix_tokens).sum();
        let base_prefix: u64 = baseline.iter().map(|r| r.prefix_tokens).sum();
        let lost = if baseline.is_empty() {
            "-".to_string()
        } else {
            format!("{}", base_prefix as i64 - prefix as i64)
        };
        println!(
            "{label:>8} {finished:>6}/{:<2} {total:>12} {prefix:>12} {per_run:>10} {largest:>9} {compacted:>10} {compactions:>11} {would_end:>10} {mean_ms:>13.1} {lost:>12}",
            runs.len()
        );
        eprintln!("  ({label}: {:.0} s)", started.elapsed().as_secs_f64());
        if window.is_none() {
            baseline = runs;
        }
    }
}
