//! What a raster band holds: min, max and mean of its valid pixels (exact
//! up to [`EXACT_PIXELS`], read in full; beyond, from an overview or GDAL's
//! sampled blocks and said to be approximate), and the classes of a categorical band (land
//! cover, soil types, zoning: an integer band of few distinct values) with
//! their shares, the names a raster attribute table or category list gives
//! them, and whether a colour table comes with it. Reclassification and
//! suitability tasks start from these codes; `min 11 max 90` alone does not
//! name them.

use std::collections::BTreeMap;

use gdal::raster::RasterBand;
use gdal::Dataset;

use super::gdal_entry::fmt_num;

/// Most distinct values for a band to be called categorical.
const MOST_CLASSES: usize = 24;

/// Largest band (pixels) whose statistics are exact: read in full, in
/// strips of rows (a 4096×4096 deflated Float32 band: ~0.9 s). A bigger one
/// is read reduced through an overview, or (without one) gets GDAL's
/// sampled min/max, and its statistics are labelled approximate.
pub const EXACT_PIXELS: usize = 4096 * 4096;

/// Most pixels one raster file's bands are read in full for (later bands
/// are read reduced).
pub const EXACT_PIXELS_PER_FILE: usize = 3 * EXACT_PIXELS;

/// Longest side of the reduced read of an overview of a band above
/// [`EXACT_PIXELS`].
const READ_SIDE: usize = 1024;

/// Pixels read at once in a full read.
const STRIP_PIXELS: usize = 1 << 20;

/// A band's statistics over its valid pixels (not nodata, not NaN).
#[derive(Debug, Clone, PartialEq)]
pub struct BandStats {
    /// Smallest valid value.
    pub min: f64,
    /// Largest valid value.
    pub max: f64,
    /// Mean of the valid values (`None` from GDAL's sampled min/max).
    pub mean: Option<f64>,
    /// Valid pixels counted (for [`Read::Sampled`], 1: GDAL found some; it
    /// fails on a band with none).
    pub valid: u64,
    /// How the pixels were read.
    pub read: Read,
    /// An integer band's values and their counts, while it has at most
    /// [`MOST_CLASSES`] of them.
    pub classes: Option<BTreeMap<i64, u64>>,
}

/// How a band's pixels were read for its statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Every pixel: the statistics are exact.
    Full,
    /// A reduced read of an overview, as a grid of this size.
    Reduced(usize, usize),
    /// GDAL's approximate min/max from sampled blocks (a big band without
    /// an overview: a reduced read of it would read every block).
    Sampled,
}

/// The statistics of band `index` of `ds`, exact when it has at most
/// [`EXACT_PIXELS`] and `exact_budget` (pixels) allows, which a full read
/// then draws on; `None` when it cannot be read.
pub fn band_stats(ds: &Dataset, index: usize, exact_budget: &mut usize) -> Option<BandStats> {
    let band = ds.rasterband(index).ok()?;
    let (w, h) = band.size();
    let nodata = band.no_data_value();
    let integer = band.band_type().is_integer();
    let mut acc = Accumulator::new(nodata, integer);
    let pixels = w.saturating_mul(h);
    let read = if pixels <= EXACT_PIXELS && pixels <= *exact_budget {
        *exact_budget -= pixels;
        let rows = (STRIP_PIXELS / w.max(1)).max(1);
        let mut row = 0;
        while row < h {
            let n = rows.min(h - row);
            let strip = band
                .read_as::<f64>((0, row as isize), (w, n), (w, n), None)
                .ok()?;
            acc.add(strip.data());
            row += n;
        }
        Read::Full
    } else if let Some(source) = smallest_overview(&band) {
        let (sw, sh) = source.size();
        let scale = (sw.max(sh) as f64 / READ_SIDE as f64).max(1.0);
        let shape = (
            ((sw as f64 / scale) as usize).max(1),
            ((sh as f64 / scale) as usize).max(1),
        );
        let values = source.read_as::<f64>((0, 0), (sw, sh), shape, None).ok()?;
        acc.add(values.data());
        Read::Reduced(shape.0, shape.1)
    } else {
        let sampled = band.compute_raster_min_max(true).ok()?;
        return Some(BandStats {
            min: sampled.min,
            max: sampled.max,
            mean: None,
            valid: 1,
            read: Read::Sampled,
            classes: None,
        });
    };
    Some(acc.finish(read))
}

/// Running min, max, sum and (for integer bands) value counts.
struct Accumulator {
    nodata: Option<f64>,
    min: f64,
    max: f64,
    sum: f64,
    valid: u64,
    classes: Option<BTreeMap<i64, u64>>,
}

impl Accumulator {
    fn new(nodata: Option<f64>, integer: bool) -> Accumulator {
        Accumulator {
            nodata,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: 0.0,
            valid: 0,
            classes: integer.then(BTreeMap::new),
        }
    }

    fn add(&mut self, values: &[f64]) {
        for &v in values {
            if v.is_nan() || Some(v) == self.nodata {
                continue;
            }
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            self.sum += v;
            self.valid += 1;
            if let Some(classes) = &mut self.classes {
                *classes.entry(v as i64).or_default() += 1;
                if classes.len() > MOST_CLASSES {
                    self.classes = None;
                }
            }
        }
    }

    fn finish(self, read: Read) -> BandStats {
        BandStats {
            min: self.min,
            max: self.max,
            mean: (self.valid > 0).then(|| self.sum / self.valid as f64),
            valid: self.valid,
            read,
            classes: self.classes,
        }
    }
}

/// The band line's statistics: `, min 0 max 247 mean 133.76` (with
/// `approximate, from a W×H read` when not exact), or that no pixel is
/// valid.
pub fn stats_text(stats: &BandStats) -> String {
    if stats.valid == 0 {
        return ", no valid pixel (every pixel is nodata)".into();
    }
    let mut text = format!(", min {} max {}", fmt_num(stats.min), fmt_num(stats.max));
    if let Some(mean) = stats.mean {
        text.push_str(&format!(" mean {}", fmt_mean(mean)));
    }
    if let Some(how) = approximate(stats.read) {
        text.push_str(&format!(" ({how})"));
    }
    text
}

/// How statistics read as `read` are approximate; `None` when exact.
fn approximate(read: Read) -> Option<String> {
    match read {
        Read::Full => None,
        Read::Reduced(w, h) => Some(format!("approximate, from a {w}×{h} read")),
        Read::Sampled => Some("approximate, from GDAL's sampled blocks".into()),
    }
}

/// A mean to four significant decimals at most.
fn fmt_mean(mean: f64) -> String {
    let s = format!("{mean:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The card's line on the classes of band `index` of `ds` from its
/// statistics (its nodata value left out), if it is an integer band of 2
/// to [`MOST_CLASSES`] values.
pub(super) fn classes_line(ds: &Dataset, index: usize, stats: &BandStats) -> Option<String> {
    let band = ds.rasterband(index).ok()?;
    let counts = stats.classes.as_ref()?;
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
    let read = approximate(stats.read).unwrap_or_else(|| "every pixel".into());
    Some(format!(
        "  classes: {} values ({read}): {}{colours}\n",
        counts.len(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory Byte band of `w`×`h` pixels, all 7 but one 200.
    fn band_of(w: usize, h: usize) -> Dataset {
        let driver = gdal::DriverManager::get_driver_by_name("MEM").unwrap();
        let ds = driver.create_with_band_type::<u8, _>("", w, h, 1).unwrap();
        let mut band = ds.rasterband(1).unwrap();
        band.fill(7.0, None).unwrap();
        let mut one = gdal::raster::Buffer::new((1, 1), vec![200u8]);
        band.write((3, 2), (1, 1), &mut one).unwrap();
        ds
    }

    #[test]
    fn small_bands_are_read_whole_and_big_ones_without_overviews_sampled() {
        let small = band_of(300, 200);
        let mut budget = EXACT_PIXELS_PER_FILE;
        let stats = band_stats(&small, 1, &mut budget).unwrap();
        assert_eq!((stats.min, stats.max, stats.read), (7.0, 200.0, Read::Full));
        assert_eq!(stats.valid, 60_000);
        assert_eq!(stats_text(&stats), ", min 7 max 200 mean 7.0032");
        assert_eq!(budget, EXACT_PIXELS_PER_FILE - 60_000);
        // Over the exact size and without an overview: GDAL's sampled
        // min/max, no mean, no classes, said to be approximate.
        let big = band_of(4200, 4200);
        let stats = band_stats(&big, 1, &mut budget).unwrap();
        assert_eq!(stats.read, Read::Sampled);
        assert!(stats.mean.is_none() && stats.classes.is_none());
        assert!(
            stats_text(&stats).ends_with("(approximate, from GDAL's sampled blocks)"),
            "{}",
            stats_text(&stats)
        );
    }
}
