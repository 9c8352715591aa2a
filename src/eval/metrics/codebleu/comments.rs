//! Comment and docstring removal, as the reference `codebleu` package does it
//! before its syntax and data-flow matches.
//!
//! The reference walks CPython's `tokenize` stream and rebuilds the source
//! from its tokens: comments are dropped, a string token is dropped when it
//! follows an INDENT or NEWLINE token or starts in column 0 (a docstring, or
//! any string statement), gaps between tokens become spaces, the backslash of
//! a line continuation disappears, and lines left blank are removed. When
//! `tokenize` raises (an unterminated triple-quoted string, an unclosed
//! bracket at the end, an inconsistent dedent) the source is kept as it is.
//! This module reproduces that walk: [`remove_comments_and_docstrings`] runs
//! a line-by-line tokenizer that classifies exactly the tokens the rebuild
//! looks at. Columns are in characters, as in `tokenize`.

/// The token classes that the rebuild tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Comment,
    String,
    Newline,
    Nl,
    Indent,
    Dedent,
    /// Names, numbers, operators, error characters, the end marker.
    Other,
}

/// One token: its class, text and (line, column) span; lines from 1.
#[derive(Debug, Clone)]
struct Tok {
    kind: Kind,
    text: String,
    start: (usize, usize),
    end: (usize, usize),
}

/// Why `tokenize` would raise: the reference then keeps the source whole.
#[derive(Debug)]
struct Rejected;

/// `source` without comments and docstrings, rebuilt as the reference
/// `codebleu` package rebuilds it; `source` itself when Python's tokenizer
/// would reject it.
pub fn remove_comments_and_docstrings(source: &str) -> String {
    let Ok(tokens) = tokenize(source) else {
        return source.to_string();
    };
    let mut out = String::new();
    let mut prev = Kind::Indent;
    let (mut last_line, mut last_col) = (0usize, 0usize);
    for tok in tokens {
        let (start_line, start_col) = tok.start;
        if start_line > last_line {
            last_col = 0;
        }
        if start_col > last_col {
            out.extend(std::iter::repeat_n(' ', start_col - last_col));
        }
        match tok.kind {
            Kind::Comment => {}
            Kind::String => {
                if prev != Kind::Indent && prev != Kind::Newline && start_col > 0 {
                    out.push_str(&tok.text);
                }
            }
            _ => out.push_str(&tok.text),
        }
        prev = tok.kind;
        (last_line, last_col) = tok.end;
    }
    out.split('\n')
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Source lines as `readline` returns them: each with its `\n`.
fn lines_of(source: &str) -> Vec<Vec<char>> {
    source
        .split_inclusive('\n')
        .map(|l| l.chars().collect())
        .collect()
}

/// The valid string prefixes of Python 3, lower-cased.
const PREFIXES: [&str; 9] = ["", "r", "u", "f", "b", "br", "rb", "fr", "rf"];

/// If a string literal (with an optional prefix) starts at `pos`: the
/// prefix length and the quote (`'`, `"`, `'''` or `"""`).
fn string_start(line: &[char], pos: usize) -> Option<(usize, String)> {
    for plen in (0..=2).rev() {
        if pos + plen >= line.len() {
            continue;
        }
        let prefix: String = line[pos..pos + plen]
            .iter()
            .collect::<String>()
            .to_lowercase();
        if !PREFIXES.contains(&prefix.as_str()) {
            continue;
        }
        let q = line[pos + plen];
        if q != '\'' && q != '"' {
            continue;
        }
        let triple =
            line.len() >= pos + plen + 3 && line[pos + plen + 1] == q && line[pos + plen + 2] == q;
        let quote: String = if triple {
            [q; 3].iter().collect()
        } else {
            q.to_string()
        };
        return Some((plen, quote));
    }
    None
}

/// Where the string closed by `quote` ends when its body starts at `from`:
/// the index after the closing quote, honouring backslash escapes.
fn find_close(line: &[char], from: usize, quote: &str) -> Option<usize> {
    let q: Vec<char> = quote.chars().collect();
    let mut i = from;
    while i < line.len() {
        if line[i] == '\\' {
            i += 2;
            continue;
        }
        if line[i..].starts_with(&q) {
            return Some(i + q.len());
        }
        i += 1;
    }
    None
}

fn text(chars: &[char]) -> String {
    chars.iter().collect()
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The token stream of CPython's pure-Python `tokenize`, reduced to the
/// classes the rebuild needs, or [`Rejected`] where it raises.
fn tokenize(source: &str) -> Result<Vec<Tok>, Rejected> {
    let lines = lines_of(source);
    let mut toks = Vec::new();
    let mut indents = vec![0usize];
    let (mut paren, mut continued) = (0i64, false);
    // A string spanning lines: its quote, start, text so far and whether a
    // single-quoted one needs a backslash at each line end.
    let mut open: Option<(String, (usize, usize), String, bool)> = None;
    let mut lnum = 0;
    for line in &lines {
        lnum += 1;
        let max = line.len();
        let mut pos = 0;
        if let Some((quote, start, mut so_far, needs_backslash)) = open.take() {
            if let Some(end) = find_close(line, 0, &quote) {
                so_far.push_str(&text(&line[..end]));
                toks.push(Tok {
                    kind: Kind::String,
                    text: so_far,
                    start,
                    end: (lnum, end),
                });
                pos = end;
            } else if needs_backslash
                && !line.ends_with(&['\\', '\n'])
                && !line.ends_with(&['\\', '\r', '\n'])
            {
                so_far.push_str(&text(line));
                toks.push(Tok {
                    kind: Kind::Other,
                    text: so_far,
                    start,
                    end: (lnum, max),
                });
                continue;
            } else {
                so_far.push_str(&text(line));
                open = Some((quote, start, so_far, needs_backslash));
                continue;
            }
        } else if paren == 0 && !continued {
            match line_start(line, lnum, &mut indents, &mut toks)? {
                LineStart::Blank => continue,
                LineStart::End => break,
                LineStart::At(at) => pos = at,
            }
        } else {
            continued = false;
        }
        while pos < max {
            while pos < max && matches!(line[pos], ' ' | '\t' | '\x0c') {
                pos += 1;
            }
            if pos == max {
                break;
            }
            let start = pos;
            let c = line[pos];
            if c == '\\'
                && (line.get(pos + 1) == Some(&'\n')
                    || (line.get(pos + 1) == Some(&'\r') && line.get(pos + 2) == Some(&'\n')))
            {
                continued = true;
                break;
            }
            if c == '#' {
                let end = line[pos..]
                    .iter()
                    .position(|&ch| ch == '\r' || ch == '\n')
                    .map_or(max, |i| pos + i);
                toks.push(token(Kind::Comment, line, lnum, pos, end));
                pos = end;
                continue;
            }
            if c == '\n' || (c == '\r' && line.get(pos + 1) == Some(&'\n')) {
                let end = max;
                let kind = if paren > 0 { Kind::Nl } else { Kind::Newline };
                toks.push(Tok {
                    kind,
                    text: text(&line[pos..end]),
                    start: (lnum, pos),
                    end: (lnum, end),
                });
                pos = end;
                continue;
            }
            if let Some(found) = string_start(line, pos) {
                match scan_string(line, pos, lnum, found) {
                    StringScan::Token(tok, end) => {
                        toks.push(tok);
                        pos = end;
                        continue;
                    }
                    StringScan::Open(state) => {
                        open = Some(state);
                        break;
                    }
                }
            }
            let end = if is_ident_start(c) {
                line[pos..]
                    .iter()
                    .position(|&ch| !is_ident_char(ch))
                    .map_or(max, |i| pos + i)
            } else {
                match c {
                    '(' | '[' | '{' => paren += 1,
                    ')' | ']' | '}' => paren -= 1,
                    _ => {}
                }
                pos + 1
            };
            toks.push(token(Kind::Other, line, lnum, start, end));
            pos = end;
        }
    }
    if open.is_some() || paren > 0 || continued {
        return Err(Rejected);
    }
    if let Some(last) = lines.last() {
        let ends_line = matches!(last.last(), Some('\n' | '\r'));
        if !ends_line && !text(last).trim_start().starts_with('#') {
            let len = last.len();
            toks.push(Tok {
                kind: Kind::Newline,
                text: String::new(),
                start: (lnum, len),
                end: (lnum, len + 1),
            });
        }
    }
    for _ in 1..indents.len() {
        toks.push(Tok {
            kind: Kind::Dedent,
            text: String::new(),
            start: (lnum + 1, 0),
            end: (lnum + 1, 0),
        });
    }
    Ok(toks)
}

/// Where a logical line's tokens start, after its indentation.
enum LineStart {
    /// A blank or comment-only line (its tokens pushed).
    Blank,
    /// The end of the input (a line of spaces only).
    End,
    /// The first token's index (INDENT/DEDENT tokens pushed).
    At(usize),
}

/// A new logical line's indentation as CPython's `tokenize` reads it:
/// INDENT and DEDENT tokens, a blank or comment-only line's tokens, or a
/// dedent to no enclosing level ([`Rejected`]).
fn line_start(
    line: &[char],
    lnum: usize,
    indents: &mut Vec<usize>,
    toks: &mut Vec<Tok>,
) -> Result<LineStart, Rejected> {
    let max = line.len();
    let mut pos = 0;
    let mut column = 0;
    while pos < max {
        match line[pos] {
            ' ' => column += 1,
            '\t' => column = (column / 8 + 1) * 8,
            '\x0c' => column = 0,
            _ => break,
        }
        pos += 1;
    }
    if pos == max {
        return Ok(LineStart::End);
    }
    if matches!(line[pos], '#' | '\r' | '\n') {
        if line[pos] == '#' {
            let comment = text(&line[pos..])
                .trim_end_matches(['\r', '\n'])
                .to_string();
            let len = comment.chars().count();
            toks.push(Tok {
                kind: Kind::Comment,
                text: comment,
                start: (lnum, pos),
                end: (lnum, pos + len),
            });
            pos += len;
        }
        toks.push(Tok {
            kind: Kind::Nl,
            text: text(&line[pos..]),
            start: (lnum, pos),
            end: (lnum, max),
        });
        return Ok(LineStart::Blank);
    }
    if column > *indents.last().unwrap_or(&0) {
        indents.push(column);
        toks.push(Tok {
            kind: Kind::Indent,
            text: text(&line[..pos]),
            start: (lnum, 0),
            end: (lnum, pos),
        });
    }
    while column < *indents.last().unwrap_or(&0) {
        if !indents.contains(&column) {
            return Err(Rejected);
        }
        indents.pop();
        toks.push(Tok {
            kind: Kind::Dedent,
            text: String::new(),
            start: (lnum, pos),
            end: (lnum, pos),
        });
    }
    Ok(LineStart::At(pos))
}

/// What a string starting at `start` of a line is.
enum StringScan {
    /// A token (the whole string, or an error token) ending at the index.
    Token(Tok, usize),
    /// A string that goes on past the line: its quote, start, text so far
    /// and whether a single-quoted one needs a backslash at each line end.
    Open(OpenString),
}

/// A string spanning lines (see [`StringScan::Open`]).
type OpenString = (String, (usize, usize), String, bool);

/// The token of `line[start..end]`.
fn token(kind: Kind, line: &[char], lnum: usize, start: usize, end: usize) -> Tok {
    Tok {
        kind,
        text: text(&line[start..end]),
        start: (lnum, start),
        end: (lnum, end),
    }
}

/// The string that starts at `start` (its prefix `plen` characters long,
/// then `quote`), as CPython's `tokenize` reads it on line `lnum`.
fn scan_string(
    line: &[char],
    start: usize,
    lnum: usize,
    (plen, quote): (usize, String),
) -> StringScan {
    let (pos, max) = (start, line.len());
    let body = pos + plen + quote.chars().count();
    if quote.len() == 3 {
        return match find_close(line, body, &quote) {
            Some(end) => StringScan::Token(token(Kind::String, line, lnum, start, end), end),
            None => StringScan::Open((quote, (lnum, start), text(&line[start..]), false)),
        };
    }
    let q = quote.chars().next().unwrap_or('"');
    // A single-quoted string closes on this line or continues
    // with a backslash-newline; anything else is an error token.
    let mut i = body;
    let mut closed = None;
    while i < max {
        match line[i] {
            '\\' if i + 1 < max
                && line[i + 1] != '\n'
                && !(line[i + 1] == '\r' && line.get(i + 2) == Some(&'\n')) =>
            {
                i += 2
            }
            '\\' => break,
            '\n' => break,
            ch if ch == q => {
                closed = Some(i + 1);
                break;
            }
            _ => i += 1,
        }
    }
    if let Some(end) = closed {
        return StringScan::Token(token(Kind::String, line, lnum, start, end), end);
    }
    if i < max && line[i] == '\\' {
        return StringScan::Open((q.to_string(), (lnum, start), text(&line[start..]), true));
    }
    // Rejected on its line: the prefix is a name, the quote
    // an error token; tokenizing goes on after it.
    let end = if plen > 0 { pos + plen } else { pos + 1 };
    StringScan::Token(token(Kind::Other, line, lnum, start, end), end)
}

#[cfg(test)]
mod tests {
    use super::remove_comments_and_docstrings as strip;

    #[test]
    fn comments_and_docstrings_go_and_code_stays() {
        let src = "\"\"\"Module doc.\"\"\"\nimport os  # the os\n\ndef f(x):\n    \"\"\"Doc.\"\"\"\n    # alone\n    return x + 1\n";
        assert_eq!(strip(src), "import os  \ndef f(x):\n    return x + 1");
    }

    #[test]
    fn strings_inside_expressions_stay() {
        assert_eq!(
            strip("x = 'a'\ny = f(\n    \"b\")\n"),
            "x = 'a'\ny = f(\n    \"b\")"
        );
        // A string in column 0 is dropped even inside brackets, as the
        // reference does.
        assert_eq!(strip("y = f(\n\"b\")\n"), "y = f(\n)");
    }

    #[test]
    fn a_backslash_continuation_joins_the_lines() {
        // The next line's indentation counts from column 0 again.
        assert_eq!(strip("x = 1 + \\\n    2\n"), "x = 1 +    2");
    }

    #[test]
    fn a_string_after_a_dedent_is_kept_and_multiline_strings_are_whole() {
        let src = "def f():\n    if x:\n        pass\n    'kept'\ns = '''a\n# not a comment\n'''\n";
        assert_eq!(
            strip(src),
            "def f():\n    if x:\n        pass\n    'kept'\ns = '''a\n# not a comment\n'''"
        );
    }

    #[test]
    fn what_tokenize_rejects_is_kept_whole() {
        for src in [
            "s = '''never closed\n",
            "f(1,\n",
            "if x:\n        a\n    b\n",
        ] {
            assert_eq!(strip(src), src);
        }
    }

    #[test]
    fn a_missing_final_newline_is_fine() {
        assert_eq!(strip("a = 1 # c"), "a = 1 ");
    }
}
