//! GDAL access for gisclaw's own process and its confined reader: GDAL
//! opened read-only with its messages silenced ([`open_readonly`]), its
//! reasons without the binding's wrapper ([`gdal_reason`]), CRS labels,
//! features read without GDAL counting a layer first, a file's head
//! through GDAL's virtual file system, and the hardening applied before
//! the first open ([`harden`]). The card, the output checks and eval
//! scoring all read GDAL through here; none of them owns it.

pub mod harden;

use std::io::Read;
use std::path::Path;
use std::sync::Once;

use gdal::vector::LayerAccess;
use gdal::{Dataset, DatasetOptions, GdalOpenFlags};

pub use harden::{driver_registered, harden_gdal, GDAL_OPTIONS};

/// The most [`file_head`] reserves before reading a plain file.
const HEAD_CAPACITY: usize = 1 << 20;

/// Silences GDAL's own stderr messages (errors come back as values).
pub fn quiet() {
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

/// The first `limit` bytes of a file, read through GDAL's virtual file
/// system for an archive member (`/vsizip/…`); `None` when it cannot be
/// opened.
pub fn file_head(path: &Path, limit: usize) -> Option<Vec<u8>> {
    let text = path.to_string_lossy();
    if !text.starts_with("/vsi") {
        let mut head = Vec::with_capacity(limit.min(HEAD_CAPACITY));
        std::fs::File::open(path)
            .ok()?
            .take(limit as u64)
            .read_to_end(&mut head)
            .ok()?;
        return Some(head);
    }
    let c_path = std::ffi::CString::new(text.as_bytes()).ok()?;
    let mut head = vec![0u8; limit];
    // SAFETY: a NUL-terminated path and mode; the handle is checked for
    // null, read into a buffer of the length given, and closed once.
    let read = unsafe {
        let file = gdal_sys::VSIFOpenL(c_path.as_ptr(), c"rb".as_ptr());
        if file.is_null() {
            return None;
        }
        let n = gdal_sys::VSIFReadL(head.as_mut_ptr().cast(), 1, head.len(), file);
        gdal_sys::VSIFCloseL(file);
        n
    };
    head.truncate(read);
    Some(head)
}

/// GDAL's own reason for a failure, without the binding's wrapper ("GDAL
/// method … returned a NULL pointer") or the path GDAL quotes (the caller
/// names the file): e.g. `not recognized as a supported file format`.
pub fn gdal_reason(e: &gdal::errors::GdalError) -> String {
    use gdal::errors::GdalError;
    let msg = match e {
        GdalError::NullPointer { msg, .. } | GdalError::CplError { msg, .. } => msg.trim(),
        other => return other.to_string(),
    };
    if msg.is_empty() {
        return "GDAL gives no reason".into();
    }
    // GDAL 3.6: "`x.tif' not recognized …"; later ones quote with '…'.
    let unquoted = ['`', '\'']
        .iter()
        .find_map(|&quote| msg.strip_prefix(quote)?.split_once("' "))
        .map_or(msg, |(_, rest)| rest);
    unquoted.trim_end_matches('.').to_string()
}

/// Opens `path` read-only with GDAL, its own messages silenced (errors come
/// back as values, with GDAL's reason: without `GDAL_OF_VERBOSE_ERROR` a
/// file no driver recognises fails with an empty message).
pub fn open_readonly(
    path: &Path,
    flags: GdalOpenFlags,
    options: &[&str],
) -> gdal::errors::Result<Dataset> {
    open_ex(path, flags, options, None)
}

/// [`open_readonly`] without open options, telling GDAL which files lie
/// beside `path` (`siblings`, by name), so that it does not list the
/// folder (of thousands of tiles) to find them.
pub fn open_beside(
    path: &Path,
    flags: GdalOpenFlags,
    siblings: &[&str],
) -> gdal::errors::Result<Dataset> {
    open_ex(path, flags, &[], Some(siblings))
}

fn open_ex(
    path: &Path,
    flags: GdalOpenFlags,
    options: &[&str],
    siblings: Option<&[&str]>,
) -> gdal::errors::Result<Dataset> {
    quiet();
    Dataset::open_ex(
        path,
        DatasetOptions {
            open_flags: flags
                | GdalOpenFlags::GDAL_OF_READONLY
                | GdalOpenFlags::GDAL_OF_VERBOSE_ERROR,
            open_options: (!options.is_empty()).then_some(options),
            sibling_files: siblings,
            ..DatasetOptions::default()
        },
    )
}

/// `EPSG:4326`, or the CRS's name, or `no CRS`.
pub fn crs_text(srs: Option<gdal::spatial_ref::SpatialRef>) -> String {
    srs.map_or_else(|| "no CRS".into(), |srs| crs_label(&srs).0)
}

/// A CRS's text (`EPSG:4326`, else its PROJ string) and EPSG code: the
/// file's authority code, else the code PROJ identifies for it.
pub fn crs_label(srs: &gdal::spatial_ref::SpatialRef) -> (String, Option<u32>) {
    let auth = srs.auth_name();
    let code = srs.auth_code();
    // Without an authority code in the file, the EPSG code PROJ finds for
    // it as pyproj's `to_epsg()` does (what geopandas and rasterio show).
    let identified = match (&auth, &code) {
        (Some(_), Ok(_)) => None,
        _ => identified_epsg(srs),
    };
    let text = match (&auth, &code, identified) {
        (Some(auth), Ok(code), _) => format!("{auth}:{code}"),
        (_, _, Some(code)) => format!("EPSG:{code}"),
        _ => match srs.to_proj4() {
            Ok(p) if !p.trim().is_empty() => format!("CRS {}", p.trim()),
            _ => "a CRS without an EPSG code".into(),
        },
    };
    let epsg = match (auth.as_deref(), code) {
        (Some("EPSG"), Ok(code)) => u32::try_from(code).ok(),
        _ => identified,
    };
    (text, epsg)
}

/// Least confidence (percent) of an EPSG match, as pyproj's `to_epsg()`.
const EPSG_MATCH_CONFIDENCE: i32 = 70;

/// The EPSG code of the best match PROJ finds for `srs` (GDAL's
/// `OSRFindMatches`, best first), when its confidence is at least
/// [`EPSG_MATCH_CONFIDENCE`].
fn identified_epsg(srs: &gdal::spatial_ref::SpatialRef) -> Option<u32> {
    // SAFETY: the handle belongs to `srs`, alive for the call; GDAL returns
    // an array of `entries` handles and as many confidences (or null),
    // freed here with the functions GDAL documents for them, after their
    // first entry's authority is read.
    unsafe {
        let mut entries: std::ffi::c_int = 0;
        let mut confidence: *mut std::ffi::c_int = std::ptr::null_mut();
        let matches = gdal_sys::OSRFindMatches(
            srs.to_c_hsrs(),
            std::ptr::null_mut(),
            &mut entries,
            &mut confidence,
        );
        if matches.is_null() {
            return None;
        }
        let mut found = None;
        if entries > 0 && !confidence.is_null() && *confidence >= EPSG_MATCH_CONFIDENCE {
            let best = *matches;
            let name = gdal_sys::OSRGetAuthorityName(best, std::ptr::null());
            let code = gdal_sys::OSRGetAuthorityCode(best, std::ptr::null());
            if !name.is_null() && !code.is_null() {
                let name = std::ffi::CStr::from_ptr(name).to_string_lossy();
                let code = std::ffi::CStr::from_ptr(code).to_string_lossy();
                if name == "EPSG" {
                    found = code.parse().ok();
                }
            }
        }
        gdal_sys::OSRFreeSRSArray(matches);
        gdal_sys::VSIFree(confidence.cast());
        found
    }
}

/// The next `n` features of `layer`, read with OGR directly: the gdal
/// crate's `features()` asks the layer for its count first, and GDAL's CSV
/// driver answers that by reading the whole file (30 s for 2 GB).
pub fn first_features<'a>(
    layer: &'a gdal::vector::Layer<'_>,
    n: usize,
) -> impl Iterator<Item = gdal::vector::Feature<'a>> + 'a {
    std::iter::from_fn(move || {
        // SAFETY: the handle belongs to `layer`, which outlives the returned
        // feature; OGR hands over the feature, which `Feature` destroys.
        unsafe {
            let c = gdal_sys::OGR_L_GetNextFeature(layer.c_layer());
            (!c.is_null()).then(|| gdal::vector::Feature::from_c_feature(layer.defn(), c))
        }
    })
    .take(n)
}

#[cfg(test)]
mod tests {
    use gdal::errors::GdalError;

    use super::gdal_reason;

    #[test]
    fn gdals_reason_comes_without_the_bindings_wrapper_or_gdals_quoted_path() {
        let null = |msg: &str| GdalError::NullPointer {
            method_name: "GDALOpenEx",
            msg: msg.into(),
        };
        assert_eq!(
            gdal_reason(&null(
                "`./data/x.tif' not recognized as a supported file format."
            )),
            "not recognized as a supported file format"
        );
        assert_eq!(
            gdal_reason(&null(
                "'/a b/x.gpkg' not recognized as being in a supported file format."
            )),
            "not recognized as being in a supported file format"
        );
        assert_eq!(
            gdal_reason(&null("Failed to read GeoJSON data")),
            "Failed to read GeoJSON data"
        );
        assert_eq!(gdal_reason(&null("")), "GDAL gives no reason");
        let cpl = GdalError::CplError {
            class: gdal_sys::CPLErr::CE_Failure,
            number: 4,
            msg: "Read error at scanline 3".into(),
        };
        assert_eq!(gdal_reason(&cpl), "Read error at scanline 3");
    }
}
