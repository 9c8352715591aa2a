//! CodeBLEU (Ren et al. 2020) of Python code, agreeing with the reference
//! `codebleu` package (PyPI, 0.7) on tree-sitter-python 0.21.
//!
//! CodeBLEU = ¼·n-gram match + ¼·weighted n-gram match + ¼·AST match +
//! ¼·data-flow match:
//! - **n-gram match**: BLEU-4 over whitespace-separated tokens, with the
//!   reference's smoothing (an order without matches counts 0.1 matches);
//! - **weighted n-gram match**: like BLEU-4 but over recall against the
//!   reference, unigrams weighted 1 for Python keywords and 0.2 otherwise;
//!   as in the reference, its brevity penalty compares the candidate's length
//!   with 2 (the length of the reference's `[tokens, weights]` pair), so it
//!   only bites candidates of one token;
//! - **AST match**: the share of the gold's subtrees (tree-sitter
//!   S-expressions of every node with children, comments and docstrings
//!   removed first — see [`comments`]) that also occur in the candidate;
//! - **data-flow match**: the share of the gold's normalised data-flow edges
//!   ([`dataflow`]) found in the candidate, each used once. As in the
//!   reference, a data-flow score of 0 (no edges in the gold, or none
//!   matched) counts as 1 in the total.
//!
//! `tests/all/codebleu_parity.rs` checks the total against the reference package
//! on the benchmark's gold solutions.

pub mod comments;
pub mod dataflow;

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser, Tree};

use super::code::{clipped_matches, ngram_counts};

/// The CodeBLEU of one candidate against one gold and its four parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CodeBleu {
    /// The weighted total.
    pub codebleu: f64,
    /// BLEU-4 over whitespace tokens.
    pub ngram_match: f64,
    /// Keyword-weighted BLEU-4 (recall-based).
    pub weighted_ngram_match: f64,
    /// Share of the gold's AST subtrees found in the candidate.
    pub syntax_match: f64,
    /// Share of the gold's data-flow edges found in the candidate.
    pub dataflow_match: f64,
}

/// Python's keywords, weighted 1 in the weighted n-gram match.
const KEYWORDS: [&str; 38] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "match", "case", "type",
];

/// Matches counted for an n-gram order without any, so that one empty order
/// does not zero the geometric mean (the reference's smoothing).
const EPSILON: f64 = 0.1;

/// Geometric mean of four (matches, total) precisions with the smoothing,
/// times the brevity penalty; 0 when no unigram matches.
fn smoothed_bleu(parts: &[(f64, f64); 4], brevity: f64) -> f64 {
    if parts[0].0 == 0.0 {
        return 0.0;
    }
    let log_sum: f64 = parts
        .iter()
        .map(|&(num, den)| 0.25 * ((if num == 0.0 { EPSILON } else { num }) / den).ln())
        .sum();
    brevity * log_sum.exp()
}

/// BLEU's brevity penalty for a candidate of `c` tokens against `r`.
fn brevity_penalty(r: usize, c: usize) -> f64 {
    if c > r {
        1.0
    } else if c == 0 {
        0.0
    } else {
        (1.0 - r as f64 / c as f64).exp()
    }
}

/// The n-gram match: smoothed BLEU-4 with clipped precision.
fn ngram_match(gold: &[&str], cand: &[&str]) -> f64 {
    let mut parts = [(0.0, 0.0); 4];
    for (n, part) in (1..=4).zip(parts.iter_mut()) {
        let (clipped, total) = clipped_matches(gold, cand, n);
        *part = (clipped as f64, total.max(1) as f64);
    }
    smoothed_bleu(&parts, brevity_penalty(gold.len(), cand.len()))
}

/// The weighted n-gram match: recall against the gold's n-grams, unigrams
/// weighted by [`KEYWORDS`].
fn weighted_ngram_match(gold: &[&str], cand: &[&str]) -> f64 {
    let weight = |t: &str| if KEYWORDS.contains(&t) { 1.0 } else { 0.2 };
    let mut parts = [(0.0, 0.0); 4];
    for (n, part) in (1..=4).zip(parts.iter_mut()) {
        let counts = ngram_counts(cand, n);
        let refs = ngram_counts(gold, n);
        // Whole counts per weight, summed in any order, then weighted: the
        // same score whatever order the map iterates in.
        let mut sums: BTreeMap<u8, (usize, usize)> = BTreeMap::new();
        for (g, c) in &refs {
            let keyword = n == 1 && weight(g[0]) == 1.0;
            let s = sums.entry(u8::from(keyword)).or_default();
            s.0 += (*c).min(counts.get(g).copied().unwrap_or(0));
            s.1 += *c;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for (keyword, (matched, total)) in sums {
            let w = if keyword == 1 || n > 1 { 1.0 } else { 0.2 };
            num += matched as f64 * w;
            den += total as f64 * w;
        }
        *part = (num, den.max(1.0));
    }
    smoothed_bleu(&parts, brevity_penalty(2, cand.len()))
}

/// Identities of the subtrees of every node of `root` that has children,
/// root included: equal exactly when the nodes' tree-sitter S-expressions
/// (what the reference compares) are equal, up to 64-bit hash collisions.
fn subtrees(root: Node, source: &str) -> Vec<u64> {
    let mut out = Vec::new();
    sexp_hash(root, source, &mut out);
    out
}

/// The hash of `node`'s S-expression as `ts_node_string` writes it: a node
/// is written when it is named or missing, with its field name, its kind
/// (`MISSING kind` for a missing node, `UNEXPECTED c` for an error leaf) and
/// its written descendants; unnamed tokens are left out. Pushes the hash of
/// every node with children onto `out`.
fn sexp_hash(node: Node, source: &str, out: &mut Vec<u64>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    if node.is_error() && node.child_count() == 0 && node.end_byte() > node.start_byte() {
        (
            "UNEXPECTED",
            source
                .get(node.start_byte()..)
                .and_then(|s| s.chars().next()),
        )
            .hash(&mut h);
    } else if node.is_missing() {
        ("MISSING", node.kind(), node.is_named()).hash(&mut h);
    } else {
        node.kind().hash(&mut h);
    }
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            let child = cursor.node();
            let child_hash = sexp_hash(child, source, out);
            if child.is_named() || child.is_missing() {
                (cursor.field_name(), child_hash).hash(&mut h);
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    ")".hash(&mut h);
    let hash = h.finish();
    if node.child_count() > 0 {
        out.push(hash);
    }
    hash
}

/// The AST match: the share of the gold's subtrees present in the candidate.
fn syntax_match(gold_code: &str, gold: &Tree, cand_code: &str, cand: &Tree) -> f64 {
    let gold_trees = subtrees(gold.root_node(), gold_code);
    let cand_trees: HashSet<u64> = subtrees(cand.root_node(), cand_code).into_iter().collect();
    let found = gold_trees.iter().filter(|t| cand_trees.contains(t)).count();
    found as f64 / gold_trees.len() as f64
}

/// The data-flow match: gold edges matched one-to-one in the candidate; 0
/// when the gold has none.
fn dataflow_match(gold_code: &str, gold: &Tree, cand_code: &str, cand: &Tree) -> f64 {
    let gold_flows = dataflow::normalized_flows(gold_code, &gold.root_node());
    let mut cand_flows = dataflow::normalized_flows(cand_code, &cand.root_node());
    if gold_flows.is_empty() {
        return 0.0;
    }
    let mut found = 0;
    for flow in &gold_flows {
        if let Some(i) = cand_flows.iter().position(|c| c == flow) {
            found += 1;
            cand_flows.remove(i);
        }
    }
    found as f64 / gold_flows.len() as f64
}

/// Parses Python source with tree-sitter-python (`None` only if the
/// grammar and the library disagree, which the tests would show).
fn parse(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_python::language()).ok()?;
    parser.parse(source, None)
}

/// CodeBLEU of `candidate` against `gold`, with equal weights. A blank
/// candidate (a run without successful code) scores 0 throughout, where the
/// reference's data-flow fallback would give it 0.25.
pub fn codebleu(gold: &str, candidate: &str) -> CodeBleu {
    let (gold, candidate) = (gold.trim(), candidate.trim());
    if candidate.is_empty() {
        return CodeBleu {
            codebleu: 0.0,
            ngram_match: 0.0,
            weighted_ngram_match: 0.0,
            syntax_match: 0.0,
            dataflow_match: 0.0,
        };
    }
    let gold_tokens: Vec<&str> = gold.split_whitespace().collect();
    let cand_tokens: Vec<&str> = candidate.split_whitespace().collect();
    let ngram = ngram_match(&gold_tokens, &cand_tokens);
    let weighted = weighted_ngram_match(&gold_tokens, &cand_tokens);
    let gold_clean = comments::remove_comments_and_docstrings(gold);
    let cand_clean = comments::remove_comments_and_docstrings(candidate);
    let (syntax, dataflow) = match (parse(&gold_clean), parse(&cand_clean)) {
        (Some(gold_tree), Some(cand_tree)) => (
            syntax_match(&gold_clean, &gold_tree, &cand_clean, &cand_tree),
            dataflow_match(&gold_clean, &gold_tree, &cand_clean, &cand_tree),
        ),
        _ => (0.0, 0.0),
    };
    let dataflow_in_total = if dataflow == 0.0 { 1.0 } else { dataflow };
    CodeBleu {
        codebleu: 0.25 * (ngram + weighted + syntax + dataflow_in_total),
        ngram_match: ngram,
        weighted_ngram_match: weighted,
        syntax_match: syntax,
        dataflow_match: dataflow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_code_scores_one() {
        let code = "import geopandas as gpd\nfor f in files:\n    df = gpd.read_file(f)\n    total = total + len(df)\n";
        let s = codebleu(code, code);
        assert!((s.codebleu - 1.0).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn hand_computed_parts() {
        // Gold "a = b" (3 tokens), candidate "a = c": unigram precision 2/3,
        // bigram 1/2, no trigram (3-gram totals 1 and 0): smoothed 0.1/1.
        let s = codebleu("a = b", "a = c");
        let expected = ((2.0f64 / 3.0).ln() + 0.5f64.ln() + 0.1f64.ln() + 0.1f64.ln()) / 4.0;
        assert!((s.ngram_match - expected.exp()).abs() < 1e-12, "{s:?}");
        // Weighted recall: no keywords, so unigrams 0.4 of 0.6, the total
        // raised to at least 1 as in the reference; the rest as above.
        let w = ((0.4f64 / 1.0).ln() + 0.5f64.ln() + 0.1f64.ln() + 0.1f64.ln()) / 4.0;
        assert!((s.weighted_ngram_match - w.exp()).abs() < 1e-12, "{s:?}");
        // Data flow: a ← b and a ← c normalise alike (var_1 from var_0).
        assert_eq!(s.dataflow_match, 1.0);
    }

    #[test]
    fn no_code_scores_zero() {
        assert_eq!(codebleu("x = 1\n", "  \n").codebleu, 0.0);
    }

    #[test]
    fn a_renamed_variable_keeps_the_data_flow_and_no_overlap_scores_low() {
        let gold = "x = load()\ny = x * 2\nsave(y)\n";
        let renamed = "u = load()\nv = u * 2\nsave(v)\n";
        assert_eq!(codebleu(gold, renamed).dataflow_match, 1.0);
        let other = codebleu(gold, "print('hello')\n");
        assert_eq!(other.ngram_match, 0.0);
        assert!(other.codebleu < 0.5, "{other:?}");
    }
}
