//! What the host asks the confined reader, and what it answers: typed
//! summaries, never a file. Every request names paths relative to the one
//! folder the reader sees.

use std::path::PathBuf;

use gisclaw_protocol::ConfinementReport;
use serde::{Deserialize, Serialize};

use crate::card::facts::{Dataset, FolderCard};
use crate::eval::output_score::Summary;
use crate::outputs::sanity::Reference;
use crate::llm::vision::Shown;
use crate::outputs::OutputCheck;

/// One request, with the folder it is about.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope {
    /// The folder's path on the host (the reader sees it at
    /// [`super::VIEW_ROOT`] when it has a mount namespace).
    pub root: PathBuf,
    /// CPU seconds the reader may spend (RLIMIT_CPU).
    pub cpu_seconds: u64,
    /// What to read.
    pub request: Request,
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
        /// What the inputs say.
        reference: Reference,
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

/// The reader's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "answer", content = "value", rename_all = "snake_case")]
pub enum Answer {
    /// Text (a card).
    Text(String),
    /// A folder's facts.
    Facts(Box<FolderCard>),
    /// One dataset's facts, or the one-line reason there are none.
    Dataset(Result<Box<Dataset>, String>),
    /// The inputs' reference.
    Reference(Reference),
    /// Warnings, per requested file.
    Warnings(Vec<Vec<String>>),
    /// Verdicts, per requested file.
    Checks(Vec<OutputCheck>),
    /// A summary for scoring (raster values follow as the binary part).
    Summary(Box<Summary>),
    /// An image for a vision model, when it is one.
    Shown(Option<Shown>),
    /// A figure for the terminal (pixels as the binary part), or why not.
    Figure(Result<crate::outputs::shown::Figure, String>),
}

/// The answer with what the reader's confinement was.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reply {
    /// Each layer of the reader's confinement.
    pub confinement: ConfinementReport,
    /// The answer.
    pub answer: Answer,
}
