//! What a running cell writes, made fit for a terminal as it comes: whole
//! lines to print above the spinner, the line in progress for the
//! spinner's message (a progress bar redrawn with `\r` shows its latest
//! state), and the observation shown after a cell whose output was already
//! shown live, without it.

/// The cell's output so far, cut into lines as it arrives.
#[derive(Debug, Default)]
pub struct LiveLines {
    /// The line in progress (after its last `\r`).
    partial: String,
    /// Whether anything arrived since [`LiveLines::reset`].
    seen: bool,
}

/// Most characters kept of the line in progress (a line without an end).
const PARTIAL_CHARS: usize = 400;

impl LiveLines {
    /// Takes a chunk of output; returns the lines it completed, cleaned
    /// (control characters and escape sequences dropped, tabs kept).
    pub fn push(&mut self, chunk: &str) -> Vec<String> {
        self.seen |= !chunk.is_empty();
        let mut done = Vec::new();
        for c in chunk.chars() {
            match c {
                '\n' => done.push(std::mem::take(&mut self.partial)),
                // A carriage return starts the line over (progress bars).
                '\r' => self.partial.clear(),
                '\t' => self.partial.push_str("    "),
                // Kept until the line is cleaned: it marks an escape sequence.
                '\u{1b}' => self.partial.push(c),
                c if c.is_control() => {}
                c => {
                    if self.partial.chars().count() < PARTIAL_CHARS {
                        self.partial.push(c);
                    }
                }
            }
        }
        done.into_iter()
            .map(|l| crate::terminal::clean(&strip_escapes(&l)))
            .collect()
    }

    /// The line in progress, cleaned (empty when the last chunk ended a line).
    pub fn partial(&self) -> String {
        crate::terminal::clean(&strip_escapes(&self.partial))
    }

    /// Whether any output arrived.
    pub fn seen(&self) -> bool {
        self.seen
    }

    /// Ends the cell: the line in progress, if any, and a fresh state.
    pub fn finish(&mut self) -> Option<String> {
        let last = self.partial();
        *self = LiveLines::default();
        (!last.is_empty()).then_some(last)
    }
}

/// `line` without ANSI escape sequences (`ESC [ 31 m`, `ESC [ 2 K`, and
/// any other `ESC x`): what a cell prints must not drive the terminal.
fn strip_escapes(line: &str) -> String {
    let mut clean = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            clean.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            // Parameters, then one final byte in `@`..=`~`.
            for p in chars.by_ref() {
                if ('@'..='~').contains(&p) {
                    break;
                }
            }
        }
    }
    clean
}

/// An observation as shown after its cell's output was shown live: the
/// stdout it starts with and its `[stderr]` section are left out (they
/// were on screen already); the error, the sandbox's notes and the
/// variables stay.
pub fn after_live(observation: &str) -> String {
    let mut out = String::new();
    let mut in_stdout = true;
    let mut in_stderr = false;
    for line in observation.lines() {
        if crate::observation::is_section_header(line)
            || line.starts_with("[sandbox]")
            || line.starts_with("[output check]")
        {
            in_stdout = false;
            in_stderr = line.trim_end() == "[stderr]";
            if in_stderr {
                continue;
            }
        }
        if in_stdout || in_stderr {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_become_lines_and_the_line_in_progress() {
        let mut live = LiveLines::default();
        assert!(live.push("one\ntw").eq(&["one".to_string()]));
        assert_eq!(live.partial(), "tw");
        assert_eq!(live.push("o\nthree"), vec!["two".to_string()]);
        assert!(live.seen());
        assert_eq!(live.finish(), Some("three".to_string()));
        assert!(!live.seen());
        assert_eq!(live.finish(), None);
    }

    #[test]
    fn a_progress_bar_shows_its_latest_state_and_escapes_are_dropped() {
        let mut live = LiveLines::default();
        live.push(" 10%|#     |\r 50%|#####  |\r");
        live.push("100%|##########|");
        assert_eq!(live.partial(), "100%|##########|");
        let lines = live.push("\n\u{1b}[31mred\u{1b}[0m and \u{7}bell\ttab [not an escape]\n");
        assert_eq!(
            lines,
            vec![
                "100%|##########|".to_string(),
                "red and bell    tab [not an escape]".to_string()
            ]
        );
    }

    #[test]
    fn the_observation_after_live_output_keeps_what_was_not_shown() {
        let obs = "line 1\nline 2\n[stderr]\nwarned\n[error]\nTraceback\nValueError: x\n[variables]\n  a (int, new): 1\n";
        assert_eq!(
            after_live(obs),
            "[error]\nTraceback\nValueError: x\n[variables]\n  a (int, new): 1\n"
        );
        assert_eq!(after_live("only output\n"), "");
        // A printed list is output, not a section.
        assert_eq!(
            after_live("[1, 2, 3]\nmore\n[variables]\n  a (int, new): 1\n"),
            "[variables]\n  a (int, new): 1\n"
        );
        assert_eq!(
            after_live("x\n[sandbox] the cell hit its 3 s limit and was interrupted.\n"),
            "[sandbox] the cell hit its 3 s limit and was interrupted.\n"
        );
    }
}
