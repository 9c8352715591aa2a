//! How the chat shows things: the model's text (plain: it is what the user
//! reads), code with light Python highlighting, observations, errors (red) and notes. Plain text
//! with `NO_COLOR` or when stdout is not a terminal; nothing wider than
//! the text itself, so an 80-column terminal reads it.

use std::io::IsTerminal;

/// The chat's colour choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Whether ANSI colours are used.
    pub color: bool,
}

const RESET: &str = "\x1b[0m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const BLUE: &str = "\x1b[34m";
const CYAN: &str = "\x1b[36m";
const GREY: &str = "\x1b[90m";
const BOLD: &str = "\x1b[1m";

/// Observations longer than this many lines are cut in the middle.
const OBSERVATION_LINES: usize = 40;

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

impl Style {
    /// Colours on a terminal unless `NO_COLOR` is set (to anything non-empty).
    pub fn detect() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color && std::io::stdout().is_terminal(),
        }
    }

    /// `text` cleaned ([`crate::terminal::clean`]: what it holds never
    /// drives the terminal), then coloured.
    fn paint(&self, code: &str, text: &str) -> String {
        let text = crate::terminal::clean(text);
        if self.color {
            format!("{code}{text}{RESET}")
        } else {
            text
        }
    }

    /// The model's reasoning or answer text (a chunk of a stream, as is),
    /// in the terminal's own colour: the answer is what the user reads,
    /// not a side note (notes are grey).
    pub fn reasoning(&self, text: &str) -> String {
        crate::terminal::clean(text)
    }

    /// A code block with a header line naming what runs it.
    pub fn code(&self, title: &str, code: &str) -> String {
        let mut out = self.paint(CYAN, &format!("── {title} ──")) + "\n";
        for line in code.lines() {
            out.push_str(&self.highlight(line));
            out.push('\n');
        }
        out
    }

    /// An observation, cut in the middle past 40 lines.
    pub fn observation(&self, text: &str) -> String {
        let text = crate::terminal::clean(text);
        let lines: Vec<&str> = text.lines().collect();
        let shown: Vec<String> = if lines.len() > OBSERVATION_LINES {
            let head = &lines[..OBSERVATION_LINES / 2];
            let tail = &lines[lines.len() - OBSERVATION_LINES / 2..];
            let mut v: Vec<String> = head.iter().map(|l| l.to_string()).collect();
            v.push(format!(
                "… {} lines not shown …",
                lines.len() - OBSERVATION_LINES
            ));
            v.extend(tail.iter().map(|l| l.to_string()));
            v
        } else {
            lines.iter().map(|l| l.to_string()).collect()
        };
        let mut out = String::new();
        for line in shown {
            if line.starts_with("Traceback")
                || line.contains("Error:")
                || line.starts_with("[error]")
            {
                out.push_str(&self.paint(RED, &line));
            } else {
                out.push_str(&line);
            }
            out.push('\n');
        }
        out
    }

    /// An error line.
    pub fn error(&self, text: &str) -> String {
        self.paint(RED, text)
    }

    /// A heading: a plan, a step of it.
    pub fn heading(&self, text: &str) -> String {
        self.paint(BOLD, text)
    }

    /// A good outcome (a step done).
    pub fn success(&self, text: &str) -> String {
        self.paint(GREEN, text)
    }

    /// A note from gisclaw (status, counters).
    pub fn note(&self, text: &str) -> String {
        self.paint(GREY, text)
    }

    /// The prompt string.
    pub fn prompt(&self) -> String {
        // rustyline measures the prompt; plain text keeps that simple.
        "you> ".to_string()
    }

    /// One line of Python with keywords, strings and comments coloured.
    pub fn highlight(&self, line: &str) -> String {
        let line = crate::terminal::clean(line);
        if !self.color {
            return line;
        }
        let mut out = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '#' {
                let rest: String = chars[i..].iter().collect();
                out.push_str(&self.paint(GREY, &rest));
                break;
            }
            if c == '"' || c == '\'' {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != c {
                    if chars[j] == '\\' {
                        j += 1;
                    }
                    j += 1;
                }
                let end = (j + 1).min(chars.len());
                let s: String = chars[i..end].iter().collect();
                out.push_str(&self.paint(GREEN, &s));
                i = end;
                continue;
            }
            if c.is_alphabetic() || c == '_' {
                let mut j = i;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                if KEYWORDS.contains(&word.as_str()) {
                    out.push_str(&format!("{BOLD}{BLUE}{word}{RESET}"));
                } else {
                    out.push_str(&word);
                }
                i = j;
                continue;
            }
            out.push(c);
            i += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_text_is_not_dimmed_notes_are_grey() {
        let colour = Style { color: true };
        assert_eq!(
            colour.reasoning("The hottest part is the centre."),
            "The hottest part is the centre."
        );
        assert!(colour.note("saved").starts_with(GREY));
    }

    #[test]
    fn plain_style_leaves_text_alone_and_colour_marks_python() {
        let plain = Style { color: false };
        assert_eq!(plain.highlight("import os  # x"), "import os  # x");
        assert_eq!(plain.code("python", "a = 1"), "── python ──\na = 1\n");
        let color = Style { color: true };
        let line = color.highlight("for s in 'ab':  # loop");
        assert!(
            line.contains(&format!("{BOLD}{BLUE}for{RESET}"))
                && line.contains(&format!("{GREEN}'ab'{RESET}"))
                && line.contains(&format!("{GREY}# loop{RESET}")),
            "{line:?}"
        );
    }

    #[test]
    fn long_observations_are_cut_in_the_middle() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let shown = Style { color: false }.observation(&text);
        assert!(
            shown.contains("line 0\n")
                && shown.contains("line 99\n")
                && shown.contains("60 lines not shown")
                && !shown.contains("line 50\n")
        );
    }
}
