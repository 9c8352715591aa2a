//! `gisclaw mcp --http`: the streamable HTTP transport on a loopback
//! address, one sandbox session per MCP session (`Mcp-Session-Id`), each in
//! its own folder under the server's.
//!
//! Sessions exist in the protocol revisions up to 2025-11-25; the
//! 2026-07-28 revision removed them, and a persistent sandbox cannot be
//! served statelessly, so over HTTP the server offers only the revisions
//! with sessions (clients fall back to the `initialize` handshake). An MCP
//! session idle for `idle` ends, and with it its sandbox.
//!
//! Whoever reaches the port runs code, so by default every request must
//! carry the server's bearer token ([`new_token`]: random, written 0600 in
//! the runtime folder, printed once); the `Host` header must name the
//! loopback address and the port actually served (no `127.0.0.1:PORT.evil`);
//! and at most [`Access::max_sessions`] MCP sessions (each a sandbox) live
//! at once: one more ends the session idle the longest ([`LiveSessions`]).

use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::{GisServer, Shared, MAX_MESSAGE_BYTES};

/// How often the accept loop looks for a stop signal.
const STOP_POLL: Duration = Duration::from_millis(200);

/// Why the HTTP server cannot start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Only loopback addresses: whoever reaches the port runs code.
    #[error("--http {0}: only a loopback address (127.0.0.1, [::1]) is served; anyone who reaches the port runs code in the sandbox")]
    NotLoopback(SocketAddr),
    /// The port is taken or not ours.
    #[error("--http {addr}: cannot listen: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The folders of one server's HTTP clients: `root/client-001`, … (a
/// number not used by an earlier run in the same root).
struct ClientFolders {
    root: PathBuf,
    next: AtomicUsize,
}

impl ClientFolders {
    fn next(&self) -> PathBuf {
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let dir = self.root.join(format!("client-{n:03}"));
            if !dir.exists() {
                return dir;
            }
        }
    }
}

/// Who may use a server, and how many at once.
#[derive(Debug, Clone)]
pub struct Access {
    /// The bearer token every request must carry; `None` serves anyone
    /// who reaches the port (`--no-auth`, for a trusted machine).
    pub token: Option<String>,
    /// Most MCP sessions (each a sandbox) alive at once.
    pub max_sessions: usize,
}

/// A fresh bearer token (32 random bytes from the kernel, in hex), written
/// with mode 0600 to `dir/mcp-http-PORT.token`; the token and that path.
pub fn new_token(dir: &Path, port: u16) -> std::io::Result<(String, PathBuf)> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut random = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut random)?;
    let token: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let path = dir.join(format!("mcp-http-{port}.token"));
    // A stale file (or anything in its place) goes first: the new one is
    // created, never opened through what was there.
    let _ = std::fs::remove_file(&path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?
        .write_all(token.as_bytes())?;
    Ok((token, path))
}

/// Whether the request's `Authorization` names the token (compared in
/// constant time for its length).
fn authorized(headers: &hyper::HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    else {
        return false;
    };
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
}

/// The answer to a request without the token.
fn unauthorized() -> hyper::Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = hyper::Response::new(
        Full::new(Bytes::from_static(
            b"Unauthorized: send the token gisclaw mcp printed as `Authorization: Bearer TOKEN`",
        ))
        .boxed(),
    );
    *response.status_mut() = hyper::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// The live MCP sessions of one server (each a sandbox), at most
/// [`Access::max_sessions`]: when one more is asked for, the session idle
/// the longest is ended to make room (a session running a call is never
/// ended); only when every one is busy is the new one refused.
pub struct LiveSessions {
    max: usize,
    manager: Arc<LocalSessionManager>,
    state: Mutex<LiveState>,
}

#[derive(Default)]
struct LiveState {
    next_key: u64,
    sessions: Vec<LiveSession>,
}

/// One live session as the server counts it.
struct LiveSession {
    key: u64,
    /// Its `Mcp-Session-Id`, known once its `initialize` was answered.
    id: Option<SessionId>,
    /// Requests being served (the `initialize` counts until answered).
    busy: usize,
    last_used: Instant,
}

/// Why a new session cannot be had.
fn all_busy(max: usize) -> std::io::Error {
    std::io::Error::other(format!(
        "{max} MCP sessions are live and all are running calls, the most this server serves (--max-sessions): wait for one to finish"
    ))
}

impl LiveSessions {
    fn new(max: usize, manager: Arc<LocalSessionManager>) -> Arc<LiveSessions> {
        Arc::new(LiveSessions {
            max: max.max(1),
            manager,
            state: Mutex::default(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for one more session, busy until its `initialize` is
    /// answered ([`LiveSessions::answered`]); at the cap, the session idle
    /// the longest is ended first (closed as if its client had sent
    /// DELETE: its sandbox ends, its next request is answered 404).
    fn admit(self: &Arc<Self>) -> std::io::Result<Tenure> {
        let mut state = self.state();
        if state.sessions.len() >= self.max {
            let oldest = state
                .sessions
                .iter()
                .enumerate()
                .filter(|(_, s)| s.busy == 0 && s.id.is_some())
                .min_by_key(|(_, s)| s.last_used)
                .map(|(i, _)| i)
                .ok_or_else(|| all_busy(self.max))?;
            let ended = state.sessions.remove(oldest);
            if let Some(id) = ended.id {
                tracing::info!(
                    "MCP session {id}: ended to make room for a new one (--max-sessions {})",
                    self.max
                );
                let manager = self.manager.clone();
                tokio::spawn(async move {
                    if let Err(e) = manager.close_session(&id).await {
                        tracing::warn!("ending MCP session {id}: {e}");
                    }
                });
            }
        }
        state.next_key += 1;
        let key = state.next_key;
        state.sessions.push(LiveSession {
            key,
            id: None,
            busy: 1,
            last_used: Instant::now(),
        });
        Ok(Tenure {
            live: self.clone(),
            key,
        })
    }

    /// The `initialize` that admitted session `key` was answered, with this
    /// session id (none when it failed).
    fn answered(&self, key: u64, id: Option<SessionId>) {
        let mut state = self.state();
        if let Some(session) = state.sessions.iter_mut().find(|s| s.key == key) {
            session.id = id;
            session.busy = session.busy.saturating_sub(1);
            session.last_used = Instant::now();
        }
    }
}

/// One live MCP session's place among its server's [`LiveSessions`],
/// given back when the session's handler goes.
pub struct Tenure {
    live: Arc<LiveSessions>,
    key: u64,
}

/// A request being served by a session; marks it used when it ends.
pub struct InUse<'a>(&'a Tenure);

impl Tenure {
    /// Marks the session busy for one request, or says it was ended to
    /// make room for a newer one.
    pub fn serve(&self) -> Result<InUse<'_>, String> {
        let mut state = self.live.state();
        match state.sessions.iter_mut().find(|s| s.key == self.key) {
            Some(session) => {
                session.busy += 1;
                Ok(InUse(self))
            }
            None => Err(format!(
                "this MCP session was ended to make room for a newer one (gisclaw mcp --max-sessions {}): start a new session",
                self.live.max
            )),
        }
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        let mut state = self.0.live.state();
        if let Some(session) = state.sessions.iter_mut().find(|s| s.key == self.0.key) {
            session.busy = session.busy.saturating_sub(1);
            session.last_used = Instant::now();
        }
    }
}

impl Drop for Tenure {
    fn drop(&mut self) {
        self.live.state().sessions.retain(|s| s.key != self.key);
    }
}

tokio::task_local! {
    /// The session a request's `initialize` admitted, if it did.
    static ADMITTED: Arc<Mutex<Option<u64>>>;
}

/// A listener on `addr`, refused unless it is a loopback address.
pub async fn listen(addr: SocketAddr) -> Result<tokio::net::TcpListener, HttpError> {
    if !addr.ip().is_loopback() {
        return Err(HttpError::NotLoopback(addr));
    }
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind { addr, source })
}

/// Serves MCP over HTTP on `listener` until `stop()` says so; each MCP
/// session gets its own sandbox session in a folder under `root`. When
/// this returns, every session has been told to end.
pub async fn serve(
    shared: Arc<Shared>,
    listener: tokio::net::TcpListener,
    root: &Path,
    idle: Duration,
    access: Access,
    stop: impl Fn() -> bool,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(root)?;
    let folders = Arc::new(ClientFolders {
        root: root.to_path_buf(),
        next: AtomicUsize::new(1),
    });
    let port = listener.local_addr()?.port();
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
        // The loopback names with the port served, nothing else (a Host of
        // `127.0.0.1:PORT.evil.com` has no port that matches).
        .with_allowed_hosts([
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ])
        // Browsers send an Origin; MCP clients do not. A web page must not
        // drive a local sandbox.
        .enforce_origin_validation();
    let shutdown = config.cancellation_token.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(idle);
    let sessions = Arc::new(sessions);
    let live = LiveSessions::new(access.max_sessions, sessions.clone());
    let admitting = live.clone();
    let service = StreamableHttpService::new(
        move || {
            let tenure = admitting.admit()?;
            // The request's wrapper learns the session id from the answer.
            let _ = ADMITTED.try_with(|admitted| {
                *admitted.lock().unwrap_or_else(|p| p.into_inner()) = Some(tenure.key);
            });
            let dir = folders.next();
            tracing::info!("MCP session: folder {}", dir.display());
            GisServer::open(shared.clone(), &dir)
                .map(|server| server.sessions_only().holding(tenure))
                .map_err(|e| std::io::Error::other(format!("{e:#}")))
        },
        sessions,
        config,
    );
    while !stop() {
        let accepted = match tokio::time::timeout(STOP_POLL, listener.accept()).await {
            Err(_) => continue,
            Ok(accepted) => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("accepting a connection: {e}");
                continue;
            }
        };
        let service = service.clone();
        let token: Option<Arc<str>> = access.token.as_deref().map(Arc::from);
        let live = live.clone();
        let connection = hyper::service::service_fn(move |request| {
            let service = service.clone();
            let allowed = token
                .as_deref()
                .is_none_or(|token| authorized(request.headers(), token));
            let live = live.clone();
            async move {
                if !allowed {
                    return Ok::<_, Infallible>(unauthorized());
                }
                let admitted = Arc::new(Mutex::new(None));
                let response = ADMITTED
                    .scope(admitted.clone(), service.handle(request))
                    .await;
                let admitted = *admitted.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(key) = admitted {
                    let id = response
                        .headers()
                        .get("mcp-session-id")
                        .and_then(|v| v.to_str().ok())
                        .map(SessionId::from);
                    live.answered(key, id);
                }
                Ok(response)
            }
        });
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), connection)
                .await;
            if let Err(e) = served {
                tracing::debug!("HTTP connection ended: {e}");
            }
        });
    }
    shutdown.cancel();
    Ok(())
}
