//! `gisclaw mcp`: serve the sandbox and tools over the Model Context Protocol.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use gisclaw::agent::memory;
use gisclaw::mcp::{self, Shared};
use gisclaw::sandbox::{SandboxConfig, Zygote};

use super::common::{open_docs, SandboxArgs, UsageError};

/// Options of `gisclaw mcp`.
#[derive(clap::Args, Debug)]
pub struct McpArgs {
    /// The data folder every session sees as `data/` (read-only).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// The session's folder: `pred_results/` (outputs, kept between
    /// runs), `work/` (the cells' cwd), `transcript.jsonl`, `solution.py`;
    /// with --http, one `client-NNN` folder per session in it. Default: a
    /// new folder under ~/.local/share/gisclaw/mcp/.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Serve the streamable HTTP transport on this loopback address
    /// (e.g. 127.0.0.1:8765) instead of stdio, one session per MCP session,
    /// until interrupted.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// With --http: end a session idle for this many seconds (and its
    /// sandbox).
    #[arg(long, default_value_t = 1800, value_name = "SECS")]
    pub idle_timeout: u64,
    /// With --http: serve without the bearer token (anyone who reaches the
    /// port runs code; for a trusted machine only).
    #[arg(long)]
    pub no_auth: bool,
    /// With --http: most MCP sessions (each a sandbox) alive at once; one
    /// more ends the session idle the longest.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_sessions: usize,
    /// Offer `search_docs` over the library-docs index
    /// (`gisclaw knowledge build` once).
    #[arg(long)]
    pub rag: bool,
    /// Per-cell time limit, in seconds.
    #[arg(long, default_value_t = 600)]
    pub cell_timeout: u64,
    /// Keep Error Memory in this process only (default: the shared file
    /// that `solve` also learns into).
    #[arg(long)]
    pub no_memory: bool,
    /// Do not look inside the outputs after each cell.
    #[arg(long)]
    pub no_output_checks: bool,
    /// Confinement the sandbox must have.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// Runs the server until the client disconnects.
pub fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(dir) = &args.data {
        if !dir.is_dir() {
            return Err(UsageError(format!("--data {}: not a folder", dir.display())).into());
        }
    }
    let config = SandboxConfig {
        cell_timeout: Duration::from_secs(args.cell_timeout),
        // A server lives as long as its client: no budget for the whole.
        task_budget: Duration::from_secs(365 * 24 * 3600),
        ..args.sandbox.config()?
    };
    let docs = open_docs(args.rag)?;
    let memory = (!args.no_memory).then(memory::default_path);
    let zygote = Zygote::start(config)?;
    let shared = Arc::new(Shared::new(
        zygote,
        args.data.clone(),
        docs,
        memory,
        !args.no_output_checks,
    ));
    let workdir = args.workdir.clone().unwrap_or_else(mcp::default_workdir);
    tracing::info!("gisclaw mcp: session folder {}", workdir.display());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match args.http {
        None => runtime.block_on(mcp::serve_stdio(shared, &workdir))?,
        Some(addr) => runtime.block_on(async {
            gisclaw::interrupt::install();
            let listener = mcp::http::listen(addr)
                .await
                .map_err(|e| UsageError(e.to_string()))?;
            let served = listener.local_addr()?;
            say_err!(
                "gisclaw mcp: serving http://{served}/mcp (sessions under {}, at most {} at once); Ctrl-C stops",
                workdir.display(),
                args.max_sessions
            );
            let token = if args.no_auth {
                say_err!("gisclaw mcp: --no-auth: anyone who reaches the port runs code in the sandbox");
                None
            } else {
                let dir = gisclaw::sandbox::service::runtime_dir()?;
                let (token, path) = mcp::http::new_token(&dir, served.port())
                    .with_context(|| format!("writing the token into {}", dir.display()))?;
                say_err!(
                    "gisclaw mcp: token {token} (also in {}, mode 0600): clients send `Authorization: Bearer <token>`",
                    path.display()
                );
                Some(token)
            };
            let access = mcp::http::Access {
                token,
                max_sessions: args.max_sessions,
            };
            let idle = Duration::from_secs(args.idle_timeout);
            let stop = || gisclaw::interrupt::requested().is_some();
            mcp::http::serve(shared, listener, &workdir, idle, access, stop).await
        })?,
    }
    // A cell the client abandoned was interrupted; give it a moment to end.
    runtime.shutdown_timeout(Duration::from_secs(5));
    Ok(ExitCode::SUCCESS)
}
