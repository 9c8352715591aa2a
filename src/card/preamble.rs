//! Lines above a table's header: a title, a note on where the data came
//! from, `#` comments, a blank line. GDAL then takes the title for the
//! header (splitting it at spaces) and pandas stops with "Error tokenizing
//! data. C error: Expected 1 fields in line 4, saw 4"; both read the table
//! once told to skip those lines (`skiprows=`, or the file from the
//! header on).

use super::csv_text::SEPARATORS;

/// Lines of the head looked at.
const SCANNED: usize = 50;

/// Most lines taken for a preamble.
const MOST: usize = 20;

/// The lines above a table's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Preamble {
    /// How many lines (what `skiprows=` takes).
    pub lines: usize,
    /// How many bytes, where the header starts.
    pub bytes: usize,
    /// The first non-blank one, trimmed.
    pub first: String,
}

/// The preamble of the text table whose first bytes are `head`, if it has
/// one: lines, without quotes, each of fewer fields than the header, above
/// a header from which every line scanned has the header's number of
/// fields (two or more) at one of the separators GDAL knows. A table whose
/// lines do not agree (quoted line breaks, ragged rows) is taken to have
/// none, and so is one whose first line alone has one field fewer than
/// the lines below (R's `write.csv` leaves the row names' column out of
/// the header: that line is the header, not a title).
pub(super) fn of(head: &[u8]) -> Option<Preamble> {
    let text = String::from_utf8_lossy(head);
    let mut lines: Vec<&str> = text.split_inclusive('\n').take(SCANNED + 1).collect();
    if lines.len() > SCANNED || !text.ends_with('\n') {
        // The last line may be cut.
        lines.pop();
    }
    SEPARATORS
        .into_iter()
        .filter_map(|separator| under_preamble(&lines, separator))
        .max_by_key(|(_, fields)| *fields)
        .and_then(|(start, _)| {
            (start > 0).then(|| Preamble {
                lines: start,
                bytes: lines[..start].iter().map(|l| l.len()).sum(),
                first: lines[..start]
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty())
                    .unwrap_or("")
                    .to_string(),
            })
        })
}

/// Where the header is at `separator` (the line index, and its number of
/// fields), if some line from the first [`MOST`] + 1 on has two or more
/// fields, every later line as many (blank ones aside), at least one
/// such line follows it, and every line above it has fewer fields and no
/// quote.
fn under_preamble(lines: &[&str], separator: char) -> Option<(usize, usize)> {
    let fields = |line: &str| fields(line, separator);
    let start = (0..lines.len().min(MOST + 1)).find(|&s| {
        let header = fields(lines[s]);
        let rows: Vec<&&str> = lines[s + 1..]
            .iter()
            .filter(|l| !l.trim().is_empty())
            .collect();
        header >= 2
            && !rows.is_empty()
            && rows.iter().all(|l| fields(l) == header)
            && lines[..s]
                .iter()
                .all(|l| fields(l) < header && !l.contains('"'))
            && !(s == 1 && fields(lines[0]) + 1 == header)
    })?;
    Some((start, fields(lines[start])))
}

/// The fields of one line at `separator`, separators inside quotes aside.
fn fields(line: &str, separator: char) -> usize {
    let mut quoted = false;
    let mut count = 1;
    for c in line.chars() {
        if c == '"' {
            quoted = !quoted;
        } else if c == separator && !quoted {
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_a_note_and_a_blank_line_above_the_header_are_a_preamble() {
        let head = b"Station report\nGenerated 2024-01-01, by NOAA\n\nstation,date,tmax\nA,2024-01-01,12.5\nA,2024-01-02,11\n";
        assert_eq!(
            of(head),
            Some(Preamble {
                lines: 3,
                bytes: "Station report\nGenerated 2024-01-01, by NOAA\n\n".len(),
                first: "Station report".into()
            })
        );
        let comments = b"# source: x\n# units: m\nid;x;y\n1;2;3\n";
        assert_eq!(of(comments).map(|p| p.lines), Some(2));
    }

    #[test]
    fn a_plain_table_ragged_rows_and_quoted_line_breaks_have_none() {
        assert_eq!(of(b"a,b\n1,2\n3,4\n"), None);
        assert_eq!(of(b"a,b\n1,2\n3,4,5\n"), None);
        assert_eq!(of(b"id,text\n1,\"two\nlines\"\n2,x\n"), None);
        // R's header without the row names' column is a header.
        assert_eq!(of(b"a,b\n1,x,y\n2,z,w\n"), None);
        // Separators inside quotes are not the header's.
        assert_eq!(of(b"parcel,wkt\np1,\"POLYGON ((0 0, 1 0, 0 0))\"\n"), None);
        // A cut last line does not count.
        assert_eq!(of(b"a,b\n1,2\n3"), None);
    }
}
