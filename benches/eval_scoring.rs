//! Scoring speed of `gisclaw eval`: L1 (tokens, BLEU-4, ROUGE-L, edit
//! similarity, API-operation F1, CodeBLEU) and L3 (every declared output
//! against the gold's) for 50 tasks × 3 runs × 2 architectures from saved
//! outputs, against the same metrics written the straightforward way in
//! Python (`benches/eval_scoring_baseline.py`, run in the sandbox venv on the
//! same jobs in the same bench). Both run on one thread.
//!
//! The saved outputs come from one `gisclaw eval --replay-gold` over the
//! geoanalyst suite, made once into `target/bench-eval/` (a few minutes) and
//! reused. Each of the 300 scored runs pairs a task's gold with the replayed
//! gold's outputs and with the gold code with every k-th line dropped
//! (k = 3…8), so code scores are not trivially 1.
//!
//! Run with `make bench`. Goal: gisclaw's time ≤ 0.1 × the Python time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gisclaw::eval::metrics::api::OpTable;
use gisclaw::eval::metrics::output_score::score_files as score_output;
use gisclaw::eval::running::record::code_scores;
use gisclaw::task::Task;
use serde_json::{json, Value};

/// One scored run: gold and candidate code, and the declared outputs with
/// their gold and candidate files.
struct Job {
    gold_code: String,
    candidate_code: String,
    outputs: Vec<(String, PathBuf, PathBuf)>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Makes (or finishes) the saved gold replay of the whole suite.
fn saved_outputs() -> PathBuf {
    let out = root().join("target/bench-eval");
    let records = out.join("records");
    let done = std::fs::read_dir(&records).map(|d| d.count()).unwrap_or(0);
    if done < 50 {
        eprintln!(
            "making the saved outputs once: gisclaw eval --replay-gold over the suite into {} …",
            out.display()
        );
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gisclaw"));
        cmd.current_dir(root())
            .args([
                "eval",
                "--suite",
                "benchmarks/geoanalyst",
                "--arch",
                "single",
                "--runs",
                "1",
                "--replay-gold",
                "-j",
                "2",
                "--out",
            ])
            .arg(&out);
        if out.join("eval.json").exists() {
            cmd.arg("--resume");
        }
        let status = cmd.status().expect("gisclaw runs");
        assert!(status.success(), "the gold replay failed; see above");
    }
    out
}

/// `code` with every `k`-th line dropped.
fn drop_lines(code: &str, k: usize) -> String {
    code.lines()
        .enumerate()
        .filter(|(i, _)| (i + 1) % k != 0)
        .map(|(_, l)| l)
        .collect::<Vec<_>>()
        .join("\n")
}

fn jobs(saved: &Path) -> Vec<Job> {
    let suite = root().join("benchmarks/geoanalyst");
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(&suite)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("task.yaml").exists())
        .collect();
    tasks.sort();
    let mut jobs = Vec::new();
    for dir in tasks {
        let task = Task::load(&dir.join("task.yaml")).unwrap().task;
        let gold_code = std::fs::read_to_string(dir.join("gold.py")).unwrap();
        let gold_dir = saved.join("gold").join(&task.id);
        let run_dir = saved.join("runs").join(&task.id).join("single-1");
        for k in 3..=8 {
            jobs.push(Job {
                gold_code: gold_code.clone(),
                candidate_code: drop_lines(&gold_code, k),
                outputs: task
                    .outputs
                    .iter()
                    .map(|d| (d.clone(), gold_dir.join(d), run_dir.join(d)))
                    .collect(),
            });
        }
    }
    jobs
}

fn main() {
    let saved = saved_outputs();
    let jobs = jobs(&saved);
    let table = OpTable::built_in().expect("the built-in table parses");
    println!(
        "scoring {} runs (50 tasks × 3 runs × 2 archs), L1 + L3, one thread",
        jobs.len()
    );

    let (mut l1_time, mut l3_time) = (Duration::ZERO, Duration::ZERO);
    let (mut l1_sum, mut l3_sum) = (0.0, 0.0);
    let mut by_kind: std::collections::BTreeMap<String, Duration> = Default::default();
    for job in &jobs {
        let start = Instant::now();
        let c = code_scores(&job.gold_code, &job.candidate_code, &table);
        let codebleu = c.codebleu.map_or(0.0, |b| b.codebleu);
        l1_sum += (c.bleu4 + c.rouge_l + c.edit_similarity + c.api.f1 + codebleu) / 5.0;
        let middle = Instant::now();
        let mut scores = Vec::new();
        for (d, g, c) in &job.outputs {
            let t = Instant::now();
            let s = score_output(d, g, c);
            *by_kind
                .entry(s.kind.name().to_string())
                .or_insert(Duration::ZERO) += t.elapsed();
            scores.push(s.score);
        }
        l3_sum += if scores.is_empty() {
            0.0
        } else {
            scores.iter().sum::<f64>() / scores.len() as f64
        };
        l1_time += middle - start;
        l3_time += middle.elapsed();
    }
    let n = jobs.len() as f64;
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|(k, t)| format!("{k} {:.3} s", t.as_secs_f64()))
        .collect();
    println!("gisclaw L3 by output kind: {}", kinds.join(", "));

    let file = saved.join("jobs.json");
    let payload: Vec<Value> = jobs
        .iter()
        .map(|j| json!({ "gold_code": j.gold_code, "candidate_code": j.candidate_code, "outputs": j.outputs.iter().map(|(d, g, c)| json!([d, g, c])).collect::<Vec<_>>() }))
        .collect();
    std::fs::write(&file, serde_json::to_string(&payload).unwrap()).unwrap();
    let python = gisclaw::paths::default_venv().join("bin/python");
    let out = Command::new(&python)
        .arg(root().join("benches/eval_scoring_baseline.py"))
        .arg(&file)
        .arg(root().join("src/eval/metrics/api_ops.toml"))
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("the venv's python runs");
    assert!(
        out.status.success(),
        "the Python baseline failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base: Value = serde_json::from_slice(
        out.stdout
            .split(|b| *b == b'\n')
            .rfind(|l| !l.is_empty())
            .unwrap(),
    )
    .unwrap();
    let (py_l1, py_l3) = (
        base["l1_seconds"].as_f64().unwrap(),
        base["l3_seconds"].as_f64().unwrap(),
    );

    let (rs_l1, rs_l3) = (l1_time.as_secs_f64(), l3_time.as_secs_f64());
    println!(
        "{:<8} {:>12} {:>12} {:>8}",
        "layer", "gisclaw s", "python s", "ratio"
    );
    println!(
        "{:<8} {:>12.3} {:>12.3} {:>8.3}",
        "L1",
        rs_l1,
        py_l1,
        rs_l1 / py_l1
    );
    println!(
        "{:<8} {:>12.3} {:>12.3} {:>8.3}",
        "L3",
        rs_l3,
        py_l3,
        rs_l3 / py_l3
    );
    let ratio = (rs_l1 + rs_l3) / (py_l1 + py_l3);
    println!(
        "{:<8} {:>12.3} {:>12.3} {:>8.3}   goal ≤ 0.1: {}",
        "L1+L3",
        rs_l1 + rs_l3,
        py_l1 + py_l3,
        ratio,
        if ratio <= 0.1 { "met" } else { "NOT met" }
    );
    println!(
        "mean scores, gisclaw vs Python (a sanity check; Python's tokenize and ast reject code with dropped lines, and its fallbacks score lower): L1 {:.3} vs {:.3}, L3 {:.3} vs {:.3}",
        l1_sum / n,
        base["l1_mean"].as_f64().unwrap(),
        l3_sum / n,
        base["l3_mean"].as_f64().unwrap()
    );
}
