//! `gisclaw knowledge build|search`: the library-docs index behind `--rag`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gisclaw::embed::Embedder;
use gisclaw::knowledge::{self, build, Library};

use super::common::UsageError;

/// The `knowledge` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum KnowledgeCommand {
    /// Extract the docstrings of the venv's GIS modules and embed them
    /// (a few minutes once; nothing is downloaded).
    Build {
        /// Modules to index, comma-separated (default: knowledge/modules.txt).
        #[arg(long, value_delimiter = ',')]
        modules: Vec<String>,
        /// The index folder (default: GISCLAW_KNOWLEDGE or $XDG_CACHE_HOME/gisclaw/knowledge).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Search the index as the agent's `search_docs` tool does.
    Search {
        /// What to look for.
        query: String,
        /// How many hits.
        #[arg(short, long, default_value_t = 5)]
        k: usize,
        /// The index folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Also show the BM25 and the embedding rankings before fusion.
        #[arg(long)]
        explain: bool,
    },
}

/// Runs a `knowledge` subcommand.
pub fn run(command: KnowledgeCommand) -> anyhow::Result<ExitCode> {
    match command {
        KnowledgeCommand::Build { modules, dir } => {
            let dir = dir.unwrap_or_else(knowledge::default_dir);
            let modules = if modules.is_empty() {
                build::default_modules()
            } else {
                modules
            };
            let python = gisclaw::paths::default_venv().join("bin/python");
            let embedder = Embedder::load_default().map_err(|e| UsageError(e.to_string()))?;
            let bar = std::io::stderr().is_terminal().then(|| {
                let bar = indicatif::ProgressBar::new(0);
                bar.set_style(super::common::bar_style(
                    "{bar:30} {pos}/{len} entries embedded [{elapsed}, {eta} left]",
                ));
                bar
            });
            eprintln!(
                "gisclaw: extracting the docs of {} module(s) with {}",
                modules.len(),
                python.display()
            );
            let meta = build::build(&dir, &python, &modules, &embedder, &|done, total| {
                if let Some(bar) = &bar {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                }
            })
            .with_context(|| format!("building the library-docs index in {}", dir.display()))?;
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            for s in &meta.skipped {
                eprintln!("gisclaw: skipped {s}");
            }
            println!(
                "indexed {} entries from {} module(s) into {}",
                meta.count,
                meta.modules.len() - meta.skipped.len(),
                dir.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        KnowledgeCommand::Search {
            query,
            k,
            dir,
            explain,
        } => {
            let embedder = Embedder::load_default().map_err(|e| UsageError(e.to_string()))?;
            let library = Library::open(&dir.unwrap_or_else(knowledge::default_dir), embedder)
                .map_err(|e| UsageError(e.to_string()))?;
            if explain {
                let [bm25, dense] = library.rankings(&query, k.max(1));
                println!("BM25:       {}", bm25.join(", "));
                println!("embeddings: {}", dense.join(", "));
            }
            print!("{}", library.render(&query, k.max(1)));
            Ok(ExitCode::SUCCESS)
        }
    }
}
