//! `gisclaw eval` on a unit suite end to end: recorded model answers run in
//! the real sandbox on the normal and boundary calls, judged against the
//! reference answers `bench expect` recorded; pass@k, error types, resume
//! and re-rendering checked against numbers worked out by hand.

use crate::common;

use common::{gisclaw, read_json, write_jsonl};
use gisclaw::llm::Message;
use serde_json::Value;

const CASES: &str = r#"library: demo
cases:
  - id: area
    header: |
      def area(w: float, h: float) -> float:
          """Area of a w × h rectangle; raise ValueError for a negative side."""
    reference: |
      def area(w, h):
          if w < 0 or h < 0:
              raise ValueError("negative side")
          return w * h
    params: {w: 2, h: 3}
    output: number
    data_type: geometry
    operation: measurement
    boundary:
      - {w: 0}
      - {w: -1}
  - id: hull
    header: |
      def hull(points: list) -> float:
          """Area of the convex hull of (x, y) pairs."""
    reference: |
      def hull(points):
          from shapely.geometry import MultiPoint
          return MultiPoint(points).convex_hull.area
    params: {points: [[0, 0], [2, 0], [2, 2], [0, 2], [1, 1]]}
    output: number
    data_type: coordinates
    operation: geometry
"#;

fn answer(code: &str) -> Message {
    Message {
        content: Some(format!("```python\n{code}\n```")),
        ..Message::default()
    }
}

/// The demo suite in `dir/suite`, with its reference answers recorded.
fn demo_suite(dir: &std::path::Path) -> std::path::PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(suite.join("cases")).unwrap();
    std::fs::write(suite.join("cases/demo.yaml"), CASES).unwrap();
    let expect = gisclaw(
        &[
            "bench",
            "expect",
            suite.to_str().unwrap(),
            "--out",
            dir.join("expect").to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        expect.status.success(),
        "{}",
        String::from_utf8_lossy(&expect.stderr)
    );
    suite
}

const GOOD_AREA: &str =
    "def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('no')\n    return w * h";
const GOOD_HULL: &str =
    "def hull(points):\n    import shapely\n    return shapely.MultiPoint(points).convex_hull.area";

#[test]
fn a_unit_eval_scores_samples_by_pass_at_k_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let suite = demo_suite(dir.path());

    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let good = GOOD_AREA;
    write_jsonl(
        &rec.join("demo.area.jsonl"),
        &[
            answer(good),
            answer("def area(w, h):\n    return w + h"), // wrong value
            answer("def area(w, h)\n    return w * h"),  // syntax error
            answer(good),
            answer("def area(w, h):\n    return w.area(h)"), // AttributeError
        ],
    );
    write_jsonl(&rec.join("demo.hull.jsonl"), &vec![answer(GOOD_HULL); 5]);

    let out = dir.path().join("eval");
    let args = [
        "eval",
        "--suite",
        suite.to_str().unwrap(),
        "--runs",
        "5",
        "--replay",
        rec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let run = gisclaw(&args, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{stderr}");
    // Progress without a terminal: one line per case with the running tally
    // (a case succeeds when every sample passed: area 2/5, hull 5/5).
    assert!(
        stderr.contains("5 samples per case") && stderr.contains("2 cases, 0 already recorded"),
        "{stderr}"
    );
    assert!(
        stderr.contains("demo/hull: 5/5 samples pass · ") && stderr.contains(" · 1/2 succeeded · "),
        "{stderr}"
    );

    let area = read_json(&out.join("records/demo.area.json"));
    let samples = area["samples"].as_array().unwrap();
    let passed: Vec<bool> = samples
        .iter()
        .map(|s| s["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(passed, [true, false, false, true, false]);
    let errors: Vec<&Value> = samples.iter().map(|s| &s["error"]).collect();
    assert_eq!(
        errors,
        [
            &Value::Null,
            &Value::from("invalid_answer"),
            &Value::from("syntax"),
            &Value::Null,
            &Value::from("attribute_parameter")
        ]
    );
    // Three calls per sample: the normal call and both boundaries (the
    // negative side must raise ValueError, as the reference does).
    assert_eq!(samples[0]["calls"].as_array().unwrap().len(), 3);
    assert_eq!(
        samples[1]["calls"][2]["passed"], false,
        "w + h returns where the reference raises"
    );

    // pass@k per case, averaged: area 2 of 5, hull 5 of 5.
    // pass@1 = (0.4 + 1)/2; pass@3 = ((1 − C(3,3)/C(5,3)) + 1)/2 = 0.95; pass@5 = 1.
    let results = read_json(&out.join("results.json"));
    let pass = &results["summary"]["pass_at"];
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
    assert!(
        close(&pass["1"], 0.7) && close(&pass["3"], 0.95) && close(&pass["5"], 1.0),
        "{pass}"
    );
    assert_eq!(
        results["summary"]["errors"],
        serde_json::json!({"attribute_parameter": 1, "invalid_answer": 1, "syntax": 1})
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 10);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| pass@1 | 0.700 |") && md.contains("| demo/area | 2/5 |"),
        "{md}"
    );

    // A second start without --resume is refused; with it nothing reruns.
    let again = gisclaw(&args, &[]);
    assert_eq!(again.status.code(), Some(2));
    let mut resume = args.to_vec();
    resume.push("--resume");
    let resumed = gisclaw(&resume, &[]);
    let text = String::from_utf8_lossy(&resumed.stderr).to_string();
    assert!(
        resumed.status.success() && text.contains("2 cases, 2 already recorded"),
        "{text}"
    );
    assert_eq!(read_json(&out.join("records/demo.area.json")), area);

    // `eval report` re-renders the same figures from the records alone.
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

#[test]
fn several_models_get_autogeeval_tables_with_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let suite = demo_suite(dir.path());
    let eval = |name: &str, source: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--runs",
            "3",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(source);
        let run = gisclaw(&args, &[]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        out
    };
    // Model A: area right once in three (then a wrong value, a syntax
    // error), hull always right. Model B: area always right, hull raising
    // (a runtime error). Model C: the reference implementations.
    let rec_a = dir.path().join("rec-a");
    std::fs::create_dir(&rec_a).unwrap();
    write_jsonl(
        &rec_a.join("demo.area.jsonl"),
        &[
            answer(GOOD_AREA),
            answer("def area(w, h):\n    return w + h"),
            answer("def area(w, h)\n    return w * h"),
        ],
    );
    write_jsonl(&rec_a.join("demo.hull.jsonl"), &vec![answer(GOOD_HULL); 3]);
    let rec_b = dir.path().join("rec-b");
    std::fs::create_dir(&rec_b).unwrap();
    write_jsonl(&rec_b.join("demo.area.jsonl"), &vec![answer(GOOD_AREA); 3]);
    write_jsonl(
        &rec_b.join("demo.hull.jsonl"),
        &vec![answer("def hull(points):\n    return 1 / 0"); 3],
    );
    let a = eval("a", &["--replay", rec_a.to_str().unwrap()]);
    let b = eval("b", &["--replay", rec_b.to_str().unwrap()]);
    let c = eval("c", &["--replay-gold"]);
    let out = dir.path().join("compared");
    let run = gisclaw(
        &[
            "eval",
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("Total_Rank"), "{stderr}");
    let results = read_json(&out.join("results.json"));
    let models = results["models"].as_array().unwrap();
    assert_eq!(models.len(), 3);
    let close = |v: &Value, x: f64| (v.as_f64().unwrap() - x).abs() < 1e-12;
    // pass@1: A (1/3 + 1)/2, B (1 + 0)/2, C 1. pass@3: A 1, B 0.5, C 1.
    let p = |m: usize, k: &str| models[m]["summary"]["pass_at"][k].clone();
    assert!(close(&p(0, "1"), (1.0 / 3.0 + 1.0) / 2.0) && close(&p(0, "3"), 1.0));
    assert!(close(&p(1, "1"), 0.5) && close(&p(1, "3"), 0.5));
    assert!(close(&p(2, "1"), 1.0) && close(&p(2, "3"), 1.0));
    // The papers' CV of (pass@1, pass@3): A's is σ/μ of (2/3, 1); B's 0.
    let (x, y): (f64, f64) = (2.0 / 3.0, 1.0);
    let m = (x + y) / 2.0;
    let cv_a = (((x - m) * (x - m) + (y - m) * (y - m)) / 2.0).sqrt() / m;
    assert!(close(&models[0]["summary"]["cv_pass_at"], cv_a));
    assert!(close(
        &models[0]["summary"]["stability_adjusted_pass_at"],
        1.0 / (1.0 + cv_a)
    ));
    assert!(close(&models[1]["summary"]["cv_pass_at"], 0.0));
    // Ranks: P by pass@3 (the largest k sampled, as AutoGEEval ranks by
    // pass@5): C and A 1, B 0.5.
    let rank = |m: usize, r: &str| models[m]["ranks"][r].as_u64().unwrap();
    assert_eq!((rank(2, "p"), rank(0, "p"), rank(1, "p")), (1, 1, 3));
    // C_Rank by the CV (lower first): B and C 0, then A.
    assert_eq!((rank(1, "c"), rank(2, "c"), rank(0, "c")), (1, 1, 3));
    // The reference spends no tokens and no time: last in T and I.
    assert_eq!((rank(2, "t"), rank(2, "i")), (3, 3));
    // Error types per model (AutoGEEval Table 10).
    assert_eq!(
        models[0]["summary"]["errors"],
        serde_json::json!({"invalid_answer": 1, "syntax": 1})
    );
    assert_eq!(
        models[1]["summary"]["errors"],
        serde_json::json!({"runtime": 3})
    );
    // Replays and references have no temperature: the server default is said.
    assert!(models.iter().all(|m| m["temperature"].is_null()));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for heading in [
        "## Accuracy (cf. AutoGEEval Table 5, GeoJSEval Table 7",
        "## Stability ranks (cf. AutoGEEval Table 6)",
        "## Resources (cf. AutoGEEval Table 7)",
        "## Efficiency (cf. AutoGEEval Table 8)",
        "## Ranks (cf. AutoGEEval Table 9)",
        "## Failing samples by error type (cf. AutoGEEval Table 10)",
        "## pass@1 by library",
    ] {
        assert!(md.contains(heading), "{heading}\n{md}");
    }
    let label = |m: usize| models[m]["model"].as_str().unwrap().to_string();
    assert!(
        md.contains(&format!(
            "| {} | {:.3} | 1.000 (+{:.3}) | – | ",
            label(0),
            (1.0 / 3.0 + 1.0) / 2.0,
            1.0 - (1.0 / 3.0 + 1.0) / 2.0
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!("| {} | 2 × 3 | server default |", label(1))),
        "{md}"
    );
    assert!(
        md.contains(&format!("| {} | 0 | 0 | 0 | 0 | 3 (100.0 %) |", label(1))),
        "{md}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2 * 3);
    // A unit folder is not compared with a task folder.
    let mixed = gisclaw(
        &[
            "eval",
            "report",
            a.to_str().unwrap(),
            dir.path().join("suite").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(mixed.status.code(), Some(2));
}
