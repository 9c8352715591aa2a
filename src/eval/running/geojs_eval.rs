//! Eval of the GeoJSEval suite (`benchmarks/geojs/`): for every task, `n`
//! samples of the model's JavaScript implementation of the function
//! header, asked with the paper's prompt (Fig. 7), each run on every
//! parameter set in the confined JavaScript runtime with the paper's 30 s
//! threshold and judged by type first ([`crate::bench::js_judge`]).
//!
//! The records are the unit suite's ([`crate::eval::running::unit_eval::CaseRecord`]), so
//! pass@k, both CVs, SA, the efficiencies, the ranks, Table 7 and the
//! library heatmap come from the one report ([`crate::eval::reports::unit`]).
//! Failing samples get the paper's error types, with its "Other" class —
//! a redundant `import` or `require` of a library already loaded — told
//! apart.
//!
//! Each sample of a model gets a fresh worker (no other sample's code ran
//! in it: code that leaves its realm could answer later calls); its calls
//! share it, each in a fresh realm. With `Gold` the references are the
//! samples, one worker per task. Results are also saved at each case's
//! `output_path` under `outputs/sample-N/`, as the paper's harness does.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::bench::geojs::{
    run_instance, without_comments_and_strings, JsInstance, JsLibrary, JsSuite, JsTask, Ran,
};
use crate::bench::js_judge::{self, JsMismatch};
use crate::eval::metrics::errors::ErrorType;
use crate::eval::running::jobs::{self, ItemError, Plan, SuiteEvent};
use crate::eval::running::runner::{records_dir, BackendSource};
use crate::eval::running::unit_eval::{fenced_code, CallResult, CaseRecord, SampleRecord};
use crate::js::{JsConfig, JsRuntime, Lost};
use crate::llm::replay::ReplayBackend;
use crate::llm::{ChatBackend, Message, Role};
use crate::util::write_json;

/// GeoJSEval's prompt (Fig. 7), followed by the task's function.
pub const PROMPT: &str = "Please complete the following JavaScript function for local geospatial processing, based on the function signature and the provided JSDoc-style docstring. \
Return ONLY the complete function code without any explanations or additional text. \
Do not add any comments beyond what's already in the docstring. Keep the given docstring. \
The input may be empty or invalid, you need to handle this situation appropriately to avoid program crashes. \
Wrap the code with ```javascript and ``` to indicate the code block.\n\nHere is the function:\n\n";

/// The recording of one task: `DIR/<library>.<task>.jsonl`, one assistant
/// message per sample.
pub fn recording(dir: &Path, library: JsLibrary, task: &str) -> PathBuf {
    dir.join(format!("{}.{task}.jsonl", library.name()))
}

/// The prompt that asks for one implementation: the paper's, as one user
/// message.
pub fn prompt(task: &JsTask) -> Vec<Message> {
    vec![Message::text(
        Role::User,
        format!("{PROMPT}{}", task.function_header.trim_end()),
    )]
}

/// The code in a model's answer: its first ```javascript (or ```js) block,
/// else its first fenced block, else the whole text.
pub fn extract_code(reply: &str) -> String {
    fenced_code(reply, &["```javascript", "```js", "```"])
}

/// Whether code loads a module the runtime already holds: an `import`
/// statement, a dynamic `import(…)` or a `require(…)` call (the paper's
/// "Other" error). Comments and strings do not count.
pub fn redundant_import(code: &str) -> bool {
    let plain = without_comments_and_strings(code);
    let called = |word: &str| {
        plain.match_indices(word).any(|(i, _)| {
            let before = plain[..i].chars().next_back();
            let after = plain[i + word.len()..].trim_start();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '.')
                && after.starts_with('(')
        })
    };
    plain.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("import ") || line.starts_with("import{") || line.starts_with("import\"")
    }) || called("import")
        || called("require")
}

/// The error type of a call that did not pass (the paper's taxonomy).
///
/// The paper's runtime error is the 30 s threshold: gisclaw's `timeout`.
/// Other exceptions (a `RangeError`, a `SyntaxError` thrown by
/// `JSON.parse` while running) and a worker that died are `runtime`; a
/// realm or library that failed to load is `infrastructure`, never the
/// model's fault.
pub fn classify(ran: &Ran, mismatch: Option<&JsMismatch>) -> ErrorType {
    match (ran, mismatch) {
        (Ran::Returned(_), Some(JsMismatch::Type(_))) => ErrorType::OutputType,
        (Ran::Returned(_), _) => ErrorType::InvalidAnswer,
        (Ran::Lost(Lost::Timeout(_)), _) => ErrorType::Timeout,
        (Ran::Lost(_), _) => ErrorType::Runtime,
        (Ran::Threw { phase, name, .. }, _) => match (phase.as_str(), name.as_str()) {
            ("realm", _) => ErrorType::Infrastructure,
            (_, "Timeout") => ErrorType::Timeout,
            ("compile", "SyntaxError") => ErrorType::Syntax,
            (_, "TypeError" | "ReferenceError") => ErrorType::AttributeParameter,
            _ => ErrorType::Runtime,
        },
    }
}

/// Runs `code` on every case of one task and judges each answer; the
/// results, and the error type of a failing sample (its first failing
/// call; "Other" when the code imports what is already loaded).
pub fn judge_sample(
    runtime: &mut JsRuntime,
    suite: &JsSuite,
    instances: &[JsInstance<'_>],
    code: &str,
    outputs: Option<&Path>,
) -> Result<(Vec<CallResult>, Option<ErrorType>), ItemError> {
    let mut calls = Vec::new();
    let mut error = None;
    for instance in instances {
        let ran =
            run_instance(runtime, instance, code).map_err(|e| ItemError::Run(e.to_string()))?;
        if let Some(dir) = outputs {
            let path = dir.join(instance.task.output_path(instance.library, instance.number));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(ItemError::io(parent))?;
            }
            let saved = match &ran {
                Ran::Returned(answer) => serde_json::to_value(answer).unwrap_or_default(),
                other => serde_json::json!({ "error": other.to_string() }),
            };
            write_json(&path, &saved).map_err(ItemError::io(&path))?;
        }
        let verdict = match (&ran, suite.expected.get(&instance.key)) {
            (_, None) => Err((
                ErrorType::Infrastructure,
                format!(
                    "no reference answer for {} (run `gisclaw bench expect`)",
                    instance.key
                ),
            )),
            (Ran::Returned(got), Some(want)) => js_judge::judge(
                instance.task.output_type,
                &instance.task.tolerance,
                want,
                got,
            )
            .map_err(|m| (classify(&ran, Some(&m)), m.to_string())),
            // A map, layer or source stood for by another object: its
            // eval methods fail, but the fault is the type (§3.2.2).
            (
                Ran::Threw {
                    phase,
                    kind: Some(kind),
                    ..
                },
                Some(_),
            ) if phase == "indirect" && *kind != instance.task.output_type.name() => Err((
                ErrorType::OutputType,
                format!(
                    "output type: {} expected, {kind} returned",
                    instance.task.output_type.name()
                ),
            )),
            (other, Some(_)) => Err((classify(other, None), other.to_string())),
        };
        calls.push(CallResult::judged(&instance.key, verdict, &mut error));
    }
    if error.is_some() && redundant_import(code) {
        error = Some(ErrorType::Other);
    }
    Ok((calls, error))
}

/// Runs every task of `suite` not yet recorded in `out/records/` with
/// `samples` samples each, `jobs` tasks at a time (each worker its own
/// runtime); returns how many tasks could not run.
pub fn run_geojs_eval(
    config: &JsConfig,
    suite: &JsSuite,
    source: &BackendSource,
    samples: usize,
    out: &Path,
    jobs: usize,
    events: &(dyn Fn(SuiteEvent<CaseRecord>) + Sync),
) -> Result<usize, ItemError> {
    let records = records_dir(out);
    std::fs::create_dir_all(&records).map_err(ItemError::io(&records))?;
    let plan = Plan::new(suite.tasks(), |(library, task)| {
        records
            .join(CaseRecord::file_name(library.name(), &task.id))
            .is_file()
    });
    Ok(jobs::run_all(
        plan,
        jobs,
        |_| JsRuntime::new(config.clone()),
        |runtime, (library, task)| {
            // A task's samples never share a worker with another task's.
            runtime.restart();
            let record = run_task(runtime, suite, *library, task, source, samples, out)?;
            ItemError::check_stop()?;
            let path = records.join(CaseRecord::file_name(library.name(), &task.id));
            write_json(&path, &record).map_err(ItemError::io(&path))?;
            Ok(record)
        },
        |(library, task)| format!("{}/{}", library.name(), task.id),
        events,
    ))
}

/// All samples of one task.
fn run_task(
    runtime: &mut JsRuntime,
    suite: &JsSuite,
    library: JsLibrary,
    task: &JsTask,
    source: &BackendSource,
    samples: usize,
    out: &Path,
) -> Result<CaseRecord, ItemError> {
    let instances = task.instances(library);
    let mut backend: Option<Box<dyn ChatBackend>> = match source {
        BackendSource::Gold => None,
        BackendSource::Recorded(dir) => Some(Box::new(ReplayBackend::open(&recording(
            dir, library, &task.id,
        ))?)),
        BackendSource::Live(live) => Some(crate::llm::open_live((**live).clone())?),
    };
    let messages = prompt(task);
    let mut done = Vec::new();
    for sample in 1..=samples {
        // A model's sample gets a worker no other sample ran in: code that
        // leaves its realm could otherwise answer the next sample's calls.
        // The references (gold) share one per task.
        if sample > 1 && backend.is_some() {
            runtime.restart();
        }
        let (code, tokens_in, tokens_out, llm_seconds) = match backend.as_mut() {
            None => (task.reference_code.clone(), 0, 0, 0.0),
            Some(backend) => {
                let asked = Instant::now();
                let response = backend.chat(&messages, &[])?;
                let reply = response.message.content.unwrap_or_default();
                (
                    extract_code(&reply),
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    asked.elapsed().as_secs_f64(),
                )
            }
        };
        let outputs = out.join("outputs").join(format!("sample-{sample}"));
        let (calls, error) = judge_sample(runtime, suite, &instances, &code, Some(&outputs))?;
        done.push(SampleRecord {
            sample,
            passed: error.is_none(),
            code,
            calls,
            error,
            tokens_in,
            tokens_out,
            llm_seconds,
        });
    }
    Ok(CaseRecord {
        library: library.name().to_string(),
        case: task.id.clone(),
        labels: task.labels(library),
        samples: done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redundant_import_or_require_is_found_but_not_in_comments_or_names() {
        assert!(redundant_import(
            "import * as turf from '@turf/turf';\nfunction f() {}"
        ));
        assert!(redundant_import(
            "function f() { const t = require('@turf/turf'); }"
        ));
        assert!(redundant_import(
            "function f() { const t = require ('x'); }"
        ));
        assert!(!redundant_import(
            "function f() {\n  // require('x') is not needed\n  return 1; }"
        ));
        assert!(!redundant_import(
            "function f() { return myrequire(1) + obj.require(2); }"
        ));
        assert!(!redundant_import(
            "function f() { const important = 1; return important; }"
        ));
        assert!(redundant_import(
            "async function f() { const t = await import('@turf/turf'); }"
        ));
        assert!(!redundant_import("function f() { return 'require(x)'; }"));
    }

    #[test]
    fn the_papers_prompt_ends_with_the_header_and_asks_for_a_javascript_block() {
        let task: JsTask = serde_yaml::from_str(
            "id: t\ndata_type: geometry\noperation: measurement\nfunction_header: 'function T_t(a) {}'\n\
             reference_code: 'function T_t(a) { return 1; }'\noutput_type: Number\nparameters_list: [{params: {a: 1}}]\n",
        )
        .unwrap();
        let text = prompt(&task)[0].content.clone().unwrap_or_default();
        assert!(text.starts_with("Please complete the following JavaScript function"));
        assert!(text.contains("The input may be empty or invalid"));
        assert!(text.ends_with("function T_t(a) {}"));
        assert_eq!(
            extract_code("Sure:\n```javascript\nfunction T_t(a) { return 2; }\n```"),
            "function T_t(a) { return 2; }\n"
        );
    }

    #[test]
    fn errors_take_the_papers_types() {
        let threw = |name: &str| Ran::Threw {
            phase: "call".into(),
            kind: None,
            name: name.into(),
            message: String::new(),
        };
        assert_eq!(classify(&threw("SyntaxError"), None), ErrorType::Runtime);
        let compiling = Ran::Threw {
            phase: "compile".into(),
            kind: None,
            name: "SyntaxError".into(),
            message: String::new(),
        };
        assert_eq!(classify(&compiling, None), ErrorType::Syntax);
        assert_eq!(
            classify(&threw("TypeError"), None),
            ErrorType::AttributeParameter
        );
        assert_eq!(
            classify(&threw("ReferenceError"), None),
            ErrorType::AttributeParameter
        );
        assert_eq!(classify(&threw("Timeout"), None), ErrorType::Timeout);
        assert_eq!(
            classify(&Ran::Lost(Lost::Timeout(String::new())), None),
            ErrorType::Timeout
        );
        assert_eq!(
            classify(&Ran::Lost(Lost::Died(String::new())), None),
            ErrorType::Runtime
        );
    }
}
