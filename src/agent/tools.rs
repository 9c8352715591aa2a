//! The tools the model may call, their JSON Schemas, and their dispatch onto
//! the sandbox session.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::summary::output_status;
use crate::knowledge::search::WrongApi;
use crate::llm::ToolSpec;
use crate::llm::EXECUTE_PYTHON;
use crate::observation;
use crate::outputs::sanity::{OutputChecks, Snapshot};
use crate::sandbox::{CellOutcome, CellStatus, SandboxError, Session};

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

/// Arguments of `decline`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeclineArgs {
    /// Why the data cannot answer the task: what is missing (a layer,
    /// column, period) or cannot be known (a CRS), or what the request
    /// contradicts, naming the files.
    pub reason: String,
}

/// The `decline` tool: ends the run without outputs, with the reason.
pub fn decline_spec() -> ToolSpec {
    ToolSpec {
        name: "decline".into(),
        description: "Decline the task when the data cannot answer it (a layer, column or period it needs is absent, the CRS cannot be known, or the request contradicts itself): ends the run with your reason and no outputs. Inventing values is worse than declining; declining a task the data can answer is wrong too.".into(),
        parameters: schema::<DeclineArgs>(),
    }
}

/// The reason of a `decline` call, when its arguments hold one.
pub fn decline_reason(arguments: &str) -> Option<String> {
    serde_json::from_str::<DeclineArgs>(arguments)
        .ok()
        .and_then(|a| reason_in(&a.reason))
}

/// `text` trimmed, when it can be a reason: it says something (a letter
/// or a digit), not only blanks or punctuation (`,`, `…`), which a small
/// model can emit where a reason belongs.
pub fn reason_in(text: &str) -> Option<String> {
    let text = text.trim();
    text.chars()
        .any(char::is_alphanumeric)
        .then(|| text.to_string())
}

/// Arguments of `inspect_data` (the agent's and MCP's alike).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InspectArgs {
    /// One file, as listed (e.g. `data/roads.shp`, or `data/a.zip/b.shp` for an archive member). Leave it out for the schema card of the whole data folder.
    #[serde(default)]
    pub path: Option<String>,
}

/// Arguments of `search_docs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDocsArgs {
    /// What you want to do, or the API name you are unsure of (e.g.
    /// "burn polygons into a raster", "GeoDataFrame.to_crs").
    pub query: String,
}

/// Hits appended to an observation whose error is a wrong API.
pub const API_HITS: usize = 3;

/// The API an observation's error says does not exist or was called
/// wrongly (no such attribute or name, an unexpected keyword, a container
/// protocol the object lacks), as the error names it (`module
/// 'rasterio.features' has no attribute 'rasterise'` → `rasterio.features`
/// / `rasterise`; see [`WrongApi::parse`]).
pub fn api_error(observation: &str) -> Option<WrongApi> {
    WrongApi::parse(observation::error_line(observation))
}

/// Hits `search_docs` returns.
pub const DOC_HITS: usize = 5;

/// The `search_docs` tool, offered when a run has the library-docs index.
pub fn search_docs_spec() -> ToolSpec {
    ToolSpec {
        name: "search_docs".into(),
        description: "Search the documentation of the installed GIS libraries (geopandas, rasterio, shapely, pyproj, scipy, scikit-learn, PySAL, xarray, matplotlib, gisclaw's helpers): exact signatures and docstrings of the best-matching functions, classes and methods.".into(),
        parameters: schema::<SearchDocsArgs>(),
    }
}

/// Arguments of `list_files` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {}

/// The code of an `execute_python` call (`None` for other tools, or
/// arguments that do not parse).
pub fn code_of(name: &str, arguments: &str) -> Option<String> {
    (name == EXECUTE_PYTHON)
        .then(|| serde_json::from_str::<ExecuteArgs>(arguments).ok())
        .flatten()
        .map(|a| a.code)
}

/// The summary of a `finish` or `step_done` call (empty if unreadable).
pub fn summary_of(arguments: &str) -> String {
    serde_json::from_str::<FinishArgs>(arguments)
        .map(|a| a.summary)
        .unwrap_or_default()
}

/// The observation for a call whose arguments could not be read.
pub fn malformed_reply(reason: &str) -> String {
    format!("{reason} Send the call again with valid JSON arguments.")
}

/// The JSON Schema of a tool's arguments, without the `$schema` and `title`
/// noise models do not need.
pub fn schema<T: JsonSchema>() -> serde_json::Value {
    // A derived schema always serialises; Null would only be a bug's trace.
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
    }
    value
}

/// The tools offered to a run: [`specs`], and `search_docs` when it has the
/// library docs.
pub fn offered(docs: bool) -> Vec<ToolSpec> {
    let mut all = specs();
    if docs {
        all.push(search_docs_spec());
    }
    all
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
            description: "Describe one data file natively (without a path: the schema card of the whole data folder): layers, geometry type, CRS, fields and types, sample rows; raster size, bands, dtype, nodata, pixel size, min/max; table columns and which hold coordinates; GeoParquet metadata; NetCDF variables; an archive's members, or one member (data/a.zip/b.shp).".into(),
            parameters: schema::<InspectArgs>(),
        },
        ToolSpec {
            name: EXECUTE_PYTHON.into(),
            description: "Run Python in the persistent GIS sandbox; returns stdout, errors and new variables.".into(),
            parameters: schema::<ExecuteArgs>(),
        },
        ToolSpec {
            name: "finish".into(),
            description: "End the task once every required output exists under pred_results/.".into(),
            parameters: schema::<FinishArgs>(),
        },
        decline_spec(),
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
    /// The reason of a `decline`: the run ends without outputs.
    pub declined: Option<String>,
    /// Image files the cell wrote under `pred_results/`: shown in the
    /// terminal, to an MCP client, and to the model with [`Toolbox::vision`].
    pub images: Vec<PathBuf>,
    /// Files the cell created or changed under `pred_results/`, relative
    /// to it (sidecars left out), for the transcript and the notebook.
    pub written: Vec<String>,
    /// The call was not carried out: bad arguments, an unknown tool or
    /// file, a refused `finish` (its text says why).
    pub refused: bool,
}

impl ToolResult {
    fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            cell: None,
            finished: false,
            summary: None,
            declined: None,
            images: Vec::new(),
            written: Vec::new(),
            refused: false,
        }
    }

    /// A call not carried out, with why.
    fn refusal(text: impl Into<String>) -> ToolResult {
        ToolResult {
            refused: true,
            ..ToolResult::text(text)
        }
    }
}

/// Declared outputs that are not real files in `out`'s `pred_results/`:
/// missing, empty, or refused (a symlink, or a path leading outside
/// `pred_results/`), each with the reason.
pub fn missing_outputs(out: &Path, outputs: &[String]) -> Vec<String> {
    output_status(out, outputs)
        .into_iter()
        .filter(|o| !o.exists)
        .map(|o| match o.refused {
            Some(why) => format!("{} ({why})", o.path),
            None => o.path,
        })
        .collect()
}

/// Runs one tool call.
pub struct Toolbox<'a> {
    /// The sandbox session.
    pub session: &'a mut Session,
    /// The run's folder holding `pred_results/` (checked by `finish`).
    pub out_dir: PathBuf,
    /// The data folder listed by `list_files`.
    pub data_dir: Option<PathBuf>,
    /// How the data folder is named in the work dir.
    pub data_path: String,
    /// Declared outputs, checked by `finish`.
    pub outputs: Vec<String>,
    /// The library-docs index behind `search_docs` (`--rag`).
    pub docs: Option<&'a crate::knowledge::Library>,
    /// The output checks (`None` with `--no-output-checks`): warnings after
    /// a cell that wrote under `pred_results/`, and one refused `finish`.
    pub checks: Option<OutputChecks>,
    /// Show the model the images a cell writes (vision feedback;
    /// `--no-vision-feedback` clears it).
    pub vision: bool,
}

impl Toolbox<'_> {
    /// The tools this toolbox offers (see [`offered`]).
    pub fn offered(&self) -> Vec<ToolSpec> {
        offered(self.docs.is_some())
    }

    /// Runs `code` in the session; its outcome and the files it created or
    /// changed under `pred_results/` (relative to it, sidecars left out).
    pub fn execute_watching(
        &mut self,
        code: &str,
    ) -> Result<(CellOutcome, Vec<String>), SandboxError> {
        let pred = self.out_dir.join("pred_results");
        let before = Snapshot::of(&pred);
        let outcome = self.session.execute(code)?;
        Ok((outcome, Snapshot::of(&pred).changed_since(&before)))
    }

    /// Dispatches `name(arguments)`. Errors in arguments become observations;
    /// only a failing sandbox is an `Err`.
    pub fn call(&mut self, name: &str, arguments: &str) -> Result<ToolResult, SandboxError> {
        match name {
            EXECUTE_PYTHON => match serde_json::from_str::<ExecuteArgs>(arguments) {
                Ok(args) => {
                    let pred = self.out_dir.join("pred_results");
                    let (outcome, written) = self.execute_watching(&args.code)?;
                    let mut text = observation::render(&outcome);
                    if let Some(checks) = &mut self.checks {
                        for line in checks.after_cell(&pred, &written, &outcome.result.saved_figures) {
                            text.push_str(&format!("[output check] {line}\n"));
                        }
                    }
                    if outcome.status != CellStatus::Ok && !outcome.refused {
                        // Advisory: the findings only explain a cell that
                        // failed, so the analyser runs only then (it costs
                        // a worker round trip of tens of ms) and can never
                        // block correct code.
                        let findings = self.session.analyse(&args.code).unwrap_or_else(|e| {
                            tracing::debug!("static analysis unavailable: {e}");
                            Vec::new()
                        });
                        // A finding whose advice the error already gives
                        // (a refused import names its alternative) is left out.
                        let error = observation::error_line(&text).to_string();
                        let findings: Vec<_> = findings
                            .into_iter()
                            .filter(|f| !observation::repeats_error(&f.message, &error))
                            .collect();
                        text.push_str(&observation::render_findings(&findings));
                    }
                    if let (Some(docs), Some(wrong)) = (self.docs, api_error(&text)) {
                        // GeoAgent §3.2: a hallucinated API gets its real documentation.
                        let hits = docs.for_wrong_api(&wrong, API_HITS);
                        let query = wrong.to_string();
                        text.push_str(&format!("\n[library docs for `{query}`]\n{}", crate::knowledge::search::render_hits(&query, &hits)));
                    }
                    let images = written
                        .iter()
                        .filter(|rel| {
                            crate::outputs::kind_of(Path::new(rel))
                                == crate::outputs::OutputKind::Image
                        })
                        .map(|rel| pred.join(rel))
                        .collect();
                    Ok(ToolResult {
                        text,
                        cell: Some(outcome),
                        finished: false,
                        summary: None,
                        declined: None,
                        images,
                        written,
                        refused: false,
                    })
                }
                Err(e) => Ok(ToolResult::refusal(format!(
                    "execute_python needs {{\"code\": \"...\"}}: {e}. Send the call again with the code as a string."
                ))),
            },
            "list_files" => Ok(ToolResult::text(super::prompt::data_listing(
                self.data_dir.as_deref(),
                &self.data_path,
            ))),
            "inspect_data" => Ok(match (serde_json::from_str::<InspectArgs>(arguments), &self.data_dir) {
                (Err(e), _) => ToolResult::refusal(format!("inspect_data takes {{\"path\": \"data/FILE\"}} (or no path, for the whole folder): {e}")),
                (Ok(_), None) => ToolResult::refusal("This task has no input data folder."),
                (Ok(InspectArgs { path: None }), Some(dir)) => ToolResult::text(crate::card::checked_card(dir, &self.data_path, crate::card::CARD_TOKEN_BUDGET, self.session)),
                (Ok(InspectArgs { path: Some(path) }), Some(dir)) => match crate::card::checked_inspect(dir, &self.data_path, &path, self.session) {
                    Ok(dataset) => ToolResult::text(dataset.text()),
                    Err(e) => ToolResult::refusal(format!("{e}. Call list_files for the exact names.")),
                },
            }),
            "search_docs" => Ok(ToolResult::text(match (serde_json::from_str::<SearchDocsArgs>(arguments), self.docs) {
                (_, None) => "search_docs is not available in this run (it needs --rag).".to_string(),
                (Err(e), _) => format!("search_docs needs {{\"query\": \"...\"}}: {e}."),
                (Ok(args), Some(docs)) => docs.render(&args.query, DOC_HITS),
            })),
            "finish" => {
                let summary = summary_of(arguments);
                let missing = missing_outputs(&self.out_dir, &self.outputs);
                let pred = self.out_dir.join("pred_results");
                let refused = match &mut self.checks {
                    Some(checks) if missing.is_empty() => checks.at_finish(&pred),
                    _ => None,
                };
                if let Some(text) = refused {
                    Ok(ToolResult::refusal(text))
                } else if missing.is_empty() {
                    Ok(ToolResult {
                        finished: true,
                        summary: Some(summary),
                        ..ToolResult::text("Finished.")
                    })
                } else {
                    Ok(ToolResult::refusal(format!(
                        "finish refused: these required outputs do not exist yet (or are empty, or are not plain files inside pred_results/): {}. Create them as files in pred_results/, then call finish again.",
                        missing.join(", ")
                    )))
                }
            }
            "decline" => Ok(match decline_reason(arguments) {
                Some(reason) => ToolResult {
                    declined: Some(reason),
                    ..ToolResult::text("Declined.")
                },
                None => ToolResult::refusal(
                    "decline needs {\"reason\": \"...\"}: say what the data lack or what the request contradicts, naming the files.",
                ),
            }),
            other => Ok(ToolResult::refusal(format!(
                "There is no tool named `{other}`. The tools are list_files, inspect_data, execute_python, finish and decline."
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{api_error, decline_reason};
    use crate::knowledge::search::WrongApi;

    #[test]
    fn a_decline_needs_a_reason_that_says_something() {
        assert_eq!(
            decline_reason(r#"{"reason": " no 2020 layer in data/ "}"#).as_deref(),
            Some("no 2020 layer in data/")
        );
        // What a 135M model sent in a tree search: punctuation, no reason.
        for empty in [
            r#"{"reason": ","}"#,
            r#"{"reason": " … "}"#,
            r#"{"reason": ""}"#,
            "{}",
        ] {
            assert_eq!(decline_reason(empty), None, "{empty}");
        }
    }

    #[test]
    fn wrong_apis_are_recognised_in_an_observation() {
        let missing = |owner: &str, name: &str| {
            Some(WrongApi::Missing {
                owner: owner.into(),
                name: name.into(),
            })
        };
        let obs = "Traceback (most recent call last):\n  File \"<cell>\", line 2\nAttributeError: module 'rasterio.features' has no attribute 'rasterise'\n";
        assert_eq!(api_error(obs), missing("rasterio.features", "rasterise"));
        let obs = "TypeError: sjoin() got an unexpected keyword argument 'op'";
        assert_eq!(
            api_error(obs),
            Some(WrongApi::Keyword {
                function: "sjoin".into(),
                keyword: "op".into()
            })
        );
        let obs = "TypeError: Transformer.transform() got an unexpected keyword argument 'x'";
        assert_eq!(
            api_error(obs),
            Some(WrongApi::Keyword {
                function: "Transformer.transform".into(),
                keyword: "x".into()
            })
        );
        let obs = "ImportError: cannot import name 'rasterise' from 'rasterio.features' (/venv/rasterio/features.py)";
        assert_eq!(api_error(obs), missing("rasterio.features", "rasterise"));
        assert_eq!(
            api_error("AttributeError: 'GeoDataFrame' object has no attribute 'to_epsg'"),
            missing("GeoDataFrame", "to_epsg")
        );
        assert_eq!(
            api_error("[error]\nTypeError: 'MultiPolygon' object is not iterable\n"),
            missing("MultiPolygon", "__iter__")
        );
        assert_eq!(
            api_error("TypeError: 'MultiLineString' object is not subscriptable"),
            missing("MultiLineString", "__getitem__")
        );
        assert_eq!(
            api_error("TypeError: object of type 'MultiPoint' has no len()"),
            missing("MultiPoint", "__len__")
        );
        // Other failures are not an API question.
        assert_eq!(api_error("TypeError: 'NoneType' object is not"), None);
        assert_eq!(api_error("ZeroDivisionError: division by zero"), None);
        assert_eq!(api_error("KeyError: 'NAME'"), None);
    }
}
