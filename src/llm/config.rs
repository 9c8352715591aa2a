//! Which live model to talk to: the config file's profiles
//! ([`crate::config`] reads the file), the standard environment variables,
//! and command-line overrides, resolved into one [`LiveConfig`].
//!
//! The file's backend part:
//!
//! ```toml
//! default = "deepseek"            # profile used when --backend is not given
//!
//! [profiles.deepseek]
//! kind = "openai"                 # openai | ollama
//! base_url = "https://api.deepseek.com/v1"
//! model = "deepseek-chat"
//! api_key_env = "DEEPSEEK_API_KEY"
//!
//! [prices."my-model"]             # USD per 1M tokens
//! input = 0.5
//! output = 1.5
//! cached_input = 0.05             # optional: prefix-cache hits
//! ```
//!
//! Precedence: command line, then the profile, then the environment
//! (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_MODEL`, `OLLAMA_HOST`,
//! `OLLAMA_MODEL`), then defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::local::{LocalError, LocalServer, LocalSpec};
use super::retry::RetryPolicy;
use super::tokens::{self, Price};

/// The wire protocol of a live backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Any OpenAI-compatible `/chat/completions` server.
    Openai,
    /// Ollama's native `/api/chat`.
    Ollama,
    /// A llama.cpp server that gisclaw starts with a GGUF file (see [`super::local`]).
    Local,
}

/// How tools are offered to the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// Native tool calling; switch to text for good if the server refuses tools.
    #[default]
    Auto,
    /// Native tool calling only.
    Native,
    /// Text-mode ReAct (`Action:` + fenced code), no `tools` in requests.
    Text,
    /// Each answer forced to one action by a JSON Schema the server turns
    /// into a grammar (llama-server, Ollama, OpenAI-compatible servers with
    /// `response_format: json_schema`); text mode if the server refuses
    /// it. See [`super::constrained`].
    Constrained,
}

impl ToolMode {
    /// The mode's name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            ToolMode::Auto => "auto",
            ToolMode::Native => "native",
            ToolMode::Text => "text",
            ToolMode::Constrained => "constrained",
        }
    }
}

/// One `[profiles.NAME]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// `openai` or `ollama`.
    pub kind: Option<BackendKind>,
    /// Server URL (`…/v1` for OpenAI-compatible servers; the Ollama host).
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// The API key itself (prefer `api_key_env`).
    pub api_key: Option<String>,
    /// `auto` (default), `native` or `text`.
    pub tool_mode: Option<ToolMode>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling: the smallest set of tokens whose probabilities
    /// add up to this (GeoAgent samples at 0.9); `None`: the server's
    /// default.
    pub top_p: Option<f32>,
    /// Most completion tokens per call (includes thinking tokens).
    pub max_tokens: Option<u32>,
    /// Seconds before one HTTP request is abandoned (default 300).
    pub timeout_secs: Option<u64>,
    /// Attempts per call on timeouts, dropped connections, 429 and 5xx (default 5).
    pub attempts: Option<u32>,
    /// Ollama: context window in tokens (default 16384; Ollama's own default truncates).
    pub num_ctx: Option<u64>,
    /// OpenAI-compatible: the model's context window in tokens, for servers
    /// that do not say it and models not in gisclaw's table.
    pub context_window: Option<u64>,
    /// Ollama: ask thinking models to think (`true`) or not (`false`).
    pub think: Option<bool>,
    /// Extra JSON fields merged into every OpenAI-compatible request
    /// (e.g. a provider's thinking budget or `reasoning_effort`).
    pub extra_body: Option<toml::Table>,
    /// Local: the GGUF model file (default: the set-up's SmolLM2).
    pub gguf: Option<PathBuf>,
    /// Local: the `llama-server` binary (default: the set-up's).
    pub server: Option<PathBuf>,
    /// Local: inference threads (default: all cores).
    pub threads: Option<usize>,
    /// Local: context window in tokens (default 8192).
    pub ctx_size: Option<u32>,
    /// Local: a fixed loopback port (default: a free one).
    pub port: Option<u16>,
    /// Local: further `llama-server` arguments, e.g. `["-ngl", "99"]` to
    /// put the model on a GPU (not `--host`, `--port`, `--model`, `--alias`
    /// or `--api-key`: gisclaw sets those).
    pub server_args: Option<Vec<String>>,
    /// Show the model the figures a cell writes: `true`, `false` (default)
    /// or `"auto"` (ask the model once, remember the answer).
    pub vision: Option<super::vision::Vision>,
}

/// The config file's model backends: its profiles, the default one and
/// price overrides (the file itself is [`crate::config::ConfigFile`]).
#[derive(Debug, Clone, Default)]
pub struct Backends {
    /// Profile used when `--backend` is not given.
    pub default: Option<String>,
    /// Named backends.
    pub profiles: BTreeMap<String, Profile>,
    /// Price overrides, USD per 1M tokens, by model name.
    pub prices: BTreeMap<String, Price>,
}

/// A configuration problem, said in one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Something needed is not set.
    #[error("{0}")]
    Missing(String),
}

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct BackendChoice {
    /// `--backend`: a profile name, or `openai` / `ollama`.
    pub backend: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--gguf` (local backend).
    pub gguf: Option<PathBuf>,
}

/// A fully resolved live backend. `Debug` never shows the key.
#[derive(Clone)]
pub struct LiveConfig {
    /// Profile name (or the kind when no profile was used).
    pub name: String,
    /// Wire protocol.
    pub kind: BackendKind,
    /// Server URL.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// API key (never logged, never written).
    pub api_key: Option<String>,
    /// How tools are offered.
    pub tool_mode: ToolMode,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling (`top_p`); `None`: the server's default.
    pub top_p: Option<f32>,
    /// Most completion tokens per call.
    pub max_tokens: Option<u32>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries of one call.
    pub retry: RetryPolicy,
    /// Ollama context window.
    pub num_ctx: u64,
    /// The profile's `context_window` (OpenAI-compatible servers).
    pub context_window: Option<u64>,
    /// Ollama thinking switch.
    pub think: Option<bool>,
    /// Extra request fields.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Whether the model is shown figures (vision feedback).
    pub vision: super::vision::Vision,
    /// Price for cost estimates (`None`: unknown).
    pub price: Option<Price>,
    /// Local: what to start (kind [`BackendKind::Local`] until started).
    pub local: Option<LocalSpec>,
    /// Local: the running server, shared by every backend opened from this
    /// config; it stops when the last clone is dropped.
    pub server: Option<Arc<LocalServer>>,
}

impl std::fmt::Debug for LiveConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveConfig")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl LiveConfig {
    /// What a run's provenance records of this backend, `backend` being its
    /// description: model, server, the local model's file and context
    /// size, the sampler (never the key).
    pub fn provenance(&self, backend: String) -> crate::llm::provenance::ModelProvenance {
        let local = self.local.as_ref();
        crate::llm::provenance::ModelProvenance {
            name: Some(self.model.clone()),
            backend,
            server: (self.kind != BackendKind::Local)
                .then(|| super::provenance::public_url(&self.base_url)),
            replay: false,
            gguf: local.map(|spec| crate::llm::provenance::gguf(&spec.gguf)),
            context_size: match self.kind {
                BackendKind::Ollama => Some(self.num_ctx),
                _ => local
                    .map(|spec| u64::from(spec.ctx_size))
                    .or(self.context_window),
            },
            sampler: {
                let mut sampler = crate::llm::provenance::Sampler::from_extra(
                    self.temperature,
                    self.max_tokens,
                    &self.extra_body,
                );
                if let Some(p) = self.top_p {
                    sampler.other.insert("top_p".into(), super::decimal(p));
                }
                sampler
            },
        }
    }

    /// For [`BackendKind::Local`]: starts the server (see
    /// [`LocalServer::start`] for `on_wait`) and returns the OpenAI-compatible
    /// config that talks to it and keeps it alive. Other kinds come back unchanged.
    pub fn start_local(self, on_wait: &dyn Fn(Duration)) -> Result<LiveConfig, LocalError> {
        let (BackendKind::Local, Some(spec)) = (self.kind, &self.local) else {
            return Ok(self);
        };
        let server = LocalServer::start(spec, on_wait)?;
        Ok(LiveConfig {
            kind: BackendKind::Openai,
            base_url: server.base_url(),
            model: server.model().to_string(),
            server: Some(Arc::new(server)),
            ..self
        })
    }

    /// Checks that the server's port accepts connections (no request is
    /// sent, nothing is spent), so a wrong URL fails at start-up in one line.
    /// A local server not started yet is checked for its files instead.
    pub fn check_reachable(&self) -> Result<(), ConfigError> {
        use std::net::{TcpStream, ToSocketAddrs};
        let hint = match self.kind {
            BackendKind::Openai => {
                "check --base-url / OPENAI_BASE_URL and that the server is running"
            }
            BackendKind::Ollama => "check OLLAMA_HOST and that `ollama serve` is running",
            BackendKind::Local => {
                return match &self.local {
                    Some(spec) => spec
                        .check()
                        .map_err(|e| ConfigError::Missing(e.to_string())),
                    None => Ok(()),
                }
            }
        };
        let url = reqwest::Url::parse(&self.base_url).map_err(|e| {
            ConfigError::Missing(format!(
                "the backend URL `{}` is not a URL ({e}): {hint}",
                self.base_url
            ))
        })?;
        let host = url.host_str().unwrap_or("").to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs: Vec<_> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|e| {
                ConfigError::Missing(format!(
                    "cannot resolve {host} for the model server {} ({e}): {hint}",
                    self.base_url
                ))
            })?
            .collect();
        let mut last = None;
        for addr in &addrs {
            match TcpStream::connect_timeout(addr, Duration::from_secs(5)) {
                Ok(_) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(ConfigError::Missing(format!(
            "cannot reach the model server at {} ({}): {hint}",
            self.base_url,
            last.map(|e| e.to_string())
                .unwrap_or_else(|| "no address".into())
        )))
    }
}

const OPENAI_DEFAULT_URL: &str = "https://api.openai.com/v1";
const OLLAMA_DEFAULT_URL: &str = "http://127.0.0.1:11434";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether the environment names a live backend (used to pick a default).
pub fn environment_names_a_backend() -> Option<BackendKind> {
    if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() {
        Some(BackendKind::Openai)
    } else if env("OLLAMA_HOST").is_some() {
        Some(BackendKind::Ollama)
    } else {
        None
    }
}

/// Resolves the command line against the config file and the environment.
/// `Ok(None)`: nothing names a live backend.
pub fn resolve(
    choice: &BackendChoice,
    file: &Backends,
    file_path: &Path,
) -> Result<Option<LiveConfig>, ConfigError> {
    let Some((name, profile)) = chosen_profile(choice, file, file_path)? else {
        return Ok(None);
    };
    let kind = profile.kind.ok_or_else(|| {
        ConfigError::Missing(format!(
            "{}: profile `{name}` has no `kind` (openai, ollama or local)",
            file_path.display()
        ))
    })?;
    if choice.gguf.is_some() && kind != BackendKind::Local {
        return Err(ConfigError::Missing(format!(
            "--gguf needs the local backend (--backend local), not `{name}`"
        )));
    }
    let mut local = None;
    let (base_url, model, api_key) = match kind {
        BackendKind::Local => {
            let (spec, model) = local_endpoint(choice, &profile, &name, file_path)?;
            local = Some(spec);
            (String::new(), model, None)
        }
        BackendKind::Openai => openai_endpoint(choice, &profile, &name, file, file_path)?,
        BackendKind::Ollama => {
            let (host, model) = ollama_endpoint(choice, &profile, &name, file, file_path)?;
            (host, model, None)
        }
    };
    let extra_body = match &profile.extra_body {
        Some(t) => serde_json::to_value(t)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default(),
        None => serde_json::Map::new(),
    };
    let attempts = profile.attempts.unwrap_or(5).max(1);
    let price = match kind {
        BackendKind::Ollama | BackendKind::Local => {
            tokens::price_of(&model, &file.prices).or(Some(Price::new(0.0, 0.0)))
        }
        BackendKind::Openai => tokens::price_of(&model, &file.prices),
    };
    Ok(Some(LiveConfig {
        name,
        kind,
        base_url: base_url.trim_end_matches('/').to_string(),
        model,
        api_key,
        tool_mode: profile.tool_mode.unwrap_or(if kind == BackendKind::Local {
            LOCAL_TOOL_MODE
        } else {
            ToolMode::Auto
        }),
        temperature: profile.temperature,
        top_p: profile.top_p,
        max_tokens: profile
            .max_tokens
            .or((kind == BackendKind::Local).then_some(LOCAL_MAX_TOKENS)),
        timeout: Duration::from_secs(profile.timeout_secs.unwrap_or(300).max(1)),
        retry: RetryPolicy {
            attempts,
            ..RetryPolicy::default()
        },
        num_ctx: profile.num_ctx.unwrap_or(16_384),
        context_window: profile.context_window,
        think: profile.think,
        extra_body,
        vision: profile.vision.unwrap_or_default(),
        price,
        local,
        server: None,
    }))
}

/// The profile `--backend` (or the file's default, or the environment)
/// names, with its name; `None` when nothing names a backend.
fn chosen_profile(
    choice: &BackendChoice,
    file: &Backends,
    file_path: &Path,
) -> Result<Option<(String, Profile)>, ConfigError> {
    let chosen = match choice.backend.as_deref().or(file.default.as_deref()) {
        Some(name) => match file.profiles.get(name) {
            Some(p) => (name.to_string(), p.clone()),
            None => match name {
                "openai" => (
                    name.to_string(),
                    Profile {
                        kind: Some(BackendKind::Openai),
                        ..Profile::default()
                    },
                ),
                "ollama" => (
                    name.to_string(),
                    Profile {
                        kind: Some(BackendKind::Ollama),
                        ..Profile::default()
                    },
                ),
                "local" => (
                    name.to_string(),
                    Profile {
                        kind: Some(BackendKind::Local),
                        ..Profile::default()
                    },
                ),
                other => {
                    let known: Vec<&str> = file.profiles.keys().map(String::as_str).collect();
                    return Err(ConfigError::Missing(format!(
                        "no backend or profile named `{other}`: use openai, ollama, local, replay{}{}",
                        if known.is_empty() { String::new() } else { format!(", or a profile of {} ({})", file_path.display(), known.join(", ")) },
                        if known.is_empty() { format!(" (profiles go in {})", file_path.display()) } else { String::new() }
                    )));
                }
            },
        },
        None => match environment_names_a_backend() {
            Some(BackendKind::Openai) => (
                "openai".to_string(),
                Profile {
                    kind: Some(BackendKind::Openai),
                    ..Profile::default()
                },
            ),
            Some(BackendKind::Ollama) => (
                "ollama".to_string(),
                Profile {
                    kind: Some(BackendKind::Ollama),
                    ..Profile::default()
                },
            ),
            Some(BackendKind::Local) | None => return Ok(None),
        },
    };
    Ok(Some(chosen))
}

/// `" or `field` in [profiles.NAME] of FILE"` when the profile is the
/// file's, for messages that say where a missing value can be set.
fn where_set(file: &Backends, file_path: &Path, name: &str, field: &str) -> String {
    if file.profiles.contains_key(name) {
        format!(
            " or `{field}` in [profiles.{name}] of {}",
            file_path.display()
        )
    } else {
        String::new()
    }
}

/// The local backend's server and model: what gisclaw starts.
fn local_endpoint(
    choice: &BackendChoice,
    profile: &Profile,
    name: &str,
    file_path: &Path,
) -> Result<(LocalSpec, String), ConfigError> {
    let server_args = profile.server_args.clone().unwrap_or_default();
    if let Some((arg, why)) = server_args
        .iter()
        .find_map(|a| super::local::refused_server_arg(a).map(|why| (a, why)))
    {
        return Err(ConfigError::Missing(format!(
            "`server_args` in [profiles.{name}] of {}: `{arg}` is refused: {why}",
            file_path.display()
        )));
    }
    let spec = LocalSpec {
        server: profile
            .server
            .clone()
            .unwrap_or_else(super::local::default_server),
        gguf: choice
            .gguf
            .clone()
            .or(profile.gguf.clone())
            .unwrap_or_else(super::local::default_gguf),
        threads: profile.threads,
        ctx_size: profile.ctx_size.unwrap_or(super::local::DEFAULT_CTX),
        port: profile.port,
        jinja: matches!(
            profile.tool_mode.unwrap_or(LOCAL_TOOL_MODE),
            ToolMode::Auto | ToolMode::Native
        ),
        server_args,
    };
    let model = choice
        .model
        .clone()
        .or(profile.model.clone())
        .unwrap_or_else(|| spec.model_name());
    Ok((spec, model))
}

/// An OpenAI-compatible server's address, model and key.
fn openai_endpoint(
    choice: &BackendChoice,
    profile: &Profile,
    name: &str,
    file: &Backends,
    file_path: &Path,
) -> Result<(String, String, Option<String>), ConfigError> {
    let base_url = choice
        .base_url
        .clone()
        .or(profile.base_url.clone())
        .or_else(|| env("OPENAI_BASE_URL"))
        .unwrap_or_else(|| OPENAI_DEFAULT_URL.to_string());
    let model = choice.model.clone().or(profile.model.clone()).or_else(|| env("OPENAI_MODEL")).ok_or_else(|| {
        ConfigError::Missing(format!("no model for the OpenAI-compatible backend: pass --model NAME or set OPENAI_MODEL{}", where_set(file, file_path, name, "model")))
    })?;
    let key = match &profile.api_key_env {
        Some(var) => Some(env(var).ok_or_else(|| {
            ConfigError::Missing(format!(
                "{var} is not set (profile `{name}` reads its API key from it)"
            ))
        })?),
        None => profile.api_key.clone().or_else(|| env("OPENAI_API_KEY")),
    };
    if key.is_none() && base_url.starts_with(OPENAI_DEFAULT_URL) {
        return Err(ConfigError::Missing(format!(
            "OPENAI_API_KEY is not set: set it for {OPENAI_DEFAULT_URL}, or set OPENAI_BASE_URL (or --base-url) to another OpenAI-compatible server{}",
            where_set(file, file_path, name, "api_key_env")
        )));
    }
    Ok((base_url, model, key))
}

/// An Ollama server's address and model.
fn ollama_endpoint(
    choice: &BackendChoice,
    profile: &Profile,
    name: &str,
    file: &Backends,
    file_path: &Path,
) -> Result<(String, String), ConfigError> {
    let host = choice
        .base_url
        .clone()
        .or(profile.base_url.clone())
        .or_else(|| env("OLLAMA_HOST"))
        .unwrap_or_else(|| OLLAMA_DEFAULT_URL.to_string());
    let model = choice.model.clone().or(profile.model.clone()).or_else(|| env("OLLAMA_MODEL")).ok_or_else(|| {
        ConfigError::Missing(format!(
            "no model for the Ollama backend: pass --model NAME or set OLLAMA_MODEL{} (for example `ollama pull qwen2.5-coder:14b`, then --model qwen2.5-coder:14b)",
            where_set(file, file_path, name, "model")
        ))
    })?;
    Ok((normalise_ollama_host(&host), model))
}

/// The tool mode a profile will use, in words (for `gisclaw doctor`): its
/// `tool_mode`, else its kind's default, and a server remembered to refuse
/// the action schema.
pub fn tool_mode_line(profile: &Profile) -> String {
    let kind = profile.kind.unwrap_or(BackendKind::Openai);
    let mode = profile.tool_mode.unwrap_or(if kind == BackendKind::Local {
        LOCAL_TOOL_MODE
    } else {
        ToolMode::Auto
    });
    let kind_name = match kind {
        BackendKind::Openai => "openai",
        BackendKind::Ollama => "ollama",
        BackendKind::Local => "local",
    };
    let how = match mode {
        ToolMode::Auto => "native tool calls; text-mode ReAct if the server refuses them",
        ToolMode::Native => "native tool calls only",
        ToolMode::Text => "text-mode ReAct",
        ToolMode::Constrained => "each answer forced to one action by a JSON Schema",
    };
    let refused = match (&profile.base_url, &profile.model) {
        (Some(url), Some(model)) if mode == ToolMode::Constrained => {
            super::constrained::refused_before(&format!("{}|{model}", url.trim_end_matches('/')))
        }
        _ => false,
    };
    if refused {
        format!(
            "{kind_name}, tool mode {}: the server refused the schema before, so text-mode ReAct",
            mode.name()
        )
    } else {
        format!("{kind_name}, tool mode {} ({how})", mode.name())
    }
}

/// How tools reach small local models: their chat templates rarely carry
/// tool calling, and a free-text answer of a small model is often no
/// action at all, so each answer is constrained to one action by a schema
/// llama-server turns into a grammar (a profile may say otherwise).
pub const LOCAL_TOOL_MODE: ToolMode = ToolMode::Constrained;

/// Completion tokens per call for local models, which otherwise can repeat
/// themselves until the context is full.
pub const LOCAL_MAX_TOKENS: u32 = 1024;

/// `OLLAMA_HOST` may be `host`, `host:port` or a URL; a bare host gets
/// `http://` and Ollama's port 11434.
pub fn normalise_ollama_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    if host.contains("://") {
        host.to_string()
    } else if host.contains(':') {
        format!("http://{host}")
    } else {
        format!("http://{host}:11434")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Backends, crate::config::ConfigFileError> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        crate::config::ConfigFile::load(&p).map(|f| f.backends)
    }

    #[test]
    fn a_bad_field_is_named_with_its_line() {
        let err = parse("default = \"x\"\n[profiles.x]\nkind = \"openai\"\nmodle = \"m\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("config.toml:4:") && err.contains("modle"),
            "{err}"
        );
        let err = parse("[profiles.x]\nkind = \"claude\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains(":2:") && err.contains("claude"), "{err}");
    }

    #[test]
    fn a_profile_resolves_with_overrides_and_hides_its_key() {
        let file = parse(
            "default = \"local\"\n[profiles.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1/\"\nmodel = \"m1\"\napi_key = \"sk-secret\"\nextra_body = { reasoning_effort = \"low\" }\n",
        )
        .unwrap();
        let path = Path::new("config.toml");
        let live = resolve(&BackendChoice::default(), &file, path)
            .unwrap()
            .unwrap();
        assert_eq!(live.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(live.model, "m1");
        assert_eq!(live.extra_body["reasoning_effort"], "low");
        assert_eq!(live.top_p, None);
        let sampled =
            parse("default = \"g\"\n[profiles.g]\nkind = \"ollama\"\nmodel = \"m\"\ntop_p = 0.9\n")
                .unwrap();
        let live_p = resolve(&BackendChoice::default(), &sampled, path)
            .unwrap()
            .unwrap();
        assert_eq!(live_p.top_p, Some(0.9));
        let recorded = live_p.provenance("g".into()).sampler.other["top_p"]
            .as_f64()
            .unwrap();
        assert!((recorded - 0.9).abs() < 1e-6, "{recorded}");
        assert!(!format!("{live:?}").contains("sk-secret"));
        let choice = BackendChoice {
            model: Some("m2".into()),
            ..BackendChoice::default()
        };
        assert_eq!(resolve(&choice, &file, path).unwrap().unwrap().model, "m2");
        let choice = BackendChoice {
            backend: Some("nope".into()),
            ..BackendChoice::default()
        };
        let err = resolve(&choice, &file, path).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("local"), "{err}");
    }

    #[test]
    fn a_local_profiles_server_args_are_kept_and_host_or_port_refused() {
        let path = Path::new("config.toml");
        let choice = BackendChoice {
            backend: Some("gpu".into()),
            ..BackendChoice::default()
        };
        let file =
            parse("[profiles.gpu]\nkind = \"local\"\nserver_args = [\"-ngl\", \"99\"]\n").unwrap();
        let spec = resolve(&choice, &file, path)
            .unwrap()
            .unwrap()
            .local
            .unwrap();
        assert_eq!(spec.server_args, ["-ngl", "99"]);
        let file =
            parse("[profiles.gpu]\nkind = \"local\"\nserver_args = [\"--host\", \"0.0.0.0\"]\n")
                .unwrap();
        let err = resolve(&choice, &file, path).unwrap_err().to_string();
        assert!(
            err.contains("server_args") && err.contains("--host") && err.contains("127.0.0.1"),
            "{err}"
        );
    }

    #[test]
    fn a_local_profile_resolves_to_a_server_spec_in_text_mode() {
        let file = parse("[profiles.tiny]\nkind = \"local\"\ngguf = \"/models/SmolLM2-135M.Q4_1.gguf\"\nthreads = 1\nctx_size = 4096\nport = 18080\n").unwrap();
        let path = Path::new("config.toml");
        let choice = BackendChoice {
            backend: Some("tiny".into()),
            ..BackendChoice::default()
        };
        let live = resolve(&choice, &file, path).unwrap().unwrap();
        assert_eq!(live.kind, BackendKind::Local);
        assert_eq!(live.model, "SmolLM2-135M.Q4_1");
        assert_eq!(live.tool_mode, ToolMode::Constrained);
        assert_eq!(live.max_tokens, Some(LOCAL_MAX_TOKENS));
        assert_eq!(live.price.map(|p| p.input + p.output), Some(0.0));
        let spec = live.local.unwrap();
        assert_eq!(
            (spec.threads, spec.ctx_size, spec.port, spec.jinja),
            (Some(1), 4096, Some(18080), false)
        );
        // --gguf overrides the profile; `local` works without a profile.
        let choice = BackendChoice {
            backend: Some("local".into()),
            gguf: Some("/m/other.gguf".into()),
            ..BackendChoice::default()
        };
        let live = resolve(&choice, &Backends::default(), path)
            .unwrap()
            .unwrap();
        assert_eq!(
            (live.model.as_str(), live.local.unwrap().gguf),
            ("other", PathBuf::from("/m/other.gguf"))
        );
        // A GGUF is meaningless for other backends.
        let choice = BackendChoice {
            backend: Some("ollama".into()),
            gguf: Some("/m/x.gguf".into()),
            ..BackendChoice::default()
        };
        assert!(resolve(&choice, &file, path)
            .unwrap_err()
            .to_string()
            .contains("--gguf needs the local backend"));
    }

    #[test]
    fn ollama_hosts_are_normalised() {
        assert_eq!(normalise_ollama_host("127.0.0.1"), "http://127.0.0.1:11434");
        assert_eq!(normalise_ollama_host("0.0.0.0:1234"), "http://0.0.0.0:1234");
        assert_eq!(
            normalise_ollama_host("https://ollama.example/"),
            "https://ollama.example"
        );
        assert_eq!(normalise_ollama_host("http://h:80"), "http://h:80");
    }
}
