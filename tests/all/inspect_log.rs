//! gisclaw's evals as inspect_ai eval logs, read back by inspect_ai's own
//! `read_eval_log` and `list_eval_logs` (inspect_ai 0.3.285 in
//! target/inspect-venv, made by `make test` from tests/inspect/): every
//! sample, its messages and tool calls, its scores and usage round-trip,
//! for a replay-gold eval of two architectures and for a live, priced
//! model behind a scripted OpenAI-protocol server; and `inspect view`
//! serves the folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::fake_llm::{openai_answer, FakeServer, Reply};
use crate::common::{example_messages, example_suite, gisclaw, read_json, text};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn inspect_python() -> PathBuf {
    let python = repo().join("target/inspect-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `bash tests/inspect/venv.sh` (make test does)",
        python.display()
    );
    python
}

/// What inspect_ai read from the logs in `dir` (tests/inspect/read_logs.py).
fn read_logs(dir: &Path) -> Value {
    let out = Command::new(inspect_python())
        .arg(repo().join("tests/inspect/read_logs.py"))
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The transcript's tool-call ids and tool-result ids, in order.
fn transcript_calls(path: &Path) -> (Vec<String>, Vec<String>) {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for line in crate::common::records::checked(path).lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["event"] == "message" && e["message"]["role"] == "assistant" {
            for c in e["message"]["tool_calls"].as_array().into_iter().flatten() {
                calls.push(c["id"].as_str().unwrap().to_string());
            }
        }
        if e["event"] == "tool" {
            results.push(e["call_id"].as_str().unwrap().to_string());
        }
    }
    (calls, results)
}

#[test]
fn a_replay_gold_eval_round_trips_through_inspect_ais_reader_with_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval");
    let suite = repo().join("benchmarks/geoanalyst");
    let o = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--tasks",
            "T08,T17",
            "--arch",
            "both",
            "--runs",
            "2",
            "--replay-gold",
            "-j",
            "2",
            "--inspect-log",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("`inspect view --log-dir"), "{}", text(&o));
    let read = read_logs(&out.join("inspect"));
    let logs = read["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 2, "one log per architecture");
    assert_eq!(
        read["listed"].as_array().unwrap().len(),
        2,
        "list_eval_logs finds both"
    );
    let results = read_json(&out.join("results.json"));
    let runs = results["runs"].as_array().unwrap();
    for log in logs {
        let arch = log["solver"]
            .as_str()
            .unwrap()
            .trim_start_matches("gisclaw/");
        assert_eq!(log["version"], 2);
        assert_eq!(log["status"], "success");
        assert_eq!(log["task"], "gisclaw/geoanalyst");
        assert_eq!(log["model"], "gisclaw/replay");
        assert_eq!(log["epochs"], 2);
        assert_eq!(log["sample_ids"], serde_json::json!(["T08", "T17"]));
        assert_eq!(
            (
                log["total_samples"].as_u64(),
                log["completed_samples"].as_u64()
            ),
            (Some(4), Some(4))
        );
        assert_eq!(log["provenance"], true);
        let samples = log["samples"].as_array().unwrap();
        assert_eq!(samples.len(), 4, "every run of {arch} is a sample");
        let mut tokens = (0, 0);
        for s in samples {
            let (task, epoch) = (s["id"].as_str().unwrap(), s["epoch"].as_u64().unwrap());
            let run = runs
                .iter()
                .find(|r| r["task"] == task && r["arch"] == arch && r["run"] == epoch)
                .unwrap();
            // Scores: the record's and the report's composite.
            assert_eq!(
                s["scores"]["success"],
                if run["success"] == true { 1.0 } else { 0.0 }
            );
            assert!(
                (s["scores"]["composite"].as_f64().unwrap() - run["composite"].as_f64().unwrap())
                    .abs()
                    < 1e-12
            );
            assert_eq!(s["scores"]["q_out"], run["q_out"]);
            assert_eq!(s["scores"]["f_api"], run["code"]["api"]["f1"]);
            assert_eq!(s["explanation"], run["reason"]);
            // Usage.
            let usage = &s["usage"]["gisclaw/replay"];
            assert_eq!(
                (usage["input"].as_u64(), usage["output"].as_u64()),
                (run["tokens_in"].as_u64(), run["tokens_out"].as_u64())
            );
            assert_eq!(usage["cost"], 0.0);
            tokens.0 += usage["input"].as_u64().unwrap();
            tokens.1 += usage["output"].as_u64().unwrap();
            // The conversation: the system prompt and the task first, every
            // tool call and result in the transcript's order.
            let roles: Vec<&str> = s["roles"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            assert_eq!(&roles[..2], ["system", "user"], "{arch} {task}");
            assert!(s["input"]
                .as_str()
                .unwrap()
                .starts_with(&format!("# Task {task}")));
            let transcript = out.join(format!("runs/{task}/{arch}-{epoch}/transcript.jsonl"));
            let (calls, results) = transcript_calls(&transcript);
            assert_eq!(s["tool_calls"], serde_json::json!(calls));
            assert_eq!(s["tool_results"], serde_json::json!(results));
            let functions = s["functions"].as_array().unwrap();
            assert!(functions.iter().any(|f| f == "execute_python"));
            if arch == "single" {
                assert_eq!(functions.last().unwrap(), "finish");
                assert!(s["first_call_arguments"]["code"].is_string());
            }
        }
        let total = &log["usage"]["gisclaw/replay"];
        assert_eq!(
            (total["input"].as_u64(), total["output"].as_u64()),
            (Some(tokens.0), Some(tokens.1))
        );
        let cell = results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["arch"] == arch)
            .unwrap();
        assert_eq!(log["results"]["success"]["accuracy"], cell["success_rate"]);
        assert!(
            (log["results"]["composite"]["mean"].as_f64().unwrap()
                - cell["composite"].as_f64().unwrap())
            .abs()
                < 1e-12
        );
    }
    // `inspect view` serves the folder: its API lists both logs and returns one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let view = Command::new(repo().join("target/inspect-venv/bin/inspect"))
        .args([
            "view",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--log-dir",
        ])
        .arg(out.join("inspect"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _view = KillOnDrop(view);
    let started = Instant::now();
    let listing = loop {
        if let Ok(body) = http_get(port, "/api/log-files") {
            break body;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "inspect view did not answer"
        );
        std::thread::sleep(Duration::from_millis(300));
    };
    let listing: Value = serde_json::from_str(&listing).unwrap();
    assert_eq!(listing["files"].as_array().unwrap().len(), 2, "{listing:#}");
}

/// A child process killed (and reaped) when the test ends, passing or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A plain HTTP/1.0 GET on 127.0.0.1:`port`: the body of a 200 answer.
fn http_get(port: u16, path: &str) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").ok_or("no body")?;
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        return Err(head.lines().next().unwrap_or_default().to_string());
    }
    Ok(body.to_string())
}

#[test]
fn a_priced_live_models_usage_and_cost_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let suite = example_suite(dir.path());
    let replies: Vec<Reply> = example_messages()
        .into_iter()
        .map(|m| Reply::Json(200, openai_answer(m)))
        .collect();
    let server = FakeServer::start(replies);
    let base = format!("{}/v1", server.url);
    let out = dir.path().join("eval");
    let o = gisclaw(
        &[
            "eval",
            "--suite",
            suite.to_str().unwrap(),
            "--backend",
            "openai",
            "--model",
            "gpt-4o-mini",
            "--base-url",
            &base,
            "--runs",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[("OPENAI_API_KEY", "sk-inspect-export-secret")],
    );
    assert!(o.status.success(), "{}", text(&o));
    // The export as its own command, into a folder of one's choosing.
    let logs = dir.path().join("logs");
    let o = gisclaw(
        &[
            "eval",
            "export-inspect",
            out.to_str().unwrap(),
            "--out",
            logs.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    for entry in std::fs::read_dir(&logs).unwrap() {
        let body = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(
            !body.contains("sk-inspect-export-secret"),
            "the key stays out"
        );
    }
    let read = read_logs(&logs);
    let log = &read["logs"][0];
    assert_eq!(log["model"], "openai-api/gpt-4o-mini");
    let sample = &log["samples"][0];
    let usage = &sample["usage"]["openai-api/gpt-4o-mini"];
    // Six answers of 100 prompt and 20 completion tokens at $0.15/$0.60 per million.
    assert_eq!(
        (
            usage["input"].as_u64(),
            usage["output"].as_u64(),
            usage["total"].as_u64()
        ),
        (Some(600), Some(120), Some(720))
    );
    assert!(
        (usage["cost"].as_f64().unwrap() - 0.000162).abs() < 1e-12,
        "{usage:#}"
    );
    assert!(
        (log["usage"]["openai-api/gpt-4o-mini"]["cost"]
            .as_f64()
            .unwrap()
            - 0.000162)
            .abs()
            < 1e-12
    );
    assert_eq!(sample["scores"]["success"], 1.0);
    assert!(sample["total_time"].as_f64().unwrap() > 0.0);
}
