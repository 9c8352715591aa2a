//! The library-docs index (RAG) on the real venv and the real embedding
//! model: built from a few modules, searched from the CLI, offered to the
//! agent as `search_docs` with `--rag`, and its failures in one line.

use crate::common;

use std::path::Path;
use std::sync::OnceLock;

use common::{call, events, gisclaw, solve_replay, text};
use serde_json::json;

/// A small index (five modules and the recipes), built once for this test
/// binary (the MCP tests use it too).
pub fn index() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().to_str().unwrap();
        let out = gisclaw(
            &[
                "knowledge",
                "build",
                "--modules",
                "rasterio.features,geopandas.tools,shapely.ops,pyproj,gisclaw_tools,no_such_module",
                "--dir",
                index,
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let said = text(&out);
        assert!(
            said.contains("indexed ")
                && said.contains("19 recipes")
                && said.contains("from 5 module(s)"),
            "{said}"
        );
        assert!(
            said.contains("skipped no_such_module: ModuleNotFoundError"),
            "{said}"
        );
        dir
    })
    .path()
}

fn search(query: &str) -> String {
    let out = gisclaw(
        &[
            "knowledge",
            "search",
            query,
            "-k",
            "3",
            "--dir",
            index().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn searches_find_the_api_by_name_and_by_paraphrase() {
    // By what it does, in other words than its docstring's: the API the
    // task's recipe names (its companion) and the recipe, first and second.
    let hits = search("burn polygons into a raster");
    assert!(
        hits.starts_with("1. rasterio.features.rasterize(")
            && hits.contains("\n2. [recipe] recipe.rasterize_polygons"),
        "{hits}"
    );
    // By an exact API name.
    assert!(
        search("sjoin").starts_with("1. geopandas.tools.sjoin("),
        "{}",
        search("sjoin")
    );
    // gisclaw's own helpers are documented too.
    assert!(
        search("read a raster file into a numpy array and its metadata")
            .contains("gisclaw_tools.load_raster")
    );
    // Hits show the signature and the start of the docstring.
    let hits = search("rasterize");
    assert!(
        hits.contains("(shapes, out_shape=None") && hits.contains("   "),
        "{hits}"
    );
}

#[test]
fn the_agent_gets_search_docs_with_rag() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: rag\ntitle: RAG\ninstruction: Look up how to rasterize polygons.\ndata: data\n",
    )
    .unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        call(
            "search_docs",
            json!({ "query": "burn polygons into a raster" }),
        ),
        call(
            "execute_python",
            json!({ "code": "import rasterio.features\nrasterio.features.rasterise([])" }),
        ),
        call("finish", json!({ "summary": "looked it up" })),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let envs = [("GISCLAW_KNOWLEDGE", index().to_str().unwrap())];
    let out = dir.path().join("out");
    let run = solve_replay(&task, &replay, &out, &["--rag"], &envs);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let events = events(&out);
    let tool = events
        .iter()
        .find(|e| e["event"] == "tool" && e["name"] == "search_docs")
        .expect("a search_docs call");
    assert!(
        tool["observation"]
            .as_str()
            .unwrap()
            .contains("rasterio.features.rasterize"),
        "{tool}"
    );
    assert_eq!(events[0]["rag"], true);
    // Before the first attempt the docs for the task were retrieved into
    // its brief, and the system prompt says when to call search_docs.
    let retrieval = events
        .iter()
        .find(|e| e["event"] == "retrieval")
        .expect("a retrieval event");
    assert_eq!(retrieval["for"], "the task");
    // The API the recipe centres on, and the recipe.
    assert_eq!(
        retrieval["hits"][0], "rasterio.features.rasterize",
        "{retrieval}"
    );
    assert_eq!(
        retrieval["hits"][1], "recipe.rasterize_polygons",
        "{retrieval}"
    );
    let all = serde_json::to_string(&events).unwrap();
    assert!(
        all.contains(
            "## Library documentation (retrieved for the task; call `search_docs` for more)"
        ),
        "the brief carries the retrieved docs"
    );
    assert!(all.contains("`search_docs(query)` returns exact signatures"));
    // A hallucinated API gets the real one's documentation with its error.
    let cell = events
        .iter()
        .find(|e| e["event"] == "tool" && e["name"] == "execute_python")
        .unwrap();
    let observation = cell["observation"].as_str().unwrap();
    assert!(
        observation.contains("has no attribute 'rasterise'")
            && observation.contains("[library docs for"),
        "{observation}"
    );
    assert!(
        observation.contains("rasterio.features.rasterize("),
        "{observation}"
    );

    // Without --rag the tool is not offered, and a call says so.
    let out = dir.path().join("plain");
    let run = solve_replay(&task, &replay, &out, &[], &envs);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let events = common::events(&out);
    assert!(!events.iter().any(|e| e["event"] == "retrieval"));
    assert!(!serde_json::to_string(&events)
        .unwrap()
        .contains("`search_docs(query)`"));
    let tool = events
        .iter()
        .find(|e| e["event"] == "tool" && e["name"] == "search_docs")
        .unwrap();
    assert!(
        tool["observation"]
            .as_str()
            .unwrap()
            .contains("needs --rag"),
        "{tool}"
    );
    let cell = events
        .iter()
        .find(|e| e["event"] == "tool" && e["name"] == "execute_python")
        .unwrap();
    assert!(
        !cell["observation"]
            .as_str()
            .unwrap()
            .contains("[library docs"),
        "{cell}"
    );
}

#[test]
fn a_rebuild_embeds_only_what_changed() {
    // A copy of the test index rebuilt with one module fewer: every chunk
    // it keeps was embedded before, so none is embedded again, and its
    // search answers as a fresh build's does.
    let dir = tempfile::tempdir().unwrap();
    for file in ["docs.jsonl", "meta.json", "vectors.f32", "owners.u32"] {
        std::fs::copy(index().join(file), dir.path().join(file)).unwrap();
    }
    let out = gisclaw(
        &[
            "knowledge",
            "build",
            "--modules",
            "rasterio.features,geopandas.tools,shapely.ops,gisclaw_tools",
            "--dir",
            dir.path().to_str().unwrap(),
        ],
        &[],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains(" 0 embedded, "), "{said}");
    let hits = |index: &Path| {
        let out = gisclaw(
            &[
                "knowledge",
                "search",
                "rasterize",
                "-k",
                "3",
                "--dir",
                index.to_str().unwrap(),
            ],
            &[],
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(hits(dir.path()).starts_with("1. rasterio.features.rasterize("));
    assert!(!std::fs::read_to_string(dir.path().join("docs.jsonl"))
        .unwrap()
        .contains("\"name\":\"pyproj."));
}

#[test]
fn a_missing_or_broken_index_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    let task = common::repo().join("examples/heat_island/task.yaml");
    let replay = common::repo().join("examples/heat_island/replay.jsonl");
    let run = solve_replay(
        &task,
        &replay,
        &dir.path().join("out"),
        &["--rag"],
        &[("GISCLAW_KNOWLEDGE", empty.to_str().unwrap())],
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--rag: no library-docs index")
            && stderr.contains("gisclaw knowledge build"),
        "{stderr}"
    );

    // A vectors file cut short is named.
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    for file in ["docs.jsonl", "meta.json", "vectors.f32", "owners.u32"] {
        std::fs::copy(index().join(file), broken.join(file)).unwrap();
    }
    let vectors = std::fs::read(broken.join("vectors.f32")).unwrap();
    std::fs::write(broken.join("vectors.f32"), &vectors[..vectors.len() - 8]).unwrap();
    let out = gisclaw(
        &[
            "knowledge",
            "search",
            "rasterize",
            "--dir",
            broken.to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("vectors.f32")
            && stderr.contains("rebuild it with `gisclaw knowledge build`"),
        "{stderr}"
    );
}

#[test]
fn each_plan_step_gets_the_docs_of_the_library_it_names() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: rag\ntitle: RAG\ninstruction: Burn polygons into a raster.\ndata: data\n",
    )
    .unwrap();
    let plan = |goals: &[&str]| {
        let steps: Vec<serde_json::Value> = goals
            .iter()
            .map(|g| json!({"goal": g, "details": ""}))
            .collect();
        call("submit_plan", json!({ "steps": steps }))
    };
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        plan(&[
            "Make polygons with geopandas",
            "Burn the polygons into a grid with rasterio",
            "Report the cell count",
        ]),
        call("step_done", json!({ "summary": "made" })),
        call("step_done", json!({ "summary": "burnt" })),
        call("finish", json!({ "summary": "counted" })),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let envs = [("GISCLAW_KNOWLEDGE", index().to_str().unwrap())];
    let out = dir.path().join("out");
    let run = solve_replay(&task, &replay, &out, &["--rag", "--arch", "dual"], &envs);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let events = events(&out);
    let retrievals: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "retrieval")
        .collect();
    assert_eq!(retrievals.len(), 3, "one per step, none for the task");
    assert!(retrievals.iter().all(|r| r["for"] == "this step"));
    // Filtered to the library each step names (and the recipes);
    // unnamed: every library.
    let hits = |r: &serde_json::Value| -> Vec<String> {
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(retrievals[0]["libraries"], json!(["geopandas"]));
    assert!(
        hits(retrievals[0])
            .iter()
            .all(|h| h.starts_with("geopandas.") || h.starts_with("recipe.")),
        "{:?}",
        hits(retrievals[0])
    );
    assert_eq!(retrievals[1]["libraries"], json!(["rasterio"]));
    let burn = hits(retrievals[1]);
    assert!(
        burn.iter()
            .all(|h| h.starts_with("rasterio.") || h.starts_with("recipe.")),
        "{burn:?}"
    );
    assert!(
        burn.iter().any(|h| h == "recipe.rasterize_polygons"),
        "{burn:?}"
    );
    assert_eq!(retrievals[2]["libraries"], json!([]));
}

#[test]
fn each_tree_search_expansion_gets_the_docs_of_its_step() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: rag\ntitle: RAG\ninstruction: Burn polygons into a raster.\ndata: data\n",
    )
    .unwrap();
    let steps: Vec<serde_json::Value> = [
        "Make polygons with geopandas",
        "Burn the polygons into a grid with rasterio",
        "Report the cell count",
    ]
    .iter()
    .map(|g| json!({"goal": g, "details": ""}))
    .collect();
    let exec = |code: &str| call("execute_python", json!({ "code": code }));
    let lines = [
        call("submit_plan", json!({ "steps": steps })),
        exec("polys = 3"),
        exec("grid = polys * 2"),
        exec("print(grid)"),
    ];
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let envs = [("GISCLAW_KNOWLEDGE", index().to_str().unwrap())];
    let out = dir.path().join("out");
    let run = solve_replay(
        &task,
        &replay,
        &out,
        &["--rag", "--arch", "mcts", "--mcts-width", "1"],
        &envs,
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let events = events(&out);
    let retrievals: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "retrieval")
        .collect();
    assert_eq!(retrievals.len(), 3, "one per expansion, none for the task");
    assert_eq!(retrievals[0]["libraries"], json!(["geopandas"]));
    assert_eq!(retrievals[1]["libraries"], json!(["rasterio"]));
    assert!(retrievals.iter().all(|r| r["for"] == "this step"));
}

#[test]
fn a_rag_ablation_gets_geoagent_table_3() {
    let dir = tempfile::tempdir().unwrap();
    let suite = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geoanalyst");
    let envs = [("GISCLAW_KNOWLEDGE", index().to_str().unwrap())];
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
            "--replay-gold",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let run = gisclaw(&args, &envs);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
        out
    };
    let (with, without) = (eval("rag", &["--rag"]), eval("plain", &[]));
    let both = dir.path().join("both");
    let run = gisclaw(
        &[
            "eval",
            "report",
            without.to_str().unwrap(),
            with.to_str().unwrap(),
            "--out",
            both.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let results = common::read_json(&both.join("results.json"));
    assert_eq!(results["ablations"][0]["flag"], "rag");
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    assert!(
        md.contains("Function calls without and with retrieval (cf. GeoAgent Table 3), single:"),
        "{md}"
    );
    // Each row carries its cell's call metrics (the gold's own calls: 1.000, loss 0).
    for (row, label) in [
        ("@0 (no --rag)", "gold replay · single"),
        ("@3 (--rag)", "gold replay · rag · single"),
    ] {
        let cell = results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["label"] == label)
            .unwrap_or_else(|| panic!("no cell {label}: {results}"));
        let f = |k: &str| format!("{:.3}", cell["calls"][k].as_f64().unwrap());
        let line = format!(
            "| {row} | {} | {} | {} | {} | {} |",
            f("accuracy"),
            f("precision"),
            f("recall"),
            f("f1"),
            f("hamming_loss")
        );
        assert!(md.contains(&line), "{line}\n{md}");
    }
}

#[test]
fn a_step_suite_with_rag_retrieves_for_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let suite = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geocode");
    let out = dir.path().join("steps");
    let run = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            "--replay-gold",
            "--rag",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("GISCLAW_KNOWLEDGE", index().to_str().unwrap())],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let events = events(&out.join("runs/G01/run-1"));
    let retrievals = events.iter().filter(|e| e["event"] == "retrieval").count();
    let steps = gisclaw::bench::steps::LoadedStepTask::load(&suite.join("G01/task.yaml"))
        .unwrap()
        .task
        .steps
        .len();
    assert_eq!(retrievals, steps, "one per step");
    let all = serde_json::to_string(&events).unwrap();
    assert!(all.contains("search_docs(query) gives the exact signatures"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.lines().next().unwrap().ends_with("gold replay · rag"),
        "{md}"
    );
    assert_eq!(
        common::read_json(&out.join("records/G01.1.json"))["complete_at_1"],
        1.0
    );
}

#[test]
fn wrong_apis_in_real_failing_cells_get_the_right_entries() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: wrong\ntitle: Wrong APIs\ninstruction: Use APIs that moved.\ndata: data\n",
    )
    .unwrap();
    let cells = [
        // Removed in Shapely 2: its successor is unary_union / union_all.
        "from shapely.ops import cascaded_union",
        // pyproj 1's name: Transformer.transform is today's.
        "from pyproj import Transformer\nTransformer.from_crs('EPSG:4326', 'EPSG:3857', always_xy=True).transform_point(1, 2)",
        // geopandas renamed sjoin's `op` to `predicate`.
        "import geopandas, geopandas.tools\nfrom shapely.geometry import Point\ng = geopandas.GeoDataFrame(geometry=[Point(0, 0)])\ngeopandas.tools.sjoin(g, g, op='within')",
    ];
    let mut lines: Vec<String> = cells
        .iter()
        .map(|code| call("execute_python", json!({ "code": code })))
        .collect();
    lines.push(call("finish", json!({ "summary": "tried" })));
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let envs = [("GISCLAW_KNOWLEDGE", index().to_str().unwrap())];
    let out = dir.path().join("out");
    let run = solve_replay(&task, &replay, &out, &["--rag"], &envs);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let observations: Vec<String> = events(&out)
        .iter()
        .filter(|e| e["event"] == "tool" && e["name"] == "execute_python")
        .map(|e| e["observation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(observations.len(), 3);
    let expect = [
        (
            "[library docs for `shapely.ops.cascaded_union`]",
            "shapely.ops.unary_union(",
        ),
        (
            "[library docs for `Transformer.transform_point`]",
            "pyproj.Transformer.transform(",
        ),
        ("[library docs for `sjoin(op=…)`]", "geopandas.tools.sjoin("),
    ];
    for (observation, (label, entry)) in observations.iter().zip(expect) {
        assert!(observation.contains(label), "{observation}");
        let docs = observation.split(label).nth(1).unwrap();
        assert!(docs.contains(entry), "{entry} not in:\n{docs}");
    }
    // The removed name's replacement says what changed.
    assert!(
        observations[0].contains("replaces shapely.ops.cascaded_union (removed in shapely 2.0)"),
        "{}",
        observations[0]
    );
    // The signature shown for the wrong keyword names the right one.
    assert!(
        observations[2].contains("predicate="),
        "{}",
        observations[2]
    );
}

#[test]
fn every_recipe_runs_in_the_sandbox() {
    let (mut session, _dir) = common::session();
    for recipe in gisclaw::knowledge::recipes::all().unwrap() {
        let outcome = session
            .execute(&recipe.code)
            .unwrap_or_else(|e| panic!("{}: the sandbox failed: {e}", recipe.name));
        assert_eq!(
            outcome.status,
            gisclaw::sandbox::CellStatus::Ok,
            "{} failed:\n{}",
            recipe.name,
            gisclaw::observation::render(&outcome)
        );
    }
}

#[test]
fn recipes_are_found_and_shown_as_recipes() {
    let hits = search("inverse distance weighting interpolation of points");
    assert!(
        hits.starts_with("1. [recipe] recipe.idw_interpolation"),
        "{hits}"
    );
    assert!(hits.contains("cKDTree"), "the snippet is shown: {hits}");
    // An exact name goes first, through its alias too.
    assert!(search("shapely.ops.unary_union").starts_with("1. shapely.ops.unary_union("));
}

#[test]
fn a_removed_api_finds_its_replacement_with_a_note() {
    // Neither the name nor the error is in any installed docstring: the
    // table (knowledge/removed.toml) maps it, and the hit says what changed.
    for query in [
        "ImportError: cannot import name 'cascaded_union' from 'shapely.ops'",
        "shapely.ops.cascaded_union",
    ] {
        let hits = search(query);
        assert!(
            hits.starts_with("1. shapely.ops.unary_union(")
                && hits.contains(
                    "   replaces shapely.ops.cascaded_union (removed in shapely 2.0): shapely.union_all(geoms)"
                ),
            "{query}:\n{hits}"
        );
    }
    // A name that exists gets no note.
    assert!(!search("shapely.ops.unary_union").contains("replaces"));
}

#[test]
fn every_removed_api_is_gone_and_its_replacement_installed() {
    // knowledge/removed.toml against the venv the sandbox runs: an `old`
    // name that still resolves, or a `new` one that does not, is a stale row.
    let rows = gisclaw::knowledge::removed::table().unwrap();
    let check = json!(rows
        .iter()
        .map(|r| json!({ "old": r.old, "new": r.new }))
        .collect::<Vec<_>>());
    let script = r#"
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
def resolves(path):
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False
stale = []
for row in json.load(sys.stdin):
    stale += [f"{o} still exists" for o in row["old"] if resolves(o)]
    if not resolves(row["new"]):
        stale.append(f"{row['new']} does not exist")
print("\n".join(stale))
"#;
    let python = gisclaw::paths::default_venv().join("bin/python");
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(check.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stale = String::from_utf8_lossy(&out.stdout);
    assert!(
        stale.trim().is_empty(),
        "stale rows in knowledge/removed.toml:\n{stale}"
    );
}
