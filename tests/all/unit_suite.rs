//! Function-level cases (`benchmarks/unit/`): references agree with their
//! recorded answers, every judge accepts the recorded answer and rejects a
//! perturbed one, wrong solutions are caught through the real sandbox.

use crate::common;

use std::path::PathBuf;

use common::{gisclaw, repo, session, text};
use gisclaw::bench::judge::{judge, perturb, Mismatch};
use gisclaw::bench::unit::{run_instance, UnitSuite};

fn suite_dir() -> PathBuf {
    repo().join("benchmarks/unit")
}

#[test]
fn every_reference_agrees_with_its_recorded_answer() {
    let out = tempfile::tempdir().unwrap();
    let run = gisclaw(
        &[
            "bench",
            "verify",
            suite_dir().to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    let printed = text(&run);
    assert!(run.status.success(), "{printed}");
    let suite = UnitSuite::load(&suite_dir()).unwrap();
    assert!(
        suite.case_count() >= 1000,
        "the suite holds at least 1,000 cases (issue 54)"
    );
    let n = suite.instances().len();
    assert!(
        n >= 2000,
        "at least 2,000 calls with the boundary calls: {n}"
    );
    assert!(
        printed.contains(&format!("{n}/{n} reference answers agree")),
        "{printed}"
    );
    let libraries: std::collections::BTreeSet<String> =
        suite.labels().into_values().map(|l| l.library).collect();
    for library in &libraries {
        assert!(
            printed.lines().any(|l| l.starts_with(library.as_str())),
            "{library} is in the table: {printed}"
        );
    }
    // Every second route agrees on every call it makes.
    let routes = printed
        .split("second routes: ")
        .nth(1)
        .and_then(|t| t.split(" calls").next())
        .unwrap_or_default();
    let (agree, of) = routes.split_once('/').unwrap_or_default();
    assert_eq!(agree, of, "{printed}");
    // Every case has one, and it covers every call of the case.
    assert_eq!(of, n.to_string(), "{printed}");
    let unconfirmed: Vec<String> = suite
        .files
        .iter()
        .flat_map(|(_, f)| {
            f.cases
                .iter()
                .filter(|c| c.confirm.is_none())
                .map(|c| format!("{}/{}", f.library, c.id))
        })
        .collect();
    assert!(
        unconfirmed.is_empty(),
        "cases without a second route: {unconfirmed:?}"
    );
    assert!(libraries.len() >= 15, "{libraries:?}");
}

#[test]
fn judges_accept_recorded_answers_and_reject_perturbed_ones() {
    let suite = UnitSuite::load(&suite_dir()).unwrap();
    let instances = suite.instances();
    assert_eq!(
        instances.len(),
        suite.expected.len(),
        "every instance has a recorded answer and no other is recorded"
    );
    for instance in instances {
        let want = &suite.expected[&instance.key];
        let case = instance.case;
        assert_eq!(
            judge(case.output, want, want, &case.tolerance),
            Ok(()),
            "{} accepts its own answer",
            instance.key
        );
        let wrong = perturb(want, &case.tolerance);
        assert!(
            judge(case.output, want, &wrong, &case.tolerance).is_err(),
            "{} must reject {wrong:?}",
            instance.key
        );
    }
}

#[test]
fn wrong_solutions_are_caught_through_the_sandbox() {
    let suite = UnitSuite::load(&suite_dir()).unwrap();
    let instances = suite.instances();
    let find = |key: &str| {
        instances
            .iter()
            .find(|i| i.key == key)
            .unwrap_or_else(|| panic!("{key}"))
    };
    let (mut s, _dir) = session();

    // The reference itself is accepted.
    let buffer = find("shapely/buffer_area");
    let want = &suite.expected["shapely/buffer_area"];
    let got = run_instance(&mut s, buffer, &buffer.case.reference).unwrap();
    assert_eq!(
        judge(buffer.case.output, want, &got, &buffer.case.tolerance),
        Ok(())
    );

    // Ignoring the requested resolution (8 segments instead of 16) is an invalid answer.
    let coarse = "def buffer_area(wkt, distance):\n    import shapely\n    return shapely.from_wkt(wkt).buffer(distance, quad_segs=8).area\n";
    let got = run_instance(&mut s, buffer, coarse).unwrap();
    assert!(
        matches!(
            judge(buffer.case.output, want, &got, &buffer.case.tolerance),
            Err(Mismatch::Value(_))
        ),
        "{got:?}"
    );

    // A string where a number is due is a type error; a syntax error is raised.
    let text_answer = "def buffer_area(wkt, distance):\n    return '12.5'\n";
    let got = run_instance(&mut s, buffer, text_answer).unwrap();
    assert!(
        matches!(
            judge(buffer.case.output, want, &got, &buffer.case.tolerance),
            Err(Mismatch::Type { .. })
        ),
        "{got:?}"
    );
    let broken = "def buffer_area(wkt, distance)\n    return 1\n";
    let got = run_instance(&mut s, buffer, broken).unwrap();
    assert_eq!(got.kind, "error");
    assert_eq!(got.value["ename"], "SyntaxError");

    // An array answer off by one row fails MAE/PSNR/SSIM.
    let slope = find("raster_ops/slope");
    let shifted = "def slope_degrees(dem, cellsize):\n    import numpy as np\n    gy, gx = np.gradient(np.roll(dem, 1, axis=0), cellsize)\n    return np.degrees(np.arctan(np.hypot(gx, gy)))\n";
    let got = run_instance(&mut s, slope, shifted).unwrap();
    let verdict = judge(
        slope.case.output,
        &suite.expected["raster_ops/slope"],
        &got,
        &slope.case.tolerance,
    );
    assert!(
        matches!(&verdict, Err(Mismatch::Value(m)) if m.contains("SSIM")),
        "{verdict:?}"
    );
}

#[test]
fn a_bad_case_file_is_named_with_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("cases")).unwrap();
    std::fs::write(
        dir.path().join("cases/lib.yaml"),
        "library: lib\ncases:\n  - id: a\n    header: 'def a(): pass'\n    reference: 'def a(): pass'\n    output: numbr\n",
    )
    .unwrap();
    let run = gisclaw(&["bench", "verify", dir.path().to_str().unwrap()], &[]);
    let printed = text(&run);
    assert_eq!(run.status.code(), Some(2), "{printed}");
    assert!(
        printed.contains("cases/lib.yaml:6: field `cases[0].output`: unknown variant `numbr`"),
        "{printed}"
    );
}

#[test]
fn tasks_selects_unit_cases_by_library_number_or_id() {
    // `--tasks library=pyproj` runs pyproj's cases only (the selection was
    // once ignored and all 112 cases ran); a selection of nothing is a
    // usage error naming the ways to select.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let o = common::gisclaw(
        &[
            "eval",
            "--suite",
            suite_dir().to_str().unwrap(),
            "--replay-gold",
            "--runs",
            "1",
            "--tasks",
            "library=pyproj",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest = common::read_json(&out.join("eval.json"));
    let cases: Vec<&str> = manifest["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // Every case of a file whose library is pyproj.
    let in_file: usize = std::fs::read_dir(suite_dir().join("cases"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|t| t.starts_with("library: pyproj\n"))
        .map(|t| t.matches("\n  - id: ").count())
        .sum();
    assert_eq!(cases.len(), in_file, "{cases:?}");
    assert!(cases.iter().all(|c| c.starts_with("pyproj/")), "{cases:?}");
    let none = common::gisclaw(
        &[
            "eval",
            "--suite",
            suite_dir().to_str().unwrap(),
            "--replay-gold",
            "--tasks",
            "library=nosuch",
            "--out",
            dir.path().join("none").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("--tasks: no case of"));
}

/// A one-case suite whose second route is `confirm`, with its answers
/// recorded by `bench expect`.
fn confirmed_suite(dir: &std::path::Path, confirm: &str) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(suite.join("cases")).unwrap();
    let case = format!(
        "library: shapely\ncases:\n  - id: disc\n    data_type: geometry\n    operation: geometry\n    header: |\n      def disc(r: float) -> float:\n          \"\"\"Area of a disc of radius r, buffered with 256 segments a quarter.\"\"\"\n    reference: |\n      def disc(r):\n          from shapely.geometry import Point\n          return Point(0, 0).buffer(r, quad_segs=256).area\n    params: {{r: 2.0}}\n    output: number\n    tolerance: {{rel: 1e-4}}\n    boundary:\n      - {{r: 0.5}}\n    confirm:\n      route: hand\n      note: pi r squared\n      code: |\n{}",
        confirm
            .lines()
            .map(|l| format!("        {l}\n"))
            .collect::<String>()
    );
    std::fs::write(suite.join("cases/shapely.yaml"), case).unwrap();
    let out = dir.join("expect");
    let o = gisclaw(
        &[
            "bench",
            "expect",
            suite.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    suite
}

#[test]
fn a_second_route_confirms_every_call_or_verify_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let right = confirmed_suite(
        &dir.path().join("right"),
        "def disc(r):\n    import math\n    return math.pi * r * r",
    );
    let o = gisclaw(
        &[
            "bench",
            "verify",
            right.to_str().unwrap(),
            "--out",
            dir.path().join("v1").to_str().unwrap(),
        ],
        &[],
    );
    let printed = text(&o);
    assert!(o.status.success(), "{printed}");
    assert!(
        printed.contains("second routes: 2/2 calls of 1 cases agree"),
        "{printed}"
    );
    // A route off by the square's area instead of the disc's is caught on
    // both calls, by key.
    let wrong = confirmed_suite(
        &dir.path().join("wrong"),
        "def disc(r):\n    return 4 * r * r",
    );
    let o = gisclaw(
        &[
            "bench",
            "verify",
            wrong.to_str().unwrap(),
            "--out",
            dir.path().join("v2").to_str().unwrap(),
        ],
        &[],
    );
    let printed = text(&o);
    assert_eq!(o.status.code(), Some(1), "{printed}");
    for key in ["shapely/disc:", "shapely/disc#b1:"] {
        assert!(
            printed.contains(&format!("{key} the second route (Hand) disagrees")),
            "{key}: {printed}"
        );
    }
}

#[test]
fn every_case_carries_its_four_labels_and_tasks_selects_by_them() {
    let suite = UnitSuite::load(&suite_dir()).unwrap();
    let labels = suite.labels();
    assert_eq!(labels.len(), suite.case_count());
    for (key, l) in &labels {
        for k in gisclaw::bench::labels::KEYS {
            assert!(!l.get(k).unwrap_or_default().is_empty(), "{key}: {k}");
        }
    }
    let terrain = labels.values().filter(|l| l.operation == "terrain").count();
    assert!(terrain > 0);
    let mut chosen = suite.clone();
    let left =
        chosen.retain(&gisclaw::bench::select::Selection::parse("operation=terrain").unwrap());
    assert_eq!(left, terrain);
    // A case whose library label differs from its file's is found both ways.
    let mut by_file = suite.clone();
    let by_label = suite
        .clone()
        .retain(&gisclaw::bench::select::Selection::parse("library=scipy").unwrap());
    assert!(by_label > 0);
    assert!(
        by_file.retain(&gisclaw::bench::select::Selection::parse("raster_ops/focal_mean").unwrap())
            == 1
    );
}

#[test]
fn coverage_counts_what_the_golds_exercise_per_library() {
    // The real docs extractor over the venv; every library the unit suite
    // labels (and the docs index holds) is exercised somewhere.
    let run = gisclaw(
        &[
            "bench",
            "coverage",
            suite_dir().to_str().unwrap(),
            "--list",
            "shapely",
        ],
        &[],
    );
    let printed = text(&run);
    assert!(run.status.success(), "{printed}");
    let suite = UnitSuite::load(&suite_dir()).unwrap();
    let summary = format!("gisclaw: {} golds exercise ", suite.case_count());
    assert!(printed.contains(&summary), "{printed}");
    for library in [
        "geopandas",
        "shapely",
        "pyproj",
        "rasterio",
        "xarray",
        "networkx",
        "sklearn",
        "pandas",
        "esda",
    ] {
        let row = printed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(library))
            .unwrap_or_else(|| panic!("{library}: {printed}"));
        let exercised: usize = row.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(exercised > 0, "{row}");
    }
    // The listing marks what a gold calls (`shapely.make_valid` in
    // repaired_area) and what none does.
    assert!(
        printed
            .lines()
            .any(|l| l.starts_with("+ shapely.") && l.contains("make_valid")),
        "{printed}"
    );
    assert!(
        printed.lines().any(|l| l.starts_with("- shapely.")),
        "{printed}"
    );
    let bad = gisclaw(
        &[
            "bench",
            "coverage",
            suite_dir().to_str().unwrap(),
            "--list",
            "nosuch",
        ],
        &[],
    );
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        text(&bad).contains("--list: no documented library `nosuch`"),
        "{}",
        text(&bad)
    );
}
