//! `gisclaw chat` driven through a real pseudo-terminal with the replay
//! backend: turns that share a namespace, slash commands, Ctrl-C during a
//! running cell, resuming a saved session, and start-up errors.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::gisclaw_command;
use common::pty::Pty;

const WAIT: Duration = Duration::from_secs(60);

/// One assistant message calling `execute_python(code)`, as a replay line.
fn code(text: &str, code: &str) -> String {
    let arguments = serde_json::json!({ "code": code }).to_string();
    serde_json::json!({ "role": "assistant", "content": text, "tool_calls": [{ "type": "function", "function": { "name": "execute_python", "arguments": arguments } }] }).to_string()
}

/// One assistant message calling `name(arguments)`, as a replay line.
fn call(name: &str, arguments: serde_json::Value) -> String {
    serde_json::json!({ "role": "assistant", "content": null, "tool_calls": [{ "type": "function", "function": { "name": name, "arguments": arguments.to_string() } }] }).to_string()
}

/// A planner message submitting steps with these goals.
fn plan(goals: &[&str]) -> String {
    let steps: Vec<_> = goals
        .iter()
        .map(|g| serde_json::json!({ "goal": g, "details": "" }))
        .collect();
    call("submit_plan", serde_json::json!({ "steps": steps }))
}

fn answer(text: &str) -> String {
    serde_json::json!({ "role": "assistant", "content": text }).to_string()
}

/// `gisclaw chat ARGS` on a pty in `dir`, its sessions in `dir/chats`,
/// without colours, with `envs` added.
fn spawn_chat(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Pty {
    let chats = dir.join("chats");
    let mut all = vec![
        ("GISCLAW_CHATS", chats.to_str().unwrap()),
        ("NO_COLOR", "1"),
        ("TERM", "xterm"),
    ];
    all.extend_from_slice(envs);
    let mut cmd = gisclaw_command(&[&["chat"], args].concat(), &all);
    cmd.current_dir(dir).env_remove("VISUAL");
    Pty::spawn(cmd)
}

/// `gisclaw chat --replay REPLAY EXTRA…` on a pty.
fn chat(dir: &Path, replay: &Path, extra: &[&str]) -> Pty {
    spawn_chat(
        dir,
        &[&["--replay", replay.to_str().unwrap()], extra].concat(),
        &[],
    )
}

fn session_id(seen: &str) -> String {
    let at = seen
        .find("gisclaw chat --resume ")
        .expect("the resume hint is shown")
        + "gisclaw chat --resume ".len();
    seen[at..]
        .split(|c: char| c == ')' || c.is_whitespace())
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn two_turns_share_the_namespace_and_commands_do_what_they_claim() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("I will set x.", "x = 21"),
        answer("x is set to 21."),
        code("", "print('double is', x * 2)"),
        answer("The double is 42."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);

    pty.send("set x please\r");
    pty.expect("x is set to 21.", WAIT);
    pty.expect("you> ", WAIT);
    // The second turn uses the first turn's variable.
    pty.send("now double it\r");
    pty.expect("double is 42", WAIT);
    pty.expect("The double is 42.", WAIT);
    pty.expect("you> ", WAIT);

    pty.send("/vars\r");
    pty.expect("x  int  21", WAIT);
    pty.send("/run y = x + 1\r");
    pty.expect("y (int, new): 22", WAIT);
    pty.send("/vars\r");
    pty.expect("y  int  22", WAIT);
    let script = dir.path().join("kept.py");
    pty.send(&format!("/save {}\r", script.display()));
    pty.expect("(3 cells)", WAIT);
    let exported = dir.path().join("exported");
    pty.send(&format!("/export {}\r", exported.display()));
    pty.expect("exported", WAIT);
    pty.send("/nope\r");
    pty.expect("unknown command /nope", WAIT);
    pty.expect("/help lists the commands", WAIT);
    pty.send("/hel\t");
    pty.expect("/help ", WAIT);
    pty.send("\r");
    pty.expect("/undo", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    // A replayed chat resumes with its replay: the hint says so.
    assert!(
        pty.seen.contains(&format!(
            "saved: gisclaw chat --resume {id} --replay {}",
            replay.display()
        )),
        "{}",
        pty.seen
    );

    // /save wrote the successful cells, in order, as a runnable script.
    let text = std::fs::read_to_string(&script).unwrap();
    let (x, d, y) = (
        text.find("x = 21").unwrap(),
        text.find("x * 2").unwrap(),
        text.find("y = x + 1").unwrap(),
    );
    assert!(x < d && d < y, "{text}");

    // /export wrote the notebook: the user's words, the cells in order with
    // their real outputs, the user's own cell marked.
    let nb = common::read_json(&exported.join("solution.ipynb"));
    let text = nb.to_string();
    let (you, x, d, y) = (
        text.find("**You:** set x please").unwrap(),
        text.find("x = 21").unwrap(),
        text.find("double is 42").unwrap(),
        text.find("y = x + 1").unwrap(),
    );
    assert!(you < x && x < d && d < y, "{text}");
    assert!(text.contains("Your own cell"), "{text}");
    assert!(text.contains("**Model:** The double is 42."), "{text}");

    // Resuming rebuilds the namespace from the journal.
    let mut again = chat(dir.path(), &replay, &["--resume", &id]);
    again.expect("3 cell(s) replayed", WAIT);
    again.expect("you> ", WAIT);
    again.send("/vars\r");
    again.expect("y  int  22", WAIT);
    again.send("/quit\r");
    assert_eq!(again.wait(WAIT), Some(0), "{}", again.seen);
}

#[test]
fn ctrl_c_stops_a_running_cell_and_keeps_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("", "z = 5"),
        answer("z is 5."),
        code("Sleeping.", "import time\ntime.sleep(60)"),
        answer("never reached"),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("make z\r");
    pty.expect("z is 5.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("now sleep\r");
    pty.expect("time.sleep(60)", WAIT);
    std::thread::sleep(Duration::from_millis(500));
    pty.send("\x03");
    // Far sooner than the 60 s sleep: the cell was interrupted.
    pty.expect("KeyboardInterrupt", Duration::from_secs(15));
    pty.expect(
        "interrupted: the session and its variables are intact",
        WAIT,
    );
    pty.expect("you> ", WAIT);
    pty.send("/vars\r");
    pty.expect("z  int  5", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
}

#[test]
fn start_up_problems_are_one_line() {
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "chat",
                "--backend",
                "openai",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:1/v1",
            ],
            "cannot reach the model server",
        ),
        (&["chat", "--backend", "openai"], "OPENAI_MODEL"),
        (
            &["chat", "--resume", "nope", "--replay", "/dev/null"],
            "--resume nope: no saved session",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in cases {
        let chats = dir.path().join("chats");
        let out = gisclaw_command(args, &[("GISCLAW_CHATS", chats.to_str().unwrap())])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn a_wrong_model_name_or_a_refused_key_is_one_line_at_start_up() {
    use common::fake_llm::FakeServer;
    use serde_json::json;
    let openai = FakeServer::start(Vec::new()).with_catalogue(
        200,
        json!({"object": "list", "data": [{"id": "gpt-good", "object": "model", "owned_by": "o"}]}),
    );
    let ollama = FakeServer::start(Vec::new()).with_catalogue(
        200,
        json!({"models": [{"name": "qwen2.5:7b", "model": "qwen2.5:7b"}]}),
    );
    let locked = FakeServer::start(Vec::new()).with_catalogue(
        401,
        json!({"error": {"message": "Incorrect API key provided"}}),
    );
    let (o, l) = (format!("{}/v1", openai.url), format!("{}/v1", locked.url));
    let cases: [(&[&str], &str); 4] = [
        (
            &[
                "chat",
                "--backend",
                "openai",
                "--model",
                "gpt-bad",
                "--base-url",
                &o,
            ],
            "has no model `gpt-bad` (it serves `gpt-good`)",
        ),
        (
            &[
                "solve",
                "task.yaml",
                "--backend",
                "openai",
                "--model",
                "gpt-bad",
                "--base-url",
                &o,
            ],
            "set --model, OPENAI_MODEL",
        ),
        (
            &[
                "chat",
                "--backend",
                "ollama",
                "--model",
                "qwen2.5",
                "--base-url",
                &ollama.url,
            ],
            "ollama pull qwen2.5",
        ),
        (
            &[
                "chat",
                "--backend",
                "openai",
                "--model",
                "m",
                "--base-url",
                &l,
            ],
            "refused the API key (HTTP 401)",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("task.yaml"),
        "id: t\ntitle: T\ninstruction: do it\ndata: data\n",
    )
    .unwrap();
    for (args, needle) in cases {
        let chats = dir.path().join("chats");
        let mut cmd = gisclaw_command(
            args,
            &[
                ("GISCLAW_CHATS", chats.to_str().unwrap()),
                ("OPENAI_API_KEY", "sk-secret-1234"),
            ],
        );
        let out = cmd.current_dir(dir.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("sk-secret"), "{stderr}");
    }
    // The right name passes the check (and the catalogue took no scripted reply).
    let out = gisclaw_command(
        &[
            "chat",
            "--backend",
            "openai",
            "--model",
            "gpt-good",
            "--base-url",
            &o,
        ],
        &[("GISCLAW_CHATS", dir.path().join("chats").to_str().unwrap())],
    )
    .stdin(std::process::Stdio::null())
    .output()
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(openai.requests().is_empty());
}

#[test]
fn ctrl_c_during_a_model_call_drops_the_request_and_the_next_turn_works() {
    use common::fake_llm::{FakeServer, Reply};
    use serde_json::json;
    let chunk = |text: &str| json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]});
    // The first answer would take a minute; the second comes at once.
    let server = FakeServer::start(vec![
        Reply::Slow(
            Duration::from_secs(60),
            Box::new(Reply::Sse(vec![chunk("too late")])),
        ),
        Reply::Sse(vec![chunk("Hello "), chunk("back.")]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url);
    let mut pty = spawn_chat(
        dir.path(),
        &[
            "--backend",
            "openai",
            "--model",
            "fake",
            "--base-url",
            &base,
        ],
        &[],
    );
    pty.expect("you> ", WAIT);
    pty.send("hi\r");
    // Wait until the request is at the server, then interrupt it.
    let start = std::time::Instant::now();
    while server.requests().is_empty() {
        assert!(
            start.elapsed() < WAIT,
            "no request reached the server: {}",
            pty.seen
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    pty.send("\x03");
    pty.expect(
        "interrupted: the session and its variables are intact",
        Duration::from_secs(15),
    );
    pty.expect("you> ", WAIT);
    pty.send("hi again\r");
    pty.expect("Hello back.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    assert!(!pty.seen.contains("too late"), "{}", pty.seen);
    // The stopped turn had no reply: the next request carries one user
    // message of both (strict chat templates refuse two in a row).
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user"], "{last}");
    assert_eq!(last["messages"][1]["content"], "hi\n\nhi again");
}

#[test]
fn a_data_folder_that_is_not_one_stops_chat_with_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::gisclaw(
        &["chat", "--data", "/nope", "--replay", "/dev/null"],
        &[("HOME", dir.path().to_str().unwrap())],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--data /nope: not a folder"));
}

#[test]
fn edit_reruns_the_last_failed_cell_through_the_editor() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [code("", "w = undefined_name + 1"), answer("That failed.")];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    // An "editor" that fixes the cell in place.
    let editor = dir.path().join("fix.sh");
    std::fs::write(&editor, "#!/bin/sh\nsed -i 's/undefined_name/41/' \"$1\"\n").unwrap();
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut pty = spawn_chat(
        dir.path(),
        &["--replay", replay.to_str().unwrap()],
        &[("EDITOR", editor.to_str().unwrap())],
    );
    pty.expect("you> ", WAIT);
    pty.send("make w\r");
    pty.expect("NameError", WAIT);
    pty.expect("That failed.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/edit\r");
    pty.expect("w = 41 + 1", WAIT);
    pty.expect("w (int, new): 42", WAIT);
    pty.send("/vars\r");
    pty.expect("w  int  42", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
}

#[test]
fn a_pasted_block_and_backslash_continuations_are_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    std::fs::write(
        &replay,
        [answer("Got the first."), answer("Got the second.")].join("\n"),
    )
    .unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    // A bracketed paste (what terminals send for a paste) with two lines.
    pty.send("\x1b[200~first line\nsecond line\x1b[201~\r");
    pty.expect("Got the first.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("third \\\r");
    pty.expect("...> ", WAIT);
    pty.send("fourth\r");
    pty.expect("Got the second.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("chats").join(&id).join("chat.json")).unwrap(),
    )
    .unwrap();
    let users: Vec<&str> = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        users,
        ["first line\nsecond line", "third \nfourth"],
        "{saved:#}"
    );
}

#[test]
fn the_dual_agent_plans_a_turn_runs_each_step_and_can_be_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        plan(&["Set x to 21", "Print the double of x"]),
        code("", "x = 21"),
        call("step_done", serde_json::json!({ "summary": "x holds 21" })),
        code("", "print('double is', x * 2)"),
        call(
            "step_done",
            serde_json::json!({ "summary": "printed the double" }),
        ),
        answer("Back to one agent: x is still 21."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &["--arch", "dual"]);
    pty.expect("dual agent", WAIT);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    pty.send("set x then double it\r");
    pty.expect("plan (2 steps)", WAIT);
    pty.expect("2. Print the double of x", WAIT);
    pty.expect("step 1/2: Set x to 21", WAIT);
    pty.expect("step done: x holds 21", WAIT);
    pty.expect("step 2/2: Print the double of x", WAIT);
    pty.expect("double is 42", WAIT);
    pty.expect("step done: printed the double", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/arch\r");
    pty.expect("dual agent (a Planner", WAIT);
    pty.send("/arch single\r");
    pty.expect("from the next turn: single agent", WAIT);
    pty.send("/arch triple\r");
    pty.expect("/arch triple: say single, dual or mcts", WAIT);
    pty.send("and now?\r");
    pty.expect("Back to one agent: x is still 21.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);

    // The conversation keeps the plan's outcome, not the workers' traffic;
    // the architecture is saved with the session.
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("chats").join(&id).join("chat.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved["arch"], "single");
    let texts: Vec<String> = saved["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        texts[1],
        "Steps done:\n- Set x to 21: x holds 21\n- Print the double of x: printed the double",
        "{texts:?}"
    );
    assert_eq!(saved["cells"].as_array().unwrap().len(), 2);
}

#[test]
fn a_failed_dual_step_is_replanned() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        plan(&["Divide by zero"]),
        code("", "q = 1 / 0"),
        code("", "q = 1 / 0"),
        plan(&["Set y instead"]),
        code("", "y = 7"),
        call("step_done", serde_json::json!({ "summary": "y is 7" })),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(
        dir.path(),
        &replay,
        &["--arch", "dual", "--max-rounds", "2"],
    );
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    pty.send("try it\r");
    pty.expect("ZeroDivisionError", WAIT);
    pty.expect(
        "step failed: no step_done within 2 rounds; replanning",
        WAIT,
    );
    pty.expect("new plan, replanning cycle 1 (1 steps)", WAIT);
    pty.expect("step done: y is 7", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/vars\r");
    pty.expect("y  int  7", WAIT);
    // Ctrl-D only once the prompt is back: typed while the command still
    // runs, the terminal is in cooked mode and takes it as its own EOF.
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    let transcript =
        common::records::checked(&dir.path().join("chats").join(&id).join("transcript.jsonl"));
    // The replanner was told the failed step and its last error.
    let replan = transcript
        .lines()
        .find(|l| l.contains("\"event\":\"replan\""))
        .expect("a replan record");
    assert!(
        replan.contains("Divide by zero") && replan.contains("ZeroDivisionError"),
        "{replan}"
    );
}

#[test]
fn keys_typed_during_a_turn_start_the_next_prompt_and_ctrl_d_leaves_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("", "import time\ntime.sleep(3)\nw = 1"),
        answer("Slept once."),
        code("", "time.sleep(3)"),
        answer("Slept twice."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("sleep\r");
    pty.expect("time.sleep(3)", WAIT);
    // Typed while the cell runs: not echoed into the output, and waiting
    // at the next prompt.
    pty.send("/va");
    pty.send("rs");
    pty.expect("Slept once.", WAIT);
    pty.expect("you> /vars", WAIT);
    pty.send("\r");
    pty.expect("w  int  1", WAIT);
    pty.send("sleep again\r");
    pty.expect("time.sleep(3)", WAIT);
    pty.send("\x04");
    pty.expect("Slept twice.", WAIT);
    pty.expect("leaving", WAIT);
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
}

#[test]
fn a_finish_ends_the_turn_with_its_summary() {
    // A recorded solve session ends with `finish`; in chat that is the
    // turn's answer, not a failure when the replay runs out after it.
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("Computing.", "print('made', 6 * 7)"),
        call(
            "finish",
            serde_json::json!({ "summary": "The map is in pred_results/." }),
        ),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("make the map\r");
    pty.expect("made 42", WAIT);
    pty.expect("The map is in pred_results/.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    assert!(!pty.seen.contains("the turn failed"), "{}", pty.seen);
    assert_eq!(
        pty.seen.matches("The map is in pred_results/.").count(),
        1,
        "the summary is printed once: {}",
        pty.seen
    );
}

#[test]
fn a_line_typed_and_entered_during_a_turn_is_sent_without_a_second_enter() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("", "import time\ntime.sleep(3)\nw = 1"),
        answer("Slept once."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("sleep\r");
    pty.expect("time.sleep(3)", WAIT);
    pty.send("/vars\r");
    pty.expect("Slept once.", WAIT);
    pty.expect("you> /vars", WAIT);
    // No Enter sent: the command runs by itself.
    pty.expect("w  int  1", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
}

#[test]
fn a_tree_search_turn_keeps_the_best_path_in_the_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    // Three candidates per step (the default width): step 1 has a broken
    // one, a failing one and the right one; step 2 one candidate, thrice.
    let lines = [
        plan(&["Set x to 21", "Print the double of x"]),
        code("", "x = 21"),
        code("", "x = undefined_name + 1"),
        code("", "x = 1 / 0"),
        // Two repairs (the default) of each: the unbound name stays
        // unbound, the division by zero stays one.
        code("", "x = still_undefined"),
        code("", "x = also_undefined"),
        code("", "x = 2 / 0"),
        code("", "x = 3 / 0"),
        code("", "print('double is', x * 2)"),
        code("", "print('double is', x * 2)"),
        code("", "print('double is', x * 2)"),
        answer("x is 21."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &["--arch", "mcts"]);
    pty.expect("mcts agent", WAIT);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    pty.send("set x then double it\r");
    pty.expect("plan (2 steps)", WAIT);
    pty.expect("step 1/2: Set x to 21", WAIT);
    pty.expect("ZeroDivisionError", WAIT);
    pty.expect("step 2/2: Print the double of x", WAIT);
    pty.expect("double is 42", WAIT);
    pty.expect(
        "tree search: 8 node(s) (2 ran, 3 failed, 3 pruned; 4 repair(s), 0 ran)",
        WAIT,
    );
    pty.expect("you> ", WAIT);
    pty.send("/arch single\r");
    pty.expect("from the next turn: single agent", WAIT);
    pty.send("what is x?\r");
    pty.expect("x is 21.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/vars\r");
    pty.expect("x  int  21", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    // Only the chosen path's cells are the session's journal.
    let saved: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("chats").join(&id).join("chat.json")).unwrap(),
    )
    .unwrap();
    let cells: Vec<&str> = saved["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(cells, ["x = 21", "print('double is', x * 2)"]);
    assert!(dir
        .path()
        .join("chats")
        .join(&id)
        .join("work/tree.json")
        .is_file());
}

#[test]
fn what_a_failed_cell_ran_before_it_raised_is_kept_and_replayed_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("", "kept = 7\nraise ValueError('the last line fails')"),
        answer("It failed after setting kept."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("set kept\r");
    pty.expect("It failed after setting kept.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    let id = session_id(&pty.seen);
    // The statement before the raise is the session's, so it is replayed.
    let mut again = chat(dir.path(), &replay, &["--resume", &id]);
    again.expect("1 cell(s) replayed", WAIT);
    again.expect("you> ", WAIT);
    again.send("/vars\r");
    again.expect("kept  int  7", WAIT);
    again.send("/quit\r");
    assert_eq!(again.wait(WAIT), Some(0), "{}", again.seen);
}

#[test]
fn a_resumed_chat_names_what_a_cell_failing_on_replay_could_not_restore() {
    // A cell that read a data file runs; the file is gone when the chat is
    // resumed, so its replay fails after its import: `pd` is back,
    // `frame` and `rows` are not, and the resume line says so.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("a.csv"), "x,y\n1,2\n3,4\n").unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code(
            "",
            "import pandas as pd\nframe = pd.read_csv('data/a.csv')\nrows = len(frame)\nprint(rows)",
        ),
        answer("Read 2 rows."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &["--data", data.to_str().unwrap()]);
    pty.expect("you> ", WAIT);
    pty.send("read a.csv\r");
    pty.expect("Read 2 rows.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    let id = session_id(&pty.seen);
    std::fs::remove_file(data.join("a.csv")).unwrap();
    let mut again = chat(dir.path(), &replay, &["--resume", &id]);
    again.expect("1 failed on replay; not restored: frame, rows", WAIT);
    again.expect("you> ", WAIT);
    again.send("/quit\r");
    assert_eq!(again.wait(WAIT), Some(0), "{}", again.seen);
}

#[test]
fn inspect_shows_a_variable_briefly_names_a_missing_one_and_stays_out_of_the_script() {
    // `/inspect city` dumped a polygon's whole WKT; `/inspect nosuchvar`
    // showed the internal traceback (`_gc_v = nosuchvar`); and the look
    // itself became a cell of the saved script.
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code(
            "",
            "import geopandas as gpd\nfrom shapely.geometry import Point\ncity = gpd.GeoDataFrame({'name': ['a']}, geometry=[Point(0, 0).buffer(1, 64)], crs=4326)",
        ),
        answer("Made city."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    pty.send("make a city\r");
    pty.expect("Made city.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/inspect city\r");
    pty.expect("CRS: EPSG:4326", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/inspect nosuchvar\r");
    pty.expect("`nosuchvar` is not defined", WAIT);
    pty.expect("you> ", WAIT);
    let script = dir.path().join("saved.py");
    pty.send(&format!("/save {}\r", script.display()));
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    assert!(!pty.seen.contains("_gc_v"), "{}", pty.seen);
    // No line of the table is longer than the cut values allow.
    let widest = pty.seen.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 200, "a line of {widest} characters:\n{}", pty.seen);
    let saved = std::fs::read_to_string(&script).unwrap();
    assert!(saved.contains("city = gpd.GeoDataFrame"), "{saved}");
    assert!(!saved.contains("_gc_v"), "{saved}");
}

#[test]
fn a_saved_script_runs_wherever_it_is_saved() {
    // `/save FILE` once wrote a script that moved into FILE's folder and
    // failed there on `data/points.csv`; it now works in the chat's folder.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("points.csv"), "x,y\n1,2\n3,4\n").unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code(
            "",
            "import pandas as pd\nframe = pd.read_csv('data/points.csv')\nframe.to_csv('pred_results/copy.csv', index=False)",
        ),
        answer("Copied."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &["--data", data.to_str().unwrap()]);
    pty.expect("you> ", WAIT);
    pty.send("copy it\r");
    pty.expect("Copied.", WAIT);
    pty.expect("you> ", WAIT);
    let elsewhere = tempfile::tempdir().unwrap();
    let script = elsewhere.path().join("analysis.py");
    pty.send(&format!("/save {}\r", script.display()));
    pty.expect("wrote ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    common::venv_python([script.to_str().unwrap()]);
}

#[test]
fn compact_folds_the_earlier_rounds_into_a_note_with_the_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [
        code("I will set x.", "x = 21"),
        answer("x is set to 21."),
        code("", "for i in range(30):\n    print('row', i, x * i)"),
        answer("The table is printed."),
        answer("x is still 21."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    pty.send("set x please\r");
    pty.expect("x is set to 21.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("print a table\r");
    pty.expect("The table is printed.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/compact\r");
    pty.expect("context compacted: ", WAIT);
    pty.expect("message(s) folded", WAIT);
    pty.expect("you> ", WAIT);
    // The turns before the cut are one note now: nothing to undo.
    pty.send("/undo\r");
    pty.expect("(nothing to undo)", WAIT);
    pty.send("what is x?\r");
    pty.expect("x is still 21.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    // The saved conversation holds the note: the first turn's cell as
    // code, the table's output as its ends, the namespace now.
    let saved = common::read_json(&dir.path().join("chats").join(&id).join("chat.json"));
    let messages = saved["messages"].to_string();
    assert!(
        messages.contains("[gisclaw: earlier rounds, compacted]"),
        "{messages}"
    );
    assert!(messages.contains("    x = 21"), "{messages}");
    assert!(messages.contains("x (int): 21"), "{messages}");
    assert!(
        !messages.contains("row 15"),
        "the table's middle is folded: {messages}"
    );
    // The transcript records the cut as asked for.
    let transcript =
        common::records::checked(&dir.path().join("chats").join(&id).join("transcript.jsonl"));
    let cut: serde_json::Value = transcript
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["event"] == "compaction")
        .expect("a compaction event");
    assert_eq!(cut["compaction"]["forced"], true, "{cut}");
    // A compacted chat resumes.
    let mut again = chat(dir.path(), &replay, &["--resume", &id]);
    again.expect("you> ", WAIT);
    again.send("/vars\r");
    again.expect("x  int  21", WAIT);
    again.send("/quit\r");
    assert_eq!(again.wait(WAIT), Some(0), "{}", again.seen);
}

#[test]
fn what_a_cell_prints_is_shown_while_it_runs_and_not_again_after() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    // The cell waits for a file the test makes only once the cell's first
    // line is on the screen; the line is built at run time so that the
    // code shown before it runs does not hold it.
    let lines = [
        code(
            "",
            "import os, time\nprint('wait' + 'ing for go')\nfor _ in range(1200):\n    if os.path.exists('go'):\n        break\n    time.sleep(0.05)\nprint('we' + 'nt on')",
        ),
        answer("Done waiting."),
    ];
    std::fs::write(&replay, lines.join("\n")).unwrap();
    let mut pty = chat(dir.path(), &replay, &[]);
    pty.expect("you> ", WAIT);
    let id = session_id(&pty.seen);
    pty.send("wait for the file\r");
    pty.expect("waiting for go", WAIT);
    std::fs::write(dir.path().join("chats").join(&id).join("work/go"), "").unwrap();
    pty.expect("went on", WAIT);
    pty.expect("Done waiting.", WAIT);
    pty.expect("you> ", WAIT);
    assert_eq!(
        pty.seen.matches("waiting for go").count(),
        1,
        "shown live, not again with the observation: {}",
        pty.seen
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
}
