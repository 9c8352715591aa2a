//! A CSV of one column (a list of names, identifiers or WKT), which GDAL
//! 3.6's CSV driver refuses to open ("not recognized as a supported file
//! format": it needs a separator in the header; GDAL 3.7 lifted this).
//! pandas reads it, so the card describes it from its first megabyte
//! itself, in the same shape as GDAL's tables.

use super::codes::CodeColumn;
use super::csv_text::{records, SEPARATORS};
use super::{SAMPLE_ROWS, VALUE_CHARS};

/// Rows of the probe typed to call the column Integer or Real.
const TYPED_ROWS: usize = 1_000;

/// Whether `head` (a CSV's first bytes, decoded) is a table of one column:
/// a header line without any separator GDAL knows, and a line after it.
pub(super) fn is_one_column(head: &str) -> bool {
    let mut lines = head.lines();
    lines
        .next()
        .is_some_and(|header| !header.contains(SEPARATORS) && !header.trim().is_empty())
        && lines.next().is_some()
}

/// The entry of the one-column CSV whose first bytes, decoded, are
/// `head`, shown as `name`: its rows (`rows` with whether they are
/// estimated, or counted in `head` when it holds the whole file), column
/// type and sample values; `codes` keeps a code column text.
pub(super) fn entry(
    name: &str,
    head: &str,
    rows: Option<(u64, bool)>,
    codes: &[CodeColumn],
) -> String {
    let text = head.trim_start_matches('\u{feff}');
    let whole = rows.is_none();
    let mut parsed = records(text, ',');
    if !whole {
        // The probe may end inside a record.
        parsed.pop();
    }
    let column = parsed
        .first()
        .and_then(|h| h.first())
        .map_or(String::new(), |h| h.trim().to_string());
    let values: Vec<&str> = parsed
        .iter()
        .skip(1)
        .filter_map(|r| r.first().map(String::as_str))
        .collect();
    let layer = name
        .rsplit('/')
        .next()
        .and_then(|f| f.rsplit_once('.'))
        .map_or(name, |(stem, _)| stem);
    let count = match rows {
        Some((n, true)) => format!("≈{n} rows (estimated)"),
        Some((n, false)) => format!("{n} rows"),
        None => format!("{} rows", values.len()),
    };
    let typed: Vec<&str> = values
        .iter()
        .copied()
        .filter(|v| !v.is_empty())
        .take(TYPED_ROWS)
        .collect();
    let is_code = codes.iter().any(|c| c.name == column);
    let kind = if is_code || typed.is_empty() {
        "String"
    } else if typed.iter().all(|v| v.parse::<i64>().is_ok()) {
        "Integer"
    } else if typed.iter().all(|v| v.parse::<f64>().is_ok()) {
        "Real"
    } else {
        "String"
    };
    let mut entry = format!(
        "- {name} — table (CSV, one column)\n  `{layer}`: {count}\n  columns: {column} ({kind})\n"
    );
    for value in values.iter().take(SAMPLE_ROWS) {
        let shown = match kind {
            "String" => format!("{value:?}"),
            _ => value.to_string(),
        };
        entry.push_str(&format!(
            "  row: {column}={}\n",
            crate::util::clip(&shown, VALUE_CHARS)
        ));
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_names_is_a_table_of_one_string_column() {
        let head = "city\nZurich\nBern\n\"Biel, Bienne\"\nBasel\n";
        assert!(is_one_column(head));
        assert_eq!(
            entry("data/cities.csv", head, None, &[]),
            "- data/cities.csv — table (CSV, one column)\n  \
             `cities`: 4 rows\n  columns: city (String)\n  row: city=\"Zurich\"\n  row: city=\"Bern\"\n  \
             row: city=\"Biel, Bienne\"\n"
        );
        assert!(!is_one_column("a,b\n1,2\n"));
        assert!(!is_one_column("lonely header\n"));
    }

    #[test]
    fn a_list_in_a_legacy_encoding_is_shown_decoded() {
        let (bytes, _, _) = encoding_rs::WINDOWS_1251
            .encode("город\nМосква\nСанкт-Петербург\nНовосибирск\nЕкатеринбург\n");
        let reading = crate::card::csv_read::reading(&bytes, "'data/goroda.csv'");
        let head = crate::card::text_encoding::read_as(&bytes, reading.decoder);
        assert!(is_one_column(&head));
        let entry = entry("data/goroda.csv", &head, None, &[]);
        assert!(
            entry.contains("columns: город (String)\n  row: город=\"Москва\"\n"),
            "{entry}"
        );
    }

    #[test]
    fn numbers_are_typed_and_a_cut_probe_drops_its_last_record() {
        let entry = entry("data/ids.csv", "id\n1\n22\n33", Some((5000, true)), &[]);
        assert!(
            entry.contains("`ids`: ≈5000 rows (estimated)\n  columns: id (Integer)\n"),
            "{entry}"
        );
        assert!(!entry.contains("row: id=33"), "{entry}");
        let reals = super::entry("data/r.csv", "v\n1.5\n2\n", None, &[]);
        assert!(
            reals.contains("columns: v (Real)\n  row: v=1.5\n"),
            "{reals}"
        );
    }
}
