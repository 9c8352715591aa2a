//! The environment the worker (and so every session) inherits from
//! gisclaw: an allowlist, without credentials or network settings.

/// Environment variables the worker inherits; everything else (API keys
/// above all) is withheld from code the model writes. `PATH` is not
/// inherited but set ([`worker_path`]): the shell's (a pyenv's shims, a
/// conda's bin) says nothing the sandbox uses, and the same user's
/// commands from two shells must share one sandbox service.
const INHERITED_ENV: &[&str] = &["HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM"];
/// The configuration options of the GIS libraries passed on, by name: an
/// allowlist, so that a variable whose name avoids every denied word
/// (`OGR_PG_DSN` with a password in it) never reaches a cell. Performance,
/// data paths, driver behaviour and debugging; no connection strings, no
/// network settings, no credentials.
const INHERITED_GIS_ENV: &[&str] = &[
    "GDAL_CACHEMAX",
    "GDAL_NUM_THREADS",
    "GDAL_DATA",
    "GDAL_DRIVER_PATH",
    "GDAL_PAM_ENABLED",
    "GDAL_DISABLE_READDIR_ON_OPEN",
    "GDAL_MAX_DATASET_POOL_SIZE",
    "GDAL_SWATH_SIZE",
    "GDAL_FORCE_CACHING",
    "GDAL_TIFF_INTERNAL_MASK",
    "GDAL_TIFF_OVR_BLOCKSIZE",
    "GDAL_FILENAME_IS_UTF8",
    "GDAL_VALIDATE_CREATION_OPTIONS",
    "GDAL_ERROR_ON_LIBJPEG_WARNING",
    "GDAL_PDF_DPI",
    "GDAL_SKIP",
    "GDAL_RASTERIO_RESAMPLING",
    "GDAL_MEM_ENABLE_OPEN",
    "CPL_DEBUG",
    "CPL_LOG_ERRORS",
    "CPL_TMPDIR",
    "CPL_ZIP_ENCODING",
    "CPL_VSIL_ZIP_ALLOWED_EXTENSIONS",
    "OGR_ENABLE_PARTIAL_REPROJECTION",
    "OGR_GEOMETRY_ACCEPT_UNCLOSED_RING",
    "OGR_ORGANIZE_POLYGONS",
    "OGR_SQLITE_CACHE",
    "OGR_SQLITE_SYNCHRONOUS",
    "OGR_ARC_STEPSIZE",
    "OGR_STROKE_CURVE",
    "OGR_CT_FORCE_TRADITIONAL_GIS_ORDER",
    "SHAPE_ENCODING",
    "SHAPE_RESTORE_SHX",
    "DXF_ENCODING",
    "PROJ_DATA",
    "PROJ_LIB",
    "PROJ_DEBUG",
    "PROJ_USER_WRITABLE_DIRECTORY",
];

/// GDAL options set for every session, whatever gisclaw inherited: what a
/// file's contents may make the wheels' GDALs do (see
/// `crate::gdal_io::GDAL_OPTIONS` for the reader's, which also drops the
/// VRT drivers; a cell needs VRTs: rasterio's `WarpedVRT` is one). No
/// `/vsistdin/`, no raw-band VRTs (GDAL ≥ 3.12), no Python pixel functions,
/// no `MEM:::` names (GDAL ≥ 3.10), no PROJ grids fetched, no `.properties`
/// index beside a gzip file.
pub const SESSION_GDAL_OPTIONS: &[(&str, &str)] = &[
    ("CPL_ALLOW_VSISTDIN", "NO"),
    ("GDAL_VRT_ENABLE_RAWRASTERBAND", "NO"),
    ("GDAL_VRT_ENABLE_PYTHON", "NO"),
    ("GDAL_MEM_ENABLE_OPEN", "NO"),
    ("PROJ_NETWORK", "OFF"),
    ("CPL_VSIL_GZIP_WRITE_PROPERTIES", "NO"),
];

/// Whether the worker inherits the variable `key` from gisclaw.
fn inherited(key: &str) -> bool {
    if SESSION_GDAL_OPTIONS.iter().any(|(k, _)| *k == key) {
        return false;
    }
    INHERITED_ENV.contains(&key) || INHERITED_GIS_ENV.contains(&key) || key.starts_with("LC_")
}

/// The worker's `PATH`: the venv's programs, then the system's.
pub(super) fn worker_path(venv: &std::path::Path) -> std::ffi::OsString {
    let absolute = std::path::absolute(venv).unwrap_or_else(|_| venv.to_path_buf());
    let mut path = absolute.join("bin").into_os_string();
    path.push(":/usr/local/bin:/usr/bin:/bin");
    path
}

/// The environment the worker gets from gisclaw: the inherited variables
/// and its own `PATH` ([`worker_path`]).
pub(super) fn inherited_env(
    venv: &std::path::Path,
) -> impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)> {
    std::env::vars_os()
        .filter(|(key, _)| inherited(&key.to_string_lossy()))
        .chain(std::iter::once(("PATH".into(), worker_path(venv))))
        .chain(
            SESSION_GDAL_OPTIONS
                .iter()
                .map(|(k, v)| (std::ffi::OsString::from(k), std::ffi::OsString::from(v))),
        )
}

#[cfg(test)]
mod tests {
    use super::inherited;

    #[test]
    fn gis_settings_are_inherited_and_their_credentials_are_not() {
        assert!(!inherited("PATH"), "the worker's PATH is its own");
        for key in [
            "LC_ALL",
            "GDAL_CACHEMAX",
            "GDAL_NUM_THREADS",
            "PROJ_DATA",
            "CPL_DEBUG",
        ] {
            assert!(inherited(key), "{key}");
        }
        for key in [
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "GDAL_HTTP_USERPWD",
            "GDAL_HTTP_HEADERS",
            "GDAL_HTTP_PROXYUSERPWD",
            "CPL_AWS_CREDENTIALS_FILE",
            "GDAL_HTTP_HEADER_FILE",
            "CPL_VSIL_CURL_ALLOWED_EXTENSIONS",
            "OGR_PG_DSN",
            "PG_DSN",
            "GDAL_PG_CONNECTION",
            "OGR_MSSQL_CONNECTION",
            "GDAL_NOTHING_DENIED_IN_THE_NAME",
        ] {
            assert!(!inherited(key), "{key}");
        }
    }
}
