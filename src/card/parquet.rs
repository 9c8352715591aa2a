//! Parquet and GeoParquet, read natively from the file's footer: row and
//! row-group counts, columns and types, the `geo` metadata (geometry
//! encoding and types, CRS, bbox) and column statistics — instant for a
//! multi-gigabyte file — plus a few sample rows from the first row group.
//! (Debian's GDAL has no Parquet driver, so this does not go through GDAL;
//! GDAL only turns sample WKB into WKT.)

use std::path::Path;

use gdal::spatial_ref::{AxisMappingStrategy, SpatialRef};
use gdal::vector::Geometry;
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::statistics::Statistics;
use parquet::record::Field;
use parquet::schema::types::Type;
use serde_json::Value;

use super::coords::{self, ColumnSample};
use super::facts::{Column, Crs, Dataset, DatasetKind, Geometry as GeometryFacts, Layer};
use super::{size_text, SchemaError, SAMPLE_ROWS, VALUE_CHARS};

/// Files above this size get a hint on reading only part of them.
const BIG_FILE: u64 = 100 << 20;

/// Columns shown on the card; the rest are counted.
const SHOWN_COLUMNS: usize = 40;

/// The GeoParquet `geo` metadata of one geometry column.
struct GeoColumn {
    name: String,
    encoding: String,
    types: Vec<String>,
    crs: String,
    /// The CRS as the metadata states it (for GDAL, where `crs` is for the card).
    stated: StatedCrs,
    bbox: Option<[f64; 4]>,
    /// Leaf column paths of a bbox covering (`bbox.xmin`…), GeoParquet 1.1.
    covering: Option<[String; 4]>,
}

/// The card's facts for a Parquet file at `path`, shown as `shown`: the
/// entry's lines, and its table as a layer (rows, columns, the geometry
/// types and CRS its `geo` metadata declares, its bbox) and read call.
pub(super) fn facts(path: &Path, shown: &str) -> Result<Dataset, SchemaError> {
    let unreadable = |message: String| SchemaError::Unreadable {
        file: shown.to_string(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| unreadable(e.to_string()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let reader = SerializedFileReader::new(file).map_err(|e| unreadable(e.to_string()))?;
    let text = entry(&reader, size, shown);
    let mut dataset = Dataset::from_lines(shown, DatasetKind::Parquet, &text);
    let meta = reader.metadata();
    let (_, geo) = geo_metadata(meta);
    let geometry = geo.first();
    let name = Path::new(shown)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    dataset.layers.push(Layer {
        name,
        geometry: geometry.map(|g| GeometryFacts {
            text: if g.types.is_empty() {
                "any geometry type".to_string()
            } else {
                g.types.join("/")
            },
            types: Vec::new(),
            has_z: g.types.iter().any(|t| t.ends_with(" Z")),
            scanned_part: false,
            unreadable: false,
        }),
        crs: geometry.and_then(|g| match &g.stated {
            StatedCrs::Unknown => None,
            StatedCrs::Default => Some(Crs {
                text: "OGC:CRS84".into(),
                epsg: None,
                wkt: None,
                geographic: true,
            }),
            StatedCrs::Definition(_) => Some(Crs {
                epsg: g.crs.strip_prefix("EPSG:").and_then(|c| c.parse().ok()),
                text: g.crs.clone(),
                wkt: None,
                geographic: g.crs == "EPSG:4326" || g.crs.contains("CRS84"),
            }),
        }),
        features: u64::try_from(meta.file_metadata().num_rows()).ok(),
        features_estimated: false,
        extent: geometry.and_then(|g| {
            g.bbox
                .or_else(|| g.covering.as_ref().and_then(|c| covering_bbox(meta, c)))
        }),
        extent_declared: true,
        columns: top_level(meta)
            .iter()
            .filter(|f| !is_stored_index(f.name()))
            .map(|f| Column {
                name: f.name().to_string(),
                dtype: type_text(f),
            })
            .collect(),
        sample_rows: Vec::new(),
        crs_note: None,
        notes: Vec::new(),
        title_rows: None,
    });
    dataset.read_call = Some(if geo.is_empty() {
        format!("pd.read_parquet({})", crate::util::py_str(shown))
    } else {
        format!("gpd.read_parquet({})", crate::util::py_str(shown))
    });
    Ok(dataset)
}

/// The card entry for the Parquet file `reader` reads (`size` bytes),
/// shown as `shown`.
fn entry(reader: &SerializedFileReader<std::fs::File>, size: u64, shown: &str) -> String {
    let meta = reader.metadata();
    let file_meta = meta.file_metadata();
    let (version, geo) = geo_metadata(meta);
    let groups = meta.num_row_groups();
    let compression = if groups > 0 && meta.row_group(0).num_columns() > 0 {
        let codec = format!("{:?}", meta.row_group(0).column(0).compression());
        codec.split('(').next().unwrap_or("").to_string()
    } else {
        String::new()
    };
    let what = match &version {
        Some(v) => format!("GeoParquet {v}"),
        None => "Parquet".to_string(),
    };
    let mut text = format!(
        "- {shown} — {what}, {} rows in {groups} row group(s), {}, {compression} (read from its metadata)\n",
        file_meta.num_rows(),
        size_text(size),
    );
    for g in &geo {
        let bbox = g
            .bbox
            .or_else(|| g.covering.as_ref().and_then(|c| covering_bbox(meta, c)));
        text.push_str(&format!(
            "  geometry `{}`: {}, {}, {}{}\n",
            g.name,
            if g.types.is_empty() {
                "any geometry type".to_string()
            } else {
                g.types.join("/")
            },
            g.crs,
            g.encoding,
            bbox.map(|b| format!(
                ", bbox [{}, {}, {}, {}]",
                num(b[0]),
                num(b[1]),
                num(b[2]),
                num(b[3])
            ))
            .unwrap_or_default()
        ));
    }
    let fields = top_level(meta);
    let mut cols: Vec<String> = fields
        .iter()
        .take(SHOWN_COLUMNS)
        .map(|f| format!("{} ({})", f.name(), type_text(f)))
        .collect();
    if fields.len() > SHOWN_COLUMNS {
        cols.push(format!("… {} more", fields.len() - SHOWN_COLUMNS));
    }
    text.push_str(&format!("  columns: {}\n", cols.join(", ")));
    // Geometry columns in an encoding this reader knows, shown as WKT.
    let geometry_columns: Vec<(&str, Encoding)> = geo
        .iter()
        .filter_map(|g| Some((g.name.as_str(), Encoding::of(&g.encoding)?)))
        .collect();
    // Bbox covering columns repeat the geometry's extent: not in sample rows.
    let coverings: Vec<&str> = geo
        .iter()
        .filter_map(|g| g.covering.as_ref())
        .filter_map(|c| c[0].split('.').next())
        .collect();
    let mut samples: Vec<ColumnSample> = fields
        .iter()
        .map(|f| ColumnSample {
            name: f.name().to_string(),
            range: column_range(meta, f.name()),
            ..Default::default()
        })
        .collect();
    match reader.get_row_iter(None) {
        Ok(rows) => {
            for row in rows.take(SAMPLE_ROWS) {
                let row = match row {
                    Ok(row) => row,
                    Err(e) => {
                        text.push_str(&format!("  sample rows not read: {e}\n"));
                        break;
                    }
                };
                let mut values = Vec::new();
                for (i, (name, field)) in row.get_column_iter().enumerate() {
                    let encoding = geometry_columns
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|&(_, e)| e);
                    let geometry = encoding.is_some();
                    if !coverings.contains(&name.as_str()) {
                        values.push(format!("{name}={}", field_text(field, encoding)));
                    }
                    if let Some(sample) = samples.get_mut(i) {
                        match field {
                            Field::Str(s) => sample.texts.push(crate::util::clip(s, 200)),
                            Field::Bytes(b) if !geometry => {
                                sample.wkb = gdal::vector::Geometry::from_wkb(b.data()).is_ok();
                            }
                            _ => {}
                        }
                    }
                }
                text.push_str(&format!("  row: {}\n", values.join(", ")));
            }
        }
        Err(e) => text.push_str(&format!("  sample rows not read: {e}\n")),
    }
    // Geometry columns the metadata already describes are not guessed at.
    samples.retain(|s| !geo.iter().any(|g| g.name == s.name));
    for line in coords::describe(&samples, if geo.is_empty() { "df" } else { "gdf" }) {
        text.push_str(&format!("  {line}\n"));
    }
    text.push_str(&read_hint(shown, size, &geo));
    text
}

/// A reader of the Parquet file at `path` (its footer read).
fn open(
    path: &Path,
) -> Result<SerializedFileReader<std::fs::File>, ::parquet::errors::ParquetError> {
    SerializedFileReader::new(std::fs::File::open(path)?)
}

/// A Parquet file's top-level columns, from its footer's schema.
fn top_level(meta: &ParquetMetaData) -> &[parquet::schema::types::TypePtr] {
    meta.file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
}

/// The names of a Parquet file's top-level columns, from its footer
/// (without a stored pandas index).
pub(super) fn column_names(path: &Path) -> Result<Vec<String>, ::parquet::errors::ParquetError> {
    let reader = open(path)?;
    Ok(top_level(reader.metadata())
        .iter()
        .map(|f| f.name().to_string())
        .filter(|n| !is_stored_index(n))
        .collect())
}

/// A column in which pandas stored a frame's index (`__index_level_0__`):
/// not one of the data's columns.
fn is_stored_index(name: &str) -> bool {
    name.starts_with("__index_level_")
}

/// The row count of a Parquet file and whether it is GeoParquet, from its
/// footer (the output check of a `.parquet` result).
pub fn row_count(path: &Path) -> Result<(i64, bool), ::parquet::errors::ParquetError> {
    let reader = open(path)?;
    let meta = reader.metadata();
    Ok((
        meta.file_metadata().num_rows(),
        geo_metadata(meta).0.is_some(),
    ))
}

/// The CRS GeoParquet metadata states for a geometry column.
#[derive(Debug, Clone, PartialEq)]
pub enum StatedCrs {
    /// No `crs` key: GeoParquet's default, OGC:CRS84 (lon/lat degrees).
    Default,
    /// `"crs": null`: unknown.
    Unknown,
    /// A PROJJSON object (as JSON text) or a string, for GDAL to read.
    Definition(String),
}

impl StatedCrs {
    fn of(crs: Option<&Value>) -> StatedCrs {
        match crs {
            None => StatedCrs::Default,
            Some(Value::Null) => StatedCrs::Unknown,
            Some(Value::String(s)) => StatedCrs::Definition(s.clone()),
            Some(other) => StatedCrs::Definition(other.to_string()),
        }
    }

    /// The CRS as GDAL reads it, x first (`None` when unknown); an error
    /// when GDAL/PROJ cannot read the definition.
    pub fn spatial_ref(&self) -> Result<Option<SpatialRef>, gdal::errors::GdalError> {
        let mut srs = match self {
            StatedCrs::Unknown => return Ok(None),
            StatedCrs::Default => SpatialRef::from_definition("OGC:CRS84")?,
            StatedCrs::Definition(text) => SpatialRef::from_definition(text)?,
        };
        srs.set_axis_mapping_strategy(AxisMappingStrategy::TraditionalGisOrder);
        Ok(Some(srs))
    }
}

/// A geometry column's stated CRS and its extent in that CRS, if known.
pub type GeoExtent = (StatedCrs, Option<[f64; 4]>);

/// Each geometry column of a GeoParquet file at `path` with its stated CRS
/// and extent (the `bbox` metadata, else a bbox covering's statistics), in
/// that CRS, from the footer alone (empty for plain Parquet).
pub fn geo_extents(path: &Path) -> Result<Vec<GeoExtent>, ::parquet::errors::ParquetError> {
    let reader = open(path)?;
    let meta = reader.metadata();
    Ok(geo_metadata(meta)
        .1
        .into_iter()
        .map(|g| {
            let bbox = g
                .bbox
                .or_else(|| g.covering.as_ref().and_then(|c| covering_bbox(meta, c)));
            (g.stated, bbox)
        })
        .collect())
}

/// A (Geo)Parquet file's rows as the output scorer and the output checks
/// compare them with other vector files and tables.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    /// Rows in the file (from its footer).
    pub count: u64,
    /// Attribute column names: geometry columns, bbox coverings and
    /// pandas' stored index (`__index_level_0__`) left out.
    pub columns: Vec<String>,
    /// The primary geometry column's CRS; `None` for plain Parquet.
    pub crs: Option<StatedCrs>,
    /// The primary geometry column's values in the rows read, in order
    /// (`None`: null, or not a geometry).
    pub geometries: Vec<Option<Geometry>>,
    /// The primary geometry column's encoding when it is none this reader
    /// knows (WKB and GeoArrow's are): its geometries are not read.
    pub unread_encoding: Option<String>,
}

/// The rows of a Parquet file at `path` (the first `limit` of them, or
/// all): its attribute columns' names and its primary geometry column's
/// values (every row group).
pub fn read_rows(
    path: &Path,
    limit: Option<usize>,
) -> Result<Rows, ::parquet::errors::ParquetError> {
    let reader = open(path)?;
    let meta = reader.metadata();
    let (_, geo) = geo_metadata(meta);
    let primary = geo.first();
    let hidden: Vec<&str> = geo
        .iter()
        .map(|g| g.name.as_str())
        .chain(
            geo.iter()
                .filter_map(|g| g.covering.as_ref())
                .filter_map(|c| c[0].split('.').next()),
        )
        .collect();
    let mut rows = Rows {
        count: u64::try_from(meta.file_metadata().num_rows()).unwrap_or(0),
        columns: top_level(meta)
            .iter()
            .map(|f| f.name().to_string())
            .filter(|n| !hidden.contains(&n.as_str()) && !is_stored_index(n))
            .collect(),
        crs: primary.map(|g| g.stated.clone()),
        ..Rows::default()
    };
    let Some(primary) = primary else {
        return Ok(rows);
    };
    let Some(encoding) = Encoding::of(&primary.encoding) else {
        rows.unread_encoding = Some(primary.encoding.clone());
        return Ok(rows);
    };
    for row in reader.get_row_iter(None)?.take(limit.unwrap_or(usize::MAX)) {
        let row = row?;
        let value = row
            .get_column_iter()
            .find(|(name, _)| *name == &primary.name)
            .map(|(_, field)| field);
        rows.geometries
            .push(value.and_then(|f| encoding.geometry(f)));
    }
    Ok(rows)
}

/// A Parquet file's columns (pandas' stored index left out) and every
/// row's values as text (null: empty; numbers as Rust writes them, which
/// parse back exactly), for the output scorer's table comparison.
pub fn read_text_table(
    path: &Path,
) -> Result<(Vec<String>, Vec<Vec<String>>), ::parquet::errors::ParquetError> {
    let reader = open(path)?;
    let fields = top_level(reader.metadata()).to_vec();
    let kept: Vec<bool> = fields.iter().map(|f| !is_stored_index(f.name())).collect();
    let columns = fields
        .iter()
        .zip(&kept)
        .filter(|(_, keep)| **keep)
        .map(|(f, _)| f.name().to_string())
        .collect();
    let mut rows = Vec::new();
    for row in reader.get_row_iter(None)? {
        let row = row?;
        rows.push(
            row.get_column_iter()
                .zip(&kept)
                .filter(|(_, keep)| **keep)
                .map(|((_, field), _)| match field {
                    Field::Null => String::new(),
                    Field::Str(s) => s.clone(),
                    Field::Double(x) => x.to_string(),
                    Field::Float(x) => x.to_string(),
                    other => plain_text(other),
                })
                .collect(),
        );
    }
    Ok((columns, rows))
}

/// How a GeoParquet geometry column stores its values.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Encoding {
    /// Well-known binary.
    Wkb,
    /// GeoArrow's native nesting: coordinates as structs (`x`, `y`[, `z`,
    /// `m`]: GeoParquet's "separated" layout) in `depth` levels of lists.
    GeoArrow {
        wkt_type: &'static str,
        depth: usize,
    },
}

impl Encoding {
    fn of(name: &str) -> Option<Encoding> {
        let (wkt_type, depth) = match name.to_ascii_lowercase().as_str() {
            "wkb" => return Some(Encoding::Wkb),
            "point" => ("POINT", 0),
            "linestring" => ("LINESTRING", 1),
            "polygon" => ("POLYGON", 2),
            "multipoint" => ("MULTIPOINT", 1),
            "multilinestring" => ("MULTILINESTRING", 2),
            "multipolygon" => ("MULTIPOLYGON", 3),
            _ => return None,
        };
        Some(Encoding::GeoArrow { wkt_type, depth })
    }

    /// The geometry a value holds (`None` for a null or a malformed one).
    fn geometry(self, field: &Field) -> Option<Geometry> {
        match (self, field) {
            (_, Field::Null) => None,
            (Encoding::Wkb, Field::Bytes(b)) => Geometry::from_wkb(b.data()).ok(),
            (Encoding::Wkb, _) => None,
            (Encoding::GeoArrow { wkt_type, depth }, field) => {
                let wkt = match geoarrow_body(field, depth)? {
                    body if body.is_empty() => format!("{wkt_type} EMPTY"),
                    body => format!("{wkt_type} ({body})"),
                };
                Geometry::from_wkt(&wkt).ok()
            }
        }
    }
}

/// The WKT between a GeoArrow value's outer parentheses: `x y` for a
/// coordinate, its parts joined for a list (each in parentheses when it is
/// a list itself).
fn geoarrow_body(field: &Field, depth: usize) -> Option<String> {
    if depth == 0 {
        // GeoParquet stores GeoArrow coordinates "separated": a struct.
        let Field::Group(coord) = field else {
            return None;
        };
        let numbers: Vec<f64> = coord
            .get_column_iter()
            .map(|(_, v)| number(v))
            .collect::<Option<_>>()?;
        return (numbers.len() >= 2).then(|| {
            numbers
                .iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(" ")
        });
    }
    let Field::ListInternal(list) = field else {
        return None;
    };
    let parts = list
        .elements()
        .iter()
        .map(|part| {
            let body = geoarrow_body(part, depth - 1)?;
            Some(if depth > 1 { format!("({body})") } else { body })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(parts.join(", "))
}

/// A coordinate's number.
fn number(field: &Field) -> Option<f64> {
    match field {
        Field::Double(x) => Some(*x),
        Field::Float(x) => Some(f64::from(*x)),
        _ => None,
    }
}

/// How to read the file in the sandbox.
fn read_hint(shown: &str, size: u64, geo: &[GeoColumn]) -> String {
    let reader = if geo.is_empty() {
        "pd.read_parquet"
    } else {
        "gpd.read_parquet"
    };
    let shown = crate::util::py_str(shown);
    let mut hint = format!("  read: {reader}({shown})");
    if size > BIG_FILE {
        hint.push_str(&format!(
            "; only what you need: {reader}({shown}, columns=[…])"
        ));
        if geo.iter().any(|g| g.covering.is_some()) {
            hint.push_str(&format!(
                ", or an area: gpd.read_parquet({shown}, bbox=(xmin, ymin, xmax, ymax))"
            ));
        }
    }
    hint.push('\n');
    hint
}

/// The GeoParquet version and geometry columns, when the file has a `geo`
/// key; `(None, [])` for plain Parquet or unparsable metadata.
fn geo_metadata(meta: &ParquetMetaData) -> (Option<String>, Vec<GeoColumn>) {
    let Some(raw) = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == "geo"))
        .and_then(|k| k.value.as_deref())
    else {
        return (None, Vec::new());
    };
    let Ok(geo) = serde_json::from_str::<Value>(raw) else {
        return (None, Vec::new());
    };
    let version = geo["version"]
        .as_str()
        .unwrap_or("(no version)")
        .to_string();
    let primary = geo["primary_column"].as_str().unwrap_or("");
    let mut columns: Vec<GeoColumn> = geo["columns"]
        .as_object()
        .map(|cols| {
            cols.iter()
                .map(|(name, c)| GeoColumn {
                    name: name.clone(),
                    encoding: c["encoding"].as_str().unwrap_or("WKB").to_string(),
                    types: c["geometry_types"]
                        .as_array()
                        .map(|t| {
                            t.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                    crs: crs_text(c.get("crs")),
                    stated: StatedCrs::of(c.get("crs")),
                    bbox: c["bbox"].as_array().and_then(|b| {
                        let v: Vec<f64> = b.iter().filter_map(Value::as_f64).collect();
                        // 4 values (2D) or 6 (3D: xmin, ymin, zmin, xmax, ymax, zmax).
                        match v.len() {
                            4 => Some([v[0], v[1], v[2], v[3]]),
                            6 => Some([v[0], v[1], v[3], v[4]]),
                            _ => None,
                        }
                    }),
                    covering: covering_paths(&c["covering"]["bbox"]),
                })
                .collect()
        })
        .unwrap_or_default();
    // The primary geometry column first.
    columns.sort_by_key(|c| c.name != primary);
    (Some(version), columns)
}

/// The leaf paths of a GeoParquet 1.1 bbox covering.
fn covering_paths(bbox: &Value) -> Option<[String; 4]> {
    let path = |key: &str| -> Option<String> {
        let parts: Vec<&str> = bbox[key]
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        (!parts.is_empty()).then(|| parts.join("."))
    };
    Some([path("xmin")?, path("ymin")?, path("xmax")?, path("ymax")?])
}

/// The extent from a covering's column statistics (min of xmin, … max of ymax).
fn covering_bbox(meta: &ParquetMetaData, paths: &[String; 4]) -> Option<[f64; 4]> {
    let (x0, _) = column_range(meta, &paths[0])?;
    let (y0, _) = column_range(meta, &paths[1])?;
    let (_, x1) = column_range(meta, &paths[2])?;
    let (_, y1) = column_range(meta, &paths[3])?;
    Some([x0, y0, x1, y1])
}

/// `EPSG:4326` from PROJJSON's id, its name otherwise; GeoParquet's rules
/// for a missing (`OGC:CRS84`) or null (unknown) CRS.
fn crs_text(crs: Option<&Value>) -> String {
    match crs {
        None => {
            "OGC:CRS84 (no `crs` in the metadata: GeoParquet's default, lon/lat degrees)".into()
        }
        Some(Value::Null) => "no CRS (null in the metadata: unknown)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(c) => match (c["id"]["authority"].as_str(), &c["id"]["code"]) {
            (Some(auth), Value::Number(code)) => format!("{auth}:{code}"),
            (Some(auth), Value::String(code)) => format!("{auth}:{code}"),
            _ => c["name"]
                .as_str()
                .map(|n| format!("CRS \"{n}\" (no EPSG code)"))
                .unwrap_or_else(|| "a CRS without an EPSG code".into()),
        },
    }
}

/// The min and max of a numeric leaf column (`a` or `a.b`) over all row
/// groups, from the footer's statistics.
fn column_range(meta: &ParquetMetaData, path: &str) -> Option<(f64, f64)> {
    let schema = meta.file_metadata().schema_descr();
    let index = (0..schema.num_columns()).find(|&i| schema.column(i).path().string() == path)?;
    let mut range: Option<(f64, f64)> = None;
    for g in 0..meta.num_row_groups() {
        let stats = meta.row_group(g).column(index).statistics()?;
        let (lo, hi) = match stats {
            Statistics::Int32(s) => (f64::from(*s.min_opt()?), f64::from(*s.max_opt()?)),
            Statistics::Int64(s) => (*s.min_opt()? as f64, *s.max_opt()? as f64),
            Statistics::Float(s) => (f64::from(*s.min_opt()?), f64::from(*s.max_opt()?)),
            Statistics::Double(s) => (*s.min_opt()?, *s.max_opt()?),
            _ => return None,
        };
        range = Some(match range {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }
    range
}

/// A column's type as the card names it.
fn type_text(t: &Type) -> String {
    let info = t.get_basic_info();
    if !t.is_primitive() {
        return match (info.logical_type_ref(), info.converted_type()) {
            (Some(LogicalType::List), _) | (_, ConvertedType::LIST) => "List",
            (Some(LogicalType::Map), _) | (_, ConvertedType::MAP) => "Map",
            _ => "Struct",
        }
        .into();
    }
    if let Some(logical) = info.logical_type_ref() {
        return match logical {
            LogicalType::String => "String".into(),
            LogicalType::Date => "Date".into(),
            LogicalType::Timestamp { .. } => "Timestamp".into(),
            LogicalType::Decimal { .. } => "Decimal".into(),
            LogicalType::Integer(int) => format!(
                "{}Int{}",
                if int.is_signed { "" } else { "U" },
                int.bit_width
            ),
            other => {
                let name = format!("{other:?}");
                name.split([' ', '{', '(']).next().unwrap_or("").to_string()
            }
        };
    }
    match (t.get_physical_type(), info.converted_type()) {
        (_, ConvertedType::UTF8) => "String",
        (PhysicalType::BOOLEAN, _) => "Bool",
        (PhysicalType::INT32, _) => "Int32",
        (PhysicalType::INT64, _) => "Int64",
        (PhysicalType::INT96, _) => "Timestamp (INT96)",
        (PhysicalType::FLOAT, _) => "Float32",
        (PhysicalType::DOUBLE, _) => "Float64",
        (PhysicalType::BYTE_ARRAY, _) => "Binary",
        (PhysicalType::FIXED_LEN_BYTE_ARRAY, _) => "FixedBinary",
    }
    .into()
}

/// A sample value: a geometry (WKB or GeoArrow, by its column's
/// `encoding`) as WKT, strings quoted, all clipped.
fn field_text(field: &Field, encoding: Option<Encoding>) -> String {
    let text = match (field, encoding) {
        (Field::Null, _) => "null".to_string(),
        (_, Some(encoding)) => match encoding.geometry(field).map(|g| g.wkt()) {
            Some(Ok(wkt)) => wkt,
            _ => match field {
                Field::Bytes(b) => format!("<{} bytes, not WKB>", b.len()),
                _ => "<not a geometry>".to_string(),
            },
        },
        (field, None) => plain_text(field),
    };
    crate::util::clip(&text, VALUE_CHARS)
}

/// A sample value that is not a geometry.
fn plain_text(field: &Field) -> String {
    match field {
        Field::Null => "null".to_string(),
        Field::Str(s) => format!("{s:?}"),
        Field::Bytes(b) => format!("<{} bytes>", b.len()),
        Field::Double(x) => num(*x),
        Field::Float(x) => num(f64::from(*x)),
        other => other.to_string(),
    }
}

/// A number without float noise.
fn num(x: f64) -> String {
    super::facts::fmt_num(x)
}
