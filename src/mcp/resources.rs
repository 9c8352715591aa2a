//! The MCP resources of a client: the files its cells wrote under
//! `pred_results/` (`gisclaw://pred_results/<path>`) and its transcript
//! (`gisclaw://transcript`); with a data folder, its schema card as text
//! (`gisclaw://card`) and as JSON (`gisclaw://card.json`, served by the
//! server from its shared state). A read never leaves `pred_results/`: the path
//! of the file actually opened is checked, so a link a cell planted there
//! cannot hand the client a file the sandbox itself could not read.

use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::beneath;

/// The URI of the data folder's schema card, as the model reads it.
pub const CARD_URI: &str = "gisclaw://card";
/// The URI of the schema card's facts as JSON (`gisclaw schema card`).
pub const CARD_JSON_URI: &str = "gisclaw://card.json";
/// The URI of the transcript.
pub const TRANSCRIPT_URI: &str = "gisclaw://transcript";
/// The prefix of every output's URI.
pub const OUTPUT_PREFIX: &str = "gisclaw://pred_results/";
/// The largest file a read returns (bigger ones are refused with a message
/// saying where the file is).
pub const MAX_READ_BYTES: u64 = 32 * 1024 * 1024;

/// One listed resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Its URI.
    pub uri: String,
    /// Its path as the cells see it (`pred_results/map.png`).
    pub name: String,
    /// Its MIME type, when known.
    pub mime: Option<&'static str>,
    /// Its size in bytes.
    pub size: u64,
}

/// What a read returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// UTF-8 text.
    Text {
        /// The text.
        text: String,
        /// Its MIME type.
        mime: &'static str,
    },
    /// Binary data, base64-encoded.
    Blob {
        /// The base64 text.
        base64: String,
        /// Its MIME type.
        mime: &'static str,
    },
}

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not one of this server's URIs.
    #[error("unknown resource {0}: outputs are gisclaw://pred_results/<path>, the transcript gisclaw://transcript, the data's card gisclaw://card and gisclaw://card.json")]
    Unknown(String),
    /// No such output.
    #[error("{0} does not exist (list_files shows the outputs)")]
    Missing(String),
    /// Outside `pred_results/`, or not a plain file.
    #[error("{0} is refused: it leads outside pred_results/ or is not a plain file")]
    Refused(String),
    /// Too large to return.
    #[error("{uri} is {size} bytes, over the {max}-byte limit of a read; it is at {path}")]
    TooLarge {
        /// The URI.
        uri: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
        /// Where it is on disk.
        path: PathBuf,
    },
    /// Reading failed.
    #[error("reading {0}: {1}")]
    Io(String, std::io::Error),
}

/// The MIME type of a file, by its extension.
pub fn mime_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "tif" | "tiff" => "image/tiff",
        "csv" => "text/csv",
        "txt" | "log" | "md" => "text/plain",
        "json" => "application/json",
        "geojson" => "application/geo+json",
        "jsonl" => "application/jsonl",
        "html" | "htm" => "text/html",
        "py" => "text/x-python",
        "pdf" => "application/pdf",
        "gpkg" => "application/geopackage+sqlite3",
        "parquet" => "application/vnd.apache.parquet",
        "zip" => "application/zip",
        _ => return None,
    })
}

/// Percent-encodes a relative path for a URI (`/` kept).
fn encode(rel: &str) -> String {
    let mut out = String::new();
    for b in rel.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes [`encode`]'s output (`None` for malformed escapes or non-UTF-8).
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Every resource of the client whose folder is `out`: the transcript,
/// then the outputs, sorted.
pub fn list(out: &Path) -> Vec<Listed> {
    let mut all = Vec::new();
    if let Ok(meta) = std::fs::metadata(out.join("transcript.jsonl")) {
        all.push(Listed {
            uri: TRANSCRIPT_URI.into(),
            name: "transcript.jsonl".into(),
            mime: Some("application/jsonl"),
            size: meta.len(),
        });
    }
    for (rel, size) in plain_files(&out.join("pred_results")) {
        all.push(Listed {
            uri: format!("{OUTPUT_PREFIX}{}", encode(&rel)),
            mime: mime_of(Path::new(&rel)),
            name: format!("pred_results/{rel}"),
            size,
        });
    }
    all
}

/// Most files listed (a cell could write millions).
pub const MAX_LISTED: usize = 10_000;

/// The plain files under `dir`, relative and sorted; links are not
/// followed (a cell may plant `pred_results/root -> /`), folders are
/// entered by descriptor (crate::beneath).
fn plain_files(dir: &Path) -> Vec<(String, u64)> {
    let Ok(folder) = beneath::Dir::open(dir) else {
        return Vec::new();
    };
    let budget = beneath::WalkBudget {
        entries: MAX_LISTED * 4,
        ..beneath::WalkBudget::default()
    };
    let mut found: Vec<(String, u64)> = folder
        .walk(budget)
        .files
        .into_iter()
        .filter(|(_, entry)| entry.is_file())
        .map(|(rel, entry)| (rel.to_string_lossy().into_owned(), entry.len))
        .collect();
    found.truncate(MAX_LISTED);
    found
}

/// Reads the resource `uri` of the client whose folder is `out`.
pub fn read(out: &Path, uri: &str) -> Result<Contents, ReadError> {
    let (root, rel) = if uri == TRANSCRIPT_URI {
        (out.to_path_buf(), "transcript.jsonl".to_string())
    } else if let Some(rel) = uri.strip_prefix(OUTPUT_PREFIX) {
        let rel = decode(rel).ok_or_else(|| ReadError::Unknown(uri.into()))?;
        (out.join("pred_results"), rel)
    } else {
        return Err(ReadError::Unknown(uri.into()));
    };
    let root = root
        .canonicalize()
        .map_err(|e| ReadError::Io(uri.into(), e))?;
    let path = root.join(&rel);
    // Opened beneath the root as the cell could (crate::beneath): no link
    // out of it, a regular file only (a FIFO is refused, never waited on).
    let dir = beneath::Dir::open(&root).map_err(|e| ReadError::Io(uri.into(), e))?;
    let (file, facts) = dir.open_file(Path::new(&rel)).map_err(|why| match why {
        beneath::Refused::Missing => ReadError::Missing(uri.into()),
        beneath::Refused::Io(e) => ReadError::Io(uri.into(), e),
        _ => ReadError::Refused(uri.into()),
    })?;
    if facts.len > MAX_READ_BYTES {
        return Err(ReadError::TooLarge {
            uri: uri.into(),
            size: facts.len,
            max: MAX_READ_BYTES,
            path: path.clone(),
        });
    }
    let mut bytes = Vec::with_capacity(facts.len as usize);
    file.take(MAX_READ_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Io(uri.into(), e))?;
    let mime = mime_of(&path);
    let textual = mime.is_none_or(|m| {
        m.starts_with("text/")
            || m.ends_with("json")
            || m == "application/jsonl"
            || m == "image/svg+xml"
    });
    match (textual, String::from_utf8(bytes)) {
        (true, Ok(text)) => Ok(Contents::Text {
            text,
            mime: mime.unwrap_or("text/plain"),
        }),
        (_, Ok(text)) => Ok(Contents::Blob {
            base64: base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            mime: mime.unwrap_or("application/octet-stream"),
        }),
        (_, Err(e)) => Ok(Contents::Blob {
            base64: base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            mime: mime.unwrap_or("application/octet-stream"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_non_ascii_and_spaces() {
        let rel = "Zürich maps/höhe 1.png";
        let uri = encode(rel);
        assert!(uri.is_ascii() && !uri.contains(' '));
        assert_eq!(decode(&uri).as_deref(), Some(rel));
        assert_eq!(decode("bad%2"), None);
    }

    #[test]
    fn reads_outputs_and_refuses_links_out_of_pred_results() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        let pred = out.join("pred_results");
        std::fs::create_dir_all(pred.join("sub")).unwrap();
        std::fs::write(pred.join("sub/a b.csv"), "x,y\n1,2\n").unwrap();
        std::fs::write(pred.join("m.png"), [0x89, b'P', b'N', b'G', 0, 1, 2]).unwrap();
        std::fs::write(out.join("secret.txt"), "not yours").unwrap();
        std::os::unix::fs::symlink(out.join("secret.txt"), pred.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(out, pred.join("up")).unwrap();

        let listed = list(out);
        let names: Vec<&str> = listed.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names,
            ["pred_results/m.png", "pred_results/sub/a b.csv"],
            "links are not listed"
        );
        let csv = listed
            .iter()
            .find(|l| l.name == "pred_results/sub/a b.csv")
            .unwrap();
        assert_eq!(csv.uri, "gisclaw://pred_results/sub/a%20b.csv");
        match read(out, &csv.uri).unwrap() {
            Contents::Text { text, mime } => {
                assert_eq!(text, "x,y\n1,2\n");
                assert_eq!(mime, "text/csv");
            }
            other => panic!("{other:?}"),
        }
        match read(out, "gisclaw://pred_results/m.png").unwrap() {
            Contents::Blob { base64, mime } => {
                assert_eq!(mime, "image/png");
                assert_eq!(
                    base64::engine::general_purpose::STANDARD
                        .decode(base64)
                        .unwrap()[..4],
                    [0x89, b'P', b'N', b'G']
                );
            }
            other => panic!("{other:?}"),
        }
        for uri in [
            "gisclaw://pred_results/leak.txt",
            "gisclaw://pred_results/up/secret.txt",
            "gisclaw://pred_results/../secret.txt",
            "gisclaw://pred_results/sub",
        ] {
            assert!(
                matches!(read(out, uri), Err(ReadError::Refused(_))),
                "{uri}"
            );
        }
        assert!(matches!(
            read(out, "gisclaw://pred_results/none.csv"),
            Err(ReadError::Missing(_))
        ));
        assert!(matches!(
            read(out, "file:///etc/passwd"),
            Err(ReadError::Unknown(_))
        ));
    }
}
