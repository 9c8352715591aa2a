//! L2's LLM-as-judge (GISclaw §3.3, Table 9): a model reads the task, the
//! expert's gold code and a run's execution log and scores five dimensions
//! from 1 to 5, each with a justification. Diagnostic only: it never enters
//! the composite.
//!
//! The reply must be one JSON object with the five dimensions, each
//! `{"score": 1..5, "justification": "…"}` (a code fence around it and
//! extra keys are tolerated). An invalid reply is re-asked once with the
//! reason; a second invalid reply is an error, recorded as such.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::{ChatBackend, LlmError, Message, Role};

/// The five dimensions, in the paper's order: (key, what it asks).
pub const DIMENSIONS: [(&str, &str); 5] = [
    ("task_understanding", "Task understanding: did the agent interpret the task correctly and plan a fitting analysis?"),
    ("data_handling", "Data handling: loading, inspecting the schema, CRS management, formats."),
    ("methodology", "Methodology: are the GIS methods and parameters appropriate to the question?"),
    ("self_correction", "Self-correction: were errors noticed, diagnosed and fixed efficiently?"),
    ("result_completeness", "Result completeness: are all requested deliverables produced and correct in form?"),
];

/// Characters of the execution log shown to the judge; a longer log keeps
/// its first two thirds and last third of that budget around a marker.
pub const LOG_CHARS: usize = 30_000;

/// One dimension's grade.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grade {
    /// 1 (poor) to 5 (excellent).
    pub score: u8,
    /// The judge's reason.
    pub justification: String,
}

/// The judge's verdict on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The judging model.
    pub model: String,
    /// Grades by dimension key (see [`DIMENSIONS`]).
    pub grades: BTreeMap<String, Grade>,
    /// Calls it took (1, or 2 after a re-ask).
    pub calls: u32,
    /// Prompt and completion tokens of those calls.
    pub tokens: (u64, u64),
}

impl Verdict {
    /// The grade of one dimension.
    pub fn score(&self, key: &str) -> Option<u8> {
        self.grades.get(key).map(|g| g.score)
    }

    /// The mean of the five scores.
    pub fn mean(&self) -> f64 {
        self.grades
            .values()
            .map(|g| f64::from(g.score))
            .sum::<f64>()
            / self.grades.len().max(1) as f64
    }
}

/// The conversation that asks for a verdict.
pub fn prompt(instruction: &str, gold_code: &str, log: &str) -> Vec<Message> {
    let dimensions: String = DIMENSIONS
        .iter()
        .map(|(key, what)| format!("- `{key}` — {what}\n"))
        .collect();
    let system = "You grade the work of an AI agent that did a GIS analysis by writing and running Python. \
                  You are strict, fair and brief. A different but correct method is as good as the expert's. \
                  You answer with one JSON object and nothing else.";
    let user = format!(
        "## Task given to the agent\n\n{instruction}\n\n## The expert's gold solution\n\n```python\n{gold}\n```\n\n\
         ## The agent's execution log (its reasoning, code and what each step printed)\n\n{log}\n\n\
         ## Grade the agent from 1 (poor) to 5 (excellent) on\n\n{dimensions}\n\
         Answer with exactly this JSON object:\n\n{shape}\n",
        gold = gold_code.trim(),
        log = clip_log(log),
        shape = answer_shape(&DIMENSIONS),
    );
    vec![
        Message::text(Role::System, system),
        Message::text(Role::User, user),
    ]
}

/// The log cut to [`LOG_CHARS`] characters (head and tail kept).
fn clip_log(log: &str) -> String {
    let n = log.chars().count();
    if n <= LOG_CHARS {
        return log.to_string();
    }
    let head: String = log.chars().take(LOG_CHARS * 2 / 3).collect();
    let tail: String = log.chars().skip(n - LOG_CHARS / 3).collect();
    format!(
        "{head}\n\n[… {} characters of the log left out …]\n\n{tail}",
        n - head.chars().count() - tail.chars().count()
    )
}

/// Why a judge's reply cannot be used (said back to the judge once).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GradeError {
    /// No `{` in the reply.
    #[error("the reply holds no JSON object")]
    NoJson,
    /// A `{` without its `}`.
    #[error("the reply's JSON object is not closed")]
    Unclosed,
    /// The object does not parse.
    #[error("the JSON does not parse: {0}")]
    Parse(String),
    /// A dimension without an entry.
    #[error("`{0}` is missing")]
    Missing(String),
    /// A score that is not 1–5.
    #[error("`{key}.score` must be a whole number from 1 to 5, got {got}")]
    Score {
        /// The dimension.
        key: String,
        /// What was there.
        got: String,
    },
    /// A missing or empty justification.
    #[error("`{0}.justification` must be a non-empty string")]
    Justification(String),
}

/// Why a judging gave no verdict.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The judge's backend failed.
    #[error(transparent)]
    Backend(#[from] LlmError),
    /// The judge answered with invalid grades twice.
    #[error("the judge's answer was invalid twice: {0}")]
    Invalid(GradeError),
    /// The run's record cannot be read.
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    /// An input of the judging cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Reads the grades of `dimensions` out of a reply; the error says what is
/// wrong.
pub fn parse_grades(
    reply: &str,
    dimensions: &[(&str, &str)],
) -> Result<BTreeMap<String, Grade>, GradeError> {
    let start = reply.find('{').ok_or(GradeError::NoJson)?;
    let end = reply
        .rfind('}')
        .filter(|&e| e > start)
        .ok_or(GradeError::Unclosed)?;
    let value: Value =
        serde_json::from_str(&reply[start..=end]).map_err(|e| GradeError::Parse(e.to_string()))?;
    dimensions
        .iter()
        .map(|(key, _)| {
            let entry = value
                .get(key)
                .ok_or_else(|| GradeError::Missing(key.to_string()))?;
            let score = entry
                .get("score")
                .and_then(Value::as_u64)
                .filter(|s| (1..=5).contains(s))
                .ok_or_else(|| GradeError::Score {
                    key: key.to_string(),
                    got: entry.get("score").unwrap_or(&Value::Null).to_string(),
                })?;
            let justification = entry
                .get("justification")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|j| !j.is_empty())
                .ok_or_else(|| GradeError::Justification(key.to_string()))?;
            Ok((
                key.to_string(),
                Grade {
                    score: score as u8,
                    justification: justification.to_string(),
                },
            ))
        })
        .collect()
}

/// Asks `backend` for a verdict, re-asking once when the reply is invalid.
pub fn judge(
    backend: &mut dyn ChatBackend,
    instruction: &str,
    gold_code: &str,
    log: &str,
) -> Result<Verdict, JudgeError> {
    ask_grades(backend, prompt(instruction, gold_code, log), &DIMENSIONS)
}

/// The JSON shape a judge must answer with, for a prompt.
pub fn answer_shape(dimensions: &[(&str, &str)]) -> String {
    let lines: Vec<String> = dimensions
        .iter()
        .map(|(key, _)| {
            format!(
                "  \"{key}\": {{\"score\": <1-5>, \"justification\": \"<one or two sentences>\"}}"
            )
        })
        .collect();
    format!("{{\n{}\n}}", lines.join(",\n"))
}

/// Sends `messages` and reads the grades of `dimensions` from the answer,
/// re-asking once with the reason when it is invalid.
pub fn ask_grades(
    backend: &mut dyn ChatBackend,
    mut messages: Vec<Message>,
    dimensions: &[(&str, &str)],
) -> Result<Verdict, JudgeError> {
    let mut tokens = (0, 0);
    let mut ask =
        |backend: &mut dyn ChatBackend, messages: &[Message]| -> Result<String, LlmError> {
            let response = backend.chat(messages, &[])?;
            tokens.0 += response.usage.prompt_tokens;
            tokens.1 += response.usage.completion_tokens;
            Ok(response.message.content.unwrap_or_default())
        };
    let first = ask(backend, &messages)?;
    let (grades, calls) = match parse_grades(&first, dimensions) {
        Ok(grades) => (grades, 1),
        Err(why) => {
            messages.push(Message::text(Role::Assistant, first));
            messages.push(Message::text(
                Role::User,
                format!("That answer cannot be used: {why}. Answer again with only the JSON object, every key, whole-number scores from 1 to 5."),
            ));
            let second = ask(backend, &messages)?;
            let grades = parse_grades(&second, dimensions).map_err(JudgeError::Invalid)?;
            (grades, 2)
        }
    };
    Ok(Verdict {
        model: backend.model().unwrap_or_else(|| backend.describe()),
        grades,
        calls,
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(scores: [u64; 5]) -> String {
        let object: serde_json::Map<String, Value> = DIMENSIONS
            .iter()
            .zip(scores)
            .map(|((key, _), s)| {
                (
                    key.to_string(),
                    serde_json::json!({"score": s, "justification": format!("{key} ok")}),
                )
            })
            .collect();
        Value::Object(object).to_string()
    }

    #[test]
    fn a_fenced_reply_parses() {
        let text = format!("```json\n{}\n```", reply([5, 4, 3, 2, 1]));
        let grades = parse_grades(&text, &DIMENSIONS).unwrap();
        let scores: Vec<u8> = DIMENSIONS.iter().map(|(k, _)| grades[*k].score).collect();
        assert_eq!(scores, vec![5, 4, 3, 2, 1]);
        assert_eq!(grades["data_handling"].justification, "data_handling ok");
        let verdict = Verdict {
            model: "m".into(),
            grades,
            calls: 1,
            tokens: (0, 0),
        };
        assert_eq!(verdict.mean(), 3.0);
        assert_eq!(verdict.score("methodology"), Some(3));
    }

    #[test]
    fn invalid_replies_say_what_is_wrong() {
        assert_eq!(
            parse_grades("I think it went well.", &DIMENSIONS).unwrap_err(),
            GradeError::NoJson
        );
        assert!(matches!(
            parse_grades("{\"a\": }", &DIMENSIONS),
            Err(GradeError::Parse(_))
        ));
        let mut v: Value = serde_json::from_str(&reply([5, 4, 3, 2, 1])).unwrap();
        v["methodology"]["score"] = serde_json::json!(7);
        assert_eq!(
            parse_grades(&v.to_string(), &DIMENSIONS)
                .unwrap_err()
                .to_string(),
            "`methodology.score` must be a whole number from 1 to 5, got 7"
        );
        v["methodology"]["score"] = serde_json::json!(3);
        v.as_object_mut().unwrap().remove("self_correction");
        assert_eq!(
            parse_grades(&v.to_string(), &DIMENSIONS).unwrap_err(),
            GradeError::Missing("self_correction".into())
        );
    }

    #[test]
    fn a_long_log_keeps_its_head_and_tail() {
        let log = format!("{}{}", "a".repeat(LOG_CHARS), "z".repeat(100));
        let clipped = clip_log(&log);
        assert!(
            clipped.starts_with(&"a".repeat(LOG_CHARS * 2 / 3))
                && clipped.ends_with(&"z".repeat(100))
        );
        assert!(clipped.contains(&format!(
            "[… {} characters of the log left out …]",
            LOG_CHARS + 100 - LOG_CHARS * 2 / 3 - LOG_CHARS / 3
        )));
        assert_eq!(clip_log("short"), "short");
    }
}
