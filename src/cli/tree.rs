//! `gisclaw tree show DIR`: the search tree an `--arch mcts` run left in
//! `DIR/tree.json`, as an indented tree with the chosen path marked.

use std::path::Path;
use std::process::ExitCode;

use gisclaw::agent::mcts::tree::Tree;

use super::common::UsageError;

/// Prints the tree of the run in `dir`.
pub fn show(dir: &Path) -> anyhow::Result<ExitCode> {
    let path = if dir.is_dir() {
        dir.join("tree.json")
    } else {
        dir.to_path_buf()
    };
    let bytes = std::fs::read(&path).map_err(|e| {
        UsageError(format!(
            "{}: {e} (only `--arch mcts` runs leave a tree.json)",
            path.display()
        ))
    })?;
    let tree: Tree = serde_json::from_slice(&bytes).map_err(|e| {
        UsageError(format!(
            "{}:{}: not a search tree: {e}",
            path.display(),
            e.line()
        ))
    })?;
    let best = tree.best();
    print!("{}", tree.render(best));
    let (ran, failed, pruned) = tree.counts();
    println!(
        "chosen: node #{best} (reward {}) · {ran} ran, {failed} failed, {pruned} pruned",
        tree.nodes[best]
            .reward
            .map_or("–".to_string(), |r| format!("{r:.2}"))
    );
    Ok(ExitCode::SUCCESS)
}
