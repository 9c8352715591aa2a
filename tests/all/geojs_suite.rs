//! The GeoJSEval suite end to end, in the confined JavaScript runtime:
//! `bench verify benchmarks/geojs` (every reference and second route of
//! the shipped suite), the suite's counts against the paper's, and `eval`
//! with recorded model answers scored by the paper's error types, with
//! Table 7 and the Fig. 8 heatmap rendered.

use crate::common;

use common::{gisclaw, read_json, write_jsonl};
use gisclaw::bench::geojs::{JsLibrary, JsOutputType, JsSuite};
use gisclaw::llm::Message;

fn shipped() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geojs")
}

#[test]
fn the_shipped_suite_has_the_papers_scale_every_library_and_every_output_type() {
    let suite = JsSuite::load(&shipped()).unwrap();
    let cases = suite.instances();
    assert!(suite.task_count() >= 432, "{} tasks", suite.task_count());
    assert!(cases.len() >= 2071, "{} cases", cases.len());
    for library in JsLibrary::ALL {
        assert!(
            suite.tasks().filter(|(l, _)| *l == library).count() >= 30,
            "{} has too few tasks",
            library.name()
        );
    }
    for output in JsOutputType::ALL {
        assert!(
            suite.tasks().any(|(_, t)| t.output_type == output),
            "no task returns {}",
            output.name()
        );
    }
    assert!(suite.tasks().all(|(_, t)| t.confirm.is_some()));
    assert!(suite
        .tasks()
        .all(|(_, t)| t.parameters_list.iter().any(|p| p.edge_test)));
    for case in &cases {
        assert!(
            suite.expected.contains_key(&case.key),
            "{}: no recorded answer",
            case.key
        );
    }
}

#[test]
fn bench_verify_passes_every_reference_and_second_route_of_the_shipped_suite() {
    let out = common::workdir();
    let run = gisclaw(
        &[
            "bench",
            "verify",
            shipped().to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.contains("reference answers agree"), "{last}");
    // n/n agree, both times.
    let counts: Vec<(u64, u64)> = last
        .split_whitespace()
        .filter_map(|w| {
            let (a, b) = w.split_once('/')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    assert_eq!(counts.len(), 2, "{last}");
    assert!(counts.iter().all(|(a, b)| a == b && *a >= 2071), "{last}");
}

const TASKS: &str = r#"library: turf
tasks:
  - id: area
    data_type: geometry
    operation: measurement
    function_header: |
      function T_area(coords) {
        /**
         * The Turf.js library has already been pre-loaded, so don't load it again.
         *
         * Area in square meters of the polygon with the ring `coords`; 0 when
         * `coords` is not an array.
         *
         * @param {Array} coords - one closed ring of [lng, lat]
         * @return {number} area in m²
         */
      }
    reference_code: |
      function T_area(coords) {
        if (!Array.isArray(coords)) return 0;
        return turf.area(turf.polygon([coords]));
      }
    output_type: Number
    tolerance: {rel: 1.0e-9}
    parameters_list:
      - params: {coords: [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]}
      - params: {coords: null}
        edge_test: true
    confirm:
      route: hand
      note: "spherical excess with turf's radius"
      code: |
        function T_area(coords) {
          if (!Array.isArray(coords)) return 0;
          const R = 6371008.8, rad = (d) => d * Math.PI / 180;
          let total = 0;
          for (let i = 0; i < coords.length - 1; i++) {
            const [l1, p1] = coords[i], [l2, p2] = coords[i + 1];
            total += rad(l2 - l1) * (2 + Math.sin(rad(p1)) + Math.sin(rad(p2)));
          }
          return Math.abs(total * R * R / 2);
        }
  - id: center
    data_type: geometry
    operation: measurement
    function_header: |
      function T_center(points) {
        /**
         * The Turf.js library has already been pre-loaded, so don't load it again.
         *
         * The center (of the bounding box) of the points as a GeoJSON Point
         * Feature; null when there are none.
         *
         * @param {Array} points - [lng, lat] pairs
         * @return {Object} a Point Feature
         */
      }
    reference_code: |
      function T_center(points) {
        if (!Array.isArray(points) || points.length === 0) return null;
        return turf.center(turf.points(points));
      }
    output_type: Feature
    parameters_list:
      - params: {points: [[0, 0], [2, 4]]}
      - params: {points: []}
        edge_test: true
    confirm:
      route: hand
      note: "the middle of the bounding box"
      code: |
        function T_center(points) {
          if (!Array.isArray(points) || points.length === 0) return null;
          const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
          return {type: 'Feature', properties: {}, geometry: {type: 'Point',
            coordinates: [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2]}};
        }
"#;

const LEAFLET: &str = r#"library: leaflet
tasks:
  - id: view
    data_type: map
    operation: visualisation
    function_header: |
      function L_view(lat, lng, zoom) {
        /**
         * The Leaflet library has already been pre-loaded, so don't load it again.
         *
         * A map in a new div, centred on (lat, lng) at `zoom`.
         *
         * @return {L.Map} the map
         */
      }
    reference_code: |
      function L_view(lat, lng, zoom) {
        return L.map(document.createElement('div')).setView([lat, lng], zoom);
      }
    output_type: leaflet.Map
    eval_methods: ["getCenter()", "getZoom()"]
    parameters_list:
      - params: {lat: 51.5, lng: -0.09, zoom: 13}
      - params: {lat: 0, lng: 0, zoom: 0}
        edge_test: true
    confirm:
      route: docs
      note: "a map's center and zoom are what setView was given"
      code: |
        function L_view(lat, lng, zoom) {
          return {getCenter: () => L.latLng(lat, lng), getZoom: () => zoom};
        }
"#;

/// A two-library suite in `dir/suite` with its answers recorded.
fn small_suite(dir: &std::path::Path) -> std::path::PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(suite.join("cases")).unwrap();
    std::fs::write(suite.join("cases/turf.yaml"), TASKS).unwrap();
    std::fs::write(suite.join("cases/leaflet.yaml"), LEAFLET).unwrap();
    let expect = gisclaw(&["bench", "expect", suite.to_str().unwrap()], &[]);
    assert!(
        expect.status.success(),
        "{}",
        String::from_utf8_lossy(&expect.stderr)
    );
    suite
}

fn answer(code: &str) -> Message {
    Message {
        content: Some(format!("Here it is:\n```javascript\n{code}\n```")),
        ..Message::default()
    }
}

#[test]
fn an_eval_types_every_failure_the_papers_way_and_renders_table_7_and_fig_8() {
    let dir = common::workdir();
    let suite = small_suite(dir.path());
    let rec = dir.path().join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    // Area: right; right but with a redundant require (passes: no error);
    // a syntax error; the wrong type; a redundant import that breaks it.
    write_jsonl(
        &rec.join("turf.area.jsonl"),
        &[
            answer("function T_area(coords) {\n  if (!Array.isArray(coords)) return 0;\n  return turf.area(turf.polygon([coords]));\n}"),
            answer("function T_area(coords) {\n  if (!Array.isArray(coords)) return 0;\n  return turf.area(turf.polygon([coords]) ;\n}"),
            answer("function T_area(coords) {\n  return String(Array.isArray(coords) ? turf.area(turf.polygon([coords])) : 0);\n}"),
            answer("const turf = require('@turf/turf');\nfunction T_area(coords) {\n  return turf.area(turf.polygon([coords]));\n}"),
            answer("function T_area(coords) {\n  return turf.areaOf(coords);\n}"),
        ],
    );
    // Center: right, another function with the same answers, a wrong
    // value, a runaway loop (cut at --cell-timeout), and a property that
    // does not exist.
    write_jsonl(
        &rec.join("turf.center.jsonl"),
        &[
            answer("function T_center(points) {\n  if (!Array.isArray(points) || points.length === 0) return null;\n  return turf.center(turf.points(points));\n}"),
            answer("function T_center(points) {\n  if (!points || !points.length) return null;\n  return turf.centroid(turf.points(points));\n}"),
            answer("function T_center(points) {\n  if (!points || !points.length) return null;\n  return turf.point(points[0]);\n}"),
            answer("function T_center(points) {\n  while (true) {}\n}"),
            answer("function T_center(points) {\n  return turf.center(turf.points(points)).geometry.coords.slice();\n}"),
        ],
    );
    write_jsonl(
        &rec.join("leaflet.view.jsonl"),
        &[
            answer("function L_view(lat, lng, zoom) {\n  return L.map(document.createElement('div')).setView([lat, lng], zoom);\n}"),
            answer("function L_view(lat, lng, zoom) {\n  return L.map(document.createElement('div')).setView([lng, lat], zoom);\n}"),
            answer("function L_view(lat, lng, zoom) {\n  return {center: [lat, lng], zoom};\n}"),
            answer("function L_view(lat, lng, zoom) {\n  return L.map(document.createElement('div')).setView([lat, lng], zoom);\n}"),
            answer("function L_view(lat, lng, zoom) {\n  return L.map(document.createElement('div')).setView([lat, lng], zoom);\n}"),
        ],
    );
    let out = dir.path().join("eval");
    let run = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--replay",
            rec.to_str().unwrap(),
            "--runs",
            "5",
            "--html",
            "--cell-timeout",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let record = |name: &str| read_json(&out.join("records").join(name));
    let errors = |r: &serde_json::Value| -> Vec<String> {
        r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["error"].as_str().unwrap_or("pass").to_string())
            .collect()
    };
    assert_eq!(
        errors(&record("turf.area.json")),
        [
            "pass",
            "syntax",
            "output_type",
            "other",
            "attribute_parameter"
        ]
    );
    assert_eq!(
        errors(&record("turf.center.json")),
        [
            "pass",
            "pass",
            "invalid_answer",
            "timeout",
            "attribute_parameter"
        ]
    );
    assert_eq!(
        errors(&record("leaflet.view.json")),
        ["pass", "invalid_answer", "output_type", "pass", "pass"]
    );
    // Each case's result at its output_path, as the paper's harness keeps them.
    let saved = read_json(&out.join("outputs/sample-1/output/turf/area_1.json"));
    assert_eq!(saved["kind"], "Number");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.starts_with("# GeoJSEval eval"), "{md}");
    assert!(md.contains("## Accuracy (GeoJSEval Table 7)"), "{md}");
    // pass@1 over the 3 tasks: (1/5 + 2/5 + 3/5) / 3 = 0.4.
    assert!(md.contains("| 40.00 |"), "{md}");
    assert!(
        md.contains("## Accuracy by library (GeoJSEval Fig. 8)"),
        "{md}"
    );
    assert!(out.join("charts/fig8_library_heatmap.png").is_file());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("GeoJSEval Table 7"));
    assert!(
        html.contains("data:image/png;base64,"),
        "charts are inlined"
    );
    // Re-rendered from the folder alone, the same tables.
    let again = gisclaw(&["eval", "report", out.to_str().unwrap()], &[]);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(std::fs::read_to_string(out.join("report.md")).unwrap(), md);
}

#[test]
fn a_replay_gold_eval_of_the_shipped_suite_passes_by_library() {
    let out = common::workdir();
    let run = gisclaw(
        &[
            "eval",
            "--suite",
            shipped().to_str().unwrap(),
            "--replay-gold",
            "--runs",
            "1",
            "--tasks",
            "1-8,90-97,180-187,300-307,420-427",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let md = std::fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("## Accuracy (GeoJSEval Table 7)"), "{md}");
    assert!(
        md.contains("| reference implementations | 100.00 |"),
        "{md}"
    );
    assert!(
        md.contains("## Accuracy by library (GeoJSEval Fig. 8)"),
        "{md}"
    );
    for library in ["turf", "jsts", "geolib", "leaflet", "ol"] {
        assert!(
            md.contains(&format!("| reference implementations | {library} |")),
            "{library} missing from Fig. 8: {md}"
        );
    }
    assert!(out.path().join("charts/fig8_library_heatmap.png").is_file());
}
