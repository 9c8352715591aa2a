//! The replay backend: plays back a JSONL file, one assistant message per
//! line in OpenAI chat format, through the real loop, tools and sandbox.
//!
//! Line format (stable; other tools rely on it):
//! `{"role":"assistant","content":"…","tool_calls":[{"type":"function","function":{"name":"execute_python","arguments":"{\"code\":\"…\"}"}}]}`
//! Blank lines and lines starting with `//` are skipped.

use std::path::{Path, PathBuf};

use super::{tokens, ChatBackend, ChatResponse, LlmError, Message, Role, ToolSpec, Usage};

/// Plays back recorded assistant messages in order.
pub struct ReplayBackend {
    file: PathBuf,
    messages: Vec<Message>,
    next: usize,
}

impl ReplayBackend {
    /// Reads and checks every line up front, so a bad file fails before the
    /// run starts.
    pub fn open(file: &Path) -> Result<ReplayBackend, LlmError> {
        let bad = |line: Option<usize>, message: String| LlmError::BadReplay {
            file: file.display().to_string(),
            line,
            message,
        };
        let text =
            std::fs::read_to_string(file).map_err(|e| bad(None, format!("cannot read: {e}")))?;
        let mut messages = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with("//") {
                continue;
            }
            let msg: Message = serde_json::from_str(trimmed)
                .map_err(|e| bad(Some(i + 1), format!("not a chat message: {e}")))?;
            if msg.role != Role::Assistant {
                return Err(bad(
                    Some(i + 1),
                    format!("role must be \"assistant\", found {:?}", msg.role),
                ));
            }
            messages.push(msg);
        }
        if messages.is_empty() {
            return Err(bad(
                None,
                "holds no assistant message (one JSON message per line)".into(),
            ));
        }
        Ok(ReplayBackend {
            file: file.to_path_buf(),
            messages,
            next: 0,
        })
    }

    /// Plays back `messages` (assistant messages) built in memory, e.g. a gold
    /// solution's cells; `label` names them in `describe()`.
    pub fn from_messages(label: &str, messages: Vec<Message>) -> ReplayBackend {
        ReplayBackend {
            file: PathBuf::from(label),
            messages,
            next: 0,
        }
    }

    /// This replay behind a context window of `tokens` (see
    /// [`WindowedReplay`]).
    pub fn with_window(self, tokens: u64) -> WindowedReplay {
        WindowedReplay::new(Box::new(self), tokens)
    }

    /// The messages it plays back, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// How many messages the file holds.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the file holds no message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

impl ChatBackend for ReplayBackend {
    fn describe(&self) -> String {
        format!("replay of {}", self.file.display())
    }

    fn is_replay(&self) -> bool {
        true
    }

    fn price(&self) -> Option<tokens::Price> {
        Some(tokens::Price::new(0.0, 0.0))
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        let prompt_tokens = tokens::count_prompt(messages, tools);
        let message = self
            .messages
            .get(self.next)
            .cloned()
            .ok_or(LlmError::ReplayExhausted(self.next))?;
        self.next += 1;
        let usage = Usage {
            prompt_tokens,
            completion_tokens: tokens::count_message(&message),
            estimated: true,
            prefix_tokens: 0,
        };
        Ok(ChatResponse {
            message,
            usage,
            ..ChatResponse::default()
        })
    }
}

/// A replay that honours a context window (`--context-window`): a request
/// longer than the window (tiktoken's count) is refused in llama-server's
/// words, without taking a recorded message, so that tests and `make test`
/// exercise compaction without a model.
pub struct WindowedReplay {
    inner: Box<dyn ChatBackend>,
    window: u64,
}

impl WindowedReplay {
    /// `inner` behind a window of `window` tokens.
    pub fn new(inner: Box<dyn ChatBackend>, window: u64) -> WindowedReplay {
        WindowedReplay { inner, window }
    }
}

impl ChatBackend for WindowedReplay {
    fn describe(&self) -> String {
        format!("{} (window {} tokens)", self.inner.describe(), self.window)
    }

    fn is_replay(&self) -> bool {
        self.inner.is_replay()
    }

    fn price(&self) -> Option<tokens::Price> {
        self.inner.price()
    }

    fn context_window(&mut self) -> Option<super::window::ContextWindow> {
        Some(super::window::ContextWindow::new(
            self.window,
            "--context-window",
        ))
    }

    fn provenance(&self) -> crate::llm::provenance::ModelProvenance {
        crate::llm::provenance::ModelProvenance {
            backend: self.describe(),
            context_size: Some(self.window),
            ..self.inner.provenance()
        }
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        let prompt_tokens = tokens::count_prompt(messages, tools);
        if prompt_tokens > self.window {
            // llama-server's answer to an over-long request, word for word.
            return Err(LlmError::ContextFull(format!(
                "request ({prompt_tokens} tokens) exceeds the available context size ({} tokens), try increasing it",
                self.window
            )));
        }
        self.inner.chat(messages, tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plays_lines_in_order_then_reports_exhaustion() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.jsonl");
        std::fs::write(
            &file,
            "// a comment\n{\"role\":\"assistant\",\"content\":\"hi\",\"tool_calls\":[{\"type\":\"function\",\"function\":{\"name\":\"execute_python\",\"arguments\":\"{\\\"code\\\":\\\"1\\\"}\"}}]}\n\n{\"role\":\"assistant\",\"content\":\"bye\"}\n",
        )
        .unwrap();
        let mut r = ReplayBackend::open(&file).unwrap();
        assert_eq!(r.len(), 2);
        let first = r.chat(&[], &[]).unwrap().message;
        assert_eq!(first.tool_calls[0].function.name, "execute_python");
        assert_eq!(first.tool_calls[0].function.arguments, "{\"code\":\"1\"}");
        assert_eq!(
            r.chat(&[], &[]).unwrap().message.content.as_deref(),
            Some("bye")
        );
        assert!(matches!(
            r.chat(&[], &[]),
            Err(LlmError::ReplayExhausted(2))
        ));
    }

    #[test]
    fn a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.jsonl");
        std::fs::write(
            &file,
            "{\"role\":\"assistant\",\"content\":\"ok\"}\n{\"role\":\"user\",\"content\":\"no\"}\n",
        )
        .unwrap();
        let err = ReplayBackend::open(&file).err().unwrap().to_string();
        assert!(
            err.contains("r.jsonl:2:") && err.contains("assistant"),
            "{err}"
        );
        // An empty replay is a usage error too (exit 2), not a failed run.
        std::fs::write(&file, "\n// nothing\n").unwrap();
        let empty = ReplayBackend::open(&file).err().unwrap().to_string();
        assert!(empty.contains("no assistant message"), "{empty}");
    }
}
