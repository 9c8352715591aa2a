//! Token counting (tiktoken) and cost estimates (a price table per model).
//!
//! Servers that report usage are believed; otherwise gisclaw counts with
//! tiktoken's `o200k_base` encoding — exact for OpenAI's current models, an
//! approximation (within ~10–20 %) for other tokenizers, and marked
//! `estimated` in run.json.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Message, ToolSpec};

/// Tokens in `text` (tiktoken `o200k_base`).
pub fn count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::o200k_base_singleton().count_ordinary(text) as u64
}

/// Per-message framing tokens of the chat format (role markers).
const MESSAGE_OVERHEAD: u64 = 4;

/// Prompt tokens of a request: every message's text and tool calls, plus
/// the tool schemas.
pub fn count_prompt(messages: &[Message], tools: &[ToolSpec]) -> u64 {
    let messages: u64 = messages.iter().map(count_message).sum();
    let tools: u64 = tools.iter().map(count_tool).sum();
    messages + tools + 3
}

/// Tokens of one tool schema (name, description, parameters).
///
/// Counted once per schema and remembered: the same tools go with every
/// request of a run, and counting their JSON with tiktoken at every round
/// was most of a replayed round's overhead.
pub fn count_tool(tool: &ToolSpec) -> u64 {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static SEEN: RefCell<HashMap<u64, u64>> = RefCell::new(HashMap::new());
    }
    let key = tool.fingerprint();
    if let Some(n) = SEEN.with(|m| m.borrow().get(&key).copied()) {
        return n;
    }
    let n = count(&tool.name) + count(&tool.description) + count(&tool.parameters.to_string());
    SEEN.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 256 {
            m.clear();
        }
        m.insert(key, n);
    });
    n
}

/// Tokens of one message (text plus tool-call names and arguments).
///
/// Counts are remembered by the message's hash: a conversation is counted
/// again at every round, and only its newest messages are new.
pub fn count_message(message: &Message) -> u64 {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static SEEN: RefCell<HashMap<u64, u64>> = RefCell::new(HashMap::new());
    }
    let key = message.fingerprint();
    if let Some(n) = SEEN.with(|m| m.borrow().get(&key).copied()) {
        return n;
    }
    let n = MESSAGE_OVERHEAD
        + count(message.content.as_deref().unwrap_or(""))
        + message
            .tool_calls
            .iter()
            .map(|c| count(&c.function.name) + count(&c.function.arguments))
            .sum::<u64>();
    SEEN.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 4096 {
            m.clear();
        }
        m.insert(key, n);
    });
    n
}

/// Price of a model in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Prompt (input) tokens, USD per 1M.
    pub input: f64,
    /// Completion (output) tokens, USD per 1M.
    pub output: f64,
    /// Prompt tokens served from the provider's prefix cache, USD per 1M.
    /// Only from the config file (`cached_input = …`): cached prices and
    /// the conditions they apply under (minimum prompt length, cache
    /// lifetime) change by provider and model, so none is built in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

impl Price {
    /// A price without a cached-input rate.
    pub const fn new(input: f64, output: f64) -> Price {
        Price {
            input,
            output,
            cached_input: None,
        }
    }

    /// Cost of a call in US dollars.
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input + completion_tokens as f64 * self.output) / 1e6
    }

    /// Cost when `prefix_tokens` of the prompt tokens are billed at the
    /// cached-input rate; `None` without one.
    pub fn cost_with_cached_prefix(
        &self,
        prompt_tokens: u64,
        prefix_tokens: u64,
        completion_tokens: u64,
    ) -> Option<f64> {
        let cached = self.cached_input?;
        let prefix = prefix_tokens.min(prompt_tokens);
        Some(
            ((prompt_tokens - prefix) as f64 * self.input
                + prefix as f64 * cached
                + completion_tokens as f64 * self.output)
                / 1e6,
        )
    }
}

/// Published list prices (USD per 1M tokens, cache-miss input) as of late
/// 2025, each with the dated snapshot names that share it. A model is
/// priced only when its name (after any `provider/` part) is one of these
/// exactly: a newer model is not priced as an older one whose name it
/// starts with (`gpt-4o-2024-05-13`, which had its own list price, is its
/// own row). GPT-5.4 and Gemini-3-Flash are priced as the GISclaw paper's
/// Table 5 gives them (2.50 / 15.00 and 0.50 / 3.00), so that its cost
/// columns can be reproduced. Override or extend with `[prices."model"]`
/// in the config file.
const PRICES: &[(&[&str], f64, f64)] = &[
    (
        &["gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-2024-11-20"],
        2.50,
        10.00,
    ),
    (&["gpt-4o-2024-05-13"], 5.00, 15.00),
    (&["gpt-4o-mini", "gpt-4o-mini-2024-07-18"], 0.15, 0.60),
    (&["gpt-4.1", "gpt-4.1-2025-04-14"], 2.00, 8.00),
    (&["gpt-4.1-mini", "gpt-4.1-mini-2025-04-14"], 0.40, 1.60),
    (&["gpt-4.1-nano", "gpt-4.1-nano-2025-04-14"], 0.10, 0.40),
    (&["gpt-5", "gpt-5-2025-08-07"], 1.25, 10.00),
    (&["gpt-5-mini", "gpt-5-mini-2025-08-07"], 0.25, 2.00),
    (&["gpt-5-nano", "gpt-5-nano-2025-08-07"], 0.05, 0.40),
    (&["gpt-5.4"], 2.50, 15.00),
    (&["o3", "o3-2025-04-16"], 2.00, 8.00),
    (&["o4-mini", "o4-mini-2025-04-16"], 1.10, 4.40),
    (&["deepseek-chat"], 0.28, 0.42),
    (&["deepseek-reasoner"], 0.28, 0.42),
    (&["gemini-2.0-flash", "gemini-2.0-flash-001"], 0.10, 0.40),
    (&["gemini-2.5-flash"], 0.30, 2.50),
    (&["gemini-2.5-pro"], 1.25, 10.00),
    (&["gemini-3-flash", "gemini-3-flash-preview"], 0.50, 3.00),
    (
        &[
            "claude-sonnet-4",
            "claude-sonnet-4-0",
            "claude-sonnet-4-20250514",
        ],
        3.00,
        15.00,
    ),
    (
        &["claude-opus-4", "claude-opus-4-0", "claude-opus-4-20250514"],
        15.00,
        75.00,
    ),
    (
        &[
            "claude-3-5-haiku",
            "claude-3-5-haiku-latest",
            "claude-3-5-haiku-20241022",
        ],
        0.80,
        4.00,
    ),
];

/// The price of `model`: the config's overrides first (by the full name,
/// then without its `provider/` part), then the built-in table by exact
/// name or dated alias. `None` when unknown (cost is then reported as
/// unknown, not 0).
pub fn price_of(model: &str, overrides: &BTreeMap<String, Price>) -> Option<Price> {
    if let Some(p) = overrides.get(model) {
        return Some(*p);
    }
    let bare = model.rsplit('/').next().unwrap_or(model);
    if let Some(p) = overrides.get(bare) {
        return Some(*p);
    }
    PRICES
        .iter()
        .find(|(names, _, _)| names.contains(&bare))
        .map(|&(_, input, output)| Price::new(input, output))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    #[test]
    fn a_cached_prefix_is_billed_at_the_cached_rate_only_when_there_is_one() {
        let plain = Price::new(1.0, 2.0);
        assert_eq!(plain.cost_with_cached_prefix(1_000_000, 600_000, 0), None);
        let cached = Price {
            cached_input: Some(0.1),
            ..plain
        };
        let cost = cached
            .cost_with_cached_prefix(1_000_000, 600_000, 500_000)
            .unwrap();
        assert!((cost - (0.4 + 0.06 + 1.0)).abs() < 1e-9, "{cost}");
        // A prefix is never more than the prompt.
        assert_eq!(
            cached.cost_with_cached_prefix(10, 99, 0),
            Some(10.0 * 0.1 / 1e6)
        );
    }

    #[test]
    fn counts_like_tiktoken() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        let m = Message::text(Role::User, "hello world");
        assert_eq!(count_message(&m), 2 + MESSAGE_OVERHEAD);
    }

    #[test]
    fn a_tool_is_counted_once_and_a_changed_schema_again() {
        let tool = |description: &str| ToolSpec {
            name: "execute_python".into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "object", "properties": {"code": {"type": "string"}}}),
        };
        let plain = tool("Run Python.");
        let expected =
            count("execute_python") + count("Run Python.") + count(&plain.parameters.to_string());
        assert_eq!(count_tool(&plain), expected);
        assert_eq!(count_tool(&plain), expected, "remembered, the same");
        let longer = tool("Run Python in the persistent sandbox session.");
        assert!(
            count_tool(&longer) > expected,
            "a changed description is counted anew"
        );
        assert_eq!(count_prompt(&[], &[plain.clone(), plain]), 2 * expected + 3);
    }

    #[test]
    fn names_and_dated_aliases_match_exactly_and_overrides_come_first() {
        let none = BTreeMap::new();
        // A newer model is unknown, not priced as the one its name starts with.
        for newer in [
            "gpt-4o-mini-tts",
            "gpt-5.1",
            "gpt-4.1-mini-2026-01-01",
            "o3-pro",
            "claude-opus-4-1",
        ] {
            assert!(price_of(newer, &none).is_none(), "{newer}");
        }
        assert_eq!(price_of("gpt-4o-2024-05-13", &none).unwrap().input, 5.00);
        assert_eq!(
            price_of("claude-sonnet-4-20250514", &none).unwrap().output,
            15.00
        );
        assert_eq!(
            price_of("gpt-4o-mini-2024-07-18", &none).unwrap().input,
            0.15
        );
        assert_eq!(price_of("gpt-4o-2024-08-06", &none).unwrap().input, 2.50);
        assert_eq!(
            price_of("openrouter/deepseek-chat", &none).unwrap().output,
            0.42
        );
        assert!(price_of("qwen2.5-coder:14b", &none).is_none());
        let mut mine = BTreeMap::new();
        mine.insert("qwen2.5-coder:14b".to_string(), Price::new(0.0, 0.0));
        assert_eq!(
            price_of("qwen2.5-coder:14b", &mine)
                .unwrap()
                .cost(1000, 1000),
            0.0
        );
        let p = price_of("gpt-4.1", &none).unwrap();
        assert!((p.cost(1_000_000, 500_000) - 6.0).abs() < 1e-9);
        // The GISclaw paper's Table 5: GPT-5.4 2.50 / 15.00, Gemini-3-Flash
        // 0.50 / 3.00 USD per 1M tokens.
        let p = price_of("gpt-5.4", &none).unwrap();
        assert_eq!((p.input, p.output), (2.50, 15.00));
        let p = price_of("google/gemini-3-flash-preview", &none).unwrap();
        assert_eq!((p.input, p.output), (0.50, 3.00));
    }
}
