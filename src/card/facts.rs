//! The card's facts as data: what `gisclaw card --json` prints, the MCP
//! card resource serves, and the text card is rendered from
//! ([`Dataset::text`]). Its JSON Schema is `gisclaw schema card`.
//!
//! GDAL-read files (vector layers, tables, rasters, NetCDF/HDF5), and the
//! members of archives read through GDAL, carry their facts in fields;
//! Parquet, an archive's own listing, a big GeoJSON and a CSV of one column
//! carry the entry's lines in [`Dataset::lines`] (their facts in fields are
//! not done yet).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of this data's shape; raised when a field changes meaning.
pub const CARD_SCHEMA_VERSION: u32 = 1;

/// A data folder's card as data.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FolderCard {
    /// [`CARD_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// How the folder is shown to the model (`data/`).
    pub folder: String,
    /// Files in the folder (a File Geodatabase counts as one), those the
    /// sandbox's user cannot read included (they are in `not_read`).
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Every dataset read: main files with their sidecars, and the first
    /// member of each file series.
    pub datasets: Vec<Dataset>,
    /// Files of no kind the card reads (documents, sidecars without their
    /// main file), with their sizes.
    pub other_files: Vec<OtherFile>,
    /// Entries not read, with why: a link out of the folder, a FIFO, a file
    /// the sandbox's user cannot read, a folder link already listed.
    pub not_read: Vec<NotRead>,
    /// Why the listing stopped early, when it did.
    pub listing_stopped: Option<String>,
    /// Why the sandbox's libraries did not check these facts, when they
    /// were asked to and could not (`card::library`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_checked: Option<String>,
}

/// A file of no kind the card reads.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct OtherFile {
    /// Its path as the model names it.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// An entry the card did not read.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NotRead {
    /// Its path as the model names it.
    pub path: String,
    /// Why it was not read.
    pub why: String,
}

/// What kind of dataset a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DatasetKind {
    /// Layers of features (Shapefile, GeoPackage, GeoJSON, GPX, KML…).
    Vector,
    /// A table (CSV, TSV, XLSX, ODS).
    Table,
    /// A raster grid of bands (GeoTIFF, IMG, ASCII grid, SRTM .hgt…).
    Raster,
    /// Multidimensional arrays (NetCDF, HDF5, Zarr).
    Multidim,
    /// Parquet / GeoParquet.
    Parquet,
    /// An archive whose members are described.
    Archive,
}

/// One dataset's facts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Dataset {
    /// Its path as the model names it (`data/roads.shp`).
    pub path: String,
    /// Its kind.
    pub kind: DatasetKind,
    /// The GDAL driver that read it (`ESRI Shapefile`, `GTiff`), when GDAL
    /// did.
    pub driver: Option<String>,
    /// Files read with it (a shapefile's .dbf/.shx/.prj, a raster's
    /// .aux.xml), as names in its folder.
    pub sidecars: Vec<String>,
    /// Layers or sheets (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<Layer>,
    /// Layers beyond those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_layers: usize,
    /// A raster's grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Grid>,
    /// A raster's bands (at most 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bands: Vec<Band>,
    /// Bands beyond those described.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_bands: usize,
    /// A multidimensional file's dimensions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dimensions: Vec<Dimension>,
    /// A multidimensional file's variables (at most 30).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<Variable>,
    /// The Python call that reads it as described (`gpd.read_file('…')`,
    /// `pd.read_csv('…', sep=';')`, `rasterio.open('…')`).
    pub read_call: Option<String>,
    /// Whether a table's first line is its header (`None` for other kinds).
    pub header: Option<bool>,
    /// What may make a read go wrong (unreadable pixels, no valid pixel).
    pub warnings: Vec<String>,
    /// The card's further lines on how to read it (separator, encoding,
    /// codes, other layers, coordinate columns), as the text card shows
    /// them.
    pub notes: Vec<String>,
    /// Lines on the file series it is the first member of, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<String>,
    /// An archive's members read in full (at most 5), as datasets of their
    /// own named by their GDAL path (`/vsizip/data/a.zip/b.shp`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<Dataset>,
    /// For kinds without fields of their own (see the module's doc): the
    /// entry's lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
    /// Why the file cannot be read, when it cannot (nothing else is then
    /// known).
    pub unreadable: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// An extent or geotransform as JSON: `null` when a value of it is not
/// finite (JSON has no NaN; a hostile header's NaN must not make the
/// whole card unreadable).
fn finite_or_none<S: serde::Serializer, const N: usize>(
    value: &Option<[f64; N]>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(values) if values.iter().all(|v| v.is_finite()) => {
            serializer.collect_seq(values.iter())
        }
        _ => serializer.serialize_none(),
    }
}

/// A nodata value as JSON: a number, or `"nan"`, `"inf"`, `"-inf"` (a
/// float raster's NaN nodata is common, and JSON has no such number).
pub(crate) mod non_finite {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes `value`.
    pub fn serialize<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            None => serializer.serialize_none(),
            Some(v) if v.is_nan() => serializer.serialize_str("nan"),
            Some(v) if v.is_infinite() && *v > 0.0 => serializer.serialize_str("inf"),
            Some(v) if v.is_infinite() => serializer.serialize_str("-inf"),
            Some(v) => serializer.serialize_f64(*v),
        }
    }

    /// Reads a number, `"nan"`, `"inf"` or `"-inf"`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Value {
            Number(f64),
            Text(String),
        }
        Ok(match Option::<Value>::deserialize(deserializer)? {
            None => None,
            Some(Value::Number(v)) => Some(v),
            Some(Value::Text(t)) => match t.as_str() {
                "nan" => Some(f64::NAN),
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                other => return Err(serde::de::Error::custom(format!("a nodata of {other:?}"))),
            },
        })
    }
}

/// A coordinate reference system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Crs {
    /// As the card writes it: `EPSG:32633`, else `CRS <name>`.
    pub text: String,
    /// Its EPSG code, when it has one.
    pub epsg: Option<u32>,
    /// Its WKT.
    pub wkt: Option<String>,
    /// Whether its units are degrees of latitude and longitude.
    pub geographic: bool,
}

/// How many features hold one geometry type.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GeometryCount {
    /// Shapely's name of the type (`MultiPolygon`).
    pub name: String,
    /// Features of that type among those scanned.
    pub features: u64,
}

/// A layer's geometry.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Geometry {
    /// As the card writes it: `Polygon/MultiPolygon (31 Polygon, 17
    /// MultiPolygon)`, `Point Z`.
    pub text: String,
    /// The types the first 2,000 features hold, most common first (empty
    /// when none was read and the declared type is used).
    pub types: Vec<GeometryCount>,
    /// Whether the geometries have a Z coordinate.
    pub has_z: bool,
    /// Whether features beyond those scanned were left out of `types`.
    pub scanned_part: bool,
    /// Geopandas cannot read these geometries (a TIN, a polyhedral
    /// surface).
    pub unreadable: bool,
}

/// One column.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    /// Its name.
    pub name: String,
    /// GDAL's type name (`Integer`, `Real`, `String`, `Date`…); codes with
    /// leading zeros are `String`.
    pub dtype: String,
}

/// A layer, sheet or table.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Layer {
    /// Its name (the `layer=` / `sheet_name=` to read it by).
    pub name: String,
    /// Its geometry; `None` for a table without one.
    pub geometry: Option<Geometry>,
    /// Its CRS; `None` when it has none (or no geometry).
    pub crs: Option<Crs>,
    /// Features or rows; `None` when the driver counts them only by reading
    /// the whole file (OpenStreetMap) and it is too big to read for the card.
    pub features: Option<u64>,
    /// Whether `features` is an estimate (a big CSV, counted in three
    /// 1 MB slices).
    pub features_estimated: bool,
    /// `[minx, miny, maxx, maxy]` where the driver has it without a scan.
    #[serde(serialize_with = "finite_or_none", default)]
    pub extent: Option<[f64; 4]>,
    /// Whether `extent` is what the file declares rather than its
    /// features' bounds (a GeoPackage's contents table, which producers
    /// may round): close to them, not exact.
    pub extent_declared: bool,
    /// Its columns.
    pub columns: Vec<Column>,
    /// The first rows as the card shows them (`name=value, …`).
    pub sample_rows: Vec<String>,
    /// Lines on a layer without a CRS (units, a guess only with support).
    pub crs_note: Option<String>,
    /// The card's lines on coordinate or geometry columns of a table.
    pub notes: Vec<String>,
    /// A spreadsheet whose header sits below a title: the card's lines on
    /// it, shown instead of the columns GDAL read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_rows: Option<String>,
}

/// A raster's grid.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Grid {
    /// Columns of pixels.
    pub width: usize,
    /// Rows of pixels.
    pub height: usize,
    /// Its CRS; `None` when it has none.
    pub crs: Option<Crs>,
    /// GDAL's geotransform, when it has one.
    #[serde(serialize_with = "finite_or_none", default)]
    pub transform: Option<[f64; 6]>,
    /// `[minx, miny, maxx, maxy]` of its corners, with a geotransform.
    #[serde(serialize_with = "finite_or_none", default)]
    pub extent: Option<[f64; 4]>,
    /// Ground control points georeferencing it instead of a geotransform.
    pub gcps: usize,
    /// The card's line on a grid without a CRS.
    pub crs_note: Option<String>,
}

/// Statistics of a band's valid pixels.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Stats {
    /// Smallest valid value.
    pub min: f64,
    /// Largest valid value.
    pub max: f64,
    /// Mean of the valid values (`None` from GDAL's sampled min/max).
    pub mean: Option<f64>,
    /// Valid pixels counted (exact reads only).
    pub valid_pixels: Option<u64>,
    /// `exact` (every pixel read) or `approximate`.
    pub accuracy: Accuracy,
    /// How the pixels were read: `every pixel`, `a W×H read of an
    /// overview`, `GDAL's sampled blocks`.
    pub how: String,
}

/// Whether statistics are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Accuracy {
    /// Every pixel was read.
    Exact,
    /// From part of the pixels.
    Approximate,
}

/// One value of a categorical band.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Class {
    /// The value.
    pub value: i64,
    /// Pixels holding it.
    pub pixels: u64,
    /// Its category name, when the band names it.
    pub name: Option<String>,
}

/// A raster band.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Band {
    /// Its number, from 1.
    pub index: usize,
    /// GDAL's data type name (`Byte`, `Int16`, `Float32`…).
    pub dtype: String,
    /// Its nodata value.
    #[serde(with = "non_finite", default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub nodata: Option<f64>,
    /// Whether its pixels could be read at all.
    pub readable: bool,
    /// Statistics of its valid pixels; `None` when it has none or they
    /// cannot be read.
    pub stats: Option<Stats>,
    /// An integer band of 2 to 64 values: each with its pixel count.
    pub classes: Vec<Class>,
    /// Entries of its colour table, when it has one.
    pub colour_table: Option<usize>,
}

/// A dimension of a multidimensional file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Dimension {
    /// Its name.
    pub name: String,
    /// Its size.
    pub size: u64,
}

/// A variable of a multidimensional file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its dimensions' names.
    pub dimensions: Vec<String>,
    /// GDAL's data type name, or `non-numeric`.
    pub dtype: String,
}

impl Dataset {
    /// An empty dataset of `kind` at `path`, filled in by its reader.
    pub fn new(path: &str, kind: DatasetKind) -> Dataset {
        Dataset {
            path: path.to_string(),
            kind,
            driver: None,
            sidecars: Vec::new(),
            layers: Vec::new(),
            more_layers: 0,
            grid: None,
            bands: Vec::new(),
            more_bands: 0,
            dimensions: Vec::new(),
            variables: Vec::new(),
            read_call: None,
            header: None,
            warnings: Vec::new(),
            notes: Vec::new(),
            series: Vec::new(),
            members: Vec::new(),
            lines: Vec::new(),
            unreadable: None,
        }
    }

    /// A dataset of a kind without fields of its own: the entry's `text`.
    pub fn from_lines(path: &str, kind: DatasetKind, text: &str) -> Dataset {
        let mut dataset = Dataset::new(path, kind);
        dataset.lines = text.lines().map(str::to_string).collect();
        dataset
    }

    /// The card's text entry for this dataset.
    pub fn text(&self) -> String {
        let mut text = String::new();
        if let Some(why) = &self.unreadable {
            return format!("- {why}\n");
        }
        if !self.lines.is_empty() {
            for line in &self.lines {
                text.push_str(line);
                text.push('\n');
            }
        } else {
            match self.kind {
                DatasetKind::Raster => self.raster_text(&mut text),
                DatasetKind::Multidim if self.grid.is_some() => self.raster_text(&mut text),
                DatasetKind::Multidim => self.multidim_text(&mut text),
                _ => self.layers_text(&mut text),
            }
        }
        for line in &self.notes {
            text.push_str(&format!("  {line}\n"));
        }
        if !self.sidecars.is_empty() {
            text.push_str(&format!("  read with it: {}\n", self.sidecars.join(", ")));
        }
        for line in &self.series {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    fn driver(&self) -> &str {
        self.driver.as_deref().unwrap_or("?")
    }

    fn layers_text(&self, text: &mut String) {
        let what = if self.kind == DatasetKind::Table {
            "table"
        } else {
            "vector"
        };
        text.push_str(&format!(
            "- {} — {what} ({}), {} layer(s)\n",
            self.path,
            self.driver(),
            self.layers.len() + self.more_layers
        ));
        for layer in &self.layers {
            if let Some(title) = &layer.title_rows {
                text.push_str(title);
                continue;
            }
            let how = if layer.features_estimated {
                " (estimated from 1 MB read in 3 places)"
            } else {
                ""
            };
            let count = match (layer.features, layer.features_estimated) {
                (Some(n), true) => format!("≈{n}"),
                (Some(n), false) => n.to_string(),
                (None, _) => "an unknown number of".to_string(),
            };
            let crs = layer.crs.as_ref().map_or("no CRS", |c| c.text.as_str());
            text.push_str(&match (&layer.geometry, self.kind == DatasetKind::Table) {
                (Some(g), _) => format!(
                    "  layer `{}`: {}, {crs}, {count} features{how}\n",
                    layer.name, g.text
                ),
                (None, true) => format!("  `{}`: {count} rows{how}\n", layer.name),
                (None, false) => {
                    format!("  layer `{}`: no geometry, {count} rows{how}\n", layer.name)
                }
            });
            if let Some(note) = &layer.crs_note {
                text.push_str(&format!("  {note}\n"));
            }
            let fields: Vec<(String, String)> = layer
                .columns
                .iter()
                .map(|c| (c.name.clone(), c.dtype.clone()))
                .collect();
            text.push_str(&format!("  columns: {}\n", super::columns::text(&fields)));
            for row in &layer.sample_rows {
                text.push_str(&format!("  row: {row}\n"));
            }
            for line in &layer.notes {
                text.push_str(&format!("  {line}\n"));
            }
        }
        if self.more_layers > 0 {
            text.push_str(&format!("  … {} more layers\n", self.more_layers));
        }
    }

    fn raster_text(&self, text: &mut String) {
        let Some(grid) = &self.grid else { return };
        let crs = grid.crs.as_ref().map_or("no CRS", |c| c.text.as_str());
        text.push_str(&format!(
            "- {} — raster ({}), {}×{} px, {} band(s), {crs}",
            self.path,
            self.driver(),
            grid.width,
            grid.height,
            self.bands.len() + self.more_bands
        ));
        if let Some(gt) = grid.transform {
            text.push_str(&format!(
                ", pixel {}×{}, origin ({}, {})",
                fmt_num(gt[1]),
                fmt_num(gt[5].abs()),
                fmt_num(gt[0]),
                fmt_num(gt[3])
            ));
        }
        text.push('\n');
        if grid.crs.is_none() {
            match (&grid.crs_note, grid.transform, grid.gcps) {
                (Some(note), _, _) => text.push_str(&format!("  {note}\n")),
                (None, None, 0) => text.push_str(
                    "  not georeferenced: no CRS and no geotransform (row/column coordinates only)\n",
                ),
                (None, None, n) => text.push_str(&format!(
                    "  georeferenced by {n} ground control points, not a geotransform (warp it to a grid before overlaying)\n"
                )),
                (None, Some(_), _) => {}
            }
        }
        for band in &self.bands {
            text.push_str(&format!("  band {}: {}", band.index, band.dtype));
            match band.nodata {
                Some(nd) => text.push_str(&format!(", nodata {}", fmt_num(nd))),
                None => text.push_str(", no nodata"),
            }
            match (&band.stats, band.readable) {
                (_, false) => text.push_str(", its pixels cannot be read"),
                (None, true) => text.push_str(", no valid pixel (every pixel is nodata)"),
                (Some(stats), true) => text.push_str(&stats_text(stats)),
            }
            match classes_text(band) {
                Some(line) => {
                    text.push('\n');
                    text.push_str(&line);
                }
                None => {
                    if let Some(n) = band.colour_table {
                        text.push_str(&format!(", a colour table of {n} entries"));
                    }
                    text.push('\n');
                }
            }
        }
        if self.more_bands > 0 {
            text.push_str(&format!("  … {} more bands\n", self.more_bands));
        }
    }

    fn multidim_text(&self, text: &mut String) {
        text.push_str(&format!(
            "- {} — multidimensional ({})\n",
            self.path,
            self.driver()
        ));
        if !self.dimensions.is_empty() {
            let dims: Vec<String> = self
                .dimensions
                .iter()
                .map(|d| format!("{}={}", d.name, d.size))
                .collect();
            text.push_str(&format!("  dimensions: {}\n", dims.join(", ")));
        }
        for v in &self.variables {
            text.push_str(&format!(
                "  variable {}({}): {}\n",
                v.name,
                v.dimensions.join(", "),
                v.dtype
            ));
        }
    }
}

/// The band line's statistics: `, min 0 max 247 mean 133.76` (with how
/// they are approximate when they are).
pub(super) fn stats_text(stats: &Stats) -> String {
    let mut text = format!(", min {} max {}", fmt_num(stats.min), fmt_num(stats.max));
    if let Some(mean) = stats.mean {
        text.push_str(&format!(" mean {}", fmt_mean(mean)));
    }
    if stats.accuracy == Accuracy::Approximate {
        text.push_str(&format!(" (approximate, from {})", stats.how));
    }
    text
}

/// The card's line on a categorical band's classes, when it has 2 or more.
fn classes_text(band: &Band) -> Option<String> {
    let total: u64 = band.classes.iter().map(|c| c.pixels).sum();
    if band.classes.len() < 2 || total == 0 {
        return None;
    }
    let stats = band.stats.as_ref()?;
    let classes: Vec<String> = band
        .classes
        .iter()
        .map(|c| {
            let share = 100.0 * c.pixels as f64 / total as f64;
            let share = if share < 1.0 {
                "<1".to_string()
            } else {
                format!("{share:.0}")
            };
            match &c.name {
                Some(name) => format!("{} {name:?} ({share}%)", c.value),
                None => format!("{} ({share}%)", c.value),
            }
        })
        .collect();
    let colours = band
        .colour_table
        .map(|n| format!("; a colour table of {n} entries"))
        .unwrap_or_default();
    let read = match stats.accuracy {
        Accuracy::Exact => "every pixel".to_string(),
        Accuracy::Approximate => format!("approximate, from {}", stats.how),
    };
    Some(format!(
        "  classes: {} values ({read}): {}{colours}\n",
        band.classes.len(),
        classes.join(", ")
    ))
}

/// A number as the card writes it: integral without decimals, else six
/// decimals at most.
pub(super) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else if x.abs() >= 1e15 {
        // A float32 nodata such as -3.4028234663852886e38, as Python
        // prints it.
        format!("{x:e}")
    } else {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A mean to four decimals at most.
fn fmt_mean(mean: f64) -> String {
    let s = format!("{mean:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
