//! Output capture at C speed: the bounded text buffer behind a cell's
//! `sys.stdout` and `sys.stderr`.
//!
//! A cell that prints a million short lines calls `write` two million times
//! (`print` writes the text, then the newline). When `write` was Python code
//! each call cost an interpreter frame; here it is one native call that
//! appends to a Rust string. The buffer keeps the first `head` and the last
//! `tail` characters and counts the middle it drops, so memory stays bounded
//! however much a cell writes.
//!
//! Registered as the built-in module `gisclaw_native` before the runtime
//! loads; `gisclaw_runtime.BoundedText` wraps it in an `io.TextIOBase` so
//! that `flush`, `fileno` (`io.UnsupportedOperation`), `closed` and friends
//! behave as a text stream's do.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyString};

/// Name of the built-in module that holds [`Bounded`].
pub const MODULE: &str = "gisclaw_native";

/// The tail is cut back to its budget once it holds this many characters
/// (or twice its budget, if more): each cut moves the kept characters to
/// the front, so a small threshold moved the whole output once over (a
/// 4,000-character tail cut every 4,000 characters of short prints).
const COMPACT_AT: usize = 64 * 1024;

/// Keeps the first `head` and the last `tail` characters written to it.
///
/// Characters are Unicode scalar values of the text as UTF-8: a lone
/// surrogate (`print('\ud800')`) is stored as U+FFFD, as the runtime's
/// report would have made it anyway.
#[pyclass(module = "gisclaw_native")]
pub struct Bounded {
    /// Characters the head keeps.
    head_budget: usize,
    /// Characters the tail keeps.
    tail_budget: usize,
    /// The first characters written, at most `head_budget` of them.
    head: String,
    /// `head.chars().count()`.
    head_chars: usize,
    /// The latest characters after the head: at least the last
    /// `tail_budget` of them, compacted once it holds [`COMPACT_AT`] (or
    /// twice the budget).
    tail: String,
    /// `tail.chars().count()`.
    tail_chars: usize,
    /// Whether `tail` holds ASCII only (its character offsets are byte
    /// offsets).
    tail_ascii: bool,
    /// Every character written.
    total: u64,
    /// The standard stream it captures, whose writes are also offered as
    /// live output ([`crate::live`]); `None` for other captures.
    live: Option<gisclaw_protocol::OutputStream>,
}

impl Bounded {
    /// A buffer keeping `head` + `tail` characters (negative budgets are 0).
    pub fn with_budgets(head: i64, tail: i64) -> Bounded {
        let head_budget = usize::try_from(head.max(0)).unwrap_or(usize::MAX);
        let tail_budget = usize::try_from(tail.max(0)).unwrap_or(usize::MAX);
        Bounded {
            head_budget,
            tail_budget,
            head: String::new(),
            head_chars: 0,
            tail: String::new(),
            tail_chars: 0,
            tail_ascii: true,
            total: 0,
            live: None,
        }
    }

    /// Appends `text`; returns its length in characters.
    pub fn push(&mut self, text: &str) -> usize {
        self.push_known(text, text.is_ascii())
    }

    /// [`Bounded::push`] of a text already known to be ASCII or not (a
    /// Python string says so without a scan: a 50 MB print is not read
    /// three times over).
    fn push_known(&mut self, text: &str, ascii: bool) -> usize {
        let n = if ascii {
            text.len()
        } else {
            text.chars().count()
        };
        self.total += n as u64;
        let mut rest = text;
        let mut rest_chars = n;
        if self.head_chars < self.head_budget {
            let room = self.head_budget - self.head_chars;
            let cut = if rest_chars <= room {
                rest.len()
            } else {
                byte_index_of_char(rest, room, ascii)
            };
            let taken = rest_chars.min(room);
            self.head.push_str(&rest[..cut]);
            self.head_chars += taken;
            rest = &rest[cut..];
            rest_chars -= taken;
        }
        if rest_chars >= self.tail_budget && self.tail_budget > 0 {
            // One long write replaces the tail: copy only what is kept.
            let skip = byte_index_of_char(rest, rest_chars - self.tail_budget, ascii);
            self.tail.clear();
            self.tail.push_str(&rest[skip..]);
            self.tail_chars = self.tail_budget;
            self.tail_ascii = ascii;
        } else if rest_chars > 0 && self.tail_budget > 0 {
            self.tail.push_str(rest);
            self.tail_ascii &= ascii;
            self.tail_chars += rest_chars;
            if self.tail_chars >= self.tail_budget.saturating_mul(2).max(COMPACT_AT) {
                self.keep_last(self.tail_budget);
            }
        }
        n
    }

    /// Drops the tail's front so that it holds its last `keep` characters.
    fn keep_last(&mut self, keep: usize) {
        if self.tail_chars <= keep {
            return;
        }
        let drop = self.tail_chars - keep;
        let cut = byte_index_of_char(&self.tail, drop, self.tail_ascii);
        self.tail.drain(..cut);
        self.tail_chars = keep;
    }

    /// The text kept, with a marker where the middle was cut, and the
    /// number of characters dropped.
    pub fn text(&self) -> (String, u64) {
        let mut tail: &str = &self.tail;
        let mut tail_chars = self.tail_chars;
        if tail_chars > self.tail_budget {
            tail =
                &tail[byte_index_of_char(tail, tail_chars - self.tail_budget, self.tail_ascii)..];
            tail_chars = self.tail_budget;
        }
        let dropped = self.total - (self.head_chars + tail_chars) as u64;
        if dropped > 0 {
            (
                format!(
                    "{}\n[... {dropped} characters dropped ...]\n{tail}",
                    self.head
                ),
                dropped,
            )
        } else {
            (format!("{}{tail}", self.head), 0)
        }
    }
}

/// Byte offset of the `n`th character of `s` (its length when shorter);
/// `ascii` when `s` is known to be ASCII.
fn byte_index_of_char(s: &str, n: usize, ascii: bool) -> usize {
    if ascii {
        return n.min(s.len());
    }
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

#[pymethods]
impl Bounded {
    /// `live`: 1 for a cell's stdout, 2 for its stderr (their writes are
    /// also sent as live output), 0 for a capture of anything else.
    #[new]
    #[pyo3(signature = (head, tail, live = 0))]
    fn py_new(head: i64, tail: i64, live: u8) -> Bounded {
        let mut bounded = Bounded::with_budgets(head, tail);
        bounded.live = match live {
            1 => Some(gisclaw_protocol::OutputStream::Stdout),
            2 => Some(gisclaw_protocol::OutputStream::Stderr),
            _ => None,
        };
        bounded
    }

    /// Appends a `str`; returns its length, as `TextIOBase.write` does.
    fn write(&mut self, s: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = s.cast::<PyString>().map_err(|_| {
            let kind = s
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "object".into());
            PyTypeError::new_err(format!("write() argument must be str, not {kind}"))
        })?;
        // SAFETY: `text` is a live `str` object (checked by the cast above);
        // the macro reads its ASCII flag and nothing else.
        let ascii = unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } != 0;
        let text = text.to_string_lossy();
        if let Some(stream) = self.live {
            crate::live::offer(stream, &text);
        }
        Ok(self.push_known(&text, ascii))
    }

    /// Every character written so far.
    #[getter]
    fn total(&self) -> u64 {
        self.total
    }

    /// `(text, dropped_chars)` with a marker where the middle was cut.
    fn result(&self) -> (String, u64) {
        self.text()
    }
}

/// Creates the `gisclaw_native` module and registers it in `sys.modules`.
pub fn register(py: Python<'_>) -> PyResult<()> {
    let module = PyModule::new(py, MODULE)?;
    module.add_class::<Bounded>()?;
    py.import("sys")?
        .getattr("modules")?
        .set_item(MODULE, &module)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Bounded;

    #[test]
    fn short_output_is_kept_whole() {
        let mut b = Bounded::with_budgets(10, 5);
        assert_eq!(b.push("hello"), 5);
        assert_eq!(b.push(" world"), 6);
        assert_eq!(b.text(), ("hello world".to_string(), 0));
    }

    #[test]
    fn the_middle_is_dropped_and_counted() {
        let mut b = Bounded::with_budgets(4, 3);
        for i in 0..100 {
            b.push(&format!("{}", i % 10));
        }
        let (text, dropped) = b.text();
        assert_eq!(dropped, 93);
        assert_eq!(text, "0123\n[... 93 characters dropped ...]\n789");
    }

    #[test]
    fn one_long_write_is_split_between_head_and_tail() {
        let mut b = Bounded::with_budgets(3, 2);
        b.push("abcdefghij");
        assert_eq!(
            b.text(),
            ("abc\n[... 5 characters dropped ...]\nij".into(), 5)
        );
    }

    #[test]
    fn characters_not_bytes_are_counted() {
        let mut b = Bounded::with_budgets(2, 2);
        assert_eq!(b.push("São Paulo °C"), 12);
        let (text, dropped) = b.text();
        assert_eq!(dropped, 8);
        assert!(text.starts_with("Sã\n") && text.ends_with("\n°C"), "{text}");
    }

    #[test]
    fn zero_or_negative_budgets_keep_nothing() {
        let mut b = Bounded::with_budgets(-1, 0);
        b.push("abc");
        assert_eq!(b.text(), ("\n[... 3 characters dropped ...]\n".into(), 3));
    }

    #[test]
    fn the_tail_stays_bounded_over_many_writes() {
        let mut b = Bounded::with_budgets(0, 8);
        // 500,000 characters: the tail is cut back several times.
        for _ in 0..100_000 {
            b.push("line\n");
            assert!(b.tail.len() < super::COMPACT_AT + 5, "{}", b.tail.len());
        }
        let (text, dropped) = b.text();
        assert_eq!(dropped, 500_000 - 8);
        assert!(text.ends_with("ne\nline\n"), "{text:?}");
    }
}
