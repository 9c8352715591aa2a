//! Benchmark suites: generated data, gold verification through the agent
//! loop, output checks, the GeoAnalystBench importer.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{geoanalyst, gisclaw, repo, text};
use gisclaw::outputs::{self, OutputCheck};
use gisclaw::task::Task;

/// `gisclaw bench verify SUITE --out OUT` with `envs`.
fn verify(suite: &Path, out: &Path, envs: &[(&str, &str)]) -> std::process::Output {
    gisclaw(
        &[
            "bench",
            "verify",
            suite.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        envs,
    )
}

/// Task id → content digest, from `gisclaw bench generate` with its cache in `cache`.
fn digests(cache: &Path) -> BTreeMap<String, String> {
    let out = gisclaw(
        &["bench", "generate", geoanalyst().to_str().unwrap()],
        &[("XDG_CACHE_HOME", cache.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() >= 5).then(|| (cols[0].to_string(), cols[3].to_string()))
        })
        .collect()
}

#[test]
fn generators_are_deterministic() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = digests(a.path());
    let second = digests(b.path());
    let tasks = gisclaw::bench::suite_tasks(&geoanalyst()).unwrap();
    assert_eq!(first.len(), tasks.len(), "every task generates: {first:?}");
    assert_eq!(first, second, "same seed, same bytes");
    // A different seed gives different data.
    let dir = tempfile::tempdir().unwrap();
    let task = copy_task("T09", dir.path());
    let yaml = std::fs::read_to_string(&task)
        .unwrap()
        .replace("seed: 9", "seed: 10");
    std::fs::write(&task, yaml).unwrap();
    let out = gisclaw(
        &["bench", "generate", task.to_str().unwrap()],
        &[("XDG_CACHE_HOME", a.path().to_str().unwrap())],
    );
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    assert!(line.starts_with("T09"), "{line}");
    assert!(
        !line.contains(&first["T09"]),
        "seed 10 must differ from seed 9: {line}"
    );
}

#[test]
fn every_gold_solution_runs_through_the_agent_loop() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = verify(&geoanalyst(), out_dir.path(), &[]);
    let report = text(&out);
    let n = gisclaw::bench::suite_tasks(&geoanalyst()).unwrap().len();
    assert!(
        report.contains(&format!("{n}/{n} gold solutions verified")),
        "{report}"
    );
    assert!(out.status.success(), "{report}");
    // The agent's output checks raise no false alarm on 50 real solutions.
    assert!(
        report.contains(&format!(
            "output checks: 0 of {n} gold runs would get a warning"
        )),
        "{report}"
    );
    // The runs are real agent runs: a transcript with one tool call per gold cell.
    let transcript = common::records::checked(&out_dir.path().join("T01/transcript.jsonl"));
    assert!(
        transcript.contains("\"name\":\"execute_python\""),
        "{transcript}"
    );
    assert!(
        transcript.contains("\"status\":\"finished\""),
        "{transcript}"
    );
}

/// Copies a task of the suite, with its generator's shared files, into
/// `dir/geoanalyst/` (and `dir/_lib/`, shared by the suites).
fn copy_task(id: &str, dir: &Path) -> PathBuf {
    for (from, to) in [
        (geoanalyst().join("_lib"), dir.join("geoanalyst/_lib")),
        (repo().join("benchmarks/_lib"), dir.join("_lib")),
    ] {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
    let task_dir = dir.join("geoanalyst").join(id);
    std::fs::create_dir_all(&task_dir).unwrap();
    for entry in std::fs::read_dir(geoanalyst().join(id)).unwrap().flatten() {
        std::fs::copy(entry.path(), task_dir.join(entry.file_name())).unwrap();
    }
    task_dir.join("task.yaml")
}

#[test]
fn an_output_the_gold_does_not_produce_fails_with_task_and_path() {
    let dir = tempfile::tempdir().unwrap();
    let task = copy_task("T09", dir.path());
    let yaml = std::fs::read_to_string(&task).unwrap().replace(
        "  - pred_results/deforestation_rate.csv\n",
        "  - pred_results/deforestation_rate.csv\n  - pred_results/by_status.csv\n",
    );
    std::fs::write(&task, yaml).unwrap();
    let suite_copy = dir.path().join("geoanalyst");
    let runs = tempfile::tempdir().unwrap();
    let out = verify(&suite_copy, runs.path(), &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains(
            "T09: declared output pred_results/by_status.csv was not produced by the gold"
        ),
        "{report}"
    );
    assert!(report.contains("0/1 gold solutions verified"), "{report}");
}

#[test]
fn corrupt_data_and_failing_generators_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let task_dir = dir.path().join("X1");
    std::fs::create_dir_all(task_dir.join("data")).unwrap();
    std::fs::write(
        task_dir.join("data/elevation.tif"),
        b"II*\0 this is not a GeoTIFF",
    )
    .unwrap();
    std::fs::write(
        task_dir.join("gold.py"),
        "open('pred_results/n.txt', 'w').write('1')\n",
    )
    .unwrap();
    std::fs::write(
        task_dir.join("task.yaml"),
        "id: X1\ntitle: t\ninstruction: i\ndata: data\ngold: gold.py\noutputs:\n  - pred_results/n.txt\n",
    )
    .unwrap();
    let runs = tempfile::tempdir().unwrap();
    let out = verify(dir.path(), runs.path(), &[]);
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("X1: data file data/elevation.tif is corrupt or unreadable"),
        "{report}"
    );

    // A generator that raises is reported with the task and the script.
    std::fs::remove_dir_all(task_dir.join("data")).unwrap();
    std::fs::write(
        task_dir.join("make.py"),
        "import numpy as np\nraise ValueError('no such band')\n",
    )
    .unwrap();
    std::fs::write(
        task_dir.join("task.yaml"),
        "id: X1\ntitle: t\ninstruction: i\ngenerator: [make.py]\ngold: gold.py\noutputs:\n  - pred_results/n.txt\n",
    )
    .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = verify(
        dir.path(),
        runs.path(),
        &[("XDG_CACHE_HOME", cache.path().to_str().unwrap())],
    );
    let report = text(&out);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains("X1:")
            && report.contains("make.py failed")
            && report.contains("ValueError: no such band"),
        "{report}"
    );
    // Nothing half-made is left in the cache.
    let data = cache.path().join("gisclaw/data");
    let left: Vec<_> = std::fs::read_dir(&data)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn solve_generates_a_task_s_data_on_first_use() {
    let cache = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();
    let gold = std::fs::read_to_string(geoanalyst().join("T09/gold.py")).unwrap();
    let replay = runs.path().join("replay.jsonl");
    let lines: Vec<String> = gisclaw::bench::verify::gold_messages("T09", &gold)
        .iter()
        .map(|m| serde_json::to_string(m).unwrap())
        .collect();
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let task = geoanalyst().join("T09/task.yaml");
    let out_dir = runs.path().join("out");
    let envs = [("XDG_CACHE_HOME", cache.path().to_str().unwrap())];
    let out = common::solve_replay(&task, &replay, &out_dir, &[], &envs);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("generated the data of T09"), "{report}");
    let csv = std::fs::read_to_string(out_dir.join("pred_results/deforestation_rate.csv")).unwrap();
    let pct: f64 = csv.lines().nth(1).unwrap().parse().unwrap();
    assert!(pct > 1.0 && pct < 100.0, "{csv}");
    // The second run finds the data in the cache.
    let out = common::solve_replay(&task, &replay, &out_dir, &[], &envs);
    assert!(
        out.status.success() && !text(&out).contains("generated the data"),
        "{}",
        text(&out)
    );
}

#[test]
fn output_checks_tell_content_from_blank() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("make.py");
    std::fs::write(
        &script,
        r#"
import matplotlib.pyplot as plt, rasterio, json
from rasterio.transform import from_origin
fig = plt.figure(); fig.savefig('pred_results/blank.png')
fig, ax = plt.subplots(); ax.imshow(np.random.default_rng(0).random((20, 20))); fig.savefig('pred_results/map.png')
for name, a in [('flat', np.full((5, 5), 3.0)), ('varied', np.arange(25.0).reshape(5, 5))]:
    with rasterio.open(f'pred_results/{name}.tif', 'w', driver='GTiff', width=5, height=5, count=1, dtype='float64', crs='EPSG:32633', transform=from_origin(0, 5, 1, 1)) as d:
        d.write(a, 1)
gpd.GeoDataFrame(geometry=[], crs=4326).to_file('pred_results/empty.geojson', driver='GeoJSON')
gpd.GeoDataFrame({'a': [1]}, geometry=gpd.points_from_xy([0], [0]), crs=4326).to_file('pred_results/one.geojson', driver='GeoJSON')
open('pred_results/header.csv', 'w').write('a,b\n')
open('pred_results/rows.csv', 'w').write('a,b\n1,2\n')
json.dump({}, open('pred_results/empty.json', 'w'))
"#,
    )
    .unwrap();
    let out = gisclaw(
        &[
            "exec",
            script.to_str().unwrap(),
            "--workdir",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let check = |name: &str| outputs::check(&dir.path().join("pred_results").join(name));
    for name in ["map.png", "varied.tif", "one.geojson", "rows.csv"] {
        assert!(check(name).is_content(), "{name}: {:?}", check(name));
    }
    for name in [
        "blank.png",
        "flat.tif",
        "empty.geojson",
        "header.csv",
        "empty.json",
    ] {
        assert!(
            matches!(check(name), OutputCheck::Trivial(..)),
            "{name}: {:?}",
            check(name)
        );
    }
    assert_eq!(
        check("absent.tif"),
        OutputCheck::Unreadable("missing".into())
    );
}

#[test]
fn the_importer_round_trips_the_shared_table() {
    let csv = repo().join("benchmarks/geoanalystbench/GeoAnalystBench.csv");
    assert!(
        csv.is_file(),
        "the vendored GeoAnalystBench table is missing: {}",
        csv.display()
    );
    // A tiny stand-in for the official data: task 1's two files, and a
    // shapefile (with its sidecars) that task 4 names, in a task folder.
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("Temperature.geojson"), "{}").unwrap();
    std::fs::write(data.path().join("CensusBlock.geojson"), "{}").unwrap();
    std::fs::create_dir_all(data.path().join("T04")).unwrap();
    for ext in ["shp", "dbf", "shx", "prj"] {
        std::fs::write(data.path().join(format!("T04/mc_soils.{ext}")), ext).unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let out = gisclaw(
        &[
            "bench",
            "import",
            csv.to_str().unwrap(),
            "--data",
            data.path().to_str().unwrap(),
            "--out",
            out_dir.path().to_str().unwrap(),
        ],
        &[],
    );
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("50 tasks written"), "{report}");
    // The vendored table is the pinned version: its SHA-256 by Python's
    // hashlib is gisclaw's pin, and the import does not warn.
    let digest = common::venv_python([
        std::ffi::OsStr::new("-c"),
        std::ffi::OsStr::new(
            "import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())",
        ),
        csv.as_os_str(),
    ]);
    assert_eq!(digest.trim(), gisclaw::bench::import::PINNED_SHA256);
    assert!(
        !report.contains("is not the GeoAnalystBench table"),
        "{report}"
    );

    // Read the table independently (Python's csv module) and compare.
    let dump = common::venv_python([
        std::ffi::OsStr::new("-c"),
        std::ffi::OsStr::new("import csv, json, sys; print(json.dumps(list(csv.DictReader(open(sys.argv[1], encoding='utf-8')))))"),
        csv.as_os_str(),
    ]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&dump).unwrap();
    assert_eq!(rows.len(), 50);
    for row in &rows {
        let n: u32 = row["id"].as_str().unwrap().trim().parse().unwrap();
        let loaded = Task::load(&out_dir.path().join(format!("T{n:02}/task.yaml"))).unwrap();
        let task = &loaded.task;
        assert_eq!(task.id, format!("T{n:02}"));
        assert_eq!(
            task.instruction,
            row["Instruction"].as_str().unwrap().trim(),
            "T{n:02}"
        );
        assert_eq!(
            task.workflow.as_deref().unwrap_or(""),
            row["Human Designed Workflow"].as_str().unwrap().trim(),
            "T{n:02}"
        );
        let category = task.category.clone().unwrap_or_default();
        assert!(
            category.contains(row["Task Categories1"].as_str().unwrap().trim()),
            "T{n:02}: {category}"
        );
        let code =
            std::fs::read_to_string(out_dir.path().join(format!("T{n:02}/gold.py"))).unwrap();
        assert!(
            !code.contains("'/dataset/"),
            "T{n:02}: upstream paths are rewritten"
        );
    }
    let t01 = Task::load(&out_dir.path().join("T01/task.yaml")).unwrap();
    assert_eq!(
        t01.task.outputs,
        vec!["pred_results/interpolated_urban_heat.png"]
    );
    assert!(out_dir.path().join("T01/data/Temperature.geojson").exists());
    for ext in ["shp", "dbf", "shx", "prj"] {
        assert!(
            out_dir
                .path()
                .join(format!("T04/data/mc_soils.{ext}"))
                .exists(),
            "{ext}"
        );
    }
    assert!(
        report.contains("T04: not found under --data: land_cover.tif, mc_boundary.shp"),
        "{report}"
    );

    // Another version of the table (one character of a row changed) is
    // imported, with one line saying it is not the pinned one.
    let other = out_dir.path().join("other.csv");
    let changed =
        std::fs::read_to_string(&csv)
            .unwrap()
            .replacen("Madison, Wisconsin", "Madison, WI", 1);
    std::fs::write(&other, changed).unwrap();
    let out = gisclaw(
        &[
            "bench",
            "import",
            other.to_str().unwrap(),
            "--out",
            out_dir.path().join("o").to_str().unwrap(),
        ],
        &[],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(
        said.lines()
            .filter(|l| l.contains("is not the GeoAnalystBench table gisclaw pins"))
            .count(),
        1,
        "{said}"
    );

    // A table without a needed column is refused with the file and the column.
    let bad = out_dir.path().join("bad.csv");
    std::fs::write(&bad, "id,Task\n1,x\n").unwrap();
    let out = gisclaw(
        &[
            "bench",
            "import",
            bad.to_str().unwrap(),
            "--out",
            out_dir.path().join("b").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out);
    assert!(err.contains("bad.csv:1: no column `Open Source`"), "{err}");
}
