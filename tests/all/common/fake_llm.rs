//! A scripted model server on 127.0.0.1 speaking the OpenAI
//! (`/v1/chat/completions`, JSON or SSE) and Ollama (`/api/chat`, JSON or
//! NDJSON) protocols, for fault injection: each request takes the next
//! scripted reply (an HTTP error, a slow answer, a truncated body, a
//! dropped connection, a stream). Every request is recorded.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A complete response with this status and JSON body.
    Json(u16, Value),
    /// A complete response with this status and raw text body.
    Text(u16, String),
    /// Wait, then send the inner reply.
    Slow(Duration, Box<Reply>),
    /// Status 200, a Content-Length for the whole body, then only its first
    /// half, then the connection closes.
    Truncated(Value),
    /// Close the connection without answering.
    Drop,
    /// An OpenAI SSE stream of these chunks, then `[DONE]`.
    Sse(Vec<Value>),
    /// An Ollama NDJSON stream of these objects.
    Ndjson(Vec<Value>),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// e.g. `POST /v1/chat/completions`.
    pub line: String,
    /// Header lines, lower-cased names.
    pub headers: Vec<(String, String)>,
    /// The JSON body (or `Null`).
    pub body: Value,
}

/// The running server.
pub struct FakeServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    catalogue: Arc<Mutex<Option<(u16, Value)>>>,
    window: Arc<Mutex<Option<Window>>>,
}

/// A context window the server honours (see [`FakeServer::with_window`]).
#[derive(Debug, Clone)]
struct Window {
    tokens: u64,
    /// Whether `/props` states it (else it is learnt from a refusal).
    stated: bool,
    /// The answer to a summary request (a system prompt starting "You
    /// condense"), given without taking a scripted reply.
    summary: String,
}

/// The server's own token count of a request: one token per three
/// characters of its messages' and tools' JSON (a tokenizer unlike
/// tiktoken, as a real server's is).
pub fn server_tokens(body: &Value) -> u64 {
    let chars =
        body["messages"].to_string().len() + body.get("tools").map_or(0, |t| t.to_string().len());
    chars.div_ceil(3) as u64
}

impl FakeServer {
    /// Starts a server that plays `script` in order (then answers 500).
    pub fn start(script: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let catalogue = Arc::new(Mutex::new(None));
        let window = Arc::new(Mutex::new(None));
        let (s, r, c, w) = (
            script.clone(),
            requests.clone(),
            catalogue.clone(),
            window.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (s, r, c, w) = (s.clone(), r.clone(), c.clone(), w.clone());
                std::thread::spawn(move || serve(stream, &s, &r, &c, &w));
            }
        });
        FakeServer {
            url,
            script,
            requests,
            catalogue,
            window,
        }
    }

    /// Honours a context window of `tokens` ([`server_tokens`]) as
    /// llama-server does: `/props` states it, a longer request is refused
    /// with llama-server's 400 (recorded, taking no scripted reply), and
    /// every answer reports the request's size as its `prompt_tokens`.
    /// Summary requests are answered with `summary`.
    pub fn with_window(self, tokens: u64, summary: &str) -> FakeServer {
        *self.window.lock().unwrap() = Some(Window {
            tokens,
            stated: true,
            summary: summary.to_string(),
        });
        self
    }

    /// Like [`FakeServer::with_window`], with `/props` answering 404: the
    /// window is learnt from the first refusal.
    pub fn with_unstated_window(self, tokens: u64, summary: &str) -> FakeServer {
        *self.window.lock().unwrap() = Some(Window {
            tokens,
            stated: false,
            summary: summary.to_string(),
        });
        self
    }

    /// Answers the model catalogue (`GET …/models`, `GET /api/tags`) with
    /// `status` and `body`; without one it answers 404. Catalogue requests
    /// never take a scripted reply and are not recorded.
    pub fn with_catalogue(self, status: u16, body: Value) -> FakeServer {
        *self.catalogue.lock().unwrap() = Some((status, body));
        self
    }

    /// Requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

fn serve(
    mut stream: TcpStream,
    script: &Mutex<VecDeque<Reply>>,
    requests: &Mutex<Vec<Recorded>>,
    catalogue: &Mutex<Option<(u16, Value)>>,
    window: &Mutex<Option<Window>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim().split_once(':') {
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
            if k == "content-length" {
                length = v.parse().unwrap_or(0);
            }
            headers.push((k, v));
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    if line.starts_with("GET ") && (path.ends_with("/models") || path.ends_with("/api/tags")) {
        let reply = match catalogue.lock().unwrap().clone() {
            Some((status, body)) => Reply::Json(status, body),
            None => Reply::Text(404, "no catalogue".into()),
        };
        answer(&mut stream, reply);
        return;
    }
    let window = window.lock().unwrap().clone();
    // Other GETs (llama-server's /props) are not scripted either.
    if line.starts_with("GET ") {
        let reply = match (&window, path.ends_with("/props")) {
            (Some(w), true) if w.stated => Reply::Json(
                200,
                serde_json::json!({ "default_generation_settings": { "n_ctx": w.tokens } }),
            ),
            _ => Reply::Text(404, "not found".into()),
        };
        answer(&mut stream, reply);
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    requests.lock().unwrap().push(Recorded {
        line: line.trim().to_string(),
        headers,
        body: body.clone(),
    });
    if let Some(w) = &window {
        let size = server_tokens(&body);
        if size > w.tokens {
            let refusal = serde_json::json!({"error": {"code": 400, "message": format!("request ({size} tokens) exceeds the available context size ({} tokens), try increasing it", w.tokens), "type": "exceed_context_size_error", "n_prompt_tokens": size, "n_ctx": w.tokens}});
            answer(&mut stream, Reply::Json(400, refusal));
            return;
        }
        let system = body["messages"][0]["content"].as_str().unwrap_or("");
        if system.starts_with("You condense") {
            let reply = if body["stream"] == true {
                sse_text(&w.summary)
            } else {
                let mut reply =
                    openai_answer(serde_json::json!({"role": "assistant", "content": w.summary}));
                reply["usage"]["prompt_tokens"] = serde_json::json!(size);
                Reply::Json(200, reply)
            };
            answer(&mut stream, reply);
            return;
        }
    }
    let mut reply = script
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| Reply::Text(500, "the script is exhausted".into()));
    if window.is_some() {
        let size = server_tokens(&body);
        match &mut reply {
            Reply::Json(200, value) if value.get("usage").is_some() => {
                value["usage"]["prompt_tokens"] = serde_json::json!(size);
            }
            Reply::Sse(chunks) => chunks.push(serde_json::json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [], "usage": {"prompt_tokens": size, "completion_tokens": 10, "total_tokens": size + 10}})),
            _ => {}
        }
    }
    answer(&mut stream, reply);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn answer(stream: &mut TcpStream, reply: Reply) {
    let head = |status: u16, kind: &str, len: usize| {
        format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: {kind}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n",
            reason(status)
        )
    };
    match reply {
        Reply::Json(status, v) => {
            let body = v.to_string();
            let _ =
                stream.write_all((head(status, "application/json", body.len()) + &body).as_bytes());
        }
        Reply::Text(status, body) => {
            let _ = stream.write_all((head(status, "text/plain", body.len()) + &body).as_bytes());
        }
        Reply::Slow(wait, inner) => {
            std::thread::sleep(wait);
            answer(stream, *inner);
        }
        Reply::Truncated(v) => {
            let body = v.to_string();
            let half = &body[..body.len() / 2];
            let _ = stream.write_all((head(200, "application/json", body.len()) + half).as_bytes());
            let _ = stream.flush();
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Reply::Drop => {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
        Reply::Sse(chunks) => {
            let mut body = String::new();
            for c in chunks {
                body.push_str(&format!("data: {c}\n\n"));
            }
            body.push_str("data: [DONE]\n\n");
            let _ =
                stream.write_all((head(200, "text/event-stream", body.len()) + &body).as_bytes());
        }
        Reply::Ndjson(lines) => {
            let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let _ = stream
                .write_all((head(200, "application/x-ndjson", body.len()) + &body).as_bytes());
        }
    }
    let _ = stream.flush();
}

/// An OpenAI chat completion carrying `message`.
pub fn openai_answer(message: Value) -> Value {
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{ "index": 0, "message": message, "finish_reason": "stop" }],
        "usage": { "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120 }
    })
}

/// An OpenAI assistant message calling `execute_python(code)`.
pub fn openai_code(id: &str, code: &str) -> Value {
    openai_answer(json!({
        "role": "assistant", "content": null,
        "tool_calls": [{ "id": id, "type": "function", "function": { "name": "execute_python", "arguments": json!({ "code": code }).to_string() } }]
    }))
}

/// An OpenAI stream of one assistant message calling
/// `execute_python(code)`.
pub fn sse_code(id: &str, code: &str) -> Reply {
    let arguments = json!({ "code": code }).to_string();
    Reply::Sse(vec![
        json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": "execute_python", "arguments": arguments}}]}, "finish_reason": null}]}),
        json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])
}

/// An OpenAI stream of one assistant message saying `text`.
pub fn sse_text(text: &str) -> Reply {
    Reply::Sse(vec![
        json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"id": "s", "object": "chat.completion.chunk", "created": 0, "model": "fake", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ])
}

/// An Ollama `/api/chat` answer carrying `message`.
pub fn ollama_answer(message: Value) -> Value {
    json!({
        "model": "fake", "created_at": "2026-11-22T00:00:00Z", "message": message, "done": true,
        "total_duration": 1, "load_duration": 1, "prompt_eval_count": 90, "prompt_eval_duration": 1,
        "eval_count": 15, "eval_duration": 1
    })
}

/// An Ollama assistant message calling `execute_python(code)` (arguments
/// as an object, as Ollama sends them).
pub fn ollama_code(code: &str) -> Value {
    ollama_answer(json!({
        "role": "assistant", "content": "",
        "tool_calls": [{ "function": { "name": "execute_python", "arguments": { "code": code } } }]
    }))
}
