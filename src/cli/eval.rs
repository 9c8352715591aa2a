//! `gisclaw eval`: run a task suite for evaluation and write the report;
//! `gisclaw eval report DIR…`: re-render the report from saved results.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use gisclaw::agent::run::Arch;
use gisclaw::bench::geojs::JsSuite;
use gisclaw::bench::steps::LoadedStepTask;
use gisclaw::bench::unit::UnitSuite;
use gisclaw::bench::SuiteKind;
use gisclaw::embed::Embedder;
use gisclaw::eval::metrics::api::OpTable;
use gisclaw::eval::metrics::process::LogEmbedder;
use gisclaw::eval::reports;
use gisclaw::eval::reports::render::{RenderError, RenderRequest, Rendered};
use gisclaw::eval::reports::task::{EvalData, Weights};
use gisclaw::eval::running::jobs::{ItemRecord, SuiteEvent};
use gisclaw::eval::running::plan;
use gisclaw::eval::running::runner::{
    prepare_folder, run_eval, BackendSource, EvalOptions, Manifest,
};
use gisclaw::eval::running::shard::{Shard, ShardPlan};
use gisclaw::eval::running::status::{self, human_duration};
use gisclaw::eval::running::step_eval;
use gisclaw::eval::running::{geojs_eval, unit_eval};
use gisclaw::js::JsConfig;
use gisclaw::sandbox::Zygote;

use super::bench::load_suite;
use super::common::{
    no_backend, BackendArgs, LimitArgs, MctsArgs, ProtocolArgs, SandboxArgs, UsageError,
};

/// Which architectures to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArchChoice {
    /// Single-Agent ReAct.
    Single,
    /// Dual-Agent Plan-Execute-Replan.
    Dual,
    /// Tree search over candidate codes per plan step.
    Mcts,
    /// Single and dual, paired run by run.
    Both,
    /// Single, dual and mcts.
    All,
    /// The LLM alone (GeoAgent's baseline): one generation per task (or
    /// per step of a step suite), no tools, its code run once.
    None,
}

/// `gisclaw eval …`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EvalArgs {
    /// `report`: re-render a report from saved results.
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    /// Options of an eval run.
    #[command(flatten)]
    pub run: EvalRunArgs,
}

/// Subcommands of `gisclaw eval`.
#[derive(clap::Subcommand, Debug)]
pub enum EvalCommand {
    /// Re-render report.md, results.json and results.csv from the records of
    /// one or more eval folders, without running anything. Several task
    /// folders: models, architectures and ablations side by side (the
    /// papers' layouts); several unit or step folders: their comparison.
    Report {
        /// Eval folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where to write the report (default: the first folder).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Composite weights: success, output, api, embedding.
        #[arg(long, value_name = "W,W,W,W", default_value = "0.4,0.3,0.15,0.15")]
        weights: String,
        /// Also write `report.html`: one self-contained page (sortable
        /// tables and charts; for task suites also every run's transcript
        /// as a conversation and a task's runs side by side).
        #[arg(long)]
        html: bool,
        /// Pool runs whose provenance differs in the task, its data or
        /// the model (refused otherwise, naming what differs).
        #[arg(long)]
        mixed_provenance: bool,
        /// Compare folders that ran under different `--protocol`s
        /// (refused otherwise: their figures follow different rules).
        #[arg(long)]
        mixed_protocols: bool,
    },
    /// Write a task-suite eval folder as inspect_ai eval logs (JSON, log
    /// format version 2), one per architecture, for `inspect view`.
    ExportInspect {
        /// The eval folder.
        dir: PathBuf,
        /// Where to write the logs (default: DIR/inspect).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Composite weights of the `composite` score: success, output, api, embedding.
        #[arg(long, value_name = "W,W,W,W", default_value = "0.4,0.3,0.15,0.15")]
        weights: String,
    },
    /// How far a task-suite eval has come, sharded or not: per shard, the
    /// runs recorded, running, failed and missing, and the time left, read
    /// from the folder alone (while its shards run, from any machine that
    /// sees the folder).
    Status {
        /// The eval folder.
        dir: PathBuf,
    },
}

/// Options of `gisclaw eval --suite …`.
#[derive(clap::Args, Debug)]
pub struct EvalRunArgs {
    /// The suite folder (its */task.yaml).
    #[arg(long, value_name = "DIR")]
    pub suite: Option<PathBuf>,
    /// Architectures [default: single; mcts under `--protocol
    /// geoagent-paper`, as GeoAgent's setting has it].
    #[arg(long, value_enum)]
    pub arch: Option<ArchChoice>,
    /// Runs per task and architecture.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Which tasks: e.g. `1-10,18` or ids; in a unit suite, case numbers,
    /// ids, a library (`shapely`) or `library=shapely`.
    #[arg(long, value_name = "LIST")]
    pub tasks: Option<String>,
    /// Runs in parallel (each with its own sandbox session).
    #[arg(short = 'j', long, default_value_t = 1)]
    pub jobs: usize,
    /// The model backend.
    #[command(flatten)]
    pub model: BackendArgs,
    /// Play each task's gold solution through the loop (the ceiling of the
    /// infrastructure: what a perfect model would score).
    #[arg(long, conflicts_with_all = ["replay", "backend", "model", "base_url"])]
    pub replay_gold: bool,
    /// Play recorded sessions: DIR/<task>.<arch>.<run>.jsonl, else
    /// DIR/<task>.<arch>.jsonl, else DIR/<task>.jsonl.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["backend", "model", "base_url"])]
    pub replay: Option<PathBuf>,
    /// Step suites: start each step from the gold state of the steps
    /// before it (single-turn pass@1), not from the model's own.
    #[arg(long)]
    pub gold_prefix: bool,
    /// Step suites: after K failing cells in a step, or an answer that
    /// does not match, show the step's gold cell once and let the model go
    /// on (a scripted person, GeoAgent Table 6's "Hum." columns); counted
    /// per task.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub interventions: usize,
    /// A paper's protocol (`--protocol gisclaw-paper`, …).
    #[command(flatten)]
    pub protocol: ProtocolArgs,
    /// Leave the expert workflow out of the prompts (ablation).
    #[arg(long)]
    pub no_workflow: bool,
    /// Leave the tasks' domain knowledge out of the prompts (GISclaw's
    /// knowledge-gap ablation).
    #[arg(long)]
    pub no_domain_knowledge: bool,
    /// Give the agent `search_docs` over the library-docs index
    /// (`gisclaw knowledge build` once).
    #[arg(long)]
    pub rag: bool,
    /// Brief each task (each step task) with the suite's solved task most
    /// like it, with its gold solution — never the task's own (GeoAgent's
    /// solutions corpus; `--protocol geoagent-paper` with `--rag` sets it).
    #[arg(long)]
    pub solutions: bool,
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
    /// After each finished run, re-run its solution.py in a fresh session
    /// and compare the outputs it makes with the run's (as `solve` does);
    /// the report gets a reproduced-rate column per cell.
    #[arg(long)]
    pub reproduce: bool,
    /// The eval folder (default: gisclaw-runs/eval/<suite name>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write `report.html` at the end (as `gisclaw eval report DIR
    /// --html`).
    #[arg(long)]
    pub html: bool,
    /// Continue the eval in --out: runs already recorded are kept.
    #[arg(long)]
    pub resume: bool,
    /// Also write the eval as inspect_ai eval logs into DIR/inspect (as
    /// `gisclaw eval export-inspect DIR`). Task suites only.
    #[arg(long)]
    pub inspect_log: bool,
    /// Stop at a budget: no run starts once the folder's recorded runs cost
    /// this many USD (runs already going finish; the rest stay for
    /// `--resume` with a higher budget). Task suites, priced models.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Run one shard of a task-suite eval: `K/N` (1 ≤ K ≤ N), or `auto` in
    /// a Slurm array job (or a Kubernetes Indexed Job with GISCLAW_SHARDS
    /// set to its completions). Every shard writes into the same --out
    /// (a shared folder); each run belongs to one shard, a re-run shard
    /// makes only its missing runs, and `gisclaw eval report DIR` renders
    /// the merged results (the last shard to finish renders it too).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<String>,
    /// Balance the shards by the run times recorded in this earlier eval
    /// folder (default: estimated from the tasks' gold cells).
    #[arg(long, value_name = "DIR", requires = "shard")]
    pub costs_from: Option<PathBuf>,
    /// Rounds and time limits of each run.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Bounds of the tree search (`--arch mcts`).
    #[command(flatten)]
    pub mcts: MctsArgs,
    /// Extra GIS operations for API-operation F1 (TOML, `[ops] name = ["pattern", …]`).
    #[arg(long, value_name = "FILE")]
    pub api_ops: Option<PathBuf>,
    /// Composite weights: success, output, api, embedding.
    #[arg(long, value_name = "W,W,W,W", default_value = "0.4,0.3,0.15,0.15")]
    pub weights: String,
    /// LLM-as-judge (L2 diagnostic, not in the composite): grade every run
    /// on five dimensions with this backend or config profile.
    #[arg(long, value_name = "NAME")]
    pub judge: Option<String>,
    /// The judge's model (overrides its profile, OPENAI_MODEL, OLLAMA_MODEL).
    #[arg(long, value_name = "NAME", requires = "judge")]
    pub judge_model: Option<String>,
    /// The judge's server URL.
    #[arg(long, value_name = "URL", requires = "judge")]
    pub judge_base_url: Option<String>,
    /// Vision judge for image outputs (L3): grade maps and charts against
    /// the gold's on five dimensions with this backend or profile (a vision
    /// model); without it, SSIM (a weak signal).
    #[arg(long, value_name = "NAME")]
    pub vision_judge: Option<String>,
    /// The vision judge's model.
    #[arg(long, value_name = "NAME", requires = "vision_judge")]
    pub vision_model: Option<String>,
    /// The vision judge's server URL.
    #[arg(long, value_name = "URL", requires = "vision_judge")]
    pub vision_base_url: Option<String>,
    /// Embed the logs for C_emb (L2) with this backend or profile's
    /// `/embeddings` (an OpenAI-compatible server; GISclaw's paper used
    /// text-embedding-3-large) instead of the bundled MiniLM.
    #[arg(long, value_name = "NAME")]
    pub c_emb: Option<String>,
    /// The C_emb embedding model (e.g. text-embedding-3-large).
    #[arg(long, value_name = "NAME", requires = "c_emb")]
    pub c_emb_model: Option<String>,
    /// The C_emb embedding server's URL.
    #[arg(long, value_name = "URL", requires = "c_emb")]
    pub c_emb_base_url: Option<String>,
    /// Confinement the sandbox must have.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// A judge's backend from `--judge`-style options.
fn judge_backend(
    flag: &str,
    name: &Option<String>,
    model: &Option<String>,
    base_url: &Option<String>,
) -> Result<Option<gisclaw::llm::config::LiveConfig>, UsageError> {
    let Some(name) = name else { return Ok(None) };
    let choice = BackendArgs {
        backend: Some(name.clone()),
        model: model.clone(),
        base_url: base_url.clone(),
        gguf: None,
    };
    let live = choice
        .resolve_live()
        .map_err(|e| UsageError(format!("{flag}: {e}")))?;
    live.map(Some)
        .ok_or_else(|| UsageError(format!("{flag} {name}: no such backend")))
}

/// Runs the command.
pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(EvalCommand::Report {
            dirs,
            out,
            weights,
            html,
            mixed_provenance,
            mixed_protocols,
        }) => render(
            &dirs,
            out.as_deref(),
            &weights,
            (html, mixed_provenance, mixed_protocols),
        ),
        Some(EvalCommand::Status { dir }) => print_status(&dir),
        Some(EvalCommand::ExportInspect { dir, out, weights }) => {
            let weights = Weights::parse(&weights).map_err(|e| UsageError(e.to_string()))?;
            let data = EvalData::load(&dir).map_err(|e| UsageError(e.to_string()))?;
            export_inspect(&data, &weights, out.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            gisclaw::interrupt::install();
            run_suite(args.run)
        }
    }
}

/// The exit code of an eval that ran: 128 + N when signal N stopped it,
/// 1 when `failed` items (`what`: "case(s)", "run(s)") have no record, else 0.
fn eval_exit(failed: usize, what: &str) -> ExitCode {
    if let Some(signal) = gisclaw::interrupt::requested() {
        say_err!(
            "gisclaw: {}: the report covers what was recorded; `gisclaw eval … --resume` runs the rest",
            gisclaw::interrupt::stop_reason().unwrap_or_default()
        );
        return gisclaw::interrupt::exit_code(signal);
    }
    if failed > 0 {
        say_err!(
            "gisclaw: {failed} {what} could not run and have no record; `gisclaw eval … --resume` retries them"
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `gisclaw eval report DIR…`: the library writes the report; this prints
/// its figures and where it is.
fn render(
    dirs: &[PathBuf],
    out: Option<&Path>,
    weights: &str,
    (html, mixed_provenance, mixed_protocols): (bool, bool, bool),
) -> anyhow::Result<ExitCode> {
    let weights = Weights::parse(weights).map_err(|e| UsageError(e.to_string()))?;
    let request = RenderRequest {
        dirs,
        out,
        weights,
        html,
        mixed_provenance,
        mixed_protocols,
    };
    let rendered = reports::render::render(&request).map_err(|e| match e {
        RenderError::Folders(why) => anyhow::Error::from(UsageError(why)),
        other => anyhow::Error::from(other),
    })?;
    let out = out.unwrap_or(&dirs[0]);
    match &rendered {
        Rendered::Tasks(report) => print_summary(report, out),
        Rendered::Unit { summary, kind } => print_unit_summary(summary, out, kind.name()),
        Rendered::Steps(summary) => print_step_summary(summary, out),
        Rendered::Units(models) => {
            for (label, s, r) in models {
                say_err!(
                    "gisclaw: {label}: pass@1 {}, Total_Rank {}",
                    s.pass_at
                        .get(&1)
                        .map_or_else(|| "–".into(), |v| format!("{v:.3}")),
                    r.total
                );
            }
            say_err!("gisclaw: report in {}", out.join("report.md").display());
        }
        Rendered::StepsCompared(folders) => {
            for (label, s) in folders {
                say_err!(
                    "gisclaw: {label}: complete@1 {:.3}, step pass@1 {:.3}",
                    s.complete_at_1,
                    s.step_pass_rate
                );
            }
            say_err!("gisclaw: report in {}", out.join("report.md").display());
        }
    }
    if html {
        say_err!("gisclaw: page in {}", out.join("report.html").display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `gisclaw eval status DIR`.
fn print_status(dir: &Path) -> anyhow::Result<ExitCode> {
    let now = std::time::SystemTime::now();
    let progress = status::status(dir, now).map_err(|e| UsageError(e.to_string()))?;
    let m = &progress.manifest;
    let cells: usize = progress.shards.iter().map(|s| s.cells).sum();
    let split = match &m.shards {
        Some(plan) => format!(" in {} shards (costs {})", plan.count, plan.basis),
        None => String::new(),
    };
    say!(
        "{}: {cells} runs ({} task(s) × {} × {} run(s)){split}",
        dir.display(),
        m.tasks.len(),
        m.archs
            .iter()
            .map(|a| a.name())
            .collect::<Vec<_>>()
            .join("+"),
        m.runs
    );
    let left = |s: Option<f64>| s.map_or_else(|| "–".to_string(), human_duration);
    say!(
        "{:<8} {:>5} {:>5} {:>8} {:>7} {:>8} {:>9}  left",
        "shard",
        "runs",
        "done",
        "running",
        "failed",
        "missing",
        "at once"
    );
    for s in &progress.shards {
        say!(
            "{:<8} {:>5} {:>5} {:>8} {:>7} {:>8} {:>9.1}  {}",
            s.shard.map_or_else(|| "all".to_string(), |s| s.to_string()),
            s.cells,
            s.done,
            s.running,
            s.failed,
            s.missing,
            s.parallel,
            left(s.seconds_left)
        );
    }
    let done: usize = progress.shards.iter().map(|s| s.done).sum();
    if done == cells {
        say!(
            "every run is recorded: `gisclaw eval report {}`",
            dir.display()
        );
    } else {
        say!(
            "{done} of {cells} recorded; ETA {} (every shard running; from the recorded wall times)",
            left(progress.eta_seconds)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_summary(report: &reports::task::Report, out: &Path) {
    for c in &report.cells {
        say_err!(
            "gisclaw: {}: {} runs, success {:.3}, Q_out {}, F_api {:.3}, C_emb {}, S {:.3} [{:.3}, {:.3}]",
            c.label,
            c.n,
            c.success_rate,
            // Q_out is over successful runs only.
            if c.q_out.is_nan() { "n/a (no successful run)".to_string() } else { format!("{:.3}", c.q_out) },
            c.f_api,
            c.c_emb.map(|v| format!("{v:.3}")).unwrap_or_else(|| "n/a".into()),
            c.composite,
            c.composite_ci.0,
            c.composite_ci.1
        );
    }
    if report.missing_runs > 0 {
        say_err!("gisclaw: {} run(s) have no record yet", report.missing_runs);
    }
    for (dir, shard, n) in &report.missing_by_shard {
        say_err!(
            "gisclaw: {}: shard {shard}: {n} run(s) without a record",
            dir.display()
        );
    }
    say_err!("gisclaw: report in {}", out.join("report.md").display());
}

/// `gisclaw eval --suite <unit suite>`: `--runs` samples per case.
fn run_unit(args: &EvalRunArgs, dir: &Path) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        return Err(UsageError("--runs (samples per case) must be at least 1".into()).into());
    }
    let mut suite = UnitSuite::load(dir).map_err(|e| UsageError(e.to_string()))?;
    let selection = gisclaw::bench::select::Selection::parse(args.tasks.as_deref().unwrap_or(""))
        .map_err(|e| UsageError(format!("--tasks: {e}")))?;
    suite.retain(&selection);
    if suite.files.is_empty() {
        return Err(UsageError(format!(
            "--tasks: no case of {} selected (by number, id, library or a label: library=NAME, data_type=, operation=, difficulty=)",
            dir.display()
        ))
        .into());
    }
    let source = backend_source(args)?;
    if let BackendSource::Recorded(rec) = &source {
        require_recordings(
            rec,
            suite.files.iter().flat_map(|(_, file)| {
                file.cases
                    .iter()
                    .map(|case| unit_eval::recording(rec, &file.library, &case.id))
            }),
        )?;
    }
    let backend = unit_eval::describe(&source);
    let out = eval_folder(args, dir);
    let tasks = suite
        .files
        .iter()
        .flat_map(|(_, f)| f.cases.iter().map(|c| format!("{}/{}", f.library, c.id)))
        .collect();
    let manifest = function_manifest(args, dir, tasks, &backend, &source, SuiteKind::Unit);
    prepare_folder(&out, &manifest, args.resume, None).map_err(|e| UsageError(e.to_string()))?;
    let zygote = Zygote::start(sandbox_config(args)?)?;
    let progress = Progress::new("cases");
    say_err!("gisclaw: {} samples per case", args.runs);
    let failed =
        unit_eval::run_unit_eval(&zygote, &suite, &source, args.runs, &out, args.jobs, &|e| {
            progress.event(e)
        })
        .map_err(|e| UsageError(e.to_string()))?;
    progress.finish();
    function_report(
        &out,
        &backend,
        &source,
        args.html,
        (SuiteKind::Unit, args.protocol.protocol),
    )?;
    Ok(eval_exit(failed, "case(s)"))
}

/// Refuses a `--replay DIR` that lacks one of `recordings` (a
/// function-level suite's, one file per case or task), naming it.
fn require_recordings(
    dir: &Path,
    mut recordings: impl Iterator<Item = PathBuf>,
) -> Result<(), UsageError> {
    match recordings.find(|path| !path.is_file()) {
        Some(path) => Err(UsageError(format!(
            "--replay {}: no recording {}",
            dir.display(),
            path.display()
        ))),
        None => Ok(()),
    }
}

/// The provenance of a task or step suite's eval: the model, the
/// software (with the sandbox the zygote reports) and every task's hashes.
fn eval_provenance(
    zygote: &Zygote,
    tasks: &[gisclaw::task::LoadedTask],
    source: &BackendSource,
) -> gisclaw::provenance::EvalProvenance {
    gisclaw::provenance::EvalProvenance {
        model: source.provenance(),
        software: gisclaw::provenance::Software::here(&zygote.config().venv, zygote.info()),
        tasks: tasks
            .iter()
            .map(|t| (t.task.id.clone(), gisclaw::provenance::TaskFiles::of(t)))
            .collect(),
    }
}

/// The manifest of a function-level suite's eval (unit or GeoJSEval).
fn function_manifest(
    args: &EvalRunArgs,
    dir: &Path,
    tasks: Vec<String>,
    backend: &str,
    source: &BackendSource,
    kind: SuiteKind,
) -> Manifest {
    // Function-level suites: the model and the software (the venv's lock
    // for the unit suite); the cases are the suite's files.
    let mut software = gisclaw::provenance::Software::build();
    if kind == SuiteKind::Unit {
        if let Ok(config) = sandbox_config(args) {
            software.venv_lock = gisclaw::provenance::venv_lock(&config.venv);
        }
    }
    let provenance = gisclaw::provenance::EvalProvenance {
        model: source.provenance(),
        software,
        tasks: Default::default(),
    };
    Manifest {
        provenance: Some(provenance),
        protocol: args.protocol.protocol,
        ..Manifest::new(
            kind,
            dir,
            tasks,
            args.runs,
            backend.to_string(),
            source.temperature(),
        )
    }
}

/// Writes a function-level eval's report (and its page with `html`) and
/// prints its summary.
fn function_report(
    out: &Path,
    backend: &str,
    source: &BackendSource,
    html: bool,
    (kind, protocol): (SuiteKind, gisclaw::protocol::Protocol),
) -> anyhow::Result<()> {
    let records = reports::unit::load_records(out).map_err(|e| UsageError(e.to_string()))?;
    let summary = reports::unit::write_report(
        &records,
        backend,
        source.temperature(),
        (kind.name(), protocol),
        out,
        html,
    )
    .map_err(|e| anyhow::anyhow!("writing the report into {}: {e}", out.display()))?;
    if html {
        say_err!("gisclaw: page in {}", out.join("report.html").display());
    }
    print_unit_summary(&summary, out, kind.name());
    Ok(())
}

/// `gisclaw eval --suite <GeoJSEval suite>`: `--runs` samples per task,
/// each run in the confined JavaScript runtime.
fn run_geojs(args: &EvalRunArgs, dir: &Path) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        return Err(UsageError("--runs (samples per task) must be at least 1".into()).into());
    }
    let mut suite = JsSuite::load(dir).map_err(|e| UsageError(e.to_string()))?;
    let selection = gisclaw::bench::select::Selection::parse(args.tasks.as_deref().unwrap_or(""))
        .map_err(|e| UsageError(format!("--tasks: {e}")))?;
    if suite.retain(&selection) == 0 {
        return Err(UsageError(format!(
            "--tasks: no task of {} selected (by number, id, library or a label: library=NAME, data_type=, operation=, difficulty=)",
            dir.display()
        ))
        .into());
    }
    let source = backend_source(args)?;
    if let BackendSource::Recorded(rec) = &source {
        require_recordings(
            rec,
            suite
                .tasks()
                .map(|(library, task)| geojs_eval::recording(rec, library, &task.id)),
        )?;
    }
    let backend = unit_eval::describe(&source);
    let out = eval_folder(args, dir);
    let tasks = suite
        .tasks()
        .map(|(l, t)| format!("{}/{}", l.name(), t.id))
        .collect();
    let manifest = function_manifest(args, dir, tasks, &backend, &source, SuiteKind::Geojs);
    prepare_folder(&out, &manifest, args.resume, None).map_err(|e| UsageError(e.to_string()))?;
    let mut config = JsConfig::installed()?;
    // GeoJSEval's threshold is 30 s; --cell-timeout may only lower it.
    config.call_limit = config.call_limit.min(args.limits.cell_timeout());
    let progress = Progress::new("tasks");
    say_err!(
        "gisclaw: {} samples per task, {} s per call (GeoJSEval's threshold)",
        args.runs,
        config.call_limit.as_secs()
    );
    let failed =
        geojs_eval::run_geojs_eval(&config, &suite, &source, args.runs, &out, args.jobs, &|e| {
            progress.event(e)
        })
        .map_err(|e| UsageError(e.to_string()))?;
    progress.finish();
    function_report(
        &out,
        &backend,
        &source,
        args.html,
        (SuiteKind::Geojs, args.protocol.protocol),
    )?;
    Ok(eval_exit(failed, "task(s)"))
}

/// `gisclaw eval --suite <step suite>`: `--runs` runs per task.
fn run_steps(args: &EvalRunArgs, dir: &Path) -> anyhow::Result<ExitCode> {
    if args.runs == 0 {
        return Err(UsageError("--runs must be at least 1".into()).into());
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("{}: {e}", dir.display())))?
        .flatten()
        .map(|e| e.path().join("task.yaml"))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let all: Vec<LoadedStepTask> = paths
        .iter()
        .map(|p| LoadedStepTask::load(p).map_err(|e| UsageError(e.to_string())))
        .collect::<Result<_, _>>()?;
    let selection = gisclaw::bench::select::Selection::parse(args.tasks.as_deref().unwrap_or(""))
        .map_err(|e| UsageError(format!("--tasks: {e}")))?;
    // The solutions corpus is the whole suite, whatever is selected.
    let solutions = wants_solutions(args)
        .then(|| gisclaw::bench::solutions::of_steps(&all))
        .transpose()
        .map_err(|e| UsageError(format!("--solutions: {e}")))?;
    let tasks: Vec<LoadedStepTask> = all
        .into_iter()
        .filter(|t| selection.matches(&t.task.id))
        .collect();
    if tasks.is_empty() {
        return Err(UsageError(format!("--tasks: no task of {} selected", dir.display())).into());
    }
    let source = backend_source(args)?;
    if let BackendSource::Recorded(rec) = &source {
        for t in &tasks {
            for run in 1..=args.runs {
                if step_eval::recording(rec, &t.task.id, run).is_none() {
                    let id = &t.task.id;
                    return Err(UsageError(format!("--replay {}: no recording for {id} run {run} ({id}.{run}.jsonl or {id}.jsonl)", rec.display())).into());
                }
            }
        }
    }
    let (alone, search) = match arch_choice(args, &source) {
        ArchChoice::Single => (false, false),
        ArchChoice::None => (true, false),
        ArchChoice::Mcts => (false, true),
        _ => return Err(UsageError(
            "--arch: a step suite runs the agent (single, the default), the LLM alone (none) or the tree search over each step (mcts)"
                .into(),
        )
        .into()),
    };
    if search && (args.gold_prefix || args.interventions > 0) {
        return Err(UsageError(
            "--arch mcts on a step suite: its tree search continues from its own state and shows no gold cell; leave out --gold-prefix and --interventions".into(),
        )
        .into());
    }
    if search && matches!(source, BackendSource::Gold) {
        return Err(UsageError(
            "--arch mcts on a step suite: --replay-gold has no candidates to search; give a model or --replay DIR".into(),
        )
        .into());
    }
    let mode = step_eval::StepMode {
        alone,
        gold_prefix: args.gold_prefix,
        interventions: args.interventions,
        search,
    };
    let backend = source.describe();
    let out = eval_folder(args, dir);
    let zygote = Zygote::start(sandbox_config(args)?)?;
    let manifest = Manifest {
        // The agent is the default (no arch recorded, as before modes).
        archs: if mode.alone {
            vec![Arch::None]
        } else if mode.search {
            vec![Arch::Mcts]
        } else {
            Vec::new()
        },
        rag: args.rag,
        solutions: wants_solutions(args),
        gold_prefix: mode.gold_prefix,
        interventions: mode.interventions,
        protocol: args.protocol.protocol,
        provenance: Some(eval_provenance(
            &zygote,
            &tasks.iter().map(|t| t.as_loaded_task()).collect::<Vec<_>>(),
            &source,
        )),
        ..Manifest::new(
            SuiteKind::Steps,
            dir,
            tasks.iter().map(|t| t.task.id.clone()).collect(),
            args.runs,
            backend.clone(),
            source.temperature(),
        )
    };
    prepare_folder(&out, &manifest, args.resume, None).map_err(|e| UsageError(e.to_string()))?;
    let limits = step_eval::StepLimits {
        max_rounds: args.limits.max_rounds,
        step_rounds: 12,
        step_failures: 6,
        budget: args.limits.budget(),
        cell_timeout: args.limits.cell_timeout(),
        search: gisclaw::agent::mcts::step::StepSearchLimits {
            expansions: args.mcts.mcts_iterations as usize,
            width: args.mcts.mcts_width as usize,
            refinements: args.mcts.mcts_repairs as u32,
            ..Default::default()
        },
    };
    let docs = super::common::open_docs_under(args.rag, args.protocol.protocol)?;
    let progress = Progress::new("runs");
    let failed = step_eval::run_step_eval(
        &zygote,
        &tasks,
        &source,
        args.runs,
        &out,
        args.jobs,
        &limits,
        mode,
        (docs.as_deref(), solutions.as_ref()),
        &|e| progress.event(e),
    )
    .map_err(|e| UsageError(e.to_string()))?;
    progress.finish();
    let records = reports::step::load_records(&out).map_err(|e| UsageError(e.to_string()))?;
    let summary = reports::step::write_report(
        &records,
        &manifest.condition(),
        manifest.protocol,
        &out,
        args.html,
    )
    .map_err(|e| anyhow::anyhow!("writing the report into {}: {e}", out.display()))?;
    print_step_summary(&summary, &out);
    if args.html {
        say_err!("gisclaw: page in {}", out.join("report.html").display());
    }
    Ok(eval_exit(failed, "run(s)"))
}

fn print_step_summary(summary: &reports::step::StepSummary, out: &Path) {
    say_err!(
        "gisclaw: {} runs of {} tasks: complete@1 {:.3}, step pass rate {:.3}, task pass rate {:.3}",
        summary.runs, summary.tasks, summary.complete_at_1, summary.step_pass_rate, summary.task_pass_rate
    );
    say_err!("gisclaw: report in {}", out.join("report.md").display());
}

fn print_unit_summary(summary: &reports::unit::UnitSummary, out: &Path, kind: &str) {
    let pass: Vec<String> = summary
        .pass_at
        .iter()
        .map(|(k, v)| format!("pass@{k} {v:.3}"))
        .collect();
    say_err!(
        "gisclaw: {} {} × {} samples: {}",
        summary.cases,
        if kind == "geojs" { "tasks" } else { "cases" },
        summary.samples,
        pass.join(", ")
    );
    say_err!("gisclaw: report in {}", out.join("report.md").display());
}

/// The embedding model for C_emb, or `None` with one line saying why.
/// The C_emb embedder: the `--c-emb` server's model, else the bundled
/// MiniLM (`None`, said, when it cannot load).
fn load_embedder(args: &EvalRunArgs) -> Result<Option<Arc<LogEmbedder>>, UsageError> {
    if let Some(live) = judge_backend(
        "--c-emb",
        &args.c_emb,
        &args.c_emb_model,
        &args.c_emb_base_url,
    )? {
        let served = gisclaw::llm::embeddings::ServedEmbedder::new(live)
            .map_err(|e| UsageError(format!("--c-emb: {e}")))?;
        return Ok(Some(Arc::new(LogEmbedder::Served(Box::new(
            std::sync::Mutex::new(served),
        )))));
    }
    if args.protocol.protocol == gisclaw::protocol::Protocol::GisclawPaper {
        say_err!("gisclaw: C_emb embeds with the bundled MiniLM: the paper's text-embedding-3-large is served by OpenAI (give --c-emb openai --c-emb-model text-embedding-3-large)");
    }
    Ok(match Embedder::load_default() {
        Ok(e) => Some(Arc::new(LogEmbedder::Bundled(Box::new(e)))),
        Err(e) => {
            say_err!("gisclaw: C_emb (L2) will not be computed: {e}");
            None
        }
    })
}

/// The sandbox configuration of an eval's sessions: the flags' and the
/// config file's, with `--cell-timeout` and the protocol's observation
/// budgets.
fn sandbox_config(args: &EvalRunArgs) -> Result<gisclaw::sandbox::SandboxConfig, UsageError> {
    let mut config = args.sandbox.config()?;
    // Function-level suites' sessions take the zygote's cell limit.
    config.cell_timeout = args.limits.cell_timeout();
    args.protocol.protocol.settings().observe(&mut config);
    Ok(config)
}

/// The eval folder: `--out`, else `gisclaw-runs/eval/<suite name>`.
fn eval_folder(args: &EvalRunArgs, suite: &Path) -> PathBuf {
    let name = suite
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "suite".into());
    args.out
        .clone()
        .unwrap_or_else(|| PathBuf::from("gisclaw-runs/eval").join(name))
}

fn backend_source(args: &EvalRunArgs) -> Result<BackendSource, UsageError> {
    if args.replay_gold {
        return Ok(BackendSource::Gold);
    }
    if let Some(dir) = &args.replay {
        if !dir.is_dir() {
            return Err(UsageError(format!(
                "--replay {}: not a folder",
                dir.display()
            )));
        }
        return Ok(BackendSource::Recorded(dir.clone()));
    }
    let Some(mut live) = args.model.resolve_live()? else {
        return Err(no_backend("--replay-gold / --replay DIR"));
    };
    args.protocol.protocol.settings().sample(&mut live);
    Ok(BackendSource::Live(Box::new(live)))
}

fn run_suite(mut args: EvalRunArgs) -> anyhow::Result<ExitCode> {
    let Some(suite) = args.suite.clone() else {
        return Err(UsageError(
            "gisclaw eval needs --suite DIR (or `gisclaw eval report DIR`)".into(),
        )
        .into());
    };
    let kind = SuiteKind::of(&suite);
    plan::check(kind, &asked(&args)).map_err(|e| UsageError(e.to_string()))?;
    let protocol = args.protocol.protocol;
    protocol.suits(kind.name()).map_err(UsageError)?;
    args.limits.follow(protocol)?;
    if protocol != gisclaw::protocol::Protocol::Ours {
        say_err!("gisclaw: {}", protocol.summary());
    }
    match kind {
        SuiteKind::Tasks => {}
        SuiteKind::Unit => return run_unit(&args, &suite),
        SuiteKind::Geojs => return run_geojs(&args, &suite),
        SuiteKind::Steps => return run_steps(&args, &suite),
    }
    let weights = Weights::parse(&args.weights).map_err(|e| UsageError(e.to_string()))?;
    let ops = match &args.api_ops {
        Some(file) => OpTable::with_extension(file).map_err(|e| UsageError(e.to_string()))?,
        None => OpTable::built_in()?,
    };
    let source = backend_source(&args)?;
    let judge = judge_backend(
        "--judge",
        &args.judge,
        &args.judge_model,
        &args.judge_base_url,
    )?;
    let vision_judge = judge_backend(
        "--vision-judge",
        &args.vision_judge,
        &args.vision_model,
        &args.vision_base_url,
    )?;
    let mut tasks = load_suite(&suite, args.tasks.as_deref())?;
    let published = gisclaw::bench::published::apply(protocol.settings().wording, &mut tasks)
        .map_err(|e| UsageError(e.to_string()))?;
    if protocol.settings().wording == gisclaw::bench::published::Wording::Published {
        say_err!(
            "gisclaw: {published} of {} task(s) read as published (the table's instruction, domain knowledge and workflow, verbatim)",
            tasks.len()
        );
    }
    if protocol == gisclaw::protocol::Protocol::GisclawPaper && vision_judge.is_none() {
        say_err!("gisclaw: PNG outputs are scored by SSIM against the gold figure: the paper grades them with a vision model (give --vision-judge MODEL)");
    }
    let archs = archs_of(arch_choice(&args, &source));
    plan::check_source(&tasks, &archs, args.runs, &source, args.max_cost)
        .map_err(|e| UsageError(e.to_string()))?;
    let shard = args
        .shard
        .as_deref()
        .map(|s| Shard::parse(s, &|name| std::env::var(name).ok()))
        .transpose()
        .map_err(|e| UsageError(e.to_string()))?;
    let shards = match (shard, &args.costs_from) {
        (None, _) => None,
        (Some(s), None) => Some(ShardPlan::estimate(&tasks, &archs, s.count)),
        (Some(s), Some(from)) => {
            Some(ShardPlan::measured(from, &tasks, &archs, s.count).map_err(UsageError)?)
        }
    };
    let out = eval_folder(&args, &suite);
    let embedder = load_embedder(&args)?;
    let zygote = Zygote::start(sandbox_config(&args)?)?;
    let manifest = Manifest {
        c_emb_model: embedder.as_ref().map(|e| e.model()),
        archs: archs.clone(),
        workflow: !args.no_workflow,
        domain_knowledge: !args.no_domain_knowledge,
        rag: args.rag,
        solutions: wants_solutions(&args),
        output_checks: !args.no_output_checks,
        vision_feedback: !args.no_vision_feedback,
        shards,
        mcts_rollout: args.mcts.mcts_rollout && archs.contains(&Arch::Mcts),
        provenance: Some(eval_provenance(&zygote, &tasks, &source)),
        protocol,
        ..Manifest::new(
            SuiteKind::Tasks,
            &suite,
            tasks.iter().map(|t| t.task.id.clone()).collect(),
            args.runs,
            source.describe(),
            source.temperature(),
        )
    };
    let options = EvalOptions {
        out: out.clone(),
        jobs: args.jobs.max(1),
        resume: args.resume,
        max_rounds: args.limits.max_rounds,
        budget: args.limits.budget(),
        cell_timeout: args.limits.cell_timeout(),
        context_window: args.limits.context_window,
        ops,
        embedder,
        docs: super::common::open_docs_under(args.rag, protocol)?,
        solutions: task_solutions(&args, &suite)?,
        judge,
        vision_judge,
        mcts: args.mcts.limits(),
        reproduce: args.reproduce,
        shard,
        max_cost: args.max_cost,
    };
    let mut progress = Progress::new("runs");
    if let Some(shard) = shard {
        progress.scope = format!("shard {shard} of {}: ", out.display());
    }
    let failed = run_eval(&zygote, &mut tasks, &manifest, &source, &options, &|e| {
        progress.event(e)
    })
    .map_err(|e| UsageError(e.to_string()))?;
    progress.finish();
    finish_task_eval(&args, &out, shard, failed, weights)
}

/// After a task suite's runs: a shard says where the eval stands (the
/// last one renders the merged report); otherwise the report is written
/// (and the inspect logs), and a spent budget exits 1.
fn finish_task_eval(
    args: &EvalRunArgs,
    out: &Path,
    shard: Option<Shard>,
    failed: usize,
    weights: Weights,
) -> anyhow::Result<ExitCode> {
    let budget_spent = args
        .max_cost
        .filter(|limit| gisclaw::eval::running::runner::spent(out) >= *limit);
    if let Some(shard) = shard {
        // The merged report needs every shard: rendered by whichever
        // finishes last (or by `gisclaw eval report` later).
        let stored = Manifest::read(out).map_err(|e| UsageError(e.to_string()))?;
        let missing = status::missing_by_shard(out, &stored);
        let own = missing
            .iter()
            .find(|(s, _)| *s == Some(shard))
            .map_or(0, |(_, n)| *n);
        let total: usize = missing.iter().map(|(_, n)| n).sum();
        say_err!(
            "gisclaw: shard {shard}: {} of its runs without a record; the eval: {total} of {} without a record",
            own,
            stored.cells().len()
        );
        if total > 0 || gisclaw::interrupt::requested().is_some() {
            say_err!(
                "gisclaw: `gisclaw eval status {0}` follows the other shards; `gisclaw eval report {0}` renders the merged report",
                out.display()
            );
            if let (Some(limit), true) = (budget_spent, own > 0) {
                say_err!(
                    "gisclaw: the --max-cost budget of ${limit} is spent (${:.4} recorded by every shard): {own} of this shard's run(s) not started; `--resume --max-cost USD` with a higher budget runs the rest",
                    gisclaw::eval::running::runner::spent(out)
                );
                return Ok(ExitCode::from(1));
            }
            return Ok(eval_exit(failed, "run(s)"));
        }
    }
    let data = EvalData::load(out).map_err(|e| anyhow::anyhow!("{e}"))?;
    reports::task::pooling::check_poolable(std::slice::from_ref(&data)).map_err(UsageError)?;
    let report = reports::task::build(std::slice::from_ref(&data), weights);
    reports::task::write(
        &report,
        out,
        args.html.then_some(std::slice::from_ref(&data)),
    )
    .map_err(|e| anyhow::anyhow!("writing the report into {}: {e}", out.display()))?;
    print_summary(&report, out);
    if args.html {
        say_err!("gisclaw: page in {}", out.join("report.html").display());
    }
    if args.inspect_log {
        export_inspect(&data, &weights, None)?;
    }
    let missing = data.missing();
    if let (Some(limit), true) = (budget_spent, missing > 0) {
        say_err!(
            "gisclaw: the --max-cost budget of ${limit} is spent (${:.4} recorded): {missing} run(s) not started; the report covers what ran; `gisclaw eval … --resume --max-cost USD` with a higher budget runs the rest",
            gisclaw::eval::running::runner::spent(out)
        );
        return Ok(ExitCode::from(1));
    }
    Ok(eval_exit(failed, "run(s)"))
}

/// The options only some suite kinds take, as [`plan::check`] reads them.
fn asked(args: &EvalRunArgs) -> plan::Asked {
    plan::Asked {
        gold_prefix: args.gold_prefix,
        interventions: args.interventions,
        html: args.html,
        inspect_log: args.inspect_log,
        max_cost: args.max_cost,
        shard: args.shard.is_some(),
        runs: args.runs,
    }
}

/// The solutions corpus of a task suite (every task of it, in the wording
/// the protocol gives), when the tasks are briefed with it.
fn task_solutions(
    args: &EvalRunArgs,
    suite: &Path,
) -> anyhow::Result<Option<Arc<gisclaw::knowledge::solutions::Solutions>>> {
    if !wants_solutions(args) {
        return Ok(None);
    }
    let mut all = load_suite(suite, None)?;
    gisclaw::bench::published::apply(args.protocol.protocol.settings().wording, &mut all)
        .map_err(|e| UsageError(e.to_string()))?;
    let solutions = gisclaw::bench::solutions::of_tasks(&all)
        .map_err(|e| UsageError(format!("--solutions: {e}")))?;
    Ok(Some(Arc::new(solutions)))
}

/// Whether the tasks are briefed with the suite's solutions: `--solutions`,
/// or `--rag` under a protocol whose retrieval has them (GeoAgent's).
fn wants_solutions(args: &EvalRunArgs) -> bool {
    args.solutions || (args.rag && args.protocol.protocol.settings().solutions_with_rag)
}

/// The `--arch` given, else the protocol's: GeoAgent's setting searches a
/// tree (`mcts`) — except over `--replay-gold`, which has no candidates to
/// search, and with `--gold-prefix` or `--interventions`, which the search
/// does not take: those run the agent, said on stderr — and every other
/// runs `single`.
fn arch_choice(args: &EvalRunArgs, source: &BackendSource) -> ArchChoice {
    if let Some(arch) = args.arch {
        return arch;
    }
    if args.protocol.protocol != gisclaw::protocol::Protocol::GeoagentPaper {
        return ArchChoice::Single;
    }
    if matches!(source, BackendSource::Gold) {
        say_err!("gisclaw: --protocol geoagent-paper: the tree search has no candidates to search in --replay-gold; the agent (--arch single) replays the gold");
        return ArchChoice::Single;
    }
    if args.gold_prefix || args.interventions > 0 {
        say_err!("gisclaw: --protocol geoagent-paper: the tree search continues from its own state and shows no gold cell; with --gold-prefix or --interventions the agent (--arch single) runs");
        return ArchChoice::Single;
    }
    ArchChoice::Mcts
}

/// The architectures an `--arch` choice names, in order.
fn archs_of(choice: ArchChoice) -> Vec<Arch> {
    match choice {
        ArchChoice::Single => vec![Arch::Single],
        ArchChoice::Dual => vec![Arch::Dual],
        ArchChoice::Mcts => vec![Arch::Mcts],
        ArchChoice::Both => vec![Arch::Single, Arch::Dual],
        ArchChoice::All => vec![Arch::Single, Arch::Dual, Arch::Mcts],
        ArchChoice::None => vec![Arch::None],
    }
}

/// Writes `data` as inspect_ai eval logs (into `out`, default DIR/inspect)
/// and says where.
fn export_inspect(data: &EvalData, weights: &Weights, out: Option<&Path>) -> anyhow::Result<()> {
    let folder = out.map_or_else(
        || gisclaw::eval::reports::inspect_log::default_dir(&data.dir),
        Path::to_path_buf,
    );
    let written = gisclaw::eval::reports::inspect_log::export(data, weights, &folder)
        .map_err(|e| UsageError(e.to_string()))?;
    for (name, samples) in gisclaw::eval::reports::inspect_log::describe(&written) {
        say_err!(
            "gisclaw: inspect log {} ({samples} samples)",
            folder.join(name).display()
        );
    }
    say_err!(
        "gisclaw: `inspect view --log-dir {}` opens them",
        folder.display()
    );
    Ok(())
}

/// The progress display shared by the three suites: a bar with ETA,
/// successes and tokens on a terminal, one line per event otherwise.
struct Progress {
    /// What one unit of work is called ("runs", "cases").
    unit: &'static str,
    /// Before the plan's line (`shard 2/8 of DIR: `), or empty.
    scope: String,
    bar: Mutex<Option<indicatif::ProgressBar>>,
    /// (successes, finished, tokens) since the start of this invocation.
    tally: Mutex<(usize, usize, u64)>,
    /// Units planned, those recorded before, and when this invocation's
    /// work started: the `k/N` and ETA of lines without a bar.
    plan: Mutex<(usize, usize, std::time::Instant)>,
}

impl Progress {
    fn new(unit: &'static str) -> Progress {
        Progress {
            unit,
            scope: String::new(),
            bar: Mutex::new(None),
            tally: Mutex::new((0, 0, 0)),
            plan: Mutex::new((0, 0, std::time::Instant::now())),
        }
    }

    /// A line above the bar (or on stderr when there is none).
    fn line(&self, text: String) {
        match &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(bar) => bar.println(gisclaw::terminal::clean(&text)),
            None => say_err!("{text}"),
        }
    }

    /// `total` units planned, `done` of them recorded by an earlier invocation.
    fn planned(&self, total: usize, done: usize) {
        *self.plan.lock().unwrap_or_else(|e| e.into_inner()) =
            (total, done, std::time::Instant::now());
        if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total as u64);
            let scope = self.scope.replace('{', "{{").replace('}', "}}");
            let template = format!("{scope}{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {} · {{msg}} (eta {{eta}})", self.unit);
            bar.set_style(super::common::bar_style(&template));
            bar.set_position(done as u64);
            bar.reset_eta();
            *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar);
        } else {
            say_err!(
                "gisclaw: {}{total} {}, {done} already recorded",
                self.scope,
                self.unit
            );
        }
    }

    /// One unit finished: `success` counts towards the tally, `text`
    /// describes it when there is no bar.
    fn finished(&self, success: bool, tokens: u64, text: String) {
        let (ok, all, spent) = {
            let mut t = self.tally.lock().unwrap_or_else(|e| e.into_inner());
            t.0 += usize::from(success);
            t.1 += 1;
            t.2 += tokens;
            *t
        };
        match &*self.bar.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(format!("{ok}/{all} succeeded · {spent} tokens"));
            }
            None => {
                // A log has no bar: each line says where the eval stands.
                let (total, before, started) = *self.plan.lock().unwrap_or_else(|e| e.into_inner());
                let k = before + all;
                let left = total.saturating_sub(k);
                let eta = started.elapsed().as_secs_f64() / all.max(1) as f64 * left as f64;
                let eta = match eta as u64 {
                    0 => String::new(),
                    s => format!(", eta {}m{:02}s", s / 60, s % 60),
                };
                say_err!(
                    "gisclaw: [{k}/{total}{eta}] {text} · {ok}/{all} succeeded · {spent} tokens"
                )
            }
        }
    }

    /// One event of any suite.
    fn event<R: ItemRecord>(&self, event: SuiteEvent<R>) {
        match event {
            SuiteEvent::Gold {
                task,
                problems,
                ran,
            } => {
                if let Some(seconds) = ran {
                    self.line(format!("gisclaw: {task}: gold run made ({seconds:.1} s)"));
                }
                if !problems.is_empty() {
                    self.line(format!(
                        "gisclaw: {task}: the gold run has problems (its L3 is unreliable): {}",
                        problems.join("; ")
                    ));
                }
            }
            SuiteEvent::Planned { total, done } => self.planned(total, done),
            SuiteEvent::Recorded(record) => {
                self.finished(record.succeeded(), record.tokens(), record.summary())
            }
            SuiteEvent::Failed { item, reason } => {
                self.line(format!("gisclaw: {item}: could not run: {reason}"))
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}
