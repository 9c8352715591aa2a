//! `gisclaw card DIR [FILE] [--json]`: the schema card of a data folder
//! exactly as the model receives it (or, with FILE, what `inspect_data`
//! answers for one file or archive member), with the time it took; with
//! `--json`, its facts as data (every dataset, no token budget; the shape is
//! `gisclaw schema card`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use super::common::UsageError;

/// Prints the card of `dir` within `budget` tokens, or one file's entry;
/// with `json`, their facts as JSON.
pub fn show(dir: &Path, file: Option<&str>, budget: u64, json: bool) -> anyhow::Result<ExitCode> {
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
    let start = Instant::now();
    if json {
        let text = match file {
            Some(rel) => serde_json::to_string_pretty(
                &gisclaw::card::inspect_facts(dir, "data/", rel)
                    .map_err(|e| UsageError(e.to_string()))?,
            )?,
            None => serde_json::to_string_pretty(&gisclaw::card::card_facts(dir, "data/")?)?,
        };
        say!("{text}");
        say_err!("({} ms)", start.elapsed().as_millis());
        return Ok(ExitCode::SUCCESS);
    }
    let text = match file {
        Some(rel) => {
            gisclaw::card::inspect_file(dir, "data/", rel).map_err(|e| UsageError(e.to_string()))?
        }
        None => gisclaw::card::card_for_dir(dir, "data/", budget),
    };
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
