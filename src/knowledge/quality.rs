//! How well retrieval finds the right API: a query set (`knowledge/queries/
//! dev.json`: task, error and exact-name queries with the answers accepted
//! for each, written before looking at results) scored as recall@1/5/10 and
//! MRR@10 for the hybrid search and for each ranking alone
//! (`gisclaw knowledge eval`).

use std::path::Path;

use serde::Deserialize;

use super::search::{Fusion, Library, Mode, Rankings};
use super::DocEntry;

/// A query set.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuerySet {
    /// What the set is and how it was made.
    #[serde(default)]
    pub about: String,
    /// The queries.
    pub queries: Vec<Query>,
}

/// One query and its accepted answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// `task`, `error` or `name`.
    pub kind: String,
    /// The text searched.
    pub query: String,
    /// Entry names (canonical or alias) that answer it.
    pub answers: Vec<String>,
}

/// Why a query set cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct QuerySetError {
    /// The file.
    pub path: String,
    /// What is wrong, with the line and the field.
    pub message: String,
}

impl QuerySet {
    /// Reads a query set; an unreadable one names the file, line and field.
    pub fn load(path: &Path) -> Result<QuerySet, QuerySetError> {
        let error = |message: String| QuerySetError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        let set: QuerySet =
            serde_json::from_str(&text).map_err(|e| error(format!("line {}: {e}", e.line())))?;
        for (i, q) in set.queries.iter().enumerate() {
            if q.query.trim().is_empty() || q.answers.is_empty() {
                return Err(error(format!(
                    "queries[{i}]: field `{}` is empty",
                    if q.answers.is_empty() {
                        "answers"
                    } else {
                        "query"
                    }
                )));
            }
            if !matches!(q.kind.as_str(), "task" | "error" | "name") {
                return Err(error(format!(
                    "queries[{i}]: field `kind`: `{}` is not task, error or name",
                    q.kind
                )));
            }
        }
        Ok(set)
    }
}

/// True when `entry` is one of `answers` (by its name or an alias).
pub fn answers(entry: &DocEntry, answers: &[String]) -> bool {
    std::iter::once(&entry.name)
        .chain(&entry.aliases)
        .any(|n| answers.contains(n))
}

/// The scores of one mode on a query set.
#[derive(Debug, Clone, PartialEq)]
pub struct Scores {
    /// Queries scored.
    pub queries: usize,
    /// Share with an answer first.
    pub recall_at_1: f64,
    /// Share with an answer in the top 5.
    pub recall_at_5: f64,
    /// Share with an answer in the top 10.
    pub recall_at_10: f64,
    /// Mean of 1 / the first answer's rank (0 beyond 10).
    pub mrr: f64,
    /// The rank of the first answer per query (`None`: not in the top 10).
    pub ranks: Vec<Option<usize>>,
    /// Seconds per query, in query order.
    pub seconds: Vec<f64>,
}

/// Scores `mode` on `set`.
pub fn evaluate(library: &Library, set: &QuerySet, mode: Mode) -> Scores {
    let mut ranks = Vec::new();
    let mut seconds = Vec::new();
    for q in &set.queries {
        let start = std::time::Instant::now();
        let hits = library.search_mode(&q.query, 10, mode);
        seconds.push(start.elapsed().as_secs_f64());
        ranks.push(
            hits.iter()
                .position(|h| answers(h.entry, &q.answers))
                .map(|p| p + 1),
        );
    }
    let n = ranks.len().max(1) as f64;
    let within = |k: usize| ranks.iter().filter(|r| r.is_some_and(|r| r <= k)).count() as f64 / n;
    Scores {
        queries: ranks.len(),
        recall_at_1: within(1),
        recall_at_5: within(5),
        recall_at_10: within(10),
        mrr: ranks
            .iter()
            .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
            .sum::<f64>()
            / n,
        ranks,
        seconds,
    }
}

/// MRR@10 and recall@5 of `fusion` on the queries `picked` (indexes into
/// `set`), from their precomputed rankings.
fn score_fusion(
    library: &Library,
    set: &QuerySet,
    rankings: &[Rankings],
    picked: &[usize],
    fusion: &Fusion,
) -> (f64, f64) {
    let mut mrr = 0.0;
    let mut at5 = 0.0;
    for &i in picked {
        let fused = library.one_recipe(library.fuse(&rankings[i], fusion));
        if let Some(p) = fused
            .iter()
            .take(10)
            .position(|(id, _)| answers(&library.entries()[*id], &set.queries[i].answers))
        {
            mrr += 1.0 / (p + 1) as f64;
            if p < 5 {
                at5 += 1.0;
            }
        }
    }
    let n = picked.len().max(1) as f64;
    (mrr / n, at5 / n)
}

/// The settings searched by [`tune`]: a grid around the default.
fn grid() -> Vec<Fusion> {
    let mut grid = vec![Fusion::default()];
    let mut widen = |values: &[f64], set: fn(&mut Fusion, f64)| {
        grid = grid
            .iter()
            .flat_map(|f| {
                values.iter().map(move |&v| {
                    let mut f = *f;
                    set(&mut f, v);
                    f
                })
            })
            .collect();
    };
    widen(&[2.0, 5.0, 10.0, 20.0, 60.0], |f, v| f.k = v);
    widen(&[0.6, 0.8, 1.0, 1.25, 1.5], |f, v| f.dense = v);
    widen(&[1.0, 2.0, 3.0], |f, v| f.names = v);
    widen(&[0.0, 2.0, 4.0], |f, v| f.exact = v);
    widen(&[0.8, 1.0], |f, v| f.property = v);
    widen(&[0.8, 1.0, 1.2, 1.5], |f, v| f.recipe = v);
    widen(&[0.3, 0.5, 0.8], |f, v| f.plotting = v);
    widen(&[0.3, 0.5, 1.0], |f, v| f.direction = v);
    widen(&[0.0, 0.6, 1.0], |f, v| f.companion = v);
    grid
}

/// The best of `candidates` on the queries `picked` (MRR@10, then
/// recall@5; the first of equals), with its scores.
fn best_on(
    library: &Library,
    set: &QuerySet,
    rankings: &[Rankings],
    picked: &[usize],
    candidates: &[Fusion],
) -> (Fusion, (f64, f64)) {
    let mut best = (
        Fusion::default(),
        score_fusion(library, set, rankings, picked, &Fusion::default()),
    );
    for fusion in candidates {
        let s = score_fusion(library, set, rankings, picked, fusion);
        if s.0 > best.1 .0 + 1e-9 || (s.0 > best.1 .0 - 1e-9 && s.1 > best.1 .1 + 1e-9) {
            best = (*fusion, s);
        }
    }
    best
}

/// What tuning found: the best settings on the whole set, and how well
/// tuning generalises.
#[derive(Debug, Clone)]
pub struct Tuned {
    /// The best settings on the whole set.
    pub fusion: Fusion,
    /// Their MRR@10 and recall@5 on the whole set (optimistic: tuned on it).
    pub mrr: f64,
    /// See `mrr`.
    pub recall_at_5: f64,
    /// Two-fold cross-validation: settings tuned on the even-numbered
    /// queries scored on the odd ones and the other way round, averaged:
    /// MRR@10 and recall@5 to expect on queries the tuning never saw.
    pub held_out: (f64, f64),
}

/// The fusion settings that score best on `set` (MRR@10, then recall@5),
/// searched on a grid around the default, and their two-fold
/// cross-validated scores; each query's rankings are computed once.
pub fn tune(library: &Library, set: &QuerySet) -> Tuned {
    let rankings: Vec<Rankings> = set
        .queries
        .iter()
        .map(|q| library.rankings_of(&q.query))
        .collect();
    let candidates = grid();
    let all: Vec<usize> = (0..set.queries.len()).collect();
    let (fusion, (mrr, recall_at_5)) = best_on(library, set, &rankings, &all, &candidates);
    let even: Vec<usize> = all.iter().copied().filter(|i| i % 2 == 0).collect();
    let odd: Vec<usize> = all.iter().copied().filter(|i| i % 2 == 1).collect();
    let mut held_out = (0.0, 0.0);
    for (train, test) in [(&even, &odd), (&odd, &even)] {
        let (chosen, _) = best_on(library, set, &rankings, train, &candidates);
        let s = score_fusion(library, set, &rankings, test, &chosen);
        let share = test.len() as f64 / all.len().max(1) as f64;
        held_out.0 += s.0 * share;
        held_out.1 += s.1 * share;
    }
    Tuned {
        fusion,
        mrr,
        recall_at_5,
        held_out,
    }
}

/// The `q`-quantile of `values` (nearest rank).
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_query_set_names_the_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.json");
        std::fs::write(
            &path,
            "{\"queries\": [\n{\"kind\": \"task\", \"query\": \"x\"}\n]}",
        )
        .unwrap();
        let err = QuerySet::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("q.json: line 2") && err.contains("answers"),
            "{err}"
        );
        std::fs::write(
            &path,
            "{\"queries\": [{\"kind\": \"how\", \"query\": \"x\", \"answers\": [\"a\"]}]}",
        )
        .unwrap();
        let err = QuerySet::load(&path).unwrap_err().to_string();
        assert!(err.contains("queries[0]: field `kind`"), "{err}");
    }

    #[test]
    fn the_repository_query_set_reads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("knowledge/queries/dev.json");
        let set = QuerySet::load(&path).unwrap();
        assert!(set.queries.len() >= 60);
        for kind in ["task", "error", "name"] {
            assert!(set.queries.iter().any(|q| q.kind == kind));
        }
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.95), 5.0);
        assert_eq!(quantile(&[], 0.95), 0.0);
    }
}
