//! The output checks, through the real loop and sandbox: a replay writes
//! each kind of bad output and reads the warning in that cell's
//! observation; good outputs get none; `finish` with failing checks is
//! answered once and accepted the second time, and run.json records it;
//! `--no-output-checks` turns all of it off.

use std::path::Path;

use serde_json::json;

use crate::common;

/// A task on the heat-island data asking for a map with a legend.
fn task(dir: &Path) -> std::path::PathBuf {
    let data = common::repo().join("examples/heat_island/data");
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        format!(
            "id: checks\ntitle: Output checks\ninstruction: Map the stations with a legend and save the layers.\ndata: {}\noutputs:\n  - pred_results/map.png\n",
            data.display()
        ),
    )
    .unwrap();
    task
}

const BAD: &str = r#"
import numpy as np, rasterio
from rasterio.transform import from_origin
stations = pd.read_csv('data/stations.csv')
fig, ax = plt.subplots()
ax.set_title('stations')
plt.savefig('pred_results/map.png')
g = gpd.GeoDataFrame(stations, geometry=gpd.points_from_xy(stations.northing, stations.easting), crs='EPSG:32617')
g.to_file('pred_results/swapped.geojson')
g.iloc[:0].to_file('pred_results/none.gpkg')
with rasterio.open('pred_results/nan.tif', 'w', driver='GTiff', width=10, height=10, count=1, dtype='float32',
                   crs='EPSG:32617', transform=from_origin(500000, 4400000, 10, 10)) as d:
    d.write(np.full((10, 10), np.nan, dtype='float32'), 1)
with rasterio.open('pred_results/flat.tif', 'w', driver='GTiff', width=10, height=10, count=1, dtype='float32',
                   crs='EPSG:32617', transform=from_origin(500000, 4400000, 10, 10)) as d:
    d.write(np.ones((10, 10), dtype='float32'), 1)
pd.DataFrame({'a': [1, 2], 'b': [np.nan, np.nan]}).to_csv('pred_results/t.csv', index=False)
from shapely.geometry import Polygon
x, y = stations.easting.min(), stations.northing.min()
bowtie = Polygon([(x, y), (x + 1000, y + 1000), (x + 1000, y), (x, y + 1000)])
gpd.GeoDataFrame({'v': [1]}, geometry=[bowtie], crs='EPSG:32617').to_file('pred_results/bowtie.geojson')
plt.figure(figsize=(1, 1)).savefig('pred_results/tiny.png', dpi=50)
"#;

const GOOD: &str = r#"
import numpy as np, rasterio
from rasterio.transform import from_origin
stations = pd.read_csv('data/stations.csv')
g = gpd.GeoDataFrame(stations, geometry=gpd.points_from_xy(stations.easting, stations.northing), crs='EPSG:32617')
g.to_file('pred_results/stations.geojson')
x0, y0 = stations.easting.min(), stations.northing.max()
with rasterio.open('pred_results/grid.tif', 'w', driver='GTiff', width=20, height=20, count=1, dtype='float32',
                   crs='EPSG:32617', transform=from_origin(x0, y0, 100, 100)) as d:
    d.write(np.arange(400, dtype='float32').reshape(20, 20), 1)
stations.to_csv('pred_results/table.csv', index=False)
fig, ax = plt.subplots(figsize=(6, 5))
g.plot(column='temp_c', ax=ax, legend=True)
ax.set_title('stations')
plt.savefig('pred_results/map.png', dpi=100)
"#;

fn replay(dir: &Path, name: &str, cells: &[&str], finishes: usize) -> std::path::PathBuf {
    let mut lines: Vec<String> = cells
        .iter()
        .map(|code| common::call("execute_python", json!({ "code": code })))
        .collect();
    for _ in 0..finishes {
        lines.push(common::call("finish", json!({ "summary": "done" })));
    }
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn observations(out: &Path) -> Vec<String> {
    common::events(out)
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| e["observation"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn bad_outputs_are_named_in_the_cell_and_finish_is_answered_once() {
    let dir = common::workdir();
    let task = task(dir.path());
    let replay = replay(dir.path(), "bad.jsonl", &[BAD], 2);
    let out = dir.path().join("out");
    let run = common::solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", common::text(&run));
    let obs = observations(&out);
    let cell = &obs[0];
    for needle in [
        "[output check] pred_results/map.png: its axes draw no data",
        "no legend or colorbar, and the task asks for a legend (heuristic)",
        "[output check] pred_results/swapped.geojson: its extent",
        "does not overlap the input data",
        "[output check] pred_results/none.gpkg: no features",
        "[output check] pred_results/nan.tif: every pixel is nodata or NaN",
        "[output check] pred_results/flat.tif: a constant raster (every valid pixel is 1)",
        "[output check] pred_results/t.csv: column(s) `b` empty or NaN in every row",
        "[output check] pred_results/bowtie.geojson: 1 of 1 geometries are invalid",
        "[output check] pred_results/tiny.png: a tiny image (50×50 px); nearly uniform: 100.0 % of the pixels are one colour",
    ] {
        assert!(cell.contains(needle), "missing `{needle}` in:\n{cell}");
    }
    assert!(
        obs[1].starts_with("finish: the outputs look wrong"),
        "{}",
        obs[1]
    );
    assert_eq!(obs[2], "Finished.");
    let summary = common::run_json(&out);
    assert_eq!(summary["output_checks"], true);
    let kept = summary["finished_with_warnings"].as_array().unwrap();
    assert!(
        kept.iter()
            .any(|w| w.as_str().unwrap().starts_with("pred_results/nan.tif")),
        "{summary}"
    );
}

#[test]
fn good_outputs_get_no_warning_and_finish_is_accepted_at_once() {
    let dir = common::workdir();
    let task = task(dir.path());
    let replay = replay(dir.path(), "good.jsonl", &[GOOD], 1);
    let out = dir.path().join("out");
    let run = common::solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", common::text(&run));
    let obs = observations(&out);
    assert!(!obs[0].contains("[output check]"), "{}", obs[0]);
    assert_eq!(obs[1], "Finished.");
    let summary = common::run_json(&out);
    assert!(summary.get("finished_with_warnings").is_none(), "{summary}");
}

#[test]
fn no_output_checks_turns_the_warnings_and_the_refusal_off() {
    let dir = common::workdir();
    let task = task(dir.path());
    let replay = replay(dir.path(), "bad.jsonl", &[BAD], 1);
    let out = dir.path().join("out");
    let run = common::solve_replay(&task, &replay, &out, &["--no-output-checks"], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", common::text(&run));
    let obs = observations(&out);
    assert!(!obs[0].contains("[output check]"), "{}", obs[0]);
    assert_eq!(obs[1], "Finished.");
    assert_eq!(common::run_json(&out)["output_checks"], false);
}

#[test]
fn a_file_fixed_after_its_warning_is_read_again() {
    // The same file, the same size, written twice: constant, then not.
    // `finish` keeps the warnings of files that did not change since they
    // were checked, so a stale one here would refuse it.
    let write = |values: &str| {
        format!(
            r#"
import numpy as np, rasterio
from rasterio.transform import from_origin
with rasterio.open('pred_results/grid.tif', 'w', driver='GTiff', width=10, height=10, count=1, dtype='float32',
                   crs='EPSG:32617', transform=from_origin(500000, 4400000, 10, 10)) as d:
    d.write({values}, 1)
"#
        )
    };
    let map = "fig, ax = plt.subplots(figsize=(6, 5))\nax.plot([1, 2, 3], [3, 1, 2], label='t')\nax.legend()\nplt.savefig('pred_results/map.png', dpi=100)";
    let dir = common::workdir();
    let task = task(dir.path());
    let flat = write("np.ones((10, 10), dtype='float32')");
    let varied = write("np.arange(100, dtype='float32').reshape(10, 10)");
    let replay = replay(dir.path(), "fixed.jsonl", &[&flat, map, &varied], 1);
    let out = dir.path().join("out");
    let run = common::solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(run.status.code(), Some(0), "{}", common::text(&run));
    let obs = observations(&out);
    assert!(
        obs[0].contains("[output check] pred_results/grid.tif: a constant raster"),
        "{}",
        obs[0]
    );
    assert!(!obs[2].contains("[output check]"), "{}", obs[2]);
    assert_eq!(obs[3], "Finished.", "{obs:?}");
}
