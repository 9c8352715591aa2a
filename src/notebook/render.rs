//! The nbformat 4.5 document of a run's notebook items: a markdown cell per
//! text, a code cell per cell with its outputs (`stream`, `execute_result`,
//! `display_data` with `image/png` or `image/jpeg`, `error`), and a first
//! code cell with the imports every sandbox session starts with.

use std::path::Path;

use base64::Engine;
use serde_json::{json, Value};

use super::{Item, NotebookMode, RecordedCell};
use crate::sandbox::preamble::{helpers_import_for, SESSION_IMPORTS};

/// The Jupyter kernel of the sandbox's venv, as `make setup` registers it
/// (`python -m ipykernel install --user --name gisclaw`).
pub const KERNEL_NAME: &str = "gisclaw";

/// Its display name.
pub const KERNEL_DISPLAY_NAME: &str = "gisclaw (the sandbox's Python)";

/// Largest image embedded; a bigger one is named instead.
const MAX_IMAGE_BYTES: u64 = 8 * 1024 * 1024;

/// The notebook of `items` for the run in `dir` (figures are read from it).
pub fn notebook(items: &[Item], dir: &Path, mode: NotebookMode) -> Value {
    let codes: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Cell(c) => Some(c.code.as_str()),
            Item::Markdown(..) => None,
        })
        .collect();
    let mut cells = Vec::new();
    let mut ids = 0usize;
    let mut next_id = || {
        ids += 1;
        format!("gisclaw-{ids}")
    };
    let preamble = format!(
        "# The imports every gisclaw sandbox session starts with. The kernel is\n# `gisclaw`, the sandbox's Python (registered by `make setup`); another\n# kernel needs geopandas, rasterio and matplotlib installed.\n{SESSION_IMPORTS}{}",
        helpers_import_for(&codes)
    );
    let mut count = 1u64;
    // The task (or a chat's first words) first, then the imports.
    let (head, rest) = match items.split_first() {
        Some((Item::Markdown(_, text), rest)) => (Some(text), rest),
        _ => (None, items),
    };
    if let Some(text) = head {
        cells.push(markdown_cell(next_id(), &fenced_data(text)));
    }
    cells.push(code_cell(next_id(), &preamble, count, Vec::new(), false));
    for item in rest {
        match item {
            Item::Markdown(_, text) => cells.push(markdown_cell(next_id(), text)),
            Item::Cell(cell) => {
                if !cell.reasoning.is_empty() {
                    let who = if cell.by_user { "You" } else { "Model" };
                    let text = cell
                        .reasoning
                        .iter()
                        .map(|r| format!("**{who}:** {r}"))
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    cells.push(markdown_cell(next_id(), &text));
                }
                if !cell.ok {
                    let why = cell.error.as_ref().map_or_else(
                        || "it did not run to its end".to_string(),
                        |(ename, evalue, _)| format!("`{ename}: {}`", first_line(evalue)),
                    );
                    cells.push(markdown_cell(
                        next_id(),
                        &format!("*Failed attempt ({why}); kept by `--notebook full`.*"),
                    ));
                }
                if cell.by_user && cell.reasoning.is_empty() {
                    cells.push(markdown_cell(next_id(), "*Your own cell (`/run`).*"));
                }
                count += 1;
                let outputs = outputs_of(cell, dir, count);
                cells.push(code_cell(next_id(), &cell.code, count, outputs, !cell.ok));
            }
        }
    }
    json!({
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            // The sandbox's venv as a kernel (`make setup` registers it):
            // a plain `python3` kernel lacks the GIS stack.
            "kernelspec": {
                "name": KERNEL_NAME,
                "display_name": KERNEL_DISPLAY_NAME,
                "language": "python",
            },
            "language_info": { "name": "python" },
            "gisclaw": {
                "version": env!("CARGO_PKG_VERSION"),
                "cells": match mode {
                    NotebookMode::Full => "every cell tried (failed ones tagged raises-exception)",
                    _ => "the cells the session kept (solution.py)",
                },
            },
        },
        "cells": cells,
    })
}

/// The first line of `text`.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// `text` as nbformat's multiline string: a list of lines, each but the
/// last ending with its newline.
fn lines(text: &str) -> Value {
    Value::Array(
        text.split_inclusive('\n')
            .map(|l| Value::String(l.to_string()))
            .collect(),
    )
}

/// The task's text with its `## Data` section (the schema card, whose
/// indented lines markdown would run together) in a fenced block.
fn fenced_data(text: &str) -> String {
    let mut out = String::new();
    let mut in_data = false;
    for line in text.lines() {
        if in_data && line.starts_with("## ") {
            out.push_str("```\n");
            in_data = false;
        }
        out.push_str(line);
        out.push('\n');
        if line.trim() == "## Data" {
            out.push_str("```text\n");
            in_data = true;
        }
    }
    if in_data {
        out.push_str("```\n");
    }
    out
}

fn markdown_cell(id: String, text: &str) -> Value {
    json!({ "cell_type": "markdown", "id": id, "metadata": {}, "source": lines(text.trim_end()) })
}

fn code_cell(id: String, code: &str, count: u64, outputs: Vec<Value>, failed: bool) -> Value {
    let metadata = if failed {
        json!({ "tags": ["raises-exception"] })
    } else {
        json!({})
    };
    json!({
        "cell_type": "code",
        "id": id,
        "metadata": metadata,
        "execution_count": count,
        "source": lines(code.trim_end()),
        "outputs": outputs,
    })
}

/// The outputs of one cell, in the order Jupyter shows them.
fn outputs_of(cell: &RecordedCell, dir: &Path, count: u64) -> Vec<Value> {
    let mut outputs = Vec::new();
    let stream = |name: &str, text: &str| json!({ "output_type": "stream", "name": name, "text": lines(text) });
    if let Some(observation) = &cell.observation {
        // A record older than the per-cell fields: the observation is all
        // there is.
        if !observation.trim().is_empty() {
            outputs.push(stream("stdout", observation));
        }
        return outputs;
    }
    if !cell.stdout.is_empty() {
        outputs.push(stream("stdout", &cell.stdout));
    }
    if !cell.stderr.is_empty() {
        outputs.push(stream("stderr", &cell.stderr));
    }
    for rel in &cell.wrote {
        if let Some(image) = image_output(dir, rel) {
            outputs.push(image);
        }
    }
    if let Some(display) = &cell.display {
        outputs.push(json!({
            "output_type": "execute_result",
            "execution_count": count,
            "data": { "text/plain": lines(display) },
            "metadata": {},
        }));
    }
    if let Some((ename, evalue, traceback)) = &cell.error {
        outputs.push(json!({
            "output_type": "error",
            "ename": ename,
            "evalue": evalue,
            "traceback": traceback.lines().collect::<Vec<_>>(),
        }));
    }
    outputs
}

/// A `display_data` output for an image file the cell wrote (PNG or JPEG),
/// or `None` for other files. A file gone or too big is named instead.
fn image_output(dir: &Path, rel: &str) -> Option<Value> {
    let mime = super::figure_mime(rel)?;
    let path = dir.join(rel);
    let note = |why: &str| {
        Some(json!({
            "output_type": "display_data",
            "data": { "text/plain": [format!("<{rel}: {why}>")] },
            "metadata": {},
        }))
    };
    // Read only as the cell could (crate::beneath): a link it planted to a
    // host file is named, never embedded.
    match crate::beneath::read_in_work(dir, &path, MAX_IMAGE_BYTES) {
        Ok(bytes) => Some(json!({
            "output_type": "display_data",
            "data": {
                mime: base64::engine::general_purpose::STANDARD.encode(bytes),
                "text/plain": [format!("<{rel}>")],
            },
            "metadata": {},
        })),
        Err(crate::beneath::Refused::TooLarge { size, .. }) => {
            note(&format!("{size} bytes, not embedded"))
        }
        Err(crate::beneath::Refused::Missing) => note("no longer in the run's folder"),
        Err(why) => note(&why.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::fenced_data;

    #[test]
    fn the_data_section_is_fenced_and_the_rest_left_as_markdown() {
        let task = "# Task t\nDo it.\n\n## Data\n1 file(s) in `data/`:\n- data/a.csv — table\n  columns: x (Real)\n\n## Outputs\n- pred_results/b.csv\n";
        let fenced = fenced_data(task);
        assert!(fenced.contains("## Data\n```text\n1 file(s)"), "{fenced}");
        assert!(
            fenced.contains("  columns: x (Real)\n\n```\n## Outputs"),
            "{fenced}"
        );
        assert!(fenced.starts_with("# Task t\nDo it."), "{fenced}");
    }
}
