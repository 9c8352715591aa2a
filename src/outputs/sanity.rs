//! Output sanity checks: after a cell writes under `pred_results/`, each new
//! or changed file is looked inside (natively, a few milliseconds) and what
//! looks wrong is said in that cell's observation as short warnings the
//! model can act on — GISclaw's paper found many failed runs *did* write
//! their outputs (a blank map, a raster of NaN, a layer in the wrong place)
//! and finished without looking.
//!
//! - image: tiny, or nearly one colour; with the sandbox's `savefig` facts:
//!   axes that draw no data, no legend or colorbar when the task asks for a
//!   legend (a heuristic, labelled as such);
//! - raster: no CRS (NetCDF aside), every pixel nodata/NaN, constant, an
//!   extent that does not overlap the input data;
//! - vector: no features, empty or invalid geometries, no CRS, a CRS unlike
//!   every input's when the task does not ask for one (lon/lat WGS 84, and
//!   metres from inputs all in degrees, are not unlike), an extent far from
//!   the inputs;
//! - table: no rows, a column empty or NaN in every row.
//!
//! [`OutputChecks`] holds what the inputs say (CRS, extent in degrees) and
//! the `finish` rule: a finish with failing checks is answered once with
//! the warnings; a second finish is accepted and the run records it.

use std::collections::BTreeMap;
use std::path::Path;

use gdal::spatial_ref::{AxisMappingStrategy, CoordTransform, SpatialRef};
use gdal::vector::LayerAccess;
use gdal::{Dataset, GdalOpenFlags};

use super::{kind_of, OutputKind};
use crate::beneath;
use crate::card;
use crate::gdal_io;
use crate::sandbox::FigureFacts;

/// Images narrower or lower than this many pixels are called tiny.
const TINY_PX: usize = 150;

/// An image with this share of its pixels in one colour is nearly uniform.
const UNIFORM_SHARE: f64 = 0.995;

/// Features scanned per layer for empty and invalid geometries.
const SCAN_FEATURES: usize = 5_000;

/// Rows scanned per table for empty columns.
const SCAN_ROWS: usize = 10_000;

/// Input files read for the reference CRS and extent.
const MAX_INPUTS: usize = 50;

/// What the task's inputs say: their CRSs and where they are.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Reference {
    /// The CRS of each input layer or raster (`EPSG:32617`), deduplicated.
    pub crs: Vec<String>,
    /// Whether every input CRS is geographic (degrees).
    pub all_geographic: bool,
    /// The union of the inputs' extents, in degrees (lon/lat).
    pub extent: Option<[f64; 4]>,
    /// The task names a CRS or asks for a reprojection (or there is no task
    /// text, as in chat): a CRS unlike the inputs' is then not warned about.
    pub crs_asked: bool,
    /// The task asks for a legend.
    pub legend_asked: bool,
}

impl Reference {
    /// Reads the inputs under `data_dir` (vector layers and rasters; up to
    /// [`MAX_INPUTS`] files) in a confined reader that sees that folder
    /// alone ([`crate::reader`]), and the task's text.
    pub fn from_inputs(data_dir: Option<&Path>, task_text: &str) -> Reference {
        let Some(dir) = data_dir else {
            return Reference::read_here(None, task_text);
        };
        let request = crate::reader::Request::Reference {
            task_text: task_text.to_string(),
        };
        let read = crate::reader::Root::chosen(dir)
            .and_then(|root| crate::reader::ask::<Reference>(&root, request, card::CARD_TIME));
        match read {
            Ok((reference, _)) => reference,
            Err(why) => {
                tracing::warn!("the inputs' CRS and extent were not read: {why}");
                Reference::read_here(None, task_text)
            }
        }
    }

    /// [`Reference::from_inputs`], in this process: only the confined
    /// reader calls it with a folder.
    pub(crate) fn read_here(data_dir: Option<&Path>, task_text: &str) -> Reference {
        let lower = task_text.to_lowercase();
        let crs_asked = lower.trim().is_empty()
            || [
                "epsg",
                "crs",
                "reproject",
                "project to",
                "projection",
                "coordinate system",
                "utm",
                "wgs",
                "mercator",
            ]
            .iter()
            .any(|w| lower.contains(w));
        let mut reference = Reference {
            all_geographic: true,
            crs_asked,
            legend_asked: lower.contains("legend"),
            ..Reference::default()
        };
        let Some(dir) = data_dir else {
            return reference;
        };
        for (rel, _) in card::entries_under(dir).into_iter().take(MAX_INPUTS) {
            let path = dir.join(&rel);
            let geo = match super::kind_read(&path) {
                OutputKind::Raster => raster_geo(&path),
                OutputKind::Vector => vector_geo(&path),
                _ => Vec::new(),
            };
            for (crs, geographic, extent) in geo {
                reference.all_geographic &= geographic;
                if !reference.crs.contains(&crs) {
                    reference.crs.push(crs);
                }
                if let Some(e) = extent {
                    reference.extent = Some(widened(reference.extent, e));
                }
            }
        }
        reference
    }
}

/// The run's output checks: the reference, and what `finish` was told.
#[derive(Debug, Clone, Default)]
pub struct OutputChecks {
    /// What the inputs and the task say.
    pub reference: Reference,
    /// The warnings a refused `finish` was answered with (once per run).
    pub warned_at_finish: Option<Vec<String>>,
    /// The warnings still failing when the model finished anyway.
    pub finished_with: Vec<String>,
    /// Each file checked so far (its path under `pred_results`), with the
    /// size and change time it had and the warnings found in it: `finish`
    /// reads again only what changed since (reading a map's pixels is
    /// milliseconds).
    checked: std::collections::HashMap<String, (Option<Stamp>, Vec<String>)>,
    /// A reader of `pred_results/` started after the last check, confined
    /// and waiting for the next one (shared by clones; taken by the check
    /// that uses it).
    ready: std::sync::Arc<std::sync::Mutex<Option<crate::reader::Standby>>>,
}

/// CPU time a reader started ahead of a check may spend.
const READY_CPU: std::time::Duration = std::time::Duration::from_secs(600);

/// A file's size and modification time (seconds, nanoseconds).
type Stamp = (u64, (i64, i64));

impl OutputChecks {
    /// Checks against a reference already read (nothing checked yet, no
    /// reader started).
    pub fn with_reference(reference: Reference) -> OutputChecks {
        OutputChecks {
            reference,
            ..OutputChecks::default()
        }
    }

    /// Checks for a run whose inputs are in `data_dir`.
    pub fn new(data_dir: Option<&Path>, task_text: &str) -> OutputChecks {
        OutputChecks {
            reference: Reference::from_inputs(data_dir, task_text),
            ..OutputChecks::default()
        }
    }

    /// Warnings for the files a cell `written` under `pred` (see
    /// [`Snapshot::changed_since`]), one line per file (`pred_results/x.png: …`).
    pub fn after_cell(
        &mut self,
        pred: &Path,
        written: &[String],
        figures: &[FigureFacts],
    ) -> Vec<String> {
        self.lines(pred, written, figures)
    }

    /// Warnings for every file under `pred` (what `finish` looks at).
    pub fn all(&mut self, pred: &Path) -> Vec<String> {
        let listed = Snapshot::of(pred);
        let files: Vec<String> = listed
            .0
            .keys()
            .filter(|rel| !card::is_sidecar(Path::new(rel.as_str())))
            .cloned()
            .collect();
        let mut lines = self.lines(pred, &files, &[]);
        if let Some(why) = listed.1 {
            lines.push(format!("pred_results/: the listing {why}"));
        }
        lines
    }

    /// `finish`: `Some(refusal text)` the first time the outputs fail their
    /// checks; `None` to accept (the checks pass, or the model insists, in
    /// which case [`OutputChecks::finished_with`] records the warnings).
    pub fn at_finish(&mut self, pred: &Path) -> Option<String> {
        let warnings = self.all(pred);
        if warnings.is_empty() {
            return None;
        }
        if self.warned_at_finish.is_none() {
            let text = format!(
                "finish: the outputs look wrong —\n{}\nFix them and call finish again, or call finish again to end with them as they are.",
                warnings.iter().map(|w| format!("- {w}")).collect::<Vec<_>>().join("\n")
            );
            self.warned_at_finish = Some(warnings);
            return Some(text);
        }
        self.finished_with = warnings;
        None
    }

    /// The warning lines of `files` under `pred`, one per file with
    /// warnings. Files unchanged since they were read keep their warnings;
    /// the others are read in one confined reader that sees `pred` alone.
    fn lines(&mut self, pred: &Path, files: &[String], figures: &[FigureFacts]) -> Vec<String> {
        // Only as the cell could (crate::beneath): a link out of the
        // folder, a FIFO or a file the sandbox cannot read is named here and
        // never handed to the reader.
        let mut found: Vec<(String, Result<Option<Stamp>, String>)> = Vec::new();
        for rel in files {
            match beneath::check_under(pred, &pred.join(rel)) {
                Ok(facts) => found.push((rel.clone(), Ok(Some((facts.len, facts.modified))))),
                Err(beneath::Refused::Missing) => {}
                Err(why) => found.push((rel.clone(), Err(why.to_string()))),
            }
        }
        let unread: Vec<String> = found
            .iter()
            .filter(|(rel, stamp)| match (stamp, self.checked.get(rel)) {
                (Ok(stamp), Some((seen, _))) => seen != stamp,
                (Ok(_), None) => true,
                (Err(_), _) => false,
            })
            .map(|(rel, _)| rel.clone())
            .collect();
        let mut failed = None;
        if !unread.is_empty() {
            let ready = self.ready.lock().ok().and_then(|mut r| r.take());
            let read = warnings_in(pred, &unread, &self.reference, ready);
            // The next check's reader, started now on a thread of its own:
            // it confines itself while the next cell runs.
            let (slot, folder) = (self.ready.clone(), pred.to_path_buf());
            std::thread::spawn(move || {
                let Ok(root) = crate::reader::Root::exact(&folder) else {
                    return;
                };
                if let (Ok(standby), Ok(mut ready)) =
                    (crate::reader::Standby::start(&root, READY_CPU), slot.lock())
                {
                    *ready = Some(standby);
                }
            });
            match read {
                Ok(read) => {
                    for (rel, warnings) in unread.iter().zip(read) {
                        let stamp = found
                            .iter()
                            .find(|(r, _)| r == rel)
                            .and_then(|(_, s)| s.clone().ok())
                            .flatten();
                        self.checked.insert(rel.clone(), (stamp, warnings));
                    }
                }
                Err(why) => failed = Some(why),
            }
        }
        found
            .into_iter()
            .filter_map(|(rel, stamp)| {
                let mut warnings = match stamp {
                    Err(why) => vec![why],
                    Ok(_) => match &failed {
                        Some(why) if unread.contains(&rel) => vec![format!("not checked: {why}")],
                        _ => self
                            .checked
                            .get(&rel)
                            .map(|(_, w)| w.clone())
                            .unwrap_or_default(),
                    },
                };
                if kind_of(Path::new(&rel)) == OutputKind::Image {
                    let facts = figures
                        .iter()
                        .find(|f| f.path.ends_with(&format!("/pred_results/{rel}")));
                    warnings.extend(figure_warnings(facts, &self.reference));
                }
                (!warnings.is_empty())
                    .then(|| format!("pred_results/{rel}: {}", warnings.join("; ")))
            })
            .collect()
    }
}

/// The warnings of each of `files` under `pred`, read by one confined
/// reader that sees `pred` alone; `Err` when the reader gave none (not a
/// fact of the files: said, not remembered).
fn warnings_in(
    pred: &Path,
    files: &[String],
    reference: &Reference,
    ready: Option<crate::reader::Standby>,
) -> Result<Vec<Vec<String>>, String> {
    let request = crate::reader::Request::Warnings {
        files: files.to_vec(),
        reference: serde_json::to_value(reference).unwrap_or_default(),
    };
    super::per_file(pred, files.len(), request, ready)
}

/// The warnings of one file under `folder`, in this process: only the
/// confined reader calls it. Pinned, so that what is checked is what the
/// library reads; at most [`super::CHECK_TIME`].
pub(crate) fn warnings_here(folder: &Path, rel: &str, reference: &Reference) -> Vec<String> {
    let pinned = match beneath::pin_under(folder, &folder.join(rel)) {
        Ok(pinned) => pinned,
        Err(beneath::Refused::Missing) => return Vec::new(),
        Err(why) => return vec![why.to_string()],
    };
    let reference = reference.clone();
    beneath::within(super::CHECK_TIME, move || {
        file_warnings(pinned.path(), &reference)
    })
    .unwrap_or_else(|| vec![format!("not read within {} s", super::CHECK_TIME.as_secs())])
}

/// The entries under a folder with their size and modification time, to
/// find what a cell wrote; listed without following links (a link or a
/// FIFO is an entry of its own, named by the checks), within a budget (why
/// the listing stopped early, if it did).
#[derive(Debug, Clone, Default)]
pub struct Snapshot(BTreeMap<String, Stamp>, Option<String>);

impl Snapshot {
    /// The entries under `dir` now (none when it does not exist).
    pub fn of(dir: &Path) -> Snapshot {
        let Ok(folder) = beneath::Dir::open(dir) else {
            return Snapshot::default();
        };
        let walk = folder.walk(beneath::WalkBudget::default());
        Snapshot(
            walk.files
                .into_iter()
                .map(|(rel, entry)| {
                    // A link inside the folder is stamped by its target
                    // (read beneath the folder), so rewriting it is seen.
                    let stamp = match entry.is_link().then(|| folder.check(&rel)) {
                        Some(Ok(target)) => (target.len, target.modified),
                        _ => (entry.len, entry.modified),
                    };
                    (rel.to_string_lossy().into_owned(), stamp)
                })
                .collect(),
            walk.stopped,
        )
    }

    /// Files new or changed since `before`, sidecars left out.
    pub fn changed_since(&self, before: &Snapshot) -> Vec<String> {
        self.0
            .iter()
            .filter(|(rel, now)| before.0.get(*rel) != Some(now))
            .map(|(rel, _)| rel.clone())
            .filter(|rel| !card::is_sidecar(Path::new(rel)))
            .collect()
    }
}

/// The warnings for one output file's content: its pixels, values, rows,
/// CRS and place (empty when it looks fine or cannot be read: whether it
/// exists and reads is `finish`'s output contract). What a saved figure's
/// axes show is [`figure_warnings`].
fn file_warnings(path: &Path, reference: &Reference) -> Vec<String> {
    if card::is_parquet(path) {
        return match card::parquet_rows(path) {
            Ok((0, _)) => vec!["no rows".into()],
            Ok((_, true)) => geoparquet(path, reference),
            _ => Vec::new(),
        };
    }
    match super::kind_read(path) {
        OutputKind::Image => image(path),
        OutputKind::Raster => raster(path, reference),
        OutputKind::Vector => vector(path, reference),
        OutputKind::Table => table(path),
        OutputKind::Text => Vec::new(),
    }
}

fn open(path: &Path, flags: GdalOpenFlags) -> Option<Dataset> {
    gdal_io::open_readonly(path, flags, &[]).ok()
}

fn image(path: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Ok(pixels) = super::image_pixels(path) {
        let (w, h) = (pixels.width, pixels.height);
        if w < TINY_PX || h < TINY_PX {
            warnings.push(format!("a tiny image ({w}×{h} px)"));
        }
        if let Some(share) = majority_share(|| pixels.colours()) {
            if share >= UNIFORM_SHARE {
                warnings.push(format!(
                    "nearly uniform: {:.1} % of the pixels are one colour (an empty map?)",
                    share * 100.0
                ));
            }
        }
    }
    warnings
}

/// What the worker saw of a saved figure (`facts`) that a task would not
/// want: axes that draw nothing, no legend when one is asked for.
fn figure_warnings(facts: Option<&FigureFacts>, reference: &Reference) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(f) = facts {
        if f.axes > 0 && f.empty_axes == f.axes {
            warnings.push(
                "its axes draw no data (nothing plotted: an empty layer, or data outside the view?)"
                    .into(),
            );
        }
        if reference.legend_asked && !f.legend && !f.colorbar {
            warnings
                .push("no legend or colorbar, and the task asks for a legend (heuristic)".into());
        }
    }
    warnings
}

/// The share of the pixels held by the colour most of them have (more than
/// half), `None` when no colour has a majority or there are no pixels. All
/// that matters is whether one colour covers nearly the whole image, so a
/// majority vote (one pass, no table) answers it: when no colour has half
/// the pixels, none has [`UNIFORM_SHARE`] of them.
/// `colours` gives the pixels' colours afresh on each call (two passes).
fn majority_share<I: Iterator<Item = u32>>(colours: impl Fn() -> I) -> Option<f64> {
    let (mut candidate, mut lead) = (0u32, 0usize);
    for colour in colours() {
        if lead == 0 {
            candidate = colour;
        }
        lead = if colour == candidate {
            lead + 1
        } else {
            lead - 1
        };
    }
    let (held, all) = colours().fold((0usize, 0usize), |(held, all), c| {
        (held + usize::from(c == candidate), all + 1)
    });
    (held * 2 > all).then(|| held as f64 / all as f64)
}

fn raster(path: &Path, reference: &Reference) -> Vec<String> {
    let Some(ds) = open(path, GdalOpenFlags::GDAL_OF_RASTER) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let srs = ds.spatial_ref().ok();
    // NetCDF often keeps its coordinates as lat/lon variables instead.
    let netcdf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("nc"));
    if srs.is_none() && !netcdf {
        warnings.push("no CRS".into());
    }
    if let Some((valid, lo, hi)) = band_values(&ds) {
        if valid == 0 {
            warnings.push("every pixel is nodata or NaN".into());
        } else if lo == hi {
            warnings.push(format!(
                "a constant raster (every valid pixel is {})",
                short(lo)
            ));
        }
    }
    if let (Some(srs), Ok(gt)) = (&srs, ds.geo_transform()) {
        let (w, h) = ds.raster_size();
        let xs = [gt[0], gt[0] + gt[1] * w as f64 + gt[2] * h as f64];
        let ys = [gt[3], gt[3] + gt[4] * w as f64 + gt[5] * h as f64];
        let bounds = [
            xs[0].min(xs[1]),
            ys[0].min(ys[1]),
            xs[0].max(xs[1]),
            ys[0].max(ys[1]),
        ];
        warnings.extend(far_from_inputs(srs, bounds, reference));
    }
    warnings
}

/// Valid pixels (not NaN, not nodata), min and max of band 1, read at most
/// 512×512 (nearest-neighbour overview of a bigger raster).
fn band_values(ds: &Dataset) -> Option<(usize, f64, f64)> {
    let band = ds.rasterband(1).ok()?;
    let (w, h) = ds.raster_size();
    // A decimated read of a huge raster touches (and, sparse, fills) nearly
    // every block: not for what a header claims (a cell's sparse
    // 200000×200000 GeoTIFF is a few MB on disk).
    if w.saturating_mul(h) > super::MAX_IMAGE_PIXELS * 10 {
        return None;
    }
    let (bw, bh) = (w.min(512), h.min(512));
    let values = band
        .read_as::<f64>((0, 0), (w, h), (bw, bh), None)
        .ok()?
        .into_shape_and_vec()
        .1;
    let nodata = band.no_data_value();
    let (mut valid, mut lo, mut hi) = (0usize, f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        if v.is_nan() || nodata.is_some_and(|nd| v == nd) {
            continue;
        }
        valid += 1;
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Some((valid, lo, hi))
}

fn vector(path: &Path, reference: &Reference) -> Vec<String> {
    let Some(ds) = open(path, GdalOpenFlags::GDAL_OF_VECTOR) else {
        return Vec::new();
    };
    let mut warnings = Vec::new();
    let several = ds.layer_count() > 1;
    for mut layer in ds.layers().take(5) {
        let name = if several {
            format!("layer `{}`: ", layer.name())
        } else {
            String::new()
        };
        if layer.feature_count() == 0 {
            warnings.push(format!("{name}no features"));
            continue;
        }
        let srs = layer.spatial_ref();
        warnings.extend(crs_warning(srs.as_ref(), reference).map(|w| format!("{name}{w}")));
        let mut geometries = GeometryTally::default();
        layer.reset_feature_reading();
        for feature in gdal_io::first_features(&layer, SCAN_FEATURES) {
            geometries.add(feature.geometry());
        }
        warnings.extend(
            geometries
                .warnings()
                .into_iter()
                .map(|w| format!("{name}{w}")),
        );
        if let (Some(srs), Ok(e)) = (&srs, layer.get_extent()) {
            warnings.extend(
                far_from_inputs(srs, [e.MinX, e.MinY, e.MaxX, e.MaxY], reference)
                    .into_iter()
                    .map(|w| format!("{name}{w}")),
            );
        }
    }
    warnings
}

/// `bounds` grown to hold `more` (both `[xmin, ymin, xmax, ymax]`).
fn widened(bounds: Option<[f64; 4]>, more: [f64; 4]) -> [f64; 4] {
    match bounds {
        Some(b) => [
            b[0].min(more[0]),
            b[1].min(more[1]),
            b[2].max(more[2]),
            b[3].max(more[3]),
        ],
        None => more,
    }
}

/// The warning for a vector output's CRS: none, or another than every
/// input's when the task does not ask for one.
fn crs_warning(srs: Option<&SpatialRef>, reference: &Reference) -> Option<String> {
    let Some(s) = srs else {
        return Some("no CRS".into());
    };
    let crs = gdal_io::crs_text(Some(s.clone()));
    // Lon/lat WGS 84 is GeoJSON's own CRS, and projecting degrees to
    // metres is what distances and areas need: neither is a surprise.
    // Another CRS than the inputs' is.
    let expected =
        crs == "EPSG:4326" || crs == "OGC:CRS84" || (s.is_projected() && reference.all_geographic);
    (!reference.crs_asked
        && !expected
        && !reference.crs.is_empty()
        && !reference.crs.contains(&crs))
    .then(|| {
        format!(
            "CRS {crs} differs from every input ({}) and the task does not ask for a reprojection",
            reference.crs.join(", ")
        )
    })
}

/// Empty, missing and invalid geometries among those scanned.
#[derive(Debug, Default)]
struct GeometryTally {
    seen: usize,
    empty: usize,
    invalid: usize,
}

impl GeometryTally {
    fn add(&mut self, geometry: Option<&gdal::vector::Geometry>) {
        self.seen += 1;
        match geometry {
            None => self.empty += 1,
            Some(g) if g.is_empty() => self.empty += 1,
            Some(g) if !g.is_valid() => self.invalid += 1,
            Some(_) => {}
        }
    }

    fn warnings(&self) -> Vec<String> {
        let Self {
            seen,
            empty,
            invalid,
        } = self;
        let mut warnings = Vec::new();
        if *empty > 0 {
            warnings.push(format!("{empty} of {seen} geometries are empty or missing"));
        }
        if *invalid > 0 {
            warnings.push(format!(
                "{invalid} of {seen} geometries are invalid (shapely.make_valid repairs them)"
            ));
        }
        warnings
    }
}

/// A GeoParquet output's warnings, as a vector layer's (read natively:
/// Debian's GDAL has no Parquet driver): its CRS against the inputs', empty
/// and invalid geometries among the first [`SCAN_FEATURES`] of its
/// primary column, and where it lies.
fn geoparquet(path: &Path, reference: &Reference) -> Vec<String> {
    let Ok(rows) = card::read_parquet(path, Some(SCAN_FEATURES)) else {
        return Vec::new();
    };
    let Some(stated) = &rows.crs else {
        return Vec::new();
    };
    let srs = stated.spatial_ref().ok().flatten();
    let mut warnings: Vec<String> = crs_warning(srs.as_ref(), reference).into_iter().collect();
    if rows.unread_encoding.is_some() {
        return warnings;
    }
    let mut tally = GeometryTally::default();
    let mut bounds: Option<[f64; 4]> = None;
    for geometry in &rows.geometries {
        if let Some(g) = geometry.as_ref().filter(|g| !g.is_empty()) {
            let e = g.envelope();
            bounds = Some(widened(bounds, [e.MinX, e.MinY, e.MaxX, e.MaxY]));
        }
        tally.add(geometry.as_ref());
    }
    warnings.extend(tally.warnings());
    if let (Some(srs), Some(b)) = (&srs, bounds) {
        warnings.extend(far_from_inputs(srs, b, reference));
    }
    warnings
}

fn table(path: &Path) -> Vec<String> {
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if !is_csv {
        return Vec::new();
    }
    let Ok(ds) =
        gdal_io::open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, &["AUTODETECT_TYPE=NO"])
    else {
        return Vec::new();
    };
    let Some(layer) = ds.layers().next() else {
        return Vec::new();
    };
    let names: Vec<String> = layer.defn().fields().map(|f| f.name()).collect();
    let mut filled = vec![false; names.len()];
    let mut rows = 0usize;
    for feature in gdal_io::first_features(&layer, SCAN_ROWS) {
        rows += 1;
        for (i, seen) in filled.iter_mut().enumerate() {
            if let Ok(Some(v)) = feature.field_as_string(i) {
                let v = v.trim();
                if !v.is_empty()
                    && !v.eq_ignore_ascii_case("nan")
                    && !v.eq_ignore_ascii_case("null")
                {
                    *seen = true;
                }
            }
        }
    }
    if rows == 0 {
        return vec!["a header and no rows".into()];
    }
    let empty: Vec<String> = names
        .iter()
        .zip(&filled)
        .filter(|(_, f)| !**f)
        .map(|(n, _)| format!("`{n}`"))
        .collect();
    if empty.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "column(s) {} empty or NaN in every row{}",
            empty.join(", "),
            if rows >= SCAN_ROWS { " scanned" } else { "" }
        )]
    }
}

/// A warning when `bounds` (in `srs`) do not overlap the inputs' extent,
/// widened by 10 % of its size (at least 0.05°).
fn far_from_inputs(srs: &SpatialRef, bounds: [f64; 4], reference: &Reference) -> Vec<String> {
    let Some(inputs) = reference.extent else {
        return Vec::new();
    };
    let Some(e) = to_degrees(srs, bounds) else {
        return Vec::new();
    };
    let pad_x = ((inputs[2] - inputs[0]) * 0.1).max(0.05);
    let pad_y = ((inputs[3] - inputs[1]) * 0.1).max(0.05);
    let overlaps = e[0] <= inputs[2] + pad_x
        && e[2] >= inputs[0] - pad_x
        && e[1] <= inputs[3] + pad_y
        && e[3] >= inputs[1] - pad_y;
    if overlaps {
        return Vec::new();
    }
    vec![format!(
        "its extent (lon {}…{}, lat {}…{}) does not overlap the input data (lon {}…{}, lat {}…{}): wrong CRS or swapped coordinates?",
        short(e[0]), short(e[2]), short(e[1]), short(e[3]),
        short(inputs[0]), short(inputs[2]), short(inputs[1]), short(inputs[3])
    )]
}

/// `bounds` in `srs` as lon/lat degrees.
fn to_degrees(srs: &SpatialRef, bounds: [f64; 4]) -> Option<[f64; 4]> {
    let mut source = srs.clone();
    source.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    let mut wgs84 = SpatialRef::from_epsg(4326).ok()?;
    wgs84.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    let transform = CoordTransform::new(&source, &wgs84).ok()?;
    let out = transform.transform_bounds(&bounds, 21).ok()?;
    out.iter().all(|v| v.is_finite()).then_some(out)
}

/// The CRS, whether it is geographic, and the lon/lat extent of each layer
/// or the raster of an input.
fn raster_geo(path: &Path) -> Vec<(String, bool, Option<[f64; 4]>)> {
    let Some(ds) = open(path, GdalOpenFlags::GDAL_OF_RASTER) else {
        return Vec::new();
    };
    let Ok(srs) = ds.spatial_ref() else {
        return Vec::new();
    };
    let extent = ds.geo_transform().ok().and_then(|gt| {
        let (w, h) = ds.raster_size();
        let xs = [gt[0], gt[0] + gt[1] * w as f64];
        let ys = [gt[3], gt[3] + gt[5] * h as f64];
        to_degrees(
            &srs,
            [
                xs[0].min(xs[1]),
                ys[0].min(ys[1]),
                xs[0].max(xs[1]),
                ys[0].max(ys[1]),
            ],
        )
    });
    let geographic = srs.is_geographic();
    vec![(gdal_io::crs_text(Some(srs)), geographic, extent)]
}

fn vector_geo(path: &Path) -> Vec<(String, bool, Option<[f64; 4]>)> {
    if card::is_parquet(path) {
        return geoparquet_geo(path);
    }
    if let Some(crs) = card::big_geojson_crs(path) {
        // GDAL reads a big GeoJSON whole to open it (18 s for 1 GB): its
        // CRS is stated before its features, its extent is left unknown.
        return SpatialRef::from_definition(&crs)
            .map(|srs| {
                vec![(
                    gdal_io::crs_text(Some(srs.clone())),
                    srs.is_geographic(),
                    None,
                )]
            })
            .unwrap_or_default();
    }
    let Some(ds) = open(path, GdalOpenFlags::GDAL_OF_VECTOR) else {
        return Vec::new();
    };
    // An extent that needs a scan is computed for files up to 100 MB only.
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() < 100 << 20);
    ds.layers()
        .take(10)
        .filter_map(|layer| {
            let srs = layer.spatial_ref()?;
            let extent = layer
                .try_get_extent()
                .ok()
                .flatten()
                .or_else(|| small.then(|| layer.get_extent().ok()).flatten())
                .and_then(|e| to_degrees(&srs, [e.MinX, e.MinY, e.MaxX, e.MaxY]));
            let geographic = srs.is_geographic();
            Some((gdal_io::crs_text(Some(srs)), geographic, extent))
        })
        .collect()
}

/// A GeoParquet input's CRS and extent in degrees, from its footer.
fn geoparquet_geo(path: &Path) -> Vec<(String, bool, Option<[f64; 4]>)> {
    card::parquet_geo_extents(path)
        .unwrap_or_default()
        .into_iter()
        .take(10)
        .filter_map(|(stated, bbox)| {
            let srs = stated.spatial_ref().ok()??;
            let extent = bbox.and_then(|b| to_degrees(&srs, b));
            Some((
                gdal_io::crs_text(Some(srs.clone())),
                srs.is_geographic(),
                extent,
            ))
        })
        .collect()
}

/// A number for a warning.
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::{majority_share, Snapshot};

    #[test]
    fn a_snapshot_finds_the_files_written_and_never_reads_through_a_link_out() {
        let dir = tempfile::tempdir().unwrap();
        let pred = dir.path().join("pred_results");
        std::fs::create_dir_all(pred.join("maps")).unwrap();
        std::fs::write(pred.join("a.csv"), "x\n1\n").unwrap();
        std::fs::write(dir.path().join("elsewhere.csv"), "y\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere.csv"), pred.join("linked.csv"))
            .unwrap();
        std::os::unix::fs::symlink("a.csv", pred.join("alias.csv")).unwrap();
        // A link back to the folder itself, from inside a subfolder: listed
        // as itself, not followed.
        std::os::unix::fs::symlink("..", pred.join("maps/back")).unwrap();
        let before = Snapshot::of(&pred);
        assert_eq!(
            before.0.keys().cloned().collect::<Vec<_>>(),
            ["a.csv", "alias.csv", "linked.csv", "maps/back"]
        );
        std::fs::write(pred.join("maps/m.png"), "png").unwrap();
        std::fs::write(pred.join("maps/m.png.aux.xml"), "<x/>").unwrap();
        // The outside target grows: not read through the link. The target
        // of a link inside the folder grows: seen through it.
        std::fs::write(dir.path().join("elsewhere.csv"), "y\n2\n").unwrap();
        std::fs::write(pred.join("a.csv"), "x\n1\n2\n").unwrap();
        let after = Snapshot::of(&pred);
        assert_eq!(
            after.changed_since(&before),
            ["a.csv", "alias.csv", "maps/m.png"]
        );
        assert!(Snapshot::of(&dir.path().join("missing")).0.is_empty());
    }

    #[test]
    fn the_majority_colour_and_its_share_are_found_wherever_it_lies() {
        // 996 background pixels with 4 others spread through them, first
        // and last included: the vote must not be misled by where they are.
        let mut pixels = vec![7u32; 1000];
        for (i, at) in [0usize, 1, 500, 999].into_iter().enumerate() {
            pixels[at] = 100 + i as u32;
        }
        let share = |p: &[u32]| majority_share(|| p.iter().copied());
        assert_eq!(share(&pixels), Some(0.996));
        // A colour with exactly half is no majority; an empty image has none.
        let half: Vec<u32> = (0..10)
            .map(|i| if i % 2 == 0 { 1 } else { 100 + i })
            .collect();
        assert_eq!(share(&half), None);
        assert_eq!(share(&[]), None);
        // Many colours, none dominant.
        let varied: Vec<u32> = (0..1000).collect();
        assert_eq!(share(&varied), None);
    }
}
