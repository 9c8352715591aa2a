//! Small local models as tool users: the bundled GGUFs (SmolLM2-135M and
//! Gemma-3-270M, `make setup-local-model`) on llama-server drive the Single
//! Agent on a fixed subset of GeoAnalystBench tasks, once in text-mode
//! ReAct (the free-text protocol) and once with constrained actions (each
//! answer forced to one action by a JSON Schema; `tool_mode =
//! "constrained"`), in the same process. Printed per model and mode:
//! rounds, the share of rounds that are a valid action (a tool call that
//! was dispatched), the share of `execute_python` cells that compile
//! (Python's own `compile()` in the sandbox's venv), the rounds to the first
//! cell that runs, prompt and completion tokens per round, and wall time per
//! round; then the ratio of cells that compile, constrained over text.
//! Then the same on two sequential tasks of the geocode suite (each step a
//! conversation of at most two rounds, six rounds a task), as `eval`'s
//! step runs them. `GISCLAW_BENCH_SUITES=geoanalyst` or `geocode` measures
//! one suite, `GISCLAW_BENCH_MODES=text` or `constrained` one mode.
//!
//! Run with `make bench` (or `cargo bench --bench local_actions`); without
//! the local model installed it says so and stops. Greedy sampling
//! (temperature 0) so that both modes see the same model.
//! `GISCLAW_BENCH_MODELS=smollm2` (or `gemma3`) measures one model (Gemma
//! in both modes: about six minutes on two cores, SmolLM2 about fifteen).

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gisclaw::agent::memory::ErrorMemory;
use gisclaw::agent::plan::DualLimits;
use gisclaw::agent::run::{run_task, Arch, RunOptions};
use gisclaw::agent::single::AgentLimits;
use gisclaw::llm::config::{self, BackendChoice, Backends, LiveConfig, ToolMode};
use gisclaw::sandbox::{SandboxConfig, Zygote};
use gisclaw::task::Task;
use serde_json::Value;

/// The tasks measured: three of the fifty, of different kinds.
const TASKS: [&str; 3] = ["T01", "T10", "T20"];
/// Rounds per run.
const ROUNDS: usize = 4;
/// The geocode tasks measured: two of the fifteen (vector, raster).
const STEP_TASKS: [&str; 2] = ["G01", "G02"];
/// Rounds per geocode run, and per step.
const STEP_ROUNDS: (usize, usize) = (6, 2);

/// The figures of one run.
#[derive(Default)]
struct Figures {
    rounds: usize,
    valid: usize,
    cells: Vec<String>,
    first_ok: Option<usize>,
    tokens_in: u64,
    tokens_out: u64,
    llm_ms: u64,
}

fn figures(out: &Path) -> Figures {
    let mut f = Figures::default();
    let text = std::fs::read_to_string(out.join("transcript.jsonl")).unwrap_or_default();
    let events: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for e in &events {
        match e["event"].as_str() {
            Some("message") if e["message"]["role"] == "assistant" => {
                f.rounds += 1;
                f.llm_ms += e["llm_ms"].as_u64().unwrap_or(0);
                f.tokens_in += e["usage"]["prompt_tokens"].as_u64().unwrap_or(0);
                f.tokens_out += e["usage"]["completion_tokens"].as_u64().unwrap_or(0);
                let round = e["round"].as_u64().unwrap_or(0);
                let dispatched = events.iter().any(|t| {
                    t["event"] == "tool" && t["round"] == round && t["status"] != "malformed"
                });
                if dispatched {
                    f.valid += 1;
                }
            }
            Some("tool") if e["name"] == "execute_python" && e["status"] != "malformed" => {
                let arguments: Value =
                    serde_json::from_str(e["arguments"].as_str().unwrap_or("{}"))
                        .unwrap_or_default();
                if let Some(code) = arguments["code"].as_str() {
                    f.cells.push(code.to_string());
                }
                if e["status"] == "Ok" && f.first_ok.is_none() {
                    f.first_ok = e["round"].as_u64().map(|r| r as usize);
                }
            }
            _ => {}
        }
    }
    f
}

/// How many of `cells` Python compiles (the venv's interpreter, one call).
fn compiling(cells: &[String]) -> usize {
    if cells.is_empty() {
        return 0;
    }
    let python = gisclaw::paths::default_venv().join("bin/python");
    let script = "import json, sys\ncells = json.load(sys.stdin)\nn = 0\nfor c in cells:\n    try:\n        compile(c, '<cell>', 'exec'); n += 1\n    except (SyntaxError, ValueError):\n        pass\nprint(n)";
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the venv's python");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        let _ = stdin.write_all(serde_json::to_string(cells).unwrap_or_default().as_bytes());
    }
    let out = child.wait_with_output().expect("python answers");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn local_config(gguf: &Path, mode: ToolMode) -> LiveConfig {
    let choice = BackendChoice {
        backend: Some("local".into()),
        model: None,
        base_url: None,
        gguf: Some(gguf.to_path_buf()),
    };
    let mut live = config::resolve(&choice, &Backends::default(), Path::new("none.toml"))
        .expect("a local config")
        .expect("a local config");
    live.tool_mode = mode;
    live.temperature = Some(0.0);
    live
}

fn main() {
    common::refuse_a_stale_worker();
    let models: Vec<PathBuf> = ["smollm2-135m-instruct-q4_1.gguf", "gemma3-270m-q4_k_m.gguf"]
        .iter()
        .filter(|m| {
            std::env::var("GISCLAW_BENCH_MODELS").map_or(true, |only| {
                only.split(',').any(|o| m.starts_with(o.trim()))
            })
        })
        .map(|m| gisclaw::llm::local::local_dir().join("models").join(m))
        .filter(|p| p.exists())
        .collect();
    if models.is_empty() || !gisclaw::llm::local::default_server().exists() {
        println!("local_actions: the local model is not installed (make setup-local-model); nothing measured");
        return;
    }
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geoanalyst");
    let zygote: Arc<Zygote> = Zygote::start(SandboxConfig::default()).expect("zygote starts");
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "local_actions: GeoAnalystBench {} ({ROUNDS} rounds each) and geocode {} ({} rounds each, at most {} a step), greedy sampling",
        TASKS.join(", "),
        STEP_TASKS.join(", "),
        STEP_ROUNDS.0,
        STEP_ROUNDS.1
    );
    println!(
        "{:<46} {:<12} {:>6} {:>8} {:>9} {:>11} {:>9} {:>9} {:>8}",
        "model (suite)",
        "mode",
        "rounds",
        "valid",
        "compile",
        "first ok",
        "in/round",
        "out/round",
        "s/round"
    );
    let wanted = |suite: &str| {
        std::env::var("GISCLAW_BENCH_SUITES")
            .map_or(true, |only| only.split(',').any(|o| o.trim() == suite))
    };
    for gguf in &models {
        let mut compile_share: Vec<(String, f64)> = Vec::new();
        let modes = [ToolMode::Text, ToolMode::Constrained]
            .into_iter()
            .filter(|m| {
                std::env::var("GISCLAW_BENCH_MODES")
                    .map_or(true, |only| only.split(',').any(|o| o.trim() == m.name()))
            });
        for mode in modes {
            let started = config::LiveConfig::start_local(local_config(gguf, mode), &|_| {})
                .expect("llama-server starts");
            let name = gguf
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if wanted("geoanalyst") {
                let runs: Vec<Figures> = TASKS
                    .iter()
                    .map(|id| {
                        let out = dir.path().join(format!("{name}-{}-{id}", mode.name()));
                        let mut backend =
                            gisclaw::llm::open_live(started.clone()).expect("backend");
                        run_geoanalyst(&zygote, &suite.join(id), &mut *backend, &out);
                        figures(&out)
                    })
                    .collect();
                let share = report(&format!("{name} (geoanalyst)"), mode, runs);
                compile_share.push(("geoanalyst".into(), share));
            }
            if wanted("geocode") {
                let steps = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geocode");
                let runs: Vec<Figures> = STEP_TASKS
                    .iter()
                    .map(|id| {
                        let out = dir.path().join(format!("{name}-{}-{id}", mode.name()));
                        let mut backend =
                            gisclaw::llm::open_live(started.clone()).expect("backend");
                        run_geocode(&zygote, &steps.join(id), &mut *backend, &out);
                        figures(&out)
                    })
                    .collect();
                let share = report(&format!("{name} (geocode)"), mode, runs);
                compile_share.push(("geocode".into(), share));
            }
            drop(started);
        }
        for suite in ["geoanalyst", "geocode"] {
            let shares: Vec<f64> = compile_share
                .iter()
                .filter(|(s, _)| s == suite)
                .map(|(_, v)| *v)
                .collect();
            if let [text, constrained] = shares[..] {
                println!(
                    "  {suite}: cells that compile per round, constrained / text: {}",
                    if text > 0.0 {
                        format!("{:.2}×", constrained / text)
                    } else {
                        format!("{constrained:.2} vs none")
                    }
                );
            }
        }
    }
}

/// One GeoAnalystBench task (`dir`) with the Single Agent, `ROUNDS` rounds.
fn run_geoanalyst(
    zygote: &Arc<Zygote>,
    dir: &Path,
    backend: &mut dyn gisclaw::llm::ChatBackend,
    out: &Path,
) {
    let mut loaded = Task::load(&dir.join("task.yaml")).expect("task");
    let _ = gisclaw::bench::data::ensure(zygote, &mut loaded);
    let budget = Duration::from_secs(900);
    let options = RunOptions {
        arch: Arch::Single,
        include_workflow: true,
        include_domain_knowledge: true,
        protocol: gisclaw::protocol::Protocol::Ours,
        hints: Vec::new(),
        limits: AgentLimits {
            max_rounds: ROUNDS,
            budget,
            max_idle: ROUNDS,
            ..AgentLimits::default()
        },
        dual: DualLimits::default(),
        mcts: gisclaw::agent::mcts::MctsLimits::default(),
        sandbox: gisclaw::agent::run::sandbox_limits(
            zygote.config(),
            Duration::from_secs(60),
            budget,
        ),
        docs: None,
        solutions: None,
        output_checks: true,
        vision_feedback: false,
        notebook: gisclaw::notebook::NotebookMode::Off,
        reproduce: None,
        live_output: None,
    };
    let mut memory = ErrorMemory::in_memory();
    let _ = run_task(
        zygote,
        &loaded,
        backend,
        &mut memory,
        out,
        &options,
        &mut |_| {},
    );
}

/// One geocode task (`dir`) as `eval` runs a step suite: each step a
/// conversation of at most `STEP_ROUNDS.1` rounds, `STEP_ROUNDS.0` in all.
fn run_geocode(
    zygote: &Arc<Zygote>,
    dir: &Path,
    backend: &mut dyn gisclaw::llm::ChatBackend,
    out: &Path,
) {
    let task = gisclaw::bench::steps::LoadedStepTask::load(&dir.join("task.yaml")).expect("task");
    let limits = gisclaw::eval::running::step_eval::StepLimits {
        max_rounds: STEP_ROUNDS.0,
        step_rounds: STEP_ROUNDS.1,
        step_failures: STEP_ROUNDS.1,
        budget: Duration::from_secs(900),
        cell_timeout: Duration::from_secs(60),
        search: Default::default(),
    };
    let mode = gisclaw::eval::running::step_eval::StepMode {
        alone: false,
        gold_prefix: false,
        interventions: 0,
        search: false,
    };
    let _ = gisclaw::eval::running::step_eval::run_one(
        zygote,
        &task,
        backend,
        out,
        1,
        &limits,
        mode,
        (None, None),
    );
}

/// Prints one row of figures over `runs`; the share of rounds whose cell
/// compiles.
fn report(label: &str, mode: ToolMode, runs: Vec<Figures>) -> f64 {
    let mut total = Figures::default();
    let mut firsts = Vec::new();
    for f in runs {
        total.rounds += f.rounds;
        total.valid += f.valid;
        total.cells.extend(f.cells);
        total.tokens_in += f.tokens_in;
        total.tokens_out += f.tokens_out;
        total.llm_ms += f.llm_ms;
        firsts.push(f.first_ok);
    }
    let rounds = total.rounds.max(1) as f64;
    let compiled = compiling(&total.cells);
    let reached: Vec<usize> = firsts.iter().flatten().copied().collect();
    let first = if reached.is_empty() {
        "never".to_string()
    } else {
        format!(
            "{:.1} ({}/{})",
            reached.iter().sum::<usize>() as f64 / reached.len() as f64,
            reached.len(),
            firsts.len()
        )
    };
    println!(
        "{:<46} {:<12} {:>6} {:>7.0}% {:>4}/{:<4} {:>11} {:>9.0} {:>9.0} {:>8.1}",
        label,
        mode.name(),
        total.rounds,
        100.0 * total.valid as f64 / rounds,
        compiled,
        total.cells.len(),
        first,
        total.tokens_in as f64 / rounds,
        total.tokens_out as f64 / rounds,
        total.llm_ms as f64 / 1000.0 / rounds
    );
    compiled as f64 / rounds
}
