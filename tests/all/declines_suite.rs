//! The unsolvable suite (`benchmarks/declines/`): every gold explores the
//! data and declines under `bench verify` and `eval --replay-gold`, and an
//! eval scores a decline, an invented answer and a decline of a solvable
//! task as specified (the report's rates included).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{example_suite, gisclaw, read_json, text, write_jsonl};
use gisclaw::llm::{Message, ToolCall};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn declines() -> PathBuf {
    repo().join("benchmarks/declines")
}

fn call(name: &str, arguments: serde_json::Value) -> Message {
    Message {
        content: Some(format!("calling {name}")),
        tool_calls: vec![ToolCall::function("c", name, arguments.to_string())],
        ..Message::default()
    }
}

#[test]
fn every_unsolvable_gold_explores_and_declines_and_replay_gold_scores_them_one() {
    let dir = tempfile::tempdir().unwrap();
    let suite = declines();
    let tasks: Vec<_> = std::fs::read_dir(&suite)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("task.yaml").is_file())
        .collect();
    assert!(tasks.len() >= 15, "{} tasks", tasks.len());
    // Each class at least three times, each task with its reason.
    let mut classes = std::collections::BTreeMap::new();
    for t in &tasks {
        let task = gisclaw::task::Task::load(&t.path().join("task.yaml"))
            .unwrap()
            .task;
        assert!(
            !task.solvable && task.unsolvable_reason.is_some(),
            "{}",
            task.id
        );
        *classes
            .entry(task.unsolvable_class.expect("a class").name())
            .or_insert(0) += 1;
    }
    for class in ["absent_data", "unknown_crs", "time_span", "contradiction"] {
        assert!(classes.get(class).copied().unwrap_or(0) >= 3, "{classes:?}");
    }
    let o = gisclaw(
        &[
            "bench",
            "verify",
            suite.to_str().unwrap(),
            "--out",
            dir.path().join("verify").to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{n}/{n} gold solutions verified", n = tasks.len())),
        "{}",
        text(&o)
    );
    let out = dir.path().join("eval");
    let o = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--replay-gold",
            "--arch",
            "all",
            "--runs",
            "1",
            "-j",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The Single Agent, the Dual Agent (its Worker, after the gold's cells)
    // and the tree search (its Planner) all decline.
    let results = read_json(&out.join("results.json"));
    let cells = results["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3);
    for cell in cells {
        assert_eq!(cell["success_rate"], 1.0, "{cell:#}");
        assert_eq!(cell["composite"], 1.0);
        assert_eq!(
            cell["refusal"],
            json!({"unsolvable_runs": tasks.len(), "correct_declines": tasks.len(), "solvable_runs": 0, "false_declines": 0})
        );
    }
    for run in results["runs"].as_array().unwrap() {
        assert_eq!(run["status"], "declined", "{run:#}");
        assert!(!run["declined"].as_str().unwrap().is_empty());
        // Generated data are named by what makes them, not their bytes
        // (GDAL stamps the day into a new .dbf).
        assert!(
            run["provenance"]["task"]["data"]
                .as_str()
                .unwrap()
                .starts_with("generated:"),
            "{run:#}"
        );
    }
}

#[test]
fn a_decline_an_invented_answer_and_a_false_decline_score_as_specified() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let reason = "the crash records hold no pedestrian or cyclist counts";
    // U01: declined. U02: answered anyway with invented counts.
    write_jsonl(
        &rec.join("U01.jsonl"),
        &[
            call("list_files", json!({})),
            call(
                "decline",
                json!({"reason": "no population column in data/"}),
            ),
        ],
    );
    write_jsonl(
        &rec.join("U02.jsonl"),
        &[
            call(
                "execute_python",
                json!({"code": "import os\nos.makedirs('pred_results', exist_ok=True)\nopen('pred_results/vulnerable_road_users_by_borough.csv', 'w').write('BOROUGH,pedestrians,cyclists\\nBROOKLYN,12,4\\nQUEENS,9,3\\n')\n"}),
            ),
            call("finish", json!({"summary": "invented"})),
        ],
    );
    // The solvable example: declined.
    write_jsonl(
        &rec.join("heat-island.jsonl"),
        &[call("decline", json!({ "reason": reason }))],
    );
    let unsolvable = dir.path().join("unsolvable");
    let solvable = dir.path().join("solvable");
    let example = example_suite(dir.path());
    for (suite, out, tasks) in [
        (declines(), &unsolvable, Some("U01,U02")),
        (example, &solvable, None),
    ] {
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--replay",
            rec.to_str().unwrap(),
            "--runs",
            "1",
            "--no-output-checks",
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(t) = tasks {
            args.extend(["--tasks", t]);
        }
        let o = gisclaw(&args, &[]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    }
    let record =
        |dir: &Path, task: &str| read_json(&dir.join(format!("records/{task}.single.1.json")));
    let right = record(&unsolvable, "U01");
    assert_eq!(
        (
            right["success"].as_bool(),
            right["q_out"].as_f64(),
            right["solvable"].as_bool()
        ),
        (Some(true), Some(1.0), Some(false))
    );
    let invented = record(&unsolvable, "U02");
    assert_eq!(invented["status"], "finished");
    assert_eq!(
        (invented["success"].as_bool(), invented["q_out"].as_f64()),
        (Some(false), Some(0.0))
    );
    assert_eq!(invented["run_error"], "invalid_answer");
    let wrong = record(&solvable, "heat-island");
    assert_eq!(
        (wrong["success"].as_bool(), wrong["declined"].as_str()),
        (Some(false), Some(reason))
    );
    let report = dir.path().join("report");
    let o = gisclaw(
        &[
            "eval",
            "report",
            unsolvable.to_str().unwrap(),
            solvable.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let results = read_json(&report.join("results.json"));
    let composites: Vec<(String, f64)> = results["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["task"].as_str().unwrap().to_string(),
                r["composite"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        composites,
        [
            ("U01".to_string(), 1.0),
            ("U02".to_string(), 0.0),
            ("heat-island".to_string(), 0.0)
        ]
    );
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Honest refusal"))
        .filter(|l| l.starts_with("| recorded"))
        .take(2)
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(
        rows[0].ends_with("| 2 | 1 | 0.500 | 0 | 0 | – |"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].ends_with("| 0 | 0 | – | 1 | 1 | 1.000 |"),
        "{}",
        rows[1]
    );
}
