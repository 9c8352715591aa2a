//! `solution.ipynb`: written by `solve` (and `gisclaw transcript to-ipynb`)
//! from the run's record, validated with the `nbformat` package's own
//! validator, and re-executed top to bottom by a real Jupyter kernel
//! (`nbclient` + `ipykernel` from the sandbox venv) in the run's folder,
//! which must give the same outputs.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{call, gisclaw, solve_replay};
use serde_json::{json, Value};

/// Validates the notebook at `path` with nbformat, executes it with
/// nbclient in its folder, and prints the executed notebook's cells as
/// JSON: `[{"tags": [...], "outputs": [[type, name, text], ...]}, ...]`
/// (text: the stream text, the `text/plain` of a result, the `ename` of an
/// error, the MIME types of display data).
const VALIDATE_AND_RUN: &str = r#"
import json, os, sys
import nbformat, nbclient

path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
nbformat.validate(nb)
client = nbclient.NotebookClient(nb, timeout=300, kernel_name=nb.metadata.kernelspec.name,
                                 resources={"metadata": {"path": os.path.dirname(path)}})
client.execute()

def summary(o):
    t = o["output_type"]
    if t == "stream":
        return [t, o["name"], o["text"]]
    if t == "execute_result":
        return [t, "", o["data"]["text/plain"]]
    if t == "error":
        return [t, "", o["ename"]]
    return [t, "", ",".join(sorted(o["data"]))]

print(json.dumps([
    {"tags": c.get("metadata", {}).get("tags", []), "outputs": [summary(o) for o in c["outputs"]]}
    for c in nb.cells if c["cell_type"] == "code"
]))
"#;

fn python() -> std::path::PathBuf {
    gisclaw::paths::default_venv().join("bin/python")
}

/// Runs [`VALIDATE_AND_RUN`] on `notebook`; the executed cells' summaries.
fn validate_and_run(notebook: &Path) -> Vec<Value> {
    let out = Command::new(python())
        .args(["-c", VALIDATE_AND_RUN, notebook.to_str().unwrap()])
        .env("JUPYTER_PLATFORM_DIRS", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The notebook's code cells as the same summaries, before execution.
fn recorded(notebook: &Value) -> Vec<Value> {
    notebook["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["cell_type"] == "code")
        .map(|c| {
            let outputs: Vec<Value> = c["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    let text = |v: &Value| -> String {
                        match v {
                            Value::Array(parts) => parts.iter().filter_map(Value::as_str).collect(),
                            other => other.as_str().unwrap_or("").to_string(),
                        }
                    };
                    match o["output_type"].as_str().unwrap() {
                        "stream" => json!(["stream", o["name"], text(&o["text"])]),
                        "execute_result" => {
                            json!(["execute_result", "", text(&o["data"]["text/plain"])])
                        }
                        "error" => json!(["error", "", o["ename"]]),
                        t => {
                            let mut keys: Vec<&String> =
                                o["data"].as_object().unwrap().keys().collect();
                            keys.sort();
                            json!([t, "", keys.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")])
                        }
                    }
                })
                .collect();
            json!({ "tags": c["metadata"]["tags"].as_array().cloned().unwrap_or_default(), "outputs": outputs })
        })
        .collect()
}

/// The text outputs (streams, results, errors) of cell summaries: what a
/// kernel must reproduce. Figures are compared apart: the sandbox embeds
/// what a cell saved, Jupyter's inline backend shows what is left open.
fn texts(cells: &[Value]) -> Vec<Vec<Value>> {
    cells
        .iter()
        .map(|c| {
            c["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| o[0] != "display_data")
                .cloned()
                .collect()
        })
        .collect()
}

/// A task with a CSV, and a replay whose cells print, display a value,
/// fail once, save a figure, and finish.
fn task(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    std::fs::create_dir(dir.join("data")).unwrap();
    std::fs::write(
        dir.join("data/points.csv"),
        "id,x,y,value\n1,0,0,3.5\n2,1,1,4.5\n3,2,0,5.0\n",
    )
    .unwrap();
    let task = dir.join("task.yaml");
    std::fs::write(
        &task,
        "id: nb\ntitle: Notebook\ninstruction: Average the values of São Paulo's points and map them.\ndata: data\noutputs:\n  - pred_results/mean.txt\n  - pred_results/points.png\n",
    )
    .unwrap();
    let thought = |text: &str, code: &str| {
        json!({"role": "assistant", "content": text, "tool_calls": [
            {"type": "function", "function": {"name": "execute_python", "arguments": json!({"code": code}).to_string()}}
        ]})
        .to_string()
    };
    let lines = [
        thought(
            "I read the points first.",
            "df = pd.read_csv('data/points.csv')\nprint(len(df), 'points in São Paulo')\nround(float(df['value'].mean()), 3)",
        ),
        thought("Then the mean, to a file.", "mean = df['valu'].mean()"),
        thought(
            "The column is `value`.",
            "mean = df['value'].mean()\nopen('pred_results/mean.txt', 'w').write(f'{mean:.3f}')\nprint(f'mean = {mean:.3f}')",
        ),
        thought(
            "Now the map.",
            "fig, ax = plt.subplots()\nax.scatter(df.x, df.y, c=df.value)\nfig.savefig('pred_results/points.png')\nplt.close(fig)",
        ),
        call("finish", json!({"summary": "Mean 4.333 written; points mapped."})),
    ];
    let replay = dir.join("replay.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    (task, replay)
}

#[test]
fn solve_writes_a_valid_notebook_that_a_real_kernel_reruns_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let (task, replay) = task(dir.path());
    let out = dir.path().join("run");
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));

    let path = out.join("solution.ipynb");
    let nb = common::read_json(&path);
    let cells = nb["cells"].as_array().unwrap();
    // The task first, then the imports, the reasoning and the kept cells.
    assert_eq!(cells[0]["cell_type"], "markdown");
    let task_text: String = serde_json::from_value::<Vec<String>>(cells[0]["source"].clone())
        .unwrap()
        .concat();
    assert!(task_text.contains("São Paulo"), "{task_text}");
    assert!(
        task_text.contains("points.csv"),
        "the schema card: {task_text}"
    );
    let all = nb.to_string();
    assert!(all.contains("I read the points first."));
    assert!(all.contains("**Summary:** Mean 4.333 written"));
    assert!(
        !all.contains("df['valu']"),
        "the failed cell is not kept by default"
    );
    assert!(!all.contains("plt.show() displays nothing"));

    let before = recorded(&nb);
    assert_eq!(before.len(), 4, "imports + 3 kept cells: {before:?}");
    assert_eq!(
        before[1]["outputs"],
        json!([
            ["stream", "stdout", "3 points in São Paulo\n"],
            ["execute_result", "", "4.333"]
        ])
    );
    assert_eq!(
        before[3]["outputs"],
        json!([["display_data", "", "image/png,text/plain"]])
    );
    // The embedded figure is the PNG the cell wrote.
    let png = cells
        .iter()
        .flat_map(|c| c["outputs"].as_array().cloned().unwrap_or_default())
        .find_map(|o| o["data"]["image/png"].as_str().map(str::to_string))
        .unwrap();
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(png)
        .unwrap();
    assert_eq!(
        bytes,
        std::fs::read(out.join("pred_results/points.png")).unwrap()
    );

    // A real kernel, in the run's folder, from a clean pred_results/.
    std::fs::remove_dir_all(out.join("pred_results")).unwrap();
    std::fs::create_dir(out.join("pred_results")).unwrap();
    let after = validate_and_run(&path);
    assert_eq!(texts(&after), texts(&before));
    assert_eq!(
        std::fs::read_to_string(out.join("pred_results/mean.txt")).unwrap(),
        "4.333"
    );
    assert!(out.join("pred_results/points.png").is_file());

    // The converter gives the same notebook from the record alone.
    let again = dir.path().join("again.ipynb");
    let o = gisclaw(
        &[
            "transcript",
            "to-ipynb",
            out.to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    assert_eq!(texts(&recorded(&common::read_json(&again))), texts(&before));
}

#[test]
fn full_notebooks_keep_the_failed_cells_marked_and_still_run_top_to_bottom() {
    let dir = tempfile::tempdir().unwrap();
    let (task, replay) = task(dir.path());
    let out = dir.path().join("run");
    let o = solve_replay(&task, &replay, &out, &["--notebook", "full"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let path = out.join("solution.ipynb");
    let nb = common::read_json(&path);
    let before = recorded(&nb);
    assert_eq!(before.len(), 5, "imports + 4 cells tried: {before:?}");
    assert_eq!(before[2]["tags"], json!(["raises-exception"]));
    assert_eq!(before[2]["outputs"], json!([["error", "", "KeyError"]]));
    assert!(nb.to_string().contains("Failed attempt (`KeyError"));
    let after = validate_and_run(&path);
    assert_eq!(texts(&after), texts(&before));
}

#[test]
fn the_converter_reads_old_records_and_refuses_a_folder_without_one() {
    let dir = tempfile::tempdir().unwrap();
    // A record from before the per-cell fields: the observation stands in.
    let events = [
        json!({"event": "start", "task": "old"}),
        json!({"event": "message", "round": 0, "message": {"role": "user", "content": "# Task old"}}),
        json!({"event": "tool", "name": "execute_python", "status": "Ok", "cell_us": 10,
               "arguments": json!({"code": "print(1)"}).to_string(), "observation": "1\n"}),
    ];
    let text: String = events.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(dir.path().join("transcript.jsonl"), text).unwrap();
    std::fs::write(
        dir.path().join("solution.py"),
        gisclaw::agent::solution::consolidate("old", ["print(1)"]),
    )
    .unwrap();
    let o = gisclaw(
        &["transcript", "to-ipynb", dir.path().to_str().unwrap()],
        &[],
    );
    assert!(o.status.success(), "{}", common::text(&o));
    let nb = common::read_json(&dir.path().join("solution.ipynb"));
    assert_eq!(
        recorded(&nb)[1]["outputs"],
        json!([["stream", "stdout", "1\n"]])
    );
    validate_and_run(&dir.path().join("solution.ipynb"));

    // A broken line names the file and the line.
    std::fs::write(
        dir.path().join("transcript.jsonl"),
        "{\"event\": \"start\"}\nnot json\n{\"event\": \"end\"}\n",
    )
    .unwrap();
    let o = gisclaw(
        &["transcript", "to-ipynb", dir.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = common::text(&o);
    assert!(err.contains("transcript.jsonl, line 2"), "{err}");

    let empty = tempfile::tempdir().unwrap();
    let o = gisclaw(
        &["transcript", "to-ipynb", empty.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        common::text(&o).contains("no transcript.jsonl"),
        "{}",
        common::text(&o)
    );
}

#[test]
fn a_notebook_whose_cells_use_the_helpers_imports_them_and_runs_in_the_gisclaw_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: helpers\ntitle: Helpers\ninstruction: Make the strings numbers.\n",
    )
    .unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        call(
            "execute_python",
            json!({"code": "df = pd.DataFrame({'a': ['1', '2']})\nprint(to_numeric_columns(df), int(df['a'].sum()))"}),
        ),
        call("finish", json!({"summary": "converted"})),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let out = dir.path().join("run");
    let o = solve_replay(&task, &replay, &out, &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let path = out.join("solution.ipynb");
    let nb = common::read_json(&path);
    let imports: String = serde_json::from_value::<Vec<String>>(nb["cells"][1]["source"].clone())
        .unwrap()
        .concat();
    assert!(imports.contains("from gisclaw_tools import *"), "{imports}");
    assert!(
        !imports.contains("def load_raster"),
        "the helpers are imported, not inlined: {imports}"
    );
    assert_eq!(nb["metadata"]["kernelspec"]["name"], "gisclaw");
    let before = recorded(&nb);
    let after = validate_and_run(&path);
    assert_eq!(texts(&after), texts(&before));
    assert_eq!(
        after[1]["outputs"],
        json!([["stream", "stdout", "['a'] 3\n"]])
    );
    // solution.py still runs on its own: it inlines them.
    let script = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(script.contains("def to_numeric_columns"), "{script}");
}
