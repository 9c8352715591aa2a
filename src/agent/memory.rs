//! Error Memory: errors are reduced to a signature (exception type plus the
//! shape of its message), the code that fixed each one is remembered, and
//! the fix is shown the next time the same signature appears — in this task
//! or a later one. Stored in `<data dir>/error_memory.json` (or
//! `GISCLAW_ERROR_MEMORY`), bounded, deduplicated by signature, clearable
//! with `gisclaw memory clear`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::paths;
use crate::sandbox::{CellOutcome, CellStatus};
use crate::util::write_json;

/// Most signatures kept; the least recently useful go first.
pub const CAPACITY: usize = 200;
/// Longest fix kept, in characters.
const FIX_CHARS: usize = 800;

/// One remembered error and its fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The normalised signature.
    pub signature: String,
    /// One real message with this signature.
    pub example: String,
    /// The code that ran successfully right after the error.
    pub fix: String,
    /// How often the fix was recorded or shown.
    pub hits: u32,
    /// A counter value at last use (for eviction).
    pub last_used: u64,
}

/// The memory, loaded from and saved to one file.
#[derive(Debug)]
pub struct ErrorMemory {
    path: Option<PathBuf>,
    entries: Vec<Entry>,
    clock: u64,
    pending: Option<Pending>,
}

/// An error waiting for its fix: its signature, its example, the
/// statement that raised (what a fix must run again, corrected), and how
/// many successful cells have passed without one.
#[derive(Debug, Clone)]
struct Pending {
    signature: String,
    example: String,
    statement: String,
    waited: u32,
}

/// Successful cells after an error within which its fix must come.
const FIX_WITHIN: u32 = 3;

/// How alike a line must be to the failing statement to be its fix (one
/// minus their edit distance over the longer's length): `gdf =
/// gpd.read_file('x')` fixes `gpd.read_fil('x')` (0.71), `df['pop_total']`
/// fixes `df['POP']` (0.40), a plot after a failed overlay does not (0.2).
const FIX_LIKENESS: f64 = 0.4;

/// The statement that raised: the line after the last frame in a cell
/// (`File "<cell-3>", line 2`) of `traceback`, else the cell's last line.
fn failing_statement(traceback: &str, code: &str) -> String {
    let lines: Vec<&str> = traceback.lines().collect();
    lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("File \"<cell"))
        .and_then(|at| lines.get(at + 1))
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .or_else(|| {
            code.lines()
                .rev()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with('#'))
        })
        .unwrap_or("")
        .to_string()
}

/// Whether some line of `code` is the failing `statement` run again,
/// corrected or not (see [`FIX_LIKENESS`]).
fn runs_again(code: &str, statement: &str) -> bool {
    !statement.is_empty()
        && code
            .lines()
            .map(str::trim)
            .any(|line| likeness(line, statement) >= FIX_LIKENESS)
}

/// One minus the edit distance of `a` and `b` over the longer's length.
fn likeness(a: &str, b: &str) -> f64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    1.0 - row[b.len()] as f64 / longest as f64
}

/// The default file.
pub fn default_path() -> PathBuf {
    std::env::var_os("GISCLAW_ERROR_MEMORY")
        .map(PathBuf::from)
        .unwrap_or_else(|| paths::data_dir().join("error_memory.json"))
}

/// Reduces an error to its shape: quoted text, numbers, hex addresses and
/// paths become placeholders, so `KeyError: 'pop_2020'` and
/// `KeyError: 'POP'` share `KeyError: '…'`.
pub fn signature(ename: &str, evalue: &str) -> String {
    let first = evalue.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut chars = first.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                for next in chars.by_ref() {
                    if next == c {
                        break;
                    }
                }
                out.push(c);
                out.push('…');
                out.push(c);
            }
            '0'..='9' => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '.')
                {
                    chars.next();
                }
                out.push('N');
            }
            '/' if out.ends_with(' ') || out.is_empty() => {
                while chars.peek().is_some_and(|n| !n.is_whitespace()) {
                    chars.next();
                }
                out.push_str("<path>");
            }
            _ => out.push(c),
        }
    }
    let shape: String = out.chars().take(160).collect();
    format!("{ename}: {shape}")
}

impl ErrorMemory {
    /// A memory kept only in this process.
    pub fn in_memory() -> ErrorMemory {
        ErrorMemory {
            path: None,
            entries: Vec::new(),
            clock: 0,
            pending: None,
        }
    }

    /// Loads the memory at `path` (empty when the file does not exist; a
    /// damaged file is set aside with a warning, never fatal).
    pub fn load(path: &Path) -> ErrorMemory {
        let entries: Vec<Entry> = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|err| {
                tracing::warn!(
                    "error memory {} is unreadable ({err}); starting afresh",
                    path.display()
                );
                let _ = std::fs::rename(path, path.with_extension("json.damaged"));
                Vec::new()
            }),
            Err(_) => Vec::new(),
        };
        let clock = entries.iter().map(|e| e.last_used).max().unwrap_or(0);
        ErrorMemory {
            path: Some(path.to_path_buf()),
            entries,
            clock,
            pending: None,
        }
    }

    /// Every entry, most recently used first.
    pub fn entries(&self) -> Vec<&Entry> {
        let mut all: Vec<&Entry> = self.entries.iter().collect();
        all.sort_by_key(|e| std::cmp::Reverse(e.last_used));
        all
    }

    /// Forgets everything (and removes the file).
    pub fn clear(&mut self) -> std::io::Result<()> {
        self.entries.clear();
        match &self.path {
            Some(p) if p.exists() => std::fs::remove_file(p),
            _ => Ok(()),
        }
    }

    fn save(&self) {
        let Some(path) = &self.path else { return };
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(err) = write_json(path, &self.entries) {
            tracing::warn!("cannot save the error memory to {}: {err}", path.display());
        }
    }

    /// Records what a cell did and returns a note for the observation when a
    /// remembered fix applies to its error.
    pub fn observe(&mut self, code: &str, outcome: &CellOutcome) -> Option<String> {
        self.clock += 1;
        if outcome.status == CellStatus::Ok {
            // A fix is a cell that runs what raised again, soon after; not
            // whatever cell came next (a plot after a failed overlay).
            if let Some(mut pending) = self.pending.take() {
                if runs_again(code, &pending.statement) {
                    self.remember(pending.signature, pending.example, code);
                } else if pending.waited + 1 < FIX_WITHIN {
                    pending.waited += 1;
                    self.pending = Some(pending);
                }
            }
            return None;
        }
        let err = outcome.result.error.as_ref()?;
        let sig = signature(&err.ename, &err.evalue);
        let example = format!("{}: {}", err.ename, err.evalue.lines().next().unwrap_or(""));
        self.pending = Some(Pending {
            signature: sig.clone(),
            example,
            statement: failing_statement(&err.traceback, code),
            waited: 0,
        });
        let clock = self.clock;
        let entry = self.entries.iter_mut().find(|e| e.signature == sig)?;
        entry.hits += 1;
        entry.last_used = clock;
        let note = format!(
            "[error memory] This error has been seen before ({}). The code that worked after it then:\n{}",
            entry.example, entry.fix
        );
        self.save();
        Some(note)
    }

    fn remember(&mut self, signature: String, example: String, fix: &str) {
        let fix: String = fix.trim().chars().take(FIX_CHARS).collect();
        let clock = self.clock;
        match self.entries.iter_mut().find(|e| e.signature == signature) {
            Some(entry) => {
                entry.fix = fix;
                entry.example = example;
                entry.hits += 1;
                entry.last_used = clock;
            }
            None => {
                if self.entries.len() >= CAPACITY {
                    if let Some(oldest) = self
                        .entries
                        .iter()
                        .enumerate()
                        .min_by_key(|(_, e)| e.last_used)
                        .map(|(i, _)| i)
                    {
                        self.entries.remove(oldest);
                    }
                }
                self.entries.push(Entry {
                    signature,
                    example,
                    fix,
                    hits: 1,
                    last_used: clock,
                });
            }
        }
        self.save();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::CellOutcome;
    use gisclaw_protocol::{CellResult, PyError};
    use std::time::Duration;

    fn outcome(error: Option<(&str, &str)>) -> CellOutcome {
        CellOutcome {
            cell: 1,
            status: if error.is_some() {
                CellStatus::Error
            } else {
                CellStatus::Ok
            },
            result: CellResult {
                ok: error.is_none(),
                stdout: String::new(),
                stdout_dropped_chars: 0,
                stderr: String::new(),
                error: error.map(|(ename, evalue)| PyError {
                    ename: ename.into(),
                    evalue: evalue.into(),
                    traceback: String::new(),
                }),
                display: None,
                variables: Vec::new(),
                figures: Vec::new(),
                saved_figures: Vec::new(),
                duration_us: 0,
                ran_before_error: None,
            },
            restore: None,
            wall: Duration::ZERO,
            refused: false,
        }
    }

    #[test]
    fn signatures_keep_the_shape_and_drop_the_specifics() {
        assert_eq!(
            signature("KeyError", "'pop_2020'"),
            signature("KeyError", "'POP'")
        );
        assert_eq!(
            signature(
                "FileNotFoundError",
                "[Errno 2] No such file or directory: 'data/roads.shp'"
            ),
            "FileNotFoundError: [Errno N] No such file or directory: '…'"
        );
        assert_ne!(signature("KeyError", "'a'"), signature("ValueError", "'a'"));
        assert_eq!(
            signature("OSError", "cannot open /tmp/x/y.tif now"),
            "OSError: cannot open <path> now"
        );
    }

    #[test]
    fn a_fix_is_remembered_across_instances_and_shown_for_the_same_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mem.json");
        let mut first = ErrorMemory::load(&path);
        assert!(first
            .observe("df['POP']", &outcome(Some(("KeyError", "'POP'"))))
            .is_none());
        assert!(first.observe("df['pop_total']", &outcome(None)).is_none());
        let mut second = ErrorMemory::load(&path);
        let note = second
            .observe("df['Pop']", &outcome(Some(("KeyError", "'Pop'"))))
            .expect("fix shown");
        assert!(note.contains("df['pop_total']"), "{note}");
        second.clear().unwrap();
        assert!(!path.exists());
        assert!(ErrorMemory::load(&path).entries().is_empty());
    }

    #[test]
    fn the_memory_is_bounded_and_deduplicated() {
        let mut mem = ErrorMemory::in_memory();
        for i in 0..(CAPACITY + 20) {
            let ename = format!("Error{i}");
            mem.observe("step(1)", &outcome(Some((&ename, "x"))));
            mem.observe("step(2)", &outcome(None));
        }
        assert_eq!(mem.entries().len(), CAPACITY);
        mem.observe("bad(1)", &outcome(Some(("Error500", "x"))));
        mem.observe("bad(2)", &outcome(None));
        mem.observe("bad(1)", &outcome(Some(("Error500", "x"))));
        mem.observe("bad(3)", &outcome(None));
        let e = mem
            .entries()
            .into_iter()
            .find(|e| e.signature.starts_with("Error500"))
            .unwrap();
        assert_eq!(e.fix, "bad(3)");
        assert_eq!(mem.entries().len(), CAPACITY);
    }

    #[test]
    fn a_damaged_file_is_set_aside_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mem.json");
        std::fs::write(&path, "{not json").unwrap();
        assert!(ErrorMemory::load(&path).entries().is_empty());
        assert!(dir.path().join("mem.json.damaged").exists());
    }

    #[test]
    fn a_fix_is_a_later_cell_that_runs_the_failing_call_again_not_the_next_cell() {
        // A TopologyException in an overlay, then a plot, then the overlay
        // made valid: the fix is the third cell, not the plot.
        let mut mem = ErrorMemory::in_memory();
        let mut failed = outcome(Some((
            "GEOSException",
            "TopologyException: side location conflict",
        )));
        if let Some(e) = failed.result.error.as_mut() {
            e.traceback = "Traceback (most recent call last):\n  File \"<cell-2>\", line 2, in <module>\n    reach = gpd.overlay(africa, buffers)\nGEOSException: …".into();
        }
        mem.observe(
            "africa = world[world.continent == 'Africa']\nreach = gpd.overlay(africa, buffers)",
            &failed,
        );
        mem.observe(
            "ax = world.plot()\nplt.savefig('pred_results/map.png')",
            &outcome(None),
        );
        assert!(mem.entries().is_empty(), "the plot is no fix");
        mem.observe(
            "reach = gpd.overlay(africa.make_valid(), buffers)",
            &outcome(None),
        );
        let entries = mem.entries();
        assert_eq!(entries.len(), 1);
        assert!(entries[0].fix.contains("make_valid"), "{}", entries[0].fix);
        // An error whose fix never comes is dropped after a few cells.
        mem.observe("x = compute(1)", &outcome(Some(("ValueError", "bad"))));
        for _ in 0..FIX_WITHIN {
            mem.observe("y = 2", &outcome(None));
        }
        mem.observe("x = compute(2)", &outcome(None));
        // A typo's fix names another function: it is still the statement.
        assert!(likeness("gdf = gpd.read_file('x')", "gpd.read_fil('x')") > 0.7);
        assert_eq!(mem.entries().len(), 1);
    }
}
