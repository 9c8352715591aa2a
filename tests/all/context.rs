//! Context management end to end: long runs under small windows complete,
//! every request stays under the window (the scripted server's log and the
//! windowed replay say so), the transcript's `compaction` events name what
//! they folded, and a compacted session still knows a variable made early
//! (the note's namespace carries it).

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::fake_llm::{openai_answer, server_tokens, sse_code, sse_text, FakeServer, Reply};
use common::{events, gold, run_json, solve_replay, write_jsonl};
use gisclaw::llm::{Message, Role, ToolCall};
use serde_json::{json, Value};

/// A cell that prints `lines` long lines (a big observation) and binds
/// nothing new.
fn noisy_cell(round: usize, lines: usize) -> String {
    format!(
        "for i in range({lines}):\n    print(f'round {round} row {{i}}: ' + 'measurement ' * 8)"
    )
}

fn assistant_cell(id: &str, code: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: Some(format!("Running {id}.")),
        tool_calls: vec![ToolCall::function(
            id,
            "execute_python",
            json!({ "code": code }).to_string(),
        )],
        ..Message::default()
    }
}

fn compactions(out: &Path) -> Vec<Value> {
    events(out)
        .into_iter()
        .filter(|e| e["event"] == "compaction")
        .collect()
}

#[test]
fn a_40_round_solve_replay_completes_under_a_4k_window() {
    // 36 rounds of big outputs (one binding a variable in round 2), then
    // the gold solution of T03 and its finish: 40+ rounds, far past 4,096
    // tokens of history, each request refused by the windowed replay if
    // it were longer.
    let dir = tempfile::tempdir().unwrap();
    let mut messages = vec![assistant_cell("fill_1", &noisy_cell(1, 60))];
    messages.push(assistant_cell("fill_2", "early_answer = 42\nprint('set')"));
    for r in 3..=36 {
        messages.push(assistant_cell(&format!("fill_{r}"), &noisy_cell(r, 60)));
    }
    messages.extend(gisclaw::bench::verify::gold_messages("T03", &gold("T03")));
    let replay = dir.path().join("long.jsonl");
    write_jsonl(&replay, &messages);
    let out = dir.path().join("run");
    let task = common::geoanalyst().join("T03/task.yaml");
    let result = solve_replay(
        &task,
        &replay,
        &out,
        &["--context-window", "4096", "--max-rounds", "60"],
        &[],
    );
    let run = run_json(&out);
    assert_eq!(
        run["status"],
        "finished",
        "{run}\n{}",
        common::text(&result)
    );
    assert!(run["rounds"].as_u64().unwrap() >= 40, "{run}");
    let folds = compactions(&out);
    assert!(
        !folds.is_empty() && run["compactions"] == folds.len(),
        "{run}"
    );
    assert!(every_request_fits(&out, 4096) >= 40);
    // Each compaction names what it replaced and what the model now reads.
    for c in &folds {
        let c = &c["compaction"];
        assert!(!c["replaced"].as_array().unwrap().is_empty(), "{c}");
        assert!(
            c["tokens_after"].as_u64() < c["tokens_before"].as_u64(),
            "{c}"
        );
        assert_eq!(c["window"], 4096);
        let note = c["note"].as_str().unwrap();
        assert!(note.contains("Variables in the session now"), "{note}");
    }
    // The variable of round 2 is in the latest note's namespace, long
    // after its round was folded.
    let last = folds.last().unwrap()["compaction"]["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.contains("early_answer (int): 42"), "{last}");
    // The same replay without a window reaches the same outputs.
    let plain = dir.path().join("plain");
    let _ = solve_replay(&task, &replay, &plain, &["--max-rounds", "60"], &[]);
    assert_eq!(run_json(&plain)["status"], "finished");
    assert_eq!(run_json(&plain)["compactions"], 0);
}

#[test]
fn a_200_turn_chat_stays_under_a_12k_window_and_remembers_round_2() {
    // 12k: the chat's fixed part (system prompt, tools, the latest round)
    // is about 3.5k tokens, so in an 8k window (target 4k) a note past
    // ~700 tokens had its oldest lines dropped before it could become the
    // eighth of the window that asks the model for a summary; here the
    // model summarises (8 of 56 compactions when written).
    const WINDOW: u64 = 12_288;
    const TURNS: usize = 200;
    let mut script = vec![
        sse_code("t0", "early_answer = 42\nprint('set')"),
        sse_text("Set early_answer."),
    ];
    for t in 1..TURNS {
        script.push(sse_code(&format!("t{t}"), &noisy_cell(t, 40)));
        script.push(sse_text(&format!("Turn {t} printed its table.")));
    }
    script.push(sse_text("early_answer is 42."));
    let server = FakeServer::start(script).with_window(
        WINDOW,
        "Loaded: nothing from files. Worked: early_answer = 42; tables printed. Failed: nothing. Still to do: answer the user.",
    );
    let dir = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.url);
    let chats = dir.path().join("chats");
    let mut cmd = common::gisclaw_command(
        &[
            "chat",
            "--backend",
            "openai",
            "--model",
            "fake",
            "--base-url",
            &base,
        ],
        &[
            ("GISCLAW_CHATS", chats.to_str().unwrap()),
            ("NO_COLOR", "1"),
            ("TERM", "xterm"),
        ],
    );
    cmd.current_dir(dir.path()).env_remove("VISUAL");
    let mut pty = common::pty::Pty::spawn(cmd);
    let wait = Duration::from_secs(60);
    pty.expect("you> ", wait);
    for t in 0..TURNS {
        // A request as people write them: a sentence or two, whose words
        // the note keeps (a line per request), so that a long chat's note
        // outgrows an eighth of the window and the model summarises it.
        pty.send(&format!("turn {t}: print the table of the station readings for this round, one row per measurement, with the round number in front of each row so that I can compare it with the earlier rounds later on\r"));
        let reply = if t == 0 {
            "Set early_answer.".to_string()
        } else {
            format!("Turn {t} printed its table.")
        };
        pty.expect(&reply, wait);
        pty.expect("you> ", wait);
    }
    pty.send("what is early_answer?\r");
    pty.expect("early_answer is 42.", wait);
    pty.expect("you> ", wait);
    pty.send("/tokens\r");
    pty.expect("context ", wait);
    pty.expect("12,288 tokens (the server's /props (n_ctx))", wait);
    pty.send("/quit\r");
    assert_eq!(
        pty.wait(wait),
        Some(0),
        "{}",
        &pty.seen[pty.seen.len().saturating_sub(3000)..]
    );
    assert!(
        pty.seen.contains("context compacted:"),
        "no compaction shown"
    );
    // Every request was under the window, none refused, every scripted
    // reply used.
    let requests = server.requests();
    for r in &requests {
        let size = server_tokens(&r.body);
        assert!(size <= WINDOW, "a request of {size} tokens");
    }
    assert_eq!(server.remaining(), 0);
    // The last request (the question about round 2's variable) carries
    // it in the note's namespace.
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("early_answer (int): 42"), "{last}");
    // The transcript records each compaction with what it folded.
    let transcript = std::fs::read_dir(&chats)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("transcript.jsonl"))
        .find(|p| p.exists())
        .expect("the chat's transcript");
    let text = common::records::checked(&transcript);
    let folds: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "compaction")
        .collect();
    assert!(folds.len() >= 5, "{} compactions", folds.len());
    assert!(folds
        .iter()
        .all(|f| !f["compaction"]["replaced"].as_array().unwrap().is_empty()));
    assert!(
        folds.iter().any(|f| f["compaction"]["by_model"] == true),
        "the model summarised at least once"
    );
}

#[test]
fn a_window_learnt_from_a_refusal_compacts_and_the_run_finishes() {
    // The server does not say its window (no /props, no /models entry): the
    // first refusal states it, the run compacts and goes on.
    let gold_messages = gisclaw::bench::verify::gold_messages("T03", &gold("T03"));
    let mut script: Vec<Reply> = (1..=14)
        .map(|r| {
            let code = noisy_cell(r, 50);
            Reply::Json(200, common::fake_llm::openai_code(&format!("f{r}"), &code))
        })
        .collect();
    for m in &gold_messages {
        script.push(Reply::Json(
            200,
            openai_answer(serde_json::to_value(m).unwrap()),
        ));
    }
    let window = 6000;
    let server = FakeServer::start(script).with_unstated_window(window, "Loaded: T03 data.");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
    let task = common::geoanalyst().join("T03/task.yaml");
    let result = common::gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "fake",
            "--base-url",
            &base,
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let run = run_json(&out);
    assert_eq!(
        run["status"],
        "finished",
        "{run}\n{}",
        common::text(&result)
    );
    let requests = server.requests();
    let refused: Vec<u64> = requests
        .iter()
        .map(|r| server_tokens(&r.body))
        .filter(|&n| n > window)
        .collect();
    assert_eq!(
        refused.len(),
        1,
        "one refusal taught the window: {refused:?}"
    );
    let folds = compactions(&out);
    assert!(!folds.is_empty());
    assert_eq!(folds[0]["window_source"], "the server's refusal");
    assert_eq!(server.remaining(), 0);
}

/// Every request of a run, as the transcript's usage records it, fits
/// `window`.
fn every_request_fits(out: &Path, window: u64) -> usize {
    let mut n = 0;
    for e in &events(out) {
        if let Some(tokens) = e["usage"]["prompt_tokens"].as_u64() {
            assert!(tokens <= window, "a request of {tokens} tokens: {e}");
            n += 1;
        }
    }
    n
}

#[test]
fn the_dual_agent_and_the_tree_search_keep_each_request_within_a_small_window() {
    // 3,000 tokens barely hold the system prompt, the task and its card:
    // the Planner's prompt and the tree's node prompts are cut to fit, the
    // Worker's conversations compacted, and both runs still finish.
    let dir = tempfile::tempdir().unwrap();
    let task = common::geoanalyst().join("T03/task.yaml");
    let source = gold("T03");
    for (arch, messages) in [
        (
            "dual",
            gisclaw::bench::verify::gold_dual_messages("T03", &source),
        ),
        (
            "mcts",
            gisclaw::bench::verify::gold_mcts_messages("T03", &source, 1, false),
        ),
    ] {
        let replay = dir.path().join(format!("{arch}.jsonl"));
        write_jsonl(&replay, &messages);
        let out = dir.path().join(arch);
        let mut extra = vec!["--arch", arch, "--context-window", "3000"];
        if arch == "mcts" {
            extra.extend(["--mcts-width", "1"]);
        }
        let result = solve_replay(&task, &replay, &out, &extra, &[]);
        let run = run_json(&out);
        assert_eq!(
            run["status"],
            "finished",
            "{arch}: {run}\n{}",
            common::text(&result)
        );
        assert!(every_request_fits(&out, 3000) > 0, "{arch}");
    }
}
