//! `--protocol`: the papers' settings as presets. A replay-gold eval under
//! each preset runs and says its protocol; GeoAnalystBench's published
//! wording reaches the model verbatim (checked against Python's own CSV
//! reader); `eval report A B` refuses to compare two protocols unless
//! told to; the step suite's tree search refines a failing step through a
//! scripted server (node-prompt update, Prepend New Task); the solutions
//! corpus briefs a task with another task's gold, never its own; C_emb
//! embeds through a served model when one is given.

use crate::common;

use std::path::Path;

use common::fake_llm::{openai_answer, FakeServer, Reply};
use common::{gisclaw, read_json, text};
use gisclaw::agent::solution::split_cells;
use serde_json::{json, Value};

fn suite(name: &str) -> std::path::PathBuf {
    common::repo().join("benchmarks").join(name)
}

fn eval(out: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["eval", "--out", out.to_str().unwrap(), "--runs", "1"];
    all.extend_from_slice(args);
    gisclaw(&all, &[])
}

#[test]
fn every_geoanalystbench_task_reads_the_vendored_tables_text_under_gisclaw_paper() {
    // Python's csv module reads the vendored table: the reference nobody
    // here wrote. The table's line breaks inside a cell are CRLF; the
    // published text has them as LF (the only change).
    let table = common::repo().join("benchmarks/geoanalystbench/GeoAnalystBench.csv");
    let script = r#"
import csv, json, sys
rows = {}
with open(sys.argv[1], newline='', encoding='utf-8-sig') as f:
    for row in csv.DictReader(f):
        rows[row['id'].strip()] = {k: row[k].replace('\r\n', '\n').strip() for k in ('Instruction', 'Domain Knowledge', 'Human Designed Workflow')}
print(json.dumps(rows))
"#;
    let rows: Value = serde_json::from_str(&common::venv_python([
        "-c",
        script,
        table.to_str().unwrap(),
    ]))
    .unwrap();
    let mut tasks = gisclaw::bench::load::load_suite(&suite("geoanalyst"), None).unwrap();
    assert_eq!(tasks.len(), 50);
    let ours: Vec<String> = tasks.iter().map(|t| t.task.instruction.clone()).collect();
    let applied =
        gisclaw::bench::published::apply(gisclaw::bench::published::Wording::Published, &mut tasks)
            .unwrap();
    assert_eq!(applied, 50, "every task names its row");
    let mut differed = 0;
    for (loaded, before) in tasks.iter().zip(&ours) {
        let task = &loaded.task;
        let number = task.id.trim_start_matches('T').trim_start_matches('0');
        let row = &rows[number];
        assert_eq!(
            task.instruction,
            row["Instruction"].as_str().unwrap(),
            "{}",
            task.id
        );
        let text = |v: &Value| Some(v.as_str().unwrap().to_string()).filter(|s| !s.is_empty());
        assert_eq!(
            task.domain_knowledge,
            text(&row["Domain Knowledge"]),
            "{}",
            task.id
        );
        assert_eq!(
            task.workflow,
            text(&row["Human Designed Workflow"]),
            "{}",
            task.id
        );
        differed += usize::from(&task.instruction != before);
    }
    // Our enriched wording is not the published one.
    assert!(differed >= 45, "only {differed} instructions changed");
}

#[test]
fn a_replay_gold_eval_under_gisclaw_paper_says_its_protocol_and_refuses_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    let paper = dir.path().join("paper");
    let run = eval(
        &paper,
        &[
            "--suite",
            suite("geoanalyst").to_str().unwrap(),
            "--tasks",
            "8",
            "--replay-gold",
            "--protocol",
            "gisclaw-paper",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    assert!(
        text(&run).contains("1 of 1 task(s) read as published"),
        "{}",
        text(&run)
    );
    assert_eq!(
        read_json(&paper.join("eval.json"))["protocol"],
        "gisclaw-paper"
    );
    let md = std::fs::read_to_string(paper.join("report.md")).unwrap();
    assert!(
        md.contains("Protocol: `gisclaw-paper` (GISclaw's setting)"),
        "{md}"
    );
    assert!(
        md.contains("Still ours:") && md.contains("C_emb embedding"),
        "{md}"
    );
    // The paper's figures lead: their table comes before ours.
    let paper_table = md.find("As the GISclaw paper computes them").unwrap();
    assert!(paper_table < md.find("Overall (cf. GISclaw Table 6)").unwrap());
    // The run's start says the protocol, and the model read the published
    // instruction (GeoAnalystBench row 8), not ours.
    let run_dir = paper.join("runs/T08/single-1");
    let events = common::events(&run_dir);
    assert_eq!(events[0]["protocol"], "gisclaw-paper");
    assert_eq!(events[0]["domain_knowledge"], true);
    let table = gisclaw::bench::import::read_table(
        &common::repo().join("benchmarks/geoanalystbench/GeoAnalystBench.csv"),
    )
    .unwrap();
    let published = table.row(8).unwrap().get("Instruction").to_string();
    let prompt = events
        .iter()
        .find(|e| e["event"] == "message" && e["message"]["role"] == "user")
        .map(|e| e["message"]["content"].as_str().unwrap().to_string())
        .unwrap();
    assert!(prompt.contains(&published), "{prompt}");
    // The system prompt is Listing 1, and the stand-in for the paper's
    // embedding model is said.
    let system = events
        .iter()
        .find(|e| e["event"] == "message" && e["message"]["role"] == "system")
        .map(|e| e["message"]["content"].as_str().unwrap().to_string())
        .unwrap();
    assert!(
        system.starts_with("You are a GIS analyst agent. Solve geospatial\nanalysis tasks step-by-step using tools.\n## Basic Guidelines\n1. Start by calling list_files to see available data."),
        "{system}"
    );
    assert!(
        text(&run).contains("C_emb embeds with the bundled MiniLM"),
        "{}",
        text(&run)
    );
    // The tool layer's cast is the session's first cell, so solution.py
    // (and its reproduction) start with it; the gold still ran through.
    let solution = std::fs::read_to_string(run_dir.join("solution.py")).unwrap();
    assert!(
        solution.contains("\nauto_numeric()  # GISclaw's tool layer"),
        "{solution}"
    );
    assert!(
        solution.contains("def auto_numeric("),
        "the helpers are inlined: {solution}"
    );
    assert_eq!(
        read_json(&paper.join("records/T08.single.1.json"))["success"],
        true
    );
    assert!(
        !prompt.contains("2,500"),
        "our enriched parameter leaked: {prompt}"
    );
    // Under ours, the same task: a report of the two is refused in one
    // line unless told.
    let ours = dir.path().join("ours");
    let run = eval(
        &ours,
        &[
            "--suite",
            suite("geoanalyst").to_str().unwrap(),
            "--tasks",
            "8",
            "--replay-gold",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    let both = [paper.to_str().unwrap(), ours.to_str().unwrap()];
    let out = dir.path().join("both");
    let mut args = vec![
        "eval",
        "report",
        both[0],
        both[1],
        "--out",
        out.to_str().unwrap(),
    ];
    let refused = gisclaw(&args, &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("`gisclaw-paper`")
            && said.contains("`ours`")
            && said.contains("--mixed-protocols"),
        "{said}"
    );
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    args.push("--mixed-protocols");
    let done = gisclaw(&args, &[]);
    assert!(done.status.success(), "{}", text(&done));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("gold replay · gisclaw-paper") || md.contains("· gisclaw-paper"),
        "{md}"
    );
    // A limit the preset sets cannot be given otherwise.
    let clash = eval(
        &dir.path().join("clash"),
        &[
            "--suite",
            suite("geoanalyst").to_str().unwrap(),
            "--replay-gold",
            "--protocol",
            "gisclaw-paper",
            "--cell-timeout",
            "60",
        ],
    );
    assert_eq!(clash.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&clash.stderr)
        .contains("--cell-timeout 60: --protocol gisclaw-paper sets it to 600"));
}

#[test]
fn each_function_level_and_step_preset_runs_a_replay_gold_eval_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for (protocol, suite_name, tasks, paper) in [
        ("autogeeval-paper", "unit", "1-3", "AutoGEEval"),
        ("geojseval-paper", "geojs", "1-2", "GeoJSEval"),
        ("geoagent-paper", "geocode", "1", "GeoAgent"),
    ] {
        let out = dir.path().join(protocol);
        let run = eval(
            &out,
            &[
                "--suite",
                suite(suite_name).to_str().unwrap(),
                "--tasks",
                tasks,
                "--replay-gold",
                "--protocol",
                protocol,
            ],
        );
        assert!(run.status.success(), "{protocol}: {}", text(&run));
        assert_eq!(read_json(&out.join("eval.json"))["protocol"], protocol);
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        let said = format!("Protocol: `{protocol}` ({paper}'s setting)");
        assert!(md.contains(&said), "{protocol}: {md}");
        if protocol == "geoagent-paper" {
            // The preset's tree search has nothing to search in a gold
            // replay: the agent replays it, and says so.
            assert!(
                String::from_utf8_lossy(&run.stderr)
                    .contains("the agent (--arch single) replays the gold"),
                "{}",
                text(&run)
            );
            // Nor does the search take a gold prefix: the agent runs.
            let prefixed = eval(
                &dir.path().join("prefixed"),
                &[
                    "--suite",
                    suite(suite_name).to_str().unwrap(),
                    "--tasks",
                    tasks,
                    "--replay-gold",
                    "--gold-prefix",
                    "--protocol",
                    protocol,
                ],
            );
            assert!(prefixed.status.success(), "{}", text(&prefixed));
        }
    }
    // A preset on a suite it is not for is refused in one line.
    let wrong = eval(
        &dir.path().join("wrong"),
        &[
            "--suite",
            suite("unit").to_str().unwrap(),
            "--replay-gold",
            "--protocol",
            "gisclaw-paper",
        ],
    );
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("GISclaw's setting is for task suites"));
}

/// An OpenAI answer holding `text`.
fn says(text: &str) -> Reply {
    Reply::Json(
        200,
        openai_answer(json!({ "role": "assistant", "content": text })),
    )
}

fn fenced(code: &str) -> Reply {
    says(&format!("```python\n{code}\n```"))
}

#[test]
fn the_step_suites_tree_search_refines_failing_steps_through_a_scripted_server() {
    let gold = split_cells(&std::fs::read_to_string(suite("geocode").join("G01/gold.py")).unwrap());
    // Step 1: the sample fails (an attribute that does not exist); the
    // model fixes the prompt; the code regenerated from it is the gold.
    // Step 2: the sample uses a name nothing defined; the prepended task
    // defines it; then the sample runs. Step 3: the rounds are spent.
    let script = vec![
        fenced(&format!("{}\nNone.no_such_method()", gold[0])),
        says("Do step 1 without calling no_such_method: use the GeoDataFrame as read."),
        fenced(&gold[0]),
        fenced(&format!("assert helper_radius == 1\n{}", gold[1])),
        fenced("helper_radius = 1"),
    ];
    let server = FakeServer::start(script);
    let base = format!("{}/v1", server.url);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let run = gisclaw(
        &[
            "eval",
            "--suite",
            suite("geocode").to_str().unwrap(),
            "--tasks",
            "1",
            "--runs",
            "1",
            // GeoAgent's setting searches the tree without `--arch mcts`.
            "--protocol",
            "geoagent-paper",
            "--mcts-width",
            "1",
            "--max-rounds",
            "5",
            "--backend",
            "openai",
            "--model",
            "scripted",
            "--base-url",
            &base,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-test-steps")],
    );
    let record = read_json(&out.join("records/G01.1.json"));
    assert!(
        record["steps"][0]["passed"] == true && record["steps"][1]["passed"] == true,
        "{}\n{record:#}",
        text(&run)
    );
    assert_eq!(record["steps"][2]["passed"], false);
    // A step whose search found a node that ran executed, though other
    // nodes of its tree failed first.
    assert_eq!(record["steps"][0]["executed"], true);
    assert_eq!(record["steps"][1]["executed"], true);
    assert_eq!(
        record["search"],
        json!({ "samples": 2, "prompt_updates": 1, "prepended_tasks": 1, "redecompositions": 0 })
    );
    // The requests carried GeoAgent's sampling and prompts, in order.
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.line.contains("chat/completions"))
        .collect();
    for r in &requests {
        assert_eq!(r.body["temperature"], json!(0.6), "{}", r.body);
        assert_eq!(r.body["top_p"], json!(0.9), "{}", r.body);
        assert_eq!(r.body["max_tokens"], json!(2048), "{}", r.body);
    }
    let asked: Vec<String> = requests
        .iter()
        .map(|r| r.body["messages"].as_array().unwrap().last().unwrap()["content"].to_string())
        .collect();
    assert!(
        asked[1].contains("Your goal is to fix the error in the initial prompt"),
        "{asked:?}"
    );
    assert!(asked[1].contains("no_such_method"), "{asked:?}");
    assert!(
        asked[2].contains("Do step 1 without calling no_such_method"),
        "{asked:?}"
    );
    assert!(
        asked[4].contains("Defining the undefined variables for the next step task"),
        "{asked:?}"
    );
    // The tree is in the transcript, and the report names the search.
    let events = common::events(&out.join("runs/G01/run-1"));
    let origins: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "mcts_node")
        .map(|e| e["origin"].as_str().unwrap())
        .collect();
    assert_eq!(
        origins,
        ["sample", "prompt_update", "sample", "prepend_task"]
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("tree search"), "{md}");
    // Beside the LLM alone, the tree search is GeoAgent Table 4's column.
    let alone = dir.path().join("alone");
    let run = eval(
        &alone,
        &[
            "--suite",
            suite("geocode").to_str().unwrap(),
            "--tasks",
            "1",
            "--arch",
            "none",
            "--replay-gold",
            "--protocol",
            "geoagent-paper",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    let both = dir.path().join("both");
    let report = gisclaw(
        &[
            "eval",
            "report",
            out.to_str().unwrap(),
            alone.to_str().unwrap(),
            "--out",
            both.to_str().unwrap(),
        ],
        &[],
    );
    assert!(report.status.success(), "{}", text(&report));
    let md = std::fs::read_to_string(both.join("report.md")).unwrap();
    let header = md
        .lines()
        .find(|l| l.starts_with("| suite |") && l.contains("GeoAgent (tree search)"))
        .unwrap_or_else(|| panic!("no tree-search column: {md}"));
    let cells =
        |line: &str| -> Vec<String> { line.split('|').map(|c| c.trim().to_string()).collect() };
    let column = cells(header)
        .iter()
        .position(|c| c.contains("scripted") && c.ends_with("GeoAgent (tree search)"))
        .unwrap_or_else(|| panic!("{header}"));
    let row = md.lines().find(|l| l.starts_with("| geocode |")).unwrap();
    let value: f64 = cells(row)[column]
        .parse()
        .unwrap_or_else(|_| panic!("{row}"));
    assert!(value > 0.0 && value < 1.0, "{row}");
    // No gold replay for a search: it has no candidates.
    let refused = gisclaw(
        &[
            "eval",
            "--suite",
            suite("geocode").to_str().unwrap(),
            "--arch",
            "mcts",
            "--replay-gold",
            "--out",
            dir.path().join("g").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn the_solutions_corpus_briefs_each_step_task_with_another_tasks_gold() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let run = eval(
        &out,
        &[
            "--suite",
            suite("geocode").to_str().unwrap(),
            "--tasks",
            "1",
            "--replay-gold",
            "--solutions",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    assert_eq!(read_json(&out.join("eval.json"))["solutions"], true);
    // One task selected: the corpus is still the whole suite.
    {
        let id = "G01";
        let events = common::events(&out.join(format!("runs/{id}/run-1")));
        let retrieval = events
            .iter()
            .find(|e| e["event"] == "retrieval" && e["for"] == "solutions")
            .unwrap_or_else(|| panic!("{id}: no solutions retrieval"));
        let hit = retrieval["hits"][0].as_str().unwrap().to_string();
        assert!(
            hit.starts_with("solution.G") && hit != format!("solution.{id}"),
            "{id}: {hit}"
        );
        // The brief holds that task's gold, and not this task's own.
        let other = hit.trim_start_matches("solution.");
        let context = events
            .iter()
            .filter(|e| e["event"] == "message" && e["message"]["role"] == "user")
            .map(|e| e["message"]["content"].as_str().unwrap().to_string())
            .next()
            .unwrap();
        let gold = |task: &str| {
            let folder = suite("geocode").join(task);
            split_cells(&std::fs::read_to_string(folder.join("gold.py")).unwrap())
        };
        assert!(context.contains(&format!("### {other} — ")), "{context}");
        assert!(context.contains(gold(other)[0].trim()), "{context}");
        assert!(
            !context.contains(gold(id).last().unwrap().trim()),
            "{id}'s own gold leaked"
        );
    }
    // A task suite: the task's prompt carries another task's gold.
    let tasks = dir.path().join("tasks");
    let run = eval(
        &tasks,
        &[
            "--suite",
            suite("geoanalyst").to_str().unwrap(),
            "--tasks",
            "8",
            "--replay-gold",
            "--solutions",
        ],
    );
    assert!(run.status.success(), "{}", text(&run));
    let events = common::events(&tasks.join("runs/T08/single-1"));
    let retrieval = events
        .iter()
        .find(|e| e["event"] == "retrieval" && e["for"] == "solutions")
        .expect("a solutions retrieval");
    let hit = retrieval["hits"][0].as_str().unwrap();
    assert!(
        hit.starts_with("solution.T") && hit != "solution.T08",
        "{hit}"
    );
    let prompt = events
        .iter()
        .find(|e| e["event"] == "message" && e["message"]["role"] == "user")
        .map(|e| e["message"]["content"].as_str().unwrap().to_string())
        .unwrap();
    let other = hit.trim_start_matches("solution.");
    assert!(
        prompt.contains("## A solved task like this one")
            && prompt.contains(&format!("### {other} — ")),
        "{prompt}"
    );
}

#[test]
fn c_emb_embeds_through_a_served_model_when_given() {
    // The gold reference embeds first, then the run's log: their cosine is
    // C_emb (0.6 for these two vectors).
    let vector = |v: &[f64]| {
        Reply::Json(
            200,
            json!({ "object": "list", "data": [{ "object": "embedding", "index": 0, "embedding": v }] }),
        )
    };
    let server = FakeServer::start(vec![vector(&[2.0, 0.0, 0.0]), vector(&[0.6, 0.8, 0.0])]);
    let base = format!("{}/v1", server.url);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let run = gisclaw(
        &[
            "eval",
            "--out",
            out.to_str().unwrap(),
            "--runs",
            "1",
            "--suite",
            suite("geoanalyst").to_str().unwrap(),
            "--tasks",
            "8",
            "--replay-gold",
            "--c-emb",
            "openai",
            "--c-emb-model",
            "text-embedding-3-large",
            "--c-emb-base-url",
            &base,
        ],
        &[("OPENAI_API_KEY", "sk-test-embeddings-secret")],
    );
    assert!(run.status.success(), "{}", text(&run));
    let record = read_json(&out.join("records/T08.single.1.json"));
    let c_emb = record["c_emb"]
        .as_f64()
        .unwrap_or_else(|| panic!("{record:#}"));
    assert!((c_emb - 0.6).abs() < 1e-6, "{c_emb}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    for r in &requests {
        assert!(r.line.starts_with("POST /v1/embeddings"), "{}", r.line);
        assert_eq!(r.body["model"], "text-embedding-3-large");
        assert!(!r.body["input"].as_str().unwrap().is_empty());
    }
    let manifest = std::fs::read_to_string(out.join("eval.json")).unwrap();
    assert!(
        manifest.contains("\"c_emb_model\": \"text-embedding-3-large\""),
        "{manifest}"
    );
    assert!(!manifest.contains("sk-test-embeddings-secret"));
    // Nor in any file the eval wrote.
    for file in files_under(&out) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("sk-test-embeddings-secret"),
            "{}",
            file.display()
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("C_emb embedded by text-embedding-3-large"),
        "{md}"
    );
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let kind = e.file_type().unwrap();
            if kind.is_dir() {
                todo.push(e.path());
            } else if kind.is_file() {
                files.push(e.path());
            }
        }
    }
    files
}

#[test]
fn the_solutions_corpus_is_an_ablation_and_pairs_with_rag_as_one_retrieval() {
    let dir = tempfile::tempdir().unwrap();
    let (with, without) = (dir.path().join("with"), dir.path().join("without"));
    let tasks = suite("geoanalyst");
    for (out, extra) in [(&with, Some("--solutions")), (&without, None)] {
        let mut args = vec![
            "--suite",
            tasks.to_str().unwrap(),
            "--tasks",
            "8",
            "--replay-gold",
        ];
        args.extend(extra);
        let run = eval(out, &args);
        assert!(run.status.success(), "{}", text(&run));
    }
    let report = |name: &str| {
        let both = dir.path().join(name);
        let run = gisclaw(
            &[
                "eval",
                "report",
                with.to_str().unwrap(),
                without.to_str().unwrap(),
                "--out",
                both.to_str().unwrap(),
            ],
            &[],
        );
        assert!(run.status.success(), "{}", text(&run));
        read_json(&both.join("results.json"))["ablations"][0]["flag"].clone()
    };
    assert_eq!(report("solutions"), "solutions");
    // Under GeoAgent's setting `--rag` brings the solutions with it: a
    // folder with both against one with neither is one ablation.
    let manifest = with.join("eval.json");
    let mut m = read_json(&manifest);
    m["rag"] = json!(true);
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    assert_eq!(report("retrieval"), "rag + solutions");
}
