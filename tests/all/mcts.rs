//! `--arch mcts` by replay on the example task: the search prunes a
//! statically broken candidate (its repair is pruned too), survives a
//! branch that crashes the interpreter, keeps the sibling that runs and
//! returns the complete path; a round limit ends it cleanly with the best
//! path so far; `gisclaw tree show` prints the tree. Against a scripted
//! server: failures are repaired and named in later requests, duplicates
//! by syntax tree count once, rollouts estimate rewards and a complete one
//! is kept.

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

/// The model's answers, in the order the search asks (`--mcts-width 2
/// --mcts-repairs 1`).
fn script() -> Vec<String> {
    vec![
        plan(),
        // Step 1, two candidates: a refused import, and the real load.
        exec(&example_code(2)),
        exec(&example_code(1)),
        // The repair of the refused import: still refused.
        exec("from pykrige.uk import UniversalKriging"),
        // Step 2: a branch that crashes the interpreter, and the surface.
        exec("import ctypes\nctypes.string_at(0)"),
        exec(&example_code(3)),
        // The repair of the crash: it crashes again.
        exec("import ctypes\nctypes.string_at(8)"),
        // Step 3: the map, twice (the same candidate counts once).
        exec(&example_code(4)),
        exec(&example_code(4)),
    ]
}

/// The flags the script is written for.
const SCRIPTED: [&str; 6] = ["--arch", "mcts", "--mcts-width", "2", "--mcts-repairs", "1"];

#[test]
fn the_search_prunes_backs_off_a_crash_and_returns_the_complete_path() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("mcts.jsonl");
    std::fs::write(&replay, script().join("\n")).unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(&task, &replay, &out, &SCRIPTED, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let run = run_json(&out);
    assert_eq!(
        (run["arch"].as_str(), run["status"].as_str()),
        (Some("mcts"), Some("finished")),
        "{run:#}"
    );
    assert_eq!(run["rounds"], 9, "every answer was asked for once");
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
        ["root", "pruned", "ran", "pruned", "failed", "ran", "failed", "ran"],
        "{tree:#}"
    );
    // The repairs are children of what they repair, for the same step.
    for (repair, of) in [(3usize, 1usize), (6, 4)] {
        let node = &tree["nodes"][repair];
        assert_eq!(
            (node["origin"].as_str(), node["parent"].as_u64()),
            (Some("repair"), Some(of as u64)),
            "{node:#}"
        );
        assert_eq!(node["step"], tree["nodes"][of]["step"]);
    }
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
    let crashed = &nodes[3];
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
    assert!(text.contains("* #7 step 3 ran · reward 1.00"), "{text}");
    assert!(text.contains("#1 step 1 pruned"), "{text}");
    assert!(text.contains("#3 step 1 (repair of #1) pruned"), "{text}");
    assert!(
        text.contains("error: line 1: `pykrige` is not available"),
        "{text}"
    );
    assert!(text.contains("chosen: node #7"), "{text}");
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
        &[&SCRIPTED[..], &["--max-rounds", "5"]].concat(),
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

/// `eval --arch mcts --replay-gold` of task 2 with `extra` flags; the
/// eval folder.
fn gold_eval(extra: &[&str]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let suite = repo().join("benchmarks/geoanalyst");
    let mut args = vec![
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
    ];
    args.extend_from_slice(extra);
    let o = gisclaw(&args, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    (dir, out)
}

#[test]
fn the_gold_under_the_tree_search_succeeds_and_the_report_counts_its_nodes() {
    let (_dir, out) = gold_eval(&[]);
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
fn the_gold_under_rollouts_completes_from_the_first_node_and_the_report_says_so() {
    let (_dir, out) = gold_eval(&["--mcts-rollout"]);
    let record = common::read_json(&out.join("records/T02.mcts.1.json"));
    assert_eq!(record["success"], true, "{record:#}");
    let search = &record["search"];
    assert_eq!(search["rollouts"], 1, "{search}");
    assert_eq!(search["failed"], 0, "{search}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("| gold replay · mcts rollout · mcts | 1 | 1.000 |"),
        "{report}"
    );
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
        with_logprobs(&lines[6], &[-0.3]),
        with_logprobs(&lines[7], &[-0.1]),
        with_logprobs(&lines[8], &[-0.1]),
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
            "--mcts-repairs",
            "1",
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
        Reply::Json(200, openai_answer(message(6))),
        choices(7, 8),
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
            "--mcts-repairs",
            "1",
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
        run["rounds"], 6,
        "the plan, two repairs and three expansions: {run:#}"
    );
    let n: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["n"].clone())
        .collect();
    assert_eq!(
        n,
        [
            json!(null),
            json!(2),
            json!(null),
            json!(2),
            json!(null),
            json!(2)
        ],
        "the planner and the repairs ask for one answer, expansions for two"
    );
    let tree = common::read_json(&out.join("tree.json"));
    assert_eq!(tree["nodes"].as_array().unwrap().len(), 8, "{tree:#}");
}

/// `solve --arch mcts` of the example task against a scripted server that
/// answers `replies` in order; the run's folder and the requests it got.
fn solve_scripted(
    replies: Vec<common::fake_llm::Reply>,
    extra: &[&str],
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::process::Output,
    Vec<common::fake_llm::Recorded>,
) {
    let server = common::fake_llm::FakeServer::start(replies);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
    let task = repo().join("examples/heat_island/task.yaml");
    let mut args = vec![
        "solve",
        task.to_str().unwrap(),
        "--arch",
        "mcts",
        "--backend",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        &base,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = gisclaw(&args, &[("OPENAI_API_KEY", "sk-test")]);
    let asked = server.requests();
    (dir, out, o, asked)
}

/// One scripted answer: an `execute_python` call with `code`.
fn answer(code: &str) -> common::fake_llm::Reply {
    let message: Value = serde_json::from_str(&exec(code)).unwrap();
    common::fake_llm::Reply::Json(200, common::fake_llm::openai_answer(message))
}

/// The text of a request's messages, in order.
fn request_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn failures_are_repaired_and_named_to_later_samples_of_the_same_state() {
    let load = example_code(1);
    let key_error =
        "import pandas as pd\nst = pd.read_csv('data/stations.csv')\nv = st['NO_SUCH_COLUMN_QX']";
    let replies = vec![
        answer_plan(),
        // Step 1: both candidates raise.
        answer("ratio = 1 / 0"),
        answer(key_error),
        // The repair of the ZeroDivisionError raises again; of the KeyError too.
        answer("ratio = 2 / 0"),
        answer(&key_error.replace("NO_SUCH_COLUMN_QX", "ALSO_MISSING")),
        // Nothing ran: the root is expanded again. The first sample is the
        // first failure again, laid out differently: it counts once.
        answer("# try once more\nratio = (1 / 0)\n\n"),
        answer(&load),
        // Steps 2 and 3.
        answer(&example_code(3)),
        answer(&format!("{}\n# the same surface\n", example_code(3))),
        answer(&example_code(4)),
        answer(&example_code(4)),
    ];
    let (_dir, out, o, asked) =
        solve_scripted(replies, &["--mcts-width", "2", "--mcts-repairs", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    assert_eq!(asked.len(), 11, "every answer was asked for once");
    let texts: Vec<String> = asked.iter().map(|r| request_text(&r.body)).collect();
    // The repair requests carry the candidate's code and its error.
    assert!(texts[3].contains("ratio = 1 / 0"), "{}", texts[3]);
    assert!(
        texts[3].contains("ZeroDivisionError: division by zero"),
        "{}",
        texts[3]
    );
    assert!(
        texts[4].contains("KeyError: 'NO_SUCH_COLUMN_QX'"),
        "{}",
        texts[4]
    );
    // The first samples knew of no failure; the second expansion of the
    // root names all four, each with its failing call.
    for t in &texts[1..3] {
        assert!(!t.contains("Tried for this step"), "{t}");
    }
    for t in &texts[5..7] {
        assert!(
            t.contains("Tried for this step under this state, and failed"),
            "{t}"
        );
        assert!(
            t.contains("`ratio = 1 / 0` → ZeroDivisionError: division by zero"),
            "{t}"
        );
        assert!(
            t.contains("`v = st['NO_SUCH_COLUMN_QX']` → KeyError: 'NO_SUCH_COLUMN_QX'"),
            "{t}"
        );
        assert!(t.contains("ALSO_MISSING"), "{t}");
    }
    // Steps 2 and 3 are asked under states where nothing failed.
    assert!(!texts[7].contains("Tried for this step"), "{}", texts[7]);
    let tree = common::read_json(&out.join("tree.json"));
    let nodes = tree["nodes"].as_array().unwrap();
    let summary: Vec<(u64, &str, &str, u64)> = nodes[1..]
        .iter()
        .map(|n| {
            (
                n["parent"].as_u64().unwrap(),
                n["origin"].as_str().unwrap(),
                n["state"].as_str().unwrap(),
                n["step"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, "sample", "failed", 1),
            (0, "sample", "failed", 1),
            (1, "repair", "failed", 1),
            (2, "repair", "failed", 1),
            (0, "sample", "ran", 1),
            (5, "sample", "ran", 2),
            (6, "sample", "ran", 3),
        ],
        "the duplicates were dropped: {tree:#}"
    );
    assert_eq!(nodes[5]["told"].as_array().unwrap().len(), 4, "{tree:#}");
    let end = events(&out)
        .into_iter()
        .find(|e| e["event"] == "mcts_end")
        .unwrap();
    assert_eq!(
        (end["repairs"].as_u64(), end["repairs_ran"].as_u64()),
        (Some(2), Some(0))
    );
    let shown = common::text(&gisclaw(&["tree", "show", out.to_str().unwrap()], &[]));
    assert!(shown.contains("#3 step 1 (repair of #1) failed"), "{shown}");
    assert!(
        shown.contains("error: ZeroDivisionError: division by zero"),
        "{shown}"
    );
    assert!(
        shown.contains("told: `ratio = 1 / 0` → ZeroDivisionError"),
        "{shown}"
    );
    // The chosen path is the load, the surface and the map.
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(
        !solution.contains("1 / 0") && !solution.contains("NO_SUCH_COLUMN"),
        "{solution}"
    );
}

#[test]
fn a_repair_that_runs_is_on_the_chosen_path() {
    let replies = vec![
        answer_plan(),
        answer("import pandas as pd\nstations = pd.read_csvv('data/stations.csv')"),
        // The repair: the load as it should be.
        answer(&example_code(1)),
        answer(&example_code(3)),
        answer(&example_code(4)),
    ];
    let (_dir, out, o, asked) = solve_scripted(replies, &["--mcts-width", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let repair = request_text(&asked[2].body);
    assert!(
        repair.contains("Static analysis against the live namespace found")
            && repair.contains("has no attribute `read_csvv`"),
        "{repair}"
    );
    let tree = common::read_json(&out.join("tree.json"));
    assert_eq!(tree["nodes"][1]["state"], "pruned");
    assert_eq!(
        (
            tree["nodes"][2]["origin"].as_str(),
            tree["nodes"][2]["state"].as_str()
        ),
        (Some("repair"), Some("ran"))
    );
    // The step after the repair runs under the repair's state.
    assert_eq!(tree["nodes"][3]["parent"], 2);
    let shown = common::text(&gisclaw(&["tree", "show", out.to_str().unwrap()], &[]));
    assert!(shown.contains("* #2 step 1 (repair of #1) ran"), "{shown}");
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(solution.contains("griddata"), "{solution}");
}

#[test]
fn rollouts_estimate_rewards_and_a_complete_one_is_kept() {
    let replies = vec![
        answer_plan(),
        answer(&example_code(1)),
        // The rollout from the load: the surface runs, the map fails.
        answer(&format!(
            "# %% step 2\n{}\n# %% step 3\nraise ValueError('no map today')",
            example_code(3)
        )),
        // The next expansion: the surface; its rollout completes the task.
        answer(&example_code(3)),
        answer(&format!("# %% step 3\n{}", example_code(4))),
    ];
    let (_dir, out, o, asked) = solve_scripted(replies, &["--mcts-width", "1", "--mcts-rollout"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    assert_eq!(asked.len(), 5);
    let rollout = request_text(&asked[2].body);
    assert!(
        rollout.contains("every remaining step (2 to 3)"),
        "{rollout}"
    );
    assert!(rollout.contains("# %% step 2, # %% step 3"), "{rollout}");
    let tree = common::read_json(&out.join("tree.json"));
    let first = &tree["nodes"][1]["rollout"];
    assert_eq!(
        (first["asked"].as_u64(), first["ran"].as_u64()),
        (Some(2), Some(1)),
        "{first}"
    );
    assert!(
        first["error"].as_str().unwrap().contains("no map today"),
        "{first}"
    );
    assert!(
        (first["reward"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{first}"
    );
    let second = &tree["nodes"][2]["rollout"];
    assert_eq!(second["outputs_present"], true, "{second}");
    assert_eq!(second["reward"], 1.0);
    let kept = &tree["nodes"][3];
    assert_eq!(
        (
            kept["origin"].as_str(),
            kept["step"].as_u64(),
            kept["parent"].as_u64(),
            kept["reward"].as_f64()
        ),
        (Some("rollout"), Some(3), Some(2), Some(1.0)),
        "{tree:#}"
    );
    let rollouts = events(&out)
        .into_iter()
        .filter(|e| e["event"] == "mcts_rollout")
        .count();
    assert_eq!(rollouts, 2);
    for output in ["temperature.tif", "temperature_map.png"] {
        assert!(out.join("pred_results").join(output).is_file(), "{output}");
    }
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(
        solution.contains("griddata") && solution.contains("plt.subplots"),
        "{solution}"
    );
    assert!(!solution.contains("no map today"), "{solution}");
    let shown = common::text(&gisclaw(&["tree", "show", out.to_str().unwrap()], &[]));
    assert!(
        shown.contains("rollout: 1 of 2 remaining step(s) ran · stopped: ValueError: no map today"),
        "{shown}"
    );
    assert!(
        shown.contains("(from a rollout) ran · reward 1.00"),
        "{shown}"
    );
}

/// The plan as a scripted answer.
fn answer_plan() -> common::fake_llm::Reply {
    let message: Value = serde_json::from_str(&plan()).unwrap();
    common::fake_llm::Reply::Json(200, common::fake_llm::openai_answer(message))
}

#[test]
fn a_run_that_stops_during_a_rollout_keeps_the_node_that_ran() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("mcts.jsonl");
    std::fs::write(
        &replay,
        [plan(), exec(&example_code(1)), exec("never asked")].join("\n"),
    )
    .unwrap();
    let out = dir.path().join("run");
    let task = repo().join("examples/heat_island/task.yaml");
    let o = solve_replay(
        &task,
        &replay,
        &out,
        &[
            "--arch",
            "mcts",
            "--mcts-width",
            "1",
            "--mcts-rollout",
            "--max-rounds",
            "2",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", common::text(&o));
    let tree = common::read_json(&out.join("tree.json"));
    let node = &tree["nodes"][1];
    assert_eq!(node["state"], "ran", "{tree:#}");
    assert!(
        (node["reward"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9,
        "{node}"
    );
    let recorded: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["event"] == "mcts_node")
        .collect();
    assert_eq!(recorded.len(), 1);
    assert!(!recorded[0]["observation"]
        .as_str()
        .unwrap()
        .contains("not run"));
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(
        solution.contains("read_csv('data/stations.csv')"),
        "{solution}"
    );
}

#[test]
fn outputs_that_fail_their_checks_lower_the_reward_and_are_repaired() {
    let blank = "fig = plt.figure(figsize=(6, 5))\nfig.savefig('pred_results/temperature_map.png')\nplt.close(fig)";
    let replies = vec![
        answer_plan(),
        answer(&example_code(1)),
        answer(&example_code(3)),
        // The map step writes an empty figure: it runs, its check warns.
        answer(blank),
        // The repair: the real map.
        answer(&example_code(4)),
    ];
    let (_dir, out, o, asked) = solve_scripted(replies, &["--mcts-width", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let repair = request_text(&asked[4].body);
    assert!(
        repair.contains("It ran, but the outputs it wrote fail their checks")
            && repair.contains("nearly uniform"),
        "{repair}"
    );
    let tree = common::read_json(&out.join("tree.json"));
    let warned = &tree["nodes"][3];
    assert_eq!(warned["state"], "ran", "{tree:#}");
    assert!(
        !warned["warnings"].as_array().unwrap().is_empty(),
        "{warned}"
    );
    // (n − ¼)/n with warnings, against 1 for the repair.
    assert!(
        (warned["reward"].as_f64().unwrap() - 2.75 / 3.0).abs() < 1e-9,
        "{warned}"
    );
    let fixed = &tree["nodes"][4];
    assert_eq!(
        (fixed["origin"].as_str(), fixed["reward"].as_f64()),
        (Some("repair"), Some(1.0)),
        "{tree:#}"
    );
    let solution = std::fs::read_to_string(out.join("solution.py")).unwrap();
    assert!(!solution.contains("figsize=(6, 5)"), "{solution}");
}
