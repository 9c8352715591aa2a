//! Columns of a text table that hold codes written with leading zeros
//! (FIPS and census GEOIDs, ZIP codes, station ids): every value is digits,
//! so pandas reads the column as numbers and `01001` becomes `1001`, and a
//! join with a layer that keeps the codes as text then matches nothing.
//! The card names such columns with the `dtype` that keeps them.

use super::SAMPLE_ROWS;

/// Rows of the probe looked at.
const SCAN_ROWS: usize = 1_000;

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

/// The columns of a CSV whose first bytes are `head` that hold only digits
/// with at least one value written with a leading zero, in the header's
/// order.
pub(super) fn columns(head: &[u8]) -> Vec<CodeColumn> {
    let text = String::from_utf8_lossy(head);
    let Some(delimiter) = delimiter(&text) else {
        return Vec::new();
    };
    let records = records(&text, delimiter);
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    // A last record without its line end may be cut by the end of the probe.
    let whole = if text.ends_with('\n') {
        rows.len()
    } else {
        rows.len().saturating_sub(1)
    };
    let rows = &rows[..whole.min(SCAN_ROWS)];
    let mut found = Vec::new();
    for (i, name) in header.iter().enumerate() {
        let values: Vec<&str> = rows
            .iter()
            .filter_map(|r| r.get(i).map(|v| v.trim()))
            .filter(|v| !v.is_empty())
            .collect();
        let digits = |v: &&str| v.bytes().all(|b| b.is_ascii_digit());
        if values.is_empty() || !values.iter().all(digits) {
            continue;
        }
        if let Some(zeroed) = values.iter().find(|v| v.len() > 1 && v.starts_with('0')) {
            found.push(CodeColumn {
                name: name.trim().to_string(),
                example: zeroed.to_string(),
                first: rows
                    .iter()
                    .take(SAMPLE_ROWS)
                    .map(|r| r.get(i).map_or("", |v| v.trim()).to_string())
                    .collect(),
            });
        }
    }
    found
}

/// The card's line for the code `columns` of the table shown as `shown`,
/// with the `pd.read_csv` call that keeps their zeros; `None` for none.
pub(super) fn note(columns: &[CodeColumn], shown: &str) -> Option<String> {
    if columns.is_empty() {
        return None;
    }
    let names: Vec<String> = columns.iter().map(|c| format!("`{}`", c.name)).collect();
    let examples: Vec<String> = columns
        .iter()
        .map(|c| format!("\"{}\"", c.example))
        .collect();
    let dtype: Vec<String> = columns
        .iter()
        .map(|c| format!("'{}': str", c.name))
        .collect();
    Some(format!(
        "  codes: {} {} digits with leading zeros ({}), which numbers drop: pd.read_csv('{shown}', dtype={{{}}})\n",
        names.join(", "),
        if columns.len() == 1 { "is" } else { "are" },
        examples.join(", "),
        dtype.join(", ")
    ))
}

/// The header line's most frequent separator among `,` `;` tab and `|`
/// (`,` for a table of one column).
fn delimiter(text: &str) -> Option<char> {
    let header = text.lines().next()?;
    let (count, most) = [',', ';', '\t', '|']
        .into_iter()
        .map(|d| (header.matches(d).count(), d))
        .max_by_key(|(n, _)| *n)?;
    Some(if count > 0 { most } else { ',' })
}

/// The records of `text` split at `delimiter`, with quoted fields (`""` is
/// a quote; a quoted field may hold separators and line breaks).
fn records(text: &str, delimiter: char) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let (mut record, mut field) = (Vec::new(), String::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == delimiter && !quoted => record.push(std::mem::take(&mut field)),
            '\n' if !quoted => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            '\r' if !quoted => {}
            c => field.push(c),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    records
}

#[cfg(test)]
mod tests {
    use super::{columns, note};

    fn line(csv: &[u8], shown: &str) -> Option<String> {
        note(&columns(csv), shown)
    }

    #[test]
    fn digit_codes_with_leading_zeros_are_named_with_the_dtype_that_keeps_them() {
        let csv = b"GEOID,name,zip,pop\n01001,\"Autauga, AL\",36003,55869\n01003,Baldwin,36507,223234\n02013,Aleutians East,99553,3337\n";
        assert_eq!(
            line(csv, "data/counties.csv").as_deref(),
            Some(
                "  codes: `GEOID` is digits with leading zeros (\"01001\"), which numbers drop: \
                 pd.read_csv('data/counties.csv', dtype={'GEOID': str})\n"
            )
        );
        let semi = b"id;zip\n1;02134\n2;10001\n";
        assert!(line(semi, "data/s.csv")
            .unwrap()
            .contains("dtype={'zip': str}"));
        assert_eq!(columns(csv)[0].first, ["01001", "01003", "02013"]);
    }

    #[test]
    fn numbers_mixed_codes_and_a_cut_last_row_say_nothing() {
        // Plain numbers, a code column with letters (pandas keeps it as
        // text), a decimal with a zero before the point.
        let csv = b"n,code,rate\n10,A01,0.5\n200,007B,0.25\n";
        assert_eq!(line(csv, "data/t.csv"), None);
        assert_eq!(columns(csv), []);
        // Only the probe's cut last row has the leading zero.
        assert_eq!(line(b"k\n12\n34\n01", "data/t.csv"), None);
        assert!(line(b"k\n12\n34\n01\n", "data/t.csv").is_some());
    }
}
