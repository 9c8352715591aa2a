//! `gisclaw eval report DIR…`: which report a set of eval folders gets
//! and where it is written. One folder of a unit, GeoJSEval or step suite
//! gets its own kind's report; several folders of one of those kinds are
//! compared side by side; any other folder (or several) goes to the task
//! report, which pools runs only when they were made from the same task,
//! data and model. Every kind writes `report.md`, `tables/` and, on
//! request, `report.html`.

use std::path::{Path, PathBuf};

use crate::bench::SuiteKind;
use crate::eval::reports::step::{self, StepFolder, StepSummary};
use crate::eval::reports::task::{self, EvalData, Report, Weights};
use crate::eval::reports::unit::{self, UnitModel, UnitRanks, UnitSummary};
use crate::eval::running::runner::Manifest;

/// What `eval report` was asked.
#[derive(Debug, Clone)]
pub struct RenderRequest<'a> {
    /// The eval folders.
    pub dirs: &'a [PathBuf],
    /// Where to write (the first folder when `None`).
    pub out: Option<&'a Path>,
    /// The composite's weights (task suites).
    pub weights: Weights,
    /// Also write `report.html`.
    pub html: bool,
    /// Pool task-suite runs made from different tasks, data or models.
    pub mixed_provenance: bool,
    /// Compare folders that ran under different protocols.
    pub mixed_protocols: bool,
}

/// The report written, with the figures a caller prints.
#[derive(Debug)]
pub enum Rendered {
    /// A task suite's report (one folder or several pooled).
    Tasks(Box<Report>),
    /// One unit or GeoJSEval folder.
    Unit {
        /// Its figures.
        summary: Box<UnitSummary>,
        /// `unit` or `geojs`.
        kind: SuiteKind,
    },
    /// Several unit or GeoJSEval folders side by side: (model, figures,
    /// ranks) each.
    Units(Vec<(String, UnitSummary, UnitRanks)>),
    /// One step-suite folder.
    Steps(Box<StepSummary>),
    /// Several step-suite folders side by side: (label, figures) each.
    StepsCompared(Vec<(String, StepSummary)>),
}

/// Why no report was written.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The folders cannot make one report (a bad folder, kinds mixed,
    /// runs that cannot be pooled): the caller's mistake.
    #[error("{0}")]
    Folders(String),
    /// The report could not be written.
    #[error("writing the report into {}: {source}", out.display())]
    Write {
        /// The report's folder.
        out: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// Writes the report of `request.dirs` and returns what it holds.
pub fn render(request: &RenderRequest) -> Result<Rendered, RenderError> {
    let dirs = request.dirs;
    let Some(first) = dirs.first() else {
        return Err(RenderError::Folders("eval report: no folder given".into()));
    };
    let out = request.out.unwrap_or(first).to_path_buf();
    let written = |source| RenderError::Write {
        out: out.clone(),
        source,
    };
    let manifests: Vec<Option<Manifest>> = dirs
        .iter()
        .map(|d| {
            d.join("eval.json")
                .is_file()
                .then(|| Manifest::read(d))
                .transpose()
        })
        .collect::<Result<_, _>>()
        .map_err(|e| RenderError::Folders(e.to_string()))?;
    let kind = folders_kind(&manifests)?;
    if !request.mixed_protocols {
        let protocols: Vec<(String, crate::protocol::Protocol)> = dirs
            .iter()
            .zip(&manifests)
            .map(|(d, m)| {
                let protocol = m.as_ref().map(|m| m.protocol).unwrap_or_default();
                (d.display().to_string(), protocol)
            })
            .collect();
        if let Some(line) = crate::protocol::mixed(&protocols) {
            return Err(RenderError::Folders(line));
        }
    }
    if kind != SuiteKind::Tasks {
        std::fs::create_dir_all(&out).map_err(written)?;
    }
    let manifests: Vec<Manifest> = manifests.into_iter().flatten().collect();
    match (kind, manifests.as_slice()) {
        (SuiteKind::Tasks, _) => tasks(request, &out),
        (SuiteKind::Steps, [manifest]) => {
            let records =
                step::load_records(first).map_err(|e| RenderError::Folders(e.to_string()))?;
            let summary = step::write_report(
                &records,
                &manifest.condition(),
                manifest.protocol,
                &out,
                request.html,
            )
            .map_err(written)?;
            Ok(Rendered::Steps(Box::new(summary)))
        }
        (SuiteKind::Steps, _) => {
            let folders = step_folders(dirs, manifests)?;
            let summaries =
                step::write_comparison(&folders, &out, request.html).map_err(written)?;
            Ok(Rendered::StepsCompared(
                folders
                    .into_iter()
                    .map(|f| f.label)
                    .zip(summaries)
                    .collect(),
            ))
        }
        (kind, [manifest]) => {
            let records =
                unit::load_records(first).map_err(|e| RenderError::Folders(e.to_string()))?;
            let summary = unit::write_report(
                &records,
                &manifest.backend,
                manifest.temperature,
                (kind.name(), manifest.protocol),
                &out,
                request.html,
            )
            .map_err(written)?;
            Ok(Rendered::Unit {
                summary: Box::new(summary),
                kind,
            })
        }
        (_, _) => {
            let models = unit_models(dirs, manifests)?;
            let ranked = unit::write_comparison(&models, &out, request.html).map_err(written)?;
            Ok(Rendered::Units(
                models
                    .into_iter()
                    .zip(ranked)
                    .map(|(m, (s, r))| (m.label, s, r))
                    .collect(),
            ))
        }
    }
}

/// The one suite kind of the folders: a unit, GeoJSEval or step kind when
/// every folder is of it, the task kind when none is of those (a folder
/// without `eval.json` is left to the task report to refuse).
fn folders_kind(manifests: &[Option<Manifest>]) -> Result<SuiteKind, RenderError> {
    for kind in [SuiteKind::Steps, SuiteKind::Unit, SuiteKind::Geojs] {
        let n = manifests
            .iter()
            .filter(|m| m.as_ref().is_some_and(|m| m.kind == kind))
            .count();
        if n > 0 && n < manifests.len() {
            let kind = kind.name();
            return Err(RenderError::Folders(format!(
                "eval report: {kind}-suite folders can only be compared with other {kind}-suite folders"
            )));
        }
        if n > 0 {
            return Ok(kind);
        }
    }
    Ok(SuiteKind::Tasks)
}

/// The task suite's report of every folder, pooled.
fn tasks(request: &RenderRequest, out: &Path) -> Result<Rendered, RenderError> {
    let evals: Vec<EvalData> = request
        .dirs
        .iter()
        .map(|d| EvalData::load(d).map_err(|e| RenderError::Folders(e.to_string())))
        .collect::<Result<_, _>>()?;
    if !request.mixed_provenance {
        task::pooling::check_poolable(&evals).map_err(RenderError::Folders)?;
    }
    let report = task::build(&evals, request.weights);
    task::write(&report, out, request.html.then_some(evals.as_slice())).map_err(|source| {
        RenderError::Write {
            out: out.to_path_buf(),
            source,
        }
    })?;
    Ok(Rendered::Tasks(Box::new(report)))
}

/// The step folders of a comparison, each labelled by its manifest.
fn step_folders(
    dirs: &[PathBuf],
    manifests: Vec<Manifest>,
) -> Result<Vec<StepFolder>, RenderError> {
    dirs.iter()
        .zip(manifests)
        .map(|(d, m)| {
            Ok(StepFolder {
                label: m.condition(),
                suite: m
                    .suite
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                alone: m.archs.contains(&crate::agent::run::Arch::None),
                search: m.archs.contains(&crate::agent::run::Arch::Mcts),
                gold_prefix: m.gold_prefix,
                interventions: m.interventions,
                backend: m.backend,
                records: step::load_records(d).map_err(|e| RenderError::Folders(e.to_string()))?,
            })
        })
        .collect()
}

/// The unit or GeoJSEval models of a comparison.
fn unit_models(dirs: &[PathBuf], manifests: Vec<Manifest>) -> Result<Vec<UnitModel>, RenderError> {
    dirs.iter()
        .zip(manifests)
        .map(|(d, m)| {
            Ok(UnitModel {
                geojs: m.kind == SuiteKind::Geojs,
                label: m.backend,
                temperature: m.temperature,
                records: unit::load_records(d).map_err(|e| RenderError::Folders(e.to_string()))?,
            })
        })
        .collect()
}
