//! One persistent Python session: a forked, confined worker child holding a
//! namespace, plus the journal of successful cells that rebuilds that
//! namespace in a fresh child after a crash or a kill.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gisclaw_protocol::fdpass::send_fd;
use gisclaw_protocol::{
    read_frame, write_frame, CellResult, ChildExit, ConfinementPolicy, ConfinementReport, FrameError, PackageInfo,
    PyError, SessionRequest, SessionResponse, SessionSpec, VariableSummary,
};

use super::config::SandboxConfig;
use super::error::SandboxError;
use super::zygote::Zygote;

/// How often the wait for a cell checks for a cancel request.
const CANCEL_POLL: Duration = Duration::from_millis(25);
/// Longest a non-cell request (variables, packages) may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(60);

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

/// A live worker child.
struct Worker {
    pid: i32,
    writer: UnixStream,
    responses: Receiver<Result<SessionResponse, FrameError>>,
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
    /// Starts a reader thread for the child's socket.
    fn new(pid: i32, stream: UnixStream) -> Result<Worker, SandboxError> {
        let mut reader = stream.try_clone().map_err(SandboxError::io("cloning the session socket"))?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || loop {
            let msg = read_frame::<_, SessionResponse>(&mut reader);
            let end = msg.is_err();
            if tx.send(msg).is_err() || end {
                return;
            }
        });
        Ok(Worker {
            pid,
            writer: stream,
            responses: rx,
        })
    }

    fn send(&mut self, req: &SessionRequest) -> Result<(), SandboxError> {
        write_frame(&mut self.writer, req).map_err(SandboxError::channel("session"))
    }

    /// Waits for the next response until `deadline`, checking `cancel`.
    fn wait(&self, deadline: Instant, cancel: Option<&AtomicBool>) -> Result<SessionResponse, WaitEnd> {
        loop {
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(WaitEnd::Cancelled);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(WaitEnd::Deadline);
            }
            let step = if cancel.is_some() {
                CANCEL_POLL.min(deadline - now)
            } else {
                deadline - now
            };
            match self.responses.recv_timeout(step) {
                Ok(Ok(resp)) => return Ok(resp),
                Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => return Err(WaitEnd::Gone),
                Err(RecvTimeoutError::Timeout) => continue,
            }
        }
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: plain kill(2); the pid is a zygote child that cannot be
        // reused before the zygote reaps it, which needs its socket closed.
        unsafe { libc::kill(self.pid, sig) };
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = write_frame(&mut self.writer, &SessionRequest::Shutdown);
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
    }
}

/// A persistent Python session in its own confined worker process.
pub struct Session {
    zygote: Arc<Zygote>,
    config: SandboxConfig,
    spec: SessionSpec,
    worker: Option<Worker>,
    confinement: ConfinementReport,
    journal: Vec<(u64, String)>,
    next_cell: u64,
    spent: Duration,
    cancel: Arc<AtomicBool>,
    current_pid: Arc<AtomicI32>,
    /// Shared with snapshots, which write to the same tmp dir.
    _tmp: Arc<tempfile::TempDir>,
}

impl Session {
    /// Opens a session whose cwd is `workdir` (created if missing, with
    /// `pred_results/` inside). Writes are confined to `workdir` and a
    /// private tmp dir where the kernel allows it.
    pub fn open(zygote: &Arc<Zygote>, workdir: &Path) -> Result<Session, SandboxError> {
        Self::open_with(zygote, workdir, zygote.config().clone())
    }

    /// Like [`Session::open`], with this session's own limits and policy
    /// (the `venv`, `worker` and `cache_dir` fields are the zygote's).
    pub fn open_with(zygote: &Arc<Zygote>, workdir: &Path, config: SandboxConfig) -> Result<Session, SandboxError> {
        std::fs::create_dir_all(workdir).map_err(SandboxError::io("creating the work dir"))?;
        let workdir = workdir.canonicalize().map_err(SandboxError::io("resolving the work dir"))?;
        let tmp = tempfile::Builder::new()
            .prefix("gisclaw-session-")
            .tempdir()
            .map_err(SandboxError::io("creating the session tmp dir"))?;
        let spec = SessionSpec {
            workdir: workdir.clone(),
            tmpdir: tmp.path().to_path_buf(),
            policy: ConfinementPolicy {
                write_roots: vec![workdir, tmp.path().to_path_buf()],
                allow_network: config.allow_network,
                memory_limit_bytes: config.memory_limit_bytes,
                file_size_limit_bytes: config.file_size_limit_bytes,
                confine: config.confine,
            },
            limits: config.limits.clone(),
            blocked_imports: config.blocked_imports.clone(),
        };
        let (worker, confinement) = Self::spawn_worker(zygote, &spec, config.startup_timeout)?;
        for warning in confinement.warnings() {
            tracing::warn!("sandbox: {warning}; the session runs less confined");
        }
        let current_pid = Arc::new(AtomicI32::new(worker.pid));
        Ok(Session {
            zygote: zygote.clone(),
            config,
            spec,
            worker: Some(worker),
            confinement,
            journal: Vec::new(),
            next_cell: 1,
            spent: Duration::ZERO,
            cancel: Arc::new(AtomicBool::new(false)),
            current_pid,
            _tmp: Arc::new(tmp),
        })
    }

    fn spawn_worker(
        zygote: &Zygote,
        spec: &SessionSpec,
        patience: Duration,
    ) -> Result<(Worker, ConfinementReport), SandboxError> {
        let (pid, stream) = zygote.fork_child(spec)?;
        let worker = Worker::new(pid, stream)?;
        let deadline = Instant::now() + patience;
        match worker.wait(deadline, None) {
            Ok(SessionResponse::Ready { confinement, .. }) => Ok((worker, confinement)),
            Ok(SessionResponse::Error { message }) => Err(SandboxError::StartFailed(message)),
            Ok(other) => Err(SandboxError::Protocol(format!("expected Ready, got {other:?}"))),
            Err(_) => Err(SandboxError::StartFailed("the session worker died while starting".into())),
        }
    }

    /// The session's work dir (its cwd).
    pub fn workdir(&self) -> &Path {
        &self.spec.workdir
    }

    /// The private tmp dir.
    pub fn tmpdir(&self) -> &Path {
        &self.spec.tmpdir
    }

    /// Which confinement layers are in force.
    pub fn confinement(&self) -> &ConfinementReport {
        &self.confinement
    }

    /// The process id of the current worker child.
    pub fn pid(&self) -> i32 {
        self.current_pid.load(Ordering::SeqCst)
    }

    /// The cells that ran successfully, in order (the replay journal).
    pub fn journal(&self) -> impl Iterator<Item = &str> {
        self.journal.iter().map(|(_, code)| code.as_str())
    }

    /// Time spent running cells so far.
    pub fn spent(&self) -> Duration {
        self.spent
    }

    /// Forks this session: the copy starts with the live namespace (copied
    /// on write, in milliseconds) and its own future. It shares this
    /// session's work dir, tmp dir and confinement, and inherits the journal,
    /// so a crash in either rebuilds its own namespace. For exploring
    /// alternatives (e.g. MCTS branches) without re-running earlier cells.
    pub fn snapshot(&mut self) -> Result<Session, SandboxError> {
        if self.worker.is_none() {
            self.restart()?;
        }
        let worker = self.worker.as_mut().expect("worker present");
        let (ours, theirs) = UnixStream::pair().map_err(SandboxError::io("creating a snapshot socket"))?;
        worker.send(&SessionRequest::Snapshot)?;
        send_fd(&worker.writer, theirs.as_raw_fd()).map_err(SandboxError::io("passing the snapshot socket"))?;
        drop(theirs);
        match worker.wait(Instant::now() + QUERY_TIMEOUT, None) {
            Ok(SessionResponse::Snapshotted) => {}
            Ok(SessionResponse::Error { message }) => return Err(SandboxError::Worker(message)),
            Ok(other) => return Err(SandboxError::Protocol(format!("expected Snapshotted, got {other:?}"))),
            Err(_) => return Err(SandboxError::Protocol("the worker did not answer the snapshot".into())),
        }
        let mut copy = Worker::new(0, ours)?;
        let confinement = match copy.wait(Instant::now() + QUERY_TIMEOUT, None) {
            Ok(SessionResponse::Ready { pid, confinement }) => {
                copy.pid = pid;
                confinement
            }
            Ok(other) => return Err(SandboxError::Protocol(format!("expected Ready, got {other:?}"))),
            Err(_) => return Err(SandboxError::StartFailed("the snapshot died while starting".into())),
        };
        Ok(Session {
            zygote: self.zygote.clone(),
            config: self.config.clone(),
            spec: self.spec.clone(),
            current_pid: Arc::new(AtomicI32::new(copy.pid)),
            worker: Some(copy),
            confinement,
            journal: self.journal.clone(),
            next_cell: self.next_cell,
            spent: self.spent,
            cancel: Arc::new(AtomicBool::new(false)),
            _tmp: self._tmp.clone(),
        })
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
        let started = Instant::now();
        let budget_left = self.remaining_budget();
        if budget_left.is_zero() {
            self.worker = None;
            return Err(SandboxError::BudgetExhausted(self.config.task_budget));
        }
        let cell = self.next_cell;
        self.next_cell += 1;
        self.cancel.store(false, Ordering::SeqCst);
        let mut restore = None;
        if self.worker.is_none() {
            restore = Some(self.restart()?);
        }
        let cell_timeout = self.config.cell_timeout;
        let limit = cell_timeout.min(budget_left);
        let request = SessionRequest::Exec {
            code: code.to_string(),
            cell,
        };
        if self.worker.as_mut().expect("worker present").send(&request).is_err() {
            // The worker died between cells (killed from outside): rebuild and resend.
            let exit = self.worker.take().map(|w| self.zygote.exit_of(w.pid));
            tracing::warn!("sandbox worker was gone before cell {cell} ({exit:?}); rebuilding it");
            restore = Some(self.restart()?);
            self.worker.as_mut().expect("worker present after restart").send(&request)?;
        }
        let worker = self.worker.as_mut().expect("worker present");
        let deadline = Instant::now() + limit;
        let first = worker.wait(deadline, Some(&self.cancel));
        let (status, result) = match first {
            Ok(resp) => {
                let result = Self::cell_result(resp)?;
                let status = if result.ok { CellStatus::Ok } else { CellStatus::Error };
                (status, result)
            }
            Err(WaitEnd::Gone) => {
                let exit = self.zygote.exit_of(worker.pid);
                self.worker = None;
                let what = exit
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "ended".to_string());
                let result = synthetic_result(
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
        if status == CellStatus::Ok {
            self.journal.push((cell, code.to_string()));
        }
        if self.worker.is_none() && restore.is_none() && self.remaining_budget() > Duration::ZERO {
            restore = Some(self.restart()?);
        }
        self.spent += started.elapsed();
        Ok(CellOutcome {
            cell,
            status,
            result,
            restore,
            wall: started.elapsed(),
        })
    }

    /// Sends SIGINT, waits the grace period for the cell to stop, and kills
    /// the worker if it does not.
    fn interrupt_or_kill(&mut self, cancelled: bool, limit: Duration) -> Result<(CellStatus, CellResult), SandboxError> {
        let grace = self.config.interrupt_grace;
        let worker = self.worker.as_mut().expect("worker present while a cell runs");
        worker.signal(libc::SIGINT);
        let answer = worker.wait(Instant::now() + grace, None);
        let killed = !matches!(answer, Ok(SessionResponse::Cell { .. }));
        let status = if cancelled {
            CellStatus::Cancelled { killed }
        } else {
            CellStatus::TimedOut { limit, killed }
        };
        let ename = if cancelled { "KeyboardInterrupt" } else { "TimeoutError" };
        let reason = if cancelled {
            "cancelled by the user".to_string()
        } else if limit < self.config.cell_timeout {
            format!("stopped after {} s (the session's time budget ran out)", limit.as_secs_f64().round())
        } else {
            format!("stopped after {} s (the cell time limit)", limit.as_secs_f64().round())
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
        worker.signal(libc::SIGKILL);
        let pid = worker.pid;
        self.worker = None;
        let _ = self.zygote.exit_of(pid);
        let result = synthetic_result(
            ename,
            &format!("the cell was {reason}; it ignored the interrupt, so its worker was killed and the namespace rebuilt from earlier cells"),
        );
        Ok((status, result))
    }

    /// Starts a fresh worker and replays the journal into it.
    fn restart(&mut self) -> Result<RestoreReport, SandboxError> {
        let (worker, confinement) = Self::spawn_worker(&self.zygote, &self.spec, self.config.startup_timeout)?;
        self.current_pid.store(worker.pid, Ordering::SeqCst);
        self.confinement = confinement;
        self.worker = Some(worker);
        let mut report = RestoreReport {
            replayed: 0,
            failed: Vec::new(),
        };
        let timeout = self.config.cell_timeout;
        for (cell, code) in self.journal.clone() {
            let Some(worker) = self.worker.as_mut() else { break };
            worker.send(&SessionRequest::Exec {
                code: code.clone(),
                cell,
            })?;
            match worker.wait(Instant::now() + timeout, None) {
                Ok(SessionResponse::Cell { result }) if result.ok => report.replayed += 1,
                Ok(_) => report.failed.push(cell),
                Err(_) => {
                    // A replayed cell that hangs or crashes ends the rebuild.
                    worker.signal(libc::SIGKILL);
                    report.failed.push(cell);
                    let (fresh, _) = Self::spawn_worker(&self.zygote, &self.spec, self.config.startup_timeout)?;
                    self.current_pid.store(fresh.pid, Ordering::SeqCst);
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
            other => Err(SandboxError::Protocol(format!("expected a cell result, got {other:?}"))),
        }
    }

    fn query(&mut self, req: SessionRequest) -> Result<SessionResponse, SandboxError> {
        if self.worker.is_none() {
            self.restart()?;
        }
        let worker = self.worker.as_mut().expect("worker present after restart");
        worker.send(&req)?;
        match worker.wait(Instant::now() + QUERY_TIMEOUT, None) {
            Ok(SessionResponse::Error { message }) => Err(SandboxError::Worker(message)),
            Ok(resp) => Ok(resp),
            Err(_) => {
                self.worker = None;
                Err(SandboxError::Protocol("the worker did not answer".into()))
            }
        }
    }

    /// One-line summaries of every user variable in the namespace.
    pub fn variables(&mut self) -> Result<Vec<VariableSummary>, SandboxError> {
        match self.query(SessionRequest::Variables)? {
            SessionResponse::Variables { variables } => Ok(variables),
            other => Err(SandboxError::Protocol(format!("expected variables, got {other:?}"))),
        }
    }

    /// The importable distributions with their versions.
    pub fn packages(&mut self) -> Result<Vec<PackageInfo>, SandboxError> {
        match self.query(SessionRequest::Packages)? {
            SessionResponse::Packages { packages } => Ok(packages),
            other => Err(SandboxError::Protocol(format!("expected packages, got {other:?}"))),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            let pid = worker.pid;
            // A worker stuck in a C call never reads Shutdown: kill it first.
            // SAFETY: see Worker::signal.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            drop(worker);
        }
    }
}

/// A result for a cell whose worker died or was killed.
fn synthetic_result(ename: &str, evalue: &str) -> CellResult {
    CellResult {
        ok: false,
        stdout: String::new(),
        stdout_dropped_chars: 0,
        stderr: String::new(),
        error: Some(PyError {
            ename: ename.to_string(),
            evalue: evalue.to_string(),
            traceback: format!("{ename}: {evalue}\n"),
        }),
        variables: Vec::new(),
        figures: Vec::new(),
        duration_us: 0,
    }
}
