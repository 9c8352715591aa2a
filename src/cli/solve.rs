//! `gisclaw solve task.yaml`: one task end to end, with its outputs in
//! `OUT/pred_results/`, `OUT/transcript.jsonl`, `OUT/solution.py` and
//! `OUT/run.json`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use gisclaw::agent::events::AgentEvent;
use gisclaw::agent::memory::{self, ErrorMemory};
use gisclaw::agent::plan::DualLimits;
use gisclaw::agent::run::{run_task, sandbox_limits, Arch, RunOptions};
use gisclaw::agent::single::AgentLimits;
use gisclaw::bench::data::{self, Provenance};
use gisclaw::llm::local::LocalSpec;
use gisclaw::llm::replay::ReplayBackend;
use gisclaw::llm::ChatBackend;
use gisclaw::sandbox::Zygote;
use gisclaw::task::{LoadedTask, Task};

use super::common::{
    no_backend, open_docs_under, BackendArgs, LimitArgs, MctsArgs, ProtocolArgs, SandboxArgs,
    UsageError,
};
use super::figure;

/// Options of `gisclaw solve`.
#[derive(clap::Args, Debug)]
pub struct SolveArgs {
    /// The task file.
    pub task: PathBuf,
    /// Agent architecture: single (ReAct), dual (plan/execute/replan),
    /// mcts (tree search over candidate codes per plan step) or none (the
    /// LLM alone: one generation, its code run once).
    /// [default: single; mcts under `--protocol geoagent-paper`]
    #[arg(long)]
    pub arch: Option<Arch>,
    /// Bounds of the tree search.
    #[command(flatten)]
    pub mcts: MctsArgs,
    /// The model backend (without one: the task's recorded replay).
    #[command(flatten)]
    pub model: BackendArgs,
    /// Play back this JSONL file of assistant messages instead of a live model.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Output folder (default: gisclaw-runs/<task id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Use an existing --out folder that is not a gisclaw run folder (its
    /// `work/` and `pred_results/` are then given to the sandbox).
    #[arg(long)]
    pub force: bool,
    /// Leave the expert workflow out of the prompt (ablation).
    #[arg(long)]
    pub no_workflow: bool,
    /// Leave the task's domain knowledge out of the prompt (GISclaw's
    /// knowledge-gap ablation; `--hint` still adds yours).
    #[arg(long)]
    pub no_domain_knowledge: bool,
    /// Extra domain knowledge for the model (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub hint: Vec<String>,
    /// A paper's protocol (`--protocol gisclaw-paper`, …).
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Rounds and time limits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Neither read nor update the Error Memory (ablation).
    #[arg(long)]
    pub no_memory: bool,
    /// Let a replayed run read and update the Error Memory (a replay's
    /// answers were not chosen by a model here, so by default it leaves the
    /// memory alone).
    #[arg(long, conflicts_with = "no_memory")]
    pub memory: bool,
    /// Give the agent `search_docs` over the library-docs index
    /// (`gisclaw knowledge build` once).
    #[arg(long)]
    pub rag: bool,
    /// Do not look inside the outputs after each cell (blank images,
    /// NaN rasters, empty layers, wrong places), nor answer a `finish` with
    /// failing checks once (an ablation).
    #[arg(long)]
    pub no_output_checks: bool,
    /// Do not show the model the figures its cells write (vision feedback
    /// is on for models whose profile says `vision = true` or `"auto"` and
    /// that see images; an ablation).
    #[arg(long)]
    pub no_vision_feedback: bool,
    /// What `OUT/solution.ipynb` holds: the kept cells with their outputs
    /// (`cells`), every cell tried with the failed ones marked (`full`), or
    /// no notebook (`off`).
    #[arg(long, default_value = "cells")]
    pub notebook: gisclaw::notebook::NotebookMode,
    /// Do not re-run `solution.py`'s cells in a fresh session after a
    /// finished run to check that they remake the outputs (`reproduced`
    /// in `run.json`).
    #[arg(long)]
    pub no_reproduce: bool,
    /// Confinement the sandbox must have.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// The recorded session shipped beside an example task.
const RECORDED_SESSION: &str = "replay.jsonl";

/// Picks the model backend; prints a banner when falling back to a recording.
fn select_backend(args: &SolveArgs, task: &LoadedTask) -> Result<Box<dyn ChatBackend>, UsageError> {
    let open = |file: &Path| {
        ReplayBackend::open(file)
            .map(|b| match args.limits.context_window {
                Some(window) => Box::new(b.with_window(window)) as Box<dyn ChatBackend>,
                None => Box::new(b),
            })
            .map_err(|e| UsageError(e.to_string()))
    };
    if let Some(file) = &args.replay {
        return open(file);
    }
    if args.model.backend.as_deref() == Some("replay") {
        return Err(UsageError("--backend replay needs --replay FILE".into()));
    }
    if let Some(mut live) = args.model.resolve_live()? {
        args.protocol.protocol.settings().sample(&mut live);
        return gisclaw::llm::open_live(live).map_err(|e| UsageError(e.to_string()));
    }
    // Nothing configured: the installed local model, else the recording.
    let local = LocalSpec::installed();
    if local.check().is_ok() {
        say_err!(
            "gisclaw: no model backend is configured; using the local model {} that `make setup-local-model` installed (tiny models rarely solve GIS tasks: for real work set OPENAI_API_KEY and OPENAI_MODEL, or OLLAMA_HOST, or pass --backend)",
            local.model_name()
        );
        let choice = BackendArgs {
            backend: Some("local".into()),
            ..args.model.clone()
        };
        let mut live = choice
            .resolve_live()?
            .ok_or_else(|| no_backend("--replay FILE"))?;
        args.protocol.protocol.settings().sample(&mut live);
        return gisclaw::llm::open_live(live).map_err(|e| UsageError(e.to_string()));
    }
    let recorded = task
        .path
        .parent()
        .unwrap_or(Path::new("."))
        .join(RECORDED_SESSION);
    if !recorded.is_file() {
        return Err(no_backend("--replay FILE"));
    }
    say_err!(
        "gisclaw: REPLAY — no model backend is configured, so this run plays back the recorded session {} through the real sandbox; it is not a model answering. To go live: set OPENAI_API_KEY and OPENAI_MODEL (or OPENAI_BASE_URL for a local server, or OLLAMA_HOST), pass --backend, or run `make setup-local-model` for an offline local model.",
        recorded.display()
    );
    open(&recorded)
}

/// Shows progress: an indicatif spinner with the latest step on a terminal,
/// plain lines otherwise.
struct Display {
    bar: Option<indicatif::ProgressBar>,
}

impl Display {
    fn new(task: &str) -> Display {
        if !std::io::stderr().is_terminal() {
            return Display { bar: None };
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(super::common::bar_style(
            "{spinner} [{elapsed_precise}] {prefix}: {wide_msg}",
        ));
        bar.set_prefix(task.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        Display { bar: Some(bar) }
    }

    /// On a terminal, the last line a running cell printed shown in the
    /// spinner's message as it comes (cleaned of control characters).
    fn live_output(&self) -> Option<gisclaw::agent::run::LiveOutput> {
        let bar = self.bar.clone()?;
        let lines = std::sync::Mutex::new(gisclaw::chat::live::LiveLines::default());
        Some(gisclaw::agent::run::LiveOutput(std::sync::Arc::new(
            move |_stream, text: &str| {
                let Ok(mut lines) = lines.lock() else { return };
                let done = lines.push(text);
                let partial = lines.partial();
                let last = if partial.trim().is_empty() {
                    done.iter().rev().find(|l| !l.trim().is_empty()).cloned()
                } else {
                    Some(partial)
                };
                if let Some(last) = last {
                    bar.set_message(format!("cell output: {}", last.trim()));
                }
            },
        )))
    }

    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => {
                bar.println(gisclaw::terminal::clean(&format!("  {text}")));
                bar.set_message(gisclaw::terminal::clean(text));
            }
            None => say_err!("{text}"),
        }
    }

    /// Figures a cell wrote: drawn on a terminal that shows images (the
    /// spinner held while drawing), each with its one-line description.
    fn figures(
        &self,
        paths: &[std::path::PathBuf],
        out: &std::path::Path,
        protocol: Option<figure::Protocol>,
    ) {
        let mut lines = Vec::new();
        let mut draw = || figure::show(paths, out, protocol, &mut |l| lines.push(l.to_string()));
        match &self.bar {
            Some(bar) if protocol.is_some() => bar.suspend(draw),
            _ => draw(),
        }
        for l in lines {
            self.line(&l);
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Runs the command; `Err(UsageError)` inside the anyhow error means exit 2.
pub fn run(mut args: SolveArgs) -> anyhow::Result<ExitCode> {
    gisclaw::interrupt::install();
    let preset = args.protocol.protocol;
    args.limits.follow(preset)?;
    let settings = preset.settings();
    let mut loaded = Task::load(&args.task).map_err(|e| UsageError(e.to_string()))?;
    let published =
        gisclaw::bench::published::apply(settings.wording, std::slice::from_mut(&mut loaded))
            .map_err(|e| UsageError(e.to_string()))?;
    if preset != gisclaw::protocol::Protocol::Ours {
        say_err!("gisclaw: {}", preset.summary());
        if settings.wording == gisclaw::bench::published::Wording::Published && published == 0 {
            say_err!(
                "gisclaw: {} names no published row (`published:`): its own wording is used",
                args.task.display()
            );
        }
    }
    let mut backend = select_backend(&args, &loaded)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("gisclaw-runs").join(&loaded.task.id));
    if !args.force && !gisclaw::agent::run::is_run_folder(&out) {
        return Err(UsageError(format!(
            "--out {}: an existing folder that is not a gisclaw run folder (no run.json or transcript.jsonl in it); choose a new or empty folder, or pass --force",
            out.display()
        ))
        .into());
    }
    let budget = args.limits.budget();
    let mut config = args.sandbox.config()?;
    settings.observe(&mut config);
    let sandbox = sandbox_limits(&config, args.limits.cell_timeout(), budget);
    let zygote = Zygote::start(sandbox.clone())?;
    if let Provenance::Generated(took) = data::ensure(&zygote, &mut loaded)? {
        say_err!(
            "gisclaw: generated the data of {} in {:.1} s",
            loaded.task.id,
            took.as_secs_f64()
        );
    }
    let task = &loaded.task;
    let display = Display::new(&task.id);
    let options = RunOptions {
        arch: args.arch.unwrap_or(match preset {
            gisclaw::protocol::Protocol::GeoagentPaper => Arch::Mcts,
            _ => Arch::Single,
        }),
        include_workflow: !args.no_workflow,
        include_domain_knowledge: !args.no_domain_knowledge,
        protocol: preset,
        hints: args.hint.clone(),
        limits: AgentLimits {
            max_rounds: args.limits.max_rounds,
            budget,
            context_window: args.limits.context_window,
            block_repeats: settings.dedup_blocks,
            ..AgentLimits::default()
        },
        dual: DualLimits::default(),
        mcts: args.mcts.limits(),
        sandbox,
        docs: open_docs_under(args.rag, preset)?,
        solutions: None,
        output_checks: !args.no_output_checks,
        vision_feedback: !args.no_vision_feedback,
        notebook: args.notebook,
        reproduce: (!args.no_reproduce).then_some(
            gisclaw::eval::running::reproduce::reproduce as gisclaw::agent::run::Reproducer,
        ),
        live_output: display.live_output(),
    };
    let mut memory = if args.no_memory || (backend.is_replay() && !args.memory) {
        ErrorMemory::in_memory()
    } else {
        ErrorMemory::load(&memory::default_path())
    };
    let protocol = figure::detect();
    let summary = run_task(
        &zygote,
        &loaded,
        backend.as_mut(),
        &mut memory,
        &out,
        &options,
        &mut |event| {
            if let AgentEvent::Figures { paths } = &event {
                display.figures(paths, &out, protocol);
            }
            if let Some(line) = event.progress_line() {
                display.line(&line);
            }
        },
    );
    display.done();
    let summary = summary?;
    let present = summary.outputs.iter().filter(|o| o.exists).count();
    let cost = match summary.cost_usd {
        Some(c) => format!("${c:.4}"),
        None => "cost unknown".to_string(),
    };
    say_err!(
        "gisclaw: {} — {}; {present}/{} outputs in {}, {} rounds, {} tokens in / {} out ({cost}), {:.1} s",
        summary.status,
        summary.reason,
        summary.outputs.len(),
        out.join("pred_results").display(),
        summary.rounds,
        summary.tokens_in,
        summary.tokens_out,
        summary.wall_seconds
    );
    if let Some(reproduced) = &summary.reproduced {
        say_err!("gisclaw: {}", reproduced.line());
    }
    // A decline is the right answer to a task marked `solvable: false`,
    // and a failure on any other.
    if summary.status == "declined" {
        say_err!(
            "gisclaw: {}",
            if loaded.task.solvable {
                "the model declined a task that its data can answer"
            } else {
                "declined, as the task (solvable: false) expects"
            }
        );
    }
    Ok(
        match (summary.status.as_str(), gisclaw::interrupt::requested()) {
            ("finished", _) => ExitCode::SUCCESS,
            ("declined", _) if !loaded.task.solvable => ExitCode::SUCCESS,
            ("interrupted", Some(signal)) => gisclaw::interrupt::exit_code(signal),
            _ => ExitCode::from(1),
        },
    )
}
