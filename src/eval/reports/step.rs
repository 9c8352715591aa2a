//! The report of step-suite evals: one folder ([`write_report`]) or
//! several — models × modes — side by side ([`write_comparison`]) in the
//! layouts of GeoAgent's Table 4 (pass@1, the LLM alone beside the agent)
//! and Table 6 (complete@1 per task with its number of steps), with its
//! four error types.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::json;

use crate::eval::metrics::api::{label_metrics, LabelMetrics};
use crate::eval::metrics::breakdown::{
    breakdown, count_and_share, Breakdown, Item, DIFFICULTY_RULE,
};
use crate::eval::metrics::errors::{geoagent_type, ErrorType, GEOAGENT_TYPES};
use crate::eval::metrics::stats;
use crate::eval::reports::document::{f3, Document, Table};
use crate::eval::reports::labels;
use crate::eval::reports::task::charts::labels::LabelCharts;
use crate::eval::reports::task::load::{read_records, ReportError};
use crate::eval::running::step_eval::StepRunRecord;
use crate::util::write_atomic;

/// The figures of a step eval.
#[derive(Debug, Clone, Serialize)]
pub struct StepSummary {
    /// Runs recorded.
    pub runs: usize,
    /// Tasks with a record.
    pub tasks: usize,
    /// Mean complete@1 over runs (steps whose answer matched).
    pub complete_at_1: f64,
    /// Mean complete@1 counting steps that executed (GeoAgent's).
    pub complete_at_1_executed: f64,
    /// Mean step pass rate (step-level pass@1) over runs.
    pub step_pass_rate: f64,
    /// Share of runs passing every step.
    pub task_pass_rate: f64,
    /// Per task: (runs, mean complete@1, mean step pass rate, runs passing every step).
    pub per_task: BTreeMap<String, (usize, f64, f64, usize)>,
    /// Failing steps by error type.
    pub errors: BTreeMap<String, usize>,
    /// Mean rounds per run.
    pub rounds: f64,
    /// Mean prompt + completion tokens per run.
    pub tokens: f64,
    /// Step pass@1 (over runs) and error types per label value.
    pub by_label: Breakdown,
    /// The functions the model's code of each step calls against the
    /// gold cell's (GeoAgent Table 5: example-based accuracy, precision,
    /// recall, F1 over every attempted step).
    pub calls: LabelMetrics,
    /// Per task: mean interventions per run (`--interventions`).
    pub hints: BTreeMap<String, f64>,
}

/// Summarises run records.
pub fn summarise(records: &[StepRunRecord]) -> StepSummary {
    let mean =
        |f: &dyn Fn(&StepRunRecord) -> f64| stats::mean(&records.iter().map(f).collect::<Vec<_>>());
    let mut per_task: BTreeMap<String, Vec<&StepRunRecord>> = BTreeMap::new();
    for r in records {
        per_task.entry(r.task.clone()).or_default().push(r);
    }
    let mut errors = BTreeMap::new();
    for e in records
        .iter()
        .flat_map(|r| &r.steps)
        .filter_map(|s| s.error)
    {
        *errors.entry(e.name().to_string()).or_insert(0) += 1;
    }
    // One item per (task, step): its runs.
    let mut steps: BTreeMap<(String, usize), Vec<&crate::eval::running::step_eval::StepResult>> =
        BTreeMap::new();
    for r in records {
        for st in &r.steps {
            steps.entry((r.task.clone(), st.step)).or_default().push(st);
        }
    }
    let items: Vec<Item> = steps
        .values()
        .map(|runs| Item {
            labels: &runs[0].labels,
            n: runs.len(),
            c: runs.iter().filter(|s| s.passed).count(),
            errors: runs.iter().filter_map(|s| s.error).collect(),
        })
        .collect();
    let examples: Vec<(BTreeSet<String>, BTreeSet<String>)> = records
        .iter()
        .flat_map(|r| &r.steps)
        .filter(|s| s.ending != "ended" && !s.gold_calls.is_empty())
        .map(|s| {
            (
                s.gold_calls.iter().cloned().collect(),
                s.calls.iter().cloned().collect(),
            )
        })
        .collect();
    StepSummary {
        by_label: breakdown(&items),
        calls: label_metrics(&examples),
        hints: per_task
            .iter()
            .map(|(t, rs)| {
                let h: Vec<f64> = rs
                    .iter()
                    .map(|r| r.steps.iter().map(|s| s.hints).sum::<usize>() as f64)
                    .collect();
                (t.clone(), stats::mean(&h))
            })
            .collect(),
        runs: records.len(),
        tasks: per_task.len(),
        complete_at_1: mean(&|r| r.complete_at_1),
        complete_at_1_executed: mean(&|r| r.complete_at_1_executed),
        step_pass_rate: mean(&|r| r.step_pass_rate),
        task_pass_rate: mean(&|r| f64::from(u8::from(r.passed))),
        per_task: per_task
            .into_iter()
            .map(|(t, rs)| {
                let c = stats::mean(&rs.iter().map(|r| r.complete_at_1).collect::<Vec<_>>());
                let p = stats::mean(&rs.iter().map(|r| r.step_pass_rate).collect::<Vec<_>>());
                (t, (rs.len(), c, p, rs.iter().filter(|r| r.passed).count()))
            })
            .collect(),
        errors,
        rounds: mean(&|r| r.rounds as f64),
        tokens: mean(&|r| (r.tokens_in + r.tokens_out) as f64),
    }
}

/// Reads every run record of an eval folder.
pub fn load_records(out: &Path) -> Result<Vec<StepRunRecord>, ReportError> {
    read_records(out)
}

/// Writes `report.md`, `results.json`, `results.csv` and every table as
/// CSV under `tables/` into `out`; with `html`, also `report.html`.
pub fn write_report(
    records: &[StepRunRecord],
    backend: &str,
    protocol: crate::protocol::Protocol,
    out: &Path,
    html: bool,
) -> std::io::Result<StepSummary> {
    let summary = summarise(records);
    let json = json!({ "backend": backend, "summary": summary, "runs": records });
    write_atomic(&out.join("results.json"), format!("{json:#}\n").as_bytes())?;
    let mut csv = Table::new(
        "",
        [
            "task", "run", "step", "passed", "ending", "error", "problem",
        ],
    );
    for r in records {
        for s in &r.steps {
            csv.row([
                r.task.clone(),
                r.run.to_string(),
                s.step.to_string(),
                s.passed.to_string(),
                s.ending.clone(),
                s.error.map(|e| e.name()).unwrap_or("").to_string(),
                s.problem.clone().unwrap_or_default().replace('\n', " "),
            ]);
        }
    }
    write_atomic(&out.join("results.csv"), csv.csv().as_bytes())?;
    let doc = one_folder(&summary, backend, protocol, out);
    super::write(&doc, out, html)?;
    Ok(summary)
}

/// The report of one folder.
fn one_folder(
    summary: &StepSummary,
    backend: &str,
    protocol: crate::protocol::Protocol,
    out: &Path,
) -> Document {
    let mut doc = Document::titled(format!("Step eval: {backend}"));
    doc.text(protocol.summary());
    doc.text(format!(
        "{} tasks, {} runs. complete@1: consecutive passed steps (answer matched) from the first over all steps; executed: the same counting steps whose code ran and gave an answer, right or not (GeoAgent's complete rate); step pass rate: steps passed, each on its own; task pass: every step passed.",
        summary.tasks, summary.runs
    ));
    let mut overall = Table::new(
        "",
        [
            "complete@1",
            "complete@1 (executed)",
            "step pass rate",
            "task pass rate",
            "rounds per run",
            "tokens per run",
        ],
    );
    overall.row([
        format!("{:.3}", summary.complete_at_1),
        format!("{:.3}", summary.complete_at_1_executed),
        format!("{:.3}", summary.step_pass_rate),
        format!("{:.3}", summary.task_pass_rate),
        format!("{:.1}", summary.rounds),
        format!("{:.0}", summary.tokens),
    ]);
    doc.table(overall);
    let mut per_task = Table::new(
        "Per task",
        [
            "task",
            "runs",
            "complete@1",
            "step pass rate",
            "runs passing every step",
        ],
    );
    for (t, (n, c, p, all)) in &summary.per_task {
        per_task.row([
            t.clone(),
            n.to_string(),
            format!("{c:.3}"),
            format!("{p:.3}"),
            all.to_string(),
        ]);
    }
    doc.table(per_task);
    let mut errors = Table::new("Failing steps by error type", ["error type", "steps"]);
    for (e, n) in &summary.errors {
        errors.row([e.clone(), n.to_string()]);
    }
    if summary.errors.is_empty() {
        errors.row(["(none: every step passed)", "0"]);
    }
    doc.table(errors);
    function_calls_table(&[(backend, summary)], &mut doc);
    labels::one(&summary.by_label, "steps", DIFFICULTY_RULE, &mut doc);
    let pass = pass_at_1(summary);
    crate::eval::reports::unit::draw_charts(
        &LabelCharts {
            models: vec![(backend, &summary.by_label)],
            errors: vec![(backend, &summary.errors)],
            pass_at: vec![(backend, &pass)],
            efficiency: Vec::new(),
        },
        out,
        &mut doc,
    );
    if summary.hints.values().any(|h| *h > 0.0) {
        let mut hints = Table::new(
            "Interventions per task (mean per run; the gold cell shown, `--interventions`)",
            ["task", "interventions"],
        );
        for (t, h) in &summary.hints {
            hints.row([t.clone(), format!("{h:.2}")]);
        }
        doc.table(hints);
    }
    doc
}

/// One folder of a comparison: its label (backend and mode), its suite's
/// name, whether it is the LLM alone, and its records.
#[derive(Debug, Clone)]
pub struct StepFolder {
    /// The backend with its mode (`… · LLM alone · gold prefix`).
    pub label: String,
    /// The backend alone.
    pub backend: String,
    /// The suite folder's name (GeoAgent's benchmark rows).
    pub suite: String,
    /// The LLM alone (`--arch none`), else the agent.
    pub alone: bool,
    /// GeoAgent's tree search over each step (`--arch mcts`).
    pub search: bool,
    /// Each step from the gold prefix.
    pub gold_prefix: bool,
    /// `--interventions K` (0: self-debugging alone).
    pub interventions: usize,
    /// Its run records.
    pub records: Vec<StepRunRecord>,
}

/// Writes the comparison of several step folders into `out`: `report.md`
/// (every folder's figures; GeoAgent Table 4: step pass@1 per suite with
/// the LLM alone beside the agent per backend; Table 6: complete@1 per task
/// with its steps; the four error types), `results.json`, `results.csv`,
/// `tables/`, and with `html`, `report.html`.
pub fn write_comparison(
    folders: &[StepFolder],
    out: &Path,
    html: bool,
) -> std::io::Result<Vec<StepSummary>> {
    let summaries: Vec<StepSummary> = folders.iter().map(|f| summarise(&f.records)).collect();
    let json = json!({
        "folders": folders.iter().zip(&summaries).map(|(f, s)| json!({
            "label": f.label, "backend": f.backend, "suite": f.suite, "alone": f.alone, "search": f.search,
            "gold_prefix": f.gold_prefix, "interventions": f.interventions, "summary": s,
        })).collect::<Vec<_>>(),
    });
    write_atomic(&out.join("results.json"), format!("{json:#}\n").as_bytes())?;
    let mut csv = Table::new(
        "",
        ["folder", "task", "run", "step", "passed", "ending", "error"],
    );
    for f in folders {
        for r in &f.records {
            for s in &r.steps {
                csv.row([
                    f.label.clone(),
                    r.task.clone(),
                    r.run.to_string(),
                    s.step.to_string(),
                    s.passed.to_string(),
                    s.ending.clone(),
                    s.error.map(|e| e.name()).unwrap_or("").to_string(),
                ]);
            }
        }
    }
    write_atomic(&out.join("results.csv"), csv.csv().as_bytes())?;
    let doc = compared(folders, &summaries, out);
    super::write(&doc, out, html)?;
    Ok(summaries)
}

/// The report of several folders side by side.
fn compared(folders: &[StepFolder], summaries: &[StepSummary], out: &Path) -> Document {
    let mut doc = Document::titled("Step eval: folders compared");
    doc.text("complete@1: consecutive passed steps from the first over all steps; step pass@1: steps passed, each judged on its own (on the gold prefix: single-turn pass@1, GeoAgent's conversion of multi-turn tasks); task pass: every step passed; complete@1 (executed): counting steps whose code ran and gave an answer, right or not (GeoAgent's complete rate).");
    let mut overall = Table::new(
        "",
        [
            "folder",
            "suite",
            "runs",
            "complete@1",
            "complete@1 (executed)",
            "step pass@1",
            "task pass",
            "rounds per run",
            "tokens per run",
        ],
    );
    for (f, s) in folders.iter().zip(summaries) {
        overall.row([
            f.label.clone(),
            f.suite.clone(),
            s.runs.to_string(),
            format!("{:.3}", s.complete_at_1),
            format!("{:.3}", s.complete_at_1_executed),
            format!("{:.3}", s.step_pass_rate),
            format!("{:.3}", s.task_pass_rate),
            format!("{:.1}", s.rounds),
            format!("{:.0}", s.tokens),
        ]);
    }
    doc.table(overall);
    cost_and_accuracy(&mut doc, folders, summaries);
    table_4(&mut doc, folders, summaries);
    table_6(&mut doc, folders, summaries);
    geoagent_errors(&mut doc, folders, summaries);
    let rows: Vec<(&str, &StepSummary)> = folders
        .iter()
        .zip(summaries)
        .map(|(f, s)| (f.label.as_str(), s))
        .collect();
    function_calls_table(&rows, &mut doc);
    let by_label: Vec<(&str, &Breakdown)> = folders
        .iter()
        .zip(summaries)
        .map(|(f, s)| (f.label.as_str(), &s.by_label))
        .collect();
    labels::compared(&by_label, DIFFICULTY_RULE, &mut doc);
    let pass: Vec<BTreeMap<usize, f64>> = summaries.iter().map(pass_at_1).collect();
    crate::eval::reports::unit::draw_charts(
        &LabelCharts {
            models: by_label,
            errors: folders
                .iter()
                .zip(summaries)
                .map(|(f, s)| (f.label.as_str(), &s.errors))
                .collect(),
            pass_at: folders
                .iter()
                .zip(&pass)
                .map(|(f, p)| (f.label.as_str(), p))
                .collect(),
            efficiency: Vec::new(),
        },
        out,
        &mut doc,
    );
    doc
}

/// Tokens per run against step pass@1 and complete@1, with their Pareto
/// fronts.
fn cost_and_accuracy(doc: &mut Document, folders: &[StepFolder], summaries: &[StepSummary]) {
    let mut table = Table::new(
        "Cost and accuracy",
        ["folder", "tokens per run", "step pass@1", "front", "complete@1", "front"],
    )
    .with_note("Tokens per run against step pass@1 and complete@1; ◆ marks a folder on the Pareto front for that score (no other folder spends fewer tokens per run and scores higher). Step runs record no price, so the front is drawn against tokens.");
    let fronts = |score: &dyn Fn(&StepSummary) -> f64| {
        crate::eval::reports::task::cost::non_dominated(
            &summaries
                .iter()
                .map(|s| (s.tokens, score(s)))
                .collect::<Vec<_>>(),
        )
    };
    let (by_step, by_complete) = (fronts(&|s| s.step_pass_rate), fronts(&|s| s.complete_at_1));
    let mark = |on: bool| if on { "◆" } else { "" }.to_string();
    for (i, (f, s)) in folders.iter().zip(summaries).enumerate() {
        table.row([
            f.label.clone(),
            format!("{:.0}", s.tokens),
            format!("{:.3}", s.step_pass_rate),
            mark(by_step[i]),
            format!("{:.3}", s.complete_at_1),
            mark(by_complete[i]),
        ]);
    }
    doc.table(table);
}

/// How a step folder's runs were made: GeoAgent Table 4's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Solver {
    /// The LLM alone.
    Llm,
    /// gisclaw's agent.
    Agent,
    /// GeoAgent's tree search over each step.
    TreeSearch,
}

impl Solver {
    fn of(folder: &StepFolder) -> Solver {
        if folder.search {
            Solver::TreeSearch
        } else if folder.alone {
            Solver::Llm
        } else {
            Solver::Agent
        }
    }

    fn column(self) -> &'static str {
        match self {
            Solver::Llm => "LLM",
            Solver::Agent => "agent",
            Solver::TreeSearch => "GeoAgent (tree search)",
        }
    }
}

/// GeoAgent Table 4: step pass@1 per suite (rows) and backend, the LLM
/// alone beside the agent, and GeoAgent's tree search when a folder ran it.
fn table_4(doc: &mut Document, folders: &[StepFolder], summaries: &[StepSummary]) {
    let mut solvers = vec![Solver::Llm, Solver::Agent];
    if folders.iter().any(|f| f.search) {
        solvers.push(Solver::TreeSearch);
    }
    let mut backends: Vec<(&str, bool)> = Vec::new();
    for f in folders {
        if !backends.contains(&(f.backend.as_str(), f.gold_prefix)) {
            backends.push((&f.backend, f.gold_prefix));
        }
    }
    let mut suites: Vec<&str> = folders.iter().map(|f| f.suite.as_str()).collect();
    suites.dedup();
    let mut columns = vec!["suite".to_string()];
    for (b, prefix) in &backends {
        let from = if *prefix { " (gold prefix)" } else { "" };
        for solver in &solvers {
            columns.push(format!("{b}{from}: {}", solver.column()));
        }
    }
    let mut table = Table::new(
        "LLM alone vs agent (cf. GeoAgent Table 4: step pass@1)",
        columns,
    );
    for suite in &suites {
        let mut row = vec![suite.to_string()];
        for (b, prefix) in &backends {
            for solver in &solvers {
                let found = folders.iter().zip(summaries).find(|(f, _)| {
                    f.suite == *suite
                        && f.backend == *b
                        && f.gold_prefix == *prefix
                        && Solver::of(f) == *solver
                });
                row.push(found.map_or("–".into(), |(_, s)| format!("{:.3}", s.step_pass_rate)));
            }
        }
        table.row(row);
    }
    doc.table(table);
}

/// GeoAgent Table 6: complete@1 per task (mean over runs), with its steps.
fn table_6(doc: &mut Document, folders: &[StepFolder], summaries: &[StepSummary]) {
    let mut tasks: Vec<(String, usize)> = Vec::new();
    for f in folders {
        for r in &f.records {
            if !tasks.iter().any(|(t, _)| t == &r.task) {
                tasks.push((r.task.clone(), r.steps.len()));
            }
        }
    }
    tasks.sort();
    let mut columns = vec!["task".to_string(), "steps".into()];
    for f in folders {
        let mode = if f.interventions > 0 { "Hum." } else { "Aut." };
        columns.push(format!("{mode} {}", f.label));
    }
    let mut table = Table::new("complete@1 per task (cf. GeoAgent Table 6: self-debugging \"Aut.\" folders, and \"Hum.\" folders run with `--interventions K`, where the step's gold cell is shown once after K failing cells or a wrong answer; in parentheses their interventions per run)", columns);
    for (task, steps) in &tasks {
        let mut row = vec![task.clone(), steps.to_string()];
        for (f, s) in folders.iter().zip(summaries) {
            row.push(match s.per_task.get(task) {
                Some((_, c, _, _)) if f.interventions > 0 => {
                    let h = s.hints.get(task).copied().unwrap_or(0.0);
                    format!("{c:.2} ({h:.1})")
                }
                Some((_, c, _, _)) => format!("{c:.2}"),
                None => "–".into(),
            });
        }
        table.row(row);
    }
    doc.table(table);
}

/// Failing steps by GeoAgent's four error types, per folder.
fn geoagent_errors(doc: &mut Document, folders: &[StepFolder], summaries: &[StepSummary]) {
    let mut columns = vec!["folder".to_string()];
    columns.extend(GEOAGENT_TYPES.iter().map(|t| t.to_string()));
    let mut table = Table::new("Failing steps by GeoAgent's error types", columns)
        .with_note("From gisclaw's types: instruction following = `invalid_answer`, `output_type` (the code ran, the answer is wrong); hallucination = `attribute_parameter` (a function, attribute, keyword or name that does not exist); general code = `syntax`, `runtime`, `timeout`, `blocked_import`, `other`. Lack of information (the prompt did not say enough) was judged by hand in GeoAgent and is not told apart here (–); `infrastructure` failures are not the model's and are left out. Each cell: failing steps, and their share of the folder's (as GeoAgent reports them).");
    for (f, s) in folders.iter().zip(summaries) {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for (name, n) in &s.errors {
            if let Some(t) = ErrorType::ALL
                .iter()
                .find(|e| e.name() == name)
                .and_then(|e| geoagent_type(*e))
            {
                *counts.entry(t).or_default() += n;
            }
        }
        let total: usize = counts.values().sum();
        let mut row = vec![f.label.clone()];
        row.extend(GEOAGENT_TYPES.iter().map(|t| {
            if *t == "lack of information" {
                "–".to_string()
            } else {
                count_and_share(counts.get(t).copied().unwrap_or(0), total)
            }
        }));
        table.row(row);
    }
    doc.table(table);
}

/// A step summary's step pass@1 as the one pass@k it has.
fn pass_at_1(summary: &StepSummary) -> BTreeMap<usize, f64> {
    BTreeMap::from([(1, summary.step_pass_rate)])
}

/// GeoAgent Table 5's layout: the functions each step's code calls against
/// its gold cell's, one row per folder.
fn function_calls_table(rows: &[(&str, &StepSummary)], doc: &mut Document) {
    let mut table = Table::new(
        "Function calls (cf. GeoAgent Table 5)",
        ["folder", "steps", "accuracy", "precision", "recall", "F1", "Hamming loss"],
    )
    .with_note("Per attempted step, the distinct functions the code the model ran calls against those its gold cell calls (example-based, averaged over steps).");
    for (label, s) in rows {
        let m = &s.calls;
        table.row([
            label.to_string(),
            m.n.to_string(),
            f3(m.accuracy),
            f3(m.precision),
            f3(m.recall),
            f3(m.f1),
            f3(m.hamming_loss),
        ]);
    }
    doc.table(table);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::steps::complete_at_1;
    use crate::eval::running::step_eval::StepResult;

    fn record(task: &str, passed: &[bool]) -> StepRunRecord {
        StepRunRecord {
            task: task.into(),
            run: 1,
            steps: passed
                .iter()
                .enumerate()
                .map(|(i, p)| StepResult {
                    step: i + 1,
                    passed: *p,
                    problem: None,
                    error: (!p).then_some(ErrorType::InvalidAnswer),
                    ending: "step_done".into(),
                    // Every step ran; the failed ones gave a wrong answer.
                    executed: true,
                    labels: Default::default(),
                    calls: Vec::new(),
                    gold_calls: Vec::new(),
                    hints: 0,
                })
                .collect(),
            complete_at_1: complete_at_1(passed),
            complete_at_1_executed: 1.0,
            step_pass_rate: passed.iter().filter(|p| **p).count() as f64 / passed.len() as f64,
            passed: passed.iter().all(|p| *p),
            rounds: 4,
            tokens_in: 100,
            tokens_out: 10,
            llm_seconds: 0.0,
            sandbox_seconds: 0.0,
            ended: None,
            search: None,
        }
    }

    #[test]
    fn the_summary_averages_runs() {
        let s = summarise(&[
            record("A", &[true, true, false, true]),
            record("A", &[true; 4]),
            record("B", &[false, true, true, true]),
        ]);
        // complete@1: 0.5, 1, 0; step pass: 0.75, 1, 0.75; task pass: 0, 1, 0.
        assert!((s.complete_at_1 - 0.5).abs() < 1e-12);
        // Every step executed, right answer or not.
        assert!((s.complete_at_1_executed - 1.0).abs() < 1e-12);
        assert!((s.step_pass_rate - 2.5 / 3.0).abs() < 1e-12);
        assert!((s.task_pass_rate - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.per_task["A"], (2, 0.75, 0.875, 1));
        assert_eq!(s.errors["invalid_answer"], 2);
        assert_eq!(s.tokens, 110.0);
    }
}
