//! `gisclaw solve task.yaml`: one task end to end, with its outputs in
//! `OUT/pred_results/`, `OUT/transcript.jsonl`, `OUT/solution.py` and
//! `OUT/run.json`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use gisclaw::agent::memory::{self, ErrorMemory};
use gisclaw::agent::prompt::{self, PromptInputs};
use gisclaw::agent::single::{self, AgentLimits, Ending};
use gisclaw::agent::tools::Toolbox;
use gisclaw::agent::transcript::{output_status, write_atomic, RunSummary, Transcript};
use gisclaw::agent::solution;
use gisclaw::llm::replay::ReplayBackend;
use gisclaw::llm::ChatBackend;
use gisclaw::sandbox::{SandboxConfig, Session, Zygote};
use gisclaw::task::{LoadedTask, Task};
use serde_json::json;

/// Options of `gisclaw solve`.
#[derive(clap::Args, Debug)]
pub struct SolveArgs {
    /// The task file.
    pub task: PathBuf,
    /// Agent architecture (only `single` exists so far).
    #[arg(long, default_value = "single", value_parser = ["single", "dual"])]
    pub arch: String,
    /// Model backend (`replay` is the only one built so far).
    #[arg(long, value_parser = ["replay", "openai", "ollama", "local"])]
    pub backend: Option<String>,
    /// Play back this JSONL file of assistant messages instead of a live model.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// Output folder (default: gisclaw-runs/<task id>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Leave the expert workflow out of the prompt (ablation).
    #[arg(long)]
    pub no_workflow: bool,
    /// Extra domain knowledge for the model (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub hint: Vec<String>,
    /// Most model rounds.
    #[arg(long, default_value_t = 50)]
    pub max_rounds: usize,
    /// Time budget for the whole task, in seconds.
    #[arg(long, default_value_t = 1200)]
    pub budget: u64,
    /// Per-cell time limit, in seconds.
    #[arg(long, default_value_t = 120)]
    pub cell_timeout: u64,
    /// Neither read nor update the Error Memory (ablation).
    #[arg(long)]
    pub no_memory: bool,
}

/// A usage or configuration problem: exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The recorded session shipped beside an example task.
const RECORDED_SESSION: &str = "replay.jsonl";

/// Picks the model backend; prints a banner when falling back to a recording.
fn select_backend(args: &SolveArgs, task: &LoadedTask) -> Result<Box<dyn ChatBackend>, UsageError> {
    let open = |file: &Path| {
        ReplayBackend::open(file)
            .map(|b| Box::new(b) as Box<dyn ChatBackend>)
            .map_err(|e| UsageError(e.to_string()))
    };
    if let Some(file) = &args.replay {
        return open(file);
    }
    match args.backend.as_deref() {
        Some("replay") => return Err(UsageError("--backend replay needs --replay FILE".into())),
        Some(other) => {
            return Err(UsageError(format!(
                "the `{other}` backend is not built in this version of gisclaw; use --replay FILE (see README: what works today)"
            )))
        }
        None => {}
    }
    let recorded = task.path.parent().unwrap_or(Path::new(".")).join(RECORDED_SESSION);
    if !recorded.is_file() {
        return Err(UsageError(
            "no model backend: pass --replay FILE (live OpenAI-compatible, Ollama and local backends are not built yet)".into(),
        ));
    }
    let ignored: Vec<&str> = ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST"]
        .into_iter()
        .filter(|v| std::env::var_os(v).is_some())
        .collect();
    eprintln!(
        "gisclaw: REPLAY — no live model backend is built yet, so this run plays back the recorded session {} through the real sandbox. It is not a model answering.{}",
        recorded.display(),
        if ignored.is_empty() {
            String::new()
        } else {
            format!(" ({} set but not used: live backends are not built yet.)", ignored.join(", "))
        }
    );
    open(&recorded)
}

/// Prepares the output folder: a fresh `pred_results/` and a `data` link to
/// the task's data.
fn prepare_out(out: &Path, data_dir: Option<&Path>) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let pred = out.join("pred_results");
    if pred.exists() {
        std::fs::remove_dir_all(&pred).with_context(|| format!("clearing {}", pred.display()))?;
    }
    let link = out.join("data");
    match std::fs::symlink_metadata(&link) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::remove_file(&link)?,
        Ok(_) => bail!("{} exists and is not gisclaw's data link: choose another --out", link.display()),
        Err(_) => {}
    }
    if let Some(dir) = data_dir {
        std::os::unix::fs::symlink(dir, &link).with_context(|| format!("linking {}", link.display()))?;
    }
    Ok(())
}

/// Runs the command; `Err(UsageError)` inside the anyhow error means exit 2.
pub fn run(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let loaded = Task::load(&args.task).map_err(|e| UsageError(e.to_string()))?;
    if args.arch == "dual" {
        return Err(UsageError("the dual agent (plan/execute/replan) is not built yet; use --arch single".into()).into());
    }
    let mut backend = select_backend(&args, &loaded)?;
    let task = &loaded.task;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("gisclaw-runs").join(&task.id));
    prepare_out(&out, loaded.data_dir.as_deref())?;
    let started = Instant::now();
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(args.cell_timeout),
        task_budget: Duration::from_secs(args.budget),
        ..SandboxConfig::default()
    };
    let zygote = Zygote::start(config)?;
    let mut session = Session::open(&zygote, &out)?;
    let packages = prompt::listed_packages(&zygote.info().packages);
    let inputs = PromptInputs {
        task,
        include_workflow: !args.no_workflow,
        hints: &args.hint,
        data_path: "data/",
        data_dir: loaded.data_dir.as_deref(),
        packages,
        blocked: &zygote.config().blocked_imports,
    };
    let system = prompt::system_prompt(&inputs);
    let task_prompt = prompt::task_prompt(&inputs);
    let mut transcript = Transcript::create(&out.join("transcript.jsonl")).context("creating the transcript")?;
    transcript.record(
        "start",
        json!({
            "task": task.id,
            "arch": args.arch,
            "backend": backend.describe(),
            "replay": backend.is_replay(),
            "workflow": !args.no_workflow,
            "gisclaw": env!("CARGO_PKG_VERSION"),
        }),
    )?;
    let mut toolbox = Toolbox {
        session: &mut session,
        data_dir: loaded.data_dir.clone(),
        data_path: "data/".into(),
        outputs: task.outputs.clone(),
    };
    let tty = std::io::stderr().is_terminal();
    let mut progress = |line: &str| {
        if tty {
            eprintln!("\x1b[2m{line}\x1b[0m");
        } else {
            eprintln!("{line}");
        }
    };
    let limits = AgentLimits {
        max_rounds: args.max_rounds,
        budget: Duration::from_secs(args.budget),
        ..AgentLimits::default()
    };
    let mut memory = if args.no_memory {
        ErrorMemory::in_memory()
    } else {
        ErrorMemory::load(&memory::default_path())
    };
    let outcome = single::run(
        backend.as_mut(),
        &mut toolbox,
        &mut memory,
        &mut transcript,
        system,
        task_prompt,
        &limits,
        &mut progress,
    );
    let script = solution::consolidate(&task.id, session.journal());
    write_atomic(&out.join("solution.py"), script.as_bytes()).context("writing solution.py")?;
    let (status, reason) = match &outcome.ending {
        Ending::Finished => ("finished", "finish accepted: every declared output exists".to_string()),
        Ending::Failed(why) => ("failed", why.clone()),
        Ending::Error(why) => ("error", why.clone()),
    };
    let outputs = output_status(&out, &task.outputs);
    let summary = RunSummary {
        task: task.id.clone(),
        status: status.into(),
        reason: reason.clone(),
        arch: args.arch.clone(),
        backend: backend.describe(),
        replay: backend.is_replay(),
        rounds: outcome.rounds,
        tokens_in: outcome.usage.prompt_tokens,
        tokens_out: outcome.usage.completion_tokens,
        tokens_estimated: outcome.usage.estimated,
        llm_seconds: outcome.llm_time.as_secs_f64(),
        sandbox_seconds: outcome.tool_time.as_secs_f64(),
        wall_seconds: started.elapsed().as_secs_f64(),
        cost_usd: if backend.is_replay() { Some(0.0) } else { None },
        outputs,
        summary: outcome.summary.clone(),
    };
    summary.write(&out.join("run.json")).context("writing run.json")?;
    transcript.record("end", json!({ "status": status, "reason": reason, "rounds": outcome.rounds }))?;
    let present = summary.outputs.iter().filter(|o| o.exists).count();
    eprintln!(
        "gisclaw: {status} — {reason}; {present}/{} outputs in {}, {} rounds, {:.1} s",
        summary.outputs.len(),
        out.join("pred_results").display(),
        outcome.rounds,
        summary.wall_seconds
    );
    Ok(if outcome.ending == Ending::Finished {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
