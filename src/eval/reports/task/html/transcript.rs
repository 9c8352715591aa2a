//! One run of an eval as a conversation: its L1/L2/L3 scores beside the
//! task prompt (folded), the model's text, each cell's code (highlighted)
//! with what it printed, its error in red and the figures it wrote, the
//! Dual Agent's steps and the closing summary. Built from the run's folder
//! with [`crate::notebook::read_items`], the model the notebooks use.

use std::fmt::Write as _;
use std::path::Path;

use super::{f3, highlight};
use crate::eval::reports::html::md::{self, Images};
use crate::eval::reports::html::{data_uri, escape};
use crate::eval::running::record::RunRecord;
use crate::notebook::{self, Item, RecordedCell, TextKind};

/// Largest figure embedded in the page; a bigger one is named instead.
const MAX_FIGURE_BYTES: u64 = 2 * 1024 * 1024;

/// The run's scores and conversation as one `<article>`; `workdir` is the
/// run's folder, `label` its cell (`backend · arch`).
pub fn article(record: &RunRecord, composite: f64, label: &str, workdir: &Path) -> String {
    let mut html = String::new();
    let outcome = if record.success {
        "<span class=\"pass\">success</span>"
    } else {
        "<span class=\"fail\">failed</span>"
    };
    let _ = write!(
        html,
        "<article class=\"run\"><header><h2>{} · {} · run {}</h2><p>{outcome} · S = {} · {} round(s) · {} cell(s), {} failed · {} tokens in / {} out{}</p></header>",
        escape(&record.task),
        escape(label),
        record.run,
        f3(composite),
        record.rounds,
        record.cells,
        record.failed_cells,
        record.tokens_in,
        record.tokens_out,
        record
            .run_error
            .map(|e| format!(" · error: {}", e.name()))
            .unwrap_or_default(),
    );
    html.push_str(&scores(record));
    html.push_str("<div class=\"conversation\">");
    match notebook::read_items(&workdir.join("transcript.jsonl")) {
        Ok(items) if !items.is_empty() => {
            // A figure is read once, at the end: shown under the last cell
            // that wrote it, named under the earlier ones.
            let mut last_writer = std::collections::HashMap::new();
            for (i, item) in items.iter().enumerate() {
                if let Item::Cell(cell) = item {
                    for path in &cell.wrote {
                        last_writer.insert(path.as_str(), i);
                    }
                }
            }
            for (i, item) in items.iter().enumerate() {
                let shown = |path: &str| last_writer.get(path) == Some(&i);
                conversation_item(&mut html, item, workdir, &shown);
            }
        }
        Ok(_) => html.push_str("<p class=\"note\">The transcript holds no message.</p>"),
        Err(e) => {
            let _ = write!(
                html,
                "<p class=\"note\">No transcript: {}</p>",
                escape(&e.to_string())
            );
        }
    }
    html.push_str("</div></article>");
    html
}

/// The L1 (code), L2 (process) and L3 (outputs) scores of a run.
fn scores(r: &RunRecord) -> String {
    let mut html = String::from("<aside class=\"scores\"><table>");
    let mut row = |layer: &str, name: &str, value: String| {
        let _ = write!(
            html,
            "<tr><td>{layer}</td><th>{}</th><td>{}</td></tr>",
            escape(name),
            escape(&value)
        );
    };
    row("L3", "Q_out", f3(r.q_out));
    for o in &r.outputs {
        let note = if o.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", o.note)
        };
        row("L3", &o.path, format!("{}{note}", f3(o.score)));
    }
    row("L2", "C_emb", r.c_emb.map_or_else(|| "–".into(), f3));
    if let Some(v) = &r.judge {
        let grades: Vec<String> = v
            .grades
            .iter()
            .map(|(k, g)| format!("{k} {}", g.score))
            .collect();
        row("L2", "judge", grades.join(", "));
    }
    row("L1", "API F1", f3(r.code.api.f1));
    row(
        "L1",
        "CodeBLEU",
        r.code
            .codebleu
            .as_ref()
            .map_or_else(|| "–".into(), |c| f3(c.codebleu)),
    );
    row("L1", "BLEU-4", f3(r.code.bleu4));
    html.push_str("</table></aside>");
    html
}

/// One item of the conversation.
/// `shown` tells whether a figure the item's cell wrote is drawn under it.
fn conversation_item(html: &mut String, item: &Item, workdir: &Path, shown: &dyn Fn(&str) -> bool) {
    match item {
        Item::Markdown(TextKind::Task, text) => {
            let _ = write!(
                html,
                "<details class=\"task\"><summary>The task as the model read it</summary>{}</details>",
                md::to_html(text, Images::AltText)
            );
        }
        Item::Markdown(kind, text) => {
            let class = match kind {
                TextKind::User => "user",
                TextKind::Step => "step",
                TextKind::Summary => "summary",
                _ => "model",
            };
            let _ = write!(
                html,
                "<div class=\"{class}\">{}</div>",
                md::to_html(text, Images::AltText)
            );
        }
        Item::Cell(cell) => code_cell(html, cell, workdir, shown),
    }
}

/// A cell: the text before it, its code, its outputs.
fn code_cell(html: &mut String, cell: &RecordedCell, workdir: &Path, shown: &dyn Fn(&str) -> bool) {
    for text in &cell.reasoning {
        let who = if cell.by_user { "user" } else { "model" };
        let _ = write!(
            html,
            "<div class=\"{who}\">{}</div>",
            md::to_html(text, Images::AltText)
        );
    }
    let _ = write!(
        html,
        "<div class=\"cell{}\"><pre class=\"code\"><code>{}</code></pre>",
        if cell.ok { "" } else { " failed" },
        highlight::python(cell.code.trim_end())
    );
    let mut output = |class: &str, text: &str| {
        if !text.trim().is_empty() {
            let _ = write!(
                html,
                "<pre class=\"{class}\">{}</pre>",
                escape(text.trim_end())
            );
        }
    };
    output("stdout", &cell.stdout);
    if let Some(d) = &cell.display {
        output("display", d);
    }
    output("stderr", &cell.stderr);
    if let Some((ename, evalue, traceback)) = &cell.error {
        let text = if traceback.trim().is_empty() {
            format!("{ename}: {evalue}")
        } else {
            traceback.clone()
        };
        output("error", &text);
    }
    if let Some(obs) = &cell.observation {
        output(if cell.ok { "stdout" } else { "error" }, obs);
    }
    for path in cell
        .wrote
        .iter()
        .filter(|p| notebook::figure_mime(p).is_some())
    {
        if shown(path) {
            figure(html, workdir, path);
        } else {
            let _ = write!(
                html,
                "<p class=\"note\">wrote {} (its last version is shown where it was last written)</p>",
                escape(path)
            );
        }
    }
    html.push_str("</div>");
}

/// A PNG or JPEG the cell wrote, embedded (a big one named with its size).
fn figure(html: &mut String, workdir: &Path, path: &str) {
    let Some(mime) = notebook::figure_mime(path) else {
        return;
    };
    // Read only as the cell could (crate::beneath): a planted link to a
    // host file is named, never embedded.
    match crate::beneath::read_in_work(workdir, Path::new(path), MAX_FIGURE_BYTES) {
        Ok(bytes) => {
            let _ = write!(
                html,
                "<figure><img alt=\"{0}\" src=\"{1}\"><figcaption>{0}</figcaption></figure>",
                escape(path),
                data_uri(mime, &bytes)
            );
        }
        Err(crate::beneath::Refused::TooLarge { size, .. }) => {
            let _ = write!(
                html,
                "<p class=\"note\">figure {} ({} KB, not embedded)</p>",
                escape(path),
                size / 1024
            );
        }
        Err(
            why @ (crate::beneath::Refused::Outside
            | crate::beneath::Refused::Special(_)
            | crate::beneath::Refused::NotForTheSandbox),
        ) => {
            let _ = write!(
                html,
                "<p class=\"note\">figure {}: {}</p>",
                escape(path),
                escape(&why.to_string())
            );
        }
        Err(_) => {
            let _ = write!(
                html,
                "<p class=\"note\">figure {} (no longer there)</p>",
                escape(path)
            );
        }
    }
}
