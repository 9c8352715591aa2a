//! The evaluation statistics agree with scipy/numpy (run with the sandbox
//! venv's Python) to 1e-6 on fixtures that cover every code path: exact,
//! permutation and asymptotic Wilcoxon; ties in Kendall's τ-b; quantiles.

use gisclaw::eval::metrics::stats::{self, WilcoxonMethod};

/// Deterministic pseudo-random values in [0, 1) for fixtures.
fn values(n: usize, seed: u64, levels: Option<u32>) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            levels.map_or(u, |l| (u * f64::from(l)).floor() / f64::from(l))
        })
        .collect()
}

/// Runs `code` with the venv's Python; the script prints one JSON value.
fn python(code: &str) -> serde_json::Value {
    serde_json::from_str(&crate::common::venv_python(["-c", code])).unwrap()
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-6 * b.abs().max(1.0),
        "{what}: ours {a}, scipy {b}"
    );
}

#[test]
fn wilcoxon_matches_scipy_on_every_method() {
    // (x, y, the method scipy's "auto" picks)
    let cases = [
        (
            values(20, 1, None),
            values(20, 2, None),
            WilcoxonMethod::Exact,
        ),
        (
            values(45, 3, None),
            values(45, 4, None),
            WilcoxonMethod::Exact,
        ),
        (
            values(12, 5, Some(4)),
            values(12, 6, Some(4)),
            WilcoxonMethod::Permutation,
        ),
        (
            values(30, 7, Some(5)),
            values(30, 8, Some(5)),
            WilcoxonMethod::Asymptotic,
        ),
        (
            values(150, 9, None),
            values(150, 10, Some(3)),
            WilcoxonMethod::Asymptotic,
        ),
    ];
    let json =
        serde_json::to_string(&cases.iter().map(|(x, y, _)| (x, y)).collect::<Vec<_>>()).unwrap();
    let code = format!(
        "import json\nfrom scipy.stats import wilcoxon\ncases = json.loads('{json}')\n\
         print(json.dumps([[float(r.statistic), float(r.pvalue)] for r in (wilcoxon(x, y) for x, y in cases)]))"
    );
    let expected = python(&code);
    for (k, (x, y, method)) in cases.iter().enumerate() {
        let ours = stats::wilcoxon(x, y).unwrap();
        assert_eq!(ours.method, *method, "case {k}");
        close(
            ours.statistic,
            expected[k][0].as_f64().unwrap(),
            &format!("case {k} statistic"),
        );
        close(
            ours.p_value,
            expected[k][1].as_f64().unwrap(),
            &format!("case {k} p-value"),
        );
    }
}

#[test]
fn kendall_quantile_cv_and_bootstrap_match_scipy_and_numpy() {
    let (x, y) = (values(60, 11, Some(6)), values(60, 12, Some(8)));
    let data = values(50, 13, None);
    let means = stats::bootstrap_means(&data, 4000, 3);
    let json = serde_json::to_string(&(&x, &y, &data, &means)).unwrap();
    let code = format!(
        "import json, numpy as np\nfrom scipy.stats import kendalltau, bootstrap\n\
         x, y, data, means = json.loads('{json}')\n\
         ci = bootstrap((np.array(data),), np.mean, method='percentile', n_resamples=20000, random_state=0).confidence_interval\n\
         d = np.array(x) - np.array(y)\n\
         print(json.dumps([float(kendalltau(x, y).statistic), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)),\n\
         float(np.std(data) / np.mean(data)), float(ci.low), float(ci.high), float(d.mean() / d.std(ddof=1)), float(np.std(data, ddof=1))]))"
    );
    let e = python(&code);
    let f = |i: usize| e[i].as_f64().unwrap();
    close(stats::kendall_tau_b(&x, &y), f(0), "Kendall's tau-b");
    close(stats::quantile(&means, 0.025), f(1), "2.5 % quantile");
    close(stats::quantile(&means, 0.975), f(2), "97.5 % quantile");
    close(stats::coefficient_of_variation(&data), f(3), "CV");
    let diffs: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
    close(
        stats::cohens_d_paired(&diffs).unwrap(),
        f(6),
        "Cohen's d (paired)",
    );
    close(stats::sample_sd(&data), f(7), "sample SD");
    assert_eq!(stats::cohens_d_paired(&[0.5, 0.5, 0.5]), None);
    // Different random resamples: the intervals agree to Monte Carlo precision only.
    let (lo, hi) = stats::bootstrap_ci(&data, 0.95, 20_000, 1);
    assert!(
        (lo - f(4)).abs() < 0.01 && (hi - f(5)).abs() < 0.01,
        "ours ({lo}, {hi}), scipy ({}, {})",
        f(4),
        f(5)
    );
}
