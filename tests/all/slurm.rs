//! A sharded eval on a real Slurm cluster (`tests/slurm/cluster.sh up`):
//! `examples/slurm/eval.sbatch` as a 3-task array job, then
//! `examples/slurm/report.sbatch` after it (`--dependency=afterok`); the
//! merged folder equals a single-process eval of the same tasks.
//!
//! `#[ignore]`d: `make test` runs it when the cluster answers, CI always
//! (`.ci/run` starts the cluster and stops it afterwards).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{gisclaw, read_json};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// results.json without timings and folder names.
fn numbers(dir: &Path) -> Value {
    fn strip(v: Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .filter(|(k, _)| {
                        !k.contains("seconds") && !k.contains("efficiency") && k != "evals"
                    })
                    .map(|(k, v)| (k, strip(v)))
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.into_iter().map(strip).collect()),
            other => other,
        }
    }
    strip(read_json(&dir.join("results.json")))
}

/// results.csv without its timing columns.
fn csv_rows(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            l.split(',')
                .zip(&header)
                .filter(|(_, h)| !h.contains("seconds"))
                .map(|(v, _)| v)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// `sbatch ARGS`, with gisclaw's binary and a test Error Memory in the
/// job's environment; the job id (`--parsable`).
fn sbatch(args: &[&str]) -> String {
    let memory =
        std::env::temp_dir().join(format!("gisclaw-test-memory-{}.json", std::process::id()));
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .env("GISCLAW", env!("CARGO_BIN_EXE_gisclaw"))
        .env("GISCLAW_ERROR_MEMORY", memory)
        .env("GISCLAW_JOBS", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OLLAMA_HOST")
        .output()
        .expect("sbatch runs (tests/slurm/cluster.sh up)");
    assert!(
        out.status.success(),
        "sbatch {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs a Slurm cluster: bash tests/slurm/cluster.sh up (make test runs it when one answers)"]
fn a_sharded_eval_through_sbatch_array_equals_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let suite = repo().join("benchmarks/geoanalyst");
    let single = dir.path().join("single");
    let sharded = dir.path().join("sharded");
    let eval_args = |out: &Path| {
        vec![
            "--suite".to_string(),
            suite.display().to_string(),
            "--tasks".into(),
            "1-3".into(),
            "--runs".into(),
            "2".into(),
            "--replay-gold".into(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let mut one: Vec<String> = vec!["eval".into()];
    one.extend(eval_args(&single));
    let one: Vec<&str> = one.iter().map(String::as_str).collect();
    let o = gisclaw(&one, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // The array job: one shard per array task, 1 CPU each.
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let eval_log = format!("{}/eval-%a.out", logs.display());
    let script = repo().join("examples/slurm/eval.sbatch");
    let mut args = vec![
        "--array=0-2".to_string(),
        "--cpus-per-task=1".into(),
        "--mem=3G".into(),
        format!("--output={eval_log}"),
        format!("--chdir={}", dir.path().display()),
        script.display().to_string(),
    ];
    args.extend(eval_args(&sharded));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let array = sbatch(&args);

    // The report after it; --wait returns once it has ended.
    let report_log = format!("{}/report.out", logs.display());
    let report_script = repo().join("examples/slurm/report.sbatch");
    let report = Command::new("sbatch")
        .args([
            "--wait",
            &format!("--dependency=afterok:{array}"),
            "--mem=1G",
            &format!("--output={report_log}"),
            &format!("--chdir={}", dir.path().display()),
            report_script.to_str().unwrap(),
            sharded.to_str().unwrap(),
        ])
        .env("GISCLAW", env!("CARGO_BIN_EXE_gisclaw"))
        .output()
        .unwrap();
    let shard_logs: String = (0..3)
        .map(|a| {
            std::fs::read_to_string(logs.join(format!("eval-{a}.out")))
                .unwrap_or_else(|e| format!("eval-{a}.out: {e}"))
        })
        .collect::<Vec<_>>()
        .join("\n---\n");
    let report_text = std::fs::read_to_string(&report_log).unwrap_or_default();
    assert!(
        report.status.success(),
        "report job: {}\n{report_text}\nshards:\n{shard_logs}",
        String::from_utf8_lossy(&report.stderr)
    );
    // Each array task ran its own shard.
    for k in 1..=3 {
        assert!(
            shard_logs.contains(&format!("shard {k}/3 of")),
            "{shard_logs}"
        );
    }
    assert!(
        report_text.contains("every run is recorded"),
        "{report_text}"
    );
    assert!(report_text.contains("report in"), "{report_text}");

    // The merged folder equals the single process, timings aside.
    assert_eq!(csv_rows(&sharded), csv_rows(&single));
    assert_eq!(numbers(&sharded), numbers(&single));
    assert_eq!(read_json(&sharded.join("results.json"))["missing_runs"], 0);
    for task in ["T01", "T02", "T03"] {
        assert_eq!(
            shard_logs
                .matches(&format!("{task}: gold run made"))
                .count(),
            1,
            "{shard_logs}"
        );
    }
}
