//! A shapefile whose `.dbf` names no encoding: no `.cpg` beside it and no
//! language driver id in its header (byte 29 is 0), as when a `.cpg` is
//! left behind while the other files are sent on. geopandas then reads its
//! text as ISO-8859-1: UTF-8, Cyrillic or Chinese names come out as
//! mojibake (`ZÃ¼rich`, `±±¾©ÊÐ`) without any error, and GDAL 3.6 (the
//! card's) passes the bytes on undecoded. The card reads the attribute
//! text itself, names what it is, opens the file with GDAL's `ENCODING=`
//! so its rows are right, and gives the `encoding=` that reads it in
//! geopandas where its default does not.

use std::path::Path;

use super::text_encoding;

/// Bytes of records read for the attribute text.
const RECORD_BYTES: usize = 256 << 10;

/// What an unlabelled `.dbf`'s text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DbfText {
    /// The encoding's name, as geopandas' `encoding=` takes it (GDAL's
    /// `ENCODING=` open option takes it in capitals: its own ISO-8859-1
    /// and UTF-8 conversions know only those).
    pub codec: &'static str,
    /// The card's lines: what geopandas would read, what the text is, and
    /// the read call; empty when geopandas' ISO-8859-1 reads it right.
    pub lines: String,
}

/// For the shapefile at `shp` (shown as `name`; a plain file or an
/// archive member, `/vsizip/…`), what its `.dbf`'s text is when nothing
/// names it; `None` when a `.cpg` or the header names the encoding or the
/// text is ASCII.
pub(super) fn unlabelled(shp: &Path, name: &str) -> Option<DbfText> {
    if sibling(shp, "cpg", 4).is_some() {
        return None;
    }
    let dbf = sibling(shp, "dbf", RECORD_BYTES + 64 * 1024)?;
    let text = attribute_text(&dbf)?;
    let first = text
        .split(|&b| b == b'\n')
        .find(|f| f.iter().any(|&b| b >= 0x80))?;
    let (codec, what, shown) = if let Ok(utf8) = std::str::from_utf8(&text) {
        let word = utf8.lines().find(|l| !l.is_ascii()).unwrap_or("");
        ("utf-8", "UTF-8".to_string(), word.to_string())
    } else {
        let (found, codec, script) = text_encoding::recognised(&text)?;
        // ISO-8859-1 reads Windows-1252 alike but for 0x80–0x9F.
        if found == encoding_rs::WINDOWS_1252 && !text.iter().any(|b| (0x80..0xA0).contains(b)) {
            return Some(DbfText {
                codec: "iso-8859-1",
                lines: String::new(),
            });
        }
        let (word, _) = found.decode_without_bom_handling(first);
        (
            codec,
            format!("{} ({script})", found.name()),
            word.into_owned(),
        )
    };
    let misread: String = first.iter().map(|&b| char::from(b)).collect();
    let clip = |t: &str| crate::util::clip(t.trim(), 30);
    Some(DbfText {
        codec,
        lines: format!(
            "  text: the .dbf names no encoding (no .cpg, no language driver id), so geopandas reads it as ISO-8859-1 (\"{}\"); it is {what}: \"{}\" (shown so here)\n  read: gpd.read_file({}, encoding='{codec}')\n",
            clip(&misread),
            clip(&shown),
            crate::util::py_str(name)
        ),
    })
}

/// The first `limit` bytes of the file beside `path` with the same stem
/// and extension `extension` in either case; `None` when there is none.
fn sibling(path: &Path, extension: &str, limit: usize) -> Option<Vec<u8>> {
    [extension.to_string(), extension.to_ascii_uppercase()]
        .iter()
        .find_map(|e| crate::gdal_io::file_head(&path.with_extension(e), limit))
}

/// The text of a `.dbf`'s character fields in its first records, one value
/// per line, trailing blanks cut; `None` when its header names an encoding
/// (a language driver id) or cannot be read.
fn attribute_text(dbf: &[u8]) -> Option<Vec<u8>> {
    if dbf.len() < 33 || dbf[29] != 0 {
        return None;
    }
    let header = usize::from(u16::from_le_bytes([dbf[8], dbf[9]]));
    let record = usize::from(u16::from_le_bytes([dbf[10], dbf[11]]));
    if record == 0 || header > dbf.len() {
        return None;
    }
    // Field descriptors: 32 bytes each from byte 32 to the 0x0D terminator;
    // a record is a deletion flag, then the fields in order.
    let mut text_fields = Vec::new();
    let mut offset = 1;
    for descriptor in dbf[32..header].chunks_exact(32) {
        if descriptor[0] == 0x0D {
            break;
        }
        let length = usize::from(descriptor[16]);
        if descriptor[11] == b'C' {
            text_fields.push(offset..offset + length);
        }
        offset += length;
    }
    let mut text = Vec::new();
    for row in dbf[header..]
        .chunks_exact(record)
        .take(RECORD_BYTES / record)
    {
        for field in &text_fields {
            let Some(value) = row.get(field.clone()) else {
                continue;
            };
            let end = value
                .iter()
                .rposition(|&b| b != b' ' && b != 0)
                .map_or(0, |i| i + 1);
            if end > 0 {
                text.extend_from_slice(&value[..end]);
                text.push(b'\n');
            }
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.dbf` with one character field `name` of 20 bytes holding
    /// `values`, and language driver id `ldid`.
    fn dbf(values: &[&[u8]], ldid: u8) -> Vec<u8> {
        let mut bytes = vec![0u8; 32];
        bytes[0] = 3;
        bytes[4..8].copy_from_slice(&(values.len() as u32).to_le_bytes());
        bytes[8..10].copy_from_slice(&65u16.to_le_bytes());
        bytes[10..12].copy_from_slice(&21u16.to_le_bytes());
        bytes[29] = ldid;
        let mut field = [0u8; 32];
        field[..4].copy_from_slice(b"name");
        field[11] = b'C';
        field[16] = 20;
        bytes.extend_from_slice(&field);
        bytes.push(0x0D);
        for value in values {
            bytes.push(b' ');
            let mut cell = [b' '; 20];
            cell[..value.len()].copy_from_slice(value);
            bytes.extend_from_slice(&cell);
        }
        bytes.push(0x1A);
        bytes
    }

    #[test]
    fn the_text_fields_of_the_first_records_are_read() {
        let text = attribute_text(&dbf(&[b"Bern", b"Z\xfcrich"], 0)).unwrap();
        assert_eq!(text, b"Bern\nZ\xfcrich\n");
        // A language driver id names the encoding: GDAL reads it right.
        assert_eq!(attribute_text(&dbf(&[b"Z\xfcrich"], 0x57)), None);
    }

    #[test]
    fn an_unlabelled_dbf_is_named_with_the_encoding_that_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let shp = dir.path().join("cities.shp");
        std::fs::write(&shp, b"").unwrap();
        let (moscow, _, _) = encoding_rs::WINDOWS_1251.encode("Москва");
        let (spb, _, _) = encoding_rs::WINDOWS_1251.encode("Санкт-Петербург");
        let (nsk, _, _) = encoding_rs::WINDOWS_1251.encode("Новосибирск");
        std::fs::write(
            dir.path().join("cities.dbf"),
            dbf(&[&moscow, &spb, &nsk], 0),
        )
        .unwrap();
        let found = unlabelled(&shp, "data/cities.shp").unwrap();
        assert_eq!(found.codec, "cp1251");
        assert!(
            found
                .lines
                .contains("it is windows-1251 (Cyrillic): \"Москва\"")
                && found
                    .lines
                    .ends_with("read: gpd.read_file('data/cities.shp', encoding='cp1251')\n"),
            "{found:?}"
        );
        // UTF-8 text without a .cpg is misread too.
        std::fs::write(
            dir.path().join("cities.dbf"),
            dbf(&["Zürich".as_bytes()], 0),
        )
        .unwrap();
        let found = unlabelled(&shp, "data/cities.shp").unwrap();
        assert_eq!(found.codec, "utf-8");
        assert!(
            found
                .lines
                .contains("(\"ZÃ¼rich\"); it is UTF-8: \"Zürich\""),
            "{found:?}"
        );
        // A .cpg names it; ASCII and Latin-1 text read right as they are.
        std::fs::write(dir.path().join("cities.CPG"), b"UTF-8").unwrap();
        assert_eq!(unlabelled(&shp, "data/cities.shp"), None);
        std::fs::remove_file(dir.path().join("cities.CPG")).unwrap();
        std::fs::write(dir.path().join("cities.dbf"), dbf(&[b"Bern"], 0)).unwrap();
        assert_eq!(unlabelled(&shp, "data/cities.shp"), None);
        // Latin-1 text: geopandas reads it right; the card opens it so.
        std::fs::write(
            dir.path().join("cities.dbf"),
            dbf(&[b"Z\xfcrich", b"Gen\xe8ve", b"K\xf6ln"], 0),
        )
        .unwrap();
        let found = unlabelled(&shp, "data/cities.shp").unwrap();
        assert_eq!((found.codec, found.lines.as_str()), ("iso-8859-1", ""));
    }
}
