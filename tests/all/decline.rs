//! Honest refusal end to end: every architecture can decline (scripted
//! answers through the real loop and sandbox, and through a scripted
//! OpenAI-protocol server on 127.0.0.1), a decline of a task the data can
//! answer fails, and one of a task marked `solvable: false` succeeds.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::fake_llm::{openai_answer, FakeServer, Reply};
use crate::common::{gisclaw, read_json, text, write_jsonl};
use gisclaw::llm::{Message, ToolCall};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const REASON: &str = "data/ holds no land-cover layer, which the task needs";

fn call(name: &str, arguments: Value) -> Message {
    Message {
        content: Some(format!("calling {name}")),
        tool_calls: vec![ToolCall::function("c", name, arguments.to_string())],
        ..Message::default()
    }
}

fn decline() -> Message {
    call("decline", json!({ "reason": REASON }))
}

/// The heat-island example in `root`, marked unsolvable when `solvable` is false.
fn example(root: &Path, solvable: bool) -> PathBuf {
    let dir = root.join(if solvable { "heat" } else { "heat-unsolvable" });
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let src = repo().join("examples/heat_island");
    let mut yaml = std::fs::read_to_string(src.join("task.yaml")).unwrap();
    if !solvable {
        yaml.push_str(&format!(
            "solvable: false\nunsolvable_reason: {REASON}\nunsolvable_class: absent_data\n"
        ));
    }
    std::fs::write(dir.join("task.yaml"), yaml).unwrap();
    for f in ["stations.csv", "city_boundary.geojson"] {
        std::fs::copy(src.join("data").join(f), dir.join("data").join(f)).unwrap();
    }
    dir.join("task.yaml")
}

fn solve(task: &Path, arch: &str, answers: &[Message], out: &Path) -> std::process::Output {
    let replay = out.with_extension("jsonl");
    write_jsonl(&replay, answers);
    gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--arch",
            arch,
            "--replay",
            replay.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    )
}

#[test]
fn every_architecture_can_decline_and_only_an_unsolvable_task_counts_it_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let solvable = example(dir.path(), true);
    let unsolvable = example(dir.path(), false);
    let plan = call(
        "submit_plan",
        json!({"steps": [
            {"goal": "inspect", "details": "d"},
            {"goal": "check", "details": "d"},
            {"goal": "save", "details": "d"}
        ]}),
    );
    let cases: Vec<(&str, &str, Vec<Message>)> = vec![
        (
            "single",
            "single",
            vec![call("list_files", json!({})), decline()],
        ),
        // The Dual Agent's Planner declines instead of planning.
        ("dual", "dual-planner", vec![decline()]),
        // Its Worker finds out during the first step.
        (
            "dual",
            "dual-worker",
            vec![
                plan.clone(),
                call(
                    "execute_python",
                    json!({"code": "print(sorted(__import__('os').listdir('data')))"}),
                ),
                decline(),
            ],
        ),
        ("mcts", "mcts", vec![decline()]),
        (
            "none",
            "none",
            vec![Message {
                content: Some(format!("DECLINE: {REASON}")),
                ..Message::default()
            }],
        ),
    ];
    for (arch, name, answers) in cases {
        for (task, solvable) in [(&solvable, true), (&unsolvable, false)] {
            let out = dir.path().join(format!("{name}-{solvable}"));
            let o = solve(task, arch, &answers, &out);
            let said = text(&o);
            let run = read_json(&out.join("run.json"));
            assert_eq!(run["status"], "declined", "{name}: {said}\n{run:#}");
            assert_eq!(run["reason"], REASON, "{name}");
            if solvable {
                assert_eq!(o.status.code(), Some(1), "{name}: {said}");
                assert!(
                    said.contains("the model declined a task that its data can answer"),
                    "{name}: {said}"
                );
            } else {
                assert_eq!(o.status.code(), Some(0), "{name}: {said}");
                assert!(said.contains("declined, as the task (solvable: false) expects"));
            }
            assert!(
                said.contains(&format!("gisclaw: declined — {REASON}")),
                "{said}"
            );
        }
    }
    // A decline without a reason is refused, and the run goes on.
    let out = dir.path().join("no-reason");
    let o = solve(
        &unsolvable,
        "single",
        &[call("decline", json!({"reason": "  "})), decline()],
        &out,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let transcript = crate::common::records::checked(&out.join("transcript.jsonl"));
    assert!(
        transcript.contains("decline needs {\\\"reason\\\""),
        "{transcript}"
    );
}

#[test]
fn a_live_model_is_offered_decline_and_told_that_inventing_is_worse() {
    let server = FakeServer::start(vec![Reply::Json(
        200,
        openai_answer(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": "d1", "type": "function", "function": {"name": "decline", "arguments": json!({"reason": REASON}).to_string()}}]
        })),
    )]);
    let dir = tempfile::tempdir().unwrap();
    let task = example(dir.path(), false);
    let out = dir.path().join("run");
    let base = format!("{}/v1", server.url);
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
        &[("OPENAI_API_KEY", "sk-test-decline")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let requests = server.requests();
    let body = &requests[0].body;
    let decline = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "decline")
        .expect("decline is offered");
    assert_eq!(
        decline["function"]["parameters"]["required"],
        json!(["reason"])
    );
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("A made-up answer is worse") && system.contains("call `decline`"),
        "{system}"
    );
    assert_eq!(read_json(&out.join("run.json"))["status"], "declined");
}
