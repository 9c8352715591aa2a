//! The OpenAI-compatible backend (`async-openai`, bring-your-own-types):
//! OpenAI, DeepSeek, Gemini's OpenAI endpoint, Together, vLLM, llama.cpp's
//! server and anything else that speaks `/chat/completions`.
//!
//! Adapters for real servers: `null` content is sent as `""` (some servers
//! refuse `null`); with `tool_mode = auto` a server that refuses `tools`
//! switches the run to text-mode ReAct; server usage is believed, else
//! tiktoken counts. Retries: async-openai's own backoff covers HTTP 429 and
//! 5xx (status-aware), ours covers timeouts, dropped connections and
//! truncated bodies.

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::Client;
use futures_util::StreamExt;
use serde_json::{json, Map, Value};

use super::config::LiveConfig;
use super::live::LiveCore;
use super::retry::Failure;
use super::window::{self, ContextWindow};
use super::{chat_then_text, tokens, ChatBackend, ChatResponse, LlmError, Message, ToolSpec};

/// A live OpenAI-compatible model.
pub struct OpenAiBackend {
    core: LiveCore,
    client: Client<OpenAIConfig>,
    /// Ask for token log-probabilities (the tree search's priors).
    logprobs: bool,
    /// Answers asked for per request (`n`; the tree search's candidates).
    choices: usize,
    /// The HTTP client, for the window's discovery.
    http: reqwest::Client,
    /// The context window, once looked for.
    window: Option<Option<ContextWindow>>,
}

impl OpenAiBackend {
    /// A backend for `config`; no request is made yet.
    pub fn new(config: LiveConfig) -> Result<OpenAiBackend, LlmError> {
        let (core, http) = LiveCore::new(config)?;
        let config = &core.config;
        let api = OpenAIConfig::new()
            .with_api_base(config.base_url.clone())
            .with_api_key(config.api_key.clone().unwrap_or_default());
        let backoff = backoff::ExponentialBackoff {
            initial_interval: config.retry.initial,
            max_interval: config.retry.max_delay,
            multiplier: 2.0,
            randomization_factor: 0.1,
            max_elapsed_time: Some(config.retry.total_wait()),
            ..backoff::ExponentialBackoff::default()
        };
        let client = Client::build(http.clone(), api, backoff);
        Ok(OpenAiBackend {
            core,
            client,
            logprobs: false,
            choices: 1,
            http,
            window: None,
        })
    }

    /// The window: llama-server's `/props`, else the server's `/models`
    /// entry, else the published table, else the profile's
    /// `context_window`.
    fn find_window(&self) -> Option<ContextWindow> {
        let config = &self.core.config;
        let base = config.base_url.trim_end_matches('/');
        let root = base.strip_suffix("/v1").unwrap_or(base);
        let get = |url: String| -> Option<Value> {
            let mut request = self
                .http
                .get(&url)
                .timeout(std::time::Duration::from_secs(5));
            if let Some(key) = &config.api_key {
                request = request.bearer_auth(key);
            }
            self.core.runtime.block_on(async {
                let response = request.send().await.ok()?;
                if !response.status().is_success() {
                    return None;
                }
                response.json::<Value>().await.ok()
            })
        };
        if let Some(n) = get(format!("{root}/props"))
            .as_ref()
            .and_then(window::from_props)
        {
            return Some(ContextWindow::new(n, "the server's /props (n_ctx)"));
        }
        if let Some(n) = get(format!("{base}/models"))
            .as_ref()
            .and_then(|listing| window::from_model_list(listing, &config.model))
        {
            return Some(ContextWindow::new(n, "the server's /models entry"));
        }
        if let Some(n) = window::known(&config.model) {
            return Some(ContextWindow::new(
                n,
                format!("the published window of {}", config.model),
            ));
        }
        config
            .context_window
            .map(|n| ContextWindow::new(n, format!("context_window of profile {}", config.name)))
    }

    /// The request body for `messages`.
    fn request(&self, messages: &[Message], tools: &[ToolSpec], stream: bool) -> Value {
        let config = &self.core.config;
        let wire: Vec<Value> = self
            .core
            .wire(messages, tools)
            .iter()
            .map(wire_message)
            .collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(config.model));
        body.insert("messages".into(), Value::Array(wire));
        if let Some(schema) = self.core.action_schema(messages, tools) {
            body.insert(
                "response_format".into(),
                json!({ "type": "json_schema", "json_schema": { "name": "action", "strict": true, "schema": schema } }),
            );
        }
        let native = self.core.native_tools(tools);
        if !native.is_empty() {
            let tools: Vec<Value> = native
                .iter()
                .map(|t| json!({ "type": "function", "function": { "name": t.name, "description": t.description, "parameters": t.parameters } }))
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = config.temperature {
            body.insert("temperature".into(), super::decimal(t));
        }
        if let Some(p) = config.top_p {
            body.insert("top_p".into(), super::decimal(p));
        }
        if let Some(m) = config.max_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        if self.logprobs {
            body.insert("logprobs".into(), json!(true));
        }
        // Several answers only for plain requests (a stream gives one).
        if self.choices > 1 && !stream {
            body.insert("n".into(), json!(self.choices));
        }
        body.insert("stream".into(), json!(stream));
        if stream {
            body.insert("stream_options".into(), json!({ "include_usage": true }));
        }
        for (k, v) in &config.extra_body {
            body.insert(k.clone(), v.clone());
        }
        Value::Object(body)
    }

    /// One non-streamed call with retries.
    fn call(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<(Value, u32), LlmError> {
        let body = self.request(messages, tools, false);
        // Each attempt serialises the one body; it is not copied.
        let (client, body) = (&self.client, &body);
        self.core.retrying(|| async move {
            client
                .chat()
                .create_byot::<&Value, Value>(body)
                .await
                .map_err(classify)
        })
    }

    /// One streamed call: text goes to `on_text` as it arrives. Any failure
    /// before the stream completes returns `None` (the caller falls back to
    /// an ordinary call with full retries).
    fn call_streaming(
        &mut self,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Option<Value> {
        let body = self.request(messages, tools, true);
        let client = &self.client;
        self.core.runtime.block_on(async {
            let mut stream = client
                .chat()
                .create_stream_byot::<Value, Value>(body)
                .await
                .ok()?;
            let mut acc = StreamAccumulator::default();
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(chunk) => acc.add(&chunk, on_text),
                    Err(e) => {
                        tracing::warn!("stream failed: {e}");
                        return None;
                    }
                }
            }
            acc.finish()
        })
    }

    fn response_from(
        &mut self,
        value: Value,
        retries: u32,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<ChatResponse, LlmError> {
        let choice = value.get("choices").and_then(|c| c.get(0)).ok_or_else(|| {
            LlmError::Backend(format!(
                "the server's answer has no choices: {}",
                clip(&value.to_string())
            ))
        })?;
        let mut message: Message =
            serde_json::from_value(choice.get("message").cloned().unwrap_or(Value::Null)).map_err(
                |e| LlmError::Backend(format!("the server's message is not a chat message: {e}")),
            )?;
        message.role = super::Role::Assistant;
        let message = self.core.read_action(message, tools);
        let finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        let server = value.get("usage").and_then(|u| {
            let prompt = u.get("prompt_tokens").and_then(Value::as_u64)?;
            Some((
                prompt,
                u.get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            ))
        });
        let usage = self.core.usage(server, messages, tools, &message);
        let mut response = self.core.respond(message, usage, finish_reason, retries);
        response.logprob = mean_logprob(choice);
        // The other choices of an `n` request.
        let others = value
            .get("choices")
            .and_then(Value::as_array)
            .map(|c| &c[1..])
            .unwrap_or(&[]);
        for other in others {
            if let Ok(mut m) = serde_json::from_value::<Message>(
                other.get("message").cloned().unwrap_or(Value::Null),
            ) {
                m.role = super::Role::Assistant;
                response.more.push((m, mean_logprob(other)));
            }
        }
        Ok(response)
    }
}

/// The mean token log-probability of a choice (`logprobs.content[].logprob`,
/// OpenAI's and llama-server's shape); `None` without one.
fn mean_logprob(choice: &Value) -> Option<f64> {
    let tokens = choice.get("logprobs")?.get("content")?.as_array()?;
    let values: Vec<f64> = tokens
        .iter()
        .filter_map(|t| t.get("logprob").and_then(Value::as_f64))
        .filter(|v| v.is_finite())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

impl ChatBackend for OpenAiBackend {
    fn sees_images(&mut self) -> bool {
        if self.core.sees_images.is_none() {
            let (setting, key) = self.core.vision_setting();
            self.core.sees_images = Some(super::vision::resolve(setting, &key, self));
        }
        self.core.sees_images.unwrap_or(false)
    }

    fn want_logprobs(&mut self, on: bool) -> bool {
        self.logprobs = on;
        true
    }

    fn context_window(&mut self) -> Option<ContextWindow> {
        if self.window.is_none() {
            self.window = Some(self.find_window());
        }
        self.window.clone().flatten()
    }

    fn want_choices(&mut self, n: usize) -> bool {
        self.choices = n.max(1);
        true
    }

    fn describe(&self) -> String {
        let c = &self.core.config;
        format!(
            "openai-compatible `{}` at {} ({})",
            c.model,
            super::provenance::public_url(&c.base_url),
            c.name
        )
    }

    fn model(&self) -> Option<String> {
        Some(self.core.config.model.clone())
    }

    fn provenance(&self) -> crate::llm::provenance::ModelProvenance {
        let mut p = self.core.config.provenance(self.describe());
        if let Some(window) = self.window.clone().flatten() {
            p.context_size = Some(window.tokens);
        }
        p
    }

    fn price(&self) -> Option<tokens::Price> {
        self.core.config.price
    }

    fn chat(&mut self, messages: &[Message], tools: &[ToolSpec]) -> Result<ChatResponse, LlmError> {
        let (value, retries) = match self.call(messages, tools) {
            Ok(v) => v,
            Err(err)
                if self.core.switch_to_text_if(&err, |m| {
                    m.contains("refused the request")
                        && (m.contains("tool") || m.contains("function"))
                }) || self.core.fall_back_if_schema_refused(&err) =>
            {
                self.call(messages, tools)?
            }
            Err(err) => return Err(err),
        };
        self.response_from(value, retries, messages, tools)
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
            Some(value) => self.response_from(value, 0, messages, tools),
            None => {
                self.core.note_failed_stream();
                chat_then_text(self, messages, tools, on_text)
            }
        }
    }
}

/// A message as sent on the wire: `null` content becomes `""`; a message
/// with images gets content parts (its text, then one `image_url` data URL
/// per PNG).
fn wire_message(m: &Message) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if v.get("content").is_some_and(Value::is_null) {
        v["content"] = json!("");
    }
    if let Some(object) = v.as_object_mut() {
        if object.remove("images").is_some() {
            let mut parts =
                vec![json!({ "type": "text", "text": m.content.clone().unwrap_or_default() })];
            parts.extend(m.images.iter().map(|b64| json!({ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{b64}") } })));
            object.insert("content".into(), Value::Array(parts));
        }
    }
    v
}

/// The message of a JSON `{"error": {...}}` body, if `body` is one.
fn error_object(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    Some(match error.get("message").and_then(Value::as_str) {
        Some(m) => m.to_string(),
        None => error.to_string(),
    })
}

/// Sorts an async-openai error into retry-worthy or not.
fn classify(err: OpenAIError) -> Failure {
    match err {
        OpenAIError::Reqwest(e) if e.is_timeout() => Failure::transient(format!("timed out: {e}")),
        OpenAIError::Reqwest(e) if e.is_connect() => {
            Failure::transient(format!("cannot connect: {}", source_chain(&e)))
        }
        OpenAIError::Reqwest(e) => {
            Failure::transient(format!("HTTP failure: {}", source_chain(&e)))
        }
        // An error object async-openai cannot read (llama.cpp's has an
        // integer `code`) is the server refusing, not a garbled answer.
        // A web page is a web server at the wrong URL: retrying will not
        // make it an API.
        OpenAIError::JSONDeserialize(_, body) if super::probe::is_html(&body) => Failure::permanent(
            "the server answered with an HTML page, not the OpenAI API: set the base URL to the API root (usually ending in /v1)",
        ),
        OpenAIError::ApiError(api) if super::probe::is_html(&api.message) => Failure::permanent(
            "the server answered with an HTML error page, not the OpenAI API: set the base URL to the API root (usually ending in /v1)",
        ),
        OpenAIError::JSONDeserialize(e, body) => match error_object(&body) {
            Some(message) => Failure::permanent(format!(
                "the server refused the request: {}",
                clip(&message)
            )),
            None => Failure::transient(format!(
                "the answer is not valid JSON ({e}): {}",
                clip(&body)
            )),
        },
        // async-openai already retried 429 and 5xx with backoff before this.
        OpenAIError::ApiError(api) if api.r#type.is_none() && api.code.is_none() => {
            Failure::permanent(format!("server error (retried): {}", clip(&api.message)))
        }
        OpenAIError::ApiError(api) => {
            Failure::permanent(format!("the server refused the request: {api}"))
        }
        other => Failure::permanent(other.to_string()),
    }
}

/// An error with its causes, on one line.
fn source_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        text.push_str(": ");
        text.push_str(&s.to_string());
        cur = s.source();
    }
    text
}

/// The first 300 characters of a server's text.
fn clip(text: &str) -> String {
    crate::util::clip(&text.replace('\n', " "), 300)
}

/// Builds one chat-completion message from streamed chunks.
#[derive(Default)]
struct StreamAccumulator {
    content: String,
    calls: Vec<(String, String, String)>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    chunks: usize,
}

impl StreamAccumulator {
    fn add(&mut self, chunk: &Value, on_text: &mut dyn FnMut(&str)) {
        self.chunks += 1;
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(u.clone());
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(r.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            return;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(text);
            on_text(text);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index =
                call.get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.calls.len().saturating_sub(1) as u64) as usize;
            while self.calls.len() <= index {
                self.calls.push(Default::default());
            }
            let slot = &mut self.calls[index];
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                slot.0 = id.to_string();
            }
            if let Some(f) = call.get("function") {
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    slot.1.push_str(n);
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str) {
                    slot.2.push_str(a);
                }
            }
        }
    }

    /// The whole answer in the non-streamed response shape.
    fn finish(self) -> Option<Value> {
        if self.chunks == 0 {
            return None;
        }
        let calls: Vec<Value> = self
            .calls
            .into_iter()
            .map(|(id, name, args)| json!({ "id": id, "type": "function", "function": { "name": name, "arguments": args } }))
            .collect();
        let mut message = json!({ "role": "assistant", "content": self.content });
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let mut out =
            json!({ "choices": [{ "message": message, "finish_reason": self.finish_reason }] });
        if let Some(u) = self.usage {
            out["usage"] = u;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_tool_call_fragments_are_joined() {
        let mut acc = StreamAccumulator::default();
        let mut seen = String::new();
        let chunks = [
            json!({"choices":[{"delta":{"content":"Let me "}}]}),
            json!({"choices":[{"delta":{"content":"look."}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"execute_python","arguments":"{\"co"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"de\": \"1\"}"}}]},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}),
        ];
        for c in &chunks {
            acc.add(c, &mut |t| seen.push_str(t));
        }
        let v = acc.finish().unwrap();
        assert_eq!(seen, "Let me look.");
        assert_eq!(
            v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{\"code\": \"1\"}"
        );
        assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(v["usage"]["prompt_tokens"], 10);
    }

    #[test]
    fn null_content_goes_out_as_empty_text() {
        let mut m = Message::text(super::super::Role::Assistant, "x");
        m.content = None;
        assert_eq!(wire_message(&m)["content"], "");
    }
}
