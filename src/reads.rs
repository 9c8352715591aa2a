//! What the confined reader answers (`crate::reader`): each request mapped
//! to the in-process reading of the module that asks it — the card, the
//! output checks, eval scoring, figures. Run inside the confined reader
//! (`gisclaw __read` serves with [`answer_here`]) and by benchmarks that
//! measure what confinement costs; gisclaw never calls it on its own behalf.
//!
//! The modules that ask hold the types of their answers; this one alone
//! knows all of them, so the reader itself stays free of them.

use std::path::Path;

use crate::reader::Request;
use crate::{card, eval, outputs};

/// Answers `request` about `folder` (the path this process sees it at) in
/// this process and unconfined: the answer as JSON and its binary part.
pub fn answer_here(folder: &Path, request: &Request) -> (serde_json::Value, Vec<u8>) {
    let json = |value: Result<serde_json::Value, serde_json::Error>| {
        value.unwrap_or_else(|e| serde_json::Value::String(format!("unserialisable answer: {e}")))
    };
    match request {
        Request::CardText { shown_as, budget } => (
            json(serde_json::to_value(card::card_text_here(
                folder, shown_as, *budget,
            ))),
            Vec::new(),
        ),
        Request::CardPieces { shown_as, budget } => (
            json(serde_json::to_value(card::card_pieces_here(
                folder, shown_as, *budget,
            ))),
            Vec::new(),
        ),
        Request::CardFacts { shown_as } => (
            json(serde_json::to_value(card::card_facts_here(
                folder, shown_as,
            ))),
            Vec::new(),
        ),
        Request::Inspect { shown_as, rel } => (
            json(serde_json::to_value(
                card::inspect_facts_here(folder, shown_as, rel).map_err(|e| e.to_string()),
            )),
            Vec::new(),
        ),
        Request::Reference { task_text } => (
            json(serde_json::to_value(outputs::sanity::Reference::read_here(
                Some(folder),
                task_text,
            ))),
            Vec::new(),
        ),
        Request::Warnings { files, reference } => {
            let reference: outputs::sanity::Reference =
                serde_json::from_value(reference.clone()).unwrap_or_default();
            let warnings: Vec<Vec<String>> = files
                .iter()
                .map(|rel| outputs::sanity::warnings_here(folder, rel, &reference))
                .collect();
            (json(serde_json::to_value(warnings)), Vec::new())
        }
        Request::Checks { files } => {
            let checks: Vec<outputs::OutputCheck> = files
                .iter()
                .map(|rel| outputs::check_here(folder, &folder.join(rel)))
                .collect();
            (json(serde_json::to_value(checks)), Vec::new())
        }
        Request::Summary {
            file,
            declared,
            kind,
        } => {
            let (summary, binary) = eval::metrics::output_score::summarise_here(
                folder,
                file,
                declared,
                kind.as_deref(),
            );
            (json(serde_json::to_value(summary)), binary)
        }
        Request::Shown { file } => (
            json(serde_json::to_value(outputs::shown::prepare_here(
                folder,
                &folder.join(file),
            ))),
            Vec::new(),
        ),
        Request::Figure { file, pixels } => {
            match outputs::shown::figure_here(folder, &folder.join(file), *pixels) {
                Ok((figure, rgba)) => (json(serde_json::to_value(Ok::<_, String>(figure))), rgba),
                Err(why) => (
                    json(serde_json::to_value(Err::<outputs::shown::Figure, _>(why))),
                    Vec::new(),
                ),
            }
        }
    }
}
