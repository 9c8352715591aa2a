//! Pure scoring: what a run's code, process and outputs are worth, the
//! error taxonomy and the statistics. Imports nothing else of `eval`.

pub mod api;
pub mod breakdown;
pub mod code;
pub mod codebleu;
pub mod errors;
pub mod llm_judge;
pub mod output_score;
pub mod process;
pub mod stats;
pub mod vision_judge;
