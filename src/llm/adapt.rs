//! Provider adapters: whatever a model sent becomes clean tool calls, or a
//! precise complaint the model can act on. Never a crash.
//!
//! - `<think>…</think>` blocks are stripped from the content;
//! - tool-call arguments that are not valid JSON are repaired when the
//!   damage is mechanical (truncated strings or brackets, raw code sent to
//!   `execute_python`), otherwise reported as malformed;
//! - a message with no tool calls is read as text-mode ReAct: a JSON tool
//!   call written in the text, or fenced Python code (an `execute_python`
//!   call), or `Action: finish`.

use serde_json::{json, Value};

use super::EXECUTE_PYTHON;
use super::{Message, ToolCall};

/// A tool call whose arguments could not be made into a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    /// The call's id.
    pub call_id: String,
    /// The tool it named.
    pub name: String,
    /// What was wrong, for the model.
    pub reason: String,
}

/// The outcome of adapting one assistant message.
#[derive(Debug, Clone)]
pub struct Adapted {
    /// The message with clean content and well-formed calls.
    pub message: Message,
    /// What was repaired, for the transcript.
    pub repairs: Vec<String>,
    /// Calls that could not be repaired (they stay in `message` with their
    /// original arguments so the conversation stays consistent).
    pub malformed: Vec<Malformed>,
}

/// Removes `<think>…</think>` blocks (an unclosed one runs to the end).
pub fn strip_think(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// Closes an unterminated string and unbalanced brackets of truncated JSON.
pub fn repair_json(text: &str) -> Option<Value> {
    let text = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    let mut fixed = text.to_string();
    if escaped {
        fixed.pop();
    }
    if in_string {
        fixed.push('"');
    }
    while let Some(close) = stack.pop() {
        fixed.push(close);
    }
    serde_json::from_str(&fixed).ok()
}

/// All ```python (or bare ```) fenced blocks, joined.
pub fn fenced_code(text: &str) -> Option<String> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let header_end = after.find('\n').unwrap_or(after.len());
        let lang = after[..header_end].trim().to_ascii_lowercase();
        let body = &after[(header_end + 1).min(after.len())..];
        let Some(end) = body.find("```") else { break };
        if lang.is_empty() || lang == "python" || lang == "py" {
            blocks.push(body[..end].trim_end().to_string());
        }
        rest = &body[end + 3..];
    }
    (!blocks.is_empty()).then(|| blocks.join("\n\n"))
}

/// A `{"name": …, "arguments": …}` object written in the text.
fn json_call_in_text(text: &str) -> Option<(String, Value)> {
    let start = text.find('{')?;
    let value = repair_json(&text[start..text.rfind('}').map(|e| e + 1).unwrap_or(text.len())])?;
    let name = value.get("name")?.as_str()?.to_string();
    let args = match value.get("arguments").or_else(|| value.get("parameters")) {
        Some(Value::String(s)) => repair_json(s)?,
        Some(v) => v.clone(),
        None => json!({}),
    };
    Some((name, args))
}

/// Adapts the `round`-th assistant message.
pub fn adapt(message: Message, round: usize) -> Adapted {
    let mut message = message;
    let mut repairs = Vec::new();
    let mut malformed = Vec::new();
    if let Some(content) = &message.content {
        let clean = strip_think(content);
        if clean.len() != content.trim().len() {
            repairs.push("stripped <think> blocks".to_string());
        }
        message.content = (!clean.is_empty()).then_some(clean);
    }
    if message.tool_calls.is_empty() {
        let text = message.content.clone().unwrap_or_default();
        let call = json_call_in_text(&text)
            .map(|(name, args)| (name, args, "read a JSON tool call written as text"))
            .or_else(|| {
                fenced_code(&text).map(|code| {
                    (
                        EXECUTE_PYTHON.into(),
                        json!({ "code": code }),
                        "ran fenced code as execute_python",
                    )
                })
            })
            .or_else(|| {
                let lower = text.to_ascii_lowercase();
                (lower.contains("action: finish") || lower.contains("action: `finish`")).then(
                    || {
                        (
                            "finish".into(),
                            json!({ "summary": text.clone() }),
                            "read `Action: finish` as a finish call",
                        )
                    },
                )
            });
        if let Some((name, args, how)) = call {
            repairs.push(how.to_string());
            message
                .tool_calls
                .push(ToolCall::function(String::new(), name, args.to_string()));
        }
    }
    for (i, call) in message.tool_calls.iter_mut().enumerate() {
        if call.id.is_empty() {
            call.id = format!("call_{round}_{i}");
        }
        let args = call.function.arguments.trim();
        let parsed = if args.is_empty() {
            Some(json!({}))
        } else {
            serde_json::from_str::<Value>(args).ok()
        };
        match parsed {
            Some(Value::Object(_)) => {}
            _ => {
                let repaired = repair_json(args).filter(Value::is_object).or_else(|| {
                    (call.function.name == EXECUTE_PYTHON && !args.starts_with('{')).then(
                        || json!({ "code": fenced_code(args).unwrap_or_else(|| args.to_string()) }),
                    )
                });
                match repaired {
                    Some(v) => {
                        repairs.push(format!("repaired the arguments of {}", call.function.name));
                        call.function.arguments = v.to_string();
                    }
                    None => malformed.push(Malformed {
                        call_id: call.id.clone(),
                        name: call.function.name.clone(),
                        reason: format!(
                            "the arguments of `{}` are not a JSON object and could not be repaired: {}",
                            call.function.name,
                            args.chars().take(200).collect::<String>()
                        ),
                    }),
                }
            }
        }
    }
    Adapted {
        message,
        repairs,
        malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    fn assistant(content: &str, calls: Vec<(&str, &str)>) -> Message {
        Message {
            role: Role::Assistant,
            content: Some(content.to_string()),
            tool_calls: calls
                .into_iter()
                .map(|(n, a)| ToolCall::function(String::new(), n, a))
                .collect(),
            tool_call_id: None,
            images: Vec::new(),
        }
    }

    fn code_of(m: &Message) -> String {
        let v: Value = serde_json::from_str(&m.tool_calls[0].function.arguments).unwrap();
        v["code"].as_str().unwrap().to_string()
    }

    #[test]
    fn think_blocks_are_stripped() {
        assert_eq!(strip_think("<think>hmm</think>Answer"), "Answer");
        assert_eq!(strip_think("a<think>x</think>b<think>unclosed"), "ab");
    }

    #[test]
    fn truncated_arguments_are_closed() {
        let a = adapt(
            assistant("", vec![("execute_python", r#"{"code": "print(1)"#)]),
            1,
        );
        assert!(a.malformed.is_empty());
        assert_eq!(code_of(&a.message), "print(1)");
        assert_eq!(a.message.tool_calls[0].id, "call_1_0");
    }

    #[test]
    fn raw_code_sent_as_arguments_is_wrapped() {
        let a = adapt(
            assistant(
                "",
                vec![("execute_python", "import os\nprint(os.getcwd())")],
            ),
            2,
        );
        assert_eq!(code_of(&a.message), "import os\nprint(os.getcwd())");
    }

    #[test]
    fn hopeless_arguments_are_reported_not_run() {
        let a = adapt(assistant("", vec![("finish", "{\"summary\": }")]), 3);
        assert_eq!(a.malformed.len(), 1);
        assert!(a.malformed[0].reason.contains("finish"));
    }

    #[test]
    fn text_mode_react_with_fenced_code_becomes_a_call() {
        let a = adapt(
            assistant(
                "Thought: look at the data\nAction: execute_python\n```python\nprint(1)\n```",
                vec![],
            ),
            1,
        );
        assert_eq!(a.message.tool_calls[0].function.name, "execute_python");
        assert_eq!(code_of(&a.message), "print(1)");
    }

    #[test]
    fn a_json_tool_call_in_text_becomes_a_call() {
        let a = adapt(
            assistant(
                r#"I will run: {"name": "execute_python", "arguments": {"code": "x = 1"}}"#,
                vec![],
            ),
            1,
        );
        assert_eq!(code_of(&a.message), "x = 1");
    }

    #[test]
    fn plain_talk_stays_without_calls() {
        let a = adapt(assistant("I am not sure what to do.", vec![]), 1);
        assert!(a.message.tool_calls.is_empty());
    }
}
