//! The tools the model may call, their JSON Schemas, and their dispatch onto
//! the sandbox session.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::transcript::output_status;
use crate::llm::ToolSpec;
use crate::observation;
use crate::sandbox::{CellOutcome, SandboxError, Session};

/// Arguments of `execute_python`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecuteArgs {
    /// Python code to run in the persistent sandbox.
    pub code: String,
}

/// Arguments of `finish`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishArgs {
    /// What was done, and where the outputs are.
    #[serde(default)]
    pub summary: String,
}

/// Arguments of `inspect_data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArgs {
    /// The file, as listed (e.g. `data/roads.shp`).
    pub path: String,
}

/// Arguments of `list_files` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {}

/// The code of an `execute_python` call (`None` for other tools, or
/// arguments that do not parse).
pub fn code_of(name: &str, arguments: &str) -> Option<String> {
    (name == "execute_python").then(|| serde_json::from_str::<ExecuteArgs>(arguments).ok()).flatten().map(|a| a.code)
}

/// The summary of a `finish` or `step_done` call (empty if unreadable).
pub fn summary_of(arguments: &str) -> String {
    serde_json::from_str::<FinishArgs>(arguments).map(|a| a.summary).unwrap_or_default()
}

/// The observation for a call whose arguments could not be read.
pub fn malformed_reply(reason: &str) -> String {
    format!("{reason} Send the call again with valid JSON arguments.")
}

/// The JSON Schema of a tool's arguments, without the `$schema` and `title`
/// noise models do not need.
pub fn schema<T: JsonSchema>() -> serde_json::Value {
    let mut value = serde_json::to_value(schemars::schema_for!(T)).expect("schema serialises");
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}

/// The tools offered to the model.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "list_files".into(),
            description: "List every file of the task's input data (nested folders flattened, exact names and sizes).".into(),
            parameters: schema::<ListFilesArgs>(),
        },
        ToolSpec {
            name: "inspect_data".into(),
            description: "Describe one data file natively (GDAL): layers, geometry type, CRS, fields and types, sample rows; raster size, bands, dtype, nodata, pixel size, min/max; table columns; NetCDF variables.".into(),
            parameters: schema::<InspectArgs>(),
        },
        ToolSpec {
            name: "execute_python".into(),
            description: "Run Python in the persistent GIS sandbox; returns stdout, errors and new variables.".into(),
            parameters: schema::<ExecuteArgs>(),
        },
        ToolSpec {
            name: "finish".into(),
            description: "End the task once every required output exists under pred_results/.".into(),
            parameters: schema::<FinishArgs>(),
        },
    ]
}

/// What a tool call did.
#[derive(Debug)]
pub struct ToolResult {
    /// The observation text for the model.
    pub text: String,
    /// The cell, for `execute_python`.
    pub cell: Option<CellOutcome>,
    /// True when `finish` was accepted.
    pub finished: bool,
    /// The summary given to an accepted `finish`.
    pub summary: Option<String>,
}

impl ToolResult {
    fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            cell: None,
            finished: false,
            summary: None,
        }
    }
}

/// Declared outputs that do not exist (or are empty) in `workdir`.
pub fn missing_outputs(workdir: &Path, outputs: &[String]) -> Vec<String> {
    output_status(workdir, outputs)
        .into_iter()
        .filter(|o| !o.exists)
        .map(|o| o.path)
        .collect()
}

/// Runs one tool call.
pub struct Toolbox<'a> {
    /// The sandbox session.
    pub session: &'a mut Session,
    /// The data folder listed by `list_files`.
    pub data_dir: Option<PathBuf>,
    /// How the data folder is named in the work dir.
    pub data_path: String,
    /// Declared outputs, checked by `finish`.
    pub outputs: Vec<String>,
}

impl Toolbox<'_> {
    /// Dispatches `name(arguments)`. Errors in arguments become observations;
    /// only a failing sandbox is an `Err`.
    pub fn call(&mut self, name: &str, arguments: &str) -> Result<ToolResult, SandboxError> {
        match name {
            "execute_python" => match serde_json::from_str::<ExecuteArgs>(arguments) {
                Ok(args) => {
                    let outcome = self.session.execute(&args.code)?;
                    Ok(ToolResult {
                        text: observation::render(&outcome),
                        cell: Some(outcome),
                        finished: false,
                        summary: None,
                    })
                }
                Err(e) => Ok(ToolResult::text(format!(
                    "execute_python needs {{\"code\": \"...\"}}: {e}. Send the call again with the code as a string."
                ))),
            },
            "list_files" => Ok(ToolResult::text(super::prompt::data_listing(
                self.data_dir.as_deref(),
                &self.data_path,
            ))),
            "inspect_data" => Ok(ToolResult::text(match (serde_json::from_str::<InspectArgs>(arguments), &self.data_dir) {
                (Err(e), _) => format!("inspect_data needs {{\"path\": \"data/FILE\"}}: {e}"),
                (Ok(_), None) => "This task has no input data folder.".to_string(),
                (Ok(args), Some(dir)) => match crate::schema::inspect_file(dir, &self.data_path, &args.path) {
                    Ok(text) => text,
                    Err(e) => format!("{e}. Call list_files for the exact names."),
                },
            })),
            "finish" => {
                let summary = summary_of(arguments);
                let missing = missing_outputs(self.session.workdir(), &self.outputs);
                if missing.is_empty() {
                    Ok(ToolResult {
                        text: "Finished.".into(),
                        cell: None,
                        finished: true,
                        summary: Some(summary),
                    })
                } else {
                    Ok(ToolResult::text(format!(
                        "finish refused: these required outputs do not exist yet (or are empty): {}. Create them, then call finish again.",
                        missing.join(", ")
                    )))
                }
            }
            other => Ok(ToolResult::text(format!(
                "There is no tool named `{other}`. The tools are list_files, inspect_data, execute_python and finish."
            ))),
        }
    }
}
