//! The element-wise parts of the forward pass: a vectorisable `exp`, GELU
//! in its erf form, softmax, layer norm and a dot product — written so that
//! the compiler turns their loops into SIMD (no branches, no library calls
//! per element), with AVX2 builds of the hot loops when the CPU has it.

use rayon::prelude::*;

/// `eˣ` to about one unit in the last place for x in [−87, 88] (outside, the
/// bound's value): Cephes' range reduction by ln 2 and its degree-6
/// polynomial, 2ⁿ assembled in the exponent bits. Branch-free.
#[inline(always)]
// The coefficients as Cephes publishes them.
#[allow(clippy::excessive_precision)]
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 in two parts, so n·ln2 is exact to f32 precision.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 5.000_000_1e-1;
    let y = p * r * r + r + 1.0;
    // n is within [−126, 127] after the clamp; wrapping arithmetic keeps
    // overflow checks (which would stop vectorisation) out of the loop.
    y * f32::from_bits((n as i32).wrapping_add(127).wrapping_shl(23) as u32)
}

/// `erfc(z)` for z ≥ 0 (fractional error below 1.2·10⁻⁷: the Chebyshev fit
/// of Numerical Recipes' `erfcc`).
#[inline(always)]
// The coefficients as Numerical Recipes publishes them.
#[allow(clippy::excessive_precision)]
fn erfc_nonnegative(z: f32) -> f32 {
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -1.265_512_2
        + t * (1.000_023_7
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_9
                                + t * (1.488_515_9 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    t * exp(-z * z + poly)
}

/// GELU, `x·Φ(x) = ½·x·(1 + erf(x/√2))`, written with erfc so that
/// neither sign loses digits to cancellation.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    let half_tail = 0.5 * x * erfc_nonnegative(x.abs() * std::f32::consts::FRAC_1_SQRT_2);
    if x >= 0.0 {
        x - half_tail
    } else {
        half_tail
    }
}

/// [`gelu`] of every element, in place.
pub fn gelu_in_place(xs: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::matmul::has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { gelu_avx2(xs) };
        return;
    }
    xs.iter_mut().for_each(|x| *x = gelu(*x));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gelu_avx2(xs: &mut [f32]) {
    xs.iter_mut().for_each(|x| *x = gelu(*x));
}

/// Softmax of `xs` in place (shifted by the maximum first).
pub fn softmax_in_place(xs: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::matmul::has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { softmax_avx2(xs) };
        return;
    }
    softmax(xs);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn softmax_avx2(xs: &mut [f32]) {
    softmax(xs);
}

#[inline(always)]
fn softmax(xs: &mut [f32]) {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    xs.iter_mut().for_each(|x| *x = exp(*x - max));
    let inv = 1.0 / sum(xs);
    xs.iter_mut().for_each(|x| *x *= inv);
}

/// Layer norm of one row in place: zero mean, unit variance (biased, plus
/// `eps`), then scaled by `weight` and shifted by `bias`.
pub fn layer_norm(row: &mut [f32], weight: &[f32], bias: &[f32], eps: f32) {
    let n = row.len() as f32;
    let mean = sum(row) / n;
    let mut var = [0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for (v, x) in var.iter_mut().zip(c) {
            *v += (x - mean) * (x - mean);
        }
    }
    let tail: f32 = chunks
        .remainder()
        .iter()
        .map(|x| (x - mean) * (x - mean))
        .sum();
    let var = (var.iter().sum::<f32>() + tail) / n;
    let inv = 1.0 / (var + eps).sqrt();
    for ((x, w), b) in row.iter_mut().zip(weight).zip(bias) {
        *x = (*x - mean) * inv * w + b;
    }
}

/// The sum of `xs` in eight lanes.
fn sum(xs: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for (l, x) in lanes.iter_mut().zip(c) {
            *l += x;
        }
    }
    lanes.iter().sum::<f32>() + chunks.remainder().iter().sum::<f32>()
}

/// The dot product of `q` with each `q.len()`-wide row of `rows` (a
/// matrix–vector product: an index's cosine scan over unit vectors), split
/// over rayon's threads.
pub fn dots(rows: &[f32], q: &[f32]) -> Vec<f32> {
    scan(rows, q, |rows, out| dots_into(rows, q, out))
}

/// One output per `q.len()`-wide row of `rows`, the rows split over
/// rayon's threads in tasks of 1,024; `block` fills one task's outputs
/// from its rows. Empty for an empty `q`.
fn scan<T: Sync>(rows: &[T], q: &[f32], block: impl Fn(&[T], &mut [f32]) + Sync) -> Vec<f32> {
    const ROWS_PER_TASK: usize = 1024;
    let d = q.len();
    if d == 0 {
        return Vec::new();
    }
    let mut out = vec![0f32; rows.len() / d];
    out.par_chunks_mut(ROWS_PER_TASK)
        .zip(rows.par_chunks(ROWS_PER_TASK * d))
        .for_each(|(out, rows)| block(rows, out));
    out
}

fn dots_into(rows: &[f32], q: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::matmul::has_avx2_fma() {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        unsafe { dots_avx2(rows, q, out) };
        return;
    }
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(q.len())) {
        *o = dot(row, q);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dots_avx2(rows: &[f32], q: &[f32], out: &mut [f32]) {
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(q.len())) {
        *o = dot(row, q);
    }
}

/// The unit vectors of a search index, one `dim`-wide row each, for
/// cosine scans: in half precision on a CPU that converts it (F16C), which
/// halves the memory and the bytes a scan reads (the scan is memory-bound:
/// an index of 15,000 chunks is 23 MB in f32); f32 otherwise. Half
/// precision moves a cosine of unit vectors by about 1e-4 (tested), well
/// under the gaps that order a ranking.
pub struct Rows {
    dim: usize,
    values: RowValues,
}

enum RowValues {
    Full(Vec<f32>),
    Half(Vec<u16>),
}

impl Rows {
    /// Rows of `dim` values each from `values` (row-major).
    pub fn new(values: Vec<f32>, dim: usize) -> Rows {
        let values = if crate::matmul::has_f16c() {
            RowValues::Half(crate::matmul::to_half(&values))
        } else {
            RowValues::Full(values)
        };
        Rows { dim, values }
    }

    /// Values per row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether the rows are kept in half precision.
    pub fn is_half(&self) -> bool {
        matches!(self.values, RowValues::Half(_))
    }

    /// The dot product of `q` (`dim` values) with every row, split over
    /// rayon's threads.
    pub fn dots(&self, q: &[f32]) -> Vec<f32> {
        assert_eq!(q.len(), self.dim, "the query has the rows' width");
        match &self.values {
            RowValues::Full(rows) => dots(rows, q),
            RowValues::Half(rows) => dots_half(rows, q),
        }
    }
}

/// [`dots`] of rows in half precision (F16C's conversion when the CPU has
/// it, which is when [`Rows`] makes them).
fn dots_half(rows: &[u16], q: &[f32]) -> Vec<f32> {
    scan(rows, q, |rows, out| dots_half_into(rows, q, out))
}

fn dots_half_into(rows: &[u16], q: &[f32], out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::matmul::has_f16c() {
        // SAFETY: the CPU has AVX2, FMA and F16C (checked just above).
        unsafe { dots_half_avx2(rows, q, out) };
        return;
    }
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(q.len())) {
        *o = row.iter().zip(q).map(|(&h, &x)| half_to_f32(h) * x).sum();
    }
}

/// # Safety
/// The CPU must have AVX2, FMA and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dots_half_avx2(rows: &[u16], q: &[f32], out: &mut [f32]) {
    use std::arch::x86_64::*;
    let d = q.len();
    let whole = d / 16 * 16;
    for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
        let (mut a, mut b) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut i = 0;
        while i < whole {
            // SAFETY: i + 16 <= d, the length of `row` and `q`.
            let (r, v) = (row.as_ptr().add(i), q.as_ptr().add(i));
            let r0 = _mm256_cvtph_ps(_mm_loadu_si128(r.cast()));
            let r1 = _mm256_cvtph_ps(_mm_loadu_si128(r.add(8).cast()));
            a = _mm256_fmadd_ps(r0, _mm256_loadu_ps(v), a);
            b = _mm256_fmadd_ps(r1, _mm256_loadu_ps(v.add(8)), b);
            i += 16;
        }
        let mut lanes = [0f32; 8];
        _mm256_storeu_ps(lanes.as_mut_ptr(), _mm256_add_ps(a, b));
        let tail: f32 = row[whole..]
            .iter()
            .zip(&q[whole..])
            .map(|(&h, &x)| half_to_f32(h) * x)
            .sum();
        *o = lanes.iter().sum::<f32>() + tail;
    }
}

/// One half-precision value (IEEE binary16 bits) as f32.
fn half_to_f32(h: u16) -> f32 {
    let exponent = u32::from((h >> 10) & 0x1f);
    let mantissa = u32::from(h & 0x3ff);
    let magnitude = match exponent {
        // Zero and subnormals: mantissa × 2⁻²⁴.
        0 => mantissa as f32 * f32::powi(2.0, -24),
        0x1f => f32::from_bits(0x7f80_0000 | (mantissa << 13)),
        e => f32::from_bits(((e + 112) << 23) | (mantissa << 13)),
    };
    if h >> 15 == 1 {
        -magnitude
    } else {
        magnitude
    }
}

/// The dot product of two equally long slices, in eight lanes.
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        for ((l, p), q) in lanes.iter_mut().zip(x).zip(y) {
            *l += p * q;
        }
    }
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(p, q)| p * q)
        .sum();
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_accurate_across_its_range() {
        let mut worst = 0f64;
        let mut x = -80.0f32;
        while x < 80.0 {
            let want = f64::from(x).exp();
            let got = f64::from(exp(x));
            worst = worst.max(((got - want) / want).abs());
            x += 0.013;
        }
        assert!(worst < 4e-7, "largest relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
        assert!(exp(1000.0).is_finite());
    }

    #[test]
    fn gelu_matches_the_erf_form() {
        let mut worst = 0f64;
        let mut x = -12.0f32;
        while x < 12.0 {
            let xd = f64::from(x);
            let want = 0.5 * xd * (1.0 + libm::erf(xd / std::f64::consts::SQRT_2));
            let got = f64::from(gelu(x));
            worst = worst.max((got - want).abs() / xd.abs().max(1.0));
            x += 0.0037;
        }
        assert!(worst < 3e-7, "largest error {worst}");
        let mut v = vec![-3.0, -0.5, 0.0, 0.5, 3.0];
        let want: Vec<f32> = v.iter().map(|&x| gelu(x)).collect();
        gelu_in_place(&mut v);
        assert_eq!(v, want);
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_the_order() {
        let mut v = vec![1.0, 3.0, 2.0, -1000.0];
        softmax_in_place(&mut v);
        assert!((v.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(v[1] > v[2] && v[2] > v[0] && v[3] < 1e-30);
        let e = [1f64.exp(), 3f64.exp(), 2f64.exp()];
        let total: f64 = e.iter().sum();
        assert!((f64::from(v[1]) - e[1] / total).abs() < 1e-6);
    }

    #[test]
    fn layer_norm_standardises_then_scales() {
        let mut row: Vec<f32> = (0..13).map(|i| i as f32).collect();
        layer_norm(&mut row, &[2.0; 13], &[1.0; 13], 0.0);
        let mean: f32 = row.iter().sum::<f32>() / 13.0;
        assert!((mean - 1.0).abs() < 1e-5, "{mean}");
        let var: f32 = row.iter().map(|x| (x - 1.0).powi(2)).sum::<f32>() / 13.0;
        assert!((var - 4.0).abs() < 1e-4, "{var}");
    }

    #[test]
    fn dots_are_each_rows_dot_product() {
        let d = 19;
        let rows: Vec<f32> = (0..2500 * d)
            .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
            .collect();
        let q: Vec<f32> = (0..d).map(|i| 1.0 - i as f32 * 0.1).collect();
        let got = dots(&rows, &q);
        assert_eq!(got.len(), 2500);
        for (i, g) in got.iter().enumerate() {
            let want: f32 = rows[i * d..(i + 1) * d]
                .iter()
                .zip(&q)
                .map(|(a, b)| a * b)
                .sum();
            assert!((g - want).abs() < 1e-4, "row {i}: {g} vs {want}");
        }
        assert!(dots(&rows, &[]).is_empty());
    }

    #[test]
    fn half_rows_give_the_full_dots_closely() {
        let d = 387;
        let raw: Vec<f32> = (0..1500 * d)
            .map(|i| ((i * 7919) % 211) as f32 / 105.0 - 1.0)
            .collect();
        // Unit rows, as an index holds.
        let mut values = raw.clone();
        for row in values.chunks_exact_mut(d) {
            let norm = dot(row, row).sqrt();
            row.iter_mut().for_each(|v| *v /= norm);
        }
        let mut q: Vec<f32> = (0..d).map(|i| (i as f32 * 0.37).sin()).collect();
        let norm = dot(&q, &q).sqrt();
        q.iter_mut().for_each(|v| *v /= norm);
        let want = dots(&values, &q);
        let rows = Rows::new(values, d);
        assert_eq!(rows.is_half(), crate::matmul::has_f16c());
        let got = rows.dots(&q);
        assert_eq!(got.len(), 1500);
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-3, "largest cosine change {worst}");
        if rows.is_half() {
            assert!(worst > 0.0, "the half kernel ran");
        }
    }

    #[test]
    fn half_values_convert_exactly() {
        for (bits, want) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x0000, 0.0),
            (0x3555, 0.333_251_95),
            (0x0001, 5.960_464_5e-8),
            (0x8001, -5.960_464_5e-8),
            (0x7bff, 65504.0),
        ] {
            assert_eq!(half_to_f32(bits), want, "{bits:#06x}");
        }
        assert!(half_to_f32(0x7c00).is_infinite());
        assert!(half_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn dot_handles_a_tail() {
        let a: Vec<f32> = (0..11).map(|i| i as f32).collect();
        let b = vec![1.0f32; 11];
        assert_eq!(dot(&a, &b), 55.0);
    }
}
