//! The Ollama backend (`ollama-rs`, native `/api/chat` with tools).
//!
//! Ollama truncates prompts silently at its default context window, so
//! every request sets `num_ctx` (16,384 unless configured). Models without
//! tool support ("does not support tools") switch the run to text-mode
//! ReAct when `tool_mode = auto`. A missing model says `ollama pull NAME`.

use futures_util::StreamExt;
use ollama_rs::error::OllamaError;
use ollama_rs::generation::chat::request::ChatMessageRequest;
use ollama_rs::generation::chat::{ChatMessage, ChatMessageResponse, MessageRole};
use ollama_rs::generation::parameters::{FormatType, JsonStructure};
use ollama_rs::generation::tools::{
    ToolCall as OllamaCall, ToolCallFunction, ToolFunctionInfo, ToolInfo, ToolType,
};
use ollama_rs::models::ModelOptions;
use ollama_rs::Ollama;

use super::config::LiveConfig;
use super::live::LiveCore;
use super::retry::Failure;
use super::{
    chat_then_text, tokens, ChatBackend, ChatResponse, LlmError, Message, Role, ToolCall, ToolSpec,
};

/// A model served by Ollama.
pub struct OllamaBackend {
    core: LiveCore,
    client: Ollama,
}

impl OllamaBackend {
    /// A backend for `config`; no request is made yet.
    pub fn new(config: LiveConfig) -> Result<OllamaBackend, LlmError> {
        let (core, http) = LiveCore::new(config)?;
        let client = Ollama::builder()
            .url(core.config.base_url.as_str())
            .reqwest_client(http)
            .build();
        Ok(OllamaBackend { core, client })
    }

    fn request(&self, messages: &[Message], tools: &[ToolSpec]) -> ChatMessageRequest {
        let config = &self.core.config;
        let wire = self.core.wire(messages, tools);
        let mut options = ModelOptions::default().num_ctx(config.num_ctx);
        if let Some(t) = config.temperature {
            options = options.temperature(t);
        }
        if let Some(p) = config.top_p {
            options = options.top_p(p);
        }
        if let Some(m) = config.max_tokens {
            options = options.num_predict(m as i32);
        }
        let mut request =
            ChatMessageRequest::new(config.model.clone(), wire.iter().map(to_ollama).collect())
                .options(options);
        let native = self.core.native_tools(tools);
        if !native.is_empty() {
            request = request.tools(native.iter().filter_map(tool_info).collect());
        }
        if let Some(schema) = self
            .core
            .action_schema(messages, tools)
            .and_then(|s| schemars::Schema::try_from(s).ok())
        {
            request = request.format(FormatType::StructuredJson(Box::new(
                JsonStructure::new_for_schema(schema),
            )));
        }
        if let Some(think) = config.think {
            request = request.think(think);
        }
        request
    }

    fn call(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<(ChatMessageResponse, u32), LlmError> {
        let request = self.request(messages, tools);
        let client = &self.client;
        let model = self.core.config.model.clone();
        self.core.retrying(|| {
            let request = request.clone();
            let model = model.clone();
            async move {
                client
                    .send_chat_messages(request)
                    .await
                    .map_err(|e| classify(e, &model))
            }
        })
    }

    fn response_from(
        &mut self,
        r: ChatMessageResponse,
        retries: u32,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> ChatResponse {
        let message = from_ollama(r.message);
        let message = self.core.read_action(message, tools);
        let server = r
            .final_data
            .as_ref()
            .filter(|d| d.prompt_eval_count > 0 || d.eval_count > 0)
            .map(|d| (d.prompt_eval_count, d.eval_count));
        let usage = self.core.usage(server, messages, tools, &message);
        self.core
            .respond(message, usage, r.done.then(|| "stop".to_string()), retries)
    }

    fn call_streaming(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Option<ChatMessageResponse> {
        let request = self.request(messages, tools);
        let client = &self.client;
        self.core.runtime.block_on(async {
            let mut stream = client.send_chat_messages_stream(request).await.ok()?;
            let mut content = String::new();
            let mut calls = Vec::new();
            let mut last = None;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.ok()?;
                content.push_str(&chunk.message.content);
                on_text(&chunk.message.content);
                calls.extend(chunk.message.tool_calls.iter().cloned());
                let done = chunk.done;
                last = Some(chunk);
                if done {
                    break;
                }
            }
            let mut last = last?;
            if !last.done {
                return None;
            }
            last.message.content = content;
            last.message.tool_calls = calls;
            Some(last)
        })
    }
}

impl ChatBackend for OllamaBackend {
    fn sees_images(&mut self) -> bool {
        if self.core.sees_images.is_none() {
            let (setting, key) = self.core.vision_setting();
            self.core.sees_images = Some(super::vision::resolve(setting, &key, self));
        }
        self.core.sees_images.unwrap_or(false)
    }

    fn describe(&self) -> String {
        let c = &self.core.config;
        format!(
            "ollama `{}` at {} ({})",
            c.model,
            super::provenance::public_url(&c.base_url),
            c.name
        )
    }

    fn context_window(&mut self) -> Option<super::window::ContextWindow> {
        // Every request sets `num_ctx`: that is the window, exactly.
        Some(super::window::ContextWindow::new(
            self.core.config.num_ctx,
            "num_ctx sent with each request",
        ))
    }

    fn model(&self) -> Option<String> {
        Some(self.core.config.model.clone())
    }

    fn provenance(&self) -> crate::llm::provenance::ModelProvenance {
        self.core.config.provenance(self.describe())
    }

    fn price(&self) -> Option<tokens::Price> {
        self.core.config.price
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        let (r, retries) = match self.call(messages, tools) {
            Ok(v) => v,
            Err(err)
                if self
                    .core
                    .switch_to_text_if(&err, |m| m.contains("does not support tools"))
                    || self.core.fall_back_if_schema_refused(&err) =>
            {
                self.call(messages, tools)?
            }
            Err(err) => return Err(err),
        };
        Ok(self.response_from(r, retries, messages, tools))
    }

    fn chat_streaming(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ChatResponse, LlmError> {
        // A constrained answer is JSON until it is read: the thought is
        // shown once the action is, not the raw object as it streams.
        if self.core.action_schema(messages, tools).is_some() {
            return chat_then_text(self, messages, tools, on_text);
        }
        match self.call_streaming(messages, tools, on_text) {
            Some(r) => Ok(self.response_from(r, 0, messages, tools)),
            None => {
                self.core.note_failed_stream();
                chat_then_text(self, messages, tools, on_text)
            }
        }
    }
}

fn tool_info(spec: &ToolSpec) -> Option<ToolInfo> {
    let parameters = schemars::Schema::try_from(spec.parameters.clone()).ok()?;
    Some(ToolInfo {
        tool_type: ToolType::Function,
        function: ToolFunctionInfo {
            name: spec.name.clone(),
            description: spec.description.clone(),
            parameters,
        },
    })
}

fn to_ollama(m: &Message) -> ChatMessage {
    let role = match m.role {
        Role::System => MessageRole::System,
        Role::User => MessageRole::User,
        Role::Assistant => MessageRole::Assistant,
        Role::Tool => MessageRole::Tool,
    };
    let mut out = ChatMessage::new(role, m.content.clone().unwrap_or_default());
    out.tool_calls = m
        .tool_calls
        .iter()
        .map(|c| OllamaCall {
            function: ToolCallFunction {
                name: c.function.name.clone(),
                arguments: serde_json::from_str(&c.function.arguments)
                    .unwrap_or_else(|_| serde_json::Value::String(c.function.arguments.clone())),
            },
        })
        .collect();
    if !m.images.is_empty() {
        out = out.with_images(
            m.images
                .iter()
                .map(ollama_rs::generation::images::Image::from_base64)
                .collect(),
        );
    }
    out
}

fn from_ollama(m: ChatMessage) -> Message {
    let mut content = m.content;
    if let Some(thinking) = m.thinking.filter(|t| !t.trim().is_empty()) {
        // Kept visible to the adapters (which strip it) and the transcript.
        content = format!("<think>{thinking}</think>{content}");
    }
    Message {
        role: Role::Assistant,
        images: Vec::new(),
        content: (!content.is_empty()).then_some(content),
        tool_calls: m
            .tool_calls
            .into_iter()
            .map(|c| {
                let arguments = match c.function.arguments {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                ToolCall::function(String::new(), c.function.name, arguments)
            })
            .collect(),
        tool_call_id: None,
    }
}

fn classify(err: OllamaError, model: &str) -> Failure {
    match err {
        OllamaError::ReqwestError(e) if e.is_timeout() => {
            Failure::transient(format!("timed out: {e}"))
        }
        OllamaError::ReqwestError(e) if e.is_connect() => Failure::transient(format!(
            "cannot connect (is `ollama serve` running? set OLLAMA_HOST): {e}"
        )),
        OllamaError::ReqwestError(e) => Failure::transient(format!("HTTP failure: {e}")),
        OllamaError::JsonError(e) => {
            Failure::transient(format!("the answer is not valid JSON: {e}"))
        }
        OllamaError::Other(body) => {
            let message = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                .unwrap_or(body);
            if message.contains("not found") {
                Failure::permanent(format!("{message} (run `ollama pull {model}`)"))
            } else if message.contains("does not support") || message.contains("invalid") {
                Failure::permanent(message)
            } else {
                Failure::transient(message)
            }
        }
        other => Failure::transient(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_go_in_the_messages_images_field() {
        let message = Message {
            images: vec!["aGVsbG8=".into(), "d29ybGQ=".into()],
            ..Message::text(Role::User, "two figures")
        };
        let wire = serde_json::to_value(to_ollama(&message)).unwrap();
        assert_eq!(wire["images"], serde_json::json!(["aGVsbG8=", "d29ybGQ="]));
        assert_eq!(wire["content"], "two figures");
        let plain = serde_json::to_value(to_ollama(&Message::text(Role::User, "text"))).unwrap();
        assert!(
            plain.get("images").is_none_or(serde_json::Value::is_null),
            "{plain}"
        );
    }
}
