//! GDAL hardened before its first open: what a file's *contents* may make
//! GDAL do. Applied in the confined reader (where every untrusted file is
//! opened) and in gisclaw's own process (which opens none, but links GDAL
//! for geometry and CRS work). The sandbox's own GDALs (the wheels')
//! get the options that make sense for a cell as environment variables
//! (`crate::sandbox::env`).
//!
//! GDAL has no switch that turns the network off (its documentation says to
//! build without curl) and no option that confines a VRT's sources to a
//! folder: the reader's namespaces and seccomp stop the first, and the
//! drivers that follow a file's contents to other files or servers are
//! not registered at all. GDAL's own sidecars (`.aux.xml`: category
//! names, statistics) are still read, as the sandbox's libraries read
//! them; the reader's view of the folder is read-only, so nothing is
//! written beside the data.

use std::ffi::CString;
use std::sync::Once;

/// Configuration options set before the first open, with why.
pub const GDAL_OPTIONS: &[(&str, &str)] = &[
    // `/vsistdin/` would read the terminal's next line.
    ("CPL_ALLOW_VSISTDIN", "NO"),
    // VRTRawRasterBand reads any file as pixels (honoured from GDAL 3.12;
    // the VRT driver is not registered here at all).
    ("GDAL_VRT_ENABLE_RAWRASTERBAND", "NO"),
    // Python pixel functions in a VRT.
    ("GDAL_VRT_ENABLE_PYTHON", "NO"),
    // `MEM:::DATAPOINTER=` names read process memory (GDAL ≥ 3.10).
    ("GDAL_MEM_ENABLE_OPEN", "NO"),
    // No `.properties` index written beside a gzip file read.
    ("CPL_VSIL_GZIP_WRITE_PROPERTIES", "NO"),
    // No plugins loaded from disk, no PROJ grids fetched.
    ("GDAL_DRIVER_PATH", "disable"),
    ("PROJ_NETWORK", "OFF"),
    // Temporary files (the OSM driver's index) in the reader's own /tmp.
    ("CPL_TMPDIR", "/tmp"),
];

/// Raster drivers that follow a file's contents to other files or to a
/// server: never registered.
pub const SKIPPED_RASTER_DRIVERS: &[&str] = &[
    "VRT",
    "DERIVED",
    "GTI",
    "WMS",
    "WMTS",
    "WCS",
    "HTTP",
    "DAAS",
    "EEDA",
    "EEDAI",
    "PLMOSAIC",
    "OGCAPI",
    "STACTA",
    "STACIT",
    "NGW",
    "PostGISRaster",
    // Header fields that name other files or folders anywhere.
    "MRF",
];

/// Vector drivers of the same kind: never registered.
pub const SKIPPED_VECTOR_DRIVERS: &[&str] = &[
    "OGR_VRT",
    "WFS",
    "OAPIF",
    "CSW",
    "PostgreSQL",
    "MySQL",
    "ODBC",
    "MSSQLSpatial",
    "Elasticsearch",
    "Carto",
    "AmigoCloud",
    "CouchDB",
    "PLScenes",
    "HANA",
    "MongoDBv3",
    // Runs the `gpsbabel` program; downloads schemas; database drivers.
    "GPSBabel",
    "GMLAS",
    "ADBC",
];

/// Sets [`GDAL_OPTIONS`], registers GDAL's drivers, and removes the
/// skipped ones from the registry (by handle: `GDAL_SKIP` would warn about
/// every name a build lacks). Once per process; call before anything opens
/// a file.
pub fn harden_gdal() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (key, value) in GDAL_OPTIONS {
            set(key, value);
        }
        // SAFETY: registers the built-in drivers; no arguments.
        unsafe { gdal_sys::GDALAllRegister() };
        // A GDAL configuration file (`GDAL_CONFIG_FILE`, `~/.gdal/gdalrc`)
        // read at registration cannot undo them.
        for (key, value) in GDAL_OPTIONS {
            set(key, value);
        }
        for name in SKIPPED_RASTER_DRIVERS.iter().chain(SKIPPED_VECTOR_DRIVERS) {
            deregister(name);
        }
    });
}

/// Whether GDAL has a driver of this name registered.
pub fn driver_registered(name: &str) -> bool {
    let Ok(c) = CString::new(name) else {
        return false;
    };
    // SAFETY: c is NUL-terminated; the driver handle is only compared.
    !unsafe { gdal_sys::GDALGetDriverByName(c.as_ptr()) }.is_null()
}

fn set(key: &str, value: &str) {
    let (Ok(k), Ok(v)) = (CString::new(key), CString::new(value)) else {
        return;
    };
    // SAFETY: both strings are NUL-terminated; GDAL copies them.
    unsafe { gdal_sys::CPLSetConfigOption(k.as_ptr(), v.as_ptr()) };
}

fn deregister(name: &str) {
    let Ok(c) = CString::new(name) else { return };
    // SAFETY: the handle comes from GDAL's own registry and is removed from
    // it before it is destroyed; nothing else holds it at start-up.
    unsafe {
        let driver = gdal_sys::GDALGetDriverByName(c.as_ptr());
        if !driver.is_null() {
            gdal_sys::GDALDeregisterDriver(driver);
            gdal_sys::GDALDestroyDriver(driver);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(key: &str) -> Option<String> {
        let k = CString::new(key).ok()?;
        // SAFETY: k is NUL-terminated; GDAL returns a string it owns (or
        // null), copied at once.
        let v = unsafe { gdal_sys::CPLGetConfigOption(k.as_ptr(), std::ptr::null()) };
        (!v.is_null()).then(|| {
            // SAFETY: non-null, NUL-terminated, owned by GDAL.
            unsafe { std::ffi::CStr::from_ptr(v) }
                .to_string_lossy()
                .into_owned()
        })
    }

    #[test]
    fn the_drivers_that_follow_contents_are_gone_and_the_options_set() {
        harden_gdal();
        for name in ["VRT", "OGR_VRT", "WMS", "WFS", "HTTP"] {
            assert!(!driver_registered(name), "{name} is still registered");
        }
        for name in [
            "GTiff",
            "ESRI Shapefile",
            "GPKG",
            "CSV",
            "GeoJSON",
            "netCDF",
        ] {
            assert!(driver_registered(name), "{name} is missing");
        }
        for (key, value) in GDAL_OPTIONS {
            assert_eq!(option(key).as_deref(), Some(*value), "{key}");
        }
    }
}
