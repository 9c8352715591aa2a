//! `gisclaw card DIR [FILE] [--json]`: the schema card of a data folder
//! exactly as the model receives it (or, with FILE, what `inspect_data`
//! answers for one file or archive member), with the time it took; with
//! `--json`, its facts as data (every dataset, no token budget; the shape is
//! `gisclaw schema card`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use gisclaw::card::{self, library};
use gisclaw::sandbox::{SandboxConfig, Zygote};

use super::common::UsageError;

/// Prints the card of `dir` within `budget` tokens, or one file's entry;
/// with `json`, their facts as JSON. With `check`, the facts are amended by
/// what the sandbox's own libraries read (a throwaway session); when the
/// sandbox cannot start, the card says so and keeps the reader's facts.
pub fn show(
    dir: &Path,
    file: Option<&str>,
    budget: u64,
    json: bool,
    check: bool,
) -> anyhow::Result<ExitCode> {
    // A file given alone is described as the entry of its folder's card.
    let (dir, file) = match (dir.is_file(), file) {
        (true, None) => {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            (parent.unwrap_or(Path::new(".")), name)
        }
        _ => (dir, file.map(str::to_string)),
    };
    let file = file.as_deref();
    if !dir.is_dir() {
        return Err(UsageError(format!("{}: no such folder or file", dir.display())).into());
    }
    // The sandbox sees the folder by its real path.
    let dir = &dir
        .canonicalize()
        .map_err(|e| UsageError(format!("{}: {e}", dir.display())))?;
    let start = Instant::now();
    let zygote = if check {
        match Zygote::start(SandboxConfig::default()) {
            Ok(zygote) => Some(zygote),
            Err(why) => {
                say_err!("gisclaw: the card is not checked by the sandbox's libraries: {why}");
                None
            }
        }
    } else {
        None
    };
    let checked = |f: &mut dyn FnMut(&mut gisclaw::sandbox::Session) -> anyhow::Result<String>,
                   plain: &dyn Fn() -> anyhow::Result<String>|
     -> anyhow::Result<String> {
        match &zygote {
            Some(zygote) => match library::in_throwaway_session(zygote, dir, |s| f(s)) {
                Ok(text) => text,
                Err(why) => {
                    say_err!("gisclaw: the card is not checked by the sandbox's libraries: {why}");
                    plain()
                }
            },
            None => plain(),
        }
    };
    let text = match (file, json) {
        (Some(rel), true) => checked(
            &mut |s| {
                let dataset = card::checked_inspect(dir, "data/", rel, s)
                    .map_err(|e| UsageError(e.to_string()))?;
                Ok(serde_json::to_string_pretty(&dataset)?)
            },
            &|| {
                let dataset = card::inspect_facts(dir, "data/", rel)
                    .map_err(|e| UsageError(e.to_string()))?;
                Ok(serde_json::to_string_pretty(&dataset)?)
            },
        )?,
        (None, true) => checked(
            &mut |s| {
                Ok(serde_json::to_string_pretty(&card::checked_facts(
                    dir, "data/", s,
                )?)?)
            },
            &|| {
                Ok(serde_json::to_string_pretty(&card::card_facts(
                    dir, "data/",
                )?)?)
            },
        )?,
        (Some(rel), false) => checked(
            &mut |s| {
                Ok(card::checked_inspect(dir, "data/", rel, s)
                    .map_err(|e| UsageError(e.to_string()))?
                    .text())
            },
            &|| Ok(card::inspect_file(dir, "data/", rel).map_err(|e| UsageError(e.to_string()))?),
        )?,
        (None, false) => checked(
            &mut |s| Ok(card::checked_card(dir, "data/", budget, s)),
            &|| Ok(card::card_for_dir(dir, "data/", budget)),
        )?,
    };
    if json {
        say!("{text}");
        say_err!("({} ms)", start.elapsed().as_millis());
        return Ok(ExitCode::SUCCESS);
    }
    if text.ends_with('\n') {
        say_part!("{text}");
    } else {
        say!("{text}");
    }
    std::io::Write::flush(&mut std::io::stdout())?;
    say_err!(
        "({} tokens, {} ms)",
        gisclaw::llm::tokens::count(&text),
        start.elapsed().as_millis()
    );
    Ok(ExitCode::SUCCESS)
}
