//! Typed judges: is an answer (see [`super::answers`]) equivalent to the
//! expected one?
//!
//! The comparison is chosen by the declared output type, as in GeoJSEval's
//! type-aware judge and AutoGEEval's image metrics: numbers within a
//! tolerance, strings and booleans exactly, sets ignoring order, nested
//! structures key by key, GeoJSON geometries by shape (symmetric
//! vertex-to-boundary distance and area), and arrays (rasters, images) by
//! MAE ≤ 0.01, PSNR ≥ 50 dB and SSIM ≥ 0.99 — AutoGEEval §4.3.2 — all three
//! at once. A type mismatch is reported as such and skips the comparison.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::answers::Answer;

/// The output type a case declares, which picks the judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputType {
    /// A number, within the tolerance.
    Number,
    /// A string, exactly.
    String,
    /// A boolean, exactly.
    Bool,
    /// A sequence compared element by element, in order.
    List,
    /// A collection compared ignoring order and duplicates.
    Set,
    /// A dict: same keys, values compared recursively.
    Struct,
    /// A GeoJSON geometry (or Feature/FeatureCollection), by shape.
    Geometry,
    /// An n-d array (raster band, image): MAE, PSNR and SSIM thresholds.
    Array,
}

impl OutputType {
    /// The answer kinds this type accepts.
    fn accepts(self, kind: &str) -> bool {
        match self {
            OutputType::Number => kind == "number",
            OutputType::String => kind == "string",
            OutputType::Bool => kind == "bool",
            OutputType::List | OutputType::Set => kind == "list",
            OutputType::Struct => kind == "dict",
            OutputType::Geometry => kind == "geometry",
            OutputType::Array => kind == "array",
        }
    }
}

/// Tolerances and thresholds of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Tolerance {
    /// Relative tolerance for numbers (of the expected magnitude) and
    /// geometries (of the expected extent's diagonal).
    pub rel: f64,
    /// Absolute tolerance for numbers and geometry distances.
    pub abs: f64,
    /// Arrays: largest mean absolute error.
    pub mae: f64,
    /// Arrays: smallest PSNR in dB (peak = the expected data range).
    pub psnr: f64,
    /// Arrays: smallest mean SSIM (7×7 windows).
    pub ssim: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rel: 1e-6,
            abs: 1e-9,
            mae: 0.01,
            psnr: 50.0,
            ssim: 0.99,
        }
    }
}

/// Why an answer was not accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// The answer has the wrong type (GeoJSEval's "output type error").
    #[error("expected {expected}, got {got}")]
    Type {
        /// The declared type or expected kind.
        expected: String,
        /// The kind produced.
        got: String,
    },
    /// The code raised instead of answering.
    #[error("raised {0}")]
    Raised(String),
    /// The right type with a wrong value ("invalid answer").
    #[error("{0}")]
    Value(String),
}

/// Judges `got` against `expected` as `output`.
pub fn judge(
    output: OutputType,
    expected: &Answer,
    got: &Answer,
    tol: &Tolerance,
) -> Result<(), Mismatch> {
    judge_by(output, expected, got, tol, ArrayMetrics::Ours)
}

/// [`judge`] with arrays judged by the image metrics `by` (the only
/// answers whose verdict depends on them).
pub fn judge_by(
    output: OutputType,
    expected: &Answer,
    got: &Answer,
    tol: &Tolerance,
    by: ArrayMetrics,
) -> Result<(), Mismatch> {
    if expected.kind == "error" {
        // The reference raises on this (boundary) input: so must the answer.
        let want = expected.value["ename"].as_str().unwrap_or_default();
        return match got.kind.as_str() {
            "error" if got.value["ename"].as_str() == Some(want) => Ok(()),
            "error" => Err(Mismatch::Value(format!(
                "raised {} instead of {want}",
                got.value["ename"]
            ))),
            other => Err(Mismatch::Value(format!(
                "returned a {other} where the reference raises {want}"
            ))),
        };
    }
    if got.kind == "error" {
        return Err(Mismatch::Raised(format!(
            "{}: {}",
            got.value["ename"].as_str().unwrap_or("?"),
            got.value["evalue"].as_str().unwrap_or("")
        )));
    }
    if expected.kind == "none" || got.kind == "none" {
        return if expected.kind == got.kind {
            Ok(())
        } else {
            Err(Mismatch::Type {
                expected: expected.kind.clone(),
                got: got.kind.clone(),
            })
        };
    }
    if !output.accepts(&got.kind) {
        return Err(Mismatch::Type {
            expected: format!("{output:?}").to_lowercase(),
            got: got.kind.clone(),
        });
    }
    let (a, y) = (&expected.value, &got.value);
    match output {
        OutputType::Number
        | OutputType::String
        | OutputType::Bool
        | OutputType::List
        | OutputType::Struct => same_value(a, y, tol, ""),
        OutputType::Set => same_set(a, y, tol),
        OutputType::Geometry => same_geometry(a, y, tol),
        OutputType::Array => same_array(a, y, tol, by),
    }
}

fn numbers_close(a: f64, y: f64, tol: &Tolerance) -> bool {
    a == y || (a - y).abs() <= tol.abs + tol.rel * a.abs()
}

/// Structural equality with numbers within tolerance; `at` names the place.
fn same_value(a: &Value, y: &Value, tol: &Tolerance, at: &str) -> Result<(), Mismatch> {
    let here = if at.is_empty() {
        String::new()
    } else {
        format!(" at {at}")
    };
    match (a, y) {
        (Value::Number(a), Value::Number(y)) => {
            let (a, y) = (
                a.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            if numbers_close(a, y, tol) {
                Ok(())
            } else {
                Err(Mismatch::Value(format!("{y} differs from {a}{here}")))
            }
        }
        (Value::Array(a), Value::Array(y)) => {
            if a.len() != y.len() {
                return Err(Mismatch::Value(format!(
                    "{} items instead of {}{here}",
                    y.len(),
                    a.len()
                )));
            }
            for (i, (a, y)) in a.iter().zip(y).enumerate() {
                same_value(a, y, tol, &format!("{at}[{i}]"))?;
            }
            Ok(())
        }
        (Value::Object(a), Value::Object(y)) => {
            let mut want: Vec<&String> = a.keys().collect();
            let mut have: Vec<&String> = y.keys().collect();
            want.sort();
            have.sort();
            if want != have {
                return Err(Mismatch::Value(format!(
                    "keys {have:?} instead of {want:?}{here}"
                )));
            }
            for key in want {
                same_value(&a[key], &y[key], tol, &format!("{at}.{key}"))?;
            }
            Ok(())
        }
        (a, y) if a == y => Ok(()),
        (a, y) => Err(Mismatch::Value(format!(
            "{} differs from {}{here}",
            short(y),
            short(a)
        ))),
    }
}

fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

/// Set equality: duplicates ignored, every element of each side matches
/// one of the other.
fn same_set(a: &Value, y: &Value, tol: &Tolerance) -> Result<(), Mismatch> {
    let (Some(a), Some(y)) = (a.as_array(), y.as_array()) else {
        return Err(Mismatch::Value("not a collection".into()));
    };
    let covered = |from: &[Value], into: &[Value]| {
        from.iter()
            .find(|x| !into.iter().any(|z| same_value(x, z, tol, "").is_ok()))
            .cloned()
    };
    if let Some(missing) = covered(a, y) {
        return Err(Mismatch::Value(format!("{} is missing", short(&missing))));
    }
    if let Some(extra) = covered(y, a) {
        return Err(Mismatch::Value(format!(
            "{} is not expected",
            short(&extra)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------- geometry

type Xy = [f64; 2];

/// A geometry flattened for comparison: its vertices, its boundary or line
/// segments, its area and its highest dimension (-1 when empty).
#[derive(Debug, Default)]
struct Shape {
    vertices: Vec<Xy>,
    segments: Vec<(Xy, Xy)>,
    area: f64,
    dimension: i32,
}

fn xy(v: &Value) -> Option<Xy> {
    let c = v.as_array()?;
    Some([c.first()?.as_f64()?, c.get(1)?.as_f64()?])
}

fn ring_area(ring: &[Xy]) -> f64 {
    let mut twice = 0.0;
    for w in ring.windows(2) {
        twice += w[0][0] * w[1][1] - w[1][0] * w[0][1];
    }
    (twice / 2.0).abs()
}

impl Shape {
    fn add_points(&mut self, coords: &Value) -> Option<()> {
        for p in coords.as_array()? {
            let p = xy(p)?;
            self.vertices.push(p);
            self.segments.push((p, p));
        }
        self.dimension = self.dimension.max(0);
        Some(())
    }

    fn add_line(&mut self, coords: &Value) -> Option<Vec<Xy>> {
        let line: Vec<Xy> = coords.as_array()?.iter().map(xy).collect::<Option<_>>()?;
        if line.is_empty() {
            return Some(line);
        }
        self.vertices.extend(&line);
        self.segments.extend(line.windows(2).map(|w| (w[0], w[1])));
        if line.len() == 1 {
            self.segments.push((line[0], line[0]));
        }
        self.dimension = self.dimension.max(1);
        Some(line)
    }

    fn add_polygon(&mut self, rings: &Value) -> Option<()> {
        for (i, ring) in rings.as_array()?.iter().enumerate() {
            let ring = self.add_line(ring)?;
            let area = ring_area(&ring);
            self.area += if i == 0 { area } else { -area };
        }
        if !rings.as_array()?.is_empty() {
            self.dimension = 2;
        }
        Some(())
    }

    /// Adds a GeoJSON geometry, Feature or FeatureCollection.
    fn add(&mut self, g: &Value) -> Option<()> {
        let coords = &g["coordinates"];
        match g["type"].as_str()? {
            "Point" => {
                if coords.as_array().is_some_and(|c| !c.is_empty()) {
                    self.add_points(&Value::Array(vec![coords.clone()]))?;
                }
            }
            "MultiPoint" => self.add_points(coords)?,
            "LineString" | "LinearRing" => {
                self.add_line(coords)?;
            }
            "MultiLineString" => {
                for line in coords.as_array()? {
                    self.add_line(line)?;
                }
            }
            "Polygon" => self.add_polygon(coords)?,
            "MultiPolygon" => {
                for polygon in coords.as_array()? {
                    self.add_polygon(polygon)?;
                }
            }
            "GeometryCollection" => {
                for part in g["geometries"].as_array()? {
                    self.add(part)?;
                }
            }
            "Feature" => {
                if !g["geometry"].is_null() {
                    self.add(&g["geometry"])?;
                }
            }
            "FeatureCollection" => {
                for feature in g["features"].as_array()? {
                    self.add(feature)?;
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn parse(g: &Value) -> Option<Shape> {
        let mut shape = Shape {
            dimension: -1,
            ..Shape::default()
        };
        shape.add(g)?;
        Some(shape)
    }

    fn diagonal(&self) -> f64 {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in &self.vertices {
            for k in 0..2 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        if self.vertices.is_empty() {
            0.0
        } else {
            (hi[0] - lo[0]).hypot(hi[1] - lo[1])
        }
    }

    fn perimeter(&self) -> f64 {
        self.segments
            .iter()
            .map(|(a, b)| (b[0] - a[0]).hypot(b[1] - a[1]))
            .sum()
    }

    /// The largest distance from one of our vertices to `other`'s segments.
    fn farthest_from(&self, other: &Shape) -> f64 {
        self.vertices
            .iter()
            .map(|p| {
                other
                    .segments
                    .iter()
                    .map(|s| point_segment(*p, *s))
                    .fold(f64::INFINITY, f64::min)
            })
            .fold(0.0, f64::max)
    }
}

fn point_segment(p: Xy, (a, b): (Xy, Xy)) -> f64 {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    let t = if len2 == 0.0 {
        0.0
    } else {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len2).clamp(0.0, 1.0)
    };
    (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy)
}

/// Geometric equality: same dimension, every vertex of each within the
/// tolerance of the other's boundary, and (for polygons) the same area.
fn same_geometry(a: &Value, y: &Value, tol: &Tolerance) -> Result<(), Mismatch> {
    let want = Shape::parse(a)
        .ok_or_else(|| Mismatch::Value("the expected answer is not GeoJSON".into()))?;
    let have = Shape::parse(y).ok_or_else(|| Mismatch::Type {
        expected: "GeoJSON geometry".into(),
        got: short(y),
    })?;
    if want.dimension != have.dimension {
        let name = |d: i32| ["empty", "point", "line", "polygon"][(d + 1) as usize];
        return Err(Mismatch::Value(format!(
            "a {} where a {} is expected",
            name(have.dimension),
            name(want.dimension)
        )));
    }
    let limit = tol.abs + tol.rel * want.diagonal();
    let distance = want.farthest_from(&have).max(have.farthest_from(&want));
    if distance > limit {
        return Err(Mismatch::Value(format!(
            "the shapes are {distance:.6e} apart (allowed {limit:.1e})"
        )));
    }
    // Moving a boundary by `limit` changes the area by about limit × perimeter.
    if want.dimension == 2 && (want.area - have.area).abs() > limit * want.perimeter() {
        return Err(Mismatch::Value(format!(
            "area {} instead of {}",
            have.area, want.area
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------- arrays

/// An n-d array as shape + values (NaN where null).
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// Values in row-major order.
    pub data: Vec<f64>,
}

impl Grid {
    /// Reads the `array` answer value.
    pub fn from_value(v: &Value) -> Option<Grid> {
        let shape: Vec<usize> = v["shape"]
            .as_array()?
            .iter()
            .map(|n| n.as_u64().map(|n| n as usize))
            .collect::<Option<_>>()?;
        let data: Vec<f64> = v["data"]
            .as_array()?
            .iter()
            .map(|x| x.as_f64().unwrap_or(f64::NAN))
            .collect();
        (shape.iter().product::<usize>() == data.len()).then_some(Grid { shape, data })
    }

    /// As 2-D planes: (count, rows, cols); 1-D is one row, 3-D is bands.
    fn planes(&self) -> (usize, usize, usize) {
        match self.shape.as_slice() {
            [] => (1, 1, 1),
            [n] => (1, 1, *n),
            [r, c] => (1, *r, *c),
            [rest @ .., r, c] => (rest.iter().product(), *r, *c),
        }
    }
}

/// AutoGEEval's image metrics of `have` against `want`: ours, and as the
/// paper writes them (Eqs. 11 and 13) where they differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageMetrics {
    /// Mean absolute error over valid cells.
    pub mae: f64,
    /// Peak signal-to-noise ratio in dB, the peak being the expected data
    /// range (infinite when identical).
    pub psnr: f64,
    /// Mean SSIM over 7×7 windows (smaller planes: one window).
    pub ssim: f64,
    /// PSNR as AutoGEEval's Eq. 11 writes it: the peak R = 255, the
    /// largest value of an 8-bit image.
    pub psnr_255: f64,
    /// SSIM as AutoGEEval's Eq. 13 writes it: one window over the whole
    /// plane (population moments, C1 = (0.01·255)², C2 = (0.03·255)²), the
    /// mean over planes.
    pub ssim_global: f64,
}

/// Which image metrics judge an array answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayMetrics {
    /// gisclaw's: PSNR's peak is the expected data range, SSIM over 7×7
    /// windows — a small-range array is held to its own scale.
    Ours,
    /// AutoGEEval's as published: PSNR's peak is 255 (Eq. 11), SSIM is one
    /// global window (Eq. 13).
    AutoGeeval,
}

/// MAE, PSNR and SSIM of two same-shaped grids. NaN cells must coincide
/// (else `None`); they count as equal and as zero in SSIM. The peak is the
/// expected data range (1 when constant).
pub fn image_metrics(want: &Grid, have: &Grid) -> Option<ImageMetrics> {
    if want.shape != have.shape {
        return None;
    }
    let mut abs_sum = 0.0;
    let mut sq_sum = 0.0;
    let mut valid = 0usize;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (a, y) in want.data.iter().zip(&have.data) {
        match (a.is_nan(), y.is_nan()) {
            (true, true) => {}
            (false, false) => {
                abs_sum += (a - y).abs();
                sq_sum += (a - y) * (a - y);
                valid += 1;
                lo = lo.min(*a);
                hi = hi.max(*a);
            }
            _ => return None,
        }
    }
    if valid == 0 {
        return Some(ImageMetrics {
            mae: 0.0,
            psnr: f64::INFINITY,
            ssim: 1.0,
            psnr_255: f64::INFINITY,
            ssim_global: 1.0,
        });
    }
    let range = if hi > lo { hi - lo } else { 1.0 };
    let mse = sq_sum / valid as f64;
    let psnr_of = |peak: f64| {
        if mse == 0.0 {
            f64::INFINITY
        } else {
            10.0 * (peak * peak / mse).log10()
        }
    };
    let psnr = psnr_of(range);
    let clean = |g: &Grid| {
        g.data
            .iter()
            .map(|x| if x.is_nan() { 0.0 } else { *x })
            .collect::<Vec<f64>>()
    };
    let (a, y) = (clean(want), clean(have));
    let (planes, rows, cols) = want.planes();
    let plane = rows * cols;
    let ssim = (0..planes)
        .map(|p| {
            mean_ssim(
                &a[p * plane..(p + 1) * plane],
                &y[p * plane..(p + 1) * plane],
                rows,
                cols,
                range,
            )
        })
        .sum::<f64>()
        / planes as f64;
    let ssim_global = (0..planes)
        .map(|p| {
            global_ssim(
                &a[p * plane..(p + 1) * plane],
                &y[p * plane..(p + 1) * plane],
            )
        })
        .sum::<f64>()
        / planes as f64;
    Some(ImageMetrics {
        mae: abs_sum / valid as f64,
        psnr,
        ssim,
        psnr_255: psnr_of(255.0),
        ssim_global,
    })
}

/// AutoGEEval's Eq. 13 over a whole plane: means, population variances
/// and covariance of all its cells, C1 = (0.01·255)², C2 = (0.03·255)².
fn global_ssim(a: &[f64], y: &[f64]) -> f64 {
    let n = a.len().max(1) as f64;
    let (ma, my) = (a.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let va = a.iter().map(|p| (p - ma) * (p - ma)).sum::<f64>() / n;
    let vy = y.iter().map(|q| (q - my) * (q - my)).sum::<f64>() / n;
    let cov = a
        .iter()
        .zip(y)
        .map(|(p, q)| (p - ma) * (q - my))
        .sum::<f64>()
        / n;
    let (c1, c2) = ((0.01 * 255.0_f64).powi(2), (0.03 * 255.0_f64).powi(2));
    ((2.0 * ma * my + c1) * (2.0 * cov + c2)) / ((ma * ma + my * my + c1) * (va + vy + c2))
}

/// Mean SSIM over every fully inside `w`×`w` window (w = 7, or the smaller
/// side when the plane is smaller), sample covariances, C1 = (0.01 R)²,
/// C2 = (0.03 R)² — the conventions of scikit-image's `structural_similarity`.
fn mean_ssim(a: &[f64], y: &[f64], rows: usize, cols: usize, range: f64) -> f64 {
    let (wr, wc) = (rows.min(7), cols.min(7));
    let n = (wr * wc) as f64;
    let c1 = (0.01 * range).powi(2);
    let c2 = (0.03 * range).powi(2);
    let correction = if n > 1.0 { n / (n - 1.0) } else { 1.0 };
    let mut total = 0.0;
    let mut windows = 0usize;
    for r0 in 0..=(rows - wr) {
        for c0 in 0..=(cols - wc) {
            let (mut sa, mut sy, mut saa, mut syy, mut say) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for r in r0..r0 + wr {
                for c in c0..c0 + wc {
                    let (p, q) = (a[r * cols + c], y[r * cols + c]);
                    sa += p;
                    sy += q;
                    saa += p * p;
                    syy += q * q;
                    say += p * q;
                }
            }
            let (ma, my) = (sa / n, sy / n);
            let va = (saa / n - ma * ma) * correction;
            let vy = (syy / n - my * my) * correction;
            let cov = (say / n - ma * my) * correction;
            total += ((2.0 * ma * my + c1) * (2.0 * cov + c2))
                / ((ma * ma + my * my + c1) * (va + vy + c2));
            windows += 1;
        }
    }
    total / windows as f64
}

fn same_array(a: &Value, y: &Value, tol: &Tolerance, by: ArrayMetrics) -> Result<(), Mismatch> {
    let want = Grid::from_value(a)
        .ok_or_else(|| Mismatch::Value("the expected answer is not an array".into()))?;
    let have = Grid::from_value(y)
        .ok_or_else(|| Mismatch::Value("the answer is not a well-formed array".into()))?;
    if want.shape != have.shape {
        return Err(Mismatch::Value(format!(
            "shape {:?} instead of {:?}",
            have.shape, want.shape
        )));
    }
    let m = image_metrics(&want, &have)
        .ok_or_else(|| Mismatch::Value("the no-data (NaN) cells differ".into()))?;
    let (psnr, ssim) = match by {
        ArrayMetrics::Ours => (m.psnr, m.ssim),
        ArrayMetrics::AutoGeeval => (m.psnr_255, m.ssim_global),
    };
    if m.mae <= tol.mae && psnr >= tol.psnr && ssim >= tol.ssim {
        Ok(())
    } else {
        Err(Mismatch::Value(format!(
            "MAE {:.4} (≤ {}), PSNR {:.1} dB (≥ {}), SSIM {:.4} (≥ {})",
            m.mae, tol.mae, psnr, tol.psnr, ssim, tol.ssim
        )))
    }
}

/// A wrong answer near `answer`: a number off by 1 % + 1e-3 (at least ten
/// times the tolerance), a string with a character more, a flipped boolean,
/// a list or set missing its last item (or gaining one), a dict with one
/// value perturbed, a geometry moved by 1 % of its extent + 1e-3 (at least
/// ten times the tolerance), an array with half its cells raised by 10 % of
/// the range + 1 (an empty one gains a cell). Used to prove every judge
/// rejects.
pub fn perturb(answer: &Answer, tol: &Tolerance) -> Answer {
    fn nudge(v: &Value, tol: &Tolerance) -> Value {
        match v {
            Value::Number(n) => {
                let x = n.as_f64().unwrap_or(0.0);
                let by = (0.01 * x.abs() + 1e-3).max(10.0 * (tol.abs + tol.rel * x.abs()));
                serde_json::json!(x + by)
            }
            Value::String(s) => Value::String(format!("{s}x")),
            Value::Bool(b) => Value::Bool(!b),
            Value::Array(items) if items.is_empty() => serde_json::json!([0]),
            Value::Array(items) => Value::Array(items[..items.len() - 1].to_vec()),
            Value::Object(map) => {
                let mut map = map.clone();
                match map.keys().next().cloned() {
                    Some(k) => {
                        let changed = nudge(&map[&k], tol);
                        map.insert(k, changed);
                    }
                    None => {
                        map.insert("extra".into(), Value::Null);
                    }
                }
                Value::Object(map)
            }
            Value::Null => serde_json::json!(0),
        }
    }
    fn shift(v: &Value, by: f64) -> Value {
        match v {
            Value::Array(items) if items.len() >= 2 && items.iter().all(Value::is_number) => {
                let mut moved = items.clone();
                moved[0] = serde_json::json!(items[0].as_f64().unwrap_or(0.0) + by);
                Value::Array(moved)
            }
            Value::Array(items) => Value::Array(items.iter().map(|x| shift(x, by)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, x)| {
                        (
                            k.clone(),
                            if k == "type" { x.clone() } else { shift(x, by) },
                        )
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let value = match answer.kind.as_str() {
        "geometry" => {
            let diagonal = Shape::parse(&answer.value)
                .map(|s| s.diagonal())
                .unwrap_or(0.0);
            shift(
                &answer.value,
                (0.01 * diagonal + 1e-3).max(10.0 * (tol.abs + tol.rel * diagonal)),
            )
        }
        "array" => match Grid::from_value(&answer.value) {
            // An empty array (a boundary answer) becomes one cell.
            Some(grid) if grid.data.is_empty() => {
                serde_json::json!({ "shape": [1], "data": [0.0] })
            }
            Some(mut grid) => {
                let valid = grid.data.iter().filter(|x| !x.is_nan());
                let (lo, hi) = valid.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                    (l.min(*x), h.max(*x))
                });
                let step = if hi > lo { 0.1 * (hi - lo) + 1.0 } else { 1.0 };
                let cols = *grid.shape.last().unwrap_or(&1);
                let band = grid.data.len().div_ceil(2);
                for (i, x) in grid.data.iter_mut().enumerate() {
                    if i < band.max(cols) && !x.is_nan() {
                        *x += step;
                    }
                }
                serde_json::json!({ "shape": grid.shape, "data": grid.data.iter().map(|x| if x.is_nan() { Value::Null } else { serde_json::json!(x) }).collect::<Vec<_>>() })
            }
            None => answer.value.clone(),
        },
        "error" => {
            return Answer {
                kind: "none".into(),
                value: Value::Null,
            }
        }
        "none" => {
            return Answer {
                kind: "number".into(),
                value: serde_json::json!(0),
            }
        }
        _ => nudge(&answer.value, tol),
    };
    Answer {
        kind: answer.kind.clone(),
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(kind: &str, value: Value) -> Answer {
        Answer {
            kind: kind.into(),
            value,
        }
    }

    #[test]
    fn numbers_within_tolerance_only() {
        let t = Tolerance::default();
        let a = answer("number", json!(100.0));
        assert!(judge(
            OutputType::Number,
            &a,
            &answer("number", json!(100.00001)),
            &t
        )
        .is_ok());
        assert!(judge(OutputType::Number, &a, &answer("number", json!(100.01)), &t).is_err());
        let wrong_type = judge(OutputType::Number, &a, &answer("string", json!("100")), &t);
        assert!(matches!(wrong_type, Err(Mismatch::Type { .. })));
    }

    #[test]
    fn sets_ignore_order_and_structs_need_the_same_keys() {
        let t = Tolerance::default();
        let a = answer("list", json!(["a", "b", "c"]));
        assert!(judge(
            OutputType::Set,
            &a,
            &answer("list", json!(["c", "a", "b", "a"])),
            &t
        )
        .is_ok());
        assert!(judge(
            OutputType::List,
            &a,
            &answer("list", json!(["c", "a", "b"])),
            &t
        )
        .is_err());
        let s = answer("dict", json!({"n": 3, "crs": "EPSG:4326"}));
        assert!(judge(
            OutputType::Struct,
            &s,
            &answer("dict", json!({"crs": "EPSG:4326", "n": 3.0000000001})),
            &t
        )
        .is_ok());
        assert!(judge(
            OutputType::Struct,
            &s,
            &answer("dict", json!({"crs": "EPSG:4326"})),
            &t
        )
        .is_err());
    }

    #[test]
    fn geometries_compare_by_shape_not_by_vertex_order() {
        let t = Tolerance::default();
        let square =
            json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]});
        // Same square, other start vertex, other orientation, an extra collinear vertex.
        let same = json!({"type": "Polygon", "coordinates": [[[1, 1], [1, 0], [0.5, 0], [0, 0], [0, 1], [1, 1]]]});
        let moved = json!({"type": "Polygon", "coordinates": [[[0, 0], [1.1, 0], [1.1, 1], [0, 1], [0, 0]]]});
        let line =
            json!({"type": "LineString", "coordinates": [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]});
        let a = answer("geometry", square);
        assert!(judge(OutputType::Geometry, &a, &answer("geometry", same), &t).is_ok());
        assert!(judge(OutputType::Geometry, &a, &answer("geometry", moved), &t).is_err());
        assert!(judge(OutputType::Geometry, &a, &answer("geometry", line), &t).is_err());
    }

    #[test]
    fn ssim_of_identical_planes_is_one_and_drops_with_noise() {
        let data: Vec<f64> = (0..100).map(|i| ((i * 37) % 23) as f64).collect();
        let a = Grid {
            shape: vec![10, 10],
            data: data.clone(),
        };
        let m = image_metrics(&a, &a).unwrap();
        assert_eq!((m.mae, m.ssim), (0.0, 1.0));
        assert!(m.psnr.is_infinite());
        let noisy = Grid {
            shape: vec![10, 10],
            data: data
                .iter()
                .enumerate()
                .map(|(i, x)| x + if i % 3 == 0 { 4.0 } else { 0.0 })
                .collect(),
        };
        let m = image_metrics(&a, &noisy).unwrap();
        assert!(m.ssim < 0.99 && m.psnr < 50.0 && m.mae > 0.01, "{m:?}");
    }

    #[test]
    fn autogeevals_psnr_peaks_at_255_and_its_ssim_is_one_global_window() {
        // want 0, 1, 2, 3; have 0, 1, 2, 4: MSE = 1/4. Eq. 11: 10·log10(255²
        // / 0.25) = 54.1514 dB; ours (peak = range 3): 10·log10(9 / 0.25) =
        // 15.5630 dB. Eq. 13 with μ = 1.5, 1.75, σ² = 1.25, 2.1875,
        // σxy = 1.625, C1 = 6.5025, C2 = 58.5225: 0.991700.
        let grid = |data: Vec<f64>| Grid {
            shape: vec![4],
            data,
        };
        let m = image_metrics(
            &grid(vec![0.0, 1.0, 2.0, 3.0]),
            &grid(vec![0.0, 1.0, 2.0, 4.0]),
        )
        .unwrap();
        assert!((m.psnr_255 - 54.151_403_5).abs() < 1e-6, "{m:?}");
        assert!((m.psnr - 15.563_025_0).abs() < 1e-6, "{m:?}");
        assert!((m.ssim_global - 0.991_699_976).abs() < 1e-8, "{m:?}");
        // A small-range answer off by 0.02 in one cell: MAE 0.005; ours
        // holds it to its range (PSNR 49.5 dB < 50) and fails it, the
        // paper's 255 peak passes it (88.1 dB).
        let t = Tolerance::default();
        let want = answer("array", json!({"shape": [4], "data": [0.0, 1.0, 2.0, 3.0]}));
        let near = answer(
            "array",
            json!({"shape": [4], "data": [0.0, 1.0, 2.0, 3.02]}),
        );
        assert!(judge(OutputType::Array, &want, &near, &t).is_err());
        assert!(judge_by(
            OutputType::Array,
            &want,
            &near,
            &t,
            ArrayMetrics::AutoGeeval
        )
        .is_ok());
    }

    #[test]
    fn expected_errors_need_the_same_exception() {
        let t = Tolerance::default();
        let raise = answer("error", json!({"ename": "ValueError", "evalue": "bad"}));
        assert!(judge(
            OutputType::Number,
            &raise,
            &answer(
                "error",
                json!({"ename": "ValueError", "evalue": "other words"})
            ),
            &t
        )
        .is_ok());
        assert!(judge(OutputType::Number, &raise, &answer("number", json!(1)), &t).is_err());
    }

    #[test]
    fn every_kind_of_perturbation_is_rejected() {
        let t = Tolerance::default();
        let cases = [
            (OutputType::Number, answer("number", json!(0.0))),
            (OutputType::String, answer("string", json!("EPSG:3857"))),
            (OutputType::Bool, answer("bool", json!(false))),
            (OutputType::Set, answer("list", json!([1, 2]))),
            (OutputType::Struct, answer("dict", json!({"a": [1, 2]}))),
            (
                OutputType::Geometry,
                answer("geometry", json!({"type": "Point", "coordinates": [3, 4]})),
            ),
            (
                OutputType::Array,
                answer("array", json!({"shape": [2, 2], "data": [1, 1, 1, null]})),
            ),
        ];
        for (output, a) in cases {
            assert!(judge(output, &a, &a, &t).is_ok(), "{a:?}");
            assert!(judge(output, &a, &perturb(&a, &t), &t).is_err(), "{a:?}");
        }
    }
}
