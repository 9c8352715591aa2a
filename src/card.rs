//! The schema card: the runtime reads the task's data natively with GDAL
//! (in the gisclaw process; the Python worker never links it) before the
//! first model call, so the model starts from exact file, layer, column and
//! CRS names instead of guessing them.
//!
//! - vector (Shapefile, GeoJSON, GeoPackage, KML, GML, FlatGeobuf…): layers,
//!   geometry type, CRS, feature count, fields with types, 3 sample rows;
//! - raster (GeoTIFF, IMG, ASCII grid, JPEG2000…): size, bands, data type,
//!   nodata, CRS, pixel size, per-band min/max (approximate on big rasters);
//! - tables (CSV, TSV, XLSX): columns with inferred types, row count, sample;
//! - NetCDF / HDF5: variables with their dimensions and types.
//!
//! [`card_for_dir`] flattens nested folders (case-exact names) and keeps the
//! card within a token budget: full entries first, then one line per file,
//! then counts per extension. [`inspect_file`] is the `inspect_data` tool.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Once;

use gdal::vector::LayerAccess;
use gdal::{Dataset, DatasetOptions, GdalOpenFlags};

use crate::llm::tokens;

/// Default token budget of the card in the prompt.
pub const CARD_TOKEN_BUDGET: u64 = 2_000;

/// Tokens of the budget kept for the closing summary of a large folder.
const TAIL: u64 = 64;

/// Sample rows shown per layer or table.
const SAMPLE_ROWS: usize = 3;

/// Longest sample value shown, in characters.
const VALUE_CHARS: usize = 40;

/// What kind of file an extension names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Vector,
    Raster,
    Table,
    Multidim,
    /// Shapefile parts, overviews, aux files: listed with their main file.
    Sidecar,
    Other,
}

/// Whether `path` is a sidecar (shapefile part, overview, aux file) read
/// through its main file rather than on its own.
pub fn is_sidecar(path: &Path) -> bool {
    kind_of(path) == Kind::Sidecar
}

fn kind_of(path: &Path) -> Kind {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".aux.xml") {
        return Kind::Sidecar;
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "shp" | "geojson" | "gpkg" | "kml" | "gml" | "fgb" | "gpx" | "json" | "topojson" => {
            Kind::Vector
        }
        "tif" | "tiff" | "img" | "asc" | "jp2" | "vrt" | "bil" | "dem" | "hgt" | "grd" => {
            Kind::Raster
        }
        "csv" | "tsv" | "xlsx" | "xls" | "ods" => Kind::Table,
        "nc" | "nc4" | "h5" | "hdf5" | "hdf" | "zarr" => Kind::Multidim,
        "shx" | "dbf" | "prj" | "cpg" | "sbn" | "sbx" | "qix" | "ovr" | "qmd" | "xml" | "aux"
        | "tfw" | "wld" => Kind::Sidecar,
        _ => Kind::Other,
    }
}

/// Why a file could not be inspected.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// No such file.
    #[error("{0}: no such file")]
    Missing(String),
    /// GDAL could not open or read it.
    #[error("{file}: GDAL cannot read it: {message}")]
    Unreadable {
        /// The file as the model names it.
        file: String,
        /// GDAL's message.
        message: String,
    },
}

/// Silences GDAL's own stderr messages (errors come back as values).
fn quiet_gdal() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| gdal::config::set_error_handler(|_, _, _| {}));
    quiet_hdf5_in_this_thread();
}

/// HDF5 (under GDAL's netCDF and HDF5 drivers) prints its error stack to
/// stderr for every attribute netCDF probes and does not find. Its
/// "auto print" switch is per thread, and netCDF turns it off only in the
/// thread that opened the first file — so threads (`eval -j`) printed pages
/// of HDF5-DIAG. Turned off here in each thread that opens a dataset; the
/// function is looked up at run time, so a GDAL without HDF5 is fine.
fn quiet_hdf5_in_this_thread() {
    thread_local!(static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    if DONE.get() {
        return;
    }
    DONE.set(true);
    // herr_t H5Eset_auto2(hid_t estack, H5E_auto2_t func, void *data); hid_t is int64_t.
    type SetAuto = unsafe extern "C" fn(i64, *const libc::c_void, *mut libc::c_void) -> i32;
    // SAFETY: dlsym with a NUL-terminated name; a non-null result is
    // H5Eset_auto2 from the HDF5 library GDAL loaded, whose C signature is
    // SetAuto. H5E_DEFAULT is 0 and a null handler disables printing.
    unsafe {
        let symbol = libc::dlsym(libc::RTLD_DEFAULT, c"H5Eset_auto2".as_ptr());
        if !symbol.is_null() {
            let set_auto: SetAuto = std::mem::transmute::<*mut libc::c_void, SetAuto>(symbol);
            set_auto(0, std::ptr::null(), std::ptr::null_mut());
        }
    }
}

/// Every file under `dir`, relative, sorted (nested folders flattened).
/// A folder reached twice (a symlink cycle such as `self -> .`, or two
/// links to one folder) is walked once; see [`folder_links_skipped`].
pub fn files_under(dir: &Path) -> Vec<(String, u64)> {
    walk(dir).0
}

/// Links under `dir` to folders already listed (cycles), relative and
/// sorted: they are not followed.
pub fn folder_links_skipped(dir: &Path) -> Vec<String> {
    walk(dir).1
}

/// The files under `dir` and the folder links not followed.
fn walk(dir: &Path) -> (Vec<(String, u64)>, Vec<String>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut seen = std::collections::HashSet::new();
    if let Ok(real) = dir.canonicalize() {
        seen.insert(real);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            if path.is_dir() {
                match path.canonicalize() {
                    Ok(real) if !seen.contains(&real) => {
                        seen.insert(real);
                        stack.push(path);
                    }
                    _ => skipped.push(rel),
                }
            } else if let Ok(meta) = entry.metadata() {
                files.push((rel, meta.len()));
            }
        }
    }
    files.sort();
    skipped.sort();
    (files, skipped)
}

/// A human size.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} kB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// The card for a data folder, within `budget` tokens.
pub fn card_for_dir(dir: &Path, shown_as: &str, budget: u64) -> String {
    let (files, skipped) = walk(dir);
    let loops: String = skipped
        .iter()
        .map(|rel| {
            format!("- {shown_as}{rel}/ — a link to a folder already listed (not followed)\n")
        })
        .collect();
    if files.is_empty() {
        return format!("`{shown_as}` is empty.\n{loops}");
    }
    let total: u64 = files.iter().map(|f| f.1).sum();
    let mut card = format!(
        "{} file(s) in `{shown_as}`, {} in all (read natively with GDAL):\n{loops}",
        files.len(),
        size_text(total)
    );
    let mut used = tokens::count(&card);
    let mut brief: Vec<&(String, u64)> = Vec::new();
    let mut full = true;
    for file in &files {
        let path = dir.join(&file.0);
        let kind = kind_of(&path);
        let name = format!("{shown_as}{}", file.0);
        let entry = if full
            && matches!(
                kind,
                Kind::Vector | Kind::Raster | Kind::Table | Kind::Multidim
            ) {
            Some(match inspect_path(&path, &name, kind) {
                Ok(text) => text,
                Err(e) => format!("- {e}\n"),
            })
        } else {
            None
        };
        match entry {
            Some(text) if used + tokens::count(&text) + TAIL <= budget => {
                used += tokens::count(&text);
                card.push_str(&text);
            }
            Some(_) => {
                // Past the budget: the rest is listed briefly, in order.
                full = false;
                brief.push(file);
            }
            None => brief.push(file),
        }
    }
    if brief.is_empty() {
        return card;
    }
    // One line per remaining file while the budget lasts, then counts.
    let mut rest = Vec::new();
    card.push_str("Other files:\n");
    used += 3;
    for file in &brief {
        let line = format!("- {shown_as}{} ({})\n", file.0, size_text(file.1));
        if rest.is_empty() && used + tokens::count(&line) + TAIL <= budget {
            used += tokens::count(&line);
            card.push_str(&line);
        } else {
            rest.push(*file);
        }
    }
    if !rest.is_empty() {
        let mut by_ext: BTreeMap<String, usize> = BTreeMap::new();
        for (rel, _) in &rest {
            let ext = Path::new(rel)
                .extension()
                .map(|e| e.to_string_lossy().into_owned())
                .unwrap_or_else(|| "(none)".into());
            *by_ext.entry(ext).or_default() += 1;
        }
        let mut groups: Vec<String> = by_ext
            .iter()
            .take(8)
            .map(|(ext, n)| format!("{n} .{ext}"))
            .collect();
        if by_ext.len() > 8 {
            groups.push("…".into());
        }
        card.push_str(&format!(
            "- … and {} more: {}; call list_files or inspect_data for details\n",
            rest.len(),
            groups.join(", ")
        ));
    }
    card
}

/// The `inspect_data` tool: the full entry for one file. `rel` is relative
/// to `data_dir` (a leading `shown_as` is accepted).
pub fn inspect_file(data_dir: &Path, shown_as: &str, rel: &str) -> Result<String, SchemaError> {
    let rel = rel.trim().trim_start_matches("./");
    let rel = rel.strip_prefix(shown_as).unwrap_or(rel);
    let path: PathBuf = data_dir.join(rel);
    let name = format!("{shown_as}{rel}");
    if !path.exists() || !path.starts_with(data_dir) || rel.split('/').any(|p| p == "..") {
        return Err(SchemaError::Missing(name));
    }
    let kind = match kind_of(&path) {
        Kind::Other | Kind::Sidecar => Kind::Vector,
        k => k,
    };
    inspect_path(&path, &name, kind).or_else(|first| match kind {
        Kind::Vector => inspect_path(&path, &name, Kind::Raster).map_err(|_| first),
        _ => Err(first),
    })
}

fn inspect_path(path: &Path, name: &str, kind: Kind) -> Result<String, SchemaError> {
    quiet_gdal();
    let unreadable = |e: gdal::errors::GdalError| SchemaError::Unreadable {
        file: name.to_string(),
        message: e.to_string(),
    };
    match kind {
        Kind::Raster => {
            let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[]).map_err(unreadable)?;
            Ok(raster_entry(&ds, name))
        }
        Kind::Multidim => match open_readonly(path, GdalOpenFlags::GDAL_OF_MULTIDIM_RASTER, &[]) {
            Ok(ds) => Ok(multidim_entry(&ds, name)),
            Err(_) => {
                let ds =
                    open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[]).map_err(unreadable)?;
                Ok(raster_entry(&ds, name))
            }
        },
        Kind::Table => {
            let opts: &[&str] = if name.to_ascii_lowercase().ends_with(".xlsx")
                || name.to_ascii_lowercase().ends_with(".ods")
            {
                &["FIELD_TYPES=AUTO", "HEADERS=AUTO"]
            } else {
                &["AUTODETECT_TYPE=YES", "AUTODETECT_SIZE_LIMIT=0"]
            };
            let ds =
                open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, opts).map_err(unreadable)?;
            Ok(vector_entry(&ds, name, true))
        }
        Kind::Vector | Kind::Sidecar | Kind::Other => {
            let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, &[]).map_err(unreadable)?;
            Ok(vector_entry(&ds, name, false))
        }
    }
}

/// Opens `path` read-only with GDAL, its own messages silenced (errors come
/// back as values).
pub fn open_readonly(
    path: &Path,
    flags: GdalOpenFlags,
    options: &[&str],
) -> gdal::errors::Result<Dataset> {
    quiet_gdal();
    Dataset::open_ex(
        path,
        DatasetOptions {
            open_flags: flags | GdalOpenFlags::GDAL_OF_READONLY,
            open_options: (!options.is_empty()).then_some(options),
            ..DatasetOptions::default()
        },
    )
}

/// `EPSG:4326`, or the CRS's name, or `no CRS`.
fn crs_text(srs: Option<gdal::spatial_ref::SpatialRef>) -> String {
    let Some(srs) = srs else {
        return "no CRS".into();
    };
    match (srs.auth_name(), srs.auth_code()) {
        (Some(auth), Ok(code)) => format!("{auth}:{code}"),
        _ => match srs.to_proj4() {
            Ok(p) if !p.trim().is_empty() => format!("CRS {}", p.trim()),
            _ => "a CRS without an EPSG code".into(),
        },
    }
}

fn raster_entry(ds: &Dataset, name: &str) -> String {
    let (w, h) = ds.raster_size();
    let bands = ds.raster_count();
    let crs = crs_text(ds.spatial_ref().ok());
    let mut text = format!(
        "- {name} — raster ({}), {w}×{h} px, {bands} band(s), {crs}",
        ds.driver().short_name()
    );
    if let Ok(gt) = ds.geo_transform() {
        text.push_str(&format!(
            ", pixel {}×{}, origin ({}, {})",
            fmt_num(gt[1]),
            fmt_num(gt[5].abs()),
            fmt_num(gt[0]),
            fmt_num(gt[3])
        ));
    }
    text.push('\n');
    for i in 1..=bands.min(8) {
        let Ok(band) = ds.rasterband(i) else { continue };
        let mut line = format!("  band {i}: {}", band.band_type().name());
        match band.no_data_value() {
            Some(nd) => line.push_str(&format!(", nodata {}", fmt_num(nd))),
            None => line.push_str(", no nodata"),
        }
        if let Ok(mm) = band.compute_raster_min_max(true) {
            line.push_str(&format!(
                ", min {} max {}",
                fmt_num(mm.min),
                fmt_num(mm.max)
            ));
        }
        text.push_str(&line);
        text.push('\n');
    }
    if bands > 8 {
        text.push_str(&format!("  … {} more bands\n", bands - 8));
    }
    text
}

fn multidim_entry(ds: &Dataset, name: &str) -> String {
    let mut text = format!(
        "- {name} — multidimensional ({})\n",
        ds.driver().short_name()
    );
    let Ok(root) = ds.root_group() else {
        return text;
    };
    let dims: Vec<String> = root
        .dimensions(Default::default())
        .map(|ds| {
            ds.iter()
                .map(|d| format!("{}={}", d.name(), d.size()))
                .collect()
        })
        .unwrap_or_default();
    if !dims.is_empty() {
        text.push_str(&format!("  dimensions: {}\n", dims.join(", ")));
    }
    for array in root.array_names(Default::default()).iter().take(30) {
        let Ok(a) = root.open_md_array(array, Default::default()) else {
            continue;
        };
        let shape: Vec<String> = a
            .dimensions()
            .map(|ds| ds.iter().map(|d| d.name()).collect())
            .unwrap_or_default();
        let dtype = gdal::raster::GdalDataType::try_from(a.datatype().numeric_datatype())
            .map(|t| t.name())
            .unwrap_or_else(|_| "non-numeric".into());
        text.push_str(&format!(
            "  variable {array}({}): {dtype}\n",
            shape.join(", ")
        ));
    }
    text
}

fn vector_entry(ds: &Dataset, name: &str, table: bool) -> String {
    let layers = ds.layer_count();
    let mut text = format!(
        "- {name} — {} ({}), {layers} layer(s)\n",
        if table { "table" } else { "vector" },
        ds.driver().short_name()
    );
    for mut layer in ds.layers().take(10) {
        let geometry = layer
            .defn()
            .geom_fields()
            .next()
            .map(|g| gdal::vector::geometry_type_to_name(g.field_type()));
        let fields: Vec<(String, String)> = layer
            .defn()
            .fields()
            .map(|f| (f.name(), gdal::vector::field_type_to_name(f.field_type())))
            .collect();
        let count = layer.feature_count();
        let head = match (&geometry, table) {
            (Some(g), _) => format!(
                "  layer `{}`: {g}, {}, {count} features\n",
                layer.name(),
                crs_text(layer.spatial_ref())
            ),
            (None, true) => format!("  `{}`: {count} rows\n", layer.name()),
            (None, false) => format!("  layer `{}`: no geometry, {count} rows\n", layer.name()),
        };
        text.push_str(&head);
        let cols: Vec<String> = fields.iter().map(|(n, t)| format!("{n} ({t})")).collect();
        text.push_str(&format!(
            "  columns: {}\n",
            if cols.is_empty() {
                "none".into()
            } else {
                cols.join(", ")
            }
        ));
        for feature in layer.features().take(SAMPLE_ROWS) {
            let values: Vec<String> = fields
                .iter()
                .enumerate()
                .map(|(i, (n, _))| format!("{n}={}", value_text(feature.field(i).ok().flatten())))
                .collect();
            text.push_str(&format!("  row: {}\n", values.join(", ")));
        }
    }
    if layers > 10 {
        text.push_str(&format!("  … {} more layers\n", layers - 10));
    }
    text
}

fn value_text(v: Option<gdal::vector::FieldValue>) -> String {
    use gdal::vector::FieldValue as F;
    let text = match v {
        None => "null".to_string(),
        Some(F::IntegerValue(i)) => i.to_string(),
        Some(F::Integer64Value(i)) => i.to_string(),
        Some(F::RealValue(r)) => fmt_num(r),
        Some(F::StringValue(s)) => format!("{s:?}"),
        Some(F::DateValue(d)) => d.to_string(),
        Some(F::DateTimeValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
    };
    crate::util::clip(&text, VALUE_CHARS)
}

/// A number without float noise.
fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
