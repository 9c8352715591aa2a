//! Cost against accuracy: the Pareto table and chart from two replayed
//! cells with different recorded costs, and `--max-cost` stopping a live
//! eval (a scripted OpenAI-protocol server, a priced model) at its budget
//! with what ran recorded, then resumed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::fake_llm::{openai_answer, FakeServer, Reply};
use crate::common::{example_messages, example_suite, gisclaw, read_json, text, write_jsonl};
use gisclaw::llm::{Message, ToolCall};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn eval(args: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut all = vec!["eval"];
    all.extend_from_slice(args);
    gisclaw(&all, envs)
}

fn set_cost(folder: &Path, usd: f64) {
    let path = folder.join("records/heat-island.single.1.json");
    let mut record = read_json(&path);
    record["cost_usd"] = usd.into();
    std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
}

/// The cell whose label (its recordings' folder) names `folder`.
fn point<'a>(results: &'a Value, folder: &str) -> &'a Value {
    results["cost_accuracy"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["label"]
                .as_str()
                .unwrap()
                .contains(&format!("/{folder} "))
        })
        .unwrap_or_else(|| panic!("no cell of {folder}: {results:#}"))
}

#[test]
fn the_pareto_table_marks_the_cells_nothing_beats_on_cost_and_accuracy() {
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let s = suite.to_str().unwrap();
    // A: the example's full replay (succeeds). B: two listings, then the
    // round limit (fails, fewer tokens).
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::copy(
        repo().join("examples/heat_island/replay.jsonl"),
        full.join("heat-island.jsonl"),
    )
    .unwrap();
    let short = dir.path().join("short");
    std::fs::create_dir(&short).unwrap();
    let list = Message {
        content: Some("listing".into()),
        tool_calls: vec![ToolCall::function("l", "list_files", "{}")],
        ..Message::default()
    };
    write_jsonl(&short.join("heat-island.jsonl"), &[list.clone(), list]);
    let a = dir.path().join("strong");
    let b = dir.path().join("weak");
    for (rec, out, rounds) in [(&full, &a, "30"), (&short, &b, "2")] {
        let o = eval(
            &[
                "--suite",
                s,
                "--replay",
                rec.to_str().unwrap(),
                "--runs",
                "1",
                "--max-rounds",
                rounds,
                "--out",
                out.to_str().unwrap(),
            ],
            &[],
        );
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", text(&o));
    }
    let report = dir.path().join("report");
    let render = || {
        let o = eval(
            &[
                "report",
                a.to_str().unwrap(),
                b.to_str().unwrap(),
                "--out",
                report.to_str().unwrap(),
            ],
            &[],
        );
        assert!(o.status.success(), "{}", text(&o));
        read_json(&report.join("results.json"))
    };
    // Replays cost nothing: the front is drawn against tokens, and each
    // cell is on it (the strong one costs more tokens).
    let results = render();
    assert_eq!(results["cost_accuracy"]["axis"], "tokens", "{results:#}");
    let (strong, weak) = (point(&results, "full"), point(&results, "short"));
    assert!(strong["tokens"].as_f64() > weak["tokens"].as_f64());
    assert!(strong["composite"].as_f64() > weak["composite"].as_f64());
    assert_eq!(strong["front_composite"], true);
    assert_eq!(weak["front_composite"], true);
    assert_eq!(
        (strong["pass_at_1"].as_f64(), weak["pass_at_1"].as_f64()),
        (Some(1.0), Some(0.0))
    );
    // Recorded costs that make the strong cell the cheaper: it dominates.
    set_cost(&a, 0.02);
    set_cost(&b, 0.05);
    let results = render();
    assert_eq!(results["cost_accuracy"]["axis"], "usd", "{results:#}");
    let (strong, weak) = (point(&results, "full"), point(&results, "short"));
    assert_eq!(strong["usd"], 0.02);
    assert_eq!(
        (
            strong["front_composite"].as_bool(),
            weak["front_composite"].as_bool()
        ),
        (Some(true), Some(false))
    );
    assert_eq!(weak["front_pass_at_1"], false);
    assert!(strong["wall_seconds"].as_f64().unwrap() > 0.0);
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let table: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("## Cost and accuracy"))
        .filter(|l| l.starts_with("| "))
        .take(3)
        .collect();
    assert_eq!(table.len(), 3, "{md}");
    assert!(table[0]
        .contains("| tokens | USD | wall s | local CPU s | pass@1 | front | S_comp | front |"));
    let strong_row = table.iter().find(|l| l.contains("/full ")).unwrap();
    let weak_row = table.iter().find(|l| l.contains("/short ")).unwrap();
    assert!(
        strong_row.contains("| 0.0200 |") && strong_row.ends_with("| ◆ |"),
        "{strong_row}"
    );
    assert!(
        weak_row.contains("| 0.0500 |") && !weak_row.contains('◆'),
        "{weak_row}"
    );
    let png = std::fs::read(report.join("charts/cost_accuracy.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert!(md.contains("charts/cost_accuracy.png"));
}

/// The example's recorded answers as a scripted server's replies.
fn example_replies(times: usize) -> Vec<Reply> {
    let messages = example_messages();
    (0..times)
        .flat_map(|_| {
            messages
                .iter()
                .map(|m| Reply::Json(200, openai_answer(m.clone())))
        })
        .collect()
}

#[test]
fn max_cost_stops_a_live_eval_at_its_budget_and_resume_runs_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let server = FakeServer::start(example_replies(3));
    let base = format!("{}/v1", server.url);
    let out = dir.path().join("eval");
    let run = |budget: &str, resume: bool| {
        let mut args = vec![
            "--suite",
            suite.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "gpt-4o-mini",
            "--base-url",
            &base,
            "--runs",
            "3",
            "--max-cost",
            budget,
            "--out",
            out.to_str().unwrap(),
        ];
        if resume {
            args.push("--resume");
        }
        eval(&args, &[("OPENAI_API_KEY", "sk-test-budget")])
    };
    // One run costs 6 answers × (100 × $0.15 + 20 × $0.60) per million
    // tokens = $0.000162: past a $0.0001 budget after the first.
    let o = run("0.0001", false);
    let said = text(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains(
            "the --max-cost budget of $0.0001 is spent ($0.0002 recorded): 2 run(s) not started"
        ),
        "{said}"
    );
    let records: Vec<_> = std::fs::read_dir(out.join("records")).unwrap().collect();
    assert_eq!(records.len(), 1, "{said}");
    let record = read_json(&out.join("records/heat-island.single.1.json"));
    assert!(
        (record["cost_usd"].as_f64().unwrap() - 0.000162).abs() < 1e-9,
        "{record:#}"
    );
    assert!(out.join("report.md").is_file());
    assert!(
        !out.join("failed").exists()
            || std::fs::read_dir(out.join("failed"))
                .unwrap()
                .next()
                .is_none()
    );
    // The same budget again starts nothing; a higher one runs the rest.
    let o = run("0.0001", true);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(server.requests().len(), 6);
    let o = run("1", true);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read_dir(out.join("records")).unwrap().count(), 3);
    // An unpriced model cannot be held to a budget.
    let o = eval(
        &[
            "--suite",
            suite.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "no-such-priced-model",
            "--base-url",
            &base,
            "--max-cost",
            "1",
            "--out",
            dir.path().join("unpriced").to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-test-budget")],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--max-cost: the model `no-such-priced-model` has no known price"));
}
