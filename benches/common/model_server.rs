//! A scripted OpenAI-protocol model server on 127.0.0.1 for the agent-step
//! bench: `POST …/chat/completions` takes the next queued answer, over a
//! kept-alive HTTP/1.1 connection as real servers keep them; `POST /queue`
//! with a JSON list of assistant messages queues them (how the Python
//! reference hands the server its replies). It does no other work, so both
//! agents measured against it pay the same small price for it (reported by
//! [`ModelServer::bare_exchange`]).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Answers waiting for their request, as whole HTTP responses.
type Queue = Mutex<VecDeque<Vec<u8>>>;

/// The running server; it lives as long as the process.
pub struct ModelServer {
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// `127.0.0.1:PORT`.
    address: String,
    queue: Arc<Queue>,
}

impl ModelServer {
    /// Starts the server with an empty queue.
    pub fn start() -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let address = listener.local_addr().expect("its address").to_string();
        let queue = Arc::new(Queue::default());
        let shared = queue.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let queue = shared.clone();
                std::thread::spawn(move || serve(stream, &queue));
            }
        });
        ModelServer {
            base_url: format!("http://{address}/v1"),
            address,
            queue,
        }
    }

    /// Queues one chat completion per assistant message, answered in order.
    pub fn answer_with(&self, messages: &[Value]) {
        queue_answers(&self.queue, messages);
    }

    /// The median time of a bare exchange with this server (a small request
    /// over a kept-alive connection and its queued answer, read by hand):
    /// what any client pays here before doing any work of its own.
    pub fn bare_exchange(&self) -> Duration {
        let reply = json!({"role": "assistant", "content": "x"});
        let mut stream = TcpStream::connect(&self.address).expect("the server answers");
        stream.set_nodelay(true).expect("no delay");
        let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
        let body = r#"{"model":"bench","messages":[]}"#;
        let request = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let mut times: Vec<Duration> = (0..500)
            .map(|_| {
                self.answer_with(std::slice::from_ref(&reply));
                let start = Instant::now();
                stream.write_all(request.as_bytes()).expect("sent");
                let (_, length) = read_head(&mut reader).expect("an answer");
                let mut answer = vec![0; length];
                reader.read_exact(&mut answer).expect("its body");
                start.elapsed()
            })
            .collect();
        times.sort();
        times[times.len() / 2]
    }
}

/// Queues one chat completion per message, with the usage a server reports.
fn queue_answers(queue: &Queue, messages: &[Value]) {
    let Ok(mut queue) = queue.lock() else {
        return;
    };
    for message in messages {
        let body = json!({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 2000, "completion_tokens": 100, "total_tokens": 2100},
        })
        .to_string();
        queue.push_back(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        );
    }
}

/// Answers the requests of one connection until the client closes it.
fn serve(stream: TcpStream, queue: &Queue) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some((target, length)) = read_head(&mut reader) {
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        // What a client asks besides chats (llama-server's `/props`, the
        // model list) is not a queued answer.
        let answer = if target == "/props" || target.ends_with("/models") {
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found".to_vec()
        } else if target == "/queue" {
            let messages: Vec<Value> = serde_json::from_slice(&body).unwrap_or_default();
            queue_answers(queue, &messages);
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}".to_vec()
        } else {
            let next = queue.lock().ok().and_then(|mut q| q.pop_front());
            next.unwrap_or_else(|| {
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 20\r\n\r\nno answer is queued."
                    .to_vec()
            })
        };
        if writer.write_all(&answer).is_err() {
            return;
        }
    }
}

/// Reads a request's or answer's head: the target of its first line and its
/// Content-Length, or `None` at the end of the connection.
fn read_head(reader: &mut BufReader<TcpStream>) -> Option<(String, usize)> {
    let mut first = String::new();
    while first.trim().is_empty() {
        first.clear();
        if reader.read_line(&mut first).ok()? == 0 {
            return None;
        }
    }
    let target = first.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut length = 0;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let trimmed = line.trim();
        if trimmed.is_empty() {
            return Some((target, length));
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok()?;
            }
        }
    }
}
