//! The card's GDAL readers: vector layers, rasters, tables and
//! multidimensional files, opened read-only through [`crate::gdal_io`]
//! (GDAL's own messages silenced, errors back as values), in the confined
//! reader.
//!
//! Large files are described from metadata and samples, never read whole:
//! CSV types are detected from the first megabyte and the row count of a
//! big CSV is estimated from three slices of it; raster statistics are exact
//! up to 4096×4096 pixels a band (see `raster_stats`), else read from an
//! overview or GDAL's sampled blocks and said to be approximate; GeoPackage counts
//! come from its contents table.

use std::io::Read;
use std::path::Path;

use gdal::vector::LayerAccess;
use gdal::{Dataset, GdalOpenFlags};

use crate::gdal_io::{crs_label, file_head, first_features, gdal_reason, open_readonly, quiet};

use super::coords::{self, ColumnSample};
use super::facts::{self, fmt_num, DatasetKind};
use super::text_encoding;
use super::{codes, csv_read, dbf_encoding, geometry_names, one_column, raster_stats, sheet_title};
use super::{Kind, SchemaError, ROW_VALUES, SAMPLE_ROWS, VALUE_CHARS};

/// Bytes of a CSV read to detect column types (GDAL's `AUTODETECT_SIZE_LIMIT`)
/// and, in three slices, to estimate a big file's row count.
const CSV_PROBE_BYTES: usize = 1 << 20;

/// CSVs larger than this get an estimated row count instead of a full scan.
const CSV_COUNT_LIMIT: u64 = 64 << 20;

/// Rows scanned per table for coordinate ranges and geometry text.
const SCAN_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// The card's facts for one file GDAL reads, shown as `name`.
pub(super) fn entry(path: &Path, name: &str, kind: Kind) -> Result<facts::Dataset, SchemaError> {
    quiet();
    // GDAL's message without the host's path (`/srv/x/a.tif: TIFFRead…`):
    // the model knows the file by its name.
    let host_path = path.to_string_lossy();
    let without_path = |reason: String| {
        reason
            .replace(&format!("{host_path}: "), "")
            .replace(host_path.as_ref(), name)
    };
    let unreadable = |e: gdal::errors::GdalError| SchemaError::Unreadable {
        file: name.to_string(),
        message: match json_fault(path, kind) {
            Some(fault) => format!(
                "{} (not valid JSON: {fault})",
                without_path(gdal_reason(&e))
            ),
            None => without_path(gdal_reason(&e)),
        },
    };
    match kind {
        Kind::Raster => {
            let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[]).map_err(unreadable)?;
            Ok(raster_facts(&ds, name, DatasetKind::Raster))
        }
        Kind::Multidim => match open_readonly(path, GdalOpenFlags::GDAL_OF_MULTIDIM_RASTER, &[]) {
            Ok(ds) => Ok(multidim_facts(&ds, name)),
            Err(_) => {
                let ds =
                    open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[]).map_err(unreadable)?;
                Ok(raster_facts(&ds, name, DatasetKind::Multidim))
            }
        },
        Kind::Table => table_entry(path, name, &unreadable),
        Kind::Vector | Kind::Sidecar | Kind::Other | Kind::Parquet | Kind::Archive => {
            vector_entry(path, name, &unreadable)
        }
    }
}

/// A table's facts (CSV and text tables read as pandas would; XLSX/ODS).
fn table_entry(
    path: &Path,
    name: &str,
    unreadable: &dyn Fn(gdal::errors::GdalError) -> SchemaError,
) -> Result<facts::Dataset, SchemaError> {
    let lower = name.to_ascii_lowercase();
    if lower.ends_with(".xlsx") || lower.ends_with(".ods") {
        let opts = ["FIELD_TYPES=AUTO", "HEADERS=AUTO"];
        let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, &opts).map_err(unreadable)?;
        let mut dataset = vector_facts(&ds, name, Some(&Table::default()));
        dataset.read_call = Some(format!("pd.read_excel({})", crate::util::py_str(name)));
        dataset
            .notes
            .extend(note_lines(&other_layers_line(&ds, name, Reader::Excel)));
        return Ok(dataset);
    }
    // The probe GDAL detects types from, read once more for how
    // pandas must read the file (separator, decimal comma,
    // encoding, code columns: the latter shown as the text they
    // are, as GDAL 3.6 reads them as numbers and has no open
    // option to say otherwise).
    let head = csv_head(path);
    let reading = csv_read::reading(&head, &csv_read::source(name));
    let probe = format!("AUTODETECT_SIZE_LIMIT={CSV_PROBE_BYTES}");
    // pandas' header, not GDAL's guess (which takes a header with
    // numbers in it, `Name,1929,1930`, for data).
    let headers = if reading.header {
        "HEADERS=YES"
    } else {
        "HEADERS=NO"
    };
    let opts = ["AUTODETECT_TYPE=YES", &probe, headers];
    // Past a preamble, GDAL reads the file from its header on.
    let from_header = match reading.skip_bytes {
        0 => path.to_path_buf(),
        skip => format!("/vsisubfile/{skip}_0,{}", path.to_string_lossy()).into(),
    };
    let mut dataset = match open_readonly(&from_header, GdalOpenFlags::GDAL_OF_VECTOR, &opts) {
        Ok(ds) => {
            let table = Table {
                estimate: estimated_csv_rows(path),
                codes: &reading.codes,
                decoded: &reading.decoded,
                names: &reading.names,
            };
            vector_facts(&ds, name, Some(&table))
        }
        Err(e) => {
            let decoded = text_encoding::read_as(&head, reading.decoder);
            if !one_column::is_one_column(&decoded) {
                return Err(unreadable(e));
            }
            let rows = csv_rows_beyond(path, head.len());
            let text = one_column::entry(name, &decoded, rows, &reading.codes);
            facts::Dataset::from_lines(name, DatasetKind::Table, &text)
        }
    };
    dataset.header = Some(reading.header);
    dataset.read_call = Some(reading.call.clone());
    dataset.notes.extend(note_lines(&reading.lines));
    Ok(dataset)
}

/// A vector file's facts, with the read call that opens it in the sandbox.
fn vector_entry(
    path: &Path,
    name: &str,
    unreadable: &dyn Fn(gdal::errors::GdalError) -> SchemaError,
) -> Result<facts::Dataset, SchemaError> {
    // A shapefile whose text nothing labels is opened in the
    // encoding it is written in, not GDAL's ISO-8859-1.
    let unlabelled = name
        .to_ascii_lowercase()
        .ends_with(".shp")
        .then(|| dbf_encoding::unlabelled(path, name))
        .flatten();
    let option = unlabelled
        .as_ref()
        .map(|u| format!("ENCODING={}", u.codec.to_ascii_uppercase()));
    let mut options: Vec<&str> = option.iter().map(String::as_str).collect();
    // OpenStreetMap extracts whose node ids do not increase fail
    // with GDAL's own index (GDAL ≥ 3.9 says so; older ones read on).
    let osm = is_osm(name);
    if osm {
        options.push(OSM_OPTION);
    }
    let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_VECTOR, &options).map_err(unreadable)?;
    let mut dataset = vector_facts(&ds, name, None);
    let unreadable_geometry = dataset
        .layers
        .first()
        .and_then(|l| l.geometry.as_ref())
        .is_some_and(|g| g.unreadable);
    dataset.read_call = Some(match (&unlabelled, unreadable_geometry) {
        (_, true) => format!(
            "pyogrio.read_dataframe({}, read_geometry=False)",
            crate::util::py_str(name)
        ),
        (Some(u), false) => {
            format!(
                "gpd.read_file({}, encoding='{}')",
                crate::util::py_str(name),
                u.codec
            )
        }
        (None, false) if osm => {
            let layer = dataset.layers.first().map_or("points", |l| l.name.as_str());
            format!(
                "gpd.read_file({}, layer={}, USE_CUSTOM_INDEXING='NO')",
                crate::util::py_str(name),
                crate::util::py_str(layer)
            )
        }
        (None, false) => format!("gpd.read_file({})", crate::util::py_str(name)),
    });
    if let Some(unlabelled) = unlabelled {
        dataset.notes.extend(note_lines(&unlabelled.lines));
    }
    if dataset.driver.as_deref() == Some("LIBKML") {
        // The sandbox's pyogrio bundles a newer GDAL, whose KML
        // reader adds the placemarks' ids as a first column.
        dataset.notes.push(KML_ID_NOTE.to_string());
    }
    dataset
        .notes
        .extend(note_lines(&other_layers_line(&ds, name, Reader::Geopandas)));
    if dataset.driver.as_deref() == Some("GPKG") {
        dataset.notes.extend(tile_tables_line(path, name));
    }
    Ok(dataset)
}

/// A GeoPackage's tile tables (rasters, which geopandas does not list):
/// the line naming them with the call that opens one.
fn tile_tables_line(path: &Path, name: &str) -> Option<String> {
    use gdal::Metadata;
    let ds = open_readonly(path, GdalOpenFlags::GDAL_OF_RASTER, &[]).ok()?;
    let tables: Vec<String> = ds
        .metadata_domain("SUBDATASETS")
        .unwrap_or_default()
        .iter()
        .filter_map(|item| {
            let (key, value) = item.split_once('=')?;
            key.ends_with("_NAME")
                .then(|| value.rsplit(':').next().map(str::to_string))?
        })
        .collect();
    match tables.as_slice() {
        [] if ds.raster_count() > 0 => {
            let table = ds
                .metadata_item("IDENTIFIER", "")
                .unwrap_or_else(|| "its tiles".into());
            Some(format!(
                "raster tile table `{table}` ({}×{} px, {} band(s)), not a layer: rasterio.open({})",
                ds.raster_size().0,
                ds.raster_size().1,
                ds.raster_count(),
                crate::util::py_str(name)
            ))
        }
        [] => None,
        several => Some(format!(
            "raster tile tables, not layers: {}; open one with rasterio.open({})",
            several
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", "),
            crate::util::py_str(&format!("GPKG:{name}:{}", several[0]))
        )),
    }
}

/// The card's note on a KML file's `id` column.
pub(super) const KML_ID_NOTE: &str = "geopandas also reads an `id` column first (the placemarks' ids: its GDAL is newer than the card's)";

/// The open option an OpenStreetMap file is read with, by the card and by
/// the read call it gives.
const OSM_OPTION: &str = "USE_CUSTOM_INDEXING=NO";

/// Whether `name` is an OpenStreetMap file (`.osm`, `.osm.pbf`, `.pbf`).
fn is_osm(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".osm") || lower.ends_with(".pbf")
}

/// The lines of a block of the card's text (each indented by two spaces,
/// ending in a newline), without their indent, as facts' notes.
fn note_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.strip_prefix("  ").unwrap_or(l).to_string())
        .collect()
}

/// What reads a file of several layers or sheets in Python.
#[derive(Debug, Clone, Copy)]
enum Reader {
    /// `gpd.read_file(…, layer=…)`.
    Geopandas,
    /// `pd.read_excel(…, sheet_name=…)`.
    Excel,
}

/// For a file of several layers (a GeoPackage, a KML) or sheets, the call
/// that reads one of the others: without `layer` / `sheet_name`, geopandas
/// and pandas read only the first.
fn other_layers_line(ds: &Dataset, name: &str, reader: Reader) -> String {
    let layers: Vec<(String, u64)> = ds.layers().map(|l| (l.name(), l.feature_count())).collect();
    let [(first, first_count), rest @ ..] = layers.as_slice() else {
        return String::new();
    };
    // The layer offered is one with features (a GPX's `routes` may have none).
    let Some((other, _)) = rest.iter().find(|(_, n)| *n > 0).or(rest.first()) else {
        return String::new();
    };
    let (call, argument, what) = match reader {
        Reader::Geopandas => ("gpd.read_file", "layer", "layer"),
        Reader::Excel => ("pd.read_excel", "sheet_name", "sheet"),
    };
    if *first_count == 0 && matches!(reader, Reader::Geopandas) {
        return format!(
            "  read: {call}({}, {argument}={}): without {argument}, the first {what} (`{first}`) is read, and it has no features\n",
            crate::util::py_str(name),
            crate::util::py_str(other)
        );
    }
    format!(
        "  read: {call}({}, {argument}={}) for a {what} other than the first (`{first}`, read without {argument})\n",
        crate::util::py_str(name),
        crate::util::py_str(other)
    )
}

/// The first [`CSV_PROBE_BYTES`] of a text table (see [`file_head`]).
fn csv_head(path: &Path) -> Vec<u8> {
    file_head(path, CSV_PROBE_BYTES).unwrap_or_default()
}

/// Largest JSON-based vector file parsed to say where its text breaks
/// when GDAL cannot read it.
const JSON_CHECK_LIMIT: u64 = 256 << 20;

/// Where a GeoJSON / TopoJSON / `.json` file that GDAL refused stops being
/// JSON (`EOF while parsing a string at line 1 column 17`), `None` when it
/// parses, is another kind of file, or is too big to parse on a failure path.
fn json_fault(path: &Path, kind: Kind) -> Option<String> {
    let json_based = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        ["geojson", "json", "topojson"]
            .iter()
            .any(|j| e.eq_ignore_ascii_case(j))
    });
    if kind != Kind::Vector || !json_based || std::fs::metadata(path).ok()?.len() > JSON_CHECK_LIMIT
    {
        return None;
    }
    let reader = std::io::BufReader::new(std::fs::File::open(path).ok()?);
    serde_json::from_reader::<_, serde::de::IgnoredAny>(reader)
        .err()
        .map(|e| e.to_string())
}

/// The data rows of a CSV whose first `read` bytes were probed, when the
/// probe did not hold the whole file: counted for a file up to
/// [`CSV_COUNT_LIMIT`], else estimated (`true`); `None` when the probe was
/// the file.
fn csv_rows_beyond(path: &Path, read: usize) -> Option<(u64, bool)> {
    let size = std::fs::metadata(path).ok()?.len();
    if size <= read as u64 {
        return None;
    }
    if let Some(estimate) = estimated_csv_rows(path) {
        return Some((estimate, true));
    }
    let mut file = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1 << 16];
    let mut ends = 0u64;
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => ends += line_ends(&buf[..n]),
            Err(_) => return None,
        }
    }
    Some((ends.saturating_sub(1), false))
}

/// The line ends in `buf`.
fn line_ends(buf: &[u8]) -> u64 {
    buf.iter().filter(|&&b| b == b'\n').count() as u64
}

/// The row count of a CSV too big to count, estimated from the density of
/// line ends in three slices (start, middle, end: lines often grow along a
/// file, e.g. with an id column); `None` for a file small enough to count
/// (or one that is not a plain file, such as an archive member).
fn estimated_csv_rows(path: &Path) -> Option<u64> {
    if std::fs::metadata(path).ok()?.len() <= CSV_COUNT_LIMIT {
        return None;
    }
    let (ends, bytes, size) =
        super::sampled_density(path, (CSV_PROBE_BYTES / 3) as u64, line_ends)?;
    // Lines in the file, less the header.
    Some((size * ends.max(1) / bytes).saturating_sub(1))
}

/// A CRS as the card's facts: its text and EPSG code ([`crs_label`]), WKT
/// and whether it is geographic.
pub(super) fn crs_facts(srs: Option<gdal::spatial_ref::SpatialRef>) -> Option<facts::Crs> {
    let srs = srs?;
    let (text, epsg) = crs_label(&srs);
    Some(facts::Crs {
        text,
        epsg,
        wkt: srs.to_wkt().ok(),
        geographic: srs.is_geographic(),
    })
}

/// A raster's facts: grid, CRS, bands with nodata, statistics and classes.
fn raster_facts(ds: &Dataset, name: &str, kind: DatasetKind) -> facts::Dataset {
    let (w, h) = ds.raster_size();
    let bands = ds.raster_count();
    let mut dataset = facts::Dataset::new(name, kind);
    dataset.driver = Some(ds.driver().short_name());
    dataset.read_call = Some(format!("rasterio.open({})", crate::util::py_str(name)));
    let transform = ds.geo_transform().ok();
    // The corners' x and y ranges (a rotated grid has four corners).
    let extent = transform.map(|gt| {
        let corners = [
            (0.0, 0.0),
            (w as f64, 0.0),
            (0.0, h as f64),
            (w as f64, h as f64),
        ]
        .map(|(c, r)| (gt[0] + c * gt[1] + r * gt[2], gt[3] + c * gt[4] + r * gt[5]));
        let low = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let high = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (xs, ys) = (corners.map(|p| p.0), corners.map(|p| p.1));
        [low(xs), low(ys), high(xs), high(ys)]
    });
    let crs = crs_facts(ds.spatial_ref().ok());
    let crs_note = match (&crs, extent) {
        (None, Some(e)) => Some(coords::missing_crs(
            (e[0], e[2]),
            (e[1], e[3]),
            coords::Holder::Raster,
        )),
        _ => None,
    };
    dataset.grid = Some(facts::Grid {
        width: w,
        height: h,
        crs,
        transform,
        extent,
        gcps: ds.gcps().len(),
        crs_note,
    });
    let mut exact_budget = raster_stats::EXACT_PIXELS_PER_FILE;
    for i in 1..=bands.min(8) {
        let Ok(band) = ds.rasterband(i) else { continue };
        let stats = raster_stats::band_stats(ds, i, &mut exact_budget);
        if stats.is_none() {
            dataset
                .warnings
                .push(format!("band {i}: its pixels cannot be read"));
        } else if stats.as_ref().is_some_and(|s| s.valid == 0) {
            dataset
                .warnings
                .push(format!("band {i}: no valid pixel (every pixel is nodata)"));
        }
        dataset.bands.push(facts::Band {
            index: i,
            dtype: band.band_type().name(),
            nodata: band.no_data_value(),
            readable: stats.is_some(),
            stats: stats.as_ref().and_then(raster_stats::stats_facts),
            classes: stats
                .as_ref()
                .map(|s| raster_stats::class_facts(&band, s))
                .unwrap_or_default(),
            colour_table: band.color_table().map(|t| t.entry_count()),
        });
    }
    dataset.more_bands = bands.saturating_sub(8);
    dataset
}

/// A multidimensional file's facts: dimensions and variables.
fn multidim_facts(ds: &Dataset, name: &str) -> facts::Dataset {
    let mut dataset = facts::Dataset::new(name, DatasetKind::Multidim);
    dataset.driver = Some(ds.driver().short_name());
    dataset.read_call = Some(format!("xr.open_dataset({})", crate::util::py_str(name)));
    let Ok(root) = ds.root_group() else {
        return dataset;
    };
    dataset.dimensions = root
        .dimensions(Default::default())
        .map(|ds| {
            ds.iter()
                .map(|d| facts::Dimension {
                    name: d.name(),
                    size: d.size() as u64,
                })
                .collect()
        })
        .unwrap_or_default();
    for array in root.array_names(Default::default()).iter().take(30) {
        let Ok(a) = root.open_md_array(array, Default::default()) else {
            continue;
        };
        let dimensions: Vec<String> = a
            .dimensions()
            .map(|ds| ds.iter().map(|d| d.name()).collect())
            .unwrap_or_default();
        let dtype = gdal::raster::GdalDataType::try_from(a.datatype().numeric_datatype())
            .map(|t| t.name())
            .unwrap_or_else(|_| "non-numeric".into());
        dataset.variables.push(facts::Variable {
            name: array.clone(),
            dimensions,
            dtype,
        });
    }
    dataset
}

/// What the card knows of a table beyond what GDAL reads.
#[derive(Debug, Default)]
struct Table<'a> {
    /// A row count estimated instead of counted (a big CSV).
    estimate: Option<u64>,
    /// Columns of codes with leading zeros, shown as the text they are.
    codes: &'a [codes::CodeColumn],
    /// The header and first rows decoded from a legacy encoding, whose
    /// text values replace GDAL's (see [`csv_read::Reading::decoded`]).
    decoded: &'a [Vec<String>],
    /// The header's names as written (see [`csv_read::Reading::names`]).
    names: &'a [String],
}

/// Layers (or a `table`) with geometry type, CRS, count, columns, sample
/// rows and, for tables, the coordinate or geometry columns found.
fn vector_facts(ds: &Dataset, name: &str, table: Option<&Table>) -> facts::Dataset {
    let layers = ds.layer_count();
    let kind = if table.is_some() {
        DatasetKind::Table
    } else {
        DatasetKind::Vector
    };
    let mut dataset = facts::Dataset::new(name, kind);
    dataset.driver = Some(ds.driver().short_name());
    let estimate = table.and_then(|t| t.estimate);
    let codes = table.map_or(&[][..], |t| t.codes);
    let code = |field: &str| codes.iter().find(|c| c.name == field);
    let decoded = table.map_or(&[][..], |t| t.decoded);
    let written = table.map_or(&[][..], |t| t.names);
    for (index, mut layer) in ds.layers().take(10).enumerate() {
        let declared = layer.defn().geom_fields().next().map(|g| g.field_type());
        let geometry = declared.map(|ty| geometry_names::layer_geometry(&mut layer, ty));
        let read: Vec<(String, gdal::vector::OGRFieldType::Type)> = layer
            .defn()
            .fields()
            .map(|f| (f.name(), f.field_type()))
            .collect();
        // Text decoded from a legacy encoding stands in for GDAL's (names
        // and values) only where the columns line up.
        let decoded = decoded
            .first()
            .is_some_and(|h| h.len() == read.len())
            .then_some(decoded);
        // GDAL strips the spaces around a CSV's names; pandas keeps them,
        // and `df['1969']` fails on a column named `1969  `.
        let spaced = written.len() == read.len()
            && written
                .iter()
                .zip(&read)
                .all(|(w, (g, _))| w.trim() == g.trim())
            && written.iter().any(|w| w.trim() != w);
        let fields: Vec<(String, String)> = read
            .into_iter()
            .enumerate()
            .map(|(i, (gdal_name, field_type))| {
                let name = match decoded.and_then(|d| d[0].get(i)) {
                    Some(n) if spaced => n.clone(),
                    Some(n) => n.trim().to_string(),
                    None if spaced => written[i].clone(),
                    None => gdal_name,
                };
                let kind = match code(&name) {
                    Some(_) => "String".to_string(),
                    None => gdal::vector::field_type_to_name(field_type),
                };
                (name, kind)
            })
            .collect();
        // A name written twice: pandas reads the second as `X.1`.
        let fields = match table {
            Some(_) => pandas_names(fields),
            None => fields,
        };
        let mut facts = facts::Layer {
            name: layer.name(),
            crs: geometry
                .as_ref()
                .and_then(|_| crs_facts(layer.spatial_ref())),
            geometry,
            features: None,
            features_estimated: estimate.is_some(),
            extent: None,
            extent_declared: dataset.driver.as_deref() == Some("GPKG"),
            columns: fields
                .iter()
                .map(|(name, dtype)| facts::Column {
                    name: name.clone(),
                    dtype: dtype.clone(),
                })
                .collect(),
            sample_rows: Vec::new(),
            crs_note: None,
            notes: Vec::new(),
            title_rows: None,
        };
        if table.is_some() && facts.geometry.is_none() && sheet_title::headerless(&fields) {
            if let Some(header) = sheet_title::find(&mut layer) {
                facts.title_rows = Some(header.lines(name, &facts.name, index == 0));
                dataset.layers.push(facts);
                continue;
            }
        }
        facts.features = estimate.or_else(|| match layer.feature_count() {
            // GDAL's -1: the driver counts only by reading (OpenStreetMap).
            u64::MAX => counted_by_reading(&mut layer),
            n => Some(n),
        });
        // OpenStreetMap's extent is the extract's declared box, the same
        // for every layer, not its features'.
        if facts.geometry.is_some() && dataset.driver.as_deref() != Some("OSM") {
            // The extent only where the driver has it cheaply (a header,
            // an index); never a scan of a big file.
            if let Ok(Some(e)) = layer.try_get_extent() {
                facts.extent = Some([e.MinX, e.MinY, e.MaxX, e.MaxY]);
                if facts.crs.is_none() {
                    facts.crs_note = Some(coords::missing_crs(
                        (e.MinX, e.MaxX),
                        (e.MinY, e.MaxY),
                        coords::Holder::Layer,
                    ));
                }
            }
        }
        layer.reset_feature_reading();
        // A layer of geometries alone has no values to show.
        let rows = if fields.is_empty() { 0 } else { SAMPLE_ROWS };
        facts.sample_rows = sample_rows(&layer, rows, &fields, decoded, codes);
        if spaced {
            let names: Vec<String> = fields
                .iter()
                .filter(|(n, _)| n.trim() != n)
                .take(3)
                .map(|(n, _)| format!("{n:?}"))
                .collect();
            facts.notes.push(format!(
                "names with spaces around them, as pandas reads them ({}…): strip them with df.columns = df.columns.str.strip()",
                names.join(", ")
            ));
        }
        if table.is_some() || facts.geometry.is_none() {
            facts
                .notes
                .extend(coords::describe(&column_samples(&mut layer, &fields), "df"));
        }
        dataset.layers.push(facts);
    }
    dataset.more_layers = layers.saturating_sub(10);
    dataset
}

/// The first `rows` rows of `layer` as the card shows them: `name=value`,
/// a code column's and a decoded file's own text where known, pandas'
/// missing value for an empty field.
fn sample_rows(
    layer: &gdal::vector::Layer<'_>,
    rows: usize,
    fields: &[(String, String)],
    decoded: Option<&[Vec<String>]>,
    codes: &[codes::CodeColumn],
) -> Vec<String> {
    let code = |field: &str| codes.iter().find(|c| c.name == field);
    let mut out = Vec::new();
    for (row, feature) in first_features(layer, rows).enumerate() {
        let mut values: Vec<String> = fields
            .iter()
            .take(ROW_VALUES)
            .enumerate()
            .map(|(i, (n, kind))| {
                let text = decoded
                    .filter(|_| matches!(kind.as_str(), "String" | "Date" | "DateTime" | "Time"))
                    .and_then(|d| d.get(row + 1)?.get(i));
                match code(n).and_then(|c| c.first.get(row)).or(text) {
                    // pandas reads an empty field as missing.
                    Some(written) if written.is_empty() => format!("{n}=None"),
                    Some(written) => {
                        format!(
                            "{n}={}",
                            crate::util::clip(&format!("{written:?}"), VALUE_CHARS)
                        )
                    }
                    None => format!("{n}={}", sample_text(&feature, i)),
                }
            })
            .collect();
        if fields.len() > ROW_VALUES {
            values.push(format!("… ({} more)", fields.len() - ROW_VALUES));
        }
        out.push(values.join(", "));
    }
    out
}

/// Column names as pandas' C parser makes them unique: a name's second
/// occurrence becomes `X.1`, its third `X.2`, skipping names the header
/// already holds.
fn pandas_names(fields: Vec<(String, String)>) -> Vec<(String, String)> {
    let header: std::collections::HashSet<String> = fields.iter().map(|(n, _)| n.clone()).collect();
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    fields
        .into_iter()
        .map(|(old, kind)| {
            let mut name = old.clone();
            let mut seen = counts.get(&old).copied().unwrap_or(0);
            while seen > 0 {
                counts.insert(old.clone(), seen + 1);
                name = format!("{old}.{seen}");
                seen = if header.contains(&name) {
                    seen + 1
                } else {
                    counts.get(&name).copied().unwrap_or(0)
                };
            }
            counts.insert(name.clone(), seen + 1);
            (name, kind)
        })
        .collect()
}

/// Most features [`counted_by_reading`] reads, and for how long.
const COUNTED_FEATURES: usize = 1_000_000;
const COUNTING_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// The features of a layer whose driver cannot count them otherwise, by
/// reading them; `None` past [`COUNTED_FEATURES`] or [`COUNTING_TIME`].
/// Leaves the layer's reading reset.
fn counted_by_reading(layer: &mut gdal::vector::Layer) -> Option<u64> {
    let started = std::time::Instant::now();
    layer.reset_feature_reading();
    let mut n = 0usize;
    let mut stopped = false;
    for _ in first_features(layer, COUNTED_FEATURES + 1) {
        n += 1;
        if n > COUNTED_FEATURES || started.elapsed() > COUNTING_TIME {
            stopped = true;
            break;
        }
    }
    layer.reset_feature_reading();
    (!stopped).then_some(n as u64)
}

/// Numeric ranges and a few text values of each column over every row, or
/// the first rows read in [`SCAN_TIME`] (at most [`COUNTED_FEATURES`]; the
/// samples then say how many). A text column whose every value parses as a number
/// (a CSV read without type detection) counts as numeric.
fn column_samples(
    layer: &mut gdal::vector::Layer<'_>,
    fields: &[(String, String)],
) -> Vec<ColumnSample> {
    use gdal::vector::FieldValue as F;
    let mut samples: Vec<ColumnSample> = fields
        .iter()
        .map(|(name, _)| ColumnSample {
            name: name.clone(),
            ..Default::default()
        })
        .collect();
    let mut numeric = vec![true; fields.len()];
    let started = std::time::Instant::now();
    let mut scanned = 0usize;
    let mut stopped = false;
    layer.reset_feature_reading();
    for feature in first_features(layer, COUNTED_FEATURES + 1) {
        if scanned == COUNTED_FEATURES || started.elapsed() > SCAN_TIME {
            stopped = true;
            break;
        }
        scanned += 1;
        for (i, sample) in samples.iter_mut().enumerate() {
            let number = match set_field(&feature, i) {
                None => continue,
                Some(F::IntegerValue(v)) => Some(f64::from(v)),
                Some(F::Integer64Value(v)) => Some(v as f64),
                Some(F::RealValue(v)) => Some(v),
                Some(F::StringValue(s)) => {
                    if sample.texts.len() < SAMPLE_ROWS && !s.trim().is_empty() {
                        sample.texts.push(crate::util::clip(&s, 200));
                    }
                    s.trim().parse::<f64>().ok()
                }
                Some(_) => None,
            };
            match number {
                Some(x) if numeric[i] && x.is_finite() => {
                    let (lo, hi) = sample.range.unwrap_or((x, x));
                    sample.range = Some((lo.min(x), hi.max(x)));
                }
                _ => numeric[i] = false,
            }
        }
    }
    for (sample, numeric) in samples.iter_mut().zip(numeric) {
        if !numeric {
            sample.range = None;
        }
        if stopped {
            sample.first_rows = Some(scanned);
        }
    }
    layer.reset_feature_reading();
    samples
}

/// `[a, b, c]`.
fn list_text(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(", "))
}

/// Field `i` of `feature`, `None` when it is null or not set at all (a
/// GPX point without `course`, an OSM way without `name`): geopandas reads
/// both as None/NaN, where the bindings would give an unset field's
/// default, 0 or "".
fn set_field(feature: &gdal::vector::Feature<'_>, i: usize) -> Option<gdal::vector::FieldValue> {
    is_set(feature, i)
        .then(|| feature.field(i).ok().flatten())
        .flatten()
}

/// Field `i` of `feature` as the sample shows it: `None` where pandas
/// reads a missing value, a binary value by its size.
fn sample_text(feature: &gdal::vector::Feature<'_>, i: usize) -> String {
    match set_field(feature, i) {
        Some(value) => value_text(Some(value)),
        // Set, and of a type the bindings do not read (OFTBinary).
        None if is_set(feature, i) => "(bytes)".to_string(),
        None => value_text(None),
    }
}

/// Whether field `i` of `feature` is set and not null.
fn is_set(feature: &gdal::vector::Feature<'_>, i: usize) -> bool {
    let Ok(index) = i32::try_from(i) else {
        return false;
    };
    // SAFETY: the handle belongs to `feature`, alive for the call; an index
    // out of range is answered with 0 by OGR.
    unsafe { gdal_sys::OGR_F_IsFieldSetAndNotNull(feature.c_feature(), index) != 0 }
}

fn value_text(v: Option<gdal::vector::FieldValue>) -> String {
    use gdal::vector::FieldValue as F;
    let text = match v {
        None => "None".to_string(),
        Some(F::IntegerValue(i)) => i.to_string(),
        Some(F::Integer64Value(i)) => i.to_string(),
        Some(F::RealValue(r)) => fmt_num(r),
        Some(F::StringValue(s)) => format!("{s:?}"),
        Some(F::DateValue(d)) => d.to_string(),
        Some(F::DateTimeValue(d)) => d.to_string(),
        // Lists as Python writes them, not the bindings' variant names.
        Some(F::IntegerListValue(v)) => list_text(v.iter().map(i32::to_string)),
        Some(F::Integer64ListValue(v)) => list_text(v.iter().map(i64::to_string)),
        Some(F::RealListValue(v)) => list_text(v.iter().map(|x| fmt_num(*x))),
        Some(F::StringListValue(v)) => list_text(v.iter().map(|x| format!("{x:?}"))),
    };
    crate::util::clip(&text, VALUE_CHARS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn repeated_names_are_numbered_as_pandas_numbers_them() {
        let named = |names: &[&str]| {
            super::pandas_names(
                names
                    .iter()
                    .map(|n| (n.to_string(), String::new()))
                    .collect(),
            )
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
        };
        assert_eq!(named(&["X", "Y", "X", "X"]), ["X", "Y", "X.1", "X.2"]);
        // pandas 3.1 reads a, a.1, a, a as a, a.1, a.2, a.3.
        assert_eq!(named(&["a", "a.1", "a", "a"]), ["a", "a.1", "a.2", "a.3"]);
        assert_eq!(named(&["b", "b", "b.1", "b"]), ["b", "b.2", "b.1", "b.3"]);
    }

    /// A 4×3 one-band GeoTIFF at `path`, with `transform` when given and
    /// no CRS.
    fn tiff_without_crs(path: &std::path::Path, transform: Option<[f64; 6]>) {
        let mem = gdal::DriverManager::get_driver_by_name("MEM").unwrap();
        let mut ds = mem.create_with_band_type::<u8, _>("", 4, 3, 1).unwrap();
        if let Some(gt) = transform {
            ds.set_geo_transform(&gt).unwrap();
        }
        let gtiff = gdal::DriverManager::get_driver_by_name("GTiff").unwrap();
        ds.create_copy(&gtiff, path, &Default::default()).unwrap();
    }

    #[test]
    fn a_raster_without_a_crs_is_judged_from_its_corners_or_said_to_be_unreferenced() {
        let dir = tempfile::tempdir().unwrap();
        tiff_without_crs(
            &dir.path().join("utm.tif"),
            Some([400_000.0, 30.0, 0.0, 5_600_090.0, 0.0, -30.0]),
        );
        tiff_without_crs(
            &dir.path().join("deg.tif"),
            Some([8.0, 0.5, 0.0, 47.5, 0.0, -0.5]),
        );
        tiff_without_crs(&dir.path().join("scan.tif"), None);
        let card = crate::card::card_for_dir(dir.path(), "data/", 10_000);
        assert!(
            card.contains(
                "  CRS: none in the file; the coordinates (x 400000…400120, y 5600000…5600090) are \
                 projected units, not degrees; the range fits a UTM zone"
            ),
            "{card}"
        );
        assert!(
            card.contains(
                "  CRS: none in the file, units unknown; the coordinates (x 8…10, y 46…47.5) are small \
                 enough to be degrees, but nothing in the file says they are: take the CRS from the \
                 task or metadata and set it (pass crs=… as the source CRS where it is warped, and in \
                 the profile where it is written) before any reprojection, distance or area"
            ),
            "{card}"
        );
        assert!(
            card.contains(
                "- data/scan.tif — raster (GTiff), 4×3 px, 1 band(s), no CRS\n  not georeferenced: \
                 no CRS and no geotransform (row/column coordinates only)\n"
            ),
            "{card}"
        );
    }

    #[test]
    fn a_file_gdal_refuses_gets_gdals_reason_and_where_its_json_breaks_in_the_card() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cut.geojson"), r#"{"type":"Feature"#).unwrap();
        std::fs::write(dir.path().join("noise.tif"), [0u8, 7, 250, 13].repeat(64)).unwrap();
        std::fs::write(
            dir.path().join("fine.geojson"),
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"n":1},"geometry":{"type":"Point","coordinates":[1,2]}}]}"#,
        )
        .unwrap();
        let card = crate::card::card_for_dir(dir.path(), "data/", 10_000);
        assert!(
            card.contains(
                "- data/cut.geojson: GDAL cannot read it: not recognized as a supported file format \
                 (not valid JSON: EOF while parsing a string at line 1 column 16)\n"
            ),
            "{card}"
        );
        assert!(
            card.contains(
                "- data/noise.tif: GDAL cannot read it: not recognized as a supported file format\n"
            ),
            "{card}"
        );
        assert!(
            card.contains("- data/fine.geojson — vector (GeoJSON)"),
            "{card}"
        );
        assert!(!card.contains("NULL pointer"), "{card}");
    }
}
