//! L3's optional vision judge for map and chart outputs (GISclaw §3.3): a
//! vision model sees the task, the gold image and the agent's image and
//! grades five cartographic dimensions from 1 to 5; the output's score is
//! their mean over 5. Blank images (≤ 5 colours) score 0 without a call.
//! Without a vision judge, SSIM stays the (labelled weak) signal.

use std::path::Path;

use base64::Engine as _;

use crate::eval::metrics::llm_judge::{answer_shape, ask_grades, JudgeError, Verdict};
use crate::eval::metrics::output_score::OutputScore;
use crate::llm::{ChatBackend, Message, Role};

/// The five dimensions: (key, what it asks).
pub const DIMENSIONS: [(&str, &str); 5] = [
    ("task_completion", "Task completion: does the agent's figure show what the task asks for?"),
    ("spatial_accuracy", "Spatial accuracy: are locations, extents and spatial patterns consistent with the gold figure?"),
    ("visual_readability", "Visual readability: is it legible (labels, colours, contrast, clutter)?"),
    ("cartographic_quality", "Cartographic quality: legend, colour bar, title, scale or axes as the figure needs."),
    ("data_integrity", "Data integrity: are the values and classes plausible, nothing missing or invented?"),
];

/// The conversation that asks for grades of `agent` against `gold`.
pub fn prompt(instruction: &str, gold_png: &[u8], agent_png: &[u8]) -> Vec<Message> {
    let engine = base64::engine::general_purpose::STANDARD;
    let dimensions: String = DIMENSIONS
        .iter()
        .map(|(key, what)| format!("- `{key}` — {what}\n"))
        .collect();
    let user = format!(
        "## Task\n\n{instruction}\n\nThe first image is the expert's (gold) figure, the second the agent's. \
         A different but correct style is as good as the gold's.\n\n## Grade the agent's figure from 1 (poor) to 5 (excellent) on\n\n{dimensions}\n\
         Answer with exactly this JSON object:\n\n{}\n",
        answer_shape(&DIMENSIONS)
    );
    vec![
        Message::text(Role::System, "You grade maps and charts made by an AI agent for a GIS task. You answer with one JSON object and nothing else."),
        Message {
            images: vec![engine.encode(gold_png), engine.encode(agent_png)],
            ..Message::text(Role::User, user)
        },
    ]
}

/// Grades the agent's image at `agent` against the gold's at `gold`.
pub fn judge(
    backend: &mut dyn ChatBackend,
    instruction: &str,
    gold: &Path,
    agent: &Path,
) -> Result<Verdict, JudgeError> {
    // The gold's image is a gold run's cell's file: read the same way.
    let read = |p: &Path| {
        crate::beneath::read_under(
            p.parent().unwrap_or(Path::new("/")),
            p,
            crate::outputs::MAX_IMAGE_BYTES,
        )
        .map_err(|why| JudgeError::Io {
            path: p.to_path_buf(),
            source: std::io::Error::other(why.to_string()),
        })
    };
    // The agent's image is a cell's file: read as the cell could
    // (crate::beneath), never through a link out of its folder, so that no
    // host file is sent to the judging model.
    let folder = agent.parent().unwrap_or(Path::new("/"));
    let agents = crate::beneath::read_under(folder, agent, crate::outputs::MAX_IMAGE_BYTES)
        .map_err(|why| JudgeError::Io {
            path: agent.to_path_buf(),
            source: std::io::Error::other(why.to_string()),
        })?;
    ask_grades(
        backend,
        prompt(instruction, &read(gold)?, &agents),
        &DIMENSIONS,
    )
}

/// Puts a verdict into an image output's score: the mean grade over 5
/// (no longer a weak signal), the grades among its parts, SSIM kept.
pub fn apply(score: &mut OutputScore, verdict: &Verdict) {
    score.score = verdict.mean() / 5.0;
    score.weak = false;
    for (key, grade) in &verdict.grades {
        score
            .parts
            .insert(format!("vision_{key}"), f64::from(grade.score) / 5.0);
    }
    score.note = format!(
        "vision judge {}: mean {:.2}/5 (SSIM {:.3} kept as a part)",
        verdict.model,
        verdict.mean(),
        score.parts.get("ssim").copied().unwrap_or(f64::NAN)
    );
}

/// Whether an output score is an image worth showing a judge (not blank).
pub fn wants_judging(score: &OutputScore) -> bool {
    score.kind == "image" && score.parts.get("blank") == Some(&0.0)
}
