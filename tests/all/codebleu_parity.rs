//! CodeBLEU parity: gisclaw's CodeBLEU against the reference `codebleu`
//! package (PyPI 0.7.0 on tree-sitter-python 0.21, installed in the sandbox
//! venv by `make setup`) on 100 pairs built from the benchmark's 50 gold
//! solutions: each gold against the next task's gold (unrelated code), and
//! each gold against itself with every fourth line dropped and a common name
//! renamed (near code, often with syntax errors).

use std::path::{Path, PathBuf};
use std::process::Command;

use gisclaw::eval::metrics::codebleu::codebleu;

/// The reference, run on a JSON list of [gold, candidate] pairs; prints a
/// JSON list of its score dicts. Python's string hashing is pinned so that
/// the reference's own `list(set(...))` orders are reproducible.
const REFERENCE: &str = r#"
import json, sys
from codebleu import calc_codebleu
pairs = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps([calc_codebleu([g], [c], "python") for g, c in pairs]))
"#;

fn gold_solutions() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/geoanalyst");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("gold.py").exists())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| std::fs::read_to_string(d.join("gold.py")).unwrap())
        .collect()
}

/// `code` with every fourth line dropped and `gdf` renamed.
fn mutate(code: &str) -> String {
    code.lines()
        .enumerate()
        .filter(|(i, _)| i % 4 != 3)
        .map(|(_, l)| l.replace("gdf", "frame"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn codebleu_agrees_with_the_reference_package_within_a_hundredth() {
    let golds = gold_solutions();
    assert_eq!(golds.len(), 50);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (i, g) in golds.iter().enumerate() {
        pairs.push((g.clone(), golds[(i + 1) % golds.len()].clone()));
        pairs.push((g.clone(), mutate(g)));
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pairs.json");
    std::fs::write(&file, serde_json::to_string(&pairs).unwrap()).unwrap();
    let python = gisclaw::paths::default_venv().join("bin/python");
    let out = Command::new(&python)
        .arg("-c")
        .arg(REFERENCE)
        .arg(&file)
        .env("PYTHONHASHSEED", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the reference codebleu did not run in {} (make setup installs it): {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let reference: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reference.len(), pairs.len());

    let mut worst = [0.0f64; 5];
    let mut failures = Vec::new();
    for (i, ((gold, cand), want)) in pairs.iter().zip(&reference).enumerate() {
        let got = codebleu(gold, cand);
        let parts = [
            (got.codebleu, "codebleu"),
            (got.ngram_match, "ngram_match_score"),
            (got.weighted_ngram_match, "weighted_ngram_match_score"),
            (got.syntax_match, "syntax_match_score"),
            (got.dataflow_match, "dataflow_match_score"),
        ];
        for (k, (value, key)) in parts.iter().enumerate() {
            let diff = (value - want[key].as_f64().unwrap()).abs();
            worst[k] = worst[k].max(diff);
            if k == 0 && diff > 0.01 {
                failures.push(format!("pair {i}: {got:?} vs {want}"));
            }
        }
    }
    eprintln!("largest differences (total, ngram, weighted, syntax, dataflow): {worst:?}");
    assert!(
        failures.is_empty(),
        "{} of {} pairs differ by more than 0.01:\n{}",
        failures.len(),
        pairs.len(),
        failures.join("\n")
    );
    // The n-gram and AST parts are the same arithmetic on the same trees and
    // agree to rounding; the data-flow part differs where the reference orders
    // names by string hash (see `eval::metrics::codebleu::dataflow`).
    assert!(
        worst[1] < 1e-9 && worst[2] < 1e-9 && worst[3] < 1e-9,
        "{worst:?}"
    );
}
