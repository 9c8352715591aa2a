//! The `pd.read_csv` call that reads a CSV as the card describes it. GDAL
//! finds the separator, reads a decimal comma and takes any bytes; pandas
//! splits at commas, reads UTF-8 and turns digit codes into numbers unless
//! told otherwise. So the card's columns and rows are what the model gets
//! only with the right arguments: a `;` file read plainly is one column.
//! From the first megabyte, the card says what differs and gives one call
//! with every argument it needs.

use super::codes::{self, CodeColumn};
use super::csv_text::{delimiter, records, Scanned};
use super::preamble;
use super::text_encoding;
use super::SAMPLE_ROWS;

/// How the card's line with the call that reads a CSV begins (a table's
/// entry has it only when pandas' defaults would misread the file).
pub(super) const READ_CALL: &str = "  read: pd.read_csv(";

/// How the card says to read a CSV.
#[derive(Debug)]
pub(super) struct Reading {
    /// Columns of codes with leading zeros (the card shows them as text).
    pub codes: Vec<CodeColumn>,
    /// The card's lines: what differs from pandas' defaults, then the call
    /// (empty when `pd.read_csv(path)` reads it as described).
    pub lines: String,
    /// The header and the first rows as written (with a header; always for
    /// text in a recognised legacy encoding, decoded: GDAL shows its bytes
    /// as `�`).
    pub decoded: Vec<Vec<String>>,
    /// That legacy encoding, for whatever else reads the file's text.
    pub decoder: Option<&'static encoding_rs::Encoding>,
    /// Bytes above the header (a preamble: [`preamble`]), which GDAL must
    /// be given the file without.
    pub skip_bytes: usize,
    /// Whether the first line is a header, as GDAL is told to read it.
    pub header: bool,
    /// The header's names exactly as written (spaces kept, as pandas reads
    /// them; GDAL strips them); empty without a header.
    pub names: Vec<String>,
    /// The call that reads the file as described (`pd.read_csv(…)`, with
    /// arguments only where pandas' defaults would misread it).
    pub call: String,
}

impl Default for Reading {
    fn default() -> Reading {
        Reading {
            codes: Vec::new(),
            lines: String::new(),
            decoded: Vec::new(),
            decoder: None,
            skip_bytes: 0,
            header: true,
            names: Vec::new(),
            call: String::new(),
        }
    }
}

/// Whether the first record is a header, as pandas' default
/// (`header=0`) takes it: yes unless every field of it is a number (a
/// table of numbers from its first line). A header with years or codes
/// among its names (`"Name","STATE_FIPS",1929,1930,…`: panel data) is one.
fn first_line_is_header(records: &[Vec<String>]) -> bool {
    let Some(first) = records.first() else {
        return true;
    };
    let number = |v: &str| {
        let v = v.trim().trim_matches('"');
        !v.is_empty() && v.parse::<f64>().is_ok()
    };
    !first.iter().all(|v| number(v) || v.trim().is_empty())
        || first.iter().all(|v| v.trim().is_empty())
}

/// Whether a line of `text` has a quoted field after spaces that follow
/// the separator (`1, "a, b"`): pandas' parser takes such a quote as text
/// and splits the field at its inner separator unless given
/// `skipinitialspace=True`.
fn spaced_quotes(text: &str, separator: char) -> bool {
    text.lines().take(1_000).any(|line| {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == separator && chars.peek() == Some(&' ') {
                while chars.peek() == Some(&' ') {
                    chars.next();
                }
                if chars.peek() == Some(&'"') {
                    return true;
                }
            }
        }
        false
    })
}

/// What `pd.read_csv` is given for the table the card shows as `shown`:
/// its path, or for an archive member the opened member (`/vsizip/data/a.zip/x.csv`
/// → `zipfile.ZipFile('data/a.zip').open('x.csv')`; a `.gz` file's own
/// path, whose compression pandas infers).
pub(super) fn source(shown: &str) -> String {
    let lower = shown.to_ascii_lowercase();
    let split = |rest: &str, ends: &[&str]| {
        let low = rest.to_ascii_lowercase();
        ends.iter().find_map(|end| {
            low.find(end).map(|at| {
                (
                    rest[..at + end.len() - 1].to_string(),
                    rest[at + end.len()..].to_string(),
                )
            })
        })
    };
    if let Some(rest) = shown.strip_prefix("/vsizip/") {
        if let Some((archive, member)) = split(rest, &[".zip/"]) {
            return format!(
                "zipfile.ZipFile({}).open({})",
                crate::util::py_str(&archive),
                crate::util::py_str(&member)
            );
        }
    }
    if let Some(rest) = shown.strip_prefix("/vsitar/") {
        if let Some((archive, member)) = split(rest, &[".tar.gz/", ".tgz/", ".tar/"]) {
            return format!(
                "tarfile.open({}).extractfile({})",
                crate::util::py_str(&archive),
                crate::util::py_str(&member)
            );
        }
    }
    if lower.starts_with("/vsigzip/") {
        return crate::util::py_str(&shown["/vsigzip/".len()..]);
    }
    crate::util::py_str(shown)
}

/// How to read the CSV whose first bytes are `head`, given to pandas as
/// `source` (see [`source`]).
pub(super) fn reading(head: &[u8], source: &str) -> Reading {
    let found = preamble::of(head);
    let skip_bytes = found.as_ref().map_or(0, |p| p.bytes);
    let head = &head[skip_bytes..];
    let encoding = text_encoding::of(head);
    let decoder = encoding.as_ref().and_then(|e| e.decoder);
    let text = text_encoding::read_as(head, decoder);
    let Some(separator) = delimiter(&text) else {
        return Reading {
            call: format!("pd.read_csv({source})"),
            ..Reading::default()
        };
    };
    let parsed = records(&text, separator);
    let header = first_line_is_header(&parsed);
    let whole = text.ends_with('\n');
    let codes = codes::columns(&parsed, whole);
    let decimal = decimal_comma_columns(&parsed, whole, separator);
    let mut lines = String::new();
    let mut arguments = Vec::new();
    if let Some(found) = &found {
        lines.push_str(&format!(
            "  preamble: {} line(s) above the header (the first: \"{}\"), which pandas would take for the header\n",
            found.lines,
            crate::util::clip(&found.first, 60)
        ));
        arguments.push(format!("skiprows={}", found.lines));
    }
    if separator != ',' {
        let written = if separator == '\t' {
            "\\t".to_string()
        } else {
            separator.to_string()
        };
        lines.push_str(&format!("  separator: `{written}`, not a comma\n"));
        arguments.push(format!("sep='{written}'"));
    }
    if !decimal.is_empty() {
        let names: Vec<String> = decimal.iter().map(|(n, _)| format!("`{n}`")).collect();
        lines.push_str(&format!(
            "  numbers: {} written with a decimal comma (\"{}\")\n",
            names.join(", "),
            decimal[0].1
        ));
        arguments.push("decimal=','".into());
    }
    // A `;` file's commas are decimal commas, and so are any file's when
    // some column writes them.
    let grouping = if decimal.is_empty() && separator != ';' {
        ','
    } else {
        '.'
    };
    let thousands = thousands_columns(&parsed, whole, grouping, !decimal.is_empty());
    if !thousands.is_empty() {
        let names: Vec<String> = thousands.iter().map(|(n, _)| format!("`{n}`")).collect();
        lines.push_str(&format!(
            "  numbers: {} written with thousands separators (\"{}\"), which pandas reads as text unless told\n",
            names.join(", "),
            thousands[0].1
        ));
        arguments.push(format!("thousands='{grouping}'"));
    }
    if !header {
        lines.push_str("  no header: the first line is data (every field of it a number)\n");
        arguments.push("header=None".into());
    }
    let mut decoded = Vec::new();
    if let Some(encoding) = encoding {
        if decoder.is_some() {
            decoded = parsed.iter().take(SAMPLE_ROWS + 1).cloned().collect();
        }
        lines.push_str(&encoding.line);
        arguments.push(encoding.argument);
    }
    if decoded.is_empty() && header {
        // The text as written: pandas reads a date as its text and an
        // empty field as missing, where GDAL reformats and fills them.
        decoded = parsed.iter().take(SAMPLE_ROWS + 1).cloned().collect();
    }
    let skip_spaces = spaced_quotes(&text, separator);
    if skip_spaces {
        lines.push_str("  quoted fields with spaces before their quotes (`, \"a, b\"`): pandas splits them at their inner separators unless told to skip the spaces\n");
        arguments.push("skipinitialspace=True".into());
    }
    if skip_spaces {
        for row in &mut decoded {
            for cell in row.iter_mut() {
                *cell = cell.trim_start().to_string();
            }
        }
    }
    lines.push_str(&codes::note(&codes).unwrap_or_default());
    arguments.extend(codes::dtype(&codes));
    let call = if arguments.is_empty() {
        format!("pd.read_csv({source})")
    } else {
        let call = format!("pd.read_csv({source}, {})", arguments.join(", "));
        lines.push_str(&format!("  read: {call}\n"));
        call
    };
    Reading {
        codes,
        lines,
        decoded,
        decoder,
        skip_bytes,
        names: match (header, parsed.first()) {
            // skipinitialspace drops the spaces before the names too.
            (true, Some(names)) if skip_spaces => {
                names.iter().map(|n| n.trim_start().to_string()).collect()
            }
            (true, Some(names)) => names.clone(),
            _ => Vec::new(),
        },
        header,
        call,
    }
}

/// Columns of a table split at `separator` (not a comma) whose values are
/// all numbers written with a decimal comma (`21,5`, `-1.234,5`; at least
/// one with the comma), each with such a value.
fn decimal_comma_columns(
    records: &[Vec<String>],
    whole: bool,
    separator: char,
) -> Vec<(String, String)> {
    let Some(scanned) = Scanned::of(records, whole).filter(|_| separator != ',') else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (i, name) in scanned.header.iter().enumerate() {
        let values = scanned.values(i);
        let comma = values.iter().find(|v| v.contains(','));
        if let Some(comma) = comma.filter(|_| values.iter().all(|v| decimal_comma_number(v))) {
            found.push((name.trim().to_string(), comma.to_string()));
        }
    }
    found
}

/// Columns whose values are all numbers written with `grouping` between
/// groups of three digits (`1,234,567`; with `.`, a decimal-comma
/// locale's `1.234.567,5`), at least one of them grouped, each with such
/// a value. A lone `.` group (`1.234`) is a decimal point unless the file
/// writes decimal commas (`decimal_commas`) or a value has two groups.
fn thousands_columns(
    records: &[Vec<String>],
    whole: bool,
    grouping: char,
    decimal_commas: bool,
) -> Vec<(String, String)> {
    let Some(scanned) = Scanned::of(records, whole) else {
        return Vec::new();
    };
    let point = if grouping == ',' { '.' } else { ',' };
    let mut found = Vec::new();
    for (i, name) in scanned.header.iter().enumerate() {
        let values = scanned.values(i);
        let grouped = values.iter().find(|v| v.contains(grouping));
        let Some(grouped) =
            grouped.filter(|_| values.iter().all(|v| grouped_number(v, grouping, point)))
        else {
            continue;
        };
        let sure = grouping == ','
            || decimal_commas
            || values.iter().any(|v| v.matches(grouping).count() >= 2);
        if sure {
            found.push((name.trim().to_string(), grouped.to_string()));
        }
    }
    found
}

/// Whether `v` is a number with `grouping` between groups of three digits
/// (or none) and `point` before its decimals.
fn grouped_number(v: &str, grouping: char, point: char) -> bool {
    let v = v.strip_prefix('-').unwrap_or(v);
    let (whole, fraction) = v.split_once(point).unwrap_or((v, "0"));
    let mut groups = whole.split(grouping);
    let first = groups.next().unwrap_or("");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let rest: Vec<&str> = groups.collect();
    digits(first)
        && (rest.is_empty() || first.len() <= 3)
        && rest.iter().all(|g| g.len() == 3 && digits(g))
        && digits(fraction)
}

/// Whether `v` is a number as a decimal-comma locale writes it: digits with
/// `.` between groups of three, then at most one `,` and digits.
fn decimal_comma_number(v: &str) -> bool {
    let v = v.strip_prefix('-').unwrap_or(v);
    let (whole, fraction) = v.split_once(',').unwrap_or((v, "0"));
    let mut groups = whole.split('.');
    let first = groups.next().unwrap_or("");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(first) && groups.all(|g| g.len() == 3 && digits(g)) && digits(fraction)
}

#[cfg(test)]
mod tests {
    use super::{reading, source};

    #[test]
    fn a_semicolon_table_with_decimal_commas_and_codes_gets_one_call_with_every_argument() {
        let csv = b"station;temp_c;GEOID;pop\nA;21,5;0101;1.234\nB;19;0102;12\n";
        let read = reading(csv, "'data/eu.csv'");
        assert_eq!(
            read.lines,
            "  separator: `;`, not a comma\n  \
             numbers: `temp_c` written with a decimal comma (\"21,5\")\n  \
             numbers: `pop` written with thousands separators (\"1.234\"), which pandas reads as text unless told\n  \
             codes: `GEOID` is digits with leading zeros (\"0101\"), which numbers drop: read as text\n  \
             read: pd.read_csv('data/eu.csv', sep=';', decimal=',', thousands='.', dtype={'GEOID': str})\n"
        );
        assert_eq!(read.codes.len(), 1);
    }

    #[test]
    fn numbers_with_thousands_separators_get_the_argument_that_reads_them() {
        let us = reading(
            b"name,pop\nA,\"1,234\"\nB,12\nC,\"2,345,678.5\"\n",
            "'data/us.csv'",
        );
        assert_eq!(
            us.lines,
            "  numbers: `pop` written with thousands separators (\"1,234\"), which pandas reads as text unless told\n  \
             read: pd.read_csv('data/us.csv', thousands=',')\n"
        );
        let eu = reading(
            b"name;pop;rate\nA;1.234;0,5\nB;12;1.250,25\n",
            "'data/eu.csv'",
        );
        assert!(
            eu.lines.ends_with(
                "read: pd.read_csv('data/eu.csv', sep=';', decimal=',', thousands='.')\n"
            ),
            "{}",
            eu.lines
        );
        assert!(
            eu.lines.contains("`pop`, `rate` written with thousands"),
            "{}",
            eu.lines
        );
        // A lone dot group in a file of decimal points is a decimal point.
        let points = reading(b"a;b\nx;1.234\ny;5.678\n", "'data/p.csv'");
        assert!(!points.lines.contains("thousands"), "{}", points.lines);
        let two = reading(b"a;b\nx;1.234.567\ny;25\n", "'data/t.csv'");
        assert!(two.lines.contains("thousands='.'"), "{}", two.lines);
    }

    #[test]
    fn quoted_fields_after_spaces_need_skipinitialspace() {
        // pandas without it: `b` is ` "x` and a third field ` y"` appears.
        let read = reading(b"a, b\n1, \"x, y\"\n2, \"z\"\n", "'data/q.csv'");
        assert!(
            read.call.ends_with("skipinitialspace=True)"),
            "{}",
            read.call
        );
        let plain = reading(b"a,b\n1,\"x, y\"\n", "'data/q.csv'");
        assert!(!plain.call.contains("skipinitialspace"), "{}", plain.call);
    }

    #[test]
    fn archive_members_are_given_to_pandas_opened() {
        assert_eq!(source("data/x.csv"), "'data/x.csv'");
        assert_eq!(
            source("/vsizip/data/Tables.ZIP/in/x.csv"),
            "zipfile.ZipFile('data/Tables.ZIP').open('in/x.csv')"
        );
        assert_eq!(
            source("/vsitar/data/t.tar.gz/x.csv"),
            "tarfile.open('data/t.tar.gz').extractfile('x.csv')"
        );
        assert_eq!(source("/vsigzip/data/x.csv.gz"), "'data/x.csv.gz'");
    }

    #[test]
    fn a_plain_utf8_comma_table_needs_no_arguments() {
        let read = reading(b"a,b\n1,x\n2.5,y\n", "'data/t.csv'");
        assert_eq!(read.lines, "");
        let tabs = reading(b"a\tb\n1\t2\n", "'data/t.tsv'");
        assert!(
            tabs.lines
                .ends_with("read: pd.read_csv('data/t.tsv', sep='\\t')\n"),
            "{}",
            tabs.lines
        );
        let latin = reading(b"name;x\nZ\xfcrich;1,5\n", "'data/l.csv'");
        assert_eq!(latin.decoded, [["name", "x"], ["Zürich", "1,5"]]);
        // The text as written, for the card's sample.
        assert_eq!(tabs.decoded, [["a", "b"], ["1", "2"]]);
        assert!(
            latin.lines.ends_with(
                "read: pd.read_csv('data/l.csv', sep=';', decimal=',', encoding='cp1252')\n"
            ),
            "{}",
            latin.lines
        );
    }
}
