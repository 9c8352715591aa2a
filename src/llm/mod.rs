//! The one seam between the agent and any language model.
//!
//! Messages are the OpenAI chat format (the lingua franca of servers), so a
//! transcript line and a replay line are the same JSON. Backends implement
//! [`ChatBackend`]; [`adapt`] turns whatever a model sent into clean tool
//! calls (think-tag stripping, fenced-code fallback, JSON repair).

pub mod adapt;
pub mod replay;

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// One chat message (OpenAI format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}

impl Message {
    /// A message with text only.
    pub fn text(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    /// A tool result answering `call_id`.
    pub fn tool_result(call_id: &str, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.to_string()),
        }
    }
}

/// One tool call (OpenAI format; `arguments` is a JSON string).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

fn function_kind() -> String {
    "function".into()
}

/// The function part of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// True when counted by gisclaw rather than reported by the server.
    pub estimated: bool,
}

/// The model's answer.
#[derive(Debug, Clone)]
pub struct ChatResponse {
    /// The assistant message.
    pub message: Message,
    /// Token usage.
    pub usage: Usage,
}

/// Why a chat call failed for good.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// A replay file has no more assistant messages.
    #[error("the replay has no more assistant messages (after {0})")]
    ReplayExhausted(usize),
    /// A replay line is not an assistant message.
    #[error("{file}:{line}: {message}")]
    BadReplay {
        /// The replay file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// A language model that can chat with tools.
pub trait ChatBackend: Send {
    /// A short description for logs and run.json (never a secret).
    fn describe(&self) -> String;
    /// Whether this backend replays a recording (never shown as live).
    fn is_replay(&self) -> bool {
        false
    }
    /// Sends the conversation and returns the model's next message.
    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError>;
}

/// A rough token count for text (about four characters a token), used when
/// the server reports none.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}
