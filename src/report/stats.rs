//! Statistics for reports: which figure a report shows ([`Stat`]), summary statistics of a set
//! of values, and bootstrap intervals of the summary statistics of ratios. Pure functions
//! with hand-computed tests.
//!
//! The bootstrap: each replicate resamples, for every matched pair and each side, the builds
//! (with replacement, when a point has several) and then the passes within each build, takes
//! each side's median (the median of build medians), and computes the ratios' geometric mean,
//! median, minimum and maximum. The 2.5th and 97.5th percentiles of 2,000 replicates (fixed
//! seed: the same results give the same intervals) are the 95% intervals.

use crate::dataset::rng::Rng;
use crate::metrics::interval::{Interval, LEVEL, median_sorted as median_of_sorted};
use crate::results::PointResult;
use serde::Serialize;

/// min, max, mean, median and sample standard deviation of some values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (divides by n - 1); `None` for a single value.
    pub stddev: Option<f64>,
}

/// The summary of `values`, or `None` when there are none. Values that are not finite are
/// left out (a ratio against a zero QPS, say).
pub fn summary(values: &[f64]) -> Option<Summary> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(Summary {
        n: v.len(),
        min: v[0],
        max: v[v.len() - 1],
        mean: mean(&v),
        median: median_sorted(&v),
        stddev: stddev(&v),
    })
}

/// Arithmetic mean; NaN for no values.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Median of sorted values: the middle one, or the mean of the two middle ones.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Sample standard deviation (n - 1 in the denominator); `None` for fewer than 2 values.
pub fn stddev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// Which per-point statistic reports show as "the" QPS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stat {
    /// The median of the passes, with its 95% interval (the default).
    #[default]
    Median,
    /// The best pass, as ann-benchmarks reports it (no interval, no ties).
    Best,
}

impl std::str::FromStr for Stat {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "median" => Ok(Stat::Median),
            "best" => Ok(Stat::Best),
            other => Err(crate::Error::Config(format!(
                "unknown statistic '{other}': expected median or best"
            ))),
        }
    }
}

/// Make `stat` the figure of every point: with [`Stat::Best`], `qps` becomes the best pass
/// and the interval is dropped (the best of N passes has none).
pub fn apply_stat(points: &mut [PointResult], stat: Stat) {
    if stat == Stat::Best {
        for p in points {
            let m = &mut p.metrics;
            if m.qps_best > 0.0 {
                m.qps = m.qps_best;
            }
            m.qps_ci_low = None;
            m.qps_ci_high = None;
            m.qps_ci_level = None;
        }
    }
}

/// A point's passes in use, grouped by build, as throughput samples (its one figure when no
/// passes were recorded, as for ann-benchmarks results).
pub fn pass_groups(p: &PointResult) -> Vec<Vec<f64>> {
    let mut groups: Vec<(usize, Vec<f64>)> = Vec::new();
    for pass in p.passes.iter().filter(|x| x.used && x.wall_seconds > 0.0) {
        match groups.iter_mut().find(|g| g.0 == pass.build) {
            Some(g) => g.1.push(pass.qps()),
            None => groups.push((pass.build, vec![pass.qps()])),
        }
    }
    if groups.is_empty() {
        vec![vec![p.metrics.qps]]
    } else {
        groups.into_iter().map(|g| g.1).collect()
    }
}

/// The pass groups of a pair's two sides: (base, me), each one list of samples per build.
pub type PairGroups = (Vec<Vec<f64>>, Vec<Vec<f64>>);

/// Estimates of the ratios' summary statistics with bootstrap intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioStats {
    pub geomean: (f64, Option<Interval>),
    pub median: (f64, Option<Interval>),
    pub min: (f64, Option<Interval>),
    pub max: (f64, Option<Interval>),
}

/// Bootstrap replicates and seed (see the module docs).
const REPLICATES: usize = 2000;
const SEED: u64 = 11;

/// The summary statistics of `ratios` (me / base per pair) and their bootstrap intervals from
/// the pairs' pass groups (`(base, me)`); no intervals when `groups` is `None` (`--stat best`).
pub fn ratio_stats(ratios: &[f64], groups: Option<&[PairGroups]>) -> Option<RatioStats> {
    let point = four(ratios)?;
    let Some(groups) = groups else {
        return Some(RatioStats {
            geomean: (point[0], None),
            median: (point[1], None),
            min: (point[2], None),
            max: (point[3], None),
        });
    };
    let mut rng = Rng::new(SEED);
    let mut reps: [Vec<f64>; 4] = Default::default();
    let mut ratios_b = Vec::with_capacity(groups.len());
    let mut scratch = Vec::new();
    for _ in 0..REPLICATES {
        ratios_b.clear();
        for (b, m) in groups {
            let (b, m) = (
                resampled_median(b, &mut rng, &mut scratch),
                resampled_median(m, &mut rng, &mut scratch),
            );
            ratios_b.push(m / b);
        }
        if let Some(f) = four(&ratios_b) {
            for (r, v) in reps.iter_mut().zip(f) {
                r.push(v);
            }
        }
    }
    let ci = |mut v: Vec<f64>| -> Option<Interval> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let at = |q: f64| v[((q * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
        Some(Interval {
            low: at((1.0 - LEVEL) / 2.0),
            high: at(1.0 - (1.0 - LEVEL) / 2.0),
            level: LEVEL,
        })
    };
    let [g, md, mn, mx] = reps;
    Some(RatioStats {
        geomean: (point[0], ci(g)),
        median: (point[1], ci(md)),
        min: (point[2], ci(mn)),
        max: (point[3], ci(mx)),
    })
}

/// Geometric mean, median, min and max of the positive finite values.
fn four(values: &[f64]) -> Option<[f64; 4]> {
    let mut v: Vec<f64> = values
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let geomean = (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    Some([geomean, median_of_sorted(&v)?, v[0], v[v.len() - 1]])
}

/// One bootstrap draw of a side's figure: builds, then passes within each, resampled with
/// replacement; the median of the builds' medians.
fn resampled_median(groups: &[Vec<f64>], rng: &mut Rng, scratch: &mut Vec<f64>) -> f64 {
    let mut medians = Vec::with_capacity(groups.len());
    for _ in 0..groups.len() {
        let g = &groups[rng.below(groups.len())];
        scratch.clear();
        scratch.extend((0..g.len()).map(|_| g[rng.below(g.len())]));
        scratch.sort_by(f64::total_cmp);
        medians.push(median_of_sorted(scratch).unwrap_or(f64::NAN));
    }
    medians.sort_by(f64::total_cmp);
    median_of_sorted(&medians).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_hand_even_count() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum 32, sample var 32/7.
        let s = summary(&[9.0, 2.0, 4.0, 5.0, 4.0, 7.0, 4.0, 5.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.max, s.mean, s.median),
            (8, 2.0, 9.0, 5.0, 4.5)
        );
        assert!((s.stddev.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn by_hand_odd_count_and_single() {
        // 0.5, 1, 3: mean 1.5, median 1, deviations -1, -0.5, 1.5 -> ss 3.5, var 1.75.
        let s = summary(&[3.0, 0.5, 1.0]).unwrap();
        assert_eq!((s.mean, s.median), (1.5, 1.0));
        assert!((s.stddev.unwrap() - 1.75f64.sqrt()).abs() < 1e-12);
        let one = summary(&[2.5]).unwrap();
        assert_eq!(
            (one.min, one.max, one.median, one.stddev),
            (2.5, 2.5, 2.5, None)
        );
    }

    #[test]
    fn four_statistics_by_hand() {
        // Geometric mean of 0.5, 2 and 1 is 1; median 1; min 0.5; max 2.
        let s = ratio_stats(&[0.5, 2.0, 1.0], None).unwrap();
        assert!((s.geomean.0 - 1.0).abs() < 1e-12);
        assert_eq!((s.median.0, s.min.0, s.max.0), (1.0, 0.5, 2.0));
        assert!(s.geomean.1.is_none());
    }

    #[test]
    fn bootstrap_intervals_hold_the_estimates_and_shrink_with_agreement() {
        // Two pairs, each side 6 passes within +-1% of 1000 (base) and 1100 (me): the ratio
        // intervals lie near 1.1 and contain it; constant passes give a zero-width interval.
        let side = |c: f64| vec![vec![c * 0.99, c, c * 1.01, c * 0.995, c * 1.005, c]];
        let groups = vec![(side(1000.0), side(1100.0)), (side(500.0), side(550.0))];
        let s = ratio_stats(&[1.1, 1.1], Some(&groups)).unwrap();
        let g = s.geomean.1.unwrap();
        assert!(g.low <= 1.1 && 1.1 <= g.high, "{g:?}");
        assert!(g.low > 1.07 && g.high < 1.13, "{g:?}");
        let flat = vec![(vec![vec![10.0; 6]], vec![vec![20.0; 6]])];
        let s = ratio_stats(&[2.0], Some(&flat)).unwrap();
        assert_eq!(s.max.1.map(|i| (i.low, i.high)), Some((2.0, 2.0)));
        // The same input gives the same intervals (fixed seed).
        assert_eq!(
            ratio_stats(&[1.1, 1.1], Some(&groups)),
            ratio_stats(&[1.1, 1.1], Some(&groups))
        );
    }

    #[test]
    fn stat_parses_and_best_drops_the_interval() {
        assert_eq!("BEST".parse::<Stat>().unwrap(), Stat::Best);
        assert!("mean".parse::<Stat>().is_err());
        let mut p = crate::report::testutil::point("mariadb", &[], &[], 0.9, 100.0);
        p.metrics.qps_best = 120.0;
        p.metrics.qps_ci_low = Some(90.0);
        p.metrics.qps_ci_high = Some(110.0);
        let mut pts = vec![p];
        apply_stat(&mut pts, Stat::Best);
        assert_eq!(
            (pts[0].metrics.qps, pts[0].metrics.qps_ci_low),
            (120.0, None)
        );
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(summary(&[]), None);
        assert_eq!(summary(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(summary(&[f64::NAN, 2.0]).unwrap().n, 1);
    }
}
