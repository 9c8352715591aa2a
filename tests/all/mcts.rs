//! `--arch mcts` by replay on the example task: the search prunes a
//! statically broken candidate (after its one repair request), survives a
//! branch that crashes the interpreter, keeps the sibling that runs and
//! returns the complete path; a round limit ends it cleanly with the best
//! path so far; `gisclaw tree show` prints the tree.

use crate::common;

use common::{call, events, gisclaw, repo, run_json, solve_replay};
use serde_json::{json, Value};

/// The example's recorded `execute_python` code number `i` (1: load, 2: a
/// refused import, 3: the surface, 4: the map).
fn example_code(i: usize) -> String {
    let messages: Vec<Value> =
        std::fs::read_to_string(repo().join("examples/heat_island/replay.jsonl"))
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let args: Value = serde_json::from_str(
        messages[i]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    args["code"].as_str().unwrap().to_string()
}

fn plan() -> String {
    let steps: Vec<Value> = [
        "load the stations and the city",
        "interpolate the surface and save pred_results/temperature.tif",
        "map the surface to pred_results/temperature_map.png",
    ]
    .iter()
    .map(|g| json!({"goal": g, "details": ""}))
    .collect();
    call("submit_plan", json!({ "steps": steps }))
}

fn exec(code: &str) -> String {
    call("execute_python", json!({ "code": code }))
}

/// The model's answers, in the order the search asks.
fn script() -> Vec<String> {
    vec![
        plan(),
        // Step 1, two candidates: a refused import, and the real load.
        exec(&example_code(2)),
        exec(&example_code(1)),
        // The repair request for the refused import: still refused.
        exec("from pykrige.uk import UniversalKriging"),
        // Step 2: a branch that crashes the interpreter, and the surface.
        exec("import ctypes\nctypes.string_at(0)"),
        exec(&example_code(3)),
        // Step 3: the map, twice (the same candidate counts once).
        exec(&example_code(4)),
        exec(&example_code(4)),
    ]
}

#[test]
fn the_search_prunes_backs_off_a_crash_and_returns_the_complete_path() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("mcts.jsonl");
    std::fs::write(&replay, script().join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(
        &task,
        &replay,
        &out,
        &["--arch", "mcts", "--mcts-width", "2"],
        &[],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let run = run_json(&out);
    assert_eq!(
        (run["arch"].as_str(), run["status"].as_str()),
        (Some("mcts"), Some("finished")),
        "{run:#}"
    );
    assert_eq!(run["rounds"], 8, "every answer was asked for once");
    for output in ["temperature.tif", "temperature_map.png"] {
        assert!(out.join("pred_results").join(output).is_file(), "{output}");
    }
    let tree = common::read_json(&out.join("tree.json"));
    let states: Vec<&str> = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["root", "pruned", "ran", "failed", "ran", "ran"],
        "{tree:#}"
    );
    let nodes = events(&out)
        .into_iter()
        .filter(|e| e["event"] == "mcts_node")
        .collect::<Vec<_>>();
    let pruned = &nodes[0];
    assert!(
        pruned["observation"]
            .as_str()
            .unwrap()
            .contains("not run: static analysis found"),
        "{pruned:#}"
    );
    assert!(pruned["findings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("`pykrige` is not available"));
    let crashed = &nodes[2];
    assert_eq!(crashed["state"], "failed");
    assert!(
        crashed["observation"]
            .as_str()
            .unwrap()
            .contains("killed by SIGSEGV"),
        "{crashed:#}"
    );
    // The crashed branch is dropped: its prefix is not replayed.
    assert!(
        !crashed["observation"]
            .as_str()
            .unwrap()
            .contains("replayed"),
        "{crashed:#}"
    );
    assert_eq!(nodes.last().unwrap()["reward"], 1.0);
    // The run's cells are the chosen path's, replayed once: no crash, no refused import.
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(solution.contains("griddata") && solution.contains("plt.subplots"));
    assert!(!solution.contains("ctypes") && !solution.contains("pykrige"));
    let shown = gisclaw(&["tree", "show", out.to_str().unwrap()], &[]);
    let text = common::text(&shown);
    assert!(text.contains("* #5 step 3 ran · reward 1.00"), "{text}");
    assert!(text.contains("#1 step 1 pruned"), "{text}");
    assert!(text.contains("chosen: node #5"), "{text}");
}

#[test]
fn a_round_limit_ends_the_search_with_the_best_path_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("mcts.jsonl");
    std::fs::write(&replay, script().join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(
        &task,
        &replay,
        &out,
        &["--arch", "mcts", "--mcts-width", "2", "--max-rounds", "5"],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    let run = run_json(&out);
    assert_eq!(run["status"], "failed");
    assert!(
        run["reason"].as_str().unwrap().contains("5 rounds"),
        "{run:#}"
    );
    assert!(
        run["summary"]
            .as_str()
            .unwrap()
            .contains("best path 1 of 3"),
        "{run:#}"
    );
    // The best path so far (the load) is the run's state.
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(
        solution.contains("read_csv('data/stations.csv')"),
        "{solution}"
    );
    assert!(out.join("tree.json").is_file());
}

#[test]
fn the_gold_under_the_tree_search_succeeds_and_the_report_counts_its_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let suite = repo().join("benchmarks/geoanalyst");
    let o = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "2",
            "--arch",
            "mcts",
            "--runs",
            "1",
            "--replay-gold",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let record = common::read_json(&out.join("records/T02.mcts.1.json"));
    assert_eq!(record["success"], true, "{record:#}");
    let search = &record["search"];
    assert_eq!(search["failed"], 0, "{search}");
    assert_eq!(search["pruned"], 0, "{search}");
    assert_eq!(search["nodes"], search["ran"], "{search}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Tree search"), "{report}");
    assert!(report.contains("| gold replay · mcts | 1 |"), "{report}");
}

#[test]
fn a_server_with_log_probabilities_gives_the_priors() {
    use common::fake_llm::{openai_answer, FakeServer, Reply};
    // The script's answers as OpenAI completions; candidates carry token
    // log-probabilities (the first step's second candidate is likelier).
    let with_logprobs = |line: &str, logprobs: &[f64]| {
        let mut answer = openai_answer(serde_json::from_str(line).unwrap());
        let content: Vec<Value> = logprobs
            .iter()
            .map(|lp| json!({"token": "x", "logprob": lp}))
            .collect();
        answer["choices"][0]["logprobs"] = json!({ "content": content });
        Reply::Json(200, answer)
    };
    let lines = script();
    let replies = vec![
        with_logprobs(&lines[0], &[-0.5]),
        with_logprobs(&lines[1], &[-2.0, -2.0]),
        with_logprobs(&lines[2], &[-0.1, -0.3]),
        with_logprobs(&lines[3], &[-1.0]),
        with_logprobs(&lines[4], &[-1.5]),
        with_logprobs(&lines[5], &[-0.2]),
        with_logprobs(&lines[6], &[-0.1]),
        with_logprobs(&lines[7], &[-0.1]),
    ];
    let server = FakeServer::start(replies);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
    let task = repo().join("examples/heat_island/task.yaml");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--arch",
            "mcts",
            "--mcts-width",
            "2",
            "--backend",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            &base,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let asked = server.requests();
    assert!(
        asked.iter().all(|r| r.body["logprobs"] == true),
        "every request asked for log-probabilities"
    );
    let tree = common::read_json(&out.join("tree.json"));
    let priors: Vec<f64> = tree["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["prior"].as_f64().unwrap())
        .collect();
    // Step 1: mean log-probabilities −2.0 and −0.2: priors ∝ e^−2.0, e^−0.2.
    let want = 1.0 / (1.0 + (-1.8f64).exp());
    assert!((priors[2] - want).abs() < 1e-9, "{priors:?}");
    assert!((priors[1] + priors[2] - 1.0).abs() < 1e-9, "{priors:?}");
    let end = events(&out)
        .into_iter()
        .find(|e| e["event"] == "mcts_end")
        .unwrap();
    assert_eq!(end["prior"], "logprobs", "{end:#}");
}

#[test]
fn a_server_that_gives_several_choices_answers_an_expansion_in_one_request() {
    use common::fake_llm::{openai_answer, FakeServer, Reply};
    let lines = script();
    let message = |i: usize| -> Value { serde_json::from_str(&lines[i]).unwrap() };
    // One reply per request; an expansion's reply carries both candidates.
    let choices = |a: usize, b: usize| {
        let mut answer = openai_answer(message(a));
        let mut second = answer["choices"][0].clone();
        second["index"] = json!(1);
        second["message"] = message(b);
        answer["choices"].as_array_mut().unwrap().push(second);
        Reply::Json(200, answer)
    };
    let replies = vec![
        Reply::Json(200, openai_answer(message(0))),
        choices(1, 2),
        Reply::Json(200, openai_answer(message(3))),
        choices(4, 5),
        choices(6, 7),
    ];
    let server = FakeServer::start(replies);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
    let task = repo().join("examples/heat_island/task.yaml");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--arch",
            "mcts",
            "--mcts-width",
            "2",
            "--backend",
            "openai",
            "--model",
            "fake-model",
            "--base-url",
            &base,
            "--out",
            out.to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let run = run_json(&out);
    assert_eq!(
        run["rounds"], 5,
        "the plan, the repair and three expansions: {run:#}"
    );
    let n: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["n"].clone())
        .collect();
    assert_eq!(
        n,
        [json!(null), json!(2), json!(null), json!(2), json!(2)],
        "the planner and the repair ask for one answer, expansions for two"
    );
    let tree = common::read_json(&out.join("tree.json"));
    assert_eq!(tree["nodes"].as_array().unwrap().len(), 6, "{tree:#}");
}
