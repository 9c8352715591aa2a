//! Building the index: the venv's Python runs `knowledge/extract_docs.py`
//! (our script, not model code) over the module list; the recipes are
//! added; every chunk of every entry is embedded, in padded batches (a
//! chunk the folder's previous index embedded with the same model is
//! reused);
//! `docs.jsonl`, `vectors.f32`, `owners.u32` and `meta.json` are written
//! atomically into the index folder.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{
    docs_file, embedding_texts, meta_file, owners_file, recipes, vectors_file, DocEntry, IndexMeta,
    KnowledgeError, INDEX_FORMAT,
};
use crate::embed::Embedder;
use crate::sandbox::TOOLS_SRC;
use crate::util::write_atomic;

/// The extraction script (run by the venv's interpreter).
const EXTRACT: &str = include_str!("../../knowledge/extract_docs.py");
/// The default module list.
const MODULES: &str = include_str!("../../knowledge/modules.txt");

/// The default modules, most specific first.
pub fn default_modules() -> Vec<String> {
    MODULES
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Extracts the entries of `modules` with `python`: the entries, and the
/// modules that did not import (with their error).
pub fn extract(
    python: &Path,
    modules: &[String],
) -> Result<(Vec<DocEntry>, Vec<String>), KnowledgeError> {
    let scratch = tempfile::tempdir()
        .map_err(|e| KnowledgeError::Build(format!("a temporary folder: {e}")))?;
    let script = scratch.path().join("extract_docs.py");
    std::fs::write(&script, EXTRACT)
        .map_err(|e| KnowledgeError::Build(format!("{}: {e}", script.display())))?;
    std::fs::write(scratch.path().join("gisclaw_tools.py"), TOOLS_SRC)
        .map_err(|e| KnowledgeError::Build(e.to_string()))?;
    let output = Command::new(python)
        .arg(&script)
        .args(modules)
        .env("PYTHONPATH", scratch.path())
        .env("MPLBACKEND", "Agg")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            KnowledgeError::Build(format!(
                "cannot run {}: {e} (run `make setup`)",
                python.display()
            ))
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(KnowledgeError::Build(format!(
            "extracting the docs failed ({}): {}",
            output.status,
            stderr.lines().last().unwrap_or("")
        )));
    }
    let mut entries = Vec::new();
    for (i, line) in String::from_utf8_lossy(&output.stdout).lines().enumerate() {
        let entry: DocEntry = serde_json::from_str(line)
            .map_err(|e| KnowledgeError::Build(format!("extractor output line {}: {e}", i + 1)))?;
        entries.push(entry);
    }
    let skipped = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    Ok((entries, skipped))
}

/// Texts embedded per forward pass.
const BATCH: usize = 32;

/// Builds the index of `modules` (and the recipes) into `dir`;
/// `tick(done, total)` reports embedding progress in chunks.
pub fn build(
    dir: &Path,
    python: &Path,
    modules: &[String],
    embedder: &Embedder,
    tick: &dyn Fn(usize, usize),
) -> Result<IndexMeta, KnowledgeError> {
    let (mut entries, skipped) = extract(python, modules)?;
    if entries.is_empty() {
        return Err(KnowledgeError::Build(format!(
            "no documented object in {}",
            modules.join(", ")
        )));
    }
    let recipes = recipes::all().map_err(|e| KnowledgeError::Build(e.to_string()))?;
    entries.extend(recipes.iter().map(recipes::Recipe::entry));
    let mut texts: Vec<String> = Vec::new();
    let mut owners: Vec<u8> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        for text in embedding_texts(entry) {
            texts.push(text);
            owners.extend_from_slice(&(i as u32).to_le_bytes());
        }
    }
    // The vectors of texts the folder's previous index already embedded
    // with the same model are reused: a rebuild after upgrading a library
    // embeds only what changed.
    let previous = previous_vectors(dir, embedder);
    let missing: Vec<&str> = texts
        .iter()
        .filter(|t| !previous.contains_key(t.as_str()))
        .map(String::as_str)
        .collect();
    let mut fresh: HashMap<&str, Vec<f32>> = HashMap::new();
    // Batches of batches: progress shows, and each call pads texts of
    // similar lengths together.
    for (done, group) in missing.chunks(BATCH * 16).enumerate() {
        let embedded = embedder
            .embed_batch(group, BATCH)
            .map_err(|e| KnowledgeError::Build(format!("embedding: {e}")))?;
        fresh.extend(group.iter().copied().zip(embedded));
        tick(((done + 1) * BATCH * 16).min(missing.len()), missing.len());
    }
    let mut vectors: Vec<u8> = Vec::with_capacity(texts.len() * 384 * 4);
    let mut dim = 0;
    for text in &texts {
        let v = fresh
            .get(text.as_str())
            .or_else(|| previous.get(text.as_str()))
            .ok_or_else(|| {
                KnowledgeError::Build(format!(
                    "no vector for a chunk of {} characters",
                    text.len()
                ))
            })?;
        dim = v.len();
        for x in v {
            vectors.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| KnowledgeError::Build(format!("{}: {e}", dir.display())))?;
    let mut docs = Vec::new();
    for entry in &entries {
        serde_json::to_writer(&mut docs, entry)
            .map_err(|e| KnowledgeError::Build(e.to_string()))?;
        docs.write_all(b"\n")
            .map_err(|e| KnowledgeError::Build(e.to_string()))?;
    }
    let meta = IndexMeta {
        format: INDEX_FORMAT,
        count: entries.len(),
        chunks: texts.len(),
        embedded: missing.len(),
        recipes: recipes.len(),
        dim,
        model: embedder.dir().display().to_string(),
        modules: modules.to_vec(),
        skipped,
    };
    let write = |path: &Path, bytes: &[u8]| {
        write_atomic(path, bytes)
            .map_err(|e| KnowledgeError::Build(format!("{}: {e}", path.display())))
    };
    // meta.json last: an index is complete only when it names the count.
    write(&docs_file(dir), &docs)?;
    write(&vectors_file(dir), &vectors)?;
    write(&owners_file(dir), &owners)?;
    let meta_json =
        serde_json::to_string_pretty(&meta).map_err(|e| KnowledgeError::Build(e.to_string()))?;
    write(&meta_file(dir), meta_json.as_bytes())?;
    Ok(meta)
}

/// The vectors of the index already in `dir`, by the text they embed, when
/// it was built with the same model in this layout; empty otherwise (or
/// when any of its files does not read).
fn previous_vectors(dir: &Path, embedder: &Embedder) -> HashMap<String, Vec<f32>> {
    let mut found = HashMap::new();
    let Ok(meta) = std::fs::read_to_string(meta_file(dir)) else {
        return found;
    };
    let Ok(meta) = serde_json::from_str::<IndexMeta>(&meta) else {
        return found;
    };
    if meta.format != INDEX_FORMAT
        || meta.model != embedder.dir().display().to_string()
        || meta.dim == 0
    {
        return found;
    }
    let (Ok(docs), Ok(vectors), Ok(owners)) = (
        std::fs::read_to_string(docs_file(dir)),
        std::fs::read(vectors_file(dir)),
        std::fs::read(owners_file(dir)),
    ) else {
        return found;
    };
    let entries: Vec<DocEntry> = match docs.lines().map(serde_json::from_str).collect() {
        Ok(entries) => entries,
        Err(_) => return found,
    };
    let texts: Vec<String> = entries.iter().flat_map(embedding_texts).collect();
    if texts.len() * 4 != owners.len() || vectors.len() != texts.len() * meta.dim * 4 {
        return found;
    }
    for (text, row) in texts.into_iter().zip(vectors.chunks_exact(meta.dim * 4)) {
        let v = row
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        found.insert(text, v);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_module_list_reads_without_comments() {
        let modules = default_modules();
        assert!(modules.contains(&"rasterio.features".to_string()));
        assert!(modules.iter().all(|m| !m.contains('#') && !m.contains(' ')));
        // Most specific first: a submodule before its package.
        let at = |m: &str| modules.iter().position(|x| x == m).unwrap();
        assert!(at("rasterio.features") < at("rasterio"));
    }
}
