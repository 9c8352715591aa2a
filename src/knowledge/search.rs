//! The opened library and its hybrid search. Three rankings of the
//! entries: BM25 (exact API words), embedding cosine (what a call does, in
//! other words; an entry scores its best chunk) and exact API names (a
//! dotted or snake_case name in the query, found under its canonical path
//! or an alias). They are fused by weighted reciprocal rank,
//! `Σ wᵢ / (k + rankᵢ)`, and each entry's fused score is multiplied by its
//! library's weight (plotting internals weigh less unless the query is
//! about plotting). The weights and `k` were tuned on
//! `knowledge/queries/dev.json` (docs/knowledge.md).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use super::index::Bm25;
use super::removed::{self, Removed};
use super::{
    docs_file, meta_file, owners_file, vectors_file, DocEntry, IndexMeta, KnowledgeError,
    INDEX_FORMAT,
};
use crate::embed::Embedder;
use crate::util::{clip, levenshtein};

/// How deep each ranking goes before fusion.
const CANDIDATES: usize = 50;
/// How the rankings are fused and weighed (`knowledge eval --tune`
/// searches these on a query set; the default is what that chose on
/// `knowledge/queries/dev.json`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The reciprocal-rank constant: small, so that a first place in one
    /// ranking is not outvoted by middling places in the others.
    pub k: f64,
    /// BM25's weight.
    pub bm25: f64,
    /// The embeddings' weight.
    pub dense: f64,
    /// The exact names' weight: a name the query spells is what it asks for.
    pub names: f64,
    /// The weight of an exact qualified name: an entry whose name, alias
    /// or removed predecessor is a dotted name the query spells whole
    /// (`GeoSeries.set_crs`, `'GeoDataFrame' … 'append'`) is what it asks
    /// for, above entries that merely share the last part.
    pub exact: f64,
    /// The weight of matplotlib's entries when the query is not about plotting.
    pub plotting: f64,
    /// The weight of properties and attributes (they rarely answer a task).
    pub property: f64,
    /// The weight of recipes.
    pub recipe: f64,
    /// The weight of I/O entries of the other direction: writers
    /// (`to_netcdf`) for a query that reads, readers for one that writes.
    pub direction: f64,
    /// The share of the best recipe's score given to each API its
    /// keywords name (`rasterio.features.rasterize` for "burn polygons
    /// into a raster"): the call a how-to centres on follows it up.
    pub companion: f64,
}

impl Default for Fusion {
    fn default() -> Fusion {
        Fusion {
            k: 5.0,
            bm25: 1.0,
            dense: 1.0,
            names: 1.0,
            exact: 2.0,
            plotting: 0.3,
            property: 1.0,
            recipe: 0.8,
            direction: 0.3,
            companion: 0.6,
        }
    }
}

/// The three rankings of one query, before fusion.
#[derive(Debug, Clone, Default)]
pub struct Rankings {
    /// Entry ids by BM25.
    pub bm25: Vec<usize>,
    /// Entry ids by embedding cosine.
    pub dense: Vec<usize>,
    /// Entry ids by spelled names.
    pub names: Vec<usize>,
    /// Entry ids by exact qualified names (a subset of `names`).
    pub exact: Vec<usize>,
    /// Whether the query is about plotting.
    pub plotting: bool,
    /// Whether the query reads or writes data.
    pub direction: Option<Direction>,
}

/// Which way data moves in a query about I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Read, open, load, import.
    Read,
    /// Write, save, export.
    Write,
}

/// Which way a query moves data, when it says so one way only.
fn direction_of(query: &str) -> Option<Direction> {
    let words = words(query);
    let any = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    let reads = any(&[
        "read", "reads", "reading", "open", "opens", "load", "loads", "loading", "import",
    ]);
    let writes = any(&[
        "write", "writes", "writing", "save", "saves", "saving", "export", "exports", "store",
    ]);
    match (reads, writes) {
        (true, false) => Some(Direction::Read),
        (false, true) => Some(Direction::Write),
        _ => None,
    }
}

/// Which way an entry moves data, from its last name (`to_netcdf`,
/// `write_dataframe`, `open_dataset`, `read_file`).
fn direction_of_entry(entry: &DocEntry) -> Option<Direction> {
    let last = entry.name.rsplit('.').next().unwrap_or("");
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| last.starts_with(p));
    if starts(&["to_", "write", "save", "dump", "export"]) {
        Some(Direction::Write)
    } else if starts(&["read", "open", "load", "from_file"]) {
        Some(Direction::Read)
    } else {
        None
    }
}

/// Words that make a query about plotting.
const PLOTTING_WORDS: &[&str] = &[
    "plot",
    "plots",
    "plotting",
    "figure",
    "figures",
    "axes",
    "axis",
    "colorbar",
    "colormap",
    "cmap",
    "legend",
    "subplot",
    "subplots",
    "savefig",
    "chart",
    "histogram",
    "matplotlib",
    "plt",
    "png",
    "draw",
    "title",
    "label",
    "labels",
    "ticks",
    "annotate",
    "scatter",
];
/// Characters of a docstring shown per hit.
const SHOWN_DOC: usize = 400;
/// Characters of a recipe shown per hit (its snippet is the point).
const SHOWN_RECIPE: usize = 2_000;
/// Query embeddings remembered (an agent repeats its searches).
const CACHED_QUERIES: usize = 256;

/// A search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    /// The entry.
    pub entry: &'a DocEntry,
    /// Its fused score.
    pub score: f64,
    /// When the query spells a removed API this entry replaces: which, since
    /// when, and how to rewrite the call.
    pub note: Option<String>,
}

/// Which rankings a search uses (`knowledge eval` compares them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// All three, fused: what the agent gets.
    Hybrid,
    /// BM25 alone.
    Bm25,
    /// Embedding cosine alone.
    Dense,
}

/// An API the sandbox said does not exist or was called wrongly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrongApi {
    /// `owner.name` does not exist (`AttributeError`, `ImportError`);
    /// `owner` is empty when the error names none.
    Missing {
        /// The module or class (`rasterio.features`, `GeoSeries`).
        owner: String,
        /// The name asked for (`rasterise`).
        name: String,
    },
    /// `function` got a keyword it does not take (`TypeError`).
    Keyword {
        /// The function's name as the error gives it (`sjoin`).
        function: String,
        /// The keyword (`op`).
        keyword: String,
    },
}

impl std::fmt::Display for WrongApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WrongApi::Missing { owner, name } if owner.is_empty() => write!(f, "{name}"),
            WrongApi::Missing { owner, name } => write!(f, "{owner}.{name}"),
            WrongApi::Keyword { function, keyword } => write!(f, "{function}({keyword}=…)"),
        }
    }
}

impl WrongApi {
    /// The wrong API an error line names, if it names one:
    /// `… has no attribute 'x'` and `cannot import name 'x' from 'm'` (a
    /// missing name), `f() got an unexpected keyword argument 'k'`, and the
    /// container protocols shapely 2's multi-part geometries dropped
    /// (`'X' object is not iterable` → `X.__iter__`, `… is not
    /// subscriptable` → `X.__getitem__`, `object of type 'X' has no len()` →
    /// `X.__len__`). The exception's name before the message is optional.
    pub fn parse(line: &str) -> Option<WrongApi> {
        let line = line.trim();
        let message = match line.split_once(": ") {
            Some((kind, message)) if kind.ends_with("Error") => message,
            _ => line,
        };
        let quoted: Vec<&str> = message.split('\'').skip(1).step_by(2).collect();
        let plain = |n: &&str| !n.is_empty() && !n.contains(' ');
        let missing = |owner: &str, name: &str| {
            (plain(&name) && (owner.is_empty() || plain(&owner))).then(|| WrongApi::Missing {
                owner: owner.to_string(),
                name: name.to_string(),
            })
        };
        if message.contains("unexpected keyword argument") {
            let function = message.split_once("()")?.0.trim();
            let function = function.rsplit(' ').next().unwrap_or(function);
            let keyword = quoted.last().copied().filter(|k| plain(k))?;
            return Some(WrongApi::Keyword {
                function: function.to_string(),
                keyword: keyword.to_string(),
            });
        }
        if message.contains("has no attribute") {
            return match quoted.as_slice() {
                [owner, name, ..] => missing(owner, name),
                [name] => missing("", name),
                [] => None,
            };
        }
        if message.starts_with("cannot import name") {
            return match quoted.as_slice() {
                [name, owner, ..] => missing(owner, name),
                [name] => missing("", name),
                [] => None,
            };
        }
        let protocol = if message.ends_with("object is not iterable") {
            "__iter__"
        } else if message.ends_with("object is not subscriptable") {
            "__getitem__"
        } else if message.starts_with("object of type") && message.ends_with("has no len()") {
            "__len__"
        } else {
            return None;
        };
        missing(quoted.first()?, protocol)
    }
}

/// Searchable names of removed APIs → the entries that replace them, with
/// the table's row.
type Replacements = HashMap<String, Vec<(usize, &'static Removed)>>;

/// The library docs, opened for search.
pub struct Library {
    entries: Vec<DocEntry>,
    /// One row per chunk; the rows of an entry are contiguous.
    vectors: gisclaw_encoder::math::Rows,
    /// The entry of each row.
    owners: Vec<u32>,
    bm25: Bm25,
    /// Every dotted suffix of every name and alias, lower-cased → entries.
    names: HashMap<String, Vec<usize>>,
    /// Each searchable name of a removed API (`geodataframe.append`) → the
    /// entries that replace it, with the table's row ([`removed`]).
    removed: Replacements,
    /// Each recipe's entry → the entries of the APIs its keywords name.
    companions: HashMap<usize, Vec<usize>>,
    /// Each entry's last name part, lower-cased, for near-miss spellings.
    tails: Vec<Vec<char>>,
    embedder: Embedder,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    /// How the rankings are fused.
    pub fusion: Fusion,
    /// Briefs retrieve only for text that names a library (GeoAgent's
    /// rule, `--protocol geoagent-paper`); `search_docs` always searches.
    pub only_when_named: bool,
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

/// The top-level package of an entry (`recipe` for recipes).
fn root(entry: &DocEntry) -> &str {
    entry.name.split('.').next().unwrap_or("")
}

/// The words of a query, lower-cased.
fn words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The names a query spells: dotted or snake_case words, or the whole
/// query when it is one word (a CamelCase class among other words is
/// context, not the question). From an error line
/// (`'GeoSeries' object has no attribute 'x'`) the owner with its
/// attribute, and the attribute.
pub fn spelled_names(query: &str) -> Vec<String> {
    let tokens: Vec<&str> = name_tokens(query).collect();
    match WrongApi::parse(query) {
        Some(WrongApi::Missing { owner, name }) => {
            let mut names = Vec::new();
            if !owner.is_empty() {
                names.push(format!("{owner}.{name}").to_lowercase());
            }
            if !name.starts_with("__") {
                names.push(name.to_lowercase());
            }
            return names;
        }
        Some(WrongApi::Keyword { .. }) => return Vec::new(),
        None => {}
    }
    let code_like = |t: &str| {
        t.contains('_') || (t.contains('.') && t.chars().next().is_some_and(char::is_alphabetic))
    };
    let single = tokens.len() == 1;
    let mut names: Vec<String> = tokens
        .into_iter()
        .filter(|t| single || code_like(t))
        .filter(|t| !t.ends_with("Error") && !t.ends_with("Warning"))
        .map(str::to_lowercase)
        .collect();
    names.dedup();
    names
}

/// The word-like tokens of a text that may be API names: runs of letters,
/// digits, `_` and `.`, without leading or trailing dots.
fn name_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter(|t| !t.is_empty())
}

/// True when the query is about plotting.
fn about_plotting(query: &str) -> bool {
    words(query)
        .iter()
        .any(|w| PLOTTING_WORDS.contains(&w.as_str()))
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
        if meta.format != INDEX_FORMAT {
            return Err(corrupt(
                &meta_path,
                format!(
                    "field `format`: index layout {} where this gisclaw reads {INDEX_FORMAT}",
                    meta.format
                ),
            ));
        }
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
        let owners_path = owners_file(dir);
        let owner_bytes = std::fs::read(&owners_path).map_err(|e| corrupt(&owners_path, e))?;
        if entries.len() != meta.count || bytes.len() != meta.chunks * meta.dim * 4 {
            return Err(corrupt(
                &vectors_path,
                format!(
                    "{} entries and {} vector bytes for {} entries of {} chunks × {}",
                    entries.len(),
                    bytes.len(),
                    meta.count,
                    meta.chunks,
                    meta.dim
                ),
            ));
        }
        let owners: Vec<u32> = owner_bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if owner_bytes.len() != meta.chunks * 4
            || owners.windows(2).any(|w| w[0] > w[1])
            || owners.last().is_some_and(|&o| o as usize >= entries.len())
        {
            return Err(corrupt(
                &owners_path,
                format!(
                    "not {} ascending entry numbers below {}",
                    meta.chunks,
                    entries.len()
                ),
            ));
        }
        let vectors = gisclaw_encoder::math::Rows::new(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            meta.dim,
        );
        let bm25 =
            Bm25::build(&entries).map_err(|e| corrupt(&docs_path, format!("indexing: {e}")))?;
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            for name in std::iter::once(&e.name).chain(&e.aliases) {
                let lower = name.to_lowercase();
                let mut at = 0;
                loop {
                    let ids = names.entry(lower[at..].to_string()).or_default();
                    if ids.last() != Some(&i) {
                        ids.push(i);
                    }
                    match lower[at..].find('.') {
                        Some(dot) => at += dot + 1,
                        None => break,
                    }
                }
            }
        }
        let removed = replacements(&entries, &names)?;
        for (name, found) in &removed {
            let ids = names.entry(name.clone()).or_default();
            for (id, _) in found {
                if !ids.contains(id) {
                    ids.push(*id);
                }
            }
        }
        let companions = companions(&entries, &names);
        let tails = entries
            .iter()
            .map(|e| {
                e.name
                    .rsplit('.')
                    .next()
                    .unwrap_or("")
                    .to_lowercase()
                    .chars()
                    .collect()
            })
            .collect();
        Ok(Library {
            entries,
            vectors,
            owners,
            bm25,
            names,
            removed,
            companions,
            tails,
            embedder,
            cache: Mutex::new(HashMap::new()),
            fusion: Fusion::default(),
            only_when_named: false,
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

    /// The entries, in index order.
    pub fn entries(&self) -> &[DocEntry] {
        &self.entries
    }

    /// The query's embedding (remembered for repeated queries).
    fn query_vector(&self, query: &str) -> Option<Vec<f32>> {
        if let Some(v) = self.cache.lock().ok()?.get(query) {
            return Some(v.clone());
        }
        let v = self.embedder.embed_query(query).ok()?;
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHED_QUERIES {
                cache.clear();
            }
            cache.insert(query.to_string(), v.clone());
        }
        Some(v)
    }

    /// The best `k` entries by cosine with the query's embedding (the
    /// vectors are unit length; an entry scores its best chunk), best first.
    fn dense(&self, query: &str, k: usize) -> Vec<usize> {
        match self.query_vector(query) {
            Some(q) if q.len() == self.vectors.dim() => self.dense_from(&q, k),
            _ => Vec::new(),
        }
    }

    fn dense_from(&self, q: &[f32], k: usize) -> Vec<usize> {
        let mut best = vec![f32::NEG_INFINITY; self.entries.len()];
        let dots = self.vectors.dots(q);
        for (dot, owner) in dots.into_iter().zip(&self.owners) {
            let slot = &mut best[*owner as usize];
            if dot > *slot {
                *slot = dot;
            }
        }
        top_k(best.into_iter().map(f64::from).enumerate(), k)
    }

    /// The entries whose name or alias ends with a name the query spells,
    /// best first: longer spelled names first, then shorter entry names;
    /// when none matches exactly, names within a few edits of its last part.
    fn named(&self, query: &str, k: usize) -> Vec<usize> {
        self.named_from(&spelled_names(query), k)
    }

    /// [`Library::named`] of the names a query spells.
    fn named_from(&self, spelled: &[String], k: usize) -> Vec<usize> {
        let mut found: Vec<(std::cmp::Reverse<usize>, usize, usize)> = Vec::new();
        for name in spelled {
            if let Some(ids) = self.names.get(name) {
                for &id in ids {
                    found.push((
                        std::cmp::Reverse(name.len()),
                        self.entries[id].name.len(),
                        id,
                    ));
                }
            }
        }
        if found.is_empty() {
            for name in spelled.iter().filter(|n| n.contains('_') || n.len() >= 6) {
                let last: Vec<char> = name.rsplit('.').next().unwrap_or(name).chars().collect();
                // Within a quarter of its length in edits: a tail whose
                // length differs by more cannot be, and is not compared.
                let most = last.len() / 4;
                for (id, tail) in self.tails.iter().enumerate() {
                    if tail.len().abs_diff(last.len()) > most {
                        continue;
                    }
                    let distance = levenshtein(&last, tail);
                    if distance > 0 && distance <= most {
                        found.push((
                            std::cmp::Reverse(0),
                            distance * 100 + self.entries[id].name.len(),
                            id,
                        ));
                    }
                }
            }
        }
        found.sort();
        let mut ids: Vec<usize> = Vec::new();
        for (_, _, id) in found {
            if !ids.contains(&id) {
                ids.push(id);
            }
            if ids.len() == k {
                break;
            }
        }
        ids
    }

    /// The entries a dotted name the query spells is exactly (a name, an
    /// alias or a removed predecessor; suffixes of two parts or more
    /// count: `GeoSeries.set_crs`), longer spelled names first.
    fn exactly_named(&self, spelled: &[String]) -> Vec<usize> {
        let mut dotted: Vec<&String> = spelled.iter().filter(|n| n.contains('.')).collect();
        dotted.sort_by_key(|n| std::cmp::Reverse(n.len()));
        let mut ids: Vec<usize> = Vec::new();
        for name in dotted {
            for &id in self.names.get(name).into_iter().flatten() {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids
    }

    /// The rankings fused by [`Library::search`], as entry names, `k` each:
    /// BM25, embeddings, exact names (for `knowledge search --explain`).
    pub fn rankings(&self, query: &str, k: usize) -> [Vec<&str>; 3] {
        let names = |ids: Vec<usize>| {
            ids.into_iter()
                .map(|i| self.entries[i].name.as_str())
                .collect()
        };
        [
            names(self.bm25.search(query, k)),
            names(self.dense(query, k)),
            names(self.named(query, k)),
        ]
    }

    /// The best `k` entries for `query`, best first.
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit<'_>> {
        self.search_in(query, k, &[])
    }

    /// The best `k` entries for `query` with one ranking or all
    /// (`knowledge eval`).
    pub fn search_mode(&self, query: &str, k: usize, mode: Mode) -> Vec<Hit<'_>> {
        match mode {
            Mode::Hybrid => self.search(query, k),
            Mode::Bm25 => self.hits(query, ranks(self.bm25.search(query, k)), k),
            Mode::Dense => self.hits(query, ranks(self.dense(query, k)), k),
        }
    }

    /// The first `k` of scored entries as hits, each noted when `query`
    /// spells a removed API it replaces.
    fn hits(&self, query: &str, scored: Vec<(usize, f64)>, k: usize) -> Vec<Hit<'_>> {
        let spelled = spelled_names(query);
        scored
            .into_iter()
            .take(k)
            .map(|(id, score)| Hit {
                entry: &self.entries[id],
                score,
                note: self.removed_note(&spelled, id),
            })
            .collect()
    }

    /// The note of the first of `spelled` (lower-cased names a query
    /// spells) that is a removed API entry `id` replaces.
    fn removed_note(&self, spelled: &[String], id: usize) -> Option<String> {
        spelled.iter().find_map(|name| {
            let (_, row) = self.removed.get(name)?.iter().find(|(i, _)| *i == id)?;
            let old = row
                .old
                .iter()
                .find(|o| o.to_lowercase().ends_with(name.as_str()))?;
            Some(row.note(old))
        })
    }

    /// The best `k` entries for `query` among those of `libraries` (top
    /// package names such as `rasterio`) and the recipes, best first;
    /// every library when `libraries` is empty or none of the candidates
    /// is theirs.
    pub fn search_in(&self, query: &str, k: usize, libraries: &[&str]) -> Vec<Hit<'_>> {
        let fused = self.fused(query);
        let theirs = |id: &usize| libraries.contains(&root(&self.entries[*id]));
        let keep_all = libraries.is_empty() || !fused.iter().any(|(id, _)| theirs(id));
        let fused: Vec<(usize, f64)> = fused
            .into_iter()
            .filter(|(id, _)| keep_all || theirs(id) || self.entries[*id].kind == "recipe")
            .collect();
        self.hits(query, self.one_recipe(fused), k)
    }

    /// The three rankings of `query`, [`CANDIDATES`] deep. The query is
    /// embedded on rayon's pool while BM25 and the names run as one more of
    /// its tasks: on a thread of their own they would compete with the
    /// pool's workers for the cores, and each of the forward pass's ~50
    /// parallel steps would wait for a worker the system had set aside.
    pub fn rankings_of(&self, query: &str) -> Rankings {
        let (dense, (bm25, names, exact)) = rayon::join(
            || self.dense(query, CANDIDATES),
            || {
                let spelled = spelled_names(query);
                (
                    self.bm25.search(query, CANDIDATES),
                    self.named_from(&spelled, CANDIDATES),
                    self.exactly_named(&spelled),
                )
            },
        );
        Rankings {
            bm25,
            dense,
            names,
            exact,
            plotting: about_plotting(query),
            direction: direction_of(query),
        }
    }

    /// Rankings fused by weighted reciprocal rank and the entries' weights,
    /// best first.
    pub fn fuse(&self, rankings: &Rankings, fusion: &Fusion) -> Vec<(usize, f64)> {
        let mut scores = HashMap::<usize, f64>::new();
        for (ranking, weight) in [
            (&rankings.bm25, fusion.bm25),
            (&rankings.dense, fusion.dense),
            (&rankings.names, fusion.names),
            (&rankings.exact, fusion.exact),
        ] {
            for (rank, id) in ranking.iter().enumerate() {
                *scores.entry(*id).or_default() += weight / (fusion.k + rank as f64 + 1.0);
            }
        }
        let mut fused: Vec<(usize, f64)> = scores
            .into_iter()
            .map(|(id, score)| {
                let entry = &self.entries[id];
                let mut weight = 1.0;
                if root(entry) == "matplotlib" && !rankings.plotting {
                    weight *= fusion.plotting;
                }
                match entry.kind.as_str() {
                    "property" => weight *= fusion.property,
                    "recipe" => weight *= fusion.recipe,
                    _ => {}
                }
                if let (Some(query), Some(moves)) = (rankings.direction, direction_of_entry(entry))
                {
                    if query != moves {
                        weight *= fusion.direction;
                    }
                }
                (id, score * weight)
            })
            .collect();
        if fusion.companion > 0.0 {
            let best_recipe = fused
                .iter()
                .filter(|(id, _)| self.companions.contains_key(id))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .copied();
            if let Some((recipe, score)) = best_recipe {
                for &api in &self.companions[&recipe] {
                    match fused.iter_mut().find(|(id, _)| *id == api) {
                        Some(slot) => slot.1 += fusion.companion * score,
                        None => fused.push((api, fusion.companion * score)),
                    }
                }
            }
        }
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        fused
    }

    /// A fused list with only its best recipe: one recipe per answer, the
    /// API entries stay beside it.
    pub fn one_recipe(&self, fused: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
        let mut recipes = 0;
        fused
            .into_iter()
            .filter(|(id, _)| {
                let recipe = self.entries[*id].kind == "recipe";
                recipes += usize::from(recipe);
                !recipe || recipes == 1
            })
            .collect()
    }

    /// Every candidate of the three rankings, fused, best first.
    fn fused(&self, query: &str) -> Vec<(usize, f64)> {
        self.fuse(&self.rankings_of(query), &self.fusion)
    }

    /// The entries a wrong API probably meant: for a missing name, the
    /// exact entry when the name exists after all, then names within a few
    /// edits under the same owner (`rasterio.features.rasterise` →
    /// `rasterize`), then the search of the owner and the name's words
    /// among the owner's entries (`GeoSeries.cascaded_union` →
    /// `GeoSeries.union_all`); for a wrong keyword, the function itself
    /// (its signature lists the keywords it takes).
    pub fn for_wrong_api(&self, wrong: &WrongApi, k: usize) -> Vec<Hit<'_>> {
        let mut ids: Vec<usize> = Vec::new();
        let push = |id: usize, ids: &mut Vec<usize>| {
            if !ids.contains(&id) {
                ids.push(id);
            }
        };
        match wrong {
            WrongApi::Keyword { function, .. } => {
                for id in self.named(function, k) {
                    push(id, &mut ids);
                }
                for (id, _) in self.fused(function) {
                    push(id, &mut ids);
                }
            }
            WrongApi::Missing { owner, name } => {
                let owner_lower = owner.to_lowercase();
                let under_owner = |id: usize| {
                    let e = &self.entries[id];
                    owner.is_empty()
                        || std::iter::once(&e.name).chain(&e.aliases).any(|n| {
                            let lower = n.to_lowercase();
                            lower.starts_with(&format!("{owner_lower}."))
                                || lower.contains(&format!(".{owner_lower}."))
                        })
                };
                let full = wrong.to_string();
                for id in self.named(&full, k) {
                    if under_owner(id) {
                        push(id, &mut ids);
                    }
                }
                let query = format!("{owner} {}", name.replace('_', " "));
                for (id, _) in self.fused(&query) {
                    if under_owner(id) {
                        push(id, &mut ids);
                    }
                }
                if ids.is_empty() {
                    for (id, _) in self.fused(&full) {
                        push(id, &mut ids);
                    }
                }
            }
        }
        let spelled = spelled_names(&wrong.to_string());
        ids.into_iter()
            .take(k)
            .enumerate()
            .map(|(rank, id)| Hit {
                entry: &self.entries[id],
                score: 1.0 / (1.0 + rank as f64),
                note: self.removed_note(&spelled, id),
            })
            .collect()
    }

    /// The hits of a query as the model reads them: name, signature, kind,
    /// the start of the docstring; a recipe whole.
    pub fn render(&self, query: &str, k: usize) -> String {
        render_hits(query, &self.search(query, k))
    }
}

/// The searchable names of every removed API in [`removed::table`] → the
/// entries that replace it: the entry whose name or an alias is the row's
/// `new` (rows whose replacement is not indexed are skipped), under each of
/// [`removed::search_names`] (`names` says which last parts are taken).
fn replacements(
    entries: &[DocEntry],
    names: &HashMap<String, Vec<usize>>,
) -> Result<Replacements, KnowledgeError> {
    let mut found: Replacements = HashMap::new();
    for row in removed::table()? {
        let Some(id) = entry_named(entries, names, &row.new.to_lowercase()) else {
            continue;
        };
        for old in &row.old {
            for name in removed::search_names(old, |last| names.contains_key(last)) {
                found.entry(name).or_default().push((id, row));
            }
        }
    }
    Ok(found)
}

/// The entry whose canonical name or an alias is `lower` (a lower-cased
/// full dotted name), found through `names` (dotted suffixes → entries).
fn entry_named(
    entries: &[DocEntry],
    names: &HashMap<String, Vec<usize>>,
    lower: &str,
) -> Option<usize> {
    names.get(lower)?.iter().copied().find(|&i| {
        let e = &entries[i];
        std::iter::once(&e.name)
            .chain(&e.aliases)
            .any(|n| n.to_lowercase() == lower)
    })
}

/// Each recipe entry → the entries its "Use it for:" line names by a full
/// dotted name (`rasterio.features.rasterize`, found as a name or alias).
fn companions(
    entries: &[DocEntry],
    names: &HashMap<String, Vec<usize>>,
) -> HashMap<usize, Vec<usize>> {
    let mut found = HashMap::new();
    for (id, e) in entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == "recipe")
    {
        let Some(line) = e
            .doc
            .lines()
            .find_map(|l| l.strip_prefix(super::recipes::USE_FOR))
        else {
            continue;
        };
        let apis: Vec<usize> = name_tokens(line)
            .filter(|t| t.contains('.'))
            .filter_map(|t| entry_named(entries, names, &t.to_lowercase()))
            .collect();
        if !apis.is_empty() {
            found.insert(id, apis);
        }
    }
    found
}

/// A ranking as `(id, 1 / rank)` pairs.
fn ranks(ids: Vec<usize>) -> Vec<(usize, f64)> {
    ids.into_iter()
        .enumerate()
        .map(|(rank, id)| (id, 1.0 / (rank as f64 + 1.0)))
        .collect()
}

/// The ids of the `k` highest scores, best first (ties: lower id first),
/// by partial selection rather than a full sort.
fn top_k(scores: impl Iterator<Item = (usize, f64)>, k: usize) -> Vec<usize> {
    let mut all: Vec<(usize, f64)> = scores.filter(|(_, s)| s.is_finite()).collect();
    let order = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k == 0 {
        return Vec::new();
    }
    if all.len() > k {
        all.select_nth_unstable_by(k - 1, order);
        all.truncate(k);
    }
    all.sort_by(order);
    all.into_iter().map(|(id, _)| id).collect()
}

/// Hits as the model reads them; recipes are labelled and shown with
/// their snippet.
pub fn render_hits(query: &str, hits: &[Hit<'_>]) -> String {
    if hits.is_empty() {
        return format!("No library documentation matches `{query}`.");
    }
    let mut text = String::new();
    for (i, hit) in hits.iter().enumerate() {
        let e = hit.entry;
        if e.kind == "recipe" {
            text.push_str(&format!("{}. [recipe] {}\n", i + 1, e.name));
            for line in clip(&e.doc, SHOWN_RECIPE).lines() {
                text.push_str(&format!("   {line}\n"));
            }
            continue;
        }
        let signature: String = e.signature.split_whitespace().collect::<Vec<_>>().join(" ");
        text.push_str(&format!(
            "{}. {}{} ({})\n",
            i + 1,
            e.name,
            clip(&signature, 200),
            e.kind
        ));
        if let Some(note) = &hit.note {
            text.push_str(&format!("   {note}\n"));
        }
        if !e.aliases.is_empty() {
            let shown: Vec<&str> = e.aliases.iter().take(3).map(String::as_str).collect();
            text.push_str(&format!("   also: {}\n", shown.join(", ")));
        }
        for line in clip(&e.doc, SHOWN_DOC)
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            text.push_str(&format!("   {line}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_from_queries_and_error_lines() {
        assert_eq!(spelled_names("GeoSeries.set_crs"), ["geoseries.set_crs"]);
        assert_eq!(spelled_names("unary_union"), ["unary_union"]);
        assert_eq!(spelled_names("rasterize"), ["rasterize"]);
        assert_eq!(
            spelled_names("clip a raster with rasterio.mask.mask by polygons"),
            ["rasterio.mask.mask"]
        );
        assert!(spelled_names("clip a raster by a polygon").is_empty());
        assert_eq!(
            spelled_names("AttributeError: 'GeoSeries' object has no attribute 'cascaded_union'"),
            ["geoseries.cascaded_union", "cascaded_union"]
        );
        assert_eq!(
            spelled_names("ImportError: cannot import name 'cascaded_union' from 'shapely.ops'"),
            ["shapely.ops.cascaded_union", "cascaded_union"]
        );
        assert_eq!(
            spelled_names("TypeError: sjoin() got an unexpected keyword argument 'op'"),
            Vec::<String>::new()
        );
        // The exception's name is optional; a protocol is not a name alone.
        assert_eq!(
            spelled_names("'GeoDataFrame' object has no attribute 'append'"),
            ["geodataframe.append", "append"]
        );
        assert_eq!(
            spelled_names("TypeError: 'MultiPolygon' object is not iterable"),
            ["multipolygon.__iter__"]
        );
    }

    #[test]
    fn the_top_k_are_selected_best_first_with_ties_by_id() {
        let scores = [0.5, 0.9, f64::NEG_INFINITY, 0.9, 0.1, 0.7];
        assert_eq!(top_k(scores.into_iter().enumerate(), 3), [1, 3, 5]);
        assert_eq!(top_k(scores.into_iter().enumerate(), 10), [1, 3, 5, 0, 4]);
        assert!(top_k(scores.into_iter().enumerate(), 0).is_empty());
    }

    #[test]
    fn plotting_queries_are_recognised() {
        assert!(about_plotting("make a choropleth map and save the figure"));
        assert!(!about_plotting("convert a raster to polygons"));
    }

    #[test]
    fn io_direction_is_recognised() {
        assert_eq!(direction_of("read a netCDF file"), Some(Direction::Read));
        assert_eq!(
            direction_of("save the result as GeoTIFF"),
            Some(Direction::Write)
        );
        assert_eq!(direction_of("read a CSV and save it as a shapefile"), None);
        assert_eq!(direction_of("buffer the roads"), None);
        let entry = |name: &str| DocEntry {
            name: name.into(),
            ..DocEntry::default()
        };
        assert_eq!(
            direction_of_entry(&entry("xarray.Dataset.to_netcdf")),
            Some(Direction::Write)
        );
        assert_eq!(
            direction_of_entry(&entry("xarray.open_dataset")),
            Some(Direction::Read)
        );
        assert_eq!(
            direction_of_entry(&entry("geopandas.read_file")),
            Some(Direction::Read)
        );
        assert_eq!(direction_of_entry(&entry("rasterio.features.shapes")), None);
    }

    #[test]
    fn wrong_apis_read_as_the_model_wrote_them() {
        let missing = WrongApi::Missing {
            owner: "GeoSeries".into(),
            name: "cascaded_union".into(),
        };
        assert_eq!(missing.to_string(), "GeoSeries.cascaded_union");
        let keyword = WrongApi::Keyword {
            function: "sjoin".into(),
            keyword: "op".into(),
        };
        assert_eq!(keyword.to_string(), "sjoin(op=…)");
    }
}
