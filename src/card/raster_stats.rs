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

use super::facts;

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
    // A mask of the dataset's or an alpha band hides pixels as rasterio's
    // masked read does; nodata is already left out by value.
    let mask = band
        .mask_flags()
        .ok()
        .filter(|f| !f.is_all_valid() && !f.is_nodata())
        .and_then(|_| band.open_mask_band().ok());
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
            let hidden = match &mask {
                Some(mask) => Some(
                    mask.read_as::<u8>((0, row as isize), (w, n), (w, n), None)
                        .ok()?,
                ),
                None => None,
            };
            acc.add(strip.data(), hidden.as_ref().map(|m| m.data()));
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
        // The mask at the same reduced shape (from its own overviews when
        // it has them).
        let hidden = match &mask {
            Some(mask) => Some(mask.read_as::<u8>((0, 0), (w, h), shape, None).ok()?),
            None => None,
        };
        acc.add(values.data(), hidden.as_ref().map(|m| m.data()));
        Read::Reduced(shape.0, shape.1)
    } else {
        // GDAL's sampled min/max skips blocks it cannot read; the first
        // row of the first block is read to know the pixels can be read at
        // all (a row: never what a hostile header claims a block holds).
        let row = band.block_size().0.clamp(1, w.max(1));
        band.read_as::<u8>((0, 0), (row, 1), (row, 1), None).ok()?;
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

    /// Adds `values`, leaving out nodata, NaN and pixels whose `mask`
    /// value is 0.
    fn add(&mut self, values: &[f64], mask: Option<&[u8]>) {
        for (i, &v) in values.iter().enumerate() {
            if v.is_nan() || Some(v) == self.nodata || mask.is_some_and(|m| m.get(i) == Some(&0)) {
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

/// A band's statistics as the card's facts; `None` when no pixel is valid.
pub(super) fn stats_facts(stats: &BandStats) -> Option<facts::Stats> {
    if stats.valid == 0 {
        return None;
    }
    let (accuracy, how) = match stats.read {
        Read::Full => (facts::Accuracy::Exact, "every pixel".to_string()),
        Read::Reduced(w, h) => (facts::Accuracy::Approximate, format!("a {w}×{h} read")),
        Read::Sampled => (
            facts::Accuracy::Approximate,
            "GDAL's sampled blocks".to_string(),
        ),
    };
    Some(facts::Stats {
        min: stats.min,
        max: stats.max,
        mean: stats.mean,
        valid_pixels: (stats.read == Read::Full).then_some(stats.valid),
        accuracy,
        how,
    })
}

/// An integer band's values with their pixel counts (its nodata value left
/// out) and category names, from its statistics; empty when it has more
/// than [`MOST_CLASSES`] values or is not an integer band.
pub(super) fn class_facts(band: &RasterBand, stats: &BandStats) -> Vec<facts::Class> {
    let Some(counts) = stats.classes.as_ref() else {
        return Vec::new();
    };
    let names = category_names(band);
    counts
        .iter()
        .map(|(value, n)| facts::Class {
            value: *value,
            pixels: *n,
            name: names
                .get(usize::try_from(*value).unwrap_or(usize::MAX))
                .filter(|name| !name.is_empty())
                .cloned(),
        })
        .collect()
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
        assert_eq!(
            facts::stats_text(&stats_facts(&stats).unwrap()),
            ", min 7 max 200 mean 7.0032"
        );
        assert_eq!(budget, EXACT_PIXELS_PER_FILE - 60_000);
        // Over the exact size and without an overview: GDAL's sampled
        // min/max, no mean, no classes, said to be approximate.
        let big = band_of(4200, 4200);
        let stats = band_stats(&big, 1, &mut budget).unwrap();
        assert_eq!(stats.read, Read::Sampled);
        assert!(stats.mean.is_none() && stats.classes.is_none());
        let text = facts::stats_text(&stats_facts(&stats).unwrap());
        assert!(
            text.ends_with("(approximate, from GDAL's sampled blocks)"),
            "{text}"
        );
    }
}
