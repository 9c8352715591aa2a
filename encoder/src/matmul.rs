//! `y = x·Wᵀ + b` for a few rows `x` and a fixed weight matrix `W`.
//!
//! `W` (n × k, one row per output, as PyTorch stores a linear layer) is
//! packed once into panels of 16 outputs: panel p holds, for each k, the 16
//! weights of outputs 16p…16p+15 side by side. A micro-kernel then holds a
//! 6 × 16 block of `y` in twelve AVX registers, and per k loads the panel's
//! 16 weights once and broadcasts each of the 6 rows' `x[k]` into them (the
//! classic outer-product kernel: 12 FMAs per 2 loads + 6 broadcasts, no
//! horizontal sums). Work is split over rayon's threads in tiles of 48
//! rows × 4 panels, so a 12-row query still keeps both cores busy.
//!
//! On CPUs with F16C a second copy of the panels is made, on first use, in
//! half precision ([`Precision::Half`]): a product of a few rows is bound by
//! reading the weights, and half the bytes (21 MB for MiniLM, which then
//! fits in a 32 MB L3) made a whole query 10–25 % faster here.

use rayon::prelude::*;

/// Outputs per packed panel.
const PANEL: usize = 16;
/// Rows per micro-kernel call.
const MR: usize = 6;
/// Rows per parallel task.
const ROW_TILE: usize = 48;
/// Panels per parallel task.
const PANELS_PER_TASK: usize = 4;

/// Whether this CPU runs the AVX2 + FMA kernels (checked once by std).
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU also converts half-precision floats (F16C), which the
/// [`Precision::Half`] kernel needs.
pub fn has_f16c() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx2_fma() && std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Which copy of the weights a product reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// The weights as published (f32).
    Full,
    /// The weights rounded to f16 (products still in f32); the full ones on
    /// a CPU without F16C.
    Half,
}

/// A linear layer with its weights packed into panels.
pub struct Linear {
    k: usize,
    n: usize,
    panels: Vec<f32>,
    /// The panels in f16 bits, made on the first half-precision product
    /// (empty without F16C).
    half: std::sync::OnceLock<Vec<u16>>,
    bias: Vec<f32>,
}

/// One panel's weights in the precision a product reads.
#[derive(Clone, Copy)]
enum Panel<'a> {
    Full(&'a [f32]),
    Half(&'a [u16]),
}

/// The output buffer shared by the tasks of one product; each task writes
/// a disjoint block of it.
struct Out(*mut f32);
// SAFETY: the pointer is only written through at indices that no two tasks
// share (disjoint row tiles × panel groups), while the Vec it points into
// outlives the parallel loop.
unsafe impl Sync for Out {}

impl Out {
    /// Writes `values[j] + bias[j]` at `start + j` for each j (the buffer
    /// may be uninitialised there: nothing is read).
    ///
    /// # Safety
    /// `start + bias.len()` is inside the buffer's capacity and no other
    /// task writes that range.
    unsafe fn write_row(&self, start: usize, values: &[f32], bias: &[f32]) {
        let to = unsafe { self.0.add(start) };
        for (j, (v, b)) in values.iter().zip(bias).enumerate() {
            unsafe { to.add(j).write(v + b) };
        }
    }
}

impl Linear {
    /// Packs `w` (`bias.len()` rows of `k` weights, row-major).
    pub fn pack(w: &[f32], bias: Vec<f32>, k: usize) -> Linear {
        let n = bias.len();
        assert_eq!(w.len(), n * k, "weights are n × k");
        let count = n.div_ceil(PANEL);
        let mut panels = vec![0f32; count * k * PANEL];
        for p in 0..count {
            for j in 0..PANEL.min(n - p * PANEL) {
                let row = &w[(p * PANEL + j) * k..(p * PANEL + j + 1) * k];
                for (kk, &v) in row.iter().enumerate() {
                    panels[(p * k + kk) * PANEL + j] = v;
                }
            }
        }
        Linear {
            k,
            n,
            panels,
            half: std::sync::OnceLock::new(),
            bias,
        }
    }

    /// Inputs per row.
    pub fn inputs(&self) -> usize {
        self.k
    }

    /// Outputs per row.
    pub fn outputs(&self) -> usize {
        self.n
    }

    /// `x·Wᵀ + b` for the `rows` rows of `x` (row-major, `rows × k`),
    /// split over rayon's threads.
    pub fn forward(&self, x: &[f32], rows: usize) -> Vec<f32> {
        self.forward_with(x, rows, has_avx2_fma(), true, Precision::Full)
    }

    /// [`Linear::forward`] with the weights in `precision`, on rayon's
    /// threads when `parallel`, else on the calling thread only.
    pub fn forward_as(
        &self,
        x: &[f32],
        rows: usize,
        precision: Precision,
        parallel: bool,
    ) -> Vec<f32> {
        self.forward_with(x, rows, has_avx2_fma(), parallel, precision)
    }

    fn forward_with(
        &self,
        x: &[f32],
        rows: usize,
        avx: bool,
        parallel: bool,
        precision: Precision,
    ) -> Vec<f32> {
        let half = (precision == Precision::Half && avx && has_f16c())
            .then(|| self.half.get_or_init(|| to_half(&self.panels)).as_slice());
        assert_eq!(x.len(), rows * self.k, "x is rows × k");
        let len = rows * self.n;
        let mut y: Vec<f32> = Vec::with_capacity(len);
        let groups = self.n.div_ceil(PANEL).div_ceil(PANELS_PER_TASK);
        let tasks = rows.div_ceil(ROW_TILE) * groups;
        let out = Out(y.as_mut_ptr());
        let run = |task: usize| self.task(x, rows, task / groups, task % groups, avx, half, &out);
        if parallel {
            (0..tasks).into_par_iter().for_each(run);
        } else {
            (0..tasks).for_each(run);
        }
        // SAFETY: the tasks wrote every element: the row tiles cover the
        // rows, the panel groups every column.
        unsafe { y.set_len(len) };
        y
    }

    /// One task's block of `y`: row tile `tile` × panel group `group`.
    #[allow(clippy::too_many_arguments)]
    fn task(
        &self,
        x: &[f32],
        rows: usize,
        tile: usize,
        group: usize,
        avx: bool,
        half: Option<&[u16]>,
        out: &Out,
    ) {
        let (k, n) = (self.k, self.n);
        let panels = n.div_ceil(PANEL);
        let (r0, r1) = (tile * ROW_TILE, ((tile + 1) * ROW_TILE).min(rows));
        let last_panel = ((group + 1) * PANELS_PER_TASK).min(panels);
        for p in group * PANELS_PER_TASK..last_panel {
            let range = p * k * PANEL..(p + 1) * k * PANEL;
            let panel = match half {
                Some(half) => Panel::Half(&half[range]),
                None => Panel::Full(&self.panels[range]),
            };
            let c0 = p * PANEL;
            let cols = PANEL.min(n - c0);
            let mut r = r0;
            while r < r1 {
                let m = MR.min(r1 - r);
                let mut block = [[0f32; PANEL]; MR];
                micro(x, k, r, m, panel, avx, &mut block);
                for (i, b) in block.iter().enumerate().take(m) {
                    // SAFETY: row r+i, columns c0..c0+cols lie inside the
                    // rows × n buffer and belong to this task's tile and
                    // group only.
                    unsafe { out.write_row((r + i) * n + c0, b, &self.bias[c0..c0 + cols]) };
                }
                r += m;
            }
        }
    }
}

/// The `m × 16` block of rows `row…row+m` against one panel, into `block`.
fn micro(
    x: &[f32],
    k: usize,
    row: usize,
    m: usize,
    panel: Panel<'_>,
    avx: bool,
    block: &mut [[f32; PANEL]; MR],
) {
    macro_rules! run {
        ($r:literal) => {{
            let rows: [&[f32]; $r] = std::array::from_fn(|i| &x[(row + i) * k..(row + i + 1) * k]);
            match panel {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: half panels exist only on CPUs with AVX2, FMA and
                // F16C; every row and the panel hold k (× 16) values.
                Panel::Half(panel) => unsafe { kernel_half::<$r>(rows, panel, &mut block[..$r]) },
                #[cfg(not(target_arch = "x86_64"))]
                Panel::Half(_) => unreachable!("half panels exist only on x86-64"),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: the caller checked the CPU for AVX2 and FMA; every
                // row and the panel hold k (× 16) values.
                Panel::Full(panel) if avx => unsafe {
                    kernel_avx2::<$r>(rows, panel, &mut block[..$r])
                },
                Panel::Full(panel) => kernel_portable::<$r>(rows, panel, &mut block[..$r]),
            }
            let _ = avx;
        }};
    }
    match m {
        1 => run!(1),
        2 => run!(2),
        3 => run!(3),
        4 => run!(4),
        5 => run!(5),
        _ => run!(6),
    }
}

/// The micro-kernel in plain Rust (the compiler vectorises the 16 lanes).
fn kernel_portable<const R: usize>(rows: [&[f32]; R], panel: &[f32], block: &mut [[f32; PANEL]]) {
    let mut acc = [[0f32; PANEL]; R];
    for (kk, w) in panel.chunks_exact(PANEL).enumerate() {
        for (a, x) in acc.iter_mut().zip(rows) {
            let b = x[kk];
            for (s, w) in a.iter_mut().zip(w) {
                *s += b * w;
            }
        }
    }
    block.copy_from_slice(&acc);
}

/// Defines an AVX2 + FMA micro-kernel over panels of `$w` weights: 2R
/// accumulators of 8 lanes; `$load` turns a pointer `$p` to 8 weights into
/// 8 f32 lanes. The kernels below differ in that load alone.
macro_rules! simd_kernel {
    ($(#[$doc:meta])* $name:ident, $features:literal, $w:ty, |$p:ident| $load:expr) => {
        $(#[$doc])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        unsafe fn $name<const R: usize>(
            rows: [&[f32]; R],
            panel: &[$w],
            block: &mut [[f32; PANEL]],
        ) {
            use std::arch::x86_64::*;
            let k = panel.len() / PANEL;
            debug_assert!(rows.iter().all(|r| r.len() == k) && block.len() == R);
            let mut lo = [_mm256_setzero_ps(); R];
            let mut hi = [_mm256_setzero_ps(); R];
            let w = panel.as_ptr();
            for kk in 0..k {
                let w0 = {
                    let $p = w.add(kk * PANEL);
                    $load
                };
                let w1 = {
                    let $p = w.add(kk * PANEL + 8);
                    $load
                };
                for i in 0..R {
                    let b = _mm256_set1_ps(*rows[i].get_unchecked(kk));
                    lo[i] = _mm256_fmadd_ps(b, w0, lo[i]);
                    hi[i] = _mm256_fmadd_ps(b, w1, hi[i]);
                }
            }
            for i in 0..R {
                let out = block.get_unchecked_mut(i).as_mut_ptr();
                _mm256_storeu_ps(out, lo[i]);
                _mm256_storeu_ps(out.add(8), hi[i]);
            }
        }
    };
}

simd_kernel!(
    /// The micro-kernel with AVX2 + FMA on f32 panels.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA; every row must hold `panel.len() / 16`
    /// values and `block` must hold R rows.
    kernel_avx2,
    "avx2,fma",
    f32,
    |p| _mm256_loadu_ps(p)
);

simd_kernel!(
    /// The micro-kernel on half-precision panels: each 16 weights are read
    /// as 32 bytes and widened to f32 (F16C) before the same FMAs.
    ///
    /// # Safety
    /// The CPU must have AVX2, FMA and F16C; every row must hold
    /// `panel.len() / 16` values and `block` must hold R rows.
    kernel_half,
    "avx2,fma,f16c",
    u16,
    |p| _mm256_cvtph_ps(_mm_loadu_si128(p.cast()))
);

/// `values` rounded to f16 (to nearest, ties to even), as bits. Call only
/// when [`has_f16c`].
pub(crate) fn to_half(values: &[f32]) -> Vec<u16> {
    #[cfg(target_arch = "x86_64")]
    {
        /// # Safety
        /// The CPU must have F16C.
        #[target_feature(enable = "avx2,f16c")]
        unsafe fn convert(values: &[f32]) -> Vec<u16> {
            use std::arch::x86_64::*;
            let mut out = vec![0u16; values.len().div_ceil(8) * 8];
            let mut padded = values.to_vec();
            padded.resize(out.len(), 0.0);
            for (src, dst) in padded.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(src.as_ptr()));
                _mm_storeu_si128(dst.as_mut_ptr().cast(), h);
            }
            out.truncate(values.len());
            out
        }
        if has_f16c() {
            // SAFETY: the CPU has F16C (checked just above).
            return unsafe { convert(values) };
        }
    }
    let _ = values;
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence in [−1, 1).
    fn noise(seed: u64, len: usize) -> Vec<f32> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    fn naive(x: &[f32], rows: usize, w: &[f32], b: &[f32], k: usize) -> Vec<f64> {
        let n = b.len();
        let mut y = vec![0f64; rows * n];
        for r in 0..rows {
            for j in 0..n {
                let dot: f64 = (0..k)
                    .map(|i| f64::from(x[r * k + i]) * f64::from(w[j * k + i]))
                    .sum();
                y[r * n + j] = dot + f64::from(b[j]);
            }
        }
        y
    }

    #[test]
    fn both_kernels_equal_a_naive_product_on_ragged_sizes() {
        // Rows that do not fill a micro-tile or a row tile, outputs that do
        // not fill a panel or a task's group, inputs not a multiple of 8.
        for &(rows, k, n) in &[
            (1, 8, 16),
            (7, 13, 21),
            (13, 40, 70),
            (50, 24, 130),
            (97, 33, 16),
        ] {
            let x = noise(rows as u64, rows * k);
            let w = noise(k as u64 + 7, n * k);
            let b = noise(n as u64 + 3, n);
            let want = naive(&x, rows, &w, &b, k);
            let layer = Linear::pack(&w, b, k);
            assert_eq!((layer.inputs(), layer.outputs()), (k, n));
            let mut kernels = vec![false];
            if has_avx2_fma() {
                kernels.push(true);
            }
            for avx in kernels {
                let got = layer.forward_with(&x, rows, avx, avx, Precision::Full);
                let worst = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (f64::from(*g) - w).abs())
                    .fold(0.0, f64::max);
                assert!(
                    worst < 1e-4,
                    "{rows}×{k}→{n}, avx {avx}: largest difference {worst}"
                );
            }
            // Half precision: within f16's rounding of each weight (2⁻¹¹
            // relative) summed over k terms of size ≤ 1.
            let got = layer.forward_as(&x, rows, Precision::Half, true);
            let worst = got
                .iter()
                .zip(&want)
                .map(|(g, w)| (f64::from(*g) - w).abs())
                .fold(0.0, f64::max);
            assert!(
                worst < k as f64 * 5e-4,
                "{rows}×{k}→{n}, half: largest difference {worst}"
            );
            if has_f16c() {
                assert!(worst > 1e-6, "the half kernel ran ({worst})");
            }
        }
    }

    #[test]
    fn no_rows_give_no_output() {
        let layer = Linear::pack(&[1.0; 32], vec![0.0; 4], 8);
        assert!(layer.forward(&[], 0).is_empty());
    }
}
