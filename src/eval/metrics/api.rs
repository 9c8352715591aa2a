//! L1 API metrics: which functions and GIS operations a script uses.
//!
//! - [`references`] reads a script's calls and attribute accesses, with
//!   import aliases resolved (`gpd.read_file` → `geopandas.read_file`).
//! - **API-operation F1** (GISclaw §3.3): the set of GIS operations of an
//!   [`OpTable`] found in the candidate vs in the gold, scored with set
//!   precision, recall and F1.
//! - **Function-call metrics** (GeoAgent §4.5, Eqs. 3–7): the called
//!   functions as a label set per example, scored example-based — accuracy
//!   |P∩G|/|P∪G|, precision, recall, F1 and Hamming loss, averaged over
//!   examples.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

pub use crate::pysource::references::{called_functions, references, Reference};

/// Errors reading an operation table.
#[derive(Debug, thiserror::Error)]
pub enum OpTableError {
    /// The file cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is invalid or not `[ops] name = ["pattern", …]`.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with the line.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpFile {
    ops: BTreeMap<String, Vec<String>>,
}

/// GIS operations and the call patterns that reveal them.
#[derive(Debug, Clone)]
pub struct OpTable {
    ops: BTreeMap<String, Vec<Vec<String>>>,
}

const BUILT_IN: &str = include_str!("api_ops.toml");

impl OpTable {
    /// The built-in table (`src/eval/metrics/api_ops.toml`; its tests parse it).
    pub fn built_in() -> Result<OpTable, OpTableError> {
        OpTable::parse(BUILT_IN, "api_ops.toml (built in)")
    }

    /// Reads a table from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<OpTable, OpTableError> {
        let file: OpFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].lines().count().max(1));
            OpTableError::Parse {
                path: origin.to_string(),
                message: match line {
                    Some(l) => format!("line {l}: {}", e.message()),
                    None => e.message().to_string(),
                },
            }
        })?;
        let ops = file
            .ops
            .into_iter()
            .map(|(op, patterns)| {
                (
                    op,
                    patterns
                        .iter()
                        .map(|p| p.split('.').map(str::to_string).collect())
                        .collect(),
                )
            })
            .collect();
        Ok(OpTable { ops })
    }

    /// The built-in table extended (and overridden, per operation) by `path`.
    pub fn with_extension(path: &Path) -> Result<OpTable, OpTableError> {
        let text = std::fs::read_to_string(path).map_err(|source| OpTableError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let extra = OpTable::parse(&text, &path.display().to_string())?;
        let mut table = OpTable::built_in()?;
        table.ops.extend(extra.ops);
        Ok(table)
    }

    /// The operation names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.ops.keys().map(String::as_str)
    }

    /// The operations `source` performs.
    pub fn operations(&self, source: &str) -> BTreeSet<String> {
        let refs = references(source);
        let segments: Vec<Vec<&str>> = refs
            .iter()
            .map(|r| r.name.split('.').filter(|s| !s.is_empty()).collect())
            .collect();
        self.ops
            .iter()
            .filter(|(_, patterns)| {
                patterns.iter().any(|pattern| {
                    segments.iter().any(|name| {
                        name.len() >= pattern.len()
                            && name[name.len() - pattern.len()..]
                                .iter()
                                .zip(pattern)
                                .all(|(a, b)| a == b)
                    })
                })
            })
            .map(|(op, _)| op.clone())
            .collect()
    }
}

/// Set precision, recall and F1 of a candidate set against a reference set.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SetScore {
    /// |C∩G| / |C| (1 when both are empty, 0 when only C is empty).
    pub precision: f64,
    /// |C∩G| / |G| (1 when both are empty, 0 when only G is empty).
    pub recall: f64,
    /// 2PR / (P+R), 0 when both are 0.
    pub f1: f64,
}

/// Compares two sets.
pub fn set_score<T: Ord>(gold: &BTreeSet<T>, candidate: &BTreeSet<T>) -> SetScore {
    if gold.is_empty() && candidate.is_empty() {
        return SetScore {
            precision: 1.0,
            recall: 1.0,
            f1: 1.0,
        };
    }
    let common = gold.intersection(candidate).count() as f64;
    let precision = if candidate.is_empty() {
        0.0
    } else {
        common / candidate.len() as f64
    };
    let recall = if gold.is_empty() {
        0.0
    } else {
        common / gold.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    SetScore {
        precision,
        recall,
        f1,
    }
}

/// GeoAgent's example-based multi-label metrics over a set of examples.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LabelMetrics {
    /// Mean |P∩G| / |P∪G|.
    pub accuracy: f64,
    /// Mean |P∩G| / |P|.
    pub precision: f64,
    /// Mean |P∩G| / |G|.
    pub recall: f64,
    /// Mean 2|P∩G| / (|P|+|G|).
    pub f1: f64,
    /// Mean |P Δ G| / c, with c the number of distinct labels over all
    /// examples (predicted or gold).
    pub hamming_loss: f64,
    /// Examples.
    pub n: usize,
}

/// Example-based metrics of `(gold, predicted)` label sets. An example with
/// an empty side contributes 0 to the ratios that divide by it (1 when both
/// are empty). NaN for no examples.
pub fn label_metrics(examples: &[(BTreeSet<String>, BTreeSet<String>)]) -> LabelMetrics {
    let n = examples.len();
    if n == 0 {
        return LabelMetrics {
            accuracy: f64::NAN,
            precision: f64::NAN,
            recall: f64::NAN,
            f1: f64::NAN,
            hamming_loss: f64::NAN,
            n,
        };
    }
    let classes: BTreeSet<&String> = examples
        .iter()
        .flat_map(|(g, p)| g.iter().chain(p))
        .collect();
    let ratio = |num: usize, den: usize, both_empty: bool| {
        if den == 0 {
            if both_empty {
                1.0
            } else {
                0.0
            }
        } else {
            num as f64 / den as f64
        }
    };
    let (mut acc, mut p, mut r, mut f1, mut hl) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (gold, pred) in examples {
        let both_empty = gold.is_empty() && pred.is_empty();
        let common = gold.intersection(pred).count();
        let union = gold.union(pred).count();
        acc += ratio(common, union, both_empty);
        p += ratio(common, pred.len(), both_empty);
        r += ratio(common, gold.len(), both_empty);
        f1 += ratio(2 * common, pred.len() + gold.len(), both_empty);
        hl += if classes.is_empty() {
            0.0
        } else {
            (union - common) as f64 / classes.len() as f64
        };
    }
    let n_f = n as f64;
    LabelMetrics {
        accuracy: acc / n_f,
        precision: p / n_f,
        recall: r / n_f,
        f1: f1 / n_f,
        hamming_loss: hl / n_f,
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn operations_match_bare_and_dotted_patterns() {
        let table = OpTable::built_in().unwrap();
        let src = "import geopandas as gpd\nimport rasterio as rio\ng = gpd.read_file('a.geojson')\nj = gpd.sjoin(g, g)\n\
                   g.buffer(5).to_file('o.geojson')\nr = rio.open('d.tif')\nx.open('y')\n";
        let ops = table.operations(src);
        assert_eq!(
            ops,
            set(&[
                "buffer",
                "read_raster",
                "read_vector",
                "spatial_join",
                "write_vector"
            ])
        );
        // `x.open` is not rasterio.open: a dotted pattern needs the module.
        assert!(!table.operations("x.open('y')").contains("read_raster"));
    }

    #[test]
    fn extension_tables_add_and_replace_operations_and_bad_files_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ops.toml");
        std::fs::write(
            &file,
            "[ops]\nbuffer = [\"make_buffer\"]\nflow = [\"pysheds.grid.Grid.flowdir\"]\n",
        )
        .unwrap();
        let table = OpTable::with_extension(&file).unwrap();
        assert!(table.operations("make_buffer(g)").contains("buffer"));
        assert!(!table.operations("g.buffer(1)").contains("buffer"));
        assert!(table.names().any(|n| n == "flow"));
        std::fs::write(&file, "[ops]\nbuffer = [\"a\"]\nflow = 3\n").unwrap();
        let err = OpTable::with_extension(&file).unwrap_err().to_string();
        assert!(err.contains("ops.toml: line 3"), "{err}");
    }

    #[test]
    fn set_scores_match_hand_computations() {
        let s = set_score(&set(&["a", "b", "c", "d"]), &set(&["a", "b", "x"]));
        assert!((s.precision - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.recall - 0.5).abs() < 1e-12);
        assert!((s.f1 - 4.0 / 7.0).abs() < 1e-12);
        assert_eq!(set_score::<String>(&set(&[]), &set(&[])).f1, 1.0);
        assert_eq!(set_score(&set(&["a"]), &set(&[])).f1, 0.0);
    }

    #[test]
    fn label_metrics_match_hand_computations() {
        // Example 1: G = {a,b}, P = {a,c}: acc 1/3, p 1/2, r 1/2, f1 1/2, Δ = {b,c}.
        // Example 2: G = {d}, P = {d}: all 1, Δ = {}.
        // Classes over both: {a,b,c,d} → Hamming = (2/4 + 0)/2.
        let m = label_metrics(&[
            (set(&["a", "b"]), set(&["a", "c"])),
            (set(&["d"]), set(&["d"])),
        ]);
        assert!((m.accuracy - (1.0 / 3.0 + 1.0) / 2.0).abs() < 1e-12);
        assert!((m.precision - 0.75).abs() < 1e-12);
        assert!((m.recall - 0.75).abs() < 1e-12);
        assert!((m.f1 - 0.75).abs() < 1e-12);
        assert!((m.hamming_loss - 0.25).abs() < 1e-12);
        assert!(label_metrics(&[]).f1.is_nan());
    }
}
