//! What the sandbox's own libraries read: the card's second opinion.
//!
//! The card's facts come from the host's GDAL (Debian's) in a confined
//! reader. The model reads with geopandas/pyogrio, pandas and xarray, whose
//! GDAL is the wheels' (newer) and which build shapely geometries that GDAL
//! never builds: a shapefile's unclosed ring, an OpenStreetMap ring of two
//! points, a GPX track segment of one point read fine in GDAL and fail in
//! `gpd.read_file`. So after the reader, each dataset is read again inside
//! a throwaway fork of a sandbox session (the model's own confinement and
//! libraries: `sandbox/python/gisclaw_library_view.py`), and its answer
//! amends the facts ([`amend`]): the error and a call that works instead,
//! the layers pyogrio lists, pandas' column names, exact counts and
//! extents, every NetCDF variable with numpy's type, `decode_times=False`
//! where xarray cannot decode a time axis.
//!
//! The answer is the sandbox's: a JSON file read as the cell could write it
//! (bounded, never following a link) into typed fields; nothing of it is
//! trusted beyond being text and numbers.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::facts::{Column, Crs, Dataset, DatasetKind, Geometry, GeometryCount, Layer, Variable};
use crate::sandbox::{CellStatus, SandboxError, Session};

/// Layers a dataset's entry lists (as the reader's entries do).
const MAX_LAYERS: usize = 10;

/// Variables a NetCDF entry lists (as the reader's entries do).
const MAX_VARIABLES: usize = 30;

/// The largest answer read.
const MAX_ANSWER_BYTES: u64 = 8 << 20;

/// After this long the check starts no further read (those left keep the
/// host's facts).
pub const CHECK_TIME: Duration = Duration::from_secs(30);

/// Why the libraries' check gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// The sandbox failed.
    #[error("sandbox: {0}")]
    Sandbox(#[from] SandboxError),
    /// The check's cell did not end well (its status or error line).
    #[error("the check did not finish: {0}")]
    Failed(String),
    /// Its answer is missing or not an answer.
    #[error("the check's answer: {0}")]
    Answer(String),
}

/// What the libraries read of each dataset, by its path as the model
/// names it.
pub type LibraryView = BTreeMap<String, FileView>;

/// What one dataset reads as in the sandbox (each field absent from the
/// answer is its default).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FileView {
    /// The reader's error (`Type: first line`), when the plain read fails.
    pub error: Option<String>,
    /// A vector's layers as `pyogrio.list_layers` gives them (name, type).
    pub listed: Vec<(String, Option<String>)>,
    /// Layers beyond those in `listed`.
    pub more_listed: usize,
    /// A vector's layers as `gpd.read_file` reads them.
    pub layers: Vec<LayerView>,
    /// A table's frame as its read call gives it.
    #[serde(flatten)]
    pub frame: FrameView,
    /// A table's coordinate columns' ranges over every row.
    pub ranges: BTreeMap<String, (Option<f64>, Option<f64>)>,
    /// A NetCDF file's argument that opens it when the plain call fails
    /// (`decode_times=False`); a vector's options its read call carries
    /// (`encoding='cp1252'`), used in every call the check writes.
    pub extra: Option<String>,
    /// A NetCDF file's dimensions (name, size).
    pub dimensions: Vec<(String, u64)>,
    /// A NetCDF file's variables, coordinates and scalars included.
    pub variables: Vec<VariableView>,
    /// Variables beyond those listed.
    pub more_variables: usize,
    /// A raster's width in pixels, as rasterio opens it (GDAL gives -1
    /// for a grid it cannot lay out).
    pub width: Option<i64>,
    /// Its height.
    pub height: Option<i64>,
    /// Its bands.
    pub count: Option<usize>,
    /// Its CRS.
    pub crs: Option<CrsView>,
    /// Its geotransform (GDAL's order), absent for an identity.
    pub transform: Option<Vec<Option<f64>>>,
    /// Its first bands.
    pub bands: Vec<BandView>,
}

/// A pandas frame as read in the sandbox (a table, or a layer's
/// attributes): what the Python half's `_frame_facts` answers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FrameView {
    /// Its columns (name, pandas dtype), a layer's geometry left out.
    pub columns: Vec<(String, String)>,
    /// Its rows.
    pub rows: Option<u64>,
    /// Its first rows' values (at most 12 columns): JSON null where pandas
    /// reads a missing value, numbers, text, `{"bytes": n}`.
    pub sample: Vec<Vec<(String, serde_json::Value)>>,
}

/// A raster band as rasterio reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct BandView {
    /// numpy's type name.
    pub dtype: String,
    /// Its nodata value (`"nan"` for NaN).
    #[serde(with = "super::facts::non_finite", default)]
    pub nodata: Option<f64>,
    /// Its exact statistics, when asked and small enough.
    #[serde(default)]
    pub stats: Option<StatsView>,
    /// Why its pixels could not be read.
    #[serde(default)]
    pub error: Option<String>,
}

/// Statistics of a band's valid pixels (a masked read in float64).
#[derive(Debug, Clone, Deserialize)]
pub struct StatsView {
    /// Smallest.
    #[serde(default)]
    pub min: Option<f64>,
    /// Largest.
    #[serde(default)]
    pub max: Option<f64>,
    /// Mean.
    #[serde(default)]
    pub mean: Option<f64>,
    /// Valid pixels.
    pub valid: u64,
}

/// One layer as geopandas reads it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct LayerView {
    /// Its name.
    pub name: String,
    /// Why `gpd.read_file(path, layer=name)` fails, when it does.
    #[serde(default)]
    pub error: Option<String>,
    /// After a failure, the argument that reads it and the geometries it
    /// leaves out.
    #[serde(default)]
    pub works: Option<Works>,
    /// Its attributes and features.
    #[serde(flatten)]
    pub frame: FrameView,
    /// Its geometries, when read.
    #[serde(default)]
    pub geometry: Option<GeometryView>,
}

/// A read that works where the plain one fails.
#[derive(Debug, Clone, Deserialize)]
pub struct Works {
    /// The argument added (`on_invalid='ignore'`, `read_geometry=False`).
    pub call: String,
    /// Geometries it leaves out (`None`: all of them).
    pub dropped: Option<u64>,
}

/// A layer's geometries as read.
#[derive(Debug, Clone, Deserialize)]
pub struct GeometryView {
    /// Shapely's type names with their counts among the first features.
    pub types: Vec<(String, u64)>,
    /// Whether any has Z.
    pub has_z: bool,
    /// Its CRS.
    pub crs: Option<CrsView>,
    /// The bounds of every non-empty geometry; `None` when there is none.
    pub bounds: Option<[f64; 4]>,
    /// Features whose geometry is missing or empty.
    pub empty: u64,
}

/// A CRS as pyproj reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct CrsView {
    /// `EPSG:4326`, else `CRS <name>`.
    pub text: String,
    /// Its EPSG code.
    pub epsg: Option<u32>,
    /// Whether it is geographic.
    pub geographic: bool,
}

impl CrsView {
    /// As the card's facts hold a CRS (without its WKT).
    fn to_card(&self) -> Crs {
        Crs {
            text: self.text.clone(),
            epsg: self.epsg,
            wkt: None,
            geographic: self.geographic,
        }
    }
}

/// A NetCDF variable as xarray reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct VariableView {
    /// Its name.
    pub name: String,
    /// Its dimensions (none for a scalar).
    pub dimensions: Vec<String>,
    /// numpy's type of its values as read (`char` for a char array).
    pub dtype: String,
    /// numpy's type stored in the file, when xarray decodes it to another.
    pub stored: Option<String>,
    /// Whether it is a coordinate.
    pub coordinate: bool,
    /// Whether it is a grid mapping (it carries the CRS).
    pub grid_mapping: bool,
}

/// What the check is asked about one dataset.
#[derive(Debug, serde::Serialize)]
struct Asked {
    /// The dataset as the model names it (`data/a.shp`, `/vsizip/…`).
    path: String,
    /// How to read it.
    kind: DatasetKind,
    /// The layers the card lists, read first.
    layers: Vec<String>,
    /// The card's call that reads it (its options are used).
    read_call: Option<String>,
    /// A table's coordinate columns, ranged over every row.
    coordinates: Vec<String>,
    /// For a raster: read every band's statistics too (a GRIB file, whose
    /// decoder differs between GDAL versions, or one the host could not
    /// read).
    stats: bool,
}

/// The datasets of `datasets` (and their archives' members) the check
/// reads: vectors, tables with a read call, multidimensional files.
fn asked(datasets: &[&Dataset]) -> Vec<Asked> {
    fn one(d: &Dataset, out: &mut Vec<Asked>) {
        for member in &d.members {
            one(member, out);
        }
        // An OGR VRT: the card's reader does not follow its sources, the
        // sandbox may.
        // What the walk refused (a FIFO, a link out, a file the sandbox
        // cannot read) is never asked: a FIFO would block the check.
        if d.unreadable
            .as_deref()
            .is_some_and(|why| !super::gdal_refused(why))
        {
            return;
        }
        let vrt = d.unreadable.is_some() && d.path.to_ascii_lowercase().ends_with(".vrt");
        let wanted = match d.kind {
            _ if vrt => true,
            // A vector the host could not read may still be geopandas'.
            DatasetKind::Vector => d.lines.is_empty(),
            DatasetKind::Table => {
                d.unreadable.is_none() && d.read_call.is_some() && d.lines.is_empty()
            }
            DatasetKind::Multidim => d.unreadable.is_none() && d.grid.is_none(),
            DatasetKind::Raster => d.lines.is_empty(),
            _ => false,
        };
        if !wanted {
            return;
        }
        out.push(Asked {
            path: d.path.clone(),
            kind: if vrt { DatasetKind::Vector } else { d.kind },
            layers: d.layers.iter().map(|l| l.name.clone()).collect(),
            read_call: d.read_call.clone(),
            coordinates: d
                .layers
                .iter()
                .flat_map(|l| l.notes.iter())
                .filter_map(|n| coordinate_names(n))
                .flat_map(|(x, y)| [x, y])
                .collect(),
            stats: d.kind == DatasetKind::Raster
                && (d.unreadable.is_some() || d.driver.as_deref() == Some("GRIB")),
        });
    }
    let mut out = Vec::new();
    for d in datasets {
        one(d, &mut out);
    }
    out
}

/// The two column names of a coordinates note (`coordinates: `x`, `y` — …`).
fn coordinate_names(note: &str) -> Option<(String, String)> {
    let rest = note.strip_prefix("coordinates: `")?;
    let (x, rest) = rest.split_once("`, `")?;
    let (y, _) = rest.split_once('`')?;
    Some((x.to_string(), y.to_string()))
}

/// Asks a fork of `session` what its libraries read of `datasets`, found
/// under `folder` (as the session sees it) and named under `shown_as`.
pub fn ask(
    session: &mut Session,
    folder: &Path,
    shown_as: &str,
    datasets: &[&Dataset],
) -> Result<LibraryView, LibraryError> {
    let asked = asked(datasets);
    if asked.is_empty() {
        return Ok(LibraryView::new());
    }
    // The sandbox binds folders at their real paths.
    let folder = folder
        .canonicalize()
        .map_err(|e| LibraryError::Failed(format!("{}: {e}", folder.display())))?;
    let mut fork = session.snapshot()?;
    fork.set_rebuild_at_once(false);
    let answer_file = fork.workdir().join(".gisclaw-library-view.json");
    let _ = std::fs::remove_file(&answer_file);
    let py = |text: &str| serde_json::to_string(text).unwrap_or_else(|_| "''".into());
    let cell = format!(
        "import gisclaw_library_view as _gisclaw_library_view\n_gisclaw_library_view.library_view({}, {}, {}, {}, {})\ndel _gisclaw_library_view\n",
        py(&folder.to_string_lossy()),
        py(shown_as),
        py(&serde_json::to_string(&asked).unwrap_or_else(|_| "[]".into())),
        py(&answer_file.to_string_lossy()),
        CHECK_TIME.as_secs()
    );
    let outcome = fork.execute_unrecorded(&cell);
    let read = crate::beneath::read_under(fork.workdir(), &answer_file, MAX_ANSWER_BYTES);
    let _ = std::fs::remove_file(&answer_file);
    fork.end();
    let outcome = outcome?;
    // A check cut at the cell's limit wrote what it read so far.
    let bytes = match (read, outcome.status == CellStatus::Ok) {
        (Ok(bytes), _) => bytes,
        (Err(_), false) => {
            let text = crate::observation::render(&outcome);
            return Err(LibraryError::Failed(
                crate::observation::error_line(&text).to_string(),
            ));
        }
        (Err(why), true) => return Err(LibraryError::Answer(why.to_string())),
    };
    let answers: BTreeMap<String, serde_json::Value> =
        serde_json::from_slice(&bytes).map_err(|e| LibraryError::Answer(e.to_string()))?;
    // One dataset's answer out of shape loses that dataset's check alone.
    Ok(answers
        .into_iter()
        .filter_map(|(path, value)| Some((path, serde_json::from_value(value).ok()?)))
        .collect())
}

/// Asks `session` what its libraries read of `datasets` ([`ask`]) and
/// amends each by the answer ([`amend`]); on `Err` they are unchanged.
pub fn check(
    session: &mut Session,
    folder: &Path,
    shown_as: &str,
    datasets: &mut [&mut Dataset],
) -> Result<(), LibraryError> {
    let asked: Vec<&Dataset> = datasets.iter().map(|d| &**d).collect();
    let view = ask(session, folder, shown_as, &asked)?;
    for dataset in datasets.iter_mut() {
        amend(dataset, &view);
    }
    Ok(())
}

/// Runs `f` with a throwaway session of `zygote` that may read `dir` (for
/// a card made outside any run: `gisclaw card`, an MCP server's card).
pub fn in_throwaway_session<T>(
    zygote: &std::sync::Arc<crate::sandbox::Zygote>,
    dir: &Path,
    f: impl FnOnce(&mut Session) -> T,
) -> Result<T, LibraryError> {
    let work = tempfile::Builder::new()
        .prefix("gisclaw-card-check-")
        .tempdir()
        .map_err(|e| LibraryError::Failed(format!("a scratch folder: {e}")))?;
    let dirs = crate::sandbox::SessionDirs {
        readable: vec![dir.to_path_buf()],
        ..crate::sandbox::SessionDirs::work(work.path())
    };
    let mut session = Session::open_in(zygote, &dirs, zygote.config().clone())?;
    let answer = f(&mut session);
    session.end();
    Ok(answer)
}

/// Amends `dataset` (and its members) by what the libraries read of it.
pub fn amend(dataset: &mut Dataset, view: &LibraryView) {
    for member in &mut dataset.members {
        amend(member, view);
    }
    let Some(file) = view.get(&dataset.path) else {
        return;
    };
    let reads = file
        .layers
        .iter()
        .any(|l| l.error.is_none() || l.works.is_some());
    let vector = dataset.kind == DatasetKind::Vector || !file.listed.is_empty();
    if dataset.unreadable.is_some() && vector {
        if !reads {
            // Unreadable in the sandbox too: its reason joins the host's.
            if let (Some(why), Some(error)) = (&mut dataset.unreadable, first_error(file)) {
                why.push_str(&format!("; geopandas in the sandbox: {error}"));
            }
            return;
        }
        // What the host could not read (an OGR VRT) and geopandas reads.
        dataset.kind = DatasetKind::Vector;
    }
    match dataset.kind {
        DatasetKind::Vector => amend_vector(dataset, file),
        DatasetKind::Table => amend_table(dataset, file),
        DatasetKind::Multidim => amend_multidim(dataset, file),
        DatasetKind::Raster => amend_raster(dataset, file),
        _ => {}
    }
}

/// The first error the sandbox met on a file.
fn first_error(file: &FileView) -> Option<&str> {
    file.error
        .as_deref()
        .or_else(|| file.layers.iter().find_map(|l| l.error.as_deref()))
}

/// The geometry text of counted types (as [`super::geometry_names`] writes
/// it).
fn types_text(types: &[GeometryCount], has_z: bool, part: bool) -> String {
    let suffix = if has_z { " Z" } else { "" };
    match types {
        [] if part => format!(
            "no geometry in the first {} features (missing or empty)",
            super::geometry_names::SCANNED_FEATURES
        ),
        [] => "no geometry (every one missing or empty)".into(),
        [one] => format!("{}{suffix}", one.name),
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|t| format!("{}{suffix}", t.name))
                .collect();
            let counts: Vec<String> = several
                .iter()
                .map(|t| format!("{} {}", t.features, t.name))
                .collect();
            let of = if part {
                format!(
                    " in the first {} features",
                    super::geometry_names::SCANNED_FEATURES
                )
            } else {
                String::new()
            };
            format!("{} ({}{of})", names.join("/"), counts.join(", "))
        }
    }
}

/// Sample rows as the card writes them (`name="x", n=1, v=None`).
impl FrameView {
    /// Its columns as the card's, with GDAL's type names.
    fn card_columns(&self) -> Vec<Column> {
        self.columns
            .iter()
            .map(|(n, t)| Column {
                name: n.clone(),
                dtype: gdal_type(t).into(),
            })
            .collect()
    }

    /// Its sample rows as the card writes them.
    fn sample_rows(&self) -> Vec<String> {
        sample_rows(&self.sample, self.columns.len())
    }
}

fn sample_rows(sample: &[Vec<(String, serde_json::Value)>], columns: usize) -> Vec<String> {
    use serde_json::Value;
    sample
        .iter()
        .map(|row| {
            let mut values: Vec<String> = row
                .iter()
                .map(|(name, value)| {
                    let text = match value {
                        Value::Null => "None".to_string(),
                        Value::Bool(true) => "True".to_string(),
                        Value::Bool(false) => "False".to_string(),
                        // Integers whole (an H3 index of 6e17 keeps its
                        // digits), floats as the card writes numbers.
                        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                        Value::Number(n) => n
                            .as_f64()
                            .map_or_else(|| n.to_string(), super::facts::fmt_num),
                        Value::String(s) => {
                            crate::util::clip(&format!("{s:?}"), super::VALUE_CHARS)
                        }
                        Value::Object(_) | Value::Array(_) => "(bytes)".to_string(),
                    };
                    format!("{name}={text}")
                })
                .collect();
            if columns > row.len() {
                values.push(format!("… ({} more)", columns - row.len()));
            }
            values.join(", ")
        })
        .collect()
}

/// Whether the card's GDAL type `gdal` may be what pandas reads as
/// `pandas` (an integer column with gaps reads as floats; text may be a
/// date GDAL recognised).
fn agrees(gdal: &str, pandas: &str) -> bool {
    match gdal_type(pandas) {
        "Integer" | "Integer64" => matches!(gdal, "Integer" | "Integer64"),
        "Real" => matches!(gdal, "Real" | "Integer" | "Integer64"),
        "DateTime" => matches!(gdal, "Date" | "DateTime"),
        _ => matches!(
            gdal,
            "String" | "Date" | "DateTime" | "Time" | "StringList" | "Binary"
        ),
    }
}

/// pandas' dtype as the card's GDAL type name.
fn gdal_type(pandas: &str) -> &'static str {
    match pandas {
        p if p.starts_with("int") || p.starts_with("uint") || p.starts_with("Int") => {
            if p.ends_with("64") {
                "Integer64"
            } else {
                "Integer"
            }
        }
        p if p.starts_with("float") || p.starts_with("Float") => "Real",
        p if p.starts_with("datetime64") => "DateTime",
        "bool" | "boolean" => "Integer",
        _ => "String",
    }
}

/// A layer the card's reader did not list, from geopandas' read of it.
fn layer_from_view(view: &LayerView) -> Layer {
    Layer {
        name: view.name.clone(),
        geometry: None,
        crs: None,
        features: view.frame.rows,
        features_estimated: false,
        extent: None,
        extent_declared: false,
        columns: view.frame.card_columns(),
        sample_rows: Vec::new(),
        crs_note: None,
        notes: Vec::new(),
        title_rows: None,
    }
}

/// Amends a vector's facts by geopandas' read of each layer.
fn amend_vector(dataset: &mut Dataset, file: &FileView) {
    let name = dataset.path.clone();
    if let Some(error) = &file.error {
        if dataset.unreadable.is_none() {
            dataset.unreadable = Some(format!(
                "{name}: geopandas cannot open it ({error}), although GDAL {} does",
                dataset.driver.as_deref().unwrap_or("")
            ));
        }
        return;
    }
    // A file the host's reader refused (an OGR VRT: its sources are only
    // followed in the sandbox) that geopandas reads: described by the read.
    if dataset.unreadable.is_some() && !file.layers.is_empty() {
        dataset.unreadable = None;
        dataset.driver = Some("read by geopandas in the sandbox".into());
        dataset.notes.push(
            "described from geopandas' read in the sandbox (the card's own reader cannot read it, or does not follow what it points to)".into(),
        );
        dataset.read_call = Some(format!(
            "gpd.read_file({})",
            crate::util::py_str(&dataset.path)
        ));
    }
    let listed: Vec<&str> = file.listed.iter().map(|(n, _)| n.as_str()).collect();
    if !listed.is_empty() {
        // Layers the card's GDAL names that pyogrio does not (another
        // GDAL's names for the same data) are not the model's.
        dataset.layers.retain(|l| listed.contains(&l.name.as_str()));
    }
    // Layers pyogrio lists that the card left out (a GeoPackage's
    // attribute tables), in pyogrio's order after the card's.
    let known: Vec<String> = dataset.layers.iter().map(|l| l.name.clone()).collect();
    for view in &file.layers {
        if !known.contains(&view.name) && dataset.layers.len() < MAX_LAYERS {
            dataset.layers.push(layer_from_view(view));
        }
    }
    dataset.more_layers = (listed.len() + file.more_listed).saturating_sub(dataset.layers.len());
    let mut failures = Vec::new();
    for layer in &mut dataset.layers {
        let Some(view) = file.layers.iter().find(|v| v.name == layer.name) else {
            continue;
        };
        if let Some(error) = &view.error {
            failures.push((layer.name.clone(), error.clone(), view.works.clone()));
            if let Some(g) = &mut layer.geometry {
                g.unreadable = true;
                g.text = format!("{} — geopandas cannot build them: {error}", g.text);
            }
        }
        if let Some(rows) = view.frame.rows {
            layer.features = Some(rows);
            layer.features_estimated = false;
        }
        let read: Vec<&str> = view.frame.columns.iter().map(|(n, _)| n.as_str()).collect();
        let ours: Vec<&str> = layer.columns.iter().map(|c| c.name.as_str()).collect();
        if !read.is_empty() && read != ours {
            layer.columns = view.frame.card_columns();
        }
        if !view.frame.sample.is_empty() || view.frame.rows == Some(0) {
            layer.sample_rows = view.frame.sample_rows();
        }
        if let Some(geometry) = &view.geometry {
            amend_geometry(layer, geometry, view.frame.rows);
        }
    }
    if dataset
        .layers
        .iter()
        .any(|l| l.columns.first().is_some_and(|c| c.name == "id"))
    {
        // The columns are geopandas' own now, its `id` among them.
        dataset
            .notes
            .retain(|n| n != super::gdal_entry::KML_ID_NOTE);
    }
    amend_failing_layers(dataset, file, &failures);
}

/// A layer's geometry as geopandas read it: its types, CRS, extent and
/// missing geometries (`rows`: the features read).
fn amend_geometry(layer: &mut Layer, geometry: &GeometryView, rows: Option<u64>) {
    if rows == Some(0) {
        // Nothing read: the declared type stands, and no extent.
        layer.extent = None;
        return;
    }
    let types: Vec<GeometryCount> = geometry
        .types
        .iter()
        .map(|(n, c)| GeometryCount {
            name: n.clone(),
            features: *c,
        })
        .collect();
    let part = rows.unwrap_or(0) > super::geometry_names::SCANNED_FEATURES as u64;
    let text = types_text(&types, geometry.has_z, part);
    layer.geometry = Some(Geometry {
        text,
        types,
        has_z: geometry.has_z,
        scanned_part: part,
        unreadable: false,
    });
    if let Some(crs) = &geometry.crs {
        if layer.crs.as_ref().map(|c| c.epsg) != Some(crs.epsg) || layer.crs.is_none() {
            layer.crs = Some(crs.to_card());
        }
    }
    layer.extent = geometry.bounds;
    layer.extent_declared = false;
    if geometry.bounds.is_none() {
        // No geometry to judge units by.
        layer.crs_note = None;
    }
    if geometry.empty > 0 {
        layer.notes.push(format!(
            "{} of its features have a missing or empty geometry",
            geometry.empty
        ));
    }
}

/// Layers geopandas cannot read: each one's error and a read that works,
/// in the warnings, the notes and the read call.
fn amend_failing_layers(
    dataset: &mut Dataset,
    file: &FileView,
    failures: &[(String, String, Option<Works>)],
) {
    if failures.is_empty() {
        return;
    }
    if failures.iter().all(|(_, _, works)| works.is_none())
        && failures.len() == dataset.layers.len()
    {
        // No layer reads at all: the model cannot read the file.
        dataset.unreadable = Some(format!(
            "{}: geopandas cannot read it in the sandbox ({}), although the card's GDAL can",
            dataset.path, failures[0].1
        ));
        return;
    }
    let path = crate::util::py_str(&dataset.path);
    let extra = file
        .extra
        .as_deref()
        .map_or(String::new(), |e| format!(", {e}"));
    for (layer_name, error, works) in failures {
        let layer = crate::util::py_str(layer_name);
        let line = match works {
            Some(w) if w.call == "read_geometry=False" => format!(
                "layer `{layer_name}`: gpd.read_file fails ({error}); its fields read with pyogrio.read_dataframe({path}, layer={layer}, read_geometry=False{extra})"
            ),
            Some(w) => format!(
                "layer `{layer_name}`: gpd.read_file fails ({error}); gpd.read_file({path}, layer={layer}, {}{extra}) reads it{}",
                w.call,
                match w.dropped {
                    Some(1) => ", 1 feature without a geometry (None)".to_string(),
                    Some(n) => format!(", {n} features without a geometry (None)"),
                    None => String::new(),
                }
            ),
            None => format!(
                "layer `{layer_name}`: gpd.read_file fails ({error}), and no plain read works"
            ),
        };
        dataset.warnings.push(line.clone());
        // A call elsewhere in the entry that names the layer plainly.
        if let Some(w) = works.as_ref().filter(|w| w.call != "read_geometry=False") {
            let plain = format!("gpd.read_file({path}, layer={layer}{extra})");
            let fixed = format!("gpd.read_file({path}, layer={layer}, {}{extra})", w.call);
            for note in &mut dataset.notes {
                *note = note.replace(&plain, &fixed);
            }
        }
        dataset.notes.push(line);
    }
    // The read call names a layer that reads.
    if let Some(first) = dataset.layers.first() {
        if failures.iter().any(|(l, _, _)| *l == first.name) {
            let fine = file.layers.iter().find(|v| v.error.is_none());
            let first_name = crate::util::py_str(&first.name);
            dataset.read_call = Some(match (fine, &failures[0].2) {
                (Some(v), _) => format!(
                    "gpd.read_file({path}, layer={}{extra})",
                    crate::util::py_str(&v.name)
                ),
                (None, Some(w)) if w.call == "read_geometry=False" => format!(
                    "pyogrio.read_dataframe({path}, layer={first_name}, read_geometry=False{extra})"
                ),
                (None, Some(w)) => {
                    format!(
                        "gpd.read_file({path}, layer={first_name}, {}{extra})",
                        w.call
                    )
                }
                (None, None) => return,
            });
        }
    }
}

/// Amends a table's facts by the frame its own read call gives.
fn amend_table(dataset: &mut Dataset, file: &FileView) {
    if let Some(error) = &file.error {
        let line = format!(
            "its read call `{}` fails in the sandbox: {error}",
            dataset.read_call.as_deref().unwrap_or("")
        );
        dataset.warnings.push(line.clone());
        dataset.notes.push(line);
        return;
    }
    let Some(layer) = dataset.layers.first_mut() else {
        return;
    };
    if layer.title_rows.is_some() {
        return;
    }
    let frame = &file.frame;
    if let Some(rows) = frame.rows {
        layer.features = Some(rows);
        layer.features_estimated = false;
    }
    if frame.columns.len() == layer.columns.len() {
        // pandas' names (a repeated name becomes `X.1`); the card's types
        // where pandas' agree with them (GDAL finds dates pandas leaves as
        // text), else pandas'.
        for (column, (name, dtype)) in layer.columns.iter_mut().zip(&frame.columns) {
            column.name.clone_from(name);
            if !agrees(&column.dtype, dtype) {
                column.dtype = gdal_type(dtype).into();
            }
        }
    } else if !frame.columns.is_empty() {
        layer.columns = frame.card_columns();
    }
    if !frame.columns.is_empty() {
        layer.sample_rows = frame.sample_rows();
    }
    // Coordinate ranges over every row, where the note gave the first
    // rows'.
    for note in &mut layer.notes {
        if let Some((x, y)) = coordinate_names(note) {
            if let (Some((Some(x0), Some(x1))), Some((Some(y0), Some(y1)))) =
                (file.ranges.get(&x), file.ranges.get(&y))
            {
                *note = super::coords::with_span(note, &x, &y, (*x0, *x1), (*y0, *y1));
            }
        }
    }
}

/// Amends a NetCDF/HDF5 file's facts by xarray's read.
fn amend_multidim(dataset: &mut Dataset, file: &FileView) {
    let path = crate::util::py_str(&dataset.path);
    if file.variables.is_empty() {
        if let Some(error) = &file.error {
            dataset
                .warnings
                .push(format!("xarray cannot open it: {error}"));
            dataset
                .notes
                .push(format!("xarray cannot open it: {error}"));
        }
        return;
    }
    if let (Some(error), Some(extra)) = (&file.error, &file.extra) {
        dataset.read_call = Some(format!("xr.open_dataset({path}, {extra})"));
        dataset.notes.push(format!(
            "xr.open_dataset({path}) fails ({error}); read: xr.open_dataset({path}, {extra})"
        ));
    } else if dataset.read_call.is_none() {
        dataset.read_call = Some(format!("xr.open_dataset({path})"));
    }
    dataset.dimensions = file
        .dimensions
        .iter()
        .map(|(n, s)| super::facts::Dimension {
            name: n.clone(),
            size: *s,
        })
        .collect();
    dataset.variables = file
        .variables
        .iter()
        .take(MAX_VARIABLES)
        .map(|v| Variable {
            name: v.name.clone(),
            dimensions: v.dimensions.clone(),
            dtype: variable_type(v),
        })
        .collect();
    let more = file.more_variables + file.variables.len().saturating_sub(MAX_VARIABLES);
    if more > 0 {
        dataset.notes.push(format!("… {more} more variables"));
    }
}

/// numpy's type name as GDAL's (`uint8` → `Byte`).
fn gdal_band_type(numpy: &str) -> String {
    match numpy {
        "uint8" => "Byte".into(),
        "int8" => "Int8".into(),
        "complex64" => "CFloat32".into(),
        "complex128" => "CFloat64".into(),
        other => {
            let mut chars = other.chars();
            match (chars.next(), other.strip_prefix("uint")) {
                (_, Some(bits)) => format!("UInt{bits}"),
                (Some(first), None) => first.to_uppercase().chain(chars).collect(),
                (None, None) => other.to_string(),
            }
        }
    }
}

/// Exact statistics of a band from the sandbox's read.
fn stats_from_view(view: &StatsView) -> Option<super::facts::Stats> {
    Some(super::facts::Stats {
        min: view.min?,
        max: view.max?,
        mean: view.mean,
        valid_pixels: Some(view.valid),
        accuracy: super::facts::Accuracy::Exact,
        how: "every pixel, read by rasterio in the sandbox".into(),
    })
}

/// Amends a raster's facts by rasterio's read: grid, types, nodata and,
/// when read, statistics.
fn amend_raster(dataset: &mut Dataset, file: &FileView) {
    if let Some(error) = &file.error {
        if dataset.unreadable.is_none() {
            dataset.unreadable = Some(format!(
                "{}: rasterio cannot open it in the sandbox ({error}), although the card's GDAL can",
                dataset.path
            ));
        }
        return;
    }
    let (Some(width), Some(height), Some(count)) = (file.width, file.height, file.count) else {
        return;
    };
    let (Ok(width), Ok(height)) = (usize::try_from(width), usize::try_from(height)) else {
        // A grid rasterio cannot lay out (a reduced Gaussian or
        // unstructured GRIB grid): no pixel array to read.
        dataset.unreadable = Some(format!(
            "{}: rasterio opens it as a {width}×{height} grid, one it cannot lay out (not a regular grid), so its pixels cannot be read",
            dataset.path
        ));
        return;
    };
    let transform = file.transform.as_ref().and_then(|t| {
        let values: Option<Vec<f64>> = t.iter().copied().collect();
        <[f64; 6]>::try_from(values?).ok()
    });
    let crs = file.crs.as_ref().map(CrsView::to_card);
    if dataset.unreadable.is_some() {
        // What the card's GDAL cannot read and rasterio reads.
        dataset.unreadable = None;
        dataset.driver = Some("read by rasterio in the sandbox".into());
        dataset.notes.push(
            "described from rasterio's read in the sandbox (the card's GDAL cannot read it)".into(),
        );
        dataset.read_call = Some(format!(
            "rasterio.open({})",
            crate::util::py_str(&dataset.path)
        ));
        dataset.grid = Some(super::facts::Grid {
            width,
            height,
            crs,
            transform,
            extent: transform.map(|gt| {
                let (x0, y0) = (gt[0], gt[3]);
                let (x1, y1) = (
                    x0 + gt[1] * width as f64 + gt[2] * height as f64,
                    y0 + gt[4] * width as f64 + gt[5] * height as f64,
                );
                [x0.min(x1), y0.min(y1), x0.max(x1), y0.max(y1)]
            }),
            gcps: 0,
            crs_note: None,
        });
        dataset.bands = file
            .bands
            .iter()
            .enumerate()
            .map(|(i, b)| super::facts::Band {
                index: i + 1,
                dtype: gdal_band_type(&b.dtype),
                nodata: b.nodata,
                readable: b.error.is_none(),
                stats: b.stats.as_ref().and_then(stats_from_view),
                classes: Vec::new(),
                colour_table: None,
            })
            .collect();
        dataset.more_bands = count.saturating_sub(dataset.bands.len());
        return;
    }
    for (band, view) in dataset.bands.iter_mut().zip(&file.bands) {
        band.dtype = gdal_band_type(&view.dtype);
        let nodata_differs = match (band.nodata, view.nodata) {
            (Some(a), Some(b)) => a != b && !(a.is_nan() && b.is_nan()),
            (None, None) => false,
            _ => true,
        };
        if nodata_differs {
            band.nodata = view.nodata;
        }
        if let Some(stats) = &view.stats {
            let read = stats_from_view(stats);
            let differs = match (&band.stats, &read) {
                (Some(a), Some(b)) => a.min != b.min || a.max != b.max,
                (None, None) => false,
                _ => true,
            };
            if differs || nodata_differs {
                band.stats = read;
                band.classes.clear();
            }
        }
        if view.error.is_some() {
            band.readable = false;
            band.stats = None;
            band.classes.clear();
        }
    }
}

/// A variable's type as the card names it: numpy's name of what is stored
/// (`int8`, `char` for a char array), with what xarray decodes it to when
/// that differs, and a grid mapping said to be one.
fn variable_type(v: &VariableView) -> String {
    let mut text = match &v.stored {
        Some(stored) if *stored != v.dtype => format!("{stored} (read as {})", v.dtype),
        _ => v.dtype.clone(),
    };
    if v.dimensions.is_empty() {
        text.push_str(", scalar");
    }
    if v.grid_mapping {
        text.push_str(", the grid mapping (its attributes hold the CRS)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinate_notes_name_their_columns() {
        assert_eq!(
            coordinate_names("coordinates: `lon`, `lat` — longitude/latitude in degrees (…)"),
            Some(("lon".into(), "lat".into()))
        );
        assert_eq!(coordinate_names("separator: `;`"), None);
    }

    #[test]
    fn pandas_types_map_to_the_cards_names() {
        assert_eq!(gdal_type("int64"), "Integer64");
        assert_eq!(gdal_type("int32"), "Integer");
        assert_eq!(gdal_type("float64"), "Real");
        assert_eq!(gdal_type("object"), "String");
        assert_eq!(gdal_type("str"), "String");
        assert_eq!(gdal_type("datetime64[ms]"), "DateTime");
    }

    #[test]
    fn gdal_types_agree_with_what_pandas_may_read_for_them() {
        assert!(agrees("Integer", "float64"));
        assert!(agrees("Date", "str"));
        assert!(!agrees("Integer", "str"));
        assert!(!agrees("String", "float64"));
    }

    #[test]
    fn numpy_band_types_are_named_as_gdal_names_them() {
        assert_eq!(gdal_band_type("uint8"), "Byte");
        assert_eq!(gdal_band_type("int8"), "Int8");
        assert_eq!(gdal_band_type("uint16"), "UInt16");
        assert_eq!(gdal_band_type("int32"), "Int32");
        assert_eq!(gdal_band_type("float64"), "Float64");
        assert_eq!(gdal_band_type("complex64"), "CFloat32");
    }

    #[test]
    fn a_variables_type_says_what_is_stored_and_what_it_is() {
        let v = VariableView {
            name: "crs".into(),
            dimensions: vec![],
            dtype: "int32".into(),
            stored: None,
            coordinate: false,
            grid_mapping: true,
        };
        assert_eq!(
            variable_type(&v),
            "int32, scalar, the grid mapping (its attributes hold the CRS)"
        );
    }
}
