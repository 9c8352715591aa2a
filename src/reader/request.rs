//! What the host asks the confined reader, and what it answers: typed
//! summaries (as JSON here: each request's type belongs to the module that
//! asks it), never a file. Every request names paths relative to the one
//! folder the reader sees.

use std::path::PathBuf;

use gisclaw_protocol::ConfinementReport;
use serde::{Deserialize, Serialize};

/// What a reader is started with (its first line on standard input),
/// before it knows its request: the folder it is about.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    /// The folder's path on the host (the reader sees it at
    /// [`super::VIEW_ROOT`] when it has a mount namespace).
    pub root: PathBuf,
    /// CPU seconds the reader may spend (RLIMIT_CPU).
    pub cpu_seconds: u64,
    /// An empty folder of the host's (0700) for the reader's stage and
    /// `/tmp`, removed by the host when the reader ends.
    pub scratch: PathBuf,
}

/// What to read in the folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The schema card of the folder, as text within `budget` tokens.
    CardText {
        /// How the folder is shown to the model (`data/`).
        shown_as: String,
        /// Token budget.
        budget: u64,
    },
    /// The card within a token budget as pieces: its lines, with each entry
    /// read in full kept as facts (`card::Piece`) for the libraries' check
    /// to amend before it is rendered.
    CardPieces {
        /// How the folder is shown to the model (`data/`).
        shown_as: String,
        /// Token budget.
        budget: u64,
    },
    /// The card's facts.
    CardFacts {
        /// How the folder is shown.
        shown_as: String,
    },
    /// The `inspect_data` facts of one file (or archive member).
    Inspect {
        /// How the folder is shown.
        shown_as: String,
        /// The file as the model named it.
        rel: String,
    },
    /// What the inputs say for the output checks (CRSs, extent).
    Reference {
        /// The task's text (what it asks for).
        task_text: String,
    },
    /// The output checks' warnings for each file.
    Warnings {
        /// Files, relative to the folder.
        files: Vec<String>,
        /// What the inputs say (`outputs::sanity::Reference`, as JSON).
        reference: serde_json::Value,
    },
    /// The verdict of `bench verify`'s checks on each file.
    Checks {
        /// Files, relative to the folder.
        files: Vec<String>,
    },
    /// The summary eval scoring compares, of one output.
    Summary {
        /// The file, relative to the folder.
        file: String,
        /// The declared output path (its extension decides the kind).
        declared: String,
        /// The kind the other side's summary settled on, when it came first
        /// (a Parquet output is a table or a vector as the gold says).
        kind: Option<String>,
    },
    /// An image made ready for a vision model.
    Shown {
        /// The file, relative to the folder.
        file: String,
    },
    /// A figure for the terminal: its size, its pixels when asked for.
    Figure {
        /// The file, relative to the folder.
        file: String,
        /// Decode its pixels too.
        pixels: bool,
    },
}

/// The answer with what the reader's confinement was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    /// Each layer of the reader's confinement.
    pub confinement: ConfinementReport,
    /// The answer: each request's own type, as JSON (the card's text or
    /// facts, a dataset or why not, the inputs' reference, warnings or
    /// verdicts per file, a scoring summary, an image for a vision model, a
    /// figure or why not; see `crate::reads`).
    pub answer: serde_json::Value,
}
