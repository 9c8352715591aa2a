//! Runtime overhead per agent step with the replay backend: the time of one
//! round (model call, adapters, tool dispatch, sandbox round trip,
//! transcript) minus the time the cell spent inside the worker. Measured in
//! one run on the example's recorded session and on a replay of trivially
//! small cells, with the prompt tokens per step of the example.
//!
//! Run with `make bench`. Goal: median overhead ≤ 5 ms per step.

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
        ms(median(trivial))
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
