//! Retrieval over the GIS libraries' own documentation (RAG, GeoAgent §3.2):
//! the docstrings of the sandbox venv's modules, each public object once
//! under its canonical path with its aliases, extracted once ([`build`]),
//! plus gisclaw's how-to [`recipes`]; searched by BM25 (tantivy,
//! [`index`]), by embedding cosine over every chunk of a docstring (MiniLM,
//! [`crate::embed`]) and by exact API names, fused by weighted reciprocal
//! rank ([`search`]); scored on a query set by [`quality`]. The agent
//! reaches it through the `search_docs` tool when a run asks for it
//! (`--rag`).

pub mod build;
pub mod index;
pub mod quality;
pub mod recipes;
pub mod removed;
pub mod retrieve;
pub mod search;
pub mod solutions;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use retrieve::{libraries_named, Retrieved};
pub use search::{Fusion, Hit, Library, Mode, WrongApi};

/// One documented API object, or one recipe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocEntry {
    /// Canonical qualified name, e.g. `rasterio.io.DatasetReader.read`
    /// (`recipe.slope_aspect` for a recipe).
    pub name: String,
    /// The other paths the same object is reachable at
    /// (`rasterio.CRS` of `rasterio.crs.CRS`; a subclass's inherited method).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// `function`, `class`, `method`, `property` or `recipe`.
    pub kind: String,
    /// The call signature (empty when Python could not tell).
    #[serde(default)]
    pub signature: String,
    /// The docstring (whole up to 12,000 characters), or the recipe's text.
    pub doc: String,
    /// The module it was found in.
    #[serde(default)]
    pub module: String,
}

/// Why the index cannot be built or opened.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    /// No index has been built yet.
    #[error("no library-docs index at {0}: run `gisclaw knowledge build` once (a few minutes; nothing is downloaded)")]
    NotBuilt(PathBuf),
    /// A file of the index is unreadable or inconsistent.
    #[error("{path}: {message} (rebuild it with `gisclaw knowledge build`)")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Extraction, embedding or writing failed.
    #[error("{0}")]
    Build(String),
}

/// Where the index lives: `GISCLAW_KNOWLEDGE`, else
/// `$XDG_CACHE_HOME/gisclaw/knowledge`.
pub fn default_dir() -> PathBuf {
    match std::env::var_os("GISCLAW_KNOWLEDGE") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => crate::paths::cache_dir().join("knowledge"),
    }
}

/// The files of an index folder.
pub(crate) fn docs_file(dir: &Path) -> PathBuf {
    dir.join("docs.jsonl")
}

/// The vectors: `chunks × dim` little-endian f32, the chunks of each entry
/// together, in the order of the docs.
pub(crate) fn vectors_file(dir: &Path) -> PathBuf {
    dir.join("vectors.f32")
}

/// The entry of each vector: `chunks` little-endian u32.
pub(crate) fn owners_file(dir: &Path) -> PathBuf {
    dir.join("owners.u32")
}

/// The index layout this gisclaw reads and writes.
pub const INDEX_FORMAT: u32 = 2;

/// What was built: counts, the embedding model, the modules.
pub(crate) fn meta_file(dir: &Path) -> PathBuf {
    dir.join("meta.json")
}

/// The index's description (`meta.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    /// The layout ([`INDEX_FORMAT`]; absent in indexes of earlier versions).
    #[serde(default)]
    pub format: u32,
    /// Entries.
    pub count: usize,
    /// Embedded chunks (at least one per entry).
    #[serde(default)]
    pub chunks: usize,
    /// Of the chunks, those this build embedded (the rest were reused from
    /// the previous index in the folder).
    #[serde(default)]
    pub embedded: usize,
    /// Of the entries, recipes.
    #[serde(default)]
    pub recipes: usize,
    /// Vector length.
    pub dim: usize,
    /// The embedding model's folder.
    pub model: String,
    /// The modules indexed.
    pub modules: Vec<String>,
    /// Modules that did not import (with the error).
    pub skipped: Vec<String>,
}

/// Characters of docstring per embedded chunk (MiniLM reads about 256
/// tokens; 700 characters of English and code stay well inside).
const CHUNK_CHARS: usize = 700;
/// Chunks embedded per entry at most (the longest pandas docstrings).
const MAX_CHUNKS: usize = 8;

/// The docstring without what embeds as noise: doctest lines (`>>>`,
/// `...`) and their printed results, and the `References` section.
fn embeddable(doc: &str) -> String {
    let mut out = Vec::new();
    let mut in_example_output = false;
    let mut in_references = false;
    let lines: Vec<&str> = doc.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let underlined = lines
            .get(i + 1)
            .is_some_and(|n| n.trim().len() >= 3 && n.trim().chars().all(|c| c == '-'));
        if underlined && !line.starts_with(' ') {
            in_references = trimmed == "References";
        }
        if in_references {
            continue;
        }
        if trimmed.starts_with(">>>") || trimmed.starts_with("... ") || trimmed == "..." {
            in_example_output = true;
            continue;
        }
        if in_example_output {
            if trimmed.is_empty() {
                in_example_output = false;
            }
            continue;
        }
        out.push(*line);
    }
    out.join("\n")
}

/// The texts embedded for an entry: its name with each chunk of its
/// docstring (paragraphs packed up to [`CHUNK_CHARS`], a longer paragraph
/// cut at a line or word), so that every part of it is found, not only
/// the first paragraph.
pub fn embedding_texts(entry: &DocEntry) -> Vec<String> {
    let doc = embeddable(&entry.doc);
    let mut pieces: Vec<String> = Vec::new();
    for paragraph in doc.split("\n\n") {
        let paragraph = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
        if paragraph.is_empty() {
            continue;
        }
        let mut rest = paragraph.as_str();
        while rest.len() > CHUNK_CHARS {
            let limit = (0..=CHUNK_CHARS)
                .rev()
                .find(|i| rest.is_char_boundary(*i))
                .unwrap_or(0);
            let cut = rest[..limit].rfind(' ').filter(|c| *c > 0).unwrap_or(limit);
            pieces.push(rest[..cut].to_string());
            rest = rest[cut..].trim_start();
        }
        if !rest.is_empty() {
            pieces.push(rest.to_string());
        }
    }
    let mut chunks: Vec<String> = Vec::new();
    let mut current = String::new();
    for piece in pieces {
        if !current.is_empty() && current.len() + piece.len() + 1 > CHUNK_CHARS {
            chunks.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&piece);
    }
    if !current.is_empty() || chunks.is_empty() {
        chunks.push(current);
    }
    chunks.truncate(MAX_CHUNKS);
    chunks
        .into_iter()
        .map(|chunk| format!("{}: {chunk}", entry.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(doc: &str) -> DocEntry {
        DocEntry {
            name: "xarray.open_dataset".into(),
            aliases: Vec::new(),
            kind: "function".into(),
            signature: String::new(),
            doc: doc.into(),
            module: "xarray".into(),
        }
    }

    #[test]
    fn every_part_of_a_docstring_is_embedded_without_doctests_or_references() {
        let para = "Strings are interpreted as a path to a netCDF file. ".repeat(20);
        let doc = format!(
            "Open and decode a dataset.\n\nParameters\n----------\n{para}\n\nExamples\n--------\n>>> ds = open_dataset('x.nc')\n<xarray.Dataset>\n\nReferences\n----------\n.. [1] A paper.\n"
        );
        let texts = embedding_texts(&entry(&doc));
        assert!(texts.len() >= 2, "{texts:?}");
        assert!(texts.iter().all(|t| t.starts_with("xarray.open_dataset: ")));
        assert!(
            texts.iter().all(|t| t.len() <= CHUNK_CHARS + 40),
            "{texts:?}"
        );
        let all = texts.join(" ");
        assert!(all.contains("netCDF") && all.contains("Open and decode"));
        assert!(!all.contains(">>>") && !all.contains("<xarray.Dataset>"));
        assert!(!all.contains("A paper"));
        // An entry without a docstring still has its name embedded.
        assert_eq!(embedding_texts(&entry("")), ["xarray.open_dataset: "]);
    }
}
