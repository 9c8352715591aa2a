//! Constrained actions (`tool_mode = "constrained"`): for servers whose
//! models cannot call tools natively but that can force the shape of an
//! answer (llama-server and any OpenAI-compatible server that accepts
//! `response_format: json_schema`; Ollama's `format`), every request carries
//! a JSON Schema that admits exactly one action, one of the offered tools
//! with arguments valid against its own schema, after a short thought:
//!
//! `{"thought": "…", "tool": "execute_python", "arguments": {"code": "…"}}`
//!
//! The server turns the schema into a grammar and samples only tokens that
//! keep the answer inside it, so the model still chooses the tool and
//! writes the code, but every answer is an action by construction and is
//! read back without repair ([`parse`]). The conversation is sent as in
//! text mode, with the model's earlier actions as the JSON it wrote.

use serde_json::{json, Map, Value};

use super::EXECUTE_PYTHON;
use super::{Message, Role, ToolCall, ToolSpec};

/// Most characters of the thought before the action.
pub const THOUGHT_CHARS: u64 = 200;
/// Most characters of any other string argument (a cell's code among
/// them) without a token limit: llama-server refuses a grammar with a
/// repetition of 2,000 or more ("failed to parse grammar"; measured with
/// b9993).
pub const STRING_CHARS: u64 = 1500;

/// The most characters a string argument may have when an answer has at
/// most `max_tokens` tokens: the grammar closes the string there, so the
/// answer always ends inside the limit instead of being cut mid-string (a
/// token is at least one character; the thought and the JSON around take
/// the rest).
pub fn string_chars(max_tokens: Option<u32>) -> u64 {
    match max_tokens {
        Some(n) => (n as u64)
            .saturating_sub(THOUGHT_CHARS + 120)
            .clamp(200, STRING_CHARS),
        None => STRING_CHARS,
    }
}

/// The pseudo-tool of a plain answer, offered where a conversation ends
/// with one: a chat turn, whose tools are the data tools without
/// `finish`, `step_done` or `submit_plan` (a tree node's `execute_python`
/// alone must be code).
pub const ANSWER: &str = "answer";

/// Whether a conversation over `tools` may end with a plain answer.
fn answers(tools: &[ToolSpec]) -> bool {
    tools.iter().any(|t| t.name == "list_files")
        && !tools.iter().any(|t| {
            matches!(
                t.name.as_str(),
                "finish" | "step_done" | "submit_plan" | "decline"
            )
        })
}

/// The answer pseudo-tool.
fn answer_spec() -> ToolSpec {
    ToolSpec {
        name: ANSWER.into(),
        description: "Answer the user in words (ends your turn).".into(),
        parameters: json!({
            "type": "object",
            "properties": { "text": { "type": "string" } },
            "required": ["text"],
        }),
    }
}

/// The tools an action may name: `tools` with `execute_python` first (a
/// small model takes the first alternative it is offered more often than
/// not), and [`ANSWER`] where a conversation ends with an answer.
fn actions(tools: &[ToolSpec]) -> Vec<ToolSpec> {
    let mut all = tools.to_vec();
    all.sort_by_key(|t| t.name != EXECUTE_PYTHON);
    if answers(tools) {
        all.push(answer_spec());
    }
    all
}

/// The schema of one action over `tools`, each string argument at most
/// `max_chars` long (see [`string_chars`]).
pub fn action_schema(tools: &[ToolSpec], max_chars: u64) -> Value {
    action_schema_without(tools, max_chars, &[])
}

/// The action schema for the next answer of `messages`. An ending action
/// (`finish`, `step_done`) is left out until the model has taken another
/// action since the latest user message (the task, a step's brief), and
/// `finish` right after a refused one: a small model that ends a step or a
/// task before doing anything, or keeps calling a refused `finish`, must
/// act first. Measured with SmolLM2 on geocode steps: without this, 12 of
/// 12 answers were `step_done` and no cell ran. `decline` likewise waits
/// for an action in a conversation that can look at the data (a Planner,
/// which cannot, may decline at once).
pub fn next_action_schema(messages: &[Message], tools: &[ToolSpec], max_chars: u64) -> Value {
    let mut skip: Vec<&str> = Vec::new();
    let acted = acted_since_the_user(messages);
    if !acted || finish_was_just_refused(messages) {
        skip.push("finish");
    }
    if !acted {
        skip.push("step_done");
        if tools.iter().any(|t| t.name == EXECUTE_PYTHON) {
            skip.push("decline");
        }
    }
    // Never leave nothing to choose.
    if actions(tools)
        .iter()
        .all(|t| skip.contains(&t.name.as_str()))
    {
        skip.clear();
    }
    action_schema_without(tools, max_chars, &skip)
}

/// Whether an assistant message after the latest user message calls a
/// tool other than the ending ones.
fn acted_since_the_user(messages: &[Message]) -> bool {
    let from = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |i| i + 1);
    messages[from..].iter().any(|m| {
        m.role == Role::Assistant
            && m.tool_calls.iter().any(|c| {
                !matches!(
                    c.function.name.as_str(),
                    "finish" | "step_done" | "submit_plan" | "decline"
                )
            })
    })
}

/// Whether the latest action of `messages` was a `finish` the run refused
/// (its result says "finish refused" or "finish: the outputs look wrong").
fn finish_was_just_refused(messages: &[Message]) -> bool {
    let Some(at) = messages
        .iter()
        .rposition(|m| m.role == Role::Assistant && !m.tool_calls.is_empty())
    else {
        return false;
    };
    let called_finish = messages[at]
        .tool_calls
        .iter()
        .any(|c| c.function.name == "finish");
    called_finish
        && messages[at + 1..].iter().any(|m| {
            m.content.as_deref().is_some_and(|t| {
                let t = t.trim_start();
                t.starts_with("finish refused") || t.starts_with("finish: the outputs look wrong")
            })
        })
}

/// [`action_schema`] without the tools named in `skip`.
fn action_schema_without(tools: &[ToolSpec], max_chars: u64, skip: &[&str]) -> Value {
    let variants: Vec<Value> = actions(tools)
        .iter()
        .filter(|t| !skip.contains(&t.name.as_str()))
        .map(|t| {
            json!({
                "type": "object",
                "properties": {
                    "thought": { "type": "string", "maxLength": THOUGHT_CHARS },
                    "tool": { "const": t.name },
                    "arguments": plain_schema(&inline_refs(&t.parameters), max_chars),
                },
                "required": ["thought", "tool", "arguments"],
                "additionalProperties": false,
            })
        })
        .collect();
    if variants.len() == 1 {
        return variants.into_iter().next().unwrap_or(Value::Null);
    }
    json!({ "oneOf": variants })
}

/// `schema` with every local `$ref` (`#/$defs/X`, `#/definitions/X`)
/// replaced by what it names, and the definitions dropped: Ollama's
/// schema converter does not follow references.
fn inline_refs(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    fn walk(v: &Value, defs: &Value, depth: usize) -> Value {
        match v {
            Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(Value::as_str) {
                    let name = target.rsplit('/').next().unwrap_or("");
                    if let (Some(def), true) = (defs.get(name), depth < 16) {
                        return walk(def, defs, depth + 1);
                    }
                }
                Value::Object(
                    map.iter()
                        .filter(|(k, _)| *k != "$defs" && *k != "definitions")
                        .map(|(k, x)| (k.clone(), walk(x, defs, depth)))
                        .collect(),
                )
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|x| walk(x, defs, depth)).collect())
            }
            other => other.clone(),
        }
    }
    walk(schema, &defs, 0)
}

/// A tool's argument schema without what grammar converters do not need
/// (descriptions, titles, formats, defaults), every object closed.
fn plain_schema(schema: &Value, max_chars: u64) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                match k.as_str() {
                    "description" | "title" | "format" | "default" | "examples" | "$schema" => {}
                    "properties" => {
                        let props: Map<String, Value> = v
                            .as_object()
                            .map(|p| {
                                p.iter()
                                    .map(|(n, s)| (n.clone(), plain_schema(s, max_chars)))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.insert(k.clone(), Value::Object(props));
                    }
                    _ => {
                        out.insert(k.clone(), plain_schema(v, max_chars));
                    }
                }
            }
            // A type, or a list of types (`["string", "null"]` for an
            // optional argument such as inspect_data's `path`).
            let has = |out: &Map<String, Value>, name: &str| match out.get("type") {
                Some(Value::String(t)) => t == name,
                Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
                _ => false,
            };
            if has(&out, "object") {
                out.insert("additionalProperties".into(), json!(false));
            }
            if has(&out, "string") && !out.contains_key("maxLength") {
                out.insert("maxLength".into(), json!(max_chars));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| plain_schema(item, max_chars))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The protocol note appended to the system message.
fn protocol(tools: &[ToolSpec]) -> String {
    // No literal example: a small model copies an example's code word for
    // word (measured with SmolLM2: `print(1)`, then the placeholder).
    let mut text = String::from(
        "\n\n## Actions\nEach answer of yours is one JSON object: `thought` (what you will do next and why, briefly), \
         `tool` (the tool to call) and `arguments` (its arguments; for execute_python, `code` is the Python to run). \
         After each action you receive an `Observation:` message. Tools:\n",
    );
    for t in &actions(tools) {
        text.push_str(&format!(
            "- {}: {} Arguments: {}\n",
            t.name,
            t.description,
            plain_schema(&inline_refs(&t.parameters), STRING_CHARS)
        ));
    }
    text
}

/// An earlier action as the JSON the model wrote.
fn action_json(thought: Option<&str>, call: &ToolCall) -> String {
    let arguments: Value =
        serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
    json!({
        "thought": thought.unwrap_or(""),
        "tool": call.function.name,
        "arguments": arguments,
    })
    .to_string()
}

/// Rewrites a native-tool conversation for constrained actions: tools in
/// the system message, earlier calls as their JSON, results as
/// `Observation:` user messages.
pub fn to_constrained(messages: &[Message], tools: &[ToolSpec]) -> Vec<Message> {
    let answering = answers(tools);
    super::textmode::rewrite(messages, tools, &protocol(tools), |m| {
        if !m.tool_calls.is_empty() {
            let thought = m.content.as_deref().filter(|c| !c.is_empty());
            let text: Vec<String> = m
                .tool_calls
                .iter()
                .map(|c| action_json(thought, c))
                .collect();
            return Some(text.join("\n"));
        }
        // An earlier plain answer, as the answer action it was.
        answering.then(|| {
            let call = ToolCall::function(
                "",
                ANSWER,
                json!({ "text": m.content.clone().unwrap_or_default() }).to_string(),
            );
            action_json(None, &call)
        })
    })
}

/// Reads a constrained answer into a message with one tool call (its
/// thought as the text). `Err` says why an answer is not an action (a
/// server that ignored the schema, an answer cut by the token limit).
pub fn parse(content: &str, tools: &[ToolSpec], round: usize) -> Result<Message, String> {
    let value: Value = serde_json::from_str(content.trim())
        .map_err(|e| format!("the constrained answer is not JSON ({e})"))?;
    let tool = value
        .get("tool")
        .and_then(Value::as_str)
        .ok_or("the constrained answer names no tool")?;
    if tool == ANSWER && answers(tools) {
        let text = value["arguments"]["text"]
            .as_str()
            .ok_or("the constrained answer has no text")?;
        return Ok(Message::text(Role::Assistant, text));
    }
    if !tools.iter().any(|t| t.name == tool) {
        return Err(format!(
            "the constrained answer names an unknown tool `{tool}`"
        ));
    }
    let arguments = value
        .get("arguments")
        .filter(|a| a.is_object())
        .ok_or("the constrained answer has no arguments object")?;
    let thought = value
        .get("thought")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string);
    Ok(Message {
        role: Role::Assistant,
        content: thought,
        tool_calls: vec![ToolCall::function(
            format!("call_{round}_0"),
            tool,
            arguments.to_string(),
        )],
        ..Message::default()
    })
}

/// Where servers that refused the schema are remembered:
/// `<cache>/constrained.json` (server URL and model → refused).
fn memory_file() -> std::path::PathBuf {
    crate::paths::cache_dir().join("constrained.json")
}

fn remembered() -> std::collections::BTreeMap<String, bool> {
    std::fs::read(memory_file())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Whether the server and model of `key` refused the schema before.
pub fn refused_before(key: &str) -> bool {
    remembered().get(key).copied().unwrap_or(false)
}

/// Remembers that the server and model of `key` refused the schema.
pub fn remember_refusal(key: &str) {
    let path = memory_file();
    let mut known = remembered();
    known.insert(key.to_string(), true);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::util::write_json(&path, &known) {
        tracing::warn!("remembering the schema refusal in {}: {e}", path.display());
    }
}

/// Whether a server's refusal (lower-cased) is of the schema itself: then
/// the run falls back to text mode.
pub fn refuses_schema(message: &str) -> bool {
    (message.contains("response_format")
        || message.contains("json_schema")
        || message.contains("grammar")
        || message.contains("format"))
        && (message.contains("not supported")
            || message.contains("unsupported")
            || message.contains("invalid")
            || message.contains("unknown")
            || message.contains("failed to parse")
            || message.contains("unrecognized"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_admits_one_action_of_the_offered_tools() {
        let tools = crate::agent::tools::specs();
        let schema = action_schema(&tools, STRING_CHARS);
        let variants = schema["oneOf"].as_array().unwrap();
        assert_eq!(variants.len(), tools.len());
        let exec = variants
            .iter()
            .find(|v| v["properties"]["tool"]["const"] == "execute_python")
            .unwrap();
        assert_eq!(exec["properties"]["arguments"]["required"], json!(["code"]));
        assert_eq!(
            exec["properties"]["arguments"]["additionalProperties"],
            false
        );
        assert!(exec["properties"]["arguments"]["properties"]["code"]
            .get("description")
            .is_none());
    }

    #[test]
    fn strings_end_inside_the_token_limit() {
        assert_eq!(string_chars(Some(1024)), 704);
        assert_eq!(string_chars(None), STRING_CHARS);
        assert_eq!(string_chars(Some(100_000)), STRING_CHARS);
        let schema = action_schema(&crate::agent::tools::specs(), 704);
        let exec = &schema["oneOf"][0];
        assert_eq!(
            exec["properties"]["tool"]["const"], "execute_python",
            "first"
        );
        assert_eq!(
            exec["properties"]["arguments"]["properties"]["code"]["maxLength"],
            704
        );
        // An optional string (`["string", "null"]`) is bounded too: SmolLM2
        // wrote a 3,943-character inspect_data path and ran out of tokens.
        let inspect = schema["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["properties"]["tool"]["const"] == "inspect_data")
            .unwrap();
        assert_eq!(
            inspect["properties"]["arguments"]["properties"]["path"]["maxLength"], 704,
            "{inspect}"
        );
    }

    #[test]
    fn a_refused_finish_is_not_offered_again_until_another_action() {
        let tools = crate::agent::tools::specs();
        let call = |id: &str, name: &str, arguments: &str| Message {
            role: Role::Assistant,
            tool_calls: vec![crate::llm::ToolCall::function(id, name, arguments)],
            ..Message::default()
        };
        let finish = |id: &str| call(id, "finish", "{}");
        let refused = Message::tool_result(
            "f1",
            "finish refused: these required outputs do not exist yet: pred_results/a.png.",
        );
        let mut messages = vec![
            Message::text(Role::System, "s"),
            Message::text(Role::User, "task"),
            finish("f1"),
            refused,
        ];
        let offered = |m: &[Message]| next_action_schema(m, &tools, 704).to_string();
        // Before any action, no ending.
        assert!(!offered(&messages[..2]).contains(r#""const":"finish""#));
        assert!(offered(&messages[..2]).contains(r#""const":"execute_python""#));
        assert!(!offered(&messages).contains(r#""const":"finish""#));
        assert!(
            !offered(&messages).contains(r#""const":"answer""#),
            "a task has no answer"
        );
        assert!(offered(&messages).contains(r#""const":"execute_python""#));
        // Nor a decline before the data were looked at.
        assert!(!offered(&messages[..2]).contains(r#""const":"decline""#));
        // Another action, and finish (and decline) is offered again.
        messages.push(call("c1", "execute_python", r#"{"code": "x = 1"}"#));
        messages.push(Message::tool_result("c1", "(no output)"));
        assert!(offered(&messages).contains(r#""const":"finish""#));
        assert!(offered(&messages).contains(r#""const":"decline""#));
        // A Planner (no execute_python) may decline at once.
        let planner = [
            crate::agent::plan::plan_spec(),
            crate::agent::tools::decline_spec(),
        ];
        assert!(next_action_schema(&messages[..2], &planner, 704)
            .to_string()
            .contains(r#""const":"decline""#));
        // A step's brief (a user message) asks for an action again before
        // step_done.
        let mut step_tools = tools.clone();
        step_tools.retain(|t| t.name != "finish");
        step_tools.push(crate::agent::plan::step_done_spec());
        let step = |m: &[Message]| next_action_schema(m, &step_tools, 704).to_string();
        messages.push(Message::text(Role::User, "Step 2: buffer the parks."));
        assert!(!step(&messages).contains(r#""const":"step_done""#));
        messages.push(call("c2", "execute_python", r#"{"code": "y = 2"}"#));
        messages.push(Message::tool_result("c2", "(no output)"));
        assert!(step(&messages).contains(r#""const":"step_done""#));
        // A planner's only tool stays offered.
        let plan = [crate::agent::plan::plan_spec()];
        assert!(next_action_schema(&messages[..2], &plan, 704)
            .to_string()
            .contains("submit_plan"));
    }

    #[test]
    fn a_chat_may_answer_in_words_and_a_task_may_not() {
        // Chat's tools (engine::chat_tools): no finish, no decline.
        let chat: Vec<ToolSpec> = crate::agent::tools::specs()
            .into_iter()
            .filter(|t| t.name != "finish" && t.name != "decline")
            .collect();
        let text = action_schema(&chat, STRING_CHARS).to_string();
        assert!(text.contains(r#""const":"answer""#), "{text}");
        let m = parse(
            r#"{"thought": "", "tool": "answer", "arguments": {"text": "It is 5."}}"#,
            &chat,
            1,
        )
        .unwrap();
        assert!(m.tool_calls.is_empty());
        assert_eq!(m.content.as_deref(), Some("It is 5."));
        // The answer comes back as the action it was.
        let wire = to_constrained(
            &[
                Message::text(Role::System, "s"),
                Message::text(Role::User, "q"),
                m,
            ],
            &chat,
        );
        assert!(wire[2]
            .content
            .as_deref()
            .unwrap()
            .contains(r#""tool":"answer""#));
        let task = crate::agent::tools::specs();
        assert!(!action_schema(&task, STRING_CHARS)
            .to_string()
            .contains(r#""const":"answer""#));
        assert!(parse(
            r#"{"thought": "", "tool": "answer", "arguments": {"text": "x"}}"#,
            &task,
            1
        )
        .is_err());
    }

    #[test]
    fn a_plan_schema_is_inlined_and_bounded() {
        let schema = action_schema(&[crate::agent::plan::plan_spec()], STRING_CHARS);
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        let steps = &schema["properties"]["arguments"]["properties"]["steps"];
        assert_eq!(steps["items"]["required"], json!(["goal"]));
        assert_eq!(steps["maxItems"], 7, "{steps}");
    }

    #[test]
    fn an_answer_is_read_back_without_repair_and_a_wrong_one_says_why() {
        let tools = crate::agent::tools::specs();
        let m = parse(
            r#"{"thought": "load it", "tool": "execute_python", "arguments": {"code": "print(1)"}}"#,
            &tools,
            3,
        )
        .unwrap();
        assert_eq!(m.content.as_deref(), Some("load it"));
        assert_eq!(m.tool_calls[0].function.name, "execute_python");
        assert_eq!(m.tool_calls[0].function.arguments, r#"{"code":"print(1)"}"#);
        assert!(parse(
            r#"{"thought": "x", "tool": "rm", "arguments": {}}"#,
            &tools,
            1
        )
        .unwrap_err()
        .contains("unknown tool"));
        assert!(parse(
            r#"{"thought": "x", "tool": "execute_python", "argu"#,
            &tools,
            1
        )
        .unwrap_err()
        .contains("not JSON"));
    }

    #[test]
    fn earlier_actions_are_sent_as_the_json_the_model_wrote() {
        let tools = crate::agent::tools::specs();
        let call = ToolCall::function("c1", "execute_python", r#"{"code":"x = 1"}"#);
        let conv = vec![
            Message::text(Role::System, "rules"),
            Message::text(Role::User, "task"),
            Message {
                role: Role::Assistant,
                content: Some("set x".into()),
                tool_calls: vec![call],
                ..Message::default()
            },
            Message::tool_result("c1", "(no output)"),
        ];
        let wire = to_constrained(&conv, &tools);
        assert!(wire[0].content.as_deref().unwrap().contains("## Actions"));
        let back = parse(wire[2].content.as_deref().unwrap(), &tools, 2).unwrap();
        assert_eq!(back.content.as_deref(), Some("set x"));
        assert_eq!(back.tool_calls[0].function.arguments, r#"{"code":"x = 1"}"#);
        assert_eq!(wire[3].role, Role::User);
    }
}
