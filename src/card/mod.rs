//! The schema card: the runtime reads the task's data natively (GDAL and a
//! Parquet reader, in the gisclaw process; the Python worker never links
//! them) before the first model call, so the model starts from exact file,
//! layer, column and CRS names instead of guessing them.
//!
//! - vector (Shapefile, GeoJSON, GeoPackage, KML, GML, FlatGeobuf…): layers,
//!   geometry type, CRS, feature count, fields with types, 3 sample rows;
//! - raster (GeoTIFF, IMG, ASCII grid, JPEG2000…): size, bands, data type,
//!   nodata, CRS, pixel size, per-band min/max/mean (exact up to
//!   [`raster_stats::EXACT_PIXELS`] per band, else labelled approximate);
//! - tables (CSV, TSV, XLSX): columns with inferred types, row count (an
//!   estimate for a big CSV), sample, and which columns hold coordinates or
//!   geometries with their plausible CRS ([`coords`]), and the `pd.read_csv`
//!   call that reads a CSV as described ([`csv_read`]: separator, decimal
//!   comma, an encoding other than UTF-8 ([`text_encoding`]), codes with
//!   leading zeros ([`codes`]));
//! - GeoParquet / Parquet: from the file's metadata alone ([`parquet`]);
//! - a big GeoJSON: from its first features and a count estimated from
//!   three slices ([`geojson`]; GDAL reads it whole to open it);
//! - archives (`.zip`, `.tar`, `.tar.gz`, `.gz`): their members described as
//!   if unpacked, named by the GDAL path that reads them ([`archive`]);
//! - NetCDF / HDF5: variables with their dimensions and types;
//! - a CSV of one column, which GDAL 3.6 refuses ([`one_column`]);
//! - a series of files named alike but for their numbers (tiles, dates):
//!   the first in full, then the series' name, listing call, absent
//!   members and what the members share ([`series`], [`series_members`]).
//!
//! [`card_for_dir`] flattens nested folders (case-exact names) and keeps the
//! card within a token budget: full entries first (an entry too big for
//! what is left is skipped, not the end of them), then one line per file,
//! then counts per extension. [`inspect_file`] is the `inspect_data` tool.

mod archive;
mod codes;
mod columns;
pub mod coords;
mod csv_read;
mod csv_text;
mod dbf_encoding;
pub mod facts;
mod folder_datasets;
mod gdal_entry;
mod geojson;
mod geometry_names;
pub mod library;
mod one_column;
mod parquet;
mod preamble;
mod raster_stats;
mod series;
mod series_members;
mod sheet_title;
mod text_encoding;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

// What opens or parses a file: for the readers of this crate (the card,
// the output checks, scoring), which run inside the confined reader only.
pub(crate) use geojson::stated_crs as big_geojson_crs;
pub(crate) use parquet::row_count as parquet_rows;
pub(crate) use parquet::{
    geo_extents as parquet_geo_extents, read_rows as read_parquet,
    read_text_table as read_parquet_table,
};
pub use parquet::{Rows as ParquetRows, StatedCrs};
pub use series::{find as find_series, Series};

use crate::llm::tokens;
pub use facts::{Dataset, DatasetKind, FolderCard};

/// Default token budget of the card in the prompt.
pub const CARD_TOKEN_BUDGET: u64 = 2_000;

/// Tokens of the budget kept for the closing summary of a large folder.
const TAIL: u64 = 64;

/// Tokens of about the smallest full entry: with less of the budget left,
/// the card stops reading files for full entries.
const SMALL_ENTRY: u64 = 60;

/// Entries in a row too big for what is left of the budget after which the
/// card stops reading files for full entries.
const MISSES_TOLERATED: u32 = 8;

/// Sample rows shown per layer or table.
const SAMPLE_ROWS: usize = 3;

/// Longest sample value shown, in characters.
const VALUE_CHARS: usize = 40;

/// Values shown per sample row (a wide table's rows are cut after them).
const ROW_VALUES: usize = 12;

/// What kind of file an extension names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Vector,
    Raster,
    Table,
    Multidim,
    /// Parquet / GeoParquet, read from its own metadata.
    Parquet,
    /// A `.zip`, `.tar`, `.tar.gz`/`.tgz` or `.gz` file: its members are read.
    Archive,
    /// Shapefile parts, overviews, aux files: listed with their main file.
    Sidecar,
    Other,
}

/// Whether `path` is a Parquet file by its extension (`.parquet`,
/// `.geoparquet`).
pub fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("geoparquet"))
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
    if archive::is_archive(&name) {
        return Kind::Archive;
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "shp" | "geojson" | "gpkg" | "kml" | "kmz" | "gml" | "fgb" | "gpx" | "json"
        | "topojson" | "gdb" | "pbf" | "osm" => Kind::Vector,
        "tif" | "tiff" | "img" | "asc" | "jp2" | "vrt" | "bil" | "dem" | "hgt" | "grd" | "grib"
        | "grb" | "grib2" | "grb2" => Kind::Raster,
        "csv" | "tsv" | "xlsx" | "xls" | "ods" => Kind::Table,
        "nc" | "nc4" | "h5" | "hdf5" | "hdf" | "zarr" => Kind::Multidim,
        "parquet" | "geoparquet" | "pq" => Kind::Parquet,
        "shx" | "dbf" | "prj" | "cpg" | "sbn" | "sbx" | "qix" | "ovr" | "qmd" | "xml" | "aux"
        | "tfw" | "wld" => Kind::Sidecar,
        _ => Kind::Other,
    }
}

/// [`kind_of`] of a file found at `path`: a `.dbf` without its `.shp` is
/// a table of its own (geopandas reads it), not a sidecar.
fn kind_at(path: &Path) -> Kind {
    match kind_of(path) {
        Kind::Sidecar
            if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("dbf"))
                && !has_shp_beside(path) =>
        {
            Kind::Vector
        }
        kind => kind,
    }
}

/// Whether the shapefile a `.dbf` belongs to is beside it (its stem with
/// `.shp`, `.SHP` or `.Shp`).
fn has_shp_beside(dbf: &Path) -> bool {
    ["shp", "SHP", "Shp"]
        .iter()
        .any(|ext| dbf.with_extension(ext).symlink_metadata().is_ok())
}

/// Whether `why`, a dataset's `unreadable`, is GDAL's refusal of the
/// file's contents ([`SchemaError::Unreadable`]'s text) rather than the
/// walk's refusal of the entry (a FIFO, a link out, its permissions).
fn gdal_refused(why: &str) -> bool {
    why.contains(": GDAL cannot read it: ")
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
    /// The confined reader's answer was a refusal (its text as it gave it).
    #[error("{0}")]
    Reader(String),
}

/// Every file under `dir`, relative, sorted (nested folders flattened).
/// A folder reached twice (a symlink cycle such as `self -> .`, or two
/// links to one folder) is walked once; see [`folder_links_skipped`].
pub fn files_under(dir: &Path) -> Vec<(String, u64)> {
    sizes(walk(dir).files)
}

/// The entries of a data folder as the card and `list_files` show them:
/// [`files_under`], with each File Geodatabase folder as one entry
/// ([`folder_datasets`]).
pub fn entries_under(dir: &Path) -> Vec<(String, u64)> {
    folder_datasets::collapsed(files_under(dir))
}

/// The walk's files with their sizes.
fn sizes(files: Vec<(String, std::fs::Metadata)>) -> Vec<(String, u64)> {
    files
        .into_iter()
        .map(|(rel, meta)| (rel, meta.len()))
        .collect()
}

/// Links under `dir` to folders already listed (cycles), relative and
/// sorted: they are not followed.
pub fn folder_links_skipped(dir: &Path) -> Vec<String> {
    walk(dir).skipped
}

/// What a walk of a data folder found.
#[derive(Debug, Default)]
struct Walked {
    /// Regular files, relative, with their metadata (through links that
    /// the sandbox could follow too).
    files: Vec<(String, std::fs::Metadata)>,
    /// Links to folders already listed (cycles), not followed.
    skipped: Vec<String>,
    /// Entries not read, with the reason (a link out of the folder or to a
    /// file the sandbox could not read, a FIFO, a socket, a device).
    refused: Vec<(String, String)>,
    /// Regular files among `refused` (the sandbox's user cannot read them).
    unreadable_files: usize,
    /// Why the walk stopped early, when a budget ended it.
    stopped: Option<String>,
}

/// Most entries a data folder's walk lists, and its time.
const WALK_FILES: usize = 20_000;
const WALK_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The files under `dir`, read no further than the sandbox could: a link
/// is followed only to a file or folder inside `dir` itself (the sandbox
/// sees the data folder, not what its links point to elsewhere) that the
/// sandbox's user could read (`crate::beneath`); anything else that is not
/// a regular file or folder is listed as refused, never opened. The walk
/// stops after [`WALK_FILES`] entries or [`WALK_TIME`] and says so.
///
/// Folders are told apart by device and inode (one `stat` each, where a
/// canonical path costs a `readlink` per path component).
fn walk(dir: &Path) -> Walked {
    use std::os::unix::fs::MetadataExt;
    let started = std::time::Instant::now();
    let mut walked = Walked::default();
    let root = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // Folders seen, by device and inode; the root is added when the first
    // folder turns up (most output folders have none: a `stat` saved).
    let mut seen = std::collections::HashSet::new();
    let mut root_seen = false;
    let mut listed = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    'walk: while let Some(folder) = stack.pop() {
        // Listed as the sandbox's user lists it (the reader runs as that
        // user): a folder it cannot enter, the data folder itself included,
        // is named, and nothing in it is read.
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(e) => {
                let rel = folder
                    .strip_prefix(dir)
                    .unwrap_or(&folder)
                    .to_string_lossy()
                    .into_owned();
                let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
                    "a folder the sandbox's user cannot enter".to_string()
                } else {
                    format!("a folder that cannot be listed ({e})")
                };
                walked.refused.push((rel, why));
                continue;
            }
        };
        for entry in entries.flatten() {
            listed += 1;
            if listed > WALK_FILES || started.elapsed() > WALK_TIME {
                walked.stopped = Some(if listed > WALK_FILES {
                    format!("stopped after {WALK_FILES} entries")
                } else {
                    format!("stopped after {} s", WALK_TIME.as_secs())
                });
                break 'walk;
            }
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            // Anything but a link is read relative to its folder (the kind
            // comes with the listing), without resolving the path again.
            let is_link = entry.file_type().map_or(true, |t| t.is_symlink());
            let meta = if is_link {
                match followable(&root, &path) {
                    Ok(meta) => meta,
                    Err(why) => {
                        walked.refused.push((rel, why));
                        continue;
                    }
                }
            } else {
                match entry.metadata() {
                    Ok(meta) => meta,
                    Err(_) => continue,
                }
            };
            if meta.is_dir() {
                if !root_seen {
                    root_seen = true;
                    if let Ok(root) = std::fs::metadata(dir) {
                        seen.insert((root.dev(), root.ino()));
                    }
                }
                if seen.insert((meta.dev(), meta.ino())) {
                    stack.push(path);
                } else {
                    walked.skipped.push(rel);
                }
            } else {
                match readable_file(&path, &meta) {
                    Ok(()) => walked.files.push((rel, meta)),
                    Err(why) => {
                        if meta.is_file() {
                            walked.unreadable_files += 1;
                        }
                        walked.refused.push((rel, why));
                    }
                }
            }
        }
    }
    walked.files.sort_by(|a, b| a.0.cmp(&b.0));
    walked.skipped.sort();
    walked.refused.sort();
    walked
}

/// `Ok` when `path` (in the data folder `data_dir`) is a file or folder the
/// sandbox could read as well: inside the data folder once links are
/// resolved, readable by the sandbox's user, not a FIFO, socket or device.
fn within_data(data_dir: &Path, path: &Path) -> Result<(), String> {
    let root = data_dir
        .canonicalize()
        .unwrap_or_else(|_| data_dir.to_path_buf());
    let meta = followable(&root, path)?;
    if meta.is_dir() {
        return Ok(());
    }
    readable_file(path, &meta)
}

/// `Ok` for a regular file the sandbox's user could read; else why not (a
/// FIFO, a socket, a device, its permissions).
fn readable_file(path: &Path, meta: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    if !meta.is_file() {
        return Err(crate::beneath::kind_words(meta.mode()).to_string());
    }
    if !crate::beneath::sandbox_could_read(meta.uid(), meta.gid(), meta.mode()) || !may_read(path) {
        return Err("not readable by the sandbox's user".into());
    }
    Ok(())
}

/// Whether this process may read `path`, as the kernel answers. In the
/// confined reader (the sandbox's user, in a user namespace where the
/// host's owners show as the overflow id) the owner and mode alone would
/// mislead: a host root's 0600 file looks like the reader's own.
fn may_read(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access() only reads it.
    unsafe { libc::access(c_path.as_ptr(), libc::R_OK) == 0 }
}

/// The metadata of what the link at `path` leads to, when the sandbox could
/// follow it too: its target lies inside the data folder `root` and every
/// folder on the way is one the sandbox's user could search. Else why not.
fn followable(root: &Path, path: &Path) -> Result<std::fs::Metadata, String> {
    let target = path.canonicalize().map_err(|_| {
        // In the reader's view, what lies outside the folder does not
        // exist: say where the link points, not only that it is broken.
        let named = std::fs::read_link(path)
            .map(|t| lexical(&path.parent().unwrap_or(root).join(t)))
            .unwrap_or_default();
        if named.starts_with(root) {
            "a broken link".to_string()
        } else {
            "a link to outside the data folder".to_string()
        }
    })?;
    if !target.starts_with(root) {
        return Err("a link to outside the data folder".into());
    }
    if !crate::beneath::sandbox_could_reach(root, &target) {
        return Err("a link to a file the sandbox's user cannot reach".into());
    }
    std::fs::metadata(&target).map_err(|e| format!("a link that cannot be read ({e})"))
}

/// `path` with `.` and `..` resolved by name alone (no file is looked at).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
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

/// The longest a card or one `inspect_data` answer may take to read.
pub const CARD_TIME: std::time::Duration = std::time::Duration::from_secs(120);

/// The card for a data folder, within `budget` tokens, read by a confined
/// reader ([`crate::reader`]) that sees the folder alone.
pub fn card_for_dir(dir: &Path, shown_as: &str, budget: u64) -> String {
    let request = crate::reader::Request::CardText {
        shown_as: shown_as.to_string(),
        budget,
    };
    match read_in::<String>(dir, request) {
        Ok(text) => text,
        Err(why) => format!("{shown_as}: could not be read: {why}\n"),
    }
}

/// One request about the data folder `dir` to a confined reader, its
/// answer taken as `T`.
fn read_in<T: serde::de::DeserializeOwned>(
    dir: &Path,
    request: crate::reader::Request,
) -> Result<T, crate::reader::ReadError> {
    let root = crate::reader::Root::chosen(dir)?;
    crate::reader::ask(&root, request, CARD_TIME).map(|(answer, _)| answer)
}

/// A piece of the text card: lines as they are, or an entry read in full
/// (rendered by [`Dataset::text`] once the libraries' check amended it).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Piece {
    /// Lines of the card.
    Text(String),
    /// A dataset's entry.
    Entry(Box<Dataset>),
}

/// The card's text of `pieces`.
pub fn render(pieces: &[Piece]) -> String {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(text) => text.clone(),
            Piece::Entry(dataset) => dataset.text(),
        })
        .collect()
}

/// [`card_for_dir`], amended by what the sandbox's libraries read of each
/// entry in `session` ([`library`]); `dir` must be readable in it. When
/// the check fails, the card says so and keeps the reader's facts.
pub fn checked_card(
    dir: &Path,
    shown_as: &str,
    budget: u64,
    session: &mut crate::sandbox::Session,
) -> String {
    checked_pieces(card_pieces(dir, shown_as, budget), dir, shown_as, session)
}

/// The card's pieces from a confined reader (entries as facts), for
/// [`checked_pieces`]: read while the session starts.
pub fn card_pieces(
    dir: &Path,
    shown_as: &str,
    budget: u64,
) -> Result<Vec<Piece>, crate::reader::ReadError> {
    let request = crate::reader::Request::CardPieces {
        shown_as: shown_as.to_string(),
        budget,
    };
    read_in::<Vec<Piece>>(dir, request)
}

/// The text card of `pieces`, each entry amended by what the libraries of
/// `session` read ([`library`]).
pub fn checked_pieces(
    pieces: Result<Vec<Piece>, crate::reader::ReadError>,
    dir: &Path,
    shown_as: &str,
    session: &mut crate::sandbox::Session,
) -> String {
    let mut pieces = match pieces {
        Ok(pieces) => pieces,
        Err(why) => return format!("{shown_as}: could not be read: {why}\n"),
    };
    let mut entries: Vec<&mut Dataset> = pieces
        .iter_mut()
        .filter_map(|p| match p {
            Piece::Entry(d) => Some(&mut **d),
            Piece::Text(_) => None,
        })
        .collect();
    if let Err(why) = library::check(session, dir, shown_as, &mut entries) {
        pieces.push(Piece::Text(format!(
            "(the sandbox's libraries could not check this card: {why})\n"
        )));
    }
    render(&pieces)
}

/// [`card_facts`], amended by what the sandbox's libraries read
/// ([`checked_card`]); the check's failure is a note of the folder's.
pub fn checked_facts(
    dir: &Path,
    shown_as: &str,
    session: &mut crate::sandbox::Session,
) -> Result<FolderCard, crate::reader::ReadError> {
    let mut card = card_facts(dir, shown_as)?;
    let mut entries: Vec<&mut Dataset> = card.datasets.iter_mut().collect();
    if let Err(why) = library::check(session, dir, shown_as, &mut entries) {
        card.not_checked = Some(why.to_string());
    }
    Ok(card)
}

/// [`inspect_facts`], amended by what the sandbox's libraries read.
pub fn checked_inspect(
    data_dir: &Path,
    shown_as: &str,
    rel: &str,
    session: &mut crate::sandbox::Session,
) -> Result<Dataset, SchemaError> {
    let mut dataset = match inspect_facts(data_dir, shown_as, rel) {
        Ok(dataset) => dataset,
        // A file the reader refuses to follow (an OGR VRT) may still be
        // what geopandas reads in the sandbox.
        Err(why @ (SchemaError::Unreadable { .. } | SchemaError::Reader(_)))
            if rel.to_ascii_lowercase().ends_with(".vrt")
                && !rel.split('/').any(|part| part == "..")
                && !why.to_string().contains("no such file") =>
        {
            let rel = rel.trim().trim_start_matches("./");
            let name = format!("{shown_as}{}", rel.strip_prefix(shown_as).unwrap_or(rel));
            let mut dataset = Dataset::new(&name, DatasetKind::Raster);
            dataset.unreadable = Some(why.to_string());
            dataset
        }
        Err(why) => return Err(why),
    };
    if let Err(why) = library::check(session, data_dir, shown_as, &mut [&mut dataset]) {
        dataset.notes.push(format!(
            "(the sandbox's libraries could not check this entry: {why})"
        ));
    }
    Ok(dataset)
}

/// [`card_for_dir`], in this process: only the confined reader calls it.
pub(crate) fn card_text_here(dir: &Path, shown_as: &str, budget: u64) -> String {
    render(&card_pieces_here(dir, shown_as, budget))
}

/// The card's [`Piece`]s, in this process: only the confined reader calls
/// it.
pub(crate) fn card_pieces_here(dir: &Path, shown_as: &str, budget: u64) -> Vec<Piece> {
    let mut pieces: Vec<Piece> = Vec::new();
    let walked = walk(dir);
    let files = folder_datasets::collapsed(sizes(walked.files));
    let mut loops: String = walked
        .skipped
        .iter()
        .map(|rel| {
            format!("- {shown_as}{rel}/ — a link to a folder already listed (not followed)\n")
        })
        .collect();
    for (rel, why) in &walked.refused {
        loops.push_str(&format!("- {shown_as}{rel} — {why}, not read\n"));
    }
    if let Some(why) = &walked.stopped {
        loops.push_str(&format!(
            "- (the listing of `{shown_as}` {why}; list sub-folders with os.listdir)\n"
        ));
    }
    if files.is_empty() && !walked.refused.is_empty() {
        pieces.push(Piece::Text(format!(
            "`{shown_as}` holds nothing a run can read:\n{loops}"
        )));
        return pieces;
    }
    if files.is_empty() {
        pieces.push(Piece::Text(format!("`{shown_as}` is empty.\n{loops}")));
        return pieces;
    }
    let total: u64 = files.iter().map(|f| f.1).sum();
    let mut card = format!(
        "{} file(s) in `{shown_as}`, {} in all (read natively):\n{loops}",
        files.len(),
        size_text(total)
    );
    let mut used = tokens::count(&card);
    let mut brief: Vec<Listed> = Vec::new();
    let mut full = true;
    let mut misses = 0;
    let sidecars = sidecars_by_main(&files);
    let (listed, all_series) = listed_and_series(&files, &sidecars);
    let series_of = Series::by_member(&all_series);
    for file in listed {
        let item = match series_of.get(file.0.as_str()) {
            Some(s) if s.members[0] != file.0 => continue,
            Some(s) => Listed::Series(s),
            None => Listed::File(file),
        };
        let path = dir.join(&file.0);
        let kind = kind_at(&path);
        let name = format!("{shown_as}{}", file.0);
        let entry = if full
            && matches!(
                kind,
                Kind::Vector
                    | Kind::Raster
                    | Kind::Table
                    | Kind::Multidim
                    | Kind::Parquet
                    | Kind::Archive
            ) {
            Some(
                match item {
                    Listed::Series(s) => series_entry(dir, shown_as, s, &files, &sidecars),
                    Listed::File(_) => main_entry(&path, &name, kind, sidecars.get(&file.0)),
                }
                .unwrap_or_else(|e| {
                    let mut dataset = Dataset::new(&name, dataset_kind(kind));
                    dataset.unreadable = Some(e.to_string());
                    dataset
                }),
            )
        } else {
            None
        };
        let text = entry.as_ref().map(Dataset::text);
        match (entry, text) {
            (Some(dataset), Some(text)) if used + tokens::count(&text) + TAIL <= budget => {
                used += tokens::count(&text);
                pieces.push(Piece::Text(std::mem::take(&mut card)));
                pieces.push(Piece::Entry(Box::new(dataset)));
                misses = 0;
                full = used + TAIL + SMALL_ENTRY <= budget;
            }
            (Some(_), _) => {
                // Too big for what is left: listed briefly, and later
                // (smaller) entries still tried, until the budget is
                // nearly spent or several in a row did not fit.
                misses += 1;
                full = misses < MISSES_TOLERATED && used + TAIL + SMALL_ENTRY <= budget;
                brief.push(item);
            }
            (None, _) => brief.push(item),
        }
    }
    if brief.is_empty() {
        pieces.push(Piece::Text(card));
        return pieces;
    }
    // One line per remaining file or series while the budget lasts, then
    // counts.
    let mut rest: Vec<Listed> = Vec::new();
    card.push_str("Other files:\n");
    used += 3;
    for item in brief {
        let line = match item {
            Listed::File((rel, size)) => format!("- {shown_as}{rel} ({})\n", size_text(*size)),
            Listed::Series(s) => format!(
                "- {} ({} files, {} in all)\n",
                s.name(shown_as),
                s.len(),
                size_text(s.bytes)
            ),
        };
        if rest.is_empty() && used + tokens::count(&line) + TAIL <= budget {
            used += tokens::count(&line);
            card.push_str(&line);
        } else {
            rest.push(item);
        }
    }
    if !rest.is_empty() {
        card.push_str(&rest_line(&rest));
    }
    pieces.push(Piece::Text(card));
    pieces
}

/// The card's last line for the files past the budget: how many, by
/// extension.
fn rest_line(rest: &[Listed]) -> String {
    let mut by_ext: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = 0;
    for item in rest {
        let (first, n) = match item {
            Listed::File((rel, _)) => (rel, 1),
            Listed::Series(s) => (&s.members[0], s.len()),
        };
        let ext = Path::new(first)
            .extension()
            .map(|e| e.to_string_lossy().into_owned())
            .unwrap_or_else(|| "(none)".into());
        *by_ext.entry(ext).or_default() += n;
        count += n;
    }
    let mut groups: Vec<String> = by_ext
        .iter()
        .take(8)
        .map(|(ext, n)| format!("{n} .{ext}"))
        .collect();
    if by_ext.len() > 8 {
        groups.push("…".into());
    }
    format!(
        "- … and {count} more: {}; call list_files or inspect_data for details\n",
        groups.join(", ")
    )
}

/// The card of a data folder as data, without a token budget: every
/// dataset's facts (main files with their sidecars, the first member of
/// each series with the series' lines), other files, and what was not read.
/// Read by a confined reader ([`crate::reader`]) that sees the folder alone.
pub fn card_facts(dir: &Path, shown_as: &str) -> Result<FolderCard, crate::reader::ReadError> {
    let request = crate::reader::Request::CardFacts {
        shown_as: shown_as.to_string(),
    };
    read_in::<FolderCard>(dir, request)
}

/// [`card_facts`], in this process: only the confined reader calls it.
pub(crate) fn card_facts_here(dir: &Path, shown_as: &str) -> FolderCard {
    let walked = walk(dir);
    let files = folder_datasets::collapsed(sizes(walked.files));
    let mut not_read: Vec<facts::NotRead> = walked
        .skipped
        .iter()
        .map(|rel| facts::NotRead {
            path: format!("{shown_as}{rel}/"),
            why: "a link to a folder already listed (not followed)".into(),
        })
        .collect();
    not_read.extend(walked.refused.iter().map(|(rel, why)| facts::NotRead {
        path: format!("{shown_as}{rel}"),
        why: why.clone(),
    }));
    let mut card = FolderCard {
        schema_version: facts::CARD_SCHEMA_VERSION,
        folder: shown_as.to_string(),
        // Files the sandbox cannot read are files of the folder too (the
        // text card lists them; `not_read` says why).
        files: files.len() + walked.unreadable_files,
        bytes: files.iter().map(|f| f.1).sum(),
        datasets: Vec::new(),
        other_files: Vec::new(),
        not_read,
        listing_stopped: walked.stopped.clone(),
        not_checked: None,
    };
    let sidecars = sidecars_by_main(&files);
    let (listed, all_series) = listed_and_series(&files, &sidecars);
    let series_of = Series::by_member(&all_series);
    for file in listed {
        let series = series_of.get(file.0.as_str());
        if series.is_some_and(|s| s.members[0] != file.0) {
            continue;
        }
        let path = dir.join(&file.0);
        let kind = kind_at(&path);
        let name = format!("{shown_as}{}", file.0);
        if matches!(kind, Kind::Sidecar | Kind::Other) {
            card.other_files.push(facts::OtherFile {
                path: name,
                bytes: file.1,
            });
            continue;
        }
        let read = match series {
            Some(s) => series_entry(dir, shown_as, s, &files, &sidecars),
            None => main_entry(&path, &name, kind, sidecars.get(&file.0)),
        };
        card.datasets.push(read.unwrap_or_else(|e| {
            let mut dataset = Dataset::new(&name, dataset_kind(kind));
            dataset.unreadable = Some(e.to_string());
            dataset
        }));
    }
    card
}

/// A file or a file series, as the card lists it.
#[derive(Clone, Copy)]
enum Listed<'a> {
    File(&'a (String, u64)),
    Series(&'a Series),
}

/// The files the card lists (all but the sidecars folded into their main
/// file's entry, in order) and the series among them.
fn listed_and_series<'a>(
    files: &'a [(String, u64)],
    sidecars: &BTreeMap<String, Vec<String>>,
) -> (Vec<&'a (String, u64)>, Vec<Series>) {
    let folded: std::collections::HashSet<&String> = sidecars.values().flatten().collect();
    let listed: Vec<&(String, u64)> = files.iter().filter(|f| !folded.contains(&f.0)).collect();
    let series = series::find(listed.iter().copied());
    (listed, series)
}

/// A main file's facts, with the sidecars read with it.
fn main_entry(
    path: &Path,
    name: &str,
    kind: Kind,
    sidecars: Option<&Vec<String>>,
) -> Result<Dataset, SchemaError> {
    let mut dataset = inspect_path(path, name, kind)?;
    if let Some(parts) = sidecars {
        dataset.sidecars = parts.iter().map(|p| file_name(p).to_string()).collect();
    }
    Ok(dataset)
}

/// A series' facts: its first member's, then the series: its name, the
/// call that lists it, absent members, and what the members share
/// ([`series_members`]). `files` is every file of the folder.
fn series_entry(
    dir: &Path,
    shown_as: &str,
    series: &Series,
    files: &[(String, u64)],
    sidecars: &BTreeMap<String, Vec<String>>,
) -> Result<Dataset, SchemaError> {
    let first = &series.members[0];
    let path = dir.join(first);
    let kind = kind_at(&path);
    let mut dataset = main_entry(
        &path,
        &format!("{shown_as}{first}"),
        kind,
        sidecars.get(first),
    )?;
    let mut text = format!(
        "  series: {} — {} files, {} in all; the entry above is the first of them\n",
        series.name(shown_as),
        series.len(),
        size_text(series.bytes)
    );
    if let Some(listing) = series.listing(shown_as, files) {
        text.push_str(&format!("  list: {listing}\n"));
        if series.unpadded() {
            text.push_str("  numbers: not zero-padded (plain sorted() puts 10 before 2)\n");
        }
    }
    if let Some((count, names)) = series.absent(shown_as) {
        let more = if count as usize > names.len() {
            ", …"
        } else {
            ""
        };
        text.push_str(&format!(
            "  absent from its number ranges: {count} ({}{more})\n",
            names.join(", ")
        ));
    }
    text.push_str(&series_members::lines(
        dir,
        shown_as,
        &series.members,
        kind,
        sidecars,
    ));
    dataset.series = text.lines().map(str::to_string).collect();
    Ok(dataset)
}

/// The sidecars among `files` (relative paths, sorted) that belong to a
/// main file also among them, by the main file: `x.dbf`, `x.prj`, `x.tfw`
/// with `x.shp` or `x.tif` (the same name less its extension), and
/// `x.tif.ovr`, `x.tif.aux.xml`, `x.shp.xml` with `x.tif` / `x.shp`; case
/// aside, as GDAL finds them. A sidecar without its main file (an orphan
/// `.dbf`, a `metadata.xml`) belongs to none and is listed on its own.
fn sidecars_by_main(files: &[(String, u64)]) -> BTreeMap<String, Vec<String>> {
    let mains: Vec<&String> = files
        .iter()
        .map(|f| &f.0)
        .filter(|rel| !matches!(kind_of(Path::new(rel)), Kind::Sidecar | Kind::Other))
        .collect();
    let mut by_main: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (rel, _) in files {
        if kind_of(Path::new(rel)) != Kind::Sidecar {
            continue;
        }
        let lower = rel.to_lowercase();
        let base = lower
            .strip_suffix(".aux.xml")
            .or_else(|| lower.rsplit_once('.').map(|(base, _)| base))
            .unwrap_or(&lower);
        let main = mains.iter().find(|m| {
            let m = m.to_lowercase();
            m == base
                || m.rsplit_once('.')
                    .is_some_and(|(stem, ext)| stem == base && sidecar_serves(&lower, ext))
        });
        if let Some(main) = main {
            by_main
                .entry((*main).clone())
                .or_default()
                .push(rel.clone());
        }
    }
    by_main
}

/// Whether the sidecar `name` (lower case) goes with a main file of
/// extension `main_ext`: a shapefile's parts only with its `.shp` (never
/// with a `.json` or `.csv` of the same name), a raster's world file,
/// overviews and aux with a raster, a `.prj` with either.
fn sidecar_serves(name: &str, main_ext: &str) -> bool {
    let raster = matches!(
        main_ext,
        "tif" | "tiff" | "img" | "asc" | "jp2" | "vrt" | "bil" | "dem" | "hgt" | "grd"
    );
    let ext = name.rsplit_once('.').map_or("", |(_, ext)| ext);
    match ext {
        "shx" | "dbf" | "sbn" | "sbx" | "qix" | "cpg" => main_ext == "shp",
        "prj" => main_ext == "shp" || raster,
        "ovr" | "aux" | "tfw" | "wld" => raster,
        _ => true,
    }
}

/// The last component of a relative path.
fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}

/// How much of what `count` counts three `slice`-byte slices of the file at
/// `path` hold (at its start, middle and end: lines and features often
/// grow along a file), as `(counted, bytes read, file size)`: the density
/// a big file's rows or features are estimated from without reading it.
fn sampled_density(
    path: &Path,
    slice: u64,
    count: impl Fn(&[u8]) -> u64,
) -> Option<(u64, u64, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let (mut counted, mut bytes) = (0u64, 0u64);
    for offset in [0, size / 2, size.saturating_sub(slice)] {
        file.seek(SeekFrom::Start(offset)).ok()?;
        let mut buf = Vec::with_capacity(slice as usize);
        (&mut file).take(slice).read_to_end(&mut buf).ok()?;
        counted += count(&buf);
        bytes += buf.len() as u64;
    }
    (bytes > 0).then_some((counted, bytes, size))
}

/// The `inspect_data` tool: the full entry for one file. `rel` is relative
/// to `data_dir` (a leading `shown_as` is accepted), or names a member of an
/// archive as the card showed it (`/vsizip/data/a.zip/b.shp` or
/// `data/a.zip/b.shp`).
pub fn inspect_file(data_dir: &Path, shown_as: &str, rel: &str) -> Result<String, SchemaError> {
    inspect_facts(data_dir, shown_as, rel).map(|dataset| dataset.text())
}

/// The facts of one file, as [`inspect_file`] names it, read by a confined
/// reader ([`crate::reader`]) that sees the folder alone.
pub fn inspect_facts(data_dir: &Path, shown_as: &str, rel: &str) -> Result<Dataset, SchemaError> {
    let request = crate::reader::Request::Inspect {
        shown_as: shown_as.to_string(),
        rel: rel.to_string(),
    };
    match read_in::<Result<Dataset, String>>(data_dir, request) {
        Ok(Ok(dataset)) => Ok(dataset),
        Ok(Err(why)) => Err(SchemaError::Reader(why)),
        Err(why) => Err(SchemaError::Reader(format!("{shown_as}{rel}: {why}"))),
    }
}

/// [`inspect_facts`], in this process: only the confined reader calls it.
pub(crate) fn inspect_facts_here(
    data_dir: &Path,
    shown_as: &str,
    rel: &str,
) -> Result<Dataset, SchemaError> {
    let rel = archive::strip_vsi(rel.trim()).trim_start_matches("./");
    let rel = rel.strip_prefix(shown_as).unwrap_or(rel);
    let path: PathBuf = data_dir.join(rel);
    let name = format!("{shown_as}{rel}");
    if !path.starts_with(data_dir) || rel.split('/').any(|p| p == "..") {
        return Err(SchemaError::Missing(name));
    }
    // A link is present even where what it names is not (in the reader's
    // view, nothing outside the folder is).
    let looked = std::fs::symlink_metadata(&path);
    if looked
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    {
        let mut dataset = Dataset::new(&name, DatasetKind::Vector);
        dataset.unreadable = Some(format!(
            "{name}: behind a folder the sandbox's user cannot enter, not read"
        ));
        return Ok(dataset);
    }
    let present = looked.is_ok();
    if !present && rel.contains('{') {
        // A series, by the name the card gave it.
        let files = entries_under(data_dir);
        let sidecars = sidecars_by_main(&files);
        let (_, all_series) = listed_and_series(&files, &sidecars);
        if let Some(series) = all_series.iter().find(|s| s.name(shown_as) == name) {
            return series_entry(data_dir, shown_as, series, &files, &sidecars);
        }
    }
    if !present {
        return match archive::split_member(data_dir, rel) {
            Some((file, member)) => {
                archive::member_entry(&data_dir.join(file), &format!("{shown_as}{file}"), member)
            }
            None => Err(SchemaError::Missing(name)),
        };
    }
    let kind = match kind_at(&path) {
        Kind::Other | Kind::Sidecar => Kind::Vector,
        k => k,
    };
    if let Err(why) = within_data(data_dir, &path) {
        let mut dataset = Dataset::new(&name, dataset_kind(kind));
        dataset.unreadable = Some(format!("{name}: {why}, not read"));
        return Ok(dataset);
    }
    inspect_path(&path, &name, kind).or_else(|first| match kind {
        Kind::Vector => inspect_path(&path, &name, Kind::Raster).map_err(|_| first),
        _ => Err(first),
    })
}

/// The facts of one file of a known kind, shown as `name`.
fn inspect_path(path: &Path, name: &str, kind: Kind) -> Result<Dataset, SchemaError> {
    let kind_of_data = dataset_kind(kind);
    match kind {
        Kind::Parquet => parquet::facts(path, name),
        Kind::Archive => archive::entry(path, name),
        Kind::Vector if geojson::is_big(path) => match geojson::entry(path, name) {
            Some(text) => Ok(Dataset::from_lines(name, kind_of_data, &text)),
            None => gdal_entry::entry(path, name, kind),
        },
        _ => gdal_entry::entry(path, name, kind),
    }
}

/// The kind of dataset a file of `kind` is.
fn dataset_kind(kind: Kind) -> DatasetKind {
    match kind {
        Kind::Raster => DatasetKind::Raster,
        Kind::Table => DatasetKind::Table,
        Kind::Multidim => DatasetKind::Multidim,
        Kind::Parquet => DatasetKind::Parquet,
        Kind::Archive => DatasetKind::Archive,
        Kind::Vector | Kind::Sidecar | Kind::Other => DatasetKind::Vector,
    }
}
