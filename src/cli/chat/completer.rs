//! Line editing: tab completion of slash commands and data file names.

use std::borrow::Cow;
use std::path::PathBuf;

use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

use super::commands::COMMANDS;

/// Line editing: completion of slash commands and data file names.
pub(super) struct ChatHelper {
    /// The attached data folder, for file-name completion.
    pub(super) data_dir: Option<PathBuf>,
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = &before[start..];
        if start == 0 && word.starts_with('/') {
            let pairs = COMMANDS
                .iter()
                .filter(|c| c.name.starts_with(word))
                .map(|c| Pair {
                    display: c.name.to_string(),
                    replacement: format!("{} ", c.name),
                })
                .collect();
            return Ok((0, pairs));
        }
        let Some(dir) = &self.data_dir else {
            return Ok((pos, Vec::new()));
        };
        let prefix = word.strip_prefix("data/").unwrap_or(word);
        let pairs = gisclaw::card::entries_under(dir)
            .into_iter()
            .filter(|(rel, _)| rel.starts_with(prefix))
            .take(200)
            // A name with control characters is neither shown nor typed in.
            .filter(|(rel, _)| gisclaw::terminal::clean(rel) == *rel)
            .map(|(rel, _)| Pair {
                display: rel.clone(),
                replacement: format!("data/{rel}"),
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for ChatHelper {}

impl Helper for ChatHelper {}
