//! L3: each declared output of a run scored against the gold's, by type, in
//! [0, 1]; a missing or unreadable output scores 0.
//!
//! - **Raster** (GeoTIFF, NetCDF, …): `0.2·shape + 0.2·CRS + 0.3·f(ρ) +
//!   0.3·g(MRE)` (GISclaw §3.3). ρ is the Pearson correlation over cells
//!   valid (finite, not nodata) in both; MRE is Σ|p−g| / Σ|g| over those
//!   cells — the aggregate form, because per-cell ratios explode where the
//!   gold is near 0 (a dNBR or a residual raster). When the shapes differ,
//!   no cell pairs up and f = g = 0. Thresholds: [`f_rho`], [`g_mre`].
//! - **Vector** (GeoParquet too, read natively: WKB or GeoArrow geometries,
//!   the CRS its metadata states): the mean of four parts: feature count (min/max of the two
//!   counts), CRS (same or both absent), column overlap (Jaccard of the
//!   attribute names, case-insensitive) and area-weighted geometry overlap
//!   (IoU of the dissolved geometries, the candidate reprojected to the
//!   gold's CRS; points and lines are buffered by 0.5 % of the gold extent's
//!   diagonal first). Geometry runs through OGR/GEOS — the engine shapely
//!   uses — rather than the `geo` crate, so it agrees with a Python scorer
//!   and adds no dependency.
//! - **Table** (CSV, plain Parquet): the mean of column overlap (Jaccard of the headers),
//!   row count (min/max) and the mean agreement of shared numeric columns —
//!   Pearson ρ (negative counts as 0), or where ρ is undefined (one row, a
//!   constant column) 1 − min(1, relative error); rows pair up through a shared key (a column
//!   unique in both that is text or named like an id: `id`, `geoid`,
//!   `name`, `*_code`…), else by position. With no shared
//!   numeric column the mean is over the other two. Spreadsheets score
//!   the vector parts they have: row count, CRS (none) and column overlap.
//! - **Image** (PNG, …): 0 when blank (≤ [`crate::outputs::MIN_COLOURS`]
//!   colours); otherwise the SSIM of the two images in grey at 256×256 —
//!   a **weak signal** (alternative but correct maps score low), labelled as
//!   such. The paper's vision judge is not built.
//! - **Text** (JSON, TXT, …): 1 for equal JSON values; otherwise ROUGE-L
//!   over whitespace-separated words.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use gdal::errors::GdalError;
use gdal::spatial_ref::{AxisMappingStrategy, SpatialRef};
use gdal::vector::{Geometry, LayerAccess, OGRwkbGeometryType};
use gdal::{Dataset, GdalOpenFlags, Metadata};
use serde::{Deserialize, Serialize};

use crate::bench::judge::{image_metrics, Grid};
use crate::card;
use crate::eval::metrics::code::rouge_l;
use crate::gdal_io;
use crate::outputs::{self, OutputCheck, OutputKind};

/// One output's L3 score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputScore {
    /// The declared path (relative to the work dir).
    pub path: String,
    /// What the output is, by the gold's content (by its name when the
    /// gold could not be read); written by name (`raster`, …).
    #[serde(with = "crate::outputs::kind_by_name")]
    pub kind: OutputKind,
    /// The score by the GISclaw paper's L3 definition (§3.4) where it
    /// differs from ours ([`paper_score`]); `None` in records made before
    /// it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<f64>,
    /// The score in [0, 1].
    pub score: f64,
    /// The parts the score combines (`shape`, `crs`, `rho`, …).
    pub parts: BTreeMap<String, f64>,
    /// True for a weak signal (image SSIM).
    pub weak: bool,
    /// Why the score is what it is, when it is not self-explanatory.
    pub note: String,
}

/// f(ρ): 1 for ρ ≥ 0.99, 0.75 for ≥ 0.9, 0.5 for ≥ 0.7, 0.25 for ≥ 0.5, else 0.
pub fn f_rho(rho: f64) -> f64 {
    match rho {
        r if r >= 0.99 => 1.0,
        r if r >= 0.9 => 0.75,
        r if r >= 0.7 => 0.5,
        r if r >= 0.5 => 0.25,
        _ => 0.0,
    }
}

/// g(MRE): 1 for MRE ≤ 0.01, 0.75 for ≤ 0.05, 0.5 for ≤ 0.15, 0.25 for ≤ 0.3, else 0.
pub fn g_mre(mre: f64) -> f64 {
    match mre {
        m if m <= 0.01 => 1.0,
        m if m <= 0.05 => 0.75,
        m if m <= 0.15 => 0.5,
        m if m <= 0.3 => 0.25,
        _ => 0.0,
    }
}

/// The longest one side's reading for scoring may take.
pub const SUMMARY_TIME: std::time::Duration = std::time::Duration::from_secs(120);

/// The most bytes of a text output compared.
pub const MAX_TEXT_BYTES: u64 = 1 << 20;

/// The most bytes of a CSV output compared (cut at its last whole line).
pub const MAX_TABLE_BYTES: u64 = 64 << 20;

/// The most rows of a table output compared.
pub const MAX_TABLE_ROWS: usize = 1_000_000;

/// The most words per side ROUGE-L (quadratic) runs on; past it the
/// comparison is the linear bag-of-words F1 ([`word_overlap`]).
pub const MAX_ROUGE_WORDS: usize = 5_000;

/// What scoring compares of one output: read by a confined reader that
/// sees only that output's folder ([`crate::reader`]), so that the gold's
/// summary and the candidate's come from two readers and a candidate's file
/// can never make the reader open the gold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Summary {
    /// A raster's bands as f64, invalid cells NaN (the values travel as the
    /// answer's binary part).
    Raster {
        /// Bands, rows, columns.
        shape: (usize, usize, usize),
        /// Its CRS as WKT.
        crs: Option<String>,
        /// The values, row-major per band.
        #[serde(skip)]
        values: Vec<f64>,
    },
    /// A vector file's features, merged over its layers.
    Vector {
        /// Features.
        count: u64,
        /// Attribute names, lower case.
        columns: BTreeSet<String>,
        /// Its CRS as WKT (GIS axis order).
        crs: Option<String>,
        /// Non-empty geometries as WKB, base64-encoded.
        geometries: Vec<String>,
        /// Every geometry is a polygon or multipolygon.
        polygonal: bool,
        /// Read as a spreadsheet (no geometry part in the score).
        sheet: bool,
    },
    /// A CSV or plain Parquet table.
    Table {
        /// Column names, trimmed and lower case.
        columns: Vec<String>,
        /// Rows of fields.
        rows: Vec<Vec<String>>,
    },
    /// An image.
    Image {
        /// Why it counts as blank, when it does.
        blank: Option<String>,
        /// Grey values at 256×256.
        grey: Vec<f64>,
    },
    /// Text (JSON, TXT, …): its first [`MAX_TEXT_BYTES`].
    Text {
        /// The bytes read, as UTF-8 (lossy).
        text: String,
        /// More followed.
        truncated: bool,
    },
    /// Not readable as what it should be.
    Unreadable {
        /// Why.
        why: String,
    },
}

impl Summary {
    /// The output kind it was read as (`None` when unreadable).
    pub fn output_kind(&self) -> Option<OutputKind> {
        Some(match self {
            Summary::Raster { .. } => OutputKind::Raster,
            Summary::Vector { sheet: true, .. } | Summary::Table { .. } => OutputKind::Table,
            Summary::Vector { .. } => OutputKind::Vector,
            Summary::Image { .. } => OutputKind::Image,
            Summary::Text { .. } => OutputKind::Text,
            Summary::Unreadable { .. } => return None,
        })
    }

    /// The kind's name (`raster`, `vector`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Summary::Raster { .. } => "raster",
            Summary::Vector { sheet: true, .. } | Summary::Table { .. } => "table",
            Summary::Vector { .. } => "vector",
            Summary::Image { .. } => "image",
            Summary::Text { .. } => "text",
            Summary::Unreadable { .. } => "unreadable",
        }
    }
}

/// Scores a run's declared output against the gold run's: `declared` is the
/// output's declared path (`pred_results/x.tif`), `gold_run` and
/// `candidate_run` the two runs' folders. Each side is read by its own
/// confined reader, which sees that run's `pred_results/` alone.
pub fn score_output(declared: &str, gold_run: &Path, candidate_run: &Path) -> OutputScore {
    let gold = outputs::declared_root(gold_run, declared);
    let candidate = outputs::declared_root(candidate_run, declared);
    score_in(declared, &gold, &candidate)
}

/// Scores the file `candidate` against the file `gold` (each read by a
/// confined reader that sees its folder alone); `declared` names the
/// output (its extension decides the kind).
pub fn score_files(declared: &str, gold: &Path, candidate: &Path) -> OutputScore {
    let side = |file: &Path| {
        (
            file.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        )
    };
    score_in(declared, &side(gold), &side(candidate))
}

/// Scores `candidate` (a folder and the output's path in it) against
/// `gold` (the same).
fn score_in(
    declared: &str,
    (gold_root, gold_rel): &(std::path::PathBuf, String),
    (candidate_root, rel): &(std::path::PathBuf, String),
) -> OutputScore {
    let by_name = outputs::kind_of(Path::new(declared));
    let mut score = OutputScore {
        path: declared.to_string(),
        kind: by_name,
        paper: Some(0.0),
        score: 0.0,
        parts: BTreeMap::new(),
        weak: by_name == OutputKind::Image,
        note: String::new(),
    };
    // Read only as the cell could (crate::beneath): a link out of its
    // folder, a FIFO or a file the sandbox could not read is not scored.
    match crate::beneath::check_under(candidate_root, &candidate_root.join(rel)) {
        Ok(facts) if facts.len > 0 => {}
        Ok(_) => {
            score.note = "empty file".into();
            return score;
        }
        Err(crate::beneath::Refused::Missing) => {
            score.note = "missing".into();
            return score;
        }
        Err(why) => {
            score.note = why.to_string();
            return score;
        }
    }
    if crate::beneath::check_under(gold_root, &gold_root.join(gold_rel)).is_err() {
        score.note = "the gold output is missing".into();
        return score;
    }
    let gold = summarise(gold_root, gold_rel, declared, None);
    if let Summary::Unreadable { why } = &gold {
        score.note = format!("gold: {why}");
        return score;
    }
    score.kind = gold.output_kind().unwrap_or(by_name);
    score.weak = matches!(gold, Summary::Image { .. });
    let candidate = summarise(candidate_root, rel, declared, Some(gold.kind()));
    match compare(gold, candidate) {
        Ok((value, parts, note)) => {
            score.score = value.clamp(0.0, 1.0);
            score.paper = Some(paper_score(value, &parts).clamp(0.0, 1.0));
            score.parts = parts;
            score.note = note;
        }
        Err(why) => score.note = why.to_string(),
    }
    score
}

/// An output's score by the GISclaw paper's L3 definition (§3.4), from
/// the parts of ours (`value` and `parts`, as [`compare`] made them):
/// - a raster's MRE is the mean of the per-cell relative errors
///   |p − g| / |g| over cells whose gold is not 0 (`mre_cells`), where ours
///   is Σ|p − g| / Σ|g|: 0.2·shape + 0.2·CRS + 0.3·f(ρ) + 0.3·g(MRE);
/// - a vector is compared by feature count, CRS and column overlap alone,
///   their mean (ours adds the geometry overlap as a fourth part);
/// - every other kind (and a raster whose shape differs) is scored as ours.
pub fn paper_score(value: f64, parts: &BTreeMap<String, f64>) -> f64 {
    let part = |name: &str| parts.get(name).copied();
    if let (Some(shape), Some(crs), Some(f), Some(mre)) =
        (part("shape"), part("crs"), part("f_rho"), part("mre_cells"))
    {
        return 0.2 * shape + 0.2 * crs + 0.3 * f + 0.3 * g_mre(mre);
    }
    if let (Some(count), Some(crs), Some(columns), Some(_)) = (
        part("count"),
        part("crs"),
        part("columns"),
        part("geometry"),
    ) {
        return (count + crs + columns) / 3.0;
    }
    value
}

/// One side's summary, from a confined reader that sees `root` alone.
fn summarise(root: &Path, rel: &str, declared: &str, kind: Option<&str>) -> Summary {
    let request = crate::reader::Request::Summary {
        file: rel.to_string(),
        declared: declared.to_string(),
        kind: kind.map(str::to_string),
    };
    let read = crate::reader::Root::exact(root)
        .and_then(|root| crate::reader::ask::<Summary>(&root, request, SUMMARY_TIME));
    match read {
        Ok((summary, binary)) => with_values(summary, &binary),
        Err(why) => Summary::Unreadable {
            why: why.to_string(),
        },
    }
}

/// A raster summary with its values taken from the answer's binary part
/// (which must hold exactly the shape's count).
fn with_values(summary: Summary, binary: &[u8]) -> Summary {
    match summary {
        Summary::Raster { shape, crs, .. } => {
            let count = shape.0.saturating_mul(shape.1).saturating_mul(shape.2);
            if binary.len() != count.saturating_mul(8) {
                return Summary::Unreadable {
                    why: "the reader's raster values do not fit its shape".into(),
                };
            }
            let values = binary
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect();
            Summary::Raster { shape, crs, values }
        }
        other => other,
    }
}

/// Compares the two summaries.
fn compare(gold: Summary, candidate: Summary) -> Scored {
    match (gold, candidate) {
        (_, Summary::Unreadable { why }) => Err(ScoreError::Check(why)),
        (g @ Summary::Raster { .. }, c @ Summary::Raster { .. }) => raster(&g, &c),
        (g @ Summary::Vector { .. }, c @ Summary::Vector { .. }) => {
            let sheet = matches!(g, Summary::Vector { sheet: true, .. });
            vector(g, c).map(|(s, mut p, n)| {
                if sheet {
                    p.remove("geometry");
                }
                (s, p, n)
            })
        }
        (g @ Summary::Table { .. }, c @ Summary::Table { .. }) => table(&g, &c),
        (g @ Summary::Image { .. }, c @ Summary::Image { .. }) => image(&g, &c),
        (
            Summary::Text {
                text: g,
                truncated: gt,
            },
            Summary::Text {
                text: c,
                truncated: ct,
            },
        ) => Ok(text(&g, &c, gt || ct)),
        (g, c) => Err(ScoreError::Check(format!(
            "a {} where the gold is a {}",
            c.kind(),
            g.kind()
        ))),
    }
}

/// [`Summary`] of `file` under `folder`, in this process: only the
/// confined reader calls it. With the raster values as bytes.
pub(crate) fn summarise_here(
    folder: &Path,
    file: &str,
    declared: &str,
    kind: Option<&str>,
) -> (Summary, Vec<u8>) {
    let unreadable = |why: String| (Summary::Unreadable { why }, Vec::new());
    let pinned = match crate::beneath::pin_under(folder, &folder.join(file)) {
        Ok(pinned) => pinned,
        Err(crate::beneath::Refused::Missing) => return unreadable("missing".into()),
        Err(why) => return unreadable(why.to_string()),
    };
    let path = pinned.path();
    let kind = match kind {
        Some("raster") => OutputKind::Raster,
        Some("vector") => OutputKind::Vector,
        Some("table") => OutputKind::Table,
        Some("image") => OutputKind::Image,
        Some("text") => OutputKind::Text,
        _ if card::is_parquet(Path::new(declared)) => outputs::kind_read(path),
        _ => outputs::kind_of(Path::new(declared)),
    };
    let read = match kind {
        OutputKind::Raster => read_raster(path).map(|r| {
            let mut bytes = Vec::with_capacity(r.values.len() * 8);
            for v in &r.values {
                bytes.extend_from_slice(&v.to_le_bytes());
            }
            (
                Summary::Raster {
                    shape: r.shape,
                    crs: r.srs.and_then(|s| s.to_wkt().ok()),
                    values: Vec::new(),
                },
                bytes,
            )
        }),
        OutputKind::Vector => read_vector(path).map(|v| (v.summary(false), Vec::new())),
        OutputKind::Table if is_csv(declared) || card::is_parquet(Path::new(declared)) => {
            Table::read(path).map(|t| {
                (
                    Summary::Table {
                        columns: t.columns,
                        rows: t.rows,
                    },
                    Vec::new(),
                )
            })
        }
        OutputKind::Table => read_vector(path).map(|v| (v.summary(true), Vec::new())),
        OutputKind::Image => image_summary(path).map(|s| (s, Vec::new())),
        OutputKind::Text => read_text(path).map(|s| (s, Vec::new())),
    };
    read.unwrap_or_else(|why| unreadable(why.to_string()))
}

fn is_csv(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// Why an output could not be compared with the gold's (the score's note).
#[derive(Debug, thiserror::Error)]
enum ScoreError {
    /// GDAL cannot open the file as what it should be.
    #[error("not a readable {what}: {}", gdal_io::gdal_reason(source))]
    Unreadable {
        /// `raster`, `vector file`, `image`.
        what: &'static str,
        /// GDAL's reason.
        source: GdalError,
    },
    /// A raster container without a band or subdataset.
    #[error("a raster file with no band")]
    NoBand,
    /// GDAL failed while reading.
    #[error("{}", gdal_io::gdal_reason(.0))]
    Gdal(#[from] GdalError),
    /// The candidate could not be brought into the gold's CRS.
    #[error("reprojecting to the gold CRS: {}", gdal_io::gdal_reason(.0))]
    Reproject(GdalError),
    /// The file cannot be read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// A CSV without even a header.
    #[error("an empty table")]
    EmptyTable,
    /// Two images that cannot be compared.
    #[error("images do not pair up")]
    Unpaired,
    /// The output check could not read the candidate.
    #[error("{0}")]
    Check(String),
    /// A Parquet file that does not parse.
    #[error("not a readable Parquet file: {0}")]
    Parquet(String),
    /// GeoParquet geometries in an encoding the reader does not know.
    #[error("geometries encoded as `{0}` are not read (WKB and GeoArrow's are)")]
    Encoding(String),
    /// The gold's own file failed (the candidate is not at fault).
    #[error("gold: {0}")]
    Gold(Box<ScoreError>),
}

impl ScoreError {
    fn gold(self) -> ScoreError {
        ScoreError::Gold(Box::new(self))
    }

    fn unreadable(what: &'static str) -> impl FnOnce(GdalError) -> ScoreError {
        move |source| ScoreError::Unreadable { what, source }
    }
}

type Scored = Result<(f64, BTreeMap<String, f64>, String), ScoreError>;

/// The named parts of a score; non-finite values (an undefined ρ, an
/// infinite MRE) are left out so that records stay valid JSON numbers.
fn parts(items: &[(&str, f64)]) -> BTreeMap<String, f64> {
    items
        .iter()
        .filter(|(_, v)| v.is_finite())
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
}

// ---------------------------------------------------------------- raster

/// A raster's bands, read as f64 with invalid cells as NaN.
struct RasterData {
    shape: (usize, usize, usize),
    srs: Option<SpatialRef>,
    values: Vec<f64>,
}

fn open_raster(path: &Path) -> Result<Dataset, ScoreError> {
    let ds = gdal_io::open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[])
        .map_err(ScoreError::unreadable("raster"))?;
    if ds.raster_count() > 0 {
        return Ok(ds);
    }
    let first = ds
        .metadata_item("SUBDATASET_1_NAME", "SUBDATASETS")
        .ok_or(ScoreError::NoBand)?;
    Dataset::open(first).map_err(ScoreError::unreadable("raster"))
}

fn read_raster(path: &Path) -> Result<RasterData, ScoreError> {
    let ds = open_raster(path)?;
    let (w, h) = ds.raster_size();
    let count = ds.raster_count();
    // What a header claims is never allocated as it stands: a cell's sparse
    // 200000×200000 GeoTIFF is a few KB on disk.
    const MAX_SCORED_VALUES: usize = 200_000_000;
    if w.saturating_mul(h).saturating_mul(count) > MAX_SCORED_VALUES {
        return Err(ScoreError::Check(format!(
            "a {w}×{h}×{count} raster, more than the {} million values scoring reads",
            MAX_SCORED_VALUES / 1_000_000
        )));
    }
    let mut values = Vec::with_capacity(w * h * count);
    for i in 1..=count {
        let band = ds.rasterband(i)?;
        let nodata = band.no_data_value();
        let buffer = band.read_as::<f64>((0, 0), (w, h), (w, h), None)?;
        values.extend(buffer.data().iter().map(|v| {
            if !v.is_finite() || nodata.is_some_and(|n| n == *v) {
                f64::NAN
            } else {
                *v
            }
        }));
    }
    Ok(RasterData {
        shape: (count, h, w),
        srs: ds.spatial_ref().ok(),
        values,
    })
}

fn same_crs(a: &Option<SpatialRef>, b: &Option<SpatialRef>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        (None, None) => true,
        _ => false,
    }
}

/// Pearson correlation of paired values; for a constant side, 1 when both
/// are the same constant, else 0. NaN for fewer than two pairs.
pub fn pearson(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len() as f64;
    if pairs.len() < 2 {
        return f64::NAN;
    }
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(x, y), (a, b)| (x + a / n, y + b / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in pairs {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        let identical = pairs.iter().all(|(a, b)| a == b);
        return if identical { 1.0 } else { 0.0 };
    }
    (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0)
}

/// A CRS from the WKT a reader stated (GIS axis order when `gis`).
fn srs_of(wkt: &Option<String>, gis: bool) -> Option<SpatialRef> {
    let srs = SpatialRef::from_wkt(wkt.as_deref()?).ok()?;
    Some(if gis { gis_order(srs) } else { srs })
}

fn raster(gold: &Summary, candidate: &Summary) -> Scored {
    let (
        Summary::Raster {
            shape: g_shape,
            crs: g_crs,
            values: g_values,
        },
        Summary::Raster {
            shape: c_shape,
            crs: c_crs,
            values: c_values,
        },
    ) = (gold, candidate)
    else {
        return Err(ScoreError::Check("not two rasters".into()));
    };
    let shape = f64::from(g_shape == c_shape);
    let crs = f64::from(same_crs(&srs_of(g_crs, false), &srs_of(c_crs, false)));
    if shape == 0.0 {
        let s = 0.2 * crs;
        let note = format!("shape {c_shape:?} ≠ gold {g_shape:?}: no cells pair up");
        return Ok((
            s,
            parts(&[("shape", 0.0), ("crs", crs), ("f_rho", 0.0), ("g_mre", 0.0)]),
            note,
        ));
    }
    let pairs: Vec<(f64, f64)> = g_values
        .iter()
        .zip(c_values)
        .filter(|(a, b)| !a.is_nan() && !b.is_nan())
        .map(|(a, b)| (*a, *b))
        .collect();
    let rho = pearson(&pairs);
    let (abs_err, abs_gold) = pairs.iter().fold((0.0, 0.0), |(e, m), (a, b)| {
        (e + (a - b).abs(), m + a.abs())
    });
    let mre = if abs_gold > 0.0 {
        abs_err / abs_gold
    } else if abs_err == 0.0 {
        0.0
    } else {
        f64::INFINITY
    };
    let cells: Vec<f64> = pairs
        .iter()
        .filter(|(g, _)| *g != 0.0)
        .map(|(g, c)| (c - g).abs() / g.abs())
        .collect();
    let mre_cells = if cells.is_empty() {
        mre
    } else {
        cells.iter().sum::<f64>() / cells.len() as f64
    };
    let (f, gm) = (if rho.is_nan() { 0.0 } else { f_rho(rho) }, g_mre(mre));
    let s = 0.2 * shape + 0.2 * crs + 0.3 * f + 0.3 * gm;
    let note = format!("{} valid cell pairs", pairs.len());
    Ok((
        s,
        parts(&[
            ("shape", shape),
            ("crs", crs),
            ("rho", rho),
            ("mre", mre),
            ("mre_cells", mre_cells),
            ("f_rho", f),
            ("g_mre", gm),
        ]),
        note,
    ))
}

// ---------------------------------------------------------------- vector

/// A vector file's features, merged over its layers.
struct VectorData {
    count: u64,
    columns: BTreeSet<String>,
    srs: Option<SpatialRef>,
    geometries: Vec<Geometry>,
    polygonal: bool,
}

impl VectorData {
    fn empty() -> VectorData {
        VectorData {
            count: 0,
            columns: BTreeSet::new(),
            srs: None,
            geometries: Vec::new(),
            polygonal: true,
        }
    }

    /// The summary a reader answers.
    fn summary(self, sheet: bool) -> Summary {
        use base64::Engine as _;
        Summary::Vector {
            count: self.count,
            columns: self.columns,
            crs: self.srs.and_then(|s| s.to_wkt().ok()),
            geometries: self
                .geometries
                .iter()
                .filter_map(|g| g.wkb().ok())
                .map(|wkb| base64::engine::general_purpose::STANDARD.encode(wkb))
                .collect(),
            polygonal: self.polygonal,
            sheet,
        }
    }

    /// The data of a summary: its geometries rebuilt from WKB (never from
    /// a file) in its CRS.
    fn from_summary(summary: &Summary) -> Result<VectorData, ScoreError> {
        use base64::Engine as _;
        let Summary::Vector {
            count,
            columns,
            crs,
            geometries,
            polygonal,
            ..
        } = summary
        else {
            return Err(ScoreError::Check("not a vector".into()));
        };
        let srs = srs_of(crs, true);
        let mut data = VectorData {
            count: *count,
            columns: columns.clone(),
            srs: srs.clone(),
            geometries: Vec::with_capacity(geometries.len()),
            polygonal: *polygonal,
        };
        for encoded in geometries {
            let wkb = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| ScoreError::Check(format!("a geometry: {e}")))?;
            let mut geometry = Geometry::from_wkb(&wkb)?;
            if let Some(srs) = &srs {
                geometry.set_spatial_ref(srs.clone());
            }
            data.geometries.push(geometry);
        }
        Ok(data)
    }

    /// Keeps a feature's geometry (an empty one is no geometry).
    fn add(&mut self, geometry: Geometry) {
        if geometry.is_empty() {
            return;
        }
        let flat = gdal::vector::geometry_type_flatten(geometry.geometry_type());
        if flat != OGRwkbGeometryType::wkbPolygon && flat != OGRwkbGeometryType::wkbMultiPolygon {
            self.polygonal = false;
        }
        self.geometries.push(geometry);
    }
}

/// The CRS GDAL reads with x first (lon/lat, easting/northing).
fn gis_order(mut srs: SpatialRef) -> SpatialRef {
    srs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
    srs
}

/// A (Geo)Parquet file read natively (Debian's GDAL has no Parquet
/// driver): its rows, attribute columns, the primary geometry column (WKB
/// or GeoArrow) and the CRS its `geo` metadata states (none: OGC:CRS84;
/// null: unknown).
fn read_parquet(path: &Path) -> Result<VectorData, ScoreError> {
    let rows = card::read_parquet(path, None).map_err(|e| ScoreError::Parquet(e.to_string()))?;
    if let Some(encoding) = rows.unread_encoding {
        return Err(ScoreError::Encoding(encoding));
    }
    let mut data = VectorData::empty();
    data.count = rows.count;
    data.columns = rows.columns.iter().map(|c| c.to_lowercase()).collect();
    data.srs = match &rows.crs {
        Some(stated) => stated.spatial_ref()?,
        None => None,
    };
    for mut geometry in rows.geometries.into_iter().flatten() {
        // What a reprojection to the gold's CRS starts from (GDAL's
        // features carry their layer's).
        if let Some(srs) = &data.srs {
            geometry.set_spatial_ref(srs.clone());
        }
        data.add(geometry);
    }
    Ok(data)
}

fn read_vector(path: &Path) -> Result<VectorData, ScoreError> {
    if card::is_parquet(path) {
        return read_parquet(path);
    }
    let ds = gdal_io::open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, &[])
        .map_err(ScoreError::unreadable("vector file"))?;
    let mut data = VectorData::empty();
    for mut layer in ds.layers() {
        if data.srs.is_none() {
            data.srs = layer.spatial_ref().map(gis_order);
        }
        data.columns
            .extend(layer.defn().fields().map(|f| f.name().to_lowercase()));
        for feature in layer.features() {
            data.count += 1;
            if let Some(geometry) = feature.geometry() {
                data.add(geometry.clone());
            }
        }
    }
    Ok(data)
}

/// Jaccard index of two name sets (1 when both are empty).
fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        1.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

/// min/max of two counts (1 when both are 0).
fn count_ratio(a: u64, b: u64) -> f64 {
    if a.max(b) == 0 {
        1.0
    } else {
        a.min(b) as f64 / a.max(b) as f64
    }
}

/// The dissolved footprint of `geometries`, each buffered by `distance`
/// first (0: polygons as they are, an invalid one repaired by a zero
/// buffer; other geometry types have no area).
fn footprint(geometries: &[Geometry], distance: f64) -> Result<Geometry, GdalError> {
    let mut multi = Geometry::empty(OGRwkbGeometryType::wkbMultiPolygon)?;
    for g in geometries {
        let shape = if distance > 0.0 || !g.is_valid() {
            g.buffer(distance, 8)?
        } else {
            g.clone()
        };
        match gdal::vector::geometry_type_flatten(shape.geometry_type()) {
            OGRwkbGeometryType::wkbPolygon => multi.add_geometry(shape)?,
            OGRwkbGeometryType::wkbMultiPolygon => {
                for i in 0..shape.geometry_count() {
                    multi.add_geometry(shape.get_geometry(i).clone())?;
                }
            }
            _ => {}
        }
    }
    // A cascaded union dissolves overlapping parts into one footprint in
    // O(n log n) (what shapely's `union_all` does); a zero buffer of the
    // whole multipolygon does the same but is quadratic on thousands of
    // buffered points. It stays the fallback when GEOS rejects the union.
    match union_cascaded(&multi) {
        Some(union) => Ok(union),
        None => multi.buffer(0.0, 8),
    }
}

/// GEOS's cascaded union of a multipolygon through GDAL
/// (`OGR_G_UnionCascaded`, which the `gdal` crate does not wrap).
fn union_cascaded(multi: &Geometry) -> Option<Geometry> {
    // SAFETY: `multi` is a live geometry owned by us; the result is a new
    // geometry owned by the caller (GDAL's contract), wrapped in a borrowed
    // view only long enough to clone it into an owned `Geometry`, then
    // destroyed exactly once.
    unsafe {
        let handle = gdal_sys::OGR_G_UnionCascaded(multi.c_geometry());
        if handle.is_null() {
            return None;
        }
        let view = Geometry::lazy_feature_geometry();
        view.set_c_geometry(handle);
        let owned = view.clone();
        drop(view);
        gdal_sys::OGR_G_DestroyGeometry(handle);
        Some(owned)
    }
}

/// The diagonal of the bounding box of `geometries`.
fn extent_diagonal(geometries: &[Geometry]) -> f64 {
    let (mut x0, mut y0, mut x1, mut y1) = (
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    );
    for g in geometries {
        let e = g.envelope();
        x0 = x0.min(e.MinX);
        y0 = y0.min(e.MinY);
        x1 = x1.max(e.MaxX);
        y1 = y1.max(e.MaxY);
    }
    ((x1 - x0).powi(2) + (y1 - y0).powi(2)).sqrt()
}

/// Area IoU of the two footprints, the candidate in the gold's CRS.
fn geometry_overlap(gold: &VectorData, candidate: &VectorData) -> Result<f64, ScoreError> {
    if gold.geometries.is_empty() || candidate.geometries.is_empty() {
        return Ok(
            if gold.geometries.is_empty() && candidate.geometries.is_empty() {
                1.0
            } else {
                0.0
            },
        );
    }
    let mut theirs = candidate.geometries.clone();
    if let (Some(target), Some(source)) = (&gold.srs, &candidate.srs) {
        if target != source {
            for g in &mut theirs {
                g.transform_to_inplace(target)
                    .map_err(ScoreError::Reproject)?;
            }
        }
    }
    let distance = if gold.polygonal && candidate.polygonal {
        0.0
    } else {
        // A single point has no extent: one unit then.
        let diagonal = extent_diagonal(&gold.geometries);
        if diagonal > 0.0 {
            0.005 * diagonal
        } else {
            1.0
        }
    };
    let ours = footprint(&gold.geometries, distance)?;
    let theirs = footprint(&theirs, distance)?;
    let inter = ours.intersection(&theirs).map(|g| g.area()).unwrap_or(0.0);
    let union = ours.area() + theirs.area() - inter;
    Ok(if union > 0.0 {
        (inter / union).clamp(0.0, 1.0)
    } else {
        0.0
    })
}

/// Vectors: count, CRS, columns and geometry overlap. The geometries
/// (WKB from the two readers) go through OGR and GEOS here, on a helper
/// thread given [`SUMMARY_TIME`]: a candidate's geometry that makes GEOS
/// work for ever costs its score, not the eval.
fn vector(gold: Summary, candidate: Summary) -> Scored {
    let facts = |s: &Summary| match s {
        Summary::Vector {
            count,
            columns,
            crs,
            ..
        } => Some((*count, columns.clone(), srs_of(crs, true))),
        _ => None,
    };
    let (Some((g_count, g_columns, g_srs)), Some((c_count, c_columns, c_srs))) =
        (facts(&gold), facts(&candidate))
    else {
        return Err(ScoreError::Check("not two vector files".into()));
    };
    let count = count_ratio(g_count, c_count);
    let crs = f64::from(same_crs(&g_srs, &c_srs));
    let columns = jaccard(&g_columns, &c_columns);
    let overlap = crate::beneath::within(SUMMARY_TIME, move || -> Result<f64, String> {
        let g = VectorData::from_summary(&gold).map_err(|e| ScoreError::gold(e).to_string())?;
        let c = VectorData::from_summary(&candidate).map_err(|e| e.to_string())?;
        geometry_overlap(&g, &c).map_err(|e| e.to_string())
    })
    .unwrap_or_else(|| {
        Err(format!(
            "the geometry overlap was not computed within {} s",
            SUMMARY_TIME.as_secs()
        ))
    });
    let (geometry, note) = match overlap {
        Ok(v) => (v, format!("{c_count} features vs gold {g_count}")),
        Err(e) => (0.0, e),
    };
    let s = (count + crs + columns + geometry) / 4.0;
    Ok((
        s,
        parts(&[
            ("count", count),
            ("crs", crs),
            ("columns", columns),
            ("geometry", geometry),
        ]),
        note,
    ))
}

// ---------------------------------------------------------------- table

/// Reads a CSV file (RFC 4180 quoting) into rows of fields.
pub fn read_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.trim_start_matches('\u{feff}').chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => row.push(std::mem::take(&mut field)),
            ('\r', false) => {}
            ('\n', false) => {
                row.push(std::mem::take(&mut field));
                if !(row.len() == 1 && row[0].is_empty()) {
                    rows.push(std::mem::take(&mut row));
                }
                row.clear();
            }
            _ => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// A CSV as named columns.
struct Table {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(path: &Path) -> Result<Table, ScoreError> {
        if card::is_parquet(path) {
            let (columns, mut rows) =
                card::read_parquet_table(path).map_err(|e| ScoreError::Parquet(e.to_string()))?;
            rows.truncate(MAX_TABLE_ROWS);
            return Ok(Table {
                columns: columns.iter().map(|c| c.trim().to_lowercase()).collect(),
                rows,
            });
        }
        // At most MAX_TABLE_BYTES, cut at the last whole line.
        use std::io::Read;
        let mut bytes = Vec::new();
        std::fs::File::open(path)?
            .take(MAX_TABLE_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_TABLE_BYTES {
            bytes.truncate(MAX_TABLE_BYTES as usize);
            let end = bytes.iter().rposition(|b| *b == b'\n').unwrap_or(0);
            bytes.truncate(end);
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut rows = read_csv(&text);
        rows.truncate(MAX_TABLE_ROWS + 1);
        if rows.is_empty() {
            return Err(ScoreError::EmptyTable);
        }
        let columns = rows
            .remove(0)
            .into_iter()
            .map(|c| c.trim().to_lowercase())
            .collect();
        Ok(Table { columns, rows })
    }

    fn column(&self, name: &str) -> Option<Vec<&str>> {
        let i = self.columns.iter().position(|c| c == name)?;
        Some(
            self.rows
                .iter()
                .map(|r| r.get(i).map(|s| s.trim()).unwrap_or(""))
                .collect(),
        )
    }

    /// A column's values as numbers, if every non-empty one parses.
    fn numeric(&self, name: &str) -> Option<Vec<f64>> {
        let values = self.column(name)?;
        let parsed: Vec<f64> = values
            .iter()
            .map(|v| {
                if v.is_empty() {
                    Some(f64::NAN)
                } else {
                    v.parse().ok()
                }
            })
            .collect::<Option<_>>()?;
        parsed.iter().any(|v| !v.is_nan()).then_some(parsed)
    }
}

impl Table {
    /// The table of a summary.
    fn from_summary(summary: &Summary) -> Result<Table, ScoreError> {
        match summary {
            Summary::Table { columns, rows } => Ok(Table {
                columns: columns.clone(),
                rows: rows.clone(),
            }),
            _ => Err(ScoreError::Check("not a table".into())),
        }
    }
}

fn table(gold: &Summary, candidate: &Summary) -> Scored {
    let g = Table::from_summary(gold).map_err(ScoreError::gold)?;
    let c = Table::from_summary(candidate)?;
    let gold_cols: BTreeSet<String> = g.columns.iter().cloned().collect();
    let cand_cols: BTreeSet<String> = c.columns.iter().cloned().collect();
    let columns = jaccard(&gold_cols, &cand_cols);
    let rows = count_ratio(g.rows.len() as u64, c.rows.len() as u64);
    let shared: Vec<&String> = g
        .columns
        .iter()
        .filter(|name| cand_cols.contains(*name))
        .collect();
    // Pair rows through a shared key: a column unique in both tables that
    // is not numeric, or whose name says it is an identifier.
    let unique = |t: &Table, name: &str| {
        t.column(name)
            .is_some_and(|v| v.iter().collect::<BTreeSet<_>>().len() == v.len())
    };
    let id_like = |name: &str| {
        ["id", "name", "code", "key", "fips"].iter().any(|w| {
            name == *w || name.ends_with(&format!("_{w}")) || name.ends_with(w) && name.len() <= 6
        })
    };
    let keys: Vec<&&String> = shared
        .iter()
        .filter(|n| unique(&g, n) && unique(&c, n))
        .collect();
    let key = keys
        .iter()
        .find(|n| g.numeric(n).is_none())
        .or_else(|| keys.iter().find(|n| id_like(n)))
        .map(|n| **n);
    let pairing: Vec<(usize, usize)> = match key {
        Some(name) => {
            let theirs: HashMap<&str, usize> = c
                .column(name)
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, v)| (v, i))
                .collect();
            g.column(name)
                .unwrap_or_default()
                .iter()
                .enumerate()
                .filter_map(|(i, v)| theirs.get(v).map(|j| (i, *j)))
                .collect()
        }
        None => (0..g.rows.len().min(c.rows.len()))
            .map(|i| (i, i))
            .collect(),
    };
    let mut rhos = Vec::new();
    for name in &shared {
        let (Some(a), Some(b)) = (g.numeric(name), c.numeric(name)) else {
            continue;
        };
        let pairs: Vec<(f64, f64)> = pairing
            .iter()
            .map(|(i, j)| (a[*i], b[*j]))
            .filter(|(x, y)| !x.is_nan() && !y.is_nan())
            .collect();
        rhos.push(column_agreement(&pairs));
    }
    let mut p = parts(&[("columns", columns), ("rows", rows)]);
    let note = match key {
        Some(k) => format!("rows paired by `{k}`"),
        None => "rows paired by position".to_string(),
    };
    if rhos.is_empty() {
        return Ok((
            (columns + rows) / 2.0,
            p,
            format!("{note}; no shared numeric column"),
        ));
    }
    let rho = rhos.iter().sum::<f64>() / rhos.len() as f64;
    p.insert("rho".into(), rho);
    Ok((
        (columns + rows + rho) / 3.0,
        p,
        format!("{note}; {} shared numeric column(s)", rhos.len()),
    ))
}

/// How well a shared numeric column agrees: Pearson ρ (negative counts 0)
/// when it is defined — two or more pairs, neither side constant — else
/// (a one-row summary table, a constant column) 1 − min(1, Σ|p−g| / Σ|g|),
/// the raster's relative error.
fn column_agreement(pairs: &[(f64, f64)]) -> f64 {
    let constant = |side: fn(&(f64, f64)) -> f64| pairs.iter().all(|p| side(p) == side(&pairs[0]));
    if pairs.is_empty() {
        return 0.0;
    }
    if pairs.len() >= 2 && !constant(|p| p.0) && !constant(|p| p.1) {
        return pearson(pairs).max(0.0);
    }
    let (err, size) = pairs.iter().fold((0.0, 0.0), |(e, s), (g, c)| {
        (e + (g - c).abs(), s + g.abs())
    });
    if size > 0.0 {
        1.0 - (err / size).min(1.0)
    } else if err == 0.0 {
        1.0
    } else {
        0.0
    }
}

// ---------------------------------------------------------------- image

const IMAGE_SIDE: usize = 256;

/// The image in grey (mean of the colour bands), resampled to 256×256.
fn grey(path: &Path) -> Result<Grid, ScoreError> {
    let ds = gdal_io::open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[])
        .map_err(ScoreError::unreadable("image"))?;
    let size = ds.raster_size();
    let bands = ds.raster_count().min(3);
    let mut data = vec![0.0; IMAGE_SIDE * IMAGE_SIDE];
    for i in 1..=bands {
        let band = ds.rasterband(i)?;
        let buffer = band.read_as::<f64>((0, 0), size, (IMAGE_SIDE, IMAGE_SIDE), None)?;
        for (d, v) in data.iter_mut().zip(buffer.data()) {
            *d += v / bands as f64;
        }
    }
    Ok(Grid {
        shape: vec![IMAGE_SIDE, IMAGE_SIDE],
        data,
    })
}

/// An image's summary: blank or not (the output checks' verdict), and
/// its grey values at 256×256.
fn image_summary(path: &Path) -> Result<Summary, ScoreError> {
    let blank = match outputs::check_pinned(path) {
        OutputCheck::Content(..) => None,
        OutputCheck::Trivial(_, why) => Some(why),
        OutputCheck::Unreadable(why) => return Err(ScoreError::Check(why)),
    };
    Ok(Summary::Image {
        blank,
        grey: grey(path)?.data,
    })
}

fn image(gold: &Summary, candidate: &Summary) -> Scored {
    let grid = |s: &Summary| match s {
        Summary::Image { grey, .. } => Some(Grid {
            shape: vec![IMAGE_SIDE, IMAGE_SIDE],
            data: grey.clone(),
        }),
        _ => None,
    };
    if let Summary::Image {
        blank: Some(why), ..
    } = candidate
    {
        return Ok((0.0, parts(&[("blank", 1.0)]), why.clone()));
    }
    let (Some(g), Some(c)) = (grid(gold), grid(candidate)) else {
        return Err(ScoreError::Unpaired);
    };
    let m = image_metrics(&g, &c).ok_or(ScoreError::Unpaired)?;
    Ok((
        m.ssim.max(0.0),
        parts(&[("blank", 0.0), ("ssim", m.ssim)]),
        "SSIM at 256×256 in grey: a weak signal".into(),
    ))
}

// ---------------------------------------------------------------- text

/// The first [`MAX_TEXT_BYTES`] of a text output.
fn read_text(path: &Path) -> Result<Summary, ScoreError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_TEXT_BYTES + 1)
        .read_to_end(&mut bytes)?;
    let truncated = bytes.len() as u64 > MAX_TEXT_BYTES;
    bytes.truncate(MAX_TEXT_BYTES as usize);
    Ok(Summary::Text {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        truncated,
    })
}

/// Text against the gold's: 1 for equal JSON values (both read whole),
/// else ROUGE-L over words — quadratic, so past [`MAX_ROUGE_WORDS`] words
/// on either side the bag-of-words F1 ([`word_overlap`]), which is linear.
fn text(gold: &str, candidate: &str, truncated: bool) -> (f64, BTreeMap<String, f64>, String) {
    if !truncated {
        if let (Ok(a), Ok(b)) = (
            serde_json::from_str::<serde_json::Value>(gold),
            serde_json::from_str::<serde_json::Value>(candidate),
        ) {
            if a == b {
                return (1.0, parts(&[("equal", 1.0)]), "equal JSON".into());
            }
        }
    }
    let g: Vec<&str> = gold.split_whitespace().collect();
    let c: Vec<&str> = candidate.split_whitespace().collect();
    let cut = if truncated {
        format!(" (first {} KiB)", MAX_TEXT_BYTES >> 10)
    } else {
        String::new()
    };
    if g.len().max(c.len()) > MAX_ROUGE_WORDS {
        let f = word_overlap(&g, &c);
        return (
            f,
            parts(&[("word_f1", f)]),
            format!(
                "bag-of-words F1{cut}: over {MAX_ROUGE_WORDS} words, ROUGE-L (quadratic) is not run"
            ),
        );
    }
    let r = rouge_l(&g, &c);
    (
        r,
        parts(&[("rouge_l", r)]),
        format!("ROUGE-L over words{cut}"),
    )
}

/// F1 of the two word multisets (1 for two empty texts): linear time.
pub fn word_overlap(reference: &[&str], candidate: &[&str]) -> f64 {
    if reference.is_empty() || candidate.is_empty() {
        return f64::from(reference.is_empty() && candidate.is_empty());
    }
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for w in reference {
        *counts.entry(w).or_default() += 1;
    }
    let mut shared = 0usize;
    for w in candidate {
        if let Some(n) = counts.get_mut(w) {
            if *n > 0 {
                *n -= 1;
                shared += 1;
            }
        }
    }
    if shared == 0 {
        return 0.0;
    }
    let (p, r) = (
        shared as f64 / candidate.len() as f64,
        shared as f64 / reference.len() as f64,
    );
    2.0 * p * r / (p + r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_score_writes_and_reads_its_kind_by_name_as_records_always_did() {
        let line = r#"{"path":"pred_results/a.tif","kind":"raster","score":1.0,"parts":{},"weak":false,"note":""}"#;
        let score: OutputScore = serde_json::from_str(line).unwrap();
        assert_eq!(score.kind, OutputKind::Raster);
        assert_eq!(serde_json::to_string(&score).unwrap(), line);
        for kind in OutputKind::ALL {
            assert_eq!(kind.name().parse::<OutputKind>(), Ok(kind));
        }
        let wrong = line.replace("\"raster\"", "\"Raster\"");
        let err = serde_json::from_str::<OutputScore>(&wrong).unwrap_err();
        assert!(
            err.to_string().contains("`Raster` is not an output kind"),
            "{err}"
        );
    }

    #[test]
    fn the_papers_raster_mre_is_the_mean_of_per_cell_errors() {
        // Gold 10, 10, 100; candidate 10, 12, 100. Per cell: 0, 0.2, 0 →
        // the paper's MRE 0.2/3 = 0.0667 (g = 0.5); ours Σ|e|/Σ|g| =
        // 2/120 = 0.0167 (g = 0.75). Same shape, no CRS on either side.
        let side = |values: Vec<f64>| Summary::Raster {
            shape: (1, 1, 3),
            crs: None,
            values,
        };
        let (ours, parts, _) = raster(
            &side(vec![10.0, 10.0, 100.0]),
            &side(vec![10.0, 12.0, 100.0]),
        )
        .unwrap();
        assert!((parts["mre"] - 2.0 / 120.0).abs() < 1e-12, "{parts:?}");
        assert!((parts["mre_cells"] - 0.2 / 3.0).abs() < 1e-12, "{parts:?}");
        let paper = paper_score(ours, &parts);
        assert!(
            (ours - paper - 0.3 * (0.75 - 0.5)).abs() < 1e-12,
            "{ours} {paper}"
        );
    }

    #[test]
    fn the_papers_vector_score_has_three_parts_and_other_kinds_are_ours() {
        // Count 8 of 10 (0.8), CRS the same (1), columns 2 of 4 (0.5),
        // geometry overlap 0.1: ours (0.8 + 1 + 0.5 + 0.1) / 4 = 0.6, the
        // paper's (0.8 + 1 + 0.5) / 3 = 0.7667.
        let parts = parts(&[
            ("count", 0.8),
            ("crs", 1.0),
            ("columns", 0.5),
            ("geometry", 0.1),
        ]);
        assert!((paper_score(0.6, &parts) - 2.3 / 3.0).abs() < 1e-12);
        let table = super::parts(&[("columns", 1.0), ("rows", 0.5), ("rho", 0.9)]);
        assert_eq!(paper_score(0.8, &table), 0.8);
    }

    #[test]
    fn thresholds_are_piecewise() {
        assert_eq!(f_rho(1.0), 1.0);
        assert_eq!(f_rho(0.95), 0.75);
        assert_eq!(f_rho(0.7), 0.5);
        assert_eq!(f_rho(0.6), 0.25);
        assert_eq!(f_rho(-1.0), 0.0);
        assert_eq!(g_mre(0.0), 1.0);
        assert_eq!(g_mre(0.04), 0.75);
        assert_eq!(g_mre(0.1), 0.5);
        assert_eq!(g_mre(0.3), 0.25);
        assert_eq!(g_mre(f64::INFINITY), 0.0);
    }

    #[test]
    fn pearson_matches_a_hand_computation() {
        // x = 1,2,3; y = 2,4,7: means 2, 13/3; sxy = 5, sxx = 2, syy = 38/3.
        let r = pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 7.0)]);
        assert!((r - 5.0 / (2.0f64 * 38.0 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(pearson(&[(1.0, 1.0), (1.0, 1.0)]), 1.0);
        assert_eq!(pearson(&[(1.0, 2.0), (1.0, 3.0)]), 0.0);
        assert!(pearson(&[(1.0, 2.0)]).is_nan());
    }

    #[test]
    fn long_texts_are_compared_in_linear_time() {
        let words: String = (0..20_000).map(|i| format!("w{} ", i % 97)).collect();
        let (score, parts, note) = text(&words, &words, false);
        assert_eq!(parts.get("word_f1"), Some(&1.0), "{note}");
        assert_eq!(score, 1.0);
        assert!(note.contains("bag-of-words"), "{note}");
        assert_eq!(
            word_overlap(&["a", "b", "b"], &["b", "c"]),
            2.0 * 0.5 * (1.0 / 3.0) / (0.5 + 1.0 / 3.0)
        );
        let (short, parts, _) = text("a b c d", "a c d", false);
        assert!(parts.contains_key("rouge_l") && short > 0.8);
    }

    #[test]
    fn csv_reader_handles_quotes_and_newlines() {
        let rows = read_csv("a,b\r\n\"x, y\",\"he said \"\"hi\"\"\"\n\"multi\nline\",2\n\n");
        assert_eq!(
            rows,
            vec![
                vec!["a", "b"],
                vec!["x, y", "he said \"hi\""],
                vec!["multi\nline", "2"]
            ]
        );
        assert_eq!(read_csv("a,b\n1,2"), vec![vec!["a", "b"], vec!["1", "2"]]);
    }
}
