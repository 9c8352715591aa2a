//! `gisclaw tree show DIR`: the search tree an `--arch mcts` run left in
//! `DIR/tree.json`, as an indented tree with the chosen path marked.

use std::path::Path;
use std::process::ExitCode;

use gisclaw::agent::mcts::tree::Tree;

use super::common::UsageError;

/// `gisclaw tree …`.
#[derive(clap::Subcommand, Debug)]
pub enum TreeCommand {
    /// Print the tree indented, the chosen path marked `*`, repairs,
    /// errors, the failure lines each node was told and rollouts.
    Show {
        /// The run's folder (or its tree.json).
        dir: std::path::PathBuf,
    },
}

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
    say_part!("{}", tree.render(best));
    let (ran, failed, pruned) = tree.counts();
    let (repairs, repairs_ran) = tree.repairs();
    say!(
        "chosen: node #{best} (reward {}) · {ran} ran, {failed} failed, {pruned} pruned · {repairs} repair(s), {repairs_ran} ran · {} rollout(s)",
        tree.nodes[best]
            .reward
            .map_or("–".to_string(), |r| format!("{r:.2}")),
        tree.rollouts()
    );
    Ok(ExitCode::SUCCESS)
}
