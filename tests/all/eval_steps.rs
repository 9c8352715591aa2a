//! `gisclaw eval` on a step suite end to end: a recorded session through
//! the real loop and sandbox, one step at a time, each step's check judged
//! against the gold's answer; complete@1, the step pass rate, error types,
//! resume and re-rendering checked by hand.

use crate::common;

use std::path::{Path, PathBuf};

use common::{gisclaw, read_json};
use gisclaw::agent::solution::split_cells;
use gisclaw::llm::{Message, ToolCall};
use serde_json::{json, Value};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geocode")
}

fn call(name: &str, args: Value) -> Message {
    Message {
        content: Some("working".into()),
        tool_calls: vec![ToolCall::function("c", name, args.to_string())],
        ..Message::default()
    }
}

#[test]
fn a_step_eval_checks_each_step_and_scores_complete_at_1() {
    let gold = split_cells(&std::fs::read_to_string(suite().join("G01/gold.py")).unwrap());
    assert_eq!(gold.len(), 6);
    let done = || call("step_done", json!({ "summary": "done" }));
    // Step 1: the gold. Step 2: a syntax error, then the gold (corrected).
    // Step 3: a wrong share, then step_done. Step 4: the gold. Then the
    // recording ends: steps 5 and 6 are never attempted.
    let messages = vec![
        call("execute_python", json!({ "code": gold[0] })),
        done(),
        call("execute_python", json!({ "code": "walk_zone = (" })),
        call("execute_python", json!({ "code": gold[1] })),
        done(),
        call(
            "execute_python",
            json!({ "code": format!("{}\npct_near = pct_near + 5", gold[2]) }),
        ),
        done(),
        call("execute_python", json!({ "code": gold[3] })),
        done(),
    ];
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let lines: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    std::fs::write(rec.join("G01.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = dir.path().join("eval");
    let suite = suite();
    let args = [
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--tasks",
        "1",
        "--runs",
        "1",
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let run = gisclaw(&args, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("G01 run 1: 3/6 steps pass, complete@1 0.333 · 0/1 succeeded · "),
        "{stderr}"
    );

    let record = read_json(&out.join("records/G01.1.json"));
    let steps = record["steps"].as_array().unwrap();
    let passed: Vec<bool> = steps
        .iter()
        .map(|s| s["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(
        passed,
        [true, true, false, true, false, false],
        "{record:#}"
    );
    assert_eq!(steps[2]["error"], "invalid_answer");
    assert_eq!(steps[4]["ending"], "ended");
    assert!(
        steps[5]["problem"]
            .as_str()
            .unwrap()
            .starts_with("not attempted"),
        "{record:#}"
    );
    // complete@1 = 2/6 (steps 1–2), step pass rate = 3/6, not every step passed.
    assert!((record["complete_at_1"].as_f64().unwrap() - 2.0 / 6.0).abs() < 1e-12);
    assert!((record["step_pass_rate"].as_f64().unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(record["passed"], false);
    // The transcript shows the check of every step that was reached (the
    // run ended during step 5; step 6 was never given).
    let transcript = std::fs::read_to_string(out.join("runs/G01/run-1/transcript.jsonl")).unwrap();
    assert_eq!(
        transcript
            .lines()
            .filter(|l| l.contains("\"event\":\"check\""))
            .count(),
        5
    );

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| 0.333 | 0.500 | 0.000 |") && md.contains("| G01 | 1 | 0.333 | 0.500 | 0 |"),
        "{md}"
    );
    let results = read_json(&out.join("results.json"));
    // Step 3 a wrong value; step 5's check raised NameError (its variable was
    // never made: the taxonomy's attribute/parameter type); step 6 other.
    assert_eq!(
        results["summary"]["errors"],
        json!({ "attribute_parameter": 1, "invalid_answer": 1, "other": 1 })
    );

    // Resume runs nothing again; `eval report` re-renders the same figures.
    let mut resume = args.to_vec();
    resume.push("--resume");
    let resumed = gisclaw(&resume, &[]);
    assert!(String::from_utf8_lossy(&resumed.stderr).contains("1 runs, 1 already recorded"));
    std::fs::remove_file(out.join("results.json")).unwrap();
    let render = gisclaw(&["eval", "report", out.to_str().unwrap()], &[]);
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    assert_eq!(
        read_json(&out.join("results.json"))["summary"],
        results["summary"]
    );
}
