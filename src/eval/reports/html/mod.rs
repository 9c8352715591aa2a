//! `report.html`: a report as one self-contained page for a browser. Every
//! suite kind's [`Document`] renders here ([`document`]): its tables
//! sortable by a click on a header, its charts embedded. The task suite's
//! page adds views of its runs (`super::task::html`) to the same shell
//! ([`page`]).
//!
//! Self-contained: charts are embedded as `data:` URIs, the style and the
//! script are inline, and a Content-Security-Policy allows nothing else —
//! no request leaves the page when it is viewed, and no script but its own
//! (nonce) runs, whatever a model or a data file wrote into a report (raw
//! HTML in it is shown as text, see [`md`]).

pub mod md;

use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use base64::Engine;

use super::document::{Block, Document, Table};
use crate::util::write_atomic;

/// The page's style.
const STYLE: &str = include_str!("page.css");
/// The page's script: views by URL fragment, sortable tables, side by side.
const SCRIPT: &str = include_str!("page.js");

/// The page's parts around its views: its `<title>`, the links of its
/// navigation bar (`#fragment`, label), and a note at the bar's right end.
pub struct Shell<'a> {
    /// The page's title.
    pub title: &'a str,
    /// Navigation links: (`#fragment`, label).
    pub nav: &'a [(&'a str, &'a str)],
    /// Shown at the bar's right end (the eval folders).
    pub aside: &'a str,
}

/// The whole page: the shell around `views` (HTML of `<section
/// class="view">` elements; the first, `view-report`, is shown first).
pub fn page(shell: &Shell, views: &str) -> String {
    let nonce = nonce();
    let mut html = String::with_capacity(views.len() + STYLE.len() + SCRIPT.len() + 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'\">\
         <link rel=\"icon\" href=\"data:,\">\
         <title>{}</title><style nonce=\"{nonce}\">{STYLE}</style></head><body><nav><strong>gisclaw eval</strong>",
        escape(shell.title)
    );
    for (href, label) in shell.nav {
        let _ = write!(html, " <a href=\"{}\">{}</a>", escape(href), escape(label));
    }
    let _ = writeln!(
        html,
        "<span class=\"folders\">{}</span></nav><main>{views}</main><script nonce=\"{nonce}\">{SCRIPT}</script></body></html>",
        escape(shell.aside)
    );
    html
}

/// `doc` as HTML, its charts read from under `out` (the report's folder)
/// and embedded.
pub fn document(doc: &Document, out: &Path) -> String {
    let mut html = String::new();
    for block in &doc.blocks {
        match block {
            Block::Title(t) => {
                let _ = write!(html, "<h1>{}</h1>", md::inline(t));
            }
            Block::Heading { level, text } => heading(&mut html, *level, text),
            Block::Text(t) => html.push_str(&md::to_html(t, md::Images::AltText)),
            Block::Table { level, table } => {
                if !table.title.is_empty() {
                    heading(&mut html, *level, &table.title);
                }
                if !table.note.trim().is_empty() {
                    html.push_str(&md::to_html(&table.note, md::Images::AltText));
                }
                grid(&mut html, table);
            }
            Block::Chart(c) => match chart_uri(out, &c.file) {
                Some(uri) => {
                    let _ = write!(
                        html,
                        "<figure><img src=\"{uri}\" alt=\"{0}\"><figcaption>{0}</figcaption></figure>",
                        escape(&c.caption)
                    );
                }
                None => {
                    let _ = write!(html, "<p>[chart not found: {}]</p>", escape(&c.caption));
                }
            },
        }
    }
    html
}

/// Writes `out/report.html`: `doc` alone as the page's one view (the unit
/// and step suites' page). Returns the page's path.
pub fn write_document(doc: &Document, out: &Path, folders: &str) -> std::io::Result<PathBuf> {
    let title = doc.title().unwrap_or("gisclaw eval report");
    let views = format!(
        "<section id=\"view-report\" class=\"view\">{}</section>",
        document(doc, out)
    );
    let page = page(
        &Shell {
            title,
            nav: &[("#report", "Report")],
            aside: folders,
        },
        &views,
    );
    let path = out.join("report.html");
    write_atomic(&path, page.as_bytes())?;
    Ok(path)
}

/// A heading of `level` (2 or 3) with an id made from its text.
fn heading(html: &mut String, level: u8, text: &str) {
    let level = level.clamp(2, 3);
    let _ = write!(
        html,
        "<h{level} id=\"{}\">{}</h{level}>",
        anchor(text),
        md::inline(text)
    );
}

/// A table's grid, sortable by the page's script.
fn grid(html: &mut String, table: &Table) {
    html.push_str("<table class=\"sortable\"><thead><tr>");
    for c in &table.columns {
        let _ = write!(html, "<th>{}</th>", md::inline(c));
    }
    html.push_str("</tr></thead><tbody>");
    for row in &table.rows {
        html.push_str("<tr>");
        for c in row {
            let _ = write!(html, "<td>{}</td>", md::inline(c));
        }
        html.push_str("</tr>");
    }
    html.push_str("</tbody></table>");
}

/// A heading's id: lower-case ASCII letters and digits, runs of anything
/// else as `-` (`s-` in front so it never names a view or a run).
fn anchor(text: &str) -> String {
    let mut out = String::from("s-");
    for c in super::document::plain(text).chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The `data:` URI of a chart the report names (`charts/x.png` under
/// `out`); `None` for anything else.
pub fn chart_uri(out: &Path, url: &str) -> Option<String> {
    let name = url.strip_prefix("charts/")?;
    if name.contains('/') || name.contains("..") || !name.ends_with(".png") {
        return None;
    }
    let bytes = std::fs::read(out.join("charts").join(name)).ok()?;
    Some(data_uri("image/png", &bytes))
}

/// `bytes` as a `data:` URI.
pub fn data_uri(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// `text` with HTML's special characters escaped (for text and quoted
/// attribute values).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A fresh 128-bit nonce for the page's own style and script.
fn nonce() -> String {
    let state = std::collections::hash_map::RandomState::new();
    let mut a = state.build_hasher();
    a.write_u64(1);
    let mut b = state.build_hasher();
    b.write_u64(2);
    format!("{:016x}{:016x}", a.finish(), b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chart_files_under_the_folder_are_embedded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("charts")).unwrap();
        std::fs::write(dir.path().join("charts/a.png"), b"PNG").unwrap();
        assert_eq!(
            chart_uri(dir.path(), "charts/a.png").as_deref(),
            Some("data:image/png;base64,UE5H")
        );
        assert_eq!(chart_uri(dir.path(), "charts/../charts/a.png"), None);
        assert_eq!(chart_uri(dir.path(), "/etc/passwd"), None);
        assert_ne!(nonce(), nonce());
    }

    #[test]
    fn a_document_becomes_headings_sortable_tables_and_embedded_charts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("charts")).unwrap();
        std::fs::write(dir.path().join("charts/a.png"), b"PNG").unwrap();
        let mut doc = Document::titled("Step eval: <m>");
        let mut t = Table::new("Per `task`", ["task", "pass"]).with_note("Every **step**.");
        t.row(["<script>alert(1)</script>", "**0.5**"]);
        doc.table(t);
        doc.chart("charts/a.png", "pass \"@1\"");
        doc.chart("charts/gone.png", "gone");
        let html = document(&doc, dir.path());
        assert!(html.starts_with("<h1>Step eval: &lt;m&gt;</h1>"), "{html}");
        assert!(
            html.contains("<h2 id=\"s-per-task\">Per <code>task</code></h2>"),
            "{html}"
        );
        assert!(
            html.contains("<p>Every <strong>step</strong>.</p>"),
            "{html}"
        );
        assert!(
            html.contains(
                "<table class=\"sortable\"><thead><tr><th>task</th><th>pass</th></tr></thead>"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td><strong>0.5</strong></td>"
            ),
            "{html}"
        );
        assert!(
            html.contains("<img src=\"data:image/png;base64,UE5H\" alt=\"pass &quot;@1&quot;\">"),
            "{html}"
        );
        assert!(html.contains("[chart not found: gone]"), "{html}");
        assert!(!html.contains("<script"), "{html}");
    }

    #[test]
    fn the_page_allows_nothing_but_its_own_style_and_script() {
        let page = page(
            &Shell {
                title: "t</title><script>",
                nav: &[("#report", "Report")],
                aside: "/tmp/<x>",
            },
            "<section id=\"view-report\" class=\"view\"></section>",
        );
        assert!(page.contains("default-src 'none'; img-src data:"), "{page}");
        assert!(
            page.contains("<title>t&lt;/title&gt;&lt;script&gt;</title>"),
            "{page}"
        );
        assert!(page.contains("/tmp/&lt;x&gt;"), "{page}");
        assert_eq!(page.matches("<script").count(), 1, "{page}");
    }
}
