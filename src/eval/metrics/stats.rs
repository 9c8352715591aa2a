//! Statistics for comparing agent runs: percentile-bootstrap confidence
//! intervals, the paired Wilcoxon signed-rank test, Cliff's δ, Kendall's τ-b,
//! the unbiased pass@k estimator, the coefficient of variation with the
//! stability-adjusted accuracy, and the composite-weight grid.
//!
//! Each function follows scipy/numpy's definition where one exists (named in
//! its doc) and `tests/all/stats_parity.rs` checks it against them.

use std::f64::consts::PI;

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The q-quantile (0 ≤ q ≤ 1) with linear interpolation between order
/// statistics — numpy.quantile's default ("linear") method; NaN when empty.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.to_vec();
    v.sort_by(f64::total_cmp);
    quantile_of_sorted(&v, q)
}

/// `quantile` of values already sorted ascending.
fn quantile_of_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = q * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// A small deterministic PRNG (SplitMix64) so that bootstrap intervals are
/// reproducible from a seed without a dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by rejection so that there is no modulo bias.
    fn below(&mut self, n: usize) -> usize {
        let n = n as u64;
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }
}

/// The means of `resamples` bootstrap resamples (with replacement) of `values`.
pub fn bootstrap_means(values: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64(seed);
    (0..resamples)
        .map(|_| {
            (0..values.len())
                .map(|_| values[rng.below(values.len())])
                .sum::<f64>()
                / values.len() as f64
        })
        .collect()
}

/// Percentile-bootstrap confidence interval of the mean at `level` (e.g. 0.95),
/// as scipy.stats.bootstrap(method="percentile") computes it.
pub fn bootstrap_ci(values: &[f64], level: f64, resamples: usize, seed: u64) -> (f64, f64) {
    let mut means = bootstrap_means(values, resamples, seed);
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    (
        quantile_of_sorted(&means, alpha),
        quantile_of_sorted(&means, 1.0 - alpha),
    )
}

/// How a Wilcoxon p-value was computed (scipy's `method="auto"` choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WilcoxonMethod {
    /// The exact null distribution (no ties, no zero differences, n ≤ 50).
    Exact,
    /// All 2ⁿ sign flips (ties or zeros with n ≤ 13).
    Permutation,
    /// Normal approximation with the tie correction, no continuity correction.
    Asymptotic,
}

/// Result of a two-sided paired Wilcoxon signed-rank test.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Wilcoxon {
    /// min(W⁺, W⁻), as scipy reports for the two-sided test.
    pub statistic: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Pairs with a non-zero difference.
    pub n: usize,
    /// How the p-value was computed.
    pub method: WilcoxonMethod,
}

/// Average ranks (1-based) of `values`, ties sharing their mean rank, and
/// the size of every group of equal values (1 for a value without ties).
fn average_ranks(values: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut groups = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        groups.push(j - i + 1);
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = rank;
        }
        i = j + 1;
    }
    (ranks, groups)
}

/// Paired two-sided Wilcoxon signed-rank test of x − y, zero differences
/// dropped ("wilcox"), with scipy.stats.wilcoxon's `method="auto"` choice
/// (scipy ≥ 1.13). None when no pair differs or the lengths differ.
pub fn wilcoxon(x: &[f64], y: &[f64]) -> Option<Wilcoxon> {
    if x.len() != y.len() {
        return None;
    }
    let d: Vec<f64> = x.iter().zip(y).map(|(a, b)| a - b).collect();
    let zeros = d.iter().filter(|v| **v == 0.0).count();
    let nonzero: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    let n = nonzero.len();
    if n == 0 {
        return None;
    }
    let abs: Vec<f64> = nonzero.iter().map(|v| v.abs()).collect();
    let (ranks, groups) = average_ranks(&abs);
    let ties = groups.iter().any(|&g| g > 1);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total = n as f64 * (n as f64 + 1.0) / 2.0;
    let r_minus = total - r_plus;
    let method = if d.len() > 50 {
        WilcoxonMethod::Asymptotic
    } else if !ties && zeros == 0 {
        WilcoxonMethod::Exact
    } else if d.len() <= 13 {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Asymptotic
    };
    let p_value = match method {
        WilcoxonMethod::Exact => {
            let pmf = signed_rank_pmf(n);
            let sf: f64 = pmf[r_plus.floor() as usize..].iter().sum();
            let cdf: f64 = pmf[..=r_plus.ceil() as usize].iter().sum();
            (2.0 * sf.min(cdf)).min(1.0)
        }
        WilcoxonMethod::Permutation => {
            let gamma = (1e-14 * r_plus).abs();
            let (mut le, mut ge, flips) = (0u64, 0u64, 1u64 << n);
            for mask in 0..flips {
                let s: f64 = (0..n)
                    .filter(|i| mask >> i & 1 == 1)
                    .map(|i| ranks[i])
                    .sum();
                le += u64::from(s <= r_plus + gamma);
                ge += u64::from(s >= r_plus - gamma);
            }
            (2.0 * le.min(ge) as f64 / flips as f64).min(1.0)
        }
        WilcoxonMethod::Asymptotic => {
            let tie_term: f64 = groups.iter().map(|&g| (g * g * g - g) as f64).sum();
            let nf = n as f64;
            let se = ((nf * (nf + 1.0) * (2.0 * nf + 1.0) - tie_term / 2.0) / 24.0).sqrt();
            let z = (r_plus - nf * (nf + 1.0) / 4.0) / se;
            (2.0 * normal_sf(z.abs())).min(1.0)
        }
    };
    Some(Wilcoxon {
        statistic: r_plus.min(r_minus),
        p_value,
        n,
        method,
    })
}

/// Probability of each signed-rank sum 0..=n(n+1)/2 under the null (no ties).
fn signed_rank_pmf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for k in 1..=n {
        for s in (k..=max).rev() {
            counts[s] += counts[s - k];
        }
    }
    let total = 2f64.powi(n as i32);
    counts.iter().map(|c| c / total).collect()
}

/// Upper tail of the standard normal, P(Z > z), accurate to ~1e-15 relative.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function: a power series for |x| < 3 and a
/// continued fraction (modified Lentz) beyond.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 3.0 {
        // erf(x) = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1))
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x * x / n;
            sum += term / (2.0 * n + 1.0);
        }
        return 1.0 - 2.0 / PI.sqrt() * sum;
    }
    // erfc(x) = e^{−x²}/√π · 1/(x + 1/2/(x + 1/(x + 3/2/(x + …))))
    let tiny = 1e-300;
    let mut f = x;
    let (mut c, mut d) = (x, 0.0);
    for k in 1..200 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / PI.sqrt() / f
}

/// Cliff's δ = P(x > y) − P(x < y) over all pairs; in [−1, 1].
pub fn cliffs_delta(x: &[f64], y: &[f64]) -> f64 {
    let (mut gt, mut lt) = (0usize, 0usize);
    for a in x {
        for b in y {
            gt += usize::from(a > b);
            lt += usize::from(a < b);
        }
    }
    (gt as f64 - lt as f64) / (x.len() * y.len()) as f64
}

/// Cohen's d for paired samples (d_z): the mean of the differences over
/// their sample standard deviation (n − 1), as GISclaw's Table 10 reports
/// it; `None` for fewer than two differences or when they are all equal.
pub fn cohens_d_paired(differences: &[f64]) -> Option<f64> {
    let n = differences.len();
    if n < 2 {
        return None;
    }
    let m = mean(differences);
    let var = differences.iter().map(|d| (d - m).powi(2)).sum::<f64>() / (n - 1) as f64;
    (var > 0.0).then(|| m / var.sqrt())
}

/// The sample standard deviation (n − 1); 0 for fewer than two values.
pub fn sample_sd(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let m = mean(values);
    (values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// Kendall's τ-b (ties in either ranking corrected), as scipy.stats.kendalltau.
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> f64 {
    let (mut concordant, mut discordant, mut tie_x, mut tie_y) = (0f64, 0f64, 0f64, 0f64);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let (dx, dy) = (x[i] - x[j], y[i] - y[j]);
            if dx == 0.0 && dy == 0.0 {
                continue;
            } else if dx == 0.0 {
                tie_x += 1.0;
            } else if dy == 0.0 {
                tie_y += 1.0;
            } else if (dx > 0.0) == (dy > 0.0) {
                concordant += 1.0;
            } else {
                discordant += 1.0;
            }
        }
    }
    (concordant - discordant)
        / ((concordant + discordant + tie_x) * (concordant + discordant + tie_y)).sqrt()
}

/// Unbiased pass@k from n samples of which c passed: 1 − C(n−c, k) / C(n, k)
/// (Chen et al. 2021), computed as a product to stay exact for large n.
/// NaN when c > n or k > n (no such estimate).
pub fn pass_at_k(n: usize, c: usize, k: usize) -> f64 {
    if c > n || k > n {
        return f64::NAN;
    }
    if n - c < k {
        return 1.0;
    }
    1.0 - ((n - c + 1)..=n)
        .map(|i| 1.0 - k as f64 / i as f64)
        .product::<f64>()
}

/// Coefficient of variation σ/μ with the population standard deviation
/// (numpy.std's default, ddof = 0).
pub fn coefficient_of_variation(values: &[f64]) -> f64 {
    let m = mean(values);
    let var = values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / values.len() as f64;
    var.sqrt() / m
}

/// AutoGEEval's stability-adjusted accuracy: pass@5 / (1 + CV).
pub fn stability_adjusted(pass_at_5: f64, cv: f64) -> f64 {
    pass_at_5 / (1.0 + cv)
}

/// Every (w_succ, w_out, w_api, w_cos) with each weight in {0.1, …, 0.5} and
/// the four summing to 1 — the GISclaw paper's sensitivity grid. The paper
/// says 66 tuples; the grid it describes has 68, which is what this returns.
pub fn weight_grid() -> Vec<[f64; 4]> {
    let mut out = Vec::new();
    for a in 1..=5u32 {
        for b in 1..=5u32 {
            for c in 1..=5u32 {
                let d = 10i64 - i64::from(a + b + c);
                if (1..=5).contains(&d) {
                    out.push([a, b, c, d as u32].map(|v| f64::from(v) / 10.0));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        assert!((quantile(&[1.0, 2.0, 3.0, 4.0], 0.25) - 1.75).abs() < 1e-12);
        assert_eq!(cliffs_delta(&[3.0, 4.0], &[1.0, 3.0]), 0.75);
        assert!((kendall_tau_b(&[1.0, 2.0, 3.0], &[1.0, 3.0, 2.0]) - 1.0 / 3.0).abs() < 1e-12);
        // n = 5 samples, 2 correct: pass@1 = 0.4, pass@5 = 1, pass@3 = 1 − C(3,3)/C(5,3) = 0.9.
        assert!((pass_at_k(5, 2, 1) - 0.4).abs() < 1e-12);
        assert!((pass_at_k(5, 2, 3) - 0.9).abs() < 1e-12);
        assert_eq!(pass_at_k(5, 2, 5), 1.0);
        assert_eq!(pass_at_k(5, 0, 1), 0.0);
        assert!(pass_at_k(3, 4, 1).is_nan() && pass_at_k(3, 1, 5).is_nan());
        assert!(quantile(&[], 0.5).is_nan());
        assert!((coefficient_of_variation(&[1.0, 3.0]) - 0.5).abs() < 1e-12);
        assert!((stability_adjusted(65.36, 0.097) - 59.58).abs() < 0.01);
        // Exact Wilcoxon, n = 3, all positive: W⁻ = 0, p = 2 · 1/8.
        let w = wilcoxon(&[2.0, 3.0, 4.0], &[1.0, 1.0, 1.0]).unwrap();
        assert_eq!((w.statistic, w.method), (0.0, WilcoxonMethod::Exact));
        assert!((w.p_value - 0.25).abs() < 1e-12);
        assert!(wilcoxon(&[1.0], &[1.0]).is_none());
    }

    #[test]
    fn the_normal_tail_is_accurate() {
        assert!((normal_sf(0.0) - 0.5).abs() < 1e-15);
        assert!((normal_sf(1.959963984540054) - 0.025).abs() < 1e-14);
        assert!((normal_sf(5.0) / 2.866515718791939e-7 - 1.0).abs() < 1e-12);
        assert!((normal_sf(-1.0) - 0.8413447460685429).abs() < 1e-14);
    }

    #[test]
    fn the_weight_grid_has_every_admissible_tuple() {
        let grid = weight_grid();
        assert_eq!(grid.len(), 68);
        assert!(grid
            .iter()
            .all(|w| (w.iter().sum::<f64>() - 1.0).abs() < 1e-9));
        assert!(grid
            .iter()
            .all(|w| w.iter().all(|v| (0.1 - 1e-9..=0.5 + 1e-9).contains(v))));
    }

    #[test]
    fn bootstrap_is_reproducible_and_brackets_the_mean() {
        let values: Vec<f64> = (0..40).map(|i| f64::from(i % 7) / 7.0).collect();
        let a = bootstrap_ci(&values, 0.95, 2000, 7);
        assert_eq!(a, bootstrap_ci(&values, 0.95, 2000, 7));
        assert!(a.0 < mean(&values) && mean(&values) < a.1, "{a:?}");
    }
}
