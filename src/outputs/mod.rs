//! Is an output file real? The checks behind `gisclaw bench verify` (and the
//! blank filter of eval's output layer): an image must have more than
//! [`MIN_COLOURS`] colours, a raster must not be constant, a vector layer or
//! table (GeoParquet and Parquet included) must have rows, a text file must
//! not be empty.

pub mod sanity;
pub mod shown;

use std::collections::HashSet;
use std::path::Path;

use gdal::vector::LayerAccess;
use gdal::Metadata;
use gdal::{Dataset, GdalOpenFlags};

use crate::beneath;
use crate::card;
use crate::gdal_io;

/// The largest image decoded whole for its checks (pixels): a cell's
/// 30000×30000 PNG of 855 KB would otherwise cost gigabytes and a minute.
pub const MAX_IMAGE_PIXELS: usize = 40_000_000;
/// The largest PNG or JPEG file read for its checks.
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;

/// An image with this many distinct colours or fewer counts as blank.
pub const MIN_COLOURS: usize = 5;

/// What a file was checked as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutputKind {
    /// PNG, JPEG, GIF, WebP.
    Image,
    /// GeoTIFF, NetCDF, ASCII grid and other GDAL rasters.
    Raster,
    /// Any OGR vector format (GeoJSON, Shapefile, GeoPackage, KML…) and
    /// GeoParquet.
    Vector,
    /// CSV, spreadsheet or (plain) Parquet.
    Table,
    /// Text, JSON, HTML or anything else.
    Text,
}

impl OutputKind {
    /// Every kind.
    pub const ALL: [OutputKind; 5] = [
        OutputKind::Image,
        OutputKind::Raster,
        OutputKind::Vector,
        OutputKind::Table,
        OutputKind::Text,
    ];

    /// Its name in records and reports: `image`, `raster`, `vector`,
    /// `table`, `text`.
    pub fn name(self) -> &'static str {
        match self {
            OutputKind::Image => "image",
            OutputKind::Raster => "raster",
            OutputKind::Vector => "vector",
            OutputKind::Table => "table",
            OutputKind::Text => "text",
        }
    }
}

impl std::fmt::Display for OutputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for OutputKind {
    type Err = String;

    fn from_str(text: &str) -> Result<OutputKind, String> {
        OutputKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                format!("`{text}` is not an output kind (image, raster, vector, table, text)")
            })
    }
}

/// A kind compares with its name (`kind == "raster"`).
impl PartialEq<&str> for OutputKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// Serde by name (`"raster"`), as records and reports write a kind; the
/// enum's own derive (`"Raster"`) is the confined reader's wire form.
pub mod kind_by_name {
    use super::OutputKind;

    /// Writes the kind's name.
    pub fn serialize<S: serde::Serializer>(kind: &OutputKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(kind.name())
    }

    /// Reads a kind's name.
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<OutputKind, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The verdict on one file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum OutputCheck {
    /// Real content, with a short description (e.g. `812 colours`).
    Content(OutputKind, String),
    /// Present but empty of meaning (e.g. `a constant raster (0)`).
    Trivial(OutputKind, String),
    /// Missing, or not readable as its extension says.
    Unreadable(String),
}

impl OutputCheck {
    /// True for real content.
    pub fn is_content(&self) -> bool {
        matches!(self, OutputCheck::Content(..))
    }

    /// One line for tables and messages.
    pub fn describe(&self) -> String {
        match self {
            OutputCheck::Content(_, d) => d.clone(),
            OutputCheck::Trivial(_, d) => format!("trivial: {d}"),
            OutputCheck::Unreadable(d) => format!("unreadable: {d}"),
        }
    }
}

/// The kind a file is checked as, from its name alone (a Parquet file is a
/// table here; the reader, which opens it, tells a GeoParquet's vector from
/// a table: [`kind_read`]).
pub fn kind_of(path: &Path) -> OutputKind {
    match name_kind(path) {
        Some(kind) => kind,
        None => OutputKind::Table,
    }
}

/// [`kind_of`], with a Parquet file's kind read from its metadata: only
/// the confined reader calls it.
pub(crate) fn kind_read(path: &Path) -> OutputKind {
    match name_kind(path) {
        Some(kind) => kind,
        None => match card::parquet_rows(path) {
            Ok((_, true)) => OutputKind::Vector,
            _ => OutputKind::Table,
        },
    }
}

/// The kind by extension; `None` for Parquet, whose kind is in the file.
fn name_kind(path: &Path) -> Option<OutputKind> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    Some(match ext.as_str() {
        "png" | "jpg" | "jpeg" | "gif" | "webp" => OutputKind::Image,
        "tif" | "tiff" | "nc" | "asc" | "img" | "vrt" | "grd" => OutputKind::Raster,
        "geojson" | "shp" | "gpkg" | "kml" | "gml" | "fgb" | "geojsonl" | "gdb" => {
            OutputKind::Vector
        }
        "csv" | "xlsx" | "xls" | "ods" => OutputKind::Table,
        "parquet" | "geoparquet" => return None,
        _ => OutputKind::Text,
    })
}

/// The longest the checks of one file may take (a blocked read costs a
/// helper thread, not the run; see [`crate::beneath::within`]).
pub const CHECK_TIME: std::time::Duration = std::time::Duration::from_secs(60);

/// Checks one file a cell may have left, in a confined reader that sees
/// its folder alone ([`crate::reader`]), reading it only as the cell could
/// (no link out of its folder, a regular file the sandbox could read; see
/// [`crate::beneath`]) and for at most [`CHECK_TIME`].
pub fn check(path: &Path) -> OutputCheck {
    let folder = path.parent().unwrap_or(Path::new("/"));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    check_declared(folder, &name)
}

/// [`check`] of a run's declared output `declared` (`pred_results/x.tif`),
/// in a reader that sees the run's `pred_results/` alone.
pub fn check_declared(run: &Path, declared: &str) -> OutputCheck {
    let (root, rel) = declared_root(run, declared);
    checks_in(&root, &[rel])
        .pop()
        .unwrap_or_else(|| OutputCheck::Unreadable("not read".into()))
}

/// The folder a reader of a run's declared output sees, and the output's
/// path in it: the run's `pred_results/` for an output there (the cells'
/// folder, never followed as a link), else the run's folder.
pub fn declared_root(run: &Path, declared: &str) -> (std::path::PathBuf, String) {
    let declared = declared.trim_start_matches("./");
    match declared.split_once('/') {
        Some(("pred_results", rest)) => (run.join("pred_results"), rest.to_string()),
        _ => (run.to_path_buf(), declared.to_string()),
    }
}

/// [`check`] of each of `files` (relative to `folder`), in one confined
/// reader; a verdict per file, in order.
pub fn checks_in(folder: &Path, files: &[String]) -> Vec<OutputCheck> {
    let request = crate::reader::Request::Checks {
        files: files.to_vec(),
    };
    per_file(folder, files.len(), request, None).unwrap_or_else(|why| {
        files
            .iter()
            .map(|_| OutputCheck::Unreadable(why.clone()))
            .collect()
    })
}

/// The answer of one confined reader that sees `folder` alone to
/// `request`, about `files` files: one `T` per file, in order. Each file
/// has [`CHECK_TIME`]. `ready` is a reader started ahead: used when it
/// reads this very folder; a fresh one is started when it does not, or
/// when it is gone — but not after it ran out of time.
pub(crate) fn per_file<T: serde::de::DeserializeOwned>(
    folder: &Path,
    files: usize,
    request: crate::reader::Request,
    ready: Option<crate::reader::Standby>,
) -> Result<Vec<T>, String> {
    use crate::reader::{ask, ReadError, Root};
    let root = Root::exact(folder).map_err(|why| why.to_string())?;
    let limit = CHECK_TIME * (files.max(1) as u32);
    let answer = match ready.filter(|r| r.root() == root.path()) {
        Some(ready) => match ready.ask::<Vec<T>>(request.clone(), limit) {
            Err(ReadError::Timeout(s)) => Err(ReadError::Timeout(s)),
            Err(_) => ask(&root, request, limit),
            ok => ok,
        },
        None => ask(&root, request, limit),
    };
    match answer {
        Ok((answers, _)) if answers.len() == files => Ok(answers),
        Ok(_) => Err("the reader answered for other files".into()),
        Err(why) => Err(why.to_string()),
    }
}

/// [`check`], in this process, with links allowed anywhere beneath `root`
/// and none out of it: only the confined reader calls it.
pub(crate) fn check_here(root: &Path, path: &Path) -> OutputCheck {
    // Pinned: the library reads the very file checked, whatever the cell
    // swaps in afterwards.
    let pinned = match beneath::pin_under(root, path) {
        Ok(pinned) => pinned,
        Err(beneath::Refused::Missing) => return OutputCheck::Unreadable("missing".into()),
        Err(why) => return OutputCheck::Unreadable(why.to_string()),
    };
    let Some(size) = pinned.facts.as_ref().map(|f| f.len) else {
        return OutputCheck::Unreadable("not a file".into());
    };
    // The pin moves into the work: it lives as long as the read does.
    within_check_time(move || check_file(pinned.path(), size))
}

/// [`check`] of a file already pinned ([`beneath::Pinned::path`]: checked
/// beneath its folder and held open), for at most [`CHECK_TIME`], in this
/// process: only the confined reader calls it.
pub(crate) fn check_pinned(pinned: &Path) -> OutputCheck {
    let size = match std::fs::metadata(pinned) {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => return OutputCheck::Unreadable("not a file".into()),
        Err(e) => return OutputCheck::Unreadable(e.to_string()),
    };
    let owned = pinned.to_path_buf();
    within_check_time(move || check_file(&owned, size))
}

/// `check` run on a helper thread for at most [`CHECK_TIME`].
fn within_check_time(check: impl FnOnce() -> OutputCheck + Send + 'static) -> OutputCheck {
    beneath::within(CHECK_TIME, check).unwrap_or_else(|| {
        OutputCheck::Unreadable(format!("not read within {} s", CHECK_TIME.as_secs()))
    })
}

/// [`check`] of a regular file of `size` bytes.
fn check_file(path: &Path, size: u64) -> OutputCheck {
    let kind = kind_read(path);
    if size == 0 {
        return OutputCheck::Trivial(kind, "an empty file".into());
    }
    let verdict = match kind {
        _ if card::is_parquet(path) => check_parquet(path, kind),
        OutputKind::Image => check_image(path),
        OutputKind::Raster => check_raster(path),
        OutputKind::Vector => check_vector(path, OutputKind::Vector, &[]),
        OutputKind::Table => check_table(path),
        OutputKind::Text => check_text(path),
    };
    verdict.unwrap_or_else(|e| OutputCheck::Unreadable(e.to_string()))
}

/// Why a file could not be read for its check.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unreadable {
    /// The image decoder refused it.
    #[error(transparent)]
    Image(#[from] image25::ImageError),
    /// The PNG decoder refused it.
    #[error(transparent)]
    Png(#[from] png::DecodingError),
    /// GDAL cannot open or read it.
    #[error("{}", gdal_io::gdal_reason(.0))]
    Gdal(#[from] gdal::errors::GdalError),
    /// The file system refused.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A Parquet footer that does not parse.
    #[error(transparent)]
    Parquet(#[from] ::parquet::errors::ParquetError),
    /// A `.json` that does not parse.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Larger than the checks read (pixels or bytes), said in words.
    #[error("{0}, not read")]
    TooLarge(String),
}

/// Refuses an image of `w`×`h` pixels above [`MAX_IMAGE_PIXELS`] before
/// anything is allocated for it.
fn within_pixel_cap(w: usize, h: usize) -> Result<(), Unreadable> {
    if w.saturating_mul(h) > MAX_IMAGE_PIXELS {
        return Err(Unreadable::TooLarge(format!(
            "{w}×{h} px, more than the {} million pixels the checks decode",
            MAX_IMAGE_PIXELS / 1_000_000
        )));
    }
    Ok(())
}

/// The bytes of a PNG or JPEG, refused above [`MAX_IMAGE_BYTES`].
fn image_bytes(path: &Path) -> Result<Vec<u8>, Unreadable> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(Unreadable::TooLarge(format!(
            "more than {} MB",
            MAX_IMAGE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

fn open(path: &Path, flags: GdalOpenFlags, options: &[&str]) -> Result<Dataset, Unreadable> {
    Ok(gdal_io::open_readonly(path, flags, options)?)
}

/// An image's pixels as decoded: `channels` 8-bit channels per pixel,
/// pixel-interleaved, row by row.
pub(crate) struct Pixels {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    channels: usize,
    bytes: Vec<u8>,
}

impl Pixels {
    /// Every pixel's colour, row by row: its first four channels packed into
    /// a `u32`, first channel highest (packed as they are read, not kept).
    pub fn colours(&self) -> Colours<'_> {
        let pixels = self.bytes.chunks_exact(self.channels.max(1));
        if self.channels == 4 {
            Colours::Rgba(pixels)
        } else {
            Colours::Other(pixels)
        }
    }

    /// The pixels as 8-bit RGBA (grey repeated, opaque where there is no
    /// alpha).
    pub fn into_rgba(self) -> Vec<u8> {
        match self.channels {
            4 => self.bytes,
            channels => self
                .bytes
                .chunks_exact(channels)
                .flat_map(|px| match px {
                    [g] => [*g, *g, *g, 255],
                    [g, a] => [*g, *g, *g, *a],
                    [r, g, b, ..] => [*r, *g, *b, 255],
                    [] => [0, 0, 0, 255],
                })
                .collect(),
        }
    }
}

/// An image's colours ([`Pixels::colours`]). RGBA, what matplotlib
/// writes, is read four bytes at a time: packing a channel count known only
/// at run time took twice as long (2.0 against 1.0 ms for the two passes of
/// the uniform-image check over the example's 957×839 map).
pub(crate) enum Colours<'a> {
    /// Four channels a pixel.
    Rgba(std::slice::ChunksExact<'a, u8>),
    /// Any other number.
    Other(std::slice::ChunksExact<'a, u8>),
}

impl Iterator for Colours<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            Colours::Rgba(pixels) => pixels.next().map(rgba),
            Colours::Other(pixels) => pixels.next().map(packed),
        }
    }

    fn fold<B, F: FnMut(B, u32) -> B>(self, init: B, f: F) -> B {
        match self {
            Colours::Rgba(pixels) => pixels.map(rgba).fold(init, f),
            Colours::Other(pixels) => pixels.map(packed).fold(init, f),
        }
    }
}

/// A four-byte pixel as one colour.
fn rgba(pixel: &[u8]) -> u32 {
    <[u8; 4]>::try_from(pixel).map_or(0, u32::from_be_bytes)
}

/// A pixel's channels packed into one colour, first channel highest.
fn packed(pixel: &[u8]) -> u32 {
    pixel.iter().fold(0u32, |c, &b| (c << 8) | u32::from(b))
}

/// The pixels of the image at `path`. PNG is decoded by the `png` crate
/// from the file read whole (a 957×839 RGBA map: ~2.4 ms; the `image`
/// crate's reader took ~3.9 ms, GDAL's PNG driver 11–13 ms per band read,
/// decoding the whole file once per band), JPEG by the `image` crate, other
/// formats through GDAL, at most four bands in one read.
pub(crate) fn image_pixels(path: &Path) -> Result<Pixels, Unreadable> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "png" {
        return png_pixels(path);
    }
    if matches!(ext.as_str(), "jpg" | "jpeg") {
        let bytes = image_bytes(path)?;
        let reader =
            image25::ImageReader::new(std::io::Cursor::new(&bytes)).with_guessed_format()?;
        let (w, h) = reader.into_dimensions()?;
        within_pixel_cap(w as usize, h as usize)?;
        let image = image25::load_from_memory(&bytes)?;
        let (width, height) = (image.width() as usize, image.height() as usize);
        let (channels, bytes) = match image {
            image25::DynamicImage::ImageLuma8(i) => (1, i.into_raw()),
            image25::DynamicImage::ImageLumaA8(i) => (2, i.into_raw()),
            image25::DynamicImage::ImageRgb8(i) => (3, i.into_raw()),
            image25::DynamicImage::ImageRgba8(i) => (4, i.into_raw()),
            other => (4, other.into_rgba8().into_raw()),
        };
        return Ok(Pixels {
            width,
            height,
            channels,
            bytes,
        });
    }
    let ds = open(path, GdalOpenFlags::GDAL_OF_RASTER, &[])?;
    let (w, h) = ds.raster_size();
    // What the header claims is never allocated as it stands (a sparse
    // 200000×200000 GeoTIFF named map.gif is a few MB on disk).
    within_pixel_cap(w, h)?;
    let bands = ds.raster_count().clamp(1, 4);
    let mut bytes = vec![0u8; w * h * bands];
    let mut band_map: Vec<std::ffi::c_int> = (1..=bands as std::ffi::c_int).collect();
    let int = |v: usize| std::ffi::c_int::try_from(v).unwrap_or(std::ffi::c_int::MAX);
    // SAFETY: the buffer holds w × h pixels of `bands` bytes, pixel-
    // interleaved as the spacings say; the band map names `bands` bands
    // the dataset has (at least one: a raster dataset has bands).
    let err = unsafe {
        gdal_sys::GDALDatasetRasterIO(
            ds.c_dataset(),
            gdal_sys::GDALRWFlag::GF_Read,
            0,
            0,
            int(w),
            int(h),
            bytes.as_mut_ptr().cast(),
            int(w),
            int(h),
            gdal_sys::GDALDataType::GDT_Byte,
            int(bands),
            band_map.as_mut_ptr(),
            int(bands),
            int(w * bands),
            1,
        )
    };
    if err != gdal_sys::CPLErr::CE_None {
        return Err(Unreadable::Gdal(gdal::errors::GdalError::CplError {
            class: err,
            number: 0,
            msg: "reading the image's pixels failed".into(),
        }));
    }
    Ok(Pixels {
        width: w,
        height: h,
        channels: bands,
        bytes,
    })
}

/// A PNG's pixels: palettes and bit depths below 8 expanded (a
/// transparent colour becoming alpha), 16-bit samples cut to their high
/// byte; the first frame of an animated PNG.
fn png_pixels(path: &Path) -> Result<Pixels, Unreadable> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(image_bytes(path)?));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info()?;
    let info = reader.info();
    within_pixel_cap(info.width as usize, info.height as usize)?;
    let size = reader
        .output_buffer_size()
        .ok_or(png::DecodingError::LimitsExceeded)?;
    let mut bytes = vec![0; size];
    let frame = reader.next_frame(&mut bytes)?;
    bytes.truncate(frame.buffer_size());
    Ok(Pixels {
        width: frame.width as usize,
        height: frame.height as usize,
        channels: frame.color_type.samples(),
        bytes,
    })
}

/// Counts distinct colours, stopping early once the image is clearly not blank.
fn check_image(path: &Path) -> Result<OutputCheck, Unreadable> {
    let pixels = image_pixels(path)?;
    let (w, h) = (pixels.width, pixels.height);
    let mut colours: HashSet<u32, foldhash::fast::FixedState> = HashSet::default();
    const ENOUGH: usize = 4096;
    for colour in pixels.colours() {
        colours.insert(colour);
        if colours.len() >= ENOUGH {
            break;
        }
    }
    let n = colours.len();
    let text = if n >= ENOUGH {
        format!("{w}×{h} px, ≥ {ENOUGH} colours")
    } else {
        format!("{w}×{h} px, {n} colours")
    };
    Ok(if n > MIN_COLOURS {
        OutputCheck::Content(OutputKind::Image, text)
    } else {
        OutputCheck::Trivial(OutputKind::Image, format!("a blank image ({text})"))
    })
}

/// A raster has content when some band has more than one valid value.
fn check_raster(path: &Path) -> Result<OutputCheck, Unreadable> {
    let ds = match open(path, GdalOpenFlags::GDAL_OF_RASTER, &[]) {
        Ok(ds) => ds,
        Err(e) => return check_multidim(path).map_err(|_| e),
    };
    let ds = if ds.raster_count() == 0 {
        // NetCDF with several variables: the first subdataset, else the
        // multidimensional API (variables of three or more dimensions).
        match ds.metadata_item("SUBDATASET_1_NAME", "SUBDATASETS") {
            Some(first) => Dataset::open(&first)?,
            None => return check_multidim(path),
        }
    } else {
        ds
    };
    let (w, h) = ds.raster_size();
    let mut constant = None;
    for i in 1..=ds.raster_count() {
        let band = ds.rasterband(i)?;
        // GDAL's approximation (from overviews or a sample) for a raster
        // larger than the checks decode, the exact values otherwise.
        match band.compute_raster_min_max(w.saturating_mul(h) > MAX_IMAGE_PIXELS) {
            Ok(mm) if mm.max > mm.min => {
                return Ok(OutputCheck::Content(
                    OutputKind::Raster,
                    format!(
                        "{w}×{h}×{} raster, band {i} from {} to {}",
                        ds.raster_count(),
                        short(mm.min),
                        short(mm.max)
                    ),
                ))
            }
            Ok(mm) => constant = Some(mm.min),
            Err(_) => {}
        }
    }
    Ok(OutputCheck::Trivial(
        OutputKind::Raster,
        match constant {
            Some(v) => format!("a constant raster ({v})"),
            None => "a raster with no valid cell".to_string(),
        },
    ))
}

/// A multidimensional file (NetCDF, HDF5, Zarr) has content when some
/// variable of two or more dimensions holds more than one distinct value.
fn check_multidim(path: &Path) -> Result<OutputCheck, Unreadable> {
    const MAX_VALUES: usize = 50_000_000;
    let ds = open(path, GdalOpenFlags::GDAL_OF_MULTIDIM_RASTER, &[])?;
    let root = ds.root_group()?;
    let mut seen = 0;
    for name in root.array_names(Default::default()) {
        let Ok(array) = root.open_md_array(&name, Default::default()) else {
            continue;
        };
        let Ok(dims) = array.dimensions() else {
            continue;
        };
        let shape: Vec<usize> = dims.iter().map(|d| d.size()).collect();
        let total: usize = shape.iter().product();
        if shape.len() < 2 || total == 0 || total > MAX_VALUES {
            continue;
        }
        seen += 1;
        let Ok(values) = array.read_as::<f64>(vec![0; shape.len()], shape.clone()) else {
            continue;
        };
        let nodata = array.no_data_value_as_double();
        let valid = values
            .iter()
            .filter(|v| v.is_finite() && Some(**v) != nodata);
        let (lo, hi) = valid.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
        if hi > lo {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            return Ok(OutputCheck::Content(
                OutputKind::Raster,
                format!(
                    "variable {name} [{}] from {} to {}",
                    dims.join("×"),
                    short(lo),
                    short(hi)
                ),
            ));
        }
    }
    Ok(OutputCheck::Trivial(
        OutputKind::Raster,
        if seen == 0 {
            "no gridded variable".into()
        } else {
            format!("{seen} constant or empty variable(s)")
        },
    ))
}

/// A number in at most four significant digits.
fn short(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e6) {
        format!("{v:.3e}")
    } else {
        format!("{}", (v * 1e4).round() / 1e4)
    }
}

/// A vector file (or a spreadsheet, as `kind` Table) has content when some
/// layer has a feature.
fn check_vector(
    path: &Path,
    kind: OutputKind,
    options: &[&str],
) -> Result<OutputCheck, Unreadable> {
    let ds = open(path, GdalOpenFlags::GDAL_OF_VECTOR, options)?;
    let mut total = 0u64;
    for layer in ds.layers() {
        total += layer.feature_count();
    }
    Ok(if total > 0 {
        OutputCheck::Content(
            kind,
            format!("{total} features in {} layer(s)", ds.layer_count()),
        )
    } else {
        OutputCheck::Trivial(kind, "no features".into())
    })
}

/// A (Geo)Parquet file has content when its footer counts a row.
fn check_parquet(path: &Path, kind: OutputKind) -> Result<OutputCheck, Unreadable> {
    let (rows, _) = card::parquet_rows(path)?;
    Ok(if rows > 0 {
        OutputCheck::Content(kind, format!("{rows} rows (Parquet)"))
    } else {
        OutputCheck::Trivial(kind, "a Parquet file with no rows".into())
    })
}

/// A table has content when it has a header and at least one row.
fn check_table(path: &Path) -> Result<OutputCheck, Unreadable> {
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if !is_csv {
        return check_vector(path, OutputKind::Table, &["HEADERS=AUTO"]);
    }
    let text = std::fs::read_to_string(path)?;
    let rows = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().trim_matches(',').is_empty())
        .count();
    Ok(if rows > 0 {
        OutputCheck::Content(OutputKind::Table, format!("{rows} rows"))
    } else {
        OutputCheck::Trivial(OutputKind::Table, "a header and no rows".into())
    })
}

/// Text has content when it has a non-blank character; JSON must parse.
fn check_text(path: &Path) -> Result<OutputCheck, Unreadable> {
    let bytes = std::fs::read(path)?;
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        let value: serde_json::Value = serde_json::from_slice(&bytes)?;
        let empty = match &value {
            serde_json::Value::Null => true,
            serde_json::Value::Array(a) => a.is_empty(),
            serde_json::Value::Object(o) => o.is_empty(),
            _ => false,
        };
        return Ok(if empty {
            OutputCheck::Trivial(OutputKind::Text, "empty JSON".into())
        } else {
            OutputCheck::Content(OutputKind::Text, format!("JSON, {} bytes", bytes.len()))
        });
    }
    Ok(if bytes.iter().any(|b| !b.is_ascii_whitespace()) {
        OutputCheck::Content(OutputKind::Text, format!("{} bytes", bytes.len()))
    } else {
        OutputCheck::Trivial(OutputKind::Text, "only white space".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gdal::raster::Buffer;
    use gdal::DriverManager;

    /// A 3-band 40×30 image with a gradient, written by GDAL's `driver`.
    fn write(path: &Path, driver: &str) {
        let mem = DriverManager::get_driver_by_name("MEM").unwrap();
        let ds = mem.create_with_band_type::<u8, _>("", 40, 30, 3).unwrap();
        for b in 1..=3 {
            let data: Vec<u8> = (0..40 * 30)
                .map(|i| ((i % 40) * 6 + (i / 40) * b) as u8)
                .collect();
            ds.rasterband(b)
                .unwrap()
                .write((0, 0), (40, 30), &mut Buffer::new((40, 30), data))
                .unwrap();
        }
        let driver = DriverManager::get_driver_by_name(driver).unwrap();
        ds.create_copy(&driver, path, &Default::default()).unwrap();
    }

    #[test]
    fn every_decoder_gives_the_same_colours() {
        let dir = tempfile::tempdir().unwrap();
        let png = dir.path().join("a.png");
        // A GeoTIFF named as one of the formats GDAL reads for us.
        let tif = dir.path().join("a.tif");
        write(&png, "PNG");
        write(&tif, "GTiff");
        let png = image_pixels(&png).unwrap();
        assert_eq!(
            (png.width, png.height, png.colours().count()),
            (40, 30, 1200)
        );
        let from_png: Vec<u32> = png.colours().collect();
        let from_gdal: Vec<u32> = image_pixels(&tif).unwrap().colours().collect();
        assert_eq!(from_png, from_gdal);
        // Pixel (x = 2, y = 1): bands 12 + b·1 → 0x0D0E0F.
        assert_eq!(from_png[40 + 2], 0x0d0e0f);
        assert!(image_pixels(&dir.path().join("missing.png")).is_err());
    }

    #[test]
    fn an_output_gdal_cannot_read_is_unreadable_with_gdals_reason() {
        let dir = tempfile::tempdir().unwrap();
        let tif = dir.path().join("surface.tif");
        std::fs::write(&tif, [0u8, 7, 250, 13].repeat(64)).unwrap();
        assert_eq!(
            check(&tif),
            OutputCheck::Unreadable("not recognized as a supported file format".into())
        );
    }

    #[test]
    fn palette_and_16_bit_pngs_decode_to_8_bit_channels() {
        let dir = tempfile::tempdir().unwrap();
        // 16-bit grey: each sample's high byte.
        let grey = dir.path().join("grey16.png");
        image25::ImageBuffer::from_fn(4, 1, |x, _| image25::Luma([x as u16 * 0x1234]))
            .save(&grey)
            .unwrap();
        let pixels = image_pixels(&grey).unwrap();
        assert_eq!(
            pixels.colours().collect::<Vec<_>>(),
            [0x00, 0x12, 0x24, 0x36]
        );
        assert_eq!(
            pixels.into_rgba(),
            [0, 0, 0, 255, 0x12, 0x12, 0x12, 255, 0x24, 0x24, 0x24, 255, 0x36, 0x36, 0x36, 255]
        );
        // A palette whose first entry is transparent: expanded to RGBA.
        let indexed = dir.path().join("indexed.png");
        let mut encoder = png::Encoder::new(std::fs::File::create(&indexed).unwrap(), 2, 1);
        encoder.set_color(png::ColorType::Indexed);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_palette(vec![255, 0, 0, 0, 0, 255]);
        encoder.set_trns(vec![0]);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&[0, 1]).unwrap();
        writer.finish().unwrap();
        let pixels = image_pixels(&indexed).unwrap();
        assert_eq!(
            pixels.colours().collect::<Vec<_>>(),
            [0xff00_0000, 0x0000_ffff]
        );
        // A file named .png that is not one is unreadable, not a panic.
        let fake = dir.path().join("fake.png");
        std::fs::write(&fake, b"not an image").unwrap();
        assert!(image_pixels(&fake).is_err());
    }
}
