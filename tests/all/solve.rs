//! `gisclaw solve` end to end: the real binary, the real sandbox, replayed
//! model messages.

use crate::common;

use std::path::{Path, PathBuf};

use common::{call, events, gisclaw, repo, run_json, solve_replay};
use serde_json::{json, Value};

/// A task folder with a small CSV and a replay file.
fn task_dir(outputs: &[&str], lines: &[String]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/points.csv"),
        "id,x,y,value\n1,0,0,3.5\n2,1,1,4.5\n",
    )
    .unwrap();
    let outputs_yaml: String = outputs.iter().map(|o| format!("  - {o}\n")).collect();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        format!("id: tiny\ntitle: Tiny\ninstruction: Average the values.\ndata: data\noutputs:\n{outputs_yaml}"),
    )
    .unwrap();
    let replay = dir.path().join("session.jsonl");
    std::fs::write(&replay, lines.join("\n")).unwrap();
    (dir, task, replay)
}

fn observations(out: &Path) -> Vec<String> {
    events(out)
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| e["observation"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_example_is_solved_and_its_solution_py_runs_on_its_own() {
    let out = tempfile::tempdir().unwrap();
    let task = repo().join("examples/heat_island/task.yaml");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("REPLAY"), "a replay must say so: {stderr}");
    let run = run_json(out.path());
    assert_eq!(run["status"], "finished");
    assert_eq!(run["replay"], true);
    assert_eq!(run["rounds"], 6);
    for o in run["outputs"].as_array().unwrap() {
        assert_eq!(o["exists"], true, "{o}");
    }
    let ev = events(out.path());
    let assistant = ev
        .iter()
        .filter(|e| e["event"] == "message" && e["message"]["role"] == "assistant")
        .count();
    assert_eq!(assistant, 6, "every model message is in the transcript");
    assert!(observations(out.path())
        .iter()
        .any(|o| o.contains("'pykrige' is not available")));
    assert_eq!(ev.last().unwrap()["event"], "end");

    // solution.py rebuilds the outputs with the venv's python alone.
    std::fs::remove_dir_all(out.path().join("pred_results")).unwrap();
    common::venv_python([out.path().join("solution.py")]);
    assert!(out.path().join("pred_results/temperature.tif").is_file());
    assert!(out
        .path()
        .join("pred_results/temperature_map.png")
        .is_file());
}

#[test]
fn a_replay_that_ends_without_finish_fails_with_exit_one() {
    let (_dir, task, replay) = task_dir(
        &["pred_results/mean.txt"],
        &[call("execute_python", json!({"code": "x = 1"}))],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &[], &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let run = run_json(out.path());
    assert_eq!(run["status"], "failed");
    assert!(
        run["reason"].as_str().unwrap().contains("replay ended"),
        "{run}"
    );
    assert_eq!(run["outputs"][0]["exists"], false);
    assert!(out.path().join("solution.py").is_file());
}

#[test]
fn finish_is_refused_until_every_declared_output_exists() {
    let (_dir, task, replay) = task_dir(
        &["pred_results/mean.txt"],
        &[
            call("finish", json!({"summary": "too early"})),
            call(
                "execute_python",
                json!({"code": "df = pd.read_csv('data/points.csv')\nopen('pred_results/mean.txt', 'w').write(str(df['value'].mean()))"}),
            ),
            call("finish", json!({"summary": "done"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &[], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let obs = observations(out.path());
    assert!(
        obs[0].contains("finish refused") && obs[0].contains("pred_results/mean.txt"),
        "{}",
        obs[0]
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join("pred_results/mean.txt")).unwrap(),
        "4.0"
    );
    assert_eq!(run_json(out.path())["summary"], "done");
}

#[test]
fn malformed_tool_calls_are_repaired_or_sent_back_never_a_crash() {
    let truncated = json!({"role": "assistant", "content": null, "tool_calls": [
        {"type": "function", "function": {"name": "execute_python", "arguments": "{\"code\": \"open('pred_results/a.txt', 'w').write('ok')"}}
    ]})
    .to_string();
    let hopeless = json!({"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "finish", "arguments": "{\"summary\": ]"}}
    ]})
    .to_string();
    let text_mode = json!({"role": "assistant", "content": "<think>hm</think>Thought: check\n```python\nprint('text mode ran')\n```"}).to_string();
    let (_dir, task, replay) = task_dir(
        &["pred_results/a.txt"],
        &[
            truncated,
            hopeless,
            text_mode,
            call("finish", json!({"summary": "ok"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &[], &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let obs = observations(out.path());
    assert!(
        obs[1].contains("not a JSON object") && obs[1].contains("again"),
        "{}",
        obs[1]
    );
    assert!(obs[2].contains("text mode ran"), "{}", obs[2]);
    let repairs: Vec<Value> = events(out.path())
        .iter()
        .filter_map(|e| e.get("repairs").cloned())
        .collect();
    assert!(
        repairs
            .iter()
            .any(|r| r.to_string().contains("repaired the arguments")),
        "{repairs:?}"
    );
    assert!(
        repairs
            .iter()
            .any(|r| r.to_string().contains("stripped <think>")),
        "{repairs:?}"
    );
}

#[test]
fn secrets_in_the_environment_stay_out_of_the_record() {
    let (_dir, task, replay) = task_dir(
        &["pred_results/env.txt"],
        &[
            call(
                "execute_python",
                json!({"code": "import os\nopen('pred_results/env.txt', 'w').write(repr(dict(os.environ)))\nprint(os.environ)"}),
            ),
            call("finish", json!({"summary": "ok"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(
        &task,
        &replay,
        out.path(),
        &[],
        &[("OPENAI_API_KEY", "sk-very-secret-123")],
    );
    assert_eq!(o.status.code(), Some(0));
    for file in ["transcript.jsonl", "run.json", "pred_results/env.txt"] {
        let text = std::fs::read_to_string(out.path().join(file)).unwrap();
        assert!(!text.contains("sk-very-secret-123"), "{file} leaks the key");
    }
}

#[test]
fn a_bad_task_file_is_one_line_naming_file_line_and_field_with_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(
        &task,
        "id: x\ntitle: t\ninstruction: i\noutput:\n  - pred_results/a.png\n",
    )
    .unwrap();
    let o = gisclaw(
        &["solve", task.to_str().unwrap(), "--replay", "/dev/null"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("task.yaml:4:") && stderr.contains("field `output`"),
        "{stderr}"
    );
}

#[test]
fn backend_problems_are_one_line_with_exit_two() {
    let task = repo().join("examples/heat_island/task.yaml");
    let t = task.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (&["--backend", "openai"], "OPENAI_MODEL"),
        // The local backend without `make setup-local-model` (the test
        // helper points GISCLAW_LLAMA_SERVER at a file that does not exist).
        (
            &["--backend", "local"],
            "no llama-server at /nonexistent/llama-server: run `make setup-local-model`",
        ),
        (&["--gguf", "/nonexistent/m.gguf"], "no llama-server at"),
        (
            &["--backend", "openai", "--model", "m", "--gguf", "m.gguf"],
            "--gguf needs the local backend",
        ),
        (
            &["--backend", "openai", "--model", "gpt-4o"],
            "OPENAI_API_KEY",
        ),
        (&["--backend", "nope"], "no backend or profile named `nope`"),
        (
            &[
                "--backend",
                "openai",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:1/v1",
            ],
            "cannot reach the model server at http://127.0.0.1:1/v1",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["solve", t];
        args.extend_from_slice(extra);
        let o = gisclaw(&args, &[]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{extra:?}: {stderr}");
        assert!(stderr.contains(needle), "{extra:?}: {stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[profiles.x]\nkind = \"openai\"\nmodle = \"m\"\n").unwrap();
    let o = gisclaw(
        &["solve", t, "--backend", "x"],
        &[("GISCLAW_CONFIG", config.to_str().unwrap())],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("config.toml:3:") && stderr.contains("modle"),
        "{stderr}"
    );
}

#[test]
fn the_task_schema_is_printed() {
    let o = gisclaw(&["schema", "task"], &[]);
    assert!(o.status.success());
    let schema: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(schema["properties"]["instruction"].is_object());
    assert_eq!(schema["additionalProperties"], false);
}

#[test]
fn error_memory_carries_a_fix_from_one_task_to_the_next() {
    let memory = tempfile::tempdir().unwrap();
    let memory_path = memory.path().join("memory.json");
    let env = [("GISCLAW_ERROR_MEMORY", memory_path.to_str().unwrap())];
    let first = [
        call(
            "execute_python",
            json!({"code": "df = pd.read_csv('data/points.csv')\ndf['VALUE'].mean()"}),
        ),
        call(
            "execute_python",
            json!({"code": "df.columns = [c.lower() for c in df.columns]\nm = df['value'].mean()"}),
        ),
        call(
            "execute_python",
            json!({"code": "open('pred_results/m.txt', 'w').write(str(m))"}),
        ),
        call("finish", json!({"summary": "ok"})),
    ];
    let (_d1, task1, replay1) = task_dir(&["pred_results/m.txt"], &first);
    // A replay leaves the memory alone unless asked (its answers were not
    // a model's choices here).
    let out0 = tempfile::tempdir().unwrap();
    let o = solve_replay(&task1, &replay1, out0.path(), &[], &env);
    assert_eq!(o.status.code(), Some(0));
    assert!(!memory_path.exists(), "a replay wrote the memory");
    let out1 = tempfile::tempdir().unwrap();
    let o = solve_replay(&task1, &replay1, out1.path(), &["--memory"], &env);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(memory_path.is_file(), "the fix was stored");

    let second = [call(
        "execute_python",
        json!({"code": "d = pd.read_csv('data/points.csv')\nd['Value']"}),
    )];
    let (_d2, task2, replay2) = task_dir(&["pred_results/m.txt"], &second);
    let out2 = tempfile::tempdir().unwrap();
    solve_replay(&task2, &replay2, out2.path(), &["--memory"], &env);
    let obs = observations(out2.path());
    assert!(
        obs[0].contains("\n[error memory]") && obs[0].contains("c.lower()"),
        "{}",
        obs[0]
    );

    // --no-memory is the ablation: no note.
    let out3 = tempfile::tempdir().unwrap();
    solve_replay(&task2, &replay2, out3.path(), &["--no-memory"], &env);
    assert!(!observations(out3.path())[0].contains("[error memory]"));
}

#[test]
fn run_json_counts_the_repeated_prefix_and_prices_it_at_a_configured_cached_rate() {
    use common::fake_llm::{openai_answer, openai_code, FakeServer, Reply};
    let server = FakeServer::start(vec![
        Reply::Json(200, openai_code("c1", "x = 1")),
        Reply::Json(
            200,
            openai_answer(json!({
                "role": "assistant", "content": null,
                "tool_calls": [{ "id": "f", "type": "function", "function": { "name": "finish", "arguments": "{\"summary\": \"done\"}" } }]
            })),
        ),
    ]);
    let (dir, task, _) = task_dir(&[], &[]);
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[profiles.p]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"fake\"\napi_key = \"k\"\n\
             [prices.fake]\ninput = 1.0\noutput = 2.0\ncached_input = 0.1\n",
            server.url
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--backend",
            "p",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("GISCLAW_CONFIG", config.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let run = run_json(&out);
    // The server reports 100 prompt tokens per call; the second call
    // starts with the whole first one.
    assert_eq!(run["tokens_in"], 200);
    assert_eq!(run["tokens_in_prefix"], 100, "{run}");
    let cost = run["cost_usd"].as_f64().unwrap();
    let cached = run["cost_usd_cached_prefix"].as_f64().unwrap();
    assert!(
        (cost - (200.0 * 1.0 + 40.0 * 2.0) / 1e6).abs() < 1e-12,
        "{run}"
    );
    assert!(
        (cached - (100.0 * 1.0 + 100.0 * 0.1 + 40.0 * 2.0) / 1e6).abs() < 1e-12,
        "{run}"
    );

    // Without a cached rate there is no cached cost, but the count stays.
    let (_d, task, replay) = task_dir(
        &[],
        &[
            call("execute_python", json!({"code": "x = 1"})),
            call("finish", json!({"summary": "done"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", common::text(&o));
    let run = run_json(out.path());
    assert!(run.get("cost_usd_cached_prefix").is_none(), "{run}");
    let prefix = run["tokens_in_prefix"].as_u64().unwrap();
    assert!(
        prefix > 0 && prefix < run["tokens_in"].as_u64().unwrap(),
        "{run}"
    );
}

#[test]
fn a_finished_run_is_reproduced_from_solution_py_and_one_that_is_not_says_so() {
    // The statements of a failed cell are part of the record: the mean is
    // written by a cell that then raises, and reproduced all the same.
    let (_dir, task, replay) = task_dir(
        &["pred_results/mean.txt", "pred_results/noise.csv"],
        &[
            call(
                "execute_python",
                json!({"code": "df = pd.read_csv('data/points.csv')\nopen('pred_results/mean.txt', 'w').write(str(df['value'].mean()))\nraise ValueError('after the write')"}),
            ),
            call(
                "execute_python",
                json!({"code": "import numpy as np\npd.DataFrame({'v': [df['value'].sum()]}).to_csv('pred_results/noise.csv', index=False)"}),
            ),
            call("finish", json!({"summary": "done"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &[], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let reproduced = &run_json(out.path())["reproduced"];
    assert_eq!(reproduced["ok"], true, "{reproduced}");
    assert_eq!(reproduced["outputs"], 2, "{reproduced}");
    assert!(
        stderr.contains("gisclaw: reproduced: solution.py remade the 2 output(s)"),
        "{stderr}"
    );
    assert!(
        !out.path().join("reproduce").exists(),
        "the scratch folder is left"
    );
    assert!(events(out.path()).iter().any(|e| e["event"] == "reproduce"));

    // Unseeded noise does not reproduce: a warning, the task still finished.
    let (_dir, task, replay) = task_dir(
        &["pred_results/noise.csv"],
        &[
            call(
                "execute_python",
                json!({"code": "import numpy as np\npd.DataFrame({'v': np.random.default_rng().normal(size=50)}).to_csv('pred_results/noise.csv', index=False)"}),
            ),
            call("finish", json!({"summary": "done"})),
        ],
    );
    let noisy = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, noisy.path(), &[], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let reproduced = &run_json(noisy.path())["reproduced"];
    assert_eq!(reproduced["ok"], false, "{reproduced}");
    assert!(
        reproduced["differed"][0]
            .as_str()
            .unwrap()
            .starts_with("pred_results/noise.csv differs"),
        "{reproduced}"
    );
    assert!(
        stderr.contains("not reproduced (a warning, not a failure)"),
        "{stderr}"
    );
    assert!(noisy
        .path()
        .join("reproduce/pred_results/noise.csv")
        .is_file());

    // --no-reproduce: not tried, not said.
    let off = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, off.path(), &["--no-reproduce"], &[]);
    assert_eq!(o.status.code(), Some(0));
    assert!(run_json(off.path()).get("reproduced").is_none());
}

#[test]
fn progress_lines_say_how_calls_ended_in_words_and_inspect_data_without_a_path_gives_the_card() {
    // `→ Ok`, `→ TimedOut { limit: 3s, killed: false }` and a failed
    // inspect_data shown as `→ ok` were Rust's debug text.
    let (_dir, task, replay) = task_dir(
        &["pred_results/mean.txt"],
        &[
            call("inspect_data", json!({})),
            call("inspect_data", json!({"path": "data/nope.csv"})),
            call("execute_python", json!({"code": "1/0"})),
            call(
                "execute_python",
                json!({"code": "import time\ntime.sleep(30)"}),
            ),
            call(
                "execute_python",
                json!({"code": "open('pred_results/mean.txt', 'w').write('4.0')"}),
            ),
            call("finish", json!({"summary": "done"})),
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let o = solve_replay(&task, &replay, out.path(), &["--cell-timeout", "2"], &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    for line in [
        "round 1: inspect_data → ok",
        "round 2: inspect_data → refused",
        "round 3: execute_python → error",
        "round 4: execute_python → timed out at its 2 s limit",
        "round 5: execute_python → ok",
    ] {
        assert!(stderr.contains(line), "no `{line}` in:\n{stderr}");
    }
    assert!(
        !stderr.contains("TimedOut {") && !stderr.contains("→ Ok"),
        "{stderr}"
    );
    // Without a path, inspect_data answers with the card, as over MCP.
    assert!(observations(out.path())[0].contains("data/points.csv — table (CSV)"));
}

#[test]
fn on_a_terminal_solve_shows_what_a_running_cell_prints() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("task.yaml");
    std::fs::write(&task, "id: live\ntitle: Live\ninstruction: Wait for go.\n").unwrap();
    // The cell waits for a file the test makes once the line is on screen.
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        call(
            "execute_python",
            json!({"code": "import os, time\nprint('wait' + 'ing for go')\nfor _ in range(1200):\n    if os.path.exists('go'):\n        break\n    time.sleep(0.05)\nprint('went', os.path.exists('go'))"}),
        ),
        call("finish", json!({"summary": "went"})),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let out = dir.path().join("run");
    let cmd = common::gisclaw_command(
        &[
            "solve",
            task.to_str().unwrap(),
            "--replay",
            replay.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            // The re-run would wait for its own `go`.
            "--no-reproduce",
        ],
        &[("NO_COLOR", "1"), ("TERM", "xterm")],
    );
    let mut pty = common::pty::Pty::spawn(cmd);
    let wait = std::time::Duration::from_secs(60);
    pty.expect("cell output: waiting for go", wait);
    std::fs::write(out.join("work/go"), "").unwrap();
    assert_eq!(pty.wait(wait), Some(0), "{}", pty.seen);
    let events = events(&out);
    let tool = events.iter().find(|e| e["event"] == "tool").unwrap();
    assert!(
        tool["observation"].as_str().unwrap().contains("went True"),
        "{tool}"
    );
}
