//! `gisclaw knowledge build|search|eval`: the library-docs index behind
//! `--rag`, and how well it finds the right API.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gisclaw::embed::Embedder;
use gisclaw::knowledge::quality::{self, QuerySet};
use gisclaw::knowledge::{self, build, Library, Mode};

use super::common::UsageError;

/// The `knowledge` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum KnowledgeCommand {
    /// Extract the docstrings of the venv's GIS modules and embed them
    /// (about 20 minutes on two cores the first time; a rebuild embeds only
    /// the text that changed; nothing is downloaded).
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
        /// Also show the BM25, embedding and exact-name rankings before fusion.
        #[arg(long)]
        explain: bool,
    },
    /// Score retrieval on a query set (knowledge/queries/dev.json):
    /// recall@1/5/10 and MRR for hybrid, BM25 alone and embeddings alone.
    Eval {
        /// The query set (JSON: {"queries": [{"kind", "query", "answers"}]}).
        queries: PathBuf,
        /// The index folder.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Also list the queries whose answer the hybrid search misses in its top 5.
        #[arg(long)]
        misses: bool,
        /// Also search the fusion weights that score best on this set.
        #[arg(long)]
        tune: bool,
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
                    "{bar:30} {pos}/{len} chunks embedded [{elapsed}, {eta} left]",
                ));
                bar
            });
            say_err!(
                "gisclaw: extracting the docs of {} module(s) with {}",
                modules.len(),
                python.display()
            );
            // Off a terminal (a log, CI), a line per tenth of the chunks.
            let start = std::time::Instant::now();
            let logged = std::cell::Cell::new(0);
            let meta = build::build(&dir, &python, &modules, &embedder, &|done, total| {
                if let Some(bar) = &bar {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                } else if done * 10 / total.max(1) > logged.get() || done == total {
                    logged.set(done * 10 / total.max(1));
                    say_err!(
                        "gisclaw: {done}/{total} chunks embedded ({:.0} s)",
                        start.elapsed().as_secs_f64()
                    );
                }
            })
            .with_context(|| format!("building the library-docs index in {}", dir.display()))?;
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            for s in &meta.skipped {
                say_err!("gisclaw: skipped {s}");
            }
            say!(
                "indexed {} entries ({} recipes, {} chunks: {} embedded, {} reused) from {} module(s) into {}",
                meta.count,
                meta.recipes,
                meta.chunks,
                meta.embedded,
                meta.chunks - meta.embedded,
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
                let [bm25, dense, names] = library.rankings(&query, k.max(1));
                say!("BM25:       {}", bm25.join(", "));
                say!("embeddings: {}", dense.join(", "));
                say!("names:      {}", names.join(", "));
            }
            say_part!("{}", library.render(&query, k.max(1)));
            Ok(ExitCode::SUCCESS)
        }
        KnowledgeCommand::Eval {
            queries,
            dir,
            misses,
            tune,
        } => {
            let set = QuerySet::load(&queries).map_err(|e| UsageError(e.to_string()))?;
            let embedder = Embedder::load_default().map_err(|e| UsageError(e.to_string()))?;
            let library = Library::open(&dir.unwrap_or_else(knowledge::default_dir), embedder)
                .map_err(|e| UsageError(e.to_string()))?;
            say!(
                "{} queries ({}), index of {} entries",
                set.queries.len(),
                kinds(&set),
                library.len()
            );
            say!("| mode | recall@1 | recall@5 | recall@10 | MRR@10 | p50 ms | p95 ms |");
            say!("|---|---|---|---|---|---|---|");
            let mut hybrid = None;
            for (label, mode) in [
                ("hybrid", Mode::Hybrid),
                ("BM25 alone", Mode::Bm25),
                ("embeddings alone", Mode::Dense),
            ] {
                let scores = quality::evaluate(&library, &set, mode);
                say!(
                    "| {label} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} | {:.1} |",
                    scores.recall_at_1,
                    scores.recall_at_5,
                    scores.recall_at_10,
                    scores.mrr,
                    quality::quantile(&scores.seconds, 0.5) * 1e3,
                    quality::quantile(&scores.seconds, 0.95) * 1e3,
                );
                if mode == Mode::Hybrid {
                    hybrid = Some(scores);
                }
            }
            if let (true, Some(scores)) = (misses, hybrid) {
                for (q, rank) in set.queries.iter().zip(&scores.ranks) {
                    if rank.is_none_or(|r| r > 5) {
                        let got: Vec<String> = library
                            .search(&q.query, 3)
                            .iter()
                            .map(|h| h.entry.name.clone())
                            .collect();
                        say!(
                            "miss ({}): {} → rank {} (top 3: {})",
                            q.kind,
                            q.query,
                            rank.map_or("> 10".to_string(), |r| r.to_string()),
                            got.join(", ")
                        );
                    }
                }
            }
            if tune {
                let tuned = quality::tune(&library, &set);
                say!(
                    "best on this set: {:?} → MRR@10 {:.3}, recall@5 {:.3}",
                    tuned.fusion,
                    tuned.mrr,
                    tuned.recall_at_5
                );
                say!(
                    "two-fold cross-validated (tuned on half, scored on the other half): MRR@10 {:.3}, recall@5 {:.3}",
                    tuned.held_out.0, tuned.held_out.1
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `48 task, 10 error, 12 name`.
fn kinds(set: &QuerySet) -> String {
    ["task", "error", "name"]
        .iter()
        .map(|k| {
            format!(
                "{} {k}",
                set.queries.iter().filter(|q| q.kind == *k).count()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}
