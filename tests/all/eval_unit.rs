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
"#;

fn answer(code: &str) -> Message {
    Message {
        content: Some(format!("```python\n{code}\n```")),
        ..Message::default()
    }
}

#[test]
fn a_unit_eval_scores_samples_by_pass_at_k_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(suite.join("cases")).unwrap();
    std::fs::write(suite.join("cases/demo.yaml"), CASES).unwrap();
    let expect = gisclaw(
        &[
            "bench",
            "expect",
            suite.to_str().unwrap(),
            "--out",
            dir.path().join("expect").to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        expect.status.success(),
        "{}",
        String::from_utf8_lossy(&expect.stderr)
    );

    let rec = dir.path().join("rec");
    std::fs::create_dir(&rec).unwrap();
    let good =
        "def area(w, h):\n    if w < 0 or h < 0:\n        raise ValueError('no')\n    return w * h";
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
    let hull = "def hull(points):\n    import shapely\n    return shapely.MultiPoint(points).convex_hull.area";
    write_jsonl(&rec.join("demo.hull.jsonl"), &vec![answer(hull); 5]);

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
