//! End-to-end runs through the real sandbox: a solve against a scripted
//! OpenAI-protocol server (faults included, secrets kept out of every file),
//! the Dual Agent (plan, steps, replan) by replay, and the schema card on
//! real files of every supported type.

use crate::common;

use common::fake_llm::{openai_answer, FakeServer, Reply};
use common::{call, events, example_messages, gisclaw, repo, run_json, solve_replay};
use serde_json::{json, Value};

#[test]
fn a_live_protocol_solve_survives_faults_and_keeps_the_key_secret() {
    const KEY: &str = "sk-e2e-very-secret-4242";
    let mut script = vec![Reply::Json(
        429,
        json!({"error": {"message": "slow down", "type": "requests"}}),
    )];
    for (i, mut m) in example_messages().into_iter().enumerate() {
        if i == 1 {
            // This turn's tool call arrives as text-mode ReAct instead.
            let code: Value = serde_json::from_str(
                m["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            m = json!({"role": "assistant", "content": format!("Thought: schema first.\nAction: execute_python\n```python\n{}\n```", code["code"].as_str().unwrap())});
        }
        if i == 2 {
            script.push(Reply::Drop);
        }
        script.push(Reply::Json(200, openai_answer(m)));
    }
    let server = FakeServer::start(script);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
    let task = repo().join("examples/heat_island/task.yaml");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            &base,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", KEY)],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("REPLAY"), "{stderr}");
    let run = run_json(&out);
    assert_eq!(run["status"], "finished");
    assert_eq!(run["replay"], false);
    assert_eq!(run["tokens_estimated"], false, "server usage is believed");
    assert_eq!(run["tokens_in"], 100 * run["rounds"].as_u64().unwrap());
    assert!(
        run["cost_usd"].is_null(),
        "an unknown model's cost is unknown, not zero"
    );
    let ev = events(&out);
    let repaired = ev
        .iter()
        .any(|e| e["event"] == "message" && e["repairs"].to_string().contains("fenced code"));
    assert!(repaired, "the text-mode turn became a call");
    assert!(
        ev.iter().any(|e| e["retries"].as_u64().unwrap_or(0) > 0),
        "the dropped connection was retried"
    );
    for file in ["transcript.jsonl", "run.json", "solution.py"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(!text.contains(KEY), "{file} leaks the key");
    }
    assert!(!stderr.contains(KEY));
    // Every request but the first carried the conversation so far.
    let reqs = server.requests();
    assert!(reqs.iter().all(|r| r.body["model"] == "fake-model"));
    let card = reqs[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        card.contains("temp_c (Real)") && card.contains("EPSG:32617"),
        "schema card in the prompt:\n{card}"
    );
}

fn plan(steps: &[&str]) -> String {
    let steps: Vec<Value> = steps
        .iter()
        .map(|g| json!({"goal": g, "details": ""}))
        .collect();
    call("submit_plan", json!({ "steps": steps }))
}

fn example_code(i: usize) -> String {
    let m = &example_messages()[i];
    let args: Value = serde_json::from_str(
        m["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    args["code"].as_str().unwrap().to_string()
}

#[test]
fn the_dual_agent_plans_executes_and_replans() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("dual.jsonl");
    let lines = [
        // A plan with too few steps is refused, then a valid one.
        plan(&["do everything"]),
        plan(&[
            "read the stations and the boundary",
            "interpolate and save the GeoTIFF",
            "map the surface",
        ]),
        call("execute_python", json!({ "code": example_code(1) })),
        call(
            "step_done",
            json!({ "summary": "stations and city loaded" }),
        ),
        call("execute_python", json!({ "code": example_code(3) })),
        call("step_done", json!({ "summary": "temperature.tif saved" })),
        // The last step claims success without the map: outputs are missing.
        call("step_done", json!({ "summary": "map done (not really)" })),
        // The replanner gets the failure and plans the rest.
        plan(&["save pred_results/temperature_map.png"]),
        call("execute_python", json!({ "code": example_code(4) })),
        call("finish", json!({ "summary": "surface and map saved" })),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(&task, &replay, &out, &["--arch", "dual"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let run = run_json(&out);
    assert_eq!(run["arch"], "dual");
    assert_eq!(run["rounds"], 10);
    let ev = events(&out);
    let plan_errors: Vec<&Value> = ev
        .iter()
        .filter(|e| !e["plan_error"].is_null() && e.get("plan_error").is_some())
        .collect();
    assert_eq!(plan_errors.len(), 1, "the one-step first plan was refused");
    let replans: Vec<&Value> = ev.iter().filter(|e| e["event"] == "replan").collect();
    assert_eq!(replans.len(), 1);
    assert!(replans[0]["reason"]
        .as_str()
        .unwrap()
        .contains("outputs are missing"));
    let steps = ev.iter().filter(|e| e["event"] == "step").count();
    assert_eq!(steps, 4, "three steps, then one after the replan");
    // Steps share one sandbox: step 2 used step 1's variables.
    let failed = ev
        .iter()
        .filter(|e| e["event"] == "tool" && e["status"] == "Error")
        .count();
    assert_eq!(failed, 0, "{ev:#?}");
}

#[test]
fn the_dual_agent_gives_up_after_its_replanning_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("dual.jsonl");
    let mut lines = vec![plan(&["a", "b", "c"])];
    for _ in 0..3 {
        // Each plan's steps are "done" without making anything.
        lines.push(call("step_done", json!({ "summary": "nothing" })));
        lines.push(call("step_done", json!({ "summary": "nothing" })));
        lines.push(call("step_done", json!({ "summary": "nothing" })));
        lines.push(plan(&["x", "y", "z"]));
    }
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(&task, &replay, &out, &["--arch", "dual"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    assert!(
        run["reason"]
            .as_str()
            .unwrap()
            .contains("after 2 replanning cycle(s)"),
        "{run}"
    );
}

#[test]
fn the_schema_card_reads_every_supported_type() {
    let (mut session, dir) = common::session();
    let data = dir.path().join("data");
    let outcome = session
        .execute(
            r#"
import os
os.makedirs("data/nested/Deep")
import numpy as np, pandas as pd, geopandas as gpd, rasterio, xarray as xr
from shapely.geometry import Point
from rasterio.transform import from_origin
pts = gpd.GeoDataFrame({"Site_ID": ["a", "b", "c", "d"], "depth_cm": [-250.5, -120.0, 30.25, -199.9]},
                       geometry=[Point(500000 + i * 100, 4400000) for i in range(4)], crs="EPSG:32617")
pts.to_file("data/wells.shp")
pts.to_file("data/nested/wells.gpkg", layer="Wells_2024", driver="GPKG")
pts.iloc[:2].to_file("data/nested/wells.gpkg", layer="Wells_2023", driver="GPKG")
pts.to_crs(4326).to_file("data/nested/Deep/wells.geojson", driver="GeoJSON")
arr = np.arange(20 * 30, dtype="float32").reshape(20, 30)
with rasterio.open("data/DEM.tif", "w", driver="GTiff", height=20, width=30, count=1, dtype="float32",
                   crs="EPSG:32617", transform=from_origin(500000, 4401000, 30, 30), nodata=-9999) as dst:
    dst.write(arr, 1)
pd.DataFrame({"county": ["A", "B"], "pop": [1200, 3400], "rate": [0.5, 0.25]}).to_csv("data/census.csv", index=False)
pd.DataFrame({"county": ["A", "B"], "income": [51000.5, 62000.0]}).to_excel("data/income.xlsx", index=False, sheet_name="Income")
xr.Dataset({"sst": (("time", "lat", "lon"), np.zeros((2, 3, 4), dtype="float32"))},
           coords={"time": [0, 1], "lat": [0.0, 1.0, 2.0], "lon": [0.0, 1.0, 2.0, 3.0]}).to_netcdf("data/sst.nc")
print("written")
"#,
        )
        .unwrap();
    assert!(outcome.result.stdout.contains("written"), "{outcome:?}");
    // The card's call reads the second layer.
    let second = session
        .execute("print(len(gpd.read_file('data/nested/wells.gpkg', layer='Wells_2023')))")
        .unwrap();
    assert_eq!(second.result.stdout.trim(), "2", "{second:?}");
    let card = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    for needle in [
        "data/wells.shp — vector (ESRI Shapefile)",
        "Point, EPSG:32617, 4 features",
        "Site_ID (String), depth_cm (Real)",
        "row: Site_ID=\"a\", depth_cm=-250.5",
        "data/nested/wells.gpkg",
        "layer `Wells_2024`",
        "  read: gpd.read_file('data/nested/wells.gpkg', layer='Wells_2023') for a layer other than the first (`Wells_2024`, read without layer)\n",
        "data/nested/Deep/wells.geojson",
        "EPSG:4326",
        "data/DEM.tif — raster (GTiff), 30×20 px, 1 band(s), EPSG:32617, pixel 30×30",
        "Float32, nodata -9999, min 0 max 599",
        "data/census.csv — table (CSV)",
        "pop (Integer), rate (Real)",
        "data/income.xlsx — table (XLSX)",
        "`Income`: 2 rows",
        "income (Real)",
        "data/sst.nc — multidimensional (netCDF)",
        "variable sst(time, lat, lon): Float32",
    ] {
        assert!(card.contains(needle), "missing `{needle}` in:\n{card}");
    }
    // A shapefile's parts are named in its entry, not listed apart; a
    // sidecar without its main file is still listed.
    assert!(
        card.contains("  read with it: wells.cpg, wells.dbf, wells.prj, wells.shx\n"),
        "{card}"
    );
    assert!(
        !card.contains("wells.dbf —") && !card.contains("- data/wells.dbf ("),
        "sidecars are not entries:\n{card}"
    );
    std::fs::write(data.join("orphan.prj"), "GEOGCS[]").unwrap();
    let with_orphan = gisclaw::card::card_for_dir(&data, "data/", 10_000);
    assert!(
        with_orphan.contains("- data/orphan.prj (8 B)"),
        "{with_orphan}"
    );
    std::fs::remove_file(data.join("orphan.prj")).unwrap();
    // Within a small budget the card summarises instead of overflowing.
    let small = gisclaw::card::card_for_dir(&data, "data/", 150);
    assert!(
        gisclaw::llm::tokens::count(&small) <= 150,
        "{} tokens: {small}",
        gisclaw::llm::tokens::count(&small)
    );
    assert!(
        small.contains("more:") && small.contains("inspect_data"),
        "{small}"
    );
    // inspect_data on one file, and a clear line for a wrong name.
    let one = gisclaw::card::inspect_file(&data, "data/", "data/DEM.tif").unwrap();
    assert!(one.contains("min 0 max 599"), "{one}");
    let err = gisclaw::card::inspect_file(&data, "data/", "data/dem.tif")
        .unwrap_err()
        .to_string();
    assert!(err.contains("data/dem.tif: no such file"), "{err}");
    assert!(gisclaw::card::inspect_file(&data, "data/", "../../etc/passwd").is_err());
}

#[test]
fn the_replanner_is_given_the_operations_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("dual.jsonl");
    let mut lines = vec![plan(&[
        "read the stations",
        "interpolate and save the GeoTIFF",
        "map the surface",
    ])];
    // Step 1 reads a file that is not there, eleven ways (ten corrections
    // are allowed), the last through a helper so the raising statement is
    // inside a function.
    for i in 0..10 {
        lines.push(call(
            "execute_python",
            json!({ "code": format!("import geopandas as gpd\nstations = gpd.read_file('data/missing_{i}.geojson')") }),
        ));
    }
    lines.push(call(
        "execute_python",
        json!({ "code": "def load(p):\n    return gpd.read_file(p, engine='nope')\nstations = load('data/stations.geojson')" }),
    ));
    // The Replanner's plan does the whole task another way.
    lines.push(plan(&["load, interpolate and map with the example's code"]));
    for i in 1..=4 {
        lines.push(call("execute_python", json!({ "code": example_code(i) })));
    }
    lines.push(call(
        "finish",
        json!({ "summary": "surface and map saved" }),
    ));
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(&task, &replay, &out, &["--arch", "dual"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let ev = events(&out);
    let replans: Vec<&Value> = ev.iter().filter(|e| e["event"] == "replan").collect();
    assert_eq!(replans.len(), 1, "{ev:#?}");
    let failed = replans[0]["failed_operations"].as_array().unwrap();
    // The latest eight distinct failures, the helper's raising line last.
    assert_eq!(failed.len(), 8, "{failed:#?}");
    let last = failed.last().unwrap();
    assert_eq!(
        last["operation"], "return gpd.read_file(p, engine='nope')",
        "{last}"
    );
    assert!(last["error"].as_str().unwrap().contains("engine"), "{last}");
    assert!(
        failed[0]["operation"]
            .as_str()
            .unwrap()
            .contains("missing_3.geojson"),
        "{failed:#?}"
    );
    // The request the planner got lists them and asks to avoid them.
    let request = replans[0]["request"].as_str().unwrap();
    assert!(
        request.contains(
            "Operations that failed:\n- `stations = gpd.read_file('data/missing_3.geojson')` → "
        ) && request.contains("avoiding the operations that failed"),
        "{request}"
    );
}

#[test]
fn the_llm_alone_solves_with_one_script_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("alone.jsonl");
    // The example's cells without its refused pykrige attempt (cell 2).
    let script: Vec<String> = [1, 3, 4].into_iter().map(example_code).collect();
    let answer = json!({
        "role": "assistant",
        "content": format!("The whole analysis:\n```python\n{}\n```", script.join("\n\n")),
    });
    std::fs::write(&replay, answer.to_string()).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(&task, &replay, &out, &["--arch", "none"], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = run_json(&out);
    assert_eq!(
        (run["arch"].as_str(), run["rounds"].as_u64()),
        (Some("none"), Some(1))
    );
    assert_eq!(run["status"], "finished");
    // The model was offered no tool and its code ran as one cell.
    let ev = events(&out);
    let cells = ev
        .iter()
        .filter(|e| e["event"] == "tool" && e["name"] == "execute_python")
        .count();
    assert_eq!(cells, 1);
    assert!(std::fs::read_to_string(out.join("solution.py"))
        .unwrap()
        .contains("temperature_map.png"));
}
