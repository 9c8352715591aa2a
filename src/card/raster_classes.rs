//! The classes of a categorical raster (land cover, soil types, zoning):
//! an integer band of few distinct values, with their shares, the names a
//! raster attribute table or category list gives them, and whether a
//! colour table comes with it. Reclassification and suitability tasks
//! start from these codes; `min 11 max 90` alone does not name them.

use std::collections::BTreeMap;

use gdal::raster::RasterBand;
use gdal::Dataset;

/// Most distinct values for a band to be called categorical.
const MOST_CLASSES: usize = 24;

/// Longest side read (nearest neighbour) to count the values.
const READ_SIDE: usize = 512;

/// Largest band read directly (pixels); a bigger one is read through an
/// overview, or not at all (a decimated read of a band without overviews
/// reads every block of it).
const DIRECT_PIXELS: usize = 4096 * 4096;

/// The card's line on the classes of band `index` of `ds` (its nodata
/// value left out), if it is an integer band of at most [`MOST_CLASSES`]
/// values.
pub(super) fn line(ds: &Dataset, index: usize) -> Option<String> {
    let band = ds.rasterband(index).ok()?;
    if !band.band_type().is_integer() {
        return None;
    }
    let (w, h) = band.size();
    let source = if w * h <= DIRECT_PIXELS {
        ds.rasterband(index).ok()?
    } else {
        smallest_overview(&band)?
    };
    let (w, h) = source.size();
    let scale = (w.max(h) as f64 / READ_SIDE as f64).max(1.0);
    let shape = (
        ((w as f64 / scale) as usize).max(1),
        ((h as f64 / scale) as usize).max(1),
    );
    let values = source.read_as::<f64>((0, 0), (w, h), shape, None).ok()?;
    let nodata = band.no_data_value();
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    for &v in values.data() {
        if Some(v) == nodata || v.is_nan() {
            continue;
        }
        *counts.entry(v as i64).or_default() += 1;
        if counts.len() > MOST_CLASSES {
            return None;
        }
    }
    let total: u64 = counts.values().sum();
    if counts.len() < 2 || total == 0 {
        return None;
    }
    let names = category_names(&band);
    let classes: Vec<String> = counts
        .iter()
        .map(|(value, n)| {
            let share = 100.0 * *n as f64 / total as f64;
            let share = if share < 1.0 {
                "<1".to_string()
            } else {
                format!("{share:.0}")
            };
            match names.get(usize::try_from(*value).unwrap_or(usize::MAX)) {
                Some(name) if !name.is_empty() => format!("{value} {name:?} ({share}%)"),
                _ => format!("{value} ({share}%)"),
            }
        })
        .collect();
    let colours = band
        .color_table()
        .map(|t| format!("; a colour table of {} entries", t.entry_count()))
        .unwrap_or_default();
    Some(format!(
        "  classes: {} values ({}, from a {}×{} read): {}{colours}\n",
        counts.len(),
        if source.size() == band.size() {
            "the band"
        } else {
            "an overview"
        },
        shape.0,
        shape.1,
        classes.join(", ")
    ))
}

/// The smallest overview of `band` of at least [`READ_SIDE`] on its
/// longer side.
fn smallest_overview<'a>(band: &RasterBand<'a>) -> Option<RasterBand<'a>> {
    (0..band.overview_count().unwrap_or(0).max(0) as usize)
        .filter_map(|i| band.overview(i).ok())
        .filter(|o| o.size().0.max(o.size().1) >= READ_SIDE)
        .min_by_key(|o| o.size().0 * o.size().1)
}

/// The band's category names, by value (`GDALGetRasterCategoryNames`;
/// empty when it has none).
fn category_names(band: &RasterBand) -> Vec<String> {
    // SAFETY: the band's handle is valid while `band` lives; GDAL returns
    // a NULL-terminated list of C strings it owns (or NULL), read here
    // before any other call on the band.
    unsafe {
        let list = gdal_sys::GDALGetRasterCategoryNames(band.c_rasterband());
        if list.is_null() {
            return Vec::new();
        }
        let mut names = Vec::new();
        let mut at = list;
        while !(*at).is_null() {
            names.push(std::ffi::CStr::from_ptr(*at).to_string_lossy().into_owned());
            at = at.add(1);
        }
        names
    }
}
