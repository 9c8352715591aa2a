//! The opened library and its hybrid search: BM25 (exact API words) and
//! embedding cosine (what a call does, in other words) each rank the
//! entries; the two rankings are fused by reciprocal rank,
//! `Σ 1 / (60 + rank)` (BM25 alone misses paraphrases, the vectors alone
//! miss exact names: hybrid matters, measured in MEASURED.md).

use std::path::Path;

use super::index::Bm25;
use super::{docs_file, meta_file, vectors_file, DocEntry, IndexMeta, KnowledgeError};
use crate::embed::Embedder;
use crate::util::clip;
use crate::util::levenshtein;

/// How deep each ranking goes before fusion.
const CANDIDATES: usize = 50;
/// The reciprocal-rank constant.
const RRF_K: f64 = 60.0;
/// Characters of a docstring shown per hit.
const SHOWN_DOC: usize = 400;

/// A search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    /// The entry.
    pub entry: &'a DocEntry,
    /// Its fused score.
    pub score: f64,
}

/// The library docs, opened for search.
pub struct Library {
    entries: Vec<DocEntry>,
    vectors: Vec<f32>,
    dim: usize,
    bm25: Bm25,
    embedder: Embedder,
    /// What was indexed.
    pub meta: IndexMeta,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("entries", &self.entries.len())
            .field("modules", &self.meta.modules.len())
            .finish_non_exhaustive()
    }
}

fn corrupt(path: &Path, message: impl ToString) -> KnowledgeError {
    KnowledgeError::Corrupt {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

impl Library {
    /// Opens the index in `dir` with the embedding model that built it.
    pub fn open(dir: &Path, embedder: Embedder) -> Result<Library, KnowledgeError> {
        let meta_path = meta_file(dir);
        let Ok(meta_text) = std::fs::read_to_string(&meta_path) else {
            return Err(KnowledgeError::NotBuilt(dir.to_path_buf()));
        };
        let meta: IndexMeta = serde_json::from_str(&meta_text)
            .map_err(|e| corrupt(&meta_path, format!("line {}: {e}", e.line())))?;
        let docs_path = docs_file(dir);
        let text = std::fs::read_to_string(&docs_path).map_err(|e| corrupt(&docs_path, e))?;
        let mut entries = Vec::with_capacity(meta.count);
        for (i, line) in text.lines().enumerate() {
            entries.push(
                serde_json::from_str::<DocEntry>(line)
                    .map_err(|e| corrupt(&docs_path, format!("line {}: {e}", i + 1)))?,
            );
        }
        let vectors_path = vectors_file(dir);
        let bytes = std::fs::read(&vectors_path).map_err(|e| corrupt(&vectors_path, e))?;
        if entries.len() != meta.count || bytes.len() != meta.count * meta.dim * 4 {
            return Err(corrupt(
                &vectors_path,
                format!(
                    "{} entries and {} vector bytes for a count of {} × {}",
                    entries.len(),
                    bytes.len(),
                    meta.count,
                    meta.dim
                ),
            ));
        }
        let vectors = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let bm25 =
            Bm25::build(&entries).map_err(|e| corrupt(&docs_path, format!("indexing: {e}")))?;
        Ok(Library {
            entries,
            vectors,
            dim: meta.dim,
            bm25,
            embedder,
            meta,
        })
    }

    /// Opens the default index ([`super::default_dir`]) with the default model.
    pub fn open_default() -> Result<Library, KnowledgeError> {
        let embedder =
            Embedder::load_default().map_err(|e| KnowledgeError::Build(e.to_string()))?;
        Library::open(&super::default_dir(), embedder)
    }

    /// Entries in the index.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the index holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Ranks by cosine with the query's embedding (the vectors are unit length).
    fn dense(&self, query: &str, k: usize) -> Vec<usize> {
        let Ok(mut q) = self.embedder.embed(&[query]) else {
            return Vec::new();
        };
        let q = q.remove(0);
        if q.len() != self.dim {
            return Vec::new();
        }
        let mut scored: Vec<(f32, usize)> = self
            .vectors
            .chunks_exact(self.dim)
            .enumerate()
            .map(|(i, v)| (v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>(), i))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(k).map(|(_, i)| i).collect()
    }

    /// The two rankings fused by [`Library::search`]: entry names by BM25,
    /// then by embedding cosine, `k` each (for `knowledge search --explain`).
    pub fn rankings(&self, query: &str, k: usize) -> [Vec<&str>; 2] {
        let names = |ids: Vec<usize>| {
            ids.into_iter()
                .map(|i| self.entries[i].name.as_str())
                .collect()
        };
        [
            names(self.bm25.search(query, k)),
            names(self.dense(query, k)),
        ]
    }

    /// The best `k` entries for `query`, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit<'_>> {
        self.search_in(query, k, &[])
    }

    /// The best `k` entries for `query` among those of `libraries` (top
    /// package names such as `rasterio`), best first; every library when
    /// `libraries` is empty or none of the candidates is theirs.
    pub fn search_in(&self, query: &str, k: usize, libraries: &[&str]) -> Vec<Hit<'_>> {
        let fused = self.fused(query);
        let theirs = |id: &usize| {
            let root = self.entries[*id].name.split('.').next().unwrap_or("");
            libraries.contains(&root)
        };
        let keep_all = libraries.is_empty() || !fused.iter().any(|(id, _)| theirs(id));
        fused
            .into_iter()
            .filter(|(id, _)| keep_all || theirs(id))
            .take(k)
            .map(|(id, score)| Hit {
                entry: &self.entries[id],
                score,
            })
            .collect()
    }

    /// Every candidate of the two rankings, by reciprocal-rank fusion, best first.
    fn fused(&self, query: &str) -> Vec<(usize, f64)> {
        let rankings = [
            self.bm25.search(query, CANDIDATES),
            self.dense(query, CANDIDATES),
        ];
        let mut scores = std::collections::HashMap::<usize, f64>::new();
        for ranking in &rankings {
            for (rank, id) in ranking.iter().enumerate() {
                *scores.entry(*id).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
            }
        }
        let mut fused: Vec<(usize, f64)> = scores.into_iter().collect();
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        fused
    }

    /// The entries an unknown API name probably meant (`rasterio.features.rasterise`
    /// → `rasterio.features.rasterize`): last name parts within edit
    /// distance of a third of their length, under the same owner first;
    /// when none is that close, the hybrid search of the name.
    pub fn near_names(&self, dotted: &str, k: usize) -> Vec<Hit<'_>> {
        let (owner, last) = dotted.rsplit_once('.').unwrap_or(("", dotted));
        let last: Vec<char> = last.to_lowercase().chars().collect();
        let mut near: Vec<(usize, bool, usize)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(i, e)| {
                let tail: Vec<char> = e
                    .name
                    .rsplit('.')
                    .next()
                    .unwrap_or(&e.name)
                    .to_lowercase()
                    .chars()
                    .collect();
                let distance = levenshtein(&last, &tail);
                let same_owner = !owner.is_empty() && e.name.contains(owner);
                (distance * 3 <= last.len().max(3)).then_some((distance, !same_owner, i))
            })
            .collect();
        if near.is_empty() {
            return self.search(dotted, k);
        }
        near.sort();
        near.into_iter()
            .take(k)
            .map(|(d, _, i)| Hit {
                entry: &self.entries[i],
                score: 1.0 / (1.0 + d as f64),
            })
            .collect()
    }

    /// The hits of a query as the model reads them: name, signature, kind,
    /// the start of the docstring.
    pub fn render(&self, query: &str, k: usize) -> String {
        render_hits(query, &self.search(query, k))
    }
}

/// Hits as the model reads them.
pub fn render_hits(query: &str, hits: &[Hit<'_>]) -> String {
    if hits.is_empty() {
        return format!("No library documentation matches `{query}`.");
    }
    let mut text = String::new();
    for (i, hit) in hits.iter().enumerate() {
        let e = hit.entry;
        let signature: String = e.signature.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!(
            "{}. {}{} ({})\n",
            i + 1,
            e.name,
            clip(&signature, 200),
            e.kind
        ));
        for line in clip(&e.doc, SHOWN_DOC)
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            text.push_str(&format!("   {line}\n"));
        }
    }
    text
}
