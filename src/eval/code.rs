//! L1 code similarity against the gold solution: BLEU-4, ROUGE-L and edit
//! similarity over Python tokens.
//!
//! Tokens come from [`tokenize`]: names, numbers, whole string literals and
//! operators, with comments, blank lines and indentation dropped, so that
//! layout and comments do not count and renaming a variable costs one edit
//! per use rather than one per letter.

use std::collections::HashMap;

/// One lexical token of Python source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Token {
    /// The token's text (a string literal keeps its quotes and prefix).
    pub text: String,
    /// What it is.
    pub kind: TokenKind,
}

/// The lexical class of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    /// An identifier or keyword.
    Name,
    /// A numeric literal.
    Number,
    /// A string or bytes literal (f-strings included, as one token).
    String,
    /// An operator or delimiter.
    Op,
}

/// Operators of two or three characters, longest first.
const LONG_OPS: [&str; 24] = [
    "**=", "//=", ">>=", "<<=", "...", "->", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", ":=", "@=",
];

/// Splits Python source into tokens. Never fails: a stray character becomes
/// a one-character operator, an unterminated string runs to the end.
pub fn tokenize(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == '\\' {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if let Some(end) = string_end(&chars, i) {
            tokens.push(Token {
                text: chars[i..end].iter().collect(),
                kind: TokenKind::String,
            });
            i = end;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(Token {
                text: chars[start..i].iter().collect(),
                kind: TokenKind::Name,
            });
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < chars.len() {
                let d = chars[i];
                let exponent_sign = (d == '+' || d == '-')
                    && matches!(chars[i - 1], 'e' | 'E')
                    && !is_hex(&chars[start..i]);
                if d.is_ascii_alphanumeric() || d == '.' || d == '_' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            tokens.push(Token {
                text: chars[start..i].iter().collect(),
                kind: TokenKind::Number,
            });
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            let op = LONG_OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .map(|op| op.to_string())
                .unwrap_or_else(|| c.to_string());
            i += op.chars().count();
            tokens.push(Token {
                text: op,
                kind: TokenKind::Op,
            });
        }
    }
    tokens
}

fn is_hex(digits: &[char]) -> bool {
    digits.len() >= 2 && digits[0] == '0' && matches!(digits[1], 'x' | 'X')
}

/// Where a string literal starting at `i` ends (exclusive), if one starts
/// there: an optional prefix (r, b, f, u and pairs), then ' " ''' or """.
fn string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut q = i;
    while q < chars.len()
        && q - i < 2
        && matches!(chars[q].to_ascii_lowercase(), 'r' | 'b' | 'f' | 'u')
    {
        q += 1;
    }
    let quote = *chars.get(q)?;
    if quote != '\'' && quote != '"' {
        return None;
    }
    let triple = chars.get(q + 1) == Some(&quote) && chars.get(q + 2) == Some(&quote);
    let mut j = if triple { q + 3 } else { q + 1 };
    while j < chars.len() {
        let c = chars[j];
        // A backslash escapes the next character, in raw strings too
        // (r'\'' is a quote inside the literal).
        if c == '\\' {
            j += 2;
            continue;
        }
        if triple {
            if c == quote && chars.get(j + 1) == Some(&quote) && chars.get(j + 2) == Some(&quote) {
                return Some(j + 3);
            }
        } else if c == quote {
            return Some(j + 1);
        } else if c == '\n' {
            return Some(j);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The token texts of `source`.
pub fn token_texts(source: &str) -> Vec<String> {
    tokenize(source).into_iter().map(|t| t.text).collect()
}

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
    fn tokens_drop_comments_and_layout_and_keep_strings_whole() {
        let src =
            "x = gpd.read_file('a # b.shp')  # load\nif x.crs != None:\n    y = 1.5e-3 ** 2\n";
        assert_eq!(
            toks(src),
            [
                "x",
                "=",
                "gpd",
                ".",
                "read_file",
                "(",
                "'a # b.shp'",
                ")",
                "if",
                "x",
                ".",
                "crs",
                "!=",
                "None",
                ":",
                "y",
                "=",
                "1.5e-3",
                "**",
                "2"
            ]
        );
        assert_eq!(
            toks("f\"{a}\" + rb'\\d' + '''x\n'y'''"),
            ["f\"{a}\"", "+", "rb'\\d'", "+", "'''x\n'y'''"]
        );
        assert_eq!(tokenize("0x1F+1")[0].kind, TokenKind::Number);
        assert_eq!(toks("0x1e+1"), ["0x1e", "+", "1"]);
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
