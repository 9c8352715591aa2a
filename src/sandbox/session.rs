//! One persistent Python session: a forked, confined worker child holding a
//! namespace, plus the journal of successful cells that rebuilds that
//! namespace in a fresh child after a crash or a kill.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gisclaw_protocol::fdpass::send_fd;
use gisclaw_protocol::waiting::{receive_available, wait_readable, Received, SPIN_BEFORE_SLEEP};
use gisclaw_protocol::{
    write_frame, CellResult, ChildExit, ConfinementPolicy, ConfinementReport, Finding, FrameBuffer,
    OutputStream, PackageInfo, SessionRequest, SessionResponse, SessionSpec, VariableSummary,
};

use super::config::{Layer, SandboxConfig};
use super::constraint;
use super::error::SandboxError;
use super::monitor::Monitor;
use super::workdir::{self, Lent, WorkLock};
use super::zygote::Zygote;

/// How often the wait for a cell checks for a cancel request and for the
/// worker's end.
const CANCEL_POLL: Duration = Duration::from_millis(25);
/// Longest a non-cell request (variables, packages) may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest cell the sandbox accepts (the channel's frame limit, less room
/// for the request's envelope).
pub const MAX_CODE_BYTES: usize = gisclaw_protocol::MAX_FRAME_BYTES - 64 * 1024;
/// How long to wait for the monitor to report how a dead process ended.
const EXIT_PATIENCE: Duration = Duration::from_secs(2);

/// How a cell ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellStatus {
    /// Ran to its end.
    Ok,
    /// Raised an exception (the session is intact).
    Error,
    /// Hit the cell timeout or the task budget. `killed` when it ignored the
    /// interrupt and its worker had to be killed (the namespace was then
    /// rebuilt from the journal).
    TimedOut {
        /// The limit it hit.
        limit: Duration,
        /// Whether the worker was killed.
        killed: bool,
    },
    /// Cancelled by the user (`Session::canceller`).
    Cancelled {
        /// Whether the worker was killed.
        killed: bool,
    },
    /// The worker died while running it (segfault, abort, out-of-memory
    /// kill); the namespace was rebuilt from the journal.
    Crashed {
        /// How the worker ended, when known.
        exit: Option<ChildExit>,
    },
}

impl std::fmt::Display for CellStatus {
    /// How a cell ended, in words for people: `ok`, `error`, `timed out
    /// at its 3 s limit (worker killed)`, `cancelled`, `crashed (SIGSEGV)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let killed = |killed: bool| if killed { " (worker killed)" } else { "" };
        match self {
            CellStatus::Ok => f.write_str("ok"),
            CellStatus::Error => f.write_str("error"),
            CellStatus::TimedOut { limit, killed: k } => write!(
                f,
                "timed out at its {} s limit{}",
                limit.as_secs_f64(),
                killed(*k)
            ),
            CellStatus::Cancelled { killed: k } => write!(f, "cancelled{}", killed(*k)),
            CellStatus::Crashed { exit: Some(exit) } => write!(f, "crashed ({exit})"),
            CellStatus::Crashed { exit: None } => f.write_str("crashed"),
        }
    }
}

/// What a namespace rebuild did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    /// Cells replayed successfully.
    pub replayed: usize,
    /// Cells (by number) that failed on replay.
    pub failed: Vec<u64>,
}

/// The outcome of one cell as the agent sees it.
#[derive(Debug, Clone)]
pub struct CellOutcome {
    /// The cell's number in this session.
    pub cell: u64,
    /// How it ended.
    pub status: CellStatus,
    /// Output, error and variables (synthesised when the worker died).
    pub result: CellResult,
    /// Set when the namespace had to be rebuilt in a new worker.
    pub restore: Option<RestoreReport>,
    /// Wall time seen by the agent, including any restore.
    pub wall: Duration,
    /// The sandbox refused the cell before any of it ran (too large, or a
    /// top-level import of a blocked package; see [`super::constraint`]).
    pub refused: bool,
}

/// Asks a running cell to stop, from any thread.
#[derive(Debug, Clone)]
pub struct Canceller {
    requested: Arc<AtomicBool>,
}

impl Canceller {
    /// Interrupts the running cell (KeyboardInterrupt; the worker is killed
    /// if the cell ignores it past the grace period). Does nothing when no
    /// cell runs.
    pub fn cancel(&self) {
        self.requested.store(true, Ordering::SeqCst);
    }
}

/// Numbers workers, so that a replaced worker is told apart from its predecessor.
static NEXT_WORKER_ID: AtomicU64 = AtomicU64::new(1);

/// A live session process.
struct Worker {
    /// Unique in this gisclaw process (see [`Session::worker_id`]).
    id: u64,
    /// Its pid inside its sandbox (how the monitor names it).
    pid: i32,
    /// Requests go out and answers come in on this socket; answers are read
    /// without blocking, so a stalled half frame cannot outlast a deadline.
    stream: UnixStream,
    /// Bytes of the answer being received.
    incoming: FrameBuffer,
    monitor: Arc<Monitor>,
}

/// Why waiting for a response ended without one.
enum WaitEnd {
    /// The deadline passed.
    Deadline,
    /// Cancel was requested.
    Cancelled,
    /// The worker's channel closed or broke.
    Gone,
}

impl Worker {
    /// A session process talking on `stream`, not yet ready.
    fn new(stream: UnixStream, monitor: Arc<Monitor>) -> Worker {
        Worker {
            id: NEXT_WORKER_ID.fetch_add(1, Ordering::SeqCst),
            pid: 0,
            stream,
            incoming: FrameBuffer::default(),
            monitor,
        }
    }

    /// Waits for the process's `Ready`.
    fn ready(&mut self, deadline: Instant) -> Result<ConfinementReport, SandboxError> {
        match self.wait(deadline, None) {
            Ok(SessionResponse::Ready { pid, confinement }) => {
                self.pid = pid;
                Ok(confinement)
            }
            Ok(SessionResponse::Error { message }) => Err(SandboxError::StartFailed(message)),
            Ok(other) => Err(SandboxError::Protocol(format!(
                "expected Ready, got {other:?}"
            ))),
            Err(WaitEnd::Deadline) => Err(SandboxError::StartFailed(
                "the session worker did not start in time".into(),
            )),
            Err(_) => Err(SandboxError::StartFailed(
                "the session worker died while starting".into(),
            )),
        }
    }

    /// How this process ended, as its monitor reports it.
    fn exit(&self) -> Option<ChildExit> {
        self.monitor.exit_of(self.pid, EXIT_PATIENCE)
    }

    fn send(&mut self, req: &SessionRequest) -> Result<(), SandboxError> {
        write_frame(&mut self.stream, req).map_err(SandboxError::channel("session"))
    }

    /// Waits for the next response until `deadline`, checking `cancel`
    /// and whether the process ended (a process it started may still hold
    /// the socket open). Polls without sleeping for the first
    /// [`SPIN_BEFORE_SLEEP`], the time most quick cells take, yielding the
    /// CPU at each pass (see [`gisclaw_protocol::waiting`]).
    fn wait(
        &mut self,
        deadline: Instant,
        cancel: Option<&AtomicBool>,
    ) -> Result<SessionResponse, WaitEnd> {
        self.wait_watching(deadline, cancel, None)
    }

    /// [`Worker::wait`], handing what a running cell writes to `sink` as
    /// it comes (without a sink it is dropped: the cell's result has it).
    fn wait_watching(
        &mut self,
        deadline: Instant,
        cancel: Option<&AtomicBool>,
        sink: Option<&OutputSink>,
    ) -> Result<SessionResponse, WaitEnd> {
        let spin_until = Instant::now() + SPIN_BEFORE_SLEEP;
        loop {
            let received = receive_available(&self.stream, &mut self.incoming);
            let mut answer = None;
            while let Some(frame) = self.incoming.take_frame() {
                match frame {
                    Ok(SessionResponse::Output { stream, text }) => {
                        if let Some(sink) = sink {
                            sink(stream, &text);
                        }
                    }
                    Ok(resp) => {
                        answer = Some(Ok(resp));
                        break;
                    }
                    Err(_) => {
                        answer = Some(Err(WaitEnd::Gone));
                        break;
                    }
                }
            }
            if let Some(answer) = answer {
                return answer;
            }
            // The stream ended or broke with no whole answer in it.
            if matches!(received, Ok(Received::End) | Err(_)) {
                return Err(WaitEnd::Gone);
            }
            let now = Instant::now();
            if now < spin_until {
                // SAFETY: takes no arguments and touches no memory.
                unsafe { libc::sched_yield() };
                continue;
            }
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(WaitEnd::Cancelled);
            }
            if self.pid != 0 && self.monitor.has_ended(self.pid) {
                return Err(WaitEnd::Gone);
            }
            if now >= deadline {
                return Err(WaitEnd::Deadline);
            }
            if wait_readable(&self.stream, CANCEL_POLL.min(deadline - now)).is_err() {
                return Err(WaitEnd::Gone);
            }
        }
    }

    fn signal(&self, sig: libc::c_int) {
        self.monitor.signal(self.pid, sig);
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = write_frame(&mut self.stream, &SessionRequest::Shutdown);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// Where a session works and what else it may touch. Everything else of
/// the host is out of its reach (see docs/sandbox.md).
#[derive(Debug, Clone, Default)]
pub struct SessionDirs {
    /// Its cwd, writable (created with `pred_results/` inside if missing).
    pub work: PathBuf,
    /// Further writable directories (a run's `pred_results/` kept outside
    /// the work dir, beside the run's records).
    pub writable: Vec<PathBuf>,
    /// Read-only directories (the task's data).
    pub readable: Vec<PathBuf>,
    /// The work dir is the user's own folder (`gisclaw exec --workdir`,
    /// `gisclaw mcp --workdir`): as root, only the folder itself and its
    /// `pred_results/` are lent to the sandbox's user while the session
    /// lives, and the user's files keep their owners (see
    /// [`super::workdir`]). Otherwise the folders are gisclaw's and are
    /// handed over whole.
    pub lend: bool,
}

impl SessionDirs {
    /// `work` alone. Links in it give the sandbox nothing: a cell may have
    /// made them (a link to `/` would otherwise open the host to the next
    /// session); a front end names the data folder in `readable`.
    pub fn work(work: &Path) -> SessionDirs {
        SessionDirs {
            work: work.to_path_buf(),
            ..SessionDirs::default()
        }
    }
}

/// The session's private temporary folders: `tmp/` (its `/tmp`) and
/// `root/` (where the monitor builds the namespace's root). Removed when
/// the session and its snapshots are gone.
struct TmpBase {
    dir: tempfile::TempDir,
}

impl TmpBase {
    fn new() -> Result<TmpBase, SandboxError> {
        let dir = tempfile::Builder::new()
            .prefix("gisclaw-session-")
            .tempdir()
            .map_err(SandboxError::io("creating the session tmp dir"))?;
        for sub in ["tmp", "root"] {
            std::fs::create_dir(dir.path().join(sub))
                .map_err(SandboxError::io("creating the session tmp dir"))?;
        }
        let base = TmpBase { dir };
        workdir::hand_over(base.dir.path())?;
        Ok(base)
    }

    fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    fn stage(&self) -> PathBuf {
        self.dir.path().join("root")
    }
}

/// A persistent Python session in its own confined worker process.
pub struct Session {
    zygote: Arc<Zygote>,
    config: SandboxConfig,
    spec: SessionSpec,
    worker: Option<Worker>,
    /// The id of the latest worker (kept while none runs).
    worker_id: u64,
    confinement: ConfinementReport,
    journal: Vec<(u64, String)>,
    next_cell: u64,
    spent: Duration,
    cancel: Arc<AtomicBool>,
    /// Shared with snapshots, which write to the same tmp dir.
    tmp: Arc<TmpBase>,
    /// The work dir held for this session and its snapshots, and (a user's
    /// folder) lent to the sandbox's user until the last of them ends.
    /// Dropped after the worker is stopped (fields drop in order).
    hold: Option<Arc<(Lent, WorkLock)>>,
    /// Rebuild the namespace right after a crash (true), or only when the
    /// next cell needs it (a tree-search branch that crashed is dropped).
    rebuild_at_once: bool,
    /// Where what a running cell writes goes as it comes (a front end's
    /// live view); snapshots have none.
    output_sink: Option<OutputSink>,
}

/// A front end's live view of a running cell's stdout and stderr: called
/// on the thread that runs the cell, a few times a second at most, with
/// the text as the cell wrote it (hostile: clean it before showing it).
pub type OutputSink = Arc<dyn Fn(OutputStream, &str) + Send + Sync>;

/// The live worker, or an error when there is none (it is restarted
/// before every use, so none here is a bug, reported, not a panic).
fn present(worker: &mut Option<Worker>) -> Result<&mut Worker, SandboxError> {
    worker
        .as_mut()
        .ok_or_else(|| SandboxError::Protocol("the sandbox worker is gone".into()))
}

impl Session {
    /// Opens a session whose cwd is `workdir` (created if missing, with
    /// `pred_results/` inside); see [`SessionDirs::work`].
    pub fn open(zygote: &Arc<Zygote>, workdir: &Path) -> Result<Session, SandboxError> {
        Self::open_with(zygote, workdir, zygote.config().clone())
    }

    /// Like [`Session::open`], with this session's own limits and policy
    /// (the `venv`, `worker` and `cache_dir` fields are the zygote's).
    pub fn open_with(
        zygote: &Arc<Zygote>,
        workdir: &Path,
        config: SandboxConfig,
    ) -> Result<Session, SandboxError> {
        std::fs::create_dir_all(workdir).map_err(SandboxError::io("creating the work dir"))?;
        Self::open_in(zygote, &SessionDirs::work(workdir), config)
    }

    /// Opens a session in `dirs`: writes are confined to the work dir, the
    /// further writable dirs and a private tmp dir; reads to those, the
    /// readable dirs, the Python environment and the system's libraries.
    pub fn open_in(
        zygote: &Arc<Zygote>,
        dirs: &SessionDirs,
        config: SandboxConfig,
    ) -> Result<Session, SandboxError> {
        let config = config.resolved();
        std::fs::create_dir_all(dirs.work.join("pred_results"))
            .map_err(SandboxError::io("creating the work dir"))?;
        let resolve = |p: &PathBuf| {
            p.canonicalize()
                .map_err(SandboxError::io("resolving the session's folders"))
        };
        let workdir = resolve(&dirs.work)?;
        let writable = dirs
            .writable
            .iter()
            .map(resolve)
            .collect::<Result<Vec<_>, _>>()?;
        let readable = dirs
            .readable
            .iter()
            .map(resolve)
            .collect::<Result<Vec<_>, _>>()?;
        let lock = WorkLock::take(&workdir)?;
        let lent = if dirs.lend {
            Lent::lend(&workdir)?
        } else {
            workdir::hand_over(&workdir)?;
            Lent::nothing()
        };
        for dir in &writable {
            workdir::hand_over(dir)?;
        }
        let tmp = TmpBase::new()?;
        let mut write_roots = vec![workdir.clone()];
        write_roots.extend(writable);
        write_roots.push(tmp.tmp());
        let spec = SessionSpec {
            workdir,
            tmpdir: tmp.tmp(),
            stage: tmp.stage(),
            policy: ConfinementPolicy {
                write_roots,
                read_roots: readable,
                namespaces: config.namespaces,
                process_limit: config.process_limit,
                allow_network: config.allow_network,
                memory_limit_bytes: config.memory_limit_bytes,
                file_size_limit_bytes: config.file_size_limit_bytes,
                confine: config.confine,
            },
            limits: config.limits.clone(),
            blocked_imports: config.blocked_imports.clone(),
        };
        let (worker, confinement) = Self::spawn_worker(zygote, &spec, &config)?;
        for warning in confinement.warnings() {
            tracing::warn!("sandbox: {warning}; the session runs less confined");
        }
        Ok(Session {
            zygote: zygote.clone(),
            config,
            spec,
            worker_id: worker.id,
            worker: Some(worker),
            confinement,
            journal: Vec::new(),
            next_cell: 1,
            spent: Duration::ZERO,
            cancel: Arc::new(AtomicBool::new(false)),
            tmp: Arc::new(tmp),
            hold: Some(Arc::new((lent, lock))),
            rebuild_at_once: true,
            output_sink: None,
        })
    }

    /// Forks a worker for `spec` and waits until it is ready; a worker
    /// without a layer that `config.require` names is killed and refused.
    fn spawn_worker(
        zygote: &Zygote,
        spec: &SessionSpec,
        config: &SandboxConfig,
    ) -> Result<(Worker, ConfinementReport), SandboxError> {
        let (stream, monitor) = zygote.fork_child(spec)?;
        let monitor =
            Monitor::new(monitor).map_err(SandboxError::io("reading the sandbox monitor"))?;
        let mut worker = Worker::new(stream, monitor);
        let confinement = worker.ready(Instant::now() + config.startup_timeout)?;
        if let Some((layer, why)) = Layer::first_missing(&config.require, &confinement) {
            worker.signal(libc::SIGKILL);
            return Err(SandboxError::Unconfined {
                layer: layer.name(),
                why,
            });
        }
        Ok((worker, confinement))
    }

    /// The session's work dir (its cwd).
    pub fn workdir(&self) -> &Path {
        &self.spec.workdir
    }

    /// The private tmp dir, as seen from gisclaw (the session sees it as
    /// `/tmp` when it runs in its own namespaces).
    pub fn tmpdir(&self) -> &Path {
        &self.spec.tmpdir
    }

    /// Which confinement layers are in force.
    pub fn confinement(&self) -> &ConfinementReport {
        &self.confinement
    }

    /// Identifies the current worker process: it changes whenever the worker
    /// is replaced (after a crash or a kill), and differs between a session
    /// and its snapshots.
    pub fn worker_id(&self) -> u64 {
        self.worker.as_ref().map_or(self.worker_id, |w| w.id)
    }

    /// The cells that ran successfully, in order (the replay journal).
    pub fn journal(&self) -> impl Iterator<Item = &str> {
        self.journal.iter().map(|(_, code)| code.as_str())
    }

    /// Time spent running cells so far.
    pub fn spent(&self) -> Duration {
        self.spent
    }

    /// Makes `dirs` the session's read-only folders (a chat's newly attached
    /// data): a new worker is started with them in view and the journal is
    /// replayed into it.
    pub fn set_readable(&mut self, dirs: &[PathBuf]) -> Result<RestoreReport, SandboxError> {
        let readable = dirs
            .iter()
            .map(|p| {
                p.canonicalize()
                    .map_err(SandboxError::io("resolving the data folder"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.spec.policy.read_roots = readable;
        self.stop_worker();
        self.restart()
    }

    /// Forks this session: the copy starts with the live namespace (copied
    /// on write, in milliseconds) and its own future. It shares this
    /// session's work dir, tmp dir, sandbox and confinement, and inherits the
    /// journal, so a crash in either rebuilds its own namespace. The sandbox
    /// (and every process in it) lives until the session and all its copies
    /// are dropped. For exploring alternatives (e.g. MCTS branches) without
    /// re-running earlier cells.
    pub fn snapshot(&mut self) -> Result<Session, SandboxError> {
        if self.worker.is_none() {
            self.restart()?;
        }
        let worker = present(&mut self.worker)?;
        let (ours, theirs) =
            UnixStream::pair().map_err(SandboxError::io("creating a snapshot socket"))?;
        worker.send(&SessionRequest::Snapshot)?;
        send_fd(&worker.stream, theirs.as_raw_fd())
            .map_err(SandboxError::io("passing the snapshot socket"))?;
        drop(theirs);
        match worker.wait(Instant::now() + QUERY_TIMEOUT, None) {
            Ok(SessionResponse::Snapshotted) => {}
            Ok(SessionResponse::Error { message }) => return Err(SandboxError::Worker(message)),
            Ok(other) => {
                return Err(SandboxError::Protocol(format!(
                    "expected Snapshotted, got {other:?}"
                )))
            }
            Err(_) => {
                return Err(SandboxError::Protocol(
                    "the worker did not answer the snapshot".into(),
                ))
            }
        }
        let mut copy = Worker::new(ours, worker.monitor.clone());
        let confinement = copy.ready(Instant::now() + QUERY_TIMEOUT)?;
        Ok(Session {
            zygote: self.zygote.clone(),
            config: self.config.clone(),
            spec: self.spec.clone(),
            worker_id: copy.id,
            worker: Some(copy),
            confinement,
            journal: self.journal.clone(),
            next_cell: self.next_cell,
            spent: self.spent,
            cancel: Arc::new(AtomicBool::new(false)),
            tmp: self.tmp.clone(),
            hold: self.hold.clone(),
            rebuild_at_once: self.rebuild_at_once,
            output_sink: None,
        })
    }

    /// Whether a crash rebuilds the namespace at once (the default) or
    /// only when the next cell runs: a tree-search branch that crashed is
    /// dropped, so replaying its prefix would be wasted.
    pub fn set_rebuild_at_once(&mut self, at_once: bool) {
        self.rebuild_at_once = at_once;
    }

    /// A handle that cancels the running cell from another thread.
    pub fn canceller(&self) -> Canceller {
        Canceller {
            requested: self.cancel.clone(),
        }
    }

    fn remaining_budget(&self) -> Duration {
        self.config.task_budget.saturating_sub(self.spent)
    }

    /// Runs one cell. Errors in user code are an `Ok` outcome with
    /// [`CellStatus::Error`]; `Err` means the sandbox itself failed.
    pub fn execute(&mut self, code: &str) -> Result<CellOutcome, SandboxError> {
        self.run_cell(code, true)
    }

    /// Sends what each later cell writes to stdout and stderr to `sink` as
    /// it comes, besides the cell's result (`None`: only the result).
    pub fn set_output_sink(&mut self, sink: Option<OutputSink>) {
        self.output_sink = sink;
    }

    /// The live view set by [`Session::set_output_sink`], if any.
    pub fn output_sink(&self) -> Option<OutputSink> {
        self.output_sink.clone()
    }

    /// Runs `code` as [`Session::execute`] does but keeps it out of the
    /// journal: a look at the namespace (chat's `/inspect`) that must not
    /// become part of `solution.py` or a replay.
    pub fn execute_unrecorded(&mut self, code: &str) -> Result<CellOutcome, SandboxError> {
        self.run_cell(code, false)
    }

    fn run_cell(&mut self, code: &str, record: bool) -> Result<CellOutcome, SandboxError> {
        let started = Instant::now();
        let budget_left = self.remaining_budget();
        if budget_left.is_zero() {
            self.stop_worker();
            return Err(SandboxError::BudgetExhausted(self.config.task_budget));
        }
        let cell = self.next_cell;
        self.next_cell += 1;
        self.cancel.store(false, Ordering::SeqCst);
        if code.len() > MAX_CODE_BYTES {
            let result = CellResult::failure(
                "CodeTooLarge",
                &format!(
                    "the cell's code is {} bytes, over the sandbox's limit of {} bytes; nothing ran. Split it into smaller cells, or write large data to a file from several cells",
                    code.len(),
                    MAX_CODE_BYTES
                ),
            );
            return Ok(CellOutcome {
                cell,
                status: CellStatus::Error,
                result,
                restore: None,
                wall: started.elapsed(),
                refused: true,
            });
        }
        if let Some(blocked) = constraint::top_level_blocked(code, &self.config.blocked_imports) {
            return Ok(CellOutcome {
                cell,
                status: CellStatus::Error,
                result: CellResult::failure("ModuleNotFoundError", &constraint::refusal(blocked)),
                restore: None,
                wall: started.elapsed(),
                refused: true,
            });
        }
        let mut restore = None;
        if self.worker.is_none() {
            restore = Some(self.restart()?);
        }
        let cell_timeout = self.config.cell_timeout;
        let limit = cell_timeout.min(budget_left);
        let request = SessionRequest::Exec {
            code: code.to_string(),
            cell,
            live: self.output_sink.is_some(),
        };
        if present(&mut self.worker)?.send(&request).is_err() {
            // The worker died between cells (killed from outside): rebuild and resend.
            let exit = self.worker.take().map(|w| w.exit());
            tracing::warn!("sandbox worker was gone before cell {cell} ({exit:?}); rebuilding it");
            restore = Some(self.restart()?);
            present(&mut self.worker)?.send(&request)?;
        }
        let worker = present(&mut self.worker)?;
        let deadline = Instant::now() + limit;
        let first = worker.wait_watching(deadline, Some(&self.cancel), self.output_sink.as_ref());
        let (status, result) = match first {
            Ok(resp) => {
                let result = Self::cell_result(resp)?;
                let status = if result.ok {
                    CellStatus::Ok
                } else {
                    CellStatus::Error
                };
                (status, result)
            }
            Err(WaitEnd::Gone) => {
                let exit = worker.exit();
                self.stop_worker();
                let what = exit
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "ended".to_string());
                let result = CellResult::failure(
                    "WorkerCrashed",
                    &format!("the Python worker {what} while running this cell; the cell's effects are lost"),
                );
                (CellStatus::Crashed { exit }, result)
            }
            Err(end) => {
                let cancelled = matches!(end, WaitEnd::Cancelled);
                self.interrupt_or_kill(cancelled, limit)?
            }
        };
        match (&status, &result.ran_before_error) {
            _ if !record => {}
            (CellStatus::Ok, _) => self.journal.push((cell, code.to_string())),
            // What ran before the raise is in the namespace (and its files
            // on disk): a replay, solution.py and the notebook keep it.
            (CellStatus::Error, Some(ran)) => {
                self.journal
                    .push((cell, kept_before_error(cell, &result, ran)));
            }
            _ => {}
        }
        if self.rebuild_at_once
            && self.worker.is_none()
            && restore.is_none()
            && self.remaining_budget() > Duration::ZERO
        {
            restore = Some(self.restart()?);
        }
        self.spent += started.elapsed();
        Ok(CellOutcome {
            cell,
            status,
            result,
            restore,
            wall: started.elapsed(),
            refused: false,
        })
    }

    /// Sends SIGINT, waits the grace period for the cell to stop, and kills
    /// the worker if it does not.
    fn interrupt_or_kill(
        &mut self,
        cancelled: bool,
        limit: Duration,
    ) -> Result<(CellStatus, CellResult), SandboxError> {
        let grace = self.config.interrupt_grace;
        let worker = present(&mut self.worker)?;
        worker.signal(libc::SIGINT);
        let answer = worker.wait_watching(Instant::now() + grace, None, self.output_sink.as_ref());
        let killed = !matches!(answer, Ok(SessionResponse::Cell { .. }));
        let status = if cancelled {
            CellStatus::Cancelled { killed }
        } else {
            CellStatus::TimedOut { limit, killed }
        };
        let ename = if cancelled {
            "KeyboardInterrupt"
        } else {
            "TimeoutError"
        };
        let reason = if cancelled {
            "cancelled by the user".to_string()
        } else if limit < self.config.cell_timeout {
            format!(
                "stopped after {} s (the session's time budget ran out)",
                limit.as_secs_f64().round()
            )
        } else {
            format!(
                "stopped after {} s (the cell time limit)",
                limit.as_secs_f64().round()
            )
        };
        if let Ok(resp) = answer {
            if let Ok(mut result) = Self::cell_result(resp) {
                if result.ok {
                    // The cell finished just as the interrupt was sent.
                    return Ok((CellStatus::Ok, result));
                }
                if let Some(err) = result.error.as_mut() {
                    err.traceback = format!("{}{ename}: the cell was {reason}\n", err.traceback);
                    err.ename = ename.to_string();
                    err.evalue = format!("the cell was {reason}");
                }
                result.ok = false;
                return Ok((status, result));
            }
        }
        self.stop_worker();
        let result = CellResult::failure(
            ename,
            &format!("the cell was {reason}; it ignored the interrupt, so its worker was killed and the namespace rebuilt from earlier cells"),
        );
        Ok((status, result))
    }

    /// Kills the current worker, if any, and lets it go (its sandbox ends
    /// when no snapshot shares it).
    fn stop_worker(&mut self) {
        if let Some(worker) = self.worker.take() {
            worker.signal(libc::SIGKILL);
            self.worker_id = worker.id;
        }
    }

    /// Ends this session now: its worker is killed and, unless a snapshot
    /// still shares them, its sandbox's processes are ended and its work
    /// folder released, so that a new session may open there (a reset).
    /// Every later use of it is an error.
    pub fn end(&mut self) {
        self.stop_worker();
        self.hold = None;
    }

    /// Starts a fresh worker and replays the journal into it.
    fn restart(&mut self) -> Result<RestoreReport, SandboxError> {
        if self.hold.is_none() {
            return Err(SandboxError::Protocol("this session was ended".into()));
        }
        let (worker, confinement) = Self::spawn_worker(&self.zygote, &self.spec, &self.config)?;
        self.worker_id = worker.id;
        self.confinement = confinement;
        self.worker = Some(worker);
        let mut report = RestoreReport {
            replayed: 0,
            failed: Vec::new(),
        };
        let timeout = self.config.cell_timeout;
        for (cell, code) in self.journal.clone() {
            let Some(worker) = self.worker.as_mut() else {
                break;
            };
            // A rebuild replays quietly: its output is not news.
            worker.send(&SessionRequest::Exec {
                code: code.clone(),
                cell,
                live: false,
            })?;
            match worker.wait(Instant::now() + timeout, None) {
                Ok(SessionResponse::Cell { result }) if result.ok => report.replayed += 1,
                Ok(_) => report.failed.push(cell),
                Err(_) => {
                    // A replayed cell that hangs or crashes ends the rebuild.
                    report.failed.push(cell);
                    self.stop_worker();
                    let (fresh, _) = Self::spawn_worker(&self.zygote, &self.spec, &self.config)?;
                    self.worker_id = fresh.id;
                    self.worker = Some(fresh);
                    break;
                }
            }
        }
        Ok(report)
    }

    fn cell_result(resp: SessionResponse) -> Result<CellResult, SandboxError> {
        match resp {
            SessionResponse::Cell { result } => Ok(*result),
            SessionResponse::Error { message } => Err(SandboxError::Worker(message)),
            other => Err(SandboxError::Protocol(format!(
                "expected a cell result, got {other:?}"
            ))),
        }
    }

    fn query(&mut self, req: SessionRequest) -> Result<SessionResponse, SandboxError> {
        if self.worker.is_none() {
            self.restart()?;
        }
        let worker = present(&mut self.worker)?;
        worker.send(&req)?;
        match worker.wait(Instant::now() + QUERY_TIMEOUT, None) {
            Ok(SessionResponse::Error { message }) => Err(SandboxError::Worker(message)),
            Ok(resp) => Ok(resp),
            Err(_) => {
                self.stop_worker();
                Err(SandboxError::Protocol("the worker did not answer".into()))
            }
        }
    }

    /// The static analysis of `code` against the live namespace, without
    /// running it (syntax, unbound names, missing attributes, keywords,
    /// columns, refused imports, missing `data/` paths).
    pub fn analyse(&mut self, code: &str) -> Result<Vec<Finding>, SandboxError> {
        match self.query(SessionRequest::Analyse {
            code: code.to_string(),
        })? {
            SessionResponse::Findings { findings } => Ok(findings),
            other => Err(SandboxError::Protocol(format!(
                "expected findings, got {other:?}"
            ))),
        }
    }

    /// A digest of `code`'s syntax tree, equal for two cells that differ
    /// only in layout, comments or quoting (`None` when it does not parse).
    pub fn shape(&mut self, code: &str) -> Result<Option<String>, SandboxError> {
        match self.query(SessionRequest::Shape {
            code: code.to_string(),
        })? {
            SessionResponse::Shape { shape } => Ok(shape),
            other => Err(SandboxError::Protocol(format!(
                "expected a shape, got {other:?}"
            ))),
        }
    }

    /// One-line summaries of every user variable in the namespace.
    pub fn variables(&mut self) -> Result<Vec<VariableSummary>, SandboxError> {
        match self.query(SessionRequest::Variables)? {
            SessionResponse::Variables { variables } => Ok(variables),
            other => Err(SandboxError::Protocol(format!(
                "expected variables, got {other:?}"
            ))),
        }
    }

    /// The importable distributions with their versions.
    pub fn packages(&mut self) -> Result<Vec<PackageInfo>, SandboxError> {
        match self.query(SessionRequest::Packages)? {
            SessionResponse::Packages { packages } => Ok(packages),
            other => Err(SandboxError::Protocol(format!(
                "expected packages, got {other:?}"
            ))),
        }
    }
}

/// The journal's cell for the statements of cell `cell` that ran before
/// it raised: them, headed by a comment that says so.
fn kept_before_error(cell: u64, result: &CellResult, ran: &str) -> String {
    let raised = result
        .error
        .as_ref()
        .map_or("an error".to_string(), |e| e.ename.clone());
    format!(
        "# cell {cell} raised {raised} after these statements; they ran, and are kept\n{}",
        ran.trim_end()
    )
}

impl Drop for Session {
    fn drop(&mut self) {
        // A worker stuck in a C call never reads Shutdown: kill it first.
        self.stop_worker();
    }
}
