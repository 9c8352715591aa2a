//! Runs a task suite for evaluation: every (task, arch, run) in its own work
//! dir and sandbox session, scored as soon as it ends, its record written
//! atomically — so a killed eval resumes with nothing lost or duplicated.
//!
//! Layout of the eval folder:
//!
//! ```text
//! eval.json                       what was asked (checked on --resume)
//! gold/<task>/                    the gold run: outputs, transcript, gold.py, gold.json
//! gold/<task>.claim               held while one process (of the shards) runs that gold
//! shards/<K>.claim, shards/all.claim  held while shard K (or the whole eval) runs
//! runs/<task>/<arch>-<run>/       each run's work dir (pred_results/, transcript, solution.py, run.json)
//! records/<task>.<arch>.<run>.json  each run's scores (its presence means done)
//! failed/<task>.<arch>.<run>.json   why a run could not be carried out (model server,
//!                                 network or sandbox failure; removed once it is recorded)
//! results.json results.csv report.md   the report (see `report`)
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agent::mcts::MctsLimits;
use crate::agent::memory::ErrorMemory;
use crate::agent::plan::DualLimits;
use crate::agent::run::{run_task, sandbox_limits, Arch, RunOptions};
use crate::agent::single::AgentLimits;
use crate::bench::data;
use crate::bench::verify::{self, gold_dual_messages, gold_mcts_messages, gold_messages};
use crate::bench::SuiteKind;
use crate::eval::metrics::api::OpTable;
use crate::eval::metrics::llm_judge;
use crate::eval::metrics::llm_judge::JudgeError;
use crate::eval::metrics::process;
use crate::eval::metrics::process::LogEmbedder;
use crate::eval::metrics::vision_judge;
use crate::eval::running::claim::{Attempt, Claim, ClaimTimes};
use crate::eval::running::jobs::{self, ItemError, Plan, SuiteEvent};
use crate::eval::running::record::{score_run, GoldReference, RunRecord};
use crate::eval::running::shard::{self, Shard, ShardPlan};
use crate::llm::config::LiveConfig;
use crate::llm::replay::ReplayBackend;
use crate::llm::ChatBackend;
use crate::sandbox::Zygote;
use crate::task::LoadedTask;
use crate::util::write_atomic;

/// Where each run's model comes from (for every kind of suite; each says
/// what its gold and its recordings are).
#[derive(Clone)]
pub enum BackendSource {
    /// The suite's gold (the ceiling): task suites play their gold
    /// solution through the loop, step suites their gold cells, unit
    /// suites run the reference implementations.
    Gold,
    /// Recorded sessions in this folder. Task suites:
    /// `DIR/<task>.<arch>.<run>.jsonl`, else `DIR/<task>.<arch>.jsonl`, else
    /// `DIR/<task>.jsonl` (step and unit suites: see their modules).
    Recorded(PathBuf),
    /// A live model.
    Live(Box<LiveConfig>),
}

impl BackendSource {
    /// The sampling temperature a live model's profile sets (`None`: the
    /// server's default; replays have none).
    pub fn temperature(&self) -> Option<f32> {
        match self {
            BackendSource::Live(live) => live.temperature,
            _ => None,
        }
    }
}

impl BackendSource {
    /// What the provenance records of this source's model.
    pub fn provenance(&self) -> crate::provenance::ModelProvenance {
        match self {
            BackendSource::Live(live) => live.provenance(self.describe()),
            _ => crate::provenance::ModelProvenance {
                backend: self.describe(),
                replay: true,
                ..Default::default()
            },
        }
    }

    /// A description for the manifest and the report (never a secret).
    pub fn describe(&self) -> String {
        match self {
            BackendSource::Gold => "gold replay".into(),
            BackendSource::Recorded(dir) => format!("recorded sessions in {}", dir.display()),
            BackendSource::Live(live) => {
                format!(
                    "{}: {} at {}",
                    live.name,
                    live.model,
                    crate::llm::provenance::public_url(&live.base_url)
                )
            }
        }
    }

    /// The recording for one run, if this source replays files.
    pub fn recording(&self, task: &str, arch: Arch, run: usize) -> Option<PathBuf> {
        let BackendSource::Recorded(dir) = self else {
            return None;
        };
        [
            format!("{task}.{}.{run}.jsonl", arch.name()),
            format!("{task}.{}.jsonl", arch.name()),
            format!("{task}.jsonl"),
        ]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
    }

    /// The model of one run: `decline` is the reason of a task the data
    /// cannot answer (its gold declines with it).
    fn open(
        &self,
        task: &str,
        gold: &str,
        decline: Option<&str>,
        arch: Arch,
        run: usize,
        mcts: &MctsLimits,
    ) -> Result<Box<dyn ChatBackend>, ItemError> {
        match self {
            BackendSource::Gold => {
                let mut messages = match arch {
                    Arch::Single => gold_messages(task, gold),
                    Arch::Dual => gold_dual_messages(task, gold),
                    Arch::Mcts => gold_mcts_messages(task, gold, mcts.width, mcts.rollout),
                    Arch::None => verify::gold_alone_messages(gold),
                };
                if let Some(reason) = decline {
                    messages = verify::gold_declining(arch, messages, reason);
                }
                Ok(Box::new(ReplayBackend::from_messages(
                    &format!("gold of {task}"),
                    messages,
                )))
            }
            BackendSource::Recorded(dir) => {
                let file =
                    self.recording(task, arch, run)
                        .ok_or_else(|| ItemError::NoRecording {
                            dir: dir.clone(),
                            item: format!("{task} ({} run {run})", arch.name()),
                        })?;
                Ok(Box::new(ReplayBackend::open(&file)?))
            }
            BackendSource::Live(live) => Ok(crate::llm::open_live((**live).clone())?),
        }
    }
}

/// `eval.json`: what an eval folder holds. `--resume` continues only an
/// eval asking the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The suite folder.
    pub suite: PathBuf,
    /// Task ids, in order.
    pub tasks: Vec<String>,
    /// The architectures, in order.
    pub archs: Vec<Arch>,
    /// Runs per task and arch.
    pub runs: usize,
    /// The backend's description.
    pub backend: String,
    /// Whether the prompt carried the expert workflow.
    pub workflow: bool,
    /// Whether the prompt carried the task's domain knowledge
    /// (`--no-domain-knowledge` clears it).
    #[serde(default = "yes")]
    pub domain_knowledge: bool,
    /// Whether the agent had `search_docs` (`--rag`).
    #[serde(default)]
    pub rag: bool,
    /// Whether each task was briefed with the suite's most similar other
    /// solved task (`--solutions`, GeoAgent's solutions corpus).
    #[serde(default)]
    pub solutions: bool,
    /// The gisclaw version that started it.
    pub gisclaw: String,
    /// The suite's kind (`tasks` by default): which report the folder gets.
    #[serde(default)]
    pub kind: SuiteKind,
    /// Whether the runs had output checks (`--no-output-checks` clears it).
    #[serde(default = "yes")]
    pub output_checks: bool,
    /// Whether the runs had vision feedback (`--no-vision-feedback` clears it).
    #[serde(default = "yes")]
    pub vision_feedback: bool,
    /// The sampling temperature the backend's profile sets (`None`: the
    /// server's default, or recorded answers).
    #[serde(default)]
    pub temperature: Option<f32>,
    /// Step suites: each step started from the gold state of the steps
    /// before it (`--gold-prefix`).
    #[serde(default)]
    pub gold_prefix: bool,
    /// Sharded evals (`--shard`): how the cells are split, fixed by the
    /// shard that made the folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardPlan>,
    /// Whether tree-search nodes were rewarded by rollouts (`--mcts-rollout`).
    #[serde(default)]
    pub mcts_rollout: bool,
    /// Step suites: the gold cell was shown after this many failing cells
    /// or a wrong answer (`--interventions K`; 0: never).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interventions: usize,
    /// What the eval was made from: the model, the software, every task's
    /// and its data's hashes (`None` in folders written before it; each
    /// run's own bundle is in its record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::provenance::EvalProvenance>,
    /// The protocol the eval ran under (`--protocol`; `ours` in folders
    /// written before it).
    #[serde(default)]
    pub protocol: crate::protocol::Protocol,
    /// The model that embedded the logs for C_emb (`None`: not computed,
    /// or a folder written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_emb_model: Option<String>,
}

impl Manifest {
    /// The manifest of an eval of `kind` over `suite`'s `tasks` (ids, in
    /// order), `runs` each, answered by `backend` (its description) at
    /// `temperature`: the suite's path made absolute, this gisclaw's
    /// version, no architecture, every run option off and no provenance —
    /// each suite's eval sets what it has on top.
    pub fn new(
        kind: SuiteKind,
        suite: &Path,
        tasks: Vec<String>,
        runs: usize,
        backend: String,
        temperature: Option<f32>,
    ) -> Manifest {
        Manifest {
            suite: std::fs::canonicalize(suite).unwrap_or_else(|_| suite.to_path_buf()),
            tasks,
            archs: Vec::new(),
            runs,
            backend,
            workflow: false,
            domain_knowledge: true,
            rag: false,
            solutions: false,
            gisclaw: env!("CARGO_PKG_VERSION").to_string(),
            kind,
            output_checks: false,
            vision_feedback: false,
            temperature,
            gold_prefix: false,
            shards: None,
            mcts_rollout: false,
            interventions: 0,
            provenance: None,
            protocol: crate::protocol::Protocol::Ours,
            c_emb_model: None,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

/// The ablation flags an eval folder records, as (name, on) pairs: what
/// `eval report A B` compares when two folders differ in exactly one.
pub const ABLATIONS: [&str; 7] = [
    "workflow",
    "rag",
    "output checks",
    "vision feedback",
    "mcts rollout",
    "domain knowledge",
    "solutions",
];

impl Manifest {
    /// The value of each of [`ABLATIONS`] in this folder.
    pub fn ablations(&self) -> [bool; 7] {
        [
            self.workflow,
            self.rag,
            self.output_checks,
            self.vision_feedback,
            self.mcts_rollout,
            self.domain_knowledge,
            self.solutions,
        ]
    }

    /// The backend with the flags that differ from the defaults (`gpt-x ·
    /// no workflow · rag`), so folders of an ablation get their own rows;
    /// a step suite's with its mode (`· LLM alone`, `· gold prefix`).
    pub fn condition(&self) -> String {
        let defaults = [true, false, true, true, false, true, false];
        let mut label = self.backend.clone();
        if self.protocol != crate::protocol::Protocol::Ours {
            label.push_str(&format!(" · {}", self.protocol));
        }
        if self.kind == SuiteKind::Steps {
            if self.archs.contains(&Arch::None) {
                label.push_str(" · LLM alone");
            }
            if self.archs.contains(&Arch::Mcts) {
                label.push_str(" · tree search");
            }
            if self.rag {
                label.push_str(" · rag");
            }
            if self.solutions {
                label.push_str(" · solutions");
            }
            if self.gold_prefix {
                label.push_str(" · gold prefix");
            }
            if self.interventions > 0 {
                label.push_str(&format!(" · human after {}", self.interventions));
            }
            return label;
        }
        if self.kind != SuiteKind::Tasks {
            return label;
        }
        for ((name, on), default) in ABLATIONS.iter().zip(self.ablations()).zip(defaults) {
            if on != default {
                label.push_str(&format!(" · {}{name}", if on { "" } else { "no " }));
            }
        }
        label
    }

    /// Every (task, arch, run) of the eval, in order.
    pub fn cells(&self) -> Vec<shard::Cell> {
        let archs: Vec<String> = self.archs.iter().map(|a| a.name().to_string()).collect();
        shard::cells(&self.tasks, &archs, self.runs)
    }

    /// The cells `shard` owns per the folder's plan (every cell when the
    /// eval is not sharded).
    pub fn cells_of(&self, shard: Option<Shard>) -> Vec<shard::Cell> {
        let all = self.cells();
        match (shard, &self.shards) {
            (Some(shard), Some(plan)) => plan
                .assign(&all)
                .into_iter()
                .zip(all)
                .filter(|(s, _)| *s == shard.index)
                .map(|(_, c)| c)
                .collect(),
            _ => all,
        }
    }

    /// Reads `DIR/eval.json`.
    pub fn read(out: &Path) -> Result<Manifest, EvalError> {
        let path = out.join("eval.json");
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        serde_json::from_str(&text).map_err(|e| EvalError::Folder {
            path: path.display().to_string(),
            message: format!("line {}: {e}", e.line()),
        })
    }
}

/// How to run: what this process uses to carry out the eval. What the
/// runs are (the workflow in the prompt, output checks, vision feedback…)
/// is the [`Manifest`]'s, recorded in `eval.json`.
pub struct EvalOptions {
    /// The eval folder.
    pub out: PathBuf,
    /// Runs in parallel.
    pub jobs: usize,
    /// Continue an existing eval folder.
    pub resume: bool,
    /// Most model rounds per run.
    pub max_rounds: usize,
    /// Time budget per run.
    pub budget: Duration,
    /// Per-cell time limit.
    pub cell_timeout: Duration,
    /// The model's context window (`--context-window`): replays refuse
    /// longer requests, and every run compacts within it.
    pub context_window: Option<u64>,
    /// The GIS operation table of API-operation F1.
    pub ops: OpTable,
    /// The sentence-embedding model for C_emb (L2); `None`: C_emb is not
    /// computed.
    pub embedder: Option<Arc<LogEmbedder>>,
    /// The library-docs index for `search_docs` (`--rag`).
    pub docs: Option<Arc<crate::knowledge::Library>>,
    /// The suite's solutions corpus (`--solutions`).
    pub solutions: Option<Arc<crate::knowledge::solutions::Solutions>>,
    /// The model of the LLM judge (L2 diagnostic); `None`: no judging.
    pub judge: Option<LiveConfig>,
    /// The vision model grading image outputs (L3); `None`: SSIM.
    pub vision_judge: Option<LiveConfig>,
    /// Bounds of the tree search (`--arch mcts`).
    pub mcts: MctsLimits,
    /// Re-run each finished run's solution.py and compare its outputs
    /// (`--reproduce`).
    pub reproduce: bool,
    /// The shard this process runs (`None`: every cell).
    pub shard: Option<Shard>,
    /// `--max-cost`: no run starts once the folder's recorded runs cost
    /// this many USD (see [`spent`]).
    pub max_cost: Option<f64>,
}

/// USD the recorded runs of the eval in `out` cost (unpriced runs count 0).
pub fn spent(out: &Path) -> f64 {
    std::fs::read_dir(records_dir(out))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| RunRecord::read(&e.path()))
        .filter_map(|r| r.cost_usd)
        .sum()
}

/// Problems that stop an eval before it runs.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The folder holds another eval.
    #[error("{path}: {message}")]
    Folder {
        /// eval.json.
        path: String,
        /// What differs.
        message: String,
    },
    /// File system trouble.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> EvalError + '_ {
    move |source| EvalError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What the task suite tells its front end.
pub type EvalEvent = SuiteEvent<RunRecord>;

/// Where the gold runs of `out` are.
pub fn gold_dir(out: &Path, task: &str) -> PathBuf {
    out.join("gold").join(task)
}

/// The problems `gold/<task>/gold.json` recorded for the task's gold run
/// (empty when it passed); `None` when the gold has not run.
pub fn gold_problems(out: &Path, task: &str) -> Option<Vec<String>> {
    let bytes = std::fs::read(gold_dir(out, task).join("gold.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    serde_json::from_value(value["problems"].clone()).ok()
}

/// Where the records of `out` are.
pub fn records_dir(out: &Path) -> PathBuf {
    out.join("records")
}

/// Where the notes of runs that could not be carried out are.
pub fn failures_dir(out: &Path) -> PathBuf {
    out.join("failed")
}

/// A run that could not be carried out for reasons not the model's (the
/// model server or network failed, the sandbox failed, a recording is
/// missing): counted in the report as `infrastructure`, never scored;
/// `--resume` runs it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailureNote {
    /// Task id.
    pub task: String,
    /// Architecture name.
    pub arch: String,
    /// Run number (1-based).
    pub run: usize,
    /// Why, as the run reported it.
    pub reason: String,
}

impl FailureNote {
    /// Keeps the note of a failed item, or removes an old one when the item
    /// now has its record; a stop request leaves nothing (the run was cut
    /// short, not failed).
    fn keep(out: &Path, task: &str, arch: &str, run: usize, result: &Result<RunRecord, ItemError>) {
        let path = failures_dir(out).join(RunRecord::file_name(task, arch, run));
        match result {
            Ok(_) => {
                let _ = std::fs::remove_file(&path);
            }
            Err(ItemError::Stopped(_)) => {}
            Err(e) => {
                let note = FailureNote {
                    task: task.into(),
                    arch: arch.into(),
                    run,
                    reason: e.to_string(),
                };
                let written = std::fs::create_dir_all(failures_dir(out))
                    .and_then(|()| crate::util::write_json(&path, &note));
                if let Err(why) = written {
                    tracing::warn!("{}: cannot keep the failure note: {why}", path.display());
                }
            }
        }
    }
}

/// Checks or writes `eval.json`: a new folder gets it (made at most once,
/// even by shards racing over a shared folder); an existing one is
/// refused, or with `resume` or a `shard` must have asked the same (and a
/// shard the same number of shards).
pub fn prepare_folder(
    out: &Path,
    manifest: &Manifest,
    resume: bool,
    shard: Option<Shard>,
) -> Result<(), EvalError> {
    let path = out.join("eval.json");
    std::fs::create_dir_all(records_dir(out)).map_err(io(out))?;
    if create_once(&path, manifest).map_err(io(&path))? {
        return Ok(());
    }
    let refuse = |message: String| EvalError::Folder {
        path: path.display().to_string(),
        message,
    };
    if !resume && shard.is_none() {
        return Err(refuse("this folder already holds an eval: pass --resume to continue it, or choose another --out".into()));
    }
    let old = Manifest::read(out)?;
    let differs = [
        ("suite", old.suite != manifest.suite),
        ("tasks", old.tasks != manifest.tasks),
        ("arch", old.archs != manifest.archs),
        ("runs", old.runs != manifest.runs),
        (
            "backend",
            same_model(&old.backend) != same_model(&manifest.backend),
        ),
        ("workflow", old.workflow != manifest.workflow),
        (
            "domain_knowledge",
            old.domain_knowledge != manifest.domain_knowledge,
        ),
        ("rag", old.rag != manifest.rag),
        ("output_checks", old.output_checks != manifest.output_checks),
        (
            "vision_feedback",
            old.vision_feedback != manifest.vision_feedback,
        ),
        ("kind", old.kind != manifest.kind),
        ("temperature", old.temperature != manifest.temperature),
        ("gold_prefix", old.gold_prefix != manifest.gold_prefix),
        ("interventions", old.interventions != manifest.interventions),
        ("protocol", old.protocol != manifest.protocol),
        ("solutions", old.solutions != manifest.solutions),
        // Folders written before the model was recorded have none.
        (
            "c_emb_model",
            matches!((&old.c_emb_model, &manifest.c_emb_model), (Some(a), Some(b)) if a != b),
        ),
    ];
    let flag = if shard.is_some() {
        "--shard"
    } else {
        "--resume"
    };
    if let Some((field, _)) = differs.iter().find(|(_, d)| *d) {
        return Err(refuse(format!("{flag}: field `{field}` differs from this eval's; run with the same options or choose another --out")));
    }
    if let (Some(then), Some(now)) = (&old.provenance, &manifest.provenance) {
        let differences = then.differences(now);
        if !differences.is_empty() {
            return Err(refuse(format!(
                "{flag}: this eval's runs were made from other inputs ({}); their records would be pooled with these: choose another --out",
                differences.join("; ")
            )));
        }
    }
    match (shard, &old.shards) {
        (Some(s), Some(plan)) if plan.count != s.count => Err(refuse(format!(
            "--shard {s}: this eval is split into {} shards; use K/{} (or start another --out)",
            plan.count, plan.count
        ))),
        (Some(s), None) => Err(refuse(format!(
            "--shard {s}: this eval was started without --shard; continue it with --resume and no --shard, or start a sharded eval in another --out"
        ))),
        _ => Ok(()),
    }
}

/// A backend's description without its server's address (`name: model`):
/// shards with a model server each (a local one per node) or a resume
/// against a moved server continue the same eval.
fn same_model(backend: &str) -> &str {
    match backend.rsplit_once(" at ") {
        Some((model, url)) if url.contains("://") => model,
        _ => backend,
    }
}

/// Writes `value` as JSON to `path` unless the file exists: atomically,
/// and by one process only among several racing over a shared folder
/// (`link(2)` is atomic on NFS). Returns whether this call wrote it.
fn create_once<T: Serialize>(path: &Path, value: &T) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mine = path.with_file_name(format!(
        ".{name}.{}-{}",
        crate::util::host_name(),
        std::process::id()
    ));
    crate::util::write_json(&mine, value)?;
    let linked = std::fs::hard_link(&mine, path);
    // Two links: made, even if a lost reply said otherwise.
    let made = std::fs::metadata(&mine).map(|m| m.nlink() == 2);
    let _ = std::fs::remove_file(&mine);
    match (linked, made) {
        (Ok(()), _) | (_, Ok(true)) => Ok(true),
        (Err(e), _) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        (Err(e), _) => Err(e),
    }
}

/// The claim a process running `shard` of the eval in `out` (the whole
/// eval when `None`) holds while it runs.
pub fn run_claim(out: &Path, shard: Option<Shard>) -> PathBuf {
    let name = shard.map_or_else(|| "all".to_string(), |s| s.index.to_string());
    out.join("shards").join(format!("{name}.claim"))
}

/// The claim file of a task's gold run.
fn gold_claim(out: &Path, task: &str) -> PathBuf {
    out.join("gold").join(format!("{task}.claim"))
}

/// The gold run of a task: reused when `gold.json` says it ran, else run
/// now by the one process that claims it (shards of one eval race for it);
/// `None` when another process holds the claim and `wait` is false. Either
/// way the task's data are made ready (generated or found in the cache),
/// which the runs need. Returns the gold run's problems, and its seconds
/// when this process ran it.
fn ensure_gold(
    zygote: &Arc<Zygote>,
    loaded: &mut LoadedTask,
    out: &Path,
    wait: bool,
) -> Option<(Vec<String>, Option<f64>)> {
    let id = loaded.task.id.clone();
    let dir = gold_dir(out, &id);
    let with_data =
        |loaded: &mut LoadedTask, problems: Vec<String>| match data::ensure(zygote, loaded) {
            Ok(_) => problems,
            Err(e) => vec![e.to_string()],
        };
    if let Some(problems) = gold_problems(out, &id) {
        return Some((with_data(loaded, problems), None));
    }
    let claim_path = gold_claim(out, &id);
    if let Err(e) = std::fs::create_dir_all(out.join("gold")) {
        return Some((vec![format!("{}: {e}", out.join("gold").display())], None));
    }
    let times = ClaimTimes::default();
    let taken = if wait {
        Claim::take_or_wait(&claim_path, &times, || gold_problems(out, &id).is_some())
    } else {
        Claim::try_take(&claim_path, &times).map(|a| match a {
            Attempt::Held(claim) => Some(claim),
            Attempt::Busy(_) => None,
        })
    };
    let claim = match taken {
        Ok(Some(claim)) => claim,
        Ok(None) if !wait => return None,
        Ok(None) => {
            let problems = gold_problems(out, &id).unwrap_or_else(|| {
                vec![format!("{id}: stopped while another process ran the gold")]
            });
            return Some((with_data(loaded, problems), None));
        }
        Err(e) => return Some((vec![format!("{}: {e}", claim_path.display())], None)),
    };
    // Whoever held the claim before may have finished it meanwhile.
    if let Some(problems) = gold_problems(out, &id) {
        drop(claim);
        return Some((with_data(loaded, problems), None));
    }
    // A holder killed midway left a partial run: start afresh.
    if dir.exists() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if let Err(e) = data::ensure(zygote, loaded) {
        return Some((vec![e.to_string()], None));
    }
    let verdict = verify::verify_task(zygote, loaded, &dir);
    // The gold source beside its run, for reports rendered later.
    if let Some(source) = loaded.gold.as_ref().and_then(|g| std::fs::read(g).ok()) {
        let _ = write_atomic(&dir.join("gold.py"), &source);
    }
    let body = serde_json::json!({ "task": id, "problems": verdict.problems, "seconds": verdict.run_seconds });
    let _ = write_atomic(&dir.join("gold.json"), format!("{body:#}\n").as_bytes());
    drop(claim);
    Some((verdict.problems, Some(verdict.run_seconds)))
}

/// The embedding of a task's gold reference (L2); `None` (logged) when the
/// gold run left no transcript or embedding fails.
fn gold_embedding(embedder: &LogEmbedder, loaded: &LoadedTask, dir: &Path) -> Option<Vec<f32>> {
    let text = process::gold_reference(
        loaded.task.workflow.as_deref(),
        &dir.join("transcript.jsonl"),
    );
    match text
        .map_err(|e| e.to_string())
        .and_then(|t| embedder.embed_document(&t))
    {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!("no C_emb for {}: its gold reference: {e}", loaded.task.id);
            None
        }
    }
}

/// Grades the run's non-blank image outputs with the vision judge and
/// recomputes Q_out; a failed call keeps SSIM and says why in the note.
fn judge_images(
    vision: &LiveConfig,
    loaded: &LoadedTask,
    gold: &GoldReference,
    workdir: &Path,
    record: &mut RunRecord,
) {
    for score in record
        .outputs
        .iter_mut()
        .filter(|s| vision_judge::wants_judging(s))
    {
        let verdict = crate::llm::open_live(vision.clone())
            .map_err(JudgeError::from)
            .and_then(|mut backend| {
                vision_judge::judge(
                    backend.as_mut(),
                    &loaded.task.instruction,
                    &gold.dir.join(&score.path),
                    &workdir.join(&score.path),
                )
            });
        match verdict {
            Ok(v) => vision_judge::apply(score, &v),
            Err(e) => score.note = format!("{}; vision judge failed: {e}", score.note),
        }
    }
    if !record.outputs.is_empty() {
        record.q_out =
            record.outputs.iter().map(|s| s.score).sum::<f64>() / record.outputs.len() as f64;
    }
}

/// The LLM judge's verdict on the run in `workdir`.
fn judge_run(
    judge: &LiveConfig,
    loaded: &LoadedTask,
    gold: &GoldReference,
    workdir: &Path,
) -> Result<llm_judge::Verdict, JudgeError> {
    let mut backend = crate::llm::open_live(judge.clone())?;
    let transcript = workdir.join("transcript.jsonl");
    let log = process::cleaned_log(&transcript, true)?;
    llm_judge::judge(backend.as_mut(), &loaded.task.instruction, &gold.code, &log)
}

/// One (task, arch, run).
struct Item {
    task: usize,
    arch: Arch,
    run: usize,
}

/// Runs every missing (task, arch, run) of `tasks` and returns the number
/// of runs that could not run (no record was written for them).
pub fn run_eval(
    zygote: &Arc<Zygote>,
    tasks: &mut [LoadedTask],
    manifest: &Manifest,
    source: &BackendSource,
    options: &EvalOptions,
    events: &(dyn Fn(EvalEvent) + Sync),
) -> Result<usize, EvalError> {
    prepare_folder(&options.out, manifest, options.resume, options.shard)?;
    // One process per shard (per eval when not sharded): a second would
    // make the same runs.
    let running = run_claim(&options.out, options.shard);
    std::fs::create_dir_all(running.parent().unwrap_or(&options.out)).map_err(io(&running))?;
    let _running = match Claim::take_unless_alive(&running, &ClaimTimes::default())
        .map_err(io(&running))?
    {
        Ok(claim) => claim,
        Err(holder) => {
            let who = holder
                .map(|h| format!(" (host {} pid {})", h.host, h.pid))
                .unwrap_or_default();
            let what = options
                .shard
                .map_or_else(|| "this eval".to_string(), |s| format!("shard {s}"));
            return Err(EvalError::Folder {
                path: running.display().to_string(),
                message: format!("{what} is running already{who}: wait for it, or stop it first"),
            });
        }
    };
    // Every shard splits the cells by the plan in the folder (the one of
    // the shard that made it), so each cell has exactly one owner.
    let stored = Manifest::read(&options.out)?;
    let mine: BTreeSet<shard::Cell> = stored.cells_of(options.shard).into_iter().collect();
    let archs: Vec<Arch> = manifest.archs.clone();
    let records = records_dir(&options.out);
    let items = (0..tasks.len()).flat_map(|t| {
        archs
            .iter()
            .flat_map(move |&arch| (1..=manifest.runs).map(move |run| Item { task: t, arch, run }))
    });
    let cell = |item: &Item| shard::Cell {
        task: tasks[item.task].task.id.clone(),
        arch: item.arch.name().to_string(),
        run: item.run,
    };
    let items: Vec<Item> = items.filter(|item| mine.contains(&cell(item))).collect();
    let plan = Plan::new(items, |item| {
        RunRecord::read(&records.join(cell(item).file_name())).is_some()
    });
    // The gold runs of the tasks with runs to make: first those no other
    // process is making, then, waiting, the others.
    let mut golds: Vec<GoldReference> = tasks
        .iter()
        .map(|loaded| GoldReference {
            code: loaded
                .gold
                .as_ref()
                .and_then(|g| std::fs::read_to_string(g).ok())
                .unwrap_or_default(),
            dir: gold_dir(&options.out, &loaded.task.id),
            embedding: None,
        })
        .collect();
    let needed: Vec<usize> = (0..tasks.len())
        .filter(|t| plan.todo.iter().any(|item| item.task == *t))
        .collect();
    let mut busy = Vec::new();
    for wait in [false, true] {
        let round = if wait {
            std::mem::take(&mut busy)
        } else {
            needed.clone()
        };
        for t in round {
            match ensure_gold(zygote, &mut tasks[t], &options.out, wait) {
                Some((problems, ran)) => events(EvalEvent::Gold {
                    task: tasks[t].task.id.clone(),
                    problems,
                    ran,
                }),
                None => busy.push(t),
            }
        }
    }
    // The gold reference's embedding (L2), only for tasks with runs to score.
    if let Some(embedder) = options.embedder.as_deref() {
        for (t, gold) in golds.iter_mut().enumerate() {
            if plan.todo.iter().any(|item| item.task == t) {
                gold.embedding = gold_embedding(embedder, &tasks[t], &gold.dir);
            }
        }
    }
    let tasks: &[LoadedTask] = tasks;
    // The budget covers every recorded run of the folder, earlier ones and
    // other shards' too: the spend is read from the records before each run
    // starts.
    let over_budget = || {
        options
            .max_cost
            .is_some_and(|limit| spent(&options.out) >= limit)
    };
    let failed = jobs::run_all_until(
        plan,
        options.jobs,
        |_| (),
        |_, item| {
            let result = run_one(
                zygote,
                &tasks[item.task],
                &golds[item.task],
                source,
                manifest,
                options,
                item,
            );
            let id = &tasks[item.task].task.id;
            FailureNote::keep(&options.out, id, item.arch.name(), item.run, &result);
            result
        },
        |item| {
            format!(
                "{} {} run {}",
                tasks[item.task].task.id,
                item.arch.name(),
                item.run
            )
        },
        events,
        &over_budget,
    );
    Ok(failed)
}

/// Runs, scores and records one item.
fn run_one(
    zygote: &Arc<Zygote>,
    loaded: &LoadedTask,
    gold: &GoldReference,
    source: &BackendSource,
    manifest: &Manifest,
    options: &EvalOptions,
    item: &Item,
) -> Result<RunRecord, ItemError> {
    let id = &loaded.task.id;
    let workdir =
        options
            .out
            .join("runs")
            .join(id)
            .join(format!("{}-{}", item.arch.name(), item.run));
    let mut backend = source.open(
        id,
        &gold.code,
        loaded.task.unsolvable_reason.as_deref(),
        item.arch,
        item.run,
        &options.mcts,
    )?;
    if let (Some(window), true) = (options.context_window, backend.is_replay()) {
        backend = Box::new(crate::llm::replay::WindowedReplay::new(backend, window));
    }
    let run_options = RunOptions {
        arch: item.arch,
        include_workflow: manifest.workflow,
        include_domain_knowledge: manifest.domain_knowledge,
        protocol: manifest.protocol,
        hints: Vec::new(),
        limits: AgentLimits {
            max_rounds: options.max_rounds,
            budget: options.budget,
            context_window: options.context_window,
            block_repeats: manifest.protocol.settings().dedup_blocks,
            ..AgentLimits::default()
        },
        dual: DualLimits::default(),
        mcts: options.mcts.clone(),
        sandbox: sandbox_limits(zygote.config(), options.cell_timeout, options.budget),
        docs: options.docs.clone(),
        solutions: options.solutions.clone(),
        // A gold replay is the reference itself: it is not told about its outputs.
        output_checks: manifest.output_checks && !matches!(source, BackendSource::Gold),
        vision_feedback: manifest.vision_feedback,
        notebook: crate::notebook::NotebookMode::Off,
        reproduce: options
            .reproduce
            .then_some(crate::eval::running::reproduce::reproduce as crate::agent::run::Reproducer),
        live_output: None,
    };
    // Each run starts with an empty Error Memory, so runs stay independent.
    let mut memory = ErrorMemory::in_memory();
    let summary = run_task(
        zygote,
        loaded,
        backend.as_mut(),
        &mut memory,
        &workdir,
        &run_options,
        &mut |_| {},
    )
    .map_err(|e| ItemError::Run(format!("{e:#}")))?;
    // An interrupted run has no record: `--resume` runs it again.
    match summary.status.as_str() {
        "error" => return Err(ItemError::Run(summary.reason)),
        "interrupted" => return Err(ItemError::Stopped(summary.reason)),
        _ => {}
    }
    let mut record = score_run(
        &summary,
        item.run,
        &workdir,
        &loaded.task.outputs,
        gold,
        &options.ops,
        options.embedder.as_deref(),
    );
    record.labels = loaded.task.labels(&gold.code);
    // A task the data cannot answer has no output worth judging: its
    // score is the decline's (set last, over any output scoring).
    if let (Some(vision), true) = (&options.vision_judge, loaded.task.solvable) {
        judge_images(vision, loaded, gold, &workdir, &mut record);
    }
    record.judge_refusal(loaded.task.solvable);
    if let Some(judge) = &options.judge {
        match judge_run(judge, loaded, gold, &workdir) {
            Ok(verdict) => record.judge = Some(verdict),
            Err(e) => record.judge_error = Some(e.to_string()),
        }
    }
    let records = records_dir(&options.out);
    record.write(&records).map_err(ItemError::io(&records))?;
    Ok(record)
}
