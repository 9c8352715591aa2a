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
    assert_eq!(gold.len(), 10);
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
        stderr.contains("G01 run 1: 3/10 steps pass, complete@1 0.200 · 0/1 succeeded · "),
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
        [true, true, false, true, false, false, false, false, false, false],
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
    // complete@1 = 2/10 (steps 1–2), step pass rate = 3/10, not every step passed.
    assert!((record["complete_at_1"].as_f64().unwrap() - 2.0 / 10.0).abs() < 1e-12);
    assert!((record["step_pass_rate"].as_f64().unwrap() - 3.0 / 10.0).abs() < 1e-12);
    // Executed (GeoAgent's complete rate): steps 1–4 ran and answered, step
    // 3 wrongly; the run ended in step 5. 4/10.
    assert!((record["complete_at_1_executed"].as_f64().unwrap() - 4.0 / 10.0).abs() < 1e-12);
    assert_eq!(record["passed"], false);
    // The transcript shows the check of every step that was reached (the
    // run ended during step 5; steps 6 to 10 were never given).
    let transcript = common::records::checked(&out.join("runs/G01/run-1/transcript.jsonl"));
    assert_eq!(
        transcript
            .lines()
            .filter(|l| l.contains("\"event\":\"check\""))
            .count(),
        5
    );

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| 0.200 | 0.400 | 0.300 | 0.000 |")
            && md.contains("| G01 | 1 | 0.200 | 0.300 | 0 |"),
        "{md}"
    );
    let results = read_json(&out.join("results.json"));
    // Step 3 a wrong value; step 5's check raised NameError (its variable was
    // never made: the taxonomy's attribute/parameter type); steps 6 to 10 other.
    assert_eq!(
        results["summary"]["errors"],
        json!({ "attribute_parameter": 1, "invalid_answer": 1, "other": 5 })
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

/// An assistant answer with `code` in one fenced block (the LLM alone).
fn fenced(code: &str) -> Message {
    Message {
        content: Some(format!("Here is the step:\n```python\n{code}\n```")),
        ..Message::default()
    }
}

#[test]
fn the_llm_alone_and_the_gold_prefix_are_modes_of_the_step_suite() {
    let gold = split_cells(&std::fs::read_to_string(suite().join("G01/gold.py")).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let suite = suite();
    let eval = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = gisclaw(&args, &[]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        read_json(&out.join("records/G01.1.json"))
    };
    // The gold played as the LLM alone, with and without the gold prefix,
    // passes every step.
    for extra in [
        &["--arch", "none"][..],
        &["--arch", "none", "--gold-prefix"][..],
        &["--gold-prefix"][..],
    ] {
        let mut args = vec!["--replay-gold"];
        args.extend_from_slice(extra);
        let name = format!("gold{}", extra.join(""));
        let record = eval(&name, &args);
        assert_eq!(record["complete_at_1"], 1.0, "{extra:?}: {record}");
    }
    // The LLM alone breaks step 2 (walk_zone never made): on its own state
    // steps 3 on fail too; from the gold prefix only step 2 fails.
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let mut answers: Vec<Message> = gold.iter().map(|c| fenced(c)).collect();
    answers[1] = fenced("walk_zone = parks.buffer(400).unary_union(");
    let lines: Vec<String> = answers
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    std::fs::write(rec.join("G01.jsonl"), lines.join("\n") + "\n").unwrap();
    let replay = rec.to_str().unwrap();
    let own = eval("own", &["--replay", replay, "--arch", "none"]);
    let passed = |r: &Value| -> Vec<bool> {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["passed"].as_bool().unwrap())
            .collect()
    };
    assert_eq!(passed(&own)[..3], [true, false, false], "{own}");
    assert_eq!(
        own["steps"][1]["error"], "syntax",
        "the cell's error, not the check's"
    );
    assert_eq!(own["steps"][1]["ending"], "answered");
    let prefixed = eval(
        "prefixed",
        &["--replay", replay, "--arch", "none", "--gold-prefix"],
    );
    assert_eq!(
        passed(&prefixed),
        [true, false, true, true, true, true, true, true, true, true],
        "{prefixed}"
    );
    assert!((prefixed["step_pass_rate"].as_f64().unwrap() - 9.0 / 10.0).abs() < 1e-12);
    // Each step after the first ran in its own fresh session folder.
    assert!(dir.path().join("prefixed/runs/G01/run-1/step-10").is_dir());
    // The LLM alone sees no tool and no output: one model call per step.
    assert_eq!(prefixed["rounds"], 10);
    // The report says which mode a folder ran.
    let md = std::fs::read_to_string(dir.path().join("prefixed/report.md")).unwrap();
    assert!(
        md.starts_with("# Step eval: ")
            && md
                .lines()
                .next()
                .unwrap()
                .ends_with(" · LLM alone · gold prefix"),
        "{md}"
    );
    // Several folders side by side (GeoAgent Tables 4 and 6, its error types).
    eval("gold-agent", &["--replay-gold"]);
    let folder = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let compared = dir.path().join("compared");
    let (a, b, c, d) = (
        folder("gold--archnone"),
        folder("gold-agent"),
        folder("own"),
        folder("prefixed"),
    );
    let run = gisclaw(
        &[
            "eval",
            "report",
            &a,
            &b,
            &c,
            &d,
            "--out",
            compared.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let md = std::fs::read_to_string(compared.join("report.md")).unwrap();
    // Table 4: the gold replay's LLM alone beside its agent, both 1.000;
    // the recorded LLM alone has no agent folder (–). On its own state it
    // passes step 1 and steps 8 to 10 (parks per district, park perimeter
    // and park area by kind need no walk zone).
    assert!(
        md.contains("| geocode | 1.000 | 1.000 | 0.400 | – | 0.900 | – |"),
        "{md}"
    );
    // Table 6: G01 with its 10 steps; complete@1 per folder.
    assert!(
        md.contains("| G01 | 10 | 1.00 | 1.00 | 0.10 | 0.10 |"),
        "{md}"
    );
    // GeoAgent's error types, from the records' types.
    let geo = |r: &Value, t: &str| {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["error"].as_str())
            .filter(|e| match t {
                "general" => {
                    ["syntax", "runtime", "timeout", "blocked_import", "other"].contains(e)
                }
                _ => *e == "attribute_parameter",
            })
            .count()
    };
    // Counts with their share of the folder's failing steps.
    let (h, g) = (geo(&own, "hallucination"), geo(&own, "general"));
    let with_share = |n: usize| {
        if n == 0 {
            "0".to_string()
        } else {
            format!("{n} ({:.1} %)", 100.0 * n as f64 / (h + g) as f64)
        }
    };
    let row = format!(
        " · LLM alone | 0 | {} | – | {} |",
        with_share(h),
        with_share(g)
    );
    assert!(
        geo(&own, "general") >= 1 && md.contains(&row),
        "{row}\n{md}"
    );
    // --gold-prefix is for step suites; a step suite has no dual agent.
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geoanalyst");
    let refused = gisclaw(
        &[
            "eval",
            "--suite",
            tasks.to_str().unwrap(),
            "--replay-gold",
            "--tasks",
            "1",
            "--gold-prefix",
        ],
        &[],
    );
    assert_eq!(refused.status.code(), Some(2));
    let refused = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--replay-gold",
            "--arch",
            "dual",
        ],
        &[],
    );
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn interventions_show_the_gold_cell_after_k_failures_and_are_counted() {
    // G01 with --interventions 2. Step 1: two failing cells give up the
    // first attempt; the person shows the gold cell, which the model runs.
    // Step 2: a wrong answer and step_done; shown the gold, the model runs
    // it. Steps 3–6: the gold at once (no intervention). A folder without
    // interventions from the same kind of run is "Aut.", this one "Hum.".
    let gold = split_cells(&std::fs::read_to_string(suite().join("G01/gold.py")).unwrap());
    let done = || call("step_done", json!({ "summary": "done" }));
    let run = |code: &str| call("execute_python", json!({ "code": code }));
    let mut messages = vec![
        run("homes = gpd.read_fil('data/homes.geojson')"),
        run("homes = gpd.read_fil('data/homes.geojson')  # again"),
        run(&gold[0]),
        done(),
        run("walk_zone = parks.buffer(40).union_all()"),
        done(),
        run(&gold[1]),
        done(),
    ];
    for cell in &gold[2..] {
        messages.push(run(cell));
        messages.push(done());
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    common::write_jsonl(&rec.join("G01.jsonl"), &messages);
    let eval = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let suite = suite();
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = gisclaw(&args, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    };
    let hum = eval(
        "hum",
        &["--replay", rec.to_str().unwrap(), "--interventions", "2"],
    );
    let record = read_json(&hum.join("records/G01.1.json"));
    let hints: Vec<u64> = record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["hints"].as_u64().unwrap())
        .collect();
    assert_eq!(hints, [1, 1, 0, 0, 0, 0, 0, 0, 0, 0], "{record:#}");
    assert_eq!(record["passed"], true, "{record:#}");
    let transcript = common::records::checked(&hum.join("runs/G01/run-1/transcript.jsonl"));
    let shown: Vec<&str> = transcript
        .lines()
        .filter(|l| l.contains("A person steps in"))
        .collect();
    assert_eq!(shown.len(), 2, "{transcript}");
    assert!(shown[1].contains("parks.buffer(400)"), "{}", shown[1]);
    assert_eq!(read_json(&hum.join("eval.json"))["interventions"], 2);
    // Step 1's calls include the hallucinated read_fil; Table 5 sees it.
    let steps = record["steps"].as_array().unwrap();
    assert!(
        steps[0]["calls"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "geopandas.read_fil"),
        "{record:#}"
    );

    let aut = eval("aut", &["--replay-gold"]);
    let both = dir.path().join("both");
    let o = gisclaw(
        &[
            "eval",
            "report",
            aut.to_str().unwrap(),
            hum.to_str().unwrap(),
            "--out",
            both.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    assert!(
        md.contains("| task | steps | Aut. gold replay | Hum. recorded"),
        "{md}"
    );
    // Hum.: complete@1 1.00 with 2 interventions in the run.
    assert!(md.contains("| G01 | 10 | 1.00 | 1.00 (2.0) |"), "{md}");
    assert!(
        md.contains("## Function calls (cf. GeoAgent Table 5)"),
        "{md}"
    );
    // Reusing the folder with other interventions is refused.
    let again = gisclaw(
        &[
            "eval",
            "--suite",
            suite().to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            "--replay",
            rec.to_str().unwrap(),
            "--out",
            hum.to_str().unwrap(),
            "--resume",
            "--interventions",
            "3",
        ],
        &[],
    );
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("field `interventions` differs"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}
