//! The task suite's `report.html`: the report's [`Document`] (through the
//! shared page, [`crate::eval::reports::html`]), a table of every run
//! linking to its transcript rendered as a conversation ([`transcript`])
//! with its L1/L2/L3 scores, and the runs of one task by every cell (SA,
//! DA, MCTS, other models) side by side.
//!
//! Unlike the other reports this one reads the run folders too (their
//! transcripts and figures), through the loaded [`EvalData`].

mod highlight;
mod transcript;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::load::EvalData;
use super::model::Report;
use crate::eval::reports::document::{f3, Document};
use crate::eval::reports::html::{self as page, escape, Shell};
use crate::util::write_atomic;

/// Writes `out/report.html` from the report, its document (whose
/// `charts/…` are read from `out`) and the run folders of `evals`.
/// Returns the page's path.
pub fn write(
    report: &Report,
    evals: &[EvalData],
    doc: &Document,
    out: &Path,
) -> std::io::Result<PathBuf> {
    let folders = report
        .evals
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" · ");
    let mut views = format!(
        "<section id=\"view-report\" class=\"view\">{}</section>",
        page::document(doc, out)
    );
    let runs = runs_of(report, evals);
    runs_table(&mut views, &runs);
    tasks_table(&mut views, &runs);
    views.push_str(
        "<section id=\"view-run\" class=\"view\" hidden><div id=\"run-view\"></div></section>\
         <section id=\"view-compare\" class=\"view\" hidden><h1 id=\"compare-title\"></h1><p id=\"compare-runs\"></p><div id=\"compare-grid\"></div></section>",
    );
    for run in &runs {
        let _ = write!(
            views,
            "<template id=\"t:{}\" data-task=\"{}\" data-run=\"{}\" data-cell=\"{}\">{}</template>",
            run.key,
            run.task_key,
            run.record.run,
            escape(&run.label),
            transcript::article(run.record, run.composite, &run.label, &run.workdir)
        );
    }
    let html = page::page(
        &Shell {
            title: "gisclaw eval report",
            nav: &[
                ("#report", "Report"),
                ("#runs", "Runs"),
                ("#tasks", "Tasks side by side"),
            ],
            aside: &folders,
        },
        &views,
    );
    let path = out.join("report.html");
    write_atomic(&path, html.as_bytes())?;
    Ok(path)
}

/// One run of the page.
struct Run<'a> {
    /// Its fragment key (`0.T01.single.1`, safe in ids and URLs).
    key: String,
    /// Its task's key (safe in ids and URLs).
    task_key: String,
    /// Its cell: `backend · arch`.
    label: String,
    record: &'a crate::eval::running::record::RunRecord,
    composite: f64,
    workdir: PathBuf,
}

/// Every recorded run of every folder, in the report's order.
fn runs_of<'a>(report: &Report, evals: &'a [EvalData]) -> Vec<Run<'a>> {
    let mut runs = Vec::new();
    for (i, eval) in evals.iter().enumerate() {
        for arch in &eval.manifest.archs {
            for r in eval.records.iter().filter(|r| r.arch == arch.name()) {
                runs.push(Run {
                    key: format!("{i}.{}.{}.{}", key(&r.task), key(&r.arch), r.run),
                    task_key: key(&r.task),
                    label: format!("{} · {arch}", eval.manifest.condition()),
                    record: r,
                    composite: report.weights.composite(r),
                    workdir: eval
                        .dir
                        .join("runs")
                        .join(&r.task)
                        .join(format!("{arch}-{}", r.run)),
                });
            }
        }
    }
    runs
}

/// The table of every run, each linking to its transcript and to its
/// task's runs side by side.
fn runs_table(html: &mut String, runs: &[Run]) {
    html.push_str(
        "<section id=\"view-runs\" class=\"view\" hidden><h1>Runs</h1>\
         <p>Every recorded run; click a header to sort, a run to read its transcript, a task to see its runs by every cell side by side.</p>\
         <table class=\"sortable\"><thead><tr><th>task</th><th>cell</th><th>run</th><th>outcome</th><th>S</th><th>Q_out</th><th>F_api</th><th>C_emb</th><th>CodeBLEU</th><th>rounds</th><th>cells (failed)</th><th>tokens in</th><th>tokens out</th><th>cost</th><th>error</th></tr></thead><tbody>",
    );
    for run in runs {
        let r = run.record;
        let _ = write!(
            html,
            "<tr><td><a href=\"#compare:{}:{}\">{}</a></td><td>{}</td><td><a class=\"open-run\" href=\"#run:{}\">run {}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            run.task_key,
            r.run,
            escape(&r.task),
            escape(&run.label),
            run.key,
            r.run,
            if r.success {
                "<span class=\"pass\">success</span>"
            } else {
                "<span class=\"fail\">failed</span>"
            },
            f3(run.composite),
            f3(r.q_out),
            f3(r.code.api.f1),
            r.c_emb.map_or_else(|| "–".into(), f3),
            r.code
                .codebleu
                .as_ref()
                .map_or_else(|| "–".into(), |c| f3(c.codebleu)),
            r.rounds,
            r.cells,
            r.failed_cells,
            r.tokens_in,
            r.tokens_out,
            r.cost_usd.map_or_else(|| "–".into(), |c| format!("${c:.4}")),
            r.run_error.map_or("", |e| e.name()),
        );
    }
    html.push_str("</tbody></table></section>");
}

/// Per task and run number, a link to every cell's run side by side, with
/// the outcomes at a glance.
fn tasks_table(html: &mut String, runs: &[Run]) {
    let mut tasks: Vec<(&str, &str)> = Vec::new();
    for run in runs {
        if !tasks.iter().any(|(k, _)| *k == run.task_key) {
            tasks.push((&run.task_key, &run.record.task));
        }
    }
    html.push_str(
        "<section id=\"view-tasks\" class=\"view\" hidden><h1>Tasks side by side</h1>\
         <p>Each task's runs of the same number, one column per cell (Single Agent, Dual Agent, tree search, other models or conditions).</p>\
         <table class=\"sortable\"><thead><tr><th>task</th><th>runs side by side</th><th>outcomes</th></tr></thead><tbody>",
    );
    for (task_key, task) in tasks {
        let of_task: Vec<&Run> = runs.iter().filter(|r| r.task_key == task_key).collect();
        let numbers: BTreeSet<usize> = of_task.iter().map(|r| r.record.run).collect();
        let links: Vec<String> = numbers
            .iter()
            .map(|n| format!("<a href=\"#compare:{task_key}:{n}\">run {n}</a>"))
            .collect();
        let outcomes: Vec<String> = of_task
            .iter()
            .map(|r| {
                format!(
                    "<span class=\"{}\" title=\"{} run {}\">{}</span>",
                    if r.record.success { "pass" } else { "fail" },
                    escape(&r.label),
                    r.record.run,
                    if r.record.success { "✓" } else { "✗" }
                )
            })
            .collect();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(task),
            links.join(" "),
            outcomes.join("")
        );
    }
    html.push_str("</tbody></table></section>");
}

/// `text` as a key safe in element ids and URL fragments: ASCII letters,
/// digits, `-` and `_` kept, every other byte as `~XX`.
fn key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "~{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_safe_in_ids_and_fragments_and_distinct() {
        assert_eq!(key("T01"), "T01");
        assert_eq!(key("a b:c"), "a~20b~3Ac");
        assert_ne!(key("a.b"), key("a~2Eb"), "~ itself is encoded");
        assert_eq!(key("é"), "~C3~A9");
    }
}
