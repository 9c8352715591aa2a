//! APIs the installed stack no longer has, and what replaces each
//! (`knowledge/removed.toml`, compiled in). Code written for older releases
//! (and models trained on it) still calls `GeoDataFrame.append`,
//! `shapely.ops.cascaded_union` or iterates a `MultiPolygon`; the installed
//! docstrings never name those, so the library maps each old name to its
//! replacement's entry as a searchable name ([`super::Library`]) and says
//! what changed beside the hit.

use std::sync::OnceLock;

use serde::Deserialize;

use super::KnowledgeError;

/// The table's text, as committed.
pub const REMOVED_TOML: &str = include_str!("../../knowledge/removed.toml");

/// One removed API (or several spellings of it) and its replacement.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Removed {
    /// The full dotted names old code uses.
    pub old: Vec<String>,
    /// The installed API that replaces them (an indexed name or alias).
    pub new: String,
    /// The release that removed them (`pandas 2.0`).
    pub since: String,
    /// How to rewrite the call, in one line.
    pub hint: String,
}

impl Removed {
    /// The line shown under the replacement's hit: which old name it
    /// replaces, since when, and how to rewrite the call.
    pub fn note(&self, spelled: &str) -> String {
        format!(
            "replaces {spelled} (removed in {}): {}",
            self.since, self.hint
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    removed: Vec<Removed>,
}

/// Parses a table in `removed.toml`'s form; an error names the line and
/// field.
pub fn parse(text: &str) -> Result<Vec<Removed>, String> {
    let table: Table = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        match line {
            Some(line) => format!("line {line}: {}", e.message()),
            None => e.message().to_string(),
        }
    })?;
    for (i, row) in table.removed.iter().enumerate() {
        if row.old.is_empty() || row.old.iter().chain([&row.new]).any(|n| !is_dotted(n)) {
            return Err(format!(
                "row {}: field `old` must list dotted names and `new` be one (got {:?} → {:?})",
                i + 1,
                row.old,
                row.new
            ));
        }
    }
    Ok(table.removed)
}

/// `a.b` or longer, every part an identifier.
fn is_dotted(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// The committed table, parsed once.
pub fn table() -> Result<&'static [Removed], KnowledgeError> {
    static TABLE: OnceLock<Result<Vec<Removed>, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| parse(REMOVED_TOML))
        .as_deref()
        .map_err(|e| KnowledgeError::Build(format!("knowledge/removed.toml: {e}")))
}

/// The names an old name is searchable under, lower-cased: every dotted
/// suffix of two parts or more (`geodataframe.append`), and its last part
/// alone (`cascaded_union`) when `taken` says no installed object has that
/// name and it is not a dunder (`__iter__` alone says nothing of whose).
pub fn search_names(old: &str, taken: impl Fn(&str) -> bool) -> Vec<String> {
    let lower = old.to_lowercase();
    let parts: Vec<&str> = lower.split('.').collect();
    let mut names: Vec<String> = (0..parts.len().saturating_sub(1))
        .map(|i| parts[i..].join("."))
        .collect();
    if let Some(last) = parts.last() {
        if !last.starts_with("__") && !taken(last) {
            names.push((*last).to_string());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_parses() {
        let rows = parse(REMOVED_TOML).unwrap();
        assert!(rows.len() >= 30, "{}", rows.len());
        assert!(rows.iter().any(|r| r.new == "pandas.concat"
            && r.old.iter().any(|o| o == "geopandas.GeoDataFrame.append")));
    }

    #[test]
    fn every_replacement_is_in_an_indexed_module() {
        // A row whose replacement no index holds would be skipped silently.
        let modules = super::super::build::default_modules();
        for row in parse(REMOVED_TOML).unwrap() {
            assert!(
                modules
                    .iter()
                    .any(|m| row.new.starts_with(&format!("{m}."))),
                "{} is in no module of knowledge/modules.txt",
                row.new
            );
        }
    }

    #[test]
    fn a_bad_row_names_its_line_or_row_and_field() {
        let err =
            parse("[[removed]]\nold = [\"a.b\"]\nnew = \"c.d\"\nsince = \"x 1\"\n").unwrap_err();
        assert!(err.contains("line") && err.contains("hint"), "{err}");
        let err =
            parse("[[removed]]\nold = [\"append\"]\nnew = \"pandas.concat\"\nsince = \"p\"\nhint = \"h\"\n")
                .unwrap_err();
        assert!(err.contains("row 1") && err.contains("`old`"), "{err}");
        let err = parse(
            "[[removed]]\nold = [\"a.b\"]\nnew = \"c.d\"\nsince = \"s\"\nhint = \"h\"\nwhy = 1\n",
        )
        .unwrap_err();
        assert!(err.contains("why"), "{err}");
    }

    #[test]
    fn old_names_are_searchable_by_their_suffixes() {
        let none = |_: &str| false;
        assert_eq!(
            search_names("geopandas.GeoDataFrame.append", |n| n == "append"),
            ["geopandas.geodataframe.append", "geodataframe.append"]
        );
        assert_eq!(
            search_names("shapely.ops.cascaded_union", none),
            [
                "shapely.ops.cascaded_union",
                "ops.cascaded_union",
                "cascaded_union"
            ]
        );
        assert_eq!(
            search_names("shapely.geometry.MultiPolygon.__iter__", none),
            [
                "shapely.geometry.multipolygon.__iter__",
                "geometry.multipolygon.__iter__",
                "multipolygon.__iter__"
            ]
        );
    }
}
