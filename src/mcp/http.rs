//! `gisclaw mcp --http`: the streamable HTTP transport on a loopback
//! address, one sandbox session per MCP session (`Mcp-Session-Id`), each in
//! its own folder under the server's.
//!
//! Sessions exist in the protocol revisions up to 2025-11-25; the
//! 2026-07-28 revision removed them, and a persistent sandbox cannot be
//! served statelessly, so over HTTP the server offers only the revisions
//! with sessions (clients fall back to the `initialize` handshake). An MCP
//! session idle for `idle` ends, and with it its sandbox.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
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
    stop: impl Fn() -> bool,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(root)?;
    let folders = Arc::new(ClientFolders {
        root: root.to_path_buf(),
        next: AtomicUsize::new(1),
    });
    let config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
        // Browsers send an Origin; MCP clients do not. A web page must not
        // drive a local sandbox (loopback hosts only is the default).
        .enforce_origin_validation();
    let shutdown = config.cancellation_token.clone();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(idle);
    let service = StreamableHttpService::new(
        move || {
            let dir = folders.next();
            tracing::info!("MCP session: folder {}", dir.display());
            GisServer::open(shared.clone(), &dir)
                .map(GisServer::sessions_only)
                .map_err(|e| std::io::Error::other(format!("{e:#}")))
        },
        Arc::new(sessions),
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
        let connection = TowerToHyperService::new(service.clone());
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
