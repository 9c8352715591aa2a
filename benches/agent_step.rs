//! Runtime overhead per agent step with the replay backend: the time of one
//! round (model call, adapters, tool dispatch, sandbox round trip,
//! transcript) minus the time the cell spent inside the worker. Measured in
//! one run on the example's recorded session and on a replay of trivially
//! small cells, with the prompt tokens per step of the example.
//!
//! Beside it, the same trivial rounds through a ReAct loop written the
//! straightforward way in Python, as the Python agent implementations do
//! (in-process `exec` with captured stdout, the request serialised with its
//! tool schemas each round, one flushed transcript line per event), run in
//! the same process: the ratio of the two per-round overheads.
//!
//! Also measured: a bare Unix-socket round trip to another process, the
//! floor under any cell that runs outside the agent's process.
//!
//! Run with `make bench`. Goals: median overhead ≤ 5 ms per step on the
//! example; trivial rounds ≤ 0.5× the Python loop's.

use std::path::Path;
use std::time::{Duration, Instant};

use gisclaw::agent::memory::ErrorMemory;
use gisclaw::agent::plan::DualLimits;
use gisclaw::agent::run::{run_task, Arch, RunOptions};
use gisclaw::agent::single::AgentLimits;
use gisclaw::llm::replay::ReplayBackend;
use gisclaw::llm::{ChatBackend, ChatResponse, LlmError, Message, ToolSpec};
use gisclaw::sandbox::{SandboxConfig, Zygote};
use gisclaw::task::Task;
use serde_json::{json, Value};

/// Wraps a backend and notes when each call starts.
struct Timed<B> {
    inner: B,
    calls: Vec<Instant>,
}

impl<B: ChatBackend> ChatBackend for Timed<B> {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        self.calls.push(Instant::now());
        self.inner.chat(messages, tools)
    }
}

/// Per-round overheads (round time minus in-worker cell time) and the
/// transcript's events.
fn measure(
    zygote: &std::sync::Arc<Zygote>,
    task_file: &Path,
    replay: &Path,
    out: &Path,
) -> (Vec<Duration>, Vec<Value>) {
    let loaded = Task::load(task_file).expect("task loads");
    let mut backend = Timed {
        inner: ReplayBackend::open(replay).expect("replay"),
        calls: Vec::new(),
    };
    let options = RunOptions {
        arch: Arch::Single,
        include_workflow: true,
        hints: Vec::new(),
        limits: AgentLimits::default(),
        dual: DualLimits::default(),
        mcts: gisclaw::agent::mcts::MctsLimits::default(),
        sandbox: zygote.config().clone(),
        docs: None,
        output_checks: true,
        vision_feedback: true,
        notebook: gisclaw::notebook::NotebookMode::Off,
    };
    let mut memory = ErrorMemory::in_memory();
    run_task(
        zygote,
        &loaded,
        &mut backend,
        &mut memory,
        out,
        &options,
        &mut |_| {},
    )
    .expect("run");
    let transcript_path = out.join("transcript.jsonl");
    let end = Instant::now();
    let events: Vec<Value> = std::fs::read_to_string(&transcript_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let cell_us: Vec<u64> = events
        .iter()
        .filter(|e| e["event"] == "tool")
        .map(|e| e["cell_us"].as_u64().unwrap_or(0))
        .collect();
    let mut bounds = backend.calls.clone();
    bounds.push(end);
    let overheads = bounds
        .windows(2)
        .zip(cell_us)
        .map(|(w, cell)| (w[1] - w[0]).saturating_sub(Duration::from_micros(cell)))
        .collect();
    (overheads, events)
}

/// The straightforward Python ReAct loop over `rounds` replies that each
/// run `x = 1`: per round, the request (messages and tool schemas) is
/// serialised as a client would send it, the reply appended, the cell
/// `exec`'d with stdout captured, the observation appended, and the
/// events written to a transcript, flushed. Prints each round's overhead
/// (round time minus `exec` time) in microseconds.
const PYTHON_LOOP: &str = r#"
import contextlib, io, json, sys, time
tools = json.loads(sys.argv[1]); rounds = int(sys.argv[2]); out = sys.argv[3]
messages = [{"role": "system", "content": "You are a GIS analyst." * 40},
            {"role": "user", "content": "Task." * 100}]
reply = {"role": "assistant", "content": "step", "tool_calls": [{"id": "c", "type": "function",
         "function": {"name": "execute_python", "arguments": json.dumps({"code": "x = 1"})}}]}
namespace = {}
overheads = []
with open(out, "w") as transcript:
    for r in range(rounds):
        start = time.perf_counter()
        request = json.dumps({"model": "m", "messages": messages, "tools": tools})
        message = json.loads(json.dumps(reply))
        messages.append(message)
        transcript.write(json.dumps({"event": "message", "round": r, "message": message}) + "\n"); transcript.flush()
        code = json.loads(message["tool_calls"][0]["function"]["arguments"])["code"]
        buffer = io.StringIO()
        cell = time.perf_counter()
        with contextlib.redirect_stdout(buffer):
            try:
                exec(compile(code, "<cell>", "exec"), namespace)
                error = None
            except Exception as e:
                error = repr(e)
        cell = time.perf_counter() - cell
        observation = buffer.getvalue()[-4000:] or "(no output)"
        if error:
            observation += "\n" + error
        messages.append({"role": "tool", "tool_call_id": "c", "content": observation})
        transcript.write(json.dumps({"event": "tool", "round": r, "observation": observation}) + "\n"); transcript.flush()
        overheads.append((time.perf_counter() - start - cell) * 1e6)
print(json.dumps(overheads))
"#;

/// The Python loop's per-round overheads over `rounds` trivial rounds.
fn python_loop(python: &Path, rounds: usize, out: &Path) -> Vec<Duration> {
    let tools = serde_json::to_string(&gisclaw::agent::tools::specs()).unwrap();
    let output = std::process::Command::new(python)
        .args(["-c", PYTHON_LOOP, &tools, &rounds.to_string()])
        .arg(out)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let us: Vec<f64> = serde_json::from_slice(&output.stdout).expect("overheads");
    us.into_iter()
        .map(|u| Duration::from_secs_f64(u / 1e6))
        .collect()
}

/// The median time of a one-byte request and its one-byte answer over a
/// Unix socket to a forked child that only echoes: the floor under any
/// cell run in another process, whatever either side does.
fn socket_round_trip() -> Duration {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    let (mut ours, mut theirs) = UnixStream::pair().expect("a socket pair");
    // SAFETY: the child only reads, writes and exits (no allocation, no
    // lock another thread may hold).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        drop(ours);
        let mut byte = [0u8; 1];
        while let Ok(1) = theirs.read(&mut byte) {
            if theirs.write_all(&byte).is_err() {
                break;
            }
        }
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(0) };
    }
    drop(theirs);
    let mut byte = [0u8; 1];
    let times = (0..2000)
        .map(|_| {
            let start = Instant::now();
            ours.write_all(b"x").expect("the echo child reads");
            ours.read_exact(&mut byte).expect("the echo child answers");
            start.elapsed()
        })
        .collect();
    drop(ours);
    // SAFETY: reaps the child, which ends when its socket closes.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    median(times)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let zygote = Zygote::start(SandboxConfig::default()).expect("zygote");
    let dir = tempfile::tempdir().unwrap();

    let example = root.join("examples/heat_island");
    let (reference, events) = measure(
        &zygote,
        &example.join("task.yaml"),
        &example.join("replay.jsonl"),
        &dir.path().join("ref"),
    );

    let trivial_replay = dir.path().join("trivial.jsonl");
    let line = json!({"role": "assistant", "content": "step", "tool_calls": [
        {"type": "function", "function": {"name": "execute_python", "arguments": json!({"code": "x = 1"}).to_string()}}
    ]});
    std::fs::write(
        &trivial_replay,
        (0..40)
            .map(|_| line.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let (trivial, _) = measure(
        &zygote,
        &example.join("task.yaml"),
        &trivial_replay,
        &dir.path().join("trivial"),
    );

    // The sandbox's share of a trivial round: one `Session::execute` of the
    // same cell, its wall time minus the time inside the cell.
    let mut session = gisclaw::sandbox::Session::open(&zygote, &dir.path().join("direct"))
        .expect("session opens");
    let round_trip = median(
        (0..40)
            .map(|_| {
                let outcome = session.execute("x = 1").expect("cell runs");
                outcome
                    .wall
                    .saturating_sub(Duration::from_micros(outcome.result.duration_us))
            })
            .collect(),
    );
    drop(session);

    let floor = socket_round_trip();

    let python = python_loop(
        &zygote.config().venv.join("bin/python"),
        40,
        &dir.path().join("python-transcript.jsonl"),
    );

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("agent step overhead (round time minus time inside the cell; medians)");
    println!(
        "  example replay ({} rounds)            {:>7.2} ms",
        reference.len(),
        ms(median(reference.clone()))
    );
    println!(
        "  trivial cells  ({} rounds)            {:>7.2} ms",
        trivial.len(),
        ms(median(trivial.clone()))
    );
    println!(
        "    of which the sandbox round trip (Session::execute) {:>7.2} ms",
        ms(round_trip)
    );
    println!(
        "  the same rounds, straightforward Python loop {:>7.2} ms",
        ms(median(python.clone()))
    );
    println!(
        "  a bare Unix-socket round trip to another process (no work) {:>7.3} ms",
        ms(floor)
    );
    let ratio = median(trivial).as_secs_f64() / median(python.clone()).as_secs_f64();
    println!(
        "  ratio trivial / Python = {ratio:.2}  (goal <= 0.5: {})",
        if ratio <= 0.5 { "met" } else { "NOT met" }
    );
    println!(
        "  the goal's budget, 0.5 × the Python loop = {:.3} ms, against that bare round trip alone {:.3} ms",
        ms(median(python)) * 0.5,
        ms(floor)
    );
    println!(
        "  goal <= 5 ms: {}",
        if median(reference) <= Duration::from_millis(5) {
            "met"
        } else {
            "NOT met"
        }
    );

    // Prompt tokens per step of the reference transcript (tiktoken o200k_base).
    println!("prompt tokens per step (example transcript; tiktoken o200k_base)");
    for e in events
        .iter()
        .filter(|e| e["event"] == "message" && e["message"]["role"] == "assistant")
    {
        println!(
            "  round {:>2}: {:>6} prompt tokens",
            e["round"], e["usage"]["prompt_tokens"]
        );
    }
    let system = events
        .iter()
        .find(|e| e["event"] == "message" && e["message"]["role"] == "system");
    let user = events
        .iter()
        .find(|e| e["event"] == "message" && e["message"]["role"] == "user");
    let tokens = |e: Option<&Value>| {
        gisclaw::llm::tokens::count(
            e.and_then(|e| e["message"]["content"].as_str())
                .unwrap_or(""),
        )
    };
    println!(
        "  of which system prompt {} and task prompt (with the schema card) {}",
        tokens(system),
        tokens(user)
    );
}
