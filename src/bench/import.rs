//! `gisclaw bench import GeoAnalystBench.csv --data DIR --out SUITE`: one
//! `task.yaml` per row of the official GeoAnalystBench table, for users who
//! have the official data. Each task gets the row's instruction, domain
//! knowledge (with the dataset description appended), workflow, categories
//! and the outputs its instruction names; the upstream code becomes the
//! task's gold (`gold.py`, `/dataset/` paths rewritten to `data/`); the data
//! files the dataset description names are linked (or copied) from `--data`.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::task::Task;
use crate::util::write_atomic;

/// The SHA-256 of the GeoAnalystBench table gisclaw vendors
/// (`benchmarks/geoanalystbench/GeoAnalystBench.csv`, Apache-2.0): the
/// version its suite and its tests were made from. The upstream table has
/// changed since; an import of another version says so.
pub const PINNED_SHA256: &str = "72319de57cc554a0907391aaa814979f92f6c2dd83f157f184d743f676143ecd";

/// The columns the importer reads.
pub const COLUMNS: &[&str] = &[
    "id",
    "Open Source",
    "Task Categories1",
    "Task Categories2",
    "Task Categories3",
    "Task",
    "Instruction",
    "Domain Knowledge",
    "Dataset Description",
    "Human Designed Workflow",
    "CodeString",
];

/// An input problem, located in the CSV.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ImportError {
    /// The CSV file.
    pub file: String,
    /// 1-based line where the record starts (0: the whole file).
    pub line: usize,
    /// What is wrong, naming the column.
    pub message: String,
}

/// How the data files reach the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataMode {
    /// Symbolic links to the files under `--data`.
    Link,
    /// Copies.
    Copy,
}

/// What one import did.
#[derive(Debug, Default)]
pub struct ImportReport {
    /// Task ids written.
    pub tasks: Vec<String>,
    /// Data files linked or copied.
    pub files: usize,
    /// Per task, the data files named by its description but not found.
    pub missing: Vec<(String, Vec<String>)>,
    /// The table's SHA-256.
    pub sha256: String,
}

impl ImportReport {
    /// Whether the table imported is the version gisclaw pins
    /// ([`PINNED_SHA256`]).
    pub fn pinned(&self) -> bool {
        self.sha256 == PINNED_SHA256
    }
}

/// One parsed CSV record and the line it starts on.
struct Record {
    line: usize,
    fields: Vec<String>,
}

/// Parses RFC 4180 CSV (quoted fields may hold commas, quotes and newlines).
fn parse_csv(text: &str) -> Result<Vec<Record>, (usize, String)> {
    let mut records = Vec::new();
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut start_line = 1;
    let mut chars = text.trim_start_matches('\u{feff}').chars().peekable();
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    line += 1;
                    field.push('\n');
                }
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                if fields.iter().any(|f| !f.is_empty()) {
                    records.push(Record {
                        line: start_line,
                        fields: std::mem::take(&mut fields),
                    });
                }
                fields.clear();
                line += 1;
                start_line = line;
                at_field_start = true;
            }
            c => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err((start_line, "a quoted field is never closed".into()));
    }
    if !field.is_empty() || !fields.is_empty() {
        fields.push(field);
        records.push(Record {
            line: start_line,
            fields,
        });
    }
    Ok(records)
}

/// The GeoAnalystBench table, read and checked: every column of
/// [`COLUMNS`] present, every row numbered once.
#[derive(Debug, Clone)]
pub struct Table {
    /// The file's SHA-256 (hex).
    pub sha256: String,
    /// Its rows, in file order.
    pub rows: Vec<Row>,
}

/// One task row of the table.
#[derive(Debug, Clone)]
pub struct Row {
    /// 1-based line where the record starts.
    pub line: usize,
    /// The task number (`id`).
    pub number: u32,
    /// The cells of [`COLUMNS`], each trimmed of surrounding white space.
    cells: HashMap<&'static str, String>,
}

impl Row {
    /// The trimmed text of column `name` (one of [`COLUMNS`]; empty when
    /// the row has no such cell).
    pub fn get(&self, name: &str) -> &str {
        self.cells.get(name).map(String::as_str).unwrap_or_default()
    }
}

impl Table {
    /// The row of task `number`.
    pub fn row(&self, number: u32) -> Option<&Row> {
        self.rows.iter().find(|r| r.number == number)
    }
}

/// Reads the GeoAnalystBench table at `csv` (RFC 4180, UTF-8).
pub fn read_table(csv: &Path) -> Result<Table, ImportError> {
    let file = csv.display().to_string();
    let error = |line: usize, message: String| ImportError {
        file: file.clone(),
        line,
        message,
    };
    let bytes = std::fs::read(csv).map_err(|e| error(0, format!("cannot read: {e}")))?;
    let sha256 = crate::util::sha256_bytes(&bytes)
        .trim_start_matches("sha256:")
        .to_string();
    let text = String::from_utf8(bytes).map_err(|e| error(0, format!("not UTF-8: {e}")))?;
    let records = parse_csv(&text).map_err(|(line, message)| error(line, message))?;
    let (header, records) = records
        .split_first()
        .ok_or_else(|| error(0, "the file is empty".into()))?;
    let mut column = HashMap::new();
    for name in COLUMNS {
        let at = header
            .fields
            .iter()
            .position(|h| h.trim() == *name)
            .ok_or_else(|| error(header.line, format!("no column `{name}` in the header")))?;
        column.insert(*name, at);
    }
    let mut rows: Vec<Row> = Vec::with_capacity(records.len());
    for record in records {
        let cells: HashMap<&'static str, String> = COLUMNS
            .iter()
            .map(|name| {
                let cell = record.fields.get(column[name]).map(|s| s.trim());
                (*name, cell.unwrap_or_default().to_string())
            })
            .collect();
        let id = &cells["id"];
        let number: u32 = id.parse().map_err(|_| {
            error(
                record.line,
                format!("column `id`: `{id}` is not a task number"),
            )
        })?;
        if rows.iter().any(|r| r.number == number) {
            return Err(error(
                record.line,
                format!("column `id`: task {number} appears twice"),
            ));
        }
        rows.push(Row {
            line: record.line,
            number,
            cells,
        });
    }
    Ok(Table { sha256, rows })
}

/// Each word of `text` that starts with `prefix` (the prefix kept), ending
/// at white space, a quote, a closing parenthesis, a comma or one of `stops`.
fn words_starting(text: &str, prefix: &str, stops: &[char]) -> Vec<String> {
    text.match_indices(prefix)
        .map(|(i, _)| {
            text[i..]
                .chars()
                .take_while(|c| {
                    !c.is_whitespace()
                        && !matches!(c, '"' | '\'' | ')' | ',' | '“' | '”')
                        && !stops.contains(c)
                })
                .collect()
        })
        .collect()
}

/// Paths like `pred_results/x.png` written in `text`.
fn named_outputs(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for path in words_starting(text, "pred_results/", &[]) {
        let path = path.trim_end_matches(['.', ';', ':']).to_string();
        if path.len() > "pred_results/".len() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// File names after `dataset/` in the dataset description.
fn named_data(text: &str) -> BTreeSet<String> {
    words_starting(text, "dataset/", &[':'])
        .into_iter()
        .map(|s| s["dataset/".len()..].trim_end_matches('.').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every file and folder under `root`, by file name.
fn index_files(root: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut index: HashMap<String, Vec<PathBuf>> = HashMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if path.is_dir() {
                stack.push(path.clone());
            }
            index.entry(name).or_default().push(path);
        }
    }
    for paths in index.values_mut() {
        paths.sort();
    }
    index
}

/// The best match for `name` for task `id`: under a folder named after the
/// task when there are several.
fn find_data<'a>(
    index: &'a HashMap<String, Vec<PathBuf>>,
    name: &str,
    number: u32,
) -> Option<&'a PathBuf> {
    let candidates = index.get(name)?;
    let names = [
        number.to_string(),
        format!("T{number}"),
        format!("T{number:02}"),
        format!("task{number}"),
    ];
    candidates
        .iter()
        .find(|p| {
            p.components().any(|c| {
                names
                    .iter()
                    .any(|n| c.as_os_str().eq_ignore_ascii_case(n.as_str()))
            })
        })
        .or_else(|| candidates.first())
}

/// Files that belong with `path` (a shapefile's .dbf, .shx, .prj…).
fn companions(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p != path && p.is_file() && p.file_stem() == Some(stem))
        .collect();
    found.sort();
    found
}

fn place(from: &Path, to: &Path, mode: DataMode) -> std::io::Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Ok(());
    }
    match mode {
        DataMode::Link => std::os::unix::fs::symlink(from.canonicalize()?, to),
        DataMode::Copy if from.is_dir() => {
            std::fs::create_dir_all(to)?;
            for entry in std::fs::read_dir(from)?.flatten() {
                place(&entry.path(), &to.join(entry.file_name()), mode)?;
            }
            Ok(())
        }
        DataMode::Copy => std::fs::copy(from, to).map(|_| ()),
    }
}

/// Upstream code with its dataset paths pointed at the task's `data/`.
fn rewrite_paths(code: &str) -> String {
    code.replace("'/dataset/", "'data/")
        .replace("\"/dataset/", "\"data/")
        .replace("'dataset/", "'data/")
        .replace("\"dataset/", "\"data/")
}

/// Imports `csv` into `out` (one folder per row), taking data from `data`.
pub fn import(
    csv: &Path,
    data: Option<&Path>,
    out: &Path,
    mode: DataMode,
) -> Result<ImportReport, ImportError> {
    let file = csv.display().to_string();
    let error = |line: usize, message: String| ImportError {
        file: file.clone(),
        line,
        message,
    };
    let table = read_table(csv)?;
    let index = data.map(index_files).unwrap_or_default();
    let mut report = ImportReport {
        sha256: table.sha256.clone(),
        ..ImportReport::default()
    };
    for row in &table.rows {
        let get = |name: &str| row.get(name).to_string();
        let number = row.number;
        let id = format!("T{number:02}");
        let title = get("Task")
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        let instruction = get("Instruction");
        if instruction.is_empty() {
            return Err(error(row.line, "column `Instruction`: empty".into()));
        }
        let categories: Vec<String> = ["Task Categories1", "Task Categories2", "Task Categories3"]
            .iter()
            .map(|c| get(c))
            .filter(|c| !c.is_empty())
            .collect();
        let description = get("Dataset Description");
        let mut knowledge = get("Domain Knowledge");
        if !description.is_empty() {
            knowledge = format!(
                "{knowledge}\n\nThe data:\n{}",
                description.replace("dataset/", "data/")
            );
        }
        let dir = out.join(&id);
        let io = |what: &str, e: std::io::Error| error(row.line, format!("{what}: {e}"));
        std::fs::create_dir_all(dir.join("data"))
            .map_err(|e| io(&format!("creating {}", dir.display()), e))?;
        let code = get("CodeString");
        let gold = (!code.is_empty()).then(|| PathBuf::from("gold.py"));
        if gold.is_some() {
            write_atomic(&dir.join("gold.py"), rewrite_paths(&code).as_bytes())
                .map_err(|e| io("writing gold.py", e))?;
        }
        let open_source = get("Open Source") == "T";
        let task = Task {
            id: id.clone(),
            title: if title.is_empty() { id.clone() } else { title },
            instruction,
            data: Some(PathBuf::from("data")),
            domain_knowledge: (!knowledge.trim().is_empty()).then(|| knowledge.trim().to_string()),
            workflow: Some(get("Human Designed Workflow")).filter(|w| !w.is_empty()),
            outputs: named_outputs(&get("Instruction")),
            category: (!categories.is_empty()).then(|| categories.join("; ")),
            library: None,
            data_type: None,
            operation: None,
            gold,
            generator: Vec::new(),
            seed: 0,
            notes: Some(format!(
                "Imported from {} row {number} (GeoAnalystBench, Apache-2.0). Upstream gold is {}; its /dataset/ paths now read data/.",
                csv.file_name().unwrap_or_default().to_string_lossy(),
                if open_source { "open-source Python" } else { "ArcPy (needs ArcGIS Pro)" }
            )),
            solvable: true,
            unsolvable_reason: None,
            unsolvable_class: None,
            published: None,
        };
        let yaml = serde_yaml::to_string(&task)
            .map_err(|e| error(row.line, format!("serialising the task: {e}")))?;
        write_atomic(&dir.join("task.yaml"), yaml.as_bytes())
            .map_err(|e| io("writing task.yaml", e))?;
        let mut missing = Vec::new();
        if data.is_some() {
            for name in named_data(&description) {
                match find_data(&index, &name, number) {
                    Some(found) => {
                        for from in std::iter::once(found.clone()).chain(companions(found)) {
                            let to = dir.join("data").join(from.file_name().unwrap_or_default());
                            place(&from, &to, mode)
                                .map_err(|e| io(&format!("placing {}", from.display()), e))?;
                            report.files += 1;
                        }
                    }
                    None => missing.push(name),
                }
            }
        }
        if !missing.is_empty() {
            report.missing.push((id.clone(), missing));
        }
        report.tasks.push(id);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_hold_quotes_commas_and_newlines() {
        let records = parse_csv("a,b,c\n1,\"x, \"\"y\"\"\r\nz\",3\r\n\n2,,\"\"\n").unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].fields, vec!["1", "x, \"y\"\nz", "3"]);
        assert_eq!(records[1].line, 2);
        assert_eq!(records[2].line, 5);
        assert_eq!(records[2].fields, vec!["2", "", ""]);
        assert!(parse_csv("a\n\"open").is_err());
    }

    #[test]
    fn outputs_and_data_names_are_found_in_text() {
        assert_eq!(
            named_outputs(
                "Save \"pred_results/a.png\" and pred_results/b.tif. Also pred_results/a.png"
            ),
            vec!["pred_results/a.png", "pred_results/b.tif"]
        );
        let names = named_data("dataset/roads.shp: lines\ndataset/dem.tif, dataset/Parcels");
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            vec!["Parcels", "dem.tif", "roads.shp"]
        );
        assert_eq!(
            rewrite_paths("gpd.read_file('/dataset/a.shp')"),
            "gpd.read_file('data/a.shp')"
        );
    }
}
