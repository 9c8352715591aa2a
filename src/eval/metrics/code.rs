//! L1 code similarity against the gold solution: BLEU-4, ROUGE-L and edit
//! similarity over Python tokens.
//!
//! Tokens come from [`tokenize`]: names, numbers, whole string literals and
//! operators, with comments, blank lines and indentation dropped, so that
//! layout and comments do not count and renaming a variable costs one edit
//! per use rather than one per letter.

use std::collections::HashMap;

pub use crate::pysource::tokens::{token_texts, tokenize, Token, TokenKind};

/// Counts of every n-gram of `tokens` (none when shorter than `n`).
pub(crate) fn ngram_counts<T: Eq + std::hash::Hash>(
    tokens: &[T],
    n: usize,
) -> HashMap<&[T], usize> {
    let mut counts = HashMap::new();
    if tokens.len() >= n {
        for gram in tokens.windows(n) {
            *counts.entry(gram).or_insert(0) += 1;
        }
    }
    counts
}

/// BLEU's clipped n-gram matches of `candidate` against `reference`, and
/// the candidate's n-gram total: (Σ min(count, reference count), Σ count).
pub(crate) fn clipped_matches<T: Eq + std::hash::Hash>(
    reference: &[T],
    candidate: &[T],
    n: usize,
) -> (usize, usize) {
    let cand = ngram_counts(candidate, n);
    let refs = ngram_counts(reference, n);
    let clipped = cand
        .iter()
        .map(|(g, c)| (*c).min(refs.get(g).copied().unwrap_or(0)))
        .sum();
    (clipped, cand.values().sum())
}

/// Sentence BLEU-4 of `candidate` against one `reference`: the geometric
/// mean of the clipped 1- to 4-gram precisions times the brevity penalty
/// `min(1, exp(1 - r/c))`, without smoothing (0 when some order has no
/// match). Empty candidate: 0.
pub fn bleu4(reference: &[String], candidate: &[String]) -> f64 {
    if candidate.is_empty() || reference.is_empty() {
        return 0.0;
    }
    let mut log_sum = 0.0;
    for n in 1..=4 {
        let (clipped, total) = clipped_matches(reference, candidate, n);
        if total == 0 || clipped == 0 {
            return 0.0;
        }
        log_sum += (clipped as f64 / total as f64).ln() / 4.0;
    }
    let (r, c) = (reference.len() as f64, candidate.len() as f64);
    let brevity = if c >= r { 1.0 } else { (1.0 - r / c).exp() };
    brevity * log_sum.exp()
}

/// Length of the longest common subsequence.
fn lcs_len<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        for (j, y) in b.iter().enumerate() {
            row[j + 1] = if x == y {
                prev[j] + 1
            } else {
                row[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()]
}

/// ROUGE-L F1 (β = 1) of `candidate` against `reference`: with L the
/// longest common subsequence, P = L/|c|, R = L/|r|, F = 2PR/(P+R).
pub fn rouge_l<T: PartialEq>(reference: &[T], candidate: &[T]) -> f64 {
    if reference.is_empty() || candidate.is_empty() {
        return if reference.is_empty() && candidate.is_empty() {
            1.0
        } else {
            0.0
        };
    }
    let l = lcs_len(reference, candidate) as f64;
    if l == 0.0 {
        return 0.0;
    }
    let (p, r) = (l / candidate.len() as f64, l / reference.len() as f64);
    2.0 * p * r / (p + r)
}

/// Edit similarity `1 − d_Lev / max(|r|, |c|)` over tokens (1 for two empty sequences).
pub fn edit_similarity<T: PartialEq>(reference: &[T], candidate: &[T]) -> f64 {
    let longest = reference.len().max(candidate.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - crate::util::levenshtein(reference, candidate) as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::levenshtein;

    fn toks(s: &str) -> Vec<String> {
        token_texts(s)
    }

    #[test]
    fn bleu_matches_a_hand_computation() {
        let r = toks("a b c d e f");
        assert!((bleu4(&r, &r) - 1.0).abs() < 1e-12);
        // Candidate "a b c d e x" (6 tokens): p1 = 5/6, p2 = 4/5, p3 = 3/4, p4 = 2/3; BP = 1.
        let c = toks("a b c d e x");
        let expected = (5.0f64 / 6.0 * 4.0 / 5.0 * 3.0 / 4.0 * 2.0 / 3.0).powf(0.25);
        assert!((bleu4(&r, &c) - expected).abs() < 1e-12);
        // Candidate "a b c d" (4 tokens): all precisions 1, BP = exp(1 − 6/4).
        let short = toks("a b c d");
        assert!((bleu4(&r, &short) - (-0.5f64).exp()).abs() < 1e-12);
        // No 4-gram in common: 0.
        assert_eq!(bleu4(&r, &toks("a b c x d e f")), 0.0);
        // Clipping: "a a a a" against "a b c d e f" has p1 = 1/4 and no bigram.
        assert_eq!(bleu4(&r, &toks("a a a a")), 0.0);
    }

    #[test]
    fn rouge_l_and_edit_similarity_match_hand_computations() {
        let r = toks("a b c d e");
        let c = toks("a x c e");
        // LCS = a c e (3): P = 3/4, R = 3/5, F = 2·0.75·0.6/1.35.
        assert!((rouge_l(&r, &c) - 2.0 * 0.75 * 0.6 / 1.35).abs() < 1e-12);
        assert_eq!(rouge_l::<String>(&[], &[]), 1.0);
        assert_eq!(rouge_l(&r, &toks("z")), 0.0);
        // a b c d e → a x c e: substitute b→x, delete d = 2 edits over 5.
        assert_eq!(levenshtein(&r, &c), 2);
        assert!((edit_similarity(&r, &c) - 0.6).abs() < 1e-12);
        assert_eq!(levenshtein(&toks("kitten"), &toks("sitting")), 1);
        let k: Vec<char> = "kitten".chars().collect();
        let s: Vec<char> = "sitting".chars().collect();
        assert_eq!(levenshtein(&k, &s), 3);
    }
}
