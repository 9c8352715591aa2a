//! The live backends against scripted OpenAI- and Ollama-protocol servers on
//! 127.0.0.1: rate limits, server errors, slow answers, truncated bodies,
//! dropped connections, refused tools, tool calls written as text, streams.

use crate::common;

use std::time::Duration;

use common::fake_llm::{ollama_answer, ollama_code, openai_answer, openai_code, FakeServer, Reply};
use gisclaw::agent::tools;
use gisclaw::llm::config::{BackendKind, LiveConfig, ToolMode};
use gisclaw::llm::retry::RetryPolicy;
use gisclaw::llm::{adapt, open_live, ChatBackend, LlmError, Message, Role};
use serde_json::{json, Value};

const KEY: &str = "sk-test-secret-0123";

fn live(kind: BackendKind, url: &str) -> LiveConfig {
    LiveConfig {
        name: "test".into(),
        kind,
        base_url: match kind {
            BackendKind::Openai => format!("{url}/v1"),
            BackendKind::Ollama | BackendKind::Local => url.to_string(),
        },
        model: "fake".into(),
        api_key: (kind == BackendKind::Openai).then(|| KEY.to_string()),
        tool_mode: ToolMode::Auto,
        temperature: None,
        top_p: None,
        max_tokens: None,
        timeout: Duration::from_secs(1),
        retry: RetryPolicy {
            attempts: 4,
            initial: Duration::from_millis(20),
            max_delay: Duration::from_millis(100),
        },
        num_ctx: 8192,
        context_window: None,
        think: None,
        extra_body: serde_json::Map::new(),
        vision: gisclaw::llm::vision::Vision::Off,
        price: None,
        local: None,
        server: None,
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::text(Role::System, "You are a GIS analyst."),
        Message::text(Role::User, "Map the heat."),
    ]
}

fn backend(kind: BackendKind, server: &FakeServer) -> Box<dyn ChatBackend> {
    open_live(live(kind, &server.url)).unwrap()
}

fn code_of(m: &Message) -> String {
    let args: Value = serde_json::from_str(&m.tool_calls[0].function.arguments).unwrap();
    args["code"].as_str().unwrap().to_string()
}

fn rate_limited() -> Reply {
    Reply::Json(
        429,
        json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}),
    )
}

#[test]
fn openai_rate_limits_are_waited_out_and_the_request_is_well_formed() {
    let server = FakeServer::start(vec![
        rate_limited(),
        rate_limited(),
        Reply::Json(200, openai_code("c1", "print(1)")),
    ]);
    let mut b = backend(BackendKind::Openai, &server);
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert_eq!(code_of(&r.message), "print(1)");
    assert_eq!(
        (
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.estimated
        ),
        (100, 20, false)
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].line, "POST /v1/chat/completions HTTP/1.1");
    let auth = reqs[0]
        .headers
        .iter()
        .find(|(k, _)| k == "authorization")
        .map(|(_, v)| v.clone());
    assert_eq!(auth.as_deref(), Some(format!("Bearer {KEY}").as_str()));
    let body = &reqs[0].body;
    assert_eq!(body["model"], "fake");
    assert_eq!(body["stream"], false);
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "list_files",
            "inspect_data",
            "execute_python",
            "finish",
            "decline"
        ]
    );
    assert!(!b.describe().contains(KEY));
}

#[test]
fn openai_server_errors_end_in_one_clear_error_after_retries() {
    let server = FakeServer::start(
        (0..20)
            .map(|_| Reply::Text(500, "upstream exploded".into()))
            .collect(),
    );
    let mut b = backend(BackendKind::Openai, &server);
    let err = b.chat(&conversation(), &[]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, LlmError::Unavailable { .. }), "{text}");
    assert!(
        text.contains("upstream exploded") && text.contains("/v1"),
        "{text}"
    );
    assert!(server.requests().len() >= 2, "retried");
    assert!(!text.contains(KEY));
}

#[test]
fn openai_slow_truncated_and_dropped_answers_are_retried() {
    let server = FakeServer::start(vec![
        Reply::Slow(
            Duration::from_secs(3),
            Box::new(Reply::Json(200, openai_code("a", "never seen"))),
        ),
        Reply::Truncated(openai_code("b", "never seen either")),
        Reply::Drop,
        Reply::Json(200, openai_code("c", "x = 1")),
    ]);
    let mut b = backend(BackendKind::Openai, &server);
    let r = b.chat(&conversation(), &[]).unwrap();
    assert_eq!(code_of(&r.message), "x = 1");
    assert_eq!(r.retries, 3);
    assert_eq!(r.notes.len(), 3, "{:?}", r.notes);
    assert!(r.notes[0].contains("timed out"), "{:?}", r.notes);
}

#[test]
fn openai_refused_tools_switch_the_run_to_text_mode() {
    let text_answer = openai_answer(
        json!({"role": "assistant", "content": "Thought: look at the data.\nAction: execute_python\n```python\nprint(sorted(list_files('data')))\n```"}),
    );
    let server = FakeServer::start(vec![
        Reply::Json(
            400,
            json!({"error": {"message": "this model does not support tools", "type": "invalid_request_error"}}),
        ),
        Reply::Json(200, text_answer.clone()),
        Reply::Json(200, text_answer),
    ]);
    let mut b = backend(BackendKind::Openai, &server);
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("text-mode")),
        "{:?}",
        r.notes
    );
    let adapted = adapt::adapt(r.message.clone(), 1).message;
    assert_eq!(code_of(&adapted), "print(sorted(list_files('data')))");
    // The follow-up (with the earlier call and its result) is plain text too.
    let mut conv = conversation();
    conv.push(adapted.clone());
    conv.push(Message::tool_result(&adapted.tool_calls[0].id, "['a.csv']"));
    b.chat(&conv, &tools::specs()).unwrap();
    let reqs = server.requests();
    assert!(reqs[0].body.get("tools").is_some());
    for req in &reqs[1..] {
        assert!(req.body.get("tools").is_none());
        assert!(req.body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("text protocol"));
    }
    let last = reqs[2].body["messages"].as_array().unwrap();
    assert_eq!(last[3]["role"], "user");
    assert!(last[3]["content"]
        .as_str()
        .unwrap()
        .starts_with("Observation:"));
    assert!(last.iter().all(|m| m.get("tool_calls").is_none()));
}

#[test]
fn openai_streams_are_assembled_and_a_failed_stream_falls_back() {
    let chunk = |delta: Value| json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    let server = FakeServer::start(vec![
        Reply::Sse(vec![
            chunk(json!({"role": "assistant", "content": "Reading "})),
            chunk(json!({"content": "the data."})),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "c9", "type": "function", "function": {"name": "execute_python", "arguments": "{\"code\": "}}]}),
            ),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"y = 2\"}"}}]})),
            json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}}),
        ]),
        Reply::Text(500, "stream broke".into()),
        Reply::Json(200, openai_code("d", "z = 3")),
    ]);
    let mut b = backend(BackendKind::Openai, &server);
    let mut seen = String::new();
    let r = b
        .chat_streaming(&conversation(), &tools::specs(), &mut |t| seen.push_str(t))
        .unwrap();
    assert_eq!(seen, "Reading the data.");
    assert_eq!(code_of(&r.message), "y = 2");
    assert_eq!((r.usage.prompt_tokens, r.usage.estimated), (50, false));
    assert_eq!(server.requests()[0].body["stream"], true);
    let r = b
        .chat_streaming(&conversation(), &tools::specs(), &mut |_| {})
        .unwrap();
    assert_eq!(code_of(&r.message), "z = 3");
    assert!(
        r.notes.iter().any(|n| n.contains("stream failed")),
        "{:?}",
        r.notes
    );
}

#[test]
fn top_p_reaches_both_protocols_only_when_set() {
    // GeoAgent samples at top-p 0.9: a profile's `top_p` is sent as the
    // OpenAI field and as Ollama's option; unset, neither is sent.
    for kind in [BackendKind::Openai, BackendKind::Ollama] {
        let answer = match kind {
            BackendKind::Openai => openai_code("c1", "print(1)"),
            _ => ollama_code("print(1)"),
        };
        let server = FakeServer::start(vec![
            Reply::Json(200, answer.clone()),
            Reply::Json(200, answer),
        ]);
        let mut config = live(kind, &server.url);
        config.top_p = Some(0.9);
        let mut b = open_live(config).unwrap();
        b.chat(&conversation(), &tools::specs()).unwrap();
        backend(kind, &server)
            .chat(&conversation(), &tools::specs())
            .unwrap();
        let reqs = server.requests();
        let sent = |body: &Value| match kind {
            BackendKind::Openai => body.get("top_p").cloned(),
            _ => body["options"].get("top_p").cloned(),
        };
        let top_p = sent(&reqs[0].body).and_then(|v| v.as_f64());
        assert!(
            top_p.is_some_and(|p| (p - 0.9).abs() < 1e-6),
            "{kind:?}: {}",
            reqs[0].body
        );
        assert_eq!(sent(&reqs[1].body), None, "{kind:?}: {}", reqs[1].body);
    }
}

#[test]
fn ollama_native_tools_with_context_window_and_usage() {
    let server = FakeServer::start(vec![
        Reply::Json(500, json!({"error": "server busy"})),
        Reply::Json(200, ollama_code("print('hi')")),
    ]);
    let mut b = backend(BackendKind::Ollama, &server);
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert_eq!(code_of(&r.message), "print('hi')");
    assert_eq!(
        (
            r.usage.prompt_tokens,
            r.usage.completion_tokens,
            r.usage.estimated
        ),
        (90, 15, false)
    );
    assert_eq!(r.retries, 1);
    let reqs = server.requests();
    assert_eq!(reqs[1].line, "POST /api/chat HTTP/1.1");
    assert_eq!(reqs[1].body["options"]["num_ctx"], 8192);
    assert_eq!(reqs[1].body["stream"], false);
    assert_eq!(reqs[1].body["tools"].as_array().unwrap().len(), 5);
    // A tool call sent back to Ollama carries its arguments as an object.
    let mut conv = conversation();
    let adapted = adapt::adapt(r.message, 1).message;
    conv.push(adapted.clone());
    conv.push(Message::tool_result(&adapted.tool_calls[0].id, "hi"));
    let server2 = FakeServer::start(vec![Reply::Json(
        200,
        ollama_answer(json!({"role": "assistant", "content": "done"})),
    )]);
    let mut b2 = backend(BackendKind::Ollama, &server2);
    b2.chat(&conv, &tools::specs()).unwrap();
    let sent = &server2.requests()[0].body["messages"];
    assert_eq!(
        sent[2]["tool_calls"][0]["function"]["arguments"]["code"],
        "print('hi')"
    );
    assert_eq!(sent[3]["role"], "tool");
}

#[test]
fn ollama_missing_models_say_how_to_pull_them() {
    let server = FakeServer::start(vec![Reply::Json(
        404,
        json!({"error": "model \"fake\" not found, try pulling it first"}),
    )]);
    let mut b = backend(BackendKind::Ollama, &server);
    let err = b.chat(&conversation(), &[]).unwrap_err().to_string();
    assert!(err.contains("ollama pull fake"), "{err}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn ollama_models_without_tools_switch_to_text_mode_and_streams_work() {
    let server = FakeServer::start(vec![
        Reply::Json(
            400,
            json!({"error": "registry.ollama.ai/library/fake does not support tools"}),
        ),
        Reply::Json(
            200,
            ollama_answer(
                json!({"role": "assistant", "content": "Action: execute_python\n```python\na = 1\n```"}),
            ),
        ),
        Reply::Ndjson(vec![
            json!({"model": "fake", "created_at": "t", "message": {"role": "assistant", "content": "Thought: "}, "done": false}),
            json!({"model": "fake", "created_at": "t", "message": {"role": "assistant", "content": "continue"}, "done": false}),
            json!({"model": "fake", "created_at": "t", "message": {"role": "assistant", "content": ""}, "done": true, "total_duration": 1, "load_duration": 1, "prompt_eval_count": 70, "prompt_eval_duration": 1, "eval_count": 4, "eval_duration": 1}),
        ]),
    ]);
    let mut b = backend(BackendKind::Ollama, &server);
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("text-mode")),
        "{:?}",
        r.notes
    );
    assert_eq!(code_of(&adapt::adapt(r.message, 1).message), "a = 1");
    assert!(server.requests()[1].body.get("tools").is_none());
    let mut seen = String::new();
    let r = b
        .chat_streaming(&conversation(), &tools::specs(), &mut |t| seen.push_str(t))
        .unwrap();
    assert_eq!(seen, "Thought: continue");
    assert_eq!(r.message.content.as_deref(), Some("Thought: continue"));
    assert_eq!(r.usage.prompt_tokens, 70);
}

#[test]
fn a_full_context_window_is_said_at_once_without_retries() {
    // llama.cpp's refusal, whose integer `code` async-openai cannot read.
    let body = json!({"error": {"code": 400, "message": "request (8705 tokens) exceeds the available context size (8192 tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 8705, "n_ctx": 8192}});
    let server = FakeServer::start(vec![Reply::Json(400, body.clone()), Reply::Json(400, body)]);
    let mut b = backend(BackendKind::Openai, &server);
    let err = b.chat(&conversation(), &tools::specs()).unwrap_err();
    assert!(
        matches!(err, gisclaw::llm::LlmError::ContextFull(_)),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("no longer fits the model's context window")
            && err.to_string().contains("8192"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "a full context is not retried");
}

#[test]
fn a_web_server_on_the_base_url_is_one_line_naming_it_and_exit_2() {
    // `python -m http.server` where the OpenAI API should be: it answers
    // /v1/models with a 404 HTML page (and POSTs with 501). One line naming
    // the URL, exit 2 (configuration), no HTML on the terminal.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let root = tempfile::tempdir().unwrap();
    let mut server = std::process::Command::new(gisclaw::paths::default_venv().join("bin/python"))
        .args([
            "-m",
            "http.server",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
        ])
        .current_dir(root.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "http.server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let task = crate::common::repo().join("examples/heat_island/task.yaml");
    let out = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{port}/v1");
    let o = crate::common::gisclaw(
        &[
            "solve",
            task.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "gpt-4o",
            "--base-url",
            &base,
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-test")],
    );
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{base} is not an OpenAI-compatible API")),
        "{stderr}"
    );
    assert!(!stderr.to_ascii_lowercase().contains("<html"), "{stderr}");
    assert!(stderr.lines().count() <= 2, "{stderr}");
}

/// An answer of a server that honoured the action schema.
fn constrained_answer(code: &str) -> String {
    json!({ "thought": "print it", "tool": "execute_python", "arguments": { "code": code } })
        .to_string()
}

#[test]
fn constrained_requests_carry_the_action_schema_and_answers_are_calls() {
    let server = FakeServer::start(vec![Reply::Json(
        200,
        openai_answer(json!({ "role": "assistant", "content": constrained_answer("print(1)") })),
    )]);
    let mut config = live(BackendKind::Openai, &server.url);
    config.tool_mode = ToolMode::Constrained;
    let mut b = open_live(config).unwrap();
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert_eq!(r.message.tool_calls[0].function.name, "execute_python");
    assert_eq!(code_of(&r.message), "print(1)");
    assert_eq!(r.message.content.as_deref(), Some("print it"));
    let body = &server.requests()[0].body;
    assert!(body.get("tools").is_none(), "{body}");
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(body["response_format"]["type"], "json_schema");
    let tools_named: Vec<&str> = schema["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["properties"]["tool"]["const"].as_str().unwrap())
        .collect();
    // `finish` is offered once the model has taken an action.
    assert_eq!(
        tools_named,
        ["execute_python", "list_files", "inspect_data"]
    );
    assert!(body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("## Actions"));
    // A request without tools (a summary) is not constrained.
    let _ = b.chat(&conversation(), &[]);
    assert!(server.requests()[1].body.get("response_format").is_none());
}

#[test]
fn ollama_constrained_requests_carry_the_schema_as_format() {
    let server = FakeServer::start(vec![Reply::Json(
        200,
        common::fake_llm::ollama_answer(
            json!({ "role": "assistant", "content": constrained_answer("x = 2") }),
        ),
    )]);
    let mut config = live(BackendKind::Ollama, &server.url);
    config.tool_mode = ToolMode::Constrained;
    let mut b = open_live(config).unwrap();
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    assert_eq!(code_of(&r.message), "x = 2");
    let body = &server.requests()[0].body;
    assert!(body["format"]["oneOf"].is_array(), "{body}");
    assert!(body.get("tools").is_none(), "{body}");
}

#[test]
fn a_server_that_refuses_the_schema_falls_back_to_text_mode_once_and_is_remembered() {
    let text_answer = "Thought: look\nAction: execute_python\n```python\nprint(3)\n```";
    let server = FakeServer::start(vec![
        Reply::Json(
            400,
            json!({"error": {"message": "response_format type json_schema is not supported", "type": "invalid_request_error"}}),
        ),
        Reply::Json(
            200,
            openai_answer(json!({ "role": "assistant", "content": text_answer })),
        ),
        Reply::Json(
            200,
            openai_answer(json!({ "role": "assistant", "content": text_answer })),
        ),
    ]);
    let mut config = live(BackendKind::Openai, &server.url);
    config.tool_mode = ToolMode::Constrained;
    let mut b = open_live(config.clone()).unwrap();
    let r = b.chat(&conversation(), &tools::specs()).unwrap();
    let adapted = gisclaw::llm::adapt::adapt(r.message, 1).message;
    assert_eq!(code_of(&adapted), "print(3)");
    let refused: Vec<&String> = r
        .notes
        .iter()
        .filter(|n| n.contains("refused the action schema"))
        .collect();
    assert_eq!(refused.len(), 1, "one line: {:?}", r.notes);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.get("response_format").is_none());
    assert!(requests[1].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("text protocol"));
    // The next backend for the same server starts in text mode.
    let mut again = open_live(config).unwrap();
    let r = again.chat(&conversation(), &tools::specs()).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("refused the action schema before")),
        "{:?}",
        r.notes
    );
    assert!(server.requests()[2].body.get("response_format").is_none());
}

#[test]
fn a_constrained_answer_is_shown_as_its_thought_not_as_json() {
    let server = FakeServer::start(vec![Reply::Json(
        200,
        openai_answer(json!({ "role": "assistant", "content": constrained_answer("print(1)") })),
    )]);
    let mut config = live(BackendKind::Openai, &server.url);
    config.tool_mode = ToolMode::Constrained;
    let mut b = open_live(config).unwrap();
    let mut shown = String::new();
    let r = b
        .chat_streaming(&conversation(), &tools::specs(), &mut |t| shown.push_str(t))
        .unwrap();
    assert_eq!(shown, "print it");
    assert_eq!(code_of(&r.message), "print(1)");
    assert_eq!(server.requests()[0].body["stream"], false);
}
