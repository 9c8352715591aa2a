//! The run record's schema (`gisclaw schema transcript`) against a
//! validator nobody here wrote: every kind of event, written by gisclaw's
//! own writer with every field set, validates; lines that are not events
//! do not. The suite's real transcripts are validated where the tests read
//! them (`common::records::checked`).

use crate::common::records;

use gisclaw::llm::{Message, Role, ToolCall, Usage};
use gisclaw::record::{
    CellError, CellRecord, Check, CompactionEvent, End, Event, MctsEnd, MctsNode, MessageEvent,
    Replan, Reproduction, Retrieval, SearchCounts, Start, StepStart, ToolEvent, Transcript,
    UserCell,
};
use serde_json::json;

/// One event of every kind, every optional field set.
fn every_kind() -> Vec<Event> {
    let cell = CellRecord {
        stdout: "1\n".into(),
        stdout_dropped_chars: 3,
        stderr: "w\n".into(),
        display: Some("1".into()),
        error: Some(CellError {
            ename: "NameError".into(),
            evalue: "x".into(),
            traceback: "t".into(),
        }),
        wrote: vec!["pred_results/a.csv".into()],
    };
    let mut answer = Message::text(Role::Assistant, "Load it.");
    answer.tool_calls = vec![ToolCall::function(
        "c1",
        "execute_python",
        r#"{"code":"x"}"#,
    )];
    vec![
        Event::Start(Start {
            task: Some("T1".into()),
            arch: Some("single".into()),
            backend: Some("replay".into()),
            replay: Some(true),
            workflow: Some(true),
            domain_knowledge: Some(true),
            protocol: Some("gisclaw-paper".into()),
            rag: Some(false),
            gisclaw: Some("0.1.0".into()),
            sandbox: None,
            chat: Some("c".into()),
            resumed_cells: Some(2),
            suite: Some("steps".into()),
            run: Some(1),
            mode: Some("agent".into()),
            mcp: Some(true),
            data: Some("/d".into()),
        }),
        Event::Message(MessageEvent {
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 2,
                estimated: false,
                prefix_tokens: 4,
            }),
            llm_ms: Some(5),
            finish_reason: Some("tool_calls".into()),
            retries: Some(1),
            backend_notes: Some(vec!["n".into()]),
            repairs: Some(vec!["r".into()]),
            images: Some(vec!["a.png".into()]),
            declined: Some("no data".into()),
            plan: Some(json!({"steps": []})),
            plan_error: Some("e".into()),
            choice: Some(0),
            logprob: Some(-0.5),
            ..MessageEvent::of(Some(1), Some("planner"), answer)
        }),
        Event::Tool(ToolEvent {
            round: Some(1),
            agent: Some("worker".into()),
            call_id: Some("c1".into()),
            name: "execute_python".into(),
            arguments: r#"{"code":"x"}"#.into(),
            status: Some("Error".into()),
            ok: Some(false),
            tool_ms: Some(9),
            cell_us: Some(800),
            observation: Some("NameError".into()),
            cell: Some(cell.clone()),
            code: Some("x".into()),
        }),
        Event::Compaction(CompactionEvent {
            round: 3,
            agent: Some("worker".into()),
            window_source: Some("server".into()),
            took_ms: 1.5,
            compaction: json!({"replaced": [1, 2]}),
        }),
        Event::Retrieval(Retrieval {
            for_what: "this task".into(),
            query: "buffer".into(),
            libraries: vec!["geopandas".into()],
            hits: vec!["geopandas.GeoSeries.buffer".into()],
        }),
        Event::Step(StepStart {
            step: 1,
            of: 2,
            goal: Some("Load".into()),
            replan: Some(0),
        }),
        Event::Replan(Replan {
            cycle: 1,
            failed_step: "Load".into(),
            reason: "r".into(),
            failed_operations: json!([{"operation": "read", "error": "e"}]),
            request: "again".into(),
        }),
        Event::Check(Check {
            step: 1,
            check: json!({"variable": "x"}),
            passed: false,
            problem: Some("missing".into()),
        }),
        Event::GoldPrefix {
            step: 2,
            gold_cells: 1,
        },
        Event::Intervention {
            step: 2,
            after: "GaveUp".into(),
        },
        Event::UserCell(UserCell {
            code: "y = 1".into(),
            ok: true,
            observation: "".into(),
            cell: Some(cell),
        }),
        Event::TurnEnd {
            end: "Answered".into(),
        },
        Event::Reset {},
        Event::Undo { to: 4 },
        Event::MctsNode(MctsNode {
            id: 1,
            parent: Some(0),
            step: 1,
            origin: json!("sample"),
            code: "x".into(),
            state: json!("ran"),
            findings: json!([]),
            observation: "ok".into(),
            warnings: vec!["w".into()],
            told: vec!["t".into()],
            reward: Some(0.5),
            visits: 2,
            q: 0.25,
            prior: 0.5,
        }),
        Event::MctsRollout {
            node: 1,
            rollout: json!({"reward": 0.5}),
        },
        Event::MctsEnd(MctsEnd {
            best: 1,
            reward: Some(0.5),
            counts: SearchCounts {
                nodes: 3,
                ran: 2,
                failed: 1,
                pruned: 0,
                repairs: 1,
                repairs_ran: 1,
                rollouts: 0,
                expansions: 2,
            },
            prior: "uniform".into(),
            stopped: Some("budget".into()),
        }),
        Event::Reproduce(Reproduction {
            ok: false,
            cells: 2,
            failed_cells: vec!["cell 2".into()],
            outputs: 1,
            differed: vec!["a.csv".into()],
            seconds: 0.4,
        }),
        Event::End(End {
            status: Some("finished".into()),
            reason: Some("done".into()),
            rounds: Some(3),
            steps_passed: Some(1),
            of: Some(2),
        }),
    ]
}

#[test]
fn every_kind_gisclaws_writer_writes_validates_against_the_printed_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    let mut transcript = Transcript::create(&path).unwrap();
    let events = every_kind();
    let kinds: std::collections::BTreeSet<&str> = events.iter().map(Event::kind).collect();
    assert_eq!(kinds.len(), events.len(), "one event per kind");
    for event in events.clone() {
        transcript.record(event);
    }
    transcript.failure().unwrap();
    records::checked(&path);
    // And they read back as written.
    let read: Vec<Event> = gisclaw::record::read(&path)
        .unwrap()
        .into_iter()
        .map(|l| l.event)
        .collect();
    assert_eq!(read, events);
}

#[test]
fn lines_that_are_not_events_fail_the_schema() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [
        // An unknown kind.
        r#"{"t":0,"event":"telemetry","x":1}"#,
        // A message without its message.
        r#"{"t":0,"event":"message","round":1}"#,
        // A tool event without its tool's name.
        r#"{"t":0,"event":"tool","arguments":"{}"}"#,
        // A role no chat has.
        r#"{"t":0,"event":"message","message":{"role":"robot","content":"x"}}"#,
        // A step's number as text.
        r#"{"t":0,"event":"step","step":"one","of":2}"#,
    ] {
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, format!("{{\"t\":0,\"event\":\"reset\"}}\n{bad}\n")).unwrap();
        let why = records::validate(&path).expect_err(bad);
        assert!(
            why.contains("line 2") && why.contains("1 bad line"),
            "{bad}: {why}"
        );
        // gisclaw's own typed reader refuses the same line, naming it.
        let err = gisclaw::record::read(&path).unwrap_err().to_string();
        assert!(err.contains("bad.jsonl, line 2"), "{err}");
    }
}
