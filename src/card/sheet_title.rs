//! A worksheet whose header is not its first row: statistical offices put
//! a title, a source note and a blank row above the table. GDAL then finds
//! no header (its columns are `Field1`, `Field2`…) and pandas takes the
//! title for the header (`Unnamed: 1`…). The card finds the header row
//! and describes the sheet from it, with the `skiprows=` that reads it.

use gdal::vector::{Layer, LayerAccess};

use super::codes::{self, CodeColumn};
use super::{ROW_VALUES, SAMPLE_ROWS};
use crate::gdal_io::first_features;

/// Rows looked at for the header.
const SCANNED: usize = 20;

/// Rows below the header typed to call a column Integer or Real.
const TYPED: usize = 200;

/// A sheet's header found below its first row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Header {
    /// Rows above it (what `skiprows=` takes; GDAL keeps blank rows).
    pub skip: usize,
    /// The first non-empty cell above it (the title).
    pub title: String,
    /// The columns it names, with the type of their values below.
    pub columns: Vec<(String, String)>,
    /// The first rows below it, as text.
    pub rows: Vec<Vec<String>>,
    /// Rows below it in the sheet.
    pub count: u64,
    /// Its columns of codes with leading zeros.
    pub codes: Vec<CodeColumn>,
}

/// Whether GDAL found no header in a sheet of these `fields` (name, type):
/// its columns are `Field1`…
pub(super) fn headerless(fields: &[(String, String)]) -> bool {
    !fields.is_empty()
        && fields
            .iter()
            .enumerate()
            .all(|(i, (n, _))| *n == format!("Field{}", i + 1))
}

/// The header of a sheet that GDAL read without one, if a row below its
/// first is one: the first row that fills the most cells of the rows
/// scanned (two or more), none of them numbers, with only rows of fewer
/// filled cells above it.
pub(super) fn find(layer: &mut Layer) -> Option<Header> {
    let width = layer.defn().fields().count();
    layer.reset_feature_reading();
    let cells = |feature: &gdal::vector::Feature| -> Vec<String> {
        (0..width)
            .map(|i| {
                feature
                    .field_as_string(i)
                    .ok()
                    .flatten()
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let scanned: Vec<Vec<String>> = first_features(layer, SCANNED).map(|f| cells(&f)).collect();
    let filled = |row: &[String]| row.iter().filter(|c| !c.is_empty()).count();
    let most = scanned.iter().map(|r| filled(r)).max()?;
    let at = scanned.iter().position(|r| filled(r) == most)?;
    let header = &scanned[at];
    let is_number = |c: &str| c.parse::<f64>().is_ok();
    if at == 0 || most < 2 || header.iter().any(|c| is_number(c)) {
        return None;
    }
    if scanned[..at].iter().any(|r| filled(r) >= most) {
        return None;
    }
    // The rows below the header: samples and types.
    layer.reset_feature_reading();
    let below: Vec<Vec<String>> = first_features(layer, at + 1 + TYPED)
        .skip(at + 1)
        .map(|f| cells(&f))
        .collect();
    // Digits with leading zeros (`01`): codes, which pandas would make
    // numbers.
    let records: Vec<Vec<String>> = std::iter::once(header.clone())
        .chain(below.iter().cloned())
        .collect();
    let codes = codes::columns(&records, true);
    let columns = header
        .iter()
        .enumerate()
        .filter(|(_, name)| !name.is_empty())
        .map(|(i, name)| {
            let values: Vec<&str> = below
                .iter()
                .filter_map(|r| r.get(i).map(String::as_str))
                .filter(|v| !v.is_empty())
                .collect();
            let kind = if values.is_empty() || codes.iter().any(|c| c.name == name.as_str()) {
                "String"
            } else if values.iter().all(|v| v.parse::<i64>().is_ok()) {
                "Integer"
            } else if values.iter().all(|v| is_number(v)) {
                "Real"
            } else {
                "String"
            };
            (name.clone(), kind.to_string())
        })
        .collect();
    let title = scanned[..at]
        .iter()
        .flat_map(|r| r.iter())
        .find(|c| !c.is_empty())
        .cloned()
        .unwrap_or_default();
    let count = layer.feature_count().saturating_sub(at as u64 + 1);
    layer.reset_feature_reading();
    Some(Header {
        skip: at,
        title,
        columns,
        rows: below.into_iter().take(SAMPLE_ROWS).collect(),
        count,
        codes,
    })
}

impl Header {
    /// The card's lines for the sheet `sheet` of the workbook shown as
    /// `shown` (`first`: the sheet `read_excel` reads without `sheet_name`).
    pub fn lines(&self, shown: &str, sheet: &str, first: bool) -> String {
        let mut text = format!(
            "  `{sheet}`: {} rows, under a title (\"{}\")\n",
            self.count,
            crate::util::clip(&self.title, 60)
        );
        text.push_str(&format!(
            "  columns: {}\n",
            super::columns::text(&self.columns)
        ));
        for row in &self.rows {
            let values: Vec<String> = self
                .columns
                .iter()
                .zip(row)
                .take(ROW_VALUES)
                .map(|((name, kind), value)| match kind.as_str() {
                    "String" => format!(
                        "{name}={}",
                        crate::util::clip(&format!("{value:?}"), super::VALUE_CHARS)
                    ),
                    _ => format!("{name}={value}"),
                })
                .collect();
            text.push_str(&format!("  row: {}\n", values.join(", ")));
        }
        let mut arguments = Vec::new();
        if !first {
            arguments.push(format!("sheet_name={}", crate::util::py_str(sheet)));
        }
        arguments.push(format!("skiprows={}", self.skip));
        arguments.extend(codes::dtype(&self.codes));
        text.push_str(&format!(
            "  header: row {} of the sheet, under {} row(s) of title and notes, which pandas would take for the header\n",
            self.skip + 1,
            self.skip,
        ));
        text.push_str(&codes::note(&self.codes).unwrap_or_default());
        text.push_str(&format!(
            "  read: pd.read_excel({}, {})\n",
            crate::util::py_str(shown),
            arguments.join(", ")
        ));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::headerless;

    #[test]
    fn gdals_default_names_mean_no_header() {
        let names = |n: &[&str]| {
            n.iter()
                .map(|s| (s.to_string(), "String".to_string()))
                .collect::<Vec<_>>()
        };
        assert!(headerless(&names(&["Field1", "Field2"])));
        assert!(!headerless(&names(&["Field1", "pop"])));
        assert!(!headerless(&names(&["Field2", "Field1"])));
        assert!(!headerless(&[]));
    }
}
