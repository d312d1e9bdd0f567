//! Distribution-free confidence intervals: they assume nothing about the shape of the
//! pass-to-pass distribution (which on a shared machine is skewed and sometimes bimodal), only
//! that passes are independent draws from it. Both are exact for small samples.
//!
//! - [`median_interval`]: the order-statistic interval of a median. Of n sorted values,
//!   `[x(j), x(n+1-j)]` covers the true median with probability `1 - 2 P(B <= j-1)`,
//!   `B ~ Binomial(n, 1/2)`, whatever the distribution. The narrowest such interval whose
//!   coverage reaches the level is used. Below 6 values no interval reaches 95%: `[min, max]`
//!   is returned with its actual, lower level (5 values: 93.8%, 3 values: 75%).
//! - [`shift_interval`]: the Mann-Whitney (Hodges-Lehmann) interval of the shift `d` in
//!   `y = x + d` between two samples: `[D(c), D(mn+1-c)]` of the sorted pairwise differences
//!   `y_j - x_i`, covering `d` with probability `1 - 2 P(U <= c-1)`, `U` the Mann-Whitney count
//!   under no shift (R's `wilcox.test(conf.int = TRUE)`). On log QPS it is an interval for the
//!   ratio of two throughputs. `U`'s distribution is counted exactly up to 120 values in all,
//!   and taken as normal (with continuity correction) beyond.

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

/// The confidence level of every interval annbench reports.
pub const LEVEL: f64 = 0.95;

/// Samples whose U distribution is counted exactly (C(120, 60) still fits an i128).
const EXACT_U_LIMIT: usize = 120;

/// A confidence interval and its actual coverage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// The probability that an interval made this way covers the true value (>= the level
    /// asked for, or lower when there are too few samples to reach it).
    pub level: f64,
}

impl Interval {
    /// Whether the two intervals share at least one value.
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }

    /// `(high - low) / reference`, e.g. the width as a share of the median.
    pub fn relative_width(&self, reference: f64) -> f64 {
        (self.high - self.low) / reference
    }

    /// The interval with `f` applied to both ends (`f` increasing), e.g. `exp`.
    pub fn map(self, f: impl Fn(f64) -> f64) -> Interval {
        Interval {
            low: f(self.low),
            high: f(self.high),
            level: self.level,
        }
    }
}

/// The finite values, sorted ascending.
pub fn sorted_finite(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of sorted values: the middle one, or the mean of the two middle ones.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// Median of the finite values (`None` when there are none).
pub fn median(values: &[f64]) -> Option<f64> {
    median_sorted(&sorted_finite(values))
}

/// Coefficient of variation: sample standard deviation (n - 1) over the mean; `None` for
/// fewer than 2 finite values or a zero mean.
pub fn cv(values: &[f64]) -> Option<f64> {
    let v = sorted_finite(values);
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let ss: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
    let sd = (ss / (v.len() - 1) as f64).sqrt();
    (mean != 0.0).then(|| sd / mean)
}

/// `P(B <= k)` for `B ~ Binomial(n, 1/2)`: summed term by term (exact to rounding) up to
/// 1,000 trials, where 2^-n is still a normal float; statrs' beta-function form beyond.
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    if n > 1000 {
        return Binomial::new(0.5, n as u64).map_or(1.0, |b| b.cdf(k as u64));
    }
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        sum += term;
        term *= (n - i) as f64 / (i + 1) as f64;
    }
    sum.min(1.0)
}

/// The order-statistic interval of the median of the finite `values` at `level` (see the
/// module docs); `None` for fewer than 2 values.
pub fn median_interval(values: &[f64], level: f64) -> Option<Interval> {
    let s = sorted_finite(values);
    let n = s.len();
    if n < 2 {
        return None;
    }
    let coverage = |j: usize| 1.0 - 2.0 * binomial_half_cdf(n, j - 1);
    let mut j = 1;
    while 2 * (j + 1) <= n && coverage(j + 1) >= level {
        j += 1;
    }
    Some(Interval {
        low: s[j - 1],
        high: s[n - j],
        level: coverage(j),
    })
}

/// The Mann-Whitney interval of the shift from `x` to `y` (`y ~ x + d`) at `level`; `None`
/// when either side is empty or there is a single pair.
pub fn shift_interval(x: &[f64], y: &[f64], level: f64) -> Option<Interval> {
    let (x, y) = (sorted_finite(x), sorted_finite(y));
    let (m, n) = (x.len(), y.len());
    if m == 0 || n == 0 || m * n < 2 {
        return None;
    }
    let mut d: Vec<f64> = y
        .iter()
        .flat_map(|b| x.iter().map(move |a| b - a))
        .collect();
    d.sort_by(f64::total_cmp);
    let cdf = u_cdf(m, n);
    let big_n = m * n;
    let coverage = |c: usize| 1.0 - 2.0 * cdf(c - 1);
    let mut c = 1;
    while 2 * (c + 1) <= big_n && coverage(c + 1) >= level {
        c += 1;
    }
    Some(Interval {
        low: d[c - 1],
        high: d[big_n - c],
        level: coverage(c),
    })
}

/// The ratio `y / x` of two throughput samples as an interval: [`shift_interval`] on logs.
pub fn ratio_interval(x: &[f64], y: &[f64], level: f64) -> Option<Interval> {
    let logs = |v: &[f64]| -> Vec<f64> { v.iter().filter(|q| **q > 0.0).map(|q| q.ln()).collect() };
    shift_interval(&logs(x), &logs(y), level).map(|i| i.map(f64::exp))
}

/// `u -> P(U <= u)` for the Mann-Whitney count of samples of sizes `m` and `n` under no shift.
fn u_cdf(m: usize, n: usize) -> Box<dyn Fn(usize) -> f64> {
    if m + n <= EXACT_U_LIMIT {
        let counts = u_counts(m, n);
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        let mut cum = Vec::with_capacity(counts.len());
        let mut acc = 0i128;
        for c in counts {
            acc += c;
            cum.push(acc as f64 / total);
        }
        Box::new(move |u| cum.get(u).copied().unwrap_or(1.0))
    } else {
        let (mf, nf) = (m as f64, n as f64);
        let mean = mf * nf / 2.0;
        let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
        let normal = Normal::new(0.0, 1.0).ok();
        Box::new(move |u| {
            normal
                .as_ref()
                .map_or(1.0, |z| z.cdf((u as f64 + 0.5 - mean) / sd))
        })
    }
}

/// How many of the C(m+n, m) orderings give each Mann-Whitney count 0..=mn: the coefficients
/// of the Gaussian binomial `[m+n choose m]_q`, built as the product over i of
/// `(1 - q^(n+i)) / (1 - q^i)` (every partial product is itself a polynomial).
fn u_counts(m: usize, n: usize) -> Vec<i128> {
    let mut poly = vec![0i128; m * n + 1];
    poly[0] = 1;
    for i in 1..=m {
        let top = i * n; // degree after this step
        let shift = n + i;
        for k in (shift..=top).rev() {
            poly[k] -= poly[k - shift];
        }
        for k in i..=top {
            poly[k] += poly[k - i];
        }
    }
    poly
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::rng::Rng;

    #[test]
    fn median_interval_by_hand() {
        // n = 6: [min, max] covers with 1 - 2/64 = 0.96875; [x(2), x(5)] with 1 - 2*7/64.
        let i = median_interval(&[5.0, 1.0, 4.0, 2.0, 6.0, 3.0], 0.95).unwrap();
        assert_eq!((i.low, i.high), (1.0, 6.0));
        assert!((i.level - 0.96875).abs() < 1e-12, "{}", i.level);
        // n = 3 cannot reach 95%: [min, max] at 1 - 2/8 = 0.75.
        let i = median_interval(&[3.0, 1.0, 2.0], 0.95).unwrap();
        assert_eq!((i.low, i.high, i.level), (1.0, 3.0, 0.75));
        // n = 9: [x(2), x(8)] at 1 - 2 * 10/512 = 0.9609; [x(3), x(7)] would be 0.8203.
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let i = median_interval(&v, 0.95).unwrap();
        assert_eq!((i.low, i.high), (2.0, 8.0));
        assert!((i.level - (1.0 - 20.0 / 512.0)).abs() < 1e-12);
        assert_eq!(median_interval(&[1.0], 0.95), None);
        assert_eq!(median_interval(&[f64::NAN, 1.0], 0.95), None);
    }

    #[test]
    fn mann_whitney_counts_are_the_known_distribution() {
        // m = n = 2: orderings of xxyy give U = 0,1,2,2,3,4 -> counts 1,1,2,1,1.
        assert_eq!(u_counts(2, 2), vec![1, 1, 2, 1, 1]);
        // Counts sum to C(m+n, m) and are symmetric.
        let c = u_counts(6, 9);
        assert_eq!(c.iter().sum::<i128>(), 5005);
        assert!(c.iter().eq(c.iter().rev()));
        // Published critical value: m = n = 6, two-sided 5% -> U <= 5 (P = 0.0206 one-sided).
        let cdf = u_cdf(6, 6);
        assert!(cdf(5) <= 0.025 && cdf(6) > 0.025, "{} {}", cdf(5), cdf(6));
        let c = u_counts(60, 60);
        assert!(c.iter().all(|&x| x >= 0));
    }

    #[test]
    fn shift_interval_by_hand() {
        // x = 0, 1, 2 and y = x + 10: the 9 differences are 8, 9, 9, 10, 10, 10, 11, 11, 12.
        // m = n = 3: P(U <= 0) = 1/20, so [D(1), D(9)] at 90% is the widest available.
        let i = shift_interval(&[0.0, 1.0, 2.0], &[10.0, 11.0, 12.0], 0.95).unwrap();
        assert_eq!((i.low, i.high), (8.0, 12.0));
        assert!((i.level - 0.9).abs() < 1e-12);
        let r = ratio_interval(&[100.0, 100.0], &[200.0, 200.0], 0.5).unwrap();
        assert!((r.low - 2.0).abs() < 1e-12 && (r.high - 2.0).abs() < 1e-12);
        assert_eq!(shift_interval(&[1.0], &[2.0], 0.95), None);
    }

    /// Standard normal by Box-Muller from the crate's seeded generator.
    fn normal(rng: &mut Rng) -> f64 {
        let (u1, u2) = (rng.uniform().max(1e-300), rng.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    #[test]
    fn coverage_on_known_distributions_is_at_least_the_level() {
        // 4,000 samples of 8 passes from an exponential (skewed: median ln 2) and a normal
        // (median 10): the intervals must cover the true median >= 95% of the time, minus
        // sampling error (the binomial standard error of 4,000 trials is 0.35%).
        let mut rng = Rng::new(7);
        let trials = 4000;
        let (mut exp_hits, mut norm_hits, mut shift_hits) = (0, 0, 0);
        for _ in 0..trials {
            let e: Vec<f64> = (0..8).map(|_| -(1.0 - rng.uniform()).ln()).collect();
            let i = median_interval(&e, LEVEL).unwrap();
            exp_hits += usize::from(i.low <= 2f64.ln() && 2f64.ln() <= i.high);
            let g: Vec<f64> = (0..8).map(|_| 10.0 + normal(&mut rng)).collect();
            let i = median_interval(&g, LEVEL).unwrap();
            norm_hits += usize::from(i.low <= 10.0 && 10.0 <= i.high);
            // A true ratio of 1.3 between two lognormal samples of 7 passes.
            let a: Vec<f64> = (0..7)
                .map(|_| 1000.0 * (0.05 * normal(&mut rng)).exp())
                .collect();
            let b: Vec<f64> = (0..7)
                .map(|_| 1300.0 * (0.05 * normal(&mut rng)).exp())
                .collect();
            let r = ratio_interval(&a, &b, LEVEL).unwrap();
            shift_hits += usize::from(r.low <= 1.3 && 1.3 <= r.high);
        }
        // n = 8 -> [x(1), x(8)] at 99.2%; 7 x 7 -> coverage >= 95%.
        for hits in [exp_hits, norm_hits, shift_hits] {
            let share = hits as f64 / trials as f64;
            assert!(share >= 0.94, "coverage {share}");
        }
    }

    #[test]
    fn large_samples_use_the_normal_approximation_consistently() {
        // 70 + 70 values: normal approximation; the exact one at 60 + 60 agrees closely.
        let exact = u_cdf(60, 60);
        let (m, n) = (60.0f64, 60.0f64);
        let sd = (m * n * (m + n + 1.0) / 12.0).sqrt();
        let z = Normal::new(0.0, 1.0).unwrap();
        for u in [1500usize, 1600, 1700] {
            let approx = z.cdf((u as f64 + 0.5 - m * n / 2.0) / sd);
            assert!(
                (exact(u) - approx).abs() < 0.002,
                "{u}: {} {approx}",
                exact(u)
            );
        }
        let x: Vec<f64> = (0..70).map(f64::from).collect();
        let y: Vec<f64> = (0..70).map(|v| f64::from(v) + 5.0).collect();
        let i = shift_interval(&x, &y, LEVEL).unwrap();
        assert!(i.low < 5.0 && 5.0 < i.high && i.level >= 0.95, "{i:?}");
    }

    #[test]
    fn cv_by_hand() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample sd sqrt(32/7).
        let c = cv(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((c - (32.0f64 / 7.0).sqrt() / 5.0).abs() < 1e-12);
        assert_eq!(cv(&[1.0]), None);
    }
}
