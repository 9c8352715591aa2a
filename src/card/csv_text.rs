//! A CSV's first megabyte split into records as GDAL's CSV driver splits
//! it (the separator found in the header, quoted fields), for the card's
//! notes on how pandas must read the file ([`super::csv_read`],
//! [`super::codes`]).

/// The field separators GDAL's CSV driver knows.
pub(super) const SEPARATORS: [char; 4] = [',', ';', '\t', '|'];

/// The header line's most frequent separator among [`SEPARATORS`] (`,`
/// for a table of one column).
pub(super) fn delimiter(text: &str) -> Option<char> {
    let header = text.lines().next()?;
    let (count, most) = SEPARATORS
        .into_iter()
        .map(|d| (header.matches(d).count(), d))
        .max_by_key(|(n, _)| *n)?;
    Some(if count > 0 { most } else { ',' })
}

/// The records of `text` split at `delimiter`, with quoted fields (`""` is
/// a quote; a quoted field may hold separators and line breaks).
pub(super) fn records(text: &str, delimiter: char) -> Vec<Vec<String>> {
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

/// Rows of a probe looked at.
const SCAN_ROWS: usize = 1_000;

/// The header and the rows of a table's probe that are looked at: up to
/// [`SCAN_ROWS`], the last record left out unless the probe is `whole` (it
/// may be cut by the end of the probe).
pub(super) struct Scanned<'a> {
    /// The column names.
    pub header: &'a [String],
    /// The rows.
    pub rows: &'a [Vec<String>],
}

impl<'a> Scanned<'a> {
    /// The scan of `records` (the header, then rows); `None` when empty.
    pub fn of(records: &'a [Vec<String>], whole: bool) -> Option<Scanned<'a>> {
        let (header, rows) = records.split_first()?;
        let kept = if whole {
            rows.len()
        } else {
            rows.len().saturating_sub(1)
        };
        Some(Scanned {
            header,
            rows: &rows[..kept.min(SCAN_ROWS)],
        })
    }

    /// The non-empty values of column `i`, trimmed.
    pub fn values(&self, i: usize) -> Vec<&'a str> {
        self.rows
            .iter()
            .filter_map(|r| r.get(i).map(|v| v.trim()))
            .filter(|v| !v.is_empty())
            .collect()
    }
}
