//! The package constraint checked before a cell runs.
//!
//! The worker refuses a blocked package at import time (an import hook and
//! an audit hook no cell can remove); that stays the guarantee. This check
//! only spares a cell that would certainly fail: one whose top level (not
//! inside a `try`, a function or any other block) imports a blocked
//! package. Such a cell is refused whole, before anything in it runs, with
//! the worker's own message, so the session is not left with half a cell
//! done, and the answer costs no round trip to the worker.
//!
//! The scan reads Python's lexical structure only as far as it needs to:
//! strings (triple-quoted too), comments, brackets and backslash
//! continuations, to find the logical lines that start at column 0. When in
//! doubt it refuses nothing, and the worker decides.

use gisclaw_protocol::BlockedImport;

/// The blocked package that `code` imports at its top level, if any: the
/// first statement of a logical line at column 0 that is `import a, b` or
/// `from a.b import c` naming a blocked top-level module.
pub fn top_level_blocked<'b>(
    code: &str,
    blocked: &'b [BlockedImport],
) -> Option<&'b BlockedImport> {
    if blocked.is_empty() {
        return None;
    }
    top_level_statements(code)
        .into_iter()
        .flat_map(|start| imported_modules(&code[start..]))
        .find_map(|module| {
            let top = module.split('.').next().unwrap_or(module);
            blocked.iter().find(|b| b.module == top)
        })
}

/// The message the worker gives for an import of `blocked`.
pub fn refusal(blocked: &BlockedImport) -> String {
    format!(
        "'{}' is not available in this sandbox (package constraint); use {} instead",
        blocked.module, blocked.alternative
    )
}

/// Byte offsets where a logical line starting at column 0 begins (outside
/// strings, brackets and continuations; blank and comment lines skipped).
fn top_level_statements(code: &str) -> Vec<usize> {
    let bytes = code.as_bytes();
    let mut starts = Vec::new();
    let mut depth = 0usize;
    let mut at_line_start = true;
    let mut continued = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if at_line_start {
            at_line_start = false;
            if depth == 0
                && !continued
                && !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'#' | b'\x0c')
            {
                starts.push(i);
            }
            continued = false;
        }
        match c {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\'' | b'"' => {
                i = past_string(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\\' if bytes.get(i + 1) == Some(&b'\n') => {
                continued = true;
                i += 1;
                at_line_start = true;
            }
            b'\n' => at_line_start = true,
            _ => {}
        }
        i += 1;
    }
    starts
}

/// The offset just past the string literal whose opening quote is at
/// `open` (the end of the code for an unterminated one). A backslash
/// always takes the next character along: a quote after it never closes
/// a string, raw or not.
fn past_string(bytes: &[u8], open: usize) -> usize {
    let quote = bytes[open];
    let triple = bytes.get(open + 1) == Some(&quote) && bytes.get(open + 2) == Some(&quote);
    let mut i = open + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return i,
            q if q == quote => {
                if !triple {
                    return i + 1;
                }
                if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// The modules a statement starting `line` imports, when it is an
/// `import` or a (non-relative) `from … import` statement.
fn imported_modules(line: &str) -> Vec<&str> {
    let line = line.split(['\n', ';', '#']).next().unwrap_or("");
    let mut words = line.split_whitespace();
    match words.next() {
        Some("import") => line["import".len()..]
            .split(',')
            .filter_map(|part| part.split_whitespace().next())
            .collect(),
        Some("from") => match words.next() {
            Some(module) if !module.starts_with('.') && words.next() == Some("import") => {
                vec![module]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked() -> Vec<BlockedImport> {
        ["pykrige", "arcpy"]
            .into_iter()
            .map(|m| BlockedImport {
                module: m.into(),
                alternative: "scipy".into(),
            })
            .collect()
    }

    fn refused(code: &str) -> Option<String> {
        top_level_blocked(code, &blocked()).map(|b| b.module.clone())
    }

    #[test]
    fn top_level_imports_of_blocked_packages_are_found() {
        assert_eq!(refused("import pykrige").as_deref(), Some("pykrige"));
        assert_eq!(
            refused("x = 1\nfrom pykrige.ok import OrdinaryKriging\n").as_deref(),
            Some("pykrige")
        );
        assert_eq!(refused("import os, arcpy as ap").as_deref(), Some("arcpy"));
        assert_eq!(
            refused("import pykrige.ok as ok").as_deref(),
            Some("pykrige")
        );
        assert_eq!(
            refused("data = [1,\n  2]\nimport\tarcpy  # why not").as_deref(),
            Some("arcpy")
        );
        assert_eq!(
            refused("s = '''\n'''\nimport pykrige").as_deref(),
            Some("pykrige")
        );
    }

    #[test]
    fn imports_the_cell_may_survive_or_never_makes_are_left_to_the_worker() {
        for code in [
            "try:\n    import pykrige\nexcept ImportError:\n    pykrige = None",
            "def f():\n    import pykrige",
            "if False: import pykrige",
            "import os; import pykrige",
            "# import pykrige",
            "s = '''\nimport pykrige\n'''",
            "s = \"\"\"\nfrom pykrige import ok\n\"\"\"",
            "x = (1,\nimport_pykrige)",
            "t = 'it\\'s'\nnote = 'import pykrige'",
            "x = 1 + \\\nimport pykrige",
            "from . import pykrige",
            "import pykrige_tools",
            "importlib = 1",
            "print('unterminated",
            "",
        ] {
            assert_eq!(refused(code), None, "{code:?}");
        }
    }

    #[test]
    fn the_refusal_is_the_workers_message() {
        let b = &blocked()[0];
        assert_eq!(
            refusal(b),
            "'pykrige' is not available in this sandbox (package constraint); use scipy instead"
        );
    }
}
