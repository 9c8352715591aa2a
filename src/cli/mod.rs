//! One module per subcommand; `main.rs` only dispatches.

pub mod bench;
pub mod bench_js;
pub mod card;
pub mod chat;
pub mod common;
pub mod eval;
pub mod exec;
pub mod figure;
pub mod knowledge;
pub mod mcp;
pub mod memory;
pub mod sandbox;
pub mod solve;
pub mod transcript;
pub mod tree;

/// Writes `text` (cleaned) to standard output, with a newline when
/// `line`. A reader that has gone (`gisclaw schema task | head`) makes the
/// rest of the output go nowhere: the command goes on and ends as it
/// would, never with a panic.
pub fn say(text: &str, line: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let text = gisclaw::terminal::clean(text);
    // A failure means the reader has gone or stdout is closed: nothing to do.
    let _ = if line {
        writeln!(out, "{text}")
    } else {
        write!(out, "{text}").and_then(|()| out.flush())
    };
}

/// [`say`] on standard error.
pub fn say_err(text: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        gisclaw::terminal::clean(text)
    );
}
