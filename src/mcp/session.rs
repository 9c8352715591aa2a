//! One MCP client's side of gisclaw: its folder (`pred_results/`, `work/`,
//! `transcript.jsonl`, `solution.py`) and its persistent, confined sandbox
//! session. Everything here is blocking; the server runs it on tokio's
//! blocking pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::json;

use crate::agent::converse::run_tool;
use crate::agent::memory::ErrorMemory;
use crate::agent::run::session_folders;
use crate::agent::tools::Toolbox;
use crate::knowledge::Library;
use crate::llm::EXECUTE_PYTHON;
use crate::outputs::sanity::OutputChecks;
use crate::record::{Start, ToolEvent, Transcript};
use crate::sandbox::{
    Canceller, CellStatus, SandboxConfig, SandboxError, Session, SessionDirs, Zygote,
};

/// What every client of one `gisclaw mcp` process shares.
pub struct Shared {
    /// The warm zygote sessions are forked from.
    pub zygote: Arc<Zygote>,
    /// The data folder (`--data`), seen by the cells as `data/`.
    pub data: Option<PathBuf>,
    /// The library-docs index (`--rag`).
    pub docs: Option<Arc<Library>>,
    /// Limits and policy of every session.
    pub sandbox: SandboxConfig,
    /// Error Memory's file, or `None` to keep it per client in memory
    /// (`--no-memory`). Each client loads its own copy at start (a pending
    /// error is one session's), and saves to the file as `solve` does.
    pub memory: Option<PathBuf>,
    /// Look inside outputs after each cell that writes them.
    pub output_checks: bool,
    /// The data folder's schema card, made on first request.
    card: OnceLock<String>,
    /// The data folder's card as JSON (`gisclaw card --json`), made on
    /// first request.
    card_json: OnceLock<Option<String>>,
}

impl Shared {
    /// The shared state of a server.
    pub fn new(
        zygote: Arc<Zygote>,
        data: Option<PathBuf>,
        docs: Option<Arc<Library>>,
        memory: Option<PathBuf>,
        output_checks: bool,
    ) -> Shared {
        Shared {
            sandbox: zygote.config().clone(),
            zygote,
            data,
            docs,
            memory,
            output_checks,
            card: OnceLock::new(),
            card_json: OnceLock::new(),
        }
    }

    /// The schema card of the data folder (made once: it opens every file).
    pub fn card(&self) -> &str {
        self.card.get_or_init(|| match &self.data {
            Some(dir) => crate::card::library::in_throwaway_session(&self.zygote, dir, |session| {
                crate::card::checked_card(dir, "data/", crate::card::CARD_TOKEN_BUDGET, session)
            })
            .unwrap_or_else(|why| {
                let mut card =
                    crate::card::card_for_dir(dir, "data/", crate::card::CARD_TOKEN_BUDGET);
                card.push_str(&format!(
                    "(the sandbox's libraries could not check this card: {why})\n"
                ));
                card
            }),
            None => "No data folder was given to this server (gisclaw mcp --data DIR).".into(),
        })
    }

    /// The data folder's card as JSON (the shape `gisclaw schema card`
    /// describes); `None` without a data folder.
    pub fn card_json(&self) -> Option<&str> {
        self.card_json
            .get_or_init(|| {
                let dir = self.data.as_ref()?;
                crate::card::library::in_throwaway_session(&self.zygote, dir, |session| {
                    crate::card::checked_facts(dir, "data/", session)
                })
                .unwrap_or_else(|why| {
                    crate::card::card_facts(dir, "data/").map(|mut card| {
                        card.not_checked = Some(why.to_string());
                        card
                    })
                })
                .ok()
                .and_then(|card| serde_json::to_string_pretty(&card).ok())
            })
            .as_deref()
    }
}

/// What `execute_python` returns.
#[derive(Debug)]
pub struct Executed {
    /// The observation, as the agent would see it (output, error, new
    /// variables, output checks, static-analysis findings, Error Memory
    /// hints, library docs for a wrong API).
    pub text: String,
    /// The cell ended normally.
    pub ok: bool,
    /// Images the cell wrote under `pred_results/`.
    pub images: Vec<PathBuf>,
}

/// One client's folder and sandbox session.
pub struct ClientSession {
    shared: Arc<Shared>,
    /// The client's folder.
    out: PathBuf,
    dirs: SessionDirs,
    session: Session,
    checks: Option<OutputChecks>,
    memory: ErrorMemory,
    transcript: Transcript,
}

impl ClientSession {
    /// Prepares `out` (outputs already there are kept) and opens a session
    /// in it.
    pub fn open(shared: Arc<Shared>, out: &Path) -> anyhow::Result<ClientSession> {
        let dirs = session_folders(out, shared.data.as_deref())?;
        let out = out.canonicalize()?;
        let session = Session::open_in(&shared.zygote, &dirs, shared.sandbox.clone())?;
        let transcript_path = out.join("transcript.jsonl");
        let mut transcript = Transcript::append(&transcript_path)?;
        transcript.record(Start {
            mcp: Some(true),
            data: shared.data.as_ref().map(|d| d.display().to_string()),
            rag: Some(shared.docs.is_some()),
            ..Start::default()
        });
        let checks = shared
            .output_checks
            .then(|| OutputChecks::new(shared.data.as_deref(), ""));
        let memory = match &shared.memory {
            Some(path) => ErrorMemory::load(path),
            None => ErrorMemory::in_memory(),
        };
        Ok(ClientSession {
            memory,
            shared,
            out,
            dirs,
            session,
            checks,
            transcript,
        })
    }

    /// The client's folder.
    pub fn out_dir(&self) -> &Path {
        &self.out
    }

    /// Where the transcript is written.
    pub fn transcript_path(&self) -> &Path {
        self.transcript.path()
    }

    /// A handle that interrupts the running cell.
    pub fn canceller(&self) -> Canceller {
        self.session.canceller()
    }

    /// [`ClientSession::execute`] with what the cell prints handed to
    /// `sink` as it comes (progress notifications carry its last lines).
    pub fn execute_watching(
        &mut self,
        code: &str,
        sink: Option<crate::sandbox::OutputSink>,
    ) -> Result<Executed, SandboxError> {
        self.session.set_output_sink(sink);
        let executed = self.execute(code);
        self.session.set_output_sink(None);
        executed
    }

    /// Runs one cell, with everything the agent's observation carries.
    pub fn execute(&mut self, code: &str) -> Result<Executed, SandboxError> {
        let arguments = json!({ "code": code }).to_string();
        let mut toolbox = Toolbox {
            session: &mut self.session,
            out_dir: self.out.clone(),
            data_dir: self.shared.data.clone(),
            data_path: "data/".into(),
            outputs: Vec::new(),
            docs: self.shared.docs.as_deref(),
            checks: self.checks.clone(),
            vision: true,
        };
        let run = run_tool(&mut toolbox, &mut self.memory, EXECUTE_PYTHON, &arguments)?;
        let ok = run
            .cell
            .as_ref()
            .is_some_and(|c| c.status == CellStatus::Ok);
        self.record(ToolEvent {
            arguments: arguments.clone(),
            status: Some(run.status.clone()),
            ok: Some(ok),
            observation: Some(run.text.clone()),
            cell: run.cell_record(),
            ..ToolEvent::named(EXECUTE_PYTHON)
        });
        Ok(Executed {
            text: run.text,
            ok,
            images: run.images,
        })
    }

    /// The data files, and the outputs made so far (links a cell planted
    /// under `pred_results/` are not followed).
    pub fn list_files(&mut self) -> String {
        let mut text = crate::agent::prompt::data_listing(self.shared.data.as_deref(), "data/");
        let outputs: Vec<_> = super::resources::list(&self.out)
            .into_iter()
            .filter(|r| r.uri.starts_with(super::resources::OUTPUT_PREFIX))
            .collect();
        text.push_str(&format!(
            "\n{} file(s) in `pred_results/`:\n",
            outputs.len()
        ));
        for listed in outputs {
            text.push_str(&format!("- {} ({} bytes)\n", listed.name, listed.size));
        }
        self.record(ToolEvent::named("list_files"));
        text
    }

    /// The schema card of the data folder, or the entry of one file; an
    /// error names what is wrong with `path`.
    pub fn inspect(&mut self, path: Option<&str>) -> Result<String, String> {
        let text = match (path, &self.shared.data) {
            (None, _) => Ok(self.shared.card().to_string()),
            (Some(_), None) => {
                Err("No data folder was given to this server (gisclaw mcp --data DIR).".into())
            }
            (Some(path), Some(dir)) => {
                crate::card::checked_inspect(dir, "data/", path, &mut self.session)
                    .map(|dataset| dataset.text())
                    .map_err(|e| format!("{e}. Call list_files for the exact names."))
            }
        };
        self.record(ToolEvent {
            arguments: json!({ "path": path }).to_string(),
            ok: Some(text.is_ok()),
            ..ToolEvent::named("inspect_data")
        });
        text
    }

    /// The library docs best matching `query` (needs `--rag`).
    pub fn search_docs(&mut self, query: &str) -> String {
        let text = match &self.shared.docs {
            Some(docs) => docs.render(query, crate::agent::tools::DOC_HITS),
            None => "search_docs needs the library-docs index: start the server with --rag.".into(),
        };
        self.record(ToolEvent {
            arguments: json!({ "query": query }).to_string(),
            ..ToolEvent::named("search_docs")
        });
        text
    }

    /// One line per variable of the namespace.
    pub fn variables(&mut self) -> Result<String, SandboxError> {
        let vars = self.session.variables()?;
        self.record(ToolEvent {
            observation: Some(format!("{} variable(s)", vars.len())),
            ..ToolEvent::named("list_variables")
        });
        if vars.is_empty() {
            return Ok("The namespace holds no variables yet.".into());
        }
        Ok(vars
            .iter()
            .map(|v| format!("{}  {}  {}\n", v.name, v.kind, v.summary))
            .collect())
    }

    /// Replaces the session by a fresh one: an empty namespace, the same
    /// folder (outputs are kept).
    pub fn reset(&mut self) -> Result<(), SandboxError> {
        // One live session per folder: the old one and its processes end first.
        self.session.end();
        self.session =
            Session::open_in(&self.shared.zygote, &self.dirs, self.shared.sandbox.clone())?;
        self.record(ToolEvent::named("reset_session"));
        Ok(())
    }

    /// Writes `solution.py` (the successful cells of this session, in
    /// order, as one script) into the client's folder and returns its path
    /// and text.
    pub fn save_script(&mut self) -> std::io::Result<(PathBuf, String)> {
        let script =
            crate::agent::solution::consolidate("gisclaw mcp session", self.session.journal());
        let path = self.out.join("solution.py");
        crate::util::write_atomic(&path, script.as_bytes())?;
        self.record(ToolEvent {
            observation: Some(path.display().to_string()),
            ..ToolEvent::named("save_script")
        });
        Ok((path, script))
    }

    /// Writes a client's tool call to the session's record (a failed
    /// write is warned about, and the record says no more).
    fn record(&mut self, event: ToolEvent) {
        self.transcript.record(event);
    }
}
