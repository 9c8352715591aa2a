//! An eval folder as inspect_ai eval logs (the JSON log format, version 2,
//! as inspect_ai 0.3.285 reads it): one log per architecture of a task
//! suite's eval, so that `inspect view` opens gisclaw's runs beside other
//! harnesses'. A log's `eval` names the suite (task and dataset), the
//! model, the config and the git revision; `plan` the architecture;
//! `results` our scores as scorers with their metrics; `stats.model_usage`
//! the tokens and cost; each sample is one run (the task its id, the run
//! its epoch) whose `messages` are the run's system, user, assistant and
//! tool turns with their tool calls, read from its transcript, with the
//! run's scores and usage. The eval's provenance rides in `eval.metadata`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::bench::SuiteKind;
use crate::eval::reports::task::{EvalData, Weights};
use crate::eval::running::record::RunRecord;
use crate::eval::running::runner::Manifest;
use crate::llm::ToolCall;
use crate::record::Event;

/// The inspect_ai version whose log format this follows (pinned in
/// `tests/inspect/requirements.lock`, where a test reads our logs back).
pub const INSPECT_VERSION: &str = "0.3.285";

/// Why a log could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The folder holds no task-suite eval.
    #[error("{0}: inspect logs are written for task-suite evals (this folder holds a {1} eval)")]
    Kind(String, String),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Writes one log per architecture of `eval` into `out` (created), named
/// `<created>_<task>_<id>.json` as inspect names its own; returns their paths.
pub fn export(eval: &EvalData, weights: &Weights, out: &Path) -> Result<Vec<PathBuf>, ExportError> {
    if eval.manifest.kind != SuiteKind::Tasks {
        return Err(ExportError::Kind(
            eval.dir.display().to_string(),
            eval.manifest.kind.name().to_string(),
        ));
    }
    let write_error = |path: &Path, source| ExportError::Write {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(out).map_err(|e| write_error(out, e))?;
    let mut written = Vec::new();
    for arch in &eval.manifest.archs {
        let log = log_of(eval, arch.name(), weights);
        let created = log["eval"]["created"].as_str().unwrap_or_default();
        // inspect lists a log only under a name that starts with its
        // timestamp, and reads the task from the name's second `_` part.
        let part = |s: &str| s.replace(['_', '/', ':', '+'], "-");
        let name = format!(
            "{}_{}_{}.json",
            part(created),
            part(log["eval"]["task"].as_str().unwrap_or_default()),
            part(log["eval"]["task_id"].as_str().unwrap_or_default())
        );
        let path = out.join(name);
        crate::util::write_atomic(&path, ordered(&log).as_bytes())
            .map_err(|e| write_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// The log's JSON with its top-level keys in inspect's order, whatever
/// order serde_json keeps: the header (`version`, `status`, `eval`,
/// `plan`, `results`, `stats`) before `samples`, where inspect's
/// header-only reader (the one `inspect view` lists logs with) stops.
fn ordered(log: &Value) -> String {
    let keys = [
        "version", "status", "eval", "plan", "results", "stats", "samples",
    ];
    let fields: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let value = serde_json::to_string_pretty(log.get(*k)?).ok()?;
            Some(format!("{}: {value}", Value::from(*k)))
        })
        .collect();
    format!("{{\n{}\n}}\n", fields.join(",\n"))
}

/// The suite's name: its folder's.
fn suite_name(manifest: &Manifest) -> String {
    manifest
        .suite
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "suite".into())
}

/// The model as inspect names models: `provider/name`.
fn model_name(manifest: &Manifest) -> String {
    let model = manifest.provenance.as_ref().map(|p| &p.model);
    match model {
        Some(m) if m.replay => "gisclaw/replay".into(),
        Some(m) => {
            let name = m.name.clone().unwrap_or_else(|| "unnamed".into());
            let provider = if m.gguf.is_some() {
                "llama-cpp"
            } else if m.backend.starts_with("ollama") {
                "ollama"
            } else {
                "openai-api"
            };
            format!("{provider}/{name}")
        }
        None if manifest.backend.contains("replay") || manifest.backend.contains("recorded") => {
            "gisclaw/replay".into()
        }
        None => format!("gisclaw/{}", manifest.backend),
    }
}

/// A short stable id from `text` (16 hex digits of its SHA-256).
fn short_id(text: &str) -> String {
    crate::provenance::sha256_bytes(text.as_bytes())["sha256:".len()..][..16].to_string()
}

/// One architecture's log.
fn log_of(eval: &EvalData, arch: &str, weights: &Weights) -> Value {
    let manifest = &eval.manifest;
    // A record whose task is not a plain id (a folder name) names no run
    // folder of this eval: it is left out rather than followed.
    let records: Vec<&RunRecord> = eval
        .records
        .iter()
        .filter(|r| r.arch == arch && crate::task::check_id(&r.task).is_ok())
        .collect();
    let model = model_name(manifest);
    let suite = suite_name(manifest);
    let task = format!("gisclaw/{suite}");
    let created = iso_time(modified(&eval.dir.join("eval.json")));
    let task_id = short_id(&format!("{}|{arch}", eval.dir.display()));
    let samples: Vec<Value> = records
        .iter()
        .map(|r| sample(eval, r, &model, weights))
        .collect();
    let usage = usage_of(records.iter().copied());
    let finished = records
        .iter()
        .map(|r| run_dir(&eval.dir, r))
        .filter_map(|d| modified(&d.join("run.json")))
        .max();
    let expected = manifest.tasks.len() * manifest.runs;
    let provenance = manifest.provenance.as_ref();
    let git = provenance
        .map(|p| p.software.git_revision.clone())
        .filter(|r| r != "unknown");
    let mut spec = json!({
        "eval_id": short_id(&format!("{}|{arch}|eval", eval.dir.display())),
        "run_id": short_id(&format!("{}|run", eval.dir.display())),
        "created": created,
        "task": task,
        "task_id": task_id,
        "task_version": 0,
        "task_file": manifest.suite.display().to_string(),
        "task_display_name": format!("{suite} · {arch}"),
        "solver": format!("gisclaw/{arch}"),
        "dataset": {
            "name": suite,
            "location": manifest.suite.display().to_string(),
            "samples": manifest.tasks.len(),
            "sample_ids": manifest.tasks,
            "shuffled": false,
        },
        "model": model,
        "model_generate_config": generate_config(manifest),
        "config": { "epochs": manifest.runs },
        "packages": { "gisclaw": manifest.gisclaw },
        "metadata": {
            "gisclaw_backend": manifest.backend,
            "gisclaw_arch": arch,
            "gisclaw_condition": manifest.condition(),
            "gisclaw_eval_folder": eval.dir.display().to_string(),
            "provenance": provenance,
        },
    });
    if let Some(server) = provenance.and_then(|p| p.model.server.clone()) {
        spec["model_base_url"] = json!(server);
    }
    if let Some(commit) = git {
        spec["revision"] = json!({ "type": "git", "origin": "gisclaw", "commit": commit });
    }
    json!({
        "version": 2,
        "status": if records.len() >= expected { "success" } else { "cancelled" },
        "eval": spec,
        "plan": {
            "name": "plan",
            "steps": [{ "solver": format!("gisclaw/{arch}"), "params": {
                "workflow": manifest.workflow,
                "rag": manifest.rag,
                "output_checks": manifest.output_checks,
                "vision_feedback": manifest.vision_feedback,
            }}],
            "config": generate_config(manifest),
        },
        "results": results(&records, expected, weights),
        "stats": {
            "started_at": created,
            "completed_at": iso_time(finished.or_else(|| modified(&eval.dir.join("eval.json")))),
            "model_usage": { model: usage },
        },
        "samples": samples,
    })
}

/// The sampler settings as inspect's GenerateConfig.
fn generate_config(manifest: &Manifest) -> Value {
    let mut config = Map::new();
    if let Some(t) = manifest.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(sampler) = manifest.provenance.as_ref().map(|p| &p.model.sampler) {
        if let Some(m) = sampler.max_tokens {
            config.insert("max_tokens".into(), json!(m));
        }
        for key in ["top_p", "top_k", "seed"] {
            if let Some(v) = sampler.other.get(key) {
                config.insert(key.into(), v.clone());
            }
        }
    }
    Value::Object(config)
}

/// Tokens and cost of `records` as inspect's ModelUsage.
fn usage_of<'a>(records: impl Iterator<Item = &'a RunRecord>) -> Value {
    let (mut input, mut output, mut cost, mut priced) = (0u64, 0u64, 0.0, true);
    for r in records {
        input += r.tokens_in;
        output += r.tokens_out;
        match r.cost_usd {
            Some(c) => cost += c,
            None => priced = false,
        }
    }
    let mut usage = json!({
        "input_tokens": input,
        "output_tokens": output,
        "total_tokens": input + output,
    });
    if priced {
        usage["total_cost"] = json!(cost);
    }
    usage
}

/// The scores every sample carries, in order: name, value of one run.
fn sample_scores(r: &RunRecord, weights: &Weights) -> Vec<(&'static str, Option<f64>)> {
    vec![
        ("success", Some(f64::from(u8::from(r.success)))),
        ("composite", Some(weights.composite(r))),
        ("q_out", Some(r.q_out)),
        ("f_api", Some(r.code.api.f1)),
        ("c_emb", r.c_emb),
    ]
}

/// `results`: each score's mean over the runs (success as `accuracy`,
/// with pass@1 over tasks), with its standard error.
fn results(records: &[&RunRecord], expected: usize, weights: &Weights) -> Value {
    let names = ["success", "composite", "q_out", "f_api", "c_emb"];
    let scores: Vec<Value> = names
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let values: Vec<f64> = records
                .iter()
                .filter_map(|r| sample_scores(r, weights)[i].1)
                .collect();
            if values.is_empty() {
                return None;
            }
            let mean = crate::eval::metrics::stats::mean(&values);
            let stderr = if values.len() > 1 {
                crate::eval::metrics::stats::sample_sd(&values) / (values.len() as f64).sqrt()
            } else {
                0.0
            };
            let metric = if *name == "success" {
                "accuracy"
            } else {
                "mean"
            };
            let mut metrics = Map::new();
            metrics.insert(metric.into(), json!({ "name": metric, "value": mean }));
            metrics.insert(
                "stderr".into(),
                json!({ "name": "stderr", "value": stderr }),
            );
            Some(json!({
                "name": name,
                "scorer": format!("gisclaw/{name}"),
                "scored_samples": values.len(),
                "unscored_samples": records.len() - values.len(),
                "metrics": metrics,
            }))
        })
        .collect();
    json!({
        "total_samples": expected,
        "completed_samples": records.len(),
        "scores": scores,
    })
}

/// Where a run's files are.
fn run_dir(eval_dir: &Path, r: &RunRecord) -> PathBuf {
    eval_dir
        .join("runs")
        .join(&r.task)
        .join(format!("{}-{}", r.arch, r.run))
}

/// One run as a sample.
fn sample(eval: &EvalData, r: &RunRecord, model: &str, weights: &Weights) -> Value {
    let dir = run_dir(&eval.dir, r);
    let messages = messages_of(&dir.join("transcript.jsonl"), model);
    let input = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "assistant")
        .cloned()
        .unwrap_or_else(|| json!({ "role": "assistant", "content": "" }));
    let mut scores = Map::new();
    for (name, value) in sample_scores(r, weights) {
        if let Some(v) = value {
            let mut score = json!({ "value": v });
            if name == "success" {
                score["answer"] = json!(r.status);
                score["explanation"] = json!(r.reason);
            }
            scores.insert(name.into(), score);
        }
    }
    let completed = modified(&dir.join("run.json"));
    let started =
        completed.map(|t| t - std::time::Duration::from_secs_f64(r.wall_seconds.max(0.0)));
    let target: Vec<String> = if r.solvable {
        r.outputs.iter().map(|o| o.path.clone()).collect()
    } else {
        vec!["decline".into()]
    };
    json!({
        "id": r.task,
        "epoch": r.run,
        "input": input,
        "target": target,
        "messages": messages,
        "output": {
            "model": model,
            "choices": [{ "message": last, "stop_reason": "stop" }],
        },
        "scores": scores,
        "metadata": {
            "status": r.status,
            "reason": r.reason,
            "rounds": r.rounds,
            "cells": r.cells,
            "failed_cells": r.failed_cells,
            "run_error": r.run_error,
            "solvable": r.solvable,
            "declined": r.declined,
            "labels": r.labels,
            "provenance": r.provenance,
        },
        "model_usage": { model: usage_of(std::iter::once(r)) },
        "started_at": iso_time(started),
        "completed_at": iso_time(completed),
        "total_time": r.wall_seconds,
        "working_time": r.llm_seconds + r.sandbox_seconds,
    })
}

/// The run's turns as inspect's chat messages: each `message` event (its
/// role, text and tool calls) and each `tool` event (the observation, tied
/// to its call), in order. The Dual Agent's planner and worker keep their
/// role in `metadata.agent`.
fn messages_of(transcript: &Path, model: &str) -> Vec<Value> {
    // Lossy: one bad byte costs its line, not the sample's conversation.
    let mut out = Vec::new();
    for event in crate::record::read_lossy(transcript) {
        match event {
            Event::Message(m) => {
                let role = m.message.role.name();
                let mut message = json!({
                    "role": role,
                    "content": m.message.content.as_deref().unwrap_or_default(),
                    "source": if role == "assistant" { "generate" } else { "input" },
                });
                if let Some(agent) = &m.agent {
                    message["metadata"] = json!({ "agent": agent });
                }
                if role == "assistant" {
                    message["model"] = json!(model);
                    if !m.message.tool_calls.is_empty() {
                        message["tool_calls"] =
                            m.message.tool_calls.iter().map(tool_call).collect();
                    }
                }
                out.push(message);
            }
            Event::Tool(tool) => out.push(json!({
                "role": "tool",
                "content": tool.observation.unwrap_or_default(),
                "tool_call_id": tool.call_id.unwrap_or_default(),
                "function": tool.name,
            })),
            _ => {}
        }
    }
    out
}

/// One tool call: its arguments as an object (a call whose arguments are
/// not a JSON object keeps them as text, with the parse error).
fn tool_call(call: &ToolCall) -> Value {
    let raw = call.function.arguments.as_str();
    let mut out = json!({
        "id": call.id,
        "function": call.function.name,
        "type": "function",
    });
    match serde_json::from_str::<Map<String, Value>>(raw) {
        Ok(arguments) => out["arguments"] = Value::Object(arguments),
        Err(e) => {
            out["arguments"] = json!({ "text": raw });
            out["parse_error"] = json!(e.to_string());
        }
    }
    out
}

fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// An ISO 8601 UTC time (`2026-11-28T19:30:05+00:00`); the Unix epoch
/// when unknown.
pub fn iso_time(time: Option<std::time::SystemTime>) -> String {
    let secs = time
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The logs' folder beside an eval's report.
pub fn default_dir(eval_dir: &Path) -> PathBuf {
    eval_dir.join("inspect")
}

/// Counts, by task, the samples of each log (for the CLI's summary line).
pub fn describe(paths: &[PathBuf]) -> BTreeMap<String, usize> {
    paths
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let log: Value = serde_json::from_str(&text).ok()?;
            Some((
                p.file_name()?.to_string_lossy().to_string(),
                log["samples"].as_array().map_or(0, Vec::len),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_match_known_dates() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(iso_time(Some(UNIX_EPOCH)), "1970-01-01T00:00:00+00:00");
        // `date -u -d @1795894205`: Sat Nov 28 19:30:05 UTC 2026.
        assert_eq!(
            iso_time(Some(UNIX_EPOCH + Duration::from_secs(1_795_894_205))),
            "2026-11-28T19:30:05+00:00"
        );
        // A leap day.
        assert_eq!(
            iso_time(Some(UNIX_EPOCH + Duration::from_secs(951_782_400))),
            "2000-02-29T00:00:00+00:00"
        );
    }

    #[test]
    fn tool_calls_keep_their_arguments_as_an_object() {
        let call = ToolCall::function("c1", "execute_python", "{\"code\": \"x = 1\"}");
        let t = tool_call(&call);
        assert_eq!(t["arguments"]["code"], "x = 1");
        assert_eq!(t["function"], "execute_python");
        let broken = ToolCall::function("c2", "finish", "{oops");
        let t = tool_call(&broken);
        assert_eq!(t["arguments"]["text"], "{oops");
        assert!(t["parse_error"].is_string());
    }
}
