//! One task end to end, for every front end (`solve`, `eval`, benches): the
//! work dir, the sandbox session, the prompts, the agent loop of the chosen
//! architecture, and the run's record (`pred_results/`, `transcript.jsonl`,
//! `solution.py`, `run.json`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use super::alone;
use super::converse::{signalled, Plain};
use super::dual;
use super::events::Events;
use super::mcts::{self, MctsLimits};
use super::memory::ErrorMemory;
use super::plan::{DualLimits, PLAN_STEPS};
use super::prompt::{self, PromptInputs};
use super::single::{self, AgentLimits, AgentOutcome, Ending};
use super::solution;
use super::summary::{output_status, RunSummary};
use super::tools::Toolbox;
use crate::card;
use crate::interrupt::CellStopper;
use crate::llm::ChatBackend;
use crate::outputs::sanity::OutputChecks;
use crate::record::{End, Event, Start, Transcript};
use crate::sandbox::{SandboxConfig, Session, SessionDirs, Zygote};
use crate::task::LoadedTask;
use crate::util::write_atomic;

/// The agent architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// Single-Agent ReAct.
    Single,
    /// Dual-Agent Plan-Execute-Replan.
    Dual,
    /// Tree search over candidate codes per plan step (MCTS).
    Mcts,
    /// The LLM alone: one generation, no tools, its code run once
    /// (GeoAgent's baseline).
    None,
}

impl Arch {
    /// `single`, `dual` or `mcts`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Single => "single",
            Arch::Dual => "dual",
            Arch::Mcts => "mcts",
            Arch::None => "none",
        }
    }

    /// The architecture named `name` (as written in `eval.json`).
    pub fn from_name(name: &str) -> Option<Arch> {
        [Arch::Single, Arch::Dual, Arch::Mcts, Arch::None]
            .into_iter()
            .find(|a| a.name() == name)
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Arch {
    type Err = String;

    /// `single`, `dual`, `mcts` or `none` (the command line's `--arch`).
    fn from_str(s: &str) -> Result<Arch, String> {
        Arch::from_name(s).ok_or_else(|| format!("{s:?}: say single, dual, mcts or none"))
    }
}

/// Where what the run's cells print goes as it comes (solve's spinner).
#[derive(Clone)]
pub struct LiveOutput(pub crate::sandbox::OutputSink);

impl std::fmt::Debug for LiveOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveOutput")
    }
}

/// How to run a task.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The architecture.
    pub arch: Arch,
    /// Put the expert workflow in the prompt (`--no-workflow` clears it).
    pub include_workflow: bool,
    /// Put the task's domain knowledge in the prompt
    /// (`--no-domain-knowledge` clears it).
    pub include_domain_knowledge: bool,
    /// Extra domain knowledge (`--hint`).
    pub hints: Vec<String>,
    /// The protocol the run follows (`--protocol`; recorded in the
    /// transcript's start).
    pub protocol: crate::protocol::Protocol,
    /// Round and time bounds of the Single Agent (and the run's budget).
    pub limits: AgentLimits,
    /// Bounds of the Dual Agent.
    pub dual: DualLimits,
    /// Bounds of the tree search.
    pub mcts: MctsLimits,
    /// Sandbox limits for this task's session.
    pub sandbox: SandboxConfig,
    /// The library-docs index for `search_docs` (`--rag`).
    pub docs: Option<std::sync::Arc<crate::knowledge::Library>>,
    /// The suite's solutions corpus (`--solutions`): the task is briefed
    /// with the other task most like it, with its gold.
    pub solutions: Option<std::sync::Arc<crate::knowledge::solutions::Solutions>>,
    /// Output checks after cells that write under `pred_results/`, and one
    /// refused `finish` while they fail (`--no-output-checks` clears it).
    pub output_checks: bool,
    /// Show the model the figures its cells write, when it sees images
    /// (`--no-vision-feedback` clears it).
    pub vision_feedback: bool,
    /// Which cells `OUT/solution.ipynb` keeps (`--notebook`), or none.
    pub notebook: crate::notebook::NotebookMode,
    /// After a finished run, what re-runs `solution.py`'s cells in a fresh
    /// session and compares the outputs (`solve` gives
    /// `eval::running::reproduce::reproduce`; `--no-reproduce`, eval and `bench
    /// verify` none).
    pub reproduce: Option<Reproducer>,
    /// A live view of what the cells print (`None`: only their results).
    pub live_output: Option<LiveOutput>,
}

/// Re-runs a finished run's kept cells (`zygote`, the run's sandbox
/// limits, its data, its folder, the cells) and says whether they remade
/// its outputs.
pub type Reproducer = fn(
    &Arc<Zygote>,
    &SandboxConfig,
    Option<&Path>,
    &Path,
    &[String],
) -> anyhow::Result<crate::record::Reproduction>;

/// The `start` event of a task run.
fn start_event(
    task: &str,
    options: &RunOptions,
    backend: &dyn ChatBackend,
    session: &Session,
) -> Start {
    Start {
        task: Some(task.to_string()),
        arch: Some(options.arch.name().to_string()),
        backend: Some(backend.describe()),
        replay: Some(backend.is_replay()),
        workflow: Some(options.include_workflow),
        domain_knowledge: Some(options.include_domain_knowledge),
        protocol: (options.protocol != crate::protocol::Protocol::Ours)
            .then(|| options.protocol.name().to_string()),
        rag: Some(options.docs.is_some()),
        gisclaw: Some(env!("CARGO_PKG_VERSION").to_string()),
        sandbox: serde_json::to_value(session.confinement()).ok(),
        ..Start::default()
    }
}

/// Prepares the output folder of a run and returns the session's folders:
///
/// - `OUT/pred_results/` (fresh): the outputs, writable by the cells;
/// - `OUT/work/`: the cells' cwd and scratch space, with `data` and
///   `pred_results` links to the two above;
/// - `OUT/data`: a link to the task's data (so `solution.py` runs from `OUT`);
/// - the run's records (`transcript.jsonl`, `run.json`, `solution.py`) are
///   written into `OUT/` by gisclaw, where no cell can write.
pub fn prepare_out(out: &Path, data_dir: Option<&Path>) -> anyhow::Result<SessionDirs> {
    folders(out, data_dir, true)
}

/// Whether `out` may be used as a run's folder: missing, empty, or one a
/// run left (its `run.json` or `transcript.jsonl` is there). Anything else
/// is a user's folder, whose `work/` and `pred_results/` a run would give
/// to the sandbox.
pub fn is_run_folder(out: &Path) -> bool {
    match std::fs::read_dir(out) {
        Err(_) => !out.exists(),
        Ok(mut entries) => {
            entries.next().is_none()
                || ["run.json", "transcript.jsonl"]
                    .iter()
                    .any(|f| out.join(f).symlink_metadata().is_ok_and(|m| m.is_file()))
        }
    }
}

/// The folders of [`prepare_out`] without clearing `OUT/pred_results/`:
/// a folder that outlives one session (`gisclaw mcp`) keeps its outputs.
pub fn session_folders(out: &Path, data_dir: Option<&Path>) -> anyhow::Result<SessionDirs> {
    folders(out, data_dir, false)
}

/// [`prepare_out`] (`clear`) and [`session_folders`]. `OUT/pred_results/`
/// is emptied only after the overlap check, so a data folder inside it is
/// refused, never deleted.
fn folders(out: &Path, data_dir: Option<&Path>, clear: bool) -> anyhow::Result<SessionDirs> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let out = out
        .canonicalize()
        .with_context(|| format!("resolving {}", out.display()))?;
    let pred = out.join("pred_results");
    let work = out.join("work");
    let data = data_dir
        .map(|d| {
            d.canonicalize()
                .with_context(|| format!("resolving the data folder {}", d.display()))
        })
        .transpose()?;
    if let Some(data) = &data {
        if data.starts_with(&pred) || data.starts_with(&work) || out.starts_with(data) {
            bail!(
                "the data folder {} overlaps the run's folder {}: choose an --out outside the data (and the data outside the run's work/ and pred_results/)",
                data.display(),
                out.display()
            );
        }
    }
    if clear && pred.exists() {
        std::fs::remove_dir_all(&pred).with_context(|| format!("clearing {}", pred.display()))?;
    }
    std::fs::create_dir_all(&pred).with_context(|| format!("creating {}", pred.display()))?;
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    replace_link(&out.join("data"), data.as_deref(), true)?;
    replace_link(&work.join("data"), data.as_deref(), false)?;
    replace_link(&work.join("pred_results"), Some(&pred), false)?;
    Ok(SessionDirs {
        work,
        writable: vec![pred],
        readable: data.into_iter().collect(),
        lend: false,
    })
}

/// Points `link` at `target` (or removes it when `None`). A non-link in
/// its place is an error when `strict` (the user's file), else removed
/// (the cells' scratch space).
fn replace_link(link: &Path, target: Option<&Path>, strict: bool) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(link) {
        Ok(meta) if meta.file_type().is_symlink() || meta.is_file() && !strict => {
            std::fs::remove_file(link)?
        }
        Ok(meta) if meta.is_dir() && !strict => std::fs::remove_dir_all(link)?,
        Ok(_) => bail!(
            "{} exists and is not gisclaw's link: choose another --out",
            link.display()
        ),
        Err(_) => {}
    }
    if let Some(target) = target {
        std::os::unix::fs::symlink(target, link)
            .with_context(|| format!("linking {}", link.display()))?;
    }
    Ok(())
}

/// The first cell of a run under GISclaw's protocol: its tool layer casts
/// numbers read as text (Table 11). Recorded in the session's journal, so
/// `solution.py` starts with it and a reproduction casts the same way.
pub const TOOL_LAYER_CELL: &str =
    "auto_numeric()  # GISclaw's tool layer (--protocol gisclaw-paper): numbers read as text are cast";

/// Runs [`TOOL_LAYER_CELL`] in `session`; `Err` when it fails.
fn start_tool_layer(session: &mut Session) -> anyhow::Result<()> {
    let outcome = session
        .execute(TOOL_LAYER_CELL)
        .context("starting GISclaw's tool layer")?;
    if outcome.status != crate::sandbox::CellStatus::Ok {
        anyhow::bail!(
            "starting GISclaw's tool layer: {}",
            outcome.result.error.map_or_else(
                || format!("{:?}", outcome.status),
                |e| format!("{}: {}", e.ename, e.evalue)
            )
        );
    }
    Ok(())
}

/// Runs `loaded` in `out` with `backend`, writes the run's files, and
/// returns `run.json`'s content. Errors are set-up failures (the work dir,
/// the sandbox); a task that fails is an `Ok` summary with status `failed`.
pub fn run_task(
    zygote: &Arc<Zygote>,
    loaded: &LoadedTask,
    backend: &mut dyn ChatBackend,
    memory: &mut ErrorMemory,
    out: &Path,
    options: &RunOptions,
    events: Events<'_>,
) -> anyhow::Result<RunSummary> {
    let task = &loaded.task;
    let dirs = prepare_out(out, loaded.data_dir.as_deref())?;
    let started = Instant::now();
    let cpu_at_start = backend.cpu_seconds();
    // The data card (GDAL reads of every input in a confined reader, and
    // the tokenizer's first load: ~140 ms) and the output checks' reference
    // (a second reader) are made while the sandbox forks and confines the
    // session: none needs the others.
    let (session, card, checks, task_files) = open_run(zygote, loaded, &dirs, options);
    let mut session = session?;
    // The card amended by what the session's own libraries read of it.
    let card = card.map(|pieces| {
        let dir = loaded.data_dir.as_deref().unwrap_or(Path::new("."));
        card::checked_pieces(pieces, dir, "data/", &mut session)
    });
    if options.protocol.settings().auto_numeric {
        start_tool_layer(&mut session)?;
    }
    session.set_output_sink(options.live_output.as_ref().map(|l| l.0.clone()));
    let packages = prompt::listed_packages(&zygote.info().packages);
    let inputs = PromptInputs {
        task,
        include_workflow: options.include_workflow,
        include_domain_knowledge: options.include_domain_knowledge,
        hints: &options.hints,
        data_path: "data/",
        data_dir: loaded.data_dir.as_deref(),
        schema_card: card.as_deref(),
        packages: packages.clone(),
        blocked: &zygote.config().blocked_imports,
        docs: options.docs.is_some(),
        listing_1: options.protocol.settings().listing_1,
    };
    let system = prompt::system_prompt(&inputs);
    let task_prompt = prompt::task_prompt(&inputs);
    let mut transcript =
        Transcript::create(&out.join("transcript.jsonl")).context("creating the transcript")?;
    transcript.record(start_event(&task.id, options, &*backend, &session));
    let task_prompt = prompt::brief_with_solutions(
        options.solutions.as_deref(),
        task_prompt,
        (&task.instruction, &task.id),
        &mut transcript,
    );
    let _stopper = crate::interrupt::CellStopper::start(session.canceller());
    let mut toolbox = Toolbox {
        session: &mut session,
        out_dir: out.to_path_buf(),
        data_dir: loaded.data_dir.clone(),
        data_path: "data/".into(),
        outputs: task.outputs.clone(),
        docs: options.docs.as_deref(),
        checks,
        vision: options.vision_feedback,
    };
    let dual_inputs = dual::DualInputs {
        system: system.clone(),
        task_prompt: task_prompt.clone(),
        packages,
        blocked: zygote.config().blocked_imports.clone(),
    };
    let outcome = run_arch(
        backend,
        &mut toolbox,
        memory,
        &mut transcript,
        (system, task_prompt, &dual_inputs),
        &task.instruction,
        options,
        events,
    );
    let finished_with_warnings = toolbox
        .checks
        .take()
        .map(|c| c.finished_with)
        .unwrap_or_default();
    let script = solution::consolidate(&task.id, session.journal());
    write_atomic(&out.join("solution.py"), script.as_bytes()).context("writing solution.py")?;
    let kept: Vec<String> = session.journal().map(str::to_string).collect();
    let confinement = session.confinement().clone();
    // One session per folder at a time, and the memory back before the
    // reproduction's own session starts.
    session.end();
    let reproduced = options
        .reproduce
        .filter(|_| matches!(outcome.ending, Ending::Finished))
        .map(|reproduce| {
            reproduce(
                zygote,
                &options.sandbox,
                loaded.data_dir.as_deref(),
                out,
                &kept,
            )
        })
        .transpose()
        .context("reproducing the run from solution.py")?;
    if let Some(r) = &reproduced {
        transcript.record(Event::Reproduce(r.clone()));
    }
    // A stop asked for while the reproduction ran ends the run as stopped.
    let stopped_late = signalled().and_then(|ending| match ending {
        Ending::Interrupted(why) if matches!(outcome.ending, Ending::Finished) => Some(why),
        _ => None,
    });
    let (status, reason) = status_of(&outcome.ending, stopped_late, options.arch);
    let facts = RunFacts {
        started,
        cpu_at_start,
        confinement,
        finished_with_warnings,
        reproduced,
        task_files,
    };
    let summary = summary_of(
        task,
        options,
        backend,
        &outcome,
        (status, &reason),
        facts,
        out,
        zygote,
    );
    summary
        .write(&out.join("run.json"))
        .context("writing run.json")?;
    transcript.record(End {
        status: Some(status.to_string()),
        reason: Some(reason.to_string()),
        rounds: Some(outcome.rounds),
        ..End::default()
    });
    // A record that lost a line is the run's error, not a silent hole.
    transcript.failure()?;
    if options.notebook != crate::notebook::NotebookMode::Off {
        crate::notebook::write_for_run(out, options.notebook, None)
            .context("writing solution.ipynb")?;
    }
    Ok(summary)
}

/// What a run leaves beside its loop's outcome, for its `run.json`.
struct RunFacts {
    started: Instant,
    cpu_at_start: Option<f64>,
    confinement: gisclaw_protocol::ConfinementReport,
    finished_with_warnings: Vec<String>,
    reproduced: Option<crate::record::Reproduction>,
    task_files: crate::provenance::TaskFiles,
}

/// The run's `run.json`.
#[allow(clippy::too_many_arguments)]
fn summary_of(
    task: &crate::task::Task,
    options: &RunOptions,
    backend: &dyn ChatBackend,
    outcome: &AgentOutcome,
    (status, reason): (&str, &str),
    facts: RunFacts,
    out: &Path,
    zygote: &Zygote,
) -> RunSummary {
    RunSummary {
        task: task.id.clone(),
        status: status.into(),
        reason: reason.to_string(),
        arch: options.arch.name().into(),
        backend: backend.describe(),
        replay: backend.is_replay(),
        rounds: outcome.rounds,
        tokens_in: outcome.usage.prompt_tokens,
        tokens_out: outcome.usage.completion_tokens,
        tokens_estimated: outcome.usage.estimated,
        llm_seconds: outcome.llm_time.as_secs_f64(),
        sandbox_seconds: outcome.tool_time.as_secs_f64(),
        wall_seconds: facts.started.elapsed().as_secs_f64(),
        model_cpu_seconds: facts
            .cpu_at_start
            .zip(backend.cpu_seconds())
            .map(|(start, end)| (end - start).max(0.0)),
        cost_usd: backend
            .price()
            .map(|p| p.cost(outcome.usage.prompt_tokens, outcome.usage.completion_tokens)),
        tokens_in_prefix: outcome.usage.prefix_tokens,
        cost_usd_cached_prefix: backend.price().and_then(|p| {
            p.cost_with_cached_prefix(
                outcome.usage.prompt_tokens,
                outcome.usage.prefix_tokens,
                outcome.usage.completion_tokens,
            )
        }),
        outputs: output_status(out, &task.outputs),
        summary: outcome.summary.clone(),
        sandbox: facts.confinement,
        output_checks: options.output_checks,
        finished_with_warnings: facts.finished_with_warnings,
        images_shown: outcome.images_shown,
        image_tokens: outcome.image_tokens,
        compactions: outcome.compactions,
        reproduced: facts.reproduced,
        provenance: crate::provenance::Provenance {
            task: facts.task_files,
            model: backend.provenance(),
            software: crate::provenance::Software::here(&zygote.config().venv, zygote.info()),
        },
    }
}

/// The run's session, its data card (the confined reader's pieces), the
/// output checks' reference and the task files' hashes, made at once: the
/// card (GDAL reads of every input in a confined reader, and the
/// tokenizer's first load: ~140 ms) and the checks' reference (a second
/// reader) are made while the sandbox forks and confines the session.
#[allow(clippy::type_complexity)]
fn open_run(
    zygote: &Arc<Zygote>,
    loaded: &LoadedTask,
    dirs: &SessionDirs,
    options: &RunOptions,
) -> (
    Result<Session, crate::sandbox::SandboxError>,
    Option<Result<Vec<card::Piece>, crate::reader::ReadError>>,
    Option<OutputChecks>,
    crate::provenance::TaskFiles,
) {
    let task = &loaded.task;
    std::thread::scope(|scope| {
        let session = scope.spawn(|| Session::open_in(zygote, dirs, options.sandbox.clone()));
        // The task's and data's hashes for the provenance.
        let task_files = scope.spawn(|| crate::provenance::TaskFiles::of(loaded));
        // The instruction only: domain knowledge names the inputs' CRS.
        let checks = scope.spawn(|| {
            options
                .output_checks
                .then(|| OutputChecks::new(loaded.data_dir.as_deref(), &task.instruction))
        });
        let card = loaded
            .data_dir
            .as_deref()
            .map(|d| card::card_pieces(d, "data/", card::CARD_TOKEN_BUDGET));
        let checks = checks
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let session = session
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let task_files = task_files
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (session, card, checks, task_files)
    })
}

/// Runs the task with the chosen architecture.
#[allow(clippy::too_many_arguments)]
fn run_arch(
    backend: &mut dyn ChatBackend,
    toolbox: &mut Toolbox<'_>,
    memory: &mut ErrorMemory,
    transcript: &mut Transcript,
    (system, task_prompt, dual_inputs): (String, String, &dual::DualInputs),
    instruction: &str,
    options: &RunOptions,
    events: Events<'_>,
) -> AgentOutcome {
    match options.arch {
        Arch::Single => {
            // The Dual Agent and the tree search retrieve per step instead.
            let task_prompt = prompt::brief_with_docs(
                options.docs.as_deref(),
                task_prompt,
                instruction,
                "the task",
                transcript,
            );
            single::run(
                backend,
                toolbox,
                memory,
                transcript,
                system,
                task_prompt,
                &options.limits,
                events,
            )
        }
        Arch::Dual => dual::run(
            backend,
            toolbox,
            memory,
            transcript,
            dual_inputs,
            &options.limits,
            &options.dual,
            events,
        ),
        Arch::None => alone::run(
            backend,
            toolbox,
            transcript,
            system,
            task_prompt,
            &options.limits,
            events,
        ),
        Arch::Mcts => {
            mcts::run(
                &mut Plain(backend),
                toolbox,
                transcript,
                &mcts::SearchInputs {
                    task: dual_inputs,
                    min_steps: PLAN_STEPS.0,
                    chat: false,
                },
                &options.limits,
                &options.mcts,
                &mcts::SearchHooks {
                    stop: &signalled,
                    watch: &CellStopper::start,
                },
                events,
            )
            .outcome
        }
    }
}

/// The run's status and reason: how its loop ended, or `interrupted` when
/// a stop came while a finished run was being reproduced.
fn status_of(ending: &Ending, stopped_late: Option<String>, arch: Arch) -> (&'static str, String) {
    match ending {
        _ if stopped_late.is_some() => ("interrupted", stopped_late.unwrap_or_default()),
        Ending::Finished if arch == Arch::Mcts => (
            "finished",
            "the tree search found a complete path: every step ran and every declared output exists"
                .to_string(),
        ),
        Ending::Finished => (
            "finished",
            "finish accepted: every declared output exists".to_string(),
        ),
        Ending::Failed(why) => ("failed", why.clone()),
        Ending::Error(why) => ("error", why.clone()),
        Ending::Interrupted(why) => ("interrupted", why.clone()),
        Ending::Declined(why) => ("declined", why.clone()),
    }
}

/// The default sandbox limits for a task: the zygote's, with this task's
/// cell timeout and budget.
pub fn sandbox_limits(
    base: &SandboxConfig,
    cell_timeout: Duration,
    budget: Duration,
) -> SandboxConfig {
    SandboxConfig {
        cell_timeout,
        task_budget: budget,
        ..base.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::prepare_out;

    #[test]
    fn a_data_folder_inside_pred_results_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        let data = out.join("pred_results/layers");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("points.csv"), "x,y\n1,2\n").unwrap();

        let err = prepare_out(&out, Some(&data)).unwrap_err().to_string();
        assert!(err.contains("overlaps the run's folder"), "{err}");
        assert_eq!(
            std::fs::read_to_string(data.join("points.csv")).unwrap(),
            "x,y\n1,2\n",
            "the data must survive the refusal"
        );
    }

    #[test]
    fn a_fresh_run_clears_the_previous_outputs() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        std::fs::create_dir_all(out.join("pred_results")).unwrap();
        std::fs::write(out.join("pred_results/old.txt"), "old").unwrap();
        let dirs = prepare_out(&out, None).unwrap();
        assert!(!out.join("pred_results/old.txt").exists());
        assert!(dirs.work.is_dir());
    }
}
