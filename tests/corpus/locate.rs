//! Where the real-data corpus is (`tests/corpus/fetch.py` fills it), for
//! the truth tests (`tests/all/real_data.rs`) and the card's corpus bench
//! (`benches/card_corpus.rs`), which include this file by path.

use std::path::{Path, PathBuf};

/// The corpus folder (`GISCLAW_CORPUS`, else the cache's `gisclaw/corpus`);
/// panics with how to make it when it is not there.
pub fn corpus() -> PathBuf {
    let dir = match std::env::var_os("GISCLAW_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
            .join("gisclaw/corpus"),
    };
    assert!(
        dir.join("fiona/SOURCE.txt").is_file(),
        "no real-data corpus at {}: run `make corpus`",
        dir.display()
    );
    dir
}

/// The corpus folders that hold files themselves, relative to `root`,
/// sorted (the download cache left out).
pub fn corpus_folders(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut has_files = false;
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with(".downloads") {
                stack.push(path);
            } else if path.is_file() {
                has_files = true;
            }
        }
        if has_files && dir != root {
            found.push(
                dir.strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    found.sort();
    found
}
