//! Reports of finished eval folders. Each suite kind's report produces a
//! [`document::Document`] (tables, text, charts), which [`document`]
//! renders to markdown, CSV and HTML; the task suite's also writes its
//! JSON, charts and per-run pages.

pub mod document;
pub mod html;
pub mod inspect_log;
pub mod labels;
pub mod render;
pub mod step;
pub mod task;
pub mod unit;

use std::path::Path;

use document::Document;

/// Writes `doc` into `out` as `report.md` and `tables/`, and with `html`
/// as `report.html` (the document alone: the unit and step suites' page;
/// the task suite adds its runs to its own page).
pub fn write(doc: &Document, out: &Path, html: bool) -> std::io::Result<()> {
    crate::util::write_atomic(&out.join("report.md"), doc.markdown().as_bytes())?;
    doc.write_tables(&out.join("tables"))?;
    if html {
        html::write_document(doc, out, &out.display().to_string())?;
    }
    Ok(())
}
