//! `gisclaw bench verify|generate|import`: benchmark suites on disk.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use gisclaw::bench::answers::EXPECTED;
use gisclaw::bench::coverage::Gold;
use gisclaw::bench::data::{self, Provenance};
use gisclaw::bench::import::{self, DataMode};
use gisclaw::bench::labels::Labels;
use gisclaw::bench::select::Selection;
use gisclaw::bench::steps::{self, LoadedStepTask};
use gisclaw::bench::unit::{self, UnitSuite};
use gisclaw::bench::{load, suite_tasks, verify, SuiteKind};
use gisclaw::card;
use gisclaw::sandbox::{SandboxConfig, Zygote};
use gisclaw::task::LoadedTask;

use super::common::UsageError;

/// `gisclaw bench …`.
#[derive(clap::Subcommand, Debug)]
pub enum BenchCommand {
    /// Run every gold solution through the agent loop (replay backend, one
    /// execute_python per gold cell) and check each declared output has
    /// real content. Exit 0 only when every task passes.
    Verify {
        /// The suite folder (its */task.yaml) or one task.yaml.
        suite: PathBuf,
        /// Which tasks: e.g. `1-10,18` (numbers match the id's digits) or ids.
        #[arg(long, value_name = "LIST")]
        tasks: Option<String>,
        /// Where the gold runs go (one folder per task).
        #[arg(long, value_name = "DIR", default_value = "gisclaw-runs/verify")]
        out: PathBuf,
        /// Task suites: replay each gold behind a context window of this
        /// many tokens (the run compacts its history to fit).
        #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(512..))]
        context_window: Option<u64>,
    },
    /// Record the reference answers of a unit suite (`cases/*.yaml` →
    /// `expected.json`) or the gold answers of a step suite (each task's
    /// `expected.json`), which `verify` and eval judge against.
    Expect {
        /// The suite folder.
        suite: PathBuf,
        /// Which tasks (step suites) or libraries / case keys (unit suites).
        #[arg(long, value_name = "LIST")]
        tasks: Option<String>,
        /// Where the runs go.
        #[arg(long, value_name = "DIR", default_value = "gisclaw-runs/expect")]
        out: PathBuf,
    },
    /// Generate (or find cached) the data of tasks that have a generator, and
    /// print each task's files, size and content digest.
    Generate {
        /// The suite folder or one task.yaml.
        suite: PathBuf,
        /// Which tasks.
        #[arg(long, value_name = "LIST")]
        tasks: Option<String>,
        /// Regenerate even when cached.
        #[arg(long)]
        force: bool,
    },
    /// Per library, the share of its public functions, classes, methods
    /// and properties (the docstrings of the sandbox venv's modules, as
    /// `gisclaw knowledge build` extracts them) that some gold of the
    /// suites exercises.
    Coverage {
        /// One or more suite folders (task, step or unit suites).
        #[arg(required = true)]
        suites: Vec<PathBuf>,
        /// Also list the public objects of this library: `+` exercised,
        /// `-` not.
        #[arg(long, value_name = "LIBRARY")]
        list: Option<String>,
    },
    /// Write one task.yaml per row of the official GeoAnalystBench table.
    Import {
        /// GeoAnalystBench.csv.
        csv: PathBuf,
        /// The official data (searched recursively for the files each task names).
        #[arg(long, value_name = "DIR")]
        data: Option<PathBuf>,
        /// The suite folder to write.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Copy the data instead of linking it.
        #[arg(long)]
        copy: bool,
    },
}

/// Runs a bench subcommand.
pub fn run(command: BenchCommand) -> anyhow::Result<ExitCode> {
    match command {
        BenchCommand::Verify {
            suite,
            tasks,
            out,
            context_window,
        } => match SuiteKind::of(&suite) {
            SuiteKind::Tasks => verify_suite(&suite, tasks.as_deref(), &out, context_window),
            _ if context_window.is_some() => Err(UsageError(
                "--context-window is for task suites (e.g. benchmarks/geoanalyst)".into(),
            )
            .into()),
            SuiteKind::Steps => verify_steps(&suite, tasks.as_deref(), &out, false),
            SuiteKind::Unit => verify_unit(&suite, tasks.as_deref(), &out, false),
            SuiteKind::Geojs => super::bench_js::verify(&suite, tasks.as_deref(), false),
        },
        BenchCommand::Expect { suite, tasks, out } => match SuiteKind::of(&suite) {
            SuiteKind::Tasks => Err(UsageError(format!(
                "{}: a task suite has no recorded answers (its outputs are checked by `bench verify`)",
                suite.display()
            ))
            .into()),
            SuiteKind::Steps => verify_steps(&suite, tasks.as_deref(), &out, true),
            SuiteKind::Unit => verify_unit(&suite, tasks.as_deref(), &out, true),
            SuiteKind::Geojs => super::bench_js::verify(&suite, tasks.as_deref(), true),
        },
        BenchCommand::Generate { suite, tasks, force } => generate_suite(&suite, tasks.as_deref(), force),
        BenchCommand::Coverage { suites, list } => coverage(&suites, list.as_deref()),
        BenchCommand::Import { csv, data, out, copy } => {
            let mode = if copy { DataMode::Copy } else { DataMode::Link };
            let report = import::import(&csv, data.as_deref(), &out, mode).map_err(|e| UsageError(e.to_string()))?;
            say!(
                "gisclaw: {} tasks written to {}, {} data files {}",
                report.tasks.len(),
                out.display(),
                report.files,
                if copy { "copied" } else { "linked" }
            );
            for (id, names) in &report.missing {
                say!("  {id}: not found under --data: {}", names.join(", "));
            }
            if !report.pinned() {
                say_err!(
                    "gisclaw: {} is not the GeoAnalystBench table gisclaw pins (sha256 {}, pinned {}): its tasks may differ from benchmarks/geoanalyst",
                    csv.display(),
                    report.sha256,
                    import::PINNED_SHA256
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The gold code of a suite with its library labels: each task's
/// `gold.py` (its steps' libraries, or its declared `libraries:`), each
/// unit case's reference (its library).
fn gold_code(suite: &Path) -> anyhow::Result<Vec<Gold>> {
    match SuiteKind::of(suite) {
        SuiteKind::Geojs => Err(UsageError(format!(
            "{}: coverage counts the Python APIs gold code calls; a JavaScript suite's tasks per library are in `gisclaw bench verify`",
            suite.display()
        ))
        .into()),
        SuiteKind::Unit => {
            let loaded = UnitSuite::load(suite).map_err(|e| UsageError(e.to_string()))?;
            Ok(loaded
                .files
                .iter()
                .flat_map(|(_, f)| {
                    f.cases.iter().map(|c| Gold {
                        code: c.reference.clone(),
                        libraries: vec![c.labels(&f.library).library],
                    })
                })
                .collect())
        }
        SuiteKind::Steps => Ok(suite_tasks(suite)?
            .iter()
            .map(|p| LoadedStepTask::load(p).map_err(|e| UsageError(e.to_string())))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|t| Gold {
                code: t.gold_cells.join("\n"),
                libraries: t
                    .task
                    .steps
                    .iter()
                    .map(|s| s.library.clone())
                    .chain(t.task.libraries.iter().cloned())
                    .collect(),
            })
            .collect()),
        SuiteKind::Tasks => {
            let mut golds = Vec::new();
            for task in load_suite(suite, None)? {
                if let Some(gold) = &task.gold {
                    golds.push(Gold {
                        code: std::fs::read_to_string(gold)
                            .with_context(|| format!("reading {}", gold.display()))?,
                        libraries: Vec::new(),
                    });
                }
            }
            Ok(golds)
        }
    }
}

/// `gisclaw bench coverage SUITE…`.
fn coverage(suites: &[PathBuf], list: Option<&str>) -> anyhow::Result<ExitCode> {
    let mut golds = Vec::new();
    for suite in suites {
        if !suite.exists() {
            return Err(UsageError(format!("{}: no such suite", suite.display())).into());
        }
        golds.extend(gold_code(suite)?);
    }
    let python = gisclaw::paths::default_venv().join("bin/python");
    let (entries, _) =
        gisclaw::knowledge::build::extract(&python, &gisclaw::knowledge::build::default_modules())
            .map_err(|e| anyhow::anyhow!(e))?;
    let rows = gisclaw::bench::coverage::coverage(&entries, &golds);
    say!(
        "{:<16} {:>7} {:>10} {:>8}",
        "library",
        "public",
        "exercised",
        "share"
    );
    for row in &rows {
        say!(
            "{:<16} {:>7} {:>10} {:>7.1} %",
            row.library,
            row.public,
            row.exercised.len(),
            100.0 * row.share()
        );
    }
    let public: usize = rows.iter().map(|r| r.public).sum();
    let exercised: usize = rows.iter().map(|r| r.exercised.len()).sum();
    say!(
        "gisclaw: {} golds exercise {exercised} of {public} public objects of {} libraries",
        golds.len(),
        rows.len()
    );
    if let Some(library) = list {
        let Some(row) = rows.iter().find(|r| r.library == library) else {
            return Err(UsageError(format!(
                "--list: no documented library `{library}` (one of: {})",
                rows.iter()
                    .map(|r| r.library.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        };
        let done: std::collections::BTreeSet<&str> =
            row.exercised.iter().map(String::as_str).collect();
        for entry in entries
            .iter()
            .filter(|e| e.name.split('.').next() == Some(library))
        {
            let mark = if done.contains(entry.name.as_str()) {
                '+'
            } else {
                '-'
            };
            say!("{mark} {} ({})", entry.name, entry.kind);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The selected tasks of a suite as plain tasks (see
/// [`gisclaw::bench::load::load_suite`]); a problem is a usage error.
pub(crate) fn load_suite(suite: &Path, tasks: Option<&str>) -> anyhow::Result<Vec<LoadedTask>> {
    Ok(load::load_suite(suite, tasks).map_err(|e| UsageError(e.0))?)
}

pub(crate) fn bar(len: usize) -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(len as u64);
        bar.set_style(super::common::bar_style(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg} (eta {eta})",
        ));
        bar
    })
}

fn verify_suite(
    suite: &Path,
    tasks: Option<&str>,
    out: &Path,
    window: Option<u64>,
) -> anyhow::Result<ExitCode> {
    let mut loaded = load_suite(suite, tasks)?;
    let zygote = Zygote::start(SandboxConfig::default())?;
    let bar = bar(loaded.len());
    let mut verdicts = Vec::new();
    for task in &mut loaded {
        if let Some(bar) = &bar {
            bar.set_message(gisclaw::terminal::clean(&task.task.id));
        } else {
            say_err!("gisclaw: verifying {}", task.task.id);
        }
        let dir = out.join(&task.task.id);
        let verdict = verify::verify_task_within(&zygote, task, &dir, window);
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        verdicts.push(verdict);
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    say!(
        "{:<14} {:>5} {:>7} {:>7}  {:<6} outputs",
        "task",
        "cells",
        "gen s",
        "run s",
        "result"
    );
    for v in &verdicts {
        let outputs: Vec<String> = v
            .outputs
            .iter()
            .map(|(path, check)| {
                format!(
                    "{} ({})",
                    path.trim_start_matches("pred_results/"),
                    check.describe()
                )
            })
            .collect();
        say!(
            "{:<14} {:>5} {:>7.1} {:>7.1}  {:<6} {}",
            v.id,
            v.cells,
            v.generate_seconds,
            v.run_seconds,
            if v.passed() { "pass" } else { "FAIL" },
            outputs.join("; ")
        );
    }
    let failed: Vec<_> = verdicts.iter().filter(|v| !v.passed()).collect();
    for v in &failed {
        for p in &v.problems {
            say!("  {p}");
        }
    }
    let warned: Vec<_> = verdicts
        .iter()
        .filter(|v| !v.check_warnings.is_empty())
        .collect();
    for v in &warned {
        for w in &v.check_warnings {
            say!("  {}: output check: {w}", v.id);
        }
    }
    say!(
        "output checks: {} of {} gold runs would get a warning",
        warned.len(),
        verdicts.len()
    );
    say!(
        "gisclaw: {}/{} gold solutions verified (runs in {})",
        verdicts.len() - failed.len(),
        verdicts.len(),
        out.display()
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn generate_suite(suite: &Path, tasks: Option<&str>, force: bool) -> anyhow::Result<ExitCode> {
    let mut loaded = load_suite(suite, tasks)?;
    let zygote = Zygote::start(SandboxConfig::default())?;
    let mut failures = 0;
    say!(
        "{:<14} {:>5} {:>9} {:>16}  data",
        "task",
        "files",
        "MB",
        "digest"
    );
    for task in &mut loaded {
        if task.generator.is_empty() {
            say!("{:<14} (given data, nothing to generate)", task.task.id);
            continue;
        }
        if force {
            let dir = data::cached_dir(task)?;
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
            }
        }
        match data::ensure(&zygote, task) {
            Ok(how) => {
                let dir = task.data_dir.clone().unwrap_or_default();
                let files = card::files_under(&dir);
                let bytes: u64 = files.iter().map(|(_, b)| b).sum();
                let digest =
                    data::digest(&dir).with_context(|| format!("reading {}", dir.display()))?;
                let how = match how {
                    Provenance::Generated(t) => format!("generated in {:.1} s", t.as_secs_f64()),
                    _ => "cached".into(),
                };
                say!(
                    "{:<14} {:>5} {:>9.2} {digest:>16}  {} ({how})",
                    task.task.id,
                    files.len(),
                    bytes as f64 / 1e6,
                    dir.display()
                );
            }
            Err(e) => {
                failures += 1;
                say!("{:<14} FAILED {e}", task.task.id);
            }
        }
    }
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Step suites: runs each gold step by step with its checks; judges them
/// against the recorded answers, or (`record`) records them.
fn verify_steps(
    suite: &Path,
    tasks: Option<&str>,
    out: &Path,
    record: bool,
) -> anyhow::Result<ExitCode> {
    let loaded = load::select(
        suite,
        tasks,
        LoadedStepTask::load,
        |t| &t.task.id,
        |_| Labels::default(),
    )
    .map_err(|e| UsageError(e.0))?;
    let zygote = Zygote::start(SandboxConfig::default())?;
    let bar = bar(loaded.len());
    say!("{:<8} {:>5}  {:<7} steps", "task", "steps", "result");
    let mut failed = 0;
    let mut problems = Vec::new();
    for task in &loaded {
        if let Some(bar) = &bar {
            bar.set_message(gisclaw::terminal::clean(&task.task.id));
        }
        let verdicts = steps::run_gold(&zygote, task, &out.join(&task.task.id), !record);
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        let (marks, mut task_problems) = match verdicts {
            Ok(verdicts) => {
                let marks: String = verdicts
                    .iter()
                    .map(|v| if v.problem.is_none() { '✓' } else { '✗' })
                    .collect();
                let task_problems: Vec<String> =
                    verdicts.iter().filter_map(|v| v.problem.clone()).collect();
                if record && task_problems.is_empty() {
                    steps::record(task, &verdicts).map_err(|e| anyhow::anyhow!(e))?;
                }
                (marks, task_problems)
            }
            Err(e) => (String::new(), vec![e.to_string()]),
        };
        let ok = task_problems.is_empty();
        failed += usize::from(!ok);
        let result = match (ok, record) {
            (true, true) => "recorded",
            (true, false) => "pass",
            _ => "FAIL",
        };
        let line = format!(
            "{:<8} {:>5}  {:<7} {marks}",
            task.task.id,
            task.task.steps.len(),
            result
        );
        match &bar {
            Some(bar) => bar.println(gisclaw::terminal::clean(&line)),
            None => say!("{line}"),
        }
        problems.append(&mut task_problems);
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    for p in &problems {
        say!("  {p}");
    }
    let steps: usize = loaded.iter().map(|t| t.task.steps.len()).sum();
    say!(
        "gisclaw: {}/{} step tasks {} ({steps} steps; runs in {})",
        loaded.len() - failed,
        loaded.len(),
        if record { "recorded" } else { "verified" },
        out.display()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Unit suites: runs every reference; judges it against `expected.json`,
/// or (`record`) records its answers there.
fn verify_unit(
    suite: &Path,
    tasks: Option<&str>,
    out: &Path,
    record: bool,
) -> anyhow::Result<ExitCode> {
    let selection =
        Selection::parse(tasks.unwrap_or("")).map_err(|e| UsageError(format!("--tasks {e}")))?;
    let loaded = UnitSuite::load(suite).map_err(|e| UsageError(e.to_string()))?;
    let mut chosen = loaded.clone();
    chosen.retain(&selection);
    let selected = chosen.labels();
    let keep = |key: &str| selected.contains_key(key.split('#').next().unwrap_or_default());
    let zygote = Zygote::start(SandboxConfig::default())?;
    let answers =
        unit::run_references(&zygote, &loaded, out, &keep).map_err(|e| anyhow::anyhow!(e))?;
    if answers.is_empty() {
        return Err(UsageError(format!("{}: no case selected", suite.display())).into());
    }
    if record {
        let n = unit::record(&loaded, &answers).map_err(|e| anyhow::anyhow!(e))?;
        say!(
            "gisclaw: {n} answers recorded in {}",
            suite.join(EXPECTED).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let verdicts = unit::verify(&loaded, &answers);
    let confirmations = unit::run_confirmations(&zygote, &loaded, &out.join("confirm"), &keep)
        .map_err(|e| anyhow::anyhow!(e))?;
    let second = unit::verify_confirmations(&loaded, &confirmations);
    let confirmed: std::collections::BTreeSet<&str> = confirmations
        .iter()
        .map(|(k, _)| k.split('#').next().unwrap_or_default())
        .collect();
    let labels = loaded.labels();
    let label_of = |key: &str| labels.get(key.split('#').next().unwrap_or_default());
    let mut by_library: std::collections::BTreeMap<String, (usize, usize, usize)> =
        Default::default();
    for v in &verdicts {
        let library = label_of(&v.key).map_or("?", |l| l.library.as_str());
        let entry = by_library.entry(library.to_string()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(v.problem.is_none());
    }
    for v in second.iter().filter(|v| v.problem.is_none()) {
        let library = label_of(&v.key).map_or("?", |l| l.library.as_str());
        by_library.entry(library.to_string()).or_default().2 += 1;
    }
    say!(
        "{:<14} {:>9} {:>7} {:>10}",
        "library",
        "instances",
        "agree",
        "confirmed"
    );
    for (library, (n, ok, confirmed)) in &by_library {
        say!("{library:<14} {n:>9} {ok:>7} {confirmed:>10}");
    }
    let failed: Vec<_> = verdicts
        .iter()
        .chain(&second)
        .filter(|v| v.problem.is_some())
        .collect();
    for v in &failed {
        say!("  {}: {}", v.key, v.problem.as_deref().unwrap_or_default());
    }
    let agree = verdicts.iter().filter(|v| v.problem.is_none()).count();
    let second_agree = second.iter().filter(|v| v.problem.is_none()).count();
    say!(
        "gisclaw: {agree}/{} reference answers agree with {EXPECTED} ({} cases); second routes: {second_agree}/{} calls of {} cases agree",
        verdicts.len(),
        selected.len(),
        second.len(),
        confirmed.len(),
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
