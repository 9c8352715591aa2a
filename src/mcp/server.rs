//! The MCP handler of one client: gisclaw's tools over its sandbox session,
//! its outputs and transcript as resources, progress notifications while a
//! cell runs, and cancellation of a running cell.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData as McpError, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;

use super::resources::{self, Contents};
use super::session::{ClientSession, Shared};
use crate::agent::tools::{ExecuteArgs, SearchDocsArgs};
use crate::sandbox::{Canceller, MAX_CODE_BYTES};

/// How often a running cell reports progress to a client that asked.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Lines of a running cell's output a progress notification carries.
const PROGRESS_LINES: usize = 3;

/// The last lines a running cell printed (cleaned), for progress
/// notifications.
#[derive(Default)]
struct OutputTail {
    lines: crate::chat::live::LiveLines,
    last: std::collections::VecDeque<String>,
}

impl OutputTail {
    fn push(&mut self, text: &str) {
        for line in self.lines.push(text) {
            if self.last.len() == PROGRESS_LINES {
                self.last.pop_front();
            }
            self.last.push_back(crate::util::clip(&line, 200));
        }
    }

    /// The last lines, the one in progress included.
    fn text(&self) -> String {
        let partial = self.lines.partial();
        let mut lines: Vec<&str> = self.last.iter().map(String::as_str).collect();
        if !partial.is_empty() {
            if lines.len() == PROGRESS_LINES {
                lines.remove(0);
            }
            lines.push(&partial);
        }
        lines.join("\n")
    }
}

/// What the server tells a client's model at connection.
const INSTRUCTIONS: &str = "gisclaw: a persistent, confined Python sandbox with the GIS stack \
(geopandas, rasterio, shapely, pyproj, xarray, scipy, scikit-learn, PySAL, matplotlib). Start with \
inspect_data (the schema card: layers, CRS, fields, raster bands) and list_files; run code with \
execute_python (variables persist between calls); write every output under pred_results/ \
(figures as PNG: they come back as images); save_script writes the successful cells as one script. \
The sandbox has no network, cannot read your home folder, and only writes to its work folder.";

/// Arguments of `inspect_data` (unlike the agent's, the path is optional:
/// without it, the schema card of the whole folder).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArgs {
    /// One file, as list_files shows it (`data/roads.shp`, or
    /// `data/a.zip/b.shp` for an archive member). Leave it out for the
    /// schema card of the whole data folder.
    #[serde(default)]
    pub path: Option<String>,
}

/// One client's MCP server: tools, resources, progress and cancellation
/// over its [`ClientSession`].
#[derive(Clone)]
pub struct GisServer {
    client: Arc<Mutex<ClientSession>>,
    /// The running cell's canceller (replaced with the session on reset),
    /// reachable while the session itself is locked by that cell.
    canceller: Arc<Mutex<Canceller>>,
    /// Interrupts the running cell when the last clone goes (the transport
    /// dropped the client's handler).
    _ended: Arc<CancelOnDrop>,
    /// Offer only the protocol revisions that have sessions (HTTP).
    sessions_only: bool,
    /// Over HTTP, this session's place among the server's live sessions,
    /// given back when the last clone goes.
    tenure: Option<Arc<super::http::Tenure>>,
    /// The client's folder (resources are read without waiting for a
    /// running cell).
    out: std::path::PathBuf,
    /// What every client shares: the data folder and its card (served as
    /// resources without waiting for a running cell).
    shared: Arc<Shared>,
    with_docs: bool,
    tool_router: ToolRouter<GisServer>,
}

/// Interrupts the running cell when dropped.
struct CancelOnDrop(Arc<Mutex<Canceller>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).cancel();
    }
}

/// A sandbox failure as a tool result the model can read.
fn tool_failure(e: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("sandbox error: {e}"))])
}

impl GisServer {
    /// A server for one client whose folder is `out`.
    pub fn open(shared: Arc<Shared>, out: &std::path::Path) -> anyhow::Result<GisServer> {
        let with_docs = shared.docs.is_some();
        let client = ClientSession::open(shared.clone(), out)?;
        let canceller = Arc::new(Mutex::new(client.canceller()));
        let mut tool_router = Self::tool_router();
        if !with_docs {
            tool_router.remove_route("search_docs");
        }
        Ok(GisServer {
            out: client.out_dir().to_path_buf(),
            shared,
            client: Arc::new(Mutex::new(client)),
            _ended: Arc::new(CancelOnDrop(canceller.clone())),
            canceller,
            sessions_only: false,
            tenure: None,
            with_docs,
            tool_router,
        })
    }

    /// The same server, offering only the protocol revisions with sessions
    /// (up to 2025-11-25): over HTTP, 2026-07-28 serves every request
    /// statelessly, which a persistent sandbox cannot be.
    pub fn sessions_only(mut self) -> GisServer {
        self.sessions_only = true;
        self
    }

    /// This server holding `tenure` (an HTTP session's place) while it
    /// lives.
    pub fn holding(mut self, tenure: super::http::Tenure) -> GisServer {
        self.tenure = Some(Arc::new(tenure));
        self
    }

    /// Interrupts the running cell, if any (a disconnecting client).
    pub fn cancel_running(&self) {
        self.canceller
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .cancel();
    }

    /// Marks this session busy while a request is served (over HTTP, a
    /// busy session is never the one ended to make room), or says it was
    /// ended.
    fn in_use(&self) -> Result<Option<super::http::InUse<'_>>, McpError> {
        self.tenure
            .as_deref()
            .map(|t| t.serve().map_err(|e| McpError::invalid_request(e, None)))
            .transpose()
    }

    /// Runs `job` on the client's session on the blocking pool.
    async fn with_client<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut ClientSession) -> T + Send + 'static,
    ) -> Result<T, McpError> {
        let _in_use = self.in_use()?;
        let client = self.client.clone();
        tokio::task::spawn_blocking(move || {
            let mut client = client.lock().unwrap_or_else(|p| p.into_inner());
            job(&mut client)
        })
        .await
        .map_err(|e| {
            McpError::internal_error(format!("the session's worker thread failed: {e}"), None)
        })
    }
}

#[tool_router]
impl GisServer {
    /// `list_files`.
    #[tool(
        description = "List every file of the data folder (nested folders flattened, exact names and sizes) and the outputs written so far under pred_results/.",
        annotations(read_only_hint = true)
    )]
    async fn list_files(&self) -> Result<CallToolResult, McpError> {
        let text = self.with_client(|c| c.list_files()).await?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// `inspect_data`.
    #[tool(
        description = "Describe the data natively (GDAL): without a path, the schema card of the whole data folder; with a path, one file in full: layers, geometry type, CRS, fields and types, sample rows; raster size, bands, dtype, nodata, pixel size, min/max; table columns and which hold coordinates; GeoParquet metadata; NetCDF variables; an archive's members.",
        annotations(read_only_hint = true)
    )]
    async fn inspect_data(
        &self,
        Parameters(args): Parameters<InspectArgs>,
    ) -> Result<CallToolResult, McpError> {
        Ok(
            match self
                .with_client(move |c| c.inspect(args.path.as_deref()))
                .await?
            {
                Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
                Err(text) => CallToolResult::error(vec![ContentBlock::text(text)]),
            },
        )
    }

    /// `execute_python`.
    #[tool(
        description = "Run Python in the persistent, confined GIS sandbox (cwd has data/ and pred_results/). Returns stdout, the error with hints when it fails (static analysis, remembered fixes, library docs for a wrong API), new variables, checks of the outputs written, and each image written under pred_results/ as an image. No network; writes only inside the work folder."
    )]
    async fn execute_python(
        &self,
        Parameters(args): Parameters<ExecuteArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        if args.code.len() > MAX_CODE_BYTES {
            return Err(McpError::invalid_params(
                format!(
                    "the code is {} bytes, over the sandbox's limit of {MAX_CODE_BYTES} bytes; split it into smaller cells",
                    args.code.len()
                ),
                None,
            ));
        }
        let canceller = self
            .canceller
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        // Cancellation from the client interrupts the cell (it gets
        // KeyboardInterrupt; the session lives). The watcher is a task of
        // its own so that it fires even if the SDK drops this future.
        let ct = context.ct.clone();
        let watcher = tokio::spawn(async move {
            ct.cancelled().await;
            canceller.cancel();
        });
        // What the cell prints, kept as its last lines for the progress
        // notifications (only when the client asked for progress).
        let tail = Arc::new(Mutex::new(OutputTail::default()));
        let token = context.meta.get_progress_token();
        let sink: Option<crate::sandbox::OutputSink> = token.as_ref().map(|_| {
            let tail = Arc::clone(&tail);
            Arc::new(move |_stream: crate::sandbox::OutputStream, text: &str| {
                if let Ok(mut tail) = tail.lock() {
                    tail.push(text);
                }
            }) as crate::sandbox::OutputSink
        });
        let progress = token.map(|token| {
            let peer = context.peer.clone();
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let started = Instant::now();
                let mut tick = tokio::time::interval(PROGRESS_EVERY);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let seconds = started.elapsed().as_secs_f64();
                    let last = tail.lock().map(|t| t.text()).unwrap_or_default();
                    let message = if last.is_empty() {
                        format!("cell running for {seconds:.0} s")
                    } else {
                        format!("cell running for {seconds:.0} s; last output:\n{last}")
                    };
                    let note = ProgressNotificationParam::new(token.clone(), seconds.floor())
                        .with_message(message);
                    if peer.notify_progress(note).await.is_err() {
                        break;
                    }
                }
            })
        });
        let cancelled = context.ct.clone();
        let code = args.code;
        let run = self
            .with_client(move |c| {
                if cancelled.is_cancelled() {
                    return None;
                }
                Some(c.execute_watching(&code, sink))
            })
            .await;
        watcher.abort();
        if let Some(progress) = progress {
            progress.abort();
        }
        let executed = match run? {
            None => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "cancelled before the cell started; nothing ran",
                )]))
            }
            Some(Err(e)) => return Ok(tool_failure(e)),
            Some(Ok(executed)) => executed,
        };
        let mut content = vec![ContentBlock::text(executed.text)];
        for path in &executed.images {
            if let Some(image) = crate::outputs::shown::prepare(path) {
                content.push(ContentBlock::image(image.base64, "image/png"));
            }
        }
        Ok(if executed.ok {
            CallToolResult::success(content)
        } else {
            CallToolResult::error(content)
        })
    }

    /// `search_docs` (only with `--rag`).
    #[tool(
        description = "Search the documentation of the installed GIS libraries (geopandas, rasterio, shapely, pyproj, scipy, scikit-learn, PySAL, xarray, numpy, pandas, matplotlib) and gisclaw's how-to recipes: exact signatures and docstrings of the best matches.",
        annotations(read_only_hint = true)
    )]
    async fn search_docs(
        &self,
        Parameters(args): Parameters<SearchDocsArgs>,
    ) -> Result<CallToolResult, McpError> {
        let text = self
            .with_client(move |c| c.search_docs(&args.query))
            .await?;
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// `list_variables`.
    #[tool(
        description = "List the variables of the sandbox's namespace: name, type and a short summary (shape, CRS, columns).",
        annotations(read_only_hint = true)
    )]
    async fn list_variables(&self) -> Result<CallToolResult, McpError> {
        Ok(match self.with_client(|c| c.variables()).await? {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => tool_failure(e),
        })
    }

    /// `reset_session`.
    #[tool(
        description = "Start a fresh Python session: every variable and import is forgotten; files in pred_results/ are kept.",
        annotations(destructive_hint = true)
    )]
    async fn reset_session(&self) -> Result<CallToolResult, McpError> {
        let canceller = self.canceller.clone();
        let reset = self
            .with_client(move |c| {
                let done = c.reset();
                *canceller.lock().unwrap_or_else(|p| p.into_inner()) = c.canceller();
                done
            })
            .await?;
        Ok(match reset {
            Ok(()) => CallToolResult::success(vec![ContentBlock::text(
                "A fresh session is ready; its namespace is empty.",
            )]),
            Err(e) => tool_failure(e),
        })
    }

    /// `save_script`.
    #[tool(
        description = "Write the successful cells of this session, in order, as one runnable script (solution.py in the session's folder) and return it."
    )]
    async fn save_script(&self) -> Result<CallToolResult, McpError> {
        Ok(match self.with_client(|c| c.save_script()).await? {
            Ok((path, script)) => CallToolResult::success(vec![ContentBlock::text(format!(
                "Saved to {}:\n\n{script}",
                path.display()
            ))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "cannot write solution.py: {e}"
            ))]),
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for GisServer {
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.sessions_only {
            std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    fn get_info(&self) -> ServerConfig {
        let mut instructions = INSTRUCTIONS.to_string();
        if self.with_docs {
            instructions.push_str(" search_docs finds the exact API in the installed libraries.");
        }
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("gisclaw", env!("CARGO_PKG_VERSION")))
        .with_instructions(instructions)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let _in_use = self.in_use()?;
        let out = self.out.clone();
        let listed = tokio::task::spawn_blocking(move || resources::list(&out))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut items: Vec<Resource> = Vec::new();
        if self.shared.data.is_some() {
            items.push(
                Resource::new(resources::CARD_URI, "schema card").with_mime_type("text/plain"),
            );
            items.push(
                Resource::new(resources::CARD_JSON_URI, "schema card (JSON)")
                    .with_mime_type("application/json"),
            );
        }
        items.extend(listed.into_iter().map(|l| {
            let resource = Resource::new(l.uri, l.name).with_size(l.size);
            match l.mime {
                Some(mime) => resource.with_mime_type(mime),
                None => resource,
            }
        }));
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let _in_use = self.in_use()?;
        let uri = request.uri.clone();
        let out = self.out.clone();
        let shared = self.shared.clone();
        let read = tokio::task::spawn_blocking(move || match uri.as_str() {
            resources::CARD_URI if shared.data.is_some() => Ok(Contents::Text {
                text: shared.card().to_string(),
                mime: "text/plain",
            }),
            resources::CARD_JSON_URI => match shared.card_json() {
                Some(text) => Ok(Contents::Text {
                    text: text.to_string(),
                    mime: "application/json",
                }),
                None => Err(resources::ReadError::Missing(uri)),
            },
            _ => resources::read(&out, &uri),
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let contents = match read {
            Ok(Contents::Text { text, mime }) => ResourceContents::TextResourceContents {
                uri: request.uri,
                mime_type: Some(mime.into()),
                text,
                meta: None,
            },
            Ok(Contents::Blob { base64, mime }) => ResourceContents::BlobResourceContents {
                uri: request.uri,
                mime_type: Some(mime.into()),
                blob: base64,
                meta: None,
            },
            Err(e @ (resources::ReadError::Unknown(_) | resources::ReadError::Missing(_))) => {
                return Err(McpError::resource_not_found(e.to_string(), None))
            }
            Err(e) => return Err(McpError::invalid_params(e.to_string(), None)),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}
