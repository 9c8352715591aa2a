//! Sharded `gisclaw eval` (`--shard K/N`) through the real loop and
//! sandbox: shards running at once into one folder give what one process
//! gives, a shard killed with SIGKILL and run again loses and repeats
//! nothing, `eval status` follows them, and bad `--shard`s are one line.

use crate::common;

use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{geoanalyst, gisclaw, gisclaw_command, gold, read_json, write_jsonl};
use gisclaw::bench::verify::gold_messages;
use gisclaw::llm::{Message, ToolCall};
use serde_json::{json, Value};

/// The args of an eval of T01–T03 (`extra` appended).
fn eval_args(out: &Path, source: &[&str], runs: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["eval", "--suite"].iter().map(|s| s.to_string()).collect();
    args.push(geoanalyst().display().to_string());
    for a in ["--tasks", "1-3", "--runs", runs, "--out"] {
        args.push(a.into());
    }
    args.push(out.display().to_string());
    args.extend(source.iter().map(|s| s.to_string()));
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn spawn(args: &[String]) -> Child {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    gisclaw_command(&args, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    gisclaw(&args, &[])
}

/// results.csv without its timing columns.
fn csv_rows(dir: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            l.split(',')
                .zip(&header)
                .filter(|(_, h)| !h.contains("seconds"))
                .map(|(v, _)| v.to_string())
                .collect()
        })
        .collect()
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

/// Record file names of an eval folder, sorted.
fn records(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("records"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The shard of each cell, as eval.json's plan assigns it.
fn owners(out: &Path) -> Vec<(String, usize)> {
    let manifest = gisclaw::eval::running::runner::Manifest::read(out).unwrap();
    let cells = manifest.cells();
    let plan = manifest.shards.expect("a sharded eval has a plan");
    cells
        .iter()
        .map(|c| c.file_name())
        .zip(plan.assign(&cells))
        .collect()
}

#[test]
fn shards_running_at_once_give_the_results_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single");
    let sharded = dir.path().join("sharded");
    let one = run(&eval_args(&single, &["--replay-gold"], "2", &[]));
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );

    let shards: Vec<Child> = (1..=3)
        .map(|k| {
            spawn(&eval_args(
                &sharded,
                &["--replay-gold"],
                "2",
                &["--shard", &format!("{k}/3")],
            ))
        })
        .collect();
    let outputs: Vec<Output> = shards
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let mut logs = String::new();
    for (k, out) in outputs.iter().enumerate() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "shard {}: {stderr}", k + 1);
        assert!(stderr.contains(&format!("shard {}/3", k + 1)), "{stderr}");
        logs.push_str(&stderr);
    }
    // Every cell recorded once, by the shard the plan gives it.
    assert_eq!(records(&sharded), records(&single));
    let owners = owners(&sharded);
    assert_eq!(owners.len(), 6);
    for (k, out) in outputs.iter().enumerate() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        for (cell, shard) in &owners {
            let (task, rest) = cell.split_once('.').unwrap();
            let run = rest.trim_end_matches(".json").rsplit('.').next().unwrap();
            let line = format!("{task} single run {run}:");
            assert_eq!(
                stderr.contains(&line),
                *shard == k + 1,
                "{line} in shard {}: {stderr}",
                k + 1
            );
        }
    }
    // Each gold run made once, whichever shard made it.
    for task in ["T01", "T02", "T03"] {
        let made = logs.matches(&format!("{task}: gold run made")).count();
        assert_eq!(made, 1, "{task}: {logs}");
    }
    // The last shard rendered the merged report; re-rendered, the same.
    assert_eq!(csv_rows(&sharded), csv_rows(&single));
    assert_eq!(numbers(&sharded), numbers(&single));
    let report = run(&[
        "eval".into(),
        "report".into(),
        sharded.display().to_string(),
    ]);
    assert!(report.status.success());
    assert_eq!(numbers(&sharded), numbers(&single));
    let md = std::fs::read_to_string(sharded.join("report.md")).unwrap();
    assert!(!md.contains("have no record"), "{md}");

    // The plan is in eval.json, fixed by the first shard.
    let manifest = read_json(&sharded.join("eval.json"));
    assert_eq!(manifest["shards"]["count"], 3);
    assert!(
        manifest["shards"]["seconds"]["T01.single"]
            .as_u64()
            .unwrap()
            > 0
    );
    let status = run(&[
        "eval".into(),
        "status".into(),
        sharded.display().to_string(),
    ]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("every run is recorded"), "{text}");
}

fn cell(code: &str) -> Message {
    Message {
        content: Some("a cell".into()),
        tool_calls: vec![ToolCall::function(
            "c",
            "execute_python",
            json!({ "code": code }).to_string(),
        )],
        ..Message::default()
    }
}

fn finish() -> Message {
    Message {
        content: Some("done".into()),
        tool_calls: vec![ToolCall::function(
            "f",
            "finish",
            json!({ "summary": "done" }).to_string(),
        )],
        ..Message::default()
    }
}

#[test]
fn a_killed_shard_run_again_loses_and_repeats_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    std::fs::create_dir(&rec).unwrap();
    for task in ["T01", "T03"] {
        write_jsonl(
            &rec.join(format!("{task}.jsonl")),
            &gold_messages(task, &gold(task)),
        );
    }
    // T02 hangs in its first cell until its shard is killed.
    write_jsonl(
        &rec.join("T02.jsonl"),
        &[cell("import time\ntime.sleep(300)"), finish()],
    );
    let out = dir.path().join("eval");
    let replay = ["--replay", rec.to_str().unwrap()];
    let args = |k: usize| eval_args(&out, &replay, "1", &["--shard", &format!("{k}/2")]);
    // Shard 1 first, alone: it makes eval.json and its plan.
    let first = spawn(&args(1));
    let eval_json = out.join("eval.json");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !eval_json.is_file() {
        assert!(Instant::now() < deadline, "no eval.json");
        std::thread::sleep(Duration::from_millis(50));
    }
    let owners = owners(&out);
    let t02_shard = owners
        .iter()
        .find(|(c, _)| c.starts_with("T02."))
        .unwrap()
        .1;
    let other = 3 - t02_shard;
    let second = spawn(&args(2));
    let (mut hanging, mut finishing) = if t02_shard == 1 {
        (first, second)
    } else {
        (second, first)
    };
    let transcript = out.join("runs/T02/single-1/transcript.jsonl");
    while !std::fs::read_to_string(&transcript)
        .is_ok_and(|t| t.contains("\"tool\"") || t.contains("\"message\""))
    {
        assert!(
            Instant::now() < deadline + Duration::from_secs(180),
            "T02 never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A second process of the same shard is refused while it runs.
    let twin = run(&args(t02_shard));
    let stderr = String::from_utf8_lossy(&twin.stderr);
    assert_eq!(twin.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("shard {t02_shard}/2 is running already")),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");

    // The other shard ends well, leaving the report to the last one.
    let done = finishing.wait().unwrap();
    assert!(done.success());
    let status = run(&["eval".into(), "status".into(), out.display().to_string()]);
    let text = String::from_utf8_lossy(&status.stdout).to_string();
    let row = |k: usize| {
        text.lines()
            .find(|l| l.starts_with(&format!("{k}/2")))
            .unwrap_or_else(|| panic!("no row {k}/2 in {text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // shard, runs, done, running, failed, missing
    let owned = |k: usize| owners.iter().filter(|(_, s)| *s == k).count().to_string();
    assert_eq!(
        row(other)[1..6],
        [
            owned(other),
            owned(other),
            "0".into(),
            "0".into(),
            "0".into()
        ],
        "{text}"
    );
    assert_eq!(row(t02_shard)[3], "1", "T02 is running: {text}");

    hanging.kill().unwrap(); // SIGKILL
    hanging.wait().unwrap();
    let before = records(&out);
    assert!(!before.contains(&"T02.single.1.json".to_string()));
    let status = run(&["eval".into(), "status".into(), out.display().to_string()]);
    let text = String::from_utf8_lossy(&status.stdout).to_string();
    let missing_row: Vec<String> = text
        .lines()
        .find(|l| l.starts_with(&format!("{t02_shard}/2")))
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let of_shard: Vec<&String> = owners
        .iter()
        .filter(|(_, s)| *s == t02_shard)
        .map(|(c, _)| c)
        .collect();
    let kept_of_shard = before.iter().filter(|n| of_shard.contains(n)).count();
    let lacking = of_shard.len() - kept_of_shard;
    assert_eq!(missing_row[2], kept_of_shard.to_string(), "{text}");
    assert_eq!(missing_row[3], "0", "nothing runs after the kill: {text}");
    assert_eq!(
        missing_row[5],
        lacking.to_string(),
        "T02 and what followed: {text}"
    );
    // The report of the folder says which shard lacks what.
    let report = run(&["eval".into(), "report".into(), out.display().to_string()]);
    assert!(report.status.success());
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("shard {t02_shard}/2: {lacking}")),
        "{md}"
    );
    let kept: Vec<Vec<u8>> = before
        .iter()
        .map(|n| std::fs::read(out.join("records").join(n)).unwrap())
        .collect();

    // Run again (T02 answers now): only its missing run is made.
    write_jsonl(&rec.join("T02.jsonl"), &gold_messages("T02", &gold("T02")));
    let again = run(&args(t02_shard));
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} runs, {kept_of_shard} already recorded",
            of_shard.len()
        )),
        "{stderr}"
    );
    assert_eq!(
        records(&out),
        [
            "T01.single.1.json",
            "T02.single.1.json",
            "T03.single.1.json"
        ]
    );
    for (name, bytes) in before.iter().zip(kept) {
        assert_eq!(
            std::fs::read(out.join("records").join(name)).unwrap(),
            bytes,
            "{name} redone"
        );
    }
    // It was the last: the merged report has every run.
    let results = read_json(&out.join("results.json"));
    assert_eq!(results["missing_runs"], 0);
    assert_eq!(results["runs"].as_array().unwrap().len(), 3);
    assert!(!out
        .join("shards")
        .join(format!("{t02_shard}.claim"))
        .exists());
}

#[test]
fn bad_shards_are_one_line_naming_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let gold = ["--replay-gold"];
    let cases: [(&[&str], &str); 4] = [
        (&["--shard", "4/3"], "--shard 4/3: expected K/N"),
        (
            &["--shard", "auto"],
            "--shard auto: not in a Slurm array job",
        ),
        (&["--costs-from", "x"], "--shard"),
        (
            &["--shard", "1/2", "--costs-from", "/nonexistent"],
            "--costs-from /nonexistent",
        ),
    ];
    for (extra, expected) in cases {
        let o = run(&eval_args(&out, &gold, "1", extra));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(expected), "{extra:?}: {stderr}");
    }
    // A folder split into 2 refuses a shard of 3, and an unsharded eval
    // refuses sharding later.
    let made = dir.path().join("made");
    let first = run(&{
        let mut a = eval_args(&made, &gold, "1", &["--shard", "2/2"]);
        a[4] = "2".into(); // --tasks 2: one quick task
        a
    });
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let three = run(&{
        let mut a = eval_args(&made, &gold, "1", &["--shard", "1/3"]);
        a[4] = "2".into();
        a
    });
    let stderr = String::from_utf8_lossy(&three.stderr);
    assert_eq!(three.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("split into 2 shards; use K/2"), "{stderr}");
    let plain = dir.path().join("plain");
    let mut a = eval_args(&plain, &gold, "1", &[]);
    a[4] = "2".into();
    assert!(run(&a).status.success());
    a.extend(["--shard".into(), "1/2".into()]);
    let late = run(&a);
    let stderr = String::from_utf8_lossy(&late.stderr);
    assert_eq!(late.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("started without --shard"), "{stderr}");
    // Unit and step suites run in one process.
    let unit = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/unit");
    let o = gisclaw(
        &[
            "eval",
            "--suite",
            unit.to_str().unwrap(),
            "--replay-gold",
            "--shard",
            "1/2",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--shard is for task suites"));
}
