//! What several subcommands share: the model-backend and limit flags, the
//! sandbox flags (`--require-confinement`) with the config file's
//! `[sandbox]` section, and the usage error that means exit code 2.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use gisclaw::config::{config_path, ConfigFile};
use gisclaw::llm::config::{self, BackendChoice};
use gisclaw::protocol::Protocol;
use gisclaw::sandbox::{Layer, SandboxConfig, ServiceSettings};

/// The live-model options of `solve` and `eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct BackendArgs {
    /// Model backend: `openai`, `ollama`, `local` (a llama.cpp server gisclaw
    /// starts with --gguf), or a profile of the config file (default: the
    /// config's `default`, else OPENAI_* / OLLAMA_HOST from the environment).
    #[arg(long, value_name = "NAME")]
    pub backend: Option<String>,
    /// Model name (overrides the profile, OPENAI_MODEL and OLLAMA_MODEL).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Server URL (overrides the profile, OPENAI_BASE_URL and OLLAMA_HOST).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// GGUF model file for `--backend local` (default: the one
    /// `make setup-local-model` installs).
    #[arg(long, value_name = "PATH")]
    pub gguf: Option<PathBuf>,
}

/// `--protocol NAME`, for `solve` and `eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct ProtocolArgs {
    /// Run under a paper's protocol instead of gisclaw's defaults:
    /// gisclaw-paper, geoagent-paper, autogeeval-paper or geojseval-paper
    /// (the README's protocol table says what each sets).
    #[arg(long, value_name = "NAME", default_value = "ours", value_parser = clap::builder::ValueParser::new(parse_protocol))]
    pub protocol: Protocol,
}

fn parse_protocol(text: &str) -> Result<Protocol, String> {
    text.parse()
}

/// The limits of one task run, for `solve` and `eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Most model rounds per task run.
    #[arg(long, default_value_t = 50)]
    pub max_rounds: usize,
    /// Time budget per task run, in seconds.
    #[arg(long, default_value_t = 1200)]
    pub budget: u64,
    /// Per-cell time limit, in seconds.
    #[arg(long, default_value_t = 120)]
    pub cell_timeout: u64,
    /// The model's context window in tokens (default: what the server
    /// says, else the published window, else the profile's
    /// `context_window`). A replay (--replay) then refuses longer requests
    /// as llama-server does.
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(512..))]
    pub context_window: Option<u64>,
}

/// The bounds of the tree search (`--arch mcts`), for `solve` and `eval`.
#[derive(clap::Args, Debug, Clone)]
pub struct MctsArgs {
    /// Tree search: expansions at most (each asks for --mcts-width candidates).
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..))]
    pub mcts_iterations: u64,
    /// Tree search: candidate codes asked for per expansion.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=16))]
    pub mcts_width: u64,
    /// Tree search: repair requests in a row for a candidate that fails,
    /// is pruned or writes outputs that fail their checks (0: none).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=8))]
    pub mcts_repairs: u64,
    /// Tree search: estimate each new node's reward from one completion of
    /// the remaining steps, run in a throwaway fork.
    #[arg(long)]
    pub mcts_rollout: bool,
}

impl MctsArgs {
    /// The search's bounds.
    pub fn limits(&self) -> gisclaw::agent::mcts::MctsLimits {
        gisclaw::agent::mcts::MctsLimits {
            iterations: self.mcts_iterations as usize,
            width: self.mcts_width as usize,
            repairs: self.mcts_repairs as usize,
            rollout: self.mcts_rollout,
            ..Default::default()
        }
    }
}

impl LimitArgs {
    /// The defaults of [`LimitArgs`], as a preset compares them.
    pub const DEFAULTS: gisclaw::protocol::Limits = gisclaw::protocol::Limits {
        cell_timeout: 120,
        budget: 1200,
        max_rounds: 50,
    };

    /// Sets the limits `protocol` has values for; refuses a flag given
    /// with another value.
    pub fn follow(&mut self, protocol: Protocol) -> Result<(), UsageError> {
        let given = gisclaw::protocol::Limits {
            cell_timeout: self.cell_timeout,
            budget: self.budget,
            max_rounds: self.max_rounds,
        };
        let set = protocol
            .settings()
            .limits(protocol, given, Self::DEFAULTS)
            .map_err(UsageError)?;
        self.cell_timeout = set.cell_timeout;
        self.budget = set.budget;
        self.max_rounds = set.max_rounds;
        Ok(())
    }

    /// The budget as a duration.
    pub fn budget(&self) -> Duration {
        Duration::from_secs(self.budget)
    }

    /// The cell time limit as a duration.
    pub fn cell_timeout(&self) -> Duration {
        Duration::from_secs(self.cell_timeout)
    }
}

/// The config file, read once per command: every option group that needs
/// it shares the one read (and its one error).
pub fn config_file() -> Result<&'static ConfigFile, UsageError> {
    static FILE: std::sync::OnceLock<Result<ConfigFile, String>> = std::sync::OnceLock::new();
    FILE.get_or_init(|| ConfigFile::load(&config_path()).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| UsageError(e.clone()))
}

/// What to set when no model is configured (`alternatives` ends the line).
pub fn no_backend(alternatives: &str) -> UsageError {
    UsageError(format!(
        "no model backend: set OPENAI_API_KEY (and OPENAI_MODEL), or OPENAI_BASE_URL for a local OpenAI-compatible server, or OLLAMA_HOST (and OLLAMA_MODEL); or pass --backend/--model, a profile in {}, or {alternatives}",
        config_path().display()
    ))
}

impl BackendArgs {
    /// The live model these options, the config file and the environment
    /// name, checked to be reachable and to serve the model under the key
    /// (a local server is started here and lives as long as the returned
    /// config); `None` when none is configured.
    pub fn resolve_live(&self) -> Result<Option<config::LiveConfig>, UsageError> {
        let path = config_path();
        let file = config_file()?;
        let choice = BackendChoice {
            // A GGUF file alone means the local backend.
            backend: self
                .backend
                .clone()
                .or_else(|| self.gguf.as_ref().map(|_| "local".to_string())),
            model: self.model.clone(),
            base_url: self.base_url.clone(),
            gguf: self.gguf.clone(),
        };
        let live = config::resolve(&choice, &file.backends, &path)
            .map_err(|e| UsageError(e.to_string()))?;
        let Some(live) = live else { return Ok(None) };
        live.check_reachable()
            .map_err(|e| UsageError(e.to_string()))?;
        gisclaw::llm::probe::check_model(&live).map_err(|e| UsageError(e.to_string()))?;
        start_local(live).map(Some)
    }
}

/// Starts a local config's llama-server with a spinner (a line without a
/// terminal); other configs pass through.
pub fn start_local(live: config::LiveConfig) -> Result<config::LiveConfig, UsageError> {
    let Some(spec) = live
        .local
        .clone()
        .filter(|_| live.kind == config::BackendKind::Local)
    else {
        return Ok(live);
    };
    let what = format!("starting llama-server with {}", spec.model_name());
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(bar_style("{spinner} {msg} [{elapsed}]"));
        bar.set_message(gisclaw::terminal::clean(&what));
        bar
    });
    if bar.is_none() {
        say_err!("gisclaw: {what}");
    }
    let started = live.start_local(&|_| {
        if let Some(bar) = &bar {
            bar.tick();
        }
    });
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let started = started.map_err(|e| UsageError(e.to_string()))?;
    if let Some(server) = &started.server {
        say_err!(
            "gisclaw: local model {} ready at {}",
            server.model(),
            server.base_url()
        );
    }
    Ok(started)
}

/// The library-docs index when `rag` is asked for (a missing index is a
/// usage error saying how to build it).
pub fn open_docs(
    rag: bool,
) -> Result<Option<std::sync::Arc<gisclaw::knowledge::Library>>, UsageError> {
    open_docs_under(rag, Protocol::Ours)
}

/// [`open_docs`] with `protocol`'s retrieval rule (GeoAgent's: briefs
/// only for text that names a library).
pub fn open_docs_under(
    rag: bool,
    protocol: Protocol,
) -> Result<Option<std::sync::Arc<gisclaw::knowledge::Library>>, UsageError> {
    if !rag {
        return Ok(None);
    }
    let mut library = gisclaw::knowledge::Library::open_default()
        .map_err(|e| UsageError(format!("--rag: {e}")))?;
    library.only_when_named = protocol.settings().rag_when_named;
    Ok(Some(std::sync::Arc::new(library)))
}

/// A usage or configuration problem: exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The style of a progress bar or spinner; a template indicatif rejects
/// (a bug, caught by the tests that draw them) falls back to its default.
pub fn bar_style(template: &str) -> indicatif::ProgressStyle {
    indicatif::ProgressStyle::with_template(template)
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
}

/// The sandbox options of every command that runs cells.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SandboxArgs {
    /// Refuse to run a session without these confinement layers in force
    /// (comma-separated: namespaces, capabilities, landlock, seccomp,
    /// no-new-privs, rlimits; without a value: all of them). Adds to the
    /// config file's `[sandbox] require`.
    #[arg(
        long,
        value_name = "LAYERS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "all",
        value_delimiter = ','
    )]
    pub require_confinement: Option<Vec<String>>,
    /// Start this command's own zygote (the GIS stack imported anew, ended
    /// with the command) instead of using the per-user sandbox service
    /// that stays warm between commands. Config: `[sandbox] daemon = false`.
    #[arg(long)]
    pub no_daemon: bool,
}

/// Overrides the service's idle timeout, in seconds (scripts, tests).
const IDLE_ENV: &str = "GISCLAW_SANDBOX_IDLE";

impl SandboxArgs {
    /// The default sandbox settings with the layers the config file and
    /// these flags require.
    pub fn config(&self) -> Result<SandboxConfig, UsageError> {
        let file = config_file()?;
        let mut require = file.sandbox.require.clone();
        if let Some(names) = &self.require_confinement {
            let more = Layer::parse_list(names)
                .map_err(|e| UsageError(format!("--require-confinement: {e}")))?;
            for layer in more {
                if !require.contains(&layer) {
                    require.push(layer);
                }
            }
        }
        let service = if self.no_daemon || file.sandbox.daemon == Some(false) {
            None
        } else {
            let idle = match std::env::var(IDLE_ENV) {
                Ok(v) => v
                    .trim()
                    .parse::<u64>()
                    .map(Duration::from_secs)
                    .map_err(|_| {
                        UsageError(format!("{IDLE_ENV}: `{v}` is not a number of seconds"))
                    })?,
                Err(_) => {
                    let minutes = file.sandbox.daemon_idle_minutes.unwrap_or(10.0);
                    if !(minutes.is_finite() && minutes > 0.0) {
                        return Err(UsageError(format!(
                            "{}: [sandbox] daemon_idle_minutes must be a positive number",
                            config_path().display()
                        )));
                    }
                    Duration::from_secs_f64(minutes * 60.0)
                }
            };
            Some(ServiceSettings { idle, dir: None })
        };
        Ok(SandboxConfig {
            require,
            service,
            ..SandboxConfig::default()
        })
    }
}
