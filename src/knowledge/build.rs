//! Building the index: the venv's Python runs `knowledge/extract_docs.py`
//! (our script, not model code) over the module list; each entry is
//! embedded; `docs.jsonl`, `vectors.f32` and `meta.json` are written
//! atomically into the index folder.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{
    docs_file, embedding_text, meta_file, vectors_file, DocEntry, IndexMeta, KnowledgeError,
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

/// Builds the index of `modules` into `dir`; `tick(done, total)` reports
/// embedding progress.
pub fn build(
    dir: &Path,
    python: &Path,
    modules: &[String],
    embedder: &Embedder,
    tick: &dyn Fn(usize, usize),
) -> Result<IndexMeta, KnowledgeError> {
    let (entries, skipped) = extract(python, modules)?;
    if entries.is_empty() {
        return Err(KnowledgeError::Build(format!(
            "no documented object in {}",
            modules.join(", ")
        )));
    }
    let mut vectors: Vec<u8> = Vec::with_capacity(entries.len() * 384 * 4);
    let mut dim = 0;
    for (i, entry) in entries.iter().enumerate() {
        let v = embedder
            .embed(&[embedding_text(entry).as_str()])
            .map_err(|e| KnowledgeError::Build(format!("{}: {e}", entry.name)))?
            .remove(0);
        dim = v.len();
        for x in v {
            vectors.extend_from_slice(&x.to_le_bytes());
        }
        tick(i + 1, entries.len());
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
        count: entries.len(),
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
    let meta_json =
        serde_json::to_string_pretty(&meta).map_err(|e| KnowledgeError::Build(e.to_string()))?;
    write(&meta_file(dir), meta_json.as_bytes())?;
    Ok(meta)
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
