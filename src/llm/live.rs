//! What the live backends (OpenAI-compatible, Ollama) share: their HTTP
//! runtime and client, the conversation as sent (text mode or native), the
//! retry loop and its final error, the switch to text mode when tools are
//! refused, usage (the server's or tiktoken's), and the notes a response
//! carries to the transcript.

use std::future::Future;
use std::time::Duration;

use super::config::{LiveConfig, ToolMode};
use super::retry::{with_retries, Failure};
use super::{textmode, tokens, ChatResponse, LlmError, Message, ToolSpec, Usage};

/// The state every live backend holds besides its protocol client.
pub(crate) struct LiveCore {
    /// The resolved backend.
    pub config: LiveConfig,
    /// The runtime the blocking `chat` drives requests on.
    pub runtime: tokio::runtime::Runtime,
    /// True once the run uses the text protocol (configured, or after the
    /// server refused `tools` or the action schema).
    pub text_mode: bool,
    /// True while each answer is constrained to one action by a schema
    /// ([`super::constrained`]).
    pub constrained: bool,
    /// Actions read from constrained answers (their call ids).
    actions: usize,
    /// Notes for the transcript (mode switches, retries).
    pub notes: Vec<String>,
    /// Whether the model sees images, once known (see `sees_images`).
    pub sees_images: Option<bool>,
}

impl LiveCore {
    /// The core and an HTTP client with the config's timeouts.
    pub fn new(config: LiveConfig) -> Result<(LiveCore, reqwest::Client), LlmError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LlmError::Backend(format!("cannot start the HTTP runtime: {e}")))?;
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(Duration::from_secs(10).min(config.timeout))
            .build()
            .map_err(|e| LlmError::Backend(format!("cannot build the HTTP client: {e}")))?;
        // A server that refused the action schema before is asked in text
        // mode from the start (remembered per server and model).
        let refused = config.tool_mode == ToolMode::Constrained
            && super::constrained::refused_before(&server_key(&config));
        let mut notes = Vec::new();
        if refused {
            notes.push(format!(
                "{} refused the action schema before; text-mode ReAct",
                config.base_url
            ));
        }
        let core = LiveCore {
            text_mode: config.tool_mode == ToolMode::Text || refused,
            constrained: config.tool_mode == ToolMode::Constrained && !refused,
            actions: 0,
            config,
            runtime,
            notes,
            sees_images: None,
        };
        Ok((core, http))
    }

    /// The profile's vision setting and the key its probe is remembered
    /// under (server and model).
    pub fn vision_setting(&self) -> (super::vision::Vision, String) {
        (
            self.config.vision,
            format!("{}|{}", self.config.base_url, self.config.model),
        )
    }

    /// The conversation as sent: rewritten into the text protocol in text
    /// mode, and consecutive user messages made one (strict chat templates
    /// refuse two in a row; a compaction note, a nudge or a text-mode
    /// observation can stand beside another).
    pub fn wire(&self, messages: &[Message], tools: &[ToolSpec]) -> Vec<Message> {
        let wire = if self.constrained && !tools.is_empty() {
            super::constrained::to_constrained(messages, tools)
        } else if self.text_mode {
            textmode::to_text_mode(messages, tools)
        } else {
            messages.to_vec()
        };
        merge_consecutive_users(wire)
    }

    /// The tools offered natively (none in text or constrained mode).
    pub fn native_tools<'t>(&self, tools: &'t [ToolSpec]) -> &'t [ToolSpec] {
        if self.text_mode || self.constrained {
            &[]
        } else {
            tools
        }
    }

    /// The action schema a constrained request for the next answer of
    /// `messages` carries (`None`: not constrained, or no tools offered).
    pub fn action_schema(
        &self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Option<serde_json::Value> {
        (self.constrained && !tools.is_empty()).then(|| {
            super::constrained::next_action_schema(
                messages,
                tools,
                super::constrained::string_chars(self.config.max_tokens),
            )
        })
    }

    /// A constrained answer read into its tool call; an answer that is not
    /// an action is kept as text, with a note saying why.
    pub fn read_action(&mut self, message: Message, tools: &[ToolSpec]) -> Message {
        if !self.constrained || tools.is_empty() || !message.tool_calls.is_empty() {
            return message;
        }
        let content = message.content.clone().unwrap_or_default();
        self.actions += 1;
        match super::constrained::parse(&content, tools, self.actions) {
            Ok(action) => action,
            Err(why) => {
                self.notes.push(why);
                message
            }
        }
    }

    /// Switches the run to text mode when `err` is a first-attempt refusal
    /// of the action schema, and remembers it for this server and model.
    /// Returns whether it switched.
    pub fn fall_back_if_schema_refused(&mut self, err: &LlmError) -> bool {
        let refused = match err {
            LlmError::Unavailable {
                attempts: 1,
                message,
                ..
            } => super::constrained::refuses_schema(&message.to_ascii_lowercase()),
            _ => false,
        };
        if !(refused && self.constrained) {
            return false;
        }
        self.constrained = false;
        self.text_mode = true;
        super::constrained::remember_refusal(&server_key(&self.config));
        let line = format!(
            "{} refused the action schema ({err}); switched to text-mode ReAct for this server",
            self.config.base_url
        );
        tracing::warn!("{line}");
        self.notes.push(line);
        true
    }

    /// Runs `attempt` under the config's retry policy, noting each retry;
    /// the final failure names the server (with the key redacted).
    pub fn retrying<T, F, Fut>(&mut self, attempt: F) -> Result<(T, u32), LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let notes = &mut self.notes;
        self.runtime
            .block_on(with_retries(&self.config.retry, attempt, |n, f, wait| {
                tracing::warn!(
                    "model call attempt {n} failed ({}); retrying in {:.1} s",
                    f.message,
                    wait.as_secs_f64()
                );
                notes.push(format!("attempt {n} failed: {}", f.message));
            }))
            .map_err(|g| {
                let message = redact(&g.last.message, self.config.api_key.as_deref());
                if is_context_overflow(&message) {
                    LlmError::ContextFull(message)
                } else {
                    LlmError::Unavailable {
                        backend: self.config.base_url.clone(),
                        attempts: g.attempts,
                        message,
                    }
                }
            })
    }

    /// Switches the run to text mode when `err` is a first-attempt refusal
    /// whose lower-cased message `refuses_tools` recognises (only with
    /// `tool_mode = auto`). Returns whether it switched.
    pub fn switch_to_text_if(
        &mut self,
        err: &LlmError,
        refuses_tools: impl Fn(&str) -> bool,
    ) -> bool {
        let refused = match err {
            LlmError::Unavailable {
                attempts: 1,
                message,
                ..
            } => refuses_tools(&message.to_ascii_lowercase()),
            _ => false,
        };
        if refused && !self.text_mode && self.config.tool_mode == ToolMode::Auto {
            self.text_mode = true;
            self.notes.push(format!(
                "native tool calling was refused ({err}); switched to text-mode ReAct"
            ));
            return true;
        }
        false
    }

    /// The server's counts when it gave them, else tiktoken's.
    pub fn usage(
        &self,
        server: Option<(u64, u64)>,
        messages: &[Message],
        tools: &[ToolSpec],
        reply: &Message,
    ) -> Usage {
        match server {
            Some((prompt_tokens, completion_tokens)) => Usage {
                prompt_tokens,
                completion_tokens,
                estimated: false,
                prefix_tokens: 0,
            },
            None => Usage {
                prompt_tokens: tokens::count_prompt(messages, self.native_tools(tools)),
                completion_tokens: tokens::count_message(reply),
                estimated: true,
                prefix_tokens: 0,
            },
        }
    }

    /// A response carrying the notes gathered since the last one.
    pub fn respond(
        &mut self,
        message: Message,
        usage: Usage,
        finish_reason: Option<String>,
        retries: u32,
    ) -> ChatResponse {
        ChatResponse {
            message,
            usage,
            finish_reason,
            retries,
            notes: std::mem::take(&mut self.notes),
            logprob: None,
            more: Vec::new(),
        }
    }

    /// Notes that a stream failed before the plain request that replaces it.
    pub fn note_failed_stream(&mut self) {
        self.notes
            .push("the stream failed; asked again without streaming".into());
    }
}

/// The key a server's answers are remembered under: its URL and model.
fn server_key(config: &LiveConfig) -> String {
    format!("{}|{}", config.base_url, config.model)
}

/// `messages` with each run of user messages made one (texts joined by a
/// blank line, images kept in order).
pub(crate) fn merge_consecutive_users(messages: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    for m in messages {
        match out.last_mut() {
            Some(last) if last.role == super::Role::User && m.role == super::Role::User => {
                let text = m.content.unwrap_or_default();
                let joined = match last.content.take().filter(|t| !t.is_empty()) {
                    Some(before) => format!("{before}\n\n{text}"),
                    None => text,
                };
                last.content = Some(joined);
                last.images.extend(m.images);
            }
            _ => out.push(m),
        }
    }
    out
}

/// Whether a server's refusal says the conversation is longer than the
/// model's context window (llama.cpp, OpenAI, vLLM, Ollama wordings).
pub(crate) fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "exceeds the available context size",
        "exceed_context_size",
        "context_length_exceeded",
        "maximum context length",
        "context window",
    ]
    .iter()
    .any(|p| m.contains(p))
}

/// Removes the API key from text that may echo it.
pub(crate) fn redact(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(s) if s.len() >= 4 => text.replace(s, "***"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_user_messages_are_sent_as_one() {
        use crate::llm::Role;
        let wire = merge_consecutive_users(vec![
            Message::text(Role::System, "s"),
            Message::text(Role::User, "task"),
            Message::text(Role::User, "note"),
            Message::text(Role::Assistant, "a"),
            Message::tool_result("c", "obs"),
            Message {
                images: vec!["png".into()],
                ..Message::text(Role::User, "figure")
            },
            Message::text(Role::User, "nudge"),
        ]);
        let roles: Vec<Role> = wire.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::System,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::User
            ]
        );
        assert_eq!(wire[1].content.as_deref(), Some("task\n\nnote"));
        assert_eq!(wire[4].content.as_deref(), Some("figure\n\nnudge"));
        assert_eq!(wire[4].images, ["png"]);
    }

    #[test]
    fn keys_are_redacted() {
        assert_eq!(
            redact("bad key sk-abcdef", Some("sk-abcdef")),
            "bad key ***"
        );
        assert_eq!(redact("no key", None), "no key");
    }
}
