//! Columns of a text table that hold codes written with leading zeros
//! (FIPS and census GEOIDs, ZIP codes, station ids): every value is digits,
//! so pandas reads the column as numbers and `01001` becomes `1001`, and a
//! join with a layer that keeps the codes as text then matches nothing.
//! The card names such columns with the `dtype` that keeps them.

use super::csv_text::Scanned;
use super::SAMPLE_ROWS;

/// A column of codes: its name, a value written with a leading zero, and
/// its first values as the file writes them (for the card's sample rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CodeColumn {
    /// The header's name.
    pub name: String,
    /// A value with a leading zero (`01001`).
    pub example: String,
    /// The first values, as text.
    pub first: Vec<String>,
}

/// The columns of a table (`records`: the header, then rows; the last one
/// left out unless `whole`, as it may be cut by the end of a probe) that
/// hold only digits with at least one value written with a leading zero,
/// in the header's order.
pub(super) fn columns(records: &[Vec<String>], whole: bool) -> Vec<CodeColumn> {
    let Some(scanned) = Scanned::of(records, whole) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (i, name) in scanned.header.iter().enumerate() {
        let values = scanned.values(i);
        let digits = |v: &&str| v.bytes().all(|b| b.is_ascii_digit());
        if values.is_empty() || !values.iter().all(digits) {
            continue;
        }
        if let Some(zeroed) = values.iter().find(|v| v.len() > 1 && v.starts_with('0')) {
            found.push(CodeColumn {
                name: name.trim().to_string(),
                example: zeroed.to_string(),
                first: scanned
                    .rows
                    .iter()
                    .take(SAMPLE_ROWS)
                    .map(|r| r.get(i).map_or("", |v| v.trim()).to_string())
                    .collect(),
            });
        }
    }
    found
}

/// The card's line for the code `columns`; `None` for none.
pub(super) fn note(columns: &[CodeColumn]) -> Option<String> {
    if columns.is_empty() {
        return None;
    }
    let names: Vec<String> = columns.iter().map(|c| format!("`{}`", c.name)).collect();
    let examples: Vec<String> = columns
        .iter()
        .map(|c| format!("\"{}\"", c.example))
        .collect();
    Some(format!(
        "  codes: {} {} digits with leading zeros ({}), which numbers drop: read as text\n",
        names.join(", "),
        if columns.len() == 1 { "is" } else { "are" },
        examples.join(", ")
    ))
}

/// The `pd.read_csv` argument that keeps the code `columns` as text.
pub(super) fn dtype(columns: &[CodeColumn]) -> Option<String> {
    let names: Vec<String> = columns
        .iter()
        .map(|c| format!("'{}': str", c.name))
        .collect();
    (!names.is_empty()).then(|| format!("dtype={{{}}}", names.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::super::csv_text::records;
    use super::{columns, dtype, note};

    fn found(csv: &str) -> Vec<super::CodeColumn> {
        columns(&records(csv, ','), csv.ends_with('\n'))
    }

    #[test]
    fn digit_codes_with_leading_zeros_are_named_with_the_dtype_that_keeps_them() {
        let csv = "GEOID,name,zip,pop\n01001,\"Autauga, AL\",36003,55869\n01003,Baldwin,36507,223234\n02013,Aleutians East,99553,3337\n";
        let codes = found(csv);
        assert_eq!(
            note(&codes).as_deref(),
            Some("  codes: `GEOID` is digits with leading zeros (\"01001\"), which numbers drop: read as text\n")
        );
        assert_eq!(dtype(&codes).as_deref(), Some("dtype={'GEOID': str}"));
        assert_eq!(codes[0].first, ["01001", "01003", "02013"]);
    }

    #[test]
    fn numbers_mixed_codes_and_a_cut_last_row_say_nothing() {
        // Plain numbers, a code column with letters (pandas keeps it as
        // text), a decimal with a zero before the point.
        assert_eq!(found("n,code,rate\n10,A01,0.5\n200,007B,0.25\n"), []);
        // Only the probe's cut last row has the leading zero.
        assert_eq!(found("k\n12\n34\n01"), []);
        assert_eq!(found("k\n12\n34\n01\n").len(), 1);
        assert_eq!(dtype(&[]), None);
    }
}
