//! The one sanitiser for what gisclaw writes on a terminal. Text from a
//! cell, a data file or a model (file and figure names, observations, card
//! lines, the model's own words, Error Memory entries) can hold control
//! characters and escape sequences that would drive the terminal: OSC 52
//! writes the clipboard, OSC 0 the window title, a CR with `ESC[2K` fakes a
//! line of gisclaw's own. Every such line passes through [`clean`], which
//! keeps newlines and tabs and shows every other C0 or C1 control, DEL and
//! the bidirectional overrides visibly escaped (`\x1b`, `\r`, `\u{202e}`).
//! Colour comes only from gisclaw's own styling, applied after cleaning.

/// `text` with every control character except `\n` and `\t` (and every
/// bidirectional override) shown as an escape: an escape sequence becomes
/// plain, visible text.
pub fn clean(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !needs_escape(c) {
            out.push(c);
            continue;
        }
        match c {
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\x1b"),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out
}

/// Whether `c` is shown escaped by [`clean`].
fn needs_escape(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        // C0, DEL, C1.
        c if c.is_control() => true,
        // Bidirectional embeddings, overrides and isolates: they reorder
        // what follows on the line.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        // Marks that reorder too, and line and paragraph separators.
        '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{2028}' | '\u{2029}' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn escape_sequences_become_visible_text() {
        assert_eq!(clean("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(clean("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
        assert_eq!(
            clean("ok\r\x1b[2Kgisclaw: finished"),
            "ok\\r\\x1b[2Kgisclaw: finished"
        );
        assert_eq!(clean("\u{9b}31m"), "\\x9b31m");
        assert_eq!(clean("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(clean("a\u{2028}b\u{200f}"), "a\\u{2028}b\\u{200f}");
        assert_eq!(clean("°C São Paulo ✓"), "°C São Paulo ✓");
    }
}
