//! Retrieval over the GIS libraries' own documentation (RAG, GeoAgent §3.2):
//! the docstrings of the sandbox venv's modules, extracted once
//! ([`build`]), searched by BM25 (tantivy, [`index`]) and by embedding
//! cosine (MiniLM, [`crate::embed`]) fused by reciprocal rank ([`search`]).
//! The agent reaches it through the `search_docs` tool when a run asks for
//! it (`--rag`).

pub mod build;
pub mod index;
pub mod retrieve;
pub mod search;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use retrieve::{libraries_named, Retrieved};
pub use search::{Hit, Library};

/// One documented API object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocEntry {
    /// Qualified name, e.g. `rasterio.features.rasterize`.
    pub name: String,
    /// `function`, `class`, `method` or `property`.
    pub kind: String,
    /// The call signature (empty when Python could not tell).
    #[serde(default)]
    pub signature: String,
    /// The docstring (cut at 1,500 characters).
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

/// The vectors: `count × dim` little-endian f32, in the order of the docs.
pub(crate) fn vectors_file(dir: &Path) -> PathBuf {
    dir.join("vectors.f32")
}

/// What was built: counts, the embedding model, the modules.
pub(crate) fn meta_file(dir: &Path) -> PathBuf {
    dir.join("meta.json")
}

/// The index's description (`meta.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    /// Entries.
    pub count: usize,
    /// Vector length.
    pub dim: usize,
    /// The embedding model's folder.
    pub model: String,
    /// The modules indexed.
    pub modules: Vec<String>,
    /// Modules that did not import (with the error).
    pub skipped: Vec<String>,
}

/// The text embedded for an entry: its name and the first paragraph of its
/// docstring (what it is for), short enough to embed quickly.
pub(crate) fn embedding_text(entry: &DocEntry) -> String {
    let first = entry.doc.split("\n\n").next().unwrap_or("");
    let mut text = format!("{}: {}", entry.name, first.replace('\n', " "));
    if text.len() > 400 {
        let cut = (0..=400)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
    }
    text
}
