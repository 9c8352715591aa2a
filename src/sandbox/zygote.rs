//! The agent's handle on the zygote process: starting it, asking it to fork
//! session children, learning how a child died, and stopping it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gisclaw_protocol::fdpass::send_fd;
use gisclaw_protocol::{
    read_frame, write_frame, ControlRequest, ControlResponse, SessionSpec, WorkerInfo,
};

use super::config::SandboxConfig;
use super::error::SandboxError;

/// Lines of the worker's own stderr kept for error messages.
const STDERR_TAIL_LINES: usize = 20;
/// Longest worker log line forwarded to the log.
const LOG_LINE_CHARS: usize = 2_000;

/// The zygote's control channel and whose zygote it is.
struct ZygoteProcess {
    control: UnixStream,
    owner: Owner,
}

/// Who runs the zygote.
enum Owner {
    /// This gisclaw process: its child, ended with it.
    Own {
        child: Child,
        stderr_tail: Arc<Mutex<VecDeque<String>>>,
    },
    /// The per-user service (see [`super::service`]) at this socket.
    Service(std::path::PathBuf),
}

/// A started zygote, shared by every session of this gisclaw process.
pub struct Zygote {
    config: SandboxConfig,
    info: WorkerInfo,
    process: Mutex<ZygoteProcess>,
}

/// Forwards the worker's stdout/stderr to the log, line by line, keeping the
/// last lines of stderr for error messages. Long lines are cut; memory stays
/// bounded whatever the worker prints.
fn drain<R: Read + Send + 'static>(
    stream: R,
    label: &'static str,
    tail: Option<Arc<Mutex<VecDeque<String>>>>,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            // Read at most one line, but never hold more than a bounded chunk.
            match (&mut reader).take(64 * 1024).read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf);
            let line: String = line.trim_end().chars().take(LOG_LINE_CHARS).collect();
            if line.is_empty() {
                continue;
            }
            tracing::debug!(target: "gisclaw::worker", "{label}: {line}");
            if let Some(tail) = &tail {
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        }
    });
}

impl ZygoteProcess {
    /// The zygote for `config`: the per-user service's when the config asks
    /// for it (started when none serves), else a child of this process.
    fn open(config: &SandboxConfig) -> Result<(ZygoteProcess, WorkerInfo), SandboxError> {
        match &config.service {
            Some(service) => {
                let (control, info, socket) = super::service::connect(config, service)?;
                tracing::debug!(socket = %socket.display(), "using the sandbox service");
                Ok((
                    ZygoteProcess {
                        control,
                        owner: Owner::Service(socket),
                    },
                    info,
                ))
            }
            None => ZygoteProcess::spawn(config),
        }
    }

    /// Spawns the worker in zygote mode and waits for its `Ready`.
    fn spawn(config: &SandboxConfig) -> Result<(ZygoteProcess, WorkerInfo), SandboxError> {
        let (ours, theirs) =
            UnixStream::pair().map_err(SandboxError::io("creating the control socket"))?;
        let mut child = Command::new(&config.worker)
            .env_clear()
            .envs(super::env::inherited_env(&config.venv))
            .arg("zygote")
            .arg("--venv")
            .arg(&config.venv)
            .arg("--cache")
            .arg(&config.cache_dir)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: a Ctrl-C at the terminal reaches gisclaw
            // alone, which decides what to interrupt.
            .process_group(0)
            .spawn()
            .map_err(|source| SandboxError::WorkerMissing {
                path: config.worker.clone(),
                source,
            })?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(out) = child.stdout.take() {
            drain(out, "stdout", None);
        }
        if let Some(err) = child.stderr.take() {
            drain(err, "stderr", Some(stderr_tail.clone()));
        }
        let mut process = ZygoteProcess {
            control: ours,
            owner: Owner::Own { child, stderr_tail },
        };
        process
            .control
            .set_read_timeout(Some(config.startup_timeout))
            .map_err(SandboxError::io("configuring the control socket"))?;
        let ready = read_frame::<_, ControlResponse>(&mut &process.control);
        let _ = process.control.set_read_timeout(None);
        match ready {
            Ok(ControlResponse::Ready { info }) => Ok((process, *info)),
            Ok(ControlResponse::Error { message }) => Err(SandboxError::StartFailed(message)),
            Ok(other) => Err(SandboxError::Protocol(format!(
                "expected Ready, got {other:?}"
            ))),
            Err(err) => {
                let detail = process.last_words(Duration::from_secs(2));
                Err(SandboxError::StartFailed(if detail.is_empty() {
                    format!("the worker did not become ready: {err}")
                } else {
                    detail
                }))
            }
        }
    }

    /// The worker's last stderr line once it has exited (waiting up to
    /// `patience`), for error messages.
    fn last_words(&mut self, patience: Duration) -> String {
        let Owner::Own { child, stderr_tail } = &mut self.owner else {
            return String::new();
        };
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The drain thread may still be catching up with the last line.
        std::thread::sleep(Duration::from_millis(50));
        let tail = stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        super::error::worker_message(tail.iter().map(String::as_str)).unwrap_or_default()
    }

    /// One request (followed by `fds`), one response.
    fn request(
        &mut self,
        req: &ControlRequest,
        fds: &[&UnixStream],
    ) -> Result<ControlResponse, SandboxError> {
        write_frame(&mut &self.control, req).map_err(SandboxError::channel("zygote"))?;
        for fd in fds {
            send_fd(&self.control, fd.as_raw_fd())
                .map_err(SandboxError::io("passing the session sockets"))?;
        }
        read_frame(&mut &self.control).map_err(SandboxError::channel("zygote"))
    }
}

impl Drop for ZygoteProcess {
    /// Our own zygote is stopped; the service's is left to its next client
    /// (closing the channel is all).
    fn drop(&mut self) {
        let Owner::Own { child, .. } = &mut self.owner else {
            return;
        };
        let _ = write_frame(&mut &self.control, &ControlRequest::Shutdown);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Zygote {
    /// Starts the zygote: checks the venv and worker, spawns the worker, and
    /// waits until it has imported the stack.
    pub fn start(config: SandboxConfig) -> Result<Arc<Zygote>, SandboxError> {
        let config = config.resolved();
        if !config.venv.join("pyvenv.cfg").is_file() || !config.venv.join("bin/python").exists() {
            return Err(SandboxError::MissingVenv(config.venv.clone()));
        }
        if !config.worker.is_file() {
            return Err(SandboxError::WorkerMissing {
                path: config.worker.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        let (process, info) = ZygoteProcess::open(&config)?;
        for failure in &info.import_failures {
            tracing::warn!(
                "sandbox library {} failed to import ({}): run `make setup` to repair the Python environment",
                failure.module,
                failure.error
            );
        }
        tracing::debug!(seconds = info.import_seconds, "zygote ready");
        Ok(Arc::new(Zygote {
            config,
            info,
            process: Mutex::new(process),
        }))
    }

    /// What the zygote's interpreter holds.
    pub fn info(&self) -> &WorkerInfo {
        &self.info
    }

    /// The configuration it was started with.
    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The per-user service's socket when the zygote is the service's
    /// (`None`: this process' own).
    pub fn service_socket(&self) -> Option<std::path::PathBuf> {
        match &self.lock().owner {
            Owner::Service(socket) => Some(socket.clone()),
            Owner::Own { .. } => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ZygoteProcess> {
        self.process.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forks a session set up by `spec`; returns its socket and its
    /// sandbox's monitor socket. A zygote that died is restarted once.
    pub(crate) fn fork_child(
        &self,
        spec: &SessionSpec,
    ) -> Result<(UnixStream, UnixStream), SandboxError> {
        let mut process = self.lock();
        let mut attempt = 0;
        loop {
            let (ours, theirs) =
                UnixStream::pair().map_err(SandboxError::io("creating a session socket"))?;
            let (monitor, monitor_theirs) =
                UnixStream::pair().map_err(SandboxError::io("creating a monitor socket"))?;
            let req = ControlRequest::Spawn {
                spec: Box::new(spec.clone()),
            };
            match process.request(&req, &[&theirs, &monitor_theirs]) {
                Ok(ControlResponse::Spawned { pid }) => {
                    tracing::trace!(launcher = pid, "session forked");
                    return Ok((ours, monitor));
                }
                Ok(ControlResponse::Error { message }) => {
                    return Err(SandboxError::StartFailed(message))
                }
                Ok(other) => {
                    return Err(SandboxError::Protocol(format!(
                        "expected Spawned, got {other:?}"
                    )))
                }
                Err(err) if attempt == 0 => {
                    tracing::warn!("the sandbox zygote stopped answering ({err}); restarting it");
                    let (fresh, _) = ZygoteProcess::open(&self.config)?;
                    *process = fresh;
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }
}
