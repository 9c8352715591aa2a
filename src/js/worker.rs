//! The host's side of the JavaScript runtime: starts `gisclaw __js` (which
//! confines itself and becomes Node running `worker.js`), writes its
//! namespace's id maps, waits for its ready line, and sends it calls, one
//! JSON line each way. Every answer is read bounded and within a time
//! limit; a worker that overruns, dies or writes garbage is killed with
//! its whole namespace, and [`JsRuntime`] starts the next one for the next
//! call.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::serve::Envelope;

/// Why the runtime could not answer a call.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JsError {
    /// Node, its libraries or the runtime's folder are missing.
    #[error("the JavaScript runtime is not installed: {0} (run `make setup`)")]
    Missing(String),
    /// The worker could not be started or confined.
    #[error("the JavaScript runtime could not start: {0}")]
    Start(String),
}

/// How a call ended when the worker gave no answer of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ended", content = "detail", rename_all = "snake_case")]
pub enum Lost {
    /// The call ran past its wall-clock limit; the worker was killed.
    Timeout(String),
    /// The worker ended during the call (a heap limit, a crash): its
    /// last words.
    Died(String),
    /// The worker answered with something that is not an answer, or too
    /// much of it.
    Garbled(String),
}

/// Settings of the runtime.
#[derive(Debug, Clone)]
pub struct JsConfig {
    /// The Node program.
    pub node: PathBuf,
    /// The runtime's folder (`worker.js`, `node_modules/`).
    pub js_dir: PathBuf,
    /// Wall-clock limit of one call (GeoJSEval: 30 s), enforced inside
    /// the worker and, with a grace, by the host.
    pub call_limit: Duration,
    /// V8's heap limit in MiB.
    pub heap_mb: u64,
    /// The largest answer line taken, in bytes.
    pub max_answer: u64,
}

impl JsConfig {
    /// The installed runtime (`paths::node_found`, `paths::js_found`) with
    /// GeoJSEval's 30 s limit.
    pub fn installed() -> Result<JsConfig, JsError> {
        let node = crate::paths::node_found()
            .ok_or_else(|| JsError::Missing("no `node` on PATH (or GISCLAW_NODE)".into()))?
            .path;
        let js = crate::paths::js_found();
        if !js.path.join("node_modules").is_dir() || !js.path.join("worker.js").is_file() {
            return Err(JsError::Missing(format!(
                "{} has no worker.js and node_modules/ (found as {})",
                js.path.display(),
                js.how
            )));
        }
        Ok(JsConfig {
            node,
            js_dir: js.path.canonicalize().unwrap_or(js.path),
            call_limit: Duration::from_secs(30),
            heap_mb: 2048,
            max_answer: 16 << 20,
        })
    }
}

/// One call: a function's source, its name, and its arguments as JS
/// expressions (JSON is one).
#[derive(Debug, Clone, Serialize)]
pub struct JsCall {
    /// The solution: a complete function definition (and helpers).
    pub code: String,
    /// The function to call.
    pub name: String,
    /// Each argument as a JavaScript expression, evaluated in the call's
    /// realm.
    pub args: Vec<String>,
    /// Method chains evaluated on the result (GeoJSEval's indirect
    /// evaluation of maps, layers and sources).
    pub eval_methods: Vec<String>,
}

/// A value as the worker rendered it: its type tag and plain JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rendered {
    /// `Number`, `leaflet.Map`, `ol.Layer`, `Object`, `null`, ….
    pub kind: String,
    /// The value as JSON (`{"$object": kind}` for maps, layers, sources).
    pub value: Value,
}

/// One indirect value: a method chain and what it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Indirect {
    /// The chain, as given.
    pub method: String,
    /// Its type tag.
    pub kind: String,
    /// Its value.
    pub value: Value,
}

/// The error a call threw (or the worker's own timeout).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thrown {
    /// `SyntaxError`, `TypeError`, `Timeout`, ….
    pub name: String,
    /// Its message.
    pub message: String,
}

/// What the worker answered for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsAnswer {
    /// The call's number.
    pub id: u64,
    /// Whether it returned.
    pub ok: bool,
    /// The result's type tag, when it returned.
    #[serde(default)]
    pub kind: Option<String>,
    /// The result, when it returned.
    #[serde(default)]
    pub value: Option<Value>,
    /// The indirect values, when eval methods were asked for.
    #[serde(default)]
    pub indirect: Option<Vec<Indirect>>,
    /// Where it failed: `compile`, `arguments`, `call`, `indirect`, `output`.
    #[serde(default)]
    pub phase: Option<String>,
    /// What it threw.
    #[serde(default)]
    pub error: Option<Thrown>,
    /// What it printed (bounded).
    #[serde(default)]
    pub log: String,
    /// Milliseconds the call took inside the worker (a fresh realm with
    /// the libraries included).
    #[serde(default)]
    pub ms: f64,
}

/// How one call ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallOutcome {
    /// The worker answered.
    Answered(Box<JsAnswer>),
    /// It did not.
    Lost(Lost),
}

/// The worker's first line.
#[derive(Debug, Clone, Deserialize)]
struct Ready {
    ready: bool,
    node: String,
    libraries: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    confinement: Option<gisclaw_protocol::ConfinementReport>,
}

/// What a started worker says of itself.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerInfo {
    /// Node's version.
    pub node: String,
    /// The libraries' versions, by name.
    pub libraries: std::collections::BTreeMap<String, String>,
    /// The confinement in force.
    pub confinement: Option<gisclaw_protocol::ConfinementReport>,
}

/// The most stderr kept from a worker.
const MAX_STDERR: usize = 64 << 10;

/// A running, confined worker.
pub struct JsWorker {
    config: JsConfig,
    child: Child,
    pid: i32,
    /// Requests go through a writer thread: a worker that stops reading
    /// blocks that thread, never the caller (whose deadline then kills it).
    requests: Option<mpsc::Sender<Vec<u8>>>,
    /// At most one line waits here: a worker that writes more blocks on
    /// its own stdout instead of filling gisclaw's memory.
    lines: Receiver<Result<Vec<u8>, String>>,
    /// Whether the worker was killed and reaped (its PID may be reused).
    reaped: bool,
    stderr: Arc<Mutex<Vec<u8>>>,
    info: WorkerInfo,
    next_id: u64,
    handshake: Option<std::thread::JoinHandle<()>>,
    _scratch: tempfile::TempDir,
    case: tempfile::TempDir,
}

impl std::fmt::Debug for JsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JsWorker(pid {})", self.pid)
    }
}

/// The variables `gisclaw __js` keeps (it hands Node none of them).
const LAUNCHER_ENV: &[&str] = &["LANG", "TZ", "RUST_BACKTRACE"];

/// Node's permission-model flag for `node`'s version, if it has one.
fn permission_flag(node: &Path) -> Option<String> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let version = String::from_utf8_lossy(&out.stdout);
    let major: u32 = version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()?;
    match major {
        0..=19 => None,
        20..=22 => Some("--experimental-permission".into()),
        _ => Some("--permission".into()),
    }
}

impl JsWorker {
    /// Starts a confined worker and waits for it to be ready (its
    /// libraries compiled).
    pub fn start(config: &JsConfig) -> Result<JsWorker, JsError> {
        let scratch = tempfile::Builder::new()
            .prefix("gisclaw-js-")
            .tempdir()
            .map_err(|e| JsError::Start(format!("the runtime's folder: {e}")))?;
        let case = tempfile::Builder::new()
            .prefix("gisclaw-js-case-")
            .tempdir()
            .map_err(|e| JsError::Start(format!("the case's folder: {e}")))?;
        // The sandbox's user writes there.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(case.path(), std::fs::Permissions::from_mode(0o777))
            .map_err(|e| JsError::Start(format!("the case's folder: {e}")))?;
        let envelope = Envelope {
            node: config.node.clone(),
            js_dir: config.js_dir.clone(),
            case_dir: case.path().canonicalize().unwrap_or(case.path().into()),
            scratch: scratch.path().to_path_buf(),
            heap_mb: config.heap_mb,
            permission_flag: permission_flag(&config.node),
        };
        let mut line = serde_json::to_vec(&envelope).map_err(|e| JsError::Start(e.to_string()))?;
        line.push(b'\n');
        let (mut ours, theirs) = UnixStream::pair().map_err(|e| JsError::Start(e.to_string()))?;
        let exe = crate::paths::default_reader();
        let mut command = Command::new(&exe);
        command
            .arg("__js")
            .env_clear()
            .envs(
                std::env::vars_os()
                    .filter(|(k, _)| LAUNCHER_ENV.contains(&k.to_string_lossy().as_ref())),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let sync_fd = theirs.as_raw_fd();
        // SAFETY: between fork and exec only async-signal-safe calls
        // (setsid, fcntl, dup2, close) on descriptors this process owns.
        unsafe {
            command.pre_exec(move || {
                // Its own session and process group: one kill ends it all.
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let high = libc::fcntl(sync_fd, libc::F_DUPFD, 100);
                if high < 0 || libc::dup2(high, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::close(high);
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| JsError::Start(format!("{}: {e}", exe.display())))?;
        drop(theirs);
        let pid = child.id() as i32;
        let (Some(mut stdin), Some(stdout), Some(stderr_pipe)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(JsError::Start("no pipes to the worker".into()));
        };
        let (requests, to_write) = mpsc::channel::<Vec<u8>>();
        // The envelope, then each call's request, in order.
        let _ = requests.send(line);
        std::thread::spawn(move || {
            for request in to_write {
                if stdin
                    .write_all(&request)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    return;
                }
            }
        });
        let handshake = std::thread::spawn(move || {
            let _ = ours.set_read_timeout(Some(Duration::from_secs(30)));
            let _ = ours.set_write_timeout(Some(Duration::from_secs(10)));
            let _ = gisclaw_confine::isolate::write_id_maps(pid, &mut ours);
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || keep_tail(stderr_pipe, &kept));
        let (tx, lines) = mpsc::sync_channel(1);
        let max = config.max_answer;
        std::thread::spawn(move || read_lines(stdout, max, &tx));
        let mut worker = JsWorker {
            config: config.clone(),
            child,
            pid,
            requests: Some(requests),
            lines,
            reaped: false,
            stderr,
            info: WorkerInfo {
                node: String::new(),
                libraries: Default::default(),
                confinement: None,
            },
            next_id: 0,
            handshake: Some(handshake),
            _scratch: scratch,
            case,
        };
        let ready = match worker.lines.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(line)) => {
                serde_json::from_slice::<Ready>(&line).map_err(|e| format!("its first line: {e}"))
            }
            Ok(Err(why)) => Err(why),
            Err(_) => Err("not ready within 60 s".into()),
        };
        match ready {
            Ok(ready) if ready.ready => {
                worker.info = WorkerInfo {
                    node: ready.node,
                    libraries: ready.libraries,
                    confinement: ready.confinement,
                };
                Ok(worker)
            }
            Ok(_) => Err(JsError::Start("it said it was not ready".into())),
            Err(why) => {
                worker.kill();
                Err(JsError::Start(format!("{why}; {}", worker.last_words())))
            }
        }
    }

    /// The case's folder: the worker's working folder, its only writable
    /// one besides its `/tmp`.
    pub fn case_dir(&self) -> &Path {
        self.case.path()
    }

    /// The host PID of the launcher (`gisclaw __js`); Node is its one
    /// child.
    pub fn launcher_pid(&self) -> i32 {
        self.pid
    }

    /// What the worker said of itself when it started.
    pub fn info(&self) -> &WorkerInfo {
        &self.info
    }

    /// Runs one call, waiting at most the call limit and a grace. A lost
    /// call leaves the worker dead: start another.
    pub fn call(&mut self, call: &JsCall) -> CallOutcome {
        self.next_id += 1;
        let id = self.next_id;
        let limit_ms = self.config.call_limit.as_millis() as u64;
        let request = serde_json::json!({
            "id": id,
            "code": call.code,
            "name": call.name,
            "args": call.args,
            "eval_methods": call.eval_methods,
            "timeout_ms": limit_ms,
            "max_bytes": self.config.max_answer.saturating_sub(64 << 10),
        });
        let mut line = request.to_string().into_bytes();
        line.push(b'\n');
        // A line waiting before the call was written outside any call: the
        // worker is no longer the one gisclaw started.
        if let Ok(stray) = self.lines.try_recv() {
            self.kill();
            return CallOutcome::Lost(Lost::Garbled(match stray {
                Ok(_) => "the worker wrote outside a call; it was stopped".into(),
                Err(why) => why,
            }));
        }
        let sent = self.requests.as_ref().is_some_and(|r| r.send(line).is_ok());
        if !sent {
            self.kill();
            return CallOutcome::Lost(Lost::Died(format!(
                "the worker took no call; {}",
                self.last_words()
            )));
        }
        // The worker's own limit cuts synchronous loops; the host's grace
        // covers a worker that no longer runs its event loop.
        let limit = self.config.call_limit + Duration::from_secs(5);
        let lost = match self.lines.recv_timeout(limit) {
            Ok(Ok(line)) => match serde_json::from_slice::<JsAnswer>(&line) {
                Ok(answer) if answer.id == id => return CallOutcome::Answered(Box::new(answer)),
                // Another call's number: a line the code forged.
                Ok(answer) => Lost::Garbled(format!(
                    "an answer to call {} during call {id}; the worker was stopped",
                    answer.id
                )),
                Err(e) => Lost::Garbled(format!("not an answer: {e}")),
            },
            Ok(Err(why)) if why == "ended" => Lost::Died(String::new()),
            Ok(Err(why)) => Lost::Garbled(why),
            Err(RecvTimeoutError::Timeout) => Lost::Timeout(format!(
                "no answer within {} s; the worker was stopped",
                limit.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => Lost::Died(String::new()),
        };
        self.kill();
        CallOutcome::Lost(match lost {
            Lost::Died(_) => Lost::Died(self.last_words()),
            other => other,
        })
    }

    /// Kills the worker's process group (Node is PID 1 of its namespace:
    /// everything it started ends with it) and reaps it.
    fn kill(&mut self) {
        self.requests = None;
        if !self.reaped {
            // SAFETY: the worker's own process group (its session: see
            // `start`), not yet reaped, so its PID is still its own.
            unsafe { libc::kill(-self.pid, libc::SIGKILL) };
            let _ = self.child.wait();
            self.reaped = true;
        }
        if let Some(handshake) = self.handshake.take() {
            let _ = handshake.join();
        }
    }

    /// The last line the worker wrote on stderr, or how it ended.
    fn last_words(&mut self) -> String {
        // Its stderr ends with it; give the reading thread a moment.
        for _ in 0..20 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(20));
        let text = self
            .stderr
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| crate::util::clip(l.trim(), 300))
            .unwrap_or_else(|| match self.child.try_wait() {
                Ok(Some(status)) => format!("it ended with {status}"),
                _ => "it ended".into(),
            })
    }
}

impl Drop for JsWorker {
    fn drop(&mut self) {
        self.kill();
        // What a call left in its folder may be unreadable to gisclaw
        // (a folder made 0000): opened up, never following a link, so
        // that the folder can be removed.
        crate::util::make_removable(self.case.path());
    }
}

/// Reads newline-ended lines of at most `max` bytes and sends each; a
/// longer line, or the end of the stream, is the last thing sent.
fn read_lines(stdout: impl Read, max: u64, tx: &mpsc::SyncSender<Result<Vec<u8>, String>>) {
    let mut input = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        match (&mut input).take(max + 1).read_until(b'\n', &mut line) {
            Ok(0) => {
                let _ = tx.send(Err("ended".into()));
                return;
            }
            Ok(_) if line.last() == Some(&b'\n') => {
                if tx.send(Ok(line)).is_err() {
                    return;
                }
            }
            Ok(_) if line.len() as u64 > max => {
                let _ = tx.send(Err(format!("an answer longer than {max} bytes")));
                return;
            }
            Ok(_) => {
                let _ = tx.send(Err("ended".into()));
                return;
            }
            Err(e) => {
                let _ = tx.send(Err(format!("reading the worker: {e}")));
                return;
            }
        }
    }
}

/// Keeps the last [`MAX_STDERR`] bytes the worker writes on stderr.
fn keep_tail(mut stderr: impl Read, kept: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        if let Ok(mut kept) = kept.lock() {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > MAX_STDERR {
                let cut = kept.len() - MAX_STDERR;
                kept.drain(..cut);
            }
        }
    }
}

/// A worker that is started when first needed and again after a call that
/// killed it, so that one runaway call never stops the calls after it.
#[derive(Debug)]
pub struct JsRuntime {
    config: JsConfig,
    worker: Option<JsWorker>,
    /// Workers started so far.
    pub starts: usize,
}

impl JsRuntime {
    /// A runtime with `config`; nothing starts until the first call.
    pub fn new(config: JsConfig) -> JsRuntime {
        JsRuntime {
            config,
            worker: None,
            starts: 0,
        }
    }

    /// The settings.
    pub fn config(&self) -> &JsConfig {
        &self.config
    }

    /// The running worker, started if need be.
    pub fn worker(&mut self) -> Result<&mut JsWorker, JsError> {
        if self.worker.is_none() {
            self.worker = Some(JsWorker::start(&self.config)?);
            self.starts += 1;
        }
        self.worker
            .as_mut()
            .ok_or_else(|| JsError::Start("no worker".into()))
    }

    /// Runs `call`; a call that loses the worker drops it, and the next
    /// call starts a fresh one.
    pub fn call(&mut self, call: &JsCall) -> Result<CallOutcome, JsError> {
        let outcome = self.worker()?.call(call);
        if matches!(outcome, CallOutcome::Lost(_)) {
            self.worker = None;
        }
        Ok(outcome)
    }

    /// Ends the running worker: the next call starts a fresh one (a new
    /// solution gets a worker no earlier solution ran in).
    pub fn restart(&mut self) {
        self.worker = None;
    }
}
