//! Small helpers several modules share and no domain owns: atomic file
//! writes, clipping text for display, edit distance.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file in the same folder, fsync,
/// rename), so a reader never sees half a file and a crash loses nothing old.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // Temp files are created 0600; results are ordinary files.
    std::fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Gives the owner full rights on every folder under `dir` (a folder a
/// sandboxed process made 0000 cannot be emptied otherwise), never
/// following a link; errors are ignored (what cannot be opened up stays).
pub fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                make_removable(&entry.path());
            }
        }
    }
}

/// The name of this host (for names of files that processes on several
/// machines write into one shared folder).
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

/// Writes `value` as pretty JSON with a final newline, atomically.
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

/// `text` as a Python string literal: `'text'` as the card has always
/// written paths, or, when the text holds a quote, a backslash or a
/// control character (a file named `Côte d'Ivoire.csv`, a hostile name
/// that would close the literal), the escaped double-quoted form (JSON's
/// string syntax is valid Python).
pub fn py_str(text: &str) -> String {
    if text
        .chars()
        .any(|c| c == '\'' || c == '\\' || c.is_control())
    {
        serde_json::to_string(text).unwrap_or_else(|_| "''".into())
    } else {
        format!("'{text}'")
    }
}

/// The first `max` characters of `text`, marked with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Levenshtein distance (unit costs).
pub fn levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0usize; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        row[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(x != y);
            row[j + 1] = substitute.min(prev[j + 1] + 1).min(row[j] + 1);
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

/// Lower-case hex digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `sha256:` and the hex digest of `bytes`.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    format!(
        "sha256:{}",
        hex(&<sha2::Sha256 as sha2::Digest>::digest(bytes))
    )
}

/// `sha256:` and the hex digest of a file's bytes, read in pieces.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_reader(std::fs::File::open(path)?)
}

/// `sha256:` and the hex digest of everything `reader` gives, in pieces.
pub fn sha256_reader(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        sha2::Digest::update(&mut hasher, &buf[..n]);
    }
    Ok(format!("sha256:{}", hex(&sha2::Digest::finalize(hasher))))
}

#[cfg(test)]
mod py_str_tests {
    use super::py_str;

    #[test]
    fn a_name_with_a_quote_cannot_close_the_literal() {
        assert_eq!(py_str("data/a.csv"), "'data/a.csv'");
        assert_eq!(
            py_str("data/Côte d'Ivoire.csv"),
            "\"data/Côte d'Ivoire.csv\""
        );
        assert_eq!(
            py_str("data/a.csv', dtype=x, sep='"),
            "\"data/a.csv', dtype=x, sep='\""
        );
        assert_eq!(py_str("a\\b\n"), "\"a\\\\b\\n\"");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_matches_the_published_test_vector() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            super::sha256_bytes(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(super::sha256_file(&f).unwrap(), super::sha256_bytes(b"abc"));
    }

    use super::*;

    #[test]
    fn json_is_written_whole_with_a_newline_and_replaces_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write_json(&path, &serde_json::json!({ "a": 1 })).unwrap();
        write_json(&path, &serde_json::json!({ "a": 2 })).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"a\": 2\n}\n"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("São Paulo", 3), "São…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("ééé", 2), "éé…");
    }

    #[test]
    fn levenshtein_counts_edits() {
        let k: Vec<char> = "kitten".chars().collect();
        let s: Vec<char> = "sitting".chars().collect();
        assert_eq!(levenshtein(&k, &s), 3);
        assert_eq!(levenshtein::<char>(&[], &k), 6);
    }
}
