//! Whether a text table is UTF-8, and what it likely is when it is not:
//! pandas and geopandas read UTF-8 unless told otherwise and stop at the
//! first other byte (`UnicodeDecodeError`), while GDAL reads any bytes, so
//! without this note the card would describe a file the model then cannot
//! open as the card says.

/// Bytes Python's `cp1252` codec has no character for (it raises on them;
/// `latin-1` never does).
const CP1252_UNDEFINED: [u8; 5] = [0x81, 0x8D, 0x8F, 0x90, 0x9D];

/// Windows-1252's characters for the bytes 0x80–0x9F (where it differs
/// from Latin-1; the undefined ones are shown as Latin-1 would).
const CP1252_HIGH: [char; 32] = [
    '€', '\u{81}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{8d}', 'Ž', '\u{8f}',
    '\u{90}', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{9d}', 'ž', 'Ÿ',
];

/// What the first bytes of a text table say of its encoding when it is not
/// UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Encoding {
    /// The card's line saying so (without the reading call).
    pub line: String,
    /// What `pd.read_csv` needs: `encoding='cp1252'`, or
    /// `encoding_errors='replace'` for mostly-UTF-8 text; `encoding=…` when
    /// the model must choose.
    pub argument: String,
    /// Whether the text reads as Windows-1252 / Latin-1 (then the card
    /// shows its sample values decoded that way).
    pub western: bool,
}

/// The encoding of a text table whose first bytes (`head`) are not UTF-8 —
/// a UTF-16 byte-order mark, or a byte that UTF-8 cannot start or continue
/// — with the `pd.read_csv` argument that reads it. `None` for UTF-8 (a
/// byte-order mark or not, and a character cut by the end of `head`).
pub(super) fn of(head: &[u8]) -> Option<Encoding> {
    let found = |line: String, argument: &str, western: bool| {
        Some(Encoding {
            line,
            argument: argument.to_string(),
            western,
        })
    };
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return found(
            "  text: UTF-16 (it starts with a byte-order mark)\n".into(),
            "encoding='utf-16'",
            false,
        );
    }
    let bad = match std::str::from_utf8(head) {
        Ok(_) => return None,
        Err(e) if e.error_len().is_none() => return None,
        Err(e) => e.valid_up_to(),
    };
    let line = head[..bad].iter().filter(|&&b| b == b'\n').count() + 1;
    let at = format!("byte 0x{:02X} on line {line}", head[bad]);
    if head[..bad].iter().any(|&b| b >= 0x80) {
        return found(
            format!("  text: UTF-8 up to {at}, which is not (read, the bad bytes become �)\n"),
            "encoding_errors='replace'",
            false,
        );
    }
    let high: Vec<usize> = (0..head.len()).filter(|&i| head[i] >= 0x80).collect();
    let alone = high
        .iter()
        .filter(|&&i| (i == 0 || head[i - 1] < 0x80) && head.get(i + 1).is_none_or(|&b| b < 0x80))
        .count();
    // Western European text has its accented letters one by one between
    // ASCII ones; Cyrillic, Greek and East Asian legacy encodings write
    // whole words of bytes over 0x7F.
    if alone * 5 >= high.len() * 4 {
        let codec = if head.iter().any(|b| CP1252_UNDEFINED.contains(b)) {
            "latin-1"
        } else {
            "cp1252"
        };
        return found(
            format!(
                "  text: not UTF-8 ({at}); its other bytes stand alone, as in Windows-1252 / Latin-1 text (\"{}\")\n",
                word_at(head, bad)
            ),
            &format!("encoding='{codec}'"),
            true,
        );
    }
    found(
        format!("  text: not UTF-8 ({at}), with runs of bytes over 0x7F as in Cyrillic (cp1251), Greek (cp1253) or East Asian (gbk, shift_jis, euc-kr) text: give the file's encoding, then check the text\n"),
        "encoding=…",
        false,
    )
}

/// The field around byte `at` (up to the next separator, quote or line
/// end; 40 bytes at most), read as Windows-1252.
fn word_at(head: &[u8], at: usize) -> String {
    let separator = |b: &u8| b",;\t\r\n\" ".contains(b);
    let start = head[..at]
        .iter()
        .rposition(separator)
        .map_or(0, |i| i + 1)
        .max(at.saturating_sub(20));
    let end = head[at..]
        .iter()
        .position(separator)
        .map_or(head.len(), |i| at + i)
        .min(at + 20);
    decode_cp1252(&head[start..end])
}

/// `bytes` read as Windows-1252 (Latin-1 where cp1252 has no character).
pub(super) fn decode_cp1252(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b {
            0x80..=0x9F => CP1252_HIGH[usize::from(b - 0x80)],
            _ => char::from(b),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::of;

    #[test]
    fn utf8_tables_have_no_encoding_to_name() {
        assert_eq!(of(b"name,x\nZ\xc3\xbcrich,1\n"), None);
        assert_eq!(of(b"\xef\xbb\xbfid,x\n1,2\n"), None);
        // The probe's last character cut in two by its end.
        assert_eq!(of(b"name\nZ\xc3"), None);
    }

    #[test]
    fn western_legacy_text_is_named_with_the_codec_that_reads_it() {
        let found = of(b"name,x\nZ\xfcrich,1\n\x93Gen\xe8ve\x94,2\n").unwrap();
        assert_eq!(
            found.line,
            "  text: not UTF-8 (byte 0xFC on line 2); its other bytes stand alone, as in \
             Windows-1252 / Latin-1 text (\"Zürich\")\n"
        );
        assert_eq!(found.argument, "encoding='cp1252'");
        // A byte cp1252 has no character for: only latin-1 reads every byte.
        assert_eq!(
            of(b"name\nA\x81b\n").unwrap().argument,
            "encoding='latin-1'"
        );
    }

    #[test]
    fn runs_of_high_bytes_mixed_utf8_and_utf16_get_their_own_advice() {
        // "Москва" in cp1251.
        let found = of(b"city\n\xcc\xee\xf1\xea\xe2\xe0\n").unwrap();
        assert!(
            found
                .line
                .contains("(byte 0xCC on line 2), with runs of bytes over 0x7F"),
            "{found:?}"
        );
        assert_eq!(found.argument, "encoding=…");
        let found = of(b"a\n\xc3\xa9\nb\xe9c\n").unwrap();
        assert!(
            found
                .line
                .starts_with("  text: UTF-8 up to byte 0xE9 on line 3"),
            "{found:?}"
        );
        assert_eq!(found.argument, "encoding_errors='replace'");
        assert_eq!(
            of(b"\xff\xfei\x00d\x00").unwrap().argument,
            "encoding='utf-16'"
        );
    }
}
