//! Eval of a unit suite (`benchmarks/unit/`, AutoGEEval/GeoJSEval style):
//! for every case, `n` samples of the model's implementation of the
//! function header, each run in the sandbox on the normal call and every
//! boundary call and judged against `expected.json`. A sample passes when
//! every call agrees. Scored by pass@k (unbiased, k ∈ {1, 3, 5} ≤ n) per
//! case, averaged; the failing samples are typed by the error taxonomy.
//!
//! One generation per sample, no agent loop: the papers' protocol is
//! single-shot code generation. The model's code runs only in the sandbox.
//!
//! Models: a live backend, recorded answers ([`recording`]) or the
//! reference implementations ([`BackendSource::Gold`]).
//!
//! Layout of the eval folder: `eval.json`, `records/<library>.<case>.json`
//! (one per case, written atomically when its samples are done — its
//! presence means done, so `--resume` continues), `results.json`,
//! `results.csv` (one row per case × sample), `report.md` (written by
//! [`crate::eval::reports::unit`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bench::judge;
use crate::bench::labels::Labels;
use crate::bench::unit::{run_instance, Case, CaseFile, Instance, UnitSuite};
use crate::eval::metrics::errors::{self, ErrorType};
use crate::eval::running::jobs::{self, Plan};
use crate::eval::running::jobs::{ItemError, ItemRecord, SuiteEvent};
use crate::eval::running::runner::{records_dir, BackendSource};
use crate::llm::replay::ReplayBackend;
use crate::llm::{ChatBackend, Message, Role};
use crate::sandbox::{Session, Zygote};
use crate::util::write_json;

/// What the report calls `source` (a unit suite's gold is its reference
/// implementations, its recordings are answers).
pub fn describe(source: &BackendSource) -> String {
    match source {
        BackendSource::Gold => "reference implementations".into(),
        BackendSource::Recorded(dir) => format!("recorded answers in {}", dir.display()),
        BackendSource::Live(_) => source.describe(),
    }
}

/// The recording of one case: `DIR/<library>.<case>.jsonl`, one assistant
/// message per sample.
pub fn recording(dir: &Path, library: &str, case: &str) -> PathBuf {
    dir.join(format!("{library}.{case}.jsonl"))
}

/// One call of one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallResult {
    /// The instance key (`lib/case` or `lib/case#bN`).
    pub key: String,
    /// Whether the answer agreed with the reference's.
    pub passed: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// An array answer's verdict by AutoGEEval's image metrics as published
    /// (Eqs. 11 and 13, [`judge::ArrayMetrics::AutoGeeval`]); `None` for
    /// other answers, whose verdict is `passed` under both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autogeeval: Option<bool>,
}

impl CallResult {
    /// The result of the call `key` from its verdict; a failure's type is
    /// kept in `error` when it is the sample's first.
    pub fn judged(
        key: &str,
        verdict: Result<(), (ErrorType, String)>,
        error: &mut Option<ErrorType>,
    ) -> CallResult {
        let (passed, problem) = match verdict {
            Ok(()) => (true, None),
            Err((kind, why)) => {
                error.get_or_insert(kind);
                (false, Some(why))
            }
        };
        CallResult {
            key: key.to_string(),
            passed,
            problem,
            autogeeval: None,
        }
    }

    /// Whether AutoGEEval's metrics pass it (`passed` where they agree).
    pub fn passed_by_autogeeval(&self) -> bool {
        self.autogeeval.unwrap_or(self.passed)
    }
}

/// One sample of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRecord {
    /// From 1.
    pub sample: usize,
    /// The code that ran (extracted from the model's answer).
    pub code: String,
    /// Every call agreed.
    pub passed: bool,
    /// Per call.
    pub calls: Vec<CallResult>,
    /// The error type of a failing sample (its first failing call).
    pub error: Option<ErrorType>,
    /// Prompt tokens.
    pub tokens_in: u64,
    /// Completion tokens.
    pub tokens_out: u64,
    /// Seconds waiting for the model.
    pub llm_seconds: f64,
}

impl SampleRecord {
    /// Whether the sample passes when array answers are judged by
    /// AutoGEEval's image metrics as published: every call passes by them,
    /// and a failure outside the calls (ours failed with every call
    /// passing) stays a failure.
    pub fn passed_by_autogeeval(&self) -> bool {
        let outside = !self.passed && self.calls.iter().all(|c| c.passed);
        !outside && self.calls.iter().all(CallResult::passed_by_autogeeval)
    }
}

/// One case's samples: `records/<library>.<case>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// The case file's library.
    pub library: String,
    /// The case id.
    pub case: String,
    /// The case's labels (empty in records written before labels).
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
    /// Its samples, in order.
    pub samples: Vec<SampleRecord>,
}

/// A case succeeds when every sample passed.
impl ItemRecord for CaseRecord {
    fn succeeded(&self) -> bool {
        self.samples.iter().all(|s| s.passed)
    }

    fn tokens(&self) -> u64 {
        self.samples
            .iter()
            .map(|s| s.tokens_in + s.tokens_out)
            .sum()
    }

    fn summary(&self) -> String {
        format!(
            "{}/{}: {}/{} samples pass",
            self.library,
            self.case,
            self.samples.iter().filter(|s| s.passed).count(),
            self.samples.len()
        )
    }
}

impl CaseRecord {
    /// The record's file name.
    pub fn file_name(library: &str, case: &str) -> String {
        format!("{library}.{case}.json")
    }
}

/// The prompt that asks for one implementation.
pub fn prompt(library: &str, case: &Case) -> Vec<Message> {
    vec![
        Message::text(
            Role::System,
            "You write Python functions for geospatial analysis. Answer with the complete function in one ```python code block: \
             the `def` line as given, its body, and the imports it needs inside the function. No explanations.",
        ),
        Message::text(Role::User, format!("Library: {library}\n\nComplete this function:\n\n```python\n{}\n```", case.header.trim_end())),
    ]
}

/// The code in a model's answer: its first ```python block, else its first
/// fenced block, else the whole text.
pub fn extract_code(reply: &str) -> String {
    fenced_code(reply, &["```python", "```py", "```"])
}

/// The body of the first block of `reply` opened by one of `openers`, tried
/// in order (the language's fences, then a bare one), else the whole text.
pub fn fenced_code(reply: &str, openers: &[&str]) -> String {
    for opener in openers {
        if let Some(start) = reply.find(opener) {
            let body = &reply[start + opener.len()..];
            let body = body.split_once('\n').map_or("", |(_, rest)| rest);
            let end = body.find("```").unwrap_or(body.len());
            return body[..end].trim_end().to_string() + "\n";
        }
    }
    reply.trim().to_string() + "\n"
}

/// Runs `code` on every instance of one case and judges each answer.
pub fn judge_sample(
    session: &mut Session,
    instances: &[Instance],
    expected: &BTreeMap<String, judge::Answer>,
    code: &str,
) -> (Vec<CallResult>, Option<ErrorType>) {
    let mut calls = Vec::new();
    let mut error = None;
    for instance in instances {
        let answer = run_instance(session, instance, code);
        let verdict = match (&answer, expected.get(&instance.key)) {
            (_, None) => Err((
                ErrorType::Other,
                format!(
                    "no reference answer for {} (run `gisclaw bench expect`)",
                    instance.key
                ),
            )),
            (Err(e), _) => Err((errors::classify_harness(e), e.to_string())),
            (Ok(got), Some(want)) => {
                judge::judge(instance.case.output, want, got, &instance.case.tolerance)
                    .map_err(|m| (errors::classify_mismatch(&m), m.to_string()))
            }
        };
        let mut call = CallResult::judged(&instance.key, verdict, &mut error);
        if let (judge::OutputType::Array, Ok(got), Some(want)) =
            (instance.case.output, &answer, expected.get(&instance.key))
        {
            call.autogeeval = Some(
                judge::judge_by(
                    judge::OutputType::Array,
                    want,
                    got,
                    &instance.case.tolerance,
                    judge::ArrayMetrics::AutoGeeval,
                )
                .is_ok(),
            );
        }
        calls.push(call);
    }
    (calls, error)
}

/// What the unit suite tells its front end.
pub type UnitEvent = SuiteEvent<CaseRecord>;

/// Runs every case of `suite` not yet recorded in `out/records/` with
/// `samples` samples each, `jobs` cases at a time (each worker its own
/// sandbox session); returns how many cases could not run.
pub fn run_unit_eval(
    zygote: &Arc<Zygote>,
    suite: &UnitSuite,
    source: &BackendSource,
    samples: usize,
    out: &Path,
    jobs: usize,
    events: &(dyn Fn(UnitEvent) + Sync),
) -> Result<usize, ItemError> {
    let records = records_dir(out);
    std::fs::create_dir_all(&records).map_err(ItemError::io(&records))?;
    let items = suite
        .files
        .iter()
        .flat_map(|(_, file)| file.cases.iter().map(move |case| (file, case)));
    let plan = Plan::new(items, |(file, case)| {
        records
            .join(CaseRecord::file_name(&file.library, &case.id))
            .is_file()
    });
    // Each worker keeps one session across its cases (dropped after a
    // failure, so the next case starts clean).
    let work = |session: &mut Option<Session>, dir: &Path, file: &CaseFile, case: &Case| {
        if session.is_none() {
            std::fs::create_dir_all(dir).map_err(ItemError::io(dir))?;
        }
        let live = match session {
            Some(live) => live,
            None => session.insert(Session::open(zygote, dir)?),
        };
        let record = run_case(
            live,
            suite,
            &file.library,
            file.prelude.as_deref(),
            case,
            source,
            samples,
        )?;
        // A case cut short by a stop request has no record.
        ItemError::check_stop()?;
        let path = records.join(CaseRecord::file_name(&file.library, &case.id));
        write_json(&path, &record).map_err(ItemError::io(&path))?;
        Ok(record)
    };
    Ok(jobs::run_all(
        plan,
        jobs,
        |worker| (out.join("work").join(format!("worker-{worker}")), None),
        |(dir, session), (file, case)| {
            let result: Result<CaseRecord, ItemError> = work(session, dir, file, case);
            if result.is_err() {
                *session = None;
            }
            result
        },
        |(file, case)| format!("{}/{}", file.library, case.id),
        events,
    ))
}

/// All samples of one case.
fn run_case(
    session: &mut Session,
    suite: &UnitSuite,
    library: &str,
    prelude: Option<&str>,
    case: &Case,
    source: &BackendSource,
    samples: usize,
) -> Result<CaseRecord, ItemError> {
    let instances = case.instances(library, prelude);
    let mut backend: Option<Box<dyn ChatBackend>> = match source {
        BackendSource::Gold => None,
        BackendSource::Recorded(dir) => {
            let file = recording(dir, library, &case.id);
            Some(Box::new(ReplayBackend::open(&file)?))
        }
        BackendSource::Live(live) => Some(crate::llm::open_live((**live).clone())?),
    };
    let messages = prompt(library, case);
    let mut out = Vec::new();
    for sample in 1..=samples {
        let (code, tokens_in, tokens_out, llm_seconds) = match backend.as_mut() {
            None => (case.reference.clone(), 0, 0, 0.0),
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
        let (calls, error) = judge_sample(session, &instances, &suite.expected, &code);
        out.push(SampleRecord {
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
        library: library.to_string(),
        case: case.id.clone(),
        labels: case.labels(library),
        samples: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_comes_out_of_its_fence() {
        assert_eq!(
            extract_code("Here:\n```python\ndef f(x):\n    return x\n```\nDone."),
            "def f(x):\n    return x\n"
        );
        assert_eq!(extract_code("```\ndef f(): pass\n```"), "def f(): pass\n");
        assert_eq!(
            extract_code("def f():\n    return 1"),
            "def f():\n    return 1\n"
        );
    }
}
