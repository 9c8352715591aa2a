//! Python source as tokens: names, numbers, whole string literals and
//! operators, with comments, blank lines and indentation dropped, so that
//! layout and comments do not count and renaming a variable costs one edit
//! per use rather than one per letter.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
