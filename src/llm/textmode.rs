//! Text-mode ReAct for servers without tool calling: the conversation is
//! rewritten so that tools are described in the system message, earlier
//! tool calls appear as `Action:` text with a fenced code block, and tool
//! results come back as `Observation:` user messages. The model's replies
//! are read back into tool calls by [`super::adapt`].

use super::EXECUTE_PYTHON;
use super::{Message, Role, ToolSpec};

/// The protocol note appended to the system message.
fn protocol(tools: &[ToolSpec]) -> String {
    let mut text = String::from(
        "\n\n## Calling tools (text protocol)\nThis server has no native tool calling. Write one action per reply:\n\
         Thought: what you will do and why\n\
         Action: execute_python\n```python\n# the code to run\n```\n\
         For other tools write `Action: NAME` followed by its JSON arguments on one line, e.g.\n\
         Action: finish {\"summary\": \"what was produced\"}\n\
         After each action you receive an `Observation:` message. Tools:\n",
    );
    for t in tools {
        text.push_str(&format!(
            "- {}: {} Arguments (JSON Schema): {}\n",
            t.name, t.description, t.parameters
        ));
    }
    text
}

/// Renders one earlier tool call as text-protocol lines.
fn action_text(name: &str, arguments: &str) -> String {
    if name == EXECUTE_PYTHON {
        let code = serde_json::from_str::<serde_json::Value>(arguments)
            .ok()
            .and_then(|v| v.get("code").and_then(|c| c.as_str()).map(str::to_string))
            .unwrap_or_else(|| arguments.to_string());
        format!("Action: execute_python\n```python\n{code}\n```")
    } else {
        format!("Action: {name} {arguments}")
    }
}

/// Rewrites a native-tool conversation into the text protocol.
pub fn to_text_mode(messages: &[Message], tools: &[ToolSpec]) -> Vec<Message> {
    rewrite(messages, tools, &protocol(tools), |m| {
        (!m.tool_calls.is_empty()).then(|| {
            let mut parts: Vec<String> = m
                .content
                .iter()
                .filter(|c| !c.is_empty())
                .cloned()
                .collect();
            parts.extend(
                m.tool_calls
                    .iter()
                    .map(|c| action_text(&c.function.name, &c.function.arguments)),
            );
            parts.join("\n")
        })
    })
}

/// A conversation rewritten for a server that sees tools only as text
/// (text mode, constrained actions): `protocol` appended to the first
/// system message (or made one), each assistant message that `action`
/// renders sent as that text, tool results as `Observation:` user
/// messages, the rest as they are (figures shown to a vision model keep
/// their images).
pub(super) fn rewrite(
    messages: &[Message],
    tools: &[ToolSpec],
    protocol: &str,
    action: impl Fn(&Message) -> Option<String>,
) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut system_done = false;
    for m in messages {
        let rendered = if m.role == Role::Assistant {
            action(m)
        } else {
            None
        };
        match (m.role, rendered) {
            (Role::System, _) if !system_done => {
                system_done = true;
                let text = m.content.clone().unwrap_or_default() + protocol;
                out.push(Message::text(Role::System, text));
            }
            (Role::Assistant, Some(text)) => out.push(Message::text(Role::Assistant, text)),
            (Role::Tool, _) => out.push(Message::text(
                Role::User,
                format!("Observation:\n{}", m.content.as_deref().unwrap_or("")),
            )),
            _ => out.push(Message {
                images: m.images.clone(),
                ..Message::text(m.role, m.content.clone().unwrap_or_default())
            }),
        }
    }
    if !system_done && !tools.is_empty() {
        out.insert(
            0,
            Message::text(Role::System, protocol.trim_start().to_string()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{adapt, ToolCall};

    #[test]
    fn a_round_trip_through_text_mode_gives_back_the_call() {
        let call = ToolCall::function(
            "c1",
            "execute_python",
            serde_json::json!({ "code": "print(1)" }).to_string(),
        );
        let assistant = Message {
            role: Role::Assistant,
            content: Some("Thought: look".into()),
            tool_calls: vec![call],
            tool_call_id: None,
            images: Vec::new(),
        };
        let conv = vec![
            Message::text(Role::System, "rules"),
            Message::text(Role::User, "task"),
            assistant,
            Message::tool_result("c1", "1"),
        ];
        let tools = crate::agent::tools::specs();
        let text = to_text_mode(&conv, &tools);
        assert_eq!(text.len(), 4);
        assert!(text[0]
            .content
            .as_deref()
            .unwrap()
            .contains("Action: execute_python"));
        assert!(text
            .iter()
            .all(|m| m.tool_calls.is_empty() && m.role != Role::Tool));
        assert_eq!(text[3].role, Role::User);
        assert!(text[3]
            .content
            .as_deref()
            .unwrap()
            .starts_with("Observation:"));
        // What the model sees as its own earlier turn parses back to the same call.
        let back = adapt::adapt(text[2].clone(), 2).message;
        assert_eq!(back.tool_calls[0].function.name, "execute_python");
        assert!(back.tool_calls[0].function.arguments.contains("print(1)"));
    }
}
