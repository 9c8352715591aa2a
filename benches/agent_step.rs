//! Runtime overhead per agent step with the replay backend: the time of one
//! round (model call, adapters, tool dispatch, sandbox round trip,
//! transcript) minus the time the cell spent inside the worker. Measured on
//! the example's recorded session (the first run in the process, then five
//! more pooled) and on three replays of 40 trivially small cells, with the prompt
//! tokens per step of the example. The last
//! round ends with its tool's result; what the run does after it (writing
//! `solution.py` and `run.json`, closing the session) is printed apart.
//!
//! Two Python baselines run the same replies in the same process:
//! - the per-round work of the GISclaw paper's public Python agent
//!   (`agent_step_reference.py`: the conversation flattened into one
//!   prompt, the reply parsed from text, the cell run in a thread of the
//!   agent's process with routed output, new variables described), on the
//!   example and on the trivial rounds: the issue's reference;
//! - a leaner loop written the straightforward way (in-process `exec` with
//!   captured stdout, the request serialised with its tool schemas each
//!   round, one flushed transcript line per event; no variable report, no
//!   way to stop a runaway cell), on the trivial rounds: a floor.
//!
//! Also measured: a bare Unix-socket round trip to another process, the
//! floor under any cell that runs outside the agent's process.
//!
//! Then both agents once more with their model clients, as a real round
//! has them: a scripted OpenAI-protocol server on 127.0.0.1
//! (`common/model_server.rs`) answers with the replayed replies; gisclaw
//! asks it through its OpenAI-compatible backend, the reference through
//! the OpenAI Python SDK that agent uses (installed by `make bench` from
//! `benches/client/requirements.lock`; without it this part says so and is
//! skipped).
//!
//! Run with `make bench`. Goals: median overhead ≤ 5 ms per step on the
//! example; ≤ 0.5× the reference's per-round overhead.

mod common;
#[path = "common/model_server.rs"]
mod model_server;

use std::path::Path;
use std::time::{Duration, Instant};

use gisclaw::agent::events::AgentEvent;
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
struct Timed {
    inner: Box<dyn ChatBackend>,
    calls: Vec<Instant>,
}

impl ChatBackend for Timed {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        self.calls.push(Instant::now());
        self.inner.chat(messages, tools)
    }
}

/// One replayed run: per-round overheads (round time minus in-worker cell
/// time; the last round ends at its tool's result), the time from that
/// result to the run's end, and the transcript's events.
struct Measured {
    rounds: Vec<Duration>,
    end_of_run: Duration,
    events: Vec<Value>,
}

fn measure(
    zygote: &std::sync::Arc<Zygote>,
    task_file: &Path,
    model: Box<dyn ChatBackend>,
    out: &Path,
    output_checks: bool,
) -> Measured {
    let loaded = Task::load(task_file).expect("task loads");
    let mut backend = Timed {
        inner: model,
        calls: Vec::new(),
    };
    let options = RunOptions {
        arch: Arch::Single,
        include_workflow: true,
        include_domain_knowledge: true,
        protocol: gisclaw::protocol::Protocol::Ours,
        hints: Vec::new(),
        limits: AgentLimits::default(),
        dual: DualLimits::default(),
        mcts: gisclaw::agent::mcts::MctsLimits::default(),
        sandbox: zygote.config().clone(),
        docs: None,
        solutions: None,
        output_checks,
        vision_feedback: true,
        notebook: gisclaw::notebook::NotebookMode::Off,
        reproduce: None,
        live_output: None,
    };
    let mut memory = ErrorMemory::in_memory();
    let mut results = Vec::new();
    run_task(
        zygote,
        &loaded,
        &mut backend,
        &mut memory,
        out,
        &options,
        &mut |event| {
            if let AgentEvent::Observation { .. } = event {
                results.push(Instant::now());
            }
        },
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
    let last = *results.last().expect("the run's last round has a result");
    let mut bounds = backend.calls.clone();
    bounds.push(last);
    let rounds = bounds
        .windows(2)
        .zip(cell_us)
        .map(|(w, cell)| (w[1] - w[0]).saturating_sub(Duration::from_micros(cell)))
        .collect();
    Measured {
        rounds,
        end_of_run: end - last,
        events,
    }
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
    let mut command = std::process::Command::new(python);
    command
        .args(["-c", PYTHON_LOOP, &tools, &rounds.to_string()])
        .arg(out);
    micros(python_answer(command))
}

/// The reference's per-round overheads (`agent_step_reference.py`) over
/// the replies of `replay`, replayed `runs` times in one Python process
/// (one list per run), its cells run with the example's data and the helper
/// module `tools/gisclaw_tools.py` (for `save_raster`).
fn reference_loop(
    python: &Path,
    root: &Path,
    replay: &Path,
    work: &Path,
    runs: usize,
    client: Option<&Client>,
) -> Vec<Vec<Duration>> {
    std::fs::create_dir_all(work).expect("a work folder");
    let mut command = std::process::Command::new(python);
    if let Some(client) = client {
        command
            .env("REFERENCE_MODEL_URL", &client.server.base_url)
            .env("REFERENCE_CLIENT_PATH", &client.sdk);
    }
    command
        .arg(root.join("benches/agent_step_reference.py"))
        .arg(replay)
        .arg(root.join("examples/heat_island/data"))
        .arg(work)
        .arg(root.join("tools"))
        .arg(runs.to_string());
    let runs: Vec<Vec<f64>> = python_answer(command);
    runs.into_iter().map(micros).collect()
}

/// Both agents with their model clients: the scripted server they ask, and
/// the OpenAI Python SDK the reference asks it with.
struct Client {
    server: model_server::ModelServer,
    /// `target/bench-openai` (benches/client/install.sh).
    sdk: std::path::PathBuf,
}

impl Client {
    /// The server and the SDK, when `make bench` installed the SDK.
    fn start(root: &Path) -> Option<Client> {
        let sdk = root.join("target/bench-openai");
        sdk.join(".gisclaw-stamp").exists().then(|| Client {
            server: model_server::ModelServer::start(),
            sdk,
        })
    }

    /// gisclaw's OpenAI-compatible backend for the server, as a profile
    /// would configure it (the reference's sampling settings).
    fn backend(&self) -> Box<dyn ChatBackend> {
        let config = gisclaw::llm::config::LiveConfig {
            name: "bench".into(),
            kind: gisclaw::llm::config::BackendKind::Openai,
            base_url: self.server.base_url.clone(),
            model: "bench".into(),
            api_key: Some("bench".into()),
            tool_mode: gisclaw::llm::config::ToolMode::Auto,
            temperature: Some(0.1),
            top_p: None,
            max_tokens: Some(2048),
            timeout: Duration::from_secs(60),
            retry: gisclaw::llm::retry::RetryPolicy::default(),
            num_ctx: 8192,
            context_window: None,
            think: None,
            extra_body: serde_json::Map::new(),
            vision: gisclaw::llm::vision::Vision::Off,
            price: None,
            local: None,
            server: None,
        };
        gisclaw::llm::open_live(config).expect("the backend opens")
    }

    /// The server is given the replies of `replay` for one run, with the ids
    /// a server gives tool calls.
    fn queue(&self, replay: &Path) {
        let replay = ReplayBackend::open(replay).expect("replay");
        let answers: Vec<Value> = replay
            .messages()
            .iter()
            .enumerate()
            .map(|(n, message)| {
                let mut message = serde_json::to_value(message).expect("a message");
                if let Some(calls) = message["tool_calls"].as_array_mut() {
                    for (i, call) in calls.iter_mut().enumerate() {
                        call["id"] = json!(format!("call_{n}_{i}"));
                    }
                }
                message
            })
            .collect();
        self.server.answer_with(&answers);
    }
}

/// What a Python baseline printed (JSON on stdout), once it exited cleanly.
fn python_answer<T: serde::de::DeserializeOwned>(mut command: std::process::Command) -> T {
    let output = command.output().expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("overheads")
}

/// Microseconds as durations.
fn micros(us: Vec<f64>) -> Vec<Duration> {
    us.into_iter()
        .map(|u| Duration::from_secs_f64(u / 1e6))
        .collect()
}

/// The rounds' overheads in ms, for a line of the report.
fn each(rounds: &[Duration]) -> String {
    rounds
        .iter()
        .map(|d| format!("{:.2}", d.as_secs_f64() * 1000.0))
        .collect::<Vec<_>>()
        .join(", ")
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

/// Replays of the example after the first, pooled.
const LATER_RUNS: usize = 5;

/// Replays of the 40 trivial rounds, pooled.
const TRIVIAL_RUNS: usize = 3;

/// Rounds of several runs of the same replay.
#[derive(Clone)]
struct Pooled {
    /// Every round of every run.
    all: Vec<Duration>,
    /// Round by round, the median over the runs.
    per_round: Vec<Duration>,
    /// The median time from the last round's result to the run's end.
    end_of_run: Duration,
}

impl Pooled {
    /// Runs given as their rounds (no end of run).
    fn of(runs: Vec<Vec<Duration>>) -> Pooled {
        let rounds = runs.iter().map(Vec::len).min().unwrap_or(0);
        Pooled {
            all: runs.iter().flatten().copied().collect(),
            per_round: (0..rounds)
                .map(|r| median(runs.iter().map(|run| run[r]).collect()))
                .collect(),
            end_of_run: Duration::ZERO,
        }
    }

    /// One measured run.
    fn one(run: &Measured) -> Pooled {
        Pooled {
            end_of_run: run.end_of_run,
            ..Pooled::of(vec![run.rounds.clone()])
        }
    }
}

/// Measured runs, pooled.
fn pooled(runs: &[Measured]) -> Pooled {
    Pooled {
        end_of_run: median(runs.iter().map(|m| m.end_of_run).collect()),
        ..Pooled::of(runs.iter().map(|m| m.rounds.clone()).collect())
    }
}

fn main() {
    common::refuse_a_stale_worker();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let zygote = Zygote::start(SandboxConfig::default()).expect("zygote");
    let dir = tempfile::tempdir().unwrap();
    let python = zygote.config().venv.join("bin/python");

    let example = root.join("examples/heat_island");
    let replay = example.join("replay.jsonl");
    // The first run in a process is what a one-shot `solve` sees (GDAL,
    // PROJ and the image decoder meet their first file); the later ones
    // are what `eval` and `chat` see from their second task on, pooled
    // over several runs because single rounds on a shared VM vary by 2x.
    let replayed = |replay: &Path| -> Box<dyn ChatBackend> {
        Box::new(ReplayBackend::open(replay).expect("replay"))
    };
    let ours = measure(
        &zygote,
        &example.join("task.yaml"),
        replayed(&replay),
        &dir.path().join("ref"),
        true,
    );
    // What the reproduction check after `finish` costs (solve does it by
    // default): solution.py's cells in a fresh session, against the run.
    {
        let run_dir = dir.path().join("ref");
        let run: Value =
            serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap())
                .unwrap();
        let script = std::fs::read_to_string(run_dir.join("solution.py")).unwrap();
        // The first part is the script's preamble (imports, chdir), which
        // a session has already.
        let cells: Vec<String> = gisclaw::agent::solution::split_cells(&script)
            .into_iter()
            .skip(1)
            .collect();
        let data = example.join("data");
        let started = Instant::now();
        let reproduced = gisclaw::eval::running::reproduce::reproduce(
            &zygote,
            zygote.config(),
            Some(&data),
            &run_dir,
            &cells,
        )
        .expect("reproduce");
        let took = started.elapsed().as_secs_f64();
        let wall = run["wall_seconds"].as_f64().unwrap();
        println!(
            "the reproduction check after finish (example, {} cells, reproduced: {})   {took:.2} s  (the run: {wall:.2} s; ratio {:.2})",
            cells.len(),
            reproduced.ok,
            took / wall
        );
    }
    // `count` replays of `replay`, each in `{name}-{run}`.
    let runs = |replay: &Path, count: usize, name: &str, checks: bool| -> Vec<Measured> {
        (0..count)
            .map(|run| {
                measure(
                    &zygote,
                    &example.join("task.yaml"),
                    replayed(replay),
                    &dir.path().join(format!("{name}-{run}")),
                    checks,
                )
            })
            .collect()
    };
    let later = runs(&replay, LATER_RUNS, "ref-again", true);
    // Like with like: the reference has no output checks.
    let unchecked = pooled(&runs(&replay, LATER_RUNS, "unchecked", false));
    let ours_later = pooled(&later);
    let ours_later_all = ours_later.all.clone();
    let events = &ours.events;

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
    let trivial: Vec<Duration> = runs(&trivial_replay, TRIVIAL_RUNS, "trivial", true)
        .into_iter()
        .flat_map(|run| run.rounds)
        .collect();

    // The sandbox's share of a trivial round: one `Session::execute` of the
    // same cell, its wall time minus the time inside the cell.
    let mut session = gisclaw::sandbox::Session::open(&zygote, &dir.path().join("direct"))
        .expect("session opens");
    let round_trip = median(
        (0..40 * TRIVIAL_RUNS)
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
    let mut reference_runs = reference_loop(
        &python,
        root,
        &replay,
        &dir.path().join("reference-example"),
        1 + LATER_RUNS,
        None,
    );
    let reference_later = Pooled::of(reference_runs.split_off(1));
    let reference_first = reference_runs.remove(0);
    let reference_trivial: Vec<Duration> = reference_loop(
        &python,
        root,
        &trivial_replay,
        &dir.path().join("reference-trivial"),
        TRIVIAL_RUNS,
        None,
    )
    .concat();
    let lean: Vec<Duration> = (0..TRIVIAL_RUNS)
        .flat_map(|run| {
            python_loop(
                &python,
                40,
                &dir.path().join(format!("python-transcript-{run}.jsonl")),
            )
        })
        .collect();

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let ratio = |a: &[Duration], b: &[Duration]| {
        median(a.to_vec()).as_secs_f64() / median(b.to_vec()).as_secs_f64()
    };
    let verdict = |r: f64| if r <= 0.5 { "met" } else { "NOT met" };
    println!("agent step overhead (round time minus time inside the cell; medians)");
    for (label, ours, reference) in [
        (
            "first run in the process".to_string(),
            Pooled::one(&ours),
            Pooled::of(vec![reference_first.clone()]),
        ),
        (
            format!("{LATER_RUNS} later runs, pooled"),
            ours_later,
            reference_later.clone(),
        ),
    ] {
        println!(
            "  example replay, {label} ({} rounds a run)",
            ours.per_round.len()
        );
        println!(
            "    gisclaw                                        {:>7.2} ms  (by round: {})",
            ms(median(ours.all.clone())),
            each(&ours.per_round)
        );
        println!(
            "    after its last round (solution.py, run.json, session closed) {:>7.2} ms",
            ms(ours.end_of_run)
        );
        println!(
            "    the same replies, the reference's per-round work {:>7.2} ms  (by round: {})",
            ms(median(reference.all.clone())),
            each(&reference.per_round)
        );
        let r = ratio(&ours.all, &reference.all);
        println!(
            "    ratio gisclaw / reference = {r:.2}  (goal <= 0.5: {})",
            verdict(r)
        );
    }
    println!(
        "    gisclaw with --no-output-checks, {LATER_RUNS} runs pooled {:>7.2} ms  (by round: {}; ratio {:.2})",
        ms(median(unchecked.all.clone())),
        each(&unchecked.per_round),
        ratio(&unchecked.all, &reference_later.all)
    );
    println!(
        "  trivial cells  ({TRIVIAL_RUNS} runs of 40 rounds, pooled)      {:>7.2} ms",
        ms(median(trivial.clone()))
    );
    println!(
        "    of which the sandbox round trip (Session::execute) {:>7.2} ms",
        ms(round_trip)
    );
    println!(
        "  the same rounds, the reference's per-round work     {:>7.2} ms",
        ms(median(reference_trivial.clone()))
    );
    let trivial_ratio = ratio(&trivial, &reference_trivial);
    println!(
        "  ratio trivial / reference = {trivial_ratio:.2}  (goal <= 0.5: {})",
        verdict(trivial_ratio)
    );
    println!(
        "  the same rounds, a leaner straightforward Python loop {:>7.2} ms  (ratio {:.2})",
        ms(median(lean.clone())),
        ratio(&trivial, &lean)
    );
    println!(
        "  a bare Unix-socket round trip to another process (no work) {:>7.3} ms",
        ms(floor)
    );
    // Vision feedback: the example's map made ready for a model that sees
    // images, against the image crate's straightforward path (decode,
    // Triangle resize, default PNG encoding), interleaved.
    let map = dir.path().join("ref/pred_results/temperature_map.png");
    let (mut prepared, mut straightforward) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        let start = Instant::now();
        let shown = gisclaw::outputs::shown::prepare(&map).expect("the map is prepared");
        prepared.push(start.elapsed());
        let start = Instant::now();
        let resized = image::open(&map).expect("the map decodes").resize(
            gisclaw::llm::vision::MAX_SIDE,
            gisclaw::llm::vision::MAX_SIDE,
            image::imageops::FilterType::Triangle,
        );
        let mut png = std::io::Cursor::new(Vec::new());
        resized
            .write_to(&mut png, image::ImageOutputFormat::Png)
            .expect("the map encodes");
        straightforward.push(start.elapsed());
        assert_eq!(
            (shown.width, shown.height),
            (resized.width(), resized.height())
        );
    }
    println!(
        "  the example's map made ready for a vision model      {:>7.2} ms  (decode, resize, PNG straightforwardly: {:.2} ms; ratio {:.2})",
        ms(median(prepared.clone())),
        ms(median(straightforward.clone())),
        ratio(&prepared, &straightforward)
    );
    println!(
        "  goal <= 5 ms on the example: {}",
        if median(ours.rounds.clone()) <= Duration::from_millis(5)
            && median(ours_later_all.clone()) <= Duration::from_millis(5)
        {
            "met"
        } else {
            "NOT met"
        }
    );

    // Both agents again, each asking the scripted server with its own model
    // client: what a round costs with a real server, less the model's time.
    match Client::start(root) {
        Some(client) => {
            let over_http = |replay: &Path, count: usize, name: &str| -> Vec<Measured> {
                (0..count)
                    .map(|run| {
                        client.queue(replay);
                        measure(
                            &zygote,
                            &example.join("task.yaml"),
                            client.backend(),
                            &dir.path().join(format!("{name}-{run}")),
                            true,
                        )
                    })
                    .collect()
            };
            let example_http = pooled(&over_http(&replay, LATER_RUNS, "http"));
            let trivial_http: Vec<Duration> = over_http(&trivial_replay, TRIVIAL_RUNS, "http-trivial")
                .into_iter()
                .flat_map(|run| run.rounds)
                .collect();
            let reference_example_http = Pooled::of(reference_loop(
                &python,
                root,
                &replay,
                &dir.path().join("reference-example-http"),
                LATER_RUNS,
                Some(&client),
            ));
            let reference_trivial_http = reference_loop(
                &python,
                root,
                &trivial_replay,
                &dir.path().join("reference-trivial-http"),
                TRIVIAL_RUNS,
                Some(&client),
            )
            .concat();
            println!("  with each side's model client, asking a scripted server on 127.0.0.1 (gisclaw: async-openai over reqwest; the reference: the OpenAI Python SDK)");
            println!(
                "    example, {LATER_RUNS} runs pooled: gisclaw           {:>7.2} ms  (by round: {})",
                ms(median(example_http.all.clone())),
                each(&example_http.per_round)
            );
            println!(
                "    the same replies, the reference's per-round work {:>7.2} ms  (by round: {})",
                ms(median(reference_example_http.all.clone())),
                each(&reference_example_http.per_round)
            );
            let r = ratio(&example_http.all, &reference_example_http.all);
            println!(
                "    ratio gisclaw / reference = {r:.2}  (goal <= 0.5: {})",
                verdict(r)
            );
            println!(
                "    trivial cells ({TRIVIAL_RUNS} runs of 40 rounds): gisclaw {:>7.2} ms, the reference {:>7.2} ms",
                ms(median(trivial_http.clone())),
                ms(median(reference_trivial_http.clone()))
            );
            let r = ratio(&trivial_http, &reference_trivial_http);
            println!(
                "    ratio trivial / reference = {r:.2}  (goal <= 0.5: {})",
                verdict(r)
            );
            println!(
                "    a bare exchange with the server (no client work)     {:>7.3} ms",
                ms(client.server.bare_exchange())
            );
        }
        None => println!(
            "  with each side's model client: not measured (target/bench-openai is missing: make bench installs the OpenAI Python SDK there)"
        ),
    }

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
