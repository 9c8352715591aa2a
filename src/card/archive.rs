//! Archives in the data folder (`.zip`, `.tar`, `.tar.gz`/`.tgz`, `.gz`):
//! their members are described as if unpacked, read in place through GDAL's
//! virtual file systems (`/vsizip/`, `/vsitar/`, `/vsigzip/`), and each is
//! named by the path that reads it — the same path works in geopandas
//! (pyogrio) and rasterio in the sandbox, so the model never unpacks.

use std::ffi::CString;
use std::path::Path;

use super::facts::{Dataset, DatasetKind};
use super::{csv_read, kind_of, size_text, Kind, SchemaError};

/// Members described in full per archive; the rest are listed by name.
const FULL_MEMBERS: usize = 12;

/// Members named in the closing list of an archive.
const LISTED_MEMBERS: usize = 20;

/// Whether a lower-case file name is an archive gisclaw reads members of.
pub(super) fn is_archive(lower: &str) -> bool {
    [".zip", ".tar", ".tgz", ".gz"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// GDAL's virtual file system prefix for an archive's lower-case name.
fn prefix(lower: &str) -> &'static str {
    if lower.ends_with(".zip") {
        "/vsizip/"
    } else if lower.ends_with(".tar") || lower.ends_with(".tgz") || lower.ends_with(".tar.gz") {
        "/vsitar/"
    } else {
        "/vsigzip/"
    }
}

/// Whether an archive's lower-case name is a single gzip stream
/// (`a.csv.gz` holds `a.csv`) rather than a folder of members.
fn single_gzip(lower: &str) -> bool {
    prefix(lower) == "/vsigzip/"
}

/// `rel` without a leading `/vsizip/`, `/vsitar/` or `/vsigzip/`, as the
/// model may pass back the path the card showed it.
pub(super) fn strip_vsi(rel: &str) -> &str {
    ["/vsizip/", "/vsitar/", "/vsigzip/"]
        .iter()
        .find_map(|p| rel.strip_prefix(p))
        .unwrap_or(rel)
}

/// Splits `rel` (relative to the data folder) into an archive file that
/// exists and the member path inside it.
pub(super) fn split_member<'a>(data_dir: &Path, rel: &'a str) -> Option<(&'a str, &'a str)> {
    rel.match_indices('/').find_map(|(i, _)| {
        let (archive, member) = (&rel[..i], &rel[i + 1..]);
        let lower = archive.to_ascii_lowercase();
        (is_archive(&lower) && !single_gzip(&lower) && data_dir.join(archive).is_file())
            .then_some((archive, member))
    })
}

/// Size and whether it is a folder, of a GDAL virtual path.
fn vsi_stat(path: &str) -> Option<(u64, bool)> {
    let c = CString::new(path).ok()?;
    // SAFETY: VSIStatBufL is glibc's `struct stat64` (opaque in the
    // bindings), which libc::stat64 declares; VSIStatL fills the zeroed
    // buffer and reads the NUL-terminated path, both outliving the call.
    unsafe {
        let mut buf: libc::stat64 = std::mem::zeroed();
        let out = (&mut buf as *mut libc::stat64).cast::<gdal_sys::VSIStatBufL>();
        if gdal_sys::VSIStatL(c.as_ptr(), out) != 0 {
            return None;
        }
        let dir = (buf.st_mode & libc::S_IFMT) == libc::S_IFDIR;
        Some((buf.st_size.max(0) as u64, dir))
    }
}

/// One member: its path inside the archive and its unpacked size.
struct Member {
    name: String,
    size: u64,
}

/// The files an archive holds (folders left out), sorted by name, a File
/// Geodatabase among them as one member ([`super::folder_datasets`]); at
/// most [`MAX_MEMBERS`] entries are looked at, and whether there are more.
///
/// Listed with `VSIOpenDir`, one entry at a time with its size and mode:
/// GDAL's recursive listing looks every name up again in the archive's
/// index (100,000 members: a minute), and a cell (or a hostile download)
/// may pack that many.
fn members(vsi_root: &str) -> Result<(Vec<Member>, bool), gdal::errors::GdalError> {
    let root = CString::new(vsi_root).map_err(|_| {
        gdal::errors::GdalError::BadArgument("a NUL byte in the archive's path".into())
    })?;
    let mut files = Vec::new();
    let mut seen = 0usize;
    let mut more = false;
    // SAFETY: VSIOpenDir reads the NUL-terminated path (outliving the
    // call) and returns a handle we close below; each entry it returns is
    // valid until the next call on that handle.
    unsafe {
        let dir = gdal_sys::VSIOpenDir(root.as_ptr(), -1, std::ptr::null());
        if dir.is_null() {
            return Err(gdal::errors::GdalError::BadArgument(format!(
                "{vsi_root} cannot be listed"
            )));
        }
        loop {
            let entry = gdal_sys::VSIGetNextDirEntry(dir);
            if entry.is_null() {
                break;
            }
            if seen == MAX_MEMBERS {
                more = true;
                break;
            }
            seen += 1;
            let entry = &*entry;
            let name = std::ffi::CStr::from_ptr(entry.pszName)
                .to_string_lossy()
                .trim_end_matches('/')
                .to_string();
            let is_dir =
                entry.bModeKnown != 0 && (entry.nMode as u32 & libc::S_IFMT) == libc::S_IFDIR;
            if !is_dir {
                let size = if entry.bSizeKnown != 0 {
                    entry.nSize
                } else {
                    0
                };
                files.push((name, size));
            }
        }
        gdal_sys::VSICloseDir(dir);
    }
    files.sort();
    let members = super::folder_datasets::collapsed(files)
        .into_iter()
        .map(|(name, size)| Member { name, size })
        .collect();
    Ok((members, more))
}

/// Most members of one archive the card looks at.
const MAX_MEMBERS: usize = 2_000;

/// How a table member is read in pandas, which cannot open GDAL paths
/// (not given when the member's entry has its own call with arguments,
/// [`csv_read::READ_CALL`]).
fn pandas_hint(lower: &str, shown: &str, member: &str) -> String {
    if lower.ends_with(".zip") {
        format!(
            "pandas: pd.read_csv(zipfile.ZipFile({}).open({}))",
            crate::util::py_str(shown),
            crate::util::py_str(member)
        )
    } else if single_gzip(lower) {
        format!(
            "pandas: pd.read_csv({}) (compression inferred)",
            crate::util::py_str(shown)
        )
    } else {
        format!(
            "pandas: pd.read_csv(tarfile.open({}).extractfile({}))",
            crate::util::py_str(shown),
            crate::util::py_str(member)
        )
    }
}

/// The card entry for an archive at `path`, shown as `shown` (`data/a.zip`).
pub(super) fn entry(path: &Path, shown: &str) -> Result<Dataset, SchemaError> {
    crate::gdal_io::quiet();
    let lower = shown.to_ascii_lowercase();
    let vsi = prefix(&lower);
    let abs = path.to_string_lossy();
    if single_gzip(&lower) {
        let inner = shown[..shown.len() - 3].to_string();
        let kind = kind_of(Path::new(&inner));
        let mut text = format!(
            "- {shown} — gzip-compressed {}\n",
            Path::new(&inner)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let mut members = Vec::new();
        if readable(kind) {
            let member = super::gdal_entry::entry(
                Path::new(&format!("{vsi}{abs}")),
                &format!("{vsi}{shown}"),
                kind,
            )?;
            let body = member.text();
            text.push_str(&indent(&body));
            if kind == Kind::Table && !body.contains(csv_read::READ_CALL) {
                text.push_str(&format!("    {}\n", pandas_hint(&lower, shown, "")));
            }
            members.push(member);
        }
        let mut dataset = Dataset::from_lines(shown, DatasetKind::Archive, &text);
        dataset.members = members;
        return Ok(dataset);
    }
    let root = format!("{vsi}{abs}");
    let (list, more) = members(&root).map_err(|e| SchemaError::Unreadable {
        file: shown.to_string(),
        message: e.to_string(),
    })?;
    let unpacked: u64 = list.iter().map(|m| m.size).sum();
    let kind = if vsi == "/vsizip/" { "zip" } else { "tar" };
    let files = format!("{} file(s), {} unpacked", list.len(), size_text(unpacked));
    let head = if more {
        format!("{kind} archive of more than {MAX_MEMBERS} entries, the first {MAX_MEMBERS} looked at ({files})")
    } else {
        format!("{kind} archive, {files}")
    };
    let mut text = format!(
        "- {shown} — {head}; members are read in place by the path shown (geopandas, rasterio), no need to unpack\n"
    );
    let mut rest = Vec::new();
    let mut full = 0;
    let mut members = Vec::new();
    for member in &list {
        let kind = kind_of(Path::new(&member.name));
        if !readable(kind) || full >= FULL_MEMBERS {
            if kind != Kind::Sidecar {
                rest.push(format!("{} ({})", member.name, size_text(member.size)));
            }
            continue;
        }
        full += 1;
        let shown_member = format!("{vsi}{shown}/{}", member.name);
        let body = match super::gdal_entry::entry(
            Path::new(&format!("{root}/{}", member.name)),
            &shown_member,
            kind,
        ) {
            Ok(dataset) => {
                let body = dataset.text();
                members.push(dataset);
                body
            }
            Err(e) => {
                let mut dataset = Dataset::new(&shown_member, super::dataset_kind(kind));
                dataset.unreadable = Some(e.to_string());
                let body = dataset.text();
                members.push(dataset);
                body
            }
        };
        text.push_str(&indent(&body));
        if kind == Kind::Table && !body.contains(csv_read::READ_CALL) {
            text.push_str(&format!(
                "    {}\n",
                pandas_hint(&lower, shown, &member.name)
            ));
        }
    }
    if !rest.is_empty() {
        let more = rest.len().saturating_sub(LISTED_MEMBERS);
        rest.truncate(LISTED_MEMBERS);
        text.push_str(&format!("  other members: {}", rest.join(", ")));
        if more > 0 {
            text.push_str(&format!(", … and {more} more"));
        }
        text.push('\n');
    }
    let mut dataset = Dataset::from_lines(shown, DatasetKind::Archive, &text);
    dataset.members = members;
    Ok(dataset)
}

/// The entry for one member (`member` inside the archive at `path`, shown
/// as `shown`), for `inspect_data`.
pub(super) fn member_entry(path: &Path, shown: &str, member: &str) -> Result<Dataset, SchemaError> {
    crate::gdal_io::quiet();
    let lower = shown.to_ascii_lowercase();
    let vsi = prefix(&lower);
    let kind = match kind_of(Path::new(member)) {
        Kind::Other | Kind::Sidecar | Kind::Parquet | Kind::Archive => Kind::Vector,
        k => k,
    };
    let full = Path::new(&format!("{vsi}{}/{member}", path.to_string_lossy())).to_path_buf();
    let name = format!("{vsi}{shown}/{member}");
    if vsi_stat(&full.to_string_lossy()).is_none() {
        return Err(SchemaError::Missing(name));
    }
    super::gdal_entry::entry(&full, &name, kind)
}

/// Whether the card can describe a member of this kind through GDAL.
fn readable(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Vector | Kind::Raster | Kind::Table | Kind::Multidim
    )
}

/// `body` indented by two spaces, line by line.
fn indent(body: &str) -> String {
    body.lines().map(|l| format!("  {l}\n")).collect()
}
