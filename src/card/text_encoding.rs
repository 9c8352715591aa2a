//! Whether a text table is UTF-8, and what it likely is when it is not:
//! pandas and geopandas read UTF-8 unless told otherwise and stop at the
//! first other byte (`UnicodeDecodeError`), while GDAL reads any bytes, so
//! without this note the card would describe a file the model then cannot
//! open as the card says.

use std::borrow::Cow;

use encoding_rs::Encoding as Codec;

/// Bytes Python's `cp1252` codec has no character for (it raises on them;
/// `latin-1` never does).
const CP1252_UNDEFINED: [u8; 5] = [0x81, 0x8D, 0x8F, 0x90, 0x9D];

/// The legacy encodings the detector can name, with the codec name that
/// reads every byte the same way (the Windows supersets where the WHATWG
/// encoding is one: GBK → gb18030, EUC-KR → cp949, Shift_JIS → cp932, Big5
/// → big5hkscs), written as both Python and GDAL's iconv know it (pandas'
/// and geopandas' `encoding=`), and the script they write.
const CODECS: [(&Codec, &str, &str); 26] = [
    (encoding_rs::WINDOWS_1252, "cp1252", "Western European"),
    (encoding_rs::WINDOWS_1250, "cp1250", "Central European"),
    (encoding_rs::WINDOWS_1251, "cp1251", "Cyrillic"),
    (encoding_rs::WINDOWS_1253, "cp1253", "Greek"),
    (encoding_rs::WINDOWS_1254, "cp1254", "Turkish"),
    (encoding_rs::WINDOWS_1255, "cp1255", "Hebrew"),
    (encoding_rs::WINDOWS_1256, "cp1256", "Arabic"),
    (encoding_rs::WINDOWS_1257, "cp1257", "Baltic"),
    (encoding_rs::WINDOWS_1258, "cp1258", "Vietnamese"),
    (encoding_rs::WINDOWS_874, "cp874", "Thai"),
    (encoding_rs::KOI8_R, "koi8-r", "Cyrillic"),
    (encoding_rs::KOI8_U, "koi8-u", "Cyrillic"),
    (encoding_rs::IBM866, "cp866", "Cyrillic"),
    (encoding_rs::ISO_8859_2, "iso-8859-2", "Central European"),
    (encoding_rs::ISO_8859_4, "iso-8859-4", "Baltic"),
    (encoding_rs::ISO_8859_5, "iso-8859-5", "Cyrillic"),
    (encoding_rs::ISO_8859_6, "iso-8859-6", "Arabic"),
    (encoding_rs::ISO_8859_7, "iso-8859-7", "Greek"),
    (encoding_rs::ISO_8859_8, "iso-8859-8", "Hebrew"),
    (encoding_rs::ISO_8859_13, "iso-8859-13", "Baltic"),
    (encoding_rs::GBK, "gb18030", "Chinese (simplified)"),
    (encoding_rs::BIG5, "big5hkscs", "Chinese (traditional)"),
    (encoding_rs::SHIFT_JIS, "cp932", "Japanese"),
    (encoding_rs::EUC_JP, "euc-jp", "Japanese"),
    (encoding_rs::EUC_KR, "cp949", "Korean"),
    (encoding_rs::X_MAC_CYRILLIC, "mac-cyrillic", "Cyrillic"),
];

/// What the first bytes of a text table say of its encoding when it is not
/// UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Encoding {
    /// The card's line saying so (without the reading call).
    pub line: String,
    /// What `pd.read_csv` needs: `encoding='cp1251'`, or
    /// `encoding_errors='replace'` for mostly-UTF-8 text; `encoding=…` when
    /// the model must choose.
    pub argument: String,
    /// The legacy encoding the text reads as, when it was recognised (the
    /// card then shows its header and sample values decoded that way).
    pub decoder: Option<&'static Codec>,
}

/// The encoding of a text table whose first bytes (`head`) are not UTF-8 —
/// a UTF-16 byte-order mark, or a byte that UTF-8 cannot start or continue
/// — with the `pd.read_csv` argument that reads it. `None` for UTF-8 (a
/// byte-order mark or not, and a character cut by the end of `head`).
pub(super) fn of(head: &[u8]) -> Option<Encoding> {
    let found = |line: String, argument: &str, decoder: Option<&'static Codec>| {
        Some(Encoding {
            line,
            argument: argument.to_string(),
            decoder,
        })
    };
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return found(
            "  text: UTF-16 (it starts with a byte-order mark)\n".into(),
            "encoding='utf-16'",
            None,
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
            None,
        );
    }
    match recognised(head) {
        Some((codec, python, script)) => {
            // Python's cp1252 raises on five bytes that latin-1 reads.
            let python = if codec == encoding_rs::WINDOWS_1252
                && head.iter().any(|b| CP1252_UNDEFINED.contains(b))
            {
                "latin-1"
            } else {
                python
            };
            found(
                format!(
                    "  text: not UTF-8 ({at}); it reads as {} ({script}): \"{}\"\n",
                    codec.name(),
                    word_at(head, bad, codec)
                ),
                &format!("encoding='{python}'"),
                Some(codec),
            )
        }
        None => found(
            format!("  text: not UTF-8 ({at}), and not an encoding recognised from its first bytes: give the file's encoding, then check the text\n"),
            "encoding=…",
            None,
        ),
    }
}

/// The legacy encoding `head` most likely is (Mozilla's detector, as
/// browsers guess unlabelled pages), with its codec name and script;
/// `None` when the guess is not one of [`CODECS`] or does not decode the
/// bytes cleanly.
pub(super) fn recognised(head: &[u8]) -> Option<(&'static Codec, &'static str, &'static str)> {
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    // A prefix of the file: its last character may be cut.
    detector.feed(head, false);
    let guess = detector.guess(None, chardetng::Utf8Detection::Allow);
    let &(codec, python, script) = CODECS.iter().find(|(c, _, _)| *c == guess)?;
    let mut decoder = codec.new_decoder_without_bom_handling();
    let mut text = String::with_capacity(head.len() * 3);
    let (_, _, malformed) = decoder.decode_to_string(head, &mut text, false);
    (!malformed).then_some((codec, python, script))
}

/// The field around byte `at` (from the separator, quote or line end
/// before it to the one after it; 60 bytes at most each side), decoded.
fn word_at(head: &[u8], at: usize, codec: &'static Codec) -> String {
    let separator = |b: &u8| b",;\t\r\n\"".contains(b);
    let start = head[..at]
        .iter()
        .rposition(separator)
        .map_or(0, |i| i + 1)
        .max(at.saturating_sub(60));
    let end = head[at..]
        .iter()
        .position(separator)
        .map_or(head.len(), |i| at + i)
        .min(at + 60);
    let (text, _) = codec.decode_without_bom_handling(&head[start..end]);
    crate::util::clip(text.trim().trim_end_matches('\u{FFFD}'), 40)
}

/// `head` decoded from the legacy encoding `codec` (a character cut by the
/// end of `head` is dropped), or without one read as UTF-8.
pub(super) fn read_as<'a>(head: &'a [u8], codec: Option<&'static Codec>) -> Cow<'a, str> {
    match codec {
        Some(codec) => {
            let (text, _) = codec.decode_without_bom_handling(head);
            Cow::Owned(text.trim_end_matches('\u{FFFD}').to_string())
        }
        None => String::from_utf8_lossy(head),
    }
}

#[cfg(test)]
mod tests {
    use super::of;

    /// `text` written in `codec`.
    fn written(text: &str, codec: &'static encoding_rs::Encoding) -> Vec<u8> {
        let (bytes, _, unmappable) = codec.encode(text);
        assert!(!unmappable, "{text} in {}", codec.name());
        bytes.into_owned()
    }

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
            "  text: not UTF-8 (byte 0xFC on line 2); it reads as windows-1252 (Western European): \"Zürich\"\n"
        );
        assert_eq!(found.argument, "encoding='cp1252'");
        assert_eq!(found.decoder, Some(encoding_rs::WINDOWS_1252));
        // A byte cp1252 has no character for: only latin-1 reads every byte.
        assert_eq!(
            of(b"name,x\nZ\xfcrich,1\nGen\xe8ve,2\nM\xfcnchen \x81,3\n")
                .unwrap()
                .argument,
            "encoding='latin-1'"
        );
    }

    #[test]
    fn other_legacy_encodings_are_recognised_with_their_python_codecs() {
        for (text, codec, python, word) in [
            (
                "город,население\nМосква,12655050\nСанкт-Петербург,5384342\nНовосибирск,1620162\nЕкатеринбург,1544376\n",
                encoding_rs::WINDOWS_1251,
                "cp1251",
                "город",
            ),
            (
                "miasto,ludność\nŁódź,672185\nKraków,779966\nGdańsk,470907\nWrocław,672929\nPoznań,541316\n",
                encoding_rs::WINDOWS_1250,
                "cp1250",
                "ludność",
            ),
            (
                "πόλη,πληθυσμός\nΑθήνα,664046\nΘεσσαλονίκη,325182\nΠάτρα,167446\nΗράκλειο,179302\n",
                encoding_rs::WINDOWS_1253,
                "cp1253",
                "πόλη",
            ),
            (
                "城市,人口,省份\n北京市,21893095,北京\n上海市,24870895,上海\n广州市,18676605,广东省\n深圳市,17560061,广东省\n",
                encoding_rs::GBK,
                "gb18030",
                "城市",
            ),
            (
                "都市,人口,都道府県\n東京都区部,9733276,東京都\n横浜市,3777491,神奈川県\n大阪市,2752412,大阪府\n名古屋市,2332176,愛知県\n",
                encoding_rs::SHIFT_JIS,
                "cp932",
                "都市",
            ),
            (
                "도시,인구,지역\n서울특별시,9586195,수도권\n부산광역시,3349016,영남\n인천광역시,2948375,수도권\n대구광역시,2385412,영남\n",
                encoding_rs::EUC_KR,
                "cp949",
                "도시",
            ),
        ] {
            let found = of(&written(text, codec)).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(found.decoder, Some(codec), "{text}: {found:?}");
            assert_eq!(found.argument, format!("encoding='{python}'"));
            assert!(
                found
                    .line
                    .contains(&format!("it reads as {}", codec.name()))
                    && found.line.contains(&format!("\"{word}\"")),
                "{found:?}"
            );
        }
    }

    #[test]
    fn mixed_utf8_utf16_and_unrecognised_bytes_get_their_own_advice() {
        let found = of(b"a\n\xc3\xa9\nb\xe9c\n").unwrap();
        assert!(
            found
                .line
                .starts_with("  text: UTF-8 up to byte 0xE9 on line 3"),
            "{found:?}"
        );
        assert_eq!(found.argument, "encoding_errors='replace'");
        assert_eq!(found.decoder, None);
        assert_eq!(
            of(b"\xff\xfei\x00d\x00").unwrap().argument,
            "encoding='utf-16'"
        );
        // Bytes that read as nothing in particular still get a codec that
        // reads every one of them, rather than one that raises.
        let found = of(b"id\n\x81\x20\xfe\xff\x80\n").unwrap();
        assert_eq!(found.argument, "encoding='latin-1'", "{found:?}");
    }
}
