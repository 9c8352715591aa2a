//! The one seam between the agent and any language model.
//!
//! Messages are the OpenAI chat format (the lingua franca of servers), so a
//! transcript line and a replay line are the same JSON. Backends implement
//! [`ChatBackend`]; [`adapt`] turns whatever a model sent into clean tool
//! calls (think-tag stripping, fenced-code fallback, JSON repair).

pub mod adapt;
pub mod config;
pub mod constrained;
pub mod embeddings;
mod live;
pub mod local;
pub mod ollama;
pub mod openai;
pub mod probe;
pub mod provenance;
pub mod replay;
pub mod retry;
pub mod textmode;
pub mod tokens;
pub mod vision;
pub mod window;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The name of gisclaw's main tool, the one that runs a cell of Python in
/// the sandbox (every other module names it through this).
pub const EXECUTE_PYTHON: &str = "execute_python";

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions from gisclaw.
    System,
    /// The task or the user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    /// Its name on the wire (`system`, `user`, `assistant`, `tool`), as it
    /// serialises.
    pub fn name(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One chat message (OpenAI format).
#[derive(Debug, Clone, PartialEq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its text (`null` for an assistant message with only tool calls).
    #[serde(default)]
    pub content: Option<String>,
    /// Tool calls the assistant made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// PNG images shown with a user message, base64-encoded (for vision
    /// models; sent as `image_url` parts to OpenAI-compatible servers and
    /// as `images` to Ollama).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

impl Message {
    /// A hash of everything the message says (role, text, tool calls, the
    /// call it answers, images): equal messages have equal fingerprints.
    /// Keys the token-count cache and finds the prefix a request repeats.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = fingerprint_hasher();
        self.hash(&mut h);
        h.finish()
    }
}

impl Default for Message {
    fn default() -> Self {
        Message {
            role: Role::Assistant,
            content: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            images: Vec::new(),
        }
    }
}

impl Message {
    /// A message with text only.
    pub fn text(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
            images: Vec::new(),
        }
    }

    /// A tool result answering `call_id`.
    pub fn tool_result(call_id: &str, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.to_string()),
            images: Vec::new(),
        }
    }
}

/// One tool call (OpenAI format; `arguments` is a JSON string).
#[derive(Debug, Clone, PartialEq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The call's id (assigned by gisclaw when the model gave none).
    #[serde(default)]
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// What to call.
    pub function: FunctionCall,
}

impl ToolCall {
    /// A call of function `name` with `arguments` (JSON text).
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> ToolCall {
        ToolCall {
            id: id.into(),
            kind: function_kind(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

fn function_kind() -> String {
    "function".into()
}

/// The function part of a tool call.
#[derive(Debug, Clone, PartialEq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct FunctionCall {
    /// Tool name, e.g. `execute_python`.
    pub name: String,
    /// Arguments as JSON text (some servers send an object; both are read).
    #[serde(deserialize_with = "arguments_as_text")]
    pub arguments: String,
}

/// Accepts `arguments` as a JSON string or as an inline object.
fn arguments_as_text<'de, D: serde::Deserializer<'de>>(de: D) -> Result<String, D::Error> {
    let value = serde_json::Value::deserialize(de)?;
    Ok(match value {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    })
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// A hash of the whole spec (name, description, schema), without
    /// serialising it: the key of per-run caches (token counts, the prefix
    /// log), which see the same tools at every round.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = fingerprint_hasher();
        self.name.hash(&mut h);
        self.description.hash(&mut h);
        hash_value(&self.parameters, &mut h);
        h.finish()
    }
}

/// The hasher of fingerprints: foldhash with a fixed seed, several times
/// faster than std's SipHash on long text (a request's messages are
/// fingerprinted at every round; SipHash was most of a replayed round's
/// own time). Fingerprints key in-process caches only, never a file.
fn fingerprint_hasher() -> impl std::hash::Hasher {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::default().build_hasher()
}

/// Feeds a JSON value to `h`, tagged by kind so that no two values collide
/// by construction (`"1"` and `1`, `[]` and `{}`).
fn hash_value(v: &serde_json::Value, h: &mut impl std::hash::Hasher) {
    use serde_json::Value;
    use std::hash::Hash;
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                hash_value(item, h);
            }
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(h);
            for (k, item) in map {
                k.hash(h);
                hash_value(item, h);
            }
        }
    }
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// True when counted by gisclaw rather than reported by the server.
    pub estimated: bool,
    /// Prompt tokens that repeat an earlier request of the run word for
    /// word at the start of the prompt (same tools, its messages a prefix
    /// of this one's): what a provider's prefix cache could serve at most
    /// (it also needs the cache to still hold them, and a minimum length).
    #[serde(default)]
    pub prefix_tokens: u64,
}

/// The model's answer.
#[derive(Debug, Clone, Default)]
pub struct ChatResponse {
    /// The assistant message.
    pub message: Message,
    /// Token usage.
    pub usage: Usage,
    /// The server's reason for stopping (`stop`, `length`, `tool_calls`…).
    pub finish_reason: Option<String>,
    /// Failed attempts before this answer.
    pub retries: u32,
    /// What the backend had to do to get it (retries, mode switches), for
    /// the transcript.
    pub notes: Vec<String>,
    /// The answer's mean log-probability per token, when log-probabilities
    /// were asked for ([`ChatBackend::want_logprobs`]) and the server gave
    /// them.
    pub logprob: Option<f64>,
    /// Further answers to the same request, with their mean log-probability
    /// (when [`ChatBackend::want_choices`] asked for several); `usage`
    /// covers them all.
    pub more: Vec<(Message, Option<f64>)>,
}

/// A sampling value as JSON, as it was written (`0.6`, not the `f32`'s
/// widening `0.6000000238418579`).
pub(crate) fn decimal(x: f32) -> serde_json::Value {
    x.to_string()
        .parse::<f64>()
        .map_or(serde_json::Value::Null, serde_json::Value::from)
}

/// Why a chat call failed for good.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// A replay file has no more assistant messages.
    #[error("the replay has no more assistant messages (after {0})")]
    ReplayExhausted(usize),
    /// The call was abandoned at the user's request (Ctrl-C in chat).
    #[error("the model call was cancelled")]
    Cancelled,
    /// The server could not be reached or kept failing, after retries.
    #[error("the model server {backend} failed after {attempts} attempt(s): {message}")]
    Unavailable {
        /// The server's URL.
        backend: String,
        /// Attempts made.
        attempts: u32,
        /// The last failure.
        message: String,
    },
    /// The backend cannot work (bad answer shape, local set-up failure).
    #[error("{0}")]
    Backend(String),
    /// The conversation no longer fits the model's context window.
    #[error("the conversation no longer fits the model's context window: {0}")]
    ContextFull(String),
    /// A replay file that cannot be played (a line that is not an assistant
    /// message, or no message at all).
    #[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    BadReplay {
        /// The replay file.
        file: String,
        /// 1-based line, when one line is at fault.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

/// Opens the live backend that `config` names.
/// A local config not started yet starts its server here, from the calling
/// thread (which must outlive it; see [`local`]).
pub fn open_live(config: config::LiveConfig) -> Result<Box<dyn ChatBackend>, LlmError> {
    Ok(match config.kind {
        config::BackendKind::Openai => match config.server.clone() {
            Some(server) => Box::new(local::LocalBackend::new(
                Box::new(openai::OpenAiBackend::new(config)?),
                server,
            )),
            None => Box::new(openai::OpenAiBackend::new(config)?),
        },
        config::BackendKind::Ollama => Box::new(ollama::OllamaBackend::new(config)?),
        config::BackendKind::Local => {
            let started = config
                .start_local(&|_| {})
                .map_err(|e| LlmError::Backend(e.to_string()))?;
            return open_live(started);
        }
    })
}

/// A language model that can chat with tools.
pub trait ChatBackend: Send {
    /// A short description for logs and run.json (never a secret).
    fn describe(&self) -> String;
    /// Whether this backend replays a recording (never shown as live).
    fn is_replay(&self) -> bool {
        false
    }
    /// The model's name, when there is one.
    fn model(&self) -> Option<String> {
        None
    }
    /// Its price for cost estimates (`None`: unknown).
    fn price(&self) -> Option<tokens::Price> {
        None
    }
    /// CPU seconds the model's own server has used so far, for a local
    /// server gisclaw started (`None` for remote models and replays): a
    /// run's local compute is the difference between its end and start.
    fn cpu_seconds(&self) -> Option<f64> {
        None
    }
    /// What a run's provenance records of this model: name, server, local
    /// model file, context size, sampler (never a secret). Only what is
    /// known already: it asks no server.
    fn provenance(&self) -> crate::llm::provenance::ModelProvenance {
        crate::llm::provenance::ModelProvenance {
            name: self.model(),
            backend: self.describe(),
            replay: self.is_replay(),
            ..Default::default()
        }
    }
    /// Asks for the answers' token log-probabilities from now on (`on`) or
    /// not; false when this backend cannot give them.
    fn want_logprobs(&mut self, on: bool) -> bool {
        let _ = on;
        false
    }
    /// Asks for `n` answers per request from now on (the server's `n`);
    /// false when this backend gives one answer per request whatever is
    /// asked (then the caller asks again).
    fn want_choices(&mut self, n: usize) -> bool {
        let _ = n;
        false
    }
    /// Whether the model sees images (vision feedback shows it the figures
    /// a cell writes). Asked only when there is a figure to show; `auto`
    /// profiles probe once (see [`vision::probe`]).
    fn sees_images(&mut self) -> bool {
        false
    }
    /// The model's context window, where it can be learnt (live backends
    /// ask their server once and remember; see [`window`]).
    fn context_window(&mut self) -> Option<window::ContextWindow> {
        None
    }
    /// Sends the conversation and returns the model's next message.
    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError>;
    /// Like [`ChatBackend::chat`], giving the answer's text to `on_text` as
    /// it arrives (backends without streaming give it at the end).
    fn chat_streaming(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError> {
        chat_then_text(self, messages, tools, on_text)
    }
}

/// A plain `chat` whose whole text is then given to `on_text`: streaming for
/// backends without it, and the fallback after a failed stream.
pub fn chat_then_text<B: ChatBackend + ?Sized>(
    backend: &mut B,
    messages: &[Message],
    tools: &[ToolSpec],
    on_text: &mut dyn FnMut(&str),
) -> Result<ChatResponse, LlmError> {
    let response = backend.chat(messages, tools)?;
    if let Some(text) = &response.message.content {
        on_text(text);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::{Role, ToolSpec};
    use serde_json::json;

    #[test]
    fn a_roles_name_is_its_wire_name() {
        for role in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            assert_eq!(json!(role), json!(role.name()));
        }
    }

    #[test]
    fn a_tool_fingerprint_follows_every_part_of_the_spec() {
        let spec = |name: &str, description: &str, parameters| ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        };
        let base = spec(
            "t",
            "d",
            json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
        );
        assert_eq!(base.fingerprint(), base.clone().fingerprint());
        for other in [
            spec("u", "d", base.parameters.clone()),
            spec("t", "e", base.parameters.clone()),
            spec(
                "t",
                "d",
                json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            ),
            spec(
                "t",
                "d",
                json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}}),
            ),
            spec(
                "t",
                "d",
                json!({"type": "object", "properties": {"a": {"type": 1}}}),
            ),
        ] {
            assert_ne!(base.fingerprint(), other.fingerprint(), "{other:?}");
        }
        // Kinds are tagged: a string "1" is not the number 1.
        assert_ne!(
            spec("t", "d", json!(["1"])).fingerprint(),
            spec("t", "d", json!([1])).fingerprint()
        );
    }
}
