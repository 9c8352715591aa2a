//! How many tokens a model reads at once (its context window), and where
//! gisclaw learnt it: the server where it says (llama-server's `/props`,
//! an OpenAI-compatible `/models` entry's metadata, the `num_ctx` gisclaw
//! sends Ollama), else a table of published windows, else the profile's
//! `context_window`. `--context-window N` overrides them all (see
//! `agent::context`). A server's refusal of an over-long request states
//! both the window and the request's true size; [`refusal`] reads them.

use serde_json::Value;

/// A context window and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextWindow {
    /// Tokens the model reads at once (prompt and answer together).
    pub tokens: u64,
    /// Where the number comes from, in words (`llama-server /props`,
    /// `published window of gpt-4o`, `--context-window`…).
    pub source: String,
}

impl ContextWindow {
    /// A window of `tokens` from `source`.
    pub fn new(tokens: u64, source: impl Into<String>) -> ContextWindow {
        ContextWindow {
            tokens,
            source: source.into(),
        }
    }
}

/// Published context windows (tokens) of well-known hosted models, by
/// exact name (after any `provider/` part) or dated snapshot prefix
/// `NAME-20…`. From the providers' model pages as of late 2025.
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4o", 128_000),
    ("gpt-4o-mini", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-5-mini", 400_000),
    ("gpt-5-nano", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o3-mini", 200_000),
    ("o4-mini", 200_000),
    ("gpt-3.5-turbo", 16_385),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
];

/// The published window of `model`, if it is in the table.
pub fn known(model: &str) -> Option<u64> {
    let name = model.rsplit('/').next().unwrap_or(model);
    KNOWN
        .iter()
        .find(|(known, _)| {
            name == *known
                || name
                    .strip_prefix(known)
                    .and_then(|rest| rest.strip_prefix("-20"))
                    .is_some_and(|date| date.chars().all(|c| c.is_ascii_digit() || c == '-'))
        })
        .map(|&(_, tokens)| tokens)
}

/// What a server's refusal of an over-long request says about it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refusal {
    /// The request's size in the server's own tokens, when stated.
    pub prompt_tokens: Option<u64>,
    /// The window, when stated.
    pub window: Option<u64>,
}

/// Reads the sizes a context-overflow message states: llama.cpp's
/// `request (931 tokens) exceeds the available context size (512 tokens)`
/// (and its JSON `n_prompt_tokens` / `n_ctx`), OpenAI's `maximum context
/// length is 8192 tokens. However, your messages resulted in 9000 tokens`.
pub fn refusal(message: &str) -> Refusal {
    let mut found = Refusal::default();
    // JSON fields, wherever the body sits in the message.
    for (key, slot) in [
        ("\"n_prompt_tokens\":", &mut found.prompt_tokens),
        ("\"n_ctx\":", &mut found.window),
    ] {
        if let Some(at) = message.find(key) {
            *slot = leading_number(&message[at + key.len()..]);
        }
    }
    let lower = message.to_ascii_lowercase();
    let after = |needle: &str| {
        lower
            .find(needle)
            .and_then(|i| leading_number(&lower[i + needle.len()..]))
    };
    found.prompt_tokens = found
        .prompt_tokens
        .or_else(|| after("request ("))
        .or_else(|| after("resulted in "));
    found.window = found
        .window
        .or_else(|| after("available context size ("))
        .or_else(|| after("maximum context length is "));
    found
}

/// The number at the start of `text` (after spaces), if any.
fn leading_number(text: &str) -> Option<u64> {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// The window an OpenAI-compatible `/models` listing states for `model`:
/// vLLM's `max_model_len`, OpenRouter's and LM Studio's `context_length` /
/// `max_context_length`, Groq's `context_window`, llama-server's
/// `meta.n_ctx` (the running window, not `n_ctx_train`).
pub fn from_model_list(listing: &Value, model: &str) -> Option<u64> {
    let entries = listing.get("data")?.as_array()?;
    let entry = entries
        .iter()
        .find(|e| e.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (entries.len() == 1).then(|| &entries[0]))?;
    let number = |v: Option<&Value>| v.and_then(Value::as_u64).filter(|&n| n > 0);
    [
        "max_model_len",
        "context_length",
        "max_context_length",
        "context_window",
    ]
    .iter()
    .find_map(|k| number(entry.get(*k)))
    .or_else(|| number(entry.get("meta").and_then(|m| m.get("n_ctx"))))
}

/// The window llama-server's `/props` states (the per-slot `n_ctx` of its
/// default generation settings).
pub fn from_props(props: &Value) -> Option<u64> {
    props
        .get("default_generation_settings")
        .and_then(|s| s.get("n_ctx"))
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llama_cpp_and_openai_refusals_state_their_sizes() {
        // Verbatim from llama-server (b6xxx) with --ctx-size 512.
        let llama = r#"{"error":{"code":400,"message":"request (931 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":931,"n_ctx":512}}"#;
        assert_eq!(
            refusal(llama),
            Refusal {
                prompt_tokens: Some(931),
                window: Some(512)
            }
        );
        let text_only = "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it";
        assert_eq!(refusal(text_only).window, Some(4096));
        assert_eq!(refusal(text_only).prompt_tokens, Some(4476));
        let openai = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.";
        assert_eq!(
            refusal(openai),
            Refusal {
                prompt_tokens: Some(9000),
                window: Some(8192)
            }
        );
        assert_eq!(
            refusal("the request exceeds the available context size, try increasing it"),
            Refusal::default()
        );
    }

    #[test]
    fn published_windows_match_names_and_dated_snapshots_only() {
        assert_eq!(known("gpt-4o"), Some(128_000));
        assert_eq!(known("openai/gpt-4o-2024-08-06"), Some(128_000));
        assert_eq!(known("gpt-4o-mini"), Some(128_000));
        assert_eq!(known("gpt-4o-audio-preview"), None);
        assert_eq!(known("qwen2.5-coder:7b"), None);
    }

    #[test]
    fn model_listings_and_props_state_windows() {
        // llama-server's /v1/models entry (trimmed from a real answer).
        let llama = json!({"data": [{"id": "m.gguf", "owned_by": "llamacpp",
            "meta": {"n_ctx": 512, "n_ctx_train": 8192}}]});
        assert_eq!(from_model_list(&llama, "m.gguf"), Some(512));
        let vllm = json!({"data": [{"id": "a"}, {"id": "b", "max_model_len": 32768}]});
        assert_eq!(from_model_list(&vllm, "b"), Some(32768));
        assert_eq!(from_model_list(&vllm, "a"), None);
        assert_eq!(
            from_props(&json!({"default_generation_settings": {"n_ctx": 4096}})),
            Some(4096)
        );
        assert_eq!(from_props(&json!({})), None);
    }
}
