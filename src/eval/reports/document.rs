//! The one report model: a [`Document`] of headings, text, [`Table`]s and
//! [`Chart`]s, rendered here to markdown ([`Document::markdown`]), to one
//! CSV file per table ([`Document::write_tables`]) and to HTML
//! ([`super::html::document`]). The task, unit and step reports only
//! produce documents; none of them formats a table itself.
//!
//! Cells, headings and text are markdown (`**bold**`, `` `code` ``): the
//! markdown renderer escapes a cell's `|` and line breaks, the CSV files
//! carry plain text, and the HTML renderer shows raw HTML in them as text.

use std::path::Path;

use crate::util::write_atomic;

/// One table: its title (a heading above it, none when empty), what its
/// columns mean (`note`, a paragraph between the title and the table), its
/// column names and its rows (each as long as `columns`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// The heading above the table; empty for none.
    pub title: String,
    /// The column names.
    pub columns: Vec<String>,
    /// The rows, cell by cell (markdown text).
    pub rows: Vec<Vec<String>>,
    /// A paragraph between the title and the table; empty for none.
    pub note: String,
}

impl Table {
    /// A table titled `title` with these columns and no rows yet.
    pub fn new<S: Into<String>>(
        title: impl Into<String>,
        columns: impl IntoIterator<Item = S>,
    ) -> Table {
        Table {
            title: title.into(),
            columns: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            note: String::new(),
        }
    }

    /// The same table with `note` under its title.
    pub fn with_note(mut self, note: impl Into<String>) -> Table {
        self.note = note.into();
        self
    }

    /// Appends a row; a short row is padded with `–`, a long one keeps
    /// every cell (a report's bug shows, rather than a lost figure).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        while cells.len() < self.columns.len() {
            cells.push("–".into());
        }
        self.rows.push(cells);
    }

    /// The table alone (no title or note) as a GitHub markdown table.
    pub fn markdown_grid(&self) -> String {
        let line = |cells: &[String]| {
            let mut out = String::from("|");
            for c in cells {
                out.push(' ');
                out.push_str(&markdown_cell(c));
                out.push_str(" |");
            }
            out.push('\n');
            out
        };
        let mut out = line(&self.columns);
        out.push('|');
        out.push_str(&"---|".repeat(self.columns.len()));
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }

    /// The same table with markdown's emphasis and code marks taken out of
    /// every cell (for a spreadsheet).
    pub fn plain(&self) -> Table {
        let cells = |row: &[String]| row.iter().map(|c| plain(c)).collect::<Vec<_>>();
        Table {
            title: self.title.clone(),
            columns: cells(&self.columns),
            rows: self.rows.iter().map(|r| cells(r)).collect(),
            note: self.note.clone(),
        }
    }

    /// What names the table: its title, else the first six words of its
    /// note.
    pub fn name(&self) -> String {
        if self.title.trim().is_empty() {
            self.note
                .split_whitespace()
                .take(6)
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            self.title.clone()
        }
    }

    /// The table as CSV (RFC 4180: a header row, fields quoted when they
    /// hold a comma, quote or line break), every cell as it is.
    pub fn csv(&self) -> String {
        let line = |cells: &[String]| {
            let fields: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
            fields.join(",") + "\n"
        };
        let mut out = line(&self.columns);
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// A chart the report drew: its file under the report's folder
/// (`charts/x.png`) and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The PNG's path relative to the report's folder.
    pub file: String,
    /// What it shows (the markdown image's alt text, the HTML caption).
    pub caption: String,
}

/// One piece of a report, in reading order.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// The report's title (one per document, first).
    Title(String),
    /// A section heading: level 2 (`##`) or 3 (`###`).
    Heading {
        /// 2 or 3.
        level: u8,
        /// Its text (markdown).
        text: String,
    },
    /// A paragraph (markdown; may hold several lines or a list).
    Text(String),
    /// A table under a heading of `level` (when it has a title).
    Table {
        /// The level of its title's heading: 2 or 3.
        level: u8,
        /// The table.
        table: Table,
    },
    /// A chart.
    Chart(Chart),
}

/// A report: blocks in reading order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Document {
    /// The blocks, first to last.
    pub blocks: Vec<Block>,
}

impl Document {
    /// A document titled `title`.
    pub fn titled(title: impl Into<String>) -> Document {
        Document {
            blocks: vec![Block::Title(title.into())],
        }
    }

    /// The document's title (its first [`Block::Title`]), if any.
    pub fn title(&self) -> Option<&str> {
        self.blocks.iter().find_map(|b| match b {
            Block::Title(t) => Some(t.as_str()),
            _ => None,
        })
    }

    /// Appends a section heading (`##`).
    pub fn heading(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Heading {
            level: 2,
            text: text.into(),
        });
    }

    /// Appends a sub-section heading (`###`).
    pub fn subheading(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Heading {
            level: 3,
            text: text.into(),
        });
    }

    /// Appends a paragraph.
    pub fn text(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Text(text.into()));
    }

    /// Appends a table whose title is a section heading (`##`).
    pub fn table(&mut self, table: Table) {
        self.blocks.push(Block::Table { level: 2, table });
    }

    /// Appends a table whose title is a sub-section heading (`###`).
    pub fn subtable(&mut self, table: Table) {
        self.blocks.push(Block::Table { level: 3, table });
    }

    /// Appends a chart.
    pub fn chart(&mut self, file: impl Into<String>, caption: impl Into<String>) {
        self.blocks.push(Block::Chart(Chart {
            file: file.into(),
            caption: caption.into(),
        }));
    }

    /// Appends every block of `other` (its title, if any, left out).
    pub fn extend(&mut self, other: Document) {
        self.blocks.extend(
            other
                .blocks
                .into_iter()
                .filter(|b| !matches!(b, Block::Title(_))),
        );
    }

    /// Every table, in reading order.
    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Table { table, .. } => Some(table),
            _ => None,
        })
    }

    /// The document as markdown (`report.md`): blocks separated by a blank
    /// line.
    pub fn markdown(&self) -> String {
        let mut parts: Vec<String> = Vec::with_capacity(self.blocks.len());
        for block in &self.blocks {
            match block {
                Block::Title(t) => parts.push(format!("# {}\n", one_line(t))),
                Block::Heading { level, text } => parts.push(heading(*level, text)),
                Block::Text(t) => parts.push(format!("{}\n", t.trim_end())),
                Block::Table { level, table } => {
                    if !table.title.is_empty() {
                        parts.push(heading(*level, &table.title));
                    }
                    if !table.note.trim().is_empty() {
                        parts.push(format!("{}\n", table.note.trim_end()));
                    }
                    parts.push(table.markdown_grid());
                }
                Block::Chart(c) => parts.push(format!("![{}]({})\n", one_line(&c.caption), c.file)),
            }
        }
        parts.join("\n")
    }

    /// Writes every table as its own CSV file into `dir` (made if need
    /// be): `01-<title>.csv`, numbered in reading order, the title (or, for
    /// an untitled table, the first words of its note) reduced to ASCII
    /// letters, digits and `-`. Files of an earlier report that
    /// this one does not write are removed, so the folder is this report's.
    pub fn write_tables(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        std::fs::create_dir_all(dir)?;
        let mut names = Vec::new();
        for (i, table) in self.tables().enumerate() {
            let name = format!("{:02}-{}.csv", i + 1, slug(&table.name()));
            write_atomic(&dir.join(&name), table.plain().csv().as_bytes())?;
            names.push(name);
        }
        for entry in std::fs::read_dir(dir)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours =
                name.ends_with(".csv") && name.as_bytes().first().is_some_and(u8::is_ascii_digit);
            if ours && !names.contains(&name) && entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(names)
    }
}

/// A number for a cell: 3 decimals, `–` when it is not finite.
pub fn f3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "–".into()
    }
}

/// A number for a cell: 2 decimals, `–` when it is not finite.
pub fn f2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "–".into()
    }
}

/// A markdown heading of `level` (2 or 3).
fn heading(level: u8, text: &str) -> String {
    format!(
        "{} {}\n",
        "#".repeat(usize::from(level.clamp(1, 6))),
        one_line(text)
    )
}

/// `text` on one line (line breaks as spaces).
fn one_line(text: &str) -> String {
    text.replace(['\r', '\n'], " ")
}

/// A cell for a markdown table: `|` escaped, on one line.
fn markdown_cell(text: &str) -> String {
    one_line(text).replace('|', "\\|")
}

/// A cell's text without markdown's emphasis and code marks.
pub fn plain(text: &str) -> String {
    text.replace("**", "").replace('`', "")
}

/// One CSV field, quoted when it must be.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A file-name part from a title: ASCII letters and digits, runs of
/// anything else as one `-`, at most 60 bytes; `table` when nothing is left.
fn slug(title: &str) -> String {
    let mut out = String::new();
    for c in plain(title).chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.truncate(60);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "table".into()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Document {
        let mut doc = Document::titled("Step eval: m");
        doc.text("Two tasks.");
        let mut t = Table::new("Per task", ["task", "pass"]).with_note("Pass: every step.");
        t.row(["A|B", "**0.500**"]);
        t.row(["C"]);
        doc.table(t);
        doc.subtable(Table::new("", ["x"]));
        doc.chart("charts/a.png", "pass@1");
        doc
    }

    #[test]
    fn markdown_puts_title_note_and_grid_in_order_with_cells_escaped() {
        assert_eq!(
            sample().markdown(),
            "# Step eval: m\n\nTwo tasks.\n\n## Per task\n\nPass: every step.\n\n| task | pass |\n|---|---|\n| A\\|B | **0.500** |\n| C | – |\n\n| x |\n|---|\n\n![pass@1](charts/a.png)\n"
        );
    }

    #[test]
    fn csv_is_quoted_where_it_must_be_and_plain_on_request() {
        let mut t = Table::new("t", ["a", "b"]);
        t.row(["x, y", "say \"hi\""]);
        t.row(["**1**", "`f`"]);
        assert_eq!(t.csv(), "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n**1**,`f`\n");
        assert_eq!(t.plain().csv(), "a,b\n\"x, y\",\"say \"\"hi\"\"\"\n1,f\n");
    }

    #[test]
    fn tables_are_written_one_file_each_and_stale_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("07-old.csv"), "stale").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "kept").unwrap();
        let mut doc = sample();
        doc.table(Table::new("", ["y"]).with_note("The failed runs in GeoAgent's four types (…)"));
        let names = doc.write_tables(dir.path()).unwrap();
        assert_eq!(
            names,
            [
                "01-per-task.csv",
                "02-table.csv",
                "03-the-failed-runs-in-geoagent-s-four.csv"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("01-per-task.csv")).unwrap(),
            "task,pass\nA|B,0.500\nC,–\n"
        );
        assert!(!dir.path().join("07-old.csv").exists());
        assert!(dir.path().join("notes.txt").exists());
    }

    #[test]
    fn slugs_are_short_ascii_and_never_empty() {
        assert_eq!(
            slug("LLM alone vs agent (cf. GeoAgent Table 4)"),
            "llm-alone-vs-agent-cf-geoagent-table-4"
        );
        assert_eq!(slug("—"), "table");
        assert!(slug(&"a".repeat(200)).len() <= 60);
    }
}
