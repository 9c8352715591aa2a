//! `gisclaw mcp`: gisclaw's sandbox and tools served over the Model Context
//! Protocol (the official Rust SDK, `rmcp`), so that any MCP client's agent
//! (Claude Desktop, VS Code, Cursor, Zed, Goose, …) works in a persistent,
//! confined Python GIS session with the schema card, Error Memory, the
//! static analysis and the library docs.
//!
//! - [`session`]: one client's folder and sandbox session (blocking);
//! - [`server`]: the MCP handler over it (tools, resources, progress,
//!   cancellation);
//! - [`http`]: the streamable HTTP transport (`--http`), one session per
//!   MCP session;
//! - [`resources`]: listing and reading the client's outputs and
//!   transcript, never outside its `pred_results/`.
//!
//! Every client gets its own session; a client that goes away ends it.

pub mod http;
pub mod resources;
pub mod server;
pub mod session;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::ServiceExt;

/// The longest message read from a client. Above the sandbox's cell limit,
/// so that oversized code gets an MCP error naming the limit; a longer line
/// is dropped unanswered (it cannot be parsed for its id) and the server
/// goes on.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

pub use server::GisServer;
pub use session::{ClientSession, Shared};

/// Serves one client over stdin/stdout until it disconnects; its folder is
/// `out`. The session ends with the connection: a running cell is
/// interrupted and the sandbox's processes are gone when this returns.
pub async fn serve_stdio(shared: Arc<Shared>, out: &Path) -> anyhow::Result<()> {
    let server = GisServer::open(shared, out)?;
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport =
        AsyncRwTransport::new_server(stdin, stdout).with_max_line_length(MAX_MESSAGE_BYTES);
    let running = server
        .clone()
        .serve(transport)
        .await
        .map_err(|e| anyhow::anyhow!("the MCP handshake failed: {e}"))?;
    let quit = running.waiting().await;
    tracing::info!("MCP client gone ({quit:?})");
    server.cancel_running();
    Ok(())
}

/// The default folder of a server's clients: a new folder under gisclaw's
/// data dir, named by the start time and process id.
pub fn default_workdir() -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    crate::paths::data_dir()
        .join("mcp")
        .join(format!("{stamp}-{}", std::process::id()))
}
