//! `gisclaw chat` driven through a real pseudo-terminal with the replay
//! backend: turns that share a namespace, slash commands, Ctrl-C during a
//! running cell, resuming a saved session, and start-up errors.

mod common;

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

fn answer(text: &str) -> String {
    serde_json::json!({ "role": "assistant", "content": text }).to_string()
}

/// `gisclaw chat ARGS` on a pty in `dir`, its sessions in `dir/chats`,
/// without colours, with `envs` added.
fn spawn_chat(dir: &Path, args: &[&str], envs: &[(&str, &str)]) -> Pty {
    let chats = dir.join("chats");
    let mut all = vec![("GISCLAW_CHATS", chats.to_str().unwrap()), ("NO_COLOR", "1"), ("TERM", "xterm")];
    all.extend_from_slice(envs);
    let mut cmd = gisclaw_command(&[&["chat"], args].concat(), &all);
    cmd.current_dir(dir).env_remove("VISUAL");
    Pty::spawn(cmd)
}

/// `gisclaw chat --replay REPLAY EXTRA…` on a pty.
fn chat(dir: &Path, replay: &Path, extra: &[&str]) -> Pty {
    spawn_chat(dir, &[&["--replay", replay.to_str().unwrap()], extra].concat(), &[])
}

fn session_id(seen: &str) -> String {
    let at = seen.find("gisclaw chat --resume ").expect("the resume hint is shown") + "gisclaw chat --resume ".len();
    seen[at..].split(|c: char| c == ')' || c.is_whitespace()).next().unwrap().to_string()
}

#[test]
fn two_turns_share_the_namespace_and_commands_do_what_they_claim() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("replay.jsonl");
    let lines = [code("I will set x.", "x = 21"), answer("x is set to 21."), code("", "print('double is', x * 2)"), answer("The double is 42.")];
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
    assert!(pty.seen.contains(&format!("saved: gisclaw chat --resume {id}")), "{}", pty.seen);

    // /save wrote the successful cells, in order, as a runnable script.
    let text = std::fs::read_to_string(&script).unwrap();
    let (x, d, y) = (text.find("x = 21").unwrap(), text.find("x * 2").unwrap(), text.find("y = x + 1").unwrap());
    assert!(x < d && d < y, "{text}");

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
    let lines = [code("", "z = 5"), answer("z is 5."), code("Sleeping.", "import time\ntime.sleep(60)"), answer("never reached")];
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
    pty.expect("interrupted: the session and its variables are intact", WAIT);
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
        (&["chat", "--backend", "openai", "--model", "m", "--base-url", "http://127.0.0.1:1/v1"], "cannot reach the model server"),
        (&["chat", "--backend", "openai"], "OPENAI_MODEL"),
        (&["chat", "--resume", "nope", "--replay", "/dev/null"], "--resume nope: no saved session"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in cases {
        let chats = dir.path().join("chats");
        let out = gisclaw_command(args, &[("GISCLAW_CHATS", chats.to_str().unwrap())]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn ctrl_c_during_a_model_call_drops_the_request_and_the_next_turn_works() {
    use common::fake_llm::{FakeServer, Reply};
    use serde_json::json;
    let chunk = |text: &str| json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]});
    // The first answer would take a minute; the second comes at once.
    let server = FakeServer::start(vec![
        Reply::Slow(Duration::from_secs(60), Box::new(Reply::Sse(vec![chunk("too late")]))),
        Reply::Sse(vec![chunk("Hello "), chunk("back.")]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url);
    let mut pty = spawn_chat(dir.path(), &["--backend", "openai", "--model", "fake", "--base-url", &base], &[]);
    pty.expect("you> ", WAIT);
    pty.send("hi\r");
    // Wait until the request is at the server, then interrupt it.
    let start = std::time::Instant::now();
    while server.requests().is_empty() {
        assert!(start.elapsed() < WAIT, "no request reached the server: {}", pty.seen);
        std::thread::sleep(Duration::from_millis(50));
    }
    pty.send("\x03");
    pty.expect("interrupted: the session and its variables are intact", Duration::from_secs(15));
    pty.expect("you> ", WAIT);
    pty.send("hi again\r");
    pty.expect("Hello back.", WAIT);
    pty.expect("you> ", WAIT);
    pty.send("/quit\r");
    assert_eq!(pty.wait(WAIT), Some(0), "{}", pty.seen);
    assert!(!pty.seen.contains("too late"), "{}", pty.seen);
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
    let mut pty = spawn_chat(dir.path(), &["--replay", replay.to_str().unwrap()], &[("EDITOR", editor.to_str().unwrap())]);
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
    std::fs::write(&replay, [answer("Got the first."), answer("Got the second.")].join("\n")).unwrap();
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
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("chats").join(&id).join("chat.json")).unwrap()).unwrap();
    let users: Vec<&str> = saved["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "user").map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(users, ["first line\nsecond line", "third \nfourth"], "{saved:#}");
}
